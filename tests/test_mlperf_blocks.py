"""lifecycle/mlperf_log.py's blocks and lifecycle/eval_during_training.py's warning of
evaluations the warm-up passes over: a new user's --ml_perf trials (a Ctrl-C in the warm-up
logged a block of 0 samples; block_stop's first_epoch_num was the block's end; evaluations
due in a long warm-up were skipped without a word)."""

from __future__ import annotations

import json
import os
import signal
import threading
import types

import pytest

from tf_cnn_benchmarks.lifecycle import eval_during_training, mlperf_log, run_hooks

import helpers


def _events(text):
    return [json.loads(line[len(':::MLLOG '):]) for line in text.splitlines()
            if line.startswith(':::MLLOG ')]


class SigintBeforeCall(run_hooks.RunHook):
    """Sends this process SIGINT before step `call` (warm-up steps count from 1): the run
    stops after it."""

    def __init__(self, call):
        self.call = call

    def wants_trace(self, call):
        if call == self.call:
            os.kill(os.getpid(), signal.SIGINT)
        return False


def test_a_sigint_in_the_warm_up_closes_the_block_with_the_warm_up_samples(capsys):
    pytest.importorskip('mlperf_logging')
    result = helpers.tiny_bench(hooks=[SigintBeforeCall(3)], ml_perf=True, batch_size=2,
                                num_warmup_batches=6, num_batches=4).run()
    assert result['stopped_in_warmup'] and result['stopped_by_signal'] == 'SIGINT'
    events = _events(capsys.readouterr().out)
    keys = [e['key'] for e in events]
    assert keys[keys.index('run_start') + 1:] == ['block_start', 'block_stop', 'run_stop']
    start, stop = events[-3]['metadata'], events[-2]['metadata']
    assert (start['first_epoch_num'], start['samples_count']) == (0.0, 0)
    # 3 warm-up steps of 2 images trained (it logged 0 samples before).
    assert (stop['first_epoch_num'], stop['samples_count']) == (0.0, 6)
    assert events[-1]['metadata']['status'] == 'aborted'


class _Logger:
    def __init__(self):
        self.lines = []

    def start(self, key, metadata=None, time_ms=None):
        self.lines.append(('start', key, metadata, time_ms))

    def end(self, key, metadata=None, time_ms=None):
        self.lines.append(('end', key, metadata, time_ms))

    def event(self, key, value=None, metadata=None, time_ms=None):
        self.lines.append(('event', key, metadata, time_ms))


def _hook(global_step_now):
    """An MlPerfHook with a recording logger, 10 steps an epoch, 2 images a step, whose
    session's global step is `global_step_now` (a list: read when asked)."""
    _, constants = mlperf_log.load_mllog()
    hook = mlperf_log.MlPerfHook.__new__(mlperf_log.MlPerfHook)
    hook.c, hook.logger, hook._stopped, hook._block = constants, _Logger(), False, None
    hook._stop_lock = threading.Lock()
    hook.plan = types.SimpleNamespace(steps_per_epoch=10.0, global_batch_size=2, training=True,
                                      model='trivial', params=types.SimpleNamespace(
                                          stop_at_top_1_accuracy=None))
    hook._ctx = types.SimpleNamespace(sess=types.SimpleNamespace(
        run=lambda fetch: global_step_now[0]), info=types.SimpleNamespace(global_step='gs'))
    return hook


def test_a_block_that_trained_nothing_logs_no_lines_and_block_stop_repeats_its_first_epoch():
    pytest.importorskip('mlperf_logging')
    now = [0]
    hook = _hook(now)
    hook.global_step = 0
    hook._start_block()
    hook.global_step = now[0] = 15
    hook.eval_started(15)
    hook.eval_finished(15, {'top_1': 0.5}, more_steps=True)
    hook.after_timed()  # a signal right after the evaluation: the new block trained nothing
    hook.report({'evals': [{'top_1': 0.5}], 'stopped_by_signal': 'SIGINT'})
    lines = [(kind, key, meta) for kind, key, meta, _ in hook.logger.lines]
    assert [key for _, key, _ in lines] == ['block_start', 'block_stop', 'eval_start',
                                            'eval_stop', 'eval_accuracy', 'run_stop']
    # MLCommons: block_stop's first_epoch_num is block_start's (the block's first epoch).
    assert lines[0][2] == {'first_epoch_num': 0.0, 'samples_count': 0}
    assert lines[1][2] == {'first_epoch_num': 0.0, 'samples_count': 30}
    # block_start is logged as the block closes, with the time it started.
    assert isinstance(hook.logger.lines[0][3], int)


