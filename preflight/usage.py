"""The usage check of a run's flags, in one place: the command (cli.py), the library
(BenchmarkCNN without a checked run) and the sweep's check of each configuration
(tools/sweep/cli.py). Where the order of their errors allows, a step hands the flags down
the layers (docs/CONTRIBUTING.md's drawing): this package's own checks first, then the lower
concerns' (runtime, hardware, params, models); the checks of the resolved run after the
cluster's resolution keep the order of their errors (the flag rules first).

    prepare(p)                 the command's: check_usage with the environment the flags ask
                               for, then the cluster's environment (Slurm's GPUs)
    check_usage(p)             before TensorFlow loads:
        the working folder--> the environment (prepare's: before a cluster resolver may load
        TensorFlow)--> the original's 0 for unset (params/zero_values.py)--> --resolve the
        cluster's fields (each value against its own spec first: params.check_ranges)-->
        --flag rules--> host names--> --gpu_model-->
        --plot_file and --plan_scaling_png (matplotlib), --baseline (loaded once)-->
        --output paths--> --model--> the baseline's
        configuration as far as the flags settle it, and that it is clean--> the rules of a
        host without a GPU (CPU towers, --dry_run's and --plan_scaling's device)--> the
        missing folders above the output paths (the command makes them: CheckedRun.folders)
        --> CheckedRun
    check_with_tensorflow(p)   right after it loads: remote paths (schemes served, output
        folders written)--> a remote --data_dir's dataset (no error)--> the GPU planned
        (hardware/gpu_plans.py)--> the device and its logical CPU devices
        (params/device_rules.py)--> why the all-reduce and transfer flags do nothing on it (no
        error)--> --model for a remote --data_dir--> --rewriter_config-->
        NCHW on the CPU (hardware/layout_kernels.py)--> the warnings

`check_usage` loads no TensorFlow (the TF_CONFIG and Slurm resolvers load it when they are
used). A BenchmarkCNN handed the CheckedRun validates nothing again.
"""

from __future__ import annotations

import importlib.util
from typing import NamedTuple

from .. import cnn_util, package_info, params
from ..cluster import host_names, resolvers
from ..hardware import gpu_plans, gpu_specs, links, machine
from ..input_data import dataset_info
from ..metrics import baseline, configuration
from ..models import model_catalog
from ..params import device_rules, zero_values
from ..runtime import cpu_tuning, file_systems
from . import ineffective_flags, output_paths, path_lengths


class CheckedRun(NamedTuple):
    """A run's flags after `check_usage`.

    Attributes:
      resolution: the cluster/resolvers.Resolution (its params are the ones to run with).
      baseline: the --baseline results JSON, loaded (its configuration is compared with the
        run's once that is resolved: metrics/baseline.py check_config), or None.
      given: the Params as parsed, before the cluster's fields were filled in (the run as its
        user gave it: the results' 'given_flags'), or None (a run made from other Params).
      folders: the missing folders above the output paths a command's run writes, (the flag
        as a message names it, folder) pairs (output_paths.folders_to_make), which the command
        makes once every check passed (runtime/dir_hold.make_parent_folders); () when the
        check was not a command's or checked no path.
    """
    resolution: resolvers.Resolution
    baseline: dict | None = None
    given: params.Params | None = None
    folders: tuple = ()

    @property
    def params(self) -> params.Params:
        return self.resolution.params


