"""hardware/kernel_speed.py: what the reduced-precision kernels do here decides the header, the
up-front warning and which gradients run in float32 (CPU flags alone do not)."""

import datetime
import json

import pytest
import tensorflow as tf

from tf_cnn_benchmarks import benchmark_cnn
from tf_cnn_benchmarks.graph import precision
from tf_cnn_benchmarks.hardware import calibration, kernel_speed

import helpers

# As measured on a Xeon with AVX512_FP16 where trivial ran 145x slower in float16.
SLOW_MATMUL = {'conv': 1.2, 'conv_gradients': 1.0, 'matmul': 145.0, 'matmul_gradients': 140.0}
FAST = {'conv': 0.6, 'conv_gradients': 0.9, 'matmul': 0.9, 'matmul_gradients': 1.1}


@pytest.fixture(autouse=True)
def _imagenet_classes(monkeypatch):
    """This file's tiny runs keep ImageNet's 1001 classes (not helpers.TINY_CLASSES): the
    precision a run's kernels take follows its largest matmul, the trivial model's 4096 x 1001
    classifier."""
    monkeypatch.setattr(helpers, 'TINY_CLASSES', None)


@pytest.fixture
def cpu(monkeypatch):
    """cpu(flags, measured, measured_now=True): this process's CPU has `flags` and its kernels
    measure so (now, or calibrated at 2026-01-01T00:00:00Z; None: no quiet probe)."""
    def set_cpu(flags, measured, measured_now=True):
        monkeypatch.setattr(precision, 'cpu_flags', lambda path='/proc/cpuinfo': set(flags))
        monkeypatch.setattr(kernel_speed, 'probe', lambda dtype, threads=(0, 0), **kw: (
            helpers.measurement(measured, measured_now=measured_now)
            if measured is not None else None))
    return set_cpu


def _gradient_matmul_dtypes(graph):
    return {op.outputs[0].dtype for op in graph.get_operations()
            if op.type == 'MatMul' and 'gradients' in op.name}


def test_a_cpu_flag_is_not_native_when_the_kernels_are_slow(cpu, capsys):
    cpu({'avx512_fp16'}, SLOW_MATMUL)
    lines = benchmark_cnn.BenchmarkCNN(helpers.tiny_params(use_fp16=True), gpus=0).info_lines()
    text = '\n'.join(lines)
    assert 'native float16' not in text
    assert ('Precision:   float16 compute on avx512_fp16, float32 variables and matmul '
            'gradients') in text
    # Each number says what it is (it read 'conv 1.20/1.00x, matmul 145/140x', as one number
    # divided by another).
    assert ('time vs float32 on 2026-01-01: conv fwd 1.20x, grad 1.00x; matmul fwd 145x, grad '
            '140x') in text
    err = capsys.readouterr().err
    # trivial's largest matmul at batch 4, 16x16 images: 4x4096 by 4096x1001.
    assert err.count('warning: --use_fp16: float16 matmuls run 145.0x slower than float32 on '
                     'this CPU (this run\'s largest matmul, timed at 4x4096x1001; measured now); '
                     'the faster choice: float32 (drop --use_fp16)') == 1


def test_fast_kernels_are_native_and_quiet(cpu, capsys):
    cpu({'avx512_bf16'}, FAST)
    lines = benchmark_cnn.BenchmarkCNN(helpers.tiny_params(use_bf16=True), gpus=0).info_lines()
    assert 'Precision:   bfloat16 compute on avx512_bf16, float32 variables' in lines
    assert any('conv fwd 0.60x, grad 0.90x; matmul fwd 0.90x, grad 1.10x' in x for x in lines)
    assert 'warning' not in capsys.readouterr().err
    graph = helpers.tiny_bench(use_bf16=True, batch_size=2).build_graph().graph
    assert _gradient_matmul_dtypes(graph) == {tf.bfloat16}


def test_slow_gradient_kernels_run_in_float32(cpu):
    # trivial's matmuls are the builder's affine layers, whose own gradient override used to
    # hide the float32 request: every gradient matmul of the step is float32 now.
    cpu({'avx512_fp16'}, SLOW_MATMUL)
    graph = helpers.tiny_bench(use_fp16=True, batch_size=2).build_graph().graph
    assert _gradient_matmul_dtypes(graph) == {tf.float32}


