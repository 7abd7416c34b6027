"""How TensorFlow runs the graph: its environment before it loads (runtime_env.py), CPU
threads and NUMA (cpu_tuning.py), GPU options and Grappler (gpu_settings.py), XLA
(xla_jit.py), session options (session_config.py) and the traced session (traced_session.py).
"""
