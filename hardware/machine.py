"""What this machine is: CPU model and flags, cores, visible GPUs, software versions.

One description of the machine for every record that names where a figure came from (a run's
results JSON, a sweep's records, the bench scripts' result files): figures are comparable only
on one CPU or GPU model, TensorFlow version and oneDNN setting. Loads no TensorFlow unless
asked for the GPUs (`gpu_names`) or `environment(tensorflow=True)`.
"""

from __future__ import annotations

import ctypes.util
import importlib.metadata
import os
import platform
import shutil
import socket
import sys

from .. import package_info

# The CPU flags that decide which kernels a figure ran on (the reduced-precision and vector
# units), in this order in `cpu_flags()`.
NOTABLE_CPU_FLAGS = ('avx2', 'fma', 'avx512f', 'avx512_vnni', 'avx512_bf16', 'avx512_fp16',
                     'amx_tile', 'amx_bf16', 'amx_int8')


def _cpuinfo_field(name: str) -> str | None:
    """The first value of `name` in /proc/cpuinfo (Linux), None elsewhere."""
    try:
        with open('/proc/cpuinfo', encoding='utf-8', errors='replace') as f:
            for line in f:
                if line.lower().startswith(name):
                    return line.split(':', 1)[1].strip()
    except OSError:
        pass  # not Linux
    return None


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (Linux), else platform.processor()."""
    return _cpuinfo_field('model name') or platform.processor() or platform.machine()


#: The CPU flags of the units oneDNN leaves unused under each ONEDNN_MAX_CPU_ISA value (oneDNN
#: developer guide, "CPU Dispatcher Control": the variable limits the instruction sets oneDNN
#: dispatches to; the ISAs nest SSE41 < AVX < AVX2 < AVX512_CORE < AVX512_CORE_VNNI <
#: AVX512_CORE_BF16 < AVX512_CORE_FP16 (AVX10_1_512) < AVX512_CORE_AMX (AVX10_1_512_AMX)).
_AVX512 = ('avx512f', 'avx512_vnni', 'avx512_bf16', 'avx512_fp16')
_AMX = ('amx_tile', 'amx_bf16', 'amx_int8', 'amx_fp16')
_ISA_DROPS = {
    'SSE41': _AVX512 + _AMX, 'AVX': _AVX512 + _AMX, 'AVX2': _AVX512 + _AMX,
    'AVX2_VNNI': _AVX512 + _AMX, 'AVX2_VNNI_2': _AVX512 + _AMX,
    'AVX512_CORE': _AVX512[1:] + _AMX, 'AVX512_CORE_VNNI': _AVX512[2:] + _AMX,
    'AVX512_CORE_BF16': _AVX512[3:] + _AMX, 'AVX512_CORE_FP16': _AMX, 'AVX10_1_512': _AMX,
    'AVX512_CORE_AMX': ('amx_fp16',), 'AVX10_1_512_AMX': ('amx_fp16',)}


def onednn_isa_limit(environ=None) -> str | None:
    """The ONEDNN_MAX_CPU_ISA (or the older DNNL_MAX_CPU_ISA) value that limits oneDNN's
    kernels, upper case; None when unset, DEFAULT, ALL or a value not in _ISA_DROPS."""
    environ = os.environ if environ is None else environ
    value = (environ.get('ONEDNN_MAX_CPU_ISA') or environ.get('DNNL_MAX_CPU_ISA') or '')
    value = value.strip().upper()
    return value if value in _ISA_DROPS else None


def usable_cpu_flags(flags, environ=None) -> set[str]:
    """`flags` without those of the units ONEDNN_MAX_CPU_ISA keeps oneDNN from using: the
    flags say which reduced-precision units the run's kernels can use (on an AMX host,
    ONEDNN_MAX_CPU_ISA=AVX512_CORE runs the kernels of an AVX-512 host without bfloat16
    units, and the precision rules follow)."""
    limit = onednn_isa_limit(environ)
    return set(flags) - set(_ISA_DROPS[limit]) if limit else set(flags)


#: The reduced-precision runs TensorFlow 2.21 hands to oneDNN by the CPU's own flags, whatever
#: ONEDNN_MAX_CPU_ISA says: (flag, dtype, the CPU flags that make TensorFlow send the dtype's
#: convolutions and matmuls to oneDNN, the lowest cap whose oneDNN kernels take the dtype).
#: Under a lower cap oneDNN has no kernel for them and the run stops at its first step ("could
#: not create a primitive descriptor", or an abort from a fused matmul); measured on an AMX
#: host with avx512_fp16 on 2026-12-07: float16 under AVX512_CORE, AVX512_CORE_BF16 and AVX2,
#: bfloat16 under AVX2; bfloat16 under AVX512_CORE runs (oneDNN emulates it there).
ISA_CAP_NEEDS = (('--use_fp16', 'float16', ('avx512_fp16', 'amx_fp16'), 'AVX512_CORE_FP16'),
                 ('--use_bf16', 'bfloat16', ('avx512f',), 'AVX512_CORE'))


def isa_cap_problem(use_fp16: bool, use_bf16: bool, flags=None, environ=None) -> str | None:
    """The usage error of a reduced-precision CPU run that ONEDNN_MAX_CPU_ISA makes fail: the
    CPU has the units TensorFlow sends the dtype to oneDNN by (`ISA_CAP_NEEDS`), and the cap
    keeps oneDNN from them. None where the run can go on (no cap, float32, a cap that keeps
    the units, or a CPU without them: TensorFlow's own kernels then run the dtype).

    Args:
      use_fp16, use_bf16: the precision flags.
      flags: the CPU's flags as /proc/cpuinfo lists them (default: this CPU's, all of them).
      environ: the environment (default os.environ): ONEDNN_MAX_CPU_ISA, DNNL_MAX_CPU_ISA.

    Returns:
      One line naming the variable, its value, the flag and the three fixes, or None.
    """
    environ = os.environ if environ is None else environ
    limit = onednn_isa_limit(environ)
    if limit is None or not (use_fp16 or use_bf16):
        return None
    flags = set((_cpuinfo_field('flags') or '').split() if flags is None else flags)
    for flag, dtype, units, lowest in ISA_CAP_NEEDS:
        if (flag == '--use_fp16') != bool(use_fp16):
            continue
        have = [unit for unit in units if unit in flags]
        if not have or set(have) - set(_ISA_DROPS[limit]):
            return None
        name = 'ONEDNN_MAX_CPU_ISA' if environ.get('ONEDNN_MAX_CPU_ISA') else 'DNNL_MAX_CPU_ISA'
        return ('%s=%s with %s: TensorFlow sends %s convolutions and matmuls to oneDNN because '
                'this CPU has %s, and oneDNN under this cap has no %s kernels (the run would '
                'stop at its first step); unset %s, give a cap that keeps the units (%s or '
                'above), or drop %s to run in float32' % (
                    name, environ.get(name).strip(), flag, dtype, '/'.join(have), dtype, name,
                    lowest, flag))
    return None


def cpu_flags() -> list[str]:
    """The NOTABLE_CPU_FLAGS this CPU has (/proc/cpuinfo 'flags') and oneDNN may use
    (`usable_cpu_flags`), e.g. ['avx2', 'fma', 'avx512f', 'avx512_bf16']; [] where
    /proc/cpuinfo is missing."""
    have = usable_cpu_flags((_cpuinfo_field('flags') or '').split())
    return [flag for flag in NOTABLE_CPU_FLAGS if flag in have]


def onednn() -> str:
    """'on' or 'off': TensorFlow's oneDNN CPU kernels as TF_ENABLE_ONEDNN_OPTS sets them (the
    project turns them on unless it says 0/false: runtime/runtime_env.py)."""
    value = os.environ.get('TF_ENABLE_ONEDNN_OPTS', '1').strip().lower()
    return 'off' if value in ('0', 'false', 'off', 'no') else 'on'


def tf_version_installed() -> str | None:
    """The installed TensorFlow's version from its package metadata (no import); None."""
    for dist in ('tensorflow', 'tensorflow-cpu', 'tf-nightly'):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


