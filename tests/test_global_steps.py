"""Global steps and epochs in every kind of run: the images one global step applies
(asynchronous clusters count one worker's batch), and the hooks that act every N global steps
(summaries, checkpoints, eval) labelled with the real global step and never skipping a multiple
reached during warm-up or passed over by an asynchronous cluster."""

from __future__ import annotations

import glob
import os
import types

import pytest
import tensorflow as tf

from tf_cnn_benchmarks import benchmark_cnn, run_plan
from tf_cnn_benchmarks import params as params_lib
from tf_cnn_benchmarks.cluster import topology
from tf_cnn_benchmarks.graph import learning_rate, precision
from tf_cnn_benchmarks.input_data import dataset_info
from tf_cnn_benchmarks.lifecycle import checkpoints, run_hooks, summaries
from tf_cnn_benchmarks.models import model_config

import helpers

tf1 = tf.compat.v1

CLUSTER = dict(job_name='worker', task_index=0, ps_hosts=['localhost:2221'],
               worker_hosts=['localhost:2222', 'localhost:2223'], num_gpus=2, device='cpu',
               batch_size=4, num_batches=3, num_warmup_batches=0)


def _cluster_plan(**overrides) -> run_plan.RunPlan:
    """The plan of worker 0 of 1 ps + 2 workers with 2 towers of batch 4 (no server made)."""
    p = helpers.tiny_params(**{**CLUSTER, **overrides})
    params_lib.validate_params(p)
    p = params_lib.resolve_params(p, 0)
    return run_plan.make_plan(
        p, model=model_config.get_model('trivial'), dataset=dataset_info.get_dataset(p),
        visible_gpus=0, cluster=topology.Cluster(p), subset='train',
        dtypes=precision.compute_dtypes(p))


def test_a_global_step_applies_the_global_batch_except_in_asynchronous_clusters():
    sync = _cluster_plan()
    assert (sync.global_batch_size, sync.images_per_global_step, sync.asynchronous) == (
        16, 16, False)
    assert sync.steps_per_epoch == pytest.approx(1281167 / 16)
    assert sync.last_update_step(10) == 12  # 10 + 3 steps - 1
    # Asynchronous: each worker's update (2 towers x 4 images) is one global step.
    async_plan = _cluster_plan(cross_replica_sync=False)
    assert (async_plan.global_batch_size, async_plan.images_per_global_step,
            async_plan.asynchronous) == (16, 8, True)
    assert async_plan.steps_per_epoch == pytest.approx(1281167 / 8)
    assert async_plan.last_update_step(10) == 15  # 10 + 3 steps x 2 workers - 1
    # The epochs the run covers count every worker's images: 3 steps x 16.
    assert async_plan.epochs == pytest.approx(48 / 1281167)
    replicated = _cluster_plan(cross_replica_sync=False, variable_update='distributed_replicated')
    assert replicated.images_per_global_step == 8
    collective = _cluster_plan(variable_update='collective_all_reduce', ps_hosts=[])
    assert (collective.images_per_global_step, collective.asynchronous) == (16, False)
    one_host = helpers.tiny_bench(num_gpus=2, device='cpu').plan
    assert (one_host.images_per_global_step, one_host.asynchronous) == (8, False)


def test_the_learning_rate_counts_epochs_in_images_per_global_step(monkeypatch):
    seen = []
    real = learning_rate.get_learning_rate

    def spy(*args, **kwargs):
        seen.append(kwargs['images_per_step'])
        return real(*args, **kwargs)
    monkeypatch.setattr(learning_rate, 'get_learning_rate', spy)
    p = helpers.tiny_params(**CLUSTER, cross_replica_sync=False)
    benchmark_cnn.BenchmarkCNN(p, gpus=0).build_graph()
    assert seen == [8]