def prepare(p: params.Params, given=frozenset()) -> CheckedRun:
    """The command's flags made ready before TensorFlow loads, in one place: `check_usage`
    with the command's rules (--list_models: the flags only, no cluster, no model) and the
    environment the flags ask for (runtime/cpu_tuning.configure_environment: KMP_*,
    OMP_NUM_THREADS and XLA's CPU flag are read when TensorFlow loads, and the TF_CONFIG
    resolver loads it), then the cluster's environment (Slurm's GPUs: before TensorFlow
    looks for GPUs).
    Warns (one line) when `given` has --job_name without --task_index in a job of several
    tasks (params/cluster_rules.task_index_warning), and (one line) when the run's intra-op
    threads outnumber the CPUs it may use (runtime/cpu_tuning.oversubscription_warning).

    Args:
      p: the Params as parsed.
      given: the names of the flags the command line gave (cli.given_flags).

    Raises:
      params.ParamsError, model_catalog.UnknownModelError, cnn_util.DataError: as
        `check_usage`.
    """
    checked = check_usage(p, resolve=not p.list_models, model=not p.list_models,
                          environment=True)
    if not p.list_models:
        warning = params.cluster_rules.task_index_warning(checked.params, given)
        if warning:
            cnn_util.warn(warning)
    resolvers.apply_environment(checked.resolution)
    # More intra-op threads than the CPUs this process may use: one line, once every check
    # passed (a run on this host only: cpu_tuning.oversubscription_warning).
    crowded = cpu_tuning.oversubscription_warning(checked.params,
                                                  cpu_tuning.thread_counts(checked.params))
    if crowded:
        cnn_util.warn(crowded)
    return checked


def check_usage(p: params.Params, *, resolve: bool = True, paths: bool = True,
                model: bool = True, command: bool = True,
                environment: bool = False) -> CheckedRun:
    """Every check of the flags that needs no TensorFlow, in order: the parsed flags are
    handed down, the working folder first (this module), then the environment (runtime/) and
    the values as the original reads them (params/zero_values.py), then the cluster's
    resolution (cluster/resolvers.py), the checks of the resolved run after it.

    Args:
      p: the Params as parsed.
      resolve: fill in the cluster's fields first (--cluster_resolver: host flags, TF_CONFIG,
        Slurm; cluster/resolvers.py); else the Params are checked as given.
      paths: check that every output path can be written (preflight/output_paths.py), and
        with `command` that a local --data_dir holds a dataset; False checks no file here.
      model: refuse an unknown --model, or one not defined for the dataset (`check_model`).
      command: apply the rules of a command-line run (`check_command_rules`,
        `check_gpu_driver`, `check_without_gpu`, and with `resolve` the cluster's host names
        looked up: cluster/host_names.py); library callers may build an eval graph without a
        checkpoint, a GPU graph on a host without a GPU, or a cluster task's graph for hosts
        that are elsewhere.
      environment: set the environment the flags ask for
        (runtime/cpu_tuning.configure_environment: KMP_*, OMP_NUM_THREADS, XLA's CPU flag,
        read when TensorFlow loads) before the cluster's resolver may load TensorFlow (the
        command's `prepare`).

    Returns:
      The CheckedRun: its params are the ones to run with (`p` with the original's 0 for
      "unset" taken so, params/zero_values.as_unset; with no cluster source when `resolve`
      is False), its `given` is `p` as it came, its `folders` (with `paths` and `command`,
      not for --list_models) the missing folders above the output paths, to make.

    Raises:
      params.ParamsError: a flag rule is broken (params.validate_params, check_command_rules,
        check_gpu_model, check_gpu_driver, check_without_gpu, check_extras), a local
        --baseline of another configuration or not clean (metrics/baseline.py BaselineError,
        with `model`), a relative path given where the working folder no longer exists
        (output_paths.check_working_folder), an output path cannot be written, or the
        cluster does not resolve (its source, or a host name: cluster/host_names.py).
      model_catalog.UnknownModelError: naming the closest models and the valid ones.
      cnn_util.DataError: with `command` and `paths`, a local --data_dir that is missing,
        empty or holds no dataset's files (`dataset_name`).
    """
    if paths:
        output_paths.check_working_folder(p)  # before any check looks a relative path up
    if environment:
        cpu_tuning.configure_environment(p)
    given, p = p, zero_values.as_unset(p)  # the original's 0 for "unset" (--num_batches=0)
    if resolve:  # each value against its own spec, before the cluster is resolved from them
        params.check_ranges(p)
    resolution = (resolvers.resolve_checked(p) if resolve
                  else resolvers.Resolution(p, p.cluster_resolver))
    q = resolution.params
    params.validate_params(q, ranges_checked=resolve)  # checked before the resolution
    if command and resolve and not (q.dry_run or q.plan_scaling):  # those start no server
        # A peer's name that does not resolve: now, not after the wait.
        host_names.check(q, automatic=resolution.automatic)
    if command:
        check_command_rules(q)
        check_gpu_driver(q)
    check_gpu_model(q)
    links.check_plan_flags(q)  # --interconnect_gbps, --gpu_interconnect: known names
    stored = check_extras(q)
    if paths:
        output_paths.check_output_paths(q)
    if model:  # a command's run stops on bad data here (not --list_models, which reads none)
        check_model(q, dataset_name(q, strict=command and paths and not q.list_models))
        if stored is not None:  # after the model's own check: an unknown --model first
            baseline.check_config(stored, q.baseline, q, known_configuration(q))
    if command:
        check_without_gpu(q)  # after the flags' own values: a wrong one is the first problem
    folders = (tuple(output_paths.folders_to_make(q)) if paths and command and not q.list_models
               else ())
    return CheckedRun(resolution, stored, given, folders)


