"""Every command-line parameter, defined once, and the rules that tie them together.

The parameter table generates both the absl flags of the `tf_cnn_benchmarks` command and
`make_params(**kwargs)` for library and test use (they cannot disagree). The flow:

    table -> flags or kwargs -> Params (immutable) -> validate_params -> resolve_params
          -> BenchmarkCNN

Library code never reads the global FLAGS object; it receives a `Params`.

Beside the table: the original's flags beyond it and the warnings of those without effect
(original_flags.py), a cluster task's rules (cluster_rules.py), `--graph_choices` values
(graph_choice_flag.py), a path-or-off flag such as `--results_db` (path_switch.py), named
configurations under configs/ (configs.py), the check of `--flagfile` lines before absl reads
them (flagfile_lines.py), the learning-rate schedule's language (schedule_spec.py), the
optimizers' ranges (optimizer_ranges.py), the rules that depend on the run's device
(device_rules.py: the default device, NCCL, logical CPU devices), UTF-8 text (text_values.py),
the original's 0 for "unset" (zero_values.py), a numeric flag's range as its error says it
(bounds.py), gate tolerance (gate_tolerance.py), the flag an unknown name meant (flag_names.py),
the step-time model's flags (plan_rules.py), a run's and an evaluation's length
(run_length.py), absl's own flags (absl_flags.py), errors.py.
`--all_reduce_spec`'s language: variable_managers/allreduce_spec.py (pure Python, this layer).
"""

from __future__ import annotations

import collections
import dataclasses
import math
import numbers
from typing import Any

from absl import flags

from ..variable_managers import allreduce_spec
from . import (
    bounds,
    device_rules,
    flag_names,
    graph_choice_flag,
    optimizer_ranges,
    original_flags,
    path_switch,
    plan_rules,
    run_length,
    text_values,
)
from . import cluster_rules as flag_rules
from .device_rules import ALL_REDUCE_MODES, check_nccl, default_device, uses_nccl  # noqa: F401
from .errors import ParamsError, flag_error  # noqa: E402  (re-exported: params.ParamsError)
from .gate_tolerance import problem as tolerance_problem
from .schedule_spec import check_decay_flags, parse_piecewise_schedule  # noqa: F401 (re-exported)


@dataclasses.dataclass(frozen=True)
class ParamSpec:
    """One parameter: its flag name, type, default, help text and allowed values.

    Attributes:
      name: flag name without dashes, e.g. 'batch_size'.
      kind: one of 'string', 'integer', 'float', 'boolean', 'list' (comma-separated strings),
        'path_or_off' (a path, None for the default place, False for none: path_switch.py).
      default: default value (None means "unset": derived later or not used).
      help: one-line help text shown by --help.
      choices: allowed values for 'string' parameters, or None for any value.
      lower: smallest allowed value for 'integer' and 'float' parameters, or None.
    """

    name: str
    kind: str
    default: Any
    help: str
    choices: tuple | None = None
    lower: float | None = None


def _s(name, default, help, choices=None):
    return ParamSpec(name, 'string', default, help, tuple(choices) if choices else None)


def _i(name, default, help, lower=None):
    return ParamSpec(name, 'integer', default, help, lower=lower)


def _f(name, default, help, lower=None):
    return ParamSpec(name, 'float', default, help, lower=lower)


def _b(name, default, help):
    return ParamSpec(name, 'boolean', default, help)


def _l(name, default, help):
    return ParamSpec(name, 'list', default, help)


def _p(name, default, help):
    return ParamSpec(name, 'path_or_off', default, help)


VARIABLE_UPDATES = ('parameter_server', 'replicated', 'independent', 'distributed_replicated',
                    'distributed_all_reduce', 'collective_all_reduce')
OPTIMIZERS = ('sgd', 'momentum', 'rmsprop', 'adam')
RESIZE_METHODS = ('bilinear', 'nearest', 'bicubic', 'area', 'round_robin')

