"""Variable managers of cluster runs (--job_name set): one per cluster --variable_update.

The root variable_mgr.py's `make_variable_mgr` chooses one when it is given the task's
`cluster.topology.Cluster` (read here only through its attributes: this package sits below
cluster/). The hooks run in the order documented in base.py. Modes (the first two follow the
TensorFlow performance guide's "Variable Distribution and Gradient Aggregation",
../shared/seeds/000):

* parameter_server: each variable lives on one ps task, chosen greedily by size (the next
  variable goes to the ps holding the fewest bytes; ties: lowest index). Each step a worker
  reads every variable once onto its CPU (the variable's caching device; its towers copy from
  there), sums its towers' gradients on its CPU and sends one aggregated gradient per
  variable.
* distributed_replicated: every tower owns a local copy of every trainable variable (training
  starts from local data), and a master copy lives on a ps (greedy by size, named 'v/<name>').
  Per step: the towers' gradients are summed on the worker's CPU, applied to the master copies,
  and, after the cross-worker barrier of sync mode, each worker reads every master once and
  copies it into its towers. Batch-norm statistics stay local (tower 0's are saved).
* collective_all_reduce: no ps; local copies on every tower; the towers' gradients are summed
  on the worker's CPU, packed into one vector per dtype, averaged across workers by one
  TensorFlow collective all-reduce, and applied to every local copy. After initialisation
  worker 0's values are broadcast (collective broadcast) to every worker.
* distributed_all_reduce: the controller builds one graph over every worker's devices: the
  `replicated` algorithm across tasks with allreduce.py (--all_reduce_spec; default
  'pscpu/pscpu': sum on each worker's CPU, then across workers' CPUs).

Synchronous updates (--cross_replica_sync, parameter_server and distributed_replicated with more
than one worker) are exact synchronous SGD for any optimizer: each worker adds gradient / workers
into an accumulator next to each variable (on its ps); the chief waits for the others' "ready"
tokens, applies the accumulated gradients once (global step + 1), zeroes the accumulators and
puts one "go" token into each other worker's queue; a step ends for a worker when it got its
token. Per worker and step that is one enqueue and one dequeue on ps 0 (`SyncPoint`). The ready
queue can only hold tokens of the current step (a worker's next token needs this step's "go"),
and each worker has its own go queue, so a fast worker never takes a slow one's token.
Asynchronous updates: each worker applies its own (tower-averaged) gradient at once, and the
global step counts every worker's updates.
"""

from __future__ import annotations

import tensorflow as tf
from tensorflow.python.ops import collective_ops

from ..params.cluster_rules import task_device
from .allreduce import num_bytes
from .base import VariableMgr, checkpoint_name, sum_towers
from .one_host import VariableMgrReplicated

tf1 = tf.compat.v1

COLLECTIVE_GROUP_KEY = 1
_BROADCAST_KEY_BASE = 1_000_000
DEFAULT_ALL_REDUCE_SPEC = 'pscpu/pscpu'


class PsPlacer:
    """Greedy load balance by size over ps tasks: each variable goes to the ps with the fewest
    bytes placed so far (ties: the lowest task index). Deterministic, so every worker's graph
    places every variable on the same ps."""

    def __init__(self, num_ps: int):
        self.load = [0] * num_ps

    def place(self, shape, dtype) -> str:
        k = min(range(len(self.load)), key=lambda i: (self.load[i], i))
        self.load[k] += num_bytes(shape, dtype)
        return task_device('ps', k) + '/device:CPU:0'


def _shape_and_dtype(args, kwargs) -> tuple:
    """(shape, dtype) of a variable getter call (name, shape=None, dtype=None, ...)."""
    shape = kwargs['shape'] if 'shape' in kwargs else (args[0] if args else None)
    dtype = kwargs['dtype'] if 'dtype' in kwargs else (args[1] if len(args) > 1 else None)
    return shape, dtype


def model_bytes(variables) -> int:
    """Bytes of `variables` (one copy of the model: tower 0's trainable variables)."""
    return sum(num_bytes(v.shape, v.dtype.base_dtype) for v in variables)


def all_reduce_traffic(num_workers: int, size: int) -> dict:
    """{'sent', 'received'} bytes per worker and step of a bandwidth-optimal all-reduce of
    `size` bytes over `num_workers` workers: 2 (n - 1) / n x size each way."""
    per_worker = int(2 * (num_workers - 1) / num_workers * size) if num_workers > 1 else 0
    return {'sent': per_worker, 'received': per_worker}


