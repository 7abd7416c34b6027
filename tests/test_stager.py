"""The background stager (lifecycle/stager.py): order and counting of the staged waves, errors
of the stager thread on the main thread, shutdown; and real-data runs that use it."""

from __future__ import annotations

import threading

import pytest
import tensorflow as tf
from tensorflow.python.ops import data_flow_ops

from tf_cnn_benchmarks import benchmark_cnn, cnn_util, preprocessing
from tf_cnn_benchmarks.lifecycle import stager as stager_lib
from tf_cnn_benchmarks.params import make_params

tf1 = tf.compat.v1


class _Counting:
    """Two staging areas (two 'devices') whose put stages the next value of a counter, 1, 2, 3,
    ... in both; the put of value `fail_at` fails with `message` (an Assert, like the label
    check of the real pipeline)."""

    def __init__(self, fail_at=None, message='boom'):
        self.graph = tf.Graph()
        with self.graph.as_default():
            counter = tf1.Variable(0, dtype=tf.int32, use_resource=True)
            value = counter.assign_add(1)
            if fail_at is not None:
                check = tf1.Assert(tf.not_equal(value, fail_at), [message, value])
                with tf.control_dependencies([check]):
                    value = tf.identity(value)
            self.areas = [data_flow_ops.StagingArea([tf.int32], shapes=[[]]) for _ in range(2)]
            self.puts = [area.put([value]) for area in self.areas]
            self.gets = [area.get()[0] for area in self.areas]
            self.sizes = [area.size() for area in self.areas]
            self.init = tf1.global_variables_initializer()
        self.sess = tf1.Session(graph=self.graph)
        self.sess.run(self.init)

    def step(self):
        return [int(v) for v in self.sess.run(self.gets)]


def test_every_wave_is_taken_once_in_order_and_the_rest_stays_staged():
    c = _Counting()
    c.sess.run(c.puts)  # a warm-up fill: wave 1
    with stager_lib.BackgroundStager(c.sess, c.puts, capacity=3, already_staged=1) as stager:
        got = []
        for _ in range(6):
            stager.take()
            got.append(c.step())
    assert got == [[i, i] for i in range(1, 7)]
    assert stager.taken == 6
    # Stopped with at most 3 waves staged beyond the last one taken (7, 8, 9 when it ran ahead).
    sizes = c.sess.run(c.sizes)
    assert sizes[0] == sizes[1] == 1 + stager.staged - 6
    assert stager.staged in (5, 6, 7, 8)
    assert [c.step() for _ in range(sizes[0])] == [[i, i] for i in range(7, 7 + sizes[0])]


def test_the_stager_never_stages_more_than_its_capacity():
    c = _Counting()
    stager = stager_lib.BackgroundStager(c.sess, c.puts, capacity=3).start()
    for _ in range(500):  # wait (up to ~10 s under load) until it stops for want of room
        if c.sess.run(c.sizes) == [3, 3]:
            break
        threading.Event().wait(0.02)
    threading.Event().wait(0.2)
    assert c.sess.run(c.sizes) == [3, 3] and stager.staged == 3
    stager.take()
    c.step()
    stager.stop()
    assert stager.staged in (3, 4)


def test_a_failed_put_is_raised_on_the_main_thread_after_the_good_waves():
    c = _Counting(fail_at=4, message='wave four is bad')
    stager = stager_lib.BackgroundStager(c.sess, c.puts, capacity=2).start()
    got = []
    with pytest.raises(tf.errors.InvalidArgumentError, match='wave four is bad'):
        for _ in range(10):
            stager.take()
            got.append(c.step())
    assert got == [[1, 1], [2, 2], [3, 3]]
    stager.stop(raise_error=False)


def test_a_failed_wave_staged_after_the_last_step_is_raised_by_stop():
    c = _Counting(fail_at=3, message='ahead of the last step')
    stager = stager_lib.BackgroundStager(c.sess, c.puts, capacity=2).start()
    stager.take()
    c.step()
    while stager._thread.is_alive():
        stager._thread.join(0.05)
    with pytest.raises(tf.errors.InvalidArgumentError, match='ahead of the last step'):
        stager.stop()
    stager.stop(raise_error=False)  # already stopped: nothing more to raise


def test_a_label_error_of_the_stager_becomes_the_one_line_data_error():
    marker = preprocessing.LABEL_ERROR_MARKER
    c = _Counting(fail_at=2, message='%s labels must lie in [0, 10); a batch holds' % marker)
    with pytest.raises(cnn_util.DataError) as raised, preprocessing.data_errors():
        with stager_lib.BackgroundStager(c.sess, c.puts) as stager:
            for _ in range(3):
                stager.take()
                c.step()
    assert str(raised.value) == 'label out of range: labels must lie in [0, 10); a batch ' \
                                'holds: [2]'


def test_take_without_a_running_stager_is_an_error_not_a_hang():
    c = _Counting()
    stager = stager_lib.BackgroundStager(c.sess, c.puts, already_staged=1)
    stager.take()  # the warm-up wave needs no thread
    with pytest.raises(stager_lib.StagerError, match='not running'):
        stager.take()
    with pytest.raises(ValueError, match=r'capacity must exceed the waves already staged \(2\). '
                                         'Received: capacity=2'):
        stager_lib.BackgroundStager(c.sess, c.puts, capacity=2, already_staged=2)


def test_real_data_training_takes_one_wave_per_step_and_ends_empty(imagenet_dir, monkeypatch):
    p = make_params(model='trivial', data_dir=imagenet_dir, batch_size=4, image_size=32,
                    num_gpus=2, batch_group_size=2, num_batches=5, num_warmup_batches=2,
                    display_every=100)
    bench = benchmark_cnn.BenchmarkCNN(p, gpus=0)
    info = bench.build_graph()
    made = []
    original = stager_lib.BackgroundStager

    class Recording(original):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)

    with info.graph.as_default(), bench.create_session(info) as sess:
        bench.initialize(sess, info)
        monkeypatch.setattr(stager_lib, 'BackgroundStager', Recording)
        loop = bench.timed_loop(sess, info, [])
        sizes = sess.run(info.pipeline.size_ops)
    assert loop.num_steps == 5 and len(loop.warmup_losses) == 2
    [stager] = made
    assert stager.taken == 7  # 2 warm-up + 5 timed steps, one wave (2 devices) each
    # The warm-up fill staged 2; the stager, with room for 3, at least the other 5.
    assert 5 <= stager.staged <= 8
    assert sizes == [0, 0]
