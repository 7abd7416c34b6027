"""`--dry_run`: build what the run would build, run no step, and say whether it would work.

    status = dry_run.run(make_bench, params, visible_gpus)   # prints the report; 0 works, 1 not

The report (one block on stdout, after the usual header):

  * ops per device, ops without a device and where TensorFlow's placer puts them;
  * every op on a GPU without a GPU kernel for its dtypes, with the project function that built
    it (preflight/gpu_kernels.py);
  * the tensors one step copies between devices, by direction, against the design's budget
    (preflight/step_traffic.py);
  * the estimated peak memory of each device against its memory, and the largest per-device
    batch that fits, found by building the graph at other batch sizes
    (preflight/memory_estimate.py);
  * the predicted step: compute and the communication that does not overlap it, images/sec
    and the bound (speed_model/step_time.py, fed as --plan_scaling is: preflight/
    scaling_plan.py).

The GPU planned for: the visible GPU (its name looked up in hardware/gpu_specs.py), else
`--gpu_model`. `--device=cpu` estimates against the host's available memory. The exit status is
1, with one `error:` line, when an op would leave its device or a device's memory would not
hold the step. A phase that may take long gets a line before it (preflight/progress.py).
"""

from __future__ import annotations

import collections
import time
from typing import NamedTuple

from .. import cnn_util
from ..hardware import gpu_plans
from . import (
    batch_search,
    gpu_build,
    gpu_kernels,
    memory_estimate,
    progress,
    scaling_plan,
    step_traffic,
)
from .planned_step import (  # noqa: F401 (dry_run API)
    Built,
    DryRunFailed,
    build,
    build_step,
    plan_device,
    plan_named_device,
)

fmt = memory_estimate.format_bytes

#: Bounds of the dry run's batch search: seconds, and no batch above this many times the run's.
MAX_SEARCH_SECS = 60.0
SEARCH_LIMIT_FACTOR = 16


def traffic_budget(p, num_towers: int, built: Built) -> dict:
    """step_traffic.budget for this run's variable manager and data (towers on GPUs). Nothing
    moves between GPUs with one tower, nor with an all-reduce spec whose every algorithm is
    pscpu (the sums are made on the CPU)."""
    spec = p.all_reduce_spec or ''
    on_host = ((p.variable_update == 'parameter_server' and p.local_parameter_device == 'cpu')
               or p.variable_update in ('distributed_replicated', 'distributed_all_reduce')
               or bool(p.job_name) or 'pscpu' in spec)
    algorithms = {word for word in spec.replace('/', ':').replace('#', ':').split(':')
                  if word.isalpha()}
    on_gpus = num_towers > 1 and algorithms != {'pscpu'} and (
        p.variable_update in ('replicated', 'distributed_replicated', 'distributed_all_reduce')
        or (p.variable_update == 'parameter_server' and p.local_parameter_device == 'gpu'))
    return step_traffic.budget(num_towers=num_towers, model_bytes=built.model_bytes,
                               batch_bytes=built.batch_bytes, real_data=bool(p.data_dir),
                               variables_on_host=on_host, gpu_reduction=on_gpus,
                               cluster_task=bool(p.job_name))


def device_fits(peaks: dict, gpu, host: memory_estimate.HostMemory | None = None) -> dict:
    """{row: (estimate bytes, memory bytes)}: each GPU on its own against the planned GPU's
    usable memory (a cluster worker's '/job:worker/task:0/GPU:0' too), 'host' for the CPU
    devices of this task together (logical CPU devices share the host's memory), and one row
    per ps task ('/job:ps/task:0': the variables it holds, their optimizer slots and sync
    accumulators) against a host like this one. The host's memory is `host`'s usable figure
    (memory_estimate.HostMemory), else read once now."""
    groups = memory_estimate.group_devices(peaks)
    out = {device: (peak.total, memory_estimate.device_memory(device, gpu))
           for device, peak in groups.gpus.items()}
    on_host = memory_estimate.device_memory('/CPU:0', host=host)
    out['host'] = (groups.host.total, on_host)
    for task, peak in groups.ps.items():
        out[task] = (peak.total, on_host)
    return out


