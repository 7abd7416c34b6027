"""GPU hosts: where every op runs, and the numbers, of the GPU code paths.

Run on a host with a GPU: `python -m pytest -m gpu tests/test_gpu.py` (tests that need two GPUs
skip on one). Where TensorFlow sees no GPU (CI, the development hosts) they are collected and
skipped with the reason. One test runs the tracing helpers on logical CPU devices, so the
machinery the GPU tests rely on is checked everywhere.

Each run builds the training graph and runs it in a session with soft placement OFF and a full
trace per step: an op the graph puts on a GPU without a GPU kernel fails the session instead of
falling back to the CPU silently, and the trace (RunMetadata step stats) says which device
executed each op. Inputs are one fixed global batch split over the towers (as in
test_variable_mgr), so layouts, variable managers and all-reduce algorithms must give the same
losses: N towers of batch B equal one tower of batch N*B for a model without batch norm
(trivial); with batch norm (resnet50 at 32x32), runs of the same tower count are compared.
TensorFloat-32 is turned off so float32 stays float32 on Ampere and later GPUs.
"""

from __future__ import annotations

import collections
import dataclasses
import re

import numpy as np
import pytest
import tensorflow as tf

from tf_cnn_benchmarks import benchmark_cnn, preprocessing
from tf_cnn_benchmarks.params import make_params
from tf_cnn_benchmarks.runtime import session_config

import helpers

tf1 = tf.compat.v1

NUM_GPUS = len(tf.config.list_physical_devices('GPU'))
SKIP_REASON = ('no GPU visible (tf.config.list_physical_devices("GPU") is empty); run '
               '`python -m pytest -m gpu tests/test_gpu.py` on a GPU host')
gpu = pytest.mark.gpu
needs_gpu = pytest.mark.skipif(NUM_GPUS < 1, reason=SKIP_REASON)
needs_2_gpus = pytest.mark.skipif(NUM_GPUS < 2, reason=(
    'needs 2 GPUs, %d visible' % NUM_GPUS if NUM_GPUS else SKIP_REASON))

GLOBAL_BATCH = 4
# Op types (oneDNN's _Mkl/_MklNative prefixes and Grappler's fused forms folded) that do a
# tower's arithmetic: each must run on its tower's device.
COMPUTE = {'Conv2D', 'FusedConv2D', 'Conv2DBackpropInput', 'Conv2DBackpropFilter', 'MatMul',
           'FusedMatMul', 'FusedBatchNormV3', 'FusedBatchNormEx', 'FusedBatchNormGradV3',
           'MaxPool', 'MaxPoolGrad', 'Relu', 'ReluGrad', 'BiasAddGrad',
           'SparseSoftmaxCrossEntropyWithLogits'}
_LABEL = re.compile(r'^(?:\[[^\]]*\]\s*)*(\S+) = (\S+?)\(')
_DEVICE = re.compile(r'/device:(CPU|GPU):(\d+)$')


def op_kind(op_type: str) -> str:
    """'_MklNativeConv2D' -> 'Conv2D', '_FusedConv2D' -> 'FusedConv2D'."""
    return re.sub(r'^_(Mkl)?(Native)?', '', op_type)


class FixedInput(preprocessing.InputPipeline):
    """The same global batch every step, split over the devices in order, in the run's data
    format and compute dtype."""

    def build(self, devices):
        rng = np.random.RandomState(0)
        size = self.image_size
        images = rng.uniform(-1, 1, [GLOBAL_BATCH, size, size, 3]).astype(np.float32)
        if self.data_format == 'NCHW':
            images = images.transpose(0, 3, 1, 2)
        labels = rng.randint(0, self.num_classes, [GLOBAL_BATCH]).astype(np.int32)
        batches = []
        for i, device in enumerate(devices):
            part = slice(i * self.batch_size, (i + 1) * self.batch_size)
            with tf1.device(device):
                batches.append(preprocessing.Batch(tf.cast(tf.constant(images[part]), self.dtype),
                                                   tf.constant(labels[part])))
        return batches


fixed_input = helpers.pipeline_of(FixedInput)  # these tests' BenchmarkCNN pipeline factory


@pytest.fixture(autouse=True)
def exact_float32():
    tf.config.experimental.enable_tensor_float_32_execution(False)


@dataclasses.dataclass
class Trace:
    """What a traced run did.

    Attributes:
      losses: the loss of each step (float).
      executed: {(device kind 'CPU' or 'GPU', index): Counter of the op kinds run there}, over
        every step.
      where: {op name: {(device kind, index, op kind)} that executed it}.
      graph: the tf.Graph; params: the resolved Params; saved: {checkpoint name: value} after
        the run.
    """

    losses: list
    executed: dict
    where: dict
    graph: object
    params: object
    saved: dict


