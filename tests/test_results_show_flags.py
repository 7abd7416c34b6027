"""`tf_cnn_results show N` prints a run's flags as its user gave them (history/run_flags.py):
the line, pasted after `tf_cnn_benchmarks`, parses, passes the usage checks and warns of no
flag without effect. Before, it printed every resolved flag: the --num_batches a
--num_epochs run worked out (`--num_batches and --num_epochs exclude each other`, exit 2),
every flag at its default (20 `has no effect` warnings) and a cluster task's dead ports."""

from __future__ import annotations

import json
import shlex

import pytest
from absl import flags

from tf_cnn_benchmarks import flag_parsing
from tf_cnn_benchmarks import params as params_lib
from tf_cnn_benchmarks.history import run_flags, store
from tf_cnn_benchmarks.preflight import ineffective_flags, usage
from tf_cnn_benchmarks.tools import results_cli

import helpers
import results_helpers as rh


def _show(capsys, db: str, run_id: int) -> list[str]:
    status = results_cli.main(['tf_cnn_results', 'show', str(run_id), '--results_db=%s' % db])
    out, err = capsys.readouterr()
    assert status == 0, err
    return out.splitlines()


def _flags_line(lines: list[str]) -> str:
    """What `sed -n 's/^  flags: //p'` takes from show's output."""
    found = [x[len('  flags: '):] for x in lines if x.startswith('  flags: ')]
    assert len(found) == 1
    return found[0]


def _pasted(line: str) -> tuple[params_lib.Params, list[str]]:
    """The Params of `tf_cnn_benchmarks <line>` through the command's parser and usage
    checks, and the `has no effect` warnings it would print (as cli.py computes them)."""
    fv = flags.FlagValues()
    argv = shlex.split(line, comments=True)
    p = flag_parsing.parse_flags(['tf_cnn_benchmarks'] + argv, fv)
    checked = usage.check_usage(p)
    given = frozenset(n for n in params_lib.SPEC_BY_NAME if fv[n].present)
    return checked.params, ineffective_flags.messages(
        checked.params, 0, usage.dataset_name(checked.params), given)


@pytest.mark.cli
def test_a_num_epochs_run_shows_the_flags_it_was_given(tmp_path, capsys):
    # A real run: --num_epochs works out --num_batches (3 here), which the resolved flags keep.
    db = str(tmp_path / 'r.sqlite')
    given = ['--model=trivial', '--batch_size=2', '--num_epochs=0.000004',
             '--num_warmup_batches=1', '--results_db=%s' % db]
    got = helpers.run_command(*given)
    assert got.returncode == 0, got.stderr
    with store.opened(db, read_only=True) as conn:
        row = store.select_runs(conn)[0]
    assert json.loads(row['params_json'])['num_batches'] == 3  # ceil(4e-6 x 1281167 / 2)
    lines = _show(capsys, db, row['id'])
    # As given, --model=trivial (the default) aside: defaults are left out.
    assert _flags_line(lines) == ('--batch_size=2 --num_epochs=4e-06 --num_warmup_batches=1 '
                                  '--results_db=%s' % db)
    assert not any(x.startswith('  flags derived') or x.startswith('  cluster:')
                   for x in lines)
    p, warnings = _pasted(_flags_line(lines))
    assert (p.num_epochs, p.num_batches, p.batch_size) == (0.000004, None, 2)
    assert warnings == []


def test_a_cluster_task_shows_its_flags_without_the_cluster_s(tmp_path, capsys):
    # The chief of `tf_cnn_cluster --num_workers=2 -- --num_epochs=2 ...` (its launcher's
    # ports long closed): the cluster's flags are left out and a line says whose they were.
    cluster = {'job_name': 'worker', 'task_index': 0, 'cluster_resolver': 'flags',
               'ps_hosts': ['127.0.0.1:34480'],
               'worker_hosts': ['127.0.0.1:34481', '127.0.0.1:34482']}
    given = dict(cluster, model='trivial', num_epochs=2, variable_update='parameter_server',
                 batch_size=4, label='nightly')
    result = rh.result(1000, num_batches=640574, num_epochs=2, batch_size=4, **{
        k: v for k, v in cluster.items()})
    result.update(given_flags=given, num_workers=2)
    db = str(tmp_path / 'r.sqlite')
    rh.fill(db, [result])
    lines = _show(capsys, db, 1)
    line = _flags_line(lines)
    assert line == '--batch_size=4 --label=nightly --model=trivial --num_epochs=2 ' \
                   '--variable_update=parameter_server'
    assert ('  cluster: one task, worker 0 of a cluster of 2 workers and 1 ps: the flags are '
            'each task\'s, without the cluster\'s roles and hosts; `tf_cnn_cluster '
            '--num_workers=2 --num_ps=1 -- FLAGS` runs such a cluster on this host') in lines
    p, warnings = _pasted(line)
    assert (p.num_epochs, p.num_batches, p.job_name, p.worker_hosts) == (2, None, '', [])
    assert warnings == []


