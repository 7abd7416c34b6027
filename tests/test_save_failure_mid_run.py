"""A periodic checkpoint save that fails during the run (a full disk, `ulimit -f`, the
--train_dir removed) stops the run after that step as a signal does: the total block, the
results JSON and the database record of the steps run (marked stopped by the failed save),
no final save, exit status 1 and one error line naming the save, its fix, the latest
checkpoint left and what kept the figures (lifecycle/checkpoints.py,
lifecycle/phase_runner.py). Before, the run ended at the failed save with only the error line:
every timed step's figures were lost."""

from __future__ import annotations

import errno
import json
import sqlite3

import pytest
import tensorflow as tf

from tf_cnn_benchmarks.lifecycle import phase_runner

import helpers

tf1 = tf.compat.v1


def _failing_saves(monkeypatch, fail_at: int, error):
    """Every save of global step `fail_at` or later raises `error` (a saver meeting a full
    disk); the earlier ones save."""
    real = tf1.train.Saver.save

    def save(self, sess, save_path, global_step=None, **kwargs):
        if global_step is not None and int(global_step) >= fail_at:
            raise error(save_path, global_step)
        return real(self, sess, save_path, global_step=global_step, **kwargs)
    monkeypatch.setattr(tf1.train.Saver, 'save', save)


def _full_disk(save_path, step):
    return tf.errors.ResourceExhaustedError(None, None, (
        "Graph execution error:\n\n%s-%d.data-00000-of-00001.tempstate77; No space left on "
        "device\n\t [[{{node save/SaveV2}}]]" % (save_path, step)))


def _run(tmp_path, *flags):
    train_dir, log_dir, db = tmp_path / 'td', tmp_path / 'bl', tmp_path / 'r.sqlite'
    proc = helpers.run_command(
        '--model=trivial', '--batch_size=2', '--image_size=16', '--num_batches=8',
        '--num_warmup_batches=0', '--save_model_steps=2', '--train_dir=%s' % train_dir,
        '--benchmark_log_dir=%s' % log_dir, '--results_db=%s' % db, *flags)
    return proc, train_dir, log_dir, db


def test_a_failed_save_mid_run_stops_and_keeps_the_figures(tmp_path, monkeypatch):
    _failing_saves(monkeypatch, 4, _full_disk)
    proc, train_dir, log_dir, db = _run(tmp_path)
    assert proc.returncode == 1, proc.stderr
    errors = [x for x in proc.stderr.splitlines() if x.startswith('error:')]
    [results] = list(log_dir.iterdir())
    assert errors == [
        'error: the checkpoint of global step 4 could not be saved in %s: No space left on '
        'device (writing model.ckpt-4.data-00000-of-00001.tempstate77); free space there, or '
        'give another --train_dir. The run stopped after 4 timed steps; the latest checkpoint '
        'in %s is model.ckpt-2. The figures of its 4 timed steps were kept: the results JSON '
        '%s, the record in the results database %s (run 1).' % (train_dir, train_dir, results,
                                                                db)]
    lines = proc.stdout.splitlines()
    assert any(x.startswith('total images/sec: ') for x in lines)
    assert 'Stopped by the failed checkpoint save at global step 4 after 4 timed steps' in lines
    saved = json.loads(results.read_text())
    assert saved['num_steps'] == 4 and saved['stopped_early'] is True
    assert saved['stopped_by_error'] == 'the failed checkpoint save at global step 4'
    assert saved['checkpoint_path'] is None
    assert saved['checkpoints'] == [str(train_dir / 'model.ckpt-2')]
    [figures] = sqlite3.connect(db).execute('SELECT figures_json FROM runs').fetchone()
    figures = json.loads(figures)
    assert figures['stopped_by_error'] == 'the failed checkpoint save at global step 4'
    assert figures['partial'] is True and figures['timed_steps'] == {'run': 4, 'planned': 8}
    # No later save was tried: model.ckpt-2 is the newest there.
    assert tf1.train.latest_checkpoint(str(train_dir)).endswith('model.ckpt-2')


