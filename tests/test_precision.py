"""Reduced precision: loss-scale arithmetic, skipped updates, fp16/bf16 training against fp32,
variable dtypes, every model in bf16 and fp16, bf16 checkpoints in fp32 eval, flag rules."""

import functools
import math

import numpy as np
import pytest
import tensorflow as tf

from tf_cnn_benchmarks import benchmark_cnn
from tf_cnn_benchmarks.graph import precision, precision_block, tower
from tf_cnn_benchmarks.hardware import kernel_speed
from tf_cnn_benchmarks.lifecycle import training_loop
from tf_cnn_benchmarks.models import model_config
from tf_cnn_benchmarks.params import ParamsError, make_params, validate_params

import helpers

tf1 = tf.compat.v1

# Overflows float16 on the first step: the logits' gradient of a batch of 2 is ~0.5, times 2**20
# is ~5e5 > 65504 (float16's largest value); four halvings later (2**16) it fits.
OVERFLOWING_SCALE = 2.0 ** 20


@pytest.fixture(autouse=True)
def _imagenet_classes(monkeypatch):
    """This file's tiny runs keep ImageNet's 1001 classes (not helpers.TINY_CLASSES): the
    precision a run's kernels take follows its largest matmul, the trivial model's 4096 x 1001
    classifier, and OVERFLOWING_SCALE its logits' gradient."""
    monkeypatch.setattr(helpers, 'TINY_CLASSES', None)


_params = functools.partial(helpers.tiny_params, batch_size=2)
_run = functools.partial(helpers.tiny_run, batch_size=2)


# --- Pure arithmetic.

def test_scale_halves_on_non_finite_and_resets_the_count():
    assert precision.next_loss_scale(128.0, 5, False, 1000) == (64.0, 0)
    assert precision.next_loss_scale(1.0, 0, False, 1000) == (precision.MIN_LOSS_SCALE, 0)


def test_scale_doubles_after_n_finite_steps():
    scale, good = 128.0, 0
    history = []
    for _ in range(7):
        scale, good = precision.next_loss_scale(scale, good, True, 3)
        history.append(scale)
    # Doubles on the 3rd and 6th finite step.
    assert history == [128, 128, 256, 256, 256, 512, 512]
    assert precision.next_loss_scale(precision.MAX_LOSS_SCALE, 0, True, 1) == (
        precision.MAX_LOSS_SCALE, 0)


def test_graph_update_matches_the_pure_function():
    finite_steps = [True, True, False, True, True, True, False, False, True]
    graph = tf.Graph()
    with graph.as_default():
        scaler = precision.LossScaler(initial_scale=64.0, dynamic=True, inc_every_n=2)
        finite = tf1.placeholder(tf.bool, [])
        update = scaler.update_op(finite)
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            expected = (64.0, 0)
            for value in finite_steps:
                sess.run(update, {finite: value})
                expected = precision.next_loss_scale(*expected, value, 2)
                got = sess.run([scaler.scale_var, scaler.good_steps_var])
                assert (float(got[0]), int(got[1])) == expected


def test_all_finite_sees_inf_and_nan():
    graph = tf.Graph()
    with graph.as_default(), tf1.Session() as sess:
        ok = precision.all_finite([tf.ones([3]), tf.zeros([2, 2])])
        inf = precision.all_finite([tf.ones([3]), tf.constant([1.0, np.inf])])
        nan = precision.all_finite([tf.constant([np.nan], tf.float16)])
        assert sess.run([ok, inf, nan]) == [True, False, False]


def test_clipping_keeps_non_finite_gradients_for_the_overflow_check():
    graph = tf.Graph()
    with graph.as_default(), tf1.Session() as sess:
        w = tf1.get_variable('w', initializer=tf.constant([1.0, 2.0]))
        loss = tf.reduce_sum(w * tf.constant([np.inf, 3.0]))
        kept = tower.build_gradients(loss, [w], num_towers=1, gradient_clip=1.0,
                                     keep_non_finite=True)[0][0]
        clipped = tower.build_gradients(loss, [w], num_towers=1, gradient_clip=1.0)[0][0]
        sess.run(tf1.global_variables_initializer())
        assert sess.run(kept).tolist() == [np.inf, 1.0]
        assert sess.run(clipped).tolist() == [1.0, 1.0]


