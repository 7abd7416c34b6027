"""Gradient all-reduce across the towers of one or more hosts, as pure graph-building functions.

This module owns how the `replicated` variable manager (and the multi-host all-reduce modes built
on it) sums gradients across devices: the `--all_reduce_spec` mini-language, the algorithms, and
the re-grouping of gradients before the all-reduce (`--gradient_repacking`,
`--agg_small_grads_max_bytes`). It builds graph ops only; it creates no variables and no session.

Algorithms
----------
* ``pscpu``: every tower's tensor is summed with one `add_n` on the host CPU, then each device
  reads the total (parameter-server-style central accumulation, the "accumulate the total on a
  single device and copy it back" scheme of the TensorFlow performance guide).
* ``psgpu``: the same, but each tensor (or shard) is summed on one of the towers' own devices,
  chosen least-loaded by bytes, so the summing work is spread over the devices.
* ``xring``: ring all-reduce (Patarasuk & Yuan, "Bandwidth optimal all-reduce algorithms for
  clusters of workstations", JPDC 2009; popularised for deep learning by Baidu's ring all-reduce,
  Gibiansky 2017). Each tensor is cut into one chunk per device; n-1 reduce-scatter steps pass
  partial sums to the next device in the ring, then n-1 all-gather steps pass the finished chunks
  on, so each device sends and receives only to and from its neighbours.
* ``nccl``: NVIDIA NCCL through `tensorflow.python.ops.nccl_ops.all_sum` (GPU devices only).
* ``A/B`` (hierarchical, two levels; cf. the hierarchical all-reduce of Jia et al., "Highly
  scalable deep learning training system with mixed-precision", 2018): the devices are split into
  groups (one group per host task when the devices span several tasks, otherwise the first and the
  second half of the list); algorithm A sums within each group, algorithm B sums the group totals
  across groups, and every device reads its group's copy of the total. ``--hierarchical_copy``
  (made for 8-GPU hosts whose NVLink topology is two fully connected groups of 4) is
  ``psgpu/psgpu``.

The spec grammar (``--all_reduce_spec``) and its parser are in allreduce_spec.py.
"""

from __future__ import annotations

from typing import Sequence

import tensorflow as tf

from .allreduce_plans import (  # noqa: F401  (re-exported for callers and tests)
    PackPlan,
    device_groups,
    make_pack_plans,
    make_small_grad_plans,
    pack_segments,
    ring_schedule,
    split_sizes,
)
from .allreduce_spec import (  # noqa: F401  (re-exported for callers and tests)
    ALGORITHMS,
    AllReduceSpecTuple,
    parse_all_reduce_spec,
)
from .grad_transfer import GradientTransfer

tf1 = tf.compat.v1

_PS_ALGORITHMS = ('pscpu', 'psgpu')


def select_spec(spec_tuples: Sequence[AllReduceSpecTuple], num_bytes: int) -> AllReduceSpecTuple:
    """Returns the first entry whose limit exceeds `num_bytes` (the last entry has no limit)."""
    for entry in spec_tuples:
        if entry.limit_bytes is None or num_bytes < entry.limit_bytes:
            return entry
    return spec_tuples[-1]


def _canonical(device: str) -> str:
    return tf.DeviceSpec.from_string(device).to_string()


def _cpu_of(device: str) -> str:
    """The CPU of the host task that owns `device`, e.g. '/job:w/task:1/gpu:0' -> '.../CPU:0'."""
    return tf.DeviceSpec.from_string(device).replace(device_type='CPU', device_index=0).to_string()


# Algorithms on one piece. Each takes one tensor per device (same shape and dtype, tensors[i] on
# devices[i]) and returns one total per device, placed on that device.


