"""The figures after `total images/sec`: their arithmetic on known inputs, then one real run."""

import json
import os
import sys
import types

import pytest
import tensorflow as tf
from tensorflow.core.framework import step_stats_pb2

from tf_cnn_benchmarks.hardware import cpu_peak, machine
from tf_cnn_benchmarks.lifecycle import figure_hooks, training_loop
from tf_cnn_benchmarks.metrics import host_load, latency, step_breakdown, utilisation

import helpers

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# --- FLOPs x rate.

def test_model_flops_are_forward_times_three_for_training_and_one_for_inference():
    train = utilisation.model_flops(4_000_000_000, True, 10.0)
    assert train == {'forward_flops_per_image': 4_000_000_000, 'flops_multiplier': 3,
                     'flops_per_image': 12_000_000_000, 'model_flops_per_sec': 1.2e11}
    infer = utilisation.model_flops(4_000_000_000, False, 10.0)
    assert infer['flops_multiplier'] == 1 and infer['model_flops_per_sec'] == 4e10


_plan = helpers.stub_plan


def test_forward_flops_of_the_trivial_model_are_its_one_affine_layer():
    # trivial: [16, 16, 3] flattened -> affine 1 -> affine 4096 -> 1001 classes:
    # 2 x (768 x 1 + 1 x 4096 + 4096 x 1001) = 8,209,920.
    flops, why = utilisation.forward_flops(_plan())
    assert why == '' and flops == 2 * (16 * 16 * 3 + 4096 + 4096 * 1001) == 8_209_920


def test_gpu_peak_is_the_tables_for_the_dtype_times_the_devices():
    peak = utilisation.device_peak(_plan('gpu', ('/gpu:0', '/gpu:1'), dtype=tf.float16),
                                   gpu_names=['Tesla V100-SXM2-16GB'])
    assert peak['peak_flops_per_sec'] == pytest.approx(2 * 125e12)
    assert peak['peak_source'] == '2 x V100 16GB float16 data-sheet peak 125.0 TFLOP/s'
    none = utilisation.device_peak(_plan('gpu', ('/gpu:0',), dtype=tf.bfloat16),
                                   gpu_names=['Tesla V100-SXM2-16GB'])
    assert none['peak_flops_per_sec'] is None and 'no bfloat16 peak' in none['peak_source']
    unknown = utilisation.device_peak(_plan('gpu', ('/gpu:0',)), gpu_names=['Mystery 9000'])
    assert unknown['peak_source'] == "GPU 'Mystery 9000' is not in the peak table"
    assert utilisation.device_peak(_plan('gpu', ('/gpu:0',)), gpu_names=[])[
        'peak_source'] == 'no GPU visible: no peak'


def _peak(rate, **kw):
    return helpers.measurement({'flops_per_sec': rate, 'kernel': 'matmul'}, **kw)


@pytest.fixture
def cpu_with(monkeypatch):
    """cpu_with(flags, factors): this CPU has `flags` and its kernel factors are `factors`
    (None: no quiet probe); nothing of this host is read."""
    from tf_cnn_benchmarks.graph import precision
    from tf_cnn_benchmarks.hardware import kernel_speed

    def set_cpu(flags, factors=None):
        monkeypatch.setattr(precision, 'cpu_flags', lambda path='/proc/cpuinfo': set(flags))
        monkeypatch.setattr(kernel_speed, 'factors', lambda dtype, threads=(0, 0), **kw: factors)
    return set_cpu


FAST = {'conv': 0.6, 'conv_gradients': 0.9, 'matmul': 0.9, 'matmul_gradients': 1.1}
SLOW_GRADIENTS = dict(FAST, conv_gradients=3.0)
PEAKS = {'float32': 1e11, 'bfloat16': 4e11}


