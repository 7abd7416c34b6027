"""--graph_choices (graph/graph_choices.py): each choice forced on and off builds the same
function with the same variables; the measured mode decides per shape from the probe's
cached factors; the header names what was chosen."""

import collections
import math
import os
import shutil
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest
import tensorflow as tf

from tf_cnn_benchmarks import params
from tf_cnn_benchmarks.graph import graph_choices, precision
from tf_cnn_benchmarks.hardware import kernel_speed, layout_kernels, machine
from tf_cnn_benchmarks.models import convnet_builder, fast_paths
from tf_cnn_benchmarks.params import graph_choice_flag

import helpers

tf1 = tf.compat.v1
BOTH = 'conv1x1_matmul,shortcut_matmul'

_SITES: dict = {}


@pytest.fixture(autouse=True)
def _sites_built_once(monkeypatch):
    """graph_choices.site_places builds the whole model in a scratch graph (resnet50: 2-3 CPU
    seconds) each time a plan's choices resolve: for the settled run, then again for each of a
    test's own resolve calls. Its result is a function of the model and the plan's batch, image
    size, layout, dtypes and classes only, so this module builds each such set once and hands
    out copies; the choices, warnings and graphs asserted are those of the same sites."""
    real = graph_choices.site_places

    def once(plan, model):
        key = (model.name, model.dataset, plan.per_device_batch_size, plan.image_size,
               plan.data_format, plan.compute_dtype, plan.variable_dtype, plan.num_classes)
        if key not in _SITES:
            _SITES[key] = real(plan, model)
        return dict(_SITES[key])

    monkeypatch.setattr(graph_choices, 'site_places', once)


def _builder_net(choose, data_format, dtype):
    """A small net of every 1x1 case (stride 1, stride 2 on an even and an odd size, SAME,
    VALID and SAME_RESNET padding) and a 3x3 convolution; returns (loss, gradients of every
    variable, op types) after one run, float32 numpy."""
    rng = np.random.RandomState(0)
    images = rng.uniform(-1, 1, [2, 10, 10, 8]).astype(np.float32)
    if data_format == 'NCHW':
        images = images.transpose(0, 3, 1, 2)
    graph = tf.Graph()
    with graph.as_default():
        cnn = convnet_builder.ConvNetBuilder(tf.cast(tf.constant(images), dtype), 8, True,
                                             data_format, dtype,
                                             options=fast_paths.BuildOptions(choose=choose))
        cnn.use_batch_norm = True
        with tf1.variable_scope('cg'):
            cnn.conv(16, 1, 1, bias=None)                                   # 10x10, stride 1
            cnn.conv(12, 1, 1, 2, 2, mode='SAME_RESNET', activation=None)   # 10 -> 5
            cnn.conv(12, 3, 3)
            cnn.conv(6, 1, 1, 2, 2, mode='VALID', use_batch_norm=False)     # odd 5 -> 3
            cnn.conv(4, 1, 1, 2, 2, mode='SAME', use_batch_norm=False)      # odd 3 -> 2
        loss = tf.reduce_sum(tf.square(tf.cast(cnn.top_layer, tf.float32)))
        variables = tf1.trainable_variables()
        grads = tf.gradients(loss, variables)
        init = tf1.global_variables_initializer()
        types = [op.type for op in graph.get_operations()]
        with tf1.Session() as sess:
            sess.run(init)
            value, grad_values = sess.run([loss, grads])
    shapes = {v.name: v.shape.as_list() for v in variables}
    return value, dict(zip(shapes, grad_values)), shapes, types


def _onednn_takes_bfloat16() -> bool:
    # oneDNN runs bfloat16 (and so bfloat16 NCHW) only on some CPUs (with AVX-512); elsewhere
    # TensorFlow's own NHWC-only kernels run it (hardware/layout_kernels.py).
    return layout_kernels.nchw_runs(tf.bfloat16)


