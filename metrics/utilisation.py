"""The figures that explain a run's images/sec, printed in the total block and kept in the result.

After `total images/sec: X` (which stays as it is) a run prints:

    compute images/sec: 4.21 (input wait 0.7% of the step, sync 2.1%; traced warm-up step)
    model FLOP/s: 97.1 GFLOP/s = 23.15 GFLOPs/image (3 x forward 7.72) x 4.19 images/sec
    utilisation: 42.4% of 229.0 GFLOP/s (CPU peak, float32, 2 threads: calibrated 2026-12-04
                 20:10 UTC, others 0.05 of 2 cores, spread 2%)
    peak memory: CPU allocator 1.71 GiB (traced step), process RSS 2.37 GiB
    latency per batch of 16 (ms): p50 12.31, p90 13.05, p99 14.00 over 10 batches

Method.
  * FLOPs: models/flops.py counts the forward pass of one image (multiply-add = 2 FLOPs,
    convolutions and matrix products only); a training step counts 3 x forward (forward, and
    the gradients with respect to activations and to weights), --forward_only and --eval 1 x.
    Model FLOP/s = FLOPs per image x total images/sec.
  * Peak: a GPU's from the data-sheet table (hardware/gpu_specs.py) for the compute dtype, times
    the task's devices; a CPU's from this host's calibration record (hardware/cpu_peak.py,
    hardware/calibration.py: quiet measurements only), in the precision the step computes in
    (`step_precision`: float32 where a reduced dtype is emulated, mixed where its gradients
    run in float32, `mixed_peak`); a recorded peak below the run's rate is measured again,
    once. The fraction is never shown above 100%. The line names the peak's date, the host's
    load while it was measured and its spread. In a cluster each task reports its own
    images/sec, so its utilisation is against its own devices' peak.
  * Input wait, sync, peak allocator bytes: one traced step, the last warm-up step (never a timed
    one), run with RunOptions.FULL_TRACE; metrics/step_breakdown.py splits its wall time into
    input, compute, sync and overhead. Input share = input / wall; compute images/sec = total
    images/sec / (1 - input share): what the step would do if the input were free. A run is
    called input-bound when the input share exceeds INPUT_BOUND_SHARE (a tenth). Both count only
    the time the step waits: where the pipeline runs on the step's own CPU cores (a CPU run on
    real data, `input_shares_cpu`) its threads also slow the step without a wait, and the line
    says so (SHARED_CPU_NOTE: compare a run without --data_dir). The sync share
    is printed on real data and in clusters (always in the result). Without warm-up steps
    nothing is traced, and these figures are reported as not measured.
  * Peak memory: per allocator, the largest `allocator_bytes_in_use` the traced step's ops
    recorded (GPU allocators per GPU; the CPU allocator, shared by all CPU devices), for GPUs
    also tf.config.experimental.get_memory_info's 'peak' where TensorFlow gives it, and the
    process's peak resident set size (getrusage ru_maxrss).
  * Latency: metrics/latency.py, forward-only runs (eval: lifecycle/eval_runner.py).

`--baseline` compares the run with a stored result (metrics/baseline.py); its line comes last.
"""

from __future__ import annotations

import functools
import math
import resource
import sys

import tensorflow as tf

from .. import cnn_util
from ..hardware import calibration, cpu_peak, gpu_specs, machine
from . import latency as latency_lib

INPUT_BOUND_SHARE = 0.10
GIB = float(1 << 30)


def flops_multiplier(training: bool) -> int:
    """3 for a training step (forward + two backward products), 1 for inference."""
    return 3 if training else 1


@functools.lru_cache(maxsize=32)
def _forward_flops(model_name: str, dataset_name: str, image_size: int, num_classes: int) -> int:
    from ..models import flops, model_config
    model = model_config.get_model(model_name, dataset_name)
    recorder = flops.VariableRecorder()
    graph, _, _ = flops.build_graph(model, image_size=image_size, batch_size=1,
                                    num_classes=num_classes, recorder=recorder)
    return flops.count_flops(graph)


