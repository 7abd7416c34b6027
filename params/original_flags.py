"""The original tf_cnn_benchmarks' flags that the main table (params/__init__.py) does not hold.

Every flag of the original command is a flag here (tests/data/original_flags.json lists them;
tests/test_original_flags.py walks that list). Those of this module either work (the GPU thread
pools and memory options, graph-rewriter settings, --eval_dir, --loss_type_to_report, ...; the
code that uses each names it), or are accepted with one `warning:` line saying why the flag has
no effect with TensorFlow 2.21 in this project and what to use instead (`NO_EFFECT`; the check
that prints it is preflight/ineffective_flags.py's, with the other flags without effect).
`--variable_update=horovod` is refused with its own line (`HOROVOD_MESSAGE`).

Loads no TensorFlow: the rules run before the command imports it.
"""

from __future__ import annotations

import math
import re

from .. import package_info
from .schedule_spec import is_number

GPU_THREAD_MODES = ('global', 'gpu_private', 'gpu_shared')
LOSS_TYPES = ('base_loss', 'total_loss')
NETWORK_TOPOLOGIES = ('dgx1', 'gcp_v100')
# The original's preprocessor registry's names ('official_models_imagenet' for ImageNet only);
# another name was an error there, and is one here.
INPUT_PREPROCESSORS = ('default', 'official_models_imagenet')
TRT_MODES = ('', 'FP32', 'FP16', 'INT8')

HOROVOD_MESSAGE = (
    '--variable_update=horovod is not available: Horovod\'s last release (0.28.1) does not build '
    'against TensorFlow 2.21 (its build stops on highwayhash/arch_specific.h, a header the '
    'TensorFlow wheel does not ship). '
    'For the same all-reduce of gradients between workers use --variable_update='
    'collective_all_reduce, with the cluster from TF_CONFIG, a Slurm step, the host flags '
    '(--worker_hosts, --job_name, --task_index) or tf_cnn_cluster on one machine.')