def test_emulated_dtype_computes_affine_gradients_in_float32(cpu):
    cpu({'avx2'}, FAST)  # no bf16 flags: emulated, no measurement needed
    graph = helpers.tiny_bench(use_bf16=True, batch_size=2).build_graph().graph
    assert _gradient_matmul_dtypes(graph) == {tf.float32}


#: The probe at tiny shapes: its ops' kinds, not this host's kernel speeds, are tested.
TINY_SHAPES = kernel_speed.ProbeShapes((1, 6, 6, 8, 3, 3, 8, 1), (4, 16, 16), True)


#: The dtypes whose probe kernels this CPU runs: float16 everywhere (TensorFlow's own CPU
#: kernels), bfloat16 where the CPU has its units (the probe runs only there; a CPU without
#: them computes bfloat16 gradients in float32 and is not probed).
PROBED = ['float16'] + (['bfloat16'] if precision.has_cpu_units(tf.bfloat16) else [])


@pytest.mark.parametrize('dtype_name', PROBED)
def test_the_probe_measures_every_kind_within_its_budget(dtype_name):
    measured = kernel_speed.measure(dtype_name, 1, 1, budget_secs=0.4, shapes=TINY_SHAPES)
    assert set(measured) == set(kernel_speed.KINDS)
    assert all(0 < v < 1000 for v in measured.values())
    assert kernel_speed.float32_gradient_kinds({**FAST, 'conv_gradients': 3.0}) == ('conv',)


@pytest.mark.parametrize('dtype_name', PROBED)
def test_each_probe_target_runs_its_kernels(dtype_name):
    # Under Grappler the gradient targets (groups of two side-effect-free ops) ran no kernel at
    # all: float16 convolution gradients measured 1.05x float32's where they took 30-100x.
    tf1 = tf.compat.v1
    graph, init, setups, targets = kernel_speed.probe_graph(dtype_name, TINY_SHAPES)
    wanted = {'conv': {'Conv2D'}, 'conv_gradients': {'Conv2DBackpropInput',
                                                     'Conv2DBackpropFilter'},
              'matmul': {'MatMul'}, 'matmul_gradients': {'MatMul'}}
    fused = {'FusedConv2D': 'Conv2D', 'FusedMatMul': 'MatMul'}  # bias and ReLU in the kernel
    with tf1.Session(graph=graph, config=kernel_speed.probe_config(1, 1)) as sess:
        sess.run(init)
        sess.run(setups)
        for (kind, name), target in targets.items():
            meta = tf1.RunMetadata()
            sess.run(target, options=tf1.RunOptions(trace_level=tf1.RunOptions.FULL_TRACE),
                     run_metadata=meta)
            ran = [n.timeline_label.split(' = ')[-1].split('(')[0] for d in
                   meta.step_stats.dev_stats for n in d.node_stats]
            for op_type in wanted[kind]:
                count = sum(fused.get(r, r) == op_type for r in (
                    r.lstrip('_').replace('MklNative', '').replace('Mkl', '') for r in ran))
                assert count == (2 if kind == 'matmul_gradients' else 1), (kind, name, ran)


def test_repetitions_stop_at_the_deadline_after_the_minimum():
    calls = []
    best = kernel_speed._min_secs([lambda: calls.append('a'), lambda: calls.append('b')],
                                  reps=9, deadline=0.0)  # long past: the minimum only
    assert calls == ['a', 'b'] * (1 + kernel_speed.MIN_REPS)  # one warm-up each first
    assert len(best) == 2 and all(v >= 0 for v in best)
    calls.clear()
    kernel_speed._min_secs([lambda: calls.append('a')], reps=9)
    assert len(calls) == 1 + 9


# --- The factors are kept in the host's calibration record, quiet ones only.

