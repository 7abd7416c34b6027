"""The flags that have no effect in a run: one `warning:` line each, before the run starts
(preflight/usage.py check_with_tensorflow prints them), so that a flag the user typed is never
silently ignored.

    ignored_flags(p, dataset, given)   the rules of the modes (forward-only, eval, synthetic
                                       data, one host, ...) and the original's flags that do
                                       nothing here (`original_flag_messages`: the check of
                                       params/original_flags.py's tables, which hold the
                                       flags and say why)
    messages(p, visible_gpus, dataset, given)  those, and the host's (GPU flags on a CPU run,
                                       or in a plan of a GPU that is not here, the OpenMP
                                       flags where no OpenMP runtime is loaded, ...)
    device_messages(p, visible_gpus, planned, device, ...)  the same, for a run whose
                                       planned GPU (hardware/gpu_plans.planned_gpu) and
                                       device are decided already (the usage check decides
                                       them once), with the reasons of its all-reduce and
                                       transfer flags on that device (`exchange_reasons`)

A flag counts as chosen when its value differs from the table's default, or, for the rules of
the modes, when the command line gave it at a default that asks for a step of the run
(`STEP_DEFAULTS`: `--datasets_use_prefetch` asks for prefetching, and without a tf.data
pipeline nothing prefetches); an input step's flag set false (`OFF_SWITCHES`: --nodistortions)
turns the step off, which asks for nothing in a mode without the step. A default that means
off, auto, 'same as' or a setting of a step (0, false, empty, None, --max_ckpts_to_keep=5,
--momentum=0.9) asks for nothing: typed, it stays silent, as does --cross_replica_sync=true
on one host (nothing to synchronise). The original's flags that do nothing here
(params/original_flags.py) warn only at another value than the default: at the default they
ask for what this project does anyway. Where a mode's rule
covers one of them (a tf.data flag on synthetic data), the mode's message replaces the
original's, so that each line is true for the run it is printed in.
"""

from __future__ import annotations

from .. import params as params_lib
from ..hardware import gpu_plans, links
from ..params import device_rules, optimizer_ranges, original_flags
from ..runtime import cpu_tuning, runtime_env
from ..variable_managers import transfer_rules
from .gpu_only_flags import as_set, gpu_only_on_cpu, planned_gpu_flags  # noqa: F401

OPTIMIZER_FLAGS = (
    'optimizer', 'momentum', 'rmsprop_decay', 'rmsprop_momentum', 'rmsprop_epsilon',
    'adam_beta1', 'adam_beta2', 'adam_epsilon', 'init_learning_rate',
    'piecewise_learning_rate_schedule', 'num_epochs_per_decay', 'learning_rate_decay_factor',
    'num_learning_rate_warmup_epochs', 'minimum_learning_rate', 'weight_decay', 'gradient_clip',
    'fused_weight_decay')
# The flags each optimizer reads (graph/learning_rate.make_optimizer; sgd reads none of them),
# from params/optimizer_ranges.READ_BY, the one table of which optimizer reads which flag.
OPTIMIZER_OWN_FLAGS = {
    optimizer: tuple(n for n, reader in optimizer_ranges.READ_BY.items() if reader == optimizer)
    for optimizer in ('momentum', 'rmsprop', 'adam')}
TRAINING_ONLY_FLAGS = (
    'save_model_secs', 'save_model_steps', 'eval_during_training_every_n_steps',
    'eval_during_training_every_n_epochs', 'eval_during_training_at_specified_steps',
    'eval_during_training_at_specified_epochs',
    'stop_at_top_1_accuracy', 'loss_type_to_report', 'single_l2_loss_op')
EVAL_FLAGS = ('num_eval_batches', 'num_eval_epochs', 'eval_batch_size', 'eval_dir')
# The loss scale of float16 compute (graph/precision.LossScaler: --use_fp16 only).
FLOAT16_LOSS_SCALE_FLAGS = ('fp16_loss_scale', 'fp16_enable_auto_loss_scale',
                            'fp16_inc_loss_scale_every_n')
