"""Tests of variable_managers/allreduce.py: the spec grammar, the pure plans, and numeric
all-reduce results on logical CPU devices (values equal the numpy sum, each output on its
tower's device)."""

import numpy as np
import pytest
import tensorflow as tf

from tf_cnn_benchmarks.variable_managers import allreduce, grad_transfer
from tf_cnn_benchmarks.variable_managers.allreduce import AllReduceSpecTuple as T

tf1 = tf.compat.v1
NUM_CPUS = 8
# Odd sizes on purpose: 15, 7, 1 (scalar), 24, 1, 2112 and 5 elements do not divide by 2, 3 or 4.
SHAPES = [(3, 5), (7,), (), (2, 3, 4), (1,), (64, 33), (5,)]
DTYPES = [np.float32] * 6 + [np.float64]


# ----------------------------------------------------------------------------------------------
# Grammar.


@pytest.mark.parametrize('spec, expected', [
    ('xring', [T('xring', 1, None)]),
    ('pscpu', [T('pscpu', 1, None)]),
    ('xring#2', [T('xring', 2, None)]),
    ('pscpu:32k:xring', [T('pscpu', 1, 32 * 1024), T('xring', 1, None)]),
    ('nccl:4m:psgpu#4:1g:xring', [T('nccl', 1, 4 * 1024 ** 2), T('psgpu', 4, 1024 ** 3),
                                  T('xring', 1, None)]),
    ('pscpu/xring#2', [T('pscpu/xring', 2, None)]),
    ('nccl/pscpu', [T('nccl/pscpu', 1, None)]),
    (' psgpu : 100 : pscpu#3 ', [T('psgpu', 1, 100), T('pscpu', 3, None)]),
    ('pscpu:2K:xring', [T('pscpu', 1, 2048), T('xring', 1, None)]),
])
def test_parse_valid(spec, expected):
    assert allreduce.parse_all_reduce_spec(spec) == expected


@pytest.mark.parametrize('spec, problem', [
    ('', 'empty'),
    ('ring', "unknown algorithm 'ring'"),
    ('xring#0', 'shard count'),
    ('xring#two', 'shard count'),
    ('pscpu:32k', 'alternating'),
    ('pscpu:32q:xring', "size limit '32q'"),
    ('pscpu:0:xring', "size limit '0'"),
    ('pscpu:1m:xring:1k:psgpu', 'increase strictly'),
    ('pscpu:1k:xring:1k:psgpu', 'increase strictly'),
    ('xring/nccl', 'outer'),
    ('pscpu/psgpu/xring', 'two levels'),
])
def test_parse_invalid_names_the_problem(spec, problem):
    with pytest.raises(ValueError) as err:
        allreduce.parse_all_reduce_spec(spec)
    assert problem in str(err.value)
    assert repr(spec) in str(err.value)


def test_select_spec_by_size():
    tuples = allreduce.parse_all_reduce_spec('pscpu:1k:psgpu:1m:xring')
    assert allreduce.select_spec(tuples, 0).alg == 'pscpu'
    assert allreduce.select_spec(tuples, 1023).alg == 'pscpu'
    assert allreduce.select_spec(tuples, 1024).alg == 'psgpu'
    assert allreduce.select_spec(tuples, 1024 ** 2).alg == 'xring'


# ----------------------------------------------------------------------------------------------
# Pure plans.


def test_split_sizes():
    assert allreduce.split_sizes(10, 3) == [4, 3, 3]
    assert allreduce.split_sizes(2, 3) == [1, 1, 0]
    assert allreduce.split_sizes(9, 3) == [3, 3, 3]


def test_pack_plans_group_by_dtype_and_cap_pack_count():
    plans = allreduce.make_pack_plans([15, 7, 1, 5], ['f32', 'f32', 'f32', 'f64'], 2)
    assert plans == [allreduce.PackPlan((0, 1, 2), (12, 11)), allreduce.PackPlan((3,), (3, 2))]
    plans = allreduce.make_pack_plans([1, 1], ['f32', 'f32'], 5)  # only 2 elements: 2 packs
    assert plans == [allreduce.PackPlan((0, 1), (1, 1))]


def test_small_grad_plans():
    # Bytes 4, 400, 8, 4, 4, 12 (f64); max 100 bytes, groups of at most 2.
    plans = allreduce.make_small_grad_plans([1, 100, 2, 1, 1, 3], [4, 400, 8, 4, 4, 24],
                                            ['a', 'a', 'a', 'a', 'a', 'b'], 100, 2)
    assert [p.indices for p in plans] == [(0, 2), (1,), (3, 4), (5,)]
    assert [p.piece_sizes for p in plans] == [(3,), (100,), (2,), (3,)]