def test_default_static_loss_scale_is_128():
    assert precision.initial_loss_scale(make_params(use_fp16=True)) == 128.0
    assert precision.initial_loss_scale(make_params(use_fp16=True, fp16_loss_scale=8.0)) == 8.0
    assert precision.initial_loss_scale(make_params(use_bf16=True)) == 1.0
    assert precision.LossScaler.from_params(make_params(use_bf16=True)) is None


@pytest.mark.parametrize('transpose_a, transpose_b', [(False, False), (False, True),
                                                      (True, False), (True, True)])
def test_float32_gradients_of_emulated_ops_match_float32_math(transpose_a, transpose_b):
    rng = np.random.RandomState(0)
    a_val = rng.randn(3, 4).astype(np.float32)
    b_val = rng.randn(4, 5).astype(np.float32)
    a_val, b_val = (a_val.T if transpose_a else a_val), (b_val.T if transpose_b else b_val)
    values = [a_val, b_val, rng.randn(2, 6, 6, 3), rng.randn(3, 3, 3, 4)]
    results = []
    for dtype in (tf.float32, tf.bfloat16):  # the float32 reference, then the override
        graph = tf.Graph()
        with graph.as_default(), tf1.Session() as sess:
            # The same (bfloat16-representable) values in both runs.
            inputs = [tf.cast(tf.constant(v, tf.bfloat16), dtype) for v in values]
            with graph.gradient_override_map({'Conv2D': precision.FLOAT32_CONV_GRADIENT,
                                              'MatMul': precision.FLOAT32_MATMUL_GRADIENT}
                                             if dtype == tf.bfloat16 else {}):
                c = tf.matmul(inputs[0], inputs[1], transpose_a=transpose_a,
                              transpose_b=transpose_b)
                y = tf.nn.conv2d(inputs[2], inputs[3], [1, 2, 2, 1], 'SAME')
            loss = (tf.reduce_sum(tf.cast(c, tf.float32) ** 2) +
                    tf.reduce_sum(tf.cast(y, tf.float32) ** 2))
            grads = tf1.gradients(loss, inputs)
            assert [g.dtype for g in grads] == [dtype] * 4
            results.append(sess.run([tf.cast(g, tf.float32) for g in grads]))
    for reference, float32 in zip(*results):
        # Only the forward outputs and the returned gradients are rounded to bfloat16.
        np.testing.assert_allclose(float32, reference, rtol=0.03,
                                   atol=0.03 * np.abs(reference).max())


def test_float32_norm_and_pool_only_for_float16_without_float16_arithmetic(monkeypatch):
    monkeypatch.setattr(precision, 'cpu_flags', lambda path='/proc/cpuinfo': {'avx512_bf16'})
    assert precision.float32_norm_and_pool(tf.float16, 'cpu')
    assert not precision.float32_norm_and_pool(tf.float16, 'gpu')  # GPU graphs unchanged
    assert not precision.float32_norm_and_pool(tf.bfloat16, 'cpu')  # its oneDNN kernels
    assert not precision.float32_norm_and_pool(tf.float32, 'cpu')
    monkeypatch.setattr(precision, 'cpu_flags', lambda path='/proc/cpuinfo': {'avx512_fp16'})
    assert not precision.float32_norm_and_pool(tf.float16, 'cpu')


