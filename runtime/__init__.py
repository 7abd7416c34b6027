"""How TensorFlow runs the graph: its environment before it loads (runtime_env.py), CPU
threads and NUMA (cpu_tuning.py), GPU options and Grappler (gpu_settings.py), XLA
(xla_jit.py), session options (session_config.py), the traced session (traced_session.py) and
TensorFlow's file systems for paths with a scheme, gs:// or ram:// (file_systems.py).
"""
