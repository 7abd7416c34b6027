"""CPU tuning: TensorFlow's thread pools, the OpenMP (KMP_*) environment, NUMA affinity.

This module owns
  * the default thread-pool sizes (`default_thread_counts`), a rule measured on the development
    hosts (see `default_thread_counts` for the table), and a GPU run's one intra-op thread,
    the original's (`thread_counts`);
  * the environment variables of --kmp_blocktime, --kmp_affinity, --kmp_settings (and
    OMP_NUM_THREADS) and of --xla's CPU auto-clustering, which must be set before TensorFlow
    starts: the entry script calls `configure_environment` right after parsing the flags and
    before `import tensorflow`;
  * --use_numa_affinity (`configure_session`, `numa_nodes`);
  * the warning of a run whose intra-op threads outnumber the CPUs it may run on
    (`oversubscription_warning`; the flags' hard bound, the same on every host, is
    params/bounds.py's).

It does not import TensorFlow at module level, so the entry script can use it before TensorFlow
loads.

KMP_* variables are read by Intel's OpenMP runtime (libiomp5), used by oneDNN in Intel-optimised
TensorFlow builds (Intel, "Maximize TensorFlow Performance on CPU: Considerations and
Recommendations for Inference Workloads", 2019). The stock TensorFlow 2.21 wheel runs oneDNN on
its own Eigen thread pool and loads no OpenMP runtime (checked with ldd and /proc/self/maps), so
there the variables are set but have no effect; `describe` says so in the header.
"""

from __future__ import annotations

import glob
import os
import sys

from .. import cnn_util
from ..hardware import cpu_quota
from ..metrics import host_load
from . import gpu_settings

XLA_CPU_GLOBAL_JIT_FLAG = '--tf_xla_cpu_global_jit'
_OPENMP_LIBRARIES = ('libiomp5', 'libgomp', 'libomp.so')
_MANAGED_VARIABLES = ('KMP_BLOCKTIME', 'KMP_AFFINITY', 'KMP_SETTINGS', 'OMP_NUM_THREADS')


def physical_cores(cpuinfo_path: str = '/proc/cpuinfo') -> int:
    """Number of physical cores this process may run on (hyper-threads counted once).

    Reads the (physical id, core id) pairs of /proc/cpuinfo for the CPUs in the process's
    affinity mask; falls back to the logical CPU count where that is not available.
    """
    try:
        allowed = os.sched_getaffinity(0)
    except (AttributeError, OSError):
        allowed = set(range(os.cpu_count() or 1))
    cores, processor, package = set(), None, '0'
    try:
        with open(cpuinfo_path) as f:
            for line in f:
                key, _, value = line.partition(':')
                key, value = key.strip(), value.strip()
                if key == 'processor':
                    processor, package = int(value), '0'
                elif key == 'physical id':
                    package = value
                elif key == 'core id' and processor in allowed:
                    cores.add((package, value))
    except (OSError, ValueError):
        cores = set()
    return len(cores) or len(allowed) or 1


def usable_cores() -> int:
    """The physical cores this process may keep busy: `physical_cores()`, no more than the
    whole CPUs of a container's CPU quota (hardware/cpu_quota.py: a 0.5-CPU quota gives 1)."""
    return cpu_quota.usable(physical_cores(), cpu_quota.host_quota())


def default_thread_counts(num_cores: int | None = None, *,
                          real_data: bool = False) -> tuple[int, int]:
    """The measured best (intra-op, inter-op) thread-pool sizes for a CPU run.

    Rule: intra-op = physical cores; inter-op = 2 (1 on a one-core host), plus one when the run
    reads real data. Each big op already spreads over every core through the intra-op pool; a
    second inter-op thread lets the small ops (loss, weight decay, the optimizer's updates,
    staging) run beside it. More inter-op threads than that only oversubscribe the cores on
    synthetic data. With real data the step also runs the input pipeline's ops (the iterator's
    get_next and the staging put for the next step), which wait on tf.data's threads; one more
    inter-op thread keeps the model's ops from queueing behind them.

    The rule comes from bench/bench_precision.py --threads on synthetic and real data
    (docs/performance-notes.md, "CPU thread settings" and "Measurements once in the code"):
    intra-op below the cores loses most, one inter-op thread loses a little, a third one helps
    real data only.

    Args:
      num_cores: physical cores; default `usable_cores()` (the physical cores, no more than a
        container's CPU quota allows).
      real_data: the run reads a dataset (--data_dir) rather than synthetic images.
    """
    cores = num_cores or usable_cores()
    return cores, min(2, cores) + (1 if real_data else 0)


