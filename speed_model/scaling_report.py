"""The scaling plan a person reads: images/sec, efficiency and the bound of 1 to 1,024 GPUs.

    inputs = scaling_report.PlanInputs(...)       # speed_model/from_flags.py makes them
    rows = scaling_report.plan_rows(inputs)
    print('\\n'.join(scaling_report.format_report(inputs, rows)))
    scaling_report.write_png(inputs, rows, 'scaling.png')

Compute: the data sheet's (speed_model/from_flags.py), or `from_single_device`: the compute
(and, for a figure above what the device's own copies allow, the links) whose one-device row
is a measured figure exactly.

Rows: 1, 2, 4, 8 GPUs on one host (up to the GPUs per host, and that count), then 2 to 128
hosts of that many GPUs (the single-host variable managers in their cluster form beyond one host:
traffic_patterns.CLUSTER_FORM). Each row: images/sec, scaling efficiency, step and exposed
(not overlapped) communication per step, the resource that bounds it, and the knob that moves
that bound with its predicted images/sec (more ps tasks, another --variable_update or
--local_parameter_device, a larger batch, float16 variables, a faster network): each knob is
planned with the same model, and the best one is named when it gains more than KNOB_GAIN.
`plan_data` is the plan as plain data (--benchmark_log_dir's JSON).
"""

from __future__ import annotations

import math
from typing import NamedTuple

from ..hardware import links as links_lib
from . import step_time, traffic_patterns

ONE_HOST_GPUS = (1, 2, 4, 8)
HOSTS = (2, 4, 8, 16, 32, 64, 128)
#: A knob is named when it predicts at least this much more images/sec.
KNOB_GAIN = 0.05
RESOURCE_NAMES = {
    'compute': 'compute',
    'pcie': 'PCIe (host <-> GPU)',
    'gpu_link': 'GPU <-> GPU link',
    'host_memory': 'host memory (GPUs without peer-to-peer)',
    'network': "a worker host's network link",
    'ps_link': "a ps host's network link",
    'intra_host': 'tasks of one host',
    'host_cpu': "the host's cores (every task on one host)",
}


class PlanInputs(NamedTuple):
    """What a plan needs (speed_model/from_flags.py builds it from the flags).

    profile: layer_profile.LayerProfile; batch_size: per device; links:
    traffic_patterns.Links; compute: step_time.Compute of one device; variable_update,
    all_reduce, local_parameter_device, gradient_repacking, forward_only: as the flags;
    gpus_per_host: the multi-host rows' GPUs per host; num_ps: 0 for one ps task per worker host
    (on it), else this many ps tasks on hosts of their own; device: a label ('V100 16GB', 'CPU');
    compact_gradients: the run all-reduces its float32 gradients as float16 where it moves them
    between one host's GPUs in `replicated` (from_flags.compacts_gradients; each topology's
    ratio: `gradient_ratio`); batch_bytes: see traffic_patterns.phases; on_one_host: every
    worker and ps task runs on this one host (a loopback cluster of CPU towers): the workers are
    one task per row's "host", the ps tasks have endpoints of their own (num_ps, default 1), and the
    tasks share the host's `host_cores` (each worker `threads` intra-op threads; gRPC costs
    `cpu_secs_per_byte` of the host's CPU per byte moved, hardware/loopback.py); counted:
    lines on the bytes the dry run counted; gpu_link_origin: where the GPU-to-GPU link comes
    from, in words (from_flags.gpu_link_origin: a host preset, the flag or the default);
    network_note: words on where the hosts' network figure comes from when the plan should say
    it (from_flags.loopback_note: GPU hosts planned on this host's loopback), else '';
    compute_at: batch -> one device's compute seconds at that per-device batch, where the
    compute came from the per-op model (which is not linear in the batch: the batch knob plans
    its own batch with it), else None (the compute scales with the batch); warnings: texts
    the command warns with (a one-device figure above what its own copies allow:
    `from_single_device`)."""
    profile: object
    batch_size: int
    links: object
    compute: object
    variable_update: str
    gpus_per_host: int
    device: str
    all_reduce: str = ''
    local_parameter_device: str = 'cpu'
    gradient_repacking: bool = False
    forward_only: bool = False
    num_ps: int = 0
    compact_gradients: bool = False
    batch_bytes: int = 0
    on_one_host: bool = False
    host_cores: int = 1
    threads: int = 1
    cpu_secs_per_byte: float = 0.0
    counted: tuple = ()
    one_host_gpus: tuple = ONE_HOST_GPUS
    hosts: tuple = HOSTS
    gpu_link_origin: str = ''
    network_note: str = ''
    compute_at: object = None
    warnings: tuple = ()


