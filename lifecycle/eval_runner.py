"""Evaluation: top-1 and top-5 accuracy of a model's weights on the validation subset.

Two ways in, one evaluator:

  - `run_eval(plan, model, dataset)` (--eval): restores the checkpoint (--checkpoint_path,
    else the latest in --train_dir; none is a CheckpointError) and evaluates it once, printing
    the original's lines (`Successfully loaded model from ...`, every --display_every batches
    `N<TAB>X examples/sec` (`progress_line`), `Accuracy @ 1 = ... [N examples]`, the dashed
    `total images/sec` block, here with the figures that explain it: `eval_block`) and,
    between them, the global step it evaluates; with
    --eval_interval_secs it then waits and evaluates every new checkpoint until SIGINT (exit 130)
    or SIGTERM (exit 143), waiting for a first checkpoint if there is none yet. A signal stops
    an evaluation after its current batch (its accuracy then partial, and said so) and a wait
    at once (eval_stop.py). --graph_file
    gets the eval graph, written once it is built (before the first checkpoint is restored).
  - evaluations inside a training run (--eval_during_training_*): eval_during_training.py's
    EvalDuringTrainingHook, with this module's Evaluator (its progress lines too),
    `running_line` and `log_eval`.

The evaluator has its own graph (graph/eval_graph.py): the input pipeline's full-pass mode
(preprocessing.eval_pipeline_for: real data in a fixed order, no shuffling, eval
preprocessing: central crop, no randomness), the towers of training built with
phase_train=False inside the same variable-manager scopes, so the checkpoint names match (a
checkpoint written by any --variable_update and any number of devices evaluates on any number
of devices). What one evaluation scores is the run plan's `EvalPlan`
(run_plan.make_eval_plan): --num_eval_batches full batches, else --num_eval_epochs of the
subset in the original's whole number of full batches, else with --eval --num_batches or
--num_epochs (the original's order); without them
every record of the subset exactly once, whatever the batch size and the number of devices
(the last batch is padded; padding is not scored); synthetic data the run's --num_batches. The
subset is --data_subset with --eval, else validation. Per-device batch:
--eval_batch_size, else the training batch. Accuracy is hits / examples scored, both counted in
the graph.
"""

from __future__ import annotations

import os
import time

import numpy as np
import tensorflow as tf

from .. import cnn_util
from ..graph import eval_graph
from ..input_data import data_errors
from ..metrics import host_load
from ..runtime import dir_hold
from . import (
    checkpoints,
    eval_stop,
    figure_hooks,
    phase_runner,
    profiling,
    results_log,
    signals,
    skip_report,
    training_loop,
)
from . import summaries as summaries_lib

tf1 = tf.compat.v1
# The figure an evaluation's timed batches give, as its lines name it (the host load's
# warnings name it too): an --eval run's, the original's total line; those during training,
# their own line's. Never the words `total images/sec` (only the total line holds them).
EVAL_FIGURE = host_load.TOTAL_FIGURE
DURING_TRAINING_FIGURE = 'eval images/sec'
SET_UP = ('set-up before the first batch (session, restore, input warm-up)', 'set-up')