@pytest.fixture
def probe_cache(tmp_path, monkeypatch):
    """(probe(dtype, threads, **kw) on a record in tmp_path with a counting fake measure and
    a quiet host, the calls it measured); a fresh process's memo."""
    monkeypatch.setattr(kernel_speed, '_MEMO', {})
    monkeypatch.setattr(kernel_speed, '_TRIED', set())
    monkeypatch.setattr(kernel_speed, '_BUSY', {})
    for name in ('ONEDNN_MAX_CPU_ISA', 'DNNL_MAX_CPU_ISA'):
        monkeypatch.delenv(name, raising=False)
    calls = []

    def fake_measure(dtype_name, intra, inter):
        calls.append((dtype_name, intra, inter))
        return dict(FAST, conv=0.5 + len(calls)), 0.04

    def probe(dtype, threads=(2, 1), meter=None, **kw):
        return kernel_speed.probe(dtype, threads, path=str(tmp_path / 'calibration.json'),
                                  measure_fn=fake_measure, cpu_model='Test CPU',
                                  tf_version='2.21.0', meter=meter or helpers.FakeMeter(0.1),
                                  **kw)
    return probe, calls


def _record(tmp_path):
    return json.load(open(tmp_path / 'calibration.json'))['entries']


def test_the_factors_are_measured_once_and_read_from_the_record_by_a_later_run(
        probe_cache, tmp_path, capsys):
    probe, calls = probe_cache
    first = probe(tf.bfloat16)
    assert first.measured_now and first.value['conv'] == 1.5 and calls == [('bfloat16', 2, 1)]
    assert first.key == ('Test CPU|tf 2.21.0|kernel factors|probe 3|bfloat16|2 intra, 1 inter '
                         'threads|conv 4x28x28x64 3x3->64, matmul 32x1024x1024')
    assert kernel_speed.when(first) == 'measured here'
    # Announced before it starts: what and how long.
    assert capsys.readouterr().out == (
        'calibration: measuring bfloat16 kernels against float32 (the default shapes: '
        'convolution 4x28x28x64 3x3->64, matmul 32x1024x1024, and their gradients) (about 3 s)\n')
    kernel_speed._MEMO.clear()  # a later process
    again = probe(tf.bfloat16)
    assert calls == [('bfloat16', 2, 1)]
    assert not again.measured_now and again.value == first.value
    assert kernel_speed.when(again) == 'calibrated %s' % first.date()
    stored = _record(tmp_path)[first.key]
    assert stored['value'] == first.value and stored['spread'] == 0.04
    assert stored['others_cores'] == 0.1 and stored['cores'] == 2 and stored['quiet'] is True


def test_the_record_key_has_the_dtype_and_both_thread_counts(probe_cache, tmp_path):
    probe, calls = probe_cache
    probe(tf.bfloat16)
    probe(tf.float16)
    probe(tf.bfloat16, (1, 1))
    probe(tf.bfloat16, (2, 2))
    probe(tf.bfloat16)  # this process's, again
    assert calls == [('bfloat16', 2, 1), ('float16', 2, 1), ('bfloat16', 1, 1),
                     ('bfloat16', 2, 2)]
    assert len(_record(tmp_path)) == 4


def test_refresh_measures_again_once_per_process(probe_cache):
    probe, calls = probe_cache
    probe(tf.bfloat16)
    kernel_speed._MEMO.clear()  # a later process with --refresh_peak
    refreshed = probe(tf.bfloat16, refresh=True)
    assert refreshed.measured_now and refreshed.value['conv'] == 2.5 and len(calls) == 2
    assert probe(tf.bfloat16, refresh=True) is refreshed  # the gradient scopes' later calls
    assert probe(tf.bfloat16).value['conv'] == 2.5 and len(calls) == 2


def test_a_refresh_after_a_back_off_in_this_process_measures(probe_cache, capsys):
    """The graph's build asks first, without refresh, and backs off (a busy try minutes ago):
    the header's refresh (--refresh_peak, --calibrate) must still measure (prec53 item 5)."""
    probe, calls = probe_cache
    assert probe(tf.bfloat16, meter=helpers.FakeMeter(1.9)) is None  # an earlier busy try
    kernel_speed._MEMO.clear()
    kernel_speed._TRIED.clear()  # this process
    assert probe(tf.bfloat16) is None and len(calls) == 1  # backed off, nothing measured
    refreshed = probe(tf.bfloat16, refresh=True)
    assert len(calls) == 2 and refreshed.measured_now
    assert probe(tf.bfloat16, refresh=True) is refreshed and len(calls) == 2  # once a process


