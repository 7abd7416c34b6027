"""A resume with another global batch keeps the learning-rate schedule's epoch (issue 33.3):
epochs count from the checkpointed images seen (graph/images_seen.py), the header says the batch
changed and where the schedule goes next, and old checkpoints without the count still load."""

import os

import pytest
import tensorflow as tf

from tf_cnn_benchmarks import benchmark_cnn
from tf_cnn_benchmarks import run_header as header
from tf_cnn_benchmarks.graph import learning_rate
from tf_cnn_benchmarks.lifecycle import checkpoints, run_hooks
from tf_cnn_benchmarks.params import make_params

import helpers
import input_helpers as h
from helpers import tiny_params

tf1 = tf.compat.v1
SCHEDULE = '0.1;1;0.01;2;0.001'


class RateRecorder(run_hooks.RunHook):
    """(global step, images seen, learning rate) before the first update and after each step:
    the rate each update of the run used, keyed by the global step it started from."""

    def __init__(self):
        self.rows = []

    def begin(self, ctx):
        self.ctx = ctx
        self._record()

    def after_step(self, step, loss):
        self._record()

    def _record(self):
        info = self.ctx.info
        step, seen, lr = self.ctx.sess.run([info.global_step, info.images_seen.variable,
                                            info.learning_rate])
        self.rows.append((int(step), int(seen), round(float(lr), 6)))


@pytest.fixture(scope='module')
def records_200(tmp_path_factory):
    """200 train records (2 shards x 100 solid JPEGs)."""
    folder = str(tmp_path_factory.mktemp('records_200'))
    h.solid_shards(folder, 'train', num_shards=2, per_shard=100, size=(20, 20))
    return folder


def _bench(data_dir, train_dir, batch_size, num_batches, hooks=()):
    p = tiny_params(data_dir=data_dir, train_dir=train_dir, batch_size=batch_size,
                    num_batches=num_batches, piecewise_learning_rate_schedule=SCHEDULE,
                    optimizer='sgd', num_classes=4, gradient_clip=0.001)
    return benchmark_cnn.BenchmarkCNN(p, gpus=0, hooks=hooks)


def _rates(rows):
    return {step: lr for step, _, lr in rows}


@pytest.mark.timeout(600)
def test_a_resume_at_another_batch_counts_epochs_from_the_images_seen(records_200, tmp_path,
                                                                     capsys):
    train_dir = str(tmp_path / 'train')
    first = RateRecorder()
    bench = _bench(records_200, train_dir, 8, 20, [first])
    assert bench.plan.examples_per_epoch == 200
    assert not [x for x in bench.info_lines() if x.startswith('Resume:')]
    bench.run()
    # Batch 8, 200 records: epoch 1 at global step 25, beyond this run.
    assert _rates(first.rows) == {g: 0.1 for g in range(21)}
    assert first.rows[-1][:2] == (20, 160)
    assert checkpoints.resume_point(bench.params).images_seen == 160

    second = RateRecorder()
    resumed = _bench(records_200, train_dir, 16, 15, [second])
    lines = resumed.info_lines()
    at = lines.index([x for x in lines if x.startswith('Resume:')][0])
    assert lines[at:at + 3] == [
        'Resume:      global step 20 of model.ckpt-20: 160 images seen, 0.80 epochs',
        '             the global batch changed: 8 images a global step so far (mean), 16 now; '
        'epochs count from the images seen, not 20 steps x 16 (1.60 epochs)',
        '             --piecewise_learning_rate_schedule: rate 0.01 from global step 22 '
        '(epoch 1), rate 0.001 from global step 35 (epoch 2)']
    capsys.readouterr()
    resumed.run()
    err = capsys.readouterr().err
    # 160 images seen: the updates from 160 and 176 stay at 0.1; the one from 192 reaches
    # image 200 (epoch 1) and uses 0.01; the one from 400 (global step 35) is past epoch 2.
    # Before: 0.01 from global step 20 (20 x 16 = 1.6 epochs) and 0.001 from step 25.
    expected = {20: 0.1, 21: 0.1, **{g: 0.01 for g in range(22, 35)}, 35: 0.001}
    assert _rates(second.rows) == expected
    assert [seen for _, seen, _ in second.rows] == list(range(160, 401, 16))
    assert checkpoints.resume_point(resumed.params) == checkpoints.ResumePoint(
        os.path.join(train_dir, 'model.ckpt-35'), 35, 400)
    # The warning counts from the images too (from the step alone it would say step 25).
    assert err.count('warning:') == 1
    assert ('warning: --piecewise_learning_rate_schedule: epoch 2 (global step 35) is beyond '
            'this run (its last update is at global step 34); the rate stays 0.01') in err


