"""The step-time model's inputs from a run's flags: links, compute, topology and the plan.

What comes from where:

  * the model's variables, their bytes and the FLOPs of the layers that use them: a fast
    placeholder build (speed_model/layer_profile.py);
  * one device's compute: --single_device_images_per_sec, else a stored one-device run the
    caller looks up (`find_run`: preflight/scaling_plan.py reads the results database), else
    the GPU's data sheet through the per-op model (speed_model/gpu_step.py; TF32 unless
    --notf32 or NVIDIA_TF32_OVERRIDE=0, XLA fusion with --xla_compile or --xla);
  * the links: --gpu_interconnect (a link, 'nvlink' for the GPU's own NVLink generation, or a
    host preset of hardware/links.py that also names the GPU, its PCIe sharing and network),
    --interconnect_gbps (Gbit/s or a preset; 'loopback' measures this host's gRPC rate now:
    hardware/loopback.py, and plans every task on this host, sharing its cores), else an SXM
    module's NVLink (links.NVLINK_OF_GPU: the V100, A100 and H100 rows of the GPU table are
    the modules; their PCIe cards have rows of their own) or a card's PCIe generation
    (peer-to-peer; through host memory for GeForce boards, which have none), and 10 Gbit/s
    Ethernet; `gpu_link_origin` says which, for the plan's and the dry run's lines.

Nothing here builds a step, reads the results database or prints: preflight/scaling_plan.py
drives `--plan_scaling` and the dry run's predicted step with these.
"""

from __future__ import annotations

import functools
import os
from typing import Callable

from .. import cnn_util
from .. import params as params_lib
from ..hardware import gpu_specs
from ..hardware import links as links_lib
from ..runtime import cpu_tuning
from ..variable_managers import transfer_rules
from . import bf16_casts, layer_profile, op_profile, scaling_report, step_time
from . import traffic_patterns as patterns

# (Params, device name such as 'V100 16GB' or 'CPU') -> (images/sec, source) of a stored
# one-device run, or None.
FindRun = Callable[[object, str], 'tuple[float, str] | None']


class PlanError(cnn_util.BenchmarkError):
    """The configuration cannot be planned (the message says what to give)."""


def _dtype(p) -> str:
    return 'float16' if p.use_fp16 else 'bfloat16' if p.use_bf16 else 'float32'


def compacts_gradients(p) -> bool:
    """Whether the run of Params `p` all-reduces float32 gradients as float16 wherever it
    all-reduces them between one host's GPUs in `replicated` (traffic_patterns.
    gradient_ratio_of says where): --use_fp16 with --compact_gradient_transfer (default on, as
    in the original), float32 variables (--fp16_vars' gradients are float16 already, and the
    layer profile counts them at 2 bytes), and a step with gradients. The per-device rule of
    the run itself: variable_managers/transfer_rules.compacts_gradients."""
    return transfer_rules.casts_to_float16(p) and not p.fp16_vars


def all_reduce_of(p) -> str:
    """The planned all-reduce algorithm: --all_reduce_spec, 'nccl' for --use_nccl,
    'psgpu/psgpu' for --hierarchical_copy, else '' (the manager's default); '' in a mode
    that does not all-reduce (params.ALL_REDUCE_MODES), which ignores those flags."""
    if p.variable_update not in params_lib.ALL_REDUCE_MODES:
        return ''
    if p.all_reduce_spec:
        return p.all_reduce_spec
    if p.use_nccl:
        return 'nccl'
    return 'psgpu/psgpu' if p.hierarchical_copy else ''