def test_within_refreshing_every_probe_refreshes(probe_cache):
    probe, calls = probe_cache
    probe(tf.bfloat16)
    kernel_speed._MEMO.clear()  # a later process
    probe(tf.bfloat16)
    assert len(calls) == 1  # read from the record
    kernel_speed._MEMO.clear()
    with kernel_speed.refreshing():
        assert probe(tf.bfloat16).measured_now and len(calls) == 2
    with kernel_speed.refreshing(False):
        assert probe(tf.bfloat16).measured_now and len(calls) == 2
    assert not kernel_speed._REFRESHING[0]


def test_a_capped_run_keys_its_factors_by_the_cap(probe_cache, monkeypatch):
    """ONEDNN_MAX_CPU_ISA runs other kernels: its factors are not the uncapped run's."""
    probe, calls = probe_cache
    uncapped = probe(tf.bfloat16)
    assert 'ONEDNN_MAX_CPU_ISA' not in uncapped.key
    kernel_speed._MEMO.clear()
    monkeypatch.setenv('ONEDNN_MAX_CPU_ISA', 'avx512_core')
    capped = probe(tf.bfloat16)
    assert len(calls) == 2 and capped.measured_now
    assert capped.key.startswith('Test CPU|tf 2.21.0|ONEDNN_MAX_CPU_ISA=AVX512_CORE|kernel '
                                 'factors|probe 3|bfloat16|')
    kernel_speed._MEMO.clear()
    monkeypatch.delenv('ONEDNN_MAX_CPU_ISA')
    assert probe(tf.bfloat16).value == uncapped.value and len(calls) == 2


def test_a_busy_probe_is_not_kept_and_the_last_quiet_one_is_used(probe_cache, tmp_path,
                                                                 capsys):
    probe, calls = probe_cache
    assert probe(tf.bfloat16, meter=helpers.FakeMeter(1.9)) is None  # nothing quiet yet
    record = calibration.load_record(str(tmp_path / 'calibration.json'))
    assert [k.split('|')[0] for k in record] == ['busy']  # only the busy try's note
    assert capsys.readouterr().err == (
        'warning: reduced-precision kernel factors measured now: not kept, other processes '
        'used 1.90 of 2 cores (95%, more than 25%); no quiet calibration: run '
        '`tf_cnn_benchmarks --calibrate` on a quiet host\n')
    kernel_speed._MEMO.clear()
    assert probe(tf.bfloat16) is None and len(calls) == 1  # not tried again for 10 minutes
    assert 'its try at ' in capsys.readouterr().err
    kernel_speed._MEMO.clear()
    quiet = probe(tf.bfloat16, refresh=True)  # --calibrate
    kernel_speed._MEMO.clear()
    busy = probe(tf.bfloat16, refresh=True, meter=helpers.FakeMeter(0.6))  # 30% > 25%
    assert len(calls) == 3 and busy.value == quiet.value and not busy.measured_now
    assert 'using the quiet calibration of %s' % quiet.date() in capsys.readouterr().err


def test_without_a_quiet_probe_the_flags_decide(cpu):
    # No record (or only busy probes): float16's gradients in float32 (145x slower matmul
    # gradients on AVX512_FP16), bfloat16's in the dtype where the CPU has the units.
    cpu({'avx512_fp16', 'avx512_bf16'}, None)
    assert kernel_speed.factors(tf.float16) is None
    assert precision.float32_gradient_kinds(tf.float16, 'cpu') == ('conv', 'matmul')
    assert precision.float32_gradient_kinds(tf.bfloat16, 'cpu') == ()