def traced_run(steps: int = 2, gpus: int | None = None, **kwargs) -> Trace:
    """Trains `steps` steps with soft placement off, tracing each; kwargs are Params (default:
    the trivial model at 16x16, momentum, a global batch of GLOBAL_BATCH images)."""
    settings = dict(model='trivial', image_size=16, optimizer='momentum',
                    init_learning_rate=0.02, num_batches=steps, num_warmup_batches=0)
    settings.update(kwargs)
    settings.setdefault('batch_size', GLOBAL_BATCH // settings.get('num_gpus', 1))
    bench = benchmark_cnn.BenchmarkCNN(make_params(**settings), gpus=gpus,
                                       pipeline_factory=fixed_input)
    info = bench.build_graph()
    config = session_config.make_session_config(bench.params, len(bench.plan.devices))
    config.allow_soft_placement = False  # no silent fallback to the CPU
    losses, executed = [], collections.defaultdict(collections.Counter)
    where = collections.defaultdict(set)
    with info.graph.as_default(), tf1.Session(graph=info.graph, config=config) as sess:
        bench.initialize(sess, info)
        fetches = [info.train_op, info.loss] + list(info.pipeline.step_ops)
        for _ in range(steps):
            meta = tf1.RunMetadata()
            out = sess.run(fetches, options=tf1.RunOptions(
                trace_level=tf1.RunOptions.FULL_TRACE), run_metadata=meta)
            losses.append(float(out[1]))
            for dev in meta.step_stats.dev_stats:
                device = _DEVICE.search(dev.device)
                if device is None:  # GPU stream and memcpy records repeat the kernels
                    continue
                key = (device.group(1), int(device.group(2)))
                for node in dev.node_stats:
                    label = _LABEL.match(node.timeline_label)
                    if label:
                        kind = op_kind(label.group(2))
                        executed[key][kind] += 1
                        where[label.group(1)].add(key + (kind,))
        saved = sess.run(info.mgr.savable_variables())
    return Trace(losses, dict(executed), dict(where), info.graph, bench.params, saved)


def assert_placed(trace: Trace, kind: str) -> None:
    """Where the ops ran, for towers on `kind` devices ('CPU' or 'GPU'):

    * every executed op the graph put on a `kind` device ran on exactly that device;
    * every compute op (COMPUTE) of tower i ran on device i of `kind`;
    * every tower device ran convolutions or matrix products.
    """
    for name, runs in trace.where.items():
        try:
            requested = trace.graph.get_operation_by_name(name).device
        except KeyError:  # an op Grappler made (a fused op, a layout transpose)
            requested = ''
        spec = tf.DeviceSpec.from_string(requested)
        if spec.device_type == kind:
            assert {r[:2] for r in runs} == {(kind, spec.device_index or 0)}, (
                name, requested, runs)
        tower = re.search(r'(?:^|/)tower_(\d+)/', name)
        for device_kind, index, op in runs:
            if tower and op in COMPUTE:
                assert (device_kind, index) == (kind, int(tower.group(1))), (
                    '%s (%s) of tower %s ran on %s:%d' % (name, op, tower.group(1),
                                                          device_kind, index))
    for i in range(trace.params.num_gpus):
        ran = set(trace.executed.get((kind, i), ()))
        assert ran & {'MatMul', 'FusedMatMul', 'Conv2D', 'FusedConv2D'}, (
            'no convolution or matrix product ran on %s:%d: %s' % (kind, i, sorted(ran)))


# ------------------------------------------------------------------------------------------
# Everywhere: the helpers on logical CPU devices.

def test_the_trace_sees_each_tower_on_its_own_device():
    trace = traced_run(gpus=0, device='cpu', num_gpus=2, variable_update='replicated')
    assert_placed(trace, 'CPU')
    for i in range(2):
        assert trace.executed[('CPU', i)]['MatMul'] + trace.executed[('CPU', i)][
            'FusedMatMul'] >= 2 * 3  # 3 dense layers per step, 2 steps
    # Grappler fuses the first dense layer's MatMul and BiasAdd (oneDNN's _FusedMatMul).
    assert trace.where['v1/tower_1/cg/affine0/BiasAdd'] == {('CPU', 1, 'FusedMatMul')}
    assert all(np.isfinite(trace.losses)) and len(trace.losses) == 2


# ------------------------------------------------------------------------------------------
# GPU hosts.

def _one_tower(**kwargs):
    return traced_run(device='gpu', num_gpus=1, **kwargs)


@gpu
@needs_gpu
def test_nchw_convolutions_and_batch_norm_run_on_the_gpu():
    nchw = _one_tower(model='resnet50', image_size=32, data_format='NCHW')
    assert_placed(nchw, 'GPU')
    convs = [op for op in nchw.graph.get_operations() if op.type == 'Conv2D']
    assert convs and all(op.get_attr('data_format') == b'NCHW' for op in convs)
    assert all('GPU' in op.device for op in convs)
    ran = set(nchw.executed[('GPU', 0)])
    assert {'Conv2DBackpropFilter', 'Conv2DBackpropInput'} <= ran
    assert {'FusedBatchNormV3', 'FusedBatchNormEx'} & ran and 'FusedBatchNormGradV3' in ran
    nhwc = _one_tower(model='resnet50', image_size=32, data_format='NHWC')
    assert all(np.isfinite(nchw.losses))
    np.testing.assert_allclose(nchw.losses, nhwc.losses, rtol=1e-3)


@gpu
@needs_2_gpus
@pytest.mark.parametrize('flags', [dict(use_nccl=True), dict(all_reduce_spec='nccl')])
def test_replicated_nccl_all_reduce_on_two_gpus(flags):
    reference = _one_tower(variable_update='replicated')
    trace = traced_run(device='gpu', num_gpus=2, variable_update='replicated', **flags)
    assert_placed(trace, 'GPU')
    for i in range(2):
        assert trace.executed[('GPU', i)]['NcclAllReduce'] >= 6  # 6 gradients per step
    np.testing.assert_allclose(trace.losses, reference.losses, rtol=1e-4)
    for name, value in reference.saved.items():
        np.testing.assert_allclose(trace.saved[name], value, rtol=1e-4, atol=1e-6, err_msg=name)


@gpu
@needs_gpu
def test_parameter_server_keeps_the_variables_on_the_gpus():
    towers = min(NUM_GPUS, 2)
    reference = traced_run(device='gpu', num_gpus=1, local_parameter_device='cpu')
    trace = traced_run(device='gpu', num_gpus=towers, local_parameter_device='gpu')
    assert_placed(trace, 'GPU')
    with trace.graph.as_default():
        devices = {v.op.name: v.device for v in tf1.trainable_variables()}
    assert len(devices) == 6 and all('GPU' in d for d in devices.values()), devices
    assert len({tf.DeviceSpec.from_string(d).device_index for d in devices.values()}) == towers
    applied = sum(trace.executed.get(('GPU', i), {}).get('ResourceApplyMomentum', 0)
                  for i in range(towers))
    assert applied == 6 * 2  # every variable updated on its GPU, every step
    np.testing.assert_allclose(trace.losses, reference.losses, rtol=1e-4)


@gpu
@needs_gpu
def test_staged_vars_stage_on_the_gpu_one_step_stale():
    plain = _one_tower(steps=3)
    staged = _one_tower(steps=3, staged_vars=True)
    assert_placed(staged, 'GPU')
    ran = staged.executed[('GPU', 0)]
    assert ran['Stage'] >= 6 * 3 and ran['Unstage'] >= 6 * 3  # each variable, every step
    # One-step-stale SGD on a fixed batch: L(w0), L(w0), L(w1).
    np.testing.assert_allclose(staged.losses, [plain.losses[0]] + plain.losses[:2], rtol=1e-4)


@gpu
@needs_gpu
@pytest.mark.parametrize('flags', [dict(fp16_loss_scale=128.0),
                                   dict(fp16_enable_auto_loss_scale=True)])
def test_fp16_with_loss_scaling_runs_half_on_the_gpu_and_tracks_fp32(flags):
    model = dict(model='resnet50', image_size=32, steps=3)
    fp32 = _one_tower(**model)
    fp16 = _one_tower(use_fp16=True, **model, **flags)
    assert_placed(fp16, 'GPU')
    convs = [op for op in fp16.graph.get_operations() if op.type == 'Conv2D']
    assert convs and all(op.get_attr('T') == tf.float16 for op in convs)
    with fp16.graph.as_default():
        assert {v.dtype.base_dtype for v in tf1.trainable_variables()} == {tf.float32}
    assert all(np.isfinite(fp16.losses))
    np.testing.assert_allclose(fp16.losses, fp32.losses, rtol=2e-2)
