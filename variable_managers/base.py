"""The `VariableMgr` base every variable manager subclasses, and the helpers they share.

The graph builder calls the hooks of a manager in this order (and adding a mode never touches
the run loop):

  1. for each tower i:  `with mgr.tower_scope(i):` build the forward pass, loss and gradients.
     The scope sets the variable scope (names), the custom getter (where variables live) and the
     device of the tower's ops.
  2. `mgr.reduce_gradients(tower_grads)`: the towers' (gradient, variable) pairs as they are to
     be applied, before automatic loss scaling checks them (replicated: all-reduced, and with
     --variable_consistency=relaxed deferred by one step; other modes: unchanged).
  3. `mgr.apply_gradients(tower_grads, optimizer, global_step)`: aggregate step 2's pairs as the
     mode wants and return the ops that apply them (global step included).
  4. after variable initialisation, run `mgr.post_init_ops()` (e.g. broadcast tower 0's values).
  5. `mgr.savable_variables()` gives the {checkpoint name: variable} map. Checkpoint names never
     depend on the mode or the tower count: the tower prefix ('v/' or 'v<i>/') is dropped, and
     tower 0's copy is saved under them. Where the towers train apart (`independent`), the
     other towers' copies are saved too, under 'tower_<i>/' names (`tower_copies`).
"""

from __future__ import annotations

import abc
import contextlib
import re

import tensorflow as tf

from ..models import convnet_builder

tf1 = tf.compat.v1

#: The checkpoint name of tower i's own copy where the towers train apart: 'tower_1/' + the
#: plain name ('tower_1/cg/conv0/weights', 'tower_1/cg/conv0/weights/Momentum').
TOWER_COPY_PREFIX = 'tower_%d/'
_TOWER_COPY = re.compile(r'^tower_(\d+)/')
_OWN_SCOPE = re.compile(r'^v(\d+)/')


def copy_tower(name: str) -> int | None:
    """The tower of a checkpoint name saved by `VariableMgr.tower_copies` ('tower_1/cg/...'
    -> 1), else None (a plain name: tower 0's or the only copy)."""
    match = _TOWER_COPY.match(name)
    return int(match.group(1)) if match else None


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
    #: True when the towers' copies hold different values (each tower trains its own model):
    #: a checkpoint then keeps every tower's copy (`tower_copies`), not tower 0's alone.
    towers_train_apart = False

    def __init__(self, *, devices, param_device, params):
        self.devices = list(devices)
        self.param_device = param_device
        self.params = params
        self._tower_vars: list[list[tf.Variable]] = [[] for _ in self.devices]

    @property
    def num_towers(self) -> int:
        return len(self.devices)

    def _custom_getter(self, tower: int):
        """Returns a getter creating variables where this mode keeps them; None: tower device."""
        return None

    @contextlib.contextmanager
    def tower_scope(self, tower: int):
        """Variable scope ('v', reused by every tower after the first, or 'v<tower>' where each
        tower has its own variables), custom getter and device for building tower `tower`."""
        before = set(tf1.global_variables())
        own = self.each_tower_has_variables
        with tf1.variable_scope('v%d' % tower if own else 'v', reuse=tower > 0 and not own,
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

    @property
    def advances_global_step(self) -> bool:
        """True when this task's `apply_gradients` ops increment the global step, so that its
        train op also counts the step's images (graph/train_op.py): every manager but a
        non-chief worker of a synchronous ps cluster, whose gradients the chief applies."""
        return True

    def step_ops(self) -> list:
        """Ops to run with every training step besides the apply ops (e.g. staging puts)."""
        return []

    def reduce_gradients(self, tower_grads):
        """The towers' (gradient, variable) pairs as `apply_gradients` is to get them, built
        outside automatic loss scaling's condition (so that a step's staging puts run whether
        it applies or not); same structure as `tower_grads`. Default: unchanged."""
        return tower_grads

    @abc.abstractmethod
    def apply_gradients(self, tower_grads, optimizer, global_step):
        """Aggregates the towers' gradients and returns the ops applying them.

        Args:
          tower_grads: for each tower, a list of (gradient, variable) pairs over
            `trainable_variables(tower)`, gradients of the tower's loss (already divided by the
            number of towers, so a plain sum over towers is the average), as
            `reduce_gradients` returned them.
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

    def tower_copies(self) -> dict[str, tf.Variable]:
        """{checkpoint name: variable} of towers 1..N-1's own copies where the towers train
        apart (`towers_train_apart`), else {}.

        Every global variable of tower i's scope 'v<i>/', i >= 1: model variables, batch-norm
        statistics and optimizer slots, named TOWER_COPY_PREFIX % i + the plain name
        ('tower_1/cg/conv0/weights/Momentum'). Tower 0's copy keeps the plain names
        (`savable_variables` and the optimizer state), which every mode, --eval and a run of
        one tower read. Call after the train op is built (the slots exist then).
        """
        if not self.towers_train_apart:
            return {}
        copies = {}
        for var in tf1.global_variables():
            match = _OWN_SCOPE.match(var.op.name)
            if match and 0 < int(match.group(1)) < self.num_towers:
                name = TOWER_COPY_PREFIX % int(match.group(1)) + checkpoint_name(var.op.name)
                copies[name] = var
        return copies


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
