"""tf_cnn_sweep on a full disk (tools/sweep/disk.py) and the lines of a sweep that ends with runs
not done: one `error:` line naming the file and the fix; a run that failed for lack of space
stops the sweep and runs again on resume; a resume names the failed runs it skips and
--retry_failed. Full disks are stood in for (an OSError, a run's error line): no mount."""

from __future__ import annotations

import errno
import os

from tf_cnn_benchmarks.tools.sweep import cli as sweep
from tf_cnn_benchmarks.tools.sweep import report as sweep_report
from tf_cnn_benchmarks.tools.sweep import results as sweep_results
from tf_cnn_benchmarks.tools.sweep import runner as sweep_runner

FULL = os.strerror(errno.ENOSPC)  # 'No space left on device'


class Runner:
    """Stands in for runner.run_configuration: the runs named in `fail` fail, with `error`,
    for lack of space when `no_space`."""

    def __init__(self, fail=(), error='error: boom', no_space=False):
        self.calls, self.fail = [], set(fail)
        self.error, self.no_space = error, no_space

    def __call__(self, args, run_dir, interrupts, timeout_secs):
        name = os.path.basename(run_dir)
        self.calls.append(name)
        outcome = {'exit_status': 0, 'error': None, 'wall_secs': 0.01, 'no_space': False,
                   'started_utc': '2026-01-01T00:00:00+00:00', 'status': 'ok',
                   'result': {'images_per_sec': 10.0, 'step_times': [0.1, 0.1],
                              'params': {}, 'global_batch_size': 2, 'environment': {}}}
        if name in self.fail:
            outcome.update(status='failed', exit_status=1, error=self.error, result=None,
                           no_space=self.no_space)
        return outcome


def _plan(out, batches=(2, 4, 8)):
    return {'axes': {'model': ['trivial'], 'batch_size': list(batches), 'num_gpus': [1],
                     'precision': ['fp32'], 'variable_update': ['parameter_server']},
            'repeats': 1, 'output_dir': str(out), 'extra_flags': ['--device=cpu']}


def _name(batch):
    return 'trivial-bs%d-gpus1-fp32-parameter_server-r0' % batch


def test_a_run_that_failed_for_lack_of_space_stops_the_sweep_and_runs_again_on_resume(
        tmp_path, capsys):
    # Before: the sweep went on (every later run failed alike), ended without a line naming
    # the disk, and a resume skipped the run as done ('failed') without a word.
    error = 'error: cannot write %s/runs/x/tf_cnn_benchmarks_x.json: %s' % (tmp_path, FULL)
    first = Runner(fail=[_name(4)], error=error, no_space=True)
    assert sweep.run_sweep(_plan(tmp_path), progress=False, runner=first) == 1
    assert first.calls == [_name(2), _name(4)]  # not bs=8: it would fail alike
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == (
        'error: the run trivial bs=4 gpus=1 fp32 parameter_server repeat 1/1 failed for lack '
        'of disk space (%s) and the sweep stopped there (every run after it would fail '
        'alike); free space on that disk (or give another --output_dir), then run the same '
        'command again: it resumes, and the runs that failed for lack of space run again'
        % error)
    records, _ = sweep_results.load_records(str(tmp_path / 'results.jsonl'))
    assert [(r['status'], r['no_space']) for r in records] == [('ok', False), ('failed', True)]
    second = Runner()
    assert sweep.run_sweep(_plan(tmp_path), progress=False, runner=second) == 0
    assert second.calls == [_name(4), _name(8)]
    assert ('resuming: 1 of 3 runs already done in %s are skipped; 1 run that failed for lack '
            'of disk space runs again' % (tmp_path / 'results.jsonl')) in capsys.readouterr().err


def test_a_resume_names_the_failed_runs_it_skips_and_ends_with_an_error_line(tmp_path, capsys):
    # Before: 'resuming: 3 of 3 runs already done ... are skipped' and exit status 1 with no
    # `error:` line, only the report's "Runs not done".
    assert sweep.run_sweep(_plan(tmp_path), progress=False, runner=Runner(fail=[_name(8)])) == 1
    assert capsys.readouterr().err.splitlines()[-1] == (
        'error: 1 of 3 runs of this sweep did not end ok (1 failed): see "Runs not done" in '
        '%s; --retry_failed runs the failed and stopped ones again'
        % (tmp_path / 'report.md'))
    again = Runner()
    assert sweep.run_sweep(_plan(tmp_path), progress=False, runner=again) == 1
    assert again.calls == []
    err = capsys.readouterr().err.splitlines()
    assert err[0] == ('resuming: 3 of 3 runs already done in %s are skipped (1 failed: '
                      '--retry_failed runs them again)' % (tmp_path / 'results.jsonl'))
    assert err[-1].startswith('error: 1 of 3 runs of this sweep did not end ok (1 failed)')
    assert sweep.run_sweep(_plan(tmp_path), retry_failed=True, progress=False,
                           runner=again) == 0
    assert again.calls == [_name(8)]
    assert 'error:' not in capsys.readouterr().err


