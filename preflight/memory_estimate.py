"""Peak memory of a built graph on each device, before any session: Grappler's virtual cluster.

    peaks = estimate_peaks(graph, fetches, gpu=gpu_specs.lookup('V100'))
    # {'/GPU:0': DevicePeak(activations=..., variables=..., total=...), '/CPU:0': ...}

Grappler (`tensorflow.python.grappler.cluster.Cluster` with `DeviceProperties` of each device,
`DeterminePeakMemoryUsage`) simulates one step on devices that need not exist and reports the
largest sum of live tensors per device. Resource variables are not tensors of the step, so
their bytes (and the optimizer's slots) are added per device from the variables' shapes.

The device's memory is what a run may use: for a GPU, USABLE_GPU_FRACTION of the data sheet's
memory (the CUDA context and cuDNN workspaces take the rest); for the host, USABLE_HOST_FRACTION
of `host_available_bytes()` (MemAvailable of /proc/meminfo, and the address-space limit RLIMIT_AS
less what the process already maps, whichever is smaller) less HOST_OVERHEAD_BYTES.

A batch that fits is extrapolated linearly: the step's live tensors grow with the batch, the
variables do not (`batch_that_fits`).
"""

from __future__ import annotations

import collections
import re
from typing import NamedTuple

import tensorflow as tf
from tensorflow.core.protobuf import device_properties_pb2, meta_graph_pb2
from tensorflow.python.grappler import cluster as grappler_cluster
from tensorflow.python.grappler import item as grappler_item

from ..hardware.host_memory import host_available_bytes  # noqa: F401 (also read from here)
from . import gpu_kernels

tf1 = tf.compat.v1

#: Fraction of a GPU's memory a TensorFlow process gets for tensors (the BFC allocator's
#: region after the CUDA context, cuBLAS/cuDNN handles and workspaces).
USABLE_GPU_FRACTION = 0.90
#: Memory the virtual devices are given: Grappler refuses a graph larger than its device, and
#: the estimate is compared with the real memory afterwards.
_VIRTUAL_MEMORY = 1 << 44
#: Fraction of the host's free memory a run may plan for (the rest: allocator fragmentation and
#: the runtime's own growth while it runs; calibrated against peak RSS in the README).
USABLE_HOST_FRACTION = 0.90
#: Memory the process still grows by outside the graph's tensors once it runs: thread stacks,
#: oneDNN caches (MemAvailable); with an address-space limit, also glibc's per-thread malloc
#: arenas, which reserve address space they may never touch (RLIMIT_AS).
HOST_OVERHEAD_BYTES = {'MemAvailable': 256 << 20, 'RLIMIT_AS': 1 << 30}


class DevicePeak(NamedTuple):
    """Estimated memory of one device, bytes: activations (the step's live tensors at their
    peak, Grappler), variables (resource variables and optimizer slots), total (their sum)."""
    activations: int
    variables: int
    total: int


def _full_name(device: str) -> str:
    """'/device:GPU:0' -> '/job:localhost/replica:0/task:0/device:GPU:0' (a cluster task's
    job and task kept)."""
    spec = tf.DeviceSpec.from_string(device)
    kind, index = gpu_kernels.device_kind_index(device)
    return '/job:%s/replica:%d/task:%d/device:%s:%d' % (
        spec.job or 'localhost', spec.replica or 0, spec.task or 0, kind, index)


def gpu_properties(spec) -> device_properties_pb2.DeviceProperties:
    """DeviceProperties of a gpu_specs.GpuSpec (memory, bandwidth, compute capability)."""
    major, minor = spec.compute_capability.split('.')
    return device_properties_pb2.DeviceProperties(
        type='GPU', vendor='NVIDIA', model=spec.name, frequency=1500, num_cores=80,
        environment={'architecture': major, 'cuda': '12050', 'cudnn': '9000',
                     'compute_capability': '%s.%s' % (major, minor)},
        num_registers=65536, l1_cache_size=128 << 10, l2_cache_size=6 << 20,
        shared_memory_size_per_multiprocessor=96 << 10, memory_size=_VIRTUAL_MEMORY,
        bandwidth=int(spec.bandwidth_gbs * 1e6))  # KB/s


