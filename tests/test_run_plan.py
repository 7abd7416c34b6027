"""The run plan (values resolved once) and the hook phases of a run."""

from __future__ import annotations

import glob
import json
import os
import signal

import numpy as np
import pytest
import tensorflow as tf

from tf_cnn_benchmarks import benchmark_cnn, run_plan
from tf_cnn_benchmarks.lifecycle import run_hooks, signals

import helpers

tf1 = tf.compat.v1


def test_batch_size_zero_is_the_models_default_everywhere(tmp_path):
    bench = helpers.tiny_bench(model='lenet', batch_size=0, image_size=0, num_gpus=2,
                               device='cpu')
    plan = bench.plan
    # LeNet: default batch 32, 28x28 images; two towers.
    assert (plan.per_device_batch_size, plan.global_batch_size, plan.image_size) == (32, 64, 28)
    assert plan.params.batch_size == 32 and plan.params.image_size == 28
    assert plan.devices == ('/cpu:0', '/cpu:1') and plan.images_per_step == 64
    result = helpers.tiny_run(model='lenet', batch_size=0, image_size=0, num_batches=1,
                              benchmark_log_dir=str(tmp_path))
    [path] = glob.glob(str(tmp_path / '*.json'))
    saved = json.load(open(path))
    assert saved['params']['batch_size'] == 32 and saved['params']['image_size'] == 28
    assert saved['plan']['per_device_batch_size'] == 32
    assert saved['plan']['compute_dtype'] == 'float32'
    assert result['per_device_batch_size'] == 32


def test_epochs_and_global_steps():
    plan = helpers.tiny_bench(num_epochs=1e-5, num_batches=None, batch_size=4,
                              num_warmup_batches=2).plan
    # ImageNet's 1,281,167 images x 1e-5 epochs = 12.8 -> 12 images (floored first, as the
    # original's int(e x N + B - 1) // B), / 4 per step = 3 steps (ceil(3.2) would be 4).
    assert plan.num_batches == 3 and plan.params.num_batches == 3
    assert plan.epochs == pytest.approx(12 / 1281167)
    # After timed step 3 of a run restored at step 10 with 2 warm-up steps: 10 + 2 + 3.
    assert plan.global_step_after(10, 3) == 15
    forward = helpers.tiny_bench(forward_only=True, num_warmup_batches=2).plan
    assert forward.mode == 'forward-only' and forward.global_step_after(10, 3) == 3


def test_image_size_rules_are_params_errors():
    from tf_cnn_benchmarks.params import ParamsError
    with pytest.raises(ParamsError, match='takes only 231x231 images'):
        helpers.tiny_bench(model='overfeat', image_size=224)
    with pytest.raises(ParamsError, match='needs --image_size >= 75'):
        helpers.tiny_bench(model='inception3', image_size=64)


def test_run_mode():
    assert run_plan.run_mode(helpers.tiny_params(eval=True)) == 'evaluation'
    assert run_plan.run_mode(helpers.tiny_params(forward_only=True)) == 'forward-only'
    assert run_plan.run_mode(helpers.tiny_params()) == 'training'


class PhaseRecorder(run_hooks.RunHook):
    """Records the phases in order, and what it sees in them."""

    def __init__(self, log):
        self.log = log

    def after_initialize(self, ctx):
        self.log.append('after_initialize')
        # Tower 0's copy, before the replicated manager's broadcast (post-init) copies it.
        var = [v for v in ctx.info.mgr.trainable_variables(0) if 'weights' in v.op.name][0]
        ctx.sess.run(var.assign(tf.fill(var.shape, 0.5)))

    def begin(self, ctx):
        self.log.append('begin')
        self.ctx = ctx

    def after_step(self, step, loss):
        self.log.append('after_step %d' % step)

    def after_loop(self, result):
        self.log.append('after_loop')

    def end(self, result):
        self.log.append('end')
        result['recorder'] = 'was here'

    def report(self, result):
        self.log.append('report %s' % result.get('recorder'))

    def release(self):
        self.log.append('release')


def test_hooks_run_phase_by_phase_and_after_initialize_precedes_post_init():
    log = []
    recorder = PhaseRecorder(log)
    bench = benchmark_cnn.BenchmarkCNN(
        helpers.tiny_params(num_gpus=2, device='cpu', variable_update='replicated',
                            num_batches=2, init_learning_rate=0.0), gpus=0, hooks=[recorder])
    result = bench.run()
    assert log == ['after_initialize', 'begin', 'after_step 1', 'after_step 2', 'after_loop',
                   'end', 'report was here', 'release']
    assert result['recorder'] == 'was here'


def test_after_initialize_values_reach_every_tower():
    values = {}

    class Check(PhaseRecorder):
        def begin(self, ctx):
            mgr = ctx.info.mgr
            values['towers'] = [ctx.sess.run([v for v in mgr.trainable_variables(i)
                                              if 'weights' in v.op.name][0]) for i in range(2)]

    benchmark_cnn.BenchmarkCNN(
        helpers.tiny_params(num_gpus=2, device='cpu', variable_update='replicated',
                            num_batches=1), gpus=0, hooks=[Check([])]).run()
    for tower in values['towers']:
        np.testing.assert_array_equal(tower, np.full_like(tower, 0.5))


class SignalAtStep(run_hooks.RunHook):
    def __init__(self, signum, step):
        self.signum, self.step = signum, step

    def after_step(self, step, loss):
        if step == self.step:
            os.kill(os.getpid(), self.signum)


@pytest.mark.parametrize('signum', [signal.SIGINT, signal.SIGTERM])
def test_a_signal_is_in_the_results_json(tmp_path, signum):
    """The results JSON is written in phase `report`, after the signal hook's `end` recorded
    the signal (it used to be written first, with "stopped_by_signal": null)."""
    name = signal.Signals(signum).name
    kwargs = dict(num_batches=5, benchmark_log_dir=str(tmp_path), train_dir=str(tmp_path / 't'))
    hooks = [SignalAtStep(signum, 2)]
    bench = benchmark_cnn.BenchmarkCNN(helpers.tiny_params(**kwargs), gpus=0, hooks=hooks)
    if signum == signal.SIGTERM:
        with pytest.raises(signals.Terminated) as raised:
            bench.run()
        assert raised.value.code == 143
    else:
        assert bench.run()['stopped_by_signal'] == 'SIGINT'
    [path] = glob.glob(str(tmp_path / '*.json'))
    saved = json.load(open(path))
    assert saved['stopped_by_signal'] == name
    assert saved['num_steps'] == 2 and saved['checkpoint_path'].endswith('model.ckpt-2')