def forward_flops(plan) -> tuple[int | None, str]:
    """(forward FLOPs per image of the run's model at its image size, '' or why not counted).

    Counted on a placeholder build at batch 1 (a fraction of a second for resnet50), cached per
    model, dataset, image size and classes for the process.
    """
    try:
        return _forward_flops(plan.model, plan.dataset, plan.image_size, plan.num_classes), ''
    except Exception as e:  # a model the fast build cannot count: report, do not fail the run
        return None, 'not counted (%s)' % (str(e).splitlines() or [type(e).__name__])[0]


def model_flops(forward_per_image: int, training: bool, images_per_sec: float) -> dict:
    """{'forward_flops_per_image', 'flops_multiplier', 'flops_per_image', 'model_flops_per_sec'}:
    FLOPs per image x images/sec (FLOP/s)."""
    mult = flops_multiplier(training)
    return {'forward_flops_per_image': int(forward_per_image), 'flops_multiplier': mult,
            'flops_per_image': int(forward_per_image) * mult,
            'model_flops_per_sec': int(forward_per_image) * mult * float(images_per_sec)}


def dtype_name(plan) -> str:
    """'float32', 'float16' or 'bfloat16': the run's compute dtype."""
    dtype = plan.compute_dtype
    return getattr(dtype, 'name', str(dtype))


def device_peak(plan, *, gpu_names=None, refresh: bool = False, cpu_peak_fn=None,
                achieved_flops_per_sec: float | None = None, timed_load: dict | None = None
                ) -> dict:
    """The peak FLOP/s of the run's devices for the precision its step computes in.

    GPU: the data-sheet table's. CPU: `cpu_device_peak` (the quiet calibrated peak; a
    recorded one below `achieved_flops_per_sec` is measured again, once).

    Args:
      plan: the run_plan.RunPlan.
      gpu_names: names of the visible GPUs (default: hardware.machine.gpu_names()).
      refresh: measure the CPU peak again (--refresh_peak).
      cpu_peak_fn: stands in for hardware.cpu_peak.cpu_peak (tests).
      achieved_flops_per_sec: the run's model FLOP/s (None: no check against the peak).
      timed_load: the run's host load over its timed part (metrics/host_load.py's dict, None:
        not measured): a CPU peak is not measured after a busy one (`cpu_device_peak`).

    Returns:
      {'peak_flops_per_sec' (None when unknown), 'peak_source' (text), 'measured_now' (bool)};
      a CPU's also 'step_precision', 'peak_measured_utc', 'peak_others_fraction',
      'peak_spread', 'peak_kernel'.
    """
    dtype = dtype_name(plan)
    if plan.params.device == 'gpu':
        if gpu_names is None:
            gpu_names = machine.gpu_names()
        if not gpu_names:
            return {'peak_flops_per_sec': None, 'peak_source': 'no GPU visible: no peak',
                    'measured_now': False}
        spec = gpu_specs.from_device_name(gpu_names[0])
        tflops = spec.peak_tflops(dtype) if spec else None
        if tflops is None:
            why = ('GPU %r is not in the peak table' % gpu_names[0] if spec is None
                   else '%s has no %s peak' % (spec.name, dtype))
            return {'peak_flops_per_sec': None, 'peak_source': why, 'measured_now': False}
        count = len(plan.devices)
        return {'peak_flops_per_sec': tflops * 1e12 * count, 'measured_now': False,
                'peak_source': '%d x %s %s data-sheet peak %.1f TFLOP/s' % (
                    count, spec.name, dtype, tflops)}
    return cpu_device_peak(plan, refresh=refresh, cpu_peak_fn=cpu_peak_fn,
                           achieved_flops_per_sec=achieved_flops_per_sec, timed_load=timed_load)