#: A GPU run's intra-op threads when --num_intra_threads is not given: the original's rule
#: (its help: unset "is the same as 0 except that it disables intra-op parallelism on a GPU"):
#: the GPUs do the step's work, and the CPU's ops (input, staging, copies) run side by side on
#: the inter-op threads.
GPU_INTRA_THREADS = 1


def thread_counts(p) -> tuple[int, int]:
    """(intra-op, inter-op) threads of the run: the flags where given, else the defaults.

    The default intra-op count is `default_thread_counts`' on the CPU and GPU_INTRA_THREADS
    on a GPU run (gpu_settings.gpu_run_likely: --device=gpu, or no --device and a GPU device
    node, which is exact for resolved Params); the inter-op default is the same on both.
    0 means "TensorFlow decides" (its default: one thread per logical CPU in each pool).

    Args:
      p: Params (resolved, params.resolve_params, or as given before TensorFlow loads).

    Returns:
      (intra-op, inter-op) thread-pool sizes.
    """
    intra, inter = default_thread_counts(real_data=bool(getattr(p, 'data_dir', None)))
    if gpu_settings.gpu_run_likely(p):
        intra = GPU_INTRA_THREADS
    return (intra if p.num_intra_threads is None else p.num_intra_threads,
            inter if p.num_inter_threads is None else p.num_inter_threads)


def environment_updates(p, environ=None) -> dict[str, str]:
    """The environment variables `p` asks for, as {name: value}.

    KMP_BLOCKTIME (--kmp_blocktime, ms), KMP_AFFINITY (--kmp_affinity), KMP_SETTINGS=1
    (--kmp_settings); OMP_NUM_THREADS = the intra-op thread count when any of those or
    --num_intra_threads is given and OMP_NUM_THREADS is not already set; TF_XLA_FLAGS plus
    --tf_xla_cpu_global_jit with --xla (CPU auto-clustering, see xla_jit.py).

    Args:
      p: Params.
      environ: the current environment (default os.environ), to keep a user's OMP_NUM_THREADS
        and extend TF_XLA_FLAGS.
    """
    environ = os.environ if environ is None else environ
    updates = {}
    if p.kmp_blocktime is not None:
        updates['KMP_BLOCKTIME'] = str(p.kmp_blocktime)
    if p.kmp_affinity:
        updates['KMP_AFFINITY'] = p.kmp_affinity
    if p.kmp_settings:
        updates['KMP_SETTINGS'] = '1'
    if (updates or p.num_intra_threads) and 'OMP_NUM_THREADS' not in environ:
        intra, _ = thread_counts(p)
        if intra > 0:
            updates['OMP_NUM_THREADS'] = str(intra)
    if p.xla:
        flags = with_cpu_global_jit(environ.get('TF_XLA_FLAGS'))
        if flags != environ.get('TF_XLA_FLAGS'):
            updates['TF_XLA_FLAGS'] = flags
    updates.update(gpu_settings.environment_updates(p, environ))  # GPU threads, cuDNN
    return updates


def with_cpu_global_jit(xla_flags: str | None) -> str:
    """The TF_XLA_FLAGS value `xla_flags` with --tf_xla_cpu_global_jit added (once)."""
    parts = (xla_flags or '').split()
    if XLA_CPU_GLOBAL_JIT_FLAG not in parts:
        parts.append(XLA_CPU_GLOBAL_JIT_FLAG)
    return ' '.join(parts)


def configure_environment(p, environ=None) -> dict[str, str]:
    """Sets `environment_updates(p)` in the environment; call before importing TensorFlow.

    Warns (one line) when TensorFlow is already imported and KMP/OMP variables are set: an
    OpenMP runtime reads them once, when it loads.

    Returns:
      The variables set, {name: value}.
    """
    environ = os.environ if environ is None else environ
    updates = environment_updates(p, environ)
    environ.update(updates)
    late = sorted(k for k in updates if k.startswith(('KMP_', 'OMP_')))
    if late and 'tensorflow' in sys.modules:
        cnn_util.warn('%s set after TensorFlow was imported: an OpenMP runtime already loaded '
                      'keeps its settings' % ', '.join(late))
    return updates