def test_unmeasured_float16_kernels_are_not_native_and_warn(cpu, capsys):
    # No quiet probe: a CPU flag does not vouch for TensorFlow's float16 kernels (a fused
    # float16 MatMul took 705x float32's time on a Xeon with AVX512_FP16).
    cpu({'avx512_fp16', 'avx512_bf16'}, None)
    text = '\n'.join(benchmark_cnn.BenchmarkCNN(helpers.tiny_params(use_fp16=True),
                                                gpus=0).info_lines())
    assert 'native float16' not in text
    line = next(x for x in text.splitlines() if 'kernels unmeasured here' in x)
    assert len(line) <= 100, line
    assert capsys.readouterr().err.count('warning: --use_fp16: CPU has avx512_fp16; float16 '
                                         'kernels unmeasured here') == 1
    native, bf16 = precision.native_support(tf.bfloat16, 'cpu', flags={'avx512_bf16'})
    assert native and bf16 == 'CPU has avx512_bf16: native bfloat16'


def test_a_cached_header_says_when_and_a_forward_only_one_has_no_gradient_text(cpu, capsys):
    cpu({'avx512_fp16'}, SLOW_MATMUL, measured_now=False)
    text = '\n'.join(benchmark_cnn.BenchmarkCNN(helpers.tiny_params(use_fp16=True),
                                                gpus=0).info_lines())
    assert 'float16 compute on avx512_fp16, float32 variables and matmul gradients' in text
    assert ('time vs float32 on 2026-01-01: conv fwd 1.20x, grad 1.00x; matmul fwd 145x, grad '
            '140x') in text
    assert '; calibrated 2026-01-01 00:00 UTC); the faster choice' in capsys.readouterr().err
    for mode in (dict(forward_only=True), dict(eval=True)):
        text = '\n'.join(benchmark_cnn.BenchmarkCNN(
            helpers.tiny_params(use_fp16=True, **mode), gpus=0).info_lines())
        assert 'time vs float32 on 2026-01-01: conv 1.20x, matmul 145x' in text
        assert 'gradients' not in text, mode
    _, emulated = precision.native_support(tf.bfloat16, 'cpu', flags=set(), measured=FAST,
                                           gradients=False)
    assert emulated.endswith('bfloat16 kernels measured here (time vs float32): conv 0.60x, '
                             'matmul 0.90x')


@pytest.mark.parametrize('flags, measured, use, faster', [
    ({'avx512_fp16', 'amx_bf16'}, SLOW_MATMUL, 'fp16', '--use_bf16 (this CPU has amx_bf16)'),
    ({'avx512_fp16'}, SLOW_MATMUL, 'fp16', 'float32 (drop --use_fp16)'),
    ({'avx512_fp16', 'avx512_bf16'}, None, 'fp16', '--use_bf16 (this CPU has avx512_bf16)'),
    ({'avx512_fp16'}, None, 'fp16', 'float32 (drop --use_fp16)'),
    ({'avx512_bf16'}, None, 'fp16', '--use_bf16 (this CPU has avx512_bf16)'),  # emulated
    (set(), None, 'fp16', 'float32 (drop --use_fp16)'),
    (set(), None, 'bf16', 'float32 (drop --use_bf16)'),
])
def test_every_cpu_precision_warning_names_the_faster_choice_of_this_cpu(
        cpu, capsys, flags, measured, use, faster):
    # Before: an unmeasured float16 warning named no faster choice (float16 lenet ran 10.5
    # images/sec, bfloat16 1211 on a Xeon with AMX_BF16), a measured one said "or --use_bf16
    # where the CPU has avx512_bf16/amx_bf16" whatever this CPU's flags.
    cpu(flags, measured)
    benchmark_cnn.BenchmarkCNN(helpers.tiny_params(**{'use_' + use: True}), gpus=0).info_lines()
    warnings = [x for x in capsys.readouterr().err.splitlines() if x.startswith('warning: --use')]
    assert len(warnings) == 1 and warnings[0].endswith('the faster choice: %s' % faster), warnings
    assert 'where the CPU has' not in warnings[0]