@pytest.mark.parametrize('data_format', ['NHWC', 'NCHW'])
@pytest.mark.parametrize('dtype, rtol', [
    (tf.float32, 1e-5),
    # bfloat16 keeps 8 significant bits: a 1x1 convolution and the MatMul of the same
    # product may round their outputs differently (a different summation order) by one unit
    # in the last place, 2**-8 relative, with oneDNN's kernels (which sum in float32); the
    # float32 sum of squares of those outputs stays within that, and each gradient element
    # within two roundings. Where oneDNN does not take bfloat16 (a CPU without AVX-512),
    # TensorFlow's own kernels round partial sums to bfloat16 as they go: two summation
    # orders of the up to 108 products of this net then differ by up to about
    # sqrt(108) = 10 roundings of 2**-9 (2%; measured 1.0% on the loss, 2.0% on a gradient
    # on an AMD EPYC with AVX2 only), so the bound there is 2**-5.
    (tf.bfloat16, None),
], ids=['fp32', 'bf16'])
@pytest.mark.parametrize('form', ['matmul', 'filter_matmul'])
def test_each_1x1_form_computes_the_convolution(data_format, dtype, rtol, form):
    if dtype == tf.bfloat16:
        if data_format == 'NCHW' and not _onednn_takes_bfloat16():
            pytest.skip('this CPU runs no bfloat16 NCHW kernels (oneDNN takes bfloat16 only '
                        'with AVX-512; a run refuses the flags: test_nchw_reduced_precision.py)')
        rtol = 2.0 ** -8 if _onednn_takes_bfloat16() else 2.0 ** -5
    gradient_tol = 4 * rtol if rtol < 2.0 ** -5 else rtol
    conv_loss, conv_grads, conv_vars, conv_types = _builder_net(None, data_format, dtype)
    mm_loss, mm_grads, mm_vars, mm_types = _builder_net(lambda shape: form, data_format, dtype)
    assert mm_vars == conv_vars  # the same variables, names and shapes
    assert conv_types.count('Conv2D') == 5 and conv_types.count('Conv2DBackpropFilter') == 5
    if form == 'matmul':
        assert mm_types.count('Conv2D') == 1  # only the 3x3 is left a convolution
    else:  # the forward convolutions stay; only the 3x3's filter gradient is oneDNN's
        assert mm_types.count('Conv2D') == 5
    assert mm_types.count('Conv2DBackpropFilter') == 1
    assert mm_types.count('StridedSliceGrad') == (3 if form == 'matmul' else 0)
    assert 'StridedSliceGrad' not in conv_types
    np.testing.assert_allclose(mm_loss, conv_loss, rtol=rtol)
    for name, grad in conv_grads.items():
        scale = np.abs(grad).max()
        np.testing.assert_allclose(mm_grads[name], grad, rtol=0,
                                   atol=gradient_tol * scale, err_msg=name)


def test_the_flag_takes_measured_off_or_choice_names():
    assert params.make_params().graph_choices == 'measured'
    for good in ('measured', 'off', 'conv1x1_matmul', BOTH):
        params.validate_params(params.make_params(graph_choices=good))
    with pytest.raises(params.ParamsError) as e:
        params.validate_params(params.make_params(graph_choices='conv1x1_matmul,fast'))
    assert str(e.value) == (
        "--graph_choices takes measured, off or a comma-separated list of conv1x1_matmul, "
        "shortcut_matmul, conv1x1_filter_matmul, relu_xla, residual_xla, relu_float32, "
        "residual_float32. Received: graph_choices='conv1x1_matmul,fast'")


def test_a_bad_flag_is_one_line_and_exit_2():
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, os.path.join(repo, 'tf_cnn_benchmarks.py'),
                          '--graph_choices=on'], capture_output=True, text=True, timeout=300,
                         cwd=repo)
    assert out.returncode == 2
    assert 'Traceback' not in out.stderr
    assert ("--graph_choices takes measured, off or a comma-separated list of conv1x1_matmul, "
            "shortcut_matmul, conv1x1_filter_matmul, relu_xla, residual_xla, relu_float32, "
            "residual_float32. Received: graph_choices='on'") in out.stderr