def _worst(fits: dict, on_gpu: bool) -> tuple[str, float]:
    """The device the batch search follows: the GPU (planned for a GPU), else this host,
    nearest its limit (a ps task's share does not grow with the batch)."""
    candidates = {d: v for d, v in fits.items()
                  if (memory_estimate.is_gpu(d) if on_gpu else d == 'host')} or fits
    device = max(candidates, key=lambda d: candidates[d][0] / max(1, candidates[d][1]))
    return device, candidates[device][0] / max(1, candidates[device][1])


def report_lines(bench, built: Built, gpu, on_gpu: bool,
                 host: memory_estimate.HostMemory | None = None
                 ) -> tuple[list[str], list[str], dict]:
    """The report, the problems (each a reason the run would not work) and `device_fits`.

    The kernels' and copies' lines are logged as soon as they are known (before the memory
    estimate, the longest check); the lines returned are the memory's. `host`: the host's
    memory the rows are checked against (`run` reads it once, right after the build; None:
    read now)."""
    p, plan = bench.params, bench.plan
    lines, problems = [], []
    ops = len(built.graph.get_operations())
    progress.announce('checking kernels and copies of %d ops' % ops,
                      progress.CHECK_SECS_PER_OP * ops, rough=False)
    placement = gpu_kernels.check_placement(built.graph)
    in_order = gpu_kernels.device_order
    per_device = ', '.join('%s %d' % kv for kv in sorted(placement.ops_per_device.items(),
                                                         key=lambda kv: in_order(kv[0]))
                           if kv[0] != '(none)')
    lines.append('Ops per device:   %s' % per_device)
    if placement.unplaced:
        lines.append('Ops without a device: %d, placed by TensorFlow on %s' % (
            sum(placement.unplaced.values()),
            ', '.join('%s %d' % kv for kv in sorted(placement.unplaced.items(),
                                                    key=lambda kv: in_order(kv[0])))))
    if not placement.misplaced:
        lines.append('Ops on a GPU without a GPU kernel: none')
    else:
        grouped = collections.Counter((m.op_type, m.dtypes, m.origin) for m in placement.misplaced)
        lines.append('Ops on a GPU without a GPU kernel for their dtypes: %d' %
                     len(placement.misplaced))
        for (op_type, dtypes, where), count in grouped.most_common():
            example = next(m.name for m in placement.misplaced
                           if (m.op_type, m.dtypes, m.origin) == (op_type, dtypes, where))
            lines.append('  %3d x %s (%s) e.g. %s, made by %s' % (
                count, op_type, dtypes, example, where or '(outside the project)'))
        first = placement.misplaced[0]
        problems.append('%d op(s) on a GPU have no GPU kernel for their dtypes (first: %s %s '
                        '%s, made by %s); soft placement would copy them to the CPU every step'
                        % (len(placement.misplaced), first.op_type, first.dtypes, first.name,
                           first.origin or 'TensorFlow'))
    traffic = step_traffic.step_traffic(built.graph, built.fetches)
    towers = sum(1 for d in plan.devices if 'gpu' in d.lower())
    allowed = traffic_budget(p, towers, built) if on_gpu else None
    lines.append('Copies per step (tensors over %d bytes; %d scalars besides):' % (
        step_traffic.SCALAR_BYTES, traffic.scalars))
    for way in ('host->GPU', 'GPU->host', 'GPU->GPU', 'host->host'):
        if way in traffic.totals or (allowed and allowed.get(way)):
            lines.append('  %-10s %10s in %4d tensors%s' % (
                way, fmt(traffic.totals.get(way, 0)), traffic.counts.get(way, 0),
                '  (the design allows %s)' % fmt(allowed[way]) if allowed else ''))
    if not traffic.totals:
        lines.append('  none')
    ring = step_traffic.collective_bytes_per_gpu(traffic)
    if ring:
        lines.append('  (NCCL all-reduce: %s sent and as much received by each of %d GPUs per '
                     'step, 2(N-1)/N of the gradients: ring all-reduce)' % (
                         fmt(max(ring.values())), len(ring)))
    if allowed:
        for line in step_traffic.over_budget(traffic, allowed):
            lines.append('  over budget: %s' % line)
    for line in lines:  # what is known so far, before the longest check
        cnn_util.log_fn(line)
    lines = []
    progress.announce('estimating the peak memory of each device (Grappler)',
                      progress.GRAPPLER_SECS_PER_OP * ops)
    start = time.perf_counter()
    host = host or memory_estimate.read_host_memory()
    peaks = memory_estimate.estimate_peaks(built.graph, built.fetches, gpu=gpu)
    secs = time.perf_counter() - start
    lines.append('Peak memory per device (Grappler, %.1f s):' % secs)
    fits = device_fits(peaks, gpu, host)
    lines += memory_lines(fits, gpu, problems, host)
    return lines, problems, fits