def test_show_says_what_stopped_the_run(tmp_path, monkeypatch):
    from tf_cnn_benchmarks.tools import results_format
    row = {'mode': 'training', 'figures_json': json.dumps({
        'stopped_by_error': 'the failed checkpoint save at global step 4', 'partial': True,
        'timed_steps': {'run': 4, 'planned': 8}})}
    assert results_format._stop_lines(row) == [
        '  stopped: by the failed checkpoint save at global step 4 after 4 of 8 timed steps: '
        'partial, the figures of the timed steps run']


def test_a_file_over_the_size_limit_names_ulimit_and_no_checkpoint_left(tmp_path,
                                                                         monkeypatch):
    # The first save fails (EFBIG: the process's file-size limit): no checkpoint is left, and
    # the fix is the limit, not another --train_dir (which would fail the same way).
    _failing_saves(monkeypatch, 2, lambda path, step: OSError(errno.EFBIG, 'File too large'))
    proc, train_dir, log_dir, db = _run(tmp_path, '--noresults_db')
    assert proc.returncode == 1, proc.stderr
    [line] = [x for x in proc.stderr.splitlines() if x.startswith('error:')]
    [results] = list(log_dir.iterdir())
    assert line == (
        'error: the checkpoint of global step 2 could not be saved in %s: File too large; '
        'raise the process\'s file-size limit (`ulimit -f`; now %s). The run stopped after 2 '
        'timed steps; no checkpoint is left in %s (a folder the run made and left empty is '
        'removed at its end). The figures of its 2 timed steps were '
        'kept: the results JSON %s.' % (train_dir, phase_runner.file_size_limit(), train_dir,
                                        results))
    assert 'give another --train_dir' not in line


def test_a_failed_save_at_the_last_step_is_the_final_saves_failure(tmp_path, monkeypatch):
    # The save due at the last timed step is the final one: the run is complete, and the line
    # is the final save's (what was and was not written), as before.
    _failing_saves(monkeypatch, 8, _full_disk)
    proc, train_dir, log_dir, db = _run(tmp_path)
    assert proc.returncode == 1
    [line] = [x for x in proc.stderr.splitlines() if x.startswith('error:')]
    assert line.startswith('error: the run finished, but not all of its outputs were written. '
                           'Not written: the checkpoint (--train_dir): the checkpoint of '
                           'global step 8 could not be saved')
    [results] = list(log_dir.iterdir())
    saved = json.loads(results.read_text())
    assert saved['num_steps'] == 8 and saved['stopped_by_error'] is None


@pytest.mark.parametrize('error, fix', [
    (OSError(errno.EFBIG, 'File too large'), 'raise the process\'s file-size limit'),
    (OSError(errno.ENOSPC, 'No space left on device'), 'free space there, or give another'),
])
def test_the_fix_of_a_failed_output(error, fix):
    class Hook:
        output, output_flag = 'the trace', '--trace_file'
    assert phase_runner._fix(Hook(), error).startswith(fix)


def test_a_failed_save_in_the_warm_up_names_the_json_it_wrote(tmp_path, monkeypatch):
    # A save due in the warm-up fails: nothing was timed, but the results JSON was written
    # (its figures empty); the line said "no images/sec, results JSON or database record".
    _failing_saves(monkeypatch, 2, _full_disk)
    proc, train_dir, log_dir, db = _run(tmp_path, '--num_warmup_batches=4', '--noresults_db')
    assert proc.returncode == 1, proc.stderr
    [line] = [x for x in proc.stderr.splitlines() if x.startswith('error:')]
    [results] = list(log_dir.iterdir())
    assert json.loads(results.read_text())['num_steps'] == 0
    assert line.endswith('Nothing was timed: no images/sec; written: the results JSON %s.'
                         % results), line