def step_precision(plan) -> tuple[str, tuple[str, ...]]:
    """What a CPU step computes in: (name, the dtypes whose peaks it needs).

    ('float32', ('float32',)) for float32 and for a reduced dtype the CPU has no units for
    (its kernels convert to float32 around each op: graph/precision.py emulated);
    ('mixed', (dtype, 'float32')) for a training step whose convolution gradients run in
    float32 (graph/precision.py float32_gradient_kinds: forward in the dtype, the two
    gradient products in float32); else (dtype, (dtype,)).
    """
    from ..graph import precision
    dtype = plan.compute_dtype
    name = dtype_name(plan)
    if name == 'float32' or precision.emulated(dtype, 'cpu'):
        return 'float32', ('float32',)
    if plan.training and 'conv' in precision.float32_gradient_kinds(
            dtype, 'cpu', plan.threads, getattr(plan, 'kernel_shapes', None)):
        return 'mixed', (name, 'float32')
    return name, (name,)


def mixed_peak(forward_peak: float, gradient_peak: float, training: bool = True) -> float:
    """The peak of a step whose forward (1 of flops_multiplier's 3 parts) runs at
    `forward_peak` and its two gradient products at `gradient_peak` (FLOP/s): the FLOPs over
    the least time, 3 / (1 / forward + 2 / gradient)."""
    if not training:
        return forward_peak
    return 3.0 / (1.0 / forward_peak + 2.0 / gradient_peak)


#: What the utilisation line says of a CPU peak not measured after a busy timed part.
BUSY_RUN_REASON = ("not measured: this run's timed part found the host busy, and a measurement "
                   "then is not kept; the next run on a quiet host measures it")


def busy_run_text(timed_load: dict | None) -> str | None:
    """Why a measurement made now would not be kept, by the calibration's quiet rule
    (hardware/calibration.py is_quiet) applied to the run's timed part: "other processes used
    1.03 of the run's 2 cores (52%, more than 25%)" (host_load's reasons); None when that part
    was quiet or not measured (a measurement then decides for itself)."""
    if not timed_load or calibration.is_quiet(timed_load):
        return None
    return '; '.join(timed_load.get('reasons') or []) or 'the host was busy'


def cpu_device_peak(plan, *, refresh: bool = False, cpu_peak_fn=None,
                    achieved_flops_per_sec: float | None = None,
                    timed_load: dict | None = None, out=None) -> dict:
    """`device_peak` of a CPU run: the quiet calibrated peak of the precision the step
    computes in (`step_precision`), measured now where the record has none (announced; kept
    when quiet). A recorded peak below the run's rate is measured again, once, and its
    samples below that rate are dropped (hardware/calibration.py `figure`'s floor). The source
    names the peak's date, the host's load while it was measured and its spread.

    After a timed part too busy for a measurement to be kept (`busy_run_text`: `timed_load`),
    nothing is measured (about 3 s saved: calibration.defer while the record is read): where
    a measurement was due, one line on `out` (default stdout) says why instead of the
    `calibration: measuring` line, 'calibration: CPU peak (float32) not measured now: ...',
    and the utilisation line says not measured (BUSY_RUN_REASON)."""
    busy = busy_run_text(timed_load)
    if busy is None or calibration.record_path() is None:
        return _cpu_device_peak(plan, refresh, cpu_peak_fn, achieved_flops_per_sec)
    previous = calibration.defer(BUSY_RUN_REASON)
    if previous is not None:  # a signal's reason (lifecycle/signals.py) stays, and says why
        calibration.defer(previous)
        return _cpu_device_peak(plan, refresh, cpu_peak_fn, achieved_flops_per_sec)
    try:
        got = _cpu_device_peak(plan, refresh, cpu_peak_fn, achieved_flops_per_sec)
    finally:
        current = calibration.defer(None)
        if current != BUSY_RUN_REASON:  # a signal arrived meanwhile: its reason stays
            calibration.defer(current)
    peak = got.get('peak_flops_per_sec')
    if refresh or peak is None or (achieved_flops_per_sec or 0) > peak:  # one was due
        print('calibration: %s (%s) not measured now: over this run\'s timed part %s, too busy '
              'for a measurement to be kept; the next run on a quiet host measures it'
              % (cpu_peak.KIND, got.get('step_precision') or dtype_name(plan), busy),
              file=out or sys.stdout, flush=True)
    return got


