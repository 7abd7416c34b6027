"""The header block a run prints before it starts (README "Output"), formatted from the run
plan (run_plan.RunPlan: every value resolved before the graph, XLA's text and the graph choices
included); its precision lines (`precision_lines`) say what the reduced-precision kernels do
here (hardware/kernel_speed.py, measured or cached):

    TensorFlow:  2.21
    Model:       resnet50
    ...
    Variables:   parameter_server
    ==========
"""

from __future__ import annotations

import os
import re
import textwrap

import tensorflow as tf

from . import cnn_util, preprocessing
from . import params as params_lib
from .graph import fused_decay, graph_choices, learning_rate, precision, precision_block
from .hardware import gpu_specs, kernel_speed
from .params import original_flags, zero_values
from .runtime import cpu_tuning
from .speed_model import from_flags

# The --variable_update modes whose header has the original's `AllReduce:` line.
ALL_REDUCE_HEADER_MODES = ('replicated', 'distributed_all_reduce', 'collective_all_reduce')
SHOWN_DEVICES = 8  # a longer list shows its first few, '...', the last and the count


# The original's `Mode:` values (its BenchmarkMode), by the run plan's mode; a training run
# with --eval_during_training_* is its 'training + evaluation' (`header_mode`).
ORIGINAL_MODES = {'training': 'training', 'evaluation': 'evaluation',
                  'forward-only': 'forward only'}


def header_mode(plan) -> str:
    """The `Mode:` line's value, the original's: 'training', 'training + evaluation' (a
    training run that evaluates during training), 'evaluation' or 'forward only'."""
    if plan.training and plan.eval is not None:
        return 'training + evaluation'
    return ORIGINAL_MODES.get(plan.mode, plan.mode)


def describe_devices(devices) -> str:
    """The header's device list, a Python literal as the original's value was (log parsers
    read it with ast.literal_eval): "['/cpu:0', '/cpu:1']", or for more than SHOWN_DEVICES
    "['/cpu:0', '/cpu:1', '/cpu:2', ..., '/cpu:15']" (`device_notes` says how many)."""
    devices = list(devices)
    if len(devices) <= SHOWN_DEVICES:
        return str(devices)
    shown = [repr(d) for d in devices[:3]] + ['...', repr(devices[-1])]
    return '[%s]' % ', '.join(shown)


def device_notes(plan) -> list[str]:
    """The continuation lines under `Devices:`, each a note of this project's after the
    original's value: how many devices a shortened list stands for ('16 devices'), and 'no GPU
    visible: running on the CPU' where no GPU is visible to a CPU run."""
    notes = []
    if len(plan.devices) > SHOWN_DEVICES:
        notes.append('%d devices' % len(plan.devices))
    if plan.params.device == 'cpu' and not plan.visible_gpus:
        notes.append('no GPU visible: running on the CPU')
    return ['             %s' % note for note in notes]