class _Context:
    """State of one all_reduce_gradients call: bytes summed on each device so far (psgpu),
    and the xring ring's order of the device indices (None: the devices' order)."""

    def __init__(self, ring_order: Sequence[int] | None = None):
        self.load_bytes: dict[str, int] = {}
        self.ring_order = list(ring_order) if ring_order else None

    def ring_positions(self, devices: Sequence[str]) -> list[int]:
        """Positions of `devices` in ring order: the device indices (the N of '/gpu:N') that
        ring_order lists first, in its order, then the others as given."""
        if not self.ring_order:
            return list(range(len(devices)))
        rank = {index: r for r, index in enumerate(self.ring_order)}
        indices = [tf.DeviceSpec.from_string(d).device_index for d in devices]
        return sorted(range(len(devices)),
                      key=lambda i: (rank.get(indices[i], len(rank)), i))

    def least_loaded(self, devices: Sequence[str], num_bytes: int) -> str:
        keys = [_canonical(d) for d in devices]
        best = min(range(len(devices)), key=lambda i: self.load_bytes.get(keys[i], 0))
        self.load_bytes[keys[best]] = self.load_bytes.get(keys[best], 0) + num_bytes
        return devices[best]


def num_bytes(shape, dtype=None) -> int:
    """Bytes of a dense tensor of `shape` (list or TensorShape, fully defined) and `dtype`
    (default float32)."""
    size = 1
    for dim in tf.TensorShape(shape).as_list():
        size *= int(dim)
    return size * tf.as_dtype(dtype or tf.float32).size


def _flat(tensor: tf.Tensor) -> tf.Tensor:
    return tensor if tensor.shape.rank == 1 else tf.reshape(tensor, [-1])


def _broadcast(total: tf.Tensor, devices: Sequence[str]) -> list[tf.Tensor]:
    """One copy of `total` per device (the tensor itself where it already lives)."""
    outputs = []
    for device in devices:
        if _canonical(total.device) == _canonical(device):
            outputs.append(total)
        else:
            with tf1.device(device):
                outputs.append(tf.identity(total))
    return outputs


def _ps_reduce(alg: str, tensors: Sequence[tf.Tensor], devices: Sequence[str],
               ctx: _Context) -> tf.Tensor:
    """Sums on the CPU of devices[0] (pscpu) or on the least-loaded of `devices` (psgpu)."""
    if alg == 'pscpu':
        device = _cpu_of(devices[0])
    else:
        device = ctx.least_loaded(devices, num_bytes(tensors[0].shape, tensors[0].dtype))
    with tf1.device(device):
        return tf.add_n(list(tensors))


def _ring(tensors: Sequence[tf.Tensor], devices: Sequence[str]) -> list[tf.Tensor]:
    """Ring all-reduce (reduce-scatter then all-gather), see ring_schedule."""
    n = len(devices)
    if n == 1:
        return list(tensors)
    shape = tensors[0].shape
    sizes = split_sizes(shape.num_elements(), n)
    chunks = []
    for tensor, device in zip(tensors, devices, strict=True):
        with tf1.device(device):
            chunks.append(tf.split(_flat(tensor), sizes))
    reduce_steps, gather_steps = ring_schedule(n)
    for step in reduce_steps:
        for src, dst, c in step:
            with tf1.device(devices[dst]):
                chunks[dst][c] = tf.add(chunks[src][c], chunks[dst][c])
    for step in gather_steps:
        for src, dst, c in step:
            with tf1.device(devices[dst]):
                chunks[dst][c] = tf.identity(chunks[src][c])
    outputs = []
    for i, device in enumerate(devices):
        with tf1.device(device):
            flat = tf.concat(chunks[i], 0)
            outputs.append(tf.reshape(flat, shape) if shape.rank != 1 else flat)
    return outputs


def _check_nccl_devices(devices: Sequence[str]) -> None:
    for device in devices:
        if tf.DeviceSpec.from_string(device).device_type != 'GPU':
            raise ValueError('nccl all-reduce needs GPU devices (NCCL has no CPU kernels). '
                             'Received: device %r among %s; use pscpu, psgpu or xring instead.'
                             % (device, list(devices)))


def _nccl(tensors: Sequence[tf.Tensor], devices: Sequence[str]) -> list[tf.Tensor]:
    from tensorflow.python.ops import nccl_ops  # GPU-only op library; imported when used.

    _check_nccl_devices(devices)
    placed = []
    for tensor, device in zip(tensors, devices, strict=True):
        with tf1.device(device):
            placed.append(tf.identity(tensor) if _canonical(tensor.device) != _canonical(device)
                          else tensor)
    return nccl_ops.all_sum(placed)