def check_with_tensorflow(p: params.Params, visible_gpus: int, given=frozenset()):
    """The checks that need TensorFlow, right after it loads, the flags handed down the
    layers: the remote output folders (`output_paths.check_remote_paths`: written once), the
    dataset of a remote --data_dir (`dataset_name`: listed once, no error), the GPU a plan
    of GPUs that are not here plans (hardware/gpu_plans.py) and with it the run's device
    (`planned_gpus`' rule, params.default_device) and its towers (params/device_rules.py:
    `check_cpu_towers`, and `cpu_towers_warning`'s line), --model for the dataset of a
    remote --data_dir, the `warning:` lines of the flags that have no effect in this run on
    this host, its all-reduce and transfer flags' on its device among them
    (preflight/ineffective_flags.device_messages: composed here, printed once every check
    passed), --rewriter_config as a RewriterConfig
    (runtime/gpu_settings.py), NCHW on the CPU (hardware/layout_kernels.check_cpu_layout), then
    those warnings and the decay schedule's (params/schedule_spec.py).

    Args:
      p: the checked Params (CheckedRun.params).
      visible_gpus: GPUs TensorFlow sees (the device a run without --device gets).
      given: the flags the command line gave, also at their default value (for the
        warnings: ineffective_flags.ignored_flags).

    Returns:
      The GPU the flags name (hardware/gpu_plans.named_gpu: a gpu_specs.GpuSpec, or None),
      decided here once: a dry run and a scaling plan plan with it
      (preflight/dry_run.run_planned, preflight/scaling_plan.run_planned).

    Raises:
      params.ParamsError: a remote path TensorFlow cannot serve or write
        (output_paths.check_remote_paths); more logical CPU devices than
        params/device_rules.cpu_tower_limit; a malformed --rewriter_config; --data_format=NCHW
        on the CPU with TF_ENABLE_ONEDNN_OPTS=0, or with a reduced precision whose NCHW
        kernels this CPU does not run (hardware/layout_kernels.py).
      model_catalog.UnknownModelError: --model is not defined for the dataset of a remote
        --data_dir.
    """
    output_paths.check_remote_paths(p)
    dataset = dataset_name(p, remote=True)  # a remote --data_dir listed once; raises nothing
    named = gpu_plans.named_gpu(p)  # decided once: the GPU planned, the dry run's
    planned = named if gpu_plans.plans_gpus(p, visible_gpus) else None  # gpu_plans.planned_gpu
    device = params.default_device(p, visible_gpus or int(planned is not None))  # planned_gpus
    device_rules.check_cpu_towers(p, device)
    towers = device_rules.cpu_towers_warning(p, device)
    if towers:
        cnn_util.warn(towers)
    if file_systems.is_remote(p.data_dir) and not p.data_name:
        check_model(p, dataset)  # not known before TensorFlow loaded
    warnings = ineffective_flags.device_messages(p, visible_gpus, planned, device, dataset,
                                                 given)
    from ..hardware import layout_kernels
    from ..runtime import gpu_settings  # loads TensorFlow's protos
    if p.rewriter_config:
        gpu_settings.parse_rewriter_config(p.rewriter_config)
    layout_kernels.check_cpu_layout(p, device)
    for message in (warnings + params.schedule_spec.decay_warnings(p)
                    + params.schedule_spec.zero_rate_warnings(p)):
        cnn_util.warn(message)
    return named