def memory_lines(fits: dict, gpu, problems: list,
                 host: memory_estimate.HostMemory | None = None) -> list[str]:
    """One line per row of `fits` (device_fits); a row that does not fit adds a problem. A host
    row says how its figure is made from `host` (the reading `fits` was made with; None: read
    now)."""
    host = host or memory_estimate.read_host_memory()
    lines = []
    for device, (estimate, memory) in sorted(fits.items(),
                                             key=lambda kv: gpu_kernels.device_order(kv[0])):
        ok = estimate <= memory
        if memory_estimate.is_gpu(device):
            what = 'of %s usable (%.0f%% of %s)' % (
                fmt(memory), 100 * memory_estimate.USABLE_GPU_FRACTION, fmt(gpu.memory_bytes))
        else:
            what = 'of %s usable (%s%s)' % (
                fmt(memory), '' if device == 'host' else 'its host planned as this one: ',
                host.words())
        lines.append('  %-8s %10s %s: %s' % (device, fmt(estimate), what,
                                           'fits' if ok else 'DOES NOT FIT'))
        if not ok:
            problems.append('%s needs about %s, more than its %s' % (
                device, fmt(estimate), fmt(memory)))
    return lines


def ps_task(make_bench, p, gpus: int, gpu) -> int:
    """The dry run of a ps task: worker 0's step is built (a ps builds none of its own) and
    this task's share of it (the variables it holds, their slots and accumulators) is checked
    against this host's memory.

    Raises:
      DryRunFailed: this ps task's share does not fit this host.
    """
    row = '/job:ps/task:%d' % p.task_index
    cnn_util.log_fn('Dry run:          ps %d serves variables: planned from worker 0\'s step'
                    % p.task_index)
    built = build_step(make_bench, p, gpus, job_name='worker', task_index=0).built
    peaks = memory_estimate.estimate_peaks(built.graph, built.fetches, gpu=gpu)
    estimate, memory = device_fits(peaks, gpu).get(row, (0, memory_estimate.device_memory(
        '/CPU:0')))
    ok = estimate <= memory
    cnn_util.log_fn('Peak memory of this task:\n  %s %10s of %s usable (%s): %s' % (
        row, fmt(estimate), fmt(memory), memory_estimate.host_memory_words(),
        'fits' if ok else 'DOES NOT FIT'))
    if not ok:
        raise DryRunFailed('the run would not work as built: %s needs about %s, more than its '
                           '%s; add ps tasks (--ps_hosts) to share the variables'
                           % (row, fmt(estimate), fmt(memory)))
    cnn_util.log_fn('Dry run: this ps task holds its share of the variables.')
    return 0


class LargestBatch(NamedTuple):
    """The batch search's answer: batch, the largest per-device batch found to fit (None when
    not even the smallest tried fits); lower_bound, True when no larger batch was found not to
    fit (the search stopped first: its limit, builds or time; the text's 'N or more')."""
    batch: int | None
    lower_bound: bool = False


def run_batch(p, bench) -> int:
    """The per-device batch the run uses (the model's default where --batch_size is not
    given; --eval's own batch with --eval)."""
    return bench.plan.eval.per_device_batch_size if p.eval else bench.plan.per_device_batch_size


