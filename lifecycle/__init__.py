"""The training lifecycle: the loop, its phases and its hooks.

The loop and its phases: the timed loop (training_loop.py), the timed part of a run and its
result (timed_run.py), the hooks' phases (run_hooks.py), which hooks a run has and which flags
have no effect in it (wiring.py), the header block (header.py), the hold of the folders a run
writes, one run at a time (dir_hold.py). The hooks: checkpoints
(checkpoints.py), evaluation (eval_runner.py), summaries (summaries.py), profiles and traces
(profiling.py, trace_extras.py), the figures' hooks (figure_hooks.py), signals (signals.py),
results JSON and plot (results_log.py), every finished run into the results database
(results_db.py), the records --skip_corrupt_records skipped (skip_report.py), the schedule's
changes a run never reaches (schedule_warnings.py), MLPerf lines (mlperf_log.py).

Below the cluster and the preflight checks; above the figures (metrics/), which it reports,
and the graph, which it runs.
"""
