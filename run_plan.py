"""The run plan: every value a run derives from its flags, resolved once.

    Params (flags) --validate_params--> --make_plan(params, model, dataset, ...)--> RunPlan

`make_plan` is a function of its arguments alone: the validated Params, the model (its default
batch and image sizes), the dataset (classes, examples per epoch), the number of visible GPUs and,
for a cluster task, the cluster's shape. Its one I/O is behind the dataset: the first count of a
real subset's records (`Dataset.num_examples`) scans its shards (input_data/shard_scan.py,
cached per shard file, so a data set seen before costs no record reads).

Every collaborator of a run (graph builder, input pipeline, hooks, evaluator, results log) reads
the plan instead of working the values out again, so a per-device batch of 0 ("the model's
default"), the image size, the devices and the global step after a timed step each have exactly
one definition, here.

The plan's `params` are the resolved ones (device, data format, warm-up and batch counts, the
per-device batch and the image size filled in), so the results JSON records what ran.

A run that evaluates (--eval, or --eval_during_training_* in training) also has an `EvalPlan`:
the subset, batches and examples one evaluation scores (`make_eval_plan`).
"""

from __future__ import annotations

import dataclasses

from . import params as params_lib
from .params import original_flags

# Cluster modes that train asynchronously with --nocross_replica_sync (the others are always
# synchronous; params.validate_params refuses --nocross_replica_sync with them).
ASYNC_MODES = ('parameter_server', 'distributed_replicated')

@dataclasses.dataclass(frozen=True)
class EvalPlan:
    """What one evaluation scores (immutable).

    Real data is read in a fixed order, without shuffling: the scored examples are the
    subset's records one after the other, from the first, each once (`num_examples` <= the subset's
    size), or going round again for --num_eval_batches/--num_eval_epochs beyond one pass.
    Those two score full batches (--num_eval_epochs as the original's whole number of them);
    the default pass, every record once, fills its last batch up with padding slots that are
    not scored. Synthetic data scores every slot of its batches.

    Attributes:
      subset: 'validation' (or --data_subset with --eval).
      per_device_batch_size: --eval_batch_size, else the training batch.
      global_batch_size: per_device_batch_size x devices.
      num_batches: steps of one evaluation.
      num_examples: examples scored by one evaluation.
      examples_per_epoch: records in `subset` (published size for synthetic data).
      synthetic: True when no records are read.
      skipping: --skip_corrupt_records on real data: a record it skips leaves its slot
        unscored (not filled by a record read twice), so `num_examples` is then an upper
        bound of the examples scored.
    """

    subset: str
    per_device_batch_size: int
    global_batch_size: int
    num_batches: int
    num_examples: int
    examples_per_epoch: int
    synthetic: bool = False
    skipping: bool = False

    @property
    def padding(self) -> int:
        """Slots of the last batch beyond `num_examples` (padding, not scored)."""
        return self.num_batches * self.global_batch_size - self.num_examples

    @property
    def epochs(self) -> float:
        """Passes over the subset one evaluation makes (scored examples / records)."""
        return self.num_examples / float(self.examples_per_epoch)

    def describe(self) -> str:
        """One phrase: what is scored, e.g. '5 examples (every validation record once) in 3
        batches of 2 (2 per device x 1 device); the last batch holds 1 example and 1 padding
        slot, not scored'."""
        devices = self.global_batch_size // self.per_device_batch_size
        batches = '%d batch%s of %d (%d per device x %d device%s)' % (
            self.num_batches, '' if self.num_batches == 1 else 'es', self.global_batch_size,
            self.per_device_batch_size, devices, '' if devices == 1 else 's')
        if self.synthetic:
            return '%d synthetic example%s in %s' % (
                self.num_examples, '' if self.num_examples == 1 else 's', batches)
        if self.num_examples == self.examples_per_epoch:
            what = 'every %s record once' % self.subset
        elif self.num_examples < self.examples_per_epoch:
            what = 'the first %d of the %d %s records in a fixed order, each once' % (
                self.num_examples, self.examples_per_epoch, self.subset)
        else:
            what = '%.2f passes over the %d %s records in a fixed order' % (
                self.epochs, self.examples_per_epoch, self.subset)
        if self.skipping:
            what += '; a record --skip_corrupt_records skips is not scored, nor replaced'
        text = '%s%d example%s (%s) in %s' % (
            'up to ' if self.skipping else '', self.num_examples,
            '' if self.num_examples == 1 else 's', what, batches)
        if self.padding:
            last = self.global_batch_size - self.padding
            text += '; the %sbatch holds %d example%s and %d padding slot%s, not scored' % (
                '' if self.num_batches == 1 else 'last ', last, '' if last == 1 else 's',
                self.padding, '' if self.padding == 1 else 's')
        return text


