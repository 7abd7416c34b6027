"""A cluster worker's images/sec figures (cluster/figures.py and coordination.ClusterStatsHook),
in process with injected figures: no server, no timing.

Before, each worker's `total images/sec` was its own share (about 1/N of the original's
figure, which a script grepping a worker's log read as the cluster's rate), and the chief's
`cluster total images/sec` (now `cluster images/sec`) summed the workers' rates, each over its
own time window: a worker paused 15 s gave `chief 32.40 in 1.85 s + worker 1 3.56 in 16.87 s
= 35.95`, while the cluster trained its 120 images in about 17 s.
"""

from __future__ import annotations

import types

import pytest
import tensorflow as tf

from tf_cnn_benchmarks.cluster import coordination, figures, topology
from tf_cnn_benchmarks.lifecycle import training_loop

import helpers

NOTHING = training_loop.NOTHING_TIMED


def _stats(task, rate, steps, secs, images, start, end) -> figures.WorkerStats:
    return figures.WorkerStats(task, rate, steps, secs, images, start, end)


def test_a_synchronous_workers_total_is_the_clusters_rate_as_it_sees_it():
    figure, lines = figures.worker_view(37.19, 2)
    assert figure == pytest.approx(74.38)  # the original's: workers x its steps x batch / secs
    assert lines == ["this worker's images/sec: 37.19 (its own steps; the total above: 2 "
                     "workers x this, the cluster's rate as this worker sees it)"]


def test_a_forward_only_workers_line_points_at_the_measured_total():
    # A final user: forward-only workers' "cluster's rate" of 2234 and 4714 against the chief's
    # measured 335, with nothing saying why.
    figure, [line] = figures.worker_view(50.0, 2, forward_only=True)
    assert figure == pytest.approx(100.0)
    assert line.endswith("the cluster's rate as this worker sees it if they ran side by side; "
                         "forward-only workers do not wait for each other: the chief's cluster "
                         "total, over the span of every timed part, is the measured figure)")


def test_an_asynchronous_workers_total_counts_every_workers_global_steps_in_its_window():
    # 58 global steps (its own 30 and the other worker's 28) of 2 images in its 1.80 s.
    figure, lines = figures.worker_view(33.33, 2, (58, 1.8), 2)
    assert figure == pytest.approx(58 * 2 / 1.8)
    assert lines == ["this worker's images/sec: 33.33 (its own steps; the total above: 58 "
                     "global steps of all 2 workers in its 1.80 s timed part, x 2 images)"]


def test_the_cluster_total_of_unbalanced_windows_is_the_images_over_their_span():
    """The paused worker: the chief's 60 images in 1.85 s, worker 1's 60 in 16.87 s, from
    0.15 s later: 120 images in 17.02 s, not 32.40 + 3.56 = 35.95."""
    lines, keys = figures.report([
        _stats(1, 3.56, 30, 16.87, 60, 1000.15, 1017.02),
        _stats(0, 32.40, 30, 1.85, 60, 1000.0, 1001.85)], NOTHING)
    assert lines == [
        'worker 0 images/sec: 32.40 (30 steps in 1.85 s)',
        'worker 1 images/sec: 3.56 (30 steps in 16.87 s)',
        "cluster images/sec: 7.05 (2 workers: 120 images in 17.02 s, from the first "
        "timed part's start to the last one's end)"]
    assert keys == {'worker_images_per_sec': [32.40, 3.56],
                    'cluster_images_per_sec': pytest.approx(120 / 17.02),
                    'cluster_images': 120, 'cluster_span_secs': pytest.approx(17.02)}


def test_a_synchronous_clusters_total_is_the_sum_of_its_workers_within_their_skew():
    lines, keys = figures.report([
        _stats(0, 40.0, 20, 2.0, 80, 500.0, 502.0),
        _stats(1, 40.0, 20, 2.0, 80, 500.02, 502.02)], NOTHING)
    assert keys['cluster_images_per_sec'] == pytest.approx(160 / 2.02)
    assert abs(keys['cluster_images_per_sec'] - 80.0) < 1.0
    assert lines[-1].startswith('cluster images/sec: 79.21 (2 workers: 160 images in '
                                '2.02 s')


def test_a_clock_that_jumped_back_cannot_shrink_the_span_below_a_workers_own_time():
    _, keys = figures.report([_stats(0, 40.0, 20, 2.0, 80, 500.0, 499.0),
                              _stats(1, 40.0, 20, 2.0, 80, 500.0, 499.5)], NOTHING)
    assert keys['cluster_span_secs'] == 2.0