def plan_links(p, gpu) -> tuple[object, patterns.Links, object]:
    """(the GpuSpec planned or None for CPU towers, the Links, the loopback.LoopbackRate
    measured for --interconnect_gbps=loopback (every task on this host) or None).

    Raises:
      PlanError: an unknown link or host preset.
    """
    try:
        host = (links_lib.host_preset(p.gpu_interconnect)
                if p.gpu_interconnect and p.gpu_interconnect.lower() in links_lib.HOSTS
                else None)
        if gpu is None and host is not None and p.device != 'cpu':
            gpu = gpu_specs.lookup(host.gpu)
        value = p.interconnect_gbps or (host.network if host else links_lib.DEFAULT_NETWORK)
        loopback = None
        if str(value).strip().lower() == 'loopback':
            from ..hardware import loopback as loopback_lib
            loopback = loopback_lib.measure()
            network = links_lib.measured_link('loopback', loopback.bytes_per_sec, loopback.how)
        else:
            network = links_lib.network(value)
        if gpu is None:
            return None, patterns.Links(None, 1, None, network), loopback
        pcie = links_lib.link(host.pcie if host else gpu.pcie)
        host_memory = None
        if host is not None:
            conflict = links_lib.preset_conflict(host, gpu)
            if conflict:
                raise PlanError(conflict)
            gpu_link = links_lib.link(host.gpu_link)
            if host.host_memory:  # a host without peer-to-peer between its GPUs
                host_memory = links_lib.link(host.host_memory)
        elif p.gpu_interconnect:
            conflict = links_lib.gpu_link_conflict(p.gpu_interconnect, gpu.name)
            if conflict:  # a link the GPU has not (a visible GPU: the flags' check cannot)
                raise PlanError(conflict)
            gpu_link = links_lib.link(links_lib.gpu_link_name(p.gpu_interconnect, gpu.name))
        elif gpu.name in links_lib.NVLINK_OF_GPU:  # an SXM module: its NVLink board's
            gpu_link = links_lib.link(links_lib.NVLINK_OF_GPU[gpu.name])
        else:  # over PCIe: peer-to-peer, or through host memory (GeForce boards)
            gpu_link = pcie
            if not links_lib.peer_to_peer_over_pcie(gpu):
                host_memory = links_lib.link(links_lib.DEFAULT_HOST_MEMORY_NO_P2P)
        uplink = (host.gpus_per_pcie_uplink if host
                  else links_lib.GPUS_PER_UPLINK_OF_GPU.get(gpu.name, 1))
    except links_lib.UnknownLinkError as e:
        raise PlanError(str(e)) from None
    return gpu, patterns.Links(pcie, uplink, gpu_link, network, host_memory=host_memory), \
        loopback


def loopback_note(loopback, gpu) -> str:
    """Words on a hosts' network measured on this host's loopback (`plan_links`' LoopbackRate,
    or None: '') when GPUs are planned on it (`gpu`, a GpuSpec; None: CPU towers, whose
    loopback cluster is this host's own: ''): the rate is gRPC between two tasks of this
    process on this CPU, not a network between GPU hosts."""
    if loopback is None or gpu is None:
        return ''
    return ('the hosts\' network is this host\'s loopback (gRPC between two tasks of this '
            'process, measured now: %.3g GB/s), not a network between %s hosts; give their '
            'network as --interconnect_gbps (Gbit/s, or 25gbe, ib_hdr, ...)'
            % (loopback.bytes_per_sec / 1e9, gpu.name))


def check_num_ps(p, profile: layer_profile.LayerProfile) -> None:
    """--plan_num_ps no more than the model's variables (`profile`): each variable is placed
    whole on one ps task (variable_managers/distributed.PsPlacer; traffic_patterns.shard_loads
    plans the same), so ps tasks past one per variable hold nothing and change no row.

    Raises:
      params.ParamsError: more ps tasks than variables, naming the count to give.
    """
    variables = len(profile.layers)
    if p.plan_num_ps > variables:
        from ..params import ParamsError
        raise ParamsError(
            '--plan_num_ps=%d is more ps tasks than %s has variables (%d): each variable is '
            'placed whole on one ps task, so the others would hold none; give --plan_num_ps=%d '
            'or fewer' % (p.plan_num_ps, profile.model, variables, variables))


def gpu_link_origin(p, gpu) -> str:
    """Where the planned GPU-to-GPU link of `p` comes from, in words for the plan and the dry
    run: the host preset, --gpu_interconnect, or the default for `gpu` (a GpuSpec; None: '',
    CPU towers have none)."""
    if gpu is None:
        return ''
    value = (p.gpu_interconnect or '').strip().lower()
    if value in links_lib.HOSTS:
        return 'from --gpu_interconnect=%s (the host\'s link)' % value
    if value == 'nvlink':
        return 'from --gpu_interconnect=nvlink (the %s\'s own)' % gpu.name
    if value:
        return 'from --gpu_interconnect=%s' % value
    return links_lib.default_gpu_link_origin(gpu)