def header_lines(plan, dataset, precision: list[str], resume=None, model=None) -> list[str]:
    """The header block, one string per line.

    Args:
      plan: the run's run_plan.RunPlan (its run-time values resolved:
        runtime/session_config.settle).
      dataset: the run's input_data.dataset_info.Dataset.
      precision: `precision_lines`' lines.
      resume: the checkpoints.ResumePoint a training run resumes from, or None
        (`resume_lines`).
      model: the run's CNNModel: its name as the original's header gave it (`original_name`)
        and a training run's `LR schedule:` line (its default rate;
        graph/learning_rate.describe_schedule); None: the registry's name, no such line.
    """
    p = plan.params
    config = plan.session_config
    return [
        # The original's lines keep their names, order and value shapes (log parsers read
        # them): the version as major.minor, the model's own name (original_name), SingleSess
        # and NUMA bind as Python's True/False; this project's lines come between them.
        'TensorFlow:  %s' % '.'.join(tf.__version__.split('.')[:2]),
        'Model:       %s' % (getattr(model, 'original_name', None) or p.model),
        *dataset_lines(dataset, plan.subset, epochs=plan.training),
        *input_lines(plan, dataset),
        'Classes:     %s' % dataset.describe_classes(),
        'Mode:        %s' % header_mode(plan),
        # One session over every worker: distributed_all_reduce's controller.
        'SingleSess:  %s' % (p.variable_update == 'distributed_all_reduce'),
        *batch_lines(plan, dataset),
        *(resume_lines(plan, resume) if resume is not None and plan.training else []),
        'Devices:     %s' % describe_devices(plan.devices), *device_notes(plan),
        # Whether the sessions pin threads to NUMA nodes (runtime/cpu_tuning.numa_applies).
        'NUMA bind:   %s' % bool(config is not None and config.experimental.use_numa_affinity),
        'Data format: %s' % p.data_format,
        *(['RewriterConfig: %s' % p.rewriter_config] if p.rewriter_config else []),
        *precision,
        'XLA:         %s' % plan.xla,
        'Threads:     %s' % cpu_tuning.describe(plan.threads, p),
        # Every mode's, the flag's value first, as the original's (a log parser reads it);
        # forward-only and eval runs say it is not applied (optimizer_phrase).
        'Optimizer:   %s%s' % (p.optimizer, optimizer_phrase(plan)),
        *(['LR schedule: %s' % learning_rate.describe_schedule(
            p, model, plan.images_per_global_step, plan.examples_per_epoch)]
          if plan.training and model is not None else []),
        'Variables:   %s' % p.variable_update,
        # The all-reduce spec of the managers that all-reduce (None: the default algorithm,
        # or --use_nccl), as the original printed it; collective_all_reduce's is its own
        # (it ignores --all_reduce_spec, with a warning: preflight/ineffective_flags.py).
        *(['AllReduce:   %s' % (p.variable_update in params_lib.ALL_REDUCE_MODES
                                and p.all_reduce_spec or None)]
          if p.variable_update in ALL_REDUCE_HEADER_MODES else []),
        # A cluster task's: whether the workers' updates are synchronised (the original prints
        # it there for every --job_name run, as Python's True/False).
        *(['Sync:        %s' % bool(p.cross_replica_sync)] if p.job_name else []),
        *(['Staged vars: True'] if p.staged_vars else []),
        *(['Cluster:     %s' % plan.cluster_source] if plan.cluster_source else []),
        # The original's 0 for "unset" (--num_batches=0), and what each became.
        *zero_values.header_lines(plan.given_flags, p, HEADER_VALUE_WIDTH,
                                  zero_flag_reasons(plan, dataset.name)),
        '==========',
    ]


def zero_flag_reasons(plan, dataset_name: str | None = None) -> dict[str, str]:
    """Why each flag the user gave 0 (params/zero_values.zero_flags) has no effect in this run,
    by flag: the rest of the `warning:` line the flag gets here at any value
    (preflight/ineffective_flags.messages, asked of the flags as given with that flag set: 1
    for a 0 the original took as unset, the 0 itself where it is kept), e.g.
    {'max_ckpts_to_keep': 'without --train_dir (checkpoints are written there)'}. Flags that
    act are left out. The header's `Flags at 0:` lines say this instead of an effect: a docs
    reader saw `--max_ckpts_to_keep=0, as in the original: every checkpoint is kept` under the
    warning that it has no effect without --train_dir.

    Args:
      plan: the run's RunPlan (its given_flags: none known, no reasons).
      dataset_name: the run's dataset ('imagenet', 'cifar10', 'synthetic'), for the rules of
        real data.
    """
    from .preflight import ineffective_flags
    given = plan.given_flags or {}
    names = zero_values.zero_flags(given)
    if not names:
        return {}
    p = zero_values.as_unset(params_lib.make_params(**given))  # the flags as checked
    out = {}
    for name in names:
        probe = p if name in zero_values.KEPT_ZERO else p._replace(**{name: 1})
        # '--NAME has no effect WHY', or with the value: '--NAME=1 has no effect WHY'.
        line = re.compile(r'--%s(=\S*)? has no effect (.*)' % name)
        said = ineffective_flags.messages(probe, plan.visible_gpus, dataset_name,
                                          frozenset(given), device=plan.params.device)
        why = next((m.group(2) for m in map(line.fullmatch, said) if m), None)
        if why is not None:
            out[name] = why
    return out


