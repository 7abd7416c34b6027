"""The timed part of a training or forward-only run on a built graph: the step, the loop with
the hooks (training_loop.run_loop), the draining of the staging areas, and the run's result dict.

    step = Step(sess, info, plan)            # () -> (loss or None, *extra values)
    loop = timed_loop(sess, info, plan, hooks)
    result = loop_result(plan, loop, build_secs, restored_step)
"""

from __future__ import annotations

import tensorflow as tf

from ..graph import learning_rate, precision
from ..models import model_catalog
from ..params import original_flags
from ..runtime import traced_session
from . import results_log, training_loop


class Step:
    """One step of a built graph: `step()` -> (loss, *extra values: top-1 and top-5 with
    --print_training_accuracy, and always in a forward-only step, whose loss is its forward
    pass's); `traced()` -> (the same, its RunMetadata) with a full trace; `learning_rate()` and
    `loss_parts()` for the NaN message.

    Every step also stages the next input batch (the pipeline's puts): all steps, the last
    ones included, run the same fetches, so TensorFlow prepares one executor for them
    during warm-up. (A different fetch list for the last steps costs a new executor, with
    Grappler and oneDNN primitive set-up, inside the timed loop: a large share of a short
    run's timed part; docs/performance-notes.md, "Measurements once in the code".)
    `drain_pipeline` empties the staging areas afterwards.

    Args:
      sess: a session of `info.graph`, initialised.
      info: the graph.graph_info.GraphInfo.
      plan: the run's run_plan.RunPlan (--print_training_accuracy adds top-1, top-5; a
        forward-only step always has them, as the original's: `loop_spec`'s columns).
    """

    def __init__(self, sess, info, plan):
        fetches = [info.train_op, info.loss]
        if plan.params.print_training_accuracy or not plan.training:
            fetches += [info.top_1, info.top_5]
        # With weight decay, the cross entropy and the decay term of each step (a scalar pair
        # the loss is made of: no extra computation), kept for the NaN message.
        self._parts = (plan.training and bool(plan.params.weight_decay)
                       and info.loss_parts is not None)
        self._count = len(fetches)
        self._run = sess.make_callable(
            fetches + ([info.loss_parts] if self._parts else []) + list(info.pipeline.step_ops),
            accept_options=True)
        self._sess, self._info = sess, info
        self._recent_parts = []

    def _values(self, out) -> tuple:
        if self._parts:
            self._recent_parts = (self._recent_parts + [tuple(float(v) for v in
                                                              out[self._count])])[-2:]
        out = out[:self._count]
        return (float(out[1]),) + tuple(out[2:])

    def loss_parts(self) -> list[tuple[float, float]]:
        """(cross entropy, weight-decay term) of the last two steps run, oldest first; empty
        without weight decay. Towers' means, like the loss."""
        return list(self._recent_parts)

    def __call__(self) -> tuple:
        return self._values(self._run())

    def traced(self, partition_graphs: bool = False) -> tuple:
        """((loss or None, *extra values), RunMetadata) of one step run with a full trace
        (its `step_stats`; its `partition_graphs` too when `partition_graphs`)."""
        metadata = tf.compat.v1.RunMetadata()
        out = self._run(options=traced_session.trace_options(partition_graphs=partition_graphs),
                        run_metadata=metadata)
        return self._values(out), metadata

    def learning_rate(self) -> float:
        return float(self._sess.run(self._info.learning_rate))


def drain_pipeline(sess, info) -> None:
    """Empties the staging areas (the batches staged by the last steps), so that a run that
    completes leaves nothing staged."""
    if info.pipeline.drain_ops:
        sess.run(info.pipeline.drain_ops)


def rate_advice(p) -> str:
    """The NaN message's advice on the learning rate, naming the flag the rate came from
    (learning_rate.rate_flag): 'Lower the rates of --piecewise_learning_rate_schedule',
    'Lower --resnet_base_lr', ...; 'Lower --init_learning_rate' for the model's default rate
    (the flag that replaces it)."""
    flag = learning_rate.rate_flag(p)
    if flag == '--piecewise_learning_rate_schedule':
        return 'Lower the rates of %s' % flag
    return 'Lower %s' % (flag or '--init_learning_rate')