# (kind, name, default, help, choices or lower bound). Kinds as params.ParamSpec.
_ROWS = (
    # --- Work here.
    ('boolean', 'compact_gradient_transfer', True, 'With --use_fp16 in replicated on more than '
     'one device: the all-reduce moves float32 gradients as float16, cast back after it.',
     None),
    ('string', 'gpu_thread_mode', 'gpu_private', 'GPU host threads: global (shared with the CPU '
     'work), gpu_private (a pool per GPU) or gpu_shared (one pool for all GPUs); sets '
     'TF_GPU_THREAD_MODE before TensorFlow loads.', GPU_THREAD_MODES),
    ('integer', 'per_gpu_thread_count', 0, 'Threads per GPU pool with gpu_private/gpu_shared '
     '(0: 2; at most 1024); sets TF_GPU_THREAD_COUNT.', 0),
    ('boolean', 'allow_growth', None, 'GPU memory grows as needed (GPUOptions.allow_growth). '
     'Default here: on.', None),
    ('float', 'gpu_memory_frac_for_testing', 0.0, 'If > 0, the fraction of each GPU\'s memory a '
     'process takes (above 1 with --use_unified_memory oversubscribes).', 0),
    ('boolean', 'use_unified_memory', None, 'Allocate GPU memory as CUDA unified memory.', None),
    ('boolean', 'force_gpu_compatible', False, 'GPUOptions.force_gpu_compatible: pinned host '
     'memory for tensors copied to GPUs.', None),
    ('boolean', 'timestamped_allocator', False, 'Mark freed GPU allocator chunks with their '
     'free time (GPUOptions.experimental.timestamped_allocator).', None),
    ('integer', 'gpu_kt_max_interval', 0, 'If > 0, GPU ops queued in a row before a tracking '
     'event (GPU kernel tracker).', 0),
    ('integer', 'gpu_kt_max_bytes', 0, 'If > 0, GPU bytes allocated by ops in a row before a '
     'tracking event.', 0),
    ('integer', 'gpu_kt_max_pending', 0, 'If > 0, at most this many GPU tracking events '
     'outstanding.', 0),
    ('string', 'gpu_indices', '', 'GPU indices in ring order for collective all-reduce '
     '(GPUOptions.experimental.collective_ring_order) and for replicated\'s xring on GPUs, '
     'e.g. "0,1,3,2"; each below --num_gpus.', None),
    ('boolean', 'winograd_nonfused', True, 'cuDNN\'s non-fused Winograd convolutions '
     '(TF_ENABLE_WINOGRAD_NONFUSED).', None),
    ('boolean', 'batchnorm_persistent', True, 'cuDNN\'s persistent spatial batch norm '
     '(TF_USE_CUDNN_BATCHNORM_SPATIAL_PERSISTENT).', None),
    ('integer', 'autotune_threshold', None, 'Autotuning threshold of the cuDNN kernels '
     '(TF_AUTOTUNE_THRESHOLD).', 1),
    ('boolean', 'sync_on_finish', False, 'Wait for each GPU\'s work at the end of every '
     'session.run (TF_SYNC_ON_FINISH=1; a GPU run sets 0 by default, as the original).', None),
    ('boolean', 'enable_optimizations', True, 'Grappler and graph optimizations; false turns them '
     'off (opt level L0, no meta optimizer).', None),
    ('string', 'rewriter_config', None, 'Grappler settings as a RewriterConfig protobuf in text '
     'format, e.g. "constant_folding: OFF layout_optimizer: OFF".', None),
    ('string', 'eval_dir', None, 'Write each evaluation\'s accuracy as TensorBoard summaries into '
     'this directory (default here: none written).', None),
    ('string', 'loss_type_to_report', 'total_loss', 'Loss of the step lines, results and '
     'summaries: total_loss (with the weight-decay term) or base_loss (cross entropy only).',
     LOSS_TYPES),
    ('list', 'eval_during_training_at_specified_epochs', [], 'Evaluate after these training '
     'epochs (each at global step ceil(epoch x steps per epoch): once it is trained).', None),
    ('boolean', 'single_l2_loss_op', False, 'Weight decay as one L2 loss over all weights '
     'concatenated, instead of one per variable.', None),
    ('float', 'display_perf_ewma', None, 'If set (0..1), step lines show images/sec as an '
     'exponentially weighted moving average with this weight for the newest step.', 0),
    ('string', 'benchmark_test_id', None, 'A test ID for the run, stored in the results JSON '
     '(for people; no effect on the run).', None),
    ('float', 'resnet_base_lr', None, 'ImageNet ResNets (resnet50, ..._v1.5, ..._v2): their '
     'default learning rate per 256 images (default 0.128), scaled with the global batch.', 0),
    ('boolean', 'use_chrome_trace_format', True, 'false: --trace_file holds the traced step\'s '
     'StepStats in protobuf text format instead of a Chrome trace.', None),
    ('string', 'partitioned_graph_file_prefix', None, 'Write each device\'s partition graph of '
     'the traced step (after Grappler) to PREFIX with the device name inserted before the '
     'extension; text when it ends in txt.', None),
    ('boolean', 'ml_perf', False, 'Print MLPerf-format log lines (mlperf-logging package: '
     'pip install mlperf-logging, or %s).' % package_info.install_hint('mlperf'), None),
    ('boolean', 'ml_perf_compliance_logging', False, 'Same as --ml_perf here: MLPerf-format log '
     'lines.', None),
    ('boolean', 'datasets_sloppy_parallel_interleave', False, 'tf.data input of a training run '
     '(--use_datasets, CIFAR-10 files): true lets the shard interleave and the parallel '
     'preprocessing hand out records and batches as they are ready, so equal --tf_random_seed '
     'no longer give equal batches; false keeps the order they were read in.', None),
    # --- Accepted, with one warning line when set (see NO_EFFECT).
    ('boolean', 'compute_lr_on_cpu', False, 'No effect here: the learning rate is always '
     'computed on the CPU.', None),
    ('boolean', 'collect_eval_results_async', False, 'SSD only in the original; no effect here.',
     None),
    ('string', 'input_preprocessor', 'default', 'The original\'s preprocessor registry; here the '
     'dataset chooses the pipeline.', INPUT_PREPROCESSORS),
    ('string', 'network_topology', 'dgx1', 'The original\'s topology for --hierarchical_copy; no '
     'effect here.', NETWORK_TOPOLOGIES),
    ('boolean', 'use_tf_layers', True, 'No effect here: layers are tf.nn ops.', None),
    ('string', 'debugger', None, 'No effect here: tfdbg is gone from TensorFlow 2.', None),
    ('boolean', 'use_python32_barrier', False, 'No effect here.', None),
    ('boolean', 'datasets_use_prefetch', True, 'No effect here: tf.data input always prefetches.',
     None),
    ('integer', 'datasets_parallel_interleave_prefetch', None, 'No effect here.', None),
    ('integer', 'multi_device_iterator_max_buffer_size', 1, 'No effect here (see '
     '--batch_group_size).', None),
    ('boolean', 'distort_color_in_yiq', True, 'No effect here (see --distort_color).', None),
    ('boolean', 'use_resource_vars', False, 'No effect here: variables are resource variables.',
     None),
    ('boolean', 'sparse_to_dense_grads', False, 'No effect here: no model has sparse gradients.',
     None),
    ('boolean', 'mkl', False, 'No effect here: oneDNN is on by default (TF_ENABLE_ONEDNN_OPTS).',
     None),
    ('integer', 'allreduce_merge_scope', 1, 'No effect here.', None),
    ('string', 'horovod_device', '', 'No effect here: Horovod is not available.', None),
    ('string', 'backbone_model_path', None, 'No effect here (SSD only; see --checkpoint_path).',
     None),
    ('string', 'trt_mode', '', 'No effect here: no TensorRT.', TRT_MODES),
    ('integer', 'trt_max_workspace_size_bytes', 4 << 30, 'No effect here: no TensorRT.', 0),
)