def _with_compute(p, plan, base: scaling_report.PlanInputs, gpu,
                  find_run: FindRun | None) -> scaling_report.PlanInputs:
    """`base` with one device's compute from the flags, a stored run (`find_run`), both
    measured figures whose one-device row is exactly the figure
    (scaling_report.from_single_device), or the GPU's data sheet (the per-op model, also at the
    batch knob's batch: PlanInputs.compute_at)."""
    given = p.single_device_images_per_sec
    found = None if given or find_run is None else find_run(p, base.device)
    if given or found:
        figure, source = ((given, '--single_device_images_per_sec') if given else found)
        try:
            return scaling_report.from_single_device(base, figure, source)
        except ValueError as e:
            raise PlanError(str(e)) from None
    if gpu is None:
        raise PlanError('a plan of CPU towers needs --single_device_images_per_sec (the total '
                        'line\'s images/sec of a run of this configuration on one device, or of a '
                        '1-worker cluster)')
    ops = ops_of(p, plan)

    @functools.lru_cache(maxsize=8)
    def at(batch: int) -> step_time.Compute:
        return step_time.compute_from_gpu_model(
            gpu, _dtype(p), ops, batch, xla=bool(p.xla_compile or p.xla), tf32=tf32_enabled(p),
            forward_only=p.forward_only, winograd=bool(p.winograd_nonfused))
    try:
        return base._replace(compute=at(base.batch_size), compute_at=lambda b: at(b).secs)
    except ValueError as e:
        raise PlanError(str(e)) from None


def tf32_enabled(p, environ=None) -> bool:
    """Whether float32 convolutions and matrix products may use TF32: TensorFlow's default,
    off with --notf32 or NVIDIA_TF32_OVERRIDE=0 in the environment (what cuBLAS and cuDNN
    read)."""
    environ = os.environ if environ is None else environ
    return p.tf32 and environ.get('NVIDIA_TF32_OVERRIDE', '').strip() != '0'


def ops_of(p, plan) -> op_profile.OpProfile:
    """The model's op profile at the run's dataset, image size and classes."""
    dataset = plan.dataset if plan.dataset in ('imagenet', 'cifar10') else 'imagenet'
    return op_profile.from_model(p.model, dataset, plan.image_size, plan.num_classes)


def profile_of(p, plan) -> layer_profile.LayerProfile:
    """The model's layer profile at the run's dataset, image size, classes and variable dtype."""
    dataset = plan.dataset if plan.dataset in ('imagenet', 'cifar10') else 'imagenet'
    return layer_profile.from_model(p.model, dataset, plan.image_size, plan.num_classes,
                                    2 if p.use_fp16 and p.fp16_vars else 4)


def gpus_per_host(p, gpu, given=frozenset()) -> int:
    """The GPUs per host of the plan's multi-host rows: --num_gpus when the command line gave
    it (`given`: the names of the flags it gave, cli.given_flags; --num_gpus=1 plans hosts of
    one GPU) or when above 1, else 8 for GPUs (the common full host) and 1 for CPU towers."""
    if 'num_gpus' in given or p.num_gpus > 1:
        return max(1, p.num_gpus)
    return 8 if gpu is not None else 1


