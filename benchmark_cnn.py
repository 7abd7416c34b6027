"""BenchmarkCNN: builds the training graph over the towers, sets up the session, runs the loop.

    bench = BenchmarkCNN(params)   # validates, resolves the run plan, picks model and data
    bench.print_info()             # the header block
    result = bench.run()           # dict: images_per_sec, losses, step_times, ...

The graph of one training step, for N towers:

    input pipeline --(images, labels) per device--> tower i: forward, loss, gradients
    variable manager: aggregate gradients, apply updates (+ global step) -> train_op

Collaborators receive the run plan (run_plan.RunPlan) and the objects they use, never this
object: the input pipeline (preprocessing.py), the towers (tower.py), the variable manager
(variable_mgr.py, cluster/variable_mgrs.py), the hooks (lifecycle/), the cluster task's server
(cluster/server.py).
"""

from __future__ import annotations

import collections
import os
import time

from .speed import runtime_env

# oneDNN kernels, BFC allocator, log level: set before TensorFlow loads, and its start-up lines
# kept off stderr.
runtime_env.import_tensorflow()

import tensorflow as tf  # noqa: E402

from . import (  # noqa: E402
    cnn_util,
    learning_rate,
    preprocessing,
    run_plan,
    tower,
    variable_mgr,
)
from . import params as params_lib  # noqa: E402
from .cluster import coordination, resolvers, topology, variable_mgrs  # noqa: E402
from .cluster import server as cluster_server  # noqa: E402
from .input_data import dataset_info  # noqa: E402
from .lifecycle import (  # noqa: E402
    checkpoints,
    eval_runner,
    frozen,
    run_hooks,
    signals,
    traced_session,
    training_loop,
    wiring,
)
from .models import model_config  # noqa: E402
from .speed import cpu_tuning, fused_decay, kernel_speed, precision, session_config, xla_jit  # noqa: E402

tf1 = tf.compat.v1

GraphInfo = collections.namedtuple('GraphInfo', [
    'graph', 'train_op', 'loss', 'learning_rate', 'global_step', 'top_1', 'top_5',
    'pipeline', 'mgr', 'init_ops'])

num_visible_gpus = session_config.num_visible_gpus
make_session_config = session_config.make_session_config