def _eval_hook(warmup, **flags):
    hook = eval_during_training.EvalDuringTrainingHook.__new__(
        eval_during_training.EvalDuringTrainingHook)
    p = dict(eval_during_training_every_n_steps=None, eval_during_training_every_n_epochs=None,
             eval_during_training_at_specified_steps=[],
             eval_during_training_at_specified_epochs=[], ml_perf=False,
             ml_perf_compliance_logging=False)
    p.update(flags)
    hook.p = types.SimpleNamespace(**p)
    hook.plan = types.SimpleNamespace(num_warmup_batches=warmup, training=True,
                                      asynchronous=False, steps_per_epoch=6.0)
    hook.at_steps = {int(s) for s in hook.p.eval_during_training_at_specified_steps}
    hook.every_steps = hook.p.eval_during_training_every_n_steps or 0
    epochs = hook.p.eval_during_training_every_n_epochs or 0
    hook.every_epoch_steps = epochs * 6.0
    return hook


def test_evaluations_due_in_the_warm_up_get_one_warning_naming_the_flags():
    # 6 steps an epoch; a warm-up of 20 steps trains to epoch 3.33, past epochs 1, 2 and 3.
    line = _eval_hook(20, eval_during_training_every_n_epochs=1.0).warmup_warning(0)
    assert line == (
        'the 20 warm-up steps (--num_warmup_batches=20) train to epoch 3.33, past 3 '
        'evaluations --eval_during_training_every_n_epochs=1 schedules (the first at global '
        "step 6, epoch 1.00): 2 of them are not run (one evaluation at the warm-up's end, "
        'global step 20, stands for them); give --num_warmup_batches=6 or fewer to evaluate on '
        'schedule')
    assert _eval_hook(5, eval_during_training_every_n_epochs=1.0).warmup_warning(0) is None
    # One evaluation due in the warm-up is only late (at the warm-up's end): no warning.
    assert _eval_hook(11, eval_during_training_every_n_epochs=1.0).warmup_warning(0) is None
    # Two due, the second at the warm-up's last step: that one is on schedule, one is not run.
    line = _eval_hook(12, eval_during_training_every_n_epochs=1.0).warmup_warning(0)
    assert ': 1 of them is not run (one evaluation at the warm-up\'s end, global step 12, ' in line
    # A resumed run counts from its start; the listed steps are named as given.
    line = _eval_hook(4, eval_during_training_at_specified_steps=['12', '13', '30']
                      ).warmup_warning(10)
    assert 'past 2 evaluations --eval_during_training_at_specified_steps=12,13,30 ' in line
    assert line.endswith('give --num_warmup_batches=2 or fewer to evaluate on schedule')
    asynchronous = _eval_hook(20, eval_during_training_every_n_steps=2)
    asynchronous.plan.asynchronous = True
    assert asynchronous.warmup_warning(0) is None


def test_with_ml_perf_one_evaluation_the_warm_up_moves_is_one_warning():
    """MLPerf's results read each evaluation's epoch_num: one moved to the warm-up's end is
    logged at the wrong epoch, so --ml_perf warns of it; one due at the warm-up's last step
    runs there, on schedule (a new user's warm-up of one whole epoch logged epoch 1.2)."""
    line = _eval_hook(8, eval_during_training_every_n_epochs=1.0, ml_perf=True
                      ).warmup_warning(0)
    assert line == (
        '--ml_perf: the evaluation --eval_during_training_every_n_epochs=1 schedules at global '
        'step 6 (epoch 1.00) falls inside the 8 warm-up steps (--num_warmup_batches=8): it runs '
        'at their end, global step 8, and is logged at epoch_num 1.333333; give '
        '--num_warmup_batches=6 or fewer to evaluate on schedule')
    assert _eval_hook(6, eval_during_training_every_n_epochs=1.0, ml_perf=True
                      ).warmup_warning(0) is None