def plan_inputs(p, plan, gpu, *, profile=None, counted=(),
                find_run: FindRun | None = None, given=frozenset()) -> scaling_report.PlanInputs:
    """The PlanInputs of the configuration `p` describes.

    Args:
      p: the run's Params.
      plan: its run plan (run_plan.RunPlan: model, dataset, per-device batch, image size).
      gpu: the GpuSpec planned, or None for CPU towers (a host preset may name one).
      profile: its layer profile, made when not given.
      counted: lines of the dry run's copies (preflight/scaling_plan.counted_lines).
      find_run: looks up a stored one-device run's images/sec when
        --single_device_images_per_sec is not given; None looks up nothing.
      given: the names of the flags the command line gave (`gpus_per_host`).

    Raises:
      PlanError: links, compute or the variable manager cannot be planned.
    """
    profile = profile or profile_of(p, plan)
    gpu, links, on_this_host = plan_links(p, gpu)
    batch = plan.per_device_batch_size
    real = bool(p.data_dir) and p.data_name != 'synthetic'
    batch_bytes = (batch * (3 * plan.image_size ** 2 * plan.compute_dtype.size + 4)
                   if real else 0)
    base = scaling_report.PlanInputs(
        profile, batch, links, None, p.variable_update, gpus_per_host(p, gpu, given),
        gpu.name if gpu is not None else 'CPU', all_reduce=all_reduce_of(p),
        local_parameter_device=p.local_parameter_device,
        gradient_repacking=bool(p.gradient_repacking), forward_only=p.forward_only,
        num_ps=p.plan_num_ps, compact_gradients=compacts_gradients(p),
        batch_bytes=batch_bytes, counted=tuple(counted),
        gpu_link_origin=gpu_link_origin(p, gpu), network_note=loopback_note(on_this_host, gpu))
    if on_this_host is not None and gpu is None:
        cores = cpu_tuning.physical_cores()
        base = base._replace(gpus_per_host=1, one_host_gpus=(1,), hosts=(2, 3, 4, 8),
                             on_one_host=True, host_cores=cores,
                             threads=p.num_intra_threads or cores,
                             cpu_secs_per_byte=on_this_host.cpu_secs_per_byte)
    try:
        return _with_compute(p, plan, base, gpu, find_run)
    except patterns.UnplannableError as e:
        raise PlanError(str(e)) from None


def _host_names(hosts) -> set:
    return {str(h).rsplit(':', 1)[0] for h in hosts or ()}