class Evaluator:
    """The eval graph of a run; each `evaluate` call opens a fresh session on it.

    Args:
      plan: the run's run_plan.RunPlan (devices, image size, dtypes, training batch).
      model: the run's CNNModel.
      dataset: the run's dataset (input_data.dataset_info.Dataset).
      config: the tf.compat.v1.ConfigProto of its sessions (the run's:
        BenchmarkCNN.session_config).
      figure: the name of the rate its lines print, which its host load's warning names
        (EVAL_FIGURE, or DURING_TRAINING_FIGURE).

    Attributes:
      eval_plan: the run_plan.EvalPlan (what one evaluation scores). batch_size: per device.
      global_batch: over the devices. num_batches: per evaluation. subset: 'train' or
      'validation'.
    """

    def __init__(self, plan, model, dataset, config, figure: str = EVAL_FIGURE):
        p = plan.params
        self.config = config
        self.plan = plan
        self.model = model
        self.dataset = dataset
        self.p = p
        self.eval_plan = plan.eval
        self.subset = plan.eval.subset
        self.batch_size = plan.eval.per_device_batch_size
        self.devices = list(plan.devices)
        self.global_batch = plan.eval.global_batch_size
        self.num_batches = plan.eval.num_batches
        self._loaders = None
        self.host_meter = host_load.Meter(plan.threads[0], figure=figure,
                                           whole_process=True)
        start = time.perf_counter()
        self._build()
        self.build_secs = time.perf_counter() - start

    def _build(self):
        built = eval_graph.build_eval_graph(self.plan, self.model, self.dataset)
        self.graph, self.pipeline, self.mgr = built.graph, built.pipeline, built.mgr
        self.counts, self.init_ops = built.counts, built.init_ops  # counts: int64 [3]
        self.post_init, self.savable = built.post_init, built.savable

    def _load_values(self, sess, values: dict) -> None:
        if self._loaders is None:
            with self.graph.as_default(), tf1.name_scope('load_values'):
                self._loaders = {}
                for name, var in self.savable.items():
                    feed = tf1.placeholder(var.dtype.base_dtype, var.shape)
                    self._loaders[name] = (feed, var.assign(feed))
        sess.run([op for _, op in self._loaders.values()],
                 {feed: values[name] for name, (feed, _) in self._loaders.items()})

    def _host_meter_restart(self, announce: bool) -> dict | None:
        """Starts the timed batches' host load; with `announce`, ends the set-up's (returned)
        and warns when the host was busy over it."""
        if not announce:
            self.host_meter.start()
            return None
        warm = self.host_meter.restart('the ' + SET_UP[1])
        for text in figure_hooks.warmup_lines(warm, SET_UP, EVAL_FIGURE):
            figure_hooks.warn_line(text)
        return warm

    def evaluate(self, *, checkpoint_path: str | None = None, values: dict | None = None,
                 announce: bool = False, should_stop=None) -> dict:
        """Evaluates a checkpoint, or in-memory values {checkpoint name: ndarray}; with
        `announce` (an --eval run), a line after the second batch says how long the others
        will take (`timed_batches`: the first sets up the session's kernels), and a busy host
        is said before the first batch, as a training run says it before its timed part
        (figure_hooks.warmup_lines: the host load over the set-up, kept in
        r['host_load']['warmup']). `should_stop`: None, or () -> bool, asked after each batch
        but the last: True stops the evaluation there (a signal: eval_stop.py,
        eval_during_training.py), with the accuracy of the batches run, `partial` True.

        Returns:
          {'top_1', 'top_5': fractions in [0, 1] of the examples scored, 'images_per_sec':
           examples scored per second (the first batch's set-up included, as the original's),
           'images_per_sec_without_first': the same without the first batch (None with one
           batch), 'synthetic': True on synthetic data (its random labels make the accuracy
           meaningless: `log_eval`'s note), 'num_examples': examples scored (counted in the graph;
           padding slots excluded), 'num_batches', 'global_step', 'checkpoint_path' (or None),
           'subset', 'elapsed_secs', 'batch_times': seconds per batch, 'host_load': what else
           used the CPUs over the timed batches (metrics/host_load.py measure),
           'skipped_records': records of the subset --skip_corrupt_records skipped (None
           without it), 'skipped_left_out': those of them in shards left out at start-up
           (not among the records the plan counted), 'passes': planned passes over the
           subset, 'num_batches': the batches run, 'planned_batches': those planned,
           'partial': True when `should_stop` stopped it before the last}.

        Raises:
          CheckpointError: the checkpoint does not fit the model.
          DataError: bad input records.
        """
        if announce:
            self.host_meter.start()  # the set-up's host load: is the host busy already?
        with tf1.Session(graph=self.graph, config=self.config) as sess:
            sess.run(self.init_ops)
            if checkpoint_path is not None:
                step = checkpoints.restore(sess, self.graph, self.mgr, checkpoint_path,
                                           self.p.model)
                if announce:  # the original's line, then the step it holds
                    cnn_util.log_fn('Successfully loaded model from %s.' % checkpoint_path)
                    cnn_util.log_fn(running_line(step))
            else:
                self._load_values(sess, values)
                step = int(values['global_step'])
            if self.post_init:
                sess.run(self.post_init)
            with data_errors.data_errors(files=self.pipeline.record_files,
                                         skipped=self.pipeline.skipped):
                if self.pipeline.warmup_ops:
                    sess.run(self.pipeline.warmup_ops)
                # Both fetch lists (with the puts, and without them for the last
                # `staging_depth` batches, which read what is already staged) are made callables
                # here: their executors are built before the timer, not inside the timed loop.
                run_with_puts = sess.make_callable([self.counts] + list(self.pipeline.step_ops))
                run_last = sess.make_callable([self.counts])
                warm = self._host_meter_restart(announce)

                first = []  # the first batch's examples scored (its set-up: set_up_note)

                def run_batch(index):
                    puts = self.pipeline.step_ops_for(index, self.num_batches)
                    counts = (run_with_puts() if puts else run_last())[0]
                    if index == 0:
                        first.append(int(counts[2]))
                    return counts
                totals, batch_times, elapsed = timed_batches(
                    run_batch, self.num_batches, log=cnn_util.log_fn if announce else None,
                    should_stop=should_stop, display_every=self.p.display_every,
                    progress=cnn_util.log_fn)
                load = self.host_meter.stop()
                if load is not None and announce:
                    load['warmup'] = figure_hooks.warmup_subset(warm)
        hits_1, hits_5, examples = (int(x) for x in totals)
        skipped = getattr(self.pipeline, 'skipped', None)
        return {
            'skipped_records': skipped.records if skipped is not None else None,
            'skipped_left_out': skipped.left_out_records if skipped is not None else None,
            'passes': self.eval_plan.epochs,
            'top_1': hits_1 / examples,
            'top_5': hits_5 / examples,
            'images_per_sec': examples / elapsed if elapsed > 0 else 0.0,
            'images_per_sec_without_first': _without_first(examples, first, batch_times,
                                                           elapsed),
            'synthetic': bool(self.dataset.synthetic),
            'num_examples': examples, 'num_batches': len(batch_times),
            'planned_batches': self.num_batches,
            'partial': len(batch_times) < self.num_batches, 'global_step': step,
            'checkpoint_path': checkpoint_path, 'subset': self.subset, 'elapsed_secs': elapsed,
            'batch_times': batch_times, 'host_load': load,
        }


