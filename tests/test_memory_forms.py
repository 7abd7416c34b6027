"""The memory-bound graph choices (models/memory_forms.py, graph/memory_probe.py): each form
forced on and off builds the same function with the same variables and changes only the ops
it should; the measured mode decides per site from the probe's cached factors; the probe's
targets run their ops; the header names what was chosen."""

import collections
import shutil

import numpy as np
import pytest
import tensorflow as tf

from tf_cnn_benchmarks.graph import graph_choices, memory_probe, precision
from tf_cnn_benchmarks.hardware import layout_kernels
from tf_cnn_benchmarks.models import convnet_builder, fast_paths, memory_forms

import helpers

tf1 = tf.compat.v1
# Each site in one form: the XLA form of one kind with the float32 form of the other.
MIXED = ('residual_xla,relu_float32', 'relu_xla,residual_float32')


def _ran(meta) -> collections.Counter:
    """Op types the session ran (its partition graphs), oneDNN's names folded."""
    return collections.Counter(n.op.replace('_MklNative', '').replace('_Mkl', '')
                               for g in meta.partition_graphs for n in g.node)


def _net(form, data_format, dtype, float32_conv_gradients=False):
    """conv-BN-ReLU x (a relu site) read by a branch and a shortcut, two residual joins (the
    first's output read twice again): every gradient reaching a ReLU is a sum of two. Returns
    (loss, {variable: gradient}, op types built, op types run), float32 numpy."""
    rng = np.random.RandomState(0)
    images = rng.uniform(-1, 1, [2, 6, 6, 8]).astype(np.float32)
    if data_format == 'NCHW':
        images = images.transpose(0, 3, 1, 2)
    graph = tf.Graph()
    overrides = {'Conv2D': precision.FLOAT32_CONV_GRADIENT} if float32_conv_gradients else {}
    options = fast_paths.BuildOptions(choose=lambda site: form if form in
                                      graph_choices.forms_of(site) else None)
    with graph.as_default(), graph.gradient_override_map(overrides):
        cnn = convnet_builder.ConvNetBuilder(tf.cast(tf.constant(images), dtype), 8, True,
                                             data_format, dtype, options=options)
        cnn.use_batch_norm = True
        with tf1.variable_scope('cg'):
            x = cnn.conv(8, 3, 3, bias=None)
            y = cnn.residual(x, cnn.conv(8, 1, 1, input_layer=x, activation=None))
            z = cnn.residual(y, cnn.conv(8, 3, 3, input_layer=y, activation=None))
        loss = tf.reduce_sum(tf.square(tf.cast(z, tf.float32)))
        variables = tf1.trainable_variables()
        grads = tf.gradients(loss, variables)
        init = tf1.global_variables_initializer()
        built = collections.Counter(op.type for op in graph.get_operations())
        with tf1.Session() as sess:
            sess.run(init)
            meta = tf1.RunMetadata()
            value, grad_values = sess.run([loss, grads], options=tf1.RunOptions(
                output_partition_graphs=True), run_metadata=meta)
    return value, dict(zip((v.name for v in variables), grad_values)), built, _ran(meta)


@pytest.mark.parametrize('data_format', ['NHWC', 'NCHW'])
@pytest.mark.parametrize('dtype', [tf.float32, tf.bfloat16], ids=['fp32', 'bf16'])
@pytest.mark.parametrize('form', ['xla', 'float32'])
def test_each_form_computes_todays_function(data_format, dtype, form):
    if dtype == tf.bfloat16 and data_format == 'NCHW' and not layout_kernels.nchw_runs(dtype):
        pytest.skip('this CPU runs no bfloat16 NCHW kernels (oneDNN takes bfloat16 only with '
                    'AVX-512; a run refuses the flags: test_nchw_reduced_precision.py)')
    off_loss, off_grads, off_built, off_ran = _net(None, data_format, dtype)
    loss, grads, built, ran = _net(form, data_format, dtype)
    assert set(grads) == set(off_grads)  # the same variables
    # The forward pass rounds alike in every form: ReLU selects (it commutes with rounding),
    # the add rounds once to the dtype (Eigen's bfloat16 kernels add in float32 and round; XLA
    # and the float32 form too): the loss agrees to float32's last bits; bfloat16's bound
    # leaves one rounding (2**-8) should another CPU's kernels (oneDNN's) differ. The XLA
    # form's gradients round alike too (measured equal here). The float32 form sums a
    # gradient whose summand is its own float32 result before that one's rounding to
    # bfloat16 (memory_forms._before_cast): one rounding (2**-9 of the element) skipped, which
    # the batch norm's gradient (dy - mean(dy) - ...) amplifies where it cancels: measured up
    # to 0.0057 of a gradient's largest element (AMD EPYC, AVX2), bound 2**-6.
    rtol = 1e-6 if dtype == tf.float32 else 2.0 ** -8
    gradient_tol = 2.0 ** -6 if dtype != tf.float32 and form == 'float32' else rtol
    np.testing.assert_allclose(loss, off_loss, rtol=rtol)
    for name, grad in off_grads.items():
        np.testing.assert_allclose(grads[name], grad, rtol=0,
                                   atol=gradient_tol * np.abs(grad).max(), err_msg=name)
    if form == 'xla':
        # 3 ReLUs and their gradients (with both sums) in 6 clusters, but for a batch norm's
        # ReLU that Grappler's remapper fused into oneDNN's batch norm first (float32 on
        # every x86 CPU, bfloat16 with AVX-512): that one stays fused.
        fused = ran['FusedBatchNormEx']
        assert fused == off_ran['FusedBatchNormEx'] and off_ran['_XlaRun'] == 0
        assert ran['_XlaRun'] == 6 - fused
        assert ran['ReluGrad'] == ran['AddN'] == 0 < off_ran['ReluGrad']
    elif dtype == tf.float32:  # nothing to do in float32: today's graph
        assert built == off_built
    else:  # ReLU, add and sums in float32: casts in, casts out
        assert built['Cast'] > off_built['Cast']
        assert ran['ReluGrad'] == off_ran['ReluGrad'] == 3