# Why each accepted flag has no effect, and what to use instead ("--NAME has no effect " + text;
# preflight/ineffective_flags.original_flag_messages says it for a flag away from its default;
# for --use_tf_layers, whose default asks for the gone tf.layers, when it is typed true).
NO_EFFECT = {
    'compute_lr_on_cpu': 'here: the learning rate is always computed on the CPU, beside the '
    'global step (also with GPU towers); nothing to use instead',
    'collect_eval_results_async': 'on TensorFlow 2.21 here: the original used it for its SSD '
    'detection model only, which this project does not have; classification eval results are '
    'collected in the run itself; nothing to use instead',
    'input_preprocessor': 'here: the input pipeline follows the data (--data_dir, --data_name) '
    'and --use_datasets; use --data_name and --use_datasets to choose it',
    'network_topology': 'here: --hierarchical_copy groups the devices itself; to choose the '
    'hierarchy use --all_reduce_spec (e.g. psgpu/psgpu, pscpu/xring)',
    'use_tf_layers': 'on TensorFlow 2.21: tf.layers is gone with Keras 3; every layer is built '
    'from tf.nn ops, which gives the same values; nothing to use instead',
    'debugger': 'on TensorFlow 2.21: tfdbg\'s session wrappers (CLI and TensorBoard debugger) '
    'are gone; use --trace_file, --tfprof_file or tf.debugging.experimental.'
    'enable_dump_debug_info in your own script',
    'use_python32_barrier': 'here: this project runs on Python 3.10+, where threading.Barrier '
    'is the only barrier; nothing to use instead',
    'datasets_use_prefetch': 'here: the tf.data input always prefetches; use '
    '--datasets_prefetch_buffer_size to size it',
    'datasets_parallel_interleave_prefetch': 'on TensorFlow 2.21: the contrib parallel_interleave '
    'it configured is gone; use --datasets_prefetch_buffer_size',
    'multi_device_iterator_max_buffer_size': 'here: there is no MultiDeviceIterator; each '
    'device\'s batches go through its StagingArea; use --batch_group_size to size it',
    'distort_color_in_yiq': 'here: --distort_color adjusts brightness, saturation, hue and '
    'contrast with tf.image (the YIQ ops were in tf.contrib, gone from TensorFlow 2); use '
    '--distort_color',
    'use_resource_vars': 'on TensorFlow 2.21: every variable is a resource variable already; '
    'nothing to use instead',
    'sparse_to_dense_grads': 'here: no model of this project has sparse gradients (the '
    'original\'s NCF model had them); nothing to use instead',
    'mkl': 'on TensorFlow 2.21: oneDNN (formerly MKL-DNN) is built into the standard wheel and '
    'the command turns it on (TF_ENABLE_ONEDNN_OPTS=1); use TF_ENABLE_ONEDNN_OPTS=0 to turn it '
    'off',  # + the threads' advice of this host (preflight/ineffective_flags.mkl_threads)
    'allreduce_merge_scope': 'here: the all-reduce ops are built without merge scopes; use '
    '--gradient_repacking=N to merge gradients into N packs',
    'horovod_device': 'here: Horovod is not available (see --variable_update=horovod); use '
    '--variable_update=collective_all_reduce',
    'backbone_model_path': 'here: the original used it for its SSD model only; use '
    '--checkpoint_path to start from a checkpoint',
    'trt_mode': 'here: TensorRT conversion is not implemented (TF-TRT also needs the TensorRT '
    'libraries and a GPU); use --forward_only --freeze_when_forward_only, with --xla for '
    'compiled inference',
    'trt_max_workspace_size_bytes': 'here: TensorRT conversion is not implemented; use '
    '--forward_only --freeze_when_forward_only (see --trt_mode)',
}