# The table. Sections follow the data flow: run shape, model and optimiser, input, devices and
# variable management, distribution, lifecycle (checkpoints, eval, logs), speed.
SPECS: tuple[ParamSpec, ...] = (
    # --- What to run and for how long.
    _s('model', 'trivial', 'Name of the model to run (see --list_models).'),
    _s('config', None, 'A named configuration from configs/ (resnet50_cpu, '
       'resnet50_8gpu_replicated_nccl, ...): its flags first, then the command line\'s.'),
    _b('list_models', False, 'Print a table of every model (dataset, image size, parameters, '
       'forward GFLOPs, default batch size and learning rate) and exit.'),
    _i('batch_size', 0, 'Batch size per device (tower); 0 uses the model default.', lower=0),
    _i('num_batches', None, 'Timed steps (--eval: batches to score, unless --num_eval_*). '
       'Default (and 0): 100 unless --num_epochs.', lower=1),
    _f('num_epochs', None, 'Epochs to run; excludes --num_batches (0: unset).', lower=0),
    _i('num_warmup_batches', None, 'Untimed steps before timing starts (0: none; the first '
       'timed step then sets up). Default: 10 on a GPU, 5 on a CPU.', lower=0),
    _i('display_every', 10, 'Print an images/sec line every this many timed steps.', lower=1),
    _i('image_size', 0, 'Input image height and width in pixels; 0 uses the model default.',
       lower=0),
    _b('forward_only', False, 'Benchmark inference only: no gradients, no updates.'),
    _b('freeze_when_forward_only', False, 'With --forward_only, freeze the graph (variables '
       'become constants) before timing.'),
    _b('eval', False, 'Evaluate a checkpoint on the validation subset instead of training.'),
    _b('dry_run', False, 'Build what the run would build, run no step, and report placement, '
       'cross-device traffic and peak memory per device (exit status 1: it would not work).'),
    _s('gpu_model', None, 'GPU to plan for where none is visible (--dry_run, --plan_scaling), '
       'e.g. V100, A100 80GB, T4; a visible GPU is used as it is.'),
    _b('plan_scaling', False, 'Print the predicted images/sec, scaling efficiency and bound of '
       'this configuration on 1-8 GPUs of one host and 2-128 hosts; runs no step '
       '(docs/scaling.md).'),
    _s('plan_scaling_png', None, 'With --plan_scaling, also write efficiency against GPUs to '
       'this PNG file.'),
    _f('single_device_images_per_sec', None, 'Measured images/sec of this configuration on one '
       'device, for --plan_scaling and --dry_run; > 0. Default: one GPU\'s step from its data '
       'sheet (docs/estimate-vs-reality.md).'),
    _s('interconnect_gbps', None, 'Network between hosts for --plan_scaling and --dry_run: '
       'Gbit/s (10, 25, 100: Ethernet) or 1gbe, 10gbe, 25gbe, 40gbe, 100gbe, ib_edr, ib_hdr, '
       'ib_ndr, loopback (measured now; every task on this host). Default: 10.'),
    _s('gpu_interconnect', None, 'GPU <-> GPU link for --plan_scaling and --dry_run: pcie2, '
       'pcie3, pcie4, pcie5, nvlink1, nvlink2, nvlink3, nvlink4, nvlink (the GPU\'s own '
       'generation), one link or a measured copy: nvlink1_link, nvlink2_link, nvlink1_link_copy, '
       'nvlink2_copy, pcie3_copy, or a host: dgx1_p100, dgx1_v100, ec2_p2.8xlarge, gce_k80x8, '
       'ec2_p2.16xlarge, ec2_p3.16xlarge, dgx_a100, dgx_h100, hgx2_v100, lambda_epyc7502x8, '
       'lambda_gold6230x8, lambda_gold6230x8_geforce (a host is refused with a --gpu_model '
       'whose links differ). Default: an SXM module\'s NVLink (V100, A100, H100, H200, P100 '
       'SXM2), else the card\'s PCIe (peer-to-peer; through host memory for GeForce boards).'),
    _i('plan_num_ps', 0, 'ps tasks of the --plan_scaling rows: 0 puts one on each worker host '
       '(as the original\'s published EC2 runs); N plans N on hosts of their own.', lower=0),
    _i('tf_random_seed', 1234, 'Graph-level random seed; what it repeats: docs/real-data.md.'),
    # --- Optimiser and learning rate.
    _s('optimizer', 'sgd', 'Optimizer to use.', OPTIMIZERS),
    _f('momentum', 0.9, 'Momentum of --optimizer=momentum, in [0, 1) (rmsprop: '
       '--rmsprop_momentum).', lower=0),
    # The momenta's upper bounds, rmsprop's decay and epsilon and adam's are optimizer_ranges.py's.
    _f('rmsprop_decay', 0.9, 'Decay term for RMSProp, in [0, 1].'),
    _f('rmsprop_momentum', 0.9, 'Momentum for RMSProp, in [0, 1).', lower=0),
    _f('rmsprop_epsilon', 1.0, 'Epsilon for RMSProp, > 0.'),
    _f('adam_beta1', 0.9, 'Beta1 for Adam, in [0, 1).'),
    _f('adam_beta2', 0.999, 'Beta2 for Adam, in [0, 1).'),
    _f('adam_epsilon', 1e-8, 'Epsilon for Adam, > 0.'),
    _f('init_learning_rate', None, 'Initial learning rate; default: the model\'s own.', lower=0),
    _s('piecewise_learning_rate_schedule', None, 'Piecewise-constant schedule "lr0;e1;lr1;e2;lr2'
       '..." : lr0 until epoch e1, lr1 until epoch e2, and so on. Excludes --init_learning_rate.'),
    _f('num_epochs_per_decay', 0, 'Epochs between exponential learning-rate decays (0: none).',
       lower=0),
    _f('learning_rate_decay_factor', 0, 'Multiplier of each exponential decay.', lower=0),
    _f('num_learning_rate_warmup_epochs', 0, 'Epochs of linear learning-rate warm-up from 0.',
       lower=0),
    _f('minimum_learning_rate', 0, 'Lower bound of the decayed learning rate.', lower=0),
    _f('weight_decay', 4e-5, 'L2 weight decay factor, over every trainable variable except '
       'batch norm\'s (kernels and biases), as in the original.', lower=0),
    _b('fused_weight_decay', True, 'CPU: weight decay inside each variable\'s update (XLA for 4M+ '
       'elements); same values. Off with clipping, staged/fp16 vars, adam, clusters.'),
    _f('gradient_clip', None, 'Clip each gradient element to [-value, value]; must be > 0 (0 '
       'would zero every gradient and freeze training: it is refused). Default: no clipping.'),
    _b('print_training_accuracy', False, 'Add top-1 and top-5 training accuracy to step lines.'),
    # --- Input.
    _s('data_dir', None, 'Directory of the dataset; without it, synthetic data is used.'),
    _s('data_name', None, 'Dataset name: imagenet, cifar10 or synthetic; inferred from '
       '--data_dir when unset.', ('imagenet', 'cifar10', 'synthetic')),
    _s('data_subset', None, 'Subset to read: train or validation. Default: train, validation '
       'with --eval.', ('train', 'validation')),
    _i('num_classes', None, 'Classes of the model\'s output layer. Default: from labels.txt in '
       '--data_dir (the converter\'s labels 1..K, plus background 0: K + 1), else the '
       'dataset\'s (ImageNet 1001, CIFAR-10 10).', lower=2),
    _b('distortions', True, 'Random crop and flip for training images (on by default).'),
    _b('distort_color', False, 'Random brightness, saturation, hue and contrast (training).'),
    _s('resize_method', 'bilinear', 'Image resize method.', RESIZE_METHODS),
    _b('fuse_decode_and_crop', True, 'Decode only the cropped window of a JPEG.'),
    _b('use_datasets', False, 'Read with a tf.data pipeline instead of RecordInput.'),
    _i('datasets_num_private_threads', None, 'Private tf.data thread pool size (0: none; at '
       'most 1024: params/bounds.py).', lower=1),
    _b('datasets_use_caching', False, 'Cache the serialized records of the tf.data input in '
       'memory.'),
    _b('datasets_repeat_cached_sample', False, 'Repeat one cached batch forever (tf.data input '
       'benchmark of the rest of the pipeline).'),
    _i('datasets_prefetch_buffer_size', 1, 'Batches prefetched per device by tf.data.', lower=1),
    _i('datasets_parallel_interleave_cycle_length', None, 'Files tf.data reads at once (0: '
       'all, up to 64; a value above the shards found reads them all).', lower=1),
    _b('skip_corrupt_records', False, 'Skip corrupt or truncated TFRecord shards instead of '
       'failing (found at start-up), a record whose CRC fails as it is read (the records '
       'after it are read), and records the pipeline cannot use (another schema, a label outside '
       'the classes, an image that does not decode; shards then read by tf.data); the skipped '
       'records are reported.'),
    _b('allow_shard_subset', False, 'Accept a deliberate subset of the TFRecord shards (e.g. 3 '
       'of train-*-of-00008) instead of refusing the missing indices.'),
    _i('shuffle_buffer_size', 10000, 'Records held by the reader for shuffling.', lower=1),
    # --- Devices and variable management.
    _s('device', None, 'Device kind for the towers; default: gpu when one is visible, else cpu.',
       ('cpu', 'gpu')),
    _i('num_gpus', 1, 'Number of devices (towers). With --device=cpu, this many logical CPU '
       'devices are created.', lower=1),
    _s('data_format', None, 'Image layout: NCHW (default on GPU) or NHWC (default on CPU).',
       ('NHWC', 'NCHW')),
    _s('local_parameter_device', 'cpu', 'Where parameter_server keeps variables: cpu, or gpu '
       '(spread over the devices by size).', ('cpu', 'gpu')),
    _s('variable_update', 'parameter_server', 'How towers share variables.', VARIABLE_UPDATES),
    _b('use_nccl', False, 'All-reduce gradients with NCCL (GPU only).'),
    _s('all_reduce_spec', None, 'All-reduce algorithm spec, e.g. "xring", "pscpu:32k:xring" '
       '(see variable_managers/allreduce_spec.py for the grammar).'),
    _i('gradient_repacking', 0, 'Concatenate gradients into this many packs before the '
       'all-reduce (0: off).', lower=0),
    _i('agg_small_grads_max_bytes', 0, 'Merge gradients smaller than this many bytes before the '
       'all-reduce (0: off).', lower=0),
    _i('agg_small_grads_max_group', 10, 'At most this many small gradients per merged group.',
       lower=1),
    _b('hierarchical_copy', False, 'Two-level gradient copy for 8-device hosts (replicated).'),
    _b('staged_vars', False, 'Stage variable reads and updates (parameter_server): each step '
       'uses the variables of the previous step.'),
    _i('batch_group_size', 1, 'Number of batches staged per device between the host and the '
       'device.', lower=1),
    _s('variable_consistency', 'strong', 'strong: a step applies its own gradients; relaxed '
       '(replicated): the step before\'s (step 1: zeros).', ('strong', 'relaxed')),
    # --- Distribution.
    _s('cluster_resolver', 'auto', 'Where a cluster task learns its role and peers: flags (the '
       'host flags below), tf_config (TF_CONFIG, e.g. Kubeflow TFJob), slurm (the srun step), or '
       'auto: the host flags when given, else TF_CONFIG when set, else Slurm in a step of more '
       'than one task, else a local run.', ('auto', 'flags', 'tf_config', 'slurm')),
    _i('num_ps', None, 'Slurm: how many of the step\'s tasks (the first ranks) are ps. Default: '
       '1 for parameter_server and distributed_replicated, else 0. Elsewhere it must match.',
       lower=0),
    _i('slurm_port_base', 8888, 'Slurm: the first task on each node listens on this port, the '
       'next ones on the following ports.', lower=1),
    _s('job_name', '', 'Task role in a cluster: ps, worker or controller; empty for a local run.',
       ('', 'ps', 'worker', 'controller')),
    _i('task_index', 0, 'Index of this task within its job.', lower=0),
    _l('ps_hosts', [], 'Comma-separated host:port list of parameter servers.'),
    _l('worker_hosts', [], 'Comma-separated host:port list of workers.'),
    _s('controller_host', None, 'host:port of the controller (distributed_all_reduce).'),
    _s('server_protocol', 'grpc', 'Protocol of the tf.train.Server.'),
    _b('cross_replica_sync', True, 'Synchronous SGD across workers (false: asynchronous).'),
    _i('startup_timeout_secs', 120, 'Seconds to wait for the other tasks of a cluster.',
       lower=1),
    _b('print_step_breakdown', False, 'Report per step the time waiting for input, computing '
       'and synchronising variables.'),
    # --- Lifecycle: checkpoints, eval, summaries, traces, results.
    _s('train_dir', None, 'Directory for checkpoints and summaries (and resume).'),
    _i('save_model_secs', 0, 'Save a checkpoint every this many seconds (0: off).', lower=0),
    _i('save_model_steps', None, 'Save a checkpoint every this many steps (0: off; excludes '
       '--save_model_secs).', lower=1),
    _i('max_ckpts_to_keep', 5, 'Checkpoints kept in --train_dir (0: all).', lower=0),
    _s('checkpoint_path', None, 'Checkpoint (a model.ckpt-N prefix, or a directory: its '
       'latest) that --eval and --forward_only read instead of the latest in --train_dir; in '
       'training, a warm start used only when --train_dir holds no checkpoint yet (its own '
       'wins).'),
    _i('num_eval_batches', None, 'Full batches to evaluate (default: --num_eval_epochs; with '
       '--eval, --num_batches or --num_epochs; else every record of the subset once, the last '
       'batch padded; 0: 100 batches, as in the original).', lower=1),
    _f('num_eval_epochs', None, 'Epochs of the evaluated subset to score, in full batches as '
       'the original: int(epochs x records + batch - 1) // batch.', lower=0),
    _i('eval_batch_size', 0, 'Batch size per device for eval (0: --batch_size).', lower=0),
    _i('eval_interval_secs', 0, 'With --eval, re-evaluate new checkpoints every this many '
       'seconds (0: once).', lower=0),
    _i('eval_during_training_every_n_steps', None, 'Evaluate every n training steps.', lower=1),
    _f('eval_during_training_every_n_epochs', None, 'Evaluate every n training epochs.', lower=0),
    _l('eval_during_training_at_specified_steps', [], 'Evaluate at these training steps.'),
    _f('stop_at_top_1_accuracy', None, 'Stop training once eval top-1 reaches this.', lower=0),
    _i('summary_verbosity', 0, 'TensorBoard summaries, the original\'s levels: 0 none; 1 cheap '
       'scalars (total_loss, learning_rate, images_per_sec); 2 also a histogram of log|g| '
       'over all gradients; 3 also input images and histograms of each variable and each '
       'gradient.', lower=0),
    _i('save_summaries_steps', 0, 'Write summaries every this many steps (0: off).', lower=0),
    _s('trace_file', None, 'Write a Chrome trace (JSON) of one of the run\'s steps here: the '
       'last warm-up step (timed step 1 without warm-up); no extra step.'),
    _s('graph_file', None, 'Write the GraphDef, with shapes, here: text when the name ends in txt '
       '(g.pbtxt, g.txt), otherwise binary; with --eval the eval graph.'),
    _s('tfprof_file', None, 'A tfprof profile of the traced step (see --trace_file): a name ending '
       'in .txt writes tfprof\'s text report (every op type\'s time and memory; no tfprof tool '
       'loads it), .pbtxt the ProfileProto as protobuf text, any other name it in binary.'),
    _s('benchmark_log_dir', None, 'Write the run\'s results as JSON into this directory.'),
    _s('plot_file', None, 'Write a PNG of images/sec and loss per step (needs matplotlib).'),
    _p('results_db', None, 'Record the run in the results database (tf_cnn_results reads it): '
       '--results_db=PATH for that SQLite file, --noresults_db for none; default '
       '$TF_CNN_RESULTS_DB, else $XDG_DATA_HOME/tf_cnn_benchmarks/results.sqlite '
       '($XDG_DATA_HOME: ~/.local/share).'),
    _s('label', None, 'A label kept with the run in the results database (an image tag, a '
       'driver version, a commit; UTF-8 text), shown where its images/sec stepped.'),
    _b('refresh_peak', False, 'Measure this CPU\'s peak FLOP/s (for the utilisation line), '
       'its reduced-precision kernel factors (--use_bf16/--use_fp16) and the graph choices '
       'again instead of using the calibrated figures.'),
    _b('calibrate', False, 'Measure this host for the given flags (CPU peak of the step\'s '
       'precisions, reduced-precision kernel factors, graph choices of the model at this '
       'batch), store what was measured on a quiet host in the calibration record, report '
       'it and exit without training.'),
    _s('baseline', None, 'A results JSON of the same configuration: exit 1 when this run is '
       'slower beyond the noise and by more than --fail_on_slower percent, 3 if not judged.'),
    _f('fail_on_slower', 5.0, 'With --baseline: percent slower than it allowed, in [0, 100).'),
    _b('include_unclean_runs', False, 'With --baseline: judge this run and the baseline even '
       'when one of them shared the host (other processes above 25% of its cores, or steal '
       'above 5%), was stopped or paused during its timed part, had no measured host load '
       '(too short a timed part) or stopped before its planned steps; without it such a '
       'baseline is refused '
       'and such a run fails the gate unjudged (the flag tf_cnn_results and tf_cnn_sweep '
       'compare take too).'),
    # --- Speed.
    _b('use_fp16', False, 'float16 activations and gradients, float32 master variables.'),
    _b('fp16_vars', False, 'With --use_fp16, keep the variables in float16 too.'),
    _f('fp16_loss_scale', None, 'Static loss scale for --use_fp16 (default: 128); > 0 and at '
       'most 2**24.'),
    _b('fp16_enable_auto_loss_scale', False, 'Automatic loss scaling for --use_fp16.'),
    _i('fp16_inc_loss_scale_every_n', 1000, 'With --fp16_enable_auto_loss_scale, double the '
       'loss scale after this many finite steps.', lower=1),
    _b('use_bf16', False, 'bfloat16 compute with float32 master variables.'),
    _s('graph_choices', 'measured', 'Graph choices of a training step: measured (each where '
       'this host\'s probe measured it faster, cached), off (none), or a comma list forced '
       'on: conv1x1_matmul (1x1 convolutions as MatMuls), shortcut_matmul (stride-2 1x1 '
       'shortcuts as strided slice + MatMul), conv1x1_filter_matmul (only 1x1 filter '
       'gradients as MatMuls), relu_xla / residual_xla (a batch norm\'s ReLU, a residual '
       'add + ReLU, with their gradients, as XLA clusters), relu_float32 / residual_float32 '
       '(the same in float32). docs/speed-choices.md.'),
    _b('print_graph_choices', False, 'Print the graph choices\' full table (every site, its '
       'form and measured factor) in the header, not only their one-line count; the results '
       'JSON has it always (plan.graph_choices). docs/output.md.'),
    _b('xla', False, 'XLA auto-clustering for the whole session.'),
    _b('xla_compile', False, 'Compile each tower\'s forward and backward pass with XLA.'),
    _b('tf32', True, 'Float32 convolutions and matrix products on TF32 tensor cores on '
       'compute capability 8.0+ (TensorFlow\'s default); --notf32 runs them in full float32 '
       '(it sets NVIDIA_TF32_OVERRIDE=0, which the dry run\'s speed model follows too).'),
    _i('num_intra_threads', None, 'Threads per op (0: TensorFlow decides; at most 1024, on '
       'any host; more than the CPUs the run may use: one warning). Default: the physical '
       'cores the run may use; 1 on a GPU run, as the original.', lower=0),
    _i('num_inter_threads', None, 'Ops run in parallel (0: TensorFlow decides; at most 1024). '
       'Default: measured best for the host (2, 1 on one core, +1 with real data).', lower=0),
    _i('kmp_blocktime', None, 'KMP_BLOCKTIME for oneDNN/OpenMP threads (ms).', lower=0),
    _s('kmp_affinity', None, 'KMP_AFFINITY for oneDNN/OpenMP threads.'),
    _b('kmp_settings', False, 'Print the OpenMP settings at start (KMP_SETTINGS=1).'),
    _b('use_numa_affinity', False, 'Pin each tower\'s threads to one NUMA node where possible.'),
) + original_flags.specs(ParamSpec)  # the rest of the original's flags (original_flags.py)

