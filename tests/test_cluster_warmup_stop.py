"""A cluster stopped in its warm-up has no cluster total: the chief's lines say that no worker
timed a step instead of figures of 0.00. A worker stopped at its first timed step (another
task stopped the cluster as the timed part began) says so in its own total line, in the
chief's words, and its result has no images/sec: no 0.0 in its JSON, no record, no plot.

Before, each worker said `Stopped by SIGINT in the warm-up: no images/sec (nothing timed ...)`,
then the chief printed `worker 0 images/sec: 0.00 (0 steps in 0.00 s)`, the same for worker 1,
and `cluster total images/sec: 0.00` (tf_cnn_cluster relayed it as the cluster's total): a
script reading the total line read 0.00 for "nothing measured".
"""

from __future__ import annotations

import re
import signal
import sys
import time
import types

import pytest
from test_distributed import Proc, cluster_args, hosts
from test_launcher import Launch, _launch_script

from tf_cnn_benchmarks.cluster import coordination
from tf_cnn_benchmarks.lifecycle import results_db, results_log, timed_run, training_loop

pytestmark = pytest.mark.cluster


def _report(stats) -> tuple[list[str], dict]:
    """ClusterStatsHook._report on injected columns (tasks, images/sec, steps, seconds; the
    images and the timed parts' wall start and end made up: steps x 2 images, from 0 for
    their seconds): its lines and the result it filled."""
    lines, result = [], {}
    tasks, rates, steps, secs = stats
    columns = (tasks, rates, steps, secs, [2 * n for n in steps], [0.0] * len(tasks), secs)
    hook = coordination.ClusterStatsHook.__new__(coordination.ClusterStatsHook)
    saved = coordination.cnn_util.log_fn
    coordination.cnn_util.log_fn = lines.append
    try:
        hook._report(columns, result)
    finally:
        coordination.cnn_util.log_fn = saved
    return lines, result


def test_no_cluster_total_when_no_worker_timed_a_step():
    lines, result = _report(([1, 0], [0.0, 0.0], [0, 0], [0.0, 0.0]))
    assert lines == [
        'worker 0 images/sec: none (nothing timed: stopped before the first timed step)',
        'worker 1 images/sec: none (nothing timed: stopped before the first timed step)',
        'no cluster images/sec: no worker timed a step (nothing timed: stopped before the '
        'first timed step)']
    assert 'cluster_images_per_sec' not in result


def test_no_cluster_total_when_one_worker_timed_no_step():
    """An asynchronous worker may time steps while another stops in its warm-up: a sum of the
    others is not the cluster's total."""
    lines, result = _report(([0, 1], [9.5, 0.0], [20, 0], [4.2, 0.0]))
    assert lines == [
        'worker 0 images/sec: 9.50 (20 steps in 4.20 s)',
        'worker 1 images/sec: none (nothing timed: stopped before the first timed step)',
        'no cluster images/sec: worker 1 timed no step (nothing timed: stopped before the '
        'first timed step)']
    assert 'cluster_images_per_sec' not in result


def test_the_cluster_total_of_workers_that_timed_steps():
    lines, result = _report(([0, 1], [9.5, 10.5], [20, 20], [4.2, 3.8]))
    assert lines[-1] == ("cluster images/sec: 19.05 (2 workers: 80 images in 4.20 s, "
                         "from the first timed part's start to the last one's end)")
    assert result['cluster_images_per_sec'] == 80 / 4.2
    assert result['worker_images_per_sec'] == [9.5, 10.5]


def test_a_cluster_stopped_in_its_warm_up_prints_no_total(tmp_path):
    """ps + 2 workers by hand, SIGINT on worker 1 in the warm-up: the chief stops too and says
    no worker timed a step; no 0.00 figure and no cluster total line."""
    ps, workers = hosts(1), hosts(2)
    steps = ['--num_batches=10', '--num_warmup_batches=100000', '--noresults_db']
    procs = [Proc('ps0', cluster_args('ps', 0, ps, workers, timeout=120, extra=steps), tmp_path)]
    procs += [Proc('worker%d' % i, cluster_args('worker', i, ps, workers, timeout=120,
                                                extra=steps), tmp_path) for i in range(2)]
    try:
        for p in procs[1:]:
            p.wait_for(r'^Running warm up')
        time.sleep(1.0)  # a few warm-up steps
        procs[2].proc.send_signal(signal.SIGINT)
        results = [p.finish(timeout=120) for p in procs]
    finally:
        for p in procs:
            if p.proc.poll() is None:
                p.kill()
    chief = results[1]['log']
    assert results[1]['code'] == 0, chief[-3000:]
    assert results[2]['code'] == -signal.SIGINT, results[2]['log'][-3000:]
    assert re.search(r'^Stopped by SIGINT in the warm-up', results[2]['log'], re.M)
    assert re.search(r'^worker 0 images/sec: none \(nothing timed', chief, re.M), chief[-3000:]
    assert re.search(r'^worker 1 images/sec: none \(nothing timed', chief, re.M)
    assert re.search(r'^no cluster images/sec: no worker timed a step', chief, re.M)
    assert not re.search(r'^cluster images/sec', chief, re.M)
    assert not re.search(r'images/sec: 0\.00', chief)