def test_a_busy_probe_far_beyond_what_load_explains_is_said_not_unmeasured(tmp_path,
                                                                           monkeypatch):
    # Before: `--calibrate --use_fp16` on a busy host measured the float16 matmul 491x, then
    # said "float16 kernels unmeasured here". Below BEYOND_LOAD_FACTOR a busy factor says
    # nothing (load slows both dtypes' kernels, timed in turn, alike).
    monkeypatch.setattr(kernel_speed, '_MEMO', {})
    monkeypatch.setattr(kernel_speed, '_BUSY', {})

    def busy_probe(got, dtype=tf.float16):
        return kernel_speed.probe(dtype, (2, 1), path=str(tmp_path / 'c.json'), refresh=True,
                                  measure_fn=lambda *a: (got, 0.1), cpu_model='Test CPU',
                                  tf_version='2.21.0', meter=helpers.FakeMeter(1.9))
    assert busy_probe(dict(FAST, matmul=491.0, conv_gradients=157.0, conv=1.7)) is None
    assert kernel_speed.busy_far_slower(tf.float16) == {'matmul': 491.0, 'conv_gradients': 157.0}
    native, text = precision.native_support(tf.float16, 'cpu', flags={'avx512_fp16'})
    # The gradients run in float32 without a quiet probe (fallback_gradient_kinds): their busy
    # factor is not this run's cost, so it is not said (before: 'conv grad 157x' beside a
    # Precision line saying the conv gradients run in float32).
    assert not native and text == ('CPU has avx512_fp16; float16 on a busy host (not kept): '
                                   'matmul 491x float32\'s time')
    # Measured, if on a busy host: not 'unmeasured' (prec58 item 2).
    kernel_speed._BUSY['float16'] = {'conv_gradients': 157.0}
    assert 'float16 kernels measured on a busy host, not kept (some took 400x' in (
        precision.native_support(tf.float16, 'cpu', flags={'avx512_fp16'})[1])
    kernel_speed._BUSY['float16'] = {'matmul': 491.0, 'conv_gradients': 157.0}
    assert kernel_speed.busy_far_slower(tf.bfloat16) == {}
    kernel_speed._MEMO.clear()
    assert busy_probe(dict(FAST, matmul=3.0)) is None
    assert kernel_speed.busy_far_slower(tf.float16) == {}
    assert 'measured on a busy host, not kept' in precision.native_support(
        tf.float16, 'cpu', flags={'avx512_fp16'})[1]
    kernel_speed._BUSY.clear()  # no busy probe in this process: unmeasured
    assert 'unmeasured here' in precision.native_support(tf.float16, 'cpu',
                                                         flags={'avx512_fp16'})[1]


def test_the_docs_quote_the_warnings_as_printed(cpu, capsys):
    # Before: the docs said a cached factor shows `measured <UTC time>, cached`; the warning
    # says `(calibrated 2026-01-01 00:00 UTC)`.
    import os
    import re

    import checkout
    with open(os.path.join(checkout.REPO, 'docs', 'speed-and-precision.md')) as f:
        page = ' '.join(f.read().split())
    cpu({'avx512_fp16', 'avx512_bf16', 'amx_bf16'}, SLOW_MATMUL, measured_now=False)
    benchmark_cnn.BenchmarkCNN(helpers.tiny_params(use_fp16=True), gpus=0).info_lines()
    err = capsys.readouterr().err
    assert re.search(r'; calibrated \d{4}-\d\d-\d\d \d\d:\d\d UTC\); the faster choice', err)
    assert 'a factor read from the record says `calibrated <UTC time>`' in page
    assert 'cached`' not in page
    quoted = re.search(r'`(warning: --use_fp16: float16 matmuls [^`]*)`', page).group(1)
    assert quoted.replace('; measured now)', '; calibrated 2026-01-01 00:00 UTC)') in err


# --- The probe times the run's own shapes: a factor depends on the op's size.