SPEC_BY_NAME: dict[str, ParamSpec] = {s.name: s for s in SPECS}

# The flags that name a file or folder (unset: None). Each takes a local path, or a URI of a
# scheme one of TensorFlow's file systems serves (runtime/file_systems.py), except
# LOCAL_PATH_FLAGS, written by SQLite or matplotlib on a local disk.
PATH_FLAGS = ('data_dir', 'train_dir', 'eval_dir', 'checkpoint_path', 'benchmark_log_dir',
              'trace_file', 'graph_file', 'tfprof_file', 'partitioned_graph_file_prefix',
              'plot_file', 'baseline', 'plan_scaling_png')
LOCAL_PATH_FLAGS = ('plan_scaling_png',)
# The path flags whose empty value means none, as the original's default did ('' for
# --trace_file): a script written for the original may give it.
EMPTY_MEANS_NONE = ('trace_file',)
assert len(SPEC_BY_NAME) == len(SPECS), 'duplicate parameter names'

Params = collections.namedtuple('Params', [s.name for s in SPECS])
Params.__doc__ = ('Immutable parameters of one run; one field per entry of params.SPECS. '
                  'Derive a changed copy with `params._replace(name=value)`.')

_DEFINERS = dict(string=flags.DEFINE_string, integer=flags.DEFINE_integer,
                 float=flags.DEFINE_float, boolean=flags.DEFINE_boolean, list=flags.DEFINE_list,
                 path_or_off=path_switch.define)


