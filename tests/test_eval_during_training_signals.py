"""A first signal during an evaluation inside a training run (lifecycle/eval_during_training.py):
the evaluation stops after its current batch, says its accuracy is partial, never reaches
--stop_at_top_1_accuracy, logs no MLPerf eval_accuracy, and the run then stops as on any
signal. Before, the evaluation ran all its batches (--num_eval_batches, 100 by default:
minutes on a large model) before the run stopped."""

from __future__ import annotations

import json
import os
import signal
import types

import pytest

from tf_cnn_benchmarks.lifecycle import (
    checkpoints,
    eval_during_training,
    eval_runner,
    mlperf_log,
    signals,
)

import helpers


class FakeEvaluator:
    """Evaluator.evaluate's contract over `batches` batches of 4 examples, 2 top-1 hits each;
    `signal_at`: the batch (from 0) during which the catcher receives SIGINT."""

    def __init__(self, catcher, batches=10, signal_at=None):
        self.catcher, self.batches, self.signal_at = catcher, batches, signal_at
        self.asked = []

    def evaluate(self, *, values, should_stop=None):
        ran = 0
        for index in range(self.batches):
            if index == self.signal_at:
                self.catcher._first(signal.SIGINT)
            ran += 1
            if should_stop is not None and index + 1 < self.batches:
                self.asked.append(index)
                if should_stop():
                    break
        return {'top_1': 0.5, 'top_5': 1.0, 'num_examples': 4 * ran, 'num_batches': ran,
                'planned_batches': self.batches, 'partial': ran < self.batches,
                'global_step': int(values['global_step']), 'images_per_sec': 1.0,
                'skipped_records': None}


class Listener:
    def __init__(self):
        self.calls = []

    def eval_started(self, global_step):
        self.calls.append(('started', global_step))

    def eval_finished(self, global_step, r, more_steps):
        self.calls.append(('finished', global_step, r['partial'], more_steps))


def _hook(evaluator_for, target=None):
    """An EvalDuringTrainingHook watching a fresh SignalCatcher (not installed), with a fake
    evaluator (`evaluator_for(catcher)`), session and summaries."""
    hook = eval_during_training.EvalDuringTrainingHook.__new__(
        eval_during_training.EvalDuringTrainingHook)
    hook.p = types.SimpleNamespace(stop_at_top_1_accuracy=target)
    hook.evals, hook.reached, hook.listeners = [], False, [Listener()]
    hook.catcher, hook._evaluating, hook._whole, hook._done_said = None, None, False, False
    catcher = signals.SignalCatcher()
    hook.watch(catcher)
    hook.evaluator = evaluator_for(catcher)
    hook._savable = {}
    hook._ctx = types.SimpleNamespace(sess=types.SimpleNamespace(
        run=lambda fetch: {'global_step': hook.step}))
    hook._summaries = types.SimpleNamespace(write=lambda r: None)
    return hook, catcher


def test_a_signal_stops_the_evaluation_after_its_batch_and_never_reaches_the_target(capsys):
    hook, catcher = _hook(lambda c: FakeEvaluator(c, batches=10, signal_at=2), target=0.25)
    hook.step = 40
    hook._evaluate(40, more_steps=True)
    [r] = hook.evals
    assert (r['num_batches'], r['partial']) == (3, True)
    assert hook.evaluator.asked == [0, 1, 2]  # asked after each batch; stopped after the third
    # Its top-1 (0.5) is above the target (0.25), but of 3 batches of 10: not reached.
    assert not hook.reached and not hook.should_stop()
    out = capsys.readouterr().out.splitlines()
    assert out[:3] == [
        'Running evaluation at global_step 40',
        'Stopped by SIGINT after 3 of 10 batches of the evaluation at global step 40: the '
        'accuracy below is partial, over the 12 examples scored',
        'Accuracy @ 1 = 0.5000 Accuracy @ 5 = 1.0000 [12 examples]']
    # No new block after it: the run stops.
    assert hook.listeners[0].calls == [('started', 40), ('finished', 40, True, False)]
    assert not catcher.cut_short  # not the final evaluation


def test_a_complete_evaluation_still_reaches_the_target(capsys):
    hook, _ = _hook(lambda c: FakeEvaluator(c, batches=3), target=0.25)
    hook.step = 6
    hook._evaluate(6, more_steps=True)
    assert hook.reached and hook.evals[-1]['partial'] is False
    out = capsys.readouterr().out.splitlines()
    assert 'Stopped by' not in ' '.join(out)
    # Training stops: no `Resuming training`; the original's `Done with training` comes once
    # the timed steps are over (no final evaluation to come before).
    assert out[-1].startswith('Stopping: eval top-1 accuracy 0.5000 reached')
    hook.after_timed()
    hook.after_timed()
    assert capsys.readouterr().out.splitlines() == ['Done with training']