def test_float32_form_reads_float32_convolution_gradients_before_their_cast():
    # Where convolution gradients are computed in float32 (precision.gradient_scope), the
    # float32 ReluGrad sums them before their cast to bfloat16: one rounding skipped, as in
    # test_each_form_computes_todays_function (measured up to 0.0045 of a gradient's largest
    # element here), bound 2**-6.
    off_loss, off_grads, _, _ = _net(None, 'NHWC', tf.bfloat16, True)
    graph = tf.Graph()
    options = fast_paths.BuildOptions(
        choose=lambda site: 'float32' if isinstance(site, memory_forms.Site) else None)
    with graph.as_default(), graph.gradient_override_map(
            {'Conv2D': precision.FLOAT32_CONV_GRADIENT}):
        cnn = convnet_builder.ConvNetBuilder(tf.zeros([2, 6, 6, 8], tf.bfloat16), 8, True,
                                             'NHWC', tf.bfloat16, options=options)
        cnn.use_batch_norm = True
        x = cnn.conv(8, 3, 3, bias=None)
        z = cnn.residual(x, cnn.conv(8, 1, 1, input_layer=x, activation=None))
        tf.gradients(tf.reduce_sum(tf.cast(z, tf.float32)), tf1.trainable_variables())
    relu_grads = [op for op in graph.get_operations() if op.type == 'ReluGrad']
    assert len(relu_grads) == 2 and all(op.get_attr('T') == tf.float32 for op in relu_grads)
    # The relu site's gradient: the residual's (a cast of a float32 ReluGrad) plus the
    # branch convolution's input gradient, read before its cast.
    summed = [op for op in relu_grads if op.inputs[0].op.type == 'AddN']
    assert summed and {t.op.type for t in summed[0].inputs[0].op.inputs} >= {
        'Conv2DBackpropInput'}
    loss, grads, _, _ = _net('float32', 'NHWC', tf.bfloat16, True)
    np.testing.assert_allclose(loss, off_loss, rtol=2.0 ** -8)
    for name, grad in off_grads.items():
        np.testing.assert_allclose(grads[name], grad, rtol=0,
                                   atol=2.0 ** -6 * np.abs(grad).max(), err_msg=name)


# resnet20 (CIFAR, v1: 9 residual joins, 10 ReLUs after a batch norm: the stem's and one per
# unit) at 8x8, batch 2, three steps.
RESNET20 = dict(model='resnet20', data_name='cifar10', image_size=8, batch_size=2,
                num_batches=3, init_learning_rate=1e-3, tf_random_seed=3)


def _resnet20_run(tmp_path_factory, saved=False, **flags) -> dict:
    """A RESNET20 run with `flags` (helpers.shared_run: once per test session): the tests of
    the losses, of the graph and of the checkpoint share it."""
    return helpers.shared_run(tmp_path_factory, 'memory_forms_resnet20', saved=saved,
                              **RESNET20, **flags)