class Knob(NamedTuple):
    """A change and its plan: `change` (flags or hardware, in words), its Prediction,
    `keeps_step`: it keeps the batch and the bytes (another --variable_update or
    --local_parameter_device, more ps tasks, a faster network), and `capped`: its prediction
    was cut to perfect scaling of a measured one-device figure (`best_knob`)."""
    change: str
    prediction: object
    keeps_step: bool = False
    capped: bool = False


class Row(NamedTuple):
    """One row of the plan: hosts, GPUs per host, the Prediction, efficiency (0-1) and the
    best Knob (None: none gains KNOB_GAIN)."""
    hosts: int
    gpus_per_host: int
    prediction: object
    efficiency: float
    knob: object


def topology(inputs: PlanInputs, hosts: int, gpus: int, mode: str | None = None,
             num_ps: int | None = None) -> traffic_patterns.Topology:
    """The Topology of `hosts` x `gpus` for the inputs' variable manager (its cluster form on
    several hosts; a cluster-only manager runs one worker on one host with its ps there)."""
    mode = mode or inputs.variable_update
    if hosts > 1 or inputs.on_one_host:
        mode = traffic_patterns.CLUSTER_FORM.get(mode, mode)
    if inputs.on_one_host and mode in ('parameter_server', 'distributed_replicated'):
        return traffic_patterns.Topology(
            mode, gpus, hosts, num_ps or inputs.num_ps or 1, ps_on_workers=False,
            forward_only=inputs.forward_only)
    cluster = mode in traffic_patterns.CLUSTER_MODES and not (
        hosts == 1 and mode == 'parameter_server')
    ps_modes = ('parameter_server', 'distributed_replicated')
    given = inputs.num_ps if num_ps is None else num_ps
    ps = (given or hosts) if cluster and mode in ps_modes else 0
    return traffic_patterns.Topology(
        mode, gpus, hosts, ps, ps_on_workers=not given, all_reduce=inputs.all_reduce,
        local_parameter_device=inputs.local_parameter_device,
        gradient_repacking=inputs.gradient_repacking, forward_only=inputs.forward_only)


def gradient_ratio(inputs: PlanInputs, topo) -> float:
    """Gradient bytes / variable bytes a step of `topo` moves with the inputs' flags
    (traffic_patterns.gradient_ratio_of: 0.5 in one host's replicated all-reduce of a
    compacting run, else 1.0)."""
    return traffic_patterns.gradient_ratio_of(topo, inputs.compact_gradients)


def predict_topology(inputs: PlanInputs, topo, *, profile=None, batch_size=None, links=None):
    """step_time.predict of `topo` with the inputs (profile, batch or links replaced when
    given; the compute scales with the batch)."""
    profile = profile or inputs.profile
    batch = batch_size or inputs.batch_size
    compute = inputs.compute.secs * batch / inputs.batch_size
    if batch != inputs.batch_size and inputs.compute_at is not None:
        compute = inputs.compute_at(batch)
    share, extra = 1.0, {}
    if inputs.on_one_host:
        share = topo.hosts * inputs.threads / max(1, inputs.host_cores)
        extra = {'host_cpu': host_cpu_secs(inputs, topo, compute, profile)}
    return step_time.predict(profile, topo, links or inputs.links, batch_size=batch,
                             compute_secs=compute, gradient_ratio=gradient_ratio(inputs, topo),
                             batch_bytes=inputs.batch_bytes * batch // inputs.batch_size,
                             core_share=share, extra_busy=extra)