# The last three are the original's (params/original_flags.py): --datasets_use_prefetch's and
# --datasets_parallel_interleave_prefetch's own messages name a tf.data flag to use instead,
# which does nothing either where no tf.data pipeline reads; --datasets_sloppy_parallel_interleave
# acts on a training run's tf.data input only (preprocessing._TfDataPipeline.sloppy).
TF_DATA_FLAGS = (
    'datasets_num_private_threads', 'datasets_use_caching', 'datasets_repeat_cached_sample',
    'datasets_prefetch_buffer_size', 'datasets_parallel_interleave_cycle_length',
    'datasets_use_prefetch', 'datasets_sloppy_parallel_interleave',
    'datasets_parallel_interleave_prefetch')
INPUT_FLAGS = ('distortions', 'distort_color', 'resize_method', 'fuse_decode_and_crop',
               'use_datasets', 'skip_corrupt_records', 'shuffle_buffer_size',
               'distort_color_in_yiq') + TF_DATA_FLAGS
EVAL_DURING_TRAINING_FLAGS = params_lib.EVAL_DURING_TRAINING_FLAGS
# The tf.data flags an evaluation's full pass reads (preprocessing._TfDataPipeline
# ._full_pass_dataset: an evaluation of ImageNet shards reads with tf.data whatever
# --use_datasets says): the records' cache, the prefetch and its buffer, the private threads and
# the files interleaved. It leaves out --shuffle_buffer_size and --datasets_repeat_cached_sample.
EVAL_TF_DATA_FLAGS = (
    'datasets_num_private_threads', 'datasets_use_caching', 'datasets_prefetch_buffer_size',
    'datasets_parallel_interleave_cycle_length', 'datasets_use_prefetch')
# The all-reduce flags and their reasons are the device's rules' (params/device_rules.py
# all_reduce_reasons): the algorithm's two flags, then those of packing, merging and copying.
ALGORITHM_FLAGS = device_rules.ALGORITHM_FLAGS
ALL_REDUCE_FLAGS = device_rules.ALL_REDUCE_FLAGS
ALL_REDUCE_MODES = params_lib.ALL_REDUCE_MODES
ONE_TOWER_FLAGS = device_rules.ONE_TOWER_FLAGS
NCCL_ON_CPU = device_rules.NCCL_ON_CPU
_OWN_AGGREGATION = device_rules.OWN_AGGREGATION

# The flags of the rules below whose default switches on a step of the run: typed at that
# default, they still ask for the step, so a mode without it warns. Every other flag's default
# asks for nothing there (decided per flag): off (0, false: --save_model_secs=0,
# --use_datasets=false), auto or 'same as' (None, 0: --eval_batch_size=0 is --batch_size),
# a setting or a bound of a step (--momentum=0.9, --weight_decay, --optimizer=sgd,
# --resize_method, --shuffle_buffer_size, --datasets_prefetch_buffer_size,
# --max_ckpts_to_keep=5, --fail_on_slower=5), or --cross_replica_sync=true, which on one host
# or with one worker has nothing to synchronise.
STEP_DEFAULTS = frozenset({
    'datasets_use_prefetch',  # prefetch the tf.data input
    'distortions',  # distort the training images
    'fuse_decode_and_crop',  # decode only the crop of each JPEG
    'fused_weight_decay',  # fold weight decay into the updates
    'compact_gradient_transfer',  # all-reduce float16 (variable_managers/grad_transfer.py)
    'use_tf_layers',  # build the layers with tf.layers (gone: params/original_flags.py)
})
# The steps of STEP_DEFAULTS whose false switches the step off (the input's, tf.layers): in a
# mode without the step, off asks for nothing (--nodistortions on synthetic data, or with
# --eval), so only true warns there. --nodatasets_use_prefetch is not one: it is one of the
# original's flags that do nothing here (the tf.data input always prefetches), and says so;
# --nofused_weight_decay warns at either value where the decay cannot be folded (it cannot
# choose the update). --use_tf_layers asks for tf.layers, which no run here takes (every layer
# is tf.nn ops): typed true it warns in every run; --nouse_tf_layers asks for what every run
# does: silent.
OFF_SWITCHES = frozenset({'distortions', 'fuse_decode_and_crop', 'use_tf_layers'})