def test_the_run_shapes_are_its_largest_convolution_and_matmul_but_the_stem():
    tf1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        images = tf1.placeholder(tf.float32, [1, 32, 32, 3])
        x = tf.nn.conv2d(images, tf.zeros([3, 3, 3, 16]), 1, 'SAME')  # the stem: left out
        x = tf.nn.conv2d(x, tf.zeros([3, 3, 16, 16]), 1, 'SAME')  # 32x32x16x16x9: the largest
        x = tf.nn.conv2d(x, tf.zeros([3, 3, 16, 32]), 2, 'SAME')  # 16x16x16x32x9: half of it
        flat = tf.reshape(tf.reduce_mean(x, [1, 2]), [1, 32])
        hidden = tf.matmul(flat, tf.zeros([32, 64]))  # 32x64 a row
        tf.matmul(hidden, tf.zeros([100, 64]), transpose_b=True)  # 64x100 a row: the largest
    shapes = kernel_speed.run_shapes(graph, 2)
    assert shapes == kernel_speed.ProbeShapes((2, 32, 32, 16, 3, 3, 16, 1), (2, 64, 100), True)
    assert shapes.text() == 'conv 2x32x32x16 3x3->16, matmul 2x64x100'
    # A model without convolutions (trivial) keeps the default convolution.
    with tf.Graph().as_default() as dense:
        tf.matmul(tf1.placeholder(tf.float32, [1, 48]), tf.zeros([48, 8]))
    assert kernel_speed.run_shapes(dense, 4).conv == kernel_speed.DEFAULT_SHAPES.conv
    # ... timed for the key, but deciding nothing: no 'conv gradients in float32' for a model
    # without convolutions (prec53 item 3), whatever the factor or the fallback says.
    no_conv = kernel_speed.run_shapes(dense, 4)
    assert no_conv.absent == ('conv',) and shapes.absent == ()
    big = dict(conv=1.4, conv_gradients=140.0, matmul=1.0, matmul_gradients=3.0)
    assert kernel_speed.float32_gradient_kinds(big, no_conv) == ()  # 4x48x8: too small
    assert kernel_speed.float32_gradient_kinds(big, no_conv._replace(matmul=(64, 2048, 1000))
                                               ) == ('matmul',)
    assert kernel_speed.fallback_gradient_kinds(tf.float16, no_conv) == ('matmul',)
    assert kernel_speed.fallback_gradient_kinds(tf.float16) == ('conv', 'matmul')


@pytest.mark.parametrize('kind, shape, cut', [
    # resnet50's FC at batch 64 (131M multiply-adds): its batch cut to the default's 33.6M.
    ('matmul', (64, 2048, 1000), (16, 2048, 1000)),
    ('matmul', (2, 64, 10), (2, 64, 10)),  # smaller: as it is
    # vgg16's first FC is over the bound at one row: its inner dimension cut.
    ('matmul', (1, 25088, 4096), (1, 8192, 4096)),
    # resnet50's 3x3 convolution at batch 64: one image of it is the default's size.
    ('conv', (64, 56, 56, 64, 3, 3, 64, 1), (1, 56, 56, 64, 3, 3, 64, 1)),
    ('conv', (64, 28, 28, 128, 3, 3, 128, 1), (1, 28, 28, 128, 3, 3, 128, 1)),
    ('conv', (64, 14, 14, 64, 3, 3, 64, 1), (16, 14, 14, 64, 3, 3, 64, 1)),
    # One 224x224 image is 16x the bound: a quarter of its height and width.
    ('conv', (8, 224, 224, 64, 3, 3, 64, 1), (1, 56, 56, 64, 3, 3, 64, 1)),
])
def test_a_shape_larger_than_the_default_is_timed_at_the_defaults_size(kind, shape, cut):
    assert kernel_speed.capped(kind, shape) == cut
    default = getattr(kernel_speed.DEFAULT_SHAPES, kind)
    assert kernel_speed.macs(kind, cut) <= kernel_speed.macs(kind, default)


def _by_size(dtype_name, intra, inter, budget_secs=None, shapes=None):
    """Injected timings as this host's float16 kernels behave: the fused matmul's factor grows
    with its size (1.0-2.4x at resnet20's 2x64x10, call overhead's noise; about 290x at
    32x1024x1024), the filter gradient's too (45x at resnet20's batch-2 convolutions, 142x at
    4x28x28x64)."""
    big_matmul = kernel_speed.macs('matmul', shapes.matmul) > 100_000
    big_conv = kernel_speed.macs('conv', shapes.conv) > 50_000_000
    return {'conv': 1.3, 'conv_gradients': 142.0 if big_conv else 45.0,
            'matmul': 284.0 if big_matmul else 2.2, 'matmul_gradients': 0.6}, 0.05


