"""Variable managers on logical CPU devices: losses and updated variables must match.

The golden reference is one tower with the global batch: N towers of batch B under
parameter_server or replicated (any all-reduce) must give the same step losses and the same
variables as one tower of batch N*B, because gradients are averaged over towers. The trivial model
has no batch norm, so the equality is exact up to float summation order.
"""

import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from tf_cnn_benchmarks import benchmark_cnn, preprocessing, variable_mgr
from tf_cnn_benchmarks.params import make_params

import checkout
import helpers

tf1 = tf.compat.v1

GLOBAL_BATCH = 4
IMAGE = 8
RNG = np.random.RandomState(0)
IMAGES = RNG.uniform(-1, 1, [GLOBAL_BATCH, IMAGE, IMAGE, 3]).astype(np.float32)
LABELS = RNG.randint(0, 1001, [GLOBAL_BATCH]).astype(np.int32)


class FixedInput(preprocessing.InputPipeline):
    """The same global batch every step, split over the devices in order."""

    def build(self, devices):
        batches = []
        for i, device in enumerate(devices):
            part = slice(i * self.batch_size, (i + 1) * self.batch_size)
            with tf1.device(device):
                batches.append(preprocessing.Batch(tf.constant(IMAGES[part]),
                                                   tf.constant(LABELS[part])))
        return batches


fixed_input = helpers.pipeline_of(FixedInput)  # these tests' BenchmarkCNN pipeline factory


def _train(steps=2, num_gpus=1, **kwargs):
    """Runs `steps` steps; returns (losses, {checkpoint name: value}, [per-tower var values])."""
    settings = dict(model='trivial', image_size=IMAGE, batch_size=GLOBAL_BATCH // num_gpus,
                    num_gpus=num_gpus, init_learning_rate=0.02, optimizer='momentum',
                    num_batches=steps, num_warmup_batches=0)
    settings.update(kwargs)
    p = make_params(**settings)
    bench = benchmark_cnn.BenchmarkCNN(p, gpus=0, pipeline_factory=fixed_input)
    info = bench.build_graph()
    with info.graph.as_default(), bench.create_session(info) as sess:
        bench.initialize(sess, info)
        losses = [float(sess.run([info.train_op, info.loss])[1]) for _ in range(steps)]
        saved = sess.run(info.mgr.savable_variables())
        towers = [sess.run(info.mgr.trainable_variables(i)) for i in range(num_gpus)]
    return losses, saved, towers


@pytest.fixture(scope='module')
def reference():
    return _train()


def _assert_matches(reference, run, atol=1e-5):
    ref_losses, ref_vars, _ = reference
    losses, saved, _ = run
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-5)
    assert sorted(saved) == sorted(ref_vars)
    for name, value in ref_vars.items():
        np.testing.assert_allclose(saved[name], value, atol=atol, err_msg=name)


def test_parameter_server_two_towers_equals_one_big_tower(reference):
    _assert_matches(reference, _train(num_gpus=2, variable_update='parameter_server'))


@pytest.mark.parametrize('extra', [
    {},
    {'all_reduce_spec': 'pscpu'},
    {'all_reduce_spec': 'xring'},
    {'all_reduce_spec': 'pscpu:2k:xring'},
    {'all_reduce_spec': 'xring', 'gradient_repacking': 2},
    {'agg_small_grads_max_bytes': 64 * 1024},
], ids=lambda e: ','.join('%s=%s' % kv for kv in e.items()) or 'default')
def test_replicated_equals_one_big_tower(reference, extra):
    run = _train(num_gpus=2, variable_update='replicated', **extra)
    _assert_matches(reference, run)


def test_the_docs_say_every_mode_averages_as_the_tests_above_measure():
    """A user's finding (nu_optim57 3): the devices page's table said replicated's gradients
    were 'summed by an all-reduce' while the usage page says every mode averages; the two
    tests above show the average (two towers of B equal one tower of 2B)."""
    def read(name):
        with open(os.path.join(checkout.REPO, 'docs', name), encoding='utf-8') as f:
            return f.read()

    rows = {line.split('|')[1].strip(): line.split('|')[3].strip()
            for line in read('devices-and-variable-managers.md').splitlines()
            if line.startswith('| `')}
    for mode in ('`parameter_server` (default)', '`replicated`'):
        assert rows[mode].startswith('averaged'), (mode, rows[mode])
    assert 'here every mode averages them' in read('usage-and-flags.md')


def test_replicated_copies_stay_identical():
    _, _, towers = _train(steps=5, num_gpus=2, variable_update='replicated',
                          all_reduce_spec='xring')
    for a, b in zip(towers[0], towers[1]):
        np.testing.assert_allclose(a, b, atol=1e-6)


def test_independent_towers_diverge():
    _, _, towers = _train(steps=3, num_gpus=2, variable_update='independent')
    final_layer_0, final_layer_1 = towers[0][-2], towers[1][-2]
    assert final_layer_0.shape == final_layer_1.shape
    assert not np.allclose(final_layer_0, final_layer_1)


def test_staged_vars_lag_one_step():
    plain, _, _ = _train(steps=4, optimizer='sgd')
    staged, _, _ = _train(steps=4, optimizer='sgd', staged_vars=True)
    # Step 2 still sees the initial values; step 3 sees the values after one update.
    assert staged[0] == pytest.approx(plain[0], rel=1e-6)
    assert staged[1] == pytest.approx(plain[0], rel=1e-6)
    assert staged[2] == pytest.approx(plain[1], rel=1e-5)
    assert staged[3] != pytest.approx(plain[2], rel=1e-6)