# resnet50 (36 1x1 convolutions: 30 of stride 1, 6 of stride 2: the first unit of stages 2-4
# strides its projection shortcut and its first 1x1) on a fixed synthetic batch of 2 at 32x32;
# a small learning rate, so that three steps stay on a smooth trajectory (at 0.01 the loss fell
# 7.8 -> 1.3 in three steps and one rounding moved the third step's loss by 3%).
RESNET50 = dict(model='resnet50', image_size=32, batch_size=2, num_batches=3,
                init_learning_rate=1e-4, tf_random_seed=3)


def _resnet50_run(tmp_path_factory, saved=False, **flags) -> dict:
    """A RESNET50 run with `flags` (helpers.shared_run: once per test session): the tests of
    the losses, of the graphs and of the checkpoint share it."""
    return helpers.shared_run(tmp_path_factory, 'graph_choices_resnet50', saved=saved,
                              **RESNET50, **flags)


def _losses(tmp_path_factory, **flags) -> np.ndarray:
    return np.array(_resnet50_run(tmp_path_factory, **flags)['losses'])


def test_forced_choices_follow_todays_graph_float32(tmp_path_factory):
    # float32 sums in another order: the first step's loss (the same weights) agrees to
    # float32's rounding (1e-6: 8 ulps of 2**-23); the next steps' moved by up to 1.45e-5
    # relative on a quiet AMX host and by more than 3e-5 once in the suite under -n 2 (the
    # gradients' sums also change order from run to run with the inter-op threads' timing, and
    # batch norm of the 1x1 last stage over a batch of 2 amplifies the updates' roundings).
    # 1e-4 holds those, and a form that computed another gradient moves the next loss by far
    # more (test_each_choice_forced_on_and_off_changes_only_the_ops checks the ops).
    on = _losses(tmp_path_factory, saved=True, graph_choices=BOTH)
    off = _losses(tmp_path_factory, graph_choices='off')
    np.testing.assert_allclose(on[0], off[0], rtol=1e-6)
    np.testing.assert_allclose(on, off, rtol=1e-4)


#: How far a bfloat16 loss of a later step may drift with the graph's form. bfloat16 keeps 8
#: significant bits, so each op that rounds its output moves it by up to u = 2**-8 relative
#: (half an ulp). Along resnet50's path from the images to the loss about 3 ops round per
#: weighted layer (the convolution, its batch norm, the ReLU or residual add) over its 50
#: layers: 150 roundings. Two forms of the same step round differently at those ops; as
#: independent errors of either sign they accumulate like a random walk, sqrt(150) u = 4.8%
#: of the loss (seen: 1.4% on an AMD EPYC with AVX2 only, 3.3% on an Intel Xeon with AVX-512
#: without bfloat16 units, where oneDNN's float32-summing kernels and TensorFlow's own
#: bfloat16 ones round in other places).
BFLOAT16_DRIFT = math.sqrt(3 * 50) * 2.0 ** -8


def test_forced_choices_follow_todays_graph_bfloat16_within_one_ulp(tmp_path_factory):
    off = _losses(tmp_path_factory, graph_choices='off', use_bf16=True)
    # One bfloat16 ulp of each loss (8 significant bits: 2**(floor(log2 |loss|) - 7), 0.031
    # for a loss in [4, 8)). The first step (the same weights) agrees within one ulp; the
    # updates' bfloat16 roundings differ with the form and batch norm over a batch of 2
    # amplifies them: later steps are held to BFLOAT16_DRIFT.
    ulp = 2.0 ** (np.floor(np.log2(np.abs(off))) - 7)
    for forced in (BOTH, 'conv1x1_filter_matmul'):
        on = _losses(tmp_path_factory, graph_choices=forced, use_bf16=True)
        assert len(on) == 3
        assert abs(on[0] - off[0]) <= ulp[0], (forced, on, off, ulp)
        assert np.all(np.abs(on - off) <= BFLOAT16_DRIFT * np.abs(off)), (forced, on, off)
    # Per CPU feature: where oneDNN takes bfloat16 (avx512_bf16 or amx_bf16) a 1x1
    # convolution and the MatMul of its whole op are the same oneDNN GEMM and give the same
    # losses bit for bit (seen on an Intel Xeon with AMX); elsewhere TensorFlow's emulated
    # bfloat16 kernels round the two forms in other places. That the graph differs is
    # test_each_choice_forced_on_and_off_changes_only_the_ops.
    if not set(machine.cpu_flags()) & {'avx512_bf16', 'amx_bf16'}:
        assert np.any(_losses(tmp_path_factory, graph_choices=BOTH, use_bf16=True) != off)