def test_a_results_file_on_a_full_disk_is_one_line_with_its_path_and_the_fix(tmp_path,
                                                                             monkeypatch,
                                                                             capsys):
    # Before: `error: [Errno 28] No space left on device`, no path, no fix.
    def full(fd):
        raise OSError(errno.ENOSPC, FULL)  # as a write's: no file name
    monkeypatch.setattr(os, 'fsync', full)
    monkeypatch.setattr(sweep_runner, 'run_configuration', Runner())
    status = sweep.main(['tf_cnn_sweep', '--output_dir=%s' % tmp_path, '--models=trivial',
                         '--batch_sizes=2', '--repeats=1', '--noprogress', '--',
                         '--device=cpu'])
    assert status == 1
    assert capsys.readouterr().err.splitlines()[-1] == (
        'error: cannot write %s: %s; free space on its disk (or give another --output_dir), '
        'then run the same command again: it resumes' % (tmp_path / 'results.jsonl', FULL))


def test_a_report_that_cannot_be_written_is_printed_and_named(tmp_path, monkeypatch, capsys):
    # Before: the OSError of report.md.tmp ended the sweep with `error: [Errno 28] ...`, no
    # report on the screen and an empty report.md.tmp left behind.
    def no_plots(plot_dir, records):
        raise OSError(errno.ENOSPC, FULL)
    monkeypatch.setattr(sweep_report, 'write_plots', no_plots)
    assert sweep.run_sweep(_plan(tmp_path, [2]), progress=False, runner=Runner()) == 1
    out, err = capsys.readouterr()
    assert '# tf_cnn_sweep report' in out
    assert err.splitlines()[-1] == (
        'error: cannot write %s: %s; free space on its disk (or give another --output_dir), '
        'then run the same command again: it resumes' % (tmp_path / 'plots', FULL))
    assert not [n for n in os.listdir(tmp_path) if n.endswith('.tmp')]  # no partial report


def test_a_failed_runs_error_saying_the_disk_is_full_marks_it_no_space(tmp_path, monkeypatch):
    entry = tmp_path / 'entry.py'
    entry.write_text('import sys\nprint("error: cannot write /x/y.json: %s", file=sys.stderr)\n'
                     'sys.exit(1)\n' % FULL)
    monkeypatch.setattr(sweep_runner, 'ENTRY_SCRIPT', str(entry))
    run_dir = str(tmp_path / 'run')
    outcome = sweep_runner.run_configuration([], run_dir, sweep_runner.Interrupts())
    assert (outcome['status'], outcome['no_space']) == ('failed', True)
    entry.write_text('import sys\nprint("error: bad flag", file=sys.stderr)\nsys.exit(2)\n')
    monkeypatch.setattr(sweep_runner.disk, 'free_bytes', lambda folder: 10 ** 9)
    outcome = sweep_runner.run_configuration([], run_dir, sweep_runner.Interrupts())
    assert (outcome['status'], outcome['no_space']) == ('failed', False)
    # Nothing on stderr (it could not be written) but no space left: no_space too.
    monkeypatch.setattr(sweep_runner.disk, 'free_bytes', lambda folder: 0)
    entry.write_text('import sys\nsys.exit(1)\n')
    outcome = sweep_runner.run_configuration([], run_dir, sweep_runner.Interrupts())
    assert (outcome['status'], outcome['no_space']) == ('failed', True)


def test_an_output_dir_too_deep_for_a_runs_results_json_is_refused_before_any_run(tmp_path,
                                                                                  capsys,
                                                                                  monkeypatch):
    # Before: the pre-run checks passed, the run failed (exit status 2, recorded failed) and
    # the sweep went on; docs/campaigns.md says such path problems stop it before any run.
    deep = str(tmp_path)
    while len(deep) < 4000:
        deep = os.path.join(deep, 'd' * min(200, 4000 - len(deep)))
    monkeypatch.setattr(sweep_runner, 'run_configuration', Runner(fail=['all']))
    status = sweep.main(['tf_cnn_sweep', '--output_dir=%s' % deep, '--models=trivial',
                         '--batch_sizes=2', '--repeats=1', '--', '--device=cpu'])
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith('error: --output_dir=%s cannot be used: the run --model=trivial '
                          '--batch_size=2 --num_gpus=1 --variable_update=parameter_server would '
                          'write runs/trivial-bs2-gpus1-fp32-parameter_server-r0/'
                          'tf_cnn_benchmarks_trivial_' % deep)
    assert err.endswith('; choose a shorter --output_dir\n') and 'PATH_MAX' in err
    assert os.listdir(tmp_path) == []  # nothing made