def test_a_partial_evaluation_or_a_signal_resumes_nothing(capsys):
    hook, catcher = _hook(lambda c: FakeEvaluator(c, batches=3))
    hook.step = 2
    hook._evaluate(2, more_steps=True)
    assert capsys.readouterr().out.splitlines()[-1] == 'Resuming training'
    catcher._first(signal.SIGINT)  # the run stops after this step: training does not resume
    hook._evaluate(2, more_steps=True)
    assert 'Resuming training' not in capsys.readouterr().out


def test_the_warning_names_the_evaluation_while_one_runs_else_the_default(capsys):
    hook, catcher = _hook(lambda c: FakeEvaluator(c, batches=4, signal_at=0))
    assert hook.first_line('SIGINT') is None  # no evaluation running: signals.py's text
    hook.step = 8
    hook._evaluate(8, more_steps=True)
    assert capsys.readouterr().err.strip() == (
        'warning: received SIGINT: stopping the evaluation at global step 8 after its current '
        'batch, then stopping the run, summarising and saving (send it again to abort at once)')
    other = signals.SignalCatcher()
    other.first_line = hook.first_line
    other._first(signal.SIGTERM)
    assert capsys.readouterr().err.strip() == (
        'warning: received SIGTERM: stopping after the current step, then summarising and '
        'saving (send it again to abort at once)')


def test_a_stopped_final_evaluation_makes_the_run_stopped_not_complete():
    hook, catcher = _hook(lambda c: FakeEvaluator(c, batches=5, signal_at=1))
    hook.step = 4
    hook._evaluate(4, more_steps=False, final=True)
    assert hook.evals[-1]['num_batches'] == 2 and catcher.cut_short
    stopper = signals.SignalHook()
    stopper.catcher = catcher
    stopper._planned, stopper._step = 4, 4
    stopper.after_timed()
    assert not catcher.late and stopper._signal_name() == 'SIGINT'


def test_a_final_evaluation_after_a_signal_in_the_last_step_runs_whole():
    # The run is complete (signals.py: a signal in the last timed step stops nothing).
    hook, catcher = _hook(lambda c: FakeEvaluator(c, batches=5))
    catcher._first(signal.SIGINT)
    hook.step = 4
    hook._evaluate(4, more_steps=False, final=True)
    assert hook.evals[-1]['num_batches'] == 5 and not catcher.cut_short
    # A signal before a non-final evaluation stops it after its first batch.
    hook._evaluate(2, more_steps=True)
    assert hook.evals[-1]['num_batches'] == 1


class _Logger:
    def __init__(self):
        self.lines = []

    def start(self, key, metadata=None, time_ms=None):
        self.lines.append(key)

    def end(self, key, metadata=None, time_ms=None):
        self.lines.append((key, metadata))

    def event(self, key, value=None, metadata=None, time_ms=None):
        self.lines.append(key)


def test_mlperf_logs_a_partial_evaluation_without_eval_accuracy_and_aborts():
    pytest.importorskip('mlperf_logging')
    _, constants = mlperf_log.load_mllog()
    hook = mlperf_log.MlPerfHook.__new__(mlperf_log.MlPerfHook)
    hook.c, hook.logger, hook._stopped, hook._block = constants, _Logger(), False, None
    hook._stop_lock = __import__('threading').Lock()
    hook.plan = types.SimpleNamespace(steps_per_epoch=10.0, global_batch_size=2, training=True,
                                      model='resnet50', params=types.SimpleNamespace(
                                          stop_at_top_1_accuracy=0.25))
    hook.global_step = 20
    hook.eval_started(20)
    partial = {'top_1': 0.9, 'partial': True}
    hook.eval_finished(20, partial, more_steps=False)
    # Even without a signal named in the result, a partial evaluation reaches no target.
    hook.report({'evals': [partial], 'stopped_by_signal': None})
    keys = [line if isinstance(line, str) else line[0] for line in hook.logger.lines]
    assert keys == ['eval_start', 'eval_stop', 'run_stop']
    assert hook.logger.lines[-1][1] == {'status': 'aborted'}