def _graph_facts(**flags):
    graph = helpers.tiny_bench(**{**RESNET50, **flags}).build_graph().graph
    types = collections.Counter(op.type for op in graph.get_operations())
    with graph.as_default():
        variables = {v.name: v.shape.as_list() for v in tf1.global_variables()}
    return types, variables


def test_each_choice_forced_on_and_off_changes_only_the_ops(tmp_path_factory):
    # The graphs of the float32 runs, and two more built.
    off = _resnet50_run(tmp_path_factory, graph_choices='off')
    both = _resnet50_run(tmp_path_factory, saved=True, graph_choices=BOTH)
    off_types, off_vars = off['op_types'], off['variables']
    both_types, both_vars = both['op_types'], both['variables']
    one_types, one_vars = _graph_facts(graph_choices='conv1x1_matmul')
    filter_types, filter_vars = _graph_facts(graph_choices='conv1x1_filter_matmul')
    assert off_vars == one_vars == both_vars == filter_vars  # parameter counts unchanged
    assert filter_types['Conv2D'] == 53
    assert filter_types['Conv2DBackpropFilter'] == 53 - 36
    # 53 convolutions: 36 1x1 (30 stride 1, 6 stride 2), 16 3x3 and the 7x7 stem.
    assert off_types['Conv2D'] == 53
    assert one_types['Conv2D'] == 53 - 30
    assert both_types['Conv2D'] == 53 - 36
    assert off_types['StridedSlice'] + 6 == both_types['StridedSlice']


def test_a_checkpoint_saved_with_one_choice_loads_with_the_other(tmp_path_factory, tmp_path):
    first = _resnet50_run(tmp_path_factory, saved=True, graph_choices=BOTH)  # 3 steps, saved
    saved = helpers.read_checkpoint_values(first['checkpoint_path'])
    assert saved['cg/conv1/weights'].shape == (1, 1, 64, 256)  # the convolution's own shape
    train_dir = shutil.copytree(first['train_dir'], tmp_path / 'train')
    second = helpers.tiny_run(**{**RESNET50, 'num_batches': 1}, graph_choices='off',
                              train_dir=str(train_dir))
    assert second['global_step'] == 4  # restored from step 3, in the other graph


SHAPE = fast_paths.Conv1x1(16, 14, 14, 1024, 256, 1, 'NHWC', 'bfloat16')
SHORTCUT = fast_paths.Conv1x1(16, 56, 56, 256, 512, 2, 'NHWC', 'bfloat16')


def test_measured_mode_decides_per_shape():
    choices = graph_choices.Choices('measured', {
        (SHAPE, 'matmul'): 0.6, (SHAPE, 'filter_matmul'): 0.7,
        (SHORTCUT, 'matmul'): 1.2, (SHORTCUT, 'filter_matmul'): 0.85}, 'measured here')
    assert choices.decide(SHAPE) == 'matmul'  # the faster of the two forms
    assert choices.decide(SHORTCUT) == 'filter_matmul'  # 0.85 < 0.90
    assert choices.decide(SHAPE._replace(batch=8)) is None  # not measured: today's graph
    forced = graph_choices.Choices(frozenset({'shortcut_matmul'}), {}, '')
    assert forced.decide(SHORTCUT) == 'matmul' and forced.decide(SHAPE) is None
    both = graph_choices.Choices(frozenset({'shortcut_matmul', 'conv1x1_filter_matmul'}), {},
                                 '')
    assert both.decide(SHORTCUT) == 'matmul' and both.decide(SHAPE) == 'filter_matmul'
    assert graph_choices.describe(choices) == [
        'graph choices measured here (time vs today\'s form, forward + gradients): '
        'conv1x1_matmul on 16x14x14x1024->256 0.60x; shortcut_matmul on none; off '
        '16x56x56x256->512/2 1.20x; conv1x1_filter_matmul on 16x56x56x256->512/2 0.85x; off '
        '16x14x14x1024->256 0.70x']
    assert graph_choices.describe(graph_choices.Choices('off', {}, '')) == []