def planned_gpus(p: params.Params, visible_gpus: int) -> int:
    """The GPU count a run's device is decided with (params.default_device): the GPUs
    TensorFlow sees, or where it sees none, 1 for --dry_run or --plan_scaling with --gpu_model
    or a preset host (--gpu_interconnect=dgx1_v100, ...), which plan GPUs
    (preflight/planned_step.plan_device's rule; hardware/gpu_plans.planned_gpu names the GPU)."""
    return visible_gpus or int(gpu_plans.planned_gpu(p, visible_gpus) is not None)


def check_command_rules(p: params.Params) -> None:
    """Rules of a command-line run that library callers may break (tests build an eval graph
    without a checkpoint).

    Raises:
      params.ParamsError: --eval without --train_dir or --checkpoint_path.
    """
    if p.eval and not (p.train_dir or p.checkpoint_path):
        raise params.ParamsError('--eval needs a checkpoint: give --train_dir (a training run\'s '
                                 'directory) or --checkpoint_path')


def check_extras(p: params.Params) -> dict | None:
    """What optional outputs and inputs need: matplotlib for --plot_file and
    --plan_scaling_png (a plan's figure without it failed only after the plan was printed),
    a readable results JSON for --baseline (`check_usage` then refuses, after the model's
    check, a baseline of another configuration by the parts the flags settle,
    `known_configuration`, or one that is not clean; the rest of the configuration once the
    run's is resolved).

    Returns:
      The loaded --baseline results JSON, or None without --baseline or with --eval (which
      has no baseline gate).

    Raises:
      params.ParamsError: matplotlib is missing, or the --baseline file is unreadable
        (metrics/baseline.py's BaselineError).
    """
    for name in ('plot_file', 'plan_scaling_png'):
        if getattr(p, name) and importlib.util.find_spec('matplotlib') is None:
            raise params.ParamsError(
                '--%s needs matplotlib, which is not installed: pip install matplotlib, or %s; '
                'or drop --%s' % (name, package_info.install_hint('plot'), name))
    if p.baseline and not file_systems.is_remote(p.baseline):  # a remote one: BenchmarkCNN
        path_lengths.check_given_paths(p, ('baseline',))  # over PATH_MAX it reads as missing
        stored = baseline.load(p.baseline)
        return None if p.eval else stored
    return None