def ps_header_lines(plan, model=None) -> list[str]:
    """The header block of a ps task, which builds no graph and runs no step: what it serves
    and for whom (`served`), its own device (the CPU its variables are placed on:
    variable_managers/distributed.py PsPlacer), its threads and the cluster lines; not the
    workers' batch, towers, data or precision, which it does not use (it printed the
    workers' `Batch size:` and its --num_gpus logical devices as its own).

    Args:
      plan: the ps task's run_plan.RunPlan (its params: --task_index, the host lists).
      model: the run's CNNModel (its name as the original's header gave it), or None.
    """
    p = plan.params
    first, *rest = textwrap.wrap(served(p), HEADER_VALUE_WIDTH)
    return [
        'TensorFlow:  %s' % '.'.join(tf.__version__.split('.')[:2]),
        'Model:       %s' % (getattr(model, 'original_name', None) or p.model),
        'Serves:      %s' % first, *('             %s' % line for line in rest),
        'Devices:     %s' % describe_devices(
            ['/job:ps/replica:0/task:%d/device:CPU:0' % p.task_index]),
        'Threads:     %s' % cpu_tuning.describe(plan.threads, p),
        'Variables:   %s' % p.variable_update,
        'Sync:        %s' % bool(p.cross_replica_sync),
        *(['Cluster:     %s' % plan.cluster_source] if plan.cluster_source else []),
        '==========',
    ]


def served_worker_header_lines(plan) -> list[str]:
    """The header block of a worker of distributed_all_reduce, which serves the controller's
    graph and runs no step of its own: what it serves (`served_graph`), the devices the
    controller places its towers on (this task's; --num_gpus is compared with the
    controller's at start-up: cluster/run_flags.py SERVED_FLAGS), its server's threads and
    the cluster lines. Not the batch, steps, epochs, data, model, precision, optimizer or
    all-reduce spec: the controller's flags set those, this task's own are not read (it
    printed its own `Batch size:`, `Num batches:` and `Num epochs:` as if it ran them).

    Args:
      plan: the worker's run_plan.RunPlan (its params: --controller_host, --worker_hosts).
    """
    p = plan.params
    first, *rest = textwrap.wrap(served_graph(p), HEADER_VALUE_WIDTH)
    return [
        'TensorFlow:  %s' % '.'.join(tf.__version__.split('.')[:2]),
        'Serves:      %s' % first, *('             %s' % line for line in rest),
        'Devices:     %s' % describe_devices(plan.devices), *device_notes(plan),
        'Threads:     %s' % cpu_tuning.describe(plan.threads, p),
        'Variables:   %s' % p.variable_update,
        *(['Cluster:     %s' % plan.cluster_source] if plan.cluster_source else []),
        '==========',
    ]


def served_graph(p) -> str:
    """What a worker of distributed_all_reduce does, e.g. "the graph of the controller
    (h0:2222), which places towers on this worker's devices and runs every step of the 2
    workers in one session; the batch, steps and model are the controller's; this task builds
    no graph and runs no step of its own"."""
    return ("the graph of the controller (%s), which places towers on this worker's devices "
            "and runs every step of the %s in one session; the batch, steps and model are the "
            "controller's; this task builds no graph and runs no step of its own"
            % (p.controller_host, cnn_util.counted(len(p.worker_hosts), 'worker')))


def served(p) -> str:
    """What a ps task holds for the workers, e.g. "its share of the model's variables (placed
    by size over 2 ps tasks) for 4 workers, which read them and send their gradients each
    step; this task builds no graph and runs no step of its own" (distributed_replicated: the
    variables' master copies; the workers keep copies of their own). Forward-only workers
    (--forward_only) send no gradients: "which read them each step (forward-only: no
    gradients, no updates)"; distributed_replicated's copy them once, at the start."""
    num_ps, workers = len(p.ps_hosts), cnn_util.counted(len(p.worker_hosts), 'worker')
    replicated = p.variable_update == 'distributed_replicated'
    if replicated:
        what = "the variables' master copies"
    else:
        what = "the model's variables"
    if p.forward_only:
        use = ('which copy them once, at the start' if replicated else
               'which read them each step') + ' (forward-only: no gradients, no updates)'
    elif replicated:
        use = 'which keep copies of their own and send their gradients each step'
    else:
        use = 'which read them and send their gradients each step'
    if num_ps > 1:
        what = 'its share of %s (placed by size over %d ps tasks)' % (what, num_ps)
    return ('%s for %s, %s; this task builds no graph and runs no step of its own'
            % (what, workers, use))


# A header value's room: a line of at most 100 characters after its 13-character name column.
HEADER_VALUE_WIDTH = 100 - len('Dataset:     ')


