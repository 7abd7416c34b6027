"""Will it run, where, and how fast: checks and plans before a run spends time.

The usage check of a run's flags (usage.py: the command's preparation before TensorFlow loads,
and the few checks that need it right after), the run plan settled from them once TensorFlow
has loaded, before the graph (settled_run.py: what BenchmarkCNN receives), with output paths
that cannot be written (output_paths.py; local, or remote on TensorFlow's file systems), the
longest paths a run writes against the system's limits (path_lengths.py) and the flags that
have no effect in the run (ineffective_flags.py; the original's GPU-only flags where they change
nothing: gpu_only_flags.py).
On a built graph, with no step run: --dry_run (dry_run.py), the memory check before the first
step (memory_check.py), and the static analysis both use: the step as it would be built for the
planned GPU (planned_step.py), whether this TensorFlow's CUDA build runs that GPU
(gpu_build.py: a warning, not an error), the GPU kernel registry of a graph's ops
(gpu_kernels.py), the copies per step (step_traffic.py), the peak memory estimate
(memory_estimate.py) and the one search for the largest batch that fits (batch_search.py).
--plan_scaling and the dry run's predicted step (scaling_plan.py) drive the step-time model
of speed_model/: they build the steps, read the results database (one device's stored figure:
stored_runs.py, no TensorFlow) and print; both say before each long phase what it does and
roughly how long it takes (progress.py). --calibrate
(calibrate.py) measures the host for the run's flags before any run, stores the quiet figures
and reports them.
"""