#: The Links field of the link each resource of a step crosses (a ps host's link is its
#: network link; the GPU link is the PCIe link where Links.gpu_link is None).
_LINK_FIELDS = {'pcie': 'pcie', 'gpu_link': 'gpu_link', 'host_memory': 'host_memory',
                'network': 'network', 'ps_link': 'network', 'intra_host': 'intra_host'}


def _faster_links(links, resources, factor: float) -> tuple:
    """(`links` with the link each of `resources` crosses `factor` times as fast, named so;
    the links changed)."""
    changes = {}
    for resource in resources:
        field = _LINK_FIELDS.get(resource)  # None: the host's cores ('host_cpu')
        if field == 'gpu_link' and links.gpu_link is None:
            field = 'pcie'
        link = getattr(links, field) if field else None
        if link is None or field in changes:
            continue
        changes[field] = link._replace(
            name='%s at %.3gx' % (links_lib.LABELS.get(link.name, link.name), factor),
            gbytes_per_sec=link.gbytes_per_sec * factor,
            source='%s; x %.3g: as fast as a measured one-device figure needs' % (
                link.source, factor))
    return links._replace(**changes), list(changes.values())


def from_single_device(inputs: PlanInputs, images_per_sec: float, source: str) -> PlanInputs:
    """`inputs` with the compute whose one-device row is exactly `images_per_sec` (a measured
    figure of this configuration on one device; `source` says where it comes from): t_c is
    what is left of batch / images_per_sec once the one device's own communication that does
    not overlap is taken off, as predict_topology plans that row (a real-data batch's copy and
    shared cores included).

    Where the one device's own copies alone take longer than batch / images_per_sec over the
    planned links, the figure shows those links faster than planned: every link of that row is
    planned f times as fast (f: the copies' time over the measured step; a loopback cluster's
    gRPC CPU cost per byte f times smaller), the compute is 0 (the measured step is all
    copies), and `warnings` gains a line saying so.

    Raises:
      ValueError: images_per_sec is not > 0.
    """
    if not images_per_sec > 0:
        raise ValueError('the single-device figure must be > 0 images/sec. Received: %r'
                         % (images_per_sec,))
    one, target = topology(inputs, 1, 1), inputs.batch_size / images_per_sec
    rate = step_time.images(images_per_sec)

    def at(secs: float):
        return predict_topology(inputs._replace(compute=step_time.Compute(secs, source)), one)
    floor = at(0.0)
    if floor.step_secs <= target:
        secs = step_time.compute_for_step(lambda t: at(t).step_secs, target)
        return inputs._replace(compute=step_time.Compute(
            secs, '%s: %s images/sec on one device' % (source, rate), measured=True))
    factor = floor.step_secs / target
    links, moved = _faster_links(inputs.links, floor.busy, factor)
    faster = ', '.join(lk.describe() for lk in moved) or "the host's cores"
    most = step_time.images(inputs.batch_size / floor.step_secs)
    warning = ('%s: %s images/sec on one device is more than its own copies allow over the '
               'planned links (at most %s images/sec, bound by %s); the plan keeps the '
               'one-device row at %s with no compute left and %s: check that the figure was '
               'measured with these flags (--variable_update, --local_parameter_device, '
               'batch, precision)' % (source, rate, most,
                                      resource_name(floor.bound, inputs.links), rate, faster))
    return inputs._replace(
        links=links, cpu_secs_per_byte=inputs.cpu_secs_per_byte / factor,
        warnings=inputs.warnings + (warning,),
        compute=step_time.Compute(0.0, '%s: %s images/sec on one device, more than its own '
                                  'copies allow over the planned links (%s at most): those '
                                  'links planned %.3gx as fast' % (source, rate, most, factor),
                                  measured=True))