def dataset_lines(dataset, subset: str, width: int = HEADER_VALUE_WIDTH,
                  epochs: bool = False) -> list[str]:
    """The `Dataset:` line, its value the original's shape ('imagenet (synthetic)',
    'imagenet': Dataset.header_name), then continuation lines each at most `width` characters
    after the name column: (real data) the folder, then the example count and the checks
    (Dataset.count_phrases) wrapped between phrases, e.g. ['Dataset:     imagenet',
    '             inferred from the files in /data', '             train: 512 examples counted
    in 8 TFRecord shards, headers checked (record CRCs as read)']. A folder too long for the
    line of 'inferred from the files in' gets a line of its own; one longer than `width` is
    shown with its middle elided (`fit_path`).

    With `epochs` (a training run), real data's phrases end with the one
    definition of an epoch, the records found, which --num_epochs, the learning-rate schedules
    (the models' own too) and the epochs of the evaluations count: 'an epoch is these 512
    examples (--num_epochs, LR schedule; published: 1281167)' (the published count, the
    original's epoch, said where it differs). Synthetic data's count line says its epoch."""
    values = [dataset.header_name()]
    if not dataset.synthetic:
        how = 'inferred from the files in' if dataset.inferred else 'files in'
        if len(how) + 1 + len(dataset.data_dir) <= width:
            values.append('%s %s' % (how, dataset.data_dir))
        else:  # the folder on a line of its own
            values += [how, fit_path(dataset.data_dir, width)]
    counts_from = len(values)
    phrases = dataset.count_phrases(subset)
    if epochs and not dataset.synthetic:
        count, published = dataset.num_examples(subset), dataset.spec.published_examples[subset]
        phrases.append('an epoch is these %d examples (--num_epochs, LR schedule%s)' % (
            count, '' if count == published else '; published: %d' % published))
        if dataset.skip_corrupt_records:  # the count is known before any record is read
            phrases.append('fewer when --skip_corrupt_records skips records while reading '
                           '(the total block then says how many an epoch reads)')
    for phrase in phrases:
        if len(values) > counts_from and len(values[-1]) + 2 + len(phrase) <= width:
            values[-1] += ', ' + phrase
        else:
            values.append(phrase)
    first, *rest = values
    return ['Dataset:     %s' % first] + ['             %s' % line for line in rest]


def input_lines(plan, dataset, width: int = HEADER_VALUE_WIDTH) -> list[str]:
    """The `Input:` line of a training or forward-only run on real data: which pipeline reads
    the records and how each image is processed (preprocessing.describe_train_input), e.g.
    'Input:       RecordInput (8 files in parallel, shuffle buffer 10000), distortions,
    bilinear resize'. A value longer than `width` continues on the next lines, split between
    words. Nothing for synthetic data or --eval (its `Eval:` line says how it reads)."""
    if plan.mode == 'evaluation':
        return []
    value = preprocessing.describe_train_input(plan, dataset)
    if value is None:
        return []
    first, *rest = textwrap.wrap(value, width, break_long_words=False, break_on_hyphens=False)
    return ['Input:       %s' % first] + ['             %s' % line for line in rest]


def fit_path(path: str, room: int) -> str:
    """`path`, or for one longer than `room` characters its start and end around '...'
    (the end, which names the folder, gets two thirds of the room)."""
    if len(path) <= room:
        return path
    tail = (room - 3) * 2 // 3
    return path[:room - 3 - tail] + '...' + path[-tail:]


def optimizer_phrase(plan) -> str:
    """What the Optimizer line says after the flag's value: a training run's weight decay
    (`decay_phrase`); in a forward-only or eval run, which updates nothing, that none of the
    optimizer, its learning rate or weight decay applies: ', not applied (forward-only: no
    backward pass, no updates, no learning rate)' (the original printed the flag's value alone in
    every mode: `sgd` for a forward-only run that never builds an optimizer)."""
    if plan.training:
        return decay_phrase(plan)
    return ', not applied (%s: no backward pass, no updates, no learning rate)' % (
        'eval' if plan.params.eval else 'forward-only')