def _fake_run(plan, tmp_path, global_step_value=0):
    """A graph holding a global step and a learning rate, its session, and a RunContext."""
    graph = tf.Graph()
    with graph.as_default():
        global_step = tf1.train.get_or_create_global_step()
        lr = tf.constant(0.25)
        setter = tf1.placeholder(tf.int64, [])
        assign = global_step.assign(setter)
        mgr = types.SimpleNamespace(savable_variables=lambda: {'global_step': global_step},
                                    tower_copies=dict)
        sess = tf1.Session(graph=graph)
        sess.run(tf1.global_variables_initializer())
    info = types.SimpleNamespace(graph=graph, global_step=global_step, learning_rate=lr, mgr=mgr)

    def set_step(value):
        sess.run(assign, {setter: value})
    set_step(global_step_value)
    return run_hooks.RunContext(sess=sess, info=info, plan=plan), set_step


def test_global_step_counter_reads_the_shared_step_of_asynchronous_clusters(tmp_path):
    counter = run_hooks.GlobalStepCounter(_cluster_plan(cross_replica_sync=False))
    ctx, set_step = _fake_run(counter.plan, tmp_path, 5)
    assert counter.begin(ctx) == 5
    set_step(9)  # the other worker's updates count too
    assert counter.advance(1) == (5, 9)
    set_step(12)
    assert counter.advance(2) == (9, 12)
    # One host: computed, warm-up steps included (no session read).
    local = run_hooks.GlobalStepCounter(helpers.tiny_bench(num_warmup_batches=2).plan)
    ctx, set_step = _fake_run(local.plan, tmp_path, 7)
    local.begin(ctx)
    set_step(1000)
    assert [local.advance(1), local.advance(2)] == [(7, 10), (10, 11)]
    assert [run_hooks.crossed(5, 9, 4), run_hooks.crossed(9, 11, 4), run_hooks.crossed(9, 12, 4),
            run_hooks.crossed(3, 9, 0), run_hooks.crossed(3, 9, None)] == [
                True, False, True, False, False]


def _event_steps(folder, tag):
    steps = []
    for path in sorted(glob.glob(os.path.join(folder, 'events.out.tfevents.*'))):
        for event in tf1.train.summary_iterator(path):
            steps += [event.step for v in event.summary.value if v.tag == tag]
    return steps


def test_asynchronous_summaries_and_checkpoints_use_the_shared_global_step(tmp_path):
    plan = _cluster_plan(cross_replica_sync=False, train_dir=str(tmp_path),
                         summary_verbosity=1, save_summaries_steps=4, save_model_steps=4)
    ctx, set_step = _fake_run(plan, tmp_path)
    hooks = [summaries.SummaryHook(plan, None, None), checkpoints.CheckpointHook(plan)]
    for hook in hooks:
        hook.begin(ctx)
    # The chief's own count would be 1, 2, 3; the shared step moves by both workers' updates.
    for step, shared in ((1, 3), (2, 6), (3, 7)):
        set_step(shared)
        for hook in hooks:
            hook.after_step(step, 1.5)
    result = {}
    for hook in hooks:
        hook.end(result)
    assert _event_steps(str(tmp_path), 'total_loss') == [6]
    assert [os.path.basename(p) for p in result['checkpoints']] == ['model.ckpt-6',
                                                                    'model.ckpt-7']
    ctx.sess.close()


def test_a_checkpoint_due_during_warmup_is_saved_at_its_end(tmp_path):
    # Warm-up steps reach global steps 1-3; 3 is due (every 3) and is saved at the warm-up's
    # end, before the first timed step (it used to wait for it: global step 4), then 6 (due,
    # and the end of the run).
    result = helpers.tiny_run(train_dir=str(tmp_path), num_warmup_batches=3, num_batches=3,
                              save_model_steps=3)
    assert [os.path.basename(p) for p in result['checkpoints']] == [
        'model.ckpt-3', 'model.ckpt-6']


def test_schedule_changes_beyond_the_run_are_warned_at_the_start(capsys):
    helpers.tiny_run(num_batches=2, num_warmup_batches=1,
                     piecewise_learning_rate_schedule='0.1;0.0001;0.01;1;0.001')
    err = capsys.readouterr().err
    # ImageNet, batch 4: epoch 1e-4 starts at global step int(32.03) = 32; the run's last
    # update starts from global step 2.
    assert err.count('warning:') == 1
    assert ('warning: --piecewise_learning_rate_schedule: epoch 0.0001 (global step 32) is '
            'beyond this run (its last update is at global step 2); the rate stays 0.1') in err