def _flat_all_reduce(alg: str, tensors, devices, ctx: _Context, shard: int) -> list[tf.Tensor]:
    """All-reduce with one non-hierarchical algorithm; shard picks the ring direction."""
    if alg in _PS_ALGORITHMS:
        return _broadcast(_ps_reduce(alg, tensors, devices, ctx), devices)
    if alg == 'nccl':
        return _nccl(tensors, devices)
    order = ctx.ring_positions(devices)
    if shard % 2:
        order = order[::-1]
    ring = _ring([tensors[i] for i in order], [devices[i] for i in order])
    outputs = [None] * len(devices)
    for position, total in zip(order, ring, strict=True):
        outputs[position] = total
    return outputs


def _hierarchical(inner: str, outer: str, tensors, devices, ctx: _Context,
                  shard: int) -> list[tf.Tensor]:
    """Two-level all-reduce: `inner` within each device group, `outer` across the groups."""
    groups = device_groups(devices)
    sums, sum_devices = [], []  # one group total per group, and where it lives
    for group in groups:
        g_tensors = [tensors[i] for i in group]
        g_devices = [devices[i] for i in group]
        if inner in _PS_ALGORITHMS:
            sums.append(_ps_reduce(inner, g_tensors, g_devices, ctx))
            sum_devices.append(sums[-1].device)
        else:
            leader = shard % len(group)
            sums.append(_flat_all_reduce(inner, g_tensors, g_devices, ctx, shard)[leader])
            sum_devices.append(g_devices[leader])
    if outer in _PS_ALGORITHMS:
        return _broadcast(_ps_reduce(outer, sums, sum_devices, ctx), devices)
    outputs = [None] * len(devices)
    totals = _flat_all_reduce(outer, sums, sum_devices, ctx, shard)
    for group, total in zip(groups, totals, strict=True):
        for i in group:
            outputs[i] = _broadcast(total, [devices[i]])[0]
    return outputs


def _reduce_piece(entry: AllReduceSpecTuple, tensors, devices, ctx: _Context) -> list[tf.Tensor]:
    """All-reduces one piece with one spec entry, cutting it into entry.shards shards."""
    inner, _, outer = entry.alg.partition('/')
    run = (lambda ts, shard: _hierarchical(inner, outer, ts, devices, ctx, shard)) if outer \
        else (lambda ts, shard: _flat_all_reduce(inner, ts, devices, ctx, shard))
    shape = tensors[0].shape
    num_shards = min(entry.shards, shape.num_elements())
    if num_shards <= 1:
        return run(list(tensors), 0)
    sizes = split_sizes(shape.num_elements(), num_shards)
    shards = []
    for tensor, device in zip(tensors, devices, strict=True):
        with tf1.device(device):
            shards.append(tf.split(_flat(tensor), sizes))
    per_shard = [run([s[k] for s in shards], k) for k in range(num_shards)]
    outputs = []
    for i, device in enumerate(devices):
        with tf1.device(device):
            flat = tf.concat([r[i] for r in per_shard], 0)
            outputs.append(flat if shape.rank == 1 else tf.reshape(flat, shape))
    return outputs


# The entry point.


def _check_inputs(tower_grads, devices) -> list[int]:
    """Validates the towers' gradient lists; returns the indices of non-None gradients."""
    if not devices or len(tower_grads) != len(devices):
        raise ValueError('all_reduce_gradients needs one gradient list per device. Received: %d '
                         'lists for %d devices.' % (len(tower_grads), len(devices)))
    count = len(tower_grads[0])
    if any(len(g) != count for g in tower_grads):
        raise ValueError('every tower must have the same number of gradients. Received: %s'
                         % [len(g) for g in tower_grads])
    present = []
    for j in range(count):
        column = [g[j] for g in tower_grads]
        if all(t is None for t in column):
            continue
        if any(t is None for t in column):
            raise ValueError('gradient %d is None on some towers only.' % j)
        first = column[0]
        if not first.shape.is_fully_defined():
            raise ValueError('gradient %d (%s) needs a fully defined shape to be all-reduced. '
                             'Received: %s' % (j, first.name, first.shape))
        for t in column[1:]:
            if t.shape != first.shape or t.dtype != first.dtype:
                raise ValueError('gradient %d differs across towers: %s %s vs %s %s.'
                                 % (j, first.shape, first.dtype.name, t.shape, t.dtype.name))
        present.append(j)
    return present