# Flags that act on GPUs only (runtime/gpu_settings.py): this module's, and the main table's
# --tf32 (params/__init__.py; --notf32 sets NVIDIA_TF32_OVERRIDE=0). preflight/ineffective_flags.py
# warns about those set (away from GPU_ONLY_DEFAULTS) where they do nothing.
GPU_ONLY_FLAGS = (
    'gpu_thread_mode', 'per_gpu_thread_count', 'allow_growth', 'gpu_memory_frac_for_testing',
    'use_unified_memory', 'force_gpu_compatible', 'timestamped_allocator', 'gpu_kt_max_interval',
    'gpu_kt_max_bytes', 'gpu_kt_max_pending', 'gpu_indices', 'winograd_nonfused',
    'batchnorm_persistent', 'autotune_threshold', 'sync_on_finish', 'tf32')

# The flags that make a training run evaluate as it goes, each one the whole schedule of the
# evaluations (params.EVAL_DURING_TRAINING_FLAGS; as in the original, `problem` refuses two).
EVAL_DURING_TRAINING_FLAGS = (
    'eval_during_training_every_n_steps', 'eval_during_training_every_n_epochs',
    'eval_during_training_at_specified_steps', 'eval_during_training_at_specified_epochs')

# The models whose default learning rate --resnet_base_lr sets (models/resnet_model.ResnetModel).
IMAGENET_RESNET = re.compile(r'^resnet(50|101|152)(_v1\.5|_v2)?$')


def specs(make_spec) -> tuple:
    """This module's flags as the parameter table's entries.

    Args:
      make_spec: params.ParamSpec (passed in, so that params/__init__.py can import this module).

    Returns:
      A tuple of ParamSpec, in this module's order.
    """
    out = []
    for kind, name, default, text, extra in _ROWS:
        if kind == 'string':
            out.append(make_spec(name, kind, default, text,
                                 tuple(extra) if extra else None))
        elif kind in ('integer', 'float'):
            out.append(make_spec(name, kind, default, text, lower=extra))
        else:
            out.append(make_spec(name, kind, default, text))
    return tuple(out)


DEFAULTS = {row[1]: row[2] for row in _ROWS}
NO_EFFECT_FLAGS = tuple(NO_EFFECT)
#: Each GPU_ONLY_FLAGS flag's default, in that order (--tf32's is the main table's: True).
GPU_ONLY_DEFAULTS = {name: True if name == 'tf32' else DEFAULTS[name]
                     for name in GPU_ONLY_FLAGS}


#: What a name of the original tf_cnn_benchmarks that is not built here is: the words of the
#: --model check (models/model_catalog.py check_model) and of the datasets below.
NOT_BUILT = 'of the original tf_cnn_benchmarks that this project does not build'
#: The original's datasets of models not built here (models/model_catalog.py ORIGINAL_ONLY):
#: --data_name -> those models.
ORIGINAL_ONLY_DATASETS = {'coco': ('ssd300',), 'librispeech': ('deepspeech2',)}


def not_built_value(name: str, value, choices) -> str | None:
    """The line for a value of flag `name` outside its `choices` that the original took for
    something not built here (--data_name=coco: ssd300's dataset), None for any other value.
    """
    if name != 'data_name' or value not in ORIGINAL_ONLY_DATASETS:
        return None
    models = ORIGINAL_ONLY_DATASETS[value]
    datasets = [c for c in choices if c != 'synthetic']
    return ('--data_name=%s is the dataset of %s, %s %s; --data_name takes %s (the datasets of '
            'the models --list_models lists) or synthetic' % (
                value, ' and '.join(models), 'a model' if len(models) == 1 else 'models',
                NOT_BUILT, ' or '.join(datasets)))