@pytest.fixture
def by_size(calibration_record, monkeypatch):
    """A CPU with avx512_fp16 whose probe returns `_by_size`'s factors (a fresh process's memo
    and a record of the test's own); the shapes each probe timed."""
    monkeypatch.setattr(kernel_speed, '_MEMO', {})
    monkeypatch.setattr(kernel_speed, '_BUSY', {})
    monkeypatch.setattr(precision, 'cpu_flags', lambda path='/proc/cpuinfo': {'avx512_fp16'})
    timed = []

    def measure(dtype_name, intra, inter, budget_secs=None, shapes=None):
        timed.append(shapes.text())
        return _by_size(dtype_name, intra, inter, budget_secs, shapes)
    monkeypatch.setattr(kernel_speed, 'measure_with_spread', measure)
    return timed


def test_a_run_of_small_matmuls_is_not_warned_of_a_large_ones_factor(by_size, capsys):
    # Before: resnet20 at batch 2 (its one matmul 2x64 by 64x10) warned "float16 matmuls run
    # 283.7x slower than float32 on this CPU", the factor of the probe's 32x1024x1024 matmul;
    # its float16 step ran about as fast as float32's.
    params = helpers.tiny_params(model='resnet20', data_name='cifar10', image_size=32,
                                 batch_size=2, use_fp16=True)
    lines = benchmark_cnn.BenchmarkCNN(params, gpus=0).info_lines()
    assert by_size == ['conv 2x32x32x16 3x3->16, matmul 2x64x10']
    assert ('             time vs float32 on %s: conv fwd 1.30x, grad 45x; matmul fwd 2.20x, '
            'grad 0.60x' % datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d')
            in lines)
    # 2.2x of a 1,280 multiply-add op (tens of microseconds): below MIN_MACS, no warning, and
    # float16 counts as native here.
    err = capsys.readouterr().err
    assert 'float16 matmuls run' not in err and 'expect it slower' not in err
    # trivial's matmuls are large (4x4096 by 4096x1001): the warning names that shape.
    benchmark_cnn.BenchmarkCNN(helpers.tiny_params(use_fp16=True), gpus=0).info_lines()
    assert by_size[-1] == 'conv 4x28x28x64 3x3->64, matmul 4x4096x1001'
    assert ('warning: --use_fp16: float16 matmuls run 284.0x slower than float32 on this CPU '
            '(this run\'s largest matmul, timed at 4x4096x1001; measured now)'
            in capsys.readouterr().err)


def test_the_gradients_dtype_is_chosen_from_the_runs_shapes(by_size):
    # Conv gradients 45x at lenet's shapes: in float32 (the probe's default shapes would say
    # so too); matmul gradients 0.6x: in float16. The graph's tower reads the run's shapes.
    graph = helpers.tiny_bench(model='lenet', batch_size=2, image_size=28,
                               use_fp16=True).build_graph().graph
    assert by_size == ['conv 2x14x14x32 5x5->64, matmul 2x3136x512']
    filters = {op.outputs[0].dtype for op in graph.get_operations()
               if op.type == 'Conv2DBackpropFilter'}
    assert filters == {tf.float32}
    assert _gradient_matmul_dtypes(graph) == {tf.float16}


def test_a_factor_of_an_op_under_the_floor_decides_nothing():
    # resnet20 at batch 2: its 2x64x10 matmul's gradients measured 1.5-2.5x in three probes,
    # the call's own cost; a gradient choice and a warning flipping with that noise would
    # change the graph between calibrations for nothing.
    noisy = dict(FAST, matmul=2.4, matmul_gradients=2.5)
    small = kernel_speed.ProbeShapes((2, 32, 32, 16, 3, 3, 16, 1), (2, 64, 10), True)
    large = kernel_speed.ProbeShapes((2, 32, 32, 16, 3, 3, 16, 1), (2, 3136, 512), True)
    assert kernel_speed.float32_gradient_kinds(noisy, small) == ()
    assert kernel_speed.far_slower_warning('--use_fp16', tf.float16, noisy, shapes=small) is None
    assert kernel_speed.float32_gradient_kinds(noisy, large) == ('matmul',)
    assert kernel_speed.far_slower_warning('--use_fp16', tf.float16, noisy, shapes=large)
    assert kernel_speed.float32_gradient_kinds(noisy) == ('matmul',)  # the default shapes