class SyncPoint:
    """The per-step rendezvous of synchronous updates (see the module docstring).

    Args:
      num_workers: workers in the cluster (> 1).
      task_index: this worker's index; 0 is the chief.
      device: where the token queues live (ps 0).
    """

    def __init__(self, num_workers: int, task_index: int, device: str):
        self.num_workers = num_workers
        self.task_index = task_index
        n = num_workers
        with tf1.device(device), tf1.name_scope('sync_tokens'):
            self.ready = tf1.FIFOQueue(n, [tf.int32], shapes=[[]], shared_name='tfcnn_sync_ready',
                                       name='ready')
            self.go = [tf1.FIFOQueue(2, [tf.int32], shapes=[[]],
                                     shared_name='tfcnn_sync_go_%d' % j, name='go_%d' % j)
                       for j in range(n)]

    def build(self, contributions: list, chief_update) -> list:
        """Ops of one step: after `contributions`, the chief runs `chief_update()` (a function
        returning ops) once every worker contributed; every worker's ops end after it did."""
        n = self.num_workers
        if self.task_index == 0:
            with tf.control_dependencies(contributions):
                arrived = self.ready.dequeue_many(n - 1)
            with tf.control_dependencies([arrived]):
                updates = chief_update()
            with tf.control_dependencies(updates):
                return [self.go[j].enqueue(0) for j in range(1, n)]
        with tf.control_dependencies(contributions):
            sent = self.ready.enqueue(self.task_index)
        with tf.control_dependencies([sent]):
            return [self.go[self.task_index].dequeue()]

    def close_ops(self) -> list:
        """Ops that wake the workers waiting for this one, once its run stopped early. The
        chief's close the other workers' go queues: a worker's token already there is still
        taken, and its next step fails at once with an OutOfRangeError instead of waiting for
        a go that never comes. Another worker's close the ready queue: the chief's step that
        waits for this worker's ready token fails at once (OutOfRangeError), as does another
        worker's next ready token (CancelledError); the tokens already there stay."""
        with tf1.name_scope('sync_tokens_close'):
            if self.task_index != 0:
                return [self.ready.close()]
            return [self.go[j].close() for j in range(1, self.num_workers)]


class _ClusterMgr(VariableMgr):
    """Shared parts of the ps-based cluster managers: placement and the update protocol.

    Args:
      cluster: this task's cluster.topology.Cluster; the other keywords as VariableMgr's.
    """

    def __init__(self, *, cluster, **kwargs):
        super().__init__(**kwargs)
        self.cluster = cluster
        #: The SyncPoint of synchronous updates, once the train op is built; else None.
        self.sync_point = None
        self.worker_cpu = self.cluster.local_cpu
        self.placer = PsPlacer(max(self.cluster.num_ps, 1))

    @property
    def advances_global_step(self) -> bool:
        """False for a non-chief worker of synchronous updates: the chief applies every
        worker's gradients once (global step + 1), so only the chief counts the step's images;
        were each worker to count them, the shared count would grow by workers x the global
        batch a step."""
        c = self.cluster
        return not (c.sync and c.num_workers > 1) or c.task_index == 0

    def _update(self, pairs, optimizer, global_step) -> list:
        """Applies the worker's summed (gradient, variable) pairs: synchronously (accumulate,
        chief applies, tokens) or asynchronously (apply now)."""
        c = self.cluster
        if not c.sync or c.num_workers == 1:
            return [optimizer.apply_gradients(pairs, global_step=global_step)]
        scale = 1.0 / c.num_workers
        accumulators, adds = [], []
        for grad, var in pairs:
            with tf1.device(var.device), tf.control_dependencies(None):
                acc = tf1.Variable(tf.zeros(var.shape, var.dtype.base_dtype), trainable=False,
                                   collections=[tf1.GraphKeys.LOCAL_VARIABLES],
                                   name='sync_accumulators/' + var.op.name)
            accumulators.append(acc)
            with tf1.device(var.device):
                adds.append(acc.assign_add(grad * scale, read_value=False))

        def chief_update():
            # Reads, updates and zeroing all on the variables' ps: nothing crosses the network.
            with tf1.name_scope('sync_apply'):
                read = []
                for acc, (_, var) in zip(accumulators, pairs):
                    with tf1.device(var.device):
                        read.append((acc.read_value(), var))
                apply = optimizer.apply_gradients(read, global_step=global_step)
                resets = []
                with tf.control_dependencies([apply]):
                    for acc in accumulators:
                        with tf1.device(acc.device):
                            resets.append(acc.assign(tf.zeros(acc.shape, acc.dtype.base_dtype),
                                                     read_value=False))
                return resets
        self.sync_point = point = SyncPoint(c.num_workers, c.task_index,
                                            task_device(*c.coordinator) + '/device:CPU:0')
        return point.build(adds, chief_update)

    def model_bytes(self) -> int:
        """Bytes of tower 0's trainable variables (one copy of the model)."""
        return model_bytes(self.trainable_variables(0))

    def traffic_bytes(self) -> dict:
        """{'sent', 'received'}: estimated bytes a worker sends and receives per step, from
        the variables' sizes (sync tokens and scalars left out): by default the model each
        way (the gradients to the ps, the updated variables back); a forward-only run
        (--forward_only) sends no gradients and gets no updated values: nothing, where the
        towers keep copies of their own (parameter_server's workers read the variables)."""
        if self.params.forward_only:
            return {'sent': 0, 'received': 0}
        size = self.model_bytes()
        return {'sent': size, 'received': size}