def test_gradient_scope_applies_only_where_the_dtype_is_emulated(monkeypatch):
    graph = tf.Graph()
    monkeypatch.setattr(precision, 'cpu_flags', lambda path='/proc/cpuinfo': {'avx2'})
    with graph.as_default():
        with precision.gradient_scope(tf.bfloat16, 'cpu'):
            emulated = tf.matmul(tf.ones([2, 2], tf.bfloat16), tf.ones([2, 2], tf.bfloat16))
        monkeypatch.setattr(precision, 'cpu_flags', lambda path='/proc/cpuinfo': {'amx_bf16'})
        monkeypatch.setattr(kernel_speed, 'factors', lambda dtype, threads=(0, 0), **kw: {
            'conv': 0.5, 'conv_gradients': 0.5, 'matmul': 0.5, 'matmul_gradients': 0.5})
        with precision.gradient_scope(tf.bfloat16, 'cpu'):
            native = tf.matmul(tf.ones([2, 2], tf.bfloat16), tf.ones([2, 2], tf.bfloat16))
    assert emulated.op.get_attr('_gradient_op_type') == precision.FLOAT32_MATMUL_GRADIENT.encode()
    assert '_gradient_op_type' not in native.op.node_def.attr
    assert not precision.emulated(tf.float32, 'cpu')


# --- Skipping non-finite updates in the training graph.

def _trace_steps(num_steps, **kwargs):
    """Per step: (loss scale used, variables changed by the step, global step after it).

    100 classes instead of ImageNet's 1001: the trivial model's last layer (4096 x classes) in
    float16 is most of a step's time on a CPU (0.5 CPU s a step at 1001); at 100 the same
    scales overflow (the first good step is the 5th on one tower, the 4th on two, as at
    1001)."""
    bench = benchmark_cnn.BenchmarkCNN(_params(
        use_fp16=True, fp16_enable_auto_loss_scale=True, fp16_loss_scale=OVERFLOWING_SCALE,
        fp16_inc_loss_scale_every_n=2, num_classes=100, **kwargs), gpus=0)
    info = bench.build_graph()
    trace = []
    with info.graph.as_default(), bench.create_session(info) as sess:
        bench.initialize(sess, info)
        scale = [v for v in tf1.global_variables() if v.op.name == 'loss_scale/scale'][0]
        state = tf1.trainable_variables() + [v for v in tf1.global_variables()
                                             if 'Momentum' in v.op.name]
        for _ in range(num_steps):
            before, used = sess.run(state), float(sess.run(scale))
            sess.run(info.train_op)
            changed = any(not np.array_equal(a, b) for a, b in zip(before, sess.run(state)))
            trace.append((used, changed, int(sess.run(info.global_step))))
    return trace


@pytest.mark.parametrize('kwargs', [
    dict(),
    dict(variable_update='replicated', num_gpus=2, optimizer='momentum'),
    dict(variable_update='independent', num_gpus=2),
], ids=['parameter_server', 'replicated', 'independent'])
def test_overflowing_steps_are_skipped_and_the_scale_halves(kwargs):
    trace = _trace_steps(8, **kwargs)
    scales = [s for s, _, _ in trace]
    changed = [c for _, c, _ in trace]
    # 2**20 .. 2**18 overflow (skipped, variables and momentum untouched); the first scale
    # that fits applies; after 2 good steps in a row the scale doubles.
    first_good = changed.index(True)
    assert scales[:first_good + 1] == [OVERFLOWING_SCALE / 2 ** i for i in range(first_good + 1)]
    assert 2 <= first_good <= 4 and not any(changed[:first_good])
    assert changed[first_good + 1] and scales[first_good + 1] == scales[first_good]
    assert scales[first_good + 2] == 2 * scales[first_good]
    # The global step counts skipped steps too.
    assert [g for _, _, g in trace] == list(range(1, 9))


# --- Reduced precision against float32.

# 100 classes: the last layer's float16 product at 1001 is most of a step's time on a CPU; the
# losses (ln(100) at the start) still fall by 1.28 in the three steps.
GOLDEN = dict(num_batches=3, init_learning_rate=0.002, image_size=32, num_classes=100)


@functools.lru_cache(maxsize=1)
def _float32_losses():
    return tuple(_run(**GOLDEN)['losses'])