def host_cpu_secs(inputs: PlanInputs, topo, compute_secs: float, profile) -> float:
    """Seconds per step the cores of a host running every task are busy: the workers'
    compute (each on min(threads, cores) cores) and the gRPC bytes every worker moves to and
    from the ps tasks (reads and gradients) at cpu_secs_per_byte, over the cores."""
    cores = max(1, inputs.host_cores)
    moved = topo.hosts * profile.model_bytes * (1 + (0 if topo.forward_only
                                                     else gradient_ratio(inputs, topo)))
    work = (topo.hosts * compute_secs * min(inputs.threads, cores)
            + moved * inputs.cpu_secs_per_byte)
    return work / cores


def _faster_network(current):
    """The next network preset faster than `current`, or None."""
    faster = sorted((link for link in links_lib.LINKS.values()
                     if link.kind == 'network' and link.gbytes_per_sec > current.gbytes_per_sec),
                    key=lambda link: link.gbytes_per_sec)
    return faster[0] if faster else None


def _one_host_knobs(inputs: PlanInputs, topo) -> list[Knob]:
    """The one-host managers of a row of one host: --local_parameter_device=gpu for
    parameter_server with its variables on the CPU, then the other managers (with 2 GPUs or
    more, NCCL's and xring's all-reduce; on one GPU, replicated, whose variables stay on it)."""
    mode, out = topo.variable_update, []
    if mode == 'parameter_server' and topo.local_parameter_device == 'cpu':
        out.append(Knob('--local_parameter_device=gpu', predict_topology(
            inputs, topo._replace(local_parameter_device='gpu')), keeps_step=True))
    choices = ((('replicated', 'nccl'), ('replicated', 'xring'), ('parameter_server', ''))
               if topo.gpus_per_host > 1 else (('replicated', ''), ('parameter_server', '')))
    for other, spec in choices:
        if other != mode or (topo.gpus_per_host > 1 and spec != topo.all_reduce):
            flag = '--variable_update=%s%s' % (other, ' --all_reduce_spec=%s' % spec
                                               if spec else '')
            out.append(Knob(flag, predict_topology(inputs, topo._replace(
                variable_update=other, all_reduce=spec, num_ps=0)), keeps_step=True))
    return out


def knobs(inputs: PlanInputs, topo, found) -> list[Knob]:
    """Every change that may move the bound of `found` (the Prediction of `topo`), planned."""
    out = []
    mode = topo.variable_update
    if topo.num_ps and topo.hosts > 1:
        more = topo.num_ps * 2
        out.append(Knob('%d ps tasks instead of %d (--ps_hosts)' % (more, topo.num_ps),
                        predict_topology(inputs, topo._replace(num_ps=more, ps_on_workers=False)),
                        keeps_step=True))
    if topo.hosts > 1:
        for other in traffic_patterns.CLUSTER_MODES:
            if other != mode:
                ps = max(1, topo.num_ps or topo.hosts) if other in (
                    'parameter_server', 'distributed_replicated') else 0
                out.append(Knob('--variable_update=%s' % other, predict_topology(
                    inputs, topo._replace(variable_update=other, num_ps=ps, all_reduce='')),
                    keeps_step=True))
    elif not inputs.on_one_host:
        out.extend(_one_host_knobs(inputs, topo))
    out.append(Knob('--batch_size=%d (if it fits: --dry_run)' % (2 * inputs.batch_size),
                    predict_topology(inputs, topo, batch_size=2 * inputs.batch_size)))
    half = inputs.profile.scaled(0.5)
    out.append(Knob('float16 variables and gradients (--use_fp16 --fp16_vars; compute as '
                    'measured)', predict_topology(inputs, topo, profile=half)))
    faster = _faster_network(inputs.links.network)
    if topo.hosts > 1 and faster is not None and found.bound in ('network', 'ps_link'):
        faster_links = inputs.links._replace(network=faster)
        out.append(Knob('a faster network: %s' % faster.describe(),
                        predict_topology(inputs, topo, links=faster_links), keeps_step=True))
    return out


