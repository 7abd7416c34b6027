"""The training lifecycle: the loop, the runner of its phases and its hooks.

The loop: the timed loop (training_loop.py), the timed part of a run, its step and its result
(timed_run.py). The runner: the one caller of every hook phase (phase_runner.py); the phases
and the hook interface (run_hooks.py), which hooks a run has (wiring.py). The hooks:
checkpoints (checkpoints.py; where a run restores from: checkpoint_source.py, the folder's
checkpoints and the advice about damaged or gone ones: checkpoint_lookup.py; the temporaries of
a killed or failed save: checkpoint_temporaries.py; whether a checkpoint fits the run, and the
values restored by hand: checkpoint_fit.py; the original tf_cnn_benchmarks' checkpoints by
their names there: original_checkpoints.py; an independent run's towers' own copies:
tower_copies.py), the evaluator and the --eval runner
(eval_runner.py; what a signal stops in an --eval run: eval_stop.py), evaluation during
training (eval_during_training.py), summaries (summaries.py), profiles and traces
(profiling.py), the figures' hooks (figure_hooks.py), signals (signals.py; a second signal's
abort: signal_abort.py; the lines of a late signal and of a reader gone: signal_lines.py),
results JSON and
plot (results_log.py), every finished run into the results database (results_db.py), the
records --skip_corrupt_records skipped (skip_report.py), the run's precision facts and the
steps automatic loss scaling skipped (precision_report.py), the schedule's changes a run never
reaches (schedule_warnings.py), MLPerf lines (mlperf_log.py).

Below the cluster and the preflight checks; above the figures (metrics/), which it reports,
and the graph, which it runs.
"""
