"""Variable managers: where each tower's variables live, and how gradients become updates.

One subclass per `--variable_update`, chosen by `make_variable_mgr`. The graph builder calls the
hooks of a manager in this order (and adding a mode never touches the run loop):

  1. for each tower i:  `with mgr.tower_scope(i):` build the forward pass, loss and gradients.
     The scope sets the variable scope (names), the custom getter (where variables live) and the
     device of the tower's ops.
  2. `mgr.apply_gradients(tower_grads, optimizer, global_step)`: aggregate the towers' (gradient,
     variable) pairs as the mode wants and return the ops that apply them (global step included).
  3. after variable initialisation, run `mgr.post_init_ops()` (e.g. broadcast tower 0's values).
  4. `mgr.savable_variables()` gives the {checkpoint name: variable} map. Checkpoint names never
     depend on the mode or the tower count: the tower prefix ('v/' or 'v<i>/') is dropped, and
     only tower 0's copy is saved.
"""

from __future__ import annotations

import abc
import contextlib

import tensorflow as tf
from tensorflow.python.ops import data_flow_ops

from . import allreduce
from .models import convnet_builder

tf1 = tf.compat.v1

def checkpoint_name(variable_name: str) -> str:
    """'v0/cg/conv0/weights:0' -> 'cg/conv0/weights': the name used in checkpoints."""
    return convnet_builder.without_tower_prefix(variable_name.split(':')[0])


class VariableMgr(abc.ABC):
    """Base of the variable managers.

    Args:
      devices: tower devices, e.g. ['/cpu:0', '/cpu:1'] or ['/gpu:0', ...].
      param_device: device of shared variables and of the global step, e.g. '/cpu:0'.
      params: the run's Params (for mode options such as all-reduce settings).
    """

    #: The --variable_update value this class implements.
    name = ''
    #: True when every tower owns a copy of every variable.
    each_tower_has_variables = False

    def __init__(self, *, devices, param_device, params):
        self.devices = list(devices)
        self.param_device = param_device
        self.params = params
        self._tower_vars: list[list[tf.Variable]] = [[] for _ in self.devices]

    @property
    def num_towers(self) -> int:
        return len(self.devices)

    def _scope_name(self, tower: int) -> str:
        return 'v%d' % tower if self.each_tower_has_variables else 'v'

    def _reuse(self, tower: int) -> bool:
        return tower > 0 and not self.each_tower_has_variables

    def _custom_getter(self, tower: int):
        """Returns a getter creating variables where this mode keeps them; None: tower device."""
        return None

    @contextlib.contextmanager
    def tower_scope(self, tower: int):
        """Variable scope, custom getter and device for building tower `tower`."""
        before = set(tf1.global_variables())
        with tf1.variable_scope(self._scope_name(tower), reuse=self._reuse(tower),
                                custom_getter=self._custom_getter(tower)), \
                tf1.device(self.devices[tower]), tf1.name_scope('tower_%d' % tower):
            yield
        if tower == 0 or self.each_tower_has_variables:
            self._tower_vars[tower] = [v for v in tf1.global_variables() if v not in before]
            # Order as created, so the towers' lists line up one to one.

    def tower_variables(self, tower: int) -> list[tf.Variable]:
        """Variables (trainable and batch-norm statistics) created for `tower`; for shared-variable
        modes, tower 0's list serves every tower."""
        return self._tower_vars[tower if self.each_tower_has_variables else 0]

    def trainable_variables(self, tower: int) -> list[tf.Variable]:
        """The trainable variables tower `tower` reads, in creation order."""
        trainable = {id(v) for v in tf1.trainable_variables()}
        return [v for v in self.tower_variables(tower) if id(v) in trainable]

    def gradient_sources(self, tower: int) -> list:
        """The tensors tower `tower` read for its trainable variables, in the order of
        `trainable_variables(tower)`: what to differentiate the loss by. Usually the variables
        themselves; staged copies with --staged_vars."""
        return self.trainable_variables(tower)

    def step_ops(self) -> list:
        """Ops to run with every training step besides the apply ops (e.g. staging puts)."""
        return []

    @abc.abstractmethod
    def apply_gradients(self, tower_grads, optimizer, global_step):
        """Aggregates the towers' gradients and returns the ops applying them.

        Args:
          tower_grads: for each tower, a list of (gradient, variable) pairs over
            `trainable_variables(tower)`, gradients of the tower's loss (already divided by the
            number of towers, so a plain sum over towers is the average).
          optimizer: a tf.compat.v1.train.Optimizer.
          global_step: the int64 global step variable; the returned ops increment it once.

        Returns:
          A list of ops; running all of them performs one training step.
        """

    def post_init_ops(self) -> list:
        """Ops to run once after variable initialisation (or restore)."""
        return []

    def savable_variables(self) -> dict[str, tf.Variable]:
        """{checkpoint name: variable} over tower 0's variables (plus the global step)."""
        names = {checkpoint_name(v.name): v for v in self.tower_variables(0)}
        names['global_step'] = tf1.train.get_global_step()
        return names