@pytest.mark.parametrize('use_bf16', [False, True], ids=['fp32', 'bf16'])
def test_forced_forms_follow_todays_losses(tmp_path_factory, use_bf16):
    # The same roundings (test_each_form_computes_todays_function), so the same losses to
    # float32's last bits; bfloat16 within one ulp of each loss (8 significant bits).
    off = np.array(_resnet20_run(tmp_path_factory, graph_choices='off',
                                 use_bf16=use_bf16)['losses'])
    bound = 1e-6 * np.abs(off) if not use_bf16 else 2.0 ** (np.floor(np.log2(off)) - 7)
    # One run per precision (each takes seconds); every form's function is checked above.
    # bfloat16's forced run saves its checkpoint (test_a_checkpoint_saved_with_the_forms_...).
    for forced in (MIXED[:1] if use_bf16 else ('residual_xla,relu_xla',)):
        on = np.array(_resnet20_run(tmp_path_factory, saved=use_bf16, graph_choices=forced,
                                    use_bf16=use_bf16)['losses'])
        assert len(on) == 3 and np.all(np.abs(on - off) <= bound), (forced, on, off)


def _built(**flags):
    graph = helpers.tiny_bench(**{**RESNET20, **flags}).build_graph().graph
    with graph.as_default():
        variables = {v.name: v.shape.as_list() for v in tf1.global_variables()}
    return graph, variables


def _compiled(graph) -> collections.Counter:
    return collections.Counter(op.type for op in graph.get_operations()
                               if '_XlaCompile' in op.node_def.attr)


def test_each_choice_forced_on_and_off_changes_only_its_ops(tmp_path_factory):
    off = _resnet20_run(tmp_path_factory, graph_choices='off', use_bf16=True)  # its graph
    off_vars = off['variables']
    assert off['op_types']['Relu'] == 10 + 9 and not off['compiled']
    for forced, compiled in (
            # 9 joins: AddV2 and Relu; their gradients: 8 sums (the last join feeds only
            # the pool) and 9 ReluGrads.
            ('residual_xla', {'AddV2': 9, 'Relu': 9, 'AddN': 8, 'ReluGrad': 9}),
            # 10 ReLUs and ReluGrads; the stem's output feeds the first unit's shortcut and
            # convolution: its gradient's sum.
            ('relu_xla', {'Relu': 10, 'ReluGrad': 10, 'AddN': 1})):
        graph, variables = _built(graph_choices=forced, use_bf16=True)
        assert variables == off_vars, forced
        assert _compiled(graph) == compiled, forced
    for forced, relus in (('residual_float32', 9), ('relu_float32', 10)):
        graph, variables = _built(graph_choices=forced, use_bf16=True)
        assert variables == off_vars, forced
        in_float32 = collections.Counter(op.type for op in graph.get_operations()
                                         if op.type in ('Relu', 'ReluGrad')
                                         and op.get_attr('T') == tf.float32)
        assert in_float32 == {'Relu': relus, 'ReluGrad': relus}, forced
    # float32 graphs have no float32 form to build.
    fp32_off, _ = _built(graph_choices='off')
    fp32_forced, _ = _built(graph_choices='residual_float32,relu_float32')
    assert fp32_off.as_graph_def().SerializeToString(deterministic=True) == \
        fp32_forced.as_graph_def().SerializeToString(deterministic=True)


def test_xla_forms_leave_an_xla_compile_tower_whole():
    graph, _ = _built(graph_choices='residual_xla,relu_xla', xla_compile=True)
    scopes = {op.get_attr('_XlaScope') for op in graph.get_operations()
              if '_XlaScope' in op.node_def.attr}
    assert scopes == {b'tf_cnn_benchmarks_tower_0'}


def test_a_checkpoint_saved_with_the_forms_loads_without_them(tmp_path_factory, tmp_path):
    first = _resnet20_run(tmp_path_factory, saved=True, graph_choices=MIXED[0], use_bf16=True)
    train_dir = shutil.copytree(first['train_dir'], tmp_path / 'train')  # 3 steps, saved
    second = helpers.tiny_run(**{**RESNET20, 'num_batches': 1}, train_dir=str(train_dir),
                              use_bf16=True, graph_choices='off')
    assert second['global_step'] == 4  # restored from step 3


RESIDUAL = memory_forms.Site('residual', 16, 56, 56, 256, 'NHWC', 'bfloat16')
RELU = memory_forms.Site('relu', 16, 28, 28, 128, 'NHWC', 'bfloat16')