def run_topology(p, plan) -> patterns.Topology:
    """The Topology of the run `p` itself: this host's towers, or the cluster of the flags
    (ps tasks on the worker hosts when their host names are among the workers')."""
    towers = max(1, len(plan.devices))
    if not p.job_name:
        return patterns.Topology(p.variable_update, towers, all_reduce=all_reduce_of(p),
                                 local_parameter_device=p.local_parameter_device,
                                 gradient_repacking=bool(p.gradient_repacking),
                                 forward_only=p.forward_only)
    hosts = max(1, len(p.worker_hosts))
    if p.job_name == 'controller':
        towers = max(1, towers // hosts)
    ps = len(p.ps_hosts) if p.variable_update in ('parameter_server',
                                                   'distributed_replicated') else 0
    return patterns.Topology(
        p.variable_update, towers, hosts, ps,
        ps_on_workers=_host_names(p.ps_hosts) <= _host_names(p.worker_hosts),
        all_reduce=all_reduce_of(p), gradient_repacking=bool(p.gradient_repacking),
        forward_only=p.forward_only)


def predicted_step_report(p, plan, gpu, find_run: FindRun | None = None
                          ) -> tuple[list[str], dict]:
    """(the 'Predicted step' lines, the same prediction as plain data for the dry run's JSON).

    The data: {'planned': False, 'reason'} when the model cannot plan the run, else
    {'planned': True, 'devices', 'batch_size' (per device), 'step_secs', 'compute_secs',
    'exposed_secs' (communication the compute does not hide, seconds), 'images_per_sec' (all
    devices), 'scaling_efficiency' (of devices x one device), 'bound', 'compute_source',
    'one_gpu': the per-op model's gpu_step.StepPrediction.as_dict() (which ops bound the step,
    the share of the peak it reaches) or None when the compute came from a measured figure,
    'float32_images_per_sec': one GPU's figure in float32 by the per-op model beside a
    float16 or bfloat16 one (`float32_lines`; else None), 'local_parameter_device_gpu': the
    step and images/sec with --local_parameter_device=gpu where the variables' copies over
    PCIe bound the step (`parameter_device_lines`; else None), 'gpu_link': the GPU-to-GPU
    link planned ({'link', 'through': the host memory peer-to-peer goes through or None,
    'origin'}, as its line says) where a host has several GPUs, else None (one GPU per host:
    nothing crosses it, and no line names it), 'warnings': the texts the dry run warns with
    (the dtype predicted slower than float32), 'error_band': the data-sheet figure's error
    against published runs (validation_band.Band.as_dict(); None for a measured figure),
    'variable_copies': the copies of the variables held on the CPU and what the model assumed
    of them (`variable_copy_words`; else None)}. Never raises."""
    try:
        inputs = plan_inputs(p, plan, gpu, find_run=find_run)
        topo = run_topology(p, plan)
        found = scaling_report.predict_topology(inputs, topo)
        one = scaling_report.predict_topology(inputs, scaling_report.topology(inputs, 1, 1))
    except (PlanError, patterns.UnplannableError) as e:
        return ['Predicted step:   not planned: %s' % e], {'planned': False, 'reason': str(e)}
    devices = topo.devices
    step = inputs.compute.step
    in_float32, warnings, float32_rate = float32_lines(p, plan, inputs, step)
    warnings = list(inputs.warnings) + warnings
    on_gpus, on_gpus_data = parameter_device_lines(p, plan, inputs, found)
    band = inputs.compute.band
    copy_words, copies = variable_copy_words(inputs, topo)
    data = {'planned': True, 'devices': devices, 'batch_size': found.batch_size,
            'step_secs': found.step_secs, 'compute_secs': found.compute_secs,
            'exposed_secs': found.exposed_secs, 'images_per_sec': found.images_per_sec,
            'scaling_efficiency': found.images_per_sec / (devices * one.images_per_sec),
            'bound': scaling_report.resource_name(found.bound, inputs.links),
            'compute_source': inputs.compute.source,
            'one_gpu': step.as_dict() if step is not None else None,
            'float32_images_per_sec': float32_rate,
            'local_parameter_device_gpu': on_gpus_data,
            'gpu_link': _gpu_link_data(inputs, topo), 'warnings': warnings,
            'error_band': band.as_dict() if band is not None else None,
            'variable_copies': copies}
    return (_step_lines(found, inputs, one, devices, copy_words) + on_gpus
            + gpu_model_lines(step)
            + in_float32 + _gpu_link_lines(inputs, topo)), data


def float32_lines(p, plan, inputs, step) -> tuple[list[str], list[str], float | None]:
    """(lines, warnings, one GPU's float32 images/sec) comparing a float16 or bfloat16 step of
    the per-op model (`step`, a gpu_step.StepPrediction) with the same step in float32 on the
    same GPU: one line with both figures and the ratio, and a warning where float32 is
    predicted faster (the step's casts of the float32 variables and gradients outweigh what
    the dtype's halved bytes and its tensor cores save: a small batch, or a model of large
    layers and little compute). Nothing for a float32 run or a measured one-device figure."""
    dtype = _dtype(p)
    if step is None or dtype == 'float32':
        return [], [], None
    gpu = gpu_specs.lookup(inputs.device)
    try:
        base_compute = step_time.compute_from_gpu_model(
            gpu, 'float32', ops_of(p, plan), inputs.batch_size,
            xla=bool(p.xla_compile or p.xla), tf32=tf32_enabled(p),
            forward_only=p.forward_only, winograd=bool(p.winograd_nonfused))
        base = base_compute.step
    except ValueError:
        return [], [], None
    ratio = step.images_per_sec / base.images_per_sec
    emulated = 'float32 math' in step.math_path
    casts = bf16_casts.casts_convolutions(gpu, dtype)
    why = (' (%s data with float32 math: the float32 rate, half the bytes)' % dtype
           if emulated else '')
    if casts:
        why = (' (below compute capability 8.0 TensorFlow casts each convolution\'s operands '
               'to float32 and its result back: float32 math and bytes in the convolutions, '
               'plus the casts; half the bytes in the other ops)')
    against = '; data-sheet model, against ' + base_compute.band.short()
    lines = ['                  in float32 one %s\'s step: %s images/sec (%s%s); in %s %.2fx '
             'that%s' % (gpu.name, step_time.images(base.images_per_sec), base.math_path,
                         against, dtype, ratio, why)]
    warnings = []
    if ratio < 1.0:
        warnings.append(
            '%s: the model predicts one %s slower in %s than in float32 at batch %d (%s against '
            '%s images/sec: the casts of the float32 variables and their gradients%s cost more '
            'than the halved bytes%s save); float32 is the faster choice here' % (
                '--use_fp16' if dtype == 'float16' else '--use_bf16', gpu.name, dtype,
                inputs.batch_size, step_time.images(step.images_per_sec),
                step_time.images(base.images_per_sec),
                ', and the loss scaling,' if dtype == 'float16' else (
                    ', and those of every convolution to float32 and back,' if casts else ''),
                '' if emulated else ' and the tensor cores'))
    return lines, warnings, base.images_per_sec


def parameter_device_lines(p, plan, inputs, found) -> tuple[list[str], dict | None]:
    """(lines, data) where a one-host parameter_server step with its variables on the CPU
    (--local_parameter_device=cpu, this project's default) is bound by PCIe: every step copies
    the variables to each GPU and the gradients back. The line names the fix,
    --local_parameter_device=gpu, with the step and images/sec the model predicts for it
    (data: {'step_secs', 'images_per_sec', 'bound'}); nothing where that is not faster, in a
    cluster, with another manager or another bound."""
    if (p.variable_update != 'parameter_server' or p.local_parameter_device != 'cpu'
            or p.job_name or found.bound != 'pcie'):
        return [], None
    q = p._replace(local_parameter_device='gpu')
    try:
        alt = scaling_report.predict_topology(inputs._replace(local_parameter_device='gpu'),
                                              run_topology(q, plan))
    except patterns.UnplannableError:
        return [], None
    if alt.step_secs >= found.step_secs:
        return [], None
    gpus = 's' if found.devices > 1 else ''
    return (['                  the variables are held on the CPU (--local_parameter_device=cpu,'
             ' this project\'s default): each step copies them to the GPU%s%s over PCIe; '
             '--local_parameter_device=gpu keeps them on the GPU%s: %.1f ms, %.1f images/sec, '
             'bound by %s' % (
                 gpus, '' if p.forward_only else ' and the gradients back', gpus,
                 1e3 * alt.step_secs, alt.images_per_sec,
                 scaling_report.resource_name(alt.bound, inputs.links))],
            {'step_secs': alt.step_secs, 'images_per_sec': alt.images_per_sec,
             'bound': scaling_report.resource_name(alt.bound, inputs.links)})


def gpu_model_lines(step) -> list[str]:
    """The per-op model's lines of the dry run: the op kinds that bound one GPU's step (share
    of its time, math-, memory- or launch-bound) and the share of the peak it reaches; none
    when the compute came from a measured figure."""
    if step is None:
        return []
    return ['                  one GPU\'s step: %s; %.0f%% of the %s peak (%.4g TFLOP/s), '
            '%d kernels' % (step.describe(), 100 * step.share_of_peak, step.math_path,
                            step.peak_tflops, step.kernels)]


def _step_lines(found, inputs, one, devices, copy_words: str = '') -> list[str]:
    """The 'Predicted step' line and the images/sec line below it: whole images/sec (the
    model is not good to a tenth of an image), and beside a data-sheet figure the band of
    the model's error against published runs (validation_band.Band.clause)."""
    band = inputs.compute.band
    return [
        'Predicted step:   %.1f ms = compute %.1f ms (%s) + %.1f ms of communication that '
        'does not overlap it%s' % (1e3 * found.step_secs, 1e3 * found.compute_secs,
                                   inputs.compute.source, 1e3 * found.exposed_secs,
                                   copy_words),
        '                  %s images/sec on %d device(s) (%s%.1f%% of %d x one device\'s), '
        'bound by %s (network %s; --plan_scaling for 1 to 1,024 GPUs)' % (
            step_time.images(found.images_per_sec), devices,
            'data-sheet model; %s; ' % band.clause() if band is not None else '',
            100 * found.images_per_sec / (devices * one.images_per_sec), devices,
            scaling_report.resource_name(found.bound, inputs.links),
            inputs.links.network.describe())]


def variable_copy_words(inputs, topo) -> tuple[str, dict | None]:
    """What the step-time model assumed of the copies of a one-host parameter_server step
    whose variables are held on the CPU (--local_parameter_device=cpu, this project's
    default): (words for the communication's figure, e.g. " (the variables' 97.7 MiB to the
    GPU and their gradients' 97.7 MiB back over PCIe 4.0 x16 (25.2 GB/s), 4.1 ms each way,
    assumed to overlap the compute layer by layer ...)", data: {'link', 'variables_bytes',
    'variables_secs', 'gradients_bytes', 'gradients_secs' (the busiest PCIe uplink's bytes
    and their seconds at the link's rate), 'overlap' (the words)}); ('', None) for another
    manager, a cluster, the variables on a GPU or CPU towers. The overlap is
    step_time.step_secs': the copies start with the step in the variables' creation order, a
    layer's forward pass waits only for its own variables, a gradient is sent as soon as the
    backward pass made it; the communication's figure is what that leaves uncovered."""
    pcie = inputs.links.pcie
    if (topo.variable_update != 'parameter_server' or topo.hosts != 1 or topo.num_ps
            or topo.local_parameter_device != 'cpu' or pcie is None):
        return '', None
    phases = patterns.phases(topo, inputs.links, [x.bytes for x in inputs.profile.layers],
                             gradient_ratio=scaling_report.gradient_ratio(inputs, topo))
    read = sum(s.bytes for s in phases.read if s.resource == 'pcie')
    grad = sum(s.bytes for s in phases.grad if s.resource == 'pcie')
    secs = (read / pcie.bytes_per_sec, grad / pcie.bytes_per_sec)
    sharing = max(1, min(inputs.links.gpus_per_pcie_uplink, topo.gpus_per_host))
    where = ('the GPU' if topo.gpus_per_host == 1 else 'each GPU' if sharing == 1
             else 'the %d GPUs of each PCIe uplink' % sharing)
    moved = 'the variables\' %.1f MiB to %s' % (read / (1 << 20), where)
    took = '%.1f ms' % (1e3 * secs[0])
    if grad:
        moved += ' and their gradients\' %.1f MiB back' % (grad / (1 << 20))
        took = ('%s each way' % took if abs(secs[0] - secs[1]) < 5e-5
                else '%s and %.1f ms' % (took, 1e3 * secs[1]))
    overlap = ('assumed to overlap the compute layer by layer: a layer waits only for its own '
               'variables%s' % ('' if topo.forward_only
                                 else ', a gradient leaves as soon as it is made'))
    return (' (%s over %s, %s, %s)' % (moved, pcie.describe(), took, overlap),
            {'link': pcie.describe(), 'variables_bytes': read, 'variables_secs': secs[0],
             'gradients_bytes': grad, 'gradients_secs': secs[1], 'overlap': overlap})


def _gpu_link_data(inputs, topo) -> dict | None:
    """The GPU-to-GPU link the step is planned with where a host has several GPUs ({'link':
    its words, 'through': the host memory's where there is no peer-to-peer, else None,
    'origin': where it came from}); None for one GPU per host (no GPU-to-GPU bytes), for
    --variable_update=independent (each tower keeps its own variables: nothing crosses it) and
    for CPU towers."""
    lk = inputs.links
    if lk.gpu_link is None or topo.gpus_per_host < 2 or topo.variable_update == 'independent':
        return None
    host_memory = getattr(lk, 'host_memory', None)
    return {'link': lk.gpu_link.describe(),
            'through': host_memory.describe() if host_memory is not None else None,
            'origin': inputs.gpu_link_origin}


def _gpu_link_lines(inputs, topo) -> list[str]:
    """The dry run's line on the GPU-to-GPU link it planned and where that came from, where a
    host has several GPUs (`_gpu_link_data`); then the note on the hosts' network, if any."""
    link = _gpu_link_data(inputs, topo)
    through = '; no peer-to-peer: through %s' % link['through'] if link and link['through'] \
        else ''
    return (['                  GPU <-> GPU %s%s: %s' % (link['link'], through, link['origin'])]
            if link else []) + (
        ['                  %s' % inputs.network_note] if inputs.network_note else [])