def _unfolded_decay(p) -> str:
    """Why a training run does not fold weight decay into its updates whatever
    --fused_weight_decay says (graph/fused_decay.applies' rules that the flags decide), as the
    rest of a message; '' when it may fold it."""
    if not p.weight_decay:
        return 'with --weight_decay=0 (no decay to fold)'
    if p.optimizer not in params_lib.FOLDABLE_OPTIMIZERS:
        return ('with --optimizer=%s (only %s fold the decay into their update; it stays in '
                'the loss)' % (p.optimizer, ', '.join(params_lib.FOLDABLE_OPTIMIZERS)))
    for flag, on in (('gradient_clip', p.gradient_clip is not None),
                     ('staged_vars', p.staged_vars), ('fp16_vars', p.use_fp16 and p.fp16_vars),
                     ('job_name', bool(p.job_name))):
        if on:
            return 'with --%s (the decay stays in the loss)' % flag
    return ''


def _eval_length_flag(p, given) -> str:
    """The flag that sets the length of the evaluation of `p` (a positive --num_eval_batches
    or --num_eval_epochs, after params/zero_values.as_unset) as the user gave it:
    '--num_eval_batches', '--num_eval_epochs', or for the original's 0 that as_unset made 100
    batches, the flag given 0 ('--num_eval_epochs=0'): --num_eval_batches was not given."""
    name = 'num_eval_batches' if p.num_eval_batches else 'num_eval_epochs'
    if given and name not in given:  # as_unset's 100 batches for a 0 given
        zero = next((n for n in ('num_eval_epochs', 'num_eval_batches') if n in given), None)
        if zero is not None:
            return '--%s=0' % zero
    return '--' + name


# The --variable_update modes whose workers may train asynchronously (--nocross_replica_sync;
# the other cluster modes refuse it: params/cluster_rules.py).
ASYNC_MODES = ('parameter_server', 'distributed_replicated')


def ignored_flags(p, dataset: str | None = None, given=frozenset(),
                  device: str | None = None) -> list[str]:
    """One message per flag that has no effect in the run `p` describes.

    Args:
      p: the validated Params as given (before params.resolve_params fills in defaults, so
        that a value counts as chosen only when it differs from the table's default).
      dataset: the dataset's name ('imagenet', 'cifar10', 'synthetic'), for the rules of real
        data; None: judged from --data_name alone.
      given: the names of the flags the command line gave (also at their default value);
        empty for a library run, whose flags count only when not at their default. A flag
        given at its default counts only when it is one of STEP_DEFAULTS or a flag of an
        optimizer the run does not use (OPTIMIZER_OWN_FLAGS: --optimizer=sgd --momentum=0.9).
      device: the run's device ('cpu', 'gpu'; params.default_device); None: --device as
        given. On the CPU an ignored NCCL flag's line adds NCCL_ON_CPU.

    Returns:
      Messages such as '--momentum has no effect with --forward_only (no gradients, no
      updates)', in parameter-table order within each rule (`flags_without_effect`).
    """
    return flags_without_effect(p, dataset, given, exchange_reasons(p, device or p.device))


def exchange_reasons(p, device: str | None) -> dict[str, str]:
    """{flag: why it has no effect} of the flags of the gradients' exchange in run `p` on
    `device`, whatever their values: the all-reduce flags (params/device_rules.py
    all_reduce_reasons), then `replicated`'s transfer options
    (variable_managers/transfer_rules.no_effect_reasons). `device_messages` asks once the
    device is decided (preflight/usage.check_with_tensorflow decides it)."""
    return {**device_rules.all_reduce_reasons(p, device),
            **transfer_rules.no_effect_reasons(p)}


class _Rules:
    """The messages of `flags_without_effect`, collected: calling it with (flag names, why)
    adds '--NAME has no effect WHY' for each flag of the names the user chose (set away from
    its default, or given at one of STEP_DEFAULTS; an OFF_SWITCHES flag only when true), in
    the names' order, and remembers them as covered (the original's own line is left out)."""

    def __init__(self, p, given):
        self.p = p
        self.asked = {n for n in given if n in STEP_DEFAULTS}
        self.covered = set()
        self.out = []

    def __call__(self, names, why, template='--%s has no effect %s') -> None:
        p, asked = self.p, self.asked
        chosen = [n for n in names if (getattr(p, n) and n in asked if n in OFF_SWITCHES
                                       else params_lib.is_set(p, n) or n in asked)]
        self.covered.update(chosen)
        self.out.extend(template % (n, why) for n in chosen)


