"""`--plan_scaling` and the dry run's predicted step: the step-time model fed from the flags.

    tf_cnn_benchmarks --plan_scaling --model=resnet50 --gpu_model=V100 \\
        --variable_update=distributed_replicated --interconnect_gbps=25 \\
        --single_device_images_per_sec=380 --plan_scaling_png=resnet50.png

What comes from where:

  * the model's variables, their bytes and the FLOPs of the layers that use them: a fast
    placeholder build (preflight/layer_profile.py);
  * the copies of a step, counted by the dry run on the graph this configuration builds on
    one host (two GPUs, or worker 0 of a two-host cluster), printed beside the pattern's
    bytes for the same shape (preflight/traffic_patterns.expected_counts);
  * one device's compute: --single_device_images_per_sec, else the newest matching
    one-device run of the results database (`find_single_device_run`), else the GPU table's
    peak at step_time.ASSUMED_UTILISATION;
  * the links: --gpu_interconnect (a link, or a host preset of hardware/links.py that also
    names the GPU, its PCIe sharing and network), --interconnect_gbps (Gbit/s or a preset;
    'loopback' measures this host's gRPC rate now: hardware/loopback.py, and plans every task
    on this host, sharing its cores), else the GPU's PCIe generation and 10 Gbit/s Ethernet.

No step runs and no session starts. docs/scaling.md explains the model and its errors.
"""

from __future__ import annotations

import os

from .. import cnn_util
from ..hardware import gpu_specs, machine
from ..hardware import links as links_lib
from ..history import records, store
from ..runtime import cpu_tuning
from . import layer_profile, memory_estimate, planned_step, scaling_report, step_time, step_traffic
from . import traffic_patterns as patterns

fmt = memory_estimate.format_bytes


class PlanError(cnn_util.BenchmarkError):
    """The configuration cannot be planned (the message says what to give)."""


def find_single_device_run(p, device: str) -> tuple[float, str] | None:
    """A stored run's images/sec of this configuration on one device, and where it comes from
    ('results database: run 42 of 2025-01-01T10:00:00Z'), or None.

    The results database (--results_db, history/store.py; never created here) answers for the
    model, per-device batch, precision (--use_fp16/--use_bf16), mode (--forward_only) and the
    device (`device`: a GPU table name such as 'V100 16GB', matched against the GPUs the
    stored run's host reported, or 'CPU': a CPU run on this host's CPU model), on one device
    and one worker; the newest matching run's total images/sec wins.
    """
    path = store.resolve_path(p.results_db)
    if path is None or not os.path.isfile(path):
        return None
    config = {'model': p.model, 'precision': records.precision_of(p._asdict()),
              'mode': records.mode_of(p._asdict()), 'batch_size': p.batch_size,
              'num_devices': 1}
    try:
        with store.opened(path, create=False) as conn:
            rows = store.select_runs(conn, **config)
    except store.StoreError:
        return None  # a database that cannot be read plans nothing (the run's record says so)
    this_cpu = machine.cpu_model()
    for row in reversed(rows):  # newest first
        if (row.get('num_workers') or 1) != 1 or not row.get('images_per_sec'):
            continue
        if device == 'CPU':
            found = row.get('device') == 'cpu' and row.get('cpu_model') == this_cpu
        else:
            names = [n.strip() for n in (row.get('gpus') or '').split(',') if n.strip()]
            specs = [gpu_specs.from_device_name(n) for n in names]
            found = row.get('device') == 'gpu' and any(s is not None and s.name == device
                                                        for s in specs)
        if found:
            return float(row['images_per_sec']), 'results database: run %s of %s' % (
                row['id'], row['run_utc'][:19] + 'Z')
    return None


def _dtype(p) -> str:
    return 'float16' if p.use_fp16 else 'bfloat16' if p.use_bf16 else 'float32'


def all_reduce_of(p) -> str:
    """The planned all-reduce algorithm: --all_reduce_spec, 'nccl' for --use_nccl,
    'psgpu/psgpu' for --hierarchical_copy, else '' (the manager's default)."""
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
        pcie = links_lib.link(host.pcie if host else links_lib.PCIE_OF_GPU.get(gpu.name,
                                                                             'pcie3'))
        if host is not None:
            gpu_link = links_lib.link(host.gpu_link)
        elif p.gpu_interconnect:
            gpu_link = links_lib.link(p.gpu_interconnect)
        else:
            gpu_link = pcie
        uplink = (host.gpus_per_pcie_uplink if host
                  else links_lib.GPUS_PER_UPLINK_OF_GPU.get(gpu.name, 1))
    except links_lib.UnknownLinkError as e:
        raise PlanError(str(e)) from None
    return gpu, patterns.Links(pcie, uplink, gpu_link, network), loopback