def define_flags(flag_values: flags.FlagValues = flags.FLAGS) -> None:
    """Registers one absl flag per ParamSpec in `flag_values`.

    Allowed values and bounds are not enforced by absl, but by `validate_params`, so the flag path
    and the `make_params` path report errors with the same words.
    """
    for spec in SPECS:
        text = spec.help
        if spec.choices:
            text += ' One of: %s.' % ', '.join(c or "''" for c in spec.choices)
        _DEFINERS[spec.kind](spec.name, spec.default, text, flag_values=flag_values)


def is_set(p: Params, name: str) -> bool:
    """True when flag `name` of `p` differs from its default (an explicitly chosen value)."""
    return getattr(p, name) != SPEC_BY_NAME[name].default


def make_params(**kwargs) -> Params:
    """Returns Params with the table's defaults, overridden by `kwargs`.

    Raises:
      ParamsError: a keyword is not a parameter name (said with flag_names' "did you mean").
    """
    unknown = sorted(set(kwargs) - set(SPEC_BY_NAME))
    if unknown:
        raise ParamsError('unknown parameter(s): %s' % flag_names.unknown_names(
            unknown, list(SPEC_BY_NAME)))
    values = {s.name: s.default for s in SPECS}
    values.update(kwargs)
    return Params(**values)