def timed_batches(run_batch, num_batches: int, *, log=None, clock=time.perf_counter,
                  should_stop=None, display_every: int = 0, progress=None) -> tuple:
    """Runs and times an evaluation's batches; with `log`, the line after its second batch
    says how long the others will take (`rest_line`); with `progress`, the original's line
    every `display_every` batches (`progress_line`: `10\t512.3 examples/sec`).

    Args:
      run_batch: index -> that batch's counts (int64 [3]: top-1 hits, top-5 hits, examples).
      num_batches: batches to run.
      log: where the line goes (None: no line: an evaluation during training).
      clock: seconds (time.perf_counter; a test's).
      should_stop: None, or () -> bool, asked after each batch but the last: True ends the
        batches there (a signal: eval_stop.py, eval_during_training.py).
      display_every: --display_every: a progress line after every this many batches (0:
        none).
      progress: where the progress lines go (None: none).

    Returns:
      (the counts summed: int64 [3], each batch's seconds (one per batch run), seconds of all
      the batches run).
    """
    totals = np.zeros(3, np.int64)
    batch_times = []
    start = clock()
    window_start, window_examples = start, 0  # since the last progress line
    for index in range(num_batches):
        batch_start = clock()
        counts = np.asarray(run_batch(index), dtype=np.int64)
        totals += counts
        batch_end = clock()
        batch_times.append(batch_end - batch_start)
        window_examples += int(counts[2])
        if progress is not None and display_every and (index + 1) % display_every == 0:
            progress(progress_line(index + 1, window_examples, batch_end - window_start))
            window_start, window_examples = clock(), 0  # the line's own time left out
        if should_stop is not None and index + 1 < num_batches and should_stop():
            break
        if log is not None and index == 1 and num_batches > 2:
            log(rest_line(num_batches - 1, batch_times[1], batch_times[0]))
    return totals, batch_times, clock() - start


