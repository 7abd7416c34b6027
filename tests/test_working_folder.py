"""A working folder removed after the shell entered it (`cd gone; rmdir ../gone`): a relative
path then cannot be looked up, and every console command says so in one `error:` line with
the fix (absolute paths, or cd to an existing folder), exit status 2, before it does anything
(cnn_util.working_folder_problem)."""

from __future__ import annotations

import os

import pytest

from tf_cnn_benchmarks import cnn_util, params
from tf_cnn_benchmarks.preflight import output_paths
from tf_cnn_benchmarks.tools import build_imagenet_tfrecords, launch_cluster, results_cli
from tf_cnn_benchmarks.tools.sweep import cli as sweep_cli

import helpers

GONE = 'error: the working folder no longer exists (it was removed or moved after the shell ' \
    'entered it), so %s, a relative path, cannot be found or made; give absolute paths, or ' \
    'cd to an existing folder\n'


@pytest.fixture
def gone_folder(tmp_path):
    """The test runs in a working folder that was removed after it was entered."""
    here = os.getcwd()
    gone = tmp_path / 'gone'
    gone.mkdir()
    os.chdir(gone)
    gone.rmdir()
    try:
        yield
    finally:
        os.chdir(here)


def test_only_relative_paths_need_the_working_folder(gone_folder):
    problem = cnn_util.working_folder_problem
    assert problem([('--train_dir', '/abs/td'), ('--data_dir', 'gs://b/d'), ('--x', None),
                    ('--y', '')]) is None
    assert problem([('--train_dir', '/abs'), ('--results_db', 'r.sqlite')]) == GONE[7:-1] % (
        '--results_db=r.sqlite')
    assert problem([('the page folder', 'site')]) == GONE[7:-1] % 'the page folder site'
    # With absolute paths a run needs no working folder: the check passes.
    output_paths.check_working_folder(params.make_params(train_dir='/abs/td'))


def test_the_working_folder_is_there_normally(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cnn_util.working_folder_problem([('--train_dir', 'td')]) is None


@pytest.mark.parametrize('flag', ['--train_dir=td', '--results_db=rel.sqlite',
                                  '--benchmark_log_dir=bl', '--trace_file=t.json',
                                  '--data_dir=data', '--flagfile=ff'])
def test_tf_cnn_benchmarks_refuses_a_relative_path(gone_folder, flag):
    # Before: a FileNotFoundError traceback from preflight/path_lengths.py (abspath), exit 1;
    # --flagfile: absl's "Unable to open flagfile" without the reason.
    proc = helpers.run_command('--model=trivial', '--num_batches=2', flag)
    assert (proc.returncode, proc.stderr) == (2, GONE % flag)


def test_tf_cnn_results_db_from_the_environment(gone_folder, monkeypatch):
    monkeypatch.setenv('TF_CNN_RESULTS_DB', 'x.sqlite')
    proc = helpers.run_command('--model=trivial', '--num_batches=2')
    assert (proc.returncode, proc.stderr) == (2, GONE % 'TF_CNN_RESULTS_DB=x.sqlite')


def test_tf_cnn_build_tfrecords(gone_folder, capsys):
    # Before: `error: [Errno 2] No such file or directory`, exit 1.
    assert build_imagenet_tfrecords.main(['tf_cnn_build_tfrecords', '--input_dir=/abs/in',
                                          '--output_dir=out']) == 2
    assert capsys.readouterr().err == GONE % '--output_dir=out'


@pytest.mark.parametrize('args, shown', [
    (['html', 'relhtml'], 'the page folder relhtml'),
    (['list', '--results_db=rel.sqlite'], '--results_db=rel.sqlite'),
    (['ingest', 'runs'], 'the path runs'),
    (['history', '--png=h.png'], '--png=h.png')])
def test_tf_cnn_results(gone_folder, capsys, args, shown):
    # Before: html said `output: No such file or directory; give an output path this user can
    # write`, exit 1.
    assert results_cli.main(['tf_cnn_results'] + args) == 2
    assert capsys.readouterr().err == GONE % shown


@pytest.mark.parametrize('args, shown', [
    (['--output_dir=rel_sw', '--models=trivial', '--batch_sizes=2'], '--output_dir=rel_sw'),
    (['--output_dir=/abs/sw', '--models=trivial', '--batch_sizes=2', '--', '--data_dir=d'],
     '--data_dir=d'),
    (['compare', 'a', '/abs/b'], 'the sweep a'),
    (['report', 'a'], 'the sweep a')])
def test_tf_cnn_sweep(gone_folder, capsys, args, shown):
    # Before: `--output_dir rel_sw cannot be created: No such file or directory`.
    assert sweep_cli.main(['tf_cnn_sweep'] + args) == 2
    err = capsys.readouterr().err
    assert err.replace('error: the flags for every run: ', 'error: ') == GONE % shown


@pytest.mark.parametrize('args, shown', [
    (['--log_dir=logs', '--', '--model=trivial'], '--log_dir=logs'),
    (['--', '--model=trivial', '--train_dir=td'], '--train_dir=td')])
def test_tf_cnn_cluster(gone_folder, capsys, args, shown):
    assert launch_cluster.main(args) == 2
    assert capsys.readouterr().err == GONE % shown