def flags_without_effect(p, dataset: str | None, given, reasons: dict) -> list[str]:
    """`ignored_flags` with the reasons of the gradients' exchange flags decided
    (`exchange_reasons`): the rules of the modes, the all-reduce's, the data's, the outputs',
    the cluster's and precision's, the optimizer's, then the original's flags that do
    nothing here where no rule said so already (`original_flag_messages`).

    Args:
      p, dataset, given: as for `ignored_flags`.
      reasons: {flag: why} of `exchange_reasons`, in their order.

    Returns:
      The messages, each once, in the rules' order.
    """
    rule = _Rules(p, given)
    _mode_rules(p, rule)
    if not p.forward_only and not p.eval:
        unfolded = _unfolded_decay(p)
        if unfolded:
            rule(('fused_weight_decay',), unfolded)
    for name, why in reasons.items():  # all-reduce flags, replicated's transfer options
        rule((name,), why)
    _data_rules(p, rule, dataset, given)
    _output_rules(p, rule)
    _cluster_and_precision_rules(p, rule)
    if not p.forward_only and not p.eval:
        _optimizer_rules(p, rule, given)
        rule.out.extend(_below_the_floor(p))
    # The original's flags that do nothing here, where no mode's rule said so already.
    rule.out.extend(m for m in original_flag_messages(p, given)
                    if m.split(' ', 1)[0][2:] not in rule.covered)
    return list(dict.fromkeys(rule.out))


def _mode_rules(p, rule) -> None:
    """The rules of --forward_only and --eval (nothing trained), and of the evaluation flags
    of a run without an evaluation."""
    if p.forward_only:
        # --loss_type_to_report names the forward-only step lines' loss column, as the
        # original's (lifecycle/timed_run.loop_spec), and their accuracy columns are always
        # there.
        rule(OPTIMIZER_FLAGS + tuple(n for n in TRAINING_ONLY_FLAGS
                                     if n != 'loss_type_to_report') + ONE_TOWER_FLAGS,
             'with --forward_only (no gradients, no updates)')
        rule(('print_training_accuracy',), 'with --forward_only (its step lines always have '
             'the top_1_accuracy and top_5_accuracy columns, as the original\'s)')
    if p.forward_only or p.eval:  # graph/graph_choices.py: a training graph's only
        rule(('graph_choices', 'print_graph_choices'), 'with --%s (the graph choices change '
             'only a training graph: inference keeps its own)'
             % ('eval' if p.eval else 'forward_only'))
    if p.eval:
        rule(OPTIMIZER_FLAGS + TRAINING_ONLY_FLAGS + ONE_TOWER_FLAGS, 'with --eval (nothing is '
             'trained)')
        rule(('baseline', 'fail_on_slower'), 'with --eval (the baseline gate compares training '
             'or forward-only runs)')
        rule(('print_training_accuracy',), 'with --eval (eval prints top-1/top-5 itself)')
        rule(('trace_file', 'tfprof_file', 'save_summaries_steps', 'freeze_when_forward_only',
              'max_ckpts_to_keep'), 'with --eval')
    else:
        rule(('eval_interval_secs',), 'without --eval')
        if not p.forward_only and not any(params_lib.is_set(p, n)
                                          for n in EVAL_DURING_TRAINING_FLAGS):
            rule(EVAL_FLAGS, 'without --eval or --eval_during_training_*')
            rule(('stop_at_top_1_accuracy',), 'without --eval_during_training_* (no '
                 'evaluation runs during training)')


def _data_rules(p, rule, dataset, given) -> None:
    """The rules of the input flags (synthetic data, or real data: `_real_data_input`), of an
    evaluation's length, and of the evaluation flags of a forward-only run."""
    synthetic = not p.data_dir or p.data_name == 'synthetic'
    if synthetic:
        rule(INPUT_FLAGS, 'on synthetic data (no --data_dir: nothing is read or preprocessed)')
        rule(('batch_group_size',), 'on synthetic data (it sets the batches staged per device; '
             'synthetic batches are made on each device, and nothing is staged)')
    else:
        _real_data_input(p, dataset, rule)
    if p.eval and (p.num_eval_batches or p.num_eval_epochs):
        rule(('num_batches', 'num_epochs'), 'with --eval and %s (an evaluation\'s length is '
             '--num_eval_batches, else --num_eval_epochs, else --num_batches or --num_epochs, '
             'as in the original)' % _eval_length_flag(p, given))
    if p.forward_only:
        rule(EVAL_FLAGS, 'with --forward_only')
    elif not p.eval:
        rule(('freeze_when_forward_only',), 'without --forward_only')