def largest_batch(make_bench, p, bench, gpus: int, gpu, fits: dict,
                  host: memory_estimate.HostMemory | None = None) -> LargestBatch:
    """Prints and returns the largest per-device batch found to fit (batch_search over graph
    builds of the run at other batches) and whether it is a lower bound.

    Every batch tried is checked against the memory `fits` was (`host`: the reading of the
    host's memory `fits` was made with; None: read once now), not a new reading per build:
    under an address-space limit (`prlimit --as`) what is left shrinks with every graph this
    process builds, which the run would not build (resnet50 with real data under a 4 GB limit
    was found to fit 2 per device, then none, where the run works with 6)."""
    host = host or memory_estimate.read_host_memory()
    on_gpu = gpu is not None
    batch = run_batch(p, bench)
    device, ratio = _worst(fits, on_gpu)

    # Every tower holds the same step: the search builds one tower (half the time for two).
    # (Not on the CPU, whose towers share the host's memory, nor with the variables spread over
    # the GPUs, nor in a cluster task.)
    spread = p.variable_update == 'parameter_server' and p.local_parameter_device == 'gpu'
    one = {'num_gpus': 1} if on_gpu and not p.job_name and not spread else {}

    def probe(b):
        trial = build_step(make_bench, p, 1 if one else gpus, batch_size=b, **one).built
        peaks = memory_estimate.estimate_peaks(trial.graph, trial.fetches, gpu=gpu)
        return _worst(device_fits(peaks, gpu, host), on_gpu)[1]  # its ratio: secant steps

    start = time.perf_counter()
    if MAX_SEARCH_SECS > 0:  # a silent minute would read as a hang
        cnn_util.log_fn('Searching for the largest batch per device that fits %s (graph builds, '
                        'at most %.0f s) ...' % (device, MAX_SEARCH_SECS))
    limit = SEARCH_LIMIT_FACTOR * batch
    lo, hi, builds = batch_search.search_batch(probe, batch, ratio,
                                               time.monotonic() + MAX_SEARCH_SECS,
                                               limit=limit, max_builds=batch_search.MAX_BUILDS)
    stopped = batch_search.why_stopped(builds, batch_search.MAX_BUILDS, MAX_SEARCH_SECS)
    cnn_util.log_fn('Largest batch per device that fits %s: %s (%d graph build%s%s, %.0f s)' % (
        device, _found_words(lo, hi, limit, batch, stopped), builds, '' if builds == 1 else 's',
        ' of one tower' if one and len(bench.plan.devices) > 1 else '',
        time.perf_counter() - start))
    return LargestBatch(lo, lo is not None and not hi)


def _found_words(lo: int | None, hi: int | None, limit: int, batch: int, stopped: str) -> str:
    """The search's answer in words: '185 (190 does not)', 'none (not even 1)' (or not even the
    smallest batch tried, and why the search stopped there), or 'N or more' with why it
    stopped there (the search's limit of SEARCH_LIMIT_FACTOR times the run's batch, or its
    builds or time ran out before a batch failed); a bracket wider than the search's 1/32
    (batch_search.narrowed) says it is not narrowed and why. `stopped`: which budget ran out
    (batch_search.why_stopped), e.g. 'its 60 s ran out after 2 graph builds'."""
    if lo is None:
        return 'none (not even %d%s)' % (hi, '' if hi == 1 else '; %s before one fit' % stopped)
    if hi:
        if batch_search.narrowed(lo, hi):
            return '%d (%d does not)' % (lo, hi)
        return '%d (%d does not; not narrowed to 1/32 of it: %s)' % (lo, hi, stopped)
    if lo >= limit:
        return ('%d or more (%d x the run\'s batch of %d, where the search stops)'
                % (lo, SEARCH_LIMIT_FACTOR, batch))
    return '%d or more (%s before a batch failed)' % (lo, stopped)