def test_a_choice_faster_by_less_than_its_spread_is_not_made():
    # 0.85x with a spread of 0.2 between the passes: faster by 15%, less than the spread.
    choices = graph_choices.Choices('measured', {
        (SHAPE, 'matmul'): 0.85, (SHAPE, 'filter_matmul'): 0.95,
        (SHORTCUT, 'matmul'): 0.7, (SHORTCUT, 'filter_matmul'): 1.0}, 'calibrated x',
        {(SHAPE, 'matmul'): 0.2, (SHORTCUT, 'matmul'): 0.1})
    assert choices.decide(SHAPE) is None
    assert choices.decide(SHORTCUT) == 'matmul'


def test_the_probe_measures_both_forms_and_is_recorded(tmp_path, capsys):
    small = [SHAPE._replace(batch=2, height=4, width=4, c_in=32, c_out=16),
             SHORTCUT._replace(batch=2, height=8, width=8, c_in=16, c_out=32, dtype='float32')]
    spreads = {}
    measured = graph_choices.measure(small, 1, 1, budget_secs=0.5, spreads=spreads)
    assert set(measured) == {(s, f) for s in small for f in graph_choices.FORMS}
    assert all(0 < f < 100 for f in measured.values())
    assert set(spreads) == set(measured) and all(v >= 0 for v in spreads.values())
    calls = []

    def fake(items, intra, inter):
        calls.append(list(items))
        return {i: (0.5, 0.05) for i in items}

    kw = dict(path=str(tmp_path / 'calibration.json'), cpu_model='cpu', tf_version='x',
              meter=helpers.FakeMeter(0.0))
    assert kernel_speed.choice_factors(['a', 'b'], (2, 1), fake, **kw) == ({}, '')
    assert calls == []  # a run never measures them by default
    got, when = kernel_speed.choice_factors(['a', 'b'], (2, 1), fake, measure_missing=True,
                                            what='two sites', secs=9, **kw)
    assert got == {'a': (0.5, 0.05), 'b': (0.5, 0.05)} and when == 'measured here'
    # Up to: the probes' budgets are caps (resnet20 at batch 8 announced 'about 16 s', took 2).
    assert capsys.readouterr().out == 'calibration: measuring two sites (up to 9 s)\n'
    got, when = kernel_speed.choice_factors(['a', 'c'], (2, 1), fake, measure_missing=True,
                                            **kw)
    assert calls == [['a', 'b'], ['c']]  # only the new shape measured
    got, when = kernel_speed.choice_factors(['a'], (2, 1), fake, **kw)
    assert when.startswith('calibrated 20') and when.endswith(' UTC')
    # Beside a burner: not kept; the recorded factors stay.
    busy = dict(kw, meter=helpers.FakeMeter(1.5))
    got, _ = kernel_speed.choice_factors(['a', 'd'], (2, 1), lambda items, *_: {
        i: (0.1, 0.0) for i in items}, refresh=True, **busy)
    assert got == {'a': (0.5, 0.05)}
    assert 'not kept, other processes used 1.50 of 2 cores (75%' in capsys.readouterr().err


