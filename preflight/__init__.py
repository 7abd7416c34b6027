"""Will it run, and where: checks before a run spends time.

The usage check of a run's flags (usage.py: before TensorFlow loads, and the few checks that
need it right after), with output paths that cannot be written (output_paths.py). On a built
graph, with no step run: --dry_run (dry_run.py), the memory check before the first step
(memory_check.py), and the static analysis both use: the GPU kernel registry of a graph's ops
(gpu_kernels.py), the copies per step (step_traffic.py) and the peak memory estimate
(memory_estimate.py).
"""