@pytest.mark.parametrize('kwargs', [
    dict(use_bf16=True),
    dict(use_fp16=True),
    dict(use_fp16=True, fp16_enable_auto_loss_scale=True),
    dict(use_fp16=True, fp16_vars=True),
], ids=['bf16', 'fp16', 'fp16_auto', 'fp16_vars'])
def test_reduced_precision_losses_track_float32(kwargs):
    # The trivial model on synthetic data (one fixed batch), learning fast enough that the
    # three losses differ.
    fp32 = _float32_losses()
    low = _run(**GOLDEN, **kwargs)['losses']
    assert fp32[2] < fp32[0] - 0.05
    np.testing.assert_allclose(low, fp32, rtol=1e-2)


@pytest.mark.parametrize('kwargs, dtype', [
    (dict(), tf.float32), (dict(use_bf16=True), tf.float32), (dict(use_fp16=True), tf.float32),
    (dict(use_fp16=True, fp16_vars=True), tf.float16),
])
def test_variables_stay_float32_unless_fp16_vars(kwargs, dtype):
    bench = benchmark_cnn.BenchmarkCNN(_params(model='resnet20', data_name='cifar10', **kwargs),
                                       gpus=0)
    info = bench.build_graph()
    with info.graph.as_default():
        variables = tf1.global_variables()
    kernels = [v for v in variables if v.op.name.endswith(('/weights', '/biases'))]
    batch_norm = [v for v in variables if '/batchnorm' in v.op.name]
    assert kernels and batch_norm
    assert {v.dtype.base_dtype for v in kernels} == {dtype}
    # Batch norm parameters and statistics, the loss and the logits stay float32.
    assert {v.dtype.base_dtype for v in batch_norm} == {tf.float32}
    assert info.loss.dtype == tf.float32


# --- Every model, one step in bf16 and fp16 at its smallest image size.

def _model_cases():
    cases = []
    for name, dataset in model_config.list_models():
        model = model_config.get_model(name, dataset)
        size = model.image_size if model.fixed_image_size else model.min_image_size
        cases.append((name, dataset, size))
    return cases


# A representative subset runs by default (LRN, depthwise convolutions, inception columns with
# dropout, batch norm with residuals, plain conv/pool/affine: every layer kind of the builder);
# `pytest -m slow` sweeps every registered model (~10 minutes on 2 cores: VGG at 224x224
# dominates), too long for CI.
FAST_MODELS = {('alexnet', 'cifar10'), ('lenet', 'imagenet'), ('mobilenet', 'imagenet'),
               ('googlenet', 'imagenet'), ('resnet20', 'cifar10')}


def _sweep_params():
    out = []
    for name, dataset, size in _model_cases():
        marks = () if (name, dataset) in FAST_MODELS else (pytest.mark.slow,)
        for precision_flag in ('use_bf16', 'use_fp16'):
            out.append(pytest.param(name, dataset, size, precision_flag, marks=marks,
                                    id='%s-%s-%s' % (name, dataset, precision_flag[4:])))
    return out


@pytest.mark.parametrize('name, dataset, size, precision_flag', _sweep_params())
def test_every_model_trains_one_step(name, dataset, size, precision_flag):
    result = _run(model=name, data_name=dataset if dataset == 'cifar10' else None,
                  image_size=size, num_batches=1, **{precision_flag: True})
    assert len(result['losses']) == 1 and math.isfinite(result['losses'][0])


# --- Checkpoints.

def test_bf16_checkpoint_restores_in_float32_eval(tmp_path):
    train_dir = str(tmp_path)
    trained = _run(train_dir=train_dir, use_bf16=True, num_batches=2)
    saved = helpers.read_checkpoint_values(trained['checkpoint_path'])
    weights = {k: v for k, v in saved.items() if k.startswith('cg/')}
    assert weights and {v.dtype for v in weights.values()} == {np.dtype(np.float32)}
    evaluated = _run(train_dir=train_dir, eval=True, num_eval_batches=1)
    assert evaluated['eval']['global_step'] == 2


# --- Header and flag rules.