class _Session:
    """Answers the hook's reads: the global step from `steps` in turn; the stats queue's take
    with `taken`; records every feed."""

    def __init__(self, steps=(), taken=None):
        self.steps, self.taken, self.feeds = list(steps), taken, []

    def run(self, fetch, feed_dict=None):
        if fetch == 'global_step':
            return self.steps.pop(0)
        if fetch == 'stats_put':
            self.feeds.append(list(feed_dict.values()))
        return self.taken if fetch == 'stats_take' else None


def _hook(task, sess, *, asynchronous, clock):
    p = helpers.tiny_params(job_name='worker', task_index=task, ps_hosts=['127.0.0.1:2221'],
                            worker_hosts=['127.0.0.1:2222', '127.0.0.1:2223'],
                            cross_replica_sync=not asynchronous)
    coord = types.SimpleNamespace(stats_put='stats_put', stats_in=list('abcdef'),
                                  stats_take='stats_take', has_release=False)
    hook = coordination.ClusterStatsHook(types.SimpleNamespace(
        cluster=topology.Cluster(p), coordination=coord), wall_clock=lambda: clock.pop(0))
    plan = types.SimpleNamespace(asynchronous=asynchronous, training=True,
                                 images_per_global_step=2, images_per_step=2)
    mgr = types.SimpleNamespace(traffic_bytes=lambda: {'sent': 8, 'received': 8})
    info = types.SimpleNamespace(graph=tf.Graph(), mgr=mgr, global_step='global_step')
    hook.begin(types.SimpleNamespace(sess=sess, plan=plan, info=info))
    return hook


def test_an_asynchronous_worker_reads_the_global_step_around_its_timed_part():
    """Worker 1: its total line and JSON key are the cluster's rate in its window, its
    images_per_sec its own; the chief gets its images and its window's wall times."""
    sess = _Session(steps=[10, 70])
    # Clock reads: the global step's at the start, the start, the end, the global step's.
    hook = _hook(1, sess, asynchronous=True, clock=[100.0, 100.01, 102.0, 102.01])
    hook.before_timed()
    hook.after_timed()
    loop = training_loop.LoopResult(images_per_sec=30.0, num_steps=30, elapsed_secs=2.0)
    figure, lines = hook.total_figure(loop)
    assert figure == pytest.approx(60 * 2 / 2.01)  # global steps 10 -> 70 in 100.0 -> 102.01
    assert lines[0].startswith("this worker's images/sec: 30.00 (its own steps; the total "
                               'above: 60 global steps of all 2 workers in its 2.01 s')
    result = {'images_per_sec': 30.0, 'num_steps': 30, 'elapsed_secs': 2.0}
    hook.end(result)
    assert result['images_per_sec'] == 30.0 and result['total_line_images_per_sec'] == figure
    assert sess.feeds == [[30.0, 30, 2.0, 60, 100.01, 102.0]]
    assert 'cluster_images_per_sec' not in result  # the chief's


def test_a_save_after_the_last_timed_step_is_not_in_the_window_sent_to_the_chief():
    # A fixer's finding: the chief's span ran to the end of a worker's last save (its
    # after_timed came after the hooks of the last step), so a save there lowered the total.
    sess = _Session(steps=[])
    hook = _hook(1, sess, asynchronous=False, clock=[100.0, 103.0])
    hook.before_timed()
    hook.after_timed()
    hook.end({'images_per_sec': 30.0, 'num_steps': 30, 'elapsed_secs': 2.0,
              'after_last_step_secs': 1.0})
    assert sess.feeds == [[30.0, 30, 2.0, 60, 100.0, 102.0]]


def test_the_chief_reports_the_cluster_total_from_its_workers_figures(capsys):
    taken = ([1, 0], [38.0, 40.0], [20, 20], [2.1, 2.0], [40, 40], [10.2, 10.0],
             [12.3, 12.0])
    sess = _Session(taken=taken)
    hook = _hook(0, sess, asynchronous=False, clock=[10.0, 12.0])
    hook.before_timed()
    hook.after_timed()
    figure, lines = hook.total_figure(
        training_loop.LoopResult(images_per_sec=40.0, num_steps=20, elapsed_secs=2.0))
    assert figure == 80.0 and "2 workers x this" in lines[0]
    result = {'images_per_sec': 40.0, 'num_steps': 20, 'elapsed_secs': 2.0}
    hook.end(result)
    assert capsys.readouterr().out.splitlines()[-1] == (
        "cluster images/sec: 34.78 (2 workers: 80 images in 2.30 s, from the first "
        "timed part's start to the last one's end)")
    assert result['images_per_sec'] == 40.0 and result['total_line_images_per_sec'] == 80.0
    assert result['worker_images_per_sec'] == [40.0, 38.0]
    assert result['cluster_images'] == 80 and result['cluster_span_secs'] == pytest.approx(2.3)
