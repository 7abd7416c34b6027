"""Which ops of a graph can run where they are placed: TensorFlow's kernel registry, statically.

The TensorFlow pip wheel is a CUDA build on every host, so its kernel registry lists every GPU
kernel with its dtype constraints even where no GPU is visible. `check_placement(graph)` walks a
built graph (no session) and reports:

  * ops placed on a GPU for which no GPU kernel accepts their dtypes (soft placement would move
    them to the CPU silently and copy their inputs and outputs every step; with soft placement
    off the session fails), with the project function that built each (from `op.traceback`);
  * ops with no device at all, and where TensorFlow's placer would put them;
  * the op count per device.

Device strings are normalised to '/job:.../device:GPU:0' style by `device_kind_index`.
"""

from __future__ import annotations

import collections
import functools
import os
import re
import weakref
from typing import NamedTuple

import tensorflow as tf
from tensorflow.python.framework import kernels

#: Op types that are not kernels (function calls, graph plumbing resolved before placement).
_NOT_KERNELS = frozenset({'PartitionedCall', 'StatefulPartitionedCall', 'If', 'While',
                          'StatelessIf', 'StatelessWhile', 'NoOp'})

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class MisplacedOp(NamedTuple):
    """An op on a GPU without a GPU kernel for its dtypes.

    op_type: e.g. 'RandomUniformInt'; dtypes: its type attrs, e.g. 'T=int64, dtype=int32';
    name: the op's name; device: its device string; origin: 'module.py:123 function' of the
    first frame of the project that built it ('' when none is in the traceback).
    """
    op_type: str
    dtypes: str
    name: str
    device: str
    origin: str


class PlacementReport(NamedTuple):
    """What `check_placement` found.

    ops_per_device: {device ('/GPU:0', '/CPU:0', '(none)'): op count};
    misplaced: [MisplacedOp]; unplaced: {where the placer puts them ('/GPU:0', '/CPU:0'):
    count} for ops with no device; unplaced_examples: up to 5 (op type, name, origin) tuples.
    """
    ops_per_device: dict
    misplaced: list
    unplaced: dict
    unplaced_examples: list


def device_kind_index(device: str) -> tuple[str, int] | None:
    """'/job:worker/task:0/device:GPU:1' or '/gpu:1' -> ('GPU', 1); '' -> None.

    A device string without an index ('/cpu') is index 0.
    """
    if not device:
        return None
    spec = tf.DeviceSpec.from_string(device)
    if not spec.device_type:
        return None
    return spec.device_type.upper(), spec.device_index or 0


def short_device(device: str) -> str:
    """'/job:worker/replica:0/task:1/device:GPU:0' -> '/job:worker/task:1/GPU:0'; '' -> '(none)'."""
    kind = device_kind_index(device)
    if kind is None:
        return '(none)'
    spec = tf.DeviceSpec.from_string(device)
    prefix = ''
    if spec.job and spec.job != 'localhost':
        prefix = '/job:%s/task:%d' % (spec.job, spec.task or 0)
    return '%s/%s:%d' % (prefix, kind[0], kind[1])


def device_order(name: str) -> tuple:
    """The sort key of a device or report row name in natural order: its numbers compare as
    numbers ('/GPU:2' before '/GPU:10', '/job:worker/task:2/GPU:0' before
    '/job:worker/task:10/GPU:0'), the rest as text."""
    return tuple((0, int(part), '') if part.isdigit() else (1, 0, part)
                 for part in re.split(r'(\d+)', name) if part)


@functools.lru_cache(maxsize=None)
def _kernel_constraints(op_type: str, device_type: str) -> tuple | None:
    """The dtype constraints of each `device_type` kernel of `op_type`: a tuple (one per kernel)
    of {attr: frozenset of DataType enums}; None when the op type has no kernel anywhere (a
    function name)."""
    try:
        registered = kernels.get_registered_kernels_for_op(op_type).kernel
    except Exception:  # noqa: BLE001 - an unknown op type (a function) has no kernel list
        return None
    if not registered:
        return None
    found = []
    for kernel in registered:
        # DEFAULT kernels are registered for every device type (int32 constants and resource
        # variable reads on a GPU, with host-memory arguments).
        if kernel.device_type not in (device_type, 'DEFAULT'):
            continue
        found.append({c.name: frozenset(c.allowed_values.list.type) for c in kernel.constraint
                      if c.allowed_values.list.type})
    return tuple(found)


def _type_attrs(op) -> dict:
    """{attr name: [DataType enum, ...]} of the op's type and type-list attrs."""
    out = {}
    attrs = op.node_def.attr  # op.node_def serialises the op each time it is read: once
    for attr in attrs:
        value = attrs[attr]
        if value.HasField('type'):
            out[attr] = [value.type]
        elif value.HasField('list') and value.list.type:
            out[attr] = list(value.list.type)
    return out


def has_kernel(op, device_type: str = 'GPU') -> bool:
    """True when a `device_type` kernel of op.type accepts the op's dtypes (or the op is not a
    kernel: a function call, a NoOp)."""
    if op.type in _NOT_KERNELS:
        return True
    constraints = _kernel_constraints(op.type, device_type)
    if constraints is None:
        return True
    attrs = _type_attrs(op)
    for kernel in constraints:
        if all(all(t in allowed for t in attrs.get(name, ())) for name, allowed in kernel.items()):
            return True
    return False


