"""The tensors one step copies between devices, read from a built graph (no session).

A step runs the ops its fetches depend on (inputs and control inputs, backwards from the train
op, the loss and the input pipeline's step ops). Every input of such an op produced on another
device is one copy per step (TensorFlow sends a tensor once to each device that reads it).
Copies are grouped by direction: host->GPU, GPU->host, GPU->GPU, host->host (between the CPUs of
cluster tasks); a CPU device counts as the host. Tensors of at most SCALAR_BYTES (learning rate,
loss, step counters, int32 shapes that GPU kernels keep in host memory) are counted apart, as
`scalars`, and left out of the byte totals and of the budgets.

An NCCL all-reduce (`NcclAllReduce`, one op per GPU of a group of N sharing one `shared_name`)
moves its bytes inside the op, over NCCL's ring: each GPU sends 2(N-1)/N x the tensor's bytes to
the next GPU of the ring and receives as many (N-1 steps of reduce-scatter, N-1 of all-gather,
each a 1/N chunk: NCCL's documentation, "Performance" of nccl-tests, `busbw = algbw x
2(n-1)/n`; Patarasuk and Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
workstations", J. Parallel Distrib. Comput. 69(2), 2009). Each op is counted as one GPU->GPU
transfer of those bytes from its GPU (the destination shown as 'NCCL ring'), so the totals are
the bytes all GPUs send; `collective_bytes_per_gpu` gives one GPU's share.

A functional conditional (`tf.cond`: an If op) is no copy point: the session lowers it to Switch
nodes colocated with each input, and its branches' ops keep their own devices, so its inputs are
not counted at the If op's device.

`budget(...)` is what the design allows per step (see its docstring); `over_budget` compares.
"""

from __future__ import annotations

import collections
from typing import NamedTuple

import tensorflow as tf

from . import gpu_kernels

SCALAR_BYTES = 64
#: NCCL's all-reduce op: its bytes cross the GPUs' links inside the op (see the docstring).
NCCL_ALL_REDUCE = 'NcclAllReduce'
#: The destination shown for an NCCL op's ring transfer.
NCCL_RING = 'NCCL ring'
#: Ops whose inputs stay where they are made (lowered to Switch nodes colocated with them).
_LOWERED_CONDITIONALS = frozenset({'If', 'StatelessIf', 'Case', 'StatelessCase'})


class Transfer(NamedTuple):
    """One tensor copied per step: name ('op:0'), source and destination short devices,
    dtype name, shape (list; None dims unknown), bytes (-1 when the shape is unknown)."""
    tensor: str
    source: str
    destination: str
    dtype: str
    shape: list
    bytes: int


class StepTraffic(NamedTuple):
    """transfers: [Transfer] larger than SCALAR_BYTES; scalars: their count; totals:
    {direction: bytes}; counts: {direction: tensors}."""
    transfers: list
    scalars: int
    totals: dict
    counts: dict


def step_ops(fetches) -> list:
    """Every op one step of `fetches` (ops or tensors) runs, in no particular order."""
    seen, stack = {}, []
    for fetch in fetches:
        op = fetch if isinstance(fetch, tf.Operation) else fetch.op
        stack.append(op)
    while stack:
        op = stack.pop()
        if op.name in seen:
            continue
        seen[op.name] = op
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
    return list(seen.values())


def _is_gpu(device: str) -> bool:
    return gpu_kernels.device_kind_index(device)[0] == 'GPU'


def direction(source: str, destination: str) -> str:
    """'host->GPU', 'GPU->host', 'GPU->GPU' or 'host->host'."""
    return '%s->%s' % ('GPU' if _is_gpu(source) else 'host',
                       'GPU' if _is_gpu(destination) else 'host')


def tensor_bytes(tensor) -> int:
    """Bytes of `tensor` from its static shape; -1 when unknown (a resource handle: 0)."""
    if tensor.dtype in (tf.resource, tf.variant):
        return 0
    if not tensor.shape.is_fully_defined():
        return -1
    return tensor.shape.num_elements() * tensor.dtype.size


def ring_bytes(tensor_bytes: int, group: int) -> float:
    """Bytes one GPU sends (and receives) in a ring all-reduce of `tensor_bytes` over `group`
    GPUs: 2 (group - 1) / group x tensor_bytes (0 for a group of one)."""
    return 2.0 * (group - 1) * tensor_bytes / group if group > 1 else 0.0