def make_params_from_flags(flag_values: flags.FlagValues = flags.FLAGS) -> Params:
    """Returns Params holding the parsed values of the flags defined by `define_flags`."""
    return Params(**{s.name: flag_values[s.name].value for s in SPECS})


_TYPES = dict(boolean=bool, integer=numbers.Integral, float=numbers.Real, string=str,
              list=(list, tuple), path_or_off=(str, bool))


def check_ranges(p: Params) -> None:
    """Checks each value against its own spec: type, allowed values, lower bound; first the
    rules of the original's other flags (original_flags.problem: --variable_update=horovod,
    ...), then that every text value is UTF-8 (text_values.py), last the optimizers' ranges
    (optimizer_ranges.py: Adam's betas in [0, 1), ...), --fail_on_slower's (gate_tolerance.py)."""
    problem = original_flags.problem(p)  # --variable_update=horovod first: its own line
    if problem:
        raise ParamsError(problem)
    problem = text_values.problem(p._asdict())  # text a database or a file name can hold
    if problem:
        raise ParamsError(problem)
    for spec in SPECS:
        value = getattr(p, spec.name)
        if value is None:
            continue
        if not isinstance(value, _TYPES[spec.kind]) or (
                spec.kind not in ('boolean', 'path_or_off') and isinstance(value, bool)):
            raise ParamsError('--%s takes %s %s. Received: %s=%r' % (
                spec.name, 'an' if spec.kind[0] in 'aeiou' else 'a', spec.kind, spec.name, value))
        if spec.choices is not None and value not in spec.choices:
            raise ParamsError(original_flags.not_built_value(spec.name, value, spec.choices)
                              or '--%s must be one of %s. Received: %s=%r' % (spec.name, ', '.join(
                                  repr(c) for c in spec.choices), spec.name, value))
        if isinstance(value, float) and not math.isfinite(value):
            raise ParamsError('--%s must be a finite number. Received: %s=%r' % (
                spec.name, spec.name, value))
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2**63:
            raise ParamsError('--%s must fit in 64 bits. Received: %s=%r' % (
                spec.name, spec.name, value))
        problem = bounds.problem(spec.name, spec.lower, value, spec.help)  # with what 0 means
        if problem:
            raise ParamsError(problem)
    problem = optimizer_ranges.problem(p) or tolerance_problem(p.fail_on_slower)
    if problem:
        raise ParamsError(problem)