def oversubscription_warning(p, threads: tuple[int, int]) -> str | None:
    """The one warning line of a run on this host whose intra-op threads (`threads`: the run's
    (intra-op, inter-op) counts) outnumber the CPUs this process may run on
    (metrics/host_load.allowed_cpus: its affinity mask, e.g. `taskset -c 0`; no more than a
    container's CPU quota's whole CPUs: hardware/cpu_quota.usable), or None.

    No line for a dry run, a scaling plan or --list_models (--dry_run, --plan_scaling: they
    may plan for another host; none runs a step here), nor for 0 (TensorFlow sizes the pool by
    the mask).
    """
    intra = threads[0]
    if p.dry_run or p.plan_scaling or p.list_models or not intra:
        return None
    cpus = cpu_quota.usable(len(host_load.allowed_cpus()) or 1, cpu_quota.host_quota())
    if intra <= cpus:
        return None
    return ('%s on the %s this run may use: oversubscribed, the threads of each op take turns '
            'on the CPUs, so its images/sec are those of an oversubscribed run '
            '(--num_intra_threads=%d gives each thread a CPU)'
            % (cnn_util.counted(intra, 'intra-op thread'), cnn_util.counted(cpus, 'CPU'), cpus))


def numa_nodes(root: str = '/sys/devices/system/node') -> list[str]:
    """The NUMA node directories of this host (e.g. ['node0']); empty where sysfs lacks them."""
    return sorted(os.path.basename(d) for d in glob.glob(os.path.join(root, 'node[0-9]*')))


def numa_applies(p) -> bool:
    """Whether --use_numa_affinity does anything here: asked for, and more than one node."""
    return bool(p.use_numa_affinity) and len(numa_nodes()) > 1


def check_numa(p) -> None:
    """Warns (one line) when --use_numa_affinity is given on a host with one NUMA node."""
    if p.use_numa_affinity and not numa_applies(p):
        cnn_util.warn('--use_numa_affinity has no effect: this host has %d NUMA node(s); '
                      'continuing without it' % len(numa_nodes()))


def configure_session(config, p, threads: tuple[int, int]) -> None:
    """Thread pools (`threads`: the run's (intra-op, inter-op) counts, `thread_counts`) and
    NUMA affinity of a CPU-side session config (a tf1.ConfigProto)."""
    intra, inter = threads
    config.intra_op_parallelism_threads = intra
    config.inter_op_parallelism_threads = inter
    if numa_applies(p):
        # One CPU device per NUMA node, its threads pinned to the node (TF's ConfigProto option).
        config.experimental.use_numa_affinity = True


def openmp_runtime_loaded(maps_path: str = '/proc/self/maps') -> bool | None:
    """Whether an OpenMP runtime is mapped into this process; None where that cannot be read."""
    try:
        with open(maps_path) as f:
            return any(lib in line for line in f for lib in _OPENMP_LIBRARIES)
    except OSError:
        return None


def describe(threads: tuple[int, int], p=None) -> str:
    """The header's thread text for `threads` (the run plan's (intra-op, inter-op) counts),
    e.g. 'intra-op 2, inter-op 2 (2 physical cores)'; under a container's CPU quota
    'intra-op 1, inter-op 1 (2 physical cores; CPU quota 0.5 CPU (cgroup v2 ...))'; a GPU
    run's default intra-op count (`thread_counts`, given the run's Params `p`) is named so:
    'intra-op 1 (a GPU run's default, as the original's), inter-op 2 (...)'."""
    intra, inter = threads
    quota = cpu_quota.host_quota()
    gpu_default = (p is not None and p.num_intra_threads is None
                   and gpu_settings.gpu_run_likely(p) and intra == GPU_INTRA_THREADS)
    text = 'intra-op %s%s, inter-op %s (%s%s)' % (
        intra or 'auto', " (a GPU run's default, as the original's)" if gpu_default else '',
        inter or 'auto', cnn_util.counted(physical_cores(), 'physical core'),
        '' if quota is None else '; ' + quota.words())
    kmp = {k: os.environ[k] for k in _MANAGED_VARIABLES if k in os.environ}
    if kmp:
        text += '; %s' % ' '.join('%s=%s' % kv for kv in sorted(kmp.items()))
        if openmp_runtime_loaded() is False:
            text += ' (no OpenMP runtime loaded: no effect)'
    return text
