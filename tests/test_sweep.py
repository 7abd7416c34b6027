"""tools/sweep/ (tf_cnn_sweep): planning, flags and sweep file, the results file, resume and
failure handling with a fake runner, the table's arithmetic, the plots, compare; and one real
sweep as a subprocess (a model that fails on the run's data, Ctrl-C, resume), three
tf_cnn_benchmarks runs in all.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys

import pytest

from tf_cnn_benchmarks.tools.sweep import cli as sweep
from tf_cnn_benchmarks.tools.sweep import report as sweep_report
from tf_cnn_benchmarks.tools.sweep import results as sweep_results
from tf_cnn_benchmarks.tools.sweep import runner as sweep_runner

import helpers
import results_helpers as rh

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _record(model, batch, gpus, rate, repeat=0, status='ok', precision='fp32',
            update='parameter_server', env=None):
    config = {'model': model, 'batch_size': batch, 'num_gpus': gpus, 'precision': precision,
              'variable_update': update, 'repeat': repeat}
    return {'key': sweep_results.config_key(config), 'config': config,
            'extra_flags': ['--device=cpu'], 'argv': [], 'status': status,
            'exit_status': 0 if status == 'ok' else 1,
            'error': None if status == 'ok' else 'error: boom', 'images_per_sec': rate,
            'environment': env or {'tf_version': '2.21.0', 'cpu_model': 'Test CPU',
                                   'cpu_cores': 2, 'gpus': [], 'onednn': 'on'},
            'started_utc': '2026-01-01T00:00:0%d+00:00' % repeat, 'run_dir': 'runs/x'}


def _records(model, batch, gpus, rates, **kwargs):
    """One record per repeat; a rate of None is a failed repeat."""
    return [_record(model, batch, gpus, r, repeat=i, status='ok' if r is not None else 'failed',
                    **kwargs) for i, r in enumerate(rates)]


_write = rh.sweep_folder


# --- Planning, flags, sweep file.

def test_configurations_are_repeat_major_and_keyed_by_axes_and_repeat():
    axes = {'model': ['trivial', 'lenet'], 'batch_size': [8, 16], 'num_gpus': [1, 2],
            'precision': ['fp32'], 'variable_update': ['parameter_server']}
    runs = sweep.configurations(axes, repeats=2)
    assert len(runs) == 16
    assert [r['repeat'] for r in runs] == [0] * 8 + [1] * 8
    assert [(r['model'], r['num_gpus'], r['batch_size']) for r in runs[:4]] == [
        ('trivial', 1, 8), ('trivial', 1, 16), ('trivial', 2, 8), ('trivial', 2, 16)]
    keys = [sweep_results.config_key(r) for r in runs]
    assert len(set(keys)) == 16
    assert keys[0] == ('model=trivial|batch_size=8|num_gpus=1|precision=fp32|'
                       'variable_update=parameter_server|repeat=0')
    config = dict(runs[-1], precision='bf16')
    assert sweep.run_dir_name(config) == 'lenet-bs16-gpus2-bf16-parameter_server-r1'
    assert sweep_runner.command_for(config, ['--device=cpu'], 'out/r') == [
        '--model=lenet', '--batch_size=16', '--num_gpus=2', '--variable_update=parameter_server',
        '--use_bf16', '--device=cpu', '--benchmark_log_dir=out/r']


@pytest.mark.parametrize('args, text', [
    (['--models=trivial', '--batch_sizes=8', '--', '--batch_size=16'],
     "error: --batch_size is set by the sweep for each run; use the sweep's --batch_sizes=16 "
     'before -- instead (a comma-separated list: one run per value). Received: '
     '--batch_size=16'),
    # A flag the sweep has under the same name: before -- (it said 'use --num_gpus instead').
    (['--models=trivial', '--batch_sizes=8', '--', '--num_gpus=2'],
     "error: --num_gpus is set by the sweep for each run; use the sweep's own --num_gpus=2 "
     'before -- instead (a comma-separated list: one run per value). Received: --num_gpus=2'),
    (['--models=trivial', '--batch_sizes=8', '--nouse_fp16'],
     "error: --use_fp16 is set by the sweep for each run; use the sweep's --precisions=fp32 "
     'before -- instead.'),
    (['--models=trivial', '--batch_sizes=8', '--', '--use_bf16=true'],
     "error: --use_bf16 is set by the sweep for each run; use the sweep's --precisions=bf16 "
     'before -- instead.'),
    (['--models=trivial', '--batch_sizes=8', '--precisions=fp32,fp8'],
     "error: --precisions takes fp32, fp16, bf16. Received: 'fp8'"),
    (['--models=trivial', '--batch_sizes=8,0'],
     'error: --batch_sizes must be a comma-separated list of positive integers. Received: '
     'batch_sizes=8,0'),
    (['--batch_sizes=8'], 'error: --models is required (on the command line or in '
                          '--sweep_file)'),
    (['--models=trivial', '--batch_sizes=8', '--repeats=x'],
     'error: --repeats=x: takes an integer (see --help)'),
    (['--models=trivial', '--batch_sizes=8', '--', '--num_batchs=5'],
     "error: the flags for every run: Unknown command line flag 'num_batchs'. Did you mean: "
     'num_batches ?'),
    (['--models=trivial', '--batch_sizes=8', '--', '--distortions=maybe'],
     'error: the flags for every run: --distortions=maybe: a boolean flag takes true or false '
     '(also --distortions, --nodistortions) (see --help)'),
    (['--models=trivial', '--batch_sizes=8', '--', '--num_batches=5', 'stray'],
     "error: the flags for every run: unexpected positional argument 'stray'"),
    (['--models=trivial', '--batch_sizes=8', '--', '--nodistortions=true'],
     'error: the flags for every run: --nodistortions=true: --nodistortions takes no value'),
    (['--models=trivial', '--batch_sizes=8', '--', '--optimizer=foo'],
     "error: the flags for every run: --optimizer must be one of 'sgd', 'momentum'"),
    (['--models=trivial', '--batch_sizes=8', '--', '--train_dir=/proc/nope'],
     'error: the flags for every run: --train_dir=/proc/nope cannot be written'),
    (['--models=trivial', '--batch_sizes=8', '--variable_updates=parameter_server,replicated',
      '--', '--staged_vars'], 'error: the run --model=trivial --batch_size=8 --num_gpus=1 '
     '--variable_update=replicated: --staged_vars works only with '
     '--variable_update=parameter_server.'),
    (['--models=trivial', '--batch_sizes=8', '--variable_updates=replicated', '--',
      '--all_reduce_spec=nccl', '--optimizer=foo'],
     "error: the flags for every run: --optimizer must be one of 'sgd', 'momentum'"),
    (['--models=trivial', '--batch_sizes=8', '--noprogress=true'],
     'error: --noprogress=true: --noprogress takes no value; write --noprogress or '
     '--progress=false'),
    (['--models=trivial', '--batch_sizes=8', '--progress=maybe'],
     'error: --progress=maybe: a boolean flag takes true or false (also --progress, '
     '--noprogress) (see --help)'),
    (['--models=trivial', '--batch_sizes=8', '--', '--variable_updates=replicated'],
     'error: --variable_updates is a flag of the sweep, not of every run: put it before --. '
     'Received: --variable_updates=replicated'),
    (['--models=trivial', '--batch_sizes=8', '--variable_updates=replicatd'],
     "error: --variable_updates takes parameter_server, replicated, independent, "
     "distributed_replicated, "),
    (['--models=trivial', '--batch_sizes=8', '--repeats=0'],
     'error: --repeats must be a positive integer. Received: repeats=0'),
    (['--models=trivial', '--batch_sizes=8', '--output_dir=/dev/null'],
     'error: --output_dir /dev/null is not a directory; choose another path'),
])
def test_bad_flags_exit_2_with_one_error_line(args, text, tmp_path, capsys):
    if not any(a.startswith('--output_dir') for a in args):
        args = ['--output_dir=%s' % tmp_path] + args
    assert sweep.main(['tf_cnn_sweep'] + args) == 2
    err = capsys.readouterr().err
    assert err.startswith(text), err
    assert err.count('\n') == 1 and 'Traceback' not in err


def test_unknown_models_are_refused_before_any_run(tmp_path, capsys, monkeypatch):
    from tf_cnn_benchmarks.models import model_catalog
    calls = []
    monkeypatch.setattr(sweep_runner, 'run_configuration', lambda *a: calls.append(a))
    out = tmp_path / 'out'
    status = sweep.main(['tf_cnn_sweep', '--output_dir=%s' % out, '--batch_sizes=8',
                         '--models=trivial,trivail,resnet5O,trivail', '--', '--device=cpu'])
    assert status == 2
    assert capsys.readouterr().err == (
        "error: --models: unknown --model='trivail'; did you mean trivial? valid models for "
        'imagenet (and synthetic data): %s; for cifar10 (--data_name=cifar10): %s '
        '(also unknown: resnet5O)\n' % (', '.join(model_catalog.names('imagenet')),
                                        ', '.join(model_catalog.names('cifar10'))))
    assert calls == [] and not out.exists()  # no run, no results file, no folder
    # cifar10's models pass (the flags for every run choose the dataset).
    assert sweep.unknown_model(['trivial', 'resnet20', 'resnet50_v1.5']) is None


def test_sweep_file_gives_axes_and_flags_and_the_command_line_wins(tmp_path, capsys):
    path = tmp_path / 'sweep.yaml'
    path.write_text('models: [trivial, lenet]\nbatch_sizes: [8, 16]\nnum_gpus: 2\n'
                    'repeats: 2\noutput_dir: %s\n'
                    'flags: {device: cpu, num_batches: 2, distortions: false}\n' % tmp_path)
    fv = _parsed(['--sweep_file=%s' % path, '--models=alexnet'])
    plan = sweep.build_plan(fv, ['--image_size=227'])  # alexnet's only size (model_catalog)
    assert plan['axes'] == {'model': ['alexnet'], 'batch_size': [8, 16], 'num_gpus': [2],
                            'precision': ['fp32'], 'variable_update': ['parameter_server']}
    assert plan['repeats'] == 2 and plan['output_dir'] == str(tmp_path)
    assert plan['extra_flags'] == ['--device=cpu', '--num_batches=2', '--distortions=false',
                                   '--image_size=227']
    path.write_text('models: trivial\nbatch_sizes: 8\noutput_dir: out\n'
                    'flags: ["--device=cpu", "--nodistortions"]\n')
    plan = sweep.build_plan(_parsed(['--sweep_file=%s' % path]), [])
    assert plan['axes']['model'] == ['trivial'] and plan['axes']['batch_size'] == [8]
    assert plan['extra_flags'] == ['--device=cpu', '--nodistortions']
    for text, error in (('models: [trivial]\nbatch_size: [8]\n',
                         "unknown key 'batch_size'; valid keys: models, "),
                        ('models: [trivial\n', 'is not valid YAML: '),
                        ('- trivial\n', 'must hold a mapping of keys'),
                        ('models: [trivial]\nflags: 3\n', 'flags must be a mapping')):
        path.write_text(text)
        assert sweep.main(['tf_cnn_sweep', '--sweep_file=%s' % path]) == 2
        err = capsys.readouterr().err
        assert err.startswith('error: --sweep_file %s' % path) and error in err, err
        assert err.count('\n') == 1


def test_sweep_file_reads_a_negated_flag_as_what_it_means(tmp_path, capsys):
    # `noresults_db: true` was refused with advice for the command line (`write
    # --noresults_db or --results_db=false`), which YAML cannot follow.
    path = tmp_path / 'sweep.yaml'
    path.write_text('models: trivial\nbatch_sizes: 8\noutput_dir: out\n'
                    'flags: {noresults_db: true, nodistortions: false, notf32: true}\n')
    plan = sweep.build_plan(_parsed(['--sweep_file=%s' % path]), [])
    # notf32 is the negation of the flag tf32 (it was a flag of its own, given as it was).
    assert plan['extra_flags'] == ['--results_db=false', '--distortions=true', '--tf32=false']
    from tf_cnn_benchmarks import flag_parsing
    p = flag_parsing.parse_flags(['tf_cnn_benchmarks'] + plan['extra_flags'])
    assert p.results_db is False and p.distortions is True and p.tf32 is False
    path.write_text('models: trivial\nbatch_sizes: 8\noutput_dir: out\n'
                    'flags: {noresults_db: /tmp/r.sqlite}\n')
    assert sweep.main(['tf_cnn_sweep', '--sweep_file=%s' % path]) == 2
    assert capsys.readouterr().err == (
        "error: --sweep_file %s: flags: noresults_db takes true or false (noresults_db: true is "
        "results_db: false). Received: noresults_db: '/tmp/r.sqlite'\n" % path)


def _parsed(argv):
    fv = sweep.flags.FlagValues()
    sweep.define_flags(fv)
    fv(['tf_cnn_sweep'] + argv)
    return fv


# --- Results file, failures, resume (a fake runner instead of processes).

def test_results_file_keeps_the_last_record_per_key_and_skips_a_torn_line(tmp_path):
    path = str(tmp_path / 'results.jsonl')
    first = _record('trivial', 8, 1, None, status='interrupted')
    sweep_results.append_record(path, first)
    sweep_results.append_record(path, _record('lenet', 8, 1, 50.0))
    sweep_results.append_record(path, _record('trivial', 8, 1, 100.0))
    with open(path, 'a') as f:
        f.write('{"key": "model=lenet|batch_si')  # a sweep killed in the middle of a write
    records, bad = sweep_results.load_records(path)
    assert bad == 1
    assert [(r['config']['model'], r['status']) for r in records] == [('lenet', 'ok'),
                                                                      ('trivial', 'ok')]
    assert sweep_results.done_keys([first]) == set()  # interrupted: a resume reruns it


@pytest.mark.parametrize('code, status, error', [
    ('sys.exit(130)', 'interrupted', 'interrupted by SIGINT'),
    ('import os, signal; os.kill(os.getpid(), signal.SIGTERM)', 'interrupted',
     'interrupted by SIGTERM'),
    ('print("error: bad data", file=sys.stderr); sys.exit(1)', 'failed', 'error: bad data')])
def test_a_run_a_signal_stopped_is_recorded_interrupted_not_failed(tmp_path, monkeypatch, code,
                                                                    status, error):
    """A run stopped by a signal the sweep did not send (exit 130 after its clean stop, or
    killed by SIGTERM) is interrupted (a resume reruns it), whatever its results JSON says."""
    entry = tmp_path / 'entry.py'
    entry.write_text('import sys\n%s\n' % code)
    monkeypatch.setattr(sweep_runner, 'ENTRY_SCRIPT', str(entry))
    outcome = sweep_runner.run_configuration([], str(tmp_path / 'run'), sweep_runner.Interrupts())
    assert (outcome['status'], outcome['error']) == (status, error)


class FakeRunner:
    """Stands in for sweep_runner.run_configuration: fails model 'bad', can simulate Ctrl-C."""

    def __init__(self, interrupt_at=None):
        self.calls = []
        self.interrupt_at = interrupt_at

    def __call__(self, args, run_dir, interrupts, timeout_secs):
        model = args[0].split('=', 1)[1]
        batch = int(args[1].split('=', 1)[1])
        self.calls.append(run_dir.split(os.sep)[-1])
        outcome = {'exit_status': 0, 'error': None, 'wall_secs': 0.01,
                   'started_utc': '2026-01-01T00:00:00+00:00',
                   'result': {'images_per_sec': 10.0 * batch, 'step_times': [0.1, 0.3, 0.2],
                              'params': {'model': model}, 'global_batch_size': batch,
                              'environment': {'tf_version': '9.9'}}}
        if len(self.calls) == self.interrupt_at:
            interrupts.signum = signal.SIGINT  # what the handler records on Ctrl-C
            outcome.update(status='interrupted', error='interrupted by SIGINT')
        elif model == 'bad':
            outcome.update(status='failed', exit_status=2, error='error: unknown --model',
                           result=None)
        else:
            outcome['status'] = 'ok'
        return outcome


def _plan(out, models, repeats=1):
    return {'axes': {'model': models, 'batch_size': [2, 4], 'num_gpus': [1],
                     'precision': ['fp32'], 'variable_update': ['parameter_server']},
            'repeats': repeats, 'output_dir': str(out), 'extra_flags': ['--device=cpu']}


def test_a_failed_configuration_is_recorded_and_the_sweep_goes_on(tmp_path, capsys):
    runner = FakeRunner()
    status = sweep.run_sweep(_plan(tmp_path, ['bad', 'trivial']), progress=False, runner=runner)
    assert status == 1
    assert runner.calls == ['bad-bs2-gpus1-fp32-parameter_server-r0',
                            'bad-bs4-gpus1-fp32-parameter_server-r0',
                            'trivial-bs2-gpus1-fp32-parameter_server-r0',
                            'trivial-bs4-gpus1-fp32-parameter_server-r0']
    records, _ = sweep_results.load_records(str(tmp_path / 'results.jsonl'))
    assert [(r['config']['model'], r['status'], r['exit_status'], r['images_per_sec'])
            for r in records] == [('bad', 'failed', 2, None), ('bad', 'failed', 2, None),
                                  ('trivial', 'ok', 0, 20.0), ('trivial', 'ok', 0, 40.0)]
    ok = records[2]
    assert ok['step_time_secs'] == pytest.approx({'median': 0.2, 'min': 0.1, 'max': 0.3,
                                                  'mean': 0.2, 'stdev': 0.0816497, 'count': 3})
    assert ok['environment']['tf_version'] == '9.9'  # the run's own, over the sweep's guess
    assert ok['environment']['onednn'] in ('on', 'off') and ok['params'] == {'model': 'trivial'}
    assert records[0]['error'] == 'error: unknown --model' and records[0]['params'] is None
    out = capsys.readouterr()
    assert 'bad bs=2 gpus=1 fp32 parameter_server repeat 1/1: failed (exit status 2): ' \
           'error: unknown --model' in out.err
    # The same run in report.md: numbered from 1 as on screen (stored as repeat 0, folder -r0);
    # its logs relative to report.md there, under the sweep's folder on the screen.
    assert '- bad bs=2 gpus=1 fp32 parameter_server repeat 1: failed, exit status 2: error: ' \
           'unknown --model (logs: %s/runs/bad-bs2-gpus1-fp32-parameter_server-r0)' \
           % tmp_path in out.out
    assert (tmp_path / 'report.md').read_text().count(' repeat 1: failed') == 2
    assert '(logs: runs/bad-bs2-gpus1-fp32-parameter_server-r0)' in (
        tmp_path / 'report.md').read_text()
    assert '| 2 | 20.0 |' in out.out and '| 2 | failed |' in out.out
    # Rerun: failed configurations are final unless --retry_failed.
    again = FakeRunner()
    assert sweep.run_sweep(_plan(tmp_path, ['bad', 'trivial']), progress=False,
                           runner=again) == 1
    assert again.calls == []
    assert sweep.run_sweep(_plan(tmp_path, ['bad', 'trivial']), retry_failed=True,
                           progress=False, runner=again) == 1
    assert again.calls == ['bad-bs2-gpus1-fp32-parameter_server-r0',
                           'bad-bs4-gpus1-fp32-parameter_server-r0']


def test_an_interrupted_sweep_resumes_without_rerunning_finished_runs(tmp_path, capsys):
    plan = _plan(tmp_path, ['trivial', 'lenet'], repeats=2)  # 8 runs
    first = FakeRunner(interrupt_at=3)
    assert sweep.run_sweep(plan, progress=False, runner=first) == 128 + signal.SIGINT
    assert len(first.calls) == 3  # stopped after the interrupted run
    records, _ = sweep_results.load_records(str(tmp_path / 'results.jsonl'))
    assert [r['status'] for r in records] == ['ok', 'ok', 'interrupted']
    assert os.path.isfile(tmp_path / 'report.md')  # the report covers what exists
    second = FakeRunner()
    assert sweep.run_sweep(plan, progress=False, runner=second) == 0
    assert second.calls == ['lenet-bs2-gpus1-fp32-parameter_server-r0',  # the interrupted one
                            'lenet-bs4-gpus1-fp32-parameter_server-r0',
                            'trivial-bs2-gpus1-fp32-parameter_server-r1',
                            'trivial-bs4-gpus1-fp32-parameter_server-r1',
                            'lenet-bs2-gpus1-fp32-parameter_server-r1',
                            'lenet-bs4-gpus1-fp32-parameter_server-r1']
    assert 'resuming: 2 of 8 runs already done' in capsys.readouterr().err
    # A second sweep in the same folder while one runs: refused.
    holder = sweep._lock(str(tmp_path))
    try:
        with pytest.raises(sweep.SweepError, match='another tf_cnn_sweep is running'):
            sweep.run_sweep(plan, progress=False, runner=FakeRunner())
    finally:
        holder.close()
    # Other flags for every run would mix incomparable runs in one folder: refused.
    with pytest.raises(sweep.SweepError, match='holds runs made with other flags'):
        sweep.run_sweep(dict(plan, extra_flags=['--device=cpu', '--num_batches=5']),
                        progress=False, runner=FakeRunner())


def test_last_error_line_prefers_error_lines():
    assert sweep_runner.last_error_line('warning: x\nerror: first\nerror: second\ntrace\n') == \
        'error: second'
    assert sweep_runner.last_error_line('Traceback ...\nValueError: bad\n\n') == 'ValueError: bad'
    assert sweep_runner.last_error_line('') is None


# --- Report: arithmetic and plots.

def _report_records():
    return (_records('trivial', 8, 1, [100.0, 110.0, 90.0])
            + _records('trivial', 8, 2, [150.0, 180.0, 160.0])
            + _records('trivial', 8, 4, [200.0, 200.0, 200.0])
            + _records('trivial', 16, 1, [200.0, 210.0, 200.0])
            + _records('trivial', 16, 2, [360.0, None, 380.0])
            + _records('lenet', 8, 1, [1000.0, 1200.0]))


def test_report_table_medians_spread_and_scaling_efficiency():
    records = _report_records()
    stats = sweep_results.config_stats(records)
    assert stats[('trivial', 8, 2, 'fp32', 'parameter_server')].median == 160.0
    assert sweep_results.Stats([1.0, 2.0, 3.0, 4.0]).median == 2.5
    assert sweep_results.scaling_efficiency(
        stats, ('trivial', 8, 4, 'fp32', 'parameter_server')) == pytest.approx(0.5)
    table = sweep_report.model_table('trivial', records)
    assert ('| batch/device | 1 device | 2 devices | 4 devices | efficiency 2 | efficiency 4 |'
            in table)
    # bs 8: medians 100, 160 (= 2 x 100 x 80%), 200 (= 4 x 100 x 50%); ± = (max - min) / 2.
    assert '| 8 | 100.0 ±10.0% | 160.0 ±9.4% | 200.0 ±0.0% | 80.0% | 50.0% |' in table
    # bs 16: two of three repeats on 2 devices succeeded: median 370 of 360 and 380.
    assert '| 16 | 200.0 ±2.5% | 370.0 ±2.7% (n=2) (some failed) | - | 92.5% | - |' in table
    assert 'median of 3 repeats ± half their range; precision fp32, ' \
           'variable_update parameter_server' in table
    lenet = sweep_report.model_table('lenet', records)
    assert '| 8 | 1100.0 ±9.1% |' in lenet and 'efficiency' not in lenet


def test_report_and_plots_are_written(tmp_path):
    text = sweep_report.write_report(str(tmp_path), _report_records())
    assert (tmp_path / 'report.md').read_text() == text
    assert '17 runs: 16 ok, 1 failed, 0 interrupted. Flags for every run: `--device=cpu`.' in text
    assert 'TensorFlow 2.21.0; CPU Test CPU (2 cores); GPUs: none visible; oneDNN on.' in text
    # The failed run is config['repeat'] 1 (0-based, as stored): the second, 'repeat 2'.
    assert '- trivial bs=16 gpus=2 fp32 parameter_server repeat 2: failed, exit status 1: ' \
           'error: boom (logs: runs/x)' in text
    names = sorted(os.listdir(tmp_path / 'plots'))
    assert names == ['lenet_images_per_sec.png', 'trivial_images_per_sec.png',
                     'trivial_scaling.png']  # lenet ran on 1 device only: no scaling plot
    from matplotlib import image
    for name in names:
        assert (tmp_path / 'plots' / name).read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
        assert image.imread(str(tmp_path / 'plots' / name)).shape[:2] == (480, 750)
    assert '![trivial_scaling.png](plots/trivial_scaling.png)' in text


def test_the_report_shows_the_flags_that_apply_when_a_flag_is_given_twice(tmp_path):
    # The reported case: --config=resnet50_cpu_bf16 -- --num_batches=2 --num_warmup_batches=1
    # showed both values of each ('... --num_warmup_batches=2 --num_batches=20 --num_batches=2
    # --num_warmup_batches=1 ...'), not which applied.
    fv = _parsed(['--config=resnet50_cpu_bf16', '--output_dir=%s' % tmp_path,
                  '--models=trivial', '--batch_sizes=8', '--repeats=1'])
    extra = sweep.build_plan(fv, ['--num_batches=2', '--num_warmup_batches=1'])['extra_flags']
    record = dict(_record('trivial', 8, 1, 100.0), extra_flags=extra)
    text = sweep_report.header([record])
    assert ('Flags for every run: `--device=cpu --data_format=NHWC --num_warmup_batches=1 '
            '--num_batches=2` (a flag given twice takes its later value: `--num_warmup_batches=2 '
            '--num_batches=20` given earlier, e.g. by --config, do not apply).') in text
    assert sweep_report.merged_flags(['--xla', '--num_batches', '5', '--noxla']) == (
        ['--noxla', '--num_batches 5'], ['--xla'])
    assert sweep_report.merged_flags(['--device=cpu']) == (['--device=cpu'], [])


def test_report_without_matplotlib_says_how_to_install_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, 'matplotlib', None)  # import matplotlib -> ImportError
    text = sweep_report.write_report(str(tmp_path), _report_records())
    assert 'Plots not drawn: matplotlib is not installed: pip install matplotlib' in text
    assert '| 8 | 100.0 ±10.0% |' in text
    assert capsys.readouterr().err.startswith('warning: no plots: matplotlib is not installed')


# --- Compare.

def test_compare_prints_ratios_verdicts_and_one_sided_configurations(tmp_path, capsys):
    a = _write(str(tmp_path / 'a'), _records('trivial', 8, 1, [100.0, 110.0, 90.0])
               + _records('trivial', 16, 1, [100.0, 110.0, 90.0])
               + _records('trivial', 32, 1, [100.0, 110.0, 90.0])
               + _records('lenet', 8, 1, [50.0])
               + _records('lenet', 8, 2, [70.0, 80.0]))
    b_env = {'tf_version': '2.22.0', 'cpu_model': 'Other CPU', 'gpus': ['GPU X'],
             'onednn': 'off'}
    _write(str(tmp_path / 'b'), _records('trivial', 8, 1, [200.0, 210.0, 190.0], env=b_env)
               + _records('trivial', 16, 1, [105.0, 115.0, 95.0], env=b_env)
               + _records('trivial', 32, 1, [50.0, 55.0, 45.0], env=b_env)
               + _records('lenet', 8, 1, [60.0], env=b_env)
               + _records('alexnet', 8, 1, [5.0, 6.0], env=b_env))
    assert sweep.main(['tf_cnn_sweep', 'compare', a, str(tmp_path / 'b' / 'results.jsonl')]) == 0
    out = capsys.readouterr().out
    assert 'A: %s (TF 2.21.0, Test CPU, no GPU, oneDNN on, 12 runs)' % a in out
    assert '(TF 2.22.0, Other CPU, GPU X, oneDNN off, 12 runs)' in out
    rows = [line for line in out.splitlines() if line.startswith('| ') and '---' not in line]
    # p: one-sided Mann-Whitney, exact: 3 repeats each side all beyond the other's: 1/20.
    assert rows[1:] == [
        '| lenet | 8 | 1 | fp32 | parameter_server | 50.0 (1 run) | 60.0 (1 run) | 1.200 | - | ? '
        '| n=1+1: the Mann-Whitney test cannot reach p<=0.05 with fewer than 3 repeats per side |',
        '| trivial | 8 | 1 | fp32 | parameter_server | 100.0 ±10.0% (n=3) | 200.0 ±5.0% (n=3) '
        '| 2.000 | 0.05 | faster | |',
        '| trivial | 16 | 1 | fp32 | parameter_server | 100.0 ±10.0% (n=3) | 105.0 ±9.5% (n=3) '
        '| 1.050 | 0.35 | same | |',
        '| trivial | 32 | 1 | fp32 | parameter_server | 100.0 ±10.0% (n=3) | 50.0 ±10.0% (n=3) '
        '| 0.500 | 0.05 | slower | |']
    assert 'only in A (1): lenet bs=8 gpus=2 fp32 parameter_server' in out
    assert 'only in B (1): alexnet bs=8 gpus=1 fp32 parameter_server' in out
    assert sweep.main(['tf_cnn_sweep', 'compare', a, str(tmp_path / 'missing')]) == 2
    assert capsys.readouterr().err.startswith('error: no results file at ')


def test_compare_lists_configurations_that_failed_on_one_side_as_failed_not_missing(
        tmp_path, capsys):
    a = _write(str(tmp_path / 'a'), _records('trivial', 8, 1, [100.0, 110.0])
               + _records('trivial', 16, 1, [None, None])  # ran in A, every run failed
               + _records('lenet', 8, 1, [None]))
    b = _write(str(tmp_path / 'b'), _records('trivial', 8, 1, [100.0, 110.0])
               + _records('trivial', 16, 1, [200.0, 210.0])
               + _records('lenet', 8, 1, [None])  # failed on both sides
               + _records('alexnet', 8, 1, [None]))  # B only (and failed there)
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b]) == 0
    out = capsys.readouterr().out
    # 2 repeats a side (issue 25): no verdict, and the notes say why.
    assert '| 1.000 | - | ? | n=2+2: the Mann-Whitney test cannot reach p<=0.05 with fewer ' \
           'than 3 repeats per side |' in out
    assert out.endswith(
        '?: too few repeats for the test (3 per side needed), or for a gate, a slowdown of its '
        'size could not have been caught (the notes say why).\n\n'
        'only in B (1): alexnet bs=8 gpus=1 fp32 parameter_server\n\n'
        'failed in A (2): lenet bs=8 gpus=1 fp32 parameter_server; '
        'trivial bs=16 gpus=1 fp32 parameter_server\n\n'
        'failed in B (1): lenet bs=8 gpus=1 fp32 parameter_server\n'), out
    assert 'only in A' not in out and 'trivial bs=16' not in out.split('failed in A')[0]


# --- The real thing: `python -m tools.sweep` with tf_cnn_benchmarks processes.

RUN_FLAGS = ['--device=cpu', '--image_size=16', '--num_warmup_batches=1', '--display_every=100',
             '--num_batches=800']
HUGE_BATCH = 100000000  # passes the sweep's checks; the run's memory check refuses it


def _sweep_cmd(out):
    return [sys.executable, '-m', 'tools.sweep', '--output_dir=%s' % out, '--models=trivial',
            '--batch_sizes=%d,2' % HUGE_BATCH, '--repeats=1', '--'] + RUN_FLAGS


_wait_for = helpers.wait_for


def test_real_sweep_failing_model_ctrl_c_and_resume(tmp_path):
    """trivial at a batch of 10^8 fails (the run's memory check; recorded, the sweep goes on);
    Ctrl-C in trivial's timed steps stops it (exit 130, recorded interrupted, report written);
    the same command resumes with trivial only; a third run has nothing left to do."""
    out = tmp_path / 'sweep'
    results = out / 'results.jsonl'
    trivial_log = out / 'runs' / 'trivial-bs2-gpus1-fp32-parameter_server-r0' / 'stdout.log'
    with open(tmp_path / 'first.out', 'w') as fo, open(tmp_path / 'first.err', 'w') as fe:
        proc = subprocess.Popen(_sweep_cmd(out), cwd=REPO, stdout=fo, stderr=fe)
        try:
            started = _wait_for(lambda: trivial_log.exists()
                                and 'Done warm up' in trivial_log.read_text(), 240, proc)
            assert started, (tmp_path / 'first.err').read_text()
            proc.send_signal(signal.SIGINT)
            assert proc.wait(timeout=120) == -signal.SIGINT  # 130 in a shell
        finally:
            if proc.poll() is None:
                proc.kill()
    err = (tmp_path / 'first.err').read_text()
    assert '] 1/2 trivial bs=%d gpus=1 fp32 parameter_server repeat 1/1 | ' % HUGE_BATCH in err
    assert 'failed (exit status 1): error: not enough memory for this run' in err
    assert 'sweep: interrupted; rerun the same command to resume' in err
    records, _ = sweep_results.load_records(str(results))
    assert [(r['config']['model'], r['status'], r['error'][:36]) for r in records] == [
        ('trivial', 'failed', 'error: not enough memory for this run'[:36]),
        ('trivial', 'interrupted', 'interrupted by SIGINT')]
    assert (out / 'report.md').exists()

    second = subprocess.run(_sweep_cmd(out), cwd=REPO, capture_output=True, text=True,
                            timeout=300)
    assert second.returncode == 1, second.stderr  # the huge batch stays failed
    assert 'resuming: 1 of 2 runs already done' in second.stderr
    resumed = second.stderr.split('resuming')[1].split('\n', 1)[1]
    assert 'bs=%d' % HUGE_BATCH not in resumed.split('# tf_cnn_sweep report')[0]
    records, _ = sweep_results.load_records(str(results))
    with open(results) as f:
        assert len(f.readlines()) == 3  # failed, interrupted, then the rerun: nothing lost
    ok = records[-1]
    assert ok['status'] == 'ok' and ok['images_per_sec'] > 0
    assert ok['params']['model'] == 'trivial' and ok['params']['num_batches'] == 800
    assert ok['step_time_secs']['count'] == 800
    import tensorflow as tf
    assert ok['environment']['tf_version'] == tf.__version__
    assert ok['environment']['onednn'] == 'on' and ok['environment']['gpus'] == []
    assert 'trivial bs=2 gpus=1 fp32 parameter_server repeat 1/1: ' in second.stdout
    assert '| 2 | %.1f |' % ok['images_per_sec'] in (out / 'report.md').read_text()
    assert (out / 'plots' / 'trivial_images_per_sec.png').exists()

    before = results.read_text()
    third = subprocess.run(_sweep_cmd(out), cwd=REPO, capture_output=True, text=True,
                           timeout=120)
    assert third.returncode == 1 and 'resuming: 2 of 2 runs already done' in third.stderr
    assert results.read_text() == before


def test_help_runs_as_a_module():
    proc = subprocess.run([sys.executable, '-m', 'tools.sweep', '--help'], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and '--batch_sizes' in proc.stdout
    assert 'tf_cnn_sweep compare runs/a runs/b' in proc.stdout


class FolderRunner(FakeRunner):
    """A FakeRunner that makes each run's folder and its logs, as the real runner does."""

    def __call__(self, args, run_dir, interrupts, timeout_secs):
        os.makedirs(run_dir)
        open(os.path.join(run_dir, 'stderr.log'), 'w').close()
        return super().__call__(args, run_dir, interrupts, timeout_secs)


def test_the_printed_report_names_logs_and_plots_as_they_open_from_here(tmp_path, capsys,
                                                                         monkeypatch):
    # With --output_dir=runs/fail it printed '(logs: runs/bad-...)': the folder is
    # runs/fail/runs/bad-...; report.md keeps the paths relative to itself.
    monkeypatch.chdir(tmp_path)
    assert sweep.run_sweep(_plan('runs/fail', ['bad', 'trivial']), progress=False,
                           runner=FolderRunner()) == 1
    printed = re.findall(r'\(logs: ([^)]*)\)', capsys.readouterr().out)
    assert printed == ['runs/fail/runs/bad-bs2-gpus1-fp32-parameter_server-r0',
                       'runs/fail/runs/bad-bs4-gpus1-fp32-parameter_server-r0']
    assert all(os.path.isfile(os.path.join(p, 'stderr.log')) for p in printed)
    report_md = (tmp_path / 'runs' / 'fail' / 'report.md').read_text()
    assert re.findall(r'\(logs: ([^)]*)\)', report_md) == [p[len('runs/fail/'):]
                                                          for p in printed]
    # `tf_cnn_sweep report DIR` prints them the same way; its plots too.
    assert sweep.main(['tf_cnn_sweep', 'report', 'runs/fail']) == 0
    out = capsys.readouterr().out
    assert re.findall(r'\(logs: ([^)]*)\)', out) == printed
    plots = re.findall(r'!\[[^]]*\]\(([^)]*)\)', out)
    assert plots and all(p.startswith('runs/fail/plots/') and os.path.isfile(p) for p in plots)