# The optimizers whose update graph/fused_decay.py folds weight decay into (--fused_weight_decay;
# that module says why adam's update cannot take it).
FOLDABLE_OPTIMIZERS = ('sgd', 'momentum', 'rmsprop')

# The flags that make a training run evaluate as it goes (lifecycle's EvalDuringTrainingHook).
EVAL_DURING_TRAINING_FLAGS = original_flags.EVAL_DURING_TRAINING_FLAGS


def validate_params(p: Params, *, ranges_checked: bool = False) -> None:
    """Checks every value and every cross-parameter rule; the first violation is raised.

    Args:
      p: the Params.
      ranges_checked: `check_ranges` ran already (the usage check runs it on the given values
        before the cluster's resolution, as cluster/resolvers.resolve does, which checks the
        cluster fields it fills in as it makes them): not again.

    Raises:
      ParamsError: with one line naming the flag(s), the received value and the fix.
    """
    if not ranges_checked:
        check_ranges(p)
    _check_empty_paths(p)
    run_length.check_run_length(p)  # --num_batches or --num_epochs; the evaluation's pair
    if p.save_model_steps and p.save_model_secs:  # the original refused the pair too
        raise ParamsError('--save_model_steps and --save_model_secs exclude each other; give one '
                          '(a checkpoint every N steps, or every N seconds). Received: '
                          'save_model_steps=%d, save_model_secs=%d'
                          % (p.save_model_steps, p.save_model_secs))
    if p.piecewise_learning_rate_schedule and p.init_learning_rate is not None:
        raise ParamsError('--piecewise_learning_rate_schedule and --init_learning_rate exclude '
                          'each other; the schedule gives the initial rate.')
    if p.piecewise_learning_rate_schedule:
        parse_piecewise_schedule(p.piecewise_learning_rate_schedule)
    check_decay_flags(p)
    if p.gradient_clip is not None and not p.gradient_clip > 0:
        raise ParamsError('--gradient_clip must be > 0: it clips every gradient element to '
                          '[-value, value], so 0 would zero every gradient and freeze training '
                          '(and a negative value is no range); drop the flag for no clipping. '
                          'Received: gradient_clip=%g' % p.gradient_clip)
    if p.use_fp16 and p.use_bf16:
        raise ParamsError('--use_fp16 and --use_bf16 exclude each other; pick one.')
    try:
        graph_choice_flag.parse(p.graph_choices)
    except ValueError as e:
        raise ParamsError(str(e)) from None
    problem = bounds.loss_scale_problem(p.fp16_loss_scale)
    if problem:
        raise ParamsError(problem)
    if p.forward_only and p.eval:
        raise ParamsError('--forward_only and --eval exclude each other: --eval measures '
                          'accuracy of a checkpoint, --forward_only times inference.')
    if p.staged_vars and p.variable_update != 'parameter_server':
        raise ParamsError('--staged_vars works only with --variable_update=parameter_server. '
                          'Received: variable_update=%r' % p.variable_update)
    if p.all_reduce_spec:
        try:
            allreduce_spec.parse_all_reduce_spec(p.all_reduce_spec)
        except ValueError as e:
            raise flag_error('all_reduce_spec', e) from None
    # The all-reduce flags with a mode that does not all-reduce, or with one tower (NCCL on
    # the CPU too): warnings (preflight/ineffective_flags.py); so is --hierarchical_copy with
    # --all_reduce_spec or --use_nccl, which choose the all-reduce (resolve_params drops it).
    if p.use_nccl and p.all_reduce_spec and p.variable_update in ALL_REDUCE_MODES:
        raise ParamsError('--use_nccl and --all_reduce_spec exclude each other (--use_nccl is '
                          'the spec nccl); drop --use_nccl to all-reduce with '
                          '--all_reduce_spec=%s.' % p.all_reduce_spec)
    if p.device == 'cpu':
        check_nccl(p, 'cpu')
    if p.gradient_repacking and p.agg_small_grads_max_bytes:
        raise ParamsError('--gradient_repacking and --agg_small_grads_max_bytes exclude each '
                          'other here (the original, with --all_reduce_spec, merged the packs '
                          'under the byte limit; fewer packs do that); use one. Received: '
                          'gradient_repacking=%d, agg_small_grads_max_bytes=%d'
                          % (p.gradient_repacking, p.agg_small_grads_max_bytes))
    if p.data_name == 'synthetic' and p.data_dir:
        raise ParamsError('--data_name=synthetic ignores --data_dir; drop one of them.')
    for step in p.eval_during_training_at_specified_steps:
        if not str(step).isdigit():
            raise ParamsError('--eval_during_training_at_specified_steps takes step numbers. '
                              'Received: %r' % step)
    plan_rules.check_plan_flags(p)
    problem = flag_rules.distributed_problem(p)
    if problem:
        raise ParamsError(problem)