def _cpu_device_peak(plan, refresh: bool, cpu_peak_fn, achieved_flops_per_sec) -> dict:
    """`cpu_device_peak` without the busy timed part's rule."""
    threads = plan.threads[0] or 0
    measure = functools.partial(cpu_peak_fn or cpu_peak.cpu_peak, threads=threads,
                                cpu_model=machine.cpu_model(), tf_version=tf.__version__)
    what, dtypes = step_precision(plan)
    got = {}
    try:
        for dtype in dtypes:
            got[dtype] = measure(dtype, refresh=refresh)
            rate = cpu_peak.flops_per_sec(got[dtype])
            if (rate is not None and not got[dtype].measured_now and len(dtypes) == 1
                    and (achieved_flops_per_sec or 0) > rate):
                # The samples below the rate just reached are dropped: no peak is below it.
                got[dtype] = (measure(dtype, refresh=True, floor=achieved_flops_per_sec)
                              or got[dtype])
    except (tf.errors.OpError, ValueError, TypeError) as e:  # no such kernel for the dtype
        return {'peak_flops_per_sec': None, 'measured_now': False,
                'peak_source': 'the CPU peak could not be measured in %s: %s' % (
                    what, (str(e).splitlines() or [type(e).__name__])[0][:120])}
    rates = {d: cpu_peak.flops_per_sec(m) for d, m in got.items()}
    label = ('mixed (forward %s, gradients float32)' % dtypes[0] if what == 'mixed'
             else what)
    if None in rates.values():
        off = calibration.off_text()  # TF_CNN_CALIBRATION=off: --calibrate is refused there
        return {'peak_flops_per_sec': None, 'measured_now': False, 'step_precision': what,
                'peak_source': 'no %s peak: %s' % (label, off) if off else
                'no quiet calibration of the %s peak on this host: %s' % (
                    label, calibration.quiet_advice())}
    peak = (mixed_peak(rates[dtypes[0]], rates['float32'], plan.training) if what == 'mixed'
            else rates[dtypes[0]])
    oldest = min(got.values(), key=lambda m: m.measured_utc)
    source = 'CPU peak, %s, %s: %s' % (label, cpu_peak.threads_phrase(threads),
                                       oldest.source())
    return {'peak_flops_per_sec': peak, 'peak_source': source, 'step_precision': what,
            'measured_now': any(m.measured_now for m in got.values()),
            'peak_measured_utc': oldest.measured_utc,
            'peak_others_fraction': max((m.others_fraction or 0.0) for m in got.values()),
            'peak_spread': max(m.spread for m in got.values()),
            'peak_kernel': '/'.join(str(m.value.get('kernel', '?')) for m in got.values())}


CALIBRATE = 'tf_cnn_benchmarks --calibrate'


def input_figures(parts: dict | None, images_per_sec: float) -> dict:
    """Input wait and sync shares of a traced step's breakdown, and compute images/sec.

    Args:
      parts: step_breakdown.breakdown's dict (milliseconds), or None (nothing traced).
      images_per_sec: the run's total images/sec.

    Returns:
      {'input_share', 'sync_share' (fractions of the step's wall time), 'compute_images_per_sec',
       'input_bound' (input_share > INPUT_BOUND_SHARE), 'breakdown'}; the figures None when
       `parts` is None.
    """
    if not parts or parts.get('wall_ms', 0) <= 0:
        return {'input_share': None, 'sync_share': None, 'compute_images_per_sec': None,
                'input_bound': None, 'breakdown': parts}
    share = min(1.0, parts['input_ms'] / parts['wall_ms'])
    compute = images_per_sec / (1.0 - share) if share < 1.0 else float('inf')
    return {'input_share': share, 'sync_share': min(1.0, parts['sync_ms'] / parts['wall_ms']),
            'compute_images_per_sec': compute, 'input_bound': share > INPUT_BOUND_SHARE,
            'breakdown': parts}