@pytest.mark.parametrize('flags, factors, precision_name, peak', [
    # amx_bf16 / avx512_bf16 with fast bfloat16 kernels: the step computes in bfloat16.
    ({'amx_bf16', 'avx512_bf16', 'avx512f', 'avx2'}, FAST, 'bfloat16', 4e11),
    ({'avx512_bf16', 'avx512f', 'avx2'}, FAST, 'bfloat16', 4e11),
    # The units, but convolution gradients measured slow: forward bfloat16, gradients
    # float32: 3 / (1 / 4e11 + 2 / 1e11) = 1.333e11.
    ({'avx512_bf16', 'avx512f', 'avx2'}, SLOW_GRADIENTS, 'mixed', 3 / (1 / 4e11 + 2 / 1e11)),
    # Intel AVX-512 without bfloat16 units, AMD AVX2 only: emulated, computed in float32.
    ({'avx512f', 'avx2'}, FAST, 'float32', 1e11),
    ({'avx2'}, None, 'float32', 1e11),
], ids=['amx_bf16', 'avx512_bf16', 'avx512_bf16-slow-gradients', 'avx512f', 'avx2'])
def test_the_peak_is_the_precision_the_step_computes_in(cpu_with, flags, factors,
                                                        precision_name, peak):
    cpu_with(flags, factors)
    calls = []

    def fake(dtype, threads, **kwargs):
        calls.append(dtype)
        return _peak(PEAKS[dtype])
    got = utilisation.device_peak(_plan(workers=2, dtype=tf.bfloat16), cpu_peak_fn=fake)
    assert got['step_precision'] == precision_name
    assert got['peak_flops_per_sec'] == pytest.approx(peak)
    assert calls == {'mixed': ['bfloat16', 'float32'], 'float32': ['float32']}.get(
        precision_name, ['bfloat16'])
    label = 'mixed (forward bfloat16, gradients float32)' if precision_name == 'mixed' \
        else precision_name
    # One task's peak in a cluster (each worker reports its own images/sec); date and load.
    assert got['peak_source'] == ('CPU peak, %s, 2 threads: calibrated 2026-01-01 00:00 UTC, '
                                  'others 0.10 of 2 cores, spread 2%%' % label)


def test_no_quiet_peak_is_no_utilisation_and_says_how_to_calibrate(tmp_path, monkeypatch):
    from tf_cnn_benchmarks.hardware import calibration
    monkeypatch.setenv('TF_CNN_CALIBRATION', str(tmp_path / 'calibration.json'))

    def line():
        util = utilisation.utilisation_figures(_plan(training=False), 100.0, False, [],
                                               cpu_peak_fn=lambda *a, **k: None)
        assert util['fraction_of_peak'] is None
        return utilisation.format_utilisation(util)
    assert line() == (
        'utilisation: not known (no quiet calibration of the float32 peak on this host: run '
        '`tf_cnn_benchmarks --calibrate` on a quiet host)')
    # --calibrate on a busy host advised running --calibrate: now to run it again when quiet.
    with calibration.calibrating():
        assert line().endswith('on this host: rerun this --calibrate when the host is quiet)')
    # TF_CNN_CALIBRATION=off advised --calibrate, which is refused with off: it says off.
    monkeypatch.setenv('TF_CNN_CALIBRATION', 'OFF')
    assert line() == (
        'utilisation: not known (no float32 peak: TF_CNN_CALIBRATION=OFF turns the calibration '
        "record off: unset it, or set it to a file's path, to measure and keep one)")


def test_a_recorded_peak_below_the_runs_rate_is_measured_again_once():
    calls = []

    def fake(dtype, threads, **kwargs):
        calls.append(kwargs['refresh'])
        return _peak(300e9, measured_now=True) if kwargs['refresh'] else _peak(241.7e9)
    util = utilisation.utilisation_figures(_plan(training=False), 270e9 / 8_209_920, False,
                                           [], cpu_peak_fn=fake)
    assert calls == [False, True]
    assert util['peak_flops_per_sec'] == 300e9 and util['measured_now']
    assert util['fraction_of_peak'] == pytest.approx(0.9)
    assert util['peak_source'].startswith('CPU peak, float32, 2 threads: measured now ')