def _check_empty_paths(p: Params) -> None:
    """A path flag given an empty value (`--data_dir=`, `--data_dir=$UNSET` in a script) is
    refused: left unset each means something else (synthetic data, no checkpoints, ...);
    except EMPTY_MEANS_NONE, empty as the original's default."""
    for name in PATH_FLAGS:
        if name in EMPTY_MEANS_NONE:
            continue
        value = getattr(p, name)
        if isinstance(value, str) and not value.strip():
            meaning = {'data_dir': 'synthetic data'}.get(name, 'none')
            raise ParamsError('--%s is given an empty value (an unset variable in a script?); '
                              'give a path, or drop the flag for %s. Received: %s=%r'
                              % (name, meaning, name, value))


def resolve_params(p: Params, num_visible_gpus: int) -> Params:
    """Fills the defaults that depend on the machine; a pure function returning new Params.

    Args:
      p: validated params.
      num_visible_gpus: GPUs TensorFlow can see on this host.

    Returns:
      Params with `device`, `data_format`, `num_warmup_batches` and `num_batches` set, and
      the all-reduce flags without effect off (device_rules.all_reduce_flags_read).

    Raises:
      ParamsError: --device=gpu (or --local_parameter_device=gpu, or --num_gpus > 1 with
        device gpu) asks for more GPUs than are visible; NCCL on the CPU. (A ps task on a
        host without GPUs runs on the CPU whatever --device says.)
    """
    if p.job_name == 'ps' and not num_visible_gpus:
        # A ps builds no towers: the workers' GPU flags, often given to every task alike (one
        # TFJob or srun command line), do not apply to it.
        p = p._replace(device='cpu', local_parameter_device='cpu')
    device = default_device(p, num_visible_gpus)
    if device == 'gpu' and not num_visible_gpus:
        raise ParamsError('--device=gpu, but no GPU is visible; use --device=cpu (with '
                          '--num_gpus=N for N logical CPU devices).')
    if device == 'gpu' and p.num_gpus > num_visible_gpus:
        raise ParamsError('--device=gpu with --num_gpus=%d, but %d GPU(s) are visible; use '
                          '--device=cpu or a smaller --num_gpus.' % (p.num_gpus, num_visible_gpus))
    if p.local_parameter_device == 'gpu' and not num_visible_gpus:
        raise ParamsError('--local_parameter_device=gpu, but no GPU is visible; use '
                          '--local_parameter_device=cpu.')
    check_nccl(p, device)
    p = device_rules.all_reduce_flags_read(p, device)
    data_format = p.data_format or ('NCHW' if device == 'gpu' else 'NHWC')
    warmup = p.num_warmup_batches
    if warmup is None:  # the original's GPU rule: cuDNN autotunes 5 x threshold^2 steps
        warmup = max(10, 5 * (p.autotune_threshold or 1) ** 2) if device == 'gpu' else 5
    num_batches = p.num_batches
    if num_batches is None and p.num_epochs is None:
        num_batches = 100
    return p._replace(device=device, data_format=data_format, num_warmup_batches=warmup,
                      num_batches=num_batches)