def at_most(prediction, images_per_sec: float):
    """`prediction` with its images/sec cut to `images_per_sec` (its step and exposed time
    lengthened to match) where it is above; else `prediction` itself."""
    if prediction.images_per_sec <= images_per_sec:
        return prediction
    step = prediction.devices * prediction.batch_size / images_per_sec
    return prediction._replace(images_per_sec=images_per_sec, step_secs=step,
                               exposed_secs=step - prediction.compute_secs)


def best_knob(inputs: PlanInputs, topo, found, per_device: float | None = None
              ) -> Knob | None:
    """The knob of `knobs` with the most images/sec, if it gains KNOB_GAIN; None for a
    compute-bound row.

    per_device: the plan's one-device images/sec (its first row) when it is a measured
    figure (Compute.measured: --single_device_images_per_sec or a stored run); None when the
    compute is the model's own estimate (the GPU's data sheet). A knob that keeps the batch
    and the bytes (another --variable_update or --local_parameter_device, more ps tasks, a
    faster network: Knob.keeps_step) is held to perfect scaling of a measured figure, and
    marked `capped` where cut: that figure is the whole step of this --variable_update, and
    the model's estimate of that step's own exposed copies is no ground to predict more than
    N devices x that figure. A knob that changes the batch or the bytes is never held so.
    """
    if found.bound == 'compute':
        return None
    candidates = knobs(inputs, topo, found)
    if per_device:
        ceiling = topo.devices * per_device
        candidates = [k._replace(prediction=at_most(k.prediction, ceiling),
                                 capped=k.prediction.images_per_sec > ceiling)
                      if k.keeps_step else k for k in candidates]
    best = max(candidates, key=lambda k: k.prediction.images_per_sec, default=None)
    if best is None or best.prediction.images_per_sec < (1 + KNOB_GAIN) * found.images_per_sec:
        return None
    return best


def one_host_counts(inputs: PlanInputs) -> list[int]:
    """The one-host rows' GPU counts: ONE_HOST_GPUS (or the inputs' own) up to the GPUs per
    host, and the GPUs per host itself (the run's --num_gpus: 3 plans 1, 2 and 3)."""
    per_host = max(inputs.gpus_per_host, 1)
    return sorted({g for g in inputs.one_host_gpus if g <= per_host} | {per_host})


def plan_rows(inputs: PlanInputs, with_knobs: bool = True) -> list[Row]:
    """The rows of the plan (see the module docstring); without knobs when not `with_knobs`.

    Raises:
      traffic_patterns.UnplannableError: the configuration cannot be planned.
    """
    shapes = [(1, g) for g in one_host_counts(inputs)]
    shapes += [(h, inputs.gpus_per_host) for h in inputs.hosts]
    one = predict_topology(inputs, topology(inputs, 1, 1))
    per_device = one.images_per_sec
    ceiling = per_device if inputs.compute.measured else None
    rows = []
    for hosts, gpus in shapes:
        topo = topology(inputs, hosts, gpus)
        found = predict_topology(inputs, topo)
        rows.append(Row(hosts, gpus, found, efficiency(found.images_per_sec, topo.devices,
                                                       per_device),
                        best_knob(inputs, topo, found, ceiling)
                        if with_knobs else None))
    return rows


def efficiency(images_per_sec: float, devices: int, per_device: float) -> float:
    """images_per_sec over devices x per_device (1 where both are infinite: steps of no
    compute and no copies, step_time.Prediction)."""
    if math.isinf(per_device):
        return 1.0 if math.isinf(images_per_sec) else 0.0
    return images_per_sec / (devices * per_device)