def decay_phrase(plan) -> str:
    """The Optimizer line's weight decay (graph/tower.py, graph/fused_decay.py): ', weight decay
    4e-05 inside the updates (fused)', ', weight decay 4e-05 in the loss' (adam, a GPU,
    --gradient_clip, ...), or '' with --weight_decay=0."""
    p = plan.params
    if not p.weight_decay:
        return ''
    if fused_decay.applies(p, plan.devices):
        return ', weight decay %g inside the updates (fused)' % p.weight_decay
    return ', weight decay %g in the loss' % p.weight_decay


def batch_lines(plan, dataset) -> list[str]:
    """The header's batch, image size, batches and epochs lines: one evaluation's (its
    EvalPlan) with --eval, else the timed steps', then `eval_lines` when the training
    evaluates. The values keep the original's shapes ('4 global', '3', '0.00'); the `Eval:`
    line says that they are an evaluation's."""
    image = 'Image size:  %dx%d' % (plan.image_size, plan.image_size)
    ev = plan.eval
    if plan.mode == 'evaluation':  # one evaluation's, in the original's value shapes
        return ['Batch size:  %d global' % ev.global_batch_size,
                '             %d per device' % ev.per_device_batch_size, image,
                'Num batches: %d' % ev.num_batches,
                'Num epochs:  %.2f' % ev.epochs,
                *eval_lines(plan, dataset)]
    lines = ['Batch size:  %d global' % plan.global_batch_size,
             '             %d per device' % plan.per_device_batch_size, image,
             'Num batches: %d' % plan.num_batches,
             'Num epochs:  %.2f' % plan.epochs]
    p = plan.params
    if p.datasets_repeat_cached_sample and not dataset.synthetic and (
            dataset.name == 'cifar10' or p.use_datasets or p.skip_corrupt_records):
        # The tf.data input repeats one cached batch: the steps read no epoch of records.
        lines[-1] += (' (--datasets_repeat_cached_sample: every step repeats one batch, read '
                      'once: no epoch of records is read)')
    if original_flags.ml_perf_wanted(p) and p.num_epochs is not None and plan.training:
        lines[-1] += (' timed; %.2f with the %d warm-up steps, which train too (--ml_perf: '
                      '--num_epochs counts them)' % (
                          (plan.num_batches + plan.num_warmup_batches)
                          * plan.global_batch_size / float(plan.examples_per_epoch),
                          plan.num_warmup_batches))
    if ev is not None:
        lines += eval_lines(plan, dataset)
    return lines


def eval_lines(plan, dataset) -> list[str]:
    """The header's 'Eval:' line, the one place a run says what each evaluation scores and
    reads (an --eval run's, or those during training: 'per evaluation during training'), e.g.
    'Eval:        12 synthetic examples in 3 batches of 4 (4 per device x 1 device)' (real
    data: '...; from imagenet (in /data), validation: ...'; a value longer than
    HEADER_VALUE_WIDTH continues on the next lines, split between words); then, with 5
    classes or fewer, a line saying Accuracy @ 5 is 1 by definition (every class is in the
    top 5)."""
    during = '' if plan.mode == 'evaluation' else ', per evaluation during training'
    source = '' if dataset.synthetic else '; from %s' % preprocessing.describe_eval_input(
        plan, dataset)
    first, *rest = textwrap.wrap('%s%s%s' % (plan.eval.describe(), during, source),
                                 HEADER_VALUE_WIDTH, break_long_words=False,
                                 break_on_hyphens=False)
    lines = ['Eval:        %s' % first] + ['             %s' % line for line in rest]
    if plan.num_classes <= 5:
        lines.append('             Accuracy @ 5 is 1 by definition here: the model has %d '
                     'classes, all of them in its top 5' % plan.num_classes)
    return lines


def resume_lines(plan, resume) -> list[str]:
    """The header's 'Resume:' lines of a training run resuming from a checkpoint: its counts
    (`_resume_count_lines`), then, for automatic loss scaling (float16), the scale it continues
    from (`loss_scale_resume_line`)."""
    return _resume_count_lines(plan, resume) + loss_scale_resume_line(plan, resume)