def _make_plans(grads: Sequence[tf.Tensor], num_packs: int, max_bytes: int,
                max_group: int) -> list[PackPlan]:
    sizes = [g.shape.num_elements() for g in grads]
    dtypes = [g.dtype for g in grads]
    if num_packs > 0:
        return make_pack_plans(sizes, dtypes, num_packs)
    if max_bytes > 0:
        grad_bytes = [num_bytes(g.shape, g.dtype) for g in grads]
        return make_small_grad_plans(sizes, grad_bytes, dtypes, max_bytes, max_group)
    return [PackPlan((j,), (sizes[j],)) for j in range(len(grads))]


def _pack(plan: PackPlan, grads: Sequence[tf.Tensor], device: str) -> list[tf.Tensor]:
    """The pieces of one plan on one device (the gradient itself for a trivial plan).

    Only the gradients that straddle a piece boundary are split; every piece is one concat.
    """
    if len(plan.indices) == 1 and len(plan.piece_sizes) == 1:
        return [grads[plan.indices[0]]]
    segments = pack_segments([grads[j].shape.num_elements() for j in plan.indices],
                             plan.piece_sizes)
    lengths: dict[int, list[int]] = {}
    for piece in segments:
        for k, length in piece:
            lengths.setdefault(k, []).append(length)
    with tf1.device(device):
        parts = {k: (tf.split(_flat(grads[plan.indices[k]]), ls) if len(ls) > 1
                     else [_flat(grads[plan.indices[k]])]) for k, ls in lengths.items()}
        pieces = []
        for piece in segments:
            tensors = [parts[k].pop(0) for k, _ in piece]
            pieces.append(tf.concat(tensors, 0) if len(tensors) > 1 else tensors[0])
    return pieces


def _unpack(plan: PackPlan, pieces: Sequence[tf.Tensor], shapes, device: str) -> list[tf.Tensor]:
    """Inverse of _pack on one device: the plan's gradients in their shapes, in index order."""
    if len(plan.indices) == 1 and len(plan.piece_sizes) == 1:
        return [pieces[0]]
    segments = pack_segments([shapes[j].num_elements() for j in plan.indices], plan.piece_sizes)
    parts: list[list[tf.Tensor]] = [[] for _ in plan.indices]
    with tf1.device(device):
        for piece, segs in zip(pieces, segments, strict=True):
            split = tf.split(piece, [n for _, n in segs]) if len(segs) > 1 else [piece]
            for (k, _), part in zip(segs, split, strict=True):
                parts[k].append(part)
        grads = []
        for k, j in enumerate(plan.indices):
            flat = tf.concat(parts[k], 0) if len(parts[k]) > 1 else parts[k][0]
            grads.append(flat if shapes[j].rank == 1 else tf.reshape(flat, shapes[j]))
    return grads