def test_a_peak_measured_again_drops_its_samples_below_the_runs_rate(tmp_path, monkeypatch):
    # A new user's record held one 1.0 GFLOP/s sample; the run (93 GFLOP/s) measured the peak
    # again at 219.3 and stored it, but the figure stayed the lower median of the two, 1.0:
    # 'utilisation: 100.0% of 1.0 GFLOP/s ... this run's rate is above it'.
    import functools
    monkeypatch.setattr(host_load, 'allowed_cpus', lambda: frozenset({0, 1}))
    rates = iter([1.0e9, 219.3e9])
    peak_fn = functools.partial(
        cpu_peak.cpu_peak, path=str(tmp_path / 'calibration.json'), meter=helpers.FakeMeter(0.0),
        measure_fn=lambda d, t: ({'flops_per_sec': next(rates), 'kernel': 'conv3x3'}, 0.0))
    assert cpu_peak.flops_per_sec(peak_fn('float32', threads=2, cpu_model=machine.cpu_model(),
                                          tf_version=tf.__version__)) == 1.0e9  # recorded
    util = utilisation.utilisation_figures(_plan(training=False), 93e9 / 8_209_920, False, [],
                                           cpu_peak_fn=peak_fn)
    assert util['peak_flops_per_sec'] == 219.3e9 and not util['above_peak']
    assert util['fraction_of_peak'] == pytest.approx(93 / 219.3)
    again = peak_fn('float32', threads=2, cpu_model=machine.cpu_model(),
                    tf_version=tf.__version__, measure_missing=False)
    assert cpu_peak.flops_per_sec(again) == 219.3e9 and again.samples == 1  # 1.0 dropped


def test_a_line_never_shows_more_than_100_percent():
    lines = []
    util = utilisation.utilisation_figures(
        _plan(training=False), 1.2e11 / 8_209_920, False, lines,
        cpu_peak_fn=lambda *a, **k: _peak(1e11, measured_now=True))
    assert util['fraction_of_peak'] == 1.0 and util['above_peak']
    assert lines[-1].startswith('utilisation: 100.0% of 100.0 GFLOP/s (CPU peak, float32')
    assert lines[-1].endswith("; this run's rate is above it: shown as 100%, recalibrate "
                              "(`tf_cnn_benchmarks --calibrate`))")


def test_a_peak_with_more_threads_than_allowed_cpus_is_keyed_and_named_by_them(monkeypatch):
    """Under `taskset -c 0` a 2-thread run's peak is one CPU's: it read the host's 2-CPU peak
    (307.8 GFLOP/s where one CPU measured 181.8), halving its utilisation."""
    monkeypatch.setattr(host_load, 'allowed_cpus', lambda: frozenset({0}))
    key = cpu_peak.cache_key('Test CPU', '2.21.0', 'float32', 2)
    assert key == 'Test CPU|tf 2.21.0|cpu peak|float32|2 threads on 1 CPU'
    assert cpu_peak.threads_phrase(2) == '2 threads on 1 CPU'
    assert cpu_peak.cache_key('Test CPU', '2.21.0', 'float32', 1).endswith('|1 threads')
    assert cpu_peak.threads_phrase(0) == 'default threads'  # TensorFlow sizes it by the mask
    monkeypatch.setattr(host_load, 'allowed_cpus', lambda: frozenset({0, 1, 2}))
    assert cpu_peak.threads_phrase(3) == '3 threads'
    assert cpu_peak.threads_phrase(4) == '4 threads on 3 CPUs'


# --- Latency percentiles.

def test_latency_percentiles_interpolate_between_ranks():
    lat = latency.latency_ms([i / 1000 for i in range(1, 101)], batch_size=1)  # 1..100 ms
    assert lat['p50'] == pytest.approx(50.5) and lat['p90'] == pytest.approx(90.1)
    assert lat['p99'] == pytest.approx(99.01) and lat['count'] == 100
    assert latency.format_latency(lat) == ('latency per batch of 1 (ms): p50 50.50, p90 90.10, '
                                           'p99 99.01 over 100 batches')
    assert latency.latency_ms([], 4) is None
    # One sample: its time, no percentiles (before: 'p50 10.00, p90 10.00, p99 10.00 over 1
    # batch', three figures of one value); the JSON's percentiles null, its mean the time.
    one = latency.latency_ms([0.01], 2)
    assert latency.format_latency(one) == (
        'latency per batch of 2 (ms): 10.00, 1 batch: too few for percentiles')
    assert (one['p50'], one['p90'], one['p99'], one['mean'], one['count']) == (
        None, None, None, 10.0, 1)


def test_without_warm_up_the_compute_line_says_what_it_needs(capsys):
    helpers.tiny_run(num_warmup_batches=0, num_batches=2)
    assert [x for x in capsys.readouterr().out.splitlines()
            if x.startswith('compute images/sec: ')] == [
        'compute images/sec: not measured (no warm-up step to trace: needs '
        '--num_warmup_batches >= 1)']


# --- Input share from fixed step timings.

