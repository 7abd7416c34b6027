"""The timed part of a training or forward-only run on a built graph: the step function, the
loop with the hooks' per-step calls (training_loop.run_loop), the draining of the staging
areas, and the run's result dict.

    step = make_step_fn(sess, info, plan)   # () -> (loss or None, *accuracy values)
    loop = timed_loop(sess, info, plan, hooks)
    result = loop_result(plan, loop, build_secs, restored_step)
"""

from __future__ import annotations

from ..graph import precision
from ..metrics import utilisation
from . import results_log, run_hooks, training_loop


def make_step_fn(sess, info, plan):
    """Returns a function running one step: (run_metadata=None) -> (loss or None, *accuracy
    values); with a RunMetadata the step runs with a full trace into it (metrics/utilisation.py
    traces the last warm-up step so).

    Every step also stages the next input batch (the pipeline's puts): all steps, the last
    ones included, run the same fetches, so TensorFlow prepares one executor for them
    during warm-up. (A different fetch list for the last steps cost a new executor, with
    Grappler and oneDNN primitive set-up, inside the timed loop: 0.5-1 s, a third of a
    60-step trivial run.) `drain_pipeline` empties the staging areas afterwards.

    Args:
      sess: a session of `info.graph`, initialised.
      info: the graph.graph_info.GraphInfo.
      plan: the run's run_plan.RunPlan (--print_training_accuracy adds top-1, top-5).
    """
    fetches = [info.train_op, info.loss]
    if plan.params.print_training_accuracy:
        fetches += [info.top_1, info.top_5]
    run = sess.make_callable(fetches + list(info.pipeline.step_ops), accept_options=True)
    show_loss = plan.training
    count = len(fetches)

    def step_fn(run_metadata=None):
        out = (run() if run_metadata is None else run(
            options=utilisation.FULL_TRACE, run_metadata=run_metadata))[:count]
        return (float(out[1]) if show_loss else None,) + tuple(out[2:])
    return step_fn


def drain_pipeline(sess, info) -> None:
    """Empties the staging areas (the batches staged by the last steps), so that a run that
    completes leaves nothing staged."""
    if info.pipeline.drain_ops:
        sess.run(info.pipeline.drain_ops)


def timed_loop(sess, info, plan, hooks, metrics=None) -> training_loop.LoopResult:
    """The warm-up and timed steps (training_loop.run_loop) with the hooks' per-step calls,
    then the staging areas drained. With `metrics` (a utilisation.RunMetrics), the last warm-up
    step is traced and the total block gets its lines.

    Raises:
      training_loop.NonFiniteLossError: the loss became NaN or Inf.
    """
    p = plan.params
    step_fn = make_step_fn(sess, info, plan)
    loop = training_loop.run_loop(
        step_fn,
        num_warmup=plan.num_warmup_batches,
        num_steps=plan.num_batches,
        images_per_step=plan.images_per_step, display_every=p.display_every,
        show_loss=plan.training, learning_rate_fn=lambda: float(sess.run(info.learning_rate)),
        nan_hint=(', lower the loss scale (--fp16_loss_scale=%g now; float16 overflows above '
                  '65504) or use automatic loss scaling (--fp16_enable_auto_loss_scale)'
                  % precision.initial_loss_scale(p)
                  if p.use_fp16 and not p.fp16_enable_auto_loss_scale else ''),
        after_step=run_hooks.combine_after_step(hooks),
        should_stop=run_hooks.combine_should_stop(hooks),
        extra_format=_accuracy_columns if p.print_training_accuracy else None,
        extra_columns=(('top_1_accuracy', 'top_5_accuracy') if p.print_training_accuracy
                       else ()),
        loss_name=p.loss_type_to_report, ewma_alpha=p.display_perf_ewma,
        **(metrics.loop_callbacks(step_fn) if metrics is not None else {}))
    drain_pipeline(sess, info)
    return loop


def loop_result(plan, loop, build_secs: float, restored_step: int | None,
                metrics=None) -> dict:
    """The result dict of a training or forward-only run (before the hooks add theirs): the
    loop's measurements, the common fields (results_log.common_fields), per-step records, and
    defaults for the keys that hooks fill in (checkpoint_path, eval, stopped_by_signal, ...).

    Args:
      plan: the run's run_plan.RunPlan.
      loop: the training_loop.LoopResult.
      build_secs: seconds the graph took to build.
      restored_step: the global step restored from a checkpoint, or None.
      metrics: the run's utilisation.RunMetrics (its result keys), or None.
    """
    global_step = (restored_step or 0) + (loop.num_steps + plan.num_warmup_batches
                                          if plan.training else 0)
    result = {
        'images_per_sec': loop.images_per_sec,
        'losses': loop.losses,
        'warmup_losses': loop.warmup_losses,
        'step_times': loop.step_times,
        'num_steps': loop.num_steps,
        'stopped_early': loop.stopped_early,
        'elapsed_secs': loop.elapsed_secs,
        'graph_build_secs': build_secs,
    }
    result.update(results_log.common_fields(plan))
    result.update({
        'steps': results_log.step_records(loop.step_times, loop.losses, plan.global_batch_size),
        'restored_step': restored_step,
        'global_step': global_step,
        'checkpoint_path': None,
        'eval': None,
        'evals': [],
        'stopped_by_signal': None,
        'results_file': None,
    })
    if metrics is not None:
        result.update(metrics.result_keys())
    return result


def _accuracy_columns(extras) -> str:
    top_1, top_5 = extras
    return '%.3f\t%.3f' % (top_1, top_5)