def _nccl_transfer(op, device: str) -> Transfer | None:
    """The ring transfer of one NcclAllReduce op (None: an empty tensor or a group of one)."""
    tensor = op.inputs[0]
    size = tensor_bytes(tensor)
    group = op.get_attr('num_devices')
    if group <= 1 or size == 0:
        return None  # (a scalar's all-reduce is counted too: its bytes are the gradients')
    sent = ring_bytes(size, group) if size > 0 else -1
    return Transfer(op.name + ':ring', device, NCCL_RING, tensor.dtype.name,
                    tensor.shape.as_list() if tensor.shape.rank is not None else None, sent)


def collective_bytes_per_gpu(traffic: StepTraffic) -> dict:
    """{GPU device: bytes it sends per step in NCCL all-reduces} (each GPU receives as many)."""
    out = collections.Counter()
    for t in traffic.transfers:
        if t.destination == NCCL_RING:
            out[t.source] += max(t.bytes, 0)
    return dict(out)


def step_traffic(graph: tf.Graph, fetches) -> StepTraffic:
    """The cross-device copies of one step of `fetches` in `graph` (see the module docstring)."""
    placed = gpu_kernels.placed_devices(graph)
    sent = set()
    transfers, scalars = [], 0
    totals, counts = collections.Counter(), collections.Counter()
    for op in step_ops(fetches):
        if op.type in _LOWERED_CONDITIONALS:
            continue
        if op.type == NCCL_ALL_REDUCE:
            ring = _nccl_transfer(op, placed[op.name])
            if ring is not None:
                transfers.append(ring)
                totals['GPU->GPU'] += max(ring.bytes, 0)
                counts['GPU->GPU'] += 1
        destination = placed[op.name]
        for tensor in op.inputs:
            source = placed[tensor.op.name]
            if source == destination or (tensor.name, destination) in sent:
                continue
            sent.add((tensor.name, destination))
            shown = tensor
            if tensor.dtype == tf.resource and op.type == 'ReadVariableOp':
                shown = op.outputs[0]  # a read on another device copies the value
            size = tensor_bytes(shown)
            if size == 0:
                continue
            if 0 < size <= SCALAR_BYTES:
                scalars += 1
                continue
            way = direction(source, destination)
            transfers.append(Transfer(tensor.name, source, destination, shown.dtype.name,
                                      shown.shape.as_list() if shown.shape.rank is not None
                                      else None, size))
            totals[way] += max(size, 0)
            counts[way] += 1
    return StepTraffic(transfers, scalars, dict(totals), dict(counts))


def budget(*, num_towers: int, model_bytes: int, batch_bytes: int, real_data: bool,
           variables_on_host: bool, gpu_reduction: bool, cluster_task: bool = False) -> dict:
    """Bytes per step the design allows in each direction, for towers on GPUs.

    Args:
      num_towers: GPU towers of this task.
      model_bytes: one copy of the model's variables.
      batch_bytes: one device's input batch (images and labels).
      real_data: the batches come from the host (else synthetic: made on the devices).
      variables_on_host: the variables (or the gradient sums: pscpu) live on a host CPU
        (parameter_server on the CPU, a cluster's ps): each tower reads them down and sends
        its gradients up.
      gpu_reduction: variables or gradients move between GPUs (parameter_server on the GPUs,
        replicated all-reduce over GPUs): at most two copies of the model per tower.
      cluster_task: a cluster worker: the variables come from the ps tasks and the summed
        gradients go back, one model each way between the hosts.

    Returns:
      {direction: bytes}: host->GPU one batch per tower (real data) plus the variables per
      tower (variables_on_host); GPU->host the gradients per tower (variables_on_host);
      GPU->GPU two models per tower (gpu_reduction); host->host two models (cluster_task),
      else 0.
    """
    down = num_towers * model_bytes if variables_on_host else 0
    return {
        'host->GPU': (num_towers * batch_bytes if real_data else 0) + down,
        'GPU->host': down,
        'GPU->GPU': 2 * num_towers * model_bytes if gpu_reduction else 0,
        'host->host': 2 * model_bytes if cluster_task else 0,
    }


def over_budget(traffic: StepTraffic, allowed: dict) -> list[str]:
    """One line per direction whose bytes exceed `allowed` (unknown sizes count as over)."""
    from .memory_estimate import format_bytes
    problems = []
    unknown = collections.Counter('GPU->GPU' if t.destination == NCCL_RING
                                  else direction(t.source, t.destination)
                                  for t in traffic.transfers if t.bytes < 0)
    for way, used in sorted(traffic.totals.items()):
        if used > allowed.get(way, 0) or unknown[way]:
            problems.append('%s: %s in %d tensors per step, the design allows %s%s' % (
                way, format_bytes(used), traffic.counts[way], format_bytes(allowed.get(way, 0)),
                ' (%d of unknown size)' % unknown[way] if unknown[way] else ''))
    return problems
