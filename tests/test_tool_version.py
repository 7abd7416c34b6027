"""The version of tf_cnn_benchmarks that produced a figure (pkg56 finding 5): every run's
results JSON keeps it in its environment (`tf_cnn_benchmarks_version`), the results database
keeps it with the environment (no schema change: environment_json), `tf_cnn_results show`
prints it, and what changed between two runs names a new version; results JSONs, sweep
records and rows written before it was kept read as before."""

from __future__ import annotations

import os
import re

from tf_cnn_benchmarks import __version__, package_info
from tf_cnn_benchmarks.hardware import machine
from tf_cnn_benchmarks.metrics import configuration

import checkout
import results_helpers as rh


def test_the_version_is_written_once_and_every_environment_records_it():
    assert __version__ == package_info.VERSION
    setup = open(os.path.join(checkout.REPO, 'setup.py'), encoding='utf-8').read()
    assert 'version=VERSION' in setup and not re.search(r"version='\d", setup)
    env = machine.environment(tensorflow=False)  # the sweep's; a run's asks TensorFlow too
    assert env['tf_cnn_benchmarks_version'] == __version__


def test_a_new_version_is_a_change_and_an_older_record_without_one_is_not():
    old = dict(rh.ENVIRONMENT)
    new = dict(rh.ENVIRONMENT, tf_cnn_benchmarks_version='0.2.0')
    newer = dict(rh.ENVIRONMENT, tf_cnn_benchmarks_version='0.3.0')
    assert configuration.changes(old, new, {}, {}) == []
    assert configuration.changes(new, old, {}, {}) == []
    assert configuration.changes(new, newer, {}, {}) == [
        'tf_cnn_benchmarks_version 0.2.0 -> 0.3.0']


def test_show_prints_the_version_and_says_when_a_run_did_not_record_it(tmp_path, capsys):
    db = str(tmp_path / 'results.sqlite')
    ids = rh.fill(db, [rh.result(900.0), rh.result(
        910.0, env={'tf_cnn_benchmarks_version': '0.2.0'}, finished=rh.T0.replace(hour=1))])
    lines = {}
    for run_id in ids:
        status, out, _ = rh.results_command(capsys, 'show', str(run_id), '--results_db=%s' % db)
        assert status == 0
        lines[run_id] = [x for x in out.splitlines() if x.startswith('  tf_cnn_benchmarks:')]
    assert lines[ids[0]] == ['  tf_cnn_benchmarks: not recorded (a run recorded before runs '
                             'kept it)']
    assert lines[ids[1]] == ['  tf_cnn_benchmarks: 0.2.0']