def alternatives(inputs: PlanInputs) -> dict:
    """{'--variable_update=X': rows} for each other manager of the multi-host rows (the
    figure's dashed lines): one host in X's single-host form (parameter_server, else
    replicated), then the hosts in X."""
    out = {}
    current = traffic_patterns.CLUSTER_FORM.get(inputs.variable_update, inputs.variable_update)
    for other in traffic_patterns.CLUSTER_MODES:
        if other == current:
            continue
        mine = inputs._replace(variable_update=other, all_reduce='')
        if inputs.on_one_host:
            out['--variable_update=%s' % other] = plan_rows(mine, with_knobs=False)
            continue
        single = 'parameter_server' if other == 'parameter_server' else 'replicated'
        one_host = plan_rows(mine._replace(variable_update=single, hosts=()), with_knobs=False)
        hosts = plan_rows(mine._replace(one_host_gpus=()), with_knobs=False)
        out['--variable_update=%s' % other] = one_host + hosts
    return out


def resource_name(resource: str, links) -> str:
    """A resource for people: 'NVLink 2.0 (6 links)' for a GPU link on NVLink."""
    if resource == 'gpu_link':
        link = links.gpu_link or links.pcie
        return 'GPU <-> GPU (%s)' % links_lib.LABELS.get(link.name, link.name)
    return RESOURCE_NAMES.get(resource, resource)


def bound_label(prediction, links) -> str:
    """The table's bound of `prediction`: resource_name, and for a compute-bound row whose
    communication that does not overlap shows (0.5% of the step or more) that share, under
    the BOUND_SHARE that names another bound: 'compute (3% of the step exposed, under 5%)'."""
    share = prediction.exposed_secs / prediction.step_secs if prediction.step_secs > 0 else 0.0
    if prediction.bound != 'compute' or share < 0.005:
        return resource_name(prediction.bound, links)
    return 'compute (%.0f%% of the step exposed, under %.0f%%)' % (
        100 * share, 100 * step_time.BOUND_SHARE)


def _mib(n: float) -> str:
    return '%.1f MiB' % (n / (1 << 20))


def _compact_words(inputs: PlanInputs) -> list[str]:
    """Where the plan's one-host rows all-reduce the gradients as float16 (`gradient_ratio`
    of two GPUs below 1): a line on the bytes they move; else none."""
    ratio = gradient_ratio(inputs, topology(inputs, 1, 2))
    if ratio == 1.0:
        return []
    return ['                  the all-reduce between one host\'s GPUs moves them as float16: '
            '%s per device (--compact_gradient_transfer; float32 across hosts)'
            % _mib(inputs.profile.model_bytes * ratio)]