def allocator_peaks(step_stats) -> dict[str, int]:
    """{allocator name: the largest allocator_bytes_in_use any op of the step recorded}.

    GPU allocators are named per GPU ('GPU_0_bfc'); the CPU's ('cpu', 'mklcpu') serve every
    CPU device.
    """
    peaks: dict[str, int] = {}
    for dev in step_stats.dev_stats:
        for node in dev.node_stats:
            for mem in node.memory:
                used = max(mem.allocator_bytes_in_use, mem.peak_bytes)
                if used > peaks.get(mem.allocator_name, -1):
                    peaks[mem.allocator_name] = int(used)
    return peaks


def peak_rss_bytes() -> int:
    """The process's peak resident set size in bytes (ru_maxrss: KiB on Linux, bytes on macOS)."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(rss if sys.platform == 'darwin' else rss * 1024)


def gpu_memory_peaks(num_gpus: int) -> dict[str, int]:
    """{'GPU:i': tf.config.experimental.get_memory_info('GPU:i')['peak']} where TensorFlow
    reports it (the process-wide allocator the sessions share); {} otherwise."""
    out = {}
    if not num_gpus:
        return out
    import tensorflow as tf
    for i in range(num_gpus):
        try:
            out['GPU:%d' % i] = int(tf.config.experimental.get_memory_info('GPU:%d' % i)['peak'])
        except (ValueError, RuntimeError, tf.errors.OpError):
            # No such device in the eager context, or an allocator without statistics: the
            # total block then shows no GPU peak for it (the traced step's allocators remain).
            continue
    return out


def memory_figures(step_stats, num_gpus: int = 0) -> dict:
    """{'allocators' {name: bytes} of the traced step (None without one), 'gpu_peak_bytes'
    {GPU:i: bytes}, 'process_peak_rss_bytes'}."""
    return {'allocators': allocator_peaks(step_stats) if step_stats is not None else None,
            'gpu_peak_bytes': gpu_memory_peaks(num_gpus),
            'process_peak_rss_bytes': peak_rss_bytes()}


def allocator_label(name: str) -> str:
    """'GPU_1_bfc' -> 'GPU:1'; every other allocator (cpu, mklcpu, the CUDA build's
    bfc_cpu_allocator_for_gpu, pinned host memory) -> 'CPU'."""
    head = name.split('_')
    if len(head) >= 2 and head[0] == 'GPU' and head[1].isdigit():
        return 'GPU:%s' % head[1]
    return 'CPU'


def format_memory(mem: dict) -> str:
    """'peak memory: GPU:0 10.21 GiB (allocator peak), CPU allocator 1.71 GiB (traced step),
    process RSS 2.37 GiB' (per label the largest allocator's bytes)."""
    parts = []
    for name, value in sorted((mem.get('gpu_peak_bytes') or {}).items()):
        parts.append('%s %.2f GiB (allocator peak)' % (name, value / GIB))
    by_label: dict[str, int] = {}
    for name, value in (mem.get('allocators') or {}).items():
        label = allocator_label(name)
        by_label[label] = max(by_label.get(label, 0), value)
    if by_label:
        parts.append(', '.join('%s allocator %.2f GiB' % (label, value / GIB)
                               for label, value in sorted(by_label.items())) + ' (traced step)')
    parts.append('process RSS %.2f GiB' % (mem['process_peak_rss_bytes'] / GIB))
    return 'peak memory: ' + ', '.join(parts)


#: The note a measured line ends with when the input pipeline runs on the step's own CPU
#: cores (`input_shares_cpu`): the trace sees the step wait for input, not the cores the
#: pipeline's threads take from it, which slow the step without a wait.
SHARED_CPU_NOTE = ('; waits only, not the CPU the input threads take from the step '
                   '(free input: run without --data_dir)')


def input_shares_cpu(params) -> bool:
    """Whether the run's input pipeline takes CPU time from its step: a CPU run (--device=cpu)
    on real data (--data_dir), unless tf.data repeats one cached batch
    (--datasets_repeat_cached_sample with --use_datasets or --skip_corrupt_records, which read
    once). Synthetic data is made once; a GPU's step does not run on the host's cores."""
    if getattr(params, 'device', None) != 'cpu' or not getattr(params, 'data_dir', None):
        return False
    return not (getattr(params, 'datasets_repeat_cached_sample', False) and (
        getattr(params, 'use_datasets', False) or getattr(params, 'skip_corrupt_records', False)))


def format_input(inp: dict, images_per_sec: float, show_sync: bool, how: str,
                 shares_cpu: bool = False) -> str:
    """'compute images/sec: 4.21 (input wait 0.7% of the step, sync 2.1%; <how>)', with
    ': input-bound' when the share exceeds a tenth, then SHARED_CPU_NOTE when `shares_cpu`
    (`input_shares_cpu`: the figure and the verdict then miss the pipeline's CPU time)."""
    if inp['input_share'] is None:
        return 'compute images/sec: not measured (%s)' % how
    text = 'compute images/sec: %.2f (input wait %.1f%% of the step' % (
        inp['compute_images_per_sec'], 100 * inp['input_share'])
    if show_sync:
        text += ', sync %.1f%%' % (100 * inp['sync_share'])
    text += '; %s)' % how
    if inp['input_bound']:
        text += ': input-bound'
    if shares_cpu:
        text += SHARED_CPU_NOTE
    return text


def _figure(value: float, decimals: int) -> str:
    """`value` to `decimals` decimals from 1 up, below 1 to 3 significant digits (0.243,
    0.0811): so a line's factors multiply to its product within their rounding (0.24 GFLOPs
    x 207.38 images/sec read 49.8 against a printed 50.5 GFLOP/s)."""
    if value >= 1 or value <= 0:
        return '%.*f' % (decimals, value)
    return '%.*f' % (2 - math.floor(math.log10(value)), value)


def _si(value: float) -> str:
    """A rate in FLOP/s: 5.05e10 -> '50.5 GFLOP/s', 4.2e5 -> '0.420 MFLOP/s'."""
    for unit, scale in (('PFLOP/s', 1e15), ('TFLOP/s', 1e12), ('GFLOP/s', 1e9)):
        if value >= scale:
            return '%.1f %s' % (value / scale, unit)
    return '%s MFLOP/s' % _figure(value / 1e6, 1)


def _count(flops: float) -> str:
    """7.72e9 -> '7.72 GFLOPs', 2.43e8 -> '0.243 GFLOPs', 8.5e6 -> '8.50 MFLOPs', 4.2e5 ->
    '0.420 MFLOPs': at least 3 significant digits."""
    return ('%s GFLOPs' % _figure(flops / 1e9, 2) if flops >= 1e8
            else '%s MFLOPs' % _figure(flops / 1e6, 2))


def format_flops(u: dict, images_per_sec: float) -> str:
    """'model FLOP/s: 97.1 GFLOP/s = 23.15 GFLOPs/image (3 x forward 7.72 GFLOPs) x 4.19
    images/sec'."""
    return 'model FLOP/s: %s = %s/image (%d x forward %s) x %.2f images/sec' % (
        _si(u['model_flops_per_sec']), _count(u['flops_per_image']), u['flops_multiplier'],
        _count(u['forward_flops_per_image']), images_per_sec)


def format_utilisation(u: dict) -> str:
    """'utilisation: 42.4% of 229.0 GFLOP/s (<peak source>)' or '... not known (<why>)';
    never above 100% (a rate above the peak shows 100% and says so)."""
    if u.get('fraction_of_peak') is None:
        return 'utilisation: not known (%s)' % u.get('peak_source', 'no peak')
    above = ("; this run's rate is above it: shown as 100%%, recalibrate (`%s`)" % CALIBRATE
             if u.get('above_peak') else '')
    return 'utilisation: %.1f%% of %s (%s%s)' % (100 * u['fraction_of_peak'],
                                                 _si(u['peak_flops_per_sec']),
                                                 u['peak_source'], above)


def utilisation_figures(plan, images_per_sec: float, training: bool, lines: list[str], *,
                        gpu_names=None, cpu_peak_fn=None, timed_load: dict | None = None
                        ) -> dict:
    """The result's 'utilisation' dict; appends the `model FLOP/s` and `utilisation` lines.

    Args:
      plan: the run_plan.RunPlan.
      images_per_sec: the run's total images/sec.
      training: training (3 x forward FLOPs) or inference (1 x).
      lines: the total block's lines so far.
      gpu_names, cpu_peak_fn, timed_load: see device_peak.
    """
    forward, why = forward_flops(plan)
    util = {'dtype': dtype_name(plan)}
    if forward is not None:
        util.update(model_flops(forward, training, images_per_sec))
        lines.append(format_flops(util, images_per_sec))
        util.update(device_peak(plan, gpu_names=gpu_names,
                                refresh=bool(getattr(plan.params, 'refresh_peak', False)),
                                cpu_peak_fn=cpu_peak_fn,
                                achieved_flops_per_sec=util['model_flops_per_sec'],
                                timed_load=timed_load))
        peak = util.get('peak_flops_per_sec')
        fraction = util['model_flops_per_sec'] / peak if peak else None
        util['fraction_of_peak'] = None if fraction is None else min(1.0, fraction)
        util['above_peak'] = bool(fraction is not None and fraction > 1.0)
    else:
        util.update({'peak_source': why, 'fraction_of_peak': None})
        lines.append('model FLOP/s: %s' % why)
    lines.append(format_utilisation(util))
    return util


INPUT_METHOD = ('FULL_TRACE of the last warm-up step; input share = input / wall '
                '(step_breakdown.py); compute images/sec = images/sec / (1 - share)')
#: Why a training or forward-only run has no input figures (`compute images/sec: not
#: measured (...)` and the results' input.method).
NO_WARMUP_TRACE = 'no warm-up step to trace: needs --num_warmup_batches >= 1'


def eval_figures(plan, evaluation: dict | None, *, gpu_names=None, cpu_peak_fn=None,
                 log=cnn_util.log_fn) -> dict:
    """--eval: prints (to `log`) the compute images/sec, model FLOP/s, utilisation, peak
    memory and latency lines of an evaluation (after its `total images/sec`: the latency of
    its batches after the first, which sets up: `latency_ms['set_up_left_out']`; None, and a
    line that says so, when that was the only one); returns the
    result's keys ('utilisation', 'input' (not measured: an evaluation has no warm-up step to
    trace), 'memory', 'latency_ms'). {} without an evaluation."""
    if not evaluation:
        return {}
    rate = evaluation['images_per_sec']
    lines = ['compute images/sec: not measured (an evaluation has no warm-up step to trace)']
    util = utilisation_figures(plan, rate, False, lines, gpu_names=gpu_names,
                               cpu_peak_fn=cpu_peak_fn, timed_load=evaluation.get('host_load'))
    mem = memory_figures(None, len(plan.devices) if plan.params.device == 'gpu' else 0)
    lines.append(format_memory(mem))
    # The first batch also sets up the session's kernels (eval_runner.rest_line): left out of
    # the percentiles, as a training run's warm-up is; alone, no figure (its time was the
    # set-up's, printed as the latency before).
    times = evaluation.get('batch_times') or []
    lat = latency_lib.latency_ms(times, plan.eval.global_batch_size, first_sets_up=True)
    if lat:
        lines.append(latency_lib.format_latency(lat))
    elif times:  # the flag that set the count: an --eval's --num_batches where no eval flag did
        p = plan.params
        flag = ('num_batches' if p.eval and not (p.num_eval_batches or p.num_eval_epochs)
                else 'num_eval_batches')
        lines.append(latency_lib.set_up_only_line(plan.eval.global_batch_size,
                                                  '--%s=2 or more' % flag))
    for line in lines:
        log(line)
    return {'utilisation': util, 'memory': mem, 'latency_ms': lat,
            'input': {'input_share': None, 'sync_share': None, 'compute_images_per_sec': None,
                      'input_bound': None, 'breakdown': None,
                      'method': 'not measured in --eval (no warm-up step to trace)'}}