def cpu_properties(memory_bytes: int) -> device_properties_pb2.DeviceProperties:
    """DeviceProperties of the host CPU with `memory_bytes` of memory."""
    return device_properties_pb2.DeviceProperties(
        type='CPU', vendor='GenuineIntel', frequency=2500, num_cores=2,
        l1_cache_size=32 << 10, l2_cache_size=1 << 20, l3_cache_size=32 << 20,
        memory_size=_VIRTUAL_MEMORY, bandwidth=20000000)


def variable_bytes_per_device(graph: tf.Graph) -> dict[str, int]:
    """{short device ('/GPU:0'): bytes of the resource variables placed there} (global and local
    variables, optimizer slots included; shapes must be fully defined, others count 0)."""
    out = collections.Counter()
    for op in graph.get_operations():
        if op.type not in ('VarHandleOp', 'VariableV2'):
            continue
        dtype = tf.dtypes.as_dtype(op.get_attr('dtype'))
        shape = tf.TensorShape(op.get_attr('shape'))
        if not shape.is_fully_defined():
            continue
        out[gpu_kernels.short_device(op.device or '/cpu:0')] += (
            shape.num_elements() * dtype.size)
    return dict(out)


def graph_devices(graph: tf.Graph) -> list[str]:
    """The distinct devices ops of `graph` ask for, full names, sorted; '/CPU:0' always."""
    names = {_full_name('/cpu:0')}
    for op in graph.get_operations():
        if gpu_kernels.device_kind_index(op.device) is not None:
            names.add(_full_name(op.device))
    return sorted(names)


def estimate_peaks(graph: tf.Graph, fetches, *, gpu=None,
                   host_memory: int | None = None) -> dict[str, DevicePeak]:
    """Peak memory of one step of `graph` on each device it uses.

    Args:
      graph: a built tf.Graph (no session needed).
      fetches: ops or tensors one step runs (train op, loss, input step ops).
      gpu: gpu_specs.GpuSpec of every GPU of the graph (None: the graph has no GPU ops).
      host_memory: bytes of the host's memory for the CPU devices (default: available now).

    Returns:
      {short device name ('/GPU:0', '/job:ps/task:0/CPU:0'): DevicePeak}; for a step larger
      than Grappler's virtual device (16 TiB), which it refuses, the activations of the device
      its refusal names, as it states them (`_refused_peaks`), and the variables.

    Raises:
      ValueError: the graph has GPU ops and `gpu` is None.
    """
    host_memory = host_memory or host_available_bytes()[0]
    named = []
    for name in graph_devices(graph):
        if ':GPU:' in name:
            if gpu is None:
                raise ValueError('the graph places ops on %s: give the GPU model' % name)
            props = gpu_properties(gpu)
        else:
            props = cpu_properties(host_memory)
        named.append(device_properties_pb2.NamedDevice(name=name, properties=props))
    meta = meta_graph_pb2.MetaGraphDef(graph_def=graph.as_graph_def())
    fetch_names = []
    for fetch in fetches:
        op = fetch if isinstance(fetch, tf.Operation) else fetch.op
        fetch_names.append(op.name)
    meta.collection_def['train_op'].node_list.value.extend(fetch_names)
    item = grappler_item.Item(meta, ignore_colocation=False)
    cluster = grappler_cluster.Cluster(devices=named)
    try:
        peaks = cluster.DeterminePeakMemoryUsage(item)
    except tf.errors.ResourceExhaustedError as e:
        peaks = _refused_peaks(e)
    finally:
        cluster.Shutdown()
    variables = variable_bytes_per_device(graph)
    out = {}
    for device in {gpu_kernels.short_device(d) for d in peaks} | set(variables):
        full = [d for d in peaks if gpu_kernels.short_device(d) == device]
        activations = int(peaks[full[0]][0]) if full else 0
        var = variables.get(device, 0)
        out[device] = DevicePeak(activations, var, activations + var)
    return out


