"""Wiring of a run's lifecycle features: which hooks run, flags that have no effect, result keys.

`BenchmarkCNN` calls, in order:
  `preflight(bench)` at the start of `run()`: one warning line per flag that has no effect in
    the chosen mode, and an early error for --plot_file without matplotlib;
  `make_hooks(bench, info)`: the run hooks, in call order (signals last: its `end` raises for
    SIGTERM after the others saved);
  `result_extras(bench, loop)`: the keys every training/forward-only result gets besides the
    loop's figures (see results_log for the full schema).
`run_frozen(bench)` is the run of --forward_only --freeze_when_forward_only: the variables
(restored from a checkpoint when there is one) become constants of a new graph before timing.
"""

from __future__ import annotations

import time
import types

import tensorflow as tf

import checkpoints
import cnn_util
import eval_runner
import params as params_lib
import profiling
import results_log
import run_hooks
import signals
import summaries

tf1 = tf.compat.v1

OPTIMIZER_FLAGS = (
    'optimizer', 'momentum', 'rmsprop_decay', 'rmsprop_momentum', 'rmsprop_epsilon',
    'adam_beta1', 'adam_beta2', 'adam_epsilon', 'init_learning_rate',
    'piecewise_learning_rate_schedule', 'num_epochs_per_decay', 'learning_rate_decay_factor',
    'num_learning_rate_warmup_epochs', 'minimum_learning_rate', 'weight_decay', 'gradient_clip')
TRAINING_ONLY_FLAGS = (
    'save_model_secs', 'save_model_steps', 'eval_during_training_every_n_steps',
    'eval_during_training_every_n_epochs', 'eval_during_training_at_specified_steps',
    'stop_at_top_1_accuracy')
EVAL_FLAGS = ('num_eval_batches', 'num_eval_epochs', 'eval_batch_size')
EVAL_DURING_TRAINING_FLAGS = TRAINING_ONLY_FLAGS[2:5]


def _is_set(p, name: str) -> bool:
    """True when flag `name` differs from its default (an explicitly chosen value)."""
    return getattr(p, name) != params_lib.SPEC_BY_NAME[name].default


def ignored_flags(p) -> list[str]:
    """One message per flag that has no effect in the run `p` describes (validated Params).

    Returns:
      Messages such as '--momentum has no effect with --forward_only (no gradients, no
      updates)', in parameter-table order within each rule.
    """
    out = []

    def rule(names, why):
        out.extend('--%s has no effect %s' % (n, why) for n in names if _is_set(p, n))

    if p.forward_only:
        rule(OPTIMIZER_FLAGS + TRAINING_ONLY_FLAGS, 'with --forward_only (no gradients, no '
             'updates)')
    if p.eval:
        rule(OPTIMIZER_FLAGS + TRAINING_ONLY_FLAGS, 'with --eval (nothing is trained)')
        rule(('print_training_accuracy',), 'with --eval (eval prints top-1/top-5 itself)')
        rule(('trace_file', 'tfprof_file', 'save_summaries_steps', 'freeze_when_forward_only',
              'max_ckpts_to_keep'), 'with --eval')
    else:
        rule(('eval_interval_secs',), 'without --eval')
        if not any(_is_set(p, n) for n in EVAL_DURING_TRAINING_FLAGS) and not p.forward_only:
            rule(EVAL_FLAGS, 'without --eval or --eval_during_training_*')
            rule(('stop_at_top_1_accuracy',), 'without --eval_during_training_* (no '
                 'evaluation runs during training)')
    if p.forward_only:
        rule(EVAL_FLAGS, 'with --forward_only')
    elif not p.eval:
        rule(('freeze_when_forward_only',), 'without --forward_only')
    if not p.train_dir:
        rule(('summary_verbosity', 'save_summaries_steps'), 'without --train_dir (summaries '
             'are written there)')
        if not p.eval and not p.forward_only:
            rule(('save_model_secs', 'save_model_steps', 'max_ckpts_to_keep'),
                 'without --train_dir (checkpoints are written there)')
    elif not p.eval and p.summary_verbosity >= 1 and not p.save_summaries_steps:
        out.append('--summary_verbosity=%d writes only the graph without --save_summaries_steps'
                   % p.summary_verbosity)
    return list(dict.fromkeys(out))


def preflight(bench) -> None:
    """Warnings for ineffective flags; fails early on --plot_file without matplotlib.

    Raises:
      cnn_util.BenchmarkError: --plot_file is given and matplotlib is missing.
    """
    for message in ignored_flags(bench.params):
        cnn_util.warn(message)
    if bench.params.plot_file:
        results_log.check_plot_available()