def header_lines(inputs: PlanInputs) -> list[str]:
    """The plan's inputs in words: model, batch, device, compute, links, bytes."""
    lk = inputs.links
    lines = [
        'Scaling plan:     %s, batch %d per device, --variable_update=%s%s' % (
            inputs.profile.model, inputs.batch_size, inputs.variable_update,
            ' --all_reduce_spec=%s' % inputs.all_reduce if inputs.all_reduce else ''),
        'Device:           %s; compute %.1f ms per step (%s)' % (
            inputs.device, 1e3 * inputs.compute.secs, inputs.compute.source),
    ] + ([] if inputs.compute.band is None else [
        '                  (data-sheet model; %s)' % inputs.compute.band.clause()]) + [
        'Bytes per step:   %s of variables read and %s of gradients sent per device '
        '(%d variables; %s)' % (_mib(inputs.profile.model_bytes),
                                _mib(0 if inputs.forward_only else inputs.profile.model_bytes),
                                len(inputs.profile.layers), inputs.profile.source),
    ] + _compact_words(inputs)
    parts = []
    if lk.pcie is not None:
        parts.append('host <-> GPU %s, %d GPU(s) per uplink' % (lk.pcie.describe(),
                                                                lk.gpus_per_pcie_uplink))
    if lk.gpu_link is not None:
        parts.append('GPU <-> GPU %s%s' % (
            lk.gpu_link.describe(),
            ', %s' % inputs.gpu_link_origin if inputs.gpu_link_origin else ''))
    if getattr(lk, 'host_memory', None) is not None:
        parts.append('no peer-to-peer: GPU <-> GPU bytes through %s'
                     % lk.host_memory.describe())
    parts.append('hosts %s' % lk.network.describe())
    if lk.intra_host is not None:
        parts.append('tasks of one host %s' % lk.intra_host.describe())
    lines.append('Links:            %s' % '; '.join(parts))
    if inputs.network_note:
        lines.append('Network:          %s' % inputs.network_note)
    lines.extend(inputs.counted)
    if inputs.on_one_host:
        ps = ('%d ps task(s), each a process of its own; every task on this host, sharing its '
              '%d cores (%d intra-op thread(s) per worker)' % (
                  inputs.num_ps or 1, inputs.host_cores, inputs.threads))
    elif not inputs.num_ps:
        ps = 'one ps task per worker host, on it'
    else:
        ps = '%d ps task%s on hosts of their own' % (inputs.num_ps,
                                                     's' if inputs.num_ps > 1 else '')
    lines.append('Parameter servers: %s' % ps)
    return lines


def format_report(inputs: PlanInputs, rows: list[Row]) -> list[str]:
    """The report: header lines, the table, and the knobs of the rows not bound by compute."""
    lines = header_lines(inputs)
    lines.append('%-9s %5s  %-24s %12s %7s %9s %9s  %s' % (
        'workers' if inputs.on_one_host else 'hosts',
        'CPUs' if inputs.on_one_host else 'GPUs', 'variable update', 'images/sec', 'eff.',
        'step ms', 'exposed', 'bound'))
    for row in rows:
        p = row.prediction
        lines.append('%-9s %5d  %-24s %12.1f %6.1f%% %9.1f %9.1f  %s' % (
            '%d x %d' % (row.hosts, row.gpus_per_host), p.devices, p.topology.variable_update,
            p.images_per_sec, 100 * row.efficiency, 1e3 * p.step_secs, 1e3 * p.exposed_secs,
            bound_label(p, inputs.links)))
    knobbed = [row for row in rows if row.knob is not None]
    if knobbed:
        lines.append('Knobs (planned with the same model):')
    for row in knobbed:
        k = row.knob.prediction
        lines.append('  %d x %d: bound by %s; %s: %.1f images/sec (%.0f%% more%s)' % (
            row.hosts, row.gpus_per_host, resource_name(row.prediction.bound, inputs.links),
            row.knob.change, k.images_per_sec,
            100 * (k.images_per_sec / row.prediction.images_per_sec - 1),
            '; perfect scaling of the one-device figure' if row.knob.capped else ''))
    if not knobbed:
        lines.append('Knobs: none needed: every row is bound by compute or no change gains '
                     '%.0f%%.' % (100 * KNOB_GAIN))
    return lines