def test_pack_segments():
    assert allreduce.pack_segments([3, 4], [4, 3]) == [[(0, 3), (1, 1)], [(1, 3)]]
    assert allreduce.pack_segments([10], [4, 3, 3]) == [[(0, 4)], [(0, 3)], [(0, 3)]]
    assert allreduce.pack_segments([2, 0, 2], [2, 2]) == [[(0, 2)], [(1, 0), (2, 2)]]
    assert allreduce.pack_segments([0, 0], [0]) == [[(0, 0), (1, 0)]]


@pytest.mark.parametrize('n', [2, 3, 5])
def test_ring_schedule_reduces_then_gathers_everything(n):
    reduce_steps, gather_steps = allreduce.ring_schedule(n)
    assert len(reduce_steps) == len(gather_steps) == n - 1
    have = [[{d} for _ in range(n)] for d in range(n)]  # have[device][chunk]: contributors
    for step in reduce_steps:
        assert sorted(src for src, _, _ in step) == list(range(n))
        assert all(dst == (src + 1) % n for src, dst, _ in step)
        sent = [(dst, c, set(have[src][c])) for src, dst, c in step]
        for dst, c, contributors in sent:
            assert not contributors & have[dst][c]
            have[dst][c] |= contributors
    for i in range(n):
        assert have[i][(i + 1) % n] == set(range(n))
    for step in gather_steps:
        sent = [(dst, c, set(have[src][c])) for src, dst, c in step]
        for dst, c, contributors in sent:
            assert contributors == set(range(n))
            have[dst][c] = contributors
    assert all(chunk == set(range(n)) for device in have for chunk in device)


def test_device_groups():
    cpus = ['/cpu:%d' % i for i in range(8)]
    assert allreduce.device_groups(cpus) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert allreduce.device_groups(cpus[:3]) == [[0, 1], [2]]
    tasks = ['/job:worker/task:%d/gpu:%d' % (t, g) for t in range(2) for g in range(3)]
    assert allreduce.device_groups(tasks) == [[0, 1, 2], [3, 4, 5]]


# ----------------------------------------------------------------------------------------------
# Numeric results on logical CPU devices.


def _reduce(num_devices, spec=None, shapes=SHAPES, dtypes=DTYPES, **kwargs):
    """Builds and runs an all-reduce; returns (inputs, outputs as numpy, output tensors)."""
    devices = ['/cpu:%d' % i for i in range(num_devices)]
    rng = np.random.default_rng(num_devices)
    values = [[rng.standard_normal(s).astype(dt) for s, dt in zip(shapes, dtypes, strict=True)]
              for _ in devices]
    graph = tf.Graph()
    with graph.as_default():
        tower_grads = []
        for device, tower in zip(devices, values, strict=True):
            with tf1.device(device):
                tower_grads.append([tf.constant(v) for v in tower])
        tuples = allreduce.parse_all_reduce_spec(spec) if spec else None
        out = allreduce.all_reduce_gradients(tower_grads, devices, tuples, **kwargs)
    config = tf1.ConfigProto(device_count={'CPU': NUM_CPUS}, allow_soft_placement=False)
    with tf1.Session(graph=graph, config=config) as sess:
        return values, sess.run(out), out


def _check(num_devices, spec=None, **kwargs):
    values, results, out = _reduce(num_devices, spec, **kwargs)
    for j in range(len(SHAPES)):
        expected = np.sum([tower[j] for tower in values], axis=0)
        for i in range(num_devices):
            assert results[i][j].shape == expected.shape
            assert results[i][j].dtype == expected.dtype
            np.testing.assert_allclose(results[i][j], expected, rtol=1e-6, atol=1e-6)
            assert out[i][j].device == '/device:CPU:%d' % i, (i, j, out[i][j].device)
    return results


CPU_CONFIGS = [
    ('default', None, {}),
    ('pscpu', 'pscpu', {}),
    ('pscpu#3', 'pscpu#3', {}),
    ('psgpu', 'psgpu', {}),
    ('psgpu#2', 'psgpu#2', {}),
    ('xring', 'xring', {}),
    ('xring#2', 'xring#2', {}),
    ('xring#3', 'xring#3', {}),
    ('threshold pscpu/xring', 'pscpu:32:xring', {}),
    ('threshold three', 'xring#2:20:pscpu:100:psgpu#2', {}),
    ('hierarchical pscpu/xring', 'pscpu/xring', {}),
    ('hierarchical xring/psgpu#2', 'xring/psgpu#2', {}),
    ('repack 1', None, {'num_packs': 1}),
    ('repack 3 xring', 'xring', {'num_packs': 3}),
    ('repack 2 threshold', 'pscpu:1k:xring#2', {'num_packs': 2}),
    ('small grads pscpu', 'pscpu', {'agg_small_grads_max_bytes': 100,
                                    'agg_small_grads_max_group': 2}),
    ('small grads xring', 'xring', {'agg_small_grads_max_bytes': 1000}),
]


