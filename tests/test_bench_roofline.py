"""bench/bench_roofline.py: which ops a training step needs, and the limit's arithmetic."""

import collections
import os
import subprocess
import sys

import pytest

import checkout
import helpers

bench_roofline = checkout.load_bench('bench_roofline')


def _collected(**overrides):
    """(Counter of the needed ops' types, Counter of every such op in the graph) of a tiny
    training graph, batch 2."""
    info = helpers.tiny_bench(batch_size=2, **overrides).build_graph()
    needed = bench_roofline.collect(info.graph, info.train_op)
    types = collections.Counter()
    for spec, count in needed.items():
        types[spec.type] += count
    built = collections.Counter(op.type for op in info.graph.get_operations()
                                if op.type in bench_roofline.CONV_TYPES
                                + bench_roofline.MATMUL_TYPES)
    return needed, types, built


def test_trivial_counts_only_the_matmuls_the_step_needs():
    # trivial: flatten -> affine(1) -> affine(4096) -> classifier: 3 forward MatMuls,
    # 3 weight gradients (x^T dy) and the input gradients (dy W^T) of the classifier and of
    # affine(4096). affine(1)'s input gradient flows to the images, which nothing trains:
    # tf.gradients builds it (9 MatMuls in the graph) but the train op does not need it.
    needed, types, built = _collected()
    assert types == {'MatMul': 8}
    assert built == {'MatMul': 9}
    out_shapes = {spec.out_shape for spec in needed}
    assert (2, 16 * 16 * 3) not in out_shapes  # the images' gradient
    assert (16 * 16 * 3, 1) in out_shapes  # affine(1)'s weight gradient


def test_lenet_first_conv_has_no_input_gradient():
    # lenet: conv(32) -> pool -> conv(64) -> pool -> affine(512) -> classifier, 28x28x3 images.
    needed, types, built = _collected(model='lenet', image_size=28)
    assert types == {'Conv2D': 2, 'Conv2DBackpropFilter': 2, 'Conv2DBackpropInput': 1,
                     'MatMul': 6}
    assert built['Conv2DBackpropInput'] == 2  # the first conv's exists, unused
    (grad_input,) = [s for s in needed if s.type == 'Conv2DBackpropInput']
    assert grad_input.out_shape == (2, 14, 14, 32)  # the second conv's input
    name, _, _, value = grad_input.inputs[0]
    assert (name, value) == ('input_sizes', (2, 14, 14, 32))  # a size: kept as its value
    # 2 x output elements x (5 x 5 x input channels) for the forward convolutions
    forward = sorted(bench_roofline.flops(s) for s in needed if s.type == 'Conv2D')
    assert forward == [2 * 2 * 28 * 28 * 32 * 25 * 3, 2 * 2 * 14 * 14 * 64 * 25 * 32]


def test_limit_is_the_sum_of_count_times_seconds():
    spec = lambda kind, n: bench_roofline.OpSpec(
        kind, (('a', (n, 4), 'float32', None), ('b', (4, 3), 'float32', None)),
        (('transpose_a', False),), (n, 3))
    a, b, c = spec('MatMul', 2), spec('MatMul', 5), spec('BatchMatMulV2', 7)
    result = bench_roofline.limit({a: 3, b: 1, c: 2}, {a: 0.5, b: 0.25, c: 1.0})
    assert result['secs'] == pytest.approx(3 * 0.5 + 0.25 + 2 * 1.0)
    assert result['by_type']['MatMul'] == {'secs': pytest.approx(1.75), 'ops': 4,
                                           'distinct': 2, 'flops': 3 * 48 + 120}
    assert result['by_type']['BatchMatMulV2']['ops'] == 2


def test_standalone_timing_runs_every_needed_op():
    needed, _, _ = _collected()
    secs = {spec: bench_roofline.standalone_secs(spec, reps=1, warmup=1)['secs']
            for spec in needed}
    result = bench_roofline.limit(needed, secs)
    assert result['secs'] > 0
    assert all(t >= 0 for t in secs.values())


@pytest.mark.parametrize('argv,text', [
    (['--model=nosuch'], "unknown --model='nosuch'"),
    (['--model=resnet20'], "this script's --data_name=cifar10"),
    (['--original_dir=/nonexistent'], 'no tf_cnn_benchmarks.py in --original_dir=/nonexistent'),
    (['--use_bf16', '--use_fp16'], '--use_bf16 and --use_fp16 exclude each other'),
    (['--batch_size=0'], '--batch_size, --reps and --steps must be >= 1'),
    (['--bogus'], 'unrecognized arguments: --bogus'),
])
def test_bad_arguments_are_one_usage_line(argv, text, capsys):
    with pytest.raises(SystemExit) as e:
        bench_roofline.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert text in err
    assert err.count('\n') == 1 and err.endswith('; see --help\n')  # no usage block


