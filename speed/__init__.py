"""Speed settings: TensorFlow's runtime environment (runtime_env.py), CPU threads and NUMA
(cpu_tuning.py), XLA (xla_jit.py), reduced precision (precision.py) and session options
(session_config.py).
"""