def sum_towers(grads_and_vars_per_tower, device) -> list:
    """Sums gradient j over towers on `device` (None: on variable j's own device, so that
    variables spread over GPUs are not summed through the host); returns
    [(sum_j, tower-0 variable j)]."""
    summed = []
    for pairs in zip(*grads_and_vars_per_tower):
        grads = [g for g, _ in pairs]
        with tf1.device(device or pairs[0][1].device):
            summed.append((tf.add_n(grads) if len(grads) > 1 else grads[0], pairs[0][1]))
    return summed


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
    L(w0), L(w0), L(w1), L(w2'), ... With --variable_consistency=relaxed the put and the update
    are not ordered, so a step may see values zero or one update old.
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
        strong = self.params.variable_consistency == 'strong'
        deps = self._puts() if strong else []
        with tf1.device(self.param_device), tf.control_dependencies(deps):
            return [optimizer.apply_gradients(summed, global_step=global_step)]


class VariableMgrIndependent(VariableMgr):
    """`independent`: every tower owns its variables and updates them alone (no communication).

    The towers train separate models; the images/sec are the ceiling of multi-device scaling.
    The reported loss is the mean of the towers' losses.
    """

    name = 'independent'
    each_tower_has_variables = True

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
    """

    name = 'replicated'
    each_tower_has_variables = True

    def _all_reduce(self, grads_per_tower):
        """Returns, per tower, the list of summed gradients placed on that tower's device."""
        p = self.params
        spec = allreduce.parse_all_reduce_spec(p.all_reduce_spec) if p.all_reduce_spec else None
        return allreduce.all_reduce_gradients(
            grads_per_tower, self.devices, spec, num_packs=p.gradient_repacking,
            agg_small_grads_max_bytes=p.agg_small_grads_max_bytes,
            agg_small_grads_max_group=p.agg_small_grads_max_group,
            hierarchical_copy=p.hierarchical_copy, use_nccl=p.use_nccl)

    def apply_gradients(self, tower_grads, optimizer, global_step):
        grads_per_tower = [[g for g, _ in pairs] for pairs in tower_grads]
        reduced = self._all_reduce(grads_per_tower)
        ops = []
        for tower, pairs in enumerate(tower_grads):
            with tf1.device(self.devices[tower]):
                ops.append(optimizer.apply_gradients(
                    [(g, v) for g, (_, v) in zip(reduced[tower], pairs)]))
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
        return ops


_MANAGERS = {cls.name: cls for cls in (VariableMgrLocalParameterServer, VariableMgrReplicated,
                                       VariableMgrIndependent)}


def make_variable_mgr(params, devices, param_device='/cpu:0') -> VariableMgr:
    """Returns the manager of `params.variable_update` for a single-host run (a cluster task's
    comes from cluster/variable_mgrs.py's `make_cluster_variable_mgr`).

    Raises:
      ValueError: the mode is unknown or needs a cluster; the message lists the valid names.
    """
    cls = _MANAGERS.get(params.variable_update)
    if cls is None:
        raise ValueError('--variable_update=%r is not available here; valid on one host: %s'
                         % (params.variable_update, ', '.join(sorted(_MANAGERS))))
    return cls(devices=devices, param_device=param_device, params=params)