def test_no_bench_script_or_tool_touches_sys_path():
    folders = [os.path.join(checkout.REPO, d) for d in ('bench', 'tools')]
    touching = [os.path.join(folder, name) for folder in folders for name in os.listdir(folder)
                if name.endswith('.py')
                and 'sys.path' in open(os.path.join(folder, name), encoding='utf-8').read()]
    assert touching == []


@pytest.mark.cli
def test_a_bench_script_runs_as_a_module_of_the_checkout():
    proc = subprocess.run([sys.executable, '-m', 'bench.bench_roofline', '--help'],
                          cwd=checkout.REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    first = proc.stdout.splitlines()[0]
    assert first.startswith('usage: ') and 'bench_roofline' in first, proc.stdout[:500]


def test_bf16_forward_only_collects_forward_ops_in_bfloat16():
    # lenet forward only: 2 Conv2D and 2 MatMuls (affine(512), classifier), no gradients; every
    # standalone op is timed in the run's dtype, so the limit is bfloat16's.
    info = helpers.tiny_bench(model='lenet', image_size=28, batch_size=2, use_bf16=True,
                              forward_only=True).build_graph()
    needed = bench_roofline.collect(info.graph, info.train_op)
    types = collections.Counter()
    for spec, count in needed.items():
        types[spec.type] += count
    assert types == {'Conv2D': 2, 'MatMul': 2}
    dtypes = {dtype for spec in needed for _, _, dtype, value in spec.inputs if value is None}
    assert dtypes == {'bfloat16'}


def test_bf16_has_no_original_row(capsys):
    with pytest.raises(SystemExit) as e:
        bench_roofline.main(['--use_bf16', '--original_dir=/tmp'])
    assert e.value.code == 2
    assert 'the original has no bfloat16' in capsys.readouterr().err


roofline_forms = checkout.load_bench('roofline_forms')


def _conv_spec(kind, n=2, h=8, w=8, c_in=16, c_out=32, k=1, stride=1):
    """The OpSpec of a NHWC convolution op of `kind` on [n, h, w, c_in] (output h / stride)."""
    out = (n, h // stride, w // stride, c_out)
    attrs = (('data_format', 'NHWC'), ('dilations', (1, 1, 1, 1)), ('explicit_paddings', ()),
             ('padding', 'VALID' if k == 1 else 'SAME'), ('strides', (1, stride, stride, 1)),
             ('use_cudnn_on_gpu', True))
    x = ('input', (n, h, w, c_in), 'bfloat16', None)
    f = ('filter', (k, k, c_in, c_out), 'bfloat16', None)
    dy = ('out_backprop', out, 'bfloat16', None)
    if kind == 'Conv2D':
        return bench_roofline.OpSpec(kind, (x, f), attrs, out)
    if kind == 'Conv2DBackpropInput':
        return bench_roofline.OpSpec(kind, (('input_sizes', (4,), 'int32', (n, h, w, c_in)), f,
                                            dy), attrs, (n, h, w, c_in))
    return bench_roofline.OpSpec(kind, (x, ('filter_sizes', (4,), 'int32', (k, k, c_in, c_out)),
                                        dy), attrs, (k, k, c_in, c_out))


@pytest.mark.parametrize('kind, transposes, out', [
    ('Conv2D', (False, False), (2 * 4 * 4, 32)),
    ('Conv2DBackpropInput', (False, True), (2 * 4 * 4, 16)),
    ('Conv2DBackpropFilter', (True, False), (16, 32)),
])
def test_a_1x1_convolution_has_a_matmul_form_of_the_same_flops(kind, transposes, out):
    spec = _conv_spec(kind, stride=2)  # stride 2: M = 2 x 4 x 4 output positions
    (form,) = roofline_forms.other_forms(spec, bench_roofline.OpSpec)
    assert form.type == 'MatMul' and form.out_shape == out
    assert dict(form.attrs) == {'transpose_a': transposes[0], 'transpose_b': transposes[1]}
    assert bench_roofline.flops(form) == bench_roofline.flops(spec) == 2 * 32 * 16 * 32
    # ... and the MatMul's own other form is a 1x1 convolution of the same op kind and flops.
    (back,) = roofline_forms.other_forms(form, bench_roofline.OpSpec)
    assert back.type == kind and bench_roofline.flops(back) == bench_roofline.flops(spec)
    assert roofline_forms.other_forms(_conv_spec(kind, k=3), bench_roofline.OpSpec) == []


def test_every_form_runs_standalone():
    spec = _conv_spec('Conv2DBackpropFilter')
    forms = roofline_forms.other_forms(spec, bench_roofline.OpSpec)
    forms += roofline_forms.other_forms(forms[0], bench_roofline.OpSpec)
    for s in [spec] + forms:
        assert bench_roofline.standalone_secs(s, reps=1, warmup=1)['secs'] >= 0


def _choice_graph_specs(decide):
    """(Counter of big OpSpecs, needed ops) of a small training graph of 1x1 convolutions
    (stride 1 and 2) and a 3x3, built with `decide` as the graph choice."""
    import tensorflow as tf

    from tf_cnn_benchmarks.models import convnet_builder, fast_paths
    graph = tf.Graph()
    with graph.as_default():
        cnn = convnet_builder.ConvNetBuilder(tf.zeros([2, 8, 8, 16], tf.bfloat16), 16, True,
                                             dtype=tf.bfloat16,
                                             options=fast_paths.BuildOptions(choose=decide))
        cnn.conv(32, 1, 1)
        cnn.conv(32, 3, 3)
        cnn.conv(64, 1, 1, 2, 2, mode='SAME_RESNET')
        loss = tf.reduce_sum(tf.cast(cnn.top_layer, tf.float32))
        train_op = tf.group(*[v.assign_sub(g) for v, g in zip(
            tf.compat.v1.trainable_variables(),
            tf.gradients(loss, tf.compat.v1.trainable_variables()))])
    return (bench_roofline.collect(graph, train_op),
            bench_roofline.needed_ops(train_op))


def test_no_reformulation_moves_the_stricter_limit():
    # Fake timings where a MatMul runs 3x a convolution's FLOP/s: the old limit of a graph
    # made of MatMuls is below the convolutions graph's (its fraction could pass 1 by the
    # choice alone); the stricter limit's compute is the same for both graphs.
    def secs(spec):
        return bench_roofline.flops(spec) / (3e9 if spec.type == 'MatMul' else 1e9)

    results = []
    for decide in (None, lambda shape: 'matmul'):
        counts, _ = _choice_graph_specs(decide)
        forms = {s: roofline_forms.other_forms(s, bench_roofline.OpSpec) for s in counts}
        timed = {s: secs(s) for s in list(counts) + [f for fs in forms.values() for f in fs]}
        memory = {'secs': 0.0, 'bytes': 0, 'by_type': {}}
        results.append((bench_roofline.limit(counts, timed)['secs'],
                        bench_roofline.strict_limit(counts, timed, forms, memory)))
    (old_conv, strict_conv), (old_mm, strict_mm) = results
    assert old_mm < 0.95 * old_conv
    assert strict_conv['compute']['secs'] == pytest.approx(strict_mm['compute']['secs'])
    # 2 1x1 convolutions x 3 ops, less the first one's input gradient (nothing needs it).
    assert strict_conv['other_form_ops'] == 5
    assert strict_mm['other_form_ops'] == 0


def test_memory_bound_ops_count_their_bytes():
    import tensorflow as tf
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.Variable(tf.zeros([1000])).read_value()  # free: a read
        y = tf.nn.relu(x)  # 4000 bytes in; its output stays in the chain (one fused pass)
        z = tf.cast(y + x, tf.bfloat16)  # AddV2: x's 4000 in; Cast: 2000 out
        w = tf.square(z)  # not a chain's op: reads 2000, writes 2000
        train_op = tf.group(w)
    rows = roofline_forms.memory_ops(bench_roofline.needed_ops(train_op),
                                     bench_roofline.CONV_TYPES)
    assert sorted(rows) == [('AddV2', 4000), ('Cast', 2000), ('Relu', 4000),
                            ('Square', 4000)]
    bandwidth = {1000: 4e9, 4000: 2e9}  # operand bytes -> bytes/sec
    assert roofline_forms.bandwidth_for(11999, bandwidth) == 4e9
    assert roofline_forms.bandwidth_for(12000, bandwidth) == 2e9
    assert roofline_forms.bandwidth_for(10, bandwidth) == 4e9
    memory = roofline_forms.memory_secs(rows, bandwidth)
    assert memory['bytes'] == 14000
    assert memory['secs'] == pytest.approx(14000 / 4e9)
    measured = roofline_forms.measure_bandwidth(1, sizes=(1 << 16, 1 << 18), reps=2)
    assert set(measured) == {1 << 16, 1 << 18} and all(v > 1e8 for v in measured.values())