#: Where the NVIDIA kernel driver says it is loaded (Linux; NVIDIA's driver README, "Verifying
#: the installation": the file exists once the kernel module is loaded).
NVIDIA_DRIVER_VERSION_FILE = '/proc/driver/nvidia/version'


def nvidia_driver_evidence() -> str | None:
    """What shows an NVIDIA driver on this machine, without loading TensorFlow: the kernel
    module's /proc/driver/nvidia/version, the driver's user-space library libcuda (which every
    CUDA program, TensorFlow's included, opens), or the driver's nvidia-smi on PATH; None when
    none of them is there (TensorFlow would then see no GPU)."""
    if os.path.exists(NVIDIA_DRIVER_VERSION_FILE):
        return NVIDIA_DRIVER_VERSION_FILE
    if ctypes.util.find_library('cuda'):
        return 'libcuda (%s)' % ctypes.util.find_library('cuda')
    found = shutil.which('nvidia-smi')
    return found


def gpu_names() -> list[str]:
    """Names of the GPUs TensorFlow sees, e.g. ['NVIDIA A100-SXM4-40GB']; [] without GPUs.
    Imports TensorFlow."""
    import tensorflow as tf
    names = []
    for gpu in tf.config.list_physical_devices('GPU'):
        details = tf.config.experimental.get_device_details(gpu)
        names.append(details.get('device_name', gpu.name))
    return names


def environment(tensorflow: bool = True) -> dict:
    """Where a figure was measured.

    Args:
      tensorflow: ask TensorFlow (imported) for its version and the visible GPUs; False reads
        the version from the package metadata and leaves 'gpus' None (unknown).

    Returns:
      {'tf_version', 'tf_cnn_benchmarks_version' (this package's: package_info.VERSION),
       'python_version', 'platform', 'hostname', 'cpu_model', 'cpu_flags' (list),
       'cpu_cores', 'gpus' (names, or None), 'onednn' ('on'/'off')}.
    """
    if tensorflow:
        import tensorflow as tf
        tf_version, gpus = tf.__version__, gpu_names()
    else:
        tf_version, gpus = tf_version_installed(), None
    return {
        'tf_version': tf_version,
        'tf_cnn_benchmarks_version': package_info.VERSION,
        'python_version': sys.version.split()[0],
        'platform': platform.platform(),
        'hostname': socket.gethostname(),
        'cpu_model': cpu_model(),
        'cpu_flags': cpu_flags(),
        'cpu_cores': os.cpu_count(),
        'gpus': gpus,
        'onednn': onednn(),
    }