def _output_rules(p, rule) -> None:
    """The rules of the run's outputs: --baseline's gate, a dry run's (`_dry_run_only`),
    --gpu_model outside a plan, and what --train_dir and --summary_verbosity write."""
    if not p.baseline:
        rule(('fail_on_slower', 'include_unclean_runs'), 'without --baseline')
    if p.dry_run and not p.plan_scaling and not p.calibrate:
        _dry_run_only(p, rule)
    if not p.dry_run and not p.plan_scaling:
        rule(('gpu_model',), 'without --dry_run or --plan_scaling (a run uses the GPUs it '
             'sees; --gpu_model plans a GPU that is not here: add --dry_run or --plan_scaling)')
    if not p.train_dir:
        rule(('summary_verbosity', 'save_summaries_steps'), 'without --train_dir (summaries '
             'are written there)')
        if not p.eval and not p.forward_only:
            rule(('save_model_secs', 'save_model_steps', 'max_ckpts_to_keep'),
                 'without --train_dir (checkpoints are written there)')
    elif not p.eval and not p.summary_verbosity:  # the original writes none at level 0 too
        rule(('save_summaries_steps',), 'without --summary_verbosity (at its default, 0, no '
             'summary is written; --summary_verbosity=1 writes the loss, learning rate and '
             'images/sec)')
    elif not p.eval and p.summary_verbosity >= 1 and not p.save_summaries_steps:
        rule.out.append('--summary_verbosity=%d writes only the graph without '
                        '--save_summaries_steps' % p.summary_verbosity)
    elif p.forward_only and not p.eval and p.summary_verbosity == 2:  # lifecycle/summaries.py
        rule.out.append('--summary_verbosity=2 has no effect with --forward_only beyond level 1 '
                        '(it adds the histogram of the gradients, and a forward-only run has '
                        'none); --summary_verbosity=3 adds the input images%s'
                        % ('' if p.freeze_when_forward_only else " and the weights' histograms"))


def _cluster_and_precision_rules(p, rule) -> None:
    """The rules of --cross_replica_sync (one host, or one worker of an asynchronous mode)
    and of the float16 flags (graph/precision.py reads them for float16 compute only)."""
    if not p.job_name:
        rule(('cross_replica_sync',), 'on one host (it chooses synchronous or asynchronous '
             'updates between a cluster\'s workers: --job_name, TF_CONFIG or Slurm)')
    elif (p.job_name == 'worker' and len(p.worker_hosts or ()) == 1
          and p.variable_update in ASYNC_MODES):
        rule(('cross_replica_sync',), 'with one worker (it chooses synchronous or asynchronous '
             'updates between several workers)')
    if not p.use_fp16:
        rule(('fp16_vars',), 'without --use_fp16 (the variables are float32 in float32 and '
             'bfloat16 runs)')
        rule(FLOAT16_LOSS_SCALE_FLAGS, 'without --use_fp16 (only float16 compute scales the '
             'loss: bfloat16 has float32\'s exponent range, and float32 needs no scaling)')
    elif p.forward_only or p.eval:  # no backward pass: graph/train_op.py scales the loss
        rule(FLOAT16_LOSS_SCALE_FLAGS, 'with --%s (the loss scale keeps float16 gradients '
             'from underflowing, and a run without a backward pass has none)'
             % ('eval' if p.eval else 'forward_only'))
    elif not p.fp16_enable_auto_loss_scale:  # LossScaler: only the automatic scale doubles
        rule(('fp16_inc_loss_scale_every_n',), 'without --fp16_enable_auto_loss_scale (the '
             'static loss scale never changes)')


def _optimizer_rules(p, rule, given) -> None:
    """The rules of a training run's optimizer flags: those of an optimizer it does not use
    (OPTIMIZER_OWN_FLAGS; given at all counts, at the default too: --optimizer=sgd
    --momentum=0.9), and --single_l2_loss_op without weight decay."""
    for name, own in OPTIMIZER_OWN_FLAGS.items():
        if name != p.optimizer:
            typed = {n for n in own if n in given} - rule.asked
            rule.asked.update(typed)
            rule(own, 'with --optimizer=%s (only --optimizer=%s reads it)' % (p.optimizer, name))
            rule.asked.difference_update(typed)
    if not p.weight_decay:
        rule(('single_l2_loss_op',), 'with --weight_decay=0 (there is no weight-decay term '
             'to compute)')