def make_hooks(bench, info) -> list[run_hooks.RunHook]:
    """The hooks of a training or forward-only run, in call order."""
    p = bench.params
    cluster = getattr(bench, 'cluster', None)
    chief = cluster.is_chief if cluster is not None else True  # saves and writes summaries
    training = not p.forward_only
    hooks = []
    if p.train_dir and p.summary_verbosity >= 1 and chief:
        hooks.append(summaries.SummaryHook(bench))
    if training and any(_is_set(p, n) for n in EVAL_DURING_TRAINING_FLAGS):
        hooks.append(eval_runner.EvalDuringTrainingHook(bench))
    if p.graph_file or p.trace_file or p.tfprof_file:
        hooks.append(profiling.ProfilingHook(p))
    if training and p.train_dir and chief:
        hooks.append(checkpoints.CheckpointHook(p))
    if p.plot_file:
        hooks.append(results_log.PlotHook(p.plot_file))
    if p.benchmark_log_dir:
        hooks.append(results_log.ResultsLogHook(p.benchmark_log_dir))
    hooks.append(signals.SignalHook())
    return hooks


def result_extras(bench, loop) -> dict:
    """Keys added to the loop's result: the common fields, per-step records, and defaults for
    the keys that hooks fill in (checkpoint_path, eval, stopped_by_signal, ...)."""
    p = bench.params
    restored = getattr(bench, 'restored_step', None)
    global_step = (restored or 0) + (0 if p.forward_only else
                                     p.num_warmup_batches + loop.num_steps)
    extras = results_log.common_fields(bench)
    extras.update({
        'steps': results_log.step_records(loop.step_times, loop.losses, bench.global_batch_size),
        'restored_step': restored,
        'global_step': global_step,
        'checkpoint_path': None,
        'eval': None,
        'evals': [],
        'stopped_by_signal': None,
        'results_file': None,
    })
    return extras


def run_frozen(bench) -> dict:
    """--forward_only --freeze_when_forward_only: time inference on a graph whose variables were
    turned into constants (after restoring a checkpoint, when there is one)."""
    cnn_util.log_fn('Generating forward-only model (frozen)')
    start = time.perf_counter()
    info = bench.build_graph()
    with info.graph.as_default(), bench.create_session(info) as sess:
        bench.restored_step = checkpoints.restore_or_initialize(sess, info, bench)
        tensors = [info.loss, info.top_1, info.top_5, info.learning_rate]
        pipe = info.pipeline
        ops = {'warmup_ops': list(pipe.warmup_ops), 'step_ops': list(pipe.step_ops)}
        sizes = list(getattr(pipe, 'size_ops', None) or [])
        keep = ([info.train_op.name] + [t.op.name for t in tensors + sizes]
                + [op.name for group in ops.values() for op in group])
        frozen = tf1.graph_util.convert_variables_to_constants(
            sess, info.graph.as_graph_def(), keep)
    graph = tf.Graph()
    with graph.as_default():
        tf1.import_graph_def(frozen, name='')
        step = tf.constant(bench.restored_step or 0, tf.int64, name='frozen_global_step')
        loss, top_1, top_5, lr = [graph.get_tensor_by_name(t.name) for t in tensors]
        # The pipeline's ops, as imported into the frozen graph.
        pipeline = types.SimpleNamespace(
            staging_depth=getattr(pipe, 'staging_depth', 1),
            size_ops=[graph.get_tensor_by_name(t.name) for t in sizes],
            **{k: [graph.get_operation_by_name(op.name) for op in v] for k, v in ops.items()})
        frozen_info = info._replace(
            graph=graph, train_op=graph.get_operation_by_name(info.train_op.name), loss=loss,
            top_1=top_1, top_5=top_5, learning_rate=lr, global_step=step, mgr=None, init_ops=[],
            pipeline=pipeline)
    build_secs = time.perf_counter() - start
    cnn_util.log_fn('Froze the variables into constants (%d graph nodes)' % len(frozen.node))
    with graph.as_default(), bench.create_session(frozen_info) as sess:
        if pipeline.warmup_ops:
            sess.run(pipeline.warmup_ops)
        hooks = make_hooks(bench, frozen_info)
        ctx = run_hooks.RunContext(sess=sess, info=frozen_info, bench=bench)
        for hook in hooks:
            hook.begin(ctx)
        loop = bench._timed_loop(sess, frozen_info, hooks)
        result = bench._result(loop, build_secs)
        result['frozen'] = True
        for hook in hooks:
            hook.end(result)
    return result