def default_rate(plan) -> float:
    """The model's default learning rate at the run's batch (the first rate of
    CNNModel.default_schedule): its catalogue rate (models/model_catalog.py), scaled linearly
    with the images a global step applies for the ImageNet ResNets only (their base rate is
    per 256 images), as the original's; 0.0 for a model not in the catalogue."""
    row = model_catalog.row(plan.model, plan.params.data_name or plan.dataset)
    if row is None or not plan.images_per_global_step:
        return 0.0
    if row.dataset == 'imagenet' and original_flags.IMAGENET_RESNET.match(row.name):
        return row.learning_rate * plan.images_per_global_step / row.batch_size
    return row.learning_rate


def _every(count, unit: str) -> str:
    """'every step', 'every 50 steps', 'every 0.5 epochs'."""
    return 'every %s' % unit if count == 1 else 'every %s %ss' % ('%g' % count, unit)


def left_out_of_estimate(plan) -> str:
    """The work scheduled between timed steps that the timed part's estimate (the warm-up's
    step time x the steps) leaves out, the hooks of lifecycle/wiring.py that act every N steps:
    'summaries every step, checkpoints every 50 steps and evaluations every 2 epochs'; ''
    when none is scheduled. Summaries: --save_summaries_steps with --summary_verbosity >= 1
    and --train_dir (the chief's); checkpoints: --save_model_steps or --save_model_secs of a
    training run with --train_dir (the chief's); evaluations during training: their flags."""
    p = plan.params
    parts = []
    if p.train_dir and p.summary_verbosity >= 1 and plan.is_chief and p.save_summaries_steps:
        parts.append('summaries ' + _every(p.save_summaries_steps, 'step'))
    if plan.training and p.train_dir and plan.is_chief:
        if p.save_model_steps:
            parts.append('checkpoints ' + _every(p.save_model_steps, 'step'))
        elif p.save_model_secs:
            parts.append('checkpoints every %d s' % p.save_model_secs)
    if plan.training:
        if p.eval_during_training_every_n_steps:
            parts.append('evaluations ' + _every(p.eval_during_training_every_n_steps, 'step'))
        if p.eval_during_training_every_n_epochs:
            parts.append('evaluations ' + _every(p.eval_during_training_every_n_epochs, 'epoch'))
        at = (len(p.eval_during_training_at_specified_steps or [])
              + len(p.eval_during_training_at_specified_epochs or []))
        if at:
            parts.append('evaluations at %d chosen points' % at if at > 1
                         else 'an evaluation at a chosen point')
    return ', '.join(parts[:-1]) + ' and ' + parts[-1] if len(parts) > 1 else ''.join(parts)


def loop_spec(plan) -> training_loop.LoopSpec:
    """The timed loop's steps, columns and messages for the run `plan` describes.

    The step lines' columns are the original's: `Step Img/sec total_loss` (the
    --loss_type_to_report), then `top_1_accuracy top_5_accuracy` with
    --print_training_accuracy and always in a forward-only run. A forward-only step's loss
    (its cross entropy: no weight decay without updates) is kept as a training step's is (the
    results' losses, the summaries' loss), but no NaN check applies to it: nothing is
    trained, so nothing is made invalid by it. A non-finite loss of a training step stops the
    loop (one host's run: the reports are written, then the error raised:
    phase_runner.PhaseRunner.run) or raises at once (a cluster task's)."""
    p = plan.params
    accuracy = ('top_1_accuracy', 'top_5_accuracy')
    columns = accuracy if p.print_training_accuracy or not plan.training else ()
    return training_loop.LoopSpec(
        num_warmup=plan.num_warmup_batches, num_steps=plan.num_batches,
        images_per_step=plan.images_per_step, display_every=p.display_every,
        check_loss=plan.training, loss_name=p.loss_type_to_report,
        # One host's run stops on a non-finite loss and writes its reports before the error;
        # a cluster task's raises at once (its `abort` tells the other workers it failed).
        stop_on_nonfinite=not plan.cluster_role,
        extra_columns=columns,
        ewma_alpha=p.display_perf_ewma, weight_decay=p.weight_decay if plan.training else 0.0,
        rate_advice=rate_advice(p),
        rate_floor=p.minimum_learning_rate if plan.training else 0.0,
        default_rate=default_rate(plan), left_out=left_out_of_estimate(plan),
        nan_hint=(', lower the loss scale (--fp16_loss_scale=%s now; float16 overflows above '
                  '65504) or use automatic loss scaling (--fp16_enable_auto_loss_scale)'
                  % precision.scale_text(precision.initial_loss_scale(p))
                  if p.use_fp16 and not p.fp16_enable_auto_loss_scale else ''))