class VariableMgrClusterParameterServer(_ClusterMgr):
    """`parameter_server` over ps tasks (see the module docstring)."""

    name = 'parameter_server'

    def _custom_getter(self, tower):
        def getter(getter, name, *args, **kwargs):
            if tower > 0:
                return getter(name, *args, **kwargs)  # reuse: tower 0 created it
            # One read per variable and step onto this worker's CPU, shared by every use
            # (forward, weight decay) and tower; without it each use is a separate transfer.
            kwargs['caching_device'] = self.worker_cpu
            with tf1.device(self.placer.place(*_shape_and_dtype(args, kwargs))):
                return getter(name, *args, **kwargs)
        return getter

    def apply_gradients(self, tower_grads, optimizer, global_step):
        return self._update(sum_towers(tower_grads, self.worker_cpu), optimizer, global_step)

    def traffic_bytes(self) -> dict:
        """The model each way; forward-only, the variables' reads alone: every step reads
        each variable from its ps (the caching device), and sends nothing back."""
        if self.params.forward_only:
            return {'sent': 0, 'received': self.model_bytes()}
        return super().traffic_bytes()


class VariableMgrDistributedReplicated(_ClusterMgr):
    """`distributed_replicated` (see the module docstring)."""

    name = 'distributed_replicated'
    each_tower_has_variables = True

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._masters: dict[int, tf.Variable] = {}  # id(tower-0 local copy) -> master copy
        self._master_ids: set[int] = set()

    def _custom_getter(self, tower):
        # Getters of the model (convnet_builder's initializer overrides) may pass `name`, and
        # in principle shape and dtype, by position.
        def getter(getter, name, *args, **kwargs):
            local = getter(name, *args, **kwargs)
            if tower == 0 and kwargs.get('trainable') is not False:
                master_kwargs = dict(kwargs, trainable=False,
                                     collections=[tf1.GraphKeys.GLOBAL_VARIABLES])
                with tf1.device(self.placer.place(*_shape_and_dtype(args, kwargs))), \
                        tf.control_dependencies(None):
                    master = getter('v/' + checkpoint_name(name), *args, **master_kwargs)
                self._masters[id(local)] = master
                self._master_ids.add(id(master))
            return local
        return getter

    def tower_variables(self, tower):
        return [v for v in super().tower_variables(tower) if id(v) not in self._master_ids]

    def master(self, local: tf.Variable) -> tf.Variable:
        return self._masters[id(local)]

    def _copy_from_masters(self) -> list:
        """Each master read once onto this worker's CPU, then assigned to every tower's copy."""
        ops = []
        trainable = self.trainable_variables(0)
        copies = [self.trainable_variables(t) for t in range(self.num_towers)]
        for j, local in enumerate(trainable):
            with tf1.device(self.worker_cpu):
                value = self.master(local).read_value()
            for t in range(self.num_towers):
                with tf1.device(self.devices[t]):
                    ops.append(copies[t][j].assign(value, read_value=False))
        return ops

    def apply_gradients(self, tower_grads, optimizer, global_step):
        summed = sum_towers(tower_grads, self.worker_cpu)
        updates = self._update([(g, self.master(v)) for g, v in summed], optimizer, global_step)
        with tf.control_dependencies(updates):
            return self._copy_from_masters()

    def post_init_ops(self):
        ops = self._copy_from_masters()
        trainable = {id(v) for v in self.trainable_variables(0)}
        source = self.tower_variables(0)
        for t in range(1, self.num_towers):
            for src, dst in zip(source, self.tower_variables(t)):
                if id(src) not in trainable:
                    with tf1.device(self.devices[t]):
                        ops.append(dst.assign(src.read_value(), read_value=False))
        return ops

    def savable_variables(self):
        names = {}
        for var in self.tower_variables(0):
            saved = self._masters.get(id(var), var)
            names[checkpoint_name(saved.name)] = saved
        names['global_step'] = tf1.train.get_global_step()
        return names