def test_the_launcher_stopped_in_the_warm_up_prints_no_total(tmp_path):
    """`tf_cnn_cluster --num_workers=2 ...` interrupted in the warm-up: it relayed the chief's
    `cluster total images/sec: 0.00`; now it says why there is no total."""
    launch = Launch('warmup', ['--num_workers=2', '--', '--model=trivial', '--image_size=16',
                               '--batch_size=2', '--num_batches=10', '--noresults_db',
                               '--num_warmup_batches=100000'], tmp_path)
    try:
        launch.wait_for(r'^\[worker0\] Running warm up')
        launch.wait_for(r'^\[worker1\] Running warm up')
        time.sleep(1.0)
        launch.proc.send_signal(signal.SIGINT)
        run = launch.finish()
    finally:
        launch.kill()
    out = run['output']
    assert run['code'] == -signal.SIGINT, out[-3000:]
    assert not re.search(r'images/sec: 0\.00', out), out[-3000:]
    assert not re.search(r'^\[launcher\] cluster total', out, re.M)
    assert out.splitlines()[-1].startswith('[launcher] no cluster images/sec: '), out[-3000:]


def test_a_worker_stopped_at_its_first_timed_step_has_no_rate_record_or_plot(tmp_path,
                                                                             monkeypatch):
    """Its result held images_per_sec 0.0, and the chief's run was recorded in the results
    database at 0.00 images/sec (ps + 2 workers, worker 1 interrupted in its last warm-up step:
    worker 0 finished its warm-up and was stopped at its first timed step)."""
    assert coordination.NOTHING_TIMED == training_loop.NOTHING_TIMED  # the same words
    monkeypatch.setattr(results_log, 'common_fields', lambda plan: {})
    plan = type('Plan', (), {'training': True, 'global_batch_size': 4, 'images_per_step': 4,
                             'params': types.SimpleNamespace(display_perf_ewma=None)})()
    loop = training_loop.LoopResult(warmup_losses=[1.0], stopped_early=True, elapsed_secs=0.1)
    result = timed_run.loop_result(plan, loop, 1.0, None)
    assert result['images_per_sec'] is None and result['num_steps'] == 0
    assert not result['stopped_in_warmup'] and results_log.timed_nothing(result)
    db = tmp_path / 'r.sqlite'
    results_db.RecordHook(str(db)).report(result)
    plot = results_log.PlotHook(str(tmp_path / 'p.png'))
    plot.end(result)
    plot.report(result)
    assert not db.exists() and not (tmp_path / 'p.png').exists()
    assert result['plot_file'] is None
    timed = dict(result, images_per_sec=4.0, num_steps=1)
    assert not results_log.timed_nothing(timed)


UNTIMED_TASK = """#!%s
import sys
if '--task_index=0' in sys.argv and '--job_name=worker' in sys.argv:
    print('total images/sec: none (nothing timed: stopped before the first timed step)')
    print('no cluster images/sec: worker 0 timed no step (nothing timed: ...)')
elif '--job_name=worker' in sys.argv:
    print('total images/sec: 4.00')
"""


def test_the_launcher_relays_a_worker_that_timed_nothing(tmp_path):
    """Without a figure from worker0, the launcher summed the others into a cluster total the
    chief had refused; now it relays worker0's line and gives no total."""
    status, out, _ = _launch_script(tmp_path, UNTIMED_TASK % sys.executable, '--num_ps=1',
                                    '--num_workers=2', '--model=trivial')
    assert status == 0
    assert out.splitlines()[-3:] == [
        '[launcher] worker0 images/sec: none (nothing timed: stopped before the first timed '
        'step)', '[launcher] worker1 images/sec: 4.00',
        '[launcher] no cluster images/sec: worker0 timed no step']