def progress_line(batches: int, examples: int, seconds: float) -> str:
    """The original's progress line of an evaluation, every --display_every batches:
    '20\t512.3 examples/sec', the batches run so far, then the examples scored in the batches
    since the previous such line (padding slots not counted; the original counted whole
    batches) per second of those batches (the first line's seconds include the first batch's
    set-up, as the original's did)."""
    return '%i\t%.1f examples/sec' % (batches, examples / seconds if seconds > 0 else 0.0)


def rest_line(count: int, batch_secs: float, first_secs: float) -> str:
    """'Timed part: 15 batches after the first, about 1.8 s (120 ms the second batch; the first
    took 2.18 s, set-up included)': printed after the second batch, the batches after the
    first (`count`, the second among them: those the latency line's percentiles cover,
    metrics/latency.py) times the second one's `batch_secs`. The first batch sets up what the
    session runs (kernels, their buffers, the input's threads), often many times a batch's
    time, so the estimate leaves it out, as a training run without warm-up leaves its first
    step out, in the same words (training_loop.rest_line)."""
    return training_loop.rest_line(count, batch_secs, 'batch', 'batches',
                                   set_up_secs=first_secs)


def _without_first(examples: int, first: list, batch_times: list, elapsed: float
                   ) -> float | None:
    """Examples per second of the batches after the first (`first`: [its examples]), whose
    set-up the total line's figure keeps; None with fewer than two batches."""
    rest = elapsed - batch_times[0] if batch_times else 0.0
    if len(batch_times) < 2 or not first or rest <= 0:
        return None
    return (examples - first[0]) / rest


def set_up_note(r: dict) -> str | None:
    """Before an --eval evaluation's accuracy line, where its first batch took over twice the
    others' median (`r`: Evaluator.evaluate's dict): 'note: the first batch took 127 ms, 36x
    the others' median: its set-up (session, kernels, input) is in the total line's
    images/sec, as in the original (387.35 without that batch)', as a training run without
    warm-up says of its first step (training_loop); else None."""
    times, without = r['batch_times'], r.get('images_per_sec_without_first')
    ratio = training_loop.set_up_ratio(times)
    if without is None or ratio is None:
        return None
    return ('note: the first batch took %s, %.0fx the others\' median: its set-up (session, '
            'kernels, input) is in the total line\'s images/sec, as in the original (%.2f '
            'without that batch)' % (training_loop.format_step_secs(times[0]), ratio, without))


def running_line(global_step: int, final: bool = False) -> str:
    """The original's line before an evaluation of the weights of `global_step`:
    'Running evaluation at global_step 4' ('Running final evaluation ...' after the last
    timed step of a training run)."""
    return 'Running %sevaluation at global_step %d' % ('final ' if final else '', global_step)


#: After the accuracy line of a run's first evaluation on synthetic data (`log_eval`).
SYNTHETIC_NOTE = ('note: synthetic data has random labels: this accuracy means nothing (the '
                  'results database stores none); give --data_dir for a real one')