def test_measured_mode_decides_per_site():
    choices = graph_choices.Choices('measured', {
        (RESIDUAL, 'xla'): 0.71, (RESIDUAL, 'float32'): 2.5,
        (RELU, 'xla'): 0.95, (RELU, 'float32'): 0.8}, 'measured here')
    assert choices.decide(RESIDUAL) == 'xla'
    assert choices.decide(RELU) == 'float32'  # 0.80 < 0.90, the faster of the two
    assert choices.decide(RELU._replace(batch=8)) is None  # not measured: today's ops
    assert graph_choices.describe(choices) == [
        "graph choices measured here (time vs today's form, forward + gradients): "
        'relu_xla on none; off 16x28x28x128 0.95x; residual_xla on 16x56x56x256 0.71x; '
        'relu_float32 on 16x28x28x128 0.80x; residual_float32 on none; off 16x56x56x256 2.50x']
    forced = graph_choices.Choices(frozenset({'residual_xla', 'residual_float32'}), {}, '')
    assert forced.decide(RESIDUAL) == 'xla' and forced.decide(RELU) is None
    fp32 = RESIDUAL._replace(dtype='float32')
    assert graph_choices.forms_of(fp32) == ('xla',)
    assert graph_choices.Choices(frozenset({'residual_float32'}), {}, '').decide(fp32) is None


def test_the_header_names_the_measured_forms_and_the_graph_has_them(monkeypatch,
                                                                    calibration_record):
    def fake(sites, intra, inter):
        return {(s, form): 0.5 if (getattr(s, 'kind', '') == 'residual' and form == 'xla')
                else 1.5 for s in sites for form in graph_choices.forms_of(s)}

    monkeypatch.setattr(graph_choices, 'measure', fake)
    # Batch 3: factors are kept per shape (in this process too); the other tests' shapes
    # must not meet these.
    bench = helpers.tiny_bench(**{**RESNET20, 'batch_size': 3}, use_bf16=True, calibrate=True,
                               print_graph_choices=True)  # the header's full table
    text = ' '.join(bench.precision_lines())
    # resnet20 at 8x8: joins at 8x8x16, 4x4x32 and 2x2x64, each shape at 3 of the 9 places.
    assert ('residual_xla on 3x8x8x16 0.50x (3 places), 3x4x4x32 0.50x (3 places), 3x2x2x64 '
            '0.50x (3 places)') in ' '.join(text.split())
    assert 'relu_xla on none' in text and 'relu_float32 on none' in text
    assert _compiled(bench.build_graph().graph)['Relu'] == 9


@pytest.mark.parametrize('use_bf16', [False, True], ids=['fp32', 'bf16'])
def test_no_form_measured_faster_builds_todays_graph_byte_for_byte(monkeypatch, use_bf16,
                                                                    calibration_record):
    monkeypatch.setattr(graph_choices, 'measure', lambda sites, intra, inter: {
        (s, form): 0.95 for s in sites for form in graph_choices.forms_of(s)})
    measured, _ = _built(use_bf16=use_bf16, batch_size=4, calibrate=True)  # this test's shapes
    off, _ = _built(use_bf16=use_bf16, batch_size=4, graph_choices='off')
    assert measured.as_graph_def().SerializeToString(deterministic=True) == \
        off.as_graph_def().SerializeToString(deterministic=True)


@pytest.mark.parametrize('dtype', ['float32', 'bfloat16'])
def test_the_probe_targets_run_their_ops_and_measure_every_form(dtype):
    # With Grappler on (the run's rewrites), each target must run its ops: today's the
    # ReLU gradient (and, for a join, the add and the sum), XLA's its clusters instead.
    sites = [memory_forms.Site(kind, 2, 4, 4, 8, 'NHWC', dtype) for kind in memory_forms.KINDS]
    f32 = memory_probe.gradients_from_float32(dtype, (1, 1))
    for site in sites:
        graph = tf.Graph()
        with graph.as_default():
            targets = [memory_probe.site_target(site, form, f32)
                       for form in (None,) + site.forms()]
            init = tf1.global_variables_initializer()
        with tf1.Session(graph=graph, config=memory_probe.probe_config(1, 1)) as sess:
            sess.run(init)
            ran = []
            for target in targets:
                meta = tf1.RunMetadata()
                sess.run(target, options=tf1.RunOptions(trace_level=tf1.RunOptions.FULL_TRACE),
                         run_metadata=meta)
                ran.append({memory_probe.op_type(n) for d in meta.step_stats.dev_stats
                            for n in d.node_stats})
                assert memory_probe.own_secs(meta.step_stats) > 0
        assert 'ReluGrad' in ran[0] and '_XlaRun' not in ran[0]
        if site.kind == 'residual':
            assert {'AddV2', 'AddN'} <= ran[0]
        assert '_XlaRun' in ran[1] and not {'ReluGrad', 'AddN'} & ran[1]
        if dtype == 'bfloat16':
            assert {'Cast', 'ReluGrad'} <= ran[2]
    factors = memory_probe.measure(sites, 1, 1, budget_secs=0.5)
    assert set(factors) == {(s, f) for s in sites for f in s.forms()}
    assert all(0 < f < 100 for f in factors.values())