def _compute(p, profile, batch: int, gpu, device: str, one, links, forward_only: bool):
    """step_time.Compute from the flags, the results database or the GPU's peak."""
    given = p.single_device_images_per_sec
    found = None if given else find_single_device_run(p, device)
    if given or found:
        figure, source = ((given, '--single_device_images_per_sec') if given else found)
        return step_time.compute_from_single_device(figure, batch, profile, one, links,
                                                    source=source)
    if gpu is None:
        raise PlanError('a plan of CPU towers needs --single_device_images_per_sec (the total '
                        'images/sec of a run of this configuration on one device, or of a '
                        '1-worker cluster)')
    try:
        return step_time.compute_from_peak(gpu, _dtype(p), profile.forward_flops, batch,
                                           forward_only=forward_only)
    except ValueError as e:
        raise PlanError(str(e)) from None


def profile_of(p, plan) -> layer_profile.LayerProfile:
    """The model's layer profile at the run's dataset, image size, classes and variable dtype."""
    dataset = plan.dataset if plan.dataset in ('imagenet', 'cifar10') else 'imagenet'
    return layer_profile.from_model(p.model, dataset, plan.image_size, plan.num_classes,
                                    2 if p.fp16_vars else 4)


def plan_inputs(p, bench, gpu, *, profile=None, counted=()) -> scaling_report.PlanInputs:
    """The PlanInputs of the configuration `p` describes (bench: its BenchmarkCNN, for the
    model, dataset, batch and image size the run would use; profile: its layer profile, made
    when not given).

    Raises:
      PlanError: links, compute or the variable manager cannot be planned.
    """
    plan = bench.plan
    profile = profile or profile_of(p, plan)
    gpu, links, on_this_host = plan_links(p, gpu)
    batch = plan.per_device_batch_size
    real = bool(p.data_dir) and p.data_name != 'synthetic'
    batch_bytes = (batch * (3 * plan.image_size ** 2 * plan.compute_dtype.size + 4)
                   if real else 0)
    gpus_per_host = max(1, p.num_gpus) if p.num_gpus > 1 else (8 if gpu is not None else 1)
    base = scaling_report.PlanInputs(
        profile, batch, links, None, p.variable_update, gpus_per_host,
        gpu.name if gpu is not None else 'CPU', all_reduce=all_reduce_of(p),
        local_parameter_device=p.local_parameter_device,
        gradient_repacking=bool(p.gradient_repacking), forward_only=p.forward_only,
        num_ps=p.plan_num_ps, batch_bytes=batch_bytes, counted=tuple(counted))
    if on_this_host is not None and gpu is None:
        cores = cpu_tuning.physical_cores()
        base = base._replace(gpus_per_host=1, one_host_gpus=(1,), hosts=(2, 3, 4, 8),
                             on_one_host=True, host_cores=cores,
                             threads=p.num_intra_threads or cores,
                             cpu_secs_per_byte=on_this_host.cpu_secs_per_byte)
    one = scaling_report.topology(base, 1, 1)
    try:
        compute = _compute(p, profile, batch, gpu, base.device, one, links, p.forward_only)
    except patterns.UnplannableError as e:
        raise PlanError(str(e)) from None
    return base._replace(compute=compute)


PLAN_FLAGS = dict(plan_scaling=False, plan_scaling_png=None, plan_num_ps=0, dry_run=False,
                  single_device_images_per_sec=None, interconnect_gbps=None,
                  gpu_interconnect=None)


def buildable(p):
    """`p` without the planning flags: the Params of the run the plan is about."""
    return p._replace(**PLAN_FLAGS)


def _small_cluster(p, gpus: int):
    """(Params of a small configuration of the same manager, the Topology it is): one host
    with `gpus` GPUs, worker 0 of two hosts with a ps, or the controller of two workers."""
    mode = p.variable_update
    base = dict(device='gpu', num_gpus=gpus)
    if mode in ('parameter_server', 'replicated', 'independent'):
        return p._replace(**base), patterns.Topology(
            mode, gpus, all_reduce=all_reduce_of(p),
            local_parameter_device=p.local_parameter_device, forward_only=p.forward_only)
    ps = ['plan-ps0:2222'] if mode in ('parameter_server', 'distributed_replicated') else []
    workers = ['plan-worker0:2222', 'plan-worker1:2222']
    job = ('controller', dict(controller_host='plan-controller:2222')) \
        if mode == 'distributed_all_reduce' else ('worker', {})
    q = p._replace(job_name=job[0], task_index=0, ps_hosts=ps, worker_hosts=workers,
                   **job[1], **base)
    return q, patterns.Topology(mode, gpus, 2, len(ps), all_reduce=all_reduce_of(p),
                                forward_only=p.forward_only)