def _strip_images_seen(train_dir, old_dir):
    """A copy of train_dir's latest checkpoint without 'images_seen' (an earlier version's)."""
    values = helpers.read_checkpoint_values(checkpoints.latest_checkpoint(train_dir))
    del values['images_seen']
    graph = tf.Graph()
    with graph.as_default():
        var_list = {name: tf1.get_variable(name.replace('/', '_'), initializer=value)
                    for name, value in values.items()}
        saver = tf1.train.Saver(var_list=var_list, save_relative_paths=True)
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            saver.save(sess, os.path.join(old_dir, 'model.ckpt'),
                       global_step=int(values['global_step']), write_meta_graph=False)


@pytest.mark.timeout(600)
def test_a_checkpoint_without_the_count_resumes_with_step_times_batch(records_200, tmp_path,
                                                                     capsys):
    train_dir, old_dir = str(tmp_path / 'train'), str(tmp_path / 'old')
    _bench(records_200, train_dir, 8, 20).run()
    _strip_images_seen(train_dir, old_dir)
    recorder = RateRecorder()
    bench = _bench(records_200, old_dir, 16, 5, [recorder])
    assert [x for x in bench.info_lines() if x.startswith('Resume:')] == [
        'Resume:      global step 20 of model.ckpt-20, which does not count its images (an '
        'earlier version): epochs count as 20 steps x 16 images']
    capsys.readouterr()
    bench.run()
    out = capsys.readouterr()
    assert ('Note: checkpoint %s does not count the images it saw (written by an earlier '
            'version): taking global step 20 x 16 images a step = 320 images seen; epoch-based '
            'schedules assume this run\'s global batch throughout'
            % os.path.join(old_dir, 'model.ckpt-20')) in out.out
    assert 'no optimizer state' not in out.err  # the count is not optimizer state
    # 320 images "seen": past epoch 1; epoch 2 (400) is reached by the update from 400.
    assert _rates(recorder.rows) == {20: 0.01, 21: 0.01, 22: 0.01, 23: 0.01, 24: 0.01,
                                     25: 0.001}


# --- The arithmetic, without a session.
def test_change_step_counts_from_the_images_seen():
    # From the start it is boundary_step's int(epoch x steps per epoch) (issue example).
    assert [learning_rate.change_step(e, 1000, 96) for e in (1, 2, 3, 4)] == [10, 20, 31, 41]
    assert learning_rate.change_step(1, 200, 8) == 25
    # Resumed at 16 after 160 images (global step 20).
    assert learning_rate.change_step(1, 200, 16, 20, 160) == 22
    assert learning_rate.change_step(2, 200, 16, 20, 160) == 35
    assert learning_rate.change_step(0.5, 200, 16, 20, 160) is None  # used before the resume
    p = make_params(piecewise_learning_rate_schedule=SCHEDULE)
    assert learning_rate.next_changes(p, 200, 16, 20, 160) == [('rate 0.01', 1.0, 22),
                                                               ('rate 0.001', 2.0, 35)]
    decay = make_params(init_learning_rate=0.4, num_epochs_per_decay=1,
                        learning_rate_decay_factor=0.5)
    assert learning_rate.next_changes(decay, 200, 16, 20, 250) == [('rate 0.1', 2.0, 29)]


def test_unreached_changes_of_a_resumed_run_count_images():
    p = make_params(piecewise_learning_rate_schedule=SCHEDULE)
    # Resumed at 16 after 160 images; the last update starts from global step 30 (< 35).
    assert learning_rate.unreached_changes(p, 12.5, 30, start=(200, 16, 20, 160)) == [
        '--piecewise_learning_rate_schedule: epoch 2 (global step 35) is beyond this run (its '
        'last update is at global step 30); the rate stays 0.01']
    # Counted from the step alone it would say 25 and be silent here.
    assert learning_rate.unreached_changes(p, 12.5, 30) == []


def test_resume_lines_without_a_change_of_batch_are_one_line():
    plan = _bench_plan(batch_size=8)
    point = checkpoints.ResumePoint('/t/model.ckpt-20', 20, 160)
    assert header.resume_lines(plan, point) == [
        'Resume:      global step 20 of model.ckpt-20: 160 images seen, 0.00 epochs']


def _bench_plan(**kw):
    return benchmark_cnn.BenchmarkCNN(tiny_params(**kw), gpus=0).plan


def test_the_mean_images_a_global_step_is_printed_to_two_decimals():
    # Before: '4.36364 images a global step so far (mean)'.
    import types
    plan = types.SimpleNamespace(examples_per_epoch=10000, images_per_global_step=4,
                                 params=make_params(model='trivial'))
    lines = header.resume_lines(plan, checkpoints.ResumePoint('/t/model.ckpt-11', 11, 48))
    assert lines[1].startswith('             the global batch changed: 4.36 images a global '
                               'step so far (mean), 4 now;')
