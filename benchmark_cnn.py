"""BenchmarkCNN: builds the training graph over the towers, sets up the session, runs the loop.

    bench = BenchmarkCNN(params)   # validates, resolves machine defaults, picks model and data
    bench.print_info()             # the header block
    result = bench.run()           # dict: images_per_sec, losses, step_times, ...

The graph of one training step, for N towers:

    input pipeline --(images, labels) per device--> tower i: forward, loss, gradients
    variable manager: aggregate gradients, apply updates (+ global step) -> train_op
"""

from __future__ import annotations

import collections
import os
import time

import runtime_env  # noqa: E402

runtime_env.apply()  # oneDNN kernels, BFC allocator: before TensorFlow loads

import numpy as np
import tensorflow as tf

import allreduce
import checkpoints
import cluster_hooks
import cnn_util
import cpu_tuning
import dataset_info
import distributed
import eval_runner
import learning_rate
import lifecycle
import params as params_lib
import precision
import preprocessing
import run_hooks
import tower
import training_loop
import variable_mgr
import xla_jit
from models import model_config

tf1 = tf.compat.v1

GraphInfo = collections.namedtuple('GraphInfo', [
    'graph', 'train_op', 'loss', 'learning_rate', 'global_step', 'top_1', 'top_5',
    'pipeline', 'mgr', 'init_ops'])


def num_visible_gpus() -> int:
    """Number of GPUs TensorFlow can use on this host."""
    return len(tf.config.list_physical_devices('GPU'))


def compute_dtypes(p):
    """Returns (compute dtype, variable dtype) for the precision flags (precision.py)."""
    return precision.compute_dtypes(p)


def make_session_config(p, num_devices: int) -> tf1.ConfigProto:
    """Session options: logical CPU devices, thread pools and NUMA (cpu_tuning.py), XLA
    (xla_jit.py), soft placement on GPU hosts."""
    config = tf1.ConfigProto(allow_soft_placement=p.device == 'gpu')
    if p.device == 'cpu':
        config.device_count['CPU'] = max(1, num_devices)
    cpu_tuning.configure_session(config, p)
    xla_jit.configure_session(config, p, num_devices)
    config.gpu_options.allow_growth = True
    return config