def test_a_pinned_runs_choices_and_kernel_factors_are_its_own(tmp_path, monkeypatch):
    # A new user's pinned --calibrate (taskset -c 0, 2/2 threads) overwrote the unpinned run's
    # six 'graph choice|2 intra, 2 inter threads|...' factors, which that run then used: the
    # peak was kept apart ('2 threads on 1 CPU'), the choices and kernel factors were not.
    from tf_cnn_benchmarks.hardware import calibration, cpu_peak
    from tf_cnn_benchmarks.metrics import host_load
    kw = dict(path=str(tmp_path / 'calibration.json'), cpu_model='cpu', tf_version='x',
              meter=helpers.FakeMeter(0.0))
    monkeypatch.setattr(host_load, 'allowed_cpus', lambda: frozenset({0, 1}))
    whole = kernel_speed.choice_key('cpu', 'x', 2, 2, 'a')
    assert whole == 'cpu|tf x|graph choice|2 intra, 2 inter threads|a'  # as it always was
    assert kernel_speed.cache_key('cpu', 'x', 'bfloat16', 2, 2).split('|')[5] == (
        '2 intra, 2 inter threads')
    got, _ = kernel_speed.choice_factors(['a'], (2, 2), lambda items, *_: {
        i: (0.5, 0.0) for i in items}, measure_missing=True, **kw)
    assert got == {'a': (0.5, 0.0)}
    monkeypatch.setattr(host_load, 'allowed_cpus', lambda: frozenset({0}))  # `taskset -c 0`
    assert kernel_speed.choice_key('cpu', 'x', 2, 2, 'a') == (
        'cpu|tf x|graph choice|2 intra, 2 inter threads on 1 CPU|a')
    assert kernel_speed.cache_key('cpu', 'x', 'bfloat16', 2, 2).split('|')[5] == (
        '2 intra, 2 inter threads on 1 CPU')
    assert cpu_peak.threads_phrase(2) == '2 threads' + calibration.on_cpus(2)  # one rule
    assert kernel_speed.choice_factors(['a'], (2, 2), None, **kw) == ({}, '')  # not shared
    got, _ = kernel_speed.choice_factors(['a'], (2, 2), lambda items, *_: {
        i: (0.9, 0.0) for i in items}, measure_missing=True, **kw)
    assert got == {'a': (0.9, 0.0)}
    assert kernel_speed.choice_key('cpu', 'x', 1, 1, 'a').endswith('|1 intra, 1 inter threads|a')
    monkeypatch.setattr(host_load, 'allowed_cpus', lambda: frozenset({0, 1}))
    got, _ = kernel_speed.choice_factors(['a'], (2, 2), None, **kw)
    assert got == {'a': (0.5, 0.0)}  # the unpinned run's own, untouched by the pinned one


def test_the_header_names_the_measured_choices(monkeypatch, calibration_record):
    seen = []

    def fake(shapes, intra, inter):
        seen.extend(s for s in shapes if isinstance(s, fast_paths.Conv1x1))
        return {(s, form): (0.5 if getattr(s, 'stride', 2) == 1 else 1.5) if form == 'matmul'
                else 1.0 for s in shapes for form in graph_choices.forms_of(s)}

    monkeypatch.setattr(graph_choices, 'measure', fake)
    bench = helpers.tiny_bench(**{**RESNET50, 'batch_size': 3, 'calibrate': True})
    lines = bench.precision_lines()
    assert len(seen) == 15  # resnet50's distinct 1x1 shapes (at any batch and image size)
    # The header counts them in one line; the table (--print_graph_choices, the results JSON)
    # names each.
    # In places of the graph (prec58 item 6), not the 24 distinct shapes: 36 1x1 convolutions
    # (30 of stride 1, built as MatMuls), 33 ReLUs after a batch norm, 16 residual joins.
    assert lines[1].strip() == ('graph choices measured here: 30 of 85 places changed '
                                '(conv1x1_matmul 30)')
    table = graph_choices.table(bench.plan.graph_choices)
    assert table[0] == 'graph choices measured here (time vs today\'s form, forward + gradients):'
    assert any(line.startswith('  conv1x1_matmul on 3x8x8x64->256 0.50x') for line in table)
    types = [op.type for op in bench.build_graph().graph.get_operations()]
    assert types.count('Conv2D') == 53 - 30  # stride 1 measured faster, stride 2 not
    gpu_plan = SimpleNamespace(params=params.make_params(device='gpu'), training=True)
    assert graph_choices.resolve(gpu_plan, None).mode == 'off'  # GPU graphs unchanged