def classes_line(p, dataset) -> list[str]:
    """The line of a dry run whose model's classes come from --data_dir's labels.txt (the
    converter's; input_data/class_labels.py) rather than the dataset's published count: how
    many, from where, and the flag that plans the published count. None otherwise (synthetic
    data, --num_classes given, or no labels.txt)."""
    from ..input_data import class_labels
    if (dataset.synthetic or p.num_classes
            or not dataset.classes_source.startswith(class_labels.LABELS_FILE)):
        return []
    published = dataset.spec.num_classes
    return ['Dry run:          %d classes from the data (%s), not %s\'s %d: the model\'s last '
            'layer is planned with %d (--num_classes=%d plans %s\'s)' % (
                dataset.num_classes, dataset.classes_source, dataset.name, published,
                dataset.num_classes, published, dataset.name)]


def input_line(dataset, predicted: dict) -> list[str]:
    """The line under a per-op prediction of a real-data run: reading, decoding and
    preprocessing the images on the host's CPUs are not in it (the model times the GPU's
    kernels and the batch's copy over PCIe: speed_model/gpu_step.py; a measured one-device
    figure includes what its run did)."""
    if dataset.synthetic or not predicted.get('one_gpu'):
        return []
    work = ('JPEG decoding and preprocessing' if dataset.spec.file_format == 'tfrecord'
            else 'reading and preprocessing')
    return ['                  real data: the host\'s %s are not in this prediction (only '
            'the batch\'s copy to the GPU is); where the host\'s CPUs cannot keep up, the run is '
            'slower' % work]


def report_data(p, bench, gpu, fits: dict, problems: list, largest: LargestBatch,
                predicted: dict, warnings=()) -> dict:
    """The dry run's report as plain data (what --benchmark_log_dir gets): model,
    'dry_run': True, mode, gpu (the planned GPU's name, or 'CPU'), batch_size (per device: the
    model's default where --batch_size is not given, `run_batch`), works, problems, memory
    {device: {'estimate', 'usable'} in bytes}, largest_batch (per device, or None when not even
    the smallest batch tried fits), largest_batch_is_lower_bound (True: the search stopped
    before a batch failed, the text's 'N or more') and predicted_step
    (speed_model/from_flags.predicted_step_report's data: the step, its bound, and for the
    per-op GPU model 'one_gpu' with the ops that bound it and the share of the peak) and
    warnings (the `warning:` lines' texts: this TensorFlow cannot run on the GPU, the
    compute dtype predicted slower than float32)."""
    return {'model': p.model, 'dry_run': True, 'mode': bench.plan.mode,
            'gpu': gpu.name if gpu is not None else 'CPU',
            'batch_size': run_batch(p, bench),
            'works': not problems, 'problems': list(problems),
            'memory': {device: {'estimate': int(est), 'usable': int(usable)}
                       for device, (est, usable) in fits.items()},
            'largest_batch': largest.batch, 'largest_batch_is_lower_bound': largest.lower_bound,
            'predicted_step': predicted, 'warnings': list(warnings)}


def write_report_json(p, bench, gpu, fits, problems, largest, predicted, warnings=()) -> str:
    """Writes `report_data` as <--benchmark_log_dir>/dry_run_<model>_<UTC time>.json (a name
    `results ingest` does not take for a run; results_log says where); returns the path.

    Raises:
      cnn_util.BenchmarkError: the file cannot be written.
    """
    from ..lifecycle import results_log
    data = report_data(p, bench, gpu, fits, problems, largest, predicted, warnings)
    return results_log.write_json(data, p.benchmark_log_dir, prefix='dry_run')


def build_announced(bench) -> Built:
    """`build(bench)` with a line before it (what, roughly how long: from the model's
    placeholder build, which the predicted step needs anyway) and one after it (ops, seconds)."""
    from ..speed_model import from_flags
    towers = max(1, len(bench.plan.devices))
    start = time.perf_counter()
    profile_ops = 0
    try:
        profile_ops = from_flags.profile_of(bench.params, bench.plan).ops
    except Exception:  # noqa: BLE001 - an estimate only: the build itself reports any error
        pass
    progress.announce('building the step: %d tower(s) of %s' % (towers, bench.params.model),
                      progress.BUILD_SECS_PER_PROFILE_OP * profile_ops * towers)
    start, cpu = time.perf_counter(), time.process_time()
    built = build(bench)
    cnn_util.log_fn('Graph:            %d ops, built in %.1f s (%.1f s of CPU)' % (
        len(built.graph.get_operations()), time.perf_counter() - start,
        time.process_time() - cpu))
    return built