def timed_loop(sess, info, plan, hooks) -> training_loop.LoopResult:
    """The warm-up and timed steps (training_loop.run_loop) with the hooks, then the staging
    areas drained.

    Raises:
      training_loop.NonFiniteLossError: the loss became NaN or Inf in a cluster task's run
        (one host's run returns the loop with it in LoopResult.error: `loop_spec`).
    """
    loop = training_loop.run_loop(loop_spec(plan), Step(sess, info, plan), hooks)
    drain_pipeline(sess, info)
    return loop


def loop_result(plan, loop, build_secs: float, restored_step: int | None) -> dict:
    """The result dict of a training or forward-only run, before the hooks add theirs (the
    total block's figures among them: lifecycle/figure_hooks.py): the loop's measurements, the
    common fields (results_log.common_fields), per-step records, and defaults for the keys
    that hooks fill in (checkpoint_path, eval, stopped_by_signal, ...). A run stopped in the
    warm-up (a signal) has 'stopped_in_warmup' True and 'images_per_sec' None: nothing was
    timed; so has a cluster's worker stopped at its first timed step ('num_steps' 0), and a
    run a non-finite loss stopped before a timed step finished. Such a loss's stop is in
    'stopped_by_error' ('the non-finite loss (nan) at step 3'; LoopResult.stopped_by_error):
    its step is not among the timed ones, though its update ran ('global_step' counts it).

    Args:
      plan: the run's run_plan.RunPlan.
      loop: the training_loop.LoopResult.
      build_secs: seconds the graph took to build.
      restored_step: the global step restored from a checkpoint, or None.
    """
    global_step = (restored_step or 0) + (
        loop.num_steps + len(loop.warmup_losses) + (loop.error is not None)
        if plan.training else 0)
    result = {
        'images_per_sec': None if loop.nothing_timed else loop.images_per_sec,
        'losses': loop.losses,
        'warmup_losses': loop.warmup_losses,
        'step_times': loop.step_times,
        'num_steps': loop.num_steps,
        'stopped_early': loop.stopped_early,
        'stopped_in_warmup': loop.stopped_in_warmup,
        'elapsed_secs': loop.elapsed_secs,
        'between_steps_secs': loop.hook_secs,  # checkpoints, summaries, evaluations: not timed
        'after_last_step_secs': loop.after_last_secs,  # the hooks' after the timed part
        'graph_build_secs': build_secs,
    }
    result.update(results_log.common_fields(plan))
    result.update({
        'steps': results_log.step_records(
            loop.step_times, loop.losses, plan.global_batch_size,
            accuracies=loop.extras if loop.extras and loop_spec(plan).extra_columns else None,
            ewma_alpha=plan.params.display_perf_ewma, line_images=plan.images_per_step),
        'restored_step': restored_step,
        'global_step': global_step,
        'checkpoint_path': None,
        'eval': None,
        'evals': [],
        'stopped_by_signal': None,
        'stopped_by_error': loop.stopped_by_error,
        'results_file': None,
        'frozen': None if plan.training else False,  # --freeze_when_forward_only: True
    })
    return results_log.complete_keys(result)