@dataclasses.dataclass(frozen=True)
class RunPlan:
    """The resolved shape of one run (immutable).

    Attributes:
      params: the resolved Params (batch_size, image_size, device, data_format,
        num_warmup_batches, num_batches never unset).
      mode: 'training', 'forward-only' or 'evaluation'.
      model: the model's registry name, e.g. 'resnet50'.
      dataset: the dataset's name: 'imagenet', 'cifar10' or 'synthetic'.
      subset: the subset the run reads: 'train' or 'validation'.
      num_classes: classes of the model's output layer (ImageNet: 1001, 0 = background).
      examples_per_epoch: examples in `subset` (counted in the files, or the published size).
      image_size: height = width of the model's input, pixels.
      per_device_batch_size: images per tower and step.
      devices: this task's tower devices, e.g. ('/cpu:0', '/cpu:1'); a cluster's controller
        lists every worker's.
      num_workers: worker tasks (1 on one host).
      global_batch_size: images per step over every tower of every worker
        (per_device_batch_size x devices x workers, or x devices for the controller whose
        devices span the workers).
      images_per_global_step: images one increment of the global step applies: the global
        batch, except in an asynchronous cluster (--nocross_replica_sync with several
        workers), where every worker's update adds one to the shared global step and applies
        one worker's batch (per_device_batch_size x devices). Epoch-based schedules (learning
        rate, eval every n epochs) convert epochs to global steps with it.
      num_warmup_batches: untimed steps before the timed ones.
      num_batches: timed steps (from --num_epochs when given; with --ml_perf, less the
        warm-up steps, which train too: the run trains --num_epochs in all).
      compute_dtype, variable_dtype: tf.DType of activations/gradients and of variables.
      data_format: 'NHWC' or 'NCHW'.
      param_device: device of the global step and of shared bookkeeping.
      is_chief: True for the task that initialises, saves and reports (always on one host).
      visible_gpus: GPUs TensorFlow could see when the plan was made.
      cluster_role: 'worker 0', 'ps 1', ... for a cluster task; '' on one host.
      cluster_source: where the cluster came from, as the header's 'Cluster:' line says, e.g.
        'TF_CONFIG (task worker 0: worker 1 of 2, 1 ps)' (cluster/resolvers.py); '' on one
        host.
      eval: the EvalPlan of a run that evaluates (--eval, --eval_during_training_*), else None.
      threads: (intra-op, inter-op) thread-pool sizes of the run's sessions (the flags where
        given, else runtime/cpu_tuning.default_thread_counts; 0 = TensorFlow decides).

    The run-time values below are resolved once, before the graph and the first session, by
    the run's settling (preflight/settled_run.py), and read by everything after it (the towers,
    the sessions, the header, the results JSON); a plan made by `make_plan` alone has their
    defaults:

      xla: the header's XLA text, after XLA's flags were set (runtime/session_config.settle).
      session_config: the tf.compat.v1.ConfigProto of every session of the run (training,
        evaluation, frozen inference; runtime/session_config.make_session_config), or None.
      server_config: a cluster task's: the ConfigProto its gRPC server starts with (its own
        devices), else None.
      graph_choices: the graph/graph_choices.Choices of the training graph (measured, forced
        or off), or None: not resolved (a task that only serves), today's graph.
      given_flags: {flag: value} of the flags the user gave at another value than the
        default (history/run_flags.given_values of the Params as parsed: no value the run
        worked out), or None when not known (a plan made for other Params: the dry run's,
        the memory advice's); the results' 'given_flags'.
      kernel_shapes: the hardware/kernel_speed.ProbeShapes of a reduced-precision CPU run
        (its largest convolution and matmul, which its kernel factors are timed at: the
        header's, the warning's and the gradients' choice), or None (a float32 or GPU run,
        or not resolved: the probe's default shapes).
    """

    params: params_lib.Params
    mode: str
    model: str
    dataset: str
    subset: str
    num_classes: int
    examples_per_epoch: int
    image_size: int
    per_device_batch_size: int
    devices: tuple[str, ...]
    num_workers: int
    global_batch_size: int
    num_warmup_batches: int
    num_batches: int
    compute_dtype: object
    variable_dtype: object
    data_format: str
    param_device: str
    is_chief: bool
    visible_gpus: int
    cluster_role: str = ''
    cluster_source: str = ''
    eval: EvalPlan | None = None
    images_per_global_step: int = 0
    threads: tuple[int, int] = (0, 0)
    xla: str = 'off'
    session_config: object = dataclasses.field(default=None, compare=False, repr=False)
    server_config: object = dataclasses.field(default=None, compare=False, repr=False)
    graph_choices: object = dataclasses.field(default=None, compare=False)
    given_flags: dict | None = dataclasses.field(default=None, compare=False)
    kernel_shapes: object = dataclasses.field(default=None, compare=False)

    @property
    def asynchronous(self) -> bool:
        """True in an asynchronous cluster run: several workers each add their own updates
        to the shared global step, so it grows about `num_workers` times per timed step of one
        worker, and the chief's own step count is not the global step."""
        return self.images_per_global_step != self.global_batch_size

    @property
    def steps_per_epoch(self) -> float:
        """Global steps per epoch of `subset` (examples / images_per_global_step)."""
        return self.examples_per_epoch / float(self.images_per_global_step)

    @property
    def training(self) -> bool:
        """True when the run updates the weights."""
        return self.mode == 'training'

    @property
    def images_per_step(self) -> int:
        """Images one step of this task's towers processes (the step line's rate counts these)."""
        return self.per_device_batch_size * len(self.devices)

    @property
    def epochs(self) -> float:
        """Epochs of `subset` the timed steps cover."""
        return self.num_batches * self.global_batch_size / float(self.examples_per_epoch)

    def global_step_after(self, start_step: int, timed_step: int) -> int:
        """The global step after timed step `timed_step` (1-based) of this run, which began at
        global step `start_step`: each warm-up and timed training step adds one. Forward-only
        runs do not step: their count is the timed step itself. Exact on one host and in
        synchronous clusters; in an asynchronous cluster (`asynchronous`) it is this task's
        own count, and the global step must be read from the session
        (run_hooks.GlobalStepCounter does)."""
        if not self.training:
            return timed_step
        return start_step + self.num_warmup_batches + timed_step

    def last_update_step(self, start_step: int) -> int:
        """The global step the last update of this run starts from, for a run that began at
        `start_step` (an asynchronous cluster's: about, counting every worker's updates)."""
        updates = self.num_warmup_batches + self.num_batches
        return start_step + updates * (self.num_workers if self.asynchronous else 1) - 1

    def summary(self) -> dict:
        """The plan as JSON-ready values (the results JSON's 'plan'): every field but the
        params, the given flags (the results' own key) and the session options; the graph
        choices as their full table (their own `summary()`: graph/graph_choices.py
        Choices.summary)."""
        out = {}
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if field.name in ('params', 'session_config', 'server_config', 'given_flags'):
                continue
            if field.name == 'graph_choices':
                value = value.summary() if value is not None else None
            elif field.name == 'kernel_shapes':  # 'conv 2x32x32x16 3x3->16, matmul 2x64x10'
                value = value.text() if value is not None else None
            elif field.name in ('compute_dtype', 'variable_dtype'):
                value = getattr(value, 'name', str(value))
            elif field.name == 'eval' and value is not None:
                value = dataclasses.asdict(value)
            elif isinstance(value, tuple):
                value = list(value)
            out[field.name] = value
        return out