def _dry_run_only(p, rule) -> None:
    """The rules of a dry run (preflight/dry_run.py): it trains nothing, so --train_dir gets
    no checkpoint and --results_db no record; a --gpu_interconnect link (not a host preset,
    whose GPU the dry run plans) is crossed by no byte with one GPU, or with independent towers,
    which share nothing."""
    # --noresults_db (False) asks for nothing to be recorded, which the dry run keeps.
    rule(('train_dir',) + (('results_db',) if p.results_db else ()), 'with --dry_run (nothing '
         'is trained, saved or recorded; its report goes to --benchmark_log_dir)')
    if links.preset_of(p.gpu_interconnect) is None and (
            p.num_gpus == 1 or p.variable_update == 'independent'):
        rule(('gpu_interconnect',), 'with --dry_run on %s (no byte crosses a GPU <-> GPU link; '
             '--plan_scaling plans several GPUs)' % (
                 'one GPU' if p.num_gpus == 1 else 'independent towers, which share nothing'))


def _real_data_input(p, dataset, rule) -> None:
    """The rules of the input flags on real data (`flags_without_effect`' `rule`: _Rules).

    An evaluation (--eval, or --eval_during_training_* in training) reads with tf.data,
    without shuffling, whatever --use_datasets says, and takes the central crop, as a
    forward-only run does (preprocessing.make_input_pipeline). Without --use_datasets (or
    --skip_corrupt_records) an ImageNet training run reads with RecordInput, so the tf.data
    flags act only on its evaluations, if it has any.
    """
    if p.eval or p.forward_only:
        rule(('distortions', 'distort_color'), 'with --%s (its images get the central crop of '
             'evaluation: no random crop, flip or colour change)'
             % ('eval' if p.eval else 'forward_only'))
        rule(('datasets_sloppy_parallel_interleave',), 'with --%s (only a training run\'s '
             'input may reorder: this one reads in a fixed order)'
             % ('eval' if p.eval else 'forward_only'))
    if p.eval:
        rule(('use_datasets',), 'with --eval (an evaluation reads with tf.data whatever it '
             'says)')
        rule(('shuffle_buffer_size', 'datasets_repeat_cached_sample'), 'with --eval (an '
             'evaluation reads each record once, in a fixed order: tf.data without shuffling)')
        return
    if (dataset or p.data_name) != 'imagenet' or p.use_datasets or p.skip_corrupt_records:
        if not p.forward_only and runtime_env.op_determinism():  # a training run's tf.data
            rule(('datasets_sloppy_parallel_interleave',), 'with TensorFlow\'s op determinism '
                 'on (TF_DETERMINISTIC_OPS: it keeps every tf.data order)')
        return
    if p.forward_only or not any(params_lib.is_set(p, n) for n in EVAL_DURING_TRAINING_FLAGS):
        rule(TF_DATA_FLAGS, 'without --use_datasets (RecordInput reads the files)')
        return
    # --datasets_use_prefetch asks for the prefetching the evaluations do: not named here.
    rule([n for n in EVAL_TF_DATA_FLAGS if n != 'datasets_use_prefetch'],
         'without --use_datasets (RecordInput reads the training files; the evaluations read '
         'with tf.data)', '--%s acts only on the evaluations %s')
    rule([n for n in TF_DATA_FLAGS if n not in EVAL_TF_DATA_FLAGS],
         'without --use_datasets (RecordInput reads the training files, and the evaluations do '
         'not use it)')


def _below_the_floor(p) -> list[str]:
    """The schedule flag whose every rate is at or below --minimum_learning_rate (each update
    then runs at the floor: graph/learning_rate.get_learning_rate's last step). Decay and
    warm-up only lower a flag's rates, so the largest is the schedule's own."""
    if p.minimum_learning_rate <= 0:
        return []
    if p.piecewise_learning_rate_schedule:
        flag = 'piecewise_learning_rate_schedule'
        rates, _ = params_lib.parse_piecewise_schedule(p.piecewise_learning_rate_schedule)
    elif p.init_learning_rate is not None:
        flag, rates = 'init_learning_rate', [p.init_learning_rate]
    else:
        return []  # the model's default rate: known once the model and batch are
    if max(rates) > p.minimum_learning_rate:
        return []
    return ['--%s has no effect: --minimum_learning_rate=%g is at or above its %s %g, so '
            'every update runs at %g' % (flag, p.minimum_learning_rate,
                                         'largest rate' if len(rates) > 1 else 'rate',
                                         max(rates), p.minimum_learning_rate)]