class VariableMgrCollectiveAllReduce(_ClusterMgr):
    """`collective_all_reduce` (see the module docstring)."""

    name = 'collective_all_reduce'
    each_tower_has_variables = True

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._post_init = None

    @property
    def advances_global_step(self) -> bool:
        """Always: every worker increments its own global step (and counts into its own
        images seen) with the same averaged update."""
        return True

    def _collective_average(self, grads) -> list:
        """Averages each gradient over the workers: one all-reduce per dtype of packed grads."""
        c = self.cluster
        if c.num_workers == 1:
            return list(grads)
        out = [None] * len(grads)
        by_dtype: dict = {}
        for j, g in enumerate(grads):
            by_dtype.setdefault(g.dtype, []).append(j)
        with tf1.device(self.worker_cpu), tf1.name_scope('collective_all_reduce'):
            groups = [by_dtype[d] for d in sorted(by_dtype, key=lambda d: d.name)]
            for key, indices in enumerate(groups):
                flat = tf.concat([tf.reshape(grads[j], [-1]) for j in indices], 0)
                total = collective_ops.all_reduce(
                    flat, c.num_workers, COLLECTIVE_GROUP_KEY, key + 1, merge_op='Add',
                    final_op='Div', timeout=c.timeout_secs)
                sizes = [grads[j].shape.num_elements() for j in indices]
                for j, part in zip(indices, tf.split(total, sizes)):
                    out[j] = tf.reshape(part, grads[j].shape)
        return out

    def apply_gradients(self, tower_grads, optimizer, global_step):
        summed = sum_towers(tower_grads, self.worker_cpu)
        averaged = self._collective_average([g for g, _ in summed])
        ops = []
        for tower, pairs in enumerate(tower_grads):
            with tf1.device(self.devices[tower]):
                ops.append(optimizer.apply_gradients(
                    [(g, v) for g, (_, v) in zip(averaged, pairs)]))
        with tf1.device(self.param_device), tf.control_dependencies(ops):
            ops.append(tf1.assign_add(global_step, 1))
        return ops

    def post_init_ops(self):
        """Worker 0's values broadcast to every worker's tower 0, then copied to the towers.
        Built once: the broadcasts' instance keys must not repeat."""
        if self._post_init is not None:
            return self._post_init
        c = self.cluster
        ops = []
        copies = [self.tower_variables(t) for t in range(self.num_towers)]
        for j, var in enumerate(copies[0]):
            with tf1.device(self.worker_cpu):
                if c.num_workers == 1:
                    value = var.read_value()
                elif c.task_index == 0:
                    value = var.read_value()
                    ops.append(collective_ops.broadcast_send(
                        value, var.shape, var.dtype.base_dtype, c.num_workers,
                        COLLECTIVE_GROUP_KEY, _BROADCAST_KEY_BASE + j, timeout=c.timeout_secs))
                else:
                    value = collective_ops.broadcast_recv(
                        var.shape, var.dtype.base_dtype, c.num_workers, COLLECTIVE_GROUP_KEY,
                        _BROADCAST_KEY_BASE + j, timeout=c.timeout_secs)
                    ops.append(var.assign(value, read_value=False))
            for t in range(1, self.num_towers):
                with tf1.device(self.devices[t]):
                    ops.append(copies[t][j].assign(value, read_value=False))
        self._post_init = ops
        return ops

    def traffic_bytes(self):
        """The gradients' all-reduce; nothing forward-only (no gradients)."""
        if self.params.forward_only:
            return {'sent': 0, 'received': 0}
        return all_reduce_traffic(self.cluster.num_workers, self.model_bytes())


class VariableMgrDistributedAllReduce(VariableMgrReplicated):
    """`distributed_all_reduce`, built by the controller over every worker's devices.

    `traffic_bytes` estimates a bandwidth-optimal all-reduce (2 (n-1)/n x model per worker;
    nothing forward-only); the default 'pscpu/pscpu' gathers on one worker's CPU instead,
    which moves more to and from that worker."""

    name = 'distributed_all_reduce'

    def __init__(self, *, cluster, **kwargs):
        super().__init__(**kwargs)
        self.cluster = cluster
        #: The SyncPoint of synchronous updates, once the train op is built; else None.
        self.sync_point = None
        p = self.params
        if not (p.all_reduce_spec or p.use_nccl or p.hierarchical_copy):
            self.params = p._replace(all_reduce_spec=DEFAULT_ALL_REDUCE_SPEC)

    def traffic_bytes(self):
        if self.params.forward_only:  # no gradients to all-reduce
            return {'sent': 0, 'received': 0}
        return all_reduce_traffic(len(self.params.worker_hosts),
                                  model_bytes(self.trainable_variables(0)))


MANAGERS = {cls.name: cls for cls in (
    VariableMgrClusterParameterServer, VariableMgrDistributedReplicated,
    VariableMgrCollectiveAllReduce, VariableMgrDistributedAllReduce)}