def test_header_states_precision_and_native_support():
    lines = benchmark_cnn.BenchmarkCNN(_params(use_fp16=True, fp16_enable_auto_loss_scale=True),
                                       gpus=0).info_lines()
    first = lines.index(next(x for x in lines if x.startswith('Precision:   float16 compute')))
    assert 'auto loss scale 128 (x2 per 1000 finite steps)' in ' '.join(lines[first:first + 3])
    # This host's float16 units or their absence: the flags, or 'emulated: no ...'.
    assert 'fp16' in ' '.join(lines[first:first + 3])


@pytest.mark.parametrize('mode', [dict(forward_only=True), dict(eval=True)])
def test_no_loss_scale_in_the_header_without_a_backward_pass(mode):
    p = make_params(use_fp16=True, fp16_loss_scale=64.0, **mode)
    assert precision_block.loss_scale_phrase(p) == ''
    training = make_params(use_fp16=True, fp16_loss_scale=64.0)
    assert precision_block.loss_scale_phrase(training) == 'loss scale 64'


def test_native_support_reads_cpu_flags_and_gpu_capability(tmp_path, monkeypatch):
    for name in ('ONEDNN_MAX_CPU_ISA', 'DNNL_MAX_CPU_ISA'):  # the file's flags, unlimited
        monkeypatch.delenv(name, raising=False)
    cpuinfo = tmp_path / 'cpuinfo'
    cpuinfo.write_text('processor\t: 0\nflags\t\t: fpu avx2 avx512_bf16\n')
    flags = precision.cpu_flags(str(cpuinfo))
    assert 'avx512_bf16' in flags
    assert precision.native_support(tf.bfloat16, 'cpu', flags=flags)[0]
    native, text = precision.native_support(tf.bfloat16, 'cpu', flags={'avx2'})
    assert not native and 'avx512_bf16/amx_bf16' in text
    assert not precision.native_support(tf.float16, 'cpu', flags=flags)[0]
    assert precision.native_support(tf.bfloat16, 'gpu', capabilities=[(8, 0)])[0]
    # Before Ampere bfloat16 runs with float32 math (speed_model/gpu_step.math_path): no
    # header warning; the dry run compares it with float32.
    native, text = precision.native_support(tf.bfloat16, 'gpu', capabilities=[(7, 0)])
    assert native and text.endswith('no bfloat16 tensor cores; bfloat16 data with float32 math, '
                                    'convolutions cast to float32 and back')
    assert precision.native_support(tf.float16, 'gpu', capabilities=[(7, 0)])[0]
    assert precision.cpu_flags(str(tmp_path / 'absent')) == set()


def test_onednn_max_cpu_isa_takes_away_the_units_its_kernels_may_not_use(tmp_path, monkeypatch):
    from tf_cnn_benchmarks.hardware import machine
    cpuinfo = tmp_path / 'cpuinfo'
    cpuinfo.write_text('flags\t\t: fpu avx2 fma avx512f avx512_vnni avx512_bf16 avx512_fp16 '
                       'amx_tile amx_bf16 amx_int8\n')
    monkeypatch.setenv('ONEDNN_MAX_CPU_ISA', 'avx512_core')  # an AVX-512 host without bf16
    flags = precision.cpu_flags(str(cpuinfo))
    assert flags == {'fpu', 'avx2', 'fma', 'avx512f'}
    native, text = precision.native_support(tf.bfloat16, 'cpu', flags=flags)
    assert not native
    assert 'no avx512_bf16/amx_bf16 oneDNN may use (ONEDNN_MAX_CPU_ISA=AVX512_CORE)' in text
    every = {'avx512f', 'avx512_vnni', 'avx512_bf16', 'avx512_fp16', 'amx_bf16', 'amx_fp16'}
    kept = {isa: machine.usable_cpu_flags(every, {'ONEDNN_MAX_CPU_ISA': isa}) for isa in (
        'AVX2', 'AVX512_CORE_VNNI', 'AVX512_CORE_BF16', 'AVX10_1_512', 'AVX512_CORE_AMX',
        'DEFAULT', 'NO_SUCH_ISA')}
    assert kept['AVX2'] == set()
    assert kept['AVX512_CORE_VNNI'] == {'avx512f', 'avx512_vnni'}
    assert kept['AVX512_CORE_BF16'] == {'avx512f', 'avx512_vnni', 'avx512_bf16'}
    assert kept['AVX10_1_512'] == every - {'amx_bf16', 'amx_fp16'}
    assert kept['AVX512_CORE_AMX'] == every - {'amx_fp16'}
    assert kept['DEFAULT'] == kept['NO_SUCH_ISA'] == every
    assert machine.usable_cpu_flags(every, {'DNNL_MAX_CPU_ISA': 'AVX2'}) == set()