def plan_data(inputs: PlanInputs, rows: list[Row]) -> dict:
    """The plan as plain data (what `--plan_scaling --benchmark_log_dir=D` writes):
    {'model', 'plan_scaling': True, 'batch_size' (per device), 'variable_update',
    'all_reduce', 'local_parameter_device', 'forward_only', 'device', 'gpus_per_host',
    'num_ps' (0: one on each worker host), 'compute_secs', 'compute_source',
    'compute_measured' (a measured one-device figure), 'error_band' (a data-sheet figure's
    error against published runs: validation_band.Band.as_dict(), else None), 'links':
    {'pcie', 'gpu_link', 'host_memory', 'network' (each in words with its rate, or None),
    'gpus_per_pcie_uplink', 'gpu_link_origin'}, 'counted_copies' (the dry run's count,
    lines), 'rows': [{'hosts', 'gpus_per_host', 'devices', 'variable_update',
    'images_per_sec' (all devices), 'scaling_efficiency', 'step_secs', 'exposed_secs',
    'bound' (a RESOURCE_NAMES key), 'bound_name' (the table's words), 'knob': None or
    {'change', 'images_per_sec', 'step_secs', 'capped'}}], 'warnings'}."""
    lk = inputs.links

    def words(link):
        return link.describe() if link is not None else None
    out = []
    for row in rows:
        p, k = row.prediction, row.knob
        out.append({
            'hosts': row.hosts, 'gpus_per_host': row.gpus_per_host, 'devices': p.devices,
            'variable_update': p.topology.variable_update, 'images_per_sec': p.images_per_sec,
            'scaling_efficiency': row.efficiency, 'step_secs': p.step_secs,
            'exposed_secs': p.exposed_secs, 'bound': p.bound,
            'bound_name': bound_label(p, inputs.links),
            'knob': None if k is None else {
                'change': k.change, 'images_per_sec': k.prediction.images_per_sec,
                'step_secs': k.prediction.step_secs, 'capped': k.capped}})
    return {'model': inputs.profile.model, 'plan_scaling': True,
            'batch_size': inputs.batch_size, 'variable_update': inputs.variable_update,
            'all_reduce': inputs.all_reduce,
            'local_parameter_device': inputs.local_parameter_device,
            'forward_only': inputs.forward_only, 'device': inputs.device,
            'gpus_per_host': inputs.gpus_per_host, 'num_ps': inputs.num_ps,
            'compute_secs': inputs.compute.secs, 'compute_source': inputs.compute.source,
            'compute_measured': inputs.compute.measured, 'error_band': (
                None if inputs.compute.band is None else inputs.compute.band.as_dict()),
            'links': {'pcie': words(lk.pcie), 'gpus_per_pcie_uplink': lk.gpus_per_pcie_uplink,
                      'gpu_link': words(lk.gpu_link), 'host_memory': words(lk.host_memory),
                      'network': words(lk.network), 'gpu_link_origin': inputs.gpu_link_origin},
            'counted_copies': [line.strip() for line in inputs.counted],
            'rows': out, 'warnings': list(inputs.warnings)}


def write_png(inputs: PlanInputs, rows: list[Row], path: str, others: dict | None = None
              ) -> str:
    """Writes efficiency against GPUs (log scale) to `path` (PNG, matplotlib), with `others`
    ({label: rows}, `alternatives`) as dashed lines; returns path.

    Raises:
      OSError: the file cannot be written.
      ImportError: matplotlib is not installed (pip install matplotlib).
    """
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
    xs = [row.prediction.devices for row in rows]
    ax.plot(xs, [100 * row.efficiency for row in rows], marker='o', linewidth=2,
            label='%s (planned)' % inputs.variable_update)
    for label, other in sorted((others or {}).items()):
        ax.plot([r.prediction.devices for r in other], [100 * r.efficiency for r in other],
                linestyle='--', linewidth=1, label=label)
    for row in rows:
        if row.prediction.bound != 'compute':
            ax.annotate(row.prediction.bound, (row.prediction.devices, 100 * row.efficiency),
                        fontsize=7, textcoords='offset points', xytext=(0, -10), ha='center')
    ax.set_xscale('log', base=2)
    ax.set_xticks(xs)
    ax.set_xticklabels([str(x) for x in xs], fontsize=7)
    ax.set_xlabel('GPUs (1 host up to %d; then hosts of %d)' % (
        max(one_host_counts(inputs)), inputs.gpus_per_host))
    ax.set_ylabel('scaling efficiency (%)')
    ax.set_ylim(0, 105)
    ax.grid(True, alpha=0.3)
    ax.set_title('%s, batch %d, %s: predicted efficiency' % (
        inputs.profile.model, inputs.batch_size, inputs.device), fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