def original_flag_messages(p, given=frozenset()) -> list[str]:
    """One message per flag of the original's that has no effect in the run `p` describes
    (params/original_flags.py holds them and says why): those of original_flags.NO_EFFECT set
    to another value than their default (an OFF_SWITCHES flag instead when true and in
    `given`, the flags the command line gave: --use_tf_layers asks for tf.layers, which no run
    takes, and --nouse_tf_layers for what every run does), --ml_perf with --eval, the GPU-only
    flags with --device=cpu (`gpu_only_on_cpu`) and --resnet_base_lr where it sets no model's
    rate.

    Returns:
      Messages '--NAME has no effect ...: why; what to use instead', in original_flags' order
      (`ignored_flags` adds them to its own).
    """
    out = ['--%s has no effect %s' % (name, why) for name, why in original_flags.NO_EFFECT.items()
           if (getattr(p, name) and name in given if name in OFF_SWITCHES
               else getattr(p, name) != original_flags.DEFAULTS[name])]
    if original_flags.ml_perf_wanted(p) and p.eval:
        out.append('--ml_perf has no effect with --eval: the MLPerf lines cover training and '
                   'forward-only runs; use --eval_during_training_* in a training run for '
                   'eval_accuracy lines')
    if p.device == 'cpu':
        out.extend(gpu_only_on_cpu(p))
    if p.resnet_base_lr is not None:
        if not original_flags.IMAGENET_RESNET.match(p.model):
            out.append('--resnet_base_lr has no effect with --model=%s: it sets the default '
                       'learning rate of the ImageNet ResNets (resnet50, resnet101, resnet152 '
                       'and their _v1.5/_v2); use --init_learning_rate' % p.model)
        elif p.init_learning_rate is not None or p.piecewise_learning_rate_schedule:
            out.append('--resnet_base_lr has no effect with --init_learning_rate or '
                       '--piecewise_learning_rate_schedule (they replace the model\'s default '
                       'rate); use one of them')
    return out


#: The flags that set an OpenMP runtime's variables (runtime/cpu_tuning.environment_updates).
OPENMP_FLAGS = ('kmp_blocktime', 'kmp_affinity', 'kmp_settings')


def openmp_flags(p, loaded: bool | None) -> list[str]:
    """One message per OpenMP flag (OPENMP_FLAGS) set to another value than its default (the
    user chose it: nothing else sets them) where no OpenMP runtime is loaded: the variable
    is set, and nothing reads it (TensorFlow's stock wheel runs oneDNN on its own thread
    pool: runtime/cpu_tuning.py). The header's `Threads:` line says so too.

    Args:
      p: the Params as given.
      loaded: whether an OpenMP runtime is mapped into this process
        (cpu_tuning.openmp_runtime_loaded, once TensorFlow has loaded); None (unknown): none.
    """
    if loaded is not False:
        return []
    threads = '; use --num_intra_threads and --num_inter_threads for the CPU threads'
    # --kmp_settings asks the runtime to print its settings, not for threads (the original's
    # --kmp_settings=1, its default, set KMP_SETTINGS with --mkl only).
    what = {'kmp_blocktime': ('KMP_BLOCKTIME', threads), 'kmp_affinity': ('KMP_AFFINITY', threads),
            'kmp_settings': ('KMP_SETTINGS', ' and no OpenMP settings are printed (the '
                             'original\'s default 1 set it with --mkl only); the header\'s '
                             'Threads: line shows the run\'s thread pools')}
    return ['--%s has no effect: no OpenMP runtime is loaded (this TensorFlow runs oneDNN on its '
            'own thread pool), so nothing reads %s%s' % ((name,) + what[name])
            for name in OPENMP_FLAGS if params_lib.is_set(p, name)]