class BenchmarkCNN:
    """One benchmark run: training (or forward-only) on synthetic or real data.

    Args:
      p: Params (validated here).
      gpus: number of visible GPUs; None asks TensorFlow.

    Raises:
      params.ParamsError: invalid flags or flag combination.
      model_config.UnknownModelError: unknown model, or a model not defined for the dataset.
      cnn_util.DataError: data directory missing, empty or corrupt.
    """

    def __init__(self, p, gpus=None):
        params_lib.validate_params(p)
        visible = num_visible_gpus() if gpus is None else gpus
        self.params = p = params_lib.resolve_params(p, visible)
        self.gpus_visible = visible
        self.dataset = dataset_info.get_dataset(p)
        self.model = model_config.get_model(p.model, self.dataset.name)
        self.image_size = p.image_size or self.model.image_size
        if self.image_size != self.model.image_size and self.model.fixed_image_size:
            raise params_lib.ParamsError(
                '--model=%s takes only %dx%d images. Received: image_size=%d' % (
                    p.model, self.model.image_size, self.model.image_size, self.image_size))
        if self.image_size < self.model.min_image_size:
            raise params_lib.ParamsError('--model=%s needs --image_size >= %d. Received: %d' % (
                p.model, self.model.min_image_size, self.image_size))
        self.batch_size = p.batch_size or self.model.default_batch_size
        self.devices = ['/%s:%d' % (p.device, i) for i in range(p.num_gpus)]
        self.num_workers = 1
        self.cluster = distributed.Cluster(p) if p.job_name else None
        if self.cluster is not None:  # a cluster task: its towers' devices, the worker count
            self.params = p = self.cluster.task_params(p)
            self.devices = self.cluster.tower_devices(p.num_gpus, p.device)
            self.num_workers = self.cluster.num_workers
        self.global_batch_size = self.batch_size * p.num_gpus * self.num_workers
        self.examples_per_epoch = self.dataset.num_examples(dataset_info.default_subset(p))
        if p.num_epochs is not None:
            self.num_batches = max(1, int(np.ceil(
                p.num_epochs * self.examples_per_epoch / self.global_batch_size)))
        else:
            self.num_batches = p.num_batches
        self.dtype, self.variable_dtype = compute_dtypes(p)
        if (p.device == 'cpu' and p.data_format == 'NCHW'
                and os.environ.get('TF_ENABLE_ONEDNN_OPTS') == '0'):
            raise params_lib.ParamsError(
                '--data_format=NCHW on the CPU needs oneDNN, which TF_ENABLE_ONEDNN_OPTS=0 turns '
                'off; unset it or use --data_format=NHWC.')
        self.speed_notes = _speed_setup(p, self.dtype)
        if p.all_reduce_spec:
            try:
                spec = allreduce.parse_all_reduce_spec(p.all_reduce_spec)
            except ValueError as e:
                raise params_lib.ParamsError('--all_reduce_spec: %s' % e) from None
            if p.device != 'gpu' and any('nccl' in entry.alg for entry in spec):
                raise params_lib.ParamsError(
                    '--all_reduce_spec=%s uses nccl, which needs GPUs; on the CPU use pscpu or '
                    'xring.' % p.all_reduce_spec)

    # --- Header.
    def info_lines(self) -> list[str]:
        """The header block, one string per line."""
        p = self.params
        device_note = ''
        if self.params.device == 'cpu' and not self.gpus_visible:
            device_note = '  (no GPU visible: running on the CPU)'
        epochs = self.num_batches * self.global_batch_size / float(self.examples_per_epoch)
        mode = 'evaluation' if p.eval else 'forward-only' if p.forward_only else 'training'
        lines = [
            'TensorFlow:  %s' % tf.__version__,
            'Model:       %s' % p.model,
            'Dataset:     %s' % self.dataset.describe(dataset_info.default_subset(p)),
            'Mode:        %s' % mode,
            'Batch size:  %d global' % self.global_batch_size,
            '             %d per device' % self.batch_size,
            'Image size:  %dx%d' % (self.image_size, self.image_size),
            'Num batches: %d' % self.num_batches,
            'Num epochs:  %.2f' % epochs,
            'Devices:     %s%s' % (self.devices, device_note),
            'Data format: %s' % p.data_format,
            *self.speed_notes['precision_lines'],
            'XLA:         %s' % self.speed_notes['xla'],
            'Threads:     %s' % cpu_tuning.describe(p),
            'Optimizer:   %s' % p.optimizer,
            'Variables:   %s' % p.variable_update,
            '==========',
        ]
        return lines

    def print_info(self) -> None:
        for line in self.info_lines():
            cnn_util.log_fn(line)

    # --- Graph.
    def build_graph(self) -> GraphInfo:
        """Builds the whole training (or forward-only) step into a new graph."""
        p = self.params
        graph = tf.Graph()
        with graph.as_default():
            tf1.set_random_seed(p.tf_random_seed)
            param_device = self.cluster.param_device if self.cluster else '/cpu:0'
            with tf1.device(param_device):
                global_step = tf1.train.get_or_create_global_step()
            pipeline = preprocessing.make_input_pipeline(
                p, self.dataset, batch_size=self.batch_size, image_size=self.image_size,
                num_classes=self.dataset.num_classes, data_format=p.data_format,
                dtype=self.dtype, train=not p.forward_only)
            batches = pipeline.build(self.devices)
            mgr = variable_mgr.make_variable_mgr(p, self.devices, param_device)
            outputs = []
            for i, (images, labels) in enumerate(batches):
                with (mgr.tower_scope(i), xla_jit.tower_scope(p, i),
                      precision.gradient_scope(self.dtype, p.device)):
                    outputs.append(tower.build_forward(
                        self.model, images, labels, phase_train=not p.forward_only,
                        num_classes=self.dataset.num_classes, data_format=p.data_format,
                        dtype=self.dtype, variable_dtype=self.variable_dtype,
                        weight_decay=p.weight_decay))
            with tf1.device(self.cluster.local_cpu if self.cluster else param_device):
                loss = tf.add_n([o.total_loss for o in outputs]) / len(outputs)
                top_1 = tf.add_n([o.top_1 for o in outputs]) / len(outputs)
                top_5 = tf.add_n([o.top_5 for o in outputs]) / len(outputs)
                lr = learning_rate.get_learning_rate(
                    p, global_step, model=self.model, examples_per_epoch=self.examples_per_epoch,
                    global_batch_size=self.global_batch_size)
            if p.forward_only:
                train_op = tf.group(*[o.logits for o in outputs])
            else:
                train_op = self._build_train_op(p, mgr, outputs, global_step, lr, pipeline)
            init_ops = [tf1.global_variables_initializer(), tf1.local_variables_initializer()]
        return GraphInfo(graph, train_op, loss, lr, global_step, top_1, top_5, pipeline, mgr,
                         init_ops)

    def _build_train_op(self, p, mgr, outputs, global_step, lr, pipeline):
        scaler = precision.LossScaler.from_params(p, device=mgr.param_device)
        tower_grads = []
        for i, out in enumerate(outputs):
            with tf1.device(self.devices[i]), xla_jit.tower_scope(p, i):
                tower_grads.append(tower.build_gradients(
                    out.total_loss, mgr.trainable_variables(i), num_towers=len(outputs),
                    sources=mgr.gradient_sources(i), gradient_clip=p.gradient_clip,
                    loss_scale=scaler.loss_scale if scaler else 1.0,
                    keep_non_finite=bool(scaler and scaler.dynamic)))
        optimizer = learning_rate.make_optimizer(p, lr)
        update_ops = outputs[0].update_ops
        if mgr.each_tower_has_variables:
            update_ops = [op for out in outputs for op in out.update_ops]
        with tf.control_dependencies(update_ops):
            apply_fn = lambda grads: mgr.apply_gradients(grads, optimizer, global_step)
            apply_ops = (scaler.apply(tower_grads, apply_fn, global_step) if scaler
                         else apply_fn(tower_grads))
        return tf.group(*apply_ops, *mgr.step_ops(), name='train_op')

    # --- Run.
    def run(self) -> dict:
        """Builds the graph, initialises, warms up and runs the timed steps.

        Returns:
          A dict: images_per_sec (float, global), losses (timed steps), warmup_losses,
          step_times (seconds), num_steps, global_batch_size, per_device_batch_size,
          num_devices, model, image_size, elapsed_secs.

          With --eval, the evaluation's result (eval_runner.run_eval). Lifecycle keys
          (params, environment, steps, restored_step, checkpoint_path, eval, ...): see
          results_log.

        Raises:
          training_loop.NonFiniteLossError: the loss became NaN or Inf.
          checkpoints.CheckpointError: no checkpoint for --eval, or one that does not fit.
          signals.Terminated: SIGTERM stopped the run (after saving); exit status 143.
        """
        p = self.params
        if self.cluster is not None:
            self.cluster.start_server(make_session_config(p, p.num_gpus))
            if self.cluster.serves:  # ps tasks (and distributed_all_reduce workers)
                return self.cluster.serve()
        lifecycle.preflight(self)
        if p.eval:
            return eval_runner.run_eval(self)
        if p.forward_only and p.freeze_when_forward_only:
            return lifecycle.run_frozen(self)
        cnn_util.log_fn('Generating %s model' % ('forward-only' if p.forward_only else
                                                 'training'))
        build_start = time.perf_counter()
        info = self.build_graph()
        build_secs = time.perf_counter() - build_start
        with info.graph.as_default(), self.create_session(info) as sess, \
                preprocessing.data_errors(files=info.pipeline.record_files):
            cnn_util.log_fn('Initializing graph')
            self.initialize(sess, info)
            hooks = self.make_hooks(info)
            ctx = run_hooks.RunContext(sess=sess, info=info, bench=self)
            for hook in hooks:
                hook.begin(ctx)
            try:
                loop = self._timed_loop(sess, info, hooks)
            except BaseException:
                for hook in hooks:
                    hook.abort()
                raise
            result = self._result(loop, build_secs)
            for hook in hooks:
                hook.end(result)
        return result

    def create_session(self, info):
        """A session on this host's devices (a cluster run connects to its server instead)."""
        config = make_session_config(self.params, len(self.devices))
        if self.cluster is not None or self.params.print_step_breakdown:
            return cluster_hooks.create_session(self, info, config)
        return tf1.Session(config=config)

    def initialize(self, sess, info) -> None:
        """Initialises or restores the variables (checkpoints.restore_or_initialize: the latest
        checkpoint in --train_dir, else --checkpoint_path), runs the manager's post-init ops,
        primes the pipeline. Sets `self.restored_step` (None when nothing was restored)."""
        if self.cluster is not None:  # chief initialises or restores, the others wait for it
            return self.cluster.initialize(sess, info, self)
        self.restored_step = checkpoints.restore_or_initialize(sess, info, self)
        if info.pipeline.warmup_ops:
            sess.run(info.pipeline.warmup_ops)

    def make_hooks(self, info) -> list:
        """The run hooks this run needs (see run_hooks.py), in call order."""
        hooks = lifecycle.make_hooks(self, info)
        if self.cluster is not None or self.params.print_step_breakdown:
            hooks = cluster_hooks.add_hooks(hooks, self, info)
        return hooks

    def make_step_fn(self, sess, info):
        """Returns a function running one step: () -> (loss or None, *accuracy values).

        Every step also stages the next input batch (the pipeline's puts): all steps, the last
        ones included, run the same fetches, so TensorFlow prepares one executor for them
        during warm-up. (A different fetch list for the last steps cost a new executor, with
        Grappler and oneDNN primitive set-up, inside the timed loop: 0.5-1 s, a third of a
        60-step trivial run.) `drain_pipeline` empties the staging areas afterwards.
        """
        fetches = [info.train_op, info.loss]
        if self.params.print_training_accuracy:
            fetches += [info.top_1, info.top_5]
        run = sess.make_callable(fetches + list(info.pipeline.step_ops))
        show_loss = not self.params.forward_only
        count = len(fetches)

        def step_fn():
            out = run()[:count]
            return (float(out[1]) if show_loss else None,) + tuple(out[2:])
        return step_fn

    @staticmethod
    def drain_pipeline(sess, info) -> None:
        """Empties the staging areas (the batches staged by the last steps), so that a run
        that completes leaves nothing staged."""
        drain = list(getattr(info.pipeline, 'drain_ops', None) or [])
        if drain:
            sess.run(drain)

    def _timed_loop(self, sess, info, hooks) -> training_loop.LoopResult:
        p = self.params
        show_loss = not p.forward_only
        loop = training_loop.run_loop(
            self.make_step_fn(sess, info),
            num_warmup=p.num_warmup_batches,
            num_steps=self.num_batches,
            images_per_step=self.batch_size * len(self.devices), display_every=p.display_every,
            show_loss=show_loss, learning_rate_fn=lambda: float(sess.run(info.learning_rate)),
            nan_hint=(' or use automatic loss scaling (--fp16_enable_auto_loss_scale)'
                      if p.use_fp16 and not p.fp16_enable_auto_loss_scale else ''),
            after_step=run_hooks.combine_after_step(hooks),
            should_stop=run_hooks.combine_should_stop(hooks),
            extra_format=_accuracy_columns if p.print_training_accuracy else None,
            extra_columns=(('top_1_accuracy', 'top_5_accuracy') if p.print_training_accuracy
                           else ()))
        self.drain_pipeline(sess, info)
        return loop

    def _result(self, loop, build_secs) -> dict:
        result = {
            'model': self.params.model,
            'images_per_sec': loop.images_per_sec,
            'losses': loop.losses,
            'warmup_losses': loop.warmup_losses,
            'step_times': loop.step_times,
            'num_steps': loop.num_steps,
            'stopped_early': loop.stopped_early,
            'elapsed_secs': loop.elapsed_secs,
            'graph_build_secs': build_secs,
            'global_batch_size': self.global_batch_size,
            'per_device_batch_size': self.batch_size,
            'num_devices': len(self.devices),
            'num_workers': self.num_workers,
            'image_size': self.image_size,
        }
        result.update(lifecycle.result_extras(self, loop))
        return result


def _speed_setup(p, dtype) -> dict:
    """Precision, XLA and NUMA set-up of a run (before its first session); the header's texts.

    Warns (one line each) when the device has no native `dtype` arithmetic, when --xla cannot
    auto-cluster on the CPU in this process, or when NUMA affinity does not apply.
    """
    lines = ['Precision:   %s' % precision.describe(p, dtype, compute_dtypes(p)[1])]
    if dtype != tf.float32:
        native, support = precision.native_support(dtype, p.device)
        lines.append('             %s' % support)
        if not native:
            cnn_util.warn('--use_%s: %s; expect it slower than float32'
                          % ('bf16' if dtype == tf.bfloat16 else 'fp16', support))
    cpu_tuning.check_numa(p)
    return {'precision_lines': lines, 'xla': xla_jit.prepare(p)}


def _accuracy_columns(extras) -> str:
    top_1, top_5 = extras
    return '%.3f\t%.3f' % (top_1, top_5)
