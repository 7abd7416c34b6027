"""`tf_cnn_sweep --run_timeout_secs` and the results database agree about a run the sweep
stopped: one that saved its result (its clean stop after SIGTERM) is 'stopped', with its
figures and where it stopped, as its database row is ('stopped at 327 of 100000'); one that
saved nothing is 'failed', saying why. The report's header says what it knows of the GPUs of
CPU runs and when the last run ended."""

from __future__ import annotations

import json
import signal

from tf_cnn_benchmarks.tools.sweep import report as sweep_report
from tf_cnn_benchmarks.tools.sweep import results as sweep_results
from tf_cnn_benchmarks.tools.sweep import runner as sweep_runner

RESULT = {'images_per_sec': 254.8, 'num_steps': 327, 'plan': {'num_batches': 100000},
          'params': {'num_batches': 100000, 'device': 'cpu'}, 'stopped_by_signal': 'SIGTERM',
          'global_batch_size': 8, 'step_times': [0.0314] * 327,
          'environment': {'gpus': [], 'tf_version': '2.21.0'}}

# A stand-in for the benchmark: on SIGTERM it saves a results JSON (or not) and exits 143, as
# the real command's clean stop does; it never ends on its own.
ENTRY = '''
import json, os, signal, sys
def stop(signum, frame):
    if %(save)r:
        with open(os.path.join(sys.argv[-1].split('=', 1)[1], 'tf_cnn_benchmarks_x.json'),
                  'w') as f:
            json.dump(%(result)r, f)
    sys.exit(143)
signal.signal(signal.SIGTERM, stop)
print('ready', flush=True)
while True:
    signal.pause()
'''


def _run(tmp_path, monkeypatch, save: bool) -> dict:
    entry = tmp_path / 'entry.py'
    entry.write_text(ENTRY % {'save': save, 'result': RESULT})
    monkeypatch.setattr(sweep_runner, 'ENTRY_SCRIPT', str(entry))
    run_dir = str(tmp_path / 'run')
    config = {'model': 'resnet20', 'batch_size': 8, 'num_gpus': 1, 'precision': 'fp32',
              'variable_update': 'parameter_server', 'repeat': 0}
    args = sweep_runner.command_for(config, ['--device=cpu'], run_dir)
    # 3 s: the stand-in installs its handler well within it, even on a loaded host.
    outcome = sweep_runner.run_configuration(args, run_dir, sweep_runner.Interrupts(),
                                             timeout_secs=3.0)
    return sweep_runner.make_record(config, ['--device=cpu'], args, outcome, 'runs/x',
                                    {'gpus': None, 'tf_version': None})


def test_a_run_stopped_at_the_timeout_that_saved_its_result_is_stopped_with_its_figures(
        tmp_path, monkeypatch):
    # Before: status 'failed', images_per_sec None, while the database had the run at 254.80.
    record = _run(tmp_path, monkeypatch, save=True)
    assert (record['status'], record['exit_status']) == ('stopped', 143)
    assert record['images_per_sec'] == 254.8 and record['step_time_secs']['count'] == 327
    assert record['error'] == ('timed out after 3 s (--run_timeout_secs) at 327 of 100000 '
                               'timed steps (its figures cover those)')
    assert record['environment']['gpus'] == []  # what the run saw, not 'unknown'
    # Final like a failed run (a resume does not rerun it; --retry_failed does).
    assert sweep_results.done_keys([record]) == {record['key']}
    assert sweep_results.done_keys([record], retry_failed=True) == set()
    # Not a successful repeat: the statistics leave it out, as the database's verdicts do.
    assert sweep_results.config_stats([record]) == {}


def test_a_run_stopped_at_the_timeout_that_saved_nothing_is_failed_saying_why(
        tmp_path, monkeypatch):
    record = _run(tmp_path, monkeypatch, save=False)
    assert (record['status'], record['images_per_sec']) == ('failed', None)
    assert record['error'] == ('error: timed out after 3 s (--run_timeout_secs) before it '
                               'saved a result (exit status 143)')


def test_the_outcome_of_a_timeout_by_what_the_run_left():
    limit = 'timed out after 15 s (--run_timeout_secs)'
    assert sweep_runner.timed_out_outcome(RESULT, 143, 15) == (
        'stopped', '%s at 327 of 100000 timed steps (its figures cover those)' % limit)
    assert sweep_runner.timed_out_outcome({'stopped_in_warmup': True, 'images_per_sec': None},
                                          143, 15) == (
        'failed', 'error: %s in the warm-up: nothing was timed' % limit)
    assert sweep_runner.timed_out_outcome(None, -signal.SIGKILL, 15) == (
        'failed', 'error: %s before it saved a result (killed 10 s after SIGTERM)' % limit)


def _record(status, gpus, device='cpu', started='2026-01-02T13:24:51+00:00', wall=15.2):
    config = {'model': 'resnet20', 'batch_size': 8, 'num_gpus': 1, 'precision': 'fp32',
              'variable_update': 'parameter_server', 'repeat': 0}
    return {'key': sweep_results.config_key(config), 'config': config, 'status': status,
            'extra_flags': ['--device=%s' % device], 'argv': ['--device=%s' % device],
            'exit_status': 143, 'error': 'x', 'images_per_sec': 254.8 if status == 'stopped'
            else None, 'params': None, 'environment': {'gpus': gpus}, 'started_utc': started,
            'wall_secs': wall, 'run_dir': 'runs/x'}


def test_the_report_header_says_the_gpus_it_knows_and_when_the_last_run_ended():
    # Before: 'GPUs: unknown' for CPU runs and 'Runs from 13:24:51 to 13:24:51' for one run.
    text = sweep_report.header([_record('failed', None)])
    assert '1 run: 0 ok, 1 failed, 0 interrupted.' in text
    assert 'GPUs: none used (CPU runs: --device=cpu);' in text
    assert 'Runs from 2026-01-02T13:24:51+00:00 to 13:25:06 (UTC, 15 s).' in text
    assert 'GPUs: unknown;' in sweep_report.header([_record('failed', None, device='gpu')])
    text = sweep_report.header([_record('stopped', [])])
    assert '1 run: 0 ok, 0 failed, 1 stopped (--run_timeout_secs), 0 interrupted.' in text
    assert 'GPUs: none visible;' in text
    two = [_record('ok', ['Tesla V100-SXM2-16GB']),
           _record('ok', [], started='2026-01-02T15:00:00+00:00', wall=600.0)]
    text = sweep_report.header(two)
    assert 'GPUs: Tesla V100-SXM2-16GB / none visible;' in text
    assert 'Runs from 2026-01-02T13:24:51+00:00 to 15:10:00 (UTC, 105 min).' in text


def test_the_report_marks_and_lists_a_stopped_run_with_its_figure():
    record = _record('stopped', [])
    table = sweep_report.model_table('resnet20', [record])
    assert '| 8 | stopped |' in table
    assert ('- resnet20 bs=8 gpus=1 fp32 parameter_server repeat 1: stopped, exit status 143: '
            'x; 254.80 images/sec over those steps (logs: runs/x)') in sweep_report.failures(
                [record])
    json.dumps(record)  # a results-file line
    # Its measured load made the host-load section print an empty table, '0 of 0 runs on a
    # busy host': the section is of the successful runs, and there are none.
    from tf_cnn_benchmarks.tools.sweep import host_load as sweep_host_load
    measured = dict(record, host_load={'others_fraction': 0.05, 'others_cores': 0.1,
                                       'cores': 2, 'representative': True})
    assert sweep_host_load.host_table([measured]) == ''