def known_configuration(p: params.Params) -> dict:
    """The parts of a run's configuration (metrics/configuration.py CONFIG_FIELDS) its flags
    settle before TensorFlow loads, for the --baseline checks there (metrics/baseline.py
    check_config compares only the parts given; the run's settled plan is compared in full
    after TensorFlow loads: preflight/settled_run.py).

    Always: model, mode, precision, --variable_update, the CPUs this process may run on
    (configuration.CPUS_FIELD: baseline.run_cpus). On one host (no --job_name: a cluster
    task's devices, workers and batch are its cluster's): devices (--num_gpus towers) and 1
    worker; --device when given (else TensorFlow's GPUs decide); the data when known without
    TensorFlow (`dataset_name`: not a remote --data_dir); the batch size per device and the
    image size, given or the model's own (models/model_catalog.py).

    Args:
      p: the checked Params (after `check_model`).

    Returns:
      {part: value} of the parts known.
    """
    config = configuration.of_params(p._asdict())
    known = {name: config[name] for name in ('model', 'mode', 'precision', 'variable_update')}
    known[configuration.CPUS_FIELD] = baseline.run_cpus()
    if p.job_name:
        return known
    known.update(num_devices=p.num_gpus, num_workers=1)
    if p.device:
        known['device'] = p.device
    dataset = dataset_name(p)
    if dataset is None:
        return known
    known['data'] = dataset
    row = model_catalog.row(p.model, dataset)
    if p.batch_size or row:
        known['batch_size'] = p.batch_size or row.batch_size
    if p.image_size or row:
        known['image_size'] = p.image_size or row.image_size
    return known


def check_gpu_model(p: params.Params) -> None:
    """--gpu_model names a GPU of hardware/gpu_specs.py and is asked for a GPU run.

    Raises:
      params.ParamsError: an unknown GPU name (the message lists the known ones), or
        --gpu_model with --device=cpu.
    """
    if p.gpu_model is None:
        return
    try:
        gpu_specs.lookup(p.gpu_model)
    except gpu_specs.UnknownGpuError as e:
        raise params.flag_error('gpu_model', e) from None
    if p.device == 'cpu':
        raise params.ParamsError('--gpu_model plans a GPU run; drop it or drop --device=cpu.')


#: The install that brings TensorFlow's CUDA libraries (setup.py's `gpu` extra), an installed
#: package's and a checkout's.
GPU_INSTALL = package_info.install_hint('gpu')


def check_gpu_driver(p: params.Params, find_driver=None) -> None:
    """A run on GPUs (--device=gpu, --local_parameter_device=gpu) where no NVIDIA driver is
    visible is refused before TensorFlow loads (TensorFlow would load, find no GPU and stop).

    --dry_run and --plan_scaling run no step and need no GPU; a ps task builds no towers (it
    runs on its CPU whatever --device says: params.resolve_params).

    Args:
      p: the Params.
      find_driver: () -> evidence of a driver or None; default hardware/machine.py
        nvidia_driver_evidence.

    Raises:
      params.ParamsError: a GPU run and no driver: one line naming the problem and the fix.
    """
    wants = [flag for flag, value in (('--device', p.device),
                                      ('--local_parameter_device', p.local_parameter_device))
             if value == 'gpu']
    if not wants or p.dry_run or p.plan_scaling or p.job_name == 'ps':
        return
    if (find_driver or machine.nvidia_driver_evidence)() is not None:
        return
    flag = wants[0]
    raise params.ParamsError(
        '%s=gpu, but no GPU is visible; use %s=cpu, or on a GPU host install the NVIDIA '
        'driver, then %s; no NVIDIA driver found here: no %s, no libcuda, no nvidia-smi '
        '(--dry_run plans a GPU run without one)' % (flag, flag, GPU_INSTALL,
                                                     machine.NVIDIA_DRIVER_VERSION_FILE))