# As measured on an Intel Xeon with AVX-512 but no bfloat16 units (issue 39.1).
SLOW_EMULATED = {'conv': 3.5, 'conv_gradients': 1.0, 'matmul': 3.6, 'matmul_gradients': 1.0}


@pytest.mark.parametrize('flags', [{'avx2'}, {'avx512f', 'avx2'}], ids=['avx2', 'avx512f'])
@pytest.mark.parametrize('factors', [None, SLOW_EMULATED], ids=['no-probe', 'slow-probe'])
def test_missing_native_bf16_warns_once(capsys, monkeypatch, flags, factors):
    # The kernel factors are injected (none, or the 3.5x of an AVX-512 Xeon): the warning
    # names the missing units whatever this host's kernels would measure.
    monkeypatch.setattr(precision, 'cpu_flags', lambda path='/proc/cpuinfo': set(flags))
    monkeypatch.setattr(kernel_speed, 'probe', lambda dtype, threads=(0, 0), **kw: (
        None if factors is None else helpers.measurement(factors)))
    benchmark_cnn.BenchmarkCNN(_params(use_bf16=True), gpus=0).info_lines()  # the header
    err = capsys.readouterr().err
    assert err.count('warning: --use_bf16: CPU has no avx512_bf16/amx_bf16') == 1
    assert err.count('warning:') == 1
    # The trivial model has no convolution: only its matmul's factor is said (prec53 item 3).
    assert ('bfloat16 matmuls run 3.6x slower' in err) == (factors is not None)
    assert 'convolutions' not in err


@pytest.mark.parametrize('kwargs, text', [
    (dict(use_fp16=True, fp16_loss_scale=0.0), '--fp16_loss_scale must be > 0 and at most 2'),
    (dict(use_fp16=True, fp16_loss_scale=-1.0), '--fp16_loss_scale must be > 0 and at most 2'),
    (dict(use_fp16=True, fp16_loss_scale=1e30), r"automatic scale's bound; float16 holds at "
                                                 r'most 65504'),
    # Exact, not %g's 1.67772e+07, which reads as below the limit it broke.
    (dict(use_fp16=True, fp16_loss_scale=2.0 ** 24 + 1), r'Received: fp16_loss_scale=16777217$'),
    (dict(use_fp16=True, use_bf16=True), '--use_fp16 and --use_bf16 exclude each other'),
])
def test_refused_precision_flags_give_one_line(kwargs, text):
    with pytest.raises(ParamsError, match=text) as info:
        validate_params(make_params(**kwargs))
    assert '\n' not in str(info.value)


# The float16 flags without --use_fp16 were refused ('--fp16_vars needs --use_fp16', exit 2);
# the original runs them, and every flag of the original is accepted with one warning line
# where it cannot act (README): they now warn, and the run goes on in its own precision.
LOSS_SCALE_WARNING = ('has no effect without --use_fp16 (only float16 compute scales the loss: '
                      'bfloat16 has float32\'s exponent range, and float32 needs no scaling)')
VARS_WARNING = ('--fp16_vars has no effect without --use_fp16 (the variables are float32 in '
                'float32 and bfloat16 runs)')