# Grappler's refusal of a step larger than its virtual device (_VIRTUAL_MEMORY, 16 TiB):
# "Graph requires 123670000000020 bytes of memory on device /job:localhost/replica:0/task:0/
# device:CPU:0 to run  but device only has 17592186044416 available."
_REFUSED = re.compile(r'Graph requires (?P<bytes>\d+) bytes of memory on device (?P<device>\S+) ')


def _refused_peaks(error: tf.errors.ResourceExhaustedError) -> dict:
    """The peaks Grappler states when it refuses a step larger than its virtual device
    (a batch of 10^8 images): {the device's full name: (bytes it requires,)}; the other
    devices' peaks are not known, and this one's alone exceeds any device's memory.

    Raises:
      tf.errors.ResourceExhaustedError: `error` itself, when it is not that refusal.
    """
    found = _REFUSED.search(error.message or str(error))
    if found is None:
        raise error
    return {found['device']: (int(found['bytes']),)}


def is_gpu(device: str) -> bool:
    """True for a GPU's short name: '/GPU:0', '/job:worker/task:1/GPU:0' (a cluster task's);
    False for other devices and for row names that are no device ('host')."""
    if not device.startswith('/'):
        return False
    kind = gpu_kernels.device_kind_index(device)
    return kind is not None and kind[0] == 'GPU'


def task_of(device: str) -> tuple[str, int] | None:
    """('ps', 1) for '/job:ps/task:1/CPU:0'; None for a device of this process ('/GPU:0')."""
    spec = tf.DeviceSpec.from_string(device)
    if not spec.job or spec.job == 'localhost':
        return None
    return spec.job, spec.task or 0


class DeviceGroups(NamedTuple):
    """The devices of a step's peaks grouped by the memory they live in.

    gpus: {short GPU name: DevicePeak}, each GPU on its own (this task's, a cluster worker's
    '/job:worker/task:0/GPU:1' included); host: the CPU devices of this task summed (they share
    the host's memory); ps: {'/job:ps/task:k': DevicePeak} each ps task's CPU (another host's
    memory: the variables it holds, their optimizer slots and accumulators)."""
    gpus: dict
    host: DevicePeak
    ps: dict


def _add(a: DevicePeak, b: DevicePeak) -> DevicePeak:
    return DevicePeak(*(x + y for x, y in zip(a, b)))


def group_devices(peaks: dict) -> DeviceGroups:
    """`peaks` (estimate_peaks) grouped into this task's GPUs, its host and the ps tasks."""
    gpus, ps = {}, {}
    host = DevicePeak(0, 0, 0)
    for device, peak in sorted(peaks.items()):
        task = task_of(device)
        if is_gpu(device):
            gpus[device] = peak
        elif task is not None and task[0] == 'ps':
            name = '/job:ps/task:%d' % task[1]
            ps[name] = _add(ps.get(name, DevicePeak(0, 0, 0)), peak)
        else:
            host = _add(host, peak)
    return DeviceGroups(gpus, host, ps)


class HostMemory(NamedTuple):
    """One reading of this host's memory for a run: available (bytes, `host_available_bytes`:
    MemAvailable, or the address-space limit less what this process maps at the moment of the
    reading) and limit (which of them: 'MemAvailable', 'RLIMIT_AS').

    Under an address-space limit the figure shrinks as the process maps more, and a dry run
    maps more than the run it plans (the step at other batches, Grappler's clusters): the dry
    run reads it once, after building the run's step, where the run's own memory check reads
    it (preflight/memory_check.py), and compares every batch it tries with that reading."""
    available: int
    limit: str

    @property
    def overhead(self) -> int:
        """HOST_OVERHEAD_BYTES of the limit (1 GiB where the limit is not known), bytes."""
        return HOST_OVERHEAD_BYTES.get(self.limit, 1 << 30)

    @property
    def usable(self) -> int:
        """Bytes a run may use: USABLE_HOST_FRACTION of available less the overhead."""
        return max(0, int((self.available - self.overhead) * USABLE_HOST_FRACTION))

    def words(self) -> str:
        """How `usable` is made, for the dry run's host line beside it: '90% of 22.51 GiB
        available (MemAvailable) less 256 MiB' (RLIMIT_AS: what the address-space limit
        leaves, less 1 GiB)."""
        return '%.0f%% of %s available (%s) less %s' % (
            100 * USABLE_HOST_FRACTION, format_bytes(self.available), self.limit,
            format_bytes(self.overhead))