def run(make_bench, p, visible_gpus: int) -> int:
    """`run_planned` with the GPU the flags name looked up here (hardware/gpu_plans.named_gpu):
    the library's and the tests' dry run. Raises as `run_planned`."""
    return run_planned(make_bench, p, visible_gpus, gpu_plans.named_gpu(p))


def run_planned(make_bench, p, visible_gpus: int, named) -> int:
    """Prints the dry-run report of the run the flags `p` describe; returns 0 (it would work,
    or it builds and fits but this TensorFlow's CUDA build cannot run on the planned GPU:
    preflight/gpu_build.py's `warning:` line, and a final line saying so).

    Args:
      make_bench: (Params, gpus) -> benchmark_cnn.BenchmarkCNN (the command's constructor).
      p: the run's Params (--dry_run set).
      visible_gpus: GPUs TensorFlow sees on this host.
      named: the GPU the flags name (hardware/gpu_plans.named_gpu), or None, as the usage
        check decided it (preflight/usage.check_with_tensorflow returns it).

    Raises:
      DryRunFailed: the run would not work as built (an op without a kernel on its device, or
        a device's memory too small); the message names the first problem and a batch that
        fits.
    """
    progress.start_probe()
    p, gpus, gpu = plan_named_device(p, visible_gpus, named)
    on_gpu = gpu is not None
    bench = make_bench(p, gpus)
    bench.print_info()
    if bench.cluster is not None and bench.cluster.serves:
        if bench.cluster.job_name == 'ps':
            return ps_task(make_bench, p, gpus, gpu)
        cnn_util.log_fn('Dry run: this task (%s) serves variables and builds no step of its own; '
                        'dry-run a worker.' % bench.cluster.job_name)
        return 0
    target = ('%s (%s, compute capability %s)' % (gpu.name, fmt(gpu.memory_bytes),
                                                   gpu.compute_capability)
              if on_gpu else 'the CPU')
    cnn_util.log_fn('Dry run:          %s, planned for %s' % (bench.plan.mode, target))
    for line in classes_line(p, bench.dataset):
        cnn_util.log_fn(line)
    unsupported = gpu_build.unsupported_warning(gpu) if on_gpu else None
    if unsupported:
        cnn_util.warn(unsupported)
    built = build_announced(bench)
    # The host's memory, read once where the run's own check reads it (after its build): the
    # dry run's later builds map address space the run would not (memory_estimate.HostMemory).
    host = memory_estimate.read_host_memory()
    lines, problems, fits = report_lines(bench, built, gpu, on_gpu, host)
    # its layer profile: built already
    step_lines, predicted = scaling_plan.dry_run_report(p, bench, gpu)
    lines += step_lines + input_line(bench.dataset, predicted)
    for line in lines:
        cnn_util.log_fn(line)
    warnings = [unsupported] if unsupported else []
    for text in predicted.get('warnings', ()):  # the dtype predicted slower than float32
        cnn_util.warn(text)
        warnings.append(text)
    batch_flag = 'eval_batch_size' if p.eval else 'batch_size'
    found = largest_batch(make_bench, p, bench, gpus, gpu, fits, host)
    lo = found.batch
    if p.benchmark_log_dir:
        write_report_json(p, bench, gpu, fits, problems, found, predicted, warnings)
    if problems:
        advice = '; a batch that fits: --%s=%d' % (batch_flag, lo) if lo else ''
        raise DryRunFailed('the run would not work as built: %s%s' % (problems[0], advice))
    if unsupported:
        cnn_util.log_fn('Dry run: the graph builds and fits (every op has a kernel on its device, '
                        'and every device holds the step), but this TensorFlow cannot run on '
                        'the %s (the warning above).' % gpu.name)
        return 0
    cnn_util.log_fn('Dry run: the run would work as built (every op has a kernel on its '
                    'device, and every device holds the step).')
    return 0