class BenchmarkCNN:
    """One benchmark run: training (or forward-only) on synthetic or real data.

    Args:
      p: Params (validated and resolved here).
      gpus: number of visible GPUs; None asks TensorFlow.
      hooks: extra lifecycle.run_hooks.RunHook objects (test seams, library users), called
        with the run's own in every phase.
      cluster_source: the header's 'Cluster:' text when the caller resolved the cluster
        (cluster/resolvers.py; '' for a local run); None resolves it here (--cluster_resolver).

    Attributes:
      plan: the run_plan.RunPlan; params: its resolved Params; model: the CNNModel;
      dataset: the input_data.dataset_info.Dataset; cluster: the cluster.topology.Cluster of a
      cluster task, else None.

    Raises:
      params.ParamsError: invalid flags or flag combination, or a cluster that does not
        resolve (cluster/resolvers.py).
      model_config.UnknownModelError: unknown model, or a model not defined for the dataset.
      cnn_util.DataError: data directory missing, empty or corrupt.
    """

    def __init__(self, p, gpus=None, hooks=(), cluster_source=None):
        if cluster_source is None:
            resolution = resolvers.resolve(p)
            p, cluster_source = resolution.params, resolution.description
        params_lib.validate_params(p)
        self.given_params = p  # before the defaults are filled in (wiring.ignored_flags)
        visible = num_visible_gpus() if gpus is None else gpus
        p = params_lib.resolve_params(p, visible)
        self.dataset = dataset_info.get_dataset(p)
        self.model = model_config.get_model(p.model, self.dataset.name)
        self.cluster = topology.Cluster(p) if p.job_name else None
        self.plan = run_plan.make_plan(
            p, model=self.model, dataset=self.dataset, visible_gpus=visible,
            cluster=self.cluster, subset=dataset_info.default_subset(p),
            dtypes=precision.compute_dtypes(p), cluster_source=cluster_source)
        self.params = p = self.plan.params
        self.server = cluster_server.TaskServer(self.cluster) if self.cluster else None
        self.extra_hooks = list(hooks)
        if (p.device == 'cpu' and p.data_format == 'NCHW'
                and os.environ.get('TF_ENABLE_ONEDNN_OPTS') == '0'):
            raise params_lib.ParamsError(
                '--data_format=NCHW on the CPU needs oneDNN, which TF_ENABLE_ONEDNN_OPTS=0 turns '
                'off; unset it or use --data_format=NHWC.')
        self.speed_notes = _speed_setup(p, self.plan.compute_dtype)

    # --- Header.
    def info_lines(self) -> list[str]:
        """The header block, one string per line."""
        p, plan = self.params, self.plan
        device_note = ''
        if p.device == 'cpu' and not plan.visible_gpus:
            device_note = '  (no GPU visible: running on the CPU)'
        return [
            'TensorFlow:  %s' % tf.__version__,
            'Model:       %s' % p.model,
            'Dataset:     %s' % self.dataset.describe(plan.subset),
            'Classes:     %s' % self.dataset.describe_classes(),
            'Mode:        %s' % plan.mode,
            *_batch_lines(plan),
            'Devices:     %s%s' % (list(plan.devices), device_note),
            'Data format: %s' % p.data_format,
            *self.speed_notes['precision_lines'],
            'XLA:         %s' % self.speed_notes['xla'],
            'Threads:     %s' % cpu_tuning.describe(p),
            'Optimizer:   %s%s' % (p.optimizer, ', weight decay %g inside the updates (fused)'
                                   % p.weight_decay if fused_decay.applies(p, plan.devices)
                                   and plan.training else ''),
            'Variables:   %s' % p.variable_update,
            *(['Cluster:     %s' % plan.cluster_source] if plan.cluster_source else []),
            '==========',
        ]

    def print_info(self) -> None:
        for line in self.info_lines():
            cnn_util.log_fn(line)

    # --- Graph.
    def make_variable_mgr(self) -> variable_mgr.VariableMgr:
        """The manager of --variable_update (a cluster task's: cluster/variable_mgrs.py)."""
        plan = self.plan
        if self.cluster is not None:
            return variable_mgrs.make_cluster_variable_mgr(
                self.params, plan.devices, plan.param_device, self.cluster)
        return variable_mgr.make_variable_mgr(self.params, plan.devices, plan.param_device)

    def build_graph(self) -> GraphInfo:
        """Builds the whole training (or forward-only) step into a new graph."""
        p, plan = self.params, self.plan
        graph = tf.Graph()
        with graph.as_default():
            tf1.set_random_seed(p.tf_random_seed)
            with tf1.device(plan.param_device):
                global_step = tf1.train.get_or_create_global_step()
            pipeline = preprocessing.pipeline_for(plan, self.dataset, train=plan.training)
            batches = pipeline.build(list(plan.devices))
            mgr = self.make_variable_mgr()
            outputs = []
            for i, (images, labels) in enumerate(batches):
                with (mgr.tower_scope(i), xla_jit.tower_scope(p, i),
                      precision.gradient_scope(plan.compute_dtype, p.device,
                                               cpu_tuning.thread_counts(p))):
                    outputs.append(tower.forward(plan, self.model, images, labels,
                                                 phase_train=plan.training))
            with tf1.device(self.cluster.local_cpu if self.cluster else plan.param_device):
                loss = tf.add_n([o.total_loss for o in outputs]) / len(outputs)
                top_1 = tf.add_n([o.top_1 for o in outputs]) / len(outputs)
                top_5 = tf.add_n([o.top_5 for o in outputs]) / len(outputs)
                lr = learning_rate.get_learning_rate(
                    p, global_step, model=self.model, examples_per_epoch=plan.examples_per_epoch,
                    images_per_step=plan.images_per_global_step)
            if plan.training:
                train_op = self._build_train_op(p, mgr, outputs, global_step, lr, pipeline)
            else:
                train_op = tf.group(*[o.logits for o in outputs])
            init_ops = [tf1.global_variables_initializer(), tf1.local_variables_initializer()]
        return GraphInfo(graph, train_op, loss, lr, global_step, top_1, top_5, pipeline, mgr,
                         init_ops)

    def _build_train_op(self, p, mgr, outputs, global_step, lr, pipeline):
        scaler = precision.LossScaler.from_params(p, device=mgr.param_device)
        # With the fold, the towers differentiate the cross entropy and each kernel's update
        # adds weight_decay * w (speed/fused_decay.py); the reported loss keeps the decay term.
        fold = fused_decay.applies(p, self.plan.devices) and all(
            fused_decay.count_decayed(mgr.trainable_variables(i)) == out.num_decayed
            for i, out in enumerate(outputs))
        tower_grads = []
        for i, out in enumerate(outputs):
            with tf1.device(self.plan.devices[i]), xla_jit.tower_scope(p, i):
                tower_grads.append(tower.build_gradients(
                    out.base_loss if fold else out.total_loss, mgr.trainable_variables(i),
                    num_towers=len(outputs),
                    sources=mgr.gradient_sources(i), gradient_clip=p.gradient_clip,
                    loss_scale=scaler.loss_scale if scaler else 1.0,
                    keep_non_finite=bool(scaler and scaler.dynamic)))
        optimizer = learning_rate.make_optimizer(p, lr, fold_weight_decay=fold)
        update_ops = outputs[0].update_ops
        if mgr.each_tower_has_variables:
            update_ops = [op for out in outputs for op in out.update_ops]
        if fold:
            # The decay term of the reported loss reads the kernels outside the gradients; the
            # updates must wait for it or the loss could see updated kernels.
            update_ops = list(update_ops) + [out.total_loss for out in outputs]
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
          (params, plan, environment, steps, restored_step, checkpoint_path, eval, ...): see
          results_log. A ps task's serve loop returns {'role', 'task_index', 'served_secs'}.

        Raises:
          training_loop.NonFiniteLossError: the loss became NaN or Inf.
          checkpoints.CheckpointError: no checkpoint for --eval, or one that does not fit.
          signals.Terminated: SIGTERM stopped the run (after saving); exit status 143.
        """
        p = self.params
        if self.server is not None:
            self.server.start(make_session_config(p, p.num_gpus))
            if self.cluster.serves:  # ps tasks (and distributed_all_reduce workers)
                return self.server.serve()
        wiring.preflight(self.plan, self.given_params)
        if p.eval:
            return eval_runner.run_eval(self.plan, self.model, self.dataset)
        hooks = self.make_hooks()
        if p.forward_only and p.freeze_when_forward_only:
            return self._run_frozen(hooks)
        cnn_util.log_fn('Generating %s model' % ('training' if self.plan.training else
                                                 'forward-only'))
        build_start = time.perf_counter()
        info = self.build_graph()
        build_secs = time.perf_counter() - build_start
        with info.graph.as_default(), self.create_session(info) as sess, \
                preprocessing.data_errors(files=info.pipeline.record_files):
            cnn_util.log_fn('Initializing graph')
            restored_step = self.initialize(sess, info, hooks)
            if self.plan.training and self.plan.is_chief:
                for message in learning_rate.unreached_changes(
                        p, self.plan.steps_per_epoch,
                        self.plan.last_update_step(restored_step or 0)):
                    cnn_util.warn(message)
            return self._run_hooks_and_loop(sess, info, hooks, build_secs, restored_step)

    def _run_frozen(self, hooks) -> dict:
        """--forward_only --freeze_when_forward_only: time inference on a graph whose variables
        were turned into constants (after restoring a checkpoint, when there is one)."""
        cnn_util.log_fn('Generating forward-only model (frozen)')
        start = time.perf_counter()
        info = self.build_graph()
        with info.graph.as_default(), self.create_session(info) as sess:
            restored_step = checkpoints.restore_or_initialize(sess, info, self.params)
            frozen_info, num_nodes = frozen.freeze(sess, info, restored_step or 0)
        build_secs = time.perf_counter() - start
        cnn_util.log_fn('Froze the variables into constants (%d graph nodes)' % num_nodes)
        pipeline = frozen_info.pipeline
        with frozen_info.graph.as_default(), self.create_session(frozen_info) as sess, \
                preprocessing.data_errors(files=pipeline.record_files):
            if pipeline.warmup_ops:
                sess.run(pipeline.warmup_ops)
            return self._run_hooks_and_loop(sess, frozen_info, hooks, build_secs, restored_step,
                                            extra={'frozen': True})

    def _run_hooks_and_loop(self, sess, info, hooks, build_secs, restored_step,
                            extra=None) -> dict:
        """begin, the timed loop, then the phases after it (run_hooks.finish), or abort."""
        ctx = run_hooks.RunContext(sess=sess, info=info, plan=self.plan)
        for hook in hooks:
            hook.begin(ctx)
        try:
            loop = self.timed_loop(sess, info, hooks)
        except BaseException:
            run_hooks.abort(hooks)
            raise
        result = self.make_result(loop, build_secs, restored_step)
        result.update(extra or {})
        run_hooks.finish(hooks, result)
        if result.get('stopped_by_signal') == 'SIGTERM':
            raise signals.Terminated()  # after everything was saved and reported
        return result

    def create_session(self, info):
        """A session on this host's devices (a cluster run connects to its server instead; a
        --print_step_breakdown run traces sampled steps)."""
        config = make_session_config(self.params, len(self.plan.devices))
        if self.server is not None:
            return self.server.create_session(info.graph, config)
        if self.params.print_step_breakdown:
            return traced_session.TracedSession(graph=info.graph, config=config)
        return tf1.Session(config=config)

    def initialize(self, sess, info, hooks=()) -> int | None:
        """Initialises or restores the variables (checkpoints.restore_or_initialize: the latest
        checkpoint in --train_dir, else --checkpoint_path; a cluster's chief does it for the
        cluster), runs the hooks' after_initialize phase, the manager's post-init ops, and primes
        the pipeline.

        Returns:
          The restored global step, or None when nothing was restored.
        """
        ctx = run_hooks.RunContext(sess=sess, info=info, plan=self.plan)
        after_initialize = lambda: run_hooks.after_initialize(hooks, ctx)
        if self.server is not None:
            return self.server.initialize(sess, info, self.params, after_initialize)
        restored_step = checkpoints.restore_or_initialize(sess, info, self.params,
                                                          before_post_init=after_initialize)
        if info.pipeline.warmup_ops:
            sess.run(info.pipeline.warmup_ops)
        return restored_step

    def make_hooks(self) -> list[run_hooks.RunHook]:
        """The run hooks this run needs (lifecycle/wiring.py; a cluster task's from
        cluster/coordination.py), then the extra hooks given to the constructor."""
        is_local = (coordination.local_device_predicate(self.cluster)
                    if self.cluster is not None else None)
        hooks = wiring.make_hooks(self.plan, self.model, self.dataset, is_local_device=is_local)
        if self.server is not None:
            hooks += coordination.cluster_hooks(self.server)
        return hooks + self.extra_hooks

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
        show_loss = self.plan.training
        count = len(fetches)

        def step_fn():
            out = run()[:count]
            return (float(out[1]) if show_loss else None,) + tuple(out[2:])
        return step_fn

    @staticmethod
    def drain_pipeline(sess, info) -> None:
        """Empties the staging areas (the batches staged by the last steps), so that a run
        that completes leaves nothing staged."""
        if info.pipeline.drain_ops:
            sess.run(info.pipeline.drain_ops)

    def timed_loop(self, sess, info, hooks) -> training_loop.LoopResult:
        """The warm-up and timed steps (training_loop.run_loop) with the hooks' per-step calls,
        then the staging areas drained."""
        p, plan = self.params, self.plan
        loop = training_loop.run_loop(
            self.make_step_fn(sess, info),
            num_warmup=plan.num_warmup_batches,
            num_steps=plan.num_batches,
            images_per_step=plan.images_per_step, display_every=p.display_every,
            show_loss=plan.training, learning_rate_fn=lambda: float(sess.run(info.learning_rate)),
            nan_hint=(' or use automatic loss scaling (--fp16_enable_auto_loss_scale)'
                      if p.use_fp16 and not p.fp16_enable_auto_loss_scale else ''),
            after_step=run_hooks.combine_after_step(hooks),
            should_stop=run_hooks.combine_should_stop(hooks),
            extra_format=_accuracy_columns if p.print_training_accuracy else None,
            extra_columns=(('top_1_accuracy', 'top_5_accuracy') if p.print_training_accuracy
                           else ()))
        self.drain_pipeline(sess, info)
        return loop

    def make_result(self, loop, build_secs, restored_step) -> dict:
        """The result dict of a training or forward-only run (before the hooks add theirs)."""
        plan = self.plan
        result = {
            'model': plan.model,
            'images_per_sec': loop.images_per_sec,
            'losses': loop.losses,
            'warmup_losses': loop.warmup_losses,
            'step_times': loop.step_times,
            'num_steps': loop.num_steps,
            'stopped_early': loop.stopped_early,
            'elapsed_secs': loop.elapsed_secs,
            'graph_build_secs': build_secs,
            'global_batch_size': plan.global_batch_size,
            'per_device_batch_size': plan.per_device_batch_size,
            'num_devices': len(plan.devices),
            'num_workers': plan.num_workers,
            'image_size': plan.image_size,
        }
        result.update(wiring.result_extras(plan, loop, restored_step))
        return result


def _speed_setup(p, dtype) -> dict:
    """Precision, XLA and NUMA set-up of a run (before its first session); the header's texts.

    Warns (one line each) when the device has no native `dtype` arithmetic or its kernels
    measured far slower than float32 (speed/kernel_speed.py), when --xla cannot
    auto-cluster on the CPU in this process, when NUMA affinity does not apply, or when the
    CPU runs NCHW (slower than NHWC).
    """
    if p.device == 'cpu' and p.data_format == 'NCHW':
        cnn_util.warn('--data_format=NCHW on the CPU: oneDNN converts the layout around its '
                      'ops, and training ran 30-45% slower than NHWC on the development host; '
                      'NHWC is the CPU default (drop --data_format)')
    lines = ['Precision:   %s' % precision.describe(p, dtype, precision.compute_dtypes(p)[1])]
    if dtype != tf.float32:
        flag = '--use_%s' % ('bf16' if dtype == tf.bfloat16 else 'fp16')
        measured = None
        if p.device == 'cpu':
            measured = kernel_speed.factors(dtype, cpu_tuning.thread_counts(p))
        native, support = precision.native_support(dtype, p.device, measured=measured)
        lines.append('             %s' % support)
        slow = measured and kernel_speed.far_slower_warning(flag, dtype, measured)
        if slow:
            cnn_util.warn(slow)
        elif not native:
            cnn_util.warn('%s: %s; expect it slower than float32' % (flag, support))
    cpu_tuning.check_numa(p)
    return {'precision_lines': lines, 'xla': xla_jit.prepare(p)}


def _batch_lines(plan) -> list[str]:
    """The header's batch, image size, batches and epochs lines: an evaluation's (its EvalPlan)
    with --eval, else the timed steps', then an 'Eval:' line when the training evaluates."""
    image = 'Image size:  %dx%d' % (plan.image_size, plan.image_size)
    ev = plan.eval
    if plan.mode == 'evaluation':
        return ['Batch size:  %d global (eval)' % ev.global_batch_size,
                '             %d per device' % ev.per_device_batch_size, image,
                'Num batches: %d per evaluation' % ev.num_batches,
                'Num epochs:  %.2f per evaluation' % ev.epochs,
                'Eval:        %s' % ev.describe()]
    lines = ['Batch size:  %d global' % plan.global_batch_size,
             '             %d per device' % plan.per_device_batch_size, image,
             'Num batches: %d' % plan.num_batches,
             'Num epochs:  %.2f' % plan.epochs]
    if ev is not None:
        lines.append('Eval:        %s, per evaluation during training' % ev.describe())
    return lines


def _accuracy_columns(extras) -> str:
    top_1, top_5 = extras
    return '%.3f\t%.3f' % (top_1, top_5)