def log_eval(r: dict, during_training: bool = True, synthetic_note: bool = True) -> None:
    """Prints the accuracy line of one evaluation, the original's `Accuracy @ 1 = 0.5000
    Accuracy @ 5 = 1.0000 [16 examples]` (its global step is the `running_line` before it),
    on synthetic data (r['synthetic']) with `synthetic_note` (a run's first evaluation)
    SYNTHETIC_NOTE, the skipped records with --skip_corrupt_records, and during training
    `eval images/sec: X` (an --eval run's rate is its total block's `total images/sec`:
    `eval_block`)."""
    cnn_util.log_fn('Accuracy @ 1 = %.4f Accuracy @ 5 = %.4f [%d examples]'
                    % (r['top_1'], r['top_5'], r['num_examples']))
    if r.get('synthetic') and synthetic_note:
        cnn_util.log_fn(SYNTHETIC_NOTE)
    line = skip_report.skipped_line(r)
    if line:
        cnn_util.log_fn(line)
    if during_training:
        cnn_util.log_fn('eval images/sec: %.2f' % r['images_per_sec'])


def _missing_checkpoint_error(p) -> checkpoints.CheckpointError:
    """Why --eval has nothing to evaluate: no --train_dir, an empty one, or one a training run
    holds (runtime/dir_hold.py) that has not saved yet."""
    if not p.train_dir:
        return checkpoints.CheckpointError('--eval needs a checkpoint: give --train_dir (a '
                                           'training run\'s directory) or --checkpoint_path')
    holder = dir_hold.live_holder(p.train_dir)
    if holder:
        return checkpoints.CheckpointError(
            'no checkpoint to evaluate in --train_dir %s yet: a training run holds it (%s; '
            'hold file %s) and has not written its first checkpoint; wait for it '
            '(--eval_interval_secs=SECS evaluates each checkpoint as it is written), or give '
            '--checkpoint_path a checkpoint elsewhere'
            % (p.train_dir, dir_hold.describe_holder(holder),
               os.path.join(p.train_dir, dir_hold.HOLD_FILE)))
    return checkpoints.CheckpointError(
        'no checkpoint to evaluate in --train_dir %s; train first with --train_dir=%s (it '
        'saves at the end of the run), or give --checkpoint_path' % (p.train_dir, p.train_dir))


def _wait(seconds: float, catcher) -> None:
    deadline = time.monotonic() + seconds
    while catcher.received is None and time.monotonic() < deadline:
        time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))


def _waiting_line(p, last: str | None) -> str:
    """What an --eval_interval_secs loop waits for, and how often it looks (logged once per
    wait)."""
    where = p.checkpoint_path or p.train_dir
    return ('Waiting for %s in %s: looking every %d s (--eval_interval_secs); SIGINT (Ctrl-C) '
            'stops' % (_awaited(last), where, p.eval_interval_secs))


def _awaited(last: str | None) -> str:
    """'a checkpoint newer than model.ckpt-601', or 'a first checkpoint'."""
    return ('a checkpoint newer than %s' % os.path.basename(last) if last
            else 'a first checkpoint')


