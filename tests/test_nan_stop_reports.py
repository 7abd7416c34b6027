"""A training run stopped by a non-finite loss keeps the figures of its steps before it, as a
run a failed checkpoint save stopped does (lifecycle/training_loop.py, phase_runner.py): the
total block, the results JSON and the database record marked stopped by that loss, no final
checkpoint, then the same one error line as before and exit status 1. A user's finding:
such a run wrote no JSON and recorded nothing, though the JSON has a `stopped_by_error` key.

The NaN is injected into the loss the step returns (the step itself runs for real), so the
step it comes at is known."""

from __future__ import annotations

import json
import math
import sqlite3

import pytest
import tensorflow as tf

from tf_cnn_benchmarks.lifecycle import timed_run

import helpers
import results_helpers as rh

pytestmark = pytest.mark.cli

TINY = ('--model=trivial', '--batch_size=2', '--image_size=16', '--num_batches=5',
        '--init_learning_rate=0.002')


def _strict(text: str):
    """json.loads that refuses NaN and Infinity, as JavaScript's JSON.parse does."""
    def refuse(token):
        raise ValueError('non-finite token %s' % token)
    return json.loads(text, parse_constant=refuse)


def _nan_at(monkeypatch, call: int) -> None:
    """The `call`-th step run (warm-up steps and traced ones counted, from 1) returns NaN as
    its loss."""
    real, calls = timed_run.Step._values, []

    def values(self, out):
        calls.append(1)
        got = real(self, out)
        return (math.nan,) + got[1:] if len(calls) == call else got
    monkeypatch.setattr(timed_run.Step, '_values', values)


def _run(tmp_path, *flags):
    log_dir, db = tmp_path / 'bl', tmp_path / 'r.sqlite'
    proc = helpers.run_command(*TINY, '--benchmark_log_dir=%s' % log_dir,
                               '--results_db=%s' % db, *flags)
    [written] = list(log_dir.iterdir())
    return proc, _strict(written.read_text()), db


def test_a_nan_in_the_timed_part_keeps_the_steps_before_it(tmp_path, monkeypatch, capsys):
    _nan_at(monkeypatch, 4)  # 1 warm-up step, then timed steps 1, 2 and the NaN step 3
    train_dir = tmp_path / 'td'
    proc, saved, db = _run(tmp_path, '--num_warmup_batches=1', '--train_dir=%s' % train_dir,
                           '--save_model_steps=2')
    assert proc.returncode == 1, proc.stderr
    # The error line as before (tests/test_training_loop_nan.py asserts its advice).
    assert [x for x in proc.stderr.splitlines() if x.startswith('error:')] == [
        'error: the loss became nan at step 3 (learning rate 0.002); the run is invalid and '
        'only the timed steps before it are reported, as a partial run. Lower '
        '--init_learning_rate.']
    lines = proc.stdout.splitlines()
    assert any(x.startswith('total images/sec: ') for x in lines)
    stopped = 'Stopped by the non-finite loss (nan) at step 3 after 2 timed steps'
    assert stopped in lines
    assert ('No checkpoint saved at the end: the non-finite loss (nan) at step 3 stopped the '
            'run') in lines
    # The JSON: the two timed steps before the NaN one, stopped by it.
    assert saved['stopped_by_error'] == 'the non-finite loss (nan) at step 3'
    assert saved['num_steps'] == 2 and len(saved['steps']) == 2 and len(saved['losses']) == 2
    assert saved['images_per_sec'] > 0 and saved['stopped_early'] is True
    assert saved['stopped_in_warmup'] is False and saved['stopped_by_signal'] is None
    assert saved['global_step'] == 4  # the NaN step's update ran
    # The periodic save at global step 2 stays; no final save of the diverged weights.
    assert saved['checkpoint_path'] is None
    assert saved['checkpoints'] == [str(train_dir / 'model.ckpt-2')]
    assert tf.compat.v1.train.latest_checkpoint(str(train_dir)).endswith('model.ckpt-2')
    # The record: partial, not clean (left out of the verdicts), and `show` says why.
    [(figures, steps)] = sqlite3.connect(db).execute(
        'SELECT figures_json, num_steps FROM runs').fetchall()
    figures = json.loads(figures)
    assert steps == 2 and figures['partial'] is True
    assert figures['stopped_by_error'] == 'the non-finite loss (nan) at step 3'
    assert figures['timed_steps'] == {'run': 2, 'planned': 5}
    capsys.readouterr()
    status, out, _ = rh.results_command(capsys, 'show', '1', '--results_db=%s' % db)
    assert status == 0
    assert ('  stopped: by the non-finite loss (nan) at step 3 after 2 of 5 timed steps: '
            'partial, the figures of the timed steps run') in out.splitlines()
    assert 'stopped at 2 of 5' in out


def test_a_nan_in_the_warmup_writes_the_json_a_signal_there_writes(tmp_path, monkeypatch):
    """Nothing timed: the JSON has images_per_sec null and stopped_by_error set, the keys a
    SIGINT in the warm-up gives (tests/test_lifecycle_cli.py), and no database record."""
    _nan_at(monkeypatch, 2)
    proc, saved, db = _run(tmp_path, '--num_warmup_batches=3')
    assert proc.returncode == 1, proc.stderr
    assert [x for x in proc.stderr.splitlines() if x.startswith('error:')] == [
        'error: the loss became nan at warm-up step 2 (learning rate 0.002); the run is '
        'invalid and no images/sec are reported. Lower --init_learning_rate.']
    assert 'total images/sec' not in proc.stdout and 'Done warm up' not in proc.stdout
    assert ('Stopped by the non-finite loss (nan) at warm-up step 2: nothing was timed'
            in proc.stdout.splitlines())
    assert saved['stopped_by_error'] == 'the non-finite loss (nan) at warm-up step 2'
    assert {k: saved[k] for k in ('images_per_sec', 'num_steps', 'losses', 'steps',
                                  'stopped_early', 'stopped_in_warmup', 'stopped_by_signal',
                                  'average_wall_time', 'last_average_loss')} == {
        'images_per_sec': None, 'num_steps': 0, 'losses': [], 'steps': [],
        'stopped_early': True, 'stopped_in_warmup': True, 'stopped_by_signal': None,
        'average_wall_time': None, 'last_average_loss': None}
    assert len(saved['warmup_losses']) == 1
    rows = (sqlite3.connect(db).execute('SELECT COUNT(*) FROM runs').fetchone()[0]
            if db.exists() else 0)
    assert rows == 0  # nothing timed: not recorded, as a signal in the warm-up


def test_a_library_caller_gets_the_error_with_the_result(tmp_path, monkeypatch):
    from tf_cnn_benchmarks.lifecycle import training_loop
    _nan_at(monkeypatch, 3)  # no warm-up step: timed step 3
    with pytest.raises(training_loop.NonFiniteLossError) as info:
        helpers.tiny_run(num_batches=4, benchmark_log_dir=str(tmp_path / 'bl'))
    result = info.value.result
    assert result['stopped_by_error'] == 'the non-finite loss (nan) at step 3'
    assert result['num_steps'] == 2
    assert _strict(open(result['results_file']).read())['num_steps'] == 2
