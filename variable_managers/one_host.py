"""The one-host variable managers: `parameter_server`, `replicated` and `independent`.

Each subclasses base.VariableMgr (whose docstring gives the order its hooks run in); the root
variable_mgr.py chooses one by --variable_update. `replicated` sums the gradients with
allreduce.py.
"""

from __future__ import annotations

import tensorflow as tf
from tensorflow.python.ops import data_flow_ops

from . import allreduce, grad_transfer
from .base import VariableMgr, sum_towers

tf1 = tf.compat.v1


class VariableMgrLocalParameterServer(VariableMgr):
    """`parameter_server` on one host: one copy of each variable on `--local_parameter_device`.

    Every tower reads the shared copy; the towers' gradients are summed on the parameter device
    and applied once. With --local_parameter_device=gpu the variables are spread over the tower
    devices, largest first onto the least loaded device (greedy by bytes).

    With --staged_vars each tower reads its trainable variables through a StagingArea on its own
    device: every step takes the values put by the previous step and puts the current values for
    the next, so the parameter copy overlaps with compute. The values a step reads are one update
    old (the put of step t reads the variables before step t's update), which makes this
    one-step-stale SGD, a different algorithm from plain SGD: with a fixed batch the losses are
    L(w0), L(w0), L(w1), L(w2'), ... The update waits for the puts whatever
    --variable_consistency says (the original ignored it with --staged_vars; relaxed acts in
    `replicated` only, grad_transfer.py).
    """

    name = 'parameter_server'

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._load = {d: 0 for d in self.devices}
        # Per tower: [(variable, staged tensor, put op)] in creation order.
        self._staged: list[list[tuple]] = [[] for _ in self.devices]

    def _variable_device(self, shape) -> str:
        if self.params.local_parameter_device != 'gpu':
            return self.param_device
        device = min(self.devices, key=lambda d: self._load[d])
        size = 1
        for dim in shape or []:
            size *= int(dim)
        self._load[device] += size
        return device

    def _custom_getter(self, tower):
        def getter(getter, *args, **kwargs):
            if tower == 0:
                with tf1.device(self._variable_device(kwargs.get('shape'))):
                    var = getter(*args, **kwargs)
            else:
                var = getter(*args, **kwargs)  # reuse: tower 0 created it
            if not self.params.staged_vars or not kwargs.get('trainable', True):
                return var
            with tf1.device(self.devices[tower]):
                area = data_flow_ops.StagingArea([var.dtype.base_dtype], shapes=[var.shape])
                put = area.put([var.read_value()])
                staged = area.get()[0]
            self._staged[tower].append((var, staged, put))
            return staged
        return getter

    def gradient_sources(self, tower):
        if not self.params.staged_vars:
            return super().gradient_sources(tower)
        by_var = {id(var): staged for var, staged, _ in self._staged[tower]}
        return [by_var[id(v)] for v in self.trainable_variables(tower)]

    def _puts(self):
        return [put for staged in self._staged for _, _, put in staged]

    def post_init_ops(self):
        return self._puts()  # primes every staging area with the initial values

    def step_ops(self):
        return self._puts()

    def apply_gradients(self, tower_grads, optimizer, global_step):
        on_gpus = self.params.local_parameter_device == 'gpu'
        summed = sum_towers(tower_grads, None if on_gpus else self.param_device)
        with tf1.device(self.param_device), tf.control_dependencies(self._puts()):
            return [optimizer.apply_gradients(summed, global_step=global_step)]