def describe_dtypes(op) -> str:
    """'T=int64, dtype=int32': the op's type attrs (sorted by name)."""
    parts = []
    for name, types in sorted(_type_attrs(op).items()):
        parts.append('%s=%s' % (name, ','.join(tf.dtypes.as_dtype(t).name for t in types)))
    return ', '.join(parts)


# Modules whose functions make ops on a layer's behalf (models/fast_paths.py: the dense
# layer's matmul, the folded kernels): the origin named is the layer that called them.
_HELPER_MODULES = (os.path.join('models', 'fast_paths.py'),)


def origin(op) -> str:
    """'variable_managers/one_host.py:120 apply_gradients': the innermost frame of the
    project in the op's creation traceback, helpers of _HELPER_MODULES skipped ('' when there
    is none)."""
    try:
        frames = op.traceback
    except Exception:  # noqa: BLE001 - imported graphs have no traceback
        return ''
    for frame in reversed(list(frames or ())):
        filename = os.path.abspath(frame.filename)
        if filename.startswith(_PACKAGE_DIR + os.sep) and '/tests/' not in filename:
            relative = os.path.relpath(filename, _PACKAGE_DIR)
            if relative not in _HELPER_MODULES:
                return '%s:%d %s' % (relative, frame.lineno, frame.name)
    return ''


def _colocated_device(op, graph) -> str:
    """The device of the op this op is colocated with ('' when none)."""
    try:
        groups = op.colocation_groups()
    except Exception:  # noqa: BLE001
        return ''
    for group in groups:
        name = group.decode()[len('loc:@'):] if isinstance(group, bytes) else group[5:]
        if name != op.name:
            try:
                return graph.get_operation_by_name(name).device
            except KeyError:
                continue
    return ''


def _placed_device(op, graph, memo) -> str:
    """The device an op without one gets from the placer's colocation rules: its colocation
    group's, else that of the op producing a resource input (a variable read goes where the
    variable is); '' when neither applies."""
    if op.name in memo:
        return memo[op.name]
    memo[op.name] = ''  # cycles (loops) end here
    device = op.device or _colocated_device(op, graph)
    if not device:
        for tensor in op.inputs:
            if tensor.dtype == tf.resource:
                device = _placed_device(tensor.op, graph, memo)
                if device:
                    break
    memo[op.name] = device
    return device


#: placed_devices of each graph, with the op count it was computed at (the dry run's report
#: asks for it twice: the placement check and the copies per step).
_PLACED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def placed_devices(graph: tf.Graph) -> dict[str, str]:
    """{op name: the short device it runs on ('/GPU:0', '/job:ps/task:0/CPU:0')} for every op:
    its own device, else its colocation group's or resource input's, else where TensorFlow's
    placer prefers (the first GPU when a GPU kernel accepts its dtypes and the graph uses a GPU,
    else the CPU; of the cluster task whose GPUs the graph uses). Computed once per graph
    while it gains no op (a copy is returned)."""
    ops = graph.get_operations()
    cached = _PLACED.get(graph)
    if cached is not None and cached[0] == len(ops):
        return dict(cached[1])
    out = _placed_devices(graph, ops)
    _PLACED[graph] = (len(ops), out)
    return dict(out)


def _placed_devices(graph: tf.Graph, ops: list) -> dict[str, str]:
    on_gpus = [op for op in ops if (device_kind_index(op.device) or ('',))[0] == 'GPU']
    # A cluster task's ops without a device go to its own task ('/job:worker/task:0'): the one
    # whose GPUs the graph uses, where it is one.
    tasks = {short_device(op.device).rpartition('/')[0] for op in on_gpus}
    home = tasks.pop() if len(tasks) == 1 else ''
    memo, out = {}, {}
    for op in ops:
        device = _placed_device(op, graph, memo)
        if device_kind_index(device) is None:
            device = home + ('/GPU:0' if on_gpus and has_kernel(op, 'GPU') else '/CPU:0')
        out[op.name] = short_device(device)
    return out


def check_placement(graph: tf.Graph) -> PlacementReport:
    """The placement report of every op in `graph` (see the module docstring).

    Ops without a device are counted where `placed_devices` puts them; ops that end up on a
    GPU are checked against the GPU kernels either way.
    """
    placed = placed_devices(graph)
    per_device = collections.Counter()
    misplaced, unplaced, examples = [], collections.Counter(), []
    for op in graph.get_operations():
        device = placed[op.name]
        if not op.device:
            unplaced[device] += 1
            per_device['(none)'] += 1
            if len(examples) < 5:
                examples.append((op.type, op.name, origin(op)))
        else:
            per_device[device] += 1
        if device_kind_index(device)[0] == 'GPU' and not has_kernel(op, 'GPU'):
            misplaced.append(MisplacedOp(op.type, describe_dtypes(op), op.name, device,
                                         origin(op)))
    return PlacementReport(dict(per_device), misplaced, dict(unplaced), examples)