def test_a_first_run_builds_todays_graph_and_says_how_to_calibrate(monkeypatch,
                                                                   calibration_record):
    monkeypatch.setattr(graph_choices, 'measure', lambda *a, **k: pytest.fail('the probe ran'))
    bench = helpers.tiny_bench(**{**RESNET50, 'batch_size': 3})
    choices = graph_choices.resolve(bench.plan, bench.model)
    assert choices.factors == {} and choices.decide(SHAPE) is None
    note = ("graph choices: none (not calibrated; add --calibrate to this command: up to "
            "%.0f s)" % graph_choices.measure_secs(graph_choices.sites(bench.plan, bench.model)))
    assert graph_choices.describe(choices) == [note] and graph_choices.brief(choices) == [note]
    assert len(note) <= graph_choices.BRIEF_WIDTH


def test_a_host_measuring_no_choice_faster_builds_todays_graph_byte_for_byte(
        monkeypatch, calibration_record):
    # As on the AMD EPYC with AVX512_BF16 of docs/speed-choices.md: every factor 0.98-1.23x.
    monkeypatch.setattr(graph_choices, 'measure', lambda shapes, intra, inter: {
        (s, form): 0.98 for s in shapes for form in graph_choices.forms_of(s)})
    flags = {**RESNET50, 'batch_size': 3, 'use_bf16': True}
    measured = helpers.tiny_bench(**flags, calibrate=True).build_graph().graph.as_graph_def()
    off = helpers.tiny_bench(**flags, graph_choices='off').build_graph().graph.as_graph_def()
    assert measured.SerializeToString(deterministic=True) == off.SerializeToString(
        deterministic=True)


def test_the_probe_targets_run_their_ops():
    # Under Grappler the three targets (groups of pure ops) ran nothing and every factor was
    # 1.00x: each must run its convolutions or MatMuls.
    shape = SHAPE._replace(batch=2, height=4, width=4, c_in=32, c_out=16, dtype='float32')
    graph = tf.Graph()
    with graph.as_default():
        targets = graph_choices._forms(shape)
        init = tf1.global_variables_initializer()
    ran = []
    with tf1.Session(graph=graph, config=graph_choices.probe_config(1, 1)) as sess:
        sess.run(init)
        for target in targets:
            meta = tf1.RunMetadata()
            sess.run(target, options=tf1.RunOptions(trace_level=tf1.RunOptions.FULL_TRACE),
                     run_metadata=meta)
            ran.append({n.timeline_label.split(' = ')[-1].split('(')[0].lstrip('_')
                        .replace('MklNative', '').replace('Mkl', '')
                        for d in meta.step_stats.dev_stats for n in d.node_stats})
    assert {'Conv2D', 'Conv2DBackpropInput', 'Conv2DBackpropFilter'} <= ran[0]
    assert 'MatMul' in ran[1] and 'Conv2D' not in ran[1]
    assert {'Conv2D', 'Conv2DBackpropInput', 'MatMul'} <= ran[2]


def test_the_probe_computes_gradients_in_the_dtype_the_run_does():
    # Where the run computes bfloat16 convolution and MatMul gradients in float32 (a CPU without
    # AVX512_BF16: graph/precision.py), the probe must too: timed against bfloat16 Eigen
    # gradients it found every 1x1 shape 0.03-0.10x as a MatMul on an AMD EPYC with AVX2 only.
    shape = SHAPE._replace(batch=2, height=4, width=4, c_in=32, c_out=16)
    kinds = precision.float32_gradient_kinds(tf.bfloat16, 'cpu', (1, 1))
    graph = tf.Graph()
    with graph.as_default():
        graph_choices._forms(shape, (1, 1))
    dtypes = {op.type: op.get_attr('T') for op in graph.get_operations()
              if op.type in ('Conv2DBackpropInput', 'Conv2DBackpropFilter', 'MatMul')
              and 'gradients' in op.name}
    assert dtypes['Conv2DBackpropInput'] == (tf.float32 if 'conv' in kinds else tf.bfloat16)
    assert dtypes['MatMul'] == (tf.float32 if 'matmul' in kinds else tf.bfloat16)