class VariableMgrIndependent(VariableMgr):
    """`independent`: every tower owns its variables and updates them alone (no communication).

    The towers train separate models; the images/sec are the ceiling of multi-device scaling.
    The reported loss is the mean of the towers' losses. A checkpoint keeps every tower's copy
    (base.VariableMgr.tower_copies), so a resumed run continues each tower's own training.
    """

    name = 'independent'
    each_tower_has_variables = True
    towers_train_apart = True

    def apply_gradients(self, tower_grads, optimizer, global_step):
        ops = []
        for tower, pairs in enumerate(tower_grads):
            # Each tower's gradient was divided by the tower count; undo it so every tower takes
            # a plain step on its own batch.
            scale = float(self.num_towers)
            with tf1.device(self.devices[tower]):
                scaled = [(g * scale if scale != 1 else g, v) for g, v in pairs]
                ops.append(optimizer.apply_gradients(scaled))
        with tf1.device(self.param_device), tf.control_dependencies(ops):
            ops.append(tf1.assign_add(global_step, 1))
        return ops


class VariableMgrReplicated(VariableMgr):
    """`replicated`: a copy of every variable on every device, kept identical.

    Tower 0's initial values are broadcast after initialisation; the gradients are summed across
    devices by an all-reduce (allreduce.py; default: sum on one device and copy back) and every
    device applies the same update to its own copy.

    Around the all-reduce (grad_transfer.py): with --use_fp16 the pieces move as float16
    (--compact_gradient_transfer); with --variable_consistency=relaxed every device's pieces
    are deferred by one step, so step t applies the gradients of step t-1 (step 1: zeros).
    """

    name = 'replicated'
    each_tower_has_variables = True

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._transfer = grad_transfer.GradientTransfer(
            compact=grad_transfer.compacts_gradients(self.params, self.num_towers),
            defer=grad_transfer.defers_gradients(self.params))

    def _all_reduce(self, grads_per_tower):
        """Returns, per tower, the list of summed gradients placed on that tower's device."""
        p = self.params
        spec = allreduce.parse_all_reduce_spec(p.all_reduce_spec) if p.all_reduce_spec else None
        return allreduce.all_reduce_gradients(
            grads_per_tower, self.devices, spec, num_packs=p.gradient_repacking,
            agg_small_grads_max_bytes=p.agg_small_grads_max_bytes,
            agg_small_grads_max_group=p.agg_small_grads_max_group,
            hierarchical_copy=p.hierarchical_copy, use_nccl=p.use_nccl,
            transfer=self._transfer, ring_order=self._ring_order())

    def _ring_order(self) -> list[int] | None:
        """--gpu_indices as the xring ring's order, on one host's GPUs (as the original's)."""
        p = self.params
        on_gpus = all('gpu' in d.lower() for d in self.devices)
        if not (p.gpu_indices and on_gpus and self.name == 'replicated'):
            return None
        return [int(i) for i in p.gpu_indices.split(',')]

    def reduce_gradients(self, tower_grads):
        """Every tower's pairs with the all-reduced sums (deferred with relaxed)."""
        reduced = self._all_reduce([[g for g, _ in pairs] for pairs in tower_grads])
        return [[(g, v) for g, (_, v) in zip(sums, pairs, strict=True)]
                for sums, pairs in zip(reduced, tower_grads, strict=True)]

    def apply_gradients(self, tower_grads, optimizer, global_step):
        ops = []
        for tower, pairs in enumerate(tower_grads):  # the sums of reduce_gradients
            with tf1.device(self.devices[tower]):
                ops.append(optimizer.apply_gradients(pairs))
        with tf1.device(self.param_device), tf.control_dependencies(ops):
            ops.append(tf1.assign_add(global_step, 1))
        return ops

    def post_init_ops(self):
        ops = []
        source = self.tower_variables(0)
        for tower in range(1, self.num_towers):
            for src, dst in zip(source, self.tower_variables(tower)):
                with tf1.device(self.devices[tower]):
                    ops.append(dst.assign(src.read_value()))
        # The zero pieces of the deferred all-reduce: after the broadcast, once per run.
        return ops + self._transfer.warmup_ops


MANAGERS = {cls.name: cls for cls in (VariableMgrLocalParameterServer, VariableMgrReplicated,
                                      VariableMgrIndependent)}