def messages(p, visible_gpus: int, dataset: str | None = None, given=frozenset(),
             openmp_loaded=None, device: str | None = None) -> list[str]:
    """Every 'has no effect' message of the run `p` describes on this host:
    `device_messages` with the GPU a plan of GPUs that are not here plans
    (hardware/gpu_plans.planned_gpu) and, unless given, the device decided with it.

    Args:
      p: the checked Params as given (not resolved: see ignored_flags).
      visible_gpus: GPUs TensorFlow sees.
      dataset, given: as for ignored_flags.
      openmp_loaded: as for `device_messages`.
      device: the run's device as the caller decided it (params.default_device with the GPUs
        planned: usage.planned_gpus); None: decided here the same way.
    """
    planned = gpu_plans.planned_gpu(p, visible_gpus)
    if device is None:
        device = params_lib.default_device(p, visible_gpus or int(planned is not None))
    return device_messages(p, visible_gpus, planned, device, dataset, given, openmp_loaded)


def device_messages(p, visible_gpus: int, planned, device: str,
                    dataset: str | None = None, given=frozenset(),
                    openmp_loaded=None) -> list[str]:
    """Every 'has no effect' message of the run `p` describes on this host, its planned GPU
    and device decided: `ignored_flags` (`flags_without_effect`, with the reasons of the
    gradients' exchange flags on `device`: `exchange_reasons`), the GPU-only flags of a run
    that lands on the CPU (no GPU visible) or, in a plan of a GPU that is not here
    (`planned`), those that do not change the plan (`planned_gpu_flags`), --hierarchical_copy
    on one device (but for --plan_scaling), and the OpenMP flags where no OpenMP runtime is
    loaded (`openmp_flags`).

    Args:
      p: the checked Params as given (not resolved: see ignored_flags).
      visible_gpus: GPUs TensorFlow sees.
      planned: the GpuSpec a plan of GPUs that are not here plans
        (hardware/gpu_plans.planned_gpu), or None.
      device: the run's device ('cpu' or 'gpu': params.default_device with the GPUs planned).
      dataset, given: as for ignored_flags.
      openmp_loaded: () -> whether an OpenMP runtime is loaded, True, False or None (unknown);
        default cpu_tuning.openmp_runtime_loaded (call after TensorFlow loaded; a test seam).
    """
    out = flags_without_effect(p, dataset, given, exchange_reasons(p, device))
    # The GPU-only flags of a run on the CPU (no GPU visible) or, in a plan of a GPU that is
    # not here, those the plan does not read (its speed model's reading, asked last): the
    # lines go after ignored_flags' either way.
    on_cpu = (gpu_only_on_cpu(p, 'on the CPU, where this run is because no GPU is visible')
              if planned is None and p.device != 'cpu' and not visible_gpus else [])
    workers = len(p.worker_hosts) if p.job_name else 1
    said = any(m.startswith('--hierarchical_copy ') for m in out)  # by a mode's rule
    # --plan_scaling plans more devices, where it sets the plan's all-reduce (psgpu/psgpu).
    one_device = (p.hierarchical_copy and p.num_gpus * max(1, workers) == 1 and not said
                  and not p.plan_scaling)
    openmp, loaded = [], None
    if p.mkl or any(params_lib.is_set(p, n) for n in OPENMP_FLAGS):  # /proc read only then
        loaded = (openmp_loaded or cpu_tuning.openmp_runtime_loaded)()
        openmp = openmp_flags(p, loaded)
    out += planned_gpu_flags(p, planned) if planned is not None else on_cpu
    if one_device:
        out.append('--hierarchical_copy has no effect on one device (it splits the all-reduce '
                   'of several devices into two levels)')
    if p.mkl or openmp:
        out = [m + mkl_threads(loaded) if m.startswith('--mkl has no effect') else m
               for m in out] + openmp
    return list(dict.fromkeys(out))


def mkl_threads(loaded: bool | None) -> str:
    """The end of --mkl's line: what sets the threads the original's --mkl set (KMP_BLOCKTIME,
    KMP_AFFINITY, KMP_SETTINGS, OMP_NUM_THREADS) on this host, so that it names no flag that
    would then warn (`openmp_flags`).

    Args:
      loaded: whether an OpenMP runtime is loaded (cpu_tuning.openmp_runtime_loaded); None:
        unknown.
    """
    if loaded is False:
        return ('; for the threads it set use --num_intra_threads and --num_inter_threads (this '
                'TensorFlow loads no OpenMP runtime, so the --kmp_* flags do nothing either)')
    return ('; for the threads it set use --num_intra_threads, and --kmp_blocktime, '
            '--kmp_affinity, --kmp_settings for the OpenMP runtime%s'
            % (' this build loads' if loaded else ' of a build that loads one'))