@pytest.mark.parametrize('num_devices', [2, 3])
@pytest.mark.parametrize('name, spec, kwargs', CPU_CONFIGS, ids=[c[0] for c in CPU_CONFIGS])
def test_sum_on_every_device(num_devices, name, spec, kwargs):
    results = _check(num_devices, spec, **kwargs)
    for j in range(len(SHAPES)):  # every copy of a sum is bitwise the same
        for i in range(1, num_devices):
            np.testing.assert_array_equal(results[i][j], results[0][j])


@pytest.mark.parametrize('spec, kwargs', [
    (None, {'hierarchical_copy': True}),
    (None, {'hierarchical_copy': True, 'num_packs': 2}),
    ('pscpu/xring#2', {}),
    ('xring/xring', {}),
])
def test_hierarchical_on_eight_devices(spec, kwargs):
    _check(8, spec, **kwargs)


@pytest.mark.parametrize('kwargs', [{'num_packs': 2}, {'agg_small_grads_max_bytes': 64},
                                    {'num_packs': 3}])
def test_repacking_keeps_zero_size_and_straddling_gradients(kwargs):
    shapes, dtypes = [(0,), (5, 3), (0, 2), (9,)], [np.float32] * 4
    values, results, out = _reduce(2, 'xring', shapes=shapes, dtypes=dtypes, **kwargs)
    for j, shape in enumerate(shapes):
        for i in range(2):
            assert results[i][j].shape == shape
            np.testing.assert_allclose(results[i][j], values[0][j] + values[1][j], rtol=1e-6)
            assert out[i][j].device == '/device:CPU:%d' % i


def test_hierarchical_copy_reduces_within_groups_of_four():
    _, _, out = _reduce(8, None, shapes=[(4,)], dtypes=[np.float32], hierarchical_copy=True)
    graph = out[0][0].graph
    sums = [op for op in graph.get_operations() if op.type == 'AddN']
    assert sorted(len(op.inputs) for op in sums) == [2, 4, 4]


def test_default_builds_one_sum_and_copies():
    _, _, out = _reduce(2, None, shapes=[(3,), (4, 4)], dtypes=[np.float32] * 2)
    types = [op.type for op in out[0][0].graph.get_operations()]
    assert types.count('AddN') == 2 and types.count('Identity') == 2
    assert out[0][0].op.type == 'AddN' and out[1][0].op.type == 'Identity'


def test_xring_adds_on_every_device():
    _, _, out = _reduce(3, 'xring', shapes=[(10,)], dtypes=[np.float32])
    adds = [op for op in out[0][0].graph.get_operations() if op.type == 'AddV2']
    assert len(adds) == 3 * 2
    assert {op.device for op in adds} == {'/device:CPU:%d' % i for i in range(3)}


def test_none_gradients_pass_through_and_one_device_is_identity():
    graph = tf.Graph()
    with graph.as_default():
        a = [tf.constant([1.0]), None]
        b = [tf.constant([2.0]), None]
        out = allreduce.all_reduce_gradients([a, b], ['/cpu:0', '/cpu:1'], None)
        assert out[0][1] is None and out[1][1] is None
        assert allreduce.all_reduce_gradients([a], ['/cpu:0'], None) == [a]


@pytest.mark.parametrize('spec, kwargs', [
    (None, {'use_nccl': True}),
    ('nccl', {}),
    ('pscpu:1k:nccl', {}),
    ('nccl/xring', {}),
])
def test_nccl_on_cpu_raises_clear_error(spec, kwargs):
    with pytest.raises(ValueError, match='nccl all-reduce needs GPU devices'):
        _reduce(2, spec, **kwargs)


@pytest.mark.parametrize('spec, kwargs, problem', [
    (None, {'num_packs': 2, 'agg_small_grads_max_bytes': 10}, 'exclude each other'),
    ('xring', {'hierarchical_copy': True}, 'exclude an all_reduce_spec'),
])
def test_conflicting_options_raise(spec, kwargs, problem):
    with pytest.raises(ValueError, match=problem):
        _reduce(2, spec, **kwargs)


def test_mismatched_towers_raise():
    graph = tf.Graph()
    with graph.as_default():
        a, b = tf.zeros([2]), tf.zeros([3])
        with pytest.raises(ValueError, match='differs across towers'):
            allreduce.all_reduce_gradients([[a], [b]], ['/cpu:0', '/cpu:1'])
        with pytest.raises(ValueError, match='one gradient list per device'):
            allreduce.all_reduce_gradients([[a]], ['/cpu:0', '/cpu:1'])


