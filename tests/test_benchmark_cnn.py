"""End-to-end training runs in process (synthetic data, tiny batches and images)."""

import functools
import math

import numpy as np
import pytest

from tf_cnn_benchmarks import benchmark_cnn
from tf_cnn_benchmarks.lifecycle import training_loop
from tf_cnn_benchmarks.params import ParamsError, make_params

import helpers

_run = functools.partial(helpers.tiny_run, image_size=32, num_batches=5)


def test_trivial_loss_goes_down_on_a_fixed_batch():
    result = _run(num_batches=20, init_learning_rate=0.002)
    losses = result['losses']
    assert len(losses) == 20 and all(math.isfinite(x) for x in losses)
    assert losses[-1] < losses[0] - 0.5


def test_first_loss_is_near_ln_classes_plus_weight_decay():
    result = _run(num_batches=1, num_classes=None)  # ImageNet's 1001, not TINY_CLASSES
    # Cross entropy of near-uniform logits over 1001 classes is ln(1001) = 6.909; the weight
    # decay term is 4e-5 * 0.5 * sum(w^2) ~ 0.1 for trivial's kernels.
    assert abs(result['losses'][0] - math.log(1001)) < 0.5


def test_same_seed_same_losses_and_other_seed_differs():
    first = _run(tf_random_seed=7)['losses']
    again = _run(tf_random_seed=7)['losses']
    other = _run(tf_random_seed=8)['losses']
    assert first == again
    assert first != other


def test_result_accounts_for_devices_and_steps():
    result = _run(num_batches=3, num_gpus=2, variable_update='parameter_server')
    assert result['num_devices'] == 2 and result['global_batch_size'] == 8
    assert result['num_steps'] == 3 and len(result['step_times']) == 3
    assert result['images_per_sec'] == pytest.approx(8 * 3 / result['elapsed_secs'])
    assert 0 <= result['between_steps_secs'] < result['elapsed_secs']  # no checkpoint here


def test_num_epochs_sets_the_step_count():
    bench = benchmark_cnn.BenchmarkCNN(make_params(num_epochs=1e-5, batch_size=4), gpus=0)
    # ImageNet's 1,281,167 training images x 1e-5 epochs = 12.8 -> 12 images (floored first,
    # as the original's int(e x N + B - 1) // B), / 4 images per step = 3 steps.
    assert bench.plan.num_batches == 3


def test_absurd_learning_rate_stops_with_non_finite_error():
    with pytest.raises(training_loop.NonFiniteLossError, match=r'at step \d+'):
        _run(num_batches=30, init_learning_rate=1e6)


def test_fixed_size_model_rejects_other_image_size():
    from tf_cnn_benchmarks.models import model_config
    fixed = [n for n, _ in model_config.list_models('imagenet')
             if model_config.get_model(n).fixed_image_size]
    if not fixed:
        pytest.skip('no fixed-size model registered yet')
    with pytest.raises(ParamsError, match='takes only'):
        benchmark_cnn.BenchmarkCNN(make_params(model=fixed[0], image_size=64), gpus=0)


def test_nchw_and_nhwc_give_the_same_first_loss():
    nhwc = _run(num_batches=1, data_format='NHWC')['losses'][0]
    nchw = _run(num_batches=1, data_format='NCHW')['losses'][0]
    assert np.isclose(nhwc, nchw, rtol=1e-4)


def test_real_data_run_ends_with_empty_staging_areas(imagenet_dir):
    p = make_params(model='trivial', data_dir=imagenet_dir, batch_size=4, image_size=32,
                    num_gpus=2, batch_group_size=2, num_batches=3, num_warmup_batches=1)
    bench = benchmark_cnn.BenchmarkCNN(p, gpus=0)
    info = bench.build_graph()
    with info.graph.as_default(), bench.create_session(info) as sess:
        bench.initialize(sess, info)
        assert sess.run(info.pipeline.size_ops) == [2, 2]  # primed with batch_group_size
        step = bench.make_step_fn(sess, info)
        sizes = []
        for _ in range(4):
            step()
            sizes.append(sess.run(info.pipeline.size_ops))
        bench.drain_pipeline(sess, info)
        sizes.append(sess.run(info.pipeline.size_ops))
    # Each step takes one batch and stages one; the drain after the last leaves nothing.
    assert sizes == [[2, 2], [2, 2], [2, 2], [2, 2], [0, 0]]


@pytest.mark.parametrize('use_datasets', [False, True])
def test_real_data_without_fused_decode(imagenet_dir, use_datasets):
    result = _run(data_dir=imagenet_dir, use_datasets=use_datasets, fuse_decode_and_crop=False,
                  num_batches=2)
    assert len(result['losses']) == 2 and all(math.isfinite(x) for x in result['losses'])
