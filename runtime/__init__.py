"""How this process and TensorFlow run: TensorFlow's environment before it loads
(runtime_env.py), CPU threads and NUMA (cpu_tuning.py), GPU options and Grappler
(gpu_settings.py), XLA (xla_jit.py), session options (session_config.py), the traced session
(traced_session.py), TensorFlow's file systems for paths with a scheme, gs:// or ram://, and
a local file written atomically (file_systems.py), the hold of the folders a run writes, one
run at a time, and the missing folders above them, made first (dir_hold.py), and
the command's stdout and stderr, whose failed writes lose output, not the run
(output_streams.py).
"""