def test_a_run_recorded_before_its_given_flags_were_kept_gets_them_derived(tmp_path, capsys):
    # A row of schema 2 holds only the resolved flags (every flag, defaults included): the
    # values the run worked out and the defaults are left out, and a line says so.
    resolved = {spec.name: spec.default for spec in params_lib.SPECS}
    resolved.update(model='trivial', batch_size=16, image_size=227, device='cpu',
                    data_format='NHWC', num_warmup_batches=5, num_epochs=1.5,
                    num_batches=60055, cluster_resolver='flags', momentum=0.8,
                    optimizer='momentum', not_a_flag_today=3)
    result = rh.result(1000, **resolved)
    db = str(tmp_path / 'r.sqlite')
    rh.fill(db, [result])
    lines = _show(capsys, db, 1)
    assert _flags_line(lines) == ('--batch_size=16 --momentum=0.8 --num_epochs=1.5 '
                                  '--optimizer=momentum')
    assert ('  flags derived from the resolved ones (recorded before the given flags were '
            'kept): the values the run worked out and the defaults left out') in lines
    p, warnings = _pasted(_flags_line(lines))
    assert (p.num_epochs, p.num_batches, p.momentum) == (1.5, None, 0.8)
    assert warnings == []


def test_derive_takes_back_what_the_rules_work_out():
    params = {'model': 'resnet50', 'batch_size': 64, 'image_size': 224, 'device': 'gpu',
              'data_format': 'NCHW', 'num_warmup_batches': 10, 'num_batches': 100,
              'num_gpus': 2}
    assert run_flags.derive(params, {'gpus': ['A100']}) == {'model': 'resnet50', 'num_gpus': 2}
    # Other values than those the rules give were chosen: kept; no GPU known: --device kept.
    assert run_flags.derive(dict(params, batch_size=32, num_warmup_batches=5,
                                 num_batches=50), {'gpus': None}) == {
        'model': 'resnet50', 'batch_size': 32, 'device': 'gpu', 'num_warmup_batches': 5,
        'num_batches': 50, 'num_gpus': 2}


def test_a_run_with_no_flag_given_pastes_as_none(tmp_path, capsys):
    result = rh.result(1000)
    result['given_flags'] = {}
    db = str(tmp_path / 'r.sqlite')
    rh.fill(db, [result])
    line = _flags_line(_show(capsys, db, 1))
    assert line == '# none: every flag at its default'
    assert shlex.split(line, comments=True) == []  # a shell reads a comment


def test_show_says_the_records_a_run_skipped(tmp_path, capsys):
    """Realdata 10: the results JSON held "skipped_records": 59, `show` said nothing of it."""
    path = str(tmp_path / 'r.sqlite')
    rh.fill(path, [dict(rh.result(rate, skip_corrupt_records=True), skipped_records=skipped)
                   for rate, skipped in ((1000, 59), (1010, 0))] + [rh.result(990)])
    shown = [[x for x in rh.results_command(capsys, 'show', str(run), '--results_db=%s' % path)[1]
              .splitlines() if x.startswith('  skipped records:')] for run in (1, 2, 3)]
    assert shown == [
        ['  skipped records: 59 an epoch (--skip_corrupt_records: the figures come from the '
         'records left)'], ['  skipped records: none (--skip_corrupt_records)'], []]


def test_a_partial_eval_is_recorded_and_shown_as_partial(tmp_path, capsys):
    """A Ctrl-C'd --eval: its row kept the stop only as 'stopped at 3 of 10', neither the signal
    nor that its accuracy is partial (result['eval']['partial']); a complete one says
    partial false, a run without a signal nothing of a signal."""
    path = str(tmp_path / 'r.sqlite')

    def evaluation(rate, run, signal=None):
        r = dict(rh.result(rate, steps=run, eval=True), mode='evaluation',
                 stopped_by_signal=signal, plan={'dataset': 'synthetic',
                                                 'eval': {'num_batches': 10}})
        r['eval'] = {'partial': run < 10, 'num_batches': run, 'planned_batches': 10}
        return r
    rh.fill(path, [evaluation(1000, 3, 'SIGINT'), evaluation(1010, 10), rh.result(990)])
    with store.opened(path) as conn:
        figures = [json.loads(f) for (f,) in conn.execute(
            'SELECT figures_json FROM runs ORDER BY id')]
    assert [(f.get('stopped_by_signal'), f.get('partial')) for f in figures] == [
        ('SIGINT', True), (None, False), (None, None)]
    shown = [[x for x in rh.results_command(capsys, 'show', str(run), '--results_db=%s' % path)[1]
              .splitlines() if x.startswith('  stopped:')] for run in (1, 2, 3)]
    assert shown == [['  stopped: by SIGINT after 3 of 10 batches: a partial evaluation, its '
                      'accuracy and figures of the batches scored'], [], []]
    # Its clean: line counts the same batches (it said 'stopped at 3 of 10 timed steps').
    clean = [x for x in rh.results_command(capsys, 'show', '1', '--results_db=%s' % path)[1]
             .splitlines() if x.startswith('  clean:')]
    assert len(clean) == 1 and 'stopped at 3 of 10 batches' in clean[0], clean
