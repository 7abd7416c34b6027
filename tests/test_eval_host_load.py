"""An --eval run's host load reports as a training run's does (lifecycle/eval_runner.py's meter,
metrics/host_load.py): a busy host is said before the first batch, and the warning after the
timed batches names the figure the run printed, the original's `total images/sec`. A fake
/proc where other processes use 1.8 of 2 cores gives the figures."""

from __future__ import annotations

import pytest
import tensorflow as tf

from tf_cnn_benchmarks.lifecycle import eval_runner
from tf_cnn_benchmarks.metrics import host_load

from helpers import tiny_bench

tf1 = tf.compat.v1


class BusyProc:
    """A /proc in which each sample comes 1 s after the last, with 180 more busy ticks on 2 CPUs
    (100 a second), none of them this process's: others use 1.8 of 2 cores."""

    def __init__(self):
        self.samples = 0

    def clock(self) -> float:
        self.samples += 1  # read_files reads the files, then the clock
        return float(self.samples)

    def read(self, path: str) -> str:
        busy = 90 * self.samples
        if path.endswith('self/stat'):
            return '42 (python) R ' + ' '.join(['0'] * 20) + '\n'
        if path.endswith('stat'):
            return 'cpu0 %d 0 0 9 0 0 0 0 0 0\ncpu1 %d 0 0 9 0 0 0 0 0 0\n' % (busy, busy)
        return '3.50 1.00 0.50 3/150 999\n'


@pytest.fixture
def busy_evaluator(monkeypatch):
    monkeypatch.setenv(host_load.WARNING_ENV, '1')
    bench = tiny_bench(eval=True, num_batches=2)
    evaluator = eval_runner.Evaluator(bench.plan, bench.model, bench.dataset,
                                       bench.session_config)
    proc = BusyProc()
    reader = host_load.ProcReader('/fake', cpus=(0, 1), clock=proc.clock, ticks_per_sec=100,
                                  read=proc.read)
    evaluator.host_meter = host_load.Meter(bench.plan.threads[0], reader,
                                           figure=evaluator.host_meter.figure)
    with tf1.Session(graph=evaluator.graph) as sess:
        sess.run(evaluator.init_ops)
        values = sess.run(evaluator.savable)
    return evaluator, values


def test_an_eval_runs_busy_host_is_said_before_its_batches_naming_the_total_line(
        busy_evaluator, capsys):
    # Before: no warning before the batches. The figure named is the one the run prints, the
    # original's total line (for a while an --eval run printed `eval images/sec` instead, and
    # its warnings named that), without the words `total images/sec`, which only the total
    # line holds (scripts grep for them).
    evaluator, values = busy_evaluator
    r = evaluator.evaluate(values=values, announce=True)
    err = capsys.readouterr().err.splitlines()
    assert err == [
        'warning: the host is busy as the run starts: other processes used 1.80 of the run\'s '
        '2 cores (90%, more than 25%) over the 1.0 s of set-up before the first batch '
        '(session, restore, input warm-up) (the host\'s load average 3.5); the total line\'s '
        'images/sec may not be representative: stop it (Ctrl-C) and rerun when the host is '
        'quiet']
    load = r['host_load']
    assert load['warning'] == (
        'the total line\'s images/sec is not representative of this host: other processes used '
        '1.80 of the run\'s 2 cores (90%, more than 25%) during the timed part; rerun '
        'when the host is quiet')
    assert load['warmup']['others_fraction'] == pytest.approx(0.9)


def test_evaluations_during_training_warn_of_nothing_before_their_batches(busy_evaluator,
                                                                          capsys):
    # The training run's own hook says the host load; its evaluations only measure theirs,
    # under the name of the rate their lines print.
    evaluator, values = busy_evaluator
    evaluator.host_meter.figure = eval_runner.DURING_TRAINING_FIGURE
    r = evaluator.evaluate(values=values)
    assert capsys.readouterr().err == ''
    assert 'warmup' not in r['host_load']
    assert r['host_load']['warning'].startswith('eval images/sec is not representative')


def test_the_training_runs_warning_still_names_total_images_sec():
    start = host_load.Sample(0.0, 1.0, 0, 0, 0)
    end = host_load.Sample(1.0, 1.0, 180, 0, 0)
    assert host_load.measure(start, end, 2, 2, 100)['warning'].startswith(
        'the total line\'s images/sec is not representative')
    assert host_load.Meter(2).figure == "the total line's images/sec"