def test_checkpoint_names_do_not_depend_on_mode_or_towers(reference):
    _, ps_vars, _ = reference
    _, rep_vars, _ = _train(num_gpus=2, variable_update='replicated')
    assert sorted(ps_vars) == sorted(rep_vars)
    assert 'cg/affine0/weights' in ps_vars and 'global_step' in ps_vars
    assert not any(name.startswith('v') and '/' in name and name.split('/')[0][1:].isdigit()
                   for name in rep_vars)


def test_checkpoint_name_strips_the_tower_prefix():
    assert variable_mgr.checkpoint_name('v0/cg/conv0/weights:0') == 'cg/conv0/weights'
    assert variable_mgr.checkpoint_name('v/cg/affine1/biases:0') == 'cg/affine1/biases'
    assert variable_mgr.checkpoint_name('v12/cg/x:0') == 'cg/x'


def test_unknown_mode_lists_valid_ones():
    with pytest.raises(ValueError, match='valid on one host: independent, parameter_server, '
                                         'replicated'):
        variable_mgr.make_variable_mgr(make_params()._replace(variable_update='bogus'),
                                       ['/cpu:0'])



@pytest.mark.parametrize('num_gpus', ['1', '2'])
def test_staged_vars_forward_only_steps_refill_the_staging_areas(num_gpus):
    # Every forward-only step reads the staged values and must put the next ones: without the
    # puts the second step waited for ever on an empty staging area (a blocked read ignores
    # a session's deadline, so the run is a subprocess, killed at the timeout).
    proc = subprocess.run(
        [sys.executable, os.path.join(checkout.REPO, 'tf_cnn_benchmarks.py'), '--model=trivial',
         '--device=cpu', '--num_gpus=' + num_gpus, '--batch_size=2', '--image_size=8',
         '--num_batches=2', '--num_warmup_batches=1', '--staged_vars', '--forward_only'],
        capture_output=True, text=True, timeout=180, cwd=checkout.REPO)
    assert proc.returncode == 0, proc.stderr
    assert 'total images/sec:' in proc.stdout


@pytest.mark.parametrize('num_gpus,extra', [
    (2, {}),
    (2, {'all_reduce_spec': 'xring', 'gradient_repacking': 2}),
    (1, {}),
], ids=['two', 'two-repacked', 'one'])
def test_relaxed_replicated_applies_the_previous_steps_gradients(num_gpus, extra):
    mode = dict(num_gpus=num_gpus, variable_update='replicated', **extra)
    _, initial, _ = _train(steps=0, **mode)
    strong, after_one, _ = _train(steps=1, **mode)
    relaxed_1 = _train(steps=1, variable_consistency='relaxed', **mode)
    relaxed_2 = _train(steps=2, variable_consistency='relaxed', **mode)
    # Step 1 applies the warm-up's zeros: the variables stay the initial ones.
    for name, value in initial.items():
        if name != 'global_step':
            np.testing.assert_array_equal(relaxed_1[1][name], value, err_msg=name)
    # So step 2 sees the same variables (the same loss on the fixed batch) and applies step
    # 1's gradients: the variables strong has after its step 1.
    assert relaxed_2[0][0] == strong[0] and relaxed_2[0][1] == relaxed_2[0][0]
    for name, value in after_one.items():
        if name != 'global_step':
            np.testing.assert_allclose(relaxed_2[1][name], value, atol=1e-7, err_msg=name)
    assert not np.allclose(after_one['cg/affine0/weights'], initial['cg/affine0/weights'])


def test_strong_replicated_applies_each_steps_own_gradients(reference):
    losses, _, _ = _train(steps=2, num_gpus=2, variable_update='replicated',
                          variable_consistency='strong')
    assert losses[1] != pytest.approx(losses[0], rel=1e-4)
    _assert_matches(reference, (losses, *_train(steps=2, num_gpus=2,
                                               variable_update='replicated')[1:]))


@pytest.mark.parametrize('compact', [True, False])
def test_fp16_replicated_all_reduces_float16_unless_told_not_to(compact):
    p = make_params(model='trivial', image_size=IMAGE, batch_size=2, num_gpus=2,
                    variable_update='replicated', all_reduce_spec='xring', use_fp16=True,
                    compact_gradient_transfer=compact)
    info = benchmark_cnn.BenchmarkCNN(p, gpus=0).build_graph()  # synthetic float16 images
    adds = [op for op in info.graph.get_operations() if op.type == 'AddV2'
            and op.get_attr('T') == tf.float16]
    # The ring's sums, of float16 casts of the float32 gradients: 6 gradients (3 kernels, 3
    # biases) of the trivial model, one add per device each.
    assert len(adds) == (6 * 2 if compact else 0)


def test_gpu_indices_order_the_xring_ring_of_replicated_on_gpus_only():
    from tf_cnn_benchmarks.variable_managers import one_host
    p = make_params(num_gpus=2, variable_update='replicated', gpu_indices='1,0')

    def order(devices, **kwargs):
        return one_host.VariableMgrReplicated(devices=devices, param_device='/cpu:0',
                                              params=p._replace(**kwargs))._ring_order()
    assert order(['/gpu:0', '/gpu:1']) == [1, 0]
    assert order(['/cpu:0', '/cpu:1']) is None  # logical CPU devices: --gpu_indices warns
    assert order(['/gpu:0', '/gpu:1'], gpu_indices='') is None