def run_eval(plan, model, dataset, config, hooks=()) -> dict:
    """--eval: evaluates the checkpoint (once, or in a loop with --eval_interval_secs), each
    evaluation with its accuracy line and its dashed total block (figure_hooks.eval_block),
    then runs the phases after a run for `hooks` (wiring.eval_hooks: the results JSON and the
    results database), as a training run's end does. `config`: the sessions'
    tf.compat.v1.ConfigProto (BenchmarkCNN.session_config).

    Returns:
      The run's result dict: the common keys (see results_log.common_fields), 'eval' (the last
      evaluation, see Evaluator.evaluate), 'evals' (all of them), 'restored_step',
      'checkpoint_path', images_per_sec / num_steps / step_times / host_load of the last
      evaluation and its figures ('utilisation', 'input', 'memory', 'latency_ms':
      utilisation.eval_figures; absent when nothing was evaluated), and 'graph_file' with
      --graph_file.

    Raises:
      CheckpointError: no checkpoint (without --eval_interval_secs), or one that does not fit.
      signals.Terminated: SIGTERM stopped the loop (after the results were written).
    """
    p = plan.params
    if not p.eval_interval_secs:
        path = checkpoints.find_checkpoint(p)
        if path is None:
            raise _missing_checkpoint_error(p)
    cnn_util.log_fn('Generating evaluation model')
    evaluator = Evaluator(plan, model, dataset, config)  # the header said what it scores
    if p.graph_file:  # the graph an evaluation runs, before a checkpoint is restored into it
        profiling.write_graph(evaluator.graph, p.graph_file)
    summaries = summaries_lib.EvalSummaryWriter(p)
    last, waiting, figures, waited_for = None, False, {}, None
    with signals.SignalCatcher('the current evaluation', saves=False) as catcher:
        stop = eval_stop.EvalStop(catcher, single=not p.eval_interval_secs)
        evals = stop.evals
        while True:
            r = checkpoints.evaluate_newest(p, last, lambda path: _evaluate(evaluator, stop,
                                                                            path))
            if r is not None:
                # The total line keeps the first batch, as the original's (set_up_note); a
                # partial evaluation's line says 'the accuracy below' (right below it).
                for line in (set_up_note(r), stop.partial_line(r)):
                    if line:
                        cnn_util.log_fn(line)
                log_eval(r, during_training=False, synthetic_note=not evals)
                figures = figure_hooks.eval_block(plan, r)
                summaries.write(r)
                evals.append(r)
                last, waiting = r['checkpoint_path'], False
            if not p.eval_interval_secs or catcher.received is not None:
                break
            if not waiting:
                cnn_util.log_fn(_waiting_line(p, last))
                waiting = True
            _wait(p.eval_interval_secs, catcher)
            if catcher.received is not None:
                waited_for = _awaited(last)
                break
    summaries.close(announce='')
    stop.log_stop(waited_for)
    late = bool(evals) and stop.late(evals[-1])
    result = _eval_result(plan, evaluator, evals, None if late else catcher.name)
    result['summary_dir'] = summaries.folder if summaries.written else None
    result.update(figures)  # the last evaluation's (none: no utilisation keys)
    if p.graph_file:
        result['graph_file'] = p.graph_file
    phase_runner.PhaseRunner(hooks, plan).finish(result)
    if not late:
        catcher.exit_if_terminated()
    return result


def _evaluate(evaluator, stop, path: str) -> dict:
    """An --eval run's evaluation of checkpoint `path`, which a signal stops after its current
    batch (eval_stop.EvalStop `stop` knows what is being evaluated)."""
    stop.evaluating = path
    try:
        return evaluator.evaluate(checkpoint_path=path, announce=True,
                                  should_stop=stop.should_stop)
    finally:
        stop.evaluating = None


def _eval_result(plan, evaluator, evals, signal_name) -> dict:
    last = evals[-1] if evals else None
    result = results_log.common_fields(plan)
    result.update({
        'eval': last, 'evals': evals,
        'restored_step': last['global_step'] if last else None,
        'global_step': last['global_step'] if last else None,
        'checkpoint_path': last['checkpoint_path'] if last else None,
        'images_per_sec': last['images_per_sec'] if last else 0.0,
        'num_steps': last['num_batches'] if last else 0,
        'step_times': last['batch_times'] if last else [],
        'elapsed_secs': last['elapsed_secs'] if last else 0.0,
        'losses': [], 'warmup_losses': [], 'steps': [], 'stopped_early': False,
        'graph_build_secs': evaluator.build_secs,
        'global_batch_size': evaluator.global_batch,
        'per_device_batch_size': evaluator.batch_size,
        'stopped_by_signal': signal_name,
        'skipped_records': last['skipped_records'] if last else None,
        'host_load': last['host_load'] if last else None,
    })
    return results_log.complete_keys(result)  # the training keys an evaluation has not: None