@pytest.mark.cli
def test_the_command_warns_once_before_the_run_of_evaluations_inside_its_warm_up():
    proc = helpers.run_command(
        '--model=trivial', '--batch_size=2', '--image_size=16', '--num_batches=2',
        '--num_warmup_batches=5', '--eval_during_training_every_n_steps=2',
        '--num_eval_batches=1', '--device=cpu', '--noresults_db')
    assert proc.returncode == 0, proc.stderr
    [line] = [w for w in proc.stderr.splitlines() if 'warm-up steps' in w]
    assert line.startswith('warning: the 5 warm-up steps (--num_warmup_batches=5) train to '
                           'epoch 0.00, past 2 evaluations --eval_during_training_every_n_steps'
                           '=2 schedules (the first at global step 2, epoch 0.00)')
    out = proc.stdout.splitlines()
    assert out.index('Running warm up') > 0
    # One at the warm-up's end (global step 5) for those due at 2 and 4, then 6 on schedule,
    # then the original's final evaluation after the last timed step.
    assert [line for line in out if line.startswith('Running ')] == [
        'Running warm up', 'Running evaluation at global_step 5',
        'Running evaluation at global_step 6', 'Running final evaluation at global_step 7']
    assert len([line for line in out if line.startswith('Accuracy @ 1')]) == 3
    assert out.index('Done warm up') < [i for i, line in enumerate(out)
                                        if line.startswith('Accuracy @ 1')][0] < out.index(
        next(line for line in out if line.startswith('1\t')))


@pytest.mark.cli
def test_a_warm_up_of_one_whole_epoch_evaluates_on_the_epoch_boundaries(tmp_path):
    """A new user's trial: 10 images, batch 2 (5 steps an epoch), the default 5 warm-up steps
    on the CPU, --num_epochs=2 --eval_during_training_every_n_epochs=1: the first evaluation,
    due at the last warm-up step, ran after the first timed step and was logged at epoch_num
    1.2. It now runs at the warm-up's end: epochs 1.0 and 2.0, and no warning."""
    pytest.importorskip('mlperf_logging')
    from input_helpers import solid_shards
    solid_shards(str(tmp_path), 'train', num_shards=2, per_shard=5)
    solid_shards(str(tmp_path), 'validation', num_shards=1, per_shard=2)
    proc = helpers.run_command(
        '--model=trivial', '--data_dir=%s' % tmp_path, '--batch_size=2', '--image_size=16',
        '--num_epochs=2', '--ml_perf', '--eval_during_training_every_n_epochs=1',
        '--device=cpu', '--noresults_db')
    assert proc.returncode == 0, proc.stderr
    assert 'Num epochs:  1.00 timed; 2.00 with the 5 warm-up steps, which train too ' \
           '(--ml_perf: --num_epochs counts them)' in proc.stdout.splitlines()
    events = _events(proc.stdout)
    assert [(e['metadata']['epoch_num'], e['metadata']['samples_count']) for e in events
            if e['key'] == 'eval_accuracy'] == [(1.0, 10), (2.0, 20)]
    blocks = [(e['key'], e['metadata']['first_epoch_num'], e['metadata']['samples_count'])
              for e in events if e['key'] in ('block_start', 'block_stop')]
    assert blocks == [('block_start', 0.0, 0), ('block_stop', 0.0, 10),
                      ('block_start', 1.0, 10), ('block_stop', 1.0, 20)]
    assert not [line for line in proc.stderr.splitlines() if 'warm-up' in line]


@pytest.mark.parametrize('steps_flags', [
    dict(eval_during_training_every_n_epochs=1.0),
    dict(eval_during_training_every_n_steps=4)])
def test_the_originals_flag_gives_the_plan_epochs_and_evaluations_of_ml_perf(steps_flags):
    """--ml_perf_compliance_logging is --ml_perf here: a new user's trial of it trained 16
    steps (not 11: the warm-up was not counted in --num_epochs), evaluated at other epochs and
    lost the warm-up warning, because three readers tested p.ml_perf alone."""
    from tf_cnn_benchmarks import run_header

    def schedule(**flag):
        bench = helpers.tiny_bench(num_epochs=2, num_batches=None, batch_size=64,
                                   num_warmup_batches=5, **steps_flags, **flag)
        plan = bench.plan
        hook = eval_during_training.EvalDuringTrainingHook(plan, None, None)
        due = [g for g in range(1, plan.num_batches + plan.num_warmup_batches + 1)
               if hook.due(g)]
        header = [line for line in run_header.batch_lines(plan, bench.dataset)
                  if line.startswith('Num ')]
        return plan.num_batches, plan.epochs, due, header, hook.warmup_warning(0)

    ml_perf = schedule(ml_perf=True)
    assert schedule(ml_perf_compliance_logging=True) == ml_perf
    # Both count the 5 warm-up steps in --num_epochs (a run without either flag does not).
    assert ml_perf[0] == schedule()[0] - 5
    assert ml_perf[3][-1].endswith('(--ml_perf: --num_epochs counts them)')


