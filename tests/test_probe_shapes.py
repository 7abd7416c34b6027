"""hardware/probe_shapes.py: the reduced-precision kernel probe times a run's op at its
per-device batch where that is cheap (bfloat16 on a CPU with its units), never cuts a matmul
to a matrix-vector product, and every line names the run's op and what was timed (prec58
item 4). No kernel is timed: the graphs hold placeholders, the probe's measurement is given."""

from types import SimpleNamespace

import pytest
import tensorflow as tf

from tf_cnn_benchmarks.graph import precision
from tf_cnn_benchmarks.hardware import kernel_speed

import helpers

tf1 = tf.compat.v1
ALEXNET_CONV = (8, 13, 13, 384, 3, 3, 384, 1)
ALEXNET_MATMUL = (8, 9216, 4096)


def _alexnet_like():
    """alexnet's largest convolution and matmul at batch 1, as placeholders (no weights)."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf1.placeholder(tf.float32, [1, 13, 13, 384])
        tf.nn.conv2d(x, tf1.placeholder(tf.float32, [3, 3, 384, 384]), 1, 'SAME')
        tf.matmul(tf1.placeholder(tf.float32, [1, 9216]),
                  tf1.placeholder(tf.float32, [9216, 4096]))
    return graph


def test_a_cut_matmul_keeps_the_runs_rows():
    # Before: alexnet's 8x9216x4096 at batch 8 was timed at 1x8192x4096, a matrix-vector
    # product bound by reading the weights, unlike the run's; and the line called that
    # "this run's largest".
    cut = kernel_speed.run_shapes(_alexnet_like(), 8)
    assert cut.matmul == (8, 1024, 4096) and cut.run_matmul == ALEXNET_MATMUL
    assert cut.conv == (1, 9, 9, 384, 3, 3, 384, 1) and cut.run_conv == ALEXNET_CONV
    assert cut.run_text('matmul') == '8x9216x4096 timed at 8x1024x4096'
    assert cut.run_text('conv') == '8x13x13x384 3x3->384 timed at 1x9x9x384 3x3->384'
    assert cut.text() == 'conv 1x9x9x384 3x3->384, matmul 8x1024x4096'  # the record's key
    assert kernel_speed.capped('matmul', (512, 9216, 4096)) == (8, 1024, 4096)
    assert kernel_speed.capped('matmul', (2, 25088, 4096)) == (2, 4096, 4096)  # 2 rows: both


def test_a_native_bfloat16_probe_times_the_runs_matmul_at_its_batch():
    whole = kernel_speed.run_shapes(_alexnet_like(), 8, kernel_speed.NATIVE_BOUND)
    assert whole.matmul == ALEXNET_MATMUL and whole.run_matmul == ()
    assert whole.run_text('matmul') == '8x9216x4096'
    assert whole.conv == (5, 13, 13, 384, 3, 3, 384, 1) and whole.run_conv == ALEXNET_CONV
    for kind in ('conv', 'matmul'):  # the bound: its multiply-adds, whatever the shapes
        default = kernel_speed.macs(kind, getattr(kernel_speed.DEFAULT_SHAPES, kind))
        assert kernel_speed.macs(kind, getattr(whole, kind)) <= (
            kernel_speed.NATIVE_BOUND * default)


@pytest.mark.parametrize('dtype, flags, matmul', [
    (tf.bfloat16, {'avx512_bf16'}, ALEXNET_MATMUL),  # its kernels about float32's speed
    (tf.bfloat16, {'avx2'}, (8, 1024, 4096)),  # emulated: Eigen's kernels, up to 10x
    (tf.float16, {'avx512_fp16', 'avx512_bf16'}, (8, 1024, 4096)),  # up to 670x float32's
])
def test_the_runs_dtype_and_cpu_decide_the_bound(dtype, flags, matmul, monkeypatch):
    monkeypatch.setattr(precision, 'cpu_flags', lambda path='/proc/cpuinfo': set(flags))
    plan = SimpleNamespace(compute_dtype=dtype, params=SimpleNamespace(device='cpu', eval=False),
                           model='alexnet', dataset='imagenet', image_size=None,
                           num_classes=1001, per_device_batch_size=8, eval=None, training=True)
    shapes = precision.probe_shapes(plan)
    assert shapes.matmul == matmul and shapes.run_matmul in ((), ALEXNET_MATMUL)


def test_the_announcement_and_the_warning_name_the_runs_op_and_what_was_timed(
        tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(kernel_speed, '_MEMO', {})
    cut = kernel_speed.run_shapes(_alexnet_like(), 8)
    slow = {'conv': 1.1, 'conv_gradients': 1.0, 'matmul': 50.0, 'matmul_gradients': 1.0}
    got = kernel_speed.probe(tf.float16, (2, 2), path=str(tmp_path / 'c.json'), shapes=cut,
                             measure_fn=lambda *a: (slow, 0.01), cpu_model='Test CPU',
                             tf_version='2.21.0', meter=helpers.FakeMeter(0.0))
    assert got is not None and got.value == slow
    assert capsys.readouterr().out == (
        "calibration: measuring float16 kernels against float32 (this run's largest: "
        "convolution 8x13x13x384 3x3->384 timed at 1x9x9x384 3x3->384, matmul 8x9216x4096 "
        "timed at 8x1024x4096, and their gradients) (about 3 s)\n")
    warning = kernel_speed.far_slower_warning('--use_fp16', tf.float16, slow, shapes=cut)
    assert ("(this run's largest matmul 8x9216x4096, timed at 8x1024x4096; measured now)"
            in warning), warning