def test_probe_bytes_counts_every_site_and_the_largest_sites_working_set():
    a = fast_paths.Conv1x1(2, 8, 8, 16, 32, 1, 'NHWC', 'float32')   # 2*64*(16 + 32) elements
    b = fast_paths.Conv1x1(2, 8, 8, 32, 64, 2, 'NHWC', 'float32')   # 2*64*32 + 2*16*64
    assert graph_choices.probe_bytes([a, b]) == 4 * (6144 + 6144 + 6 * 6144)
    assert graph_choices.probe_bytes([]) == 0


def test_a_probe_that_would_not_fit_is_not_run_and_says_so(monkeypatch, capsys,
                                                           calibration_record):
    # resnet50 at batch 512 under a 6 GB address-space limit: the probe ran minutes, then ran
    # out of memory before the memory check could say the run does not fit. Batch 7: no other
    # test caches factors of these shapes.
    small = (1 << 20, 'RLIMIT_AS')
    monkeypatch.setattr(graph_choices.host_memory, 'host_available_bytes', lambda: small)
    # The little memory from the start: the bench's own settled run (--refresh_peak) would
    # otherwise run the real probe on this host (seconds, and a measurement of this host).
    bench = helpers.tiny_bench(**{**RESNET50, 'batch_size': 7, 'refresh_peak': True})
    capsys.readouterr()  # its settled run's warning; the one asserted is resolve's below
    choices = graph_choices.resolve(bench.plan, bench.model, measure_fn=lambda *a: pytest.fail(
        'the probe ran'))
    assert choices.mode == graph_choice_flag.OFF and graph_choices.describe(choices) == []
    err = capsys.readouterr().err
    assert err.startswith('warning: graph choices not measured: the probe at batch 7 would hold '
                          'about ')
    assert 'of the 0.0 GiB this process can still allocate (RLIMIT_AS); building today\'s ' \
           'graph' in err
    # Factors already cached need no probe: with little memory they are still used.
    monkeypatch.setattr(graph_choices.host_memory, 'host_available_bytes', lambda: (1 << 40, ''))
    measured = graph_choices.resolve(bench.plan, bench.model, measure_fn=lambda shapes, *_: {
        (s, form): 0.5 for s in shapes for form in graph_choices.forms_of(s)})
    assert measured.when == 'measured here' and set(measured.factors.values()) == {0.5}
    monkeypatch.setattr(graph_choices.host_memory, 'host_available_bytes', lambda: small)
    again = helpers.tiny_bench(**{**RESNET50, 'batch_size': 7})
    cached = graph_choices.resolve(again.plan, again.model, measure_fn=lambda *a: pytest.fail(
        'the probe ran'))
    assert cached.mode == graph_choice_flag.MEASURED and cached.factors == measured.factors
    assert capsys.readouterr().err == ''


@pytest.mark.parametrize('flags, changed', [
    (dict(), False),  # float32: the float32 form changes nothing
    (dict(use_bf16=True), True),
])
def test_forced_choices_say_whether_they_change_a_site(flags, changed, capsys):
    """prec53 item 9: a forced choice that changes nothing is not shown as applied."""
    plan = helpers.tiny_bench(model='resnet20', data_name='cifar10', image_size=None,
                              graph_choices='relu_float32', **flags).plan
    counts = plan.graph_choices.forced_sites
    assert set(counts) == {'relu_float32'} and (counts['relu_float32'] > 0) == changed
    line = graph_choices.brief(plan.graph_choices)[0]
    err = capsys.readouterr().err
    if changed:
        assert line == ('graph choices forced (--graph_choices): relu_float32 %d places'
                        % counts['relu_float32'])
        assert 'change' not in err
    else:
        assert line == 'graph choices forced (--graph_choices): relu_float32 (no site)'
        assert 'warning: --graph_choices: relu_float32 changes nothing in this run' in err
    assert plan.graph_choices.summary()['forced_sites'] == counts


def test_forced_choices_of_a_forward_only_run_are_off():
    plan = helpers.tiny_bench(model='resnet20', data_name='cifar10', image_size=None,
                              graph_choices='relu_float32', use_bf16=True,
                              forward_only=True).plan
    assert plan.graph_choices.mode == graph_choice_flag.OFF
    assert graph_choices.brief(plan.graph_choices) == []