@pytest.mark.parametrize('kwargs, warning', [
    (dict(fp16_loss_scale=8.0), '--fp16_loss_scale ' + LOSS_SCALE_WARNING),
    (dict(use_bf16=True, fp16_loss_scale=8.0), '--fp16_loss_scale ' + LOSS_SCALE_WARNING),
    (dict(fp16_enable_auto_loss_scale=True),
     '--fp16_enable_auto_loss_scale ' + LOSS_SCALE_WARNING),
    (dict(fp16_vars=True, use_bf16=True), VARS_WARNING),
])
def test_float16_flags_without_use_fp16_are_accepted_with_a_warning(kwargs, warning):
    from tf_cnn_benchmarks.preflight import ineffective_flags
    p = make_params(**kwargs)
    validate_params(p)
    assert ineffective_flags.messages(p, 0) == [warning]


def test_fp16_vars_without_use_fp16_neither_changes_the_dtypes_nor_the_decay():
    """--fp16_vars acts with --use_fp16 only: the variables stay float32 and the weight decay
    stays folded into the updates (it turned the fold off, a graph of its own)."""
    from tf_cnn_benchmarks.graph import fused_decay
    for kwargs in (dict(), dict(use_bf16=True)):
        p = make_params(fp16_vars=True, weight_decay=1e-4, device='cpu', **kwargs)
        assert precision.compute_dtypes(p)[1] == tf.float32
        assert fused_decay.applies(p, ('/cpu:0',))
    assert not fused_decay.applies(
        make_params(fp16_vars=True, use_fp16=True, weight_decay=1e-4, device='cpu'), ('/cpu:0',))


@pytest.mark.cli
def test_the_command_runs_with_the_float16_flags_without_use_fp16():
    done = helpers.run_command(
        '--device=cpu', '--model=trivial', '--batch_size=2', '--num_batches=1',
        '--num_warmup_batches=0', '--noresults_db', '--fp16_loss_scale=128', '--fp16_vars',
        '--fp16_enable_auto_loss_scale')
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith('warning: --fp16')]
    assert warnings == ['warning: ' + VARS_WARNING,
                        'warning: --fp16_loss_scale ' + LOSS_SCALE_WARNING,
                        'warning: --fp16_enable_auto_loss_scale ' + LOSS_SCALE_WARNING]
    assert 'Precision:   float32 compute, float32 variables' in done.stdout
    assert 'total images/sec' in done.stdout


def test_emulated_header_names_what_runs_in_float32():
    measured = {'conv': 1.2, 'conv_gradients': 1.0, 'matmul': 1.6, 'matmul_gradients': 0.5}
    native, fp16 = precision.native_support(tf.float16, 'cpu', flags=set(), measured=measured)
    assert not native
    assert fp16.endswith('conv 1.20x, conv gradients 1.00x, matmul 1.60x, matmul gradients '
                         '0.50x; gradients, batch norm and pooling in float32')
    _, bf16 = precision.native_support(tf.bfloat16, 'cpu', flags=set(), measured=measured)
    assert bf16.endswith('matmul gradients 0.50x; gradients in float32')


def test_a_float16_nan_names_the_loss_scale():
    with pytest.raises(training_loop.NonFiniteLossError) as info:
        helpers.tiny_run(model='trivial', use_fp16=True, init_learning_rate=1e9, num_batches=4,
                         batch_size=2, image_size=8)
    assert str(info.value).endswith(
        'Lower --init_learning_rate, lower the loss scale (--fp16_loss_scale=128 now; float16 '
        'overflows above 65504) or use automatic loss scaling (--fp16_enable_auto_loss_scale).')


@pytest.mark.parametrize('kwargs, warned', [
    (dict(use_fp16=True, fp16_inc_loss_scale_every_n=10), True),  # static scale: no effect
    (dict(use_fp16=True, fp16_inc_loss_scale_every_n=10, fp16_enable_auto_loss_scale=True),
     False),
    (dict(use_fp16=True), False),  # at its default, not given
])
def test_the_doubling_period_without_automatic_scaling_warns(kwargs, warned):
    from tf_cnn_benchmarks.preflight import ineffective_flags
    messages = ineffective_flags.ignored_flags(make_params(**kwargs))
    line = ('--fp16_inc_loss_scale_every_n has no effect without --fp16_enable_auto_loss_scale '
            '(the static loss scale never changes)')
    assert (line in messages) == warned, messages