def _node(stats, name, op, start, duration, allocator=None, in_use=0):
    node = stats.node_stats.add()
    node.node_name = name
    node.timeline_label = '%s = %s()' % (name, op)
    node.all_start_micros = start
    node.all_end_rel_micros = duration
    if allocator:
        mem = node.memory.add()
        mem.allocator_name = allocator
        mem.allocator_bytes_in_use = in_use
    return node


def _step_stats():
    """One CPU device: input ops 0-30 us alone, compute 30-90 us, input overlapping 40-60 us,
    then nothing until 100 us (sync)."""
    step = step_stats_pb2.StepStats()
    dev = step.dev_stats.add()
    dev.device = '/job:localhost/replica:0/task:0/device:CPU:0'
    _node(dev, 'input_pipeline/decode', 'DecodeJpeg', 0, 30, 'cpu', 1000)
    _node(dev, 'tower_0/conv', 'Conv2D', 30, 60, 'cpu', 5000)
    _node(dev, 'input_pipeline/resize', 'ResizeBilinear', 40, 20, 'cpu', 3000)
    _node(dev, 'train_op', 'NoOp', 99, 1)
    return step


def test_input_share_from_a_fixed_trace():
    parts = step_breakdown.breakdown(_step_stats(), 0.0002, lambda d: True)  # wall 200 us
    # compute 60 + 1 us, input alone 30 us, sync 100 - 91 = 9 us, overhead 100 us.
    assert parts['input_ms'] == pytest.approx(0.030) and parts['wall_ms'] == pytest.approx(0.2)
    figures = utilisation.input_figures(parts, 100.0)
    assert figures['input_share'] == pytest.approx(0.15)
    assert figures['sync_share'] == pytest.approx(0.045)
    assert figures['compute_images_per_sec'] == pytest.approx(100.0 / 0.85)
    assert figures['input_bound'] is True
    line = utilisation.format_input(figures, 100.0, True, 'traced warm-up step')
    assert line == ('compute images/sec: 117.65 (input wait 15.0% of the step, sync 4.5%; '
                    'traced warm-up step): input-bound')


def test_a_tenth_or_less_is_not_input_bound_and_no_trace_is_not_measured():
    parts = {'wall_ms': 100.0, 'input_ms': 10.0, 'sync_ms': 0.0}
    figures = utilisation.input_figures(parts, 90.0)
    assert figures['input_bound'] is False and figures['compute_images_per_sec'] == 100.0
    assert utilisation.format_input(figures, 90.0, False, 'x') == (
        'compute images/sec: 100.00 (input wait 10.0% of the step; x)')
    none = utilisation.input_figures(None, 90.0)
    assert none['input_share'] is None
    assert utilisation.format_input(none, 90.0, False, 'no warm-up step') == (
        'compute images/sec: not measured (no warm-up step)')


def test_a_cpu_run_on_real_data_says_its_figure_misses_the_pipelines_cpu_time():
    # finding 1 of nu_pipe57: a RecordInput run on 2 cores waited 0.3% of its step while its
    # pipeline's threads halved the step's rate; the line must not read as "free input".
    parts = {'wall_ms': 100.0, 'input_ms': 0.3, 'sync_ms': 0.3}
    figures = utilisation.input_figures(parts, 1001.48)
    line = utilisation.format_input(figures, 1001.48, True, 'traced warm-up step', True)
    plain = ('compute images/sec: 1004.49 (input wait 0.3% of the step, sync 0.3%; traced '
             'warm-up step)')
    assert line == plain + utilisation.SHARED_CPU_NOTE
    assert 'run without --data_dir' in line and len(line) - len(plain) <= 100
    assert utilisation.format_input(figures, 1001.48, True, 'x', False).endswith('; x)')
    bound = utilisation.input_figures({'wall_ms': 100.0, 'input_ms': 40.0, 'sync_ms': 0}, 60.0)
    assert utilisation.format_input(bound, 60.0, False, 'x', True).endswith(
        ': input-bound' + utilisation.SHARED_CPU_NOTE)
    # Not measured: no figure, no note.
    none = utilisation.input_figures(None, 9.0)
    assert utilisation.format_input(none, 9.0, False, 'y', True) == (
        'compute images/sec: not measured (y)')