def problem(p) -> str | None:
    """The first usage problem of this module's flags (and --variable_update=horovod, and more
    than one of EVAL_DURING_TRAINING_FLAGS, whose defaults are all empty), or None.

    Checked before the table's own checks (params.validate_params), so that horovod gets its
    own line instead of the list of choices.

    Returns:
      One line naming the flag, the received value and the fix; None when all is well.
    """
    if p.variable_update == 'horovod':
        return HOROVOD_MESSAGE
    if p.display_perf_ewma is not None and not 0 <= p.display_perf_ewma <= 1:
        return ('--display_perf_ewma is the weight of the newest step, between 0 and 1. '
                'Received: display_perf_ewma=%r' % p.display_perf_ewma)
    if p.per_gpu_thread_count and p.gpu_thread_mode == 'global':
        return ('--per_gpu_thread_count needs --gpu_thread_mode=gpu_private or gpu_shared (global '
                'shares the CPU\'s threads). Received: per_gpu_thread_count=%d'
                % p.per_gpu_thread_count)
    if p.gpu_indices:
        items = p.gpu_indices.split(',')
        if not all(i.strip().isdigit() for i in items) or len(set(items)) != len(items):
            return ('--gpu_indices takes distinct GPU indices separated by commas, e.g. '
                    '"0,1,3,2". Received: gpu_indices=%r' % p.gpu_indices)
        beyond = [int(i) for i in items if int(i) >= p.num_gpus]
        if beyond:  # the ring orders this run's devices, 0 to num_gpus - 1
            return ('--gpu_indices orders the run\'s %d devices, 0 to %d; index %d is beyond '
                    'them: give indices below %d or raise --num_gpus. Received: gpu_indices=%r, '
                    'num_gpus=%d' % (p.num_gpus, p.num_gpus - 1, beyond[0], p.num_gpus,
                                     p.gpu_indices, p.num_gpus))
    epochs = p.eval_during_training_at_specified_epochs
    bad = [e for e in epochs if not is_number(e) or not 0 <= float(e) < float('inf')]
    if bad:
        return ('--eval_during_training_at_specified_epochs takes epoch numbers >= 0, e.g. '
                '"1,2.5,10". Received: %r' % bad[0])
    given = ['--' + n for n in EVAL_DURING_TRAINING_FLAGS if getattr(p, n)]
    if len(given) > 1:
        return ('%s exclude each other (each one is the whole schedule of the evaluations during '
                'training); give one' % ' and '.join(given))
    return None


def ml_perf_wanted(p) -> bool:
    """Whether the run prints MLPerf log lines (--ml_perf or --ml_perf_compliance_logging)."""
    return bool(p.ml_perf or p.ml_perf_compliance_logging)


def epoch_step(epoch: float, examples_per_epoch: int, images_per_step: int) -> int:
    """The first global step by which `epoch` epochs have been trained, as the original's
    int(epoch x examples + batch - 1) // batch: the image count epoch x examples is floored
    first (0.0003 ImageNet epochs are 384 images: step 96 at 4 a step, not 97), then rounded
    up to whole steps, so an evaluation of "epoch 1" never runs before epoch 1's last images are
    trained (17 records at 4 a step: step 5, not 4). The product is rounded to 9 decimals
    first, so float error does not drop an image (0.3 x 10 = 2.9999999999999996: 3 images).
    --num_epochs and the evaluations during training (`specified_epoch_steps`) use it.

    Args:
      epoch: epochs (>= 0; fractions allowed).
      examples_per_epoch: images in one epoch (> 0).
      images_per_step: images one global step trains (> 0).

    Returns:
      The global step (>= 0).
    """
    images = int(math.floor(round(epoch * examples_per_epoch, 9)))
    return -(-images // images_per_step)


def specified_epoch_steps(epochs, examples_per_epoch: int, images_per_step: int) -> list[int]:
    """Global steps of --eval_during_training_at_specified_epochs.

    Args:
      epochs: epoch numbers (strings or numbers, >= 0).
      examples_per_epoch: images in one epoch.
      images_per_step: images one global step trains.

    Returns:
      Sorted distinct steps `epoch_step(epoch)` (the first step by which the epoch is
      trained: rounded up, as the original), each at least 1.
    """
    return sorted({max(1, epoch_step(float(e), examples_per_epoch, images_per_step))
                   for e in epochs})