# ----------------------------------------------------------------------------------------------
# Around the all-reduce (grad_transfer.py): float16 compaction and the one-step deferral.


def _sum_dtypes(graph) -> set:
    """The dtypes of the all-reduce's sums (AddN: default and ps; AddV2: the ring)."""
    return {op.get_attr('T') for op in graph.get_operations() if op.type in ('AddN', 'AddV2')}


@pytest.mark.parametrize('spec, kwargs', [(None, {}), ('xring', {}), ('pscpu', {'num_packs': 2}),
                                          ('psgpu', {'agg_small_grads_max_bytes': 100})])
def test_compaction_sums_in_float16_and_returns_the_gradients_dtype(spec, kwargs):
    transfer = grad_transfer.GradientTransfer(compact=True)
    shapes, dtypes = [(3, 5), (7,), (40,)], [np.float32] * 3
    values, results, out = _reduce(2, spec, shapes=shapes, dtypes=dtypes, transfer=transfer,
                                   **kwargs)
    assert _sum_dtypes(out[0][0].graph) == {tf.float16}
    assert transfer.warmup_ops == []
    for j in range(len(shapes)):
        for i in range(2):
            assert out[i][j].dtype == tf.float32 and results[i][j].dtype == np.float32
            np.testing.assert_allclose(results[i][j], values[0][j] + values[1][j], atol=1e-2)


def test_without_compaction_the_sums_keep_float32():
    _, _, out = _reduce(2, 'xring', shapes=[(3, 5)], dtypes=[np.float32],
                        transfer=grad_transfer.GradientTransfer(compact=False))
    assert _sum_dtypes(out[0][0].graph) == {tf.float32}


@pytest.mark.parametrize('num_devices, kwargs', [(2, {}), (2, {'num_packs': 1}), (1, {})])
def test_deferral_returns_the_previous_steps_sum(num_devices, kwargs):
    devices = ['/cpu:%d' % i for i in range(num_devices)]
    transfer = grad_transfer.GradientTransfer(defer=True)
    graph = tf.Graph()
    with graph.as_default():
        step = tf1.placeholder(tf.float32, [])
        tower_grads = [[tf.fill([3], step * (i + 1)), tf.fill([2, 2], step)]
                       for i in range(num_devices)]
        out = allreduce.all_reduce_gradients(tower_grads, devices, None, transfer=transfer,
                                             **kwargs)
    per_tower = sum(i + 1 for i in range(num_devices))
    config = tf1.ConfigProto(device_count={'CPU': NUM_CPUS})
    with tf1.Session(graph=graph, config=config) as sess:
        sess.run(transfer.warmup_ops)  # one zero piece in every area
        firsts = sess.run(out, {step: 1.0})
        seconds = sess.run(out, {step: 2.0})
    for i in range(num_devices):
        np.testing.assert_array_equal(firsts[i][0], np.zeros(3))  # the warm-up's zeros
        np.testing.assert_array_equal(firsts[i][1], np.zeros([2, 2]))
        np.testing.assert_array_equal(seconds[i][0], np.full(3, 1.0 * per_tower))  # step 1's
        np.testing.assert_array_equal(seconds[i][1], np.full([2, 2], 1.0 * num_devices))


def _first_hops(out) -> set:
    """(sender, adder) CPU indices of the ring's first reduce step: adds of a split chunk."""
    hops = set()
    for op in out[0][0].graph.get_operations():
        if op.type == 'AddV2' and op.inputs[0].op.type in ('Split', 'SplitV'):
            hops.add((int(op.inputs[0].op.device[-1]), int(op.device[-1])))
    return hops


@pytest.mark.parametrize('order, hops', [
    (None, {(0, 1), (1, 2), (2, 0)}),
    ([0, 2, 1], {(0, 2), (2, 1), (1, 0)}),
    ([2], {(2, 0), (0, 1), (1, 2)}),  # the unlisted devices follow in their order
])
def test_ring_order_sets_the_xring_neighbours(order, hops):
    # --gpu_indices on one host's GPUs (VariableMgrReplicated._ring_order); the values stay
    # the sums, on every tower's own device.
    values, results, out = _reduce(3, 'xring', shapes=[(6,)], dtypes=[np.float32],
                                   ring_order=order)
    assert _first_hops(out) == hops
    for i in range(3):
        np.testing.assert_allclose(results[i][0], sum(v[0] for v in values), rtol=1e-6)
        assert out[i][0].device == '/device:CPU:%d' % i