def run_mode(p) -> str:
    """'evaluation', 'forward-only' or 'training'."""
    return 'evaluation' if p.eval else 'forward-only' if p.forward_only else 'training'


def eval_subset(p) -> str:
    """The subset evaluated: --data_subset with --eval, else 'validation'."""
    return (p.data_subset if p.eval and p.data_subset else None) or 'validation'


def evaluates(p) -> bool:
    """True when the run evaluates: --eval, or a training run with --eval_during_training_*."""
    return bool(p.eval or (run_mode(p) == 'training' and (
        p.eval_during_training_every_n_steps or p.eval_during_training_every_n_epochs
        or p.eval_during_training_at_specified_steps
        or p.eval_during_training_at_specified_epochs)))


def make_eval_plan(p, dataset, *, num_devices: int, per_device_batch_size: int,
                   num_batches: int, given_num_batches: int | None = None) -> EvalPlan:
    """What one evaluation scores.

    Its length, in the original's order: --num_eval_batches, else --num_eval_epochs; with
    --eval, else --num_batches as given (`given_num_batches`) or --num_epochs, as the
    original's --eval counted them (over the evaluated subset).

    N batches score N full batches (N x global batch examples, going round the subset again
    when that exceeds it); E epochs are the original's whole number of batches,
    int(E x records + global batch - 1) // global batch (original_flags.epoch_step; at least
    one), scored as full batches too; neither (the default) scores every record of real data
    once, the last batch padded (the original evaluated --num_batches' default, 100 batches,
    there), and synthetic data `num_batches` (the run's) full batches.

    Args:
      p: the run's resolved Params.
      dataset: the run's input_data.dataset_info.Dataset.
      num_devices: towers the evaluation runs on.
      per_device_batch_size: the training batch (used without --eval_batch_size).
      num_batches: the run's timed steps (synthetic evaluations).
      given_num_batches: --num_batches as the user gave it (before params.resolve_params
        filled in its default), or None: not given.

    Raises:
      DataError: the subset's files are missing or corrupt (dataset_info.Dataset.scan).
    """
    subset = eval_subset(p)
    batch = p.eval_batch_size or per_device_batch_size
    global_batch = batch * num_devices
    records = dataset.num_examples(subset)
    batches, epochs = p.num_eval_batches, p.num_eval_epochs
    if p.eval and not batches and not epochs:
        batches, epochs = given_num_batches, p.num_epochs
    if epochs and not batches:  # the original's whole batches of E epochs
        batches = max(1, original_flags.epoch_step(epochs, records, global_batch))
    if dataset.synthetic:
        batches = batches or num_batches
        return EvalPlan(subset, batch, global_batch, batches, batches * global_batch, records,
                        synthetic=True)
    examples = batches * global_batch if batches else records
    return EvalPlan(subset, batch, global_batch, -(-examples // global_batch), examples, records,
                    skipping=bool(p.skip_corrupt_records))


def make_plan(p, *, model, dataset, visible_gpus: int, cluster=None, subset: str,
              dtypes: tuple, cluster_source: str = '', threads: tuple = (0, 0),
              given_num_batches: int | None = None) -> RunPlan:
    """Resolves a run's values (see the module docstring).

    Args:
      p: Params after params.validate_params and params.resolve_params.
      model: the models.model.CNNModel of --model.
      dataset: the input_data.dataset_info.Dataset of the run.
      visible_gpus: GPUs TensorFlow can see.
      cluster: cluster.topology.Cluster of a cluster task, else None.
      subset: the subset the run reads (dataset_info.default_subset).
      dtypes: (compute dtype, variable dtype) (graph.precision.compute_dtypes).
      cluster_source: where the cluster came from (cluster.resolvers.Resolution.description).
      threads: (intra-op, inter-op) thread-pool sizes (runtime/cpu_tuning.thread_counts).
      given_num_batches: --num_batches as given, before params.resolve_params filled in its
        default (None: not given): an --eval run's length when no --num_eval_* is given
        (make_eval_plan).

    Returns:
      The RunPlan.

    Raises:
      DataError: the subset read (or evaluated) is missing or corrupt.
    """
    # --image_size (the usage check, preflight/usage.check_model, checked it against the
    # model's limits before TensorFlow loaded), else the model's own.
    image_size = p.image_size or model.image_size
    batch_size = p.batch_size or model.default_batch_size
    if cluster is not None:
        p = cluster.task_params(p)
        devices = tuple(cluster.tower_devices(p.num_gpus, p.device))
        num_workers = cluster.num_workers
        # The controller's towers already span every worker.
        replicas = len(devices) if cluster.job_name == 'controller' else len(devices) * num_workers
        param_device, is_chief = cluster.param_device, cluster.is_chief
        role = '%s %d' % (cluster.job_name, cluster.task_index)
    else:
        devices = tuple('/%s:%d' % (p.device, i) for i in range(p.num_gpus))
        num_workers, replicas = 1, len(devices)
        param_device, is_chief, role = '/cpu:0', True, ''
    global_batch = batch_size * replicas
    per_update = global_batch
    if cluster is not None and cluster.job_name != 'controller' and not p.cross_replica_sync \
            and num_workers > 1 and p.variable_update in ASYNC_MODES:
        per_update = batch_size * len(devices)  # each worker's update is one global step
    examples = dataset.num_examples(subset)
    num_batches = p.num_batches
    if p.num_epochs is not None:
        num_batches = max(1, original_flags.epoch_step(p.num_epochs, examples, global_batch))
        if original_flags.ml_perf_wanted(p) and not (p.forward_only or p.eval):
            # The warm-up steps train too, and MLPerf counts every sample trained: with
            # --ml_perf the run trains --num_epochs in all, warm-up included (the original
            # trains the warm-up on top of them).
            num_batches = max(1, num_batches - p.num_warmup_batches)
    p = p._replace(batch_size=batch_size, image_size=image_size, num_batches=num_batches)
    eval_plan = None
    if evaluates(p):
        eval_plan = make_eval_plan(p, dataset, num_devices=len(devices),
                                   per_device_batch_size=batch_size, num_batches=num_batches,
                                   given_num_batches=given_num_batches)
    return RunPlan(
        params=p, mode=run_mode(p), model=p.model, dataset=dataset.name, subset=subset,
        num_classes=dataset.num_classes, examples_per_epoch=examples, image_size=image_size,
        per_device_batch_size=batch_size, devices=devices, num_workers=num_workers,
        global_batch_size=global_batch, num_warmup_batches=p.num_warmup_batches,
        num_batches=num_batches, compute_dtype=dtypes[0], variable_dtype=dtypes[1],
        data_format=p.data_format, param_device=param_device, is_chief=is_chief,
        visible_gpus=visible_gpus, cluster_role=role, cluster_source=cluster_source,
        eval=eval_plan,
        images_per_global_step=per_update, threads=tuple(threads))
