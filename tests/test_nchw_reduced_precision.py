"""NCHW on the CPU in a reduced precision: refused up front where this CPU runs no such kernels
(hardware/layout_kernels.py, preflight/usage.check_with_tensorflow), instead of failing in the
first warm-up step with "Default AvgPoolingOp only supports NHWC on device type CPU"."""

import pytest
import tensorflow as tf
from test_cli_edges import run_main

from tf_cnn_benchmarks import params
from tf_cnn_benchmarks.hardware import layout_kernels
from tf_cnn_benchmarks.preflight import usage

BF16_MESSAGE = ("--data_format=NCHW with --use_bf16: this CPU runs no bfloat16 NCHW kernels "
                "(tried: oneDNN does not take bfloat16 here, and TensorFlow's own CPU kernels "
                "are NHWC only); use --data_format=NHWC")


def test_float32_nchw_runs_with_onednn():
    # The tests run with TF_ENABLE_ONEDNN_OPTS=1 (runtime/runtime_env.py): float32 NCHW runs
    # on every CPU kind.
    assert layout_kernels.nchw_runs(tf.float32) is True
    assert layout_kernels.nchw_runs('float32') is True


@pytest.mark.parametrize('runs', [False, True], ids=['no kernels', 'kernels'])
def test_the_check_follows_the_probe(monkeypatch, runs):
    asked = []
    monkeypatch.setattr(layout_kernels, 'nchw_runs', lambda dtype: asked.append(dtype) or runs)
    p = params.make_params(device='cpu', data_format='NCHW', use_bf16=True, model='resnet20',
                           data_name='cifar10')
    if runs:
        usage.check_with_tensorflow(p, 0)
    else:
        with pytest.raises(params.ParamsError) as e:
            usage.check_with_tensorflow(p, 0)
        assert str(e.value) == BF16_MESSAGE
    assert asked == ['bfloat16']
    fp16 = params.make_params(device='cpu', data_format='NCHW', use_fp16=True)
    if not runs:
        with pytest.raises(params.ParamsError, match='--data_format=NCHW with --use_fp16: this '
                           'CPU runs no float16 NCHW kernels'):
            usage.check_with_tensorflow(fp16, 0)


@pytest.mark.parametrize('kwargs', [
    dict(device='cpu', data_format='NHWC', use_bf16=True),   # NHWC needs no probe
    dict(device='cpu', data_format='NCHW'),                   # float32: oneDNN's
    dict(device='gpu', data_format='NCHW', use_bf16=True),   # cuDNN's, not the CPU's
])
def test_other_runs_never_probe(monkeypatch, kwargs):
    monkeypatch.setattr(layout_kernels, 'nchw_runs', lambda dtype: pytest.fail('probed'))
    usage.check_with_tensorflow(params.make_params(**kwargs), 0)


@pytest.mark.cli
def test_the_command_says_it_in_one_line_on_this_host():
    status, out, err, loaded = run_main('--model=resnet20', '--data_name=cifar10',
                                        '--batch_size=2', '--num_batches=1', '--device=cpu',
                                        '--data_format=NCHW', '--use_bf16')
    if layout_kernels.nchw_runs(tf.bfloat16):
        assert status == 0, err[-2000:]
    else:
        assert status == 2 and loaded
        assert err.strip().splitlines()[-1] == 'error: ' + BF16_MESSAGE
        assert 'Traceback' not in err
