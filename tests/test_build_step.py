"""The one builder of "this run's step at batch B" (preflight/planned_step.build_step): the same
graph as a BenchmarkCNN made at batch B, for the memory check, the batch search, the dry run
and the scaling plan."""

from __future__ import annotations

import collections

import numpy as np

from tf_cnn_benchmarks import benchmark_cnn
from tf_cnn_benchmarks.cluster import resolvers
from tf_cnn_benchmarks.preflight import memory_check, planned_step

import helpers

TWO_TOWERS = dict(device='cpu', num_gpus=2, variable_update='replicated', graph_choices='off')


def _shape_of(graph):
    """(op count, op types counted, parameters of the trainable variables, their shapes, the
    names and shapes of the tensors of NHWC 16x16 images)."""
    ops = graph.get_operations()
    with graph.as_default():
        import tensorflow as tf
        trainable = tf.compat.v1.trainable_variables()
    images = sorted((op.name, tuple(out.shape.as_list())) for op in ops for out in op.outputs
                    if out.shape.rank == 4 and out.shape.as_list()[1:] == [16, 16, 3])
    return (len(ops), collections.Counter(op.type for op in ops),
            sum(int(np.prod(v.shape.as_list())) for v in trainable),
            sorted((v.op.name, tuple(v.shape.as_list())) for v in trainable), images)


def test_build_step_at_batch_b_is_the_graph_of_a_run_at_batch_b():
    bench = helpers.tiny_bench(batch_size=4, **TWO_TOWERS)
    step = planned_step.build_step(bench.make_bench, bench.given_params, 0, batch_size=6)
    direct = helpers.tiny_bench(batch_size=6, **TWO_TOWERS)
    built = planned_step.build(direct)
    assert step.plan.per_device_batch_size == 6
    assert step.plan.devices == direct.plan.devices == bench.plan.devices
    assert _shape_of(step.built.graph) == _shape_of(built.graph)
    assert step.built.batch_bytes == built.batch_bytes == 6 * (3 * 16 * 16 * 4 + 4)
    assert step.built.model_bytes == built.model_bytes > 0
    assert len(step.built.fetches) == len(built.fetches)
    # The run's own graph at batch 4 differs only in the batch.
    own = _shape_of(planned_step.build(bench).graph)
    at_6 = _shape_of(built.graph)
    assert own[:4] == at_6[:4]
    assert [name for name, _ in own[4]] == [name for name, _ in at_6[4]] != []
    assert {shape[0] for _, shape in own[4]} == {4} and {shape[0] for _, shape in at_6[4]} == {6}


def test_build_step_changes_only_what_it_is_told():
    bench = helpers.tiny_bench(batch_size=4, **TWO_TOWERS)
    one = planned_step.build_step(bench.make_bench, bench.given_params, 0, batch_size=8,
                                  num_gpus=1)
    assert one.plan.per_device_batch_size == 8 and len(one.plan.devices) == 1
    same = planned_step.build_step(bench.make_bench, bench.given_params, 0)
    assert same.plan.per_device_batch_size == 4
    assert same.plan.params.graph_choices == bench.plan.params.graph_choices


def test_the_memory_checks_estimate_at_another_batch_is_that_runs_estimate():
    bench = helpers.tiny_bench(batch_size=4, device='cpu')
    direct = helpers.tiny_bench(batch_size=32, device='cpu', graph_choices='off')
    built = planned_step.build(direct)
    assert bench._estimate_at(32) == memory_check.estimate_for(direct.plan, built.graph,
                                                               built.fetches) > 0


def test_bench_factory_keeps_the_runs_cluster_description():
    q = helpers.tiny_params(batch_size=2)
    make = benchmark_cnn.bench_factory(resolvers.Resolution(q, 'flags', 'flags (a test)'))
    other = make(q._replace(batch_size=3), 0)
    assert other.plan.per_device_batch_size == 3
    assert other.plan.cluster_source == 'flags (a test)'
    assert other.resolution.description == 'flags (a test)'