def loss_scale_resume_line(plan, resume) -> list[str]:
    """The header's line of a float16 training run with automatic loss scaling that resumes
    from a checkpoint holding a scale, e.g.

                     auto loss scale from the checkpoint: 262144 (Precision: a new run's 65536)

    The header is printed before the restore, so its precision block gives the flags' start,
    which a run without a checkpoint's scale starts from. [] otherwise: a fixed scale is the
    flag's, and a checkpoint without one (no automatic scaling there) leaves the flags' start.
    """
    if resume.loss_scale is None:
        return []
    p = plan.params
    if not (p.use_fp16 and p.fp16_enable_auto_loss_scale):
        return []
    return ['             auto loss scale from the checkpoint: %s (Precision: a new run\'s %s)' % (
                precision.scale_text(resume.loss_scale),
                precision.scale_text(precision.initial_loss_scale(p)))]


def _resume_count_lines(plan, resume) -> list[str]:
    """The 'Resume:' line of the checkpoint's counts.

    Says the global step and the images seen (in epochs); when they are not the global step x
    this run's images per global step (the global batch changed: --batch_size, --num_gpus, the
    workers), says so, that epochs count from the images seen, and at which global step each
    change of the learning-rate schedule still ahead comes (learning_rate.next_changes), e.g.

        Resume:      global step 20 of model.ckpt-20: 160 images seen, 0.80 epochs
                     the global batch changed: 8 images a global step so far (mean), 16 now;
                     epochs count from the images seen, not 20 steps x 16 (1.60 epochs)
                     --piecewise_learning_rate_schedule: rate 0.01 from global step 22
                     (epoch 1), rate 0.001 from global step 35 (epoch 2)

    Args:
      plan: the run's run_plan.RunPlan.
      resume: the checkpoints.ResumePoint.
    """
    examples, per_step = plan.examples_per_epoch, plan.images_per_global_step
    step, seen = resume.global_step, resume.images_seen
    where = 'global step %d of %s' % (step, os.path.basename(resume.path))
    if seen is None:
        writer = 'the original tf_cnn_benchmarks.py' if resume.original else 'an earlier version'
        return ['Resume:      %s, which does not count its images (%s): epochs count as %s x '
                '%d images' % (where, writer, cnn_util.counted(step, 'step'), per_step)]
    lines = ['Resume:      %s: %d images seen, %.2f epochs' % (where, seen, seen / examples)]
    if seen == step * per_step:
        return lines
    mean = seen / step if step else 0.0
    before = ('%s images a global step so far (mean)' % (
        '%d' % mean if mean.is_integer() else '%.2f' % mean) if step else 'none so far')
    lines.append('             the global batch changed: %s, %d now; epochs count from the '
                 'images seen, not %s x %d (%.2f epochs)'
                 % (before, per_step, cnn_util.counted(step, 'step'), per_step,
                    step * per_step / examples))
    changes = learning_rate.next_changes(plan.params, examples, per_step, step, seen)
    flag = learning_rate.schedule_flag(plan.params)
    if flag and changes:
        lines.append('             %s: %s' % (flag, ', '.join(
            '%s from global step %d (epoch %g)' % (what, at, epoch)
            for what, epoch, at in changes)))
    elif flag:
        lines.append('             %s: no change ahead' % flag)
    return lines