def test_only_the_one_predicate_reads_the_ml_perf_flag():
    """Every reader asks original_flags.ml_perf_wanted, so the alias cannot drift again."""
    import pathlib
    import re
    root = pathlib.Path(mlperf_log.__file__).resolve().parents[1]
    readers = [str(path.relative_to(root)) for path in root.rglob('*.py')
               if 'tests' not in path.parts and re.search(
                   r'\bp\.ml_perf\b(?!_)', path.read_text(encoding='utf-8'))]
    assert readers == ['params/original_flags.py']


@pytest.mark.cli
def test_a_forward_only_run_logs_no_training_samples_and_no_advice_it_would_refuse():
    """A new user's trial: --forward_only --ml_perf advised --eval_during_training_*, which
    then had no effect with --forward_only, and logged a block of 16 images "trained"."""
    pytest.importorskip('mlperf_logging')
    proc = helpers.run_command(
        '--model=resnet50', '--batch_size=2', '--image_size=32', '--num_batches=2',
        '--num_warmup_batches=1', '--forward_only', '--ml_perf', '--device=cpu',
        '--noresults_db')
    assert proc.returncode == 0, proc.stderr
    [line] = [w for w in proc.stderr.splitlines() if 'will refuse' in w]
    assert line == (
        "warning: --ml_perf: MLCommons' compliance checker (training, ruleset 4.0.0) will "
        'refuse this log: it has no evaluations, and a --forward_only run cannot have them (it '
        'trains nothing, so --eval_during_training_* has no effect): an accepted MLPerf log '
        'needs a training run (without --forward_only) with '
        '--eval_during_training_every_n_epochs=N')
    keys = [e['key'] for e in _events(proc.stdout)]
    assert 'block_start' not in keys and 'block_stop' not in keys
    assert keys[-2:] == ['run_start', 'run_stop'] and keys.count('train_samples') == 1


def test_opt_name_is_mlperfs_name_and_the_closed_division_warns_of_others(capsys):
    """A new user's trial logged opt_name 'momentum' / 'rmsprop', which are no MLPerf names;
    the closed division's checker crashed on them (FileNotFoundError for
    closed_resnet_momentum.yaml)."""
    pytest.importorskip('mlperf_logging')
    helpers.tiny_run(ml_perf=True, optimizer='momentum', momentum=0.8, num_batches=1)
    events = {e['key']: e['value'] for e in _events(capsys.readouterr().out)}
    assert events['opt_name'] == 'sgd' and events['sgd_opt_momentum'] == 0.8
    assert mlperf_log.OPT_NAMES['adam'] == 'adam' and 'rmsprop' not in mlperf_log.OPT_NAMES
    closed = mlperf_log.checker_gaps('resnet50', True, 'closed', optimizer='rmsprop')
    assert closed[-1] == (
        '--optimizer=rmsprop logs opt_name rmsprop, and the closed division allows sgd or lars '
        '(the checker stops with a FileNotFoundError for it): use --optimizer=momentum')
    assert len(mlperf_log.checker_gaps('resnet50', True, 'closed', optimizer='momentum')) == 1
    assert mlperf_log.checker_gaps('resnet50', True, 'open', optimizer='rmsprop') == []


def test_a_log_the_checker_accepts_but_mlperf_would_not_is_one_warning(capsys):
    """Synthetic data logged ImageNet's train_samples and passed the checker without a word;
    so did a run_stop success at a target below MLPerf's."""
    pytest.importorskip('mlperf_logging')
    assert mlperf_log.not_mlperf_results(False, None, True) == []
    assert mlperf_log.not_mlperf_results(False, 0.8, True) == []
    assert mlperf_log.not_mlperf_results(True, 0.1, True) == [
        "it trains on synthetic data (no --data_dir), yet logs ImageNet's train_samples; give "
        '--data_dir=<ImageNet TFRecords>',
        "--stop_at_top_1_accuracy=0.1 is below MLPerf ResNet-50's target 0.759, and run_stop "
        'says success at it']
    helpers.tiny_run(ml_perf=True, num_batches=1)  # synthetic data
    [line] = [w for w in capsys.readouterr().err.splitlines() if 'would not' in w]
    assert line == (
        "warning: --ml_perf: MLPerf would not take this log as a result, even where MLCommons' "
        "compliance checker accepts it: it trains on synthetic data (no --data_dir), yet logs "
        "ImageNet's train_samples; give --data_dir=<ImageNet TFRecords>")
    # A last user's trial: a forward-only run was told it 'trains on synthetic data' one line
    # after the checker's line said it trains nothing.
    helpers.tiny_run(ml_perf=True, num_batches=1, forward_only=True)
    assert not [w for w in capsys.readouterr().err.splitlines() if 'would not' in w]