def counted_lines(make_bench, p, gpu, profile) -> list[str]:
    """The dry run's count of a small configuration's copies beside the pattern's bytes."""
    gpus = 2
    q, topo = _small_cluster(p._replace(gpu_model=p.gpu_model or (gpu.name if gpu else 'V100')),
                             gpus)
    built = planned_step.build(make_bench(buildable(q), gpus))
    counted = step_traffic.step_traffic(built.graph, built.fetches).totals
    m = profile.model_bytes
    expected = patterns.expected_counts(topo, m, 0 if p.forward_only else m)
    shape = ('1 host x %d GPUs' % gpus if topo.hosts == 1 else
             '%s 0 of %d hosts x %d GPUs' % (q.job_name, topo.hosts, gpus))
    ways = sorted(set(counted) | set(expected or {}))
    line = 'Counted copies:   %s (%s, dry run): %s per step' % (
        shape, topo.variable_update, ', '.join('%s %s' % (w, fmt(counted.get(w, 0)))
                                               for w in ways) or 'none')
    if expected is None:
        return [line, '                  (the pattern\'s transfers happen inside NCCL or '
                      'collective ops, or a two-level spec: not counted)']
    return [line, '                  the pattern for that shape: %s' % (
        ', '.join('%s %s' % (w, fmt(expected.get(w, 0))) for w in ways) or 'none')]


def run(make_bench, p, visible_gpus: int) -> int:
    """Prints the scaling plan of the configuration `p` describes; writes the PNG of
    --plan_scaling_png. Returns 0.

    Raises:
      PlanError: the configuration cannot be planned (one line says what to give).
      cnn_util.BenchmarkError: the PNG cannot be written.
    """
    q, gpus, gpu = planned_step.plan_device(p._replace(job_name=None, ps_hosts=[], worker_hosts=[],
                                                  controller_host=None), visible_gpus)
    if gpu is None and p.gpu_interconnect in links_lib.HOSTS and p.device != 'cpu':
        gpu = gpu_specs.lookup(links_lib.HOSTS[p.gpu_interconnect].gpu)
        q = q._replace(device='gpu', gpu_model=gpu.name)
    bench = make_bench(buildable(q), max(1, gpus))
    profile = profile_of(q, bench.plan)
    counted = counted_lines(make_bench, q, gpu, profile) if gpu is not None else []
    inputs = plan_inputs(q, bench, gpu, profile=profile, counted=counted)
    try:
        rows = scaling_report.plan_rows(inputs)
    except patterns.UnplannableError as e:
        raise PlanError(str(e)) from None
    for line in scaling_report.format_report(inputs, rows):
        cnn_util.log_fn(line)
    if p.plan_scaling_png:
        try:
            path = scaling_report.write_png(inputs, rows, p.plan_scaling_png,
                                            scaling_report.alternatives(inputs))
        except ImportError:
            raise cnn_util.BenchmarkError('--plan_scaling_png needs matplotlib (pip install '
                                          'matplotlib); the plan above is complete without it'
                                          ) from None
        except OSError as e:
            raise cnn_util.BenchmarkError('cannot write --plan_scaling_png %s: %s' % (
                p.plan_scaling_png, e.strerror or e)) from None
        cnn_util.log_fn('Figure:           %s' % os.path.abspath(path))
    return 0


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


def dry_run_lines(p, bench, gpu) -> list[str]:
    """The dry run's 'Predicted step' lines for the run itself (never raises: a configuration
    the model cannot plan is one line saying why)."""
    try:
        inputs = plan_inputs(p, bench, gpu)
        topo = run_topology(p, bench.plan)
        found = scaling_report.predict_topology(inputs, topo)
        one = scaling_report.predict_topology(inputs, scaling_report.topology(inputs, 1, 1))
    except (PlanError, patterns.UnplannableError) as e:
        return ['Predicted step:   not planned: %s' % e]
    devices = topo.devices
    return [
        'Predicted step:   %.1f ms = compute %.1f ms (%s) + %.1f ms of communication that '
        'does not overlap it' % (1e3 * found.step_secs, 1e3 * found.compute_secs,
                                 inputs.compute.source, 1e3 * found.exposed_secs),
        '                  %.1f images/sec on %d device(s) (%.1f%% of %d x one device\'s), '
        'bound by %s (network %s; --plan_scaling for 1 to 1,024 GPUs)' % (
            found.images_per_sec, devices,
            100 * found.images_per_sec / (devices * one.images_per_sec), devices,
            scaling_report.resource_name(found.bound, inputs.links),
            inputs.links.network.describe())]
