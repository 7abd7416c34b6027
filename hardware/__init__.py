"""What the machine is and can do: its CPU, GPUs and software (machine.py), the GPU table of
data-sheet memory, peaks and the facts the per-op step model needs (gpu_specs.py), the GPU a
plan of GPUs that are not here plans (gpu_plans.py: --gpu_model or a host preset's), the links
between devices and hosts with their rates and sources (links.py), the known names closest to
an unknown one for a usage error's "did you mean" (suggest.py), this CPU's measured peak
(cpu_peak.py), its reduced-precision kernels timed against float32 (kernel_speed.py; the
shapes it times: probe_shapes.py) and the graph choices' factors (choice_speed.py), whether
it runs a reduced precision's NCHW kernels, refusing an NCHW run on it that cannot
(layout_kernels.py), its loopback rate between two tasks (loopback.py), the memory this
process can still allocate (host_memory.py), a container's CPU quota and how much it
throttled a run (cpu_quota.py) and the account's default folders under its home
folder (user_dirs.py); the measured facts live in one calibration record per host
(calibration.py: each with its spread and the host's load while it was measured; busy
measurements are not kept; its file, changed under a lock: record_file.py), keyed per CPU
model, TensorFlow version and ONEDNN_MAX_CPU_ISA cap.
"""