@pytest.mark.parametrize('flags, shares', [
    (dict(device='cpu', data_dir='/data'), True),
    (dict(device='cpu', data_dir='/data', use_datasets=True), True),
    (dict(device='cpu', data_dir=None), False),  # synthetic: made once
    (dict(device='gpu', data_dir='/data'), False),  # the step runs on the GPU
    (dict(device='cpu', data_dir='/data', use_datasets=True,
          datasets_repeat_cached_sample=True), False),  # one batch, read once
    (dict(device='cpu', data_dir='/data', datasets_repeat_cached_sample=True), True),
])
def test_which_runs_share_the_steps_cpu_with_their_input(flags, shares):
    assert utilisation.input_shares_cpu(types.SimpleNamespace(**flags)) is shares


def test_the_total_blocks_line_of_a_cpu_run_on_real_data_ends_with_the_note():
    loop = types.SimpleNamespace(images_per_sec=100.0, step_times=[0.04] * 3, num_steps=3)
    lines = {}
    for device, data_dir in (('cpu', '/data'), ('cpu', None), ('gpu', '/data')):
        plan = _plan(device=device, devices=('/%s:0' % device,), training=False)
        plan.params.data_dir = data_dir
        hook = figure_hooks.FiguresHook(plan, gpu_names=['Tesla V100-SXM2-16GB'],
                                        cpu_peak_fn=lambda *a, **k: _peak(1e15))
        hook.traced(2, 0.02, tf.compat.v1.RunMetadata(step_stats=_step_stats()))
        lines[device, data_dir] = hook.total_lines(loop)[0]
    assert lines['cpu', '/data'].endswith(utilisation.SHARED_CPU_NOTE)
    assert utilisation.SHARED_CPU_NOTE not in lines['cpu', None]
    assert utilisation.SHARED_CPU_NOTE not in lines['gpu', '/data']
    assert lines['cpu', '/data'].startswith(lines['gpu', '/data'])


# --- Peak memory.

def test_allocator_peaks_take_the_largest_bytes_in_use_per_allocator():
    step = _step_stats()
    gpu = step.dev_stats.add()
    gpu.device = '/job:localhost/replica:0/task:0/device:GPU:1'
    _node(gpu, 'tower_1/conv', 'Conv2D', 0, 10, 'GPU_1_bfc', 7 << 30)
    peaks = utilisation.allocator_peaks(step)
    assert peaks == {'cpu': 5000, 'GPU_1_bfc': 7 << 30}
    assert utilisation.allocator_label('GPU_1_bfc') == 'GPU:1'
    assert utilisation.allocator_label('bfc_cpu_allocator_for_gpu') == 'CPU'
    text = utilisation.format_memory({'allocators': {'GPU_1_bfc': 7 << 30, 'cpu': 1 << 30},
                                      'gpu_peak_bytes': {}, 'process_peak_rss_bytes': 3 << 29})
    assert text == ('peak memory: CPU allocator 1.00 GiB, GPU:1 allocator 7.00 GiB (traced '
                    'step), process RSS 1.50 GiB')


def test_peak_rss_is_in_bytes():
    import resource
    assert utilisation.peak_rss_bytes() == (
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 if sys.platform == 'darwin'
                                                              else 1024))
    assert utilisation.peak_rss_bytes() > 50 << 20  # TensorFlow is loaded


# --- The total block, from fake steps.

def test_total_block_lines_follow_the_total_and_the_last_warmup_step_is_the_traced_one():
    lines, calls = [], []
    hook = figure_hooks.FiguresHook(
        _plan(training=False), cpu_peak_fn=lambda *a, **k: _peak(
            1e15, measured_now=True))  # above the fake steps' rate

    class Step:
        def __call__(self):
            calls.append(False)
            return (None,)

        def traced(self):
            calls.append(True)
            return (None,), tf.compat.v1.RunMetadata(step_stats=_step_stats())
    spec = training_loop.LoopSpec(num_warmup=2, num_steps=3, images_per_step=4,
                                  display_every=10, show_loss=False)
    loop = training_loop.run_loop(spec, Step(), [hook], log=lines.append)
    assert calls == [False, True, False, False, False]
    total = lines.index('total images/sec: %.2f' % loop.images_per_sec)
    block = lines[total + 1:-1]
    assert lines[-1] == training_loop.DASHES
    assert [line.split(':')[0] for line in block] == [
        'compute images/sec', 'model FLOP/s', 'utilisation', 'peak memory',
        'latency per batch of 4 (ms)']
    assert block[2].endswith('(CPU peak, float32, 2 threads: measured now 2026-01-01 00:00 '
                             'UTC, others 0.10 of 2 cores, spread 2%)')
    keys = {}
    hook.end(keys)
    # 'baseline' is there without --baseline too, null (the docs list it among the keys).
    assert set(keys) == {'utilisation', 'input', 'memory', 'latency_ms', 'baseline'}
    assert keys['baseline'] is None
    assert keys['utilisation']['fraction_of_peak'] == pytest.approx(
        keys['utilisation']['model_flops_per_sec'] / 1e15)
    assert keys['memory']['allocators'] == {'cpu': 5000}
    assert keys['latency_ms']['count'] == 3


