"""Environment defaults that TensorFlow reads once, when it loads: import before TensorFlow.

* TF_ENABLE_ONEDNN_OPTS=1: oneDNN's CPU kernels. They give the CPU NCHW convolutions and pooling
  (the stock kernels are NHWC only) and are faster here: resnet50 training at batch 16 on the
  2-core development host ran at 3.2-3.6 images/sec with them and 2.1-2.3 without (TensorFlow
  turns them on by default only on CPUs with AVX512-VNNI/BF16/AMX).
* TF_CPU_ALLOCATOR_USE_BFC=true: TensorFlow's best-fit-with-coalescing allocator for CPU memory,
  which keeps freed buffers for reuse. The default allocator hands large buffers back to the
  operating system, so every step page-faults its big tensors in again: concatenations of
  gradient packs ran 6-9x slower, and alexnet/resnet50 training steps 0-14% slower (same host,
  bench/bench_core.py, alternating runs with and without).

A value the user already set is kept. Call `apply()` before the first TensorFlow import.
"""

import os

DEFAULTS = {'TF_ENABLE_ONEDNN_OPTS': '1', 'TF_CPU_ALLOCATOR_USE_BFC': 'true'}


def apply() -> None:
    """Sets every variable of DEFAULTS that is not set yet (idempotent)."""
    for name, value in DEFAULTS.items():
        os.environ.setdefault(name, value)