def read_host_memory() -> HostMemory:
    """This host's memory for a run, read now (`host_available_bytes`)."""
    return HostMemory(*host_available_bytes())


def host_memory() -> int:
    """Bytes a run may use on this host, read now: `HostMemory.usable`."""
    return read_host_memory().usable


def host_memory_words() -> str:
    """How `host_memory` is made, read now: `HostMemory.words`."""
    return read_host_memory().words()


def device_memory(device: str, gpu=None, host: HostMemory | None = None) -> int:
    """Bytes a run may use on `device` (short name): USABLE_GPU_FRACTION of the GPU's memory,
    or the host's (`host`'s usable figure, else `host_memory` read now; for a ps task, this
    host's: the plan assumes the ps hosts are alike)."""
    if is_gpu(device):
        return int(gpu.memory_bytes * USABLE_GPU_FRACTION)
    return host.usable if host is not None else host_memory()


#: Ops whose outputs may be made again and again within one step (a loop's frames).
_LOOP_OPS = ('Enter', 'Exit', 'NextIteration', 'While', 'StatelessWhile')
#: Dtypes of no fixed size per element: their tensors' bytes are not known before a step.
_UNSIZED = (tf.string, tf.variant)


def all_tensors_bound(graph: tf.Graph) -> DevicePeak | None:
    """A bound of one step's memory on the host, from the graph alone, without Grappler: every
    output tensor of every op alive at once (activations), plus the variables' bytes
    (`variable_bytes_per_device` summed). Grappler's peak (`estimate_peaks`) is the largest sum
    of the tensors live at one moment, so it is at most this; a step that fits this bound
    fits the estimate too.

    Returns:
      The bound as a DevicePeak, or None where the graph holds a tensor whose bytes are not
      known (a shape not fully defined, a string or variant tensor) or a loop.
    """
    activations = variables = 0
    for op in graph.get_operations():
        if op.type in _LOOP_OPS:
            return None
        if op.type in ('VarHandleOp', 'VariableV2'):
            shape = tf.TensorShape(op.get_attr('shape'))
            if not shape.is_fully_defined():
                return None
            variables += shape.num_elements() * tf.dtypes.as_dtype(op.get_attr('dtype')).size
            continue
        for t in op.outputs:
            if t.dtype == tf.resource:  # a handle: its variable is counted above
                continue
            if t.dtype.base_dtype in _UNSIZED or not t.shape.is_fully_defined():
                return None
            activations += t.shape.num_elements() * t.dtype.size
    return DevicePeak(activations, variables, activations + variables)


def batch_that_fits(batch_size: int, peak: DevicePeak, memory: int) -> int:
    """The largest per-device batch whose estimate fits `memory`, extrapolated linearly from
    one estimate at `batch_size` (activations grow with the batch, variables do not); 0 when
    not even the variables fit."""
    if peak.activations <= 0:
        return batch_size
    per_image = peak.activations / batch_size
    return max(0, int((memory - peak.variables) // per_image))


def format_bytes(n: float) -> str:
    """1536 -> '1.5 KiB', 3 << 30 -> '3.00 GiB'."""
    for unit, shift in (('GiB', 30), ('MiB', 20), ('KiB', 10)):
        if abs(n) >= 1 << shift:
            return '%.*f %s' % (2 if unit == 'GiB' else 1, n / (1 << shift), unit)
    return '%d B' % n