def test_the_traced_warmup_steps_breakdown_waits_for_the_total_block(monkeypatch):
    # Between the warm-up and the timed steps the figures hook only keeps the trace.
    made = []
    real = step_breakdown.breakdown
    monkeypatch.setattr(step_breakdown, 'breakdown',
                        lambda *a, **k: made.append(1) or real(*a, **k))
    hook = figure_hooks.FiguresHook(_plan(training=False), cpu_peak_fn=lambda *a, **k: _peak(
        1e15, measured_now=True))
    assert hook.wants_trace(2) and not hook.wants_trace(1)
    hook.traced(2, 0.02, tf.compat.v1.RunMetadata(step_stats=_step_stats()))
    assert made == []
    loop = types.SimpleNamespace(images_per_sec=100.0, step_times=[0.04] * 3, num_steps=3)
    lines = hook.total_lines(loop)
    assert made == [1] and lines[0].endswith('traced warm-up step)')


# --- One real run that prints every line.

@pytest.mark.cli
def test_a_real_forward_only_run_prints_every_figure(tmp_path, monkeypatch):
    # The peak is injected: a calibration record with this CPU's key holding 1 PFLOP/s.
    from tf_cnn_benchmarks.hardware import calibration, machine
    record = str(tmp_path / 'calibration.json')
    calibration.store(record, [helpers.measurement(
        {'flops_per_sec': 1e15, 'kernel': 'matmul'}, key=cpu_peak.cache_key(
            machine.cpu_model(), tf.__version__, 'float32', 1))])
    monkeypatch.setenv('TF_CNN_CALIBRATION', record)
    # The command's main in process (helpers.run_command): the lines it prints, its result file.
    proc = helpers.run_command(
        '--model=trivial', '--batch_size=2', '--image_size=32', '--num_batches=5',
        '--num_warmup_batches=1', '--forward_only', '--num_intra_threads=1',
        '--benchmark_log_dir=%s' % tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    total = [i for i, line in enumerate(out) if line.startswith('total images/sec: ')][0]
    block = out[total + 1:total + 6]
    assert block[0].startswith('compute images/sec: ') and 'traced warm-up step' in block[0]
    assert block[1].startswith('model FLOP/s: ') and '(1 x forward ' in block[1]
    assert block[2].startswith('utilisation: ') and block[2].endswith(
        'of 1.0 PFLOP/s (CPU peak, float32, 1 thread: calibrated 2026-01-01 00:00 UTC, others '
        '0.10 of 2 cores, spread 2%)')
    assert block[3].startswith('peak memory: CPU allocator ') and 'process RSS' in block[3]
    assert block[4].startswith('latency per batch of 2 (ms): p50 ')
    # metrics/host_load: a figure, or why not (these few steps may time less than 0.12 s).
    assert out[total + 6].startswith(('Host load: other processes used ',
                                      'Host load: not measured (the timed part lasted '))
    assert out[total + 7] == '-' * 64
    result = json.load(open([os.path.join(tmp_path, n) for n in os.listdir(tmp_path)
                             if n.endswith('.json') and n != 'calibration.json'][0]))
    assert 0 < result['utilisation']['fraction_of_peak'] < 1
    assert result['input']['input_share'] is not None
    assert result['memory']['process_peak_rss_bytes'] > 0
    assert result['latency_ms']['count'] == 5
    assert 'baseline' in result and result['baseline'] is None  # no --baseline
    assert result['host_load']['wall_secs'] > 0 and result['host_load']['cores'] >= 1


def test_eval_reports_flops_utilisation_memory_and_latency_of_the_last_evaluation(capsys):
    plan = _plan(training=False)
    plan.eval = types.SimpleNamespace(global_batch_size=4)
    keys = utilisation.eval_figures(
        plan, {'images_per_sec': 100.0, 'batch_times': [0.01, 0.02, 0.03]},
        cpu_peak_fn=lambda *a, **k: _peak(8.20992e9))
    out = capsys.readouterr().out.splitlines()
    assert out[0] == 'compute images/sec: not measured (an evaluation has no warm-up step to trace)'
    # 8,209,920 FLOPs per image (see above) x 100 images/sec = 821 MFLOP/s = 10% of the peak.
    assert out[1] == ('model FLOP/s: 821.0 MFLOP/s = 8.21 MFLOPs/image (1 x forward 8.21 MFLOPs) '
                      'x 100.00 images/sec')
    assert out[2].startswith('utilisation: 10.0% of 8.2 GFLOP/s (CPU peak, float32, 2 threads')
    assert out[3].startswith('peak memory: process RSS ')
    # The first batch sets up the session's kernels: left out (a user's trial: p99 123 ms was
    # the set-up's, beside a p50 of 6 ms), and the line says so.
    assert out[4] == ('latency per batch of 4 (ms): p50 25.00, p90 29.00, p99 29.90 over 2 '
                      'batches after the first (set-up) batch')
    assert keys['latency_ms']['count'] == 2 and keys['latency_ms']['set_up_left_out']
    assert keys['utilisation']['fraction_of_peak'] == pytest.approx(0.1)
    assert utilisation.eval_figures(plan, None) == {}
    # A 2-batch --eval: one batch after the set-up one, too few for percentiles.
    keys = utilisation.eval_figures(plan, {'images_per_sec': 100.0, 'batch_times': [0.05, 0.002]},
                                    cpu_peak_fn=lambda *a, **k: _peak(8.20992e9))
    assert capsys.readouterr().out.splitlines()[4] == (
        'latency per batch of 4 (ms): 2.00, 1 batch after the first (set-up) batch: too few for '
        'percentiles')
    assert keys['latency_ms']['p50'] is None and keys['latency_ms']['count'] == 1


def test_a_mixed_runs_two_busy_peaks_name_their_dtype(tmp_path, capsys, monkeypatch):
    # Before: a float16 run (a float16 and a float32 peak) printed `CPU peak not measured: its
    # try at ... was on a busy host ...` twice, word for word.
    from tf_cnn_benchmarks.hardware import calibration
    kw = dict(cpu_model='c', tf_version='v', path=str(tmp_path / 'calibration.json'),
              measure_fn=lambda d, t: ({'flops_per_sec': 2e11, 'kernel': 'matmul'}, 0.01),
              meter=helpers.FakeMeter(1.8))
    for _ in range(2):  # a busy try, then within ten minutes of it
        assert [cpu_peak.cpu_peak(d, 2, **kw) for d in ('float16', 'float32')] == [None, None]
    err = capsys.readouterr().err.splitlines()
    assert [x[:48] for x in err] == [
        'warning: CPU peak (float16) measured now: not ke',
        'warning: CPU peak (float32) measured now: not ke',
        'warning: CPU peak (float16) not measured: its tr',
        'warning: CPU peak (float32) not measured: its tr'], err
    assert calibration.BUSY_RETRY_SECS == 600


BUSY_TIMED_PART = {'others_cores': 1.03, 'others_fraction': 0.515, 'steal_fraction': 0.0,
                   'cores': 2, 'reasons': ["other processes used 1.03 of the run's 2 cores "
                                           '(52%, more than 25%)']}


def test_after_a_busy_timed_part_the_cpu_peak_is_not_measured(tmp_path, capsys, monkeypatch):
    """A trial: a run whose timed part found others using 1.03 of 2 cores measured the CPU
    peak for 3 s after its total block, then threw it away (busy). Now the run's own load
    decides by the calibration's quiet rule: one line instead, nothing measured, and the next
    quiet run measures it."""
    import functools

    from tf_cnn_benchmarks.hardware import calibration
    monkeypatch.setattr(host_load, 'allowed_cpus', lambda: frozenset({0, 1}))
    path = str(tmp_path / 'calibration.json')
    monkeypatch.setenv('TF_CNN_CALIBRATION', path)
    measured = []
    peak_fn = functools.partial(
        cpu_peak.cpu_peak, path=path, meter=helpers.FakeMeter(0.0),  # the try itself: quiet
        measure_fn=lambda d, t: measured.append(d) or ({'flops_per_sec': 2e11,
                                                        'kernel': 'conv3x3'}, 0.01))
    loop = types.SimpleNamespace(images_per_sec=100.0, step_times=[0.04] * 3, num_steps=3)
    busy = dict(BUSY_TIMED_PART)
    hook = figure_hooks.FiguresHook(_plan(training=False), cpu_peak_fn=peak_fn,
                                    host_load=lambda loop: busy)
    lines = hook.total_lines(loop)
    out = capsys.readouterr().out
    assert measured == [] and 'calibration: measuring' not in out
    assert out == ("calibration: CPU peak (float32) not measured now: over this run's timed "
                   "part other processes used 1.03 of the run's 2 cores (52%, more than 25%), "
                   'too busy for a measurement to be kept; the next run on a quiet host '
                   'measures it\n')
    assert [x for x in lines if x.startswith('utilisation:')] == [
        'utilisation: not known (no quiet calibration of the float32 peak on this host: not '
        "measured: this run's timed part found the host busy, and a measurement then is not "
        'kept; the next run on a quiet host measures it)']
    assert calibration.quiet_advice().startswith('run `tf_cnn_benchmarks --calibrate`')
    # At 25% the rule keeps a measurement: measured (announced) and kept, as before.
    busy.update(others_fraction=0.25, others_cores=0.5)
    util = utilisation.utilisation_figures(_plan(training=False), 100.0, False, [],
                                           cpu_peak_fn=peak_fn, timed_load=busy)
    assert measured == ['float32'] and util['peak_flops_per_sec'] == 2e11
    assert 'calibration: measuring the CPU peak' in capsys.readouterr().out
    # Once recorded, a busy run reads it and says nothing.
    util = utilisation.utilisation_figures(_plan(training=False), 100.0, False, [],
                                           cpu_peak_fn=peak_fn, timed_load=BUSY_TIMED_PART)
    assert util['peak_flops_per_sec'] == 2e11 and capsys.readouterr().out == ''


def test_the_flops_lines_factors_multiply_to_its_product_within_rounding():
    # An auditor's resnet20 run: '50.5 GFLOP/s = 0.24 GFLOPs/image ... x 207.38 images/sec'
    # (0.24 x 207.38 = 49.8): below 1 the per-image figure keeps 3 significant digits.
    forward = 8.11e7  # resnet20's about 0.081 GFLOPs forward; 3 x for training
    u = {'flops_per_image': 3 * forward, 'forward_flops_per_image': forward,
         'flops_multiplier': 3, 'model_flops_per_sec': 3 * forward * 207.38}
    assert utilisation.format_flops(u, 207.38) == (
        'model FLOP/s: 50.5 GFLOP/s = 0.243 GFLOPs/image (3 x forward 81.10 MFLOPs) x 207.38 '
        'images/sec')
    tiny = {'flops_per_image': 4.2e5, 'forward_flops_per_image': 4.2e5, 'flops_multiplier': 1,
            'model_flops_per_sec': 4.2e5 * 2.0}
    assert utilisation.format_flops(tiny, 2.0) == (
        'model FLOP/s: 0.840 MFLOP/s = 0.420 MFLOPs/image (1 x forward 0.420 MFLOPs) x 2.00 '
        'images/sec')
    for flops, rate in ((2.43e8, 207.38), (9.87e7, 3.3), (1.23e5, 45.6), (2.315e10, 7.97)):
        line = utilisation.format_flops(
            {'flops_per_image': flops, 'forward_flops_per_image': flops, 'flops_multiplier': 1,
             'model_flops_per_sec': flops * rate}, rate)
        product, per_image = line.split(' = ')[0].split()[2:4], line.split(' = ')[1].split()[:2]
        scale = {'GFLOP/s': 1e9, 'MFLOP/s': 1e6, 'GFLOPs/image': 1e9, 'MFLOPs/image': 1e6}
        shown = float(per_image[0]) * scale[per_image[1]] * rate
        assert shown == pytest.approx(float(product[0]) * scale[product[1]], rel=2e-3), line