def precision_lines(plan) -> list[str]:
    """The header's precision block, at most three lines of at most 100 characters
    (graph/precision_block.py): the dtypes and what runs in float32, the loss scale, on a GPU
    its compute capability (in float32 the TF32 phrases, `tf32_line`), on a CPU with reduced
    precision what its kernels measured against float32 and when (hardware/kernel_speed.py,
    cached per CPU model, TF version, dtype and threads), and the graph choices in one line
    (graph/graph_choices.py brief; the full table with --print_graph_choices, and in the
    results JSON's plan.graph_choices).

    Warns (one line, the longer texts of graph/precision.native_support) when the device has
    no native compute-dtype arithmetic or its kernels measured far slower than float32.

    Args:
      plan: the run's run_plan.RunPlan: its params, compute and variable dtypes, thread
        counts and graph choices (None: not resolved, no line).
    """
    p, dtype, choices = plan.params, plan.compute_dtype, plan.graph_choices
    # --print_graph_choices: the table where there is one (forced or measured; a busy
    # measurement's), else the one line (a note: not calibrated, measured on a busy host).
    table = graph_choices.table(choices) if choices is not None and p.print_graph_choices \
        else []
    shown = table or (graph_choices.brief(choices) if choices is not None else [])
    chosen = ['             %s' % line for line in shown]
    capabilities, planned = None, ''
    if p.device == 'gpu' and p.gpu_model and not precision.gpu_compute_capabilities():
        spec = gpu_specs.lookup(p.gpu_model)  # a dry run planning a GPU that is not here
        capabilities = [tuple(int(x) for x in spec.compute_capability.split('.'))]
        planned = ' (--gpu_model=%s)' % spec.name
    room = precision_block.MAX_LINES - (1 if shown and not table else 0)
    if dtype == tf.float32:
        return precision_block.block(
            p, dtype, plan.variable_dtype, room=room, capabilities=capabilities,
            planned=planned, tf32=tf32_line(p, capabilities)) + chosen
    flag = '--use_%s' % ('bf16' if dtype == tf.bfloat16 else 'fp16')
    measured, when, date, parts = None, 'measured here', '', ('batch norm', 'pooling')
    if p.device == 'cpu':
        speed = kernel_speed.probe(dtype, plan.threads, shapes=plan.kernel_shapes,
                                   refresh=bool(p.refresh_peak or getattr(p, 'calibrate', False)))
        if speed is not None:
            measured, when, date = speed.value, kernel_speed.when(speed), speed.date()[:10]
        if precision.float32_norm_and_pool(dtype, p.device):  # name what the model has
            parts = precision.norm_and_pool_parts(plan)
    busy = measured is None and p.device == 'cpu' and kernel_speed.busy_probe(dtype) is not None
    lines = precision_block.block(p, dtype, plan.variable_dtype, room=room,
                                  capabilities=capabilities, planned=planned,
                                  measured=measured, date=date, shapes=plan.kernel_shapes,
                                  busy=busy, norm_and_pool=parts) + chosen
    native, support = precision.native_support(
        dtype, p.device, measured=measured, capabilities=capabilities, when=when,
        gradients=not (p.forward_only or p.eval), shapes=plan.kernel_shapes,
        norm_and_pool=parts)
    support += planned
    faster = precision.cpu_faster_choice(dtype) if p.device == 'cpu' else None
    slow = measured and kernel_speed.far_slower_warning(
        flag, dtype, measured, 'measured now' if when == 'measured here' else when, faster,
        shapes=plan.kernel_shapes)
    choice = '; the faster choice: %s' % faster if faster else ''
    has_units = p.device != 'cpu' or precision.has_cpu_units(dtype)
    if not has_units:  # the CPU's flags lack the units: said first, whatever was measured
        cnn_util.warn('%s: %s; expect it slower than float32%s' % (
            flag, support.split('; ')[0],
            choice if not slow else ' (%s)' % slow.split(': ', 1)[1]))
    elif slow:
        cnn_util.warn(slow)
    elif not native:
        cnn_util.warn('%s: %s; expect it slower than float32%s' % (flag, support, choice))
    return lines


def tf32_line(p, capabilities=None, environ=None) -> str | None:
    """The precision block's TF32 text (phrases between '; ', which graph/precision_block.py
    packs into the block's lines) of a float32 run on GPUs of compute capability 8.0 or
    later (Ampere on), where TensorFlow runs float32 convolutions and matrix products on TF32
    tensor cores by default (since TF 2.4): on, or off with --notf32 or
    NVIDIA_TF32_OVERRIDE=0 (what cuBLAS and cuDNN read; speed_model/from_flags.tf32_enabled,
    which the dry run's predicted step follows too). None on the CPU, on older GPUs and where
    no GPU's compute capability is known.

    Args:
      p: the run's Params (float32 compute).
      capabilities: the GPUs' (major, minor) compute capabilities (default: the visible
        GPUs'; a dry run of a GPU that is not here passes its --gpu_model's).
      environ: the environment (default os.environ).
    """
    if p.device != 'gpu':
        return None
    caps = precision.gpu_compute_capabilities() if capabilities is None else capabilities
    if not caps or not all(tuple(c) >= (8, 0) for c in caps):
        return None
    if not from_flags.tf32_enabled(p, environ):
        return ('TF32 off (%s); float32 convolutions and matrix products in full float32 on '
                'the CUDA cores' % ('--notf32' if not p.tf32 else 'NVIDIA_TF32_OVERRIDE=0'))
    return ('TF32 on: float32 convolutions and matrix products on TF32 tensor cores; compute '
            'capability %s >= 8.0: TensorFlow\'s default, --notf32 turns it off'
            % '/'.join(dict.fromkeys('%d.%d' % tuple(c) for c in caps)))