def check_without_gpu(p: params.Params, find_driver=None, find_run=None) -> None:
    """The rules that depend on the GPUs TensorFlow will see, applied before it loads where
    the answer is known without it: --device=cpu, or no NVIDIA driver visible
    (`check_gpu_driver`'s evidence), with which TensorFlow sees no GPU. Where a driver is
    there, TensorFlow counts the GPUs and `check_with_tensorflow` and the dry run apply the
    same rules.

    Args:
      p: the Params.
      find_driver: () -> evidence of a driver or None; default hardware/machine.py
        nvidia_driver_evidence.
      find_run: (Params, device) -> a stored one-device run's (images/sec, source) or None;
        default stored_runs.find_single_device_run (the results database).

    Raises:
      params.ParamsError: more CPU towers than params/device_rules.cpu_tower_limit; a
        reduced precision ONEDNN_MAX_CPU_ISA keeps from running (`check_isa_cap`); NCCL
        where CPU towers run or are planned (params.check_nccl); --dry_run or --plan_scaling
        with --device=gpu and no --gpu_model (preflight/planned_step.plan_device's rule);
        --plan_scaling of CPU towers without
        --single_device_images_per_sec or a stored one-device run of this configuration
        (speed_model/from_flags.py's rule).
    """
    if p.device == 'cpu':
        device_rules.check_cpu_towers(p, 'cpu')  # on any host
        check_isa_cap(p)
    if (find_driver or machine.nvidia_driver_evidence)() is not None:
        return
    device = params.default_device(p, planned_gpus(p, 0))  # no driver: TensorFlow sees none
    device_rules.check_cpu_towers(p, device)
    if device == 'cpu' and p.device != 'cpu':
        check_isa_cap(p)
    params.check_nccl(p, device)
    if device == 'gpu' and p.num_gpus > device_rules.MAX_GPUS_PER_HOST:  # a plan (--gpu_model)
        more = ('the plan\'s rows go on to more hosts of them' if p.plan_scaling
                else '--plan_scaling plans more hosts of them')
        raise params.ParamsError(
            '--num_gpus=%d plans %d GPUs in one host, and the largest hosts hold %d (DGX-2, '
            'HGX-2); give --num_gpus <= %d (%s)'
            % (p.num_gpus, p.num_gpus, device_rules.MAX_GPUS_PER_HOST,
               device_rules.MAX_GPUS_PER_HOST, more))
    mode = '--plan_scaling' if p.plan_scaling else '--dry_run' if p.dry_run else None
    if mode is None:
        return
    if p.device == 'gpu' and p.gpu_model is None:
        raise params.ParamsError(
            '%s --device=gpu on a host without a GPU (no NVIDIA driver found) plans the GPU '
            'named by --gpu_model=NAME; give one (e.g. --gpu_model=V100; known: %s)'
            % (mode, ', '.join(gpu_specs.sorted_names())))
    if not p.plan_scaling or p.single_device_images_per_sec or device != 'cpu':
        return  # GPUs planned (--gpu_model, a preset host), or the figure given
    if find_run is None:
        from .stored_runs import find_single_device_run as find_run
    if find_run(p._replace(device='cpu'), 'CPU') is None:
        raise params.ParamsError(
            '--plan_scaling on a host without a GPU plans CPU towers, which needs the '
            'images/sec of one device: give --single_device_images_per_sec=N (the total '
            'line\'s images/sec of this configuration on one device; no matching run is in the '
            'results database), or --gpu_model=NAME to plan GPUs')


def check_isa_cap(p: params.Params, flags=None, environ=None) -> None:
    """Refuses a CPU run in float16 or bfloat16 that ONEDNN_MAX_CPU_ISA would make fail at
    its first step (hardware/machine.isa_cap_problem: TensorFlow sends the dtype to oneDNN by
    the CPU's own flags, and the cap leaves oneDNN no kernel for it). --dry_run and
    --plan_scaling run no step and pass.

    Args:
      p: the Params; flags, environ: the CPU's flags and the environment (default: this
        host's, os.environ).

    Raises:
      params.ParamsError: one line naming the variable, its value, the flag and the fixes.
    """
    if p.dry_run or p.plan_scaling:
        return
    problem = machine.isa_cap_problem(p.use_fp16, p.use_bf16, flags, environ)
    if problem:
        raise params.ParamsError(problem)