def all_reduce_gradients(tower_grads: Sequence[Sequence[tf.Tensor | None]],
                         devices: Sequence[str],
                         spec_tuples: Sequence[AllReduceSpecTuple] | None = None, *,
                         num_packs: int = 0, agg_small_grads_max_bytes: int = 0,
                         agg_small_grads_max_group: int = 10, hierarchical_copy: bool = False,
                         use_nccl: bool = False, transfer: GradientTransfer | None = None,
                         ring_order: Sequence[int] | None = None
                         ) -> list[list[tf.Tensor | None]]:
    """Sums each gradient over the towers, leaving one copy of every sum on every tower's device.

    Args:
      tower_grads: tower_grads[i][j] is gradient j of tower i, a dense tensor on devices[i];
        gradient j has the same fully defined shape and dtype on every tower. A gradient may be
        None on every tower (it stays None).
      devices: one device string per tower, e.g. ['/gpu:0', '/gpu:1'] or ['/cpu:0', '/cpu:1'].
      spec_tuples: parse_all_reduce_spec's result; None or empty for the default all-reduce (sum
        on devices[0], copied back) or, with use_nccl, NCCL for every tensor.
      num_packs: `--gradient_repacking`: if > 0, all gradients of one dtype are flattened,
        concatenated and cut into this many packs before the all-reduce, and restored after.
      agg_small_grads_max_bytes: if > 0, gradients smaller than this many bytes are concatenated
        in groups of at most agg_small_grads_max_group before the all-reduce.
      agg_small_grads_max_group: see above (>= 1).
      hierarchical_copy: sum within two halves of the devices, then across (for the default
        all-reduce only; equivalent to the spec 'psgpu/psgpu').
      use_nccl: all-reduce every tensor with NCCL (GPU devices only; no spec allowed).
      transfer: a grad_transfer.GradientTransfer, or None: what each device's pieces go
        through before the all-reduce (float16 compaction, a one-step deferral) and after it
        (the cast back). With deferral the pieces go through it on one device too.
      ring_order: --gpu_indices on one host, e.g. [1, 0, 3, 2]: the xring rings visit the
        devices whose index (the N of '/gpu:N') it lists first, in its order, then the others;
        None: the order of `devices`.

    Returns:
      out[i][j]: the sum over towers of gradient j, same shape and dtype, placed on devices[i]
      (one algorithm per piece chosen by size with select_spec; pieces of the same gradient are
      summed in the same order on every device, so the copies are bitwise identical).

    Raises:
      ValueError: mismatched towers or shapes; num_packs together with agg_small_grads_max_bytes;
        use_nccl or hierarchical_copy together with spec_tuples; nccl with a non-GPU device.
    """
    present = _check_inputs(tower_grads, devices)
    if num_packs > 0 and agg_small_grads_max_bytes > 0:
        raise ValueError('gradient repacking (num_packs=%d) and small-gradient aggregation '
                         '(agg_small_grads_max_bytes=%d) exclude each other; use one.'
                         % (num_packs, agg_small_grads_max_bytes))
    if spec_tuples and (use_nccl or hierarchical_copy):
        raise ValueError('use_nccl and hierarchical_copy choose the default all-reduce and '
                         'exclude an all_reduce_spec; write "nccl" or "psgpu/psgpu" in the spec '
                         'instead.')
    if any('nccl' in entry.alg for entry in spec_tuples or ()) or use_nccl:
        _check_nccl_devices(devices)
    if not spec_tuples:
        if use_nccl:
            spec_tuples = [AllReduceSpecTuple('nccl', 1, None)]
        elif hierarchical_copy:
            spec_tuples = [AllReduceSpecTuple('psgpu/psgpu', 1, None)]
    outputs = [list(g) for g in tower_grads]
    if not present or (len(devices) == 1 and not (transfer and transfer.defer)):
        return outputs
    grads = [[g[j] for j in present] for g in tower_grads]
    shapes = [g.shape for g in grads[0]]
    ctx = _Context(ring_order)
    plans = _make_plans(grads[0], num_packs, agg_small_grads_max_bytes, agg_small_grads_max_group)
    for plan in plans:
        packed = [_pack(plan, g, d) for g, d in zip(grads, devices, strict=True)]
        dtypes = [piece.dtype for piece in packed[0]]
        if transfer:
            packed = [[transfer.send(piece, d) for piece in p]
                      for p, d in zip(packed, devices, strict=True)]
        reduced = [[] for _ in devices]
        for k in range(len(packed[0])):
            pieces = [p[k] for p in packed]
            if len(devices) == 1:
                totals = pieces
            elif spec_tuples:
                entry = select_spec(spec_tuples, num_bytes(pieces[0].shape, pieces[0].dtype))
                totals = _reduce_piece(entry, pieces, devices, ctx)
            else:
                with tf1.device(devices[0]):
                    totals = _broadcast(tf.add_n(pieces), devices)
            for i, total in enumerate(totals):
                reduced[i].append(GradientTransfer.receive(total, dtypes[k], devices[i])
                                  if transfer else total)
        for i, device in enumerate(devices):
            grads_i = _unpack(plan, reduced[i], shapes, device)
            for j, grad in zip(plan.indices, grads_i, strict=True):
                outputs[i][present[j]] = grad
    return outputs
