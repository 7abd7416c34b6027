"""Which lifecycle features a run has: `make_hooks(plan, model, dataset, ...)` gives the run
hooks (run_hooks.py says in which phases they are called; their order in the list carries no
meaning, except for the total block's lines: the figures come first, the host load last). The
flags that have no effect in a run are preflight/ineffective_flags.py's; the result dict of a
run is made by timed_run.loop_result.
"""

from __future__ import annotations

from .. import params as params_lib
from ..graph import learning_rate, precision
from ..history import store
from ..params import original_flags
from . import (
    checkpoints,
    eval_during_training,
    figure_hooks,
    mlperf_log,
    precision_report,
    profiling,
    results_db,
    results_log,
    run_hooks,
    schedule_warnings,
    signals,
    skip_report,
    summaries,
)


def make_hooks(plan, model, dataset, *, is_local_device=None, stored_baseline=None,
               session_config=None) -> list[run_hooks.RunHook]:
    """The lifecycle hooks of a training or forward-only run.

    Args:
      plan: the run's run_plan.RunPlan (only the chief saves and writes summaries).
      model, dataset: the run's CNNModel and dataset (summaries and evaluation build their own
        towers and input).
      is_local_device: device name -> True for this task's devices (cluster runs), for the
        traced steps' breakdowns; None: every device is local.
      stored_baseline: the --baseline result, its configuration checked, or None.
      session_config: the run's tf.compat.v1.ConfigProto (BenchmarkCNN.session_config), for
        the sessions of the evaluations during training.
    """
    p = plan.params
    is_local = is_local_device or (lambda device: True)
    host = figure_hooks.HostLoadHook(plan)
    hooks = [figure_hooks.FiguresHook(plan, is_local=is_local, stored_baseline=stored_baseline,
                                      host_load=host.judged), host]
    if plan.training and plan.is_chief and learning_rate.schedule_flag(p):
        hooks.insert(0, schedule_warnings.ScheduleWarningsHook(plan))
    if p.train_dir and p.summary_verbosity >= 1 and plan.is_chief:
        hooks.append(summaries.SummaryHook(plan, model, dataset))
    if plan.training and any(params_lib.is_set(p, n)
                             for n in params_lib.EVAL_DURING_TRAINING_FLAGS):
        hooks.append(eval_during_training.EvalDuringTrainingHook(plan, model, dataset,
                                                                 session_config))
    if p.graph_file or p.trace_file or p.tfprof_file or p.partitioned_graph_file_prefix:
        hooks.append(profiling.ProfilingHook(p))
    if plan.training and p.train_dir and plan.is_chief:
        hooks.append(checkpoints.CheckpointHook(plan))
    if p.print_step_breakdown:
        hooks.append(figure_hooks.StepBreakdownHook(plan, is_local))
    hooks.append(results_log.OriginalStatsHook())  # after the evaluations' hook: its `end`
    if p.plot_file:
        hooks.append(results_log.PlotHook(p.plot_file))
    if p.benchmark_log_dir:
        hooks.append(results_log.ResultsLogHook(p.benchmark_log_dir))
    if plan.is_chief:  # a cluster's run is recorded once, by its chief, with its total
        database = store.run_path(p.results_db)
        hooks.append(results_db.RecordHook(
            database, say_id=not getattr(plan, 'cluster_role', ''),
            unused=None if database else store.default_problem(p.results_db)))
    evaluations = next((h for h in hooks
                        if isinstance(h, eval_during_training.EvalDuringTrainingHook)), None)
    if original_flags.ml_perf_wanted(p) and plan.is_chief:
        # MLPerf's base rate is the schedule's rate before its changes (after any warm-up).
        base_rate = learning_rate.initial_rate(p, model, plan.images_per_global_step)[0]
        hooks.extend(h for h in [mlperf_log.make_hook(plan, evaluations, base_rate,
                                                      synthetic=dataset.synthetic)]
                     if h is not None)
    hooks.append(precision_report.PrecisionFactsHook(plan))
    if plan.training and p.use_fp16 and p.fp16_enable_auto_loss_scale:
        hooks.append(precision_report.LossScaleReportHook(precision.initial_loss_scale(p)))
    if p.skip_corrupt_records and not dataset.synthetic:
        hooks.append(skip_report.SkipReportHook(evaluations))
    # Last: its `end` sees the final checkpoint; a second signal after the timed loop has the
    # results JSON and the database's record written first (SignalHook.salvage).
    # A second signal's abort closes the MLPerf log (run_stop aborted) before it exits.
    stopper = signals.SignalHook(reporters=[
        h for h in hooks if isinstance(h, (results_log.ResultsLogHook, results_db.RecordHook))],
        closers=[h.close_on_abort for h in hooks if isinstance(h, mlperf_log.MlPerfHook)],
        later=_later_outputs(hooks))
    if evaluations is not None:  # a signal stops an evaluation after its current batch
        evaluations.watch(stopper.catcher)
    hooks.append(stopper)
    return hooks


def _later_outputs(hooks) -> dict:
    """What a second signal's abort line may call missing (signals.SignalHook's `later`):
    only the outputs this run writes (no results database's record under --noresults_db)."""
    def has(kind):
        return any(isinstance(h, kind) for h in hooks)
    recorded = any(isinstance(h, results_db.RecordHook) and h.database for h in hooks)
    return {
        'salvage': (['the final checkpoint'] if has(checkpoints.CheckpointHook) else [])
        + (['the plot'] if has(results_log.PlotHook) else []),
        'saved': (['results JSON'] if has(results_log.ResultsLogHook) else [])
        + (['plot'] if has(results_log.PlotHook) else [])
        + (['the results database\'s record'] if recorded else []),
    }



def eval_hooks(plan) -> list[run_hooks.RunHook]:
    """The hooks of an --eval run's end (eval_runner.run_eval, which prints each evaluation's
    figures: figure_hooks.eval_block): --benchmark_log_dir's JSON and the results database
    (which records nothing when no checkpoint was evaluated)."""
    p = plan.params
    hooks = [results_log.OriginalStatsHook()]
    if p.benchmark_log_dir:
        hooks.append(results_log.ResultsLogHook(p.benchmark_log_dir))
    # No id line: an --eval run's output ends with its total block (or its stop line).
    hooks.append(results_db.RecordHook(store.run_path(p.results_db), eval_run=True,
                                       say_id=False))
    return hooks