def check_model(p: params.Params, dataset: str | None) -> None:
    """Refuses an unknown --model, or an --image_size it does not take, for the run's
    `dataset` (`dataset_name`; models/model_catalog.py: plain data, no TensorFlow); None (the
    dataset could not be told) checks nothing here: the run then reports the data problem.

    Raises:
      model_catalog.UnknownModelError: naming the closest models and the valid ones.
      params.ParamsError: --image_size does not suit the model (it takes only its own size,
        or the size is below its smallest).
    """
    if dataset is not None:
        check_input_batch(p, dataset)  # judges only a model and size the catalog takes
        model_catalog.check_model(p.model, dataset)
        problem = model_catalog.image_size_problem(p.model, dataset, p.image_size)
        if problem:
            raise params.ParamsError(problem)


def check_input_batch(p: params.Params, dataset: str, available: int | None = None) -> None:
    """Refuses real data whose input batch alone, float32 images of this host's towers,
    exceeds the memory this host can allocate (hardware/host_memory.py): the input pipeline
    builds a chain of ops per image, so at --batch_size=100000000 the build itself ran for
    minutes before the memory check could run on the built step. An unknown --model, or an
    --image_size it does not take, passes here: `check_model` (which asks this first) refuses
    those with their own lines.

    Args:
      p: the Params; dataset: the run's dataset name (`dataset_name`).
      available: the host's allocatable bytes (default: host_memory.host_available_bytes).

    Raises:
      params.ParamsError: naming the batch's bytes, the host's and the largest batch whose
        input alone fits.
    """
    model = model_catalog.row(p.model, dataset)
    if (not p.data_dir or dataset == 'synthetic' or model is None
            or model_catalog.image_size_problem(p.model, dataset, p.image_size)):
        return
    from ..hardware import host_memory
    size = p.image_size or model.image_size
    towers = max(1, p.num_gpus)
    per_image = size * size * 3 * 4
    batch = p.batch_size or model.batch_size
    available = host_memory.host_available_bytes()[0] if available is None else available
    if batch * towers * per_image <= available:
        return
    raise params.ParamsError(
        'not enough memory for --batch_size=%d: the input batch alone is %.2f GiB of float32 '
        'images (%d x %d tower(s) x %dx%dx3), more than the %.2f GiB this host can allocate; '
        'give --batch_size=%d at most (the step needs more than its input)' % (
            batch, batch * towers * per_image / (1 << 30), batch, towers, size, size,
            available / (1 << 30), max(1, available // (towers * per_image))))


#: The synthetic input a dry run without --data_dir plans, by --data_name, in its words.
_SHAPES = {'imagenet': 'ImageNet', 'cifar10': 'CIFAR-10'}


def dataset_name(p: params.Params, remote: bool = False, strict: bool = False) -> str | None:
    """--data_name, 'synthetic' without --data_dir, else the name inferred from the files in
    --data_dir ('imagenet', 'cifar10'); None when that fails (the run reports the data), and
    for a remote --data_dir unless `remote` (listing it loads TensorFlow).

    Raises:
      cnn_util.DataError: with `strict`, a local --data_dir is missing, empty or (without
        --data_name) holds no dataset's files (dataset_info's lines; a dry run's adds that
        without --data_dir it plans synthetic input): a command's run stops there, before
        TensorFlow loads, as it would after."""
    if not p.data_dir or p.data_name == 'synthetic':
        return p.data_name or 'synthetic'
    if file_systems.is_remote(p.data_dir) and not remote:
        return p.data_name
    try:
        if p.data_name and not strict:  # named: strict, the folder must hold files
            return p.data_name
        return dataset_info.folder_dataset_name(p.data_dir, p.data_name)
    except cnn_util.DataError as e:
        if strict and p.dry_run:  # still an error: the run planned is of this data
            raise cnn_util.DataError('%s (a dry run without --data_dir plans synthetic %s-shaped '
                                     'input)' % (e, _SHAPES.get(p.data_name or 'imagenet',
                                                                p.data_name))) from None
        if strict:
            raise
        return None