class SigintInEvalBatch:
    """Wraps eval_runner.timed_batches so that batch `at` (from 0) of evaluation `which` (from
    0) sends this process SIGINT: the signal comes inside that batch on any host."""

    def __init__(self, monkeypatch, at, which=0):
        self.at, self.which, self.count = at, which, 0
        self.original = eval_runner.timed_batches
        monkeypatch.setattr(eval_runner, 'timed_batches', self)

    def __call__(self, run_batch, num_batches, **kwargs):
        this = self.count
        self.count += 1

        def run(index):
            if this == self.which and index == self.at:
                os.kill(os.getpid(), signal.SIGINT)
            return run_batch(index)
        return self.original(run, num_batches, **kwargs)


def test_ctrl_c_in_an_evaluation_during_training_stops_it_and_the_run(
        tmp_path, capsys, monkeypatch):
    pytest.importorskip('mlperf_logging')
    SigintInEvalBatch(monkeypatch, at=1)
    result = helpers.tiny_bench(
        model='trivial', batch_size=2, image_size=16, num_batches=6, num_warmup_batches=0,
        display_every=100, train_dir=str(tmp_path), eval_during_training_every_n_steps=2,
        num_eval_batches=5, ml_perf=True, benchmark_log_dir=str(tmp_path / 'json')).run()
    assert result['stopped_by_signal'] == 'SIGINT' and result['num_steps'] == 2
    [r] = result['evals']
    assert (r['global_step'], r['num_batches'], r['planned_batches'], r['partial']) == (
        2, 2, 5, True)
    captured = capsys.readouterr()
    assert ('warning: received SIGINT: stopping the evaluation at global step 2 after its '
            'current batch, then stopping the run, summarising and saving (send it again to '
            'abort at once)') in captured.err
    lines = captured.out.splitlines()
    at = lines.index('Stopped by SIGINT after 2 of 5 batches of the evaluation at global step '
                     '2: the accuracy below is partial, over the 4 examples scored')
    assert lines[at + 1].endswith(' [4 examples]')
    assert 'Stopped by SIGINT after 2 timed steps' in lines
    assert checkpoints.latest_checkpoint(str(tmp_path)).endswith('model.ckpt-2')
    events = [json.loads(line[len(':::MLLOG '):]) for line in lines
              if line.startswith(':::MLLOG ')]
    keys = [e['key'] for e in events]
    assert 'eval_stop' in keys and 'eval_accuracy' not in keys
    assert keys[-1] == 'run_stop' and events[-1]['metadata']['status'] == 'aborted'
    [name] = os.listdir(tmp_path / 'json')
    with open(tmp_path / 'json' / name) as f:
        saved = json.load(f)
    assert saved['eval']['partial'] is True and saved['stopped_by_signal'] == 'SIGINT'


def test_ctrl_c_in_the_final_evaluation_stops_it_and_the_run_is_stopped(monkeypatch, capsys):
    SigintInEvalBatch(monkeypatch, at=0)
    result = helpers.tiny_run(
        model='trivial', batch_size=2, image_size=16, num_batches=2, num_warmup_batches=0,
        display_every=100, eval_during_training_every_n_steps=10, num_eval_batches=4)
    [r] = result['evals']
    assert (r['global_step'], r['num_batches'], r['partial']) == (2, 1, True)
    # A signal in the last step stops nothing; one that cut the final evaluation short does.
    assert result['stopped_by_signal'] == 'SIGINT'
    assert signals.exit_status(result) == 130
    assert ('Stopped by SIGINT after 1 of 4 batches of the evaluation at global step 2: the '
            'accuracy below is partial, over the 2 examples scored') in capsys.readouterr().out


def test_ctrl_c_in_the_evaluation_at_the_warm_ups_end_stops_before_the_timed_steps(
        tmp_path, monkeypatch):
    """A docs reader's trial: Ctrl-C in the evaluation at the warm-up's end stopped it, then the
    run trained a timed step and cut the next evaluation after one batch (two partial ones)."""
    SigintInEvalBatch(monkeypatch, at=1)
    result = helpers.tiny_bench(
        model='trivial', batch_size=2, image_size=16, num_batches=6, num_warmup_batches=2,
        display_every=100, train_dir=str(tmp_path), eval_during_training_every_n_steps=2,
        num_eval_batches=5).run()
    assert result['stopped_by_signal'] == 'SIGINT' and result['stopped_in_warmup']
    assert result['num_steps'] == 0 and result['images_per_sec'] is None
    assert [(r['global_step'], r['num_batches'], r['partial']) for r in result['evals']] == [
        (2, 2, True)]

