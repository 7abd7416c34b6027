"""Eval in process: accuracy against a numpy computation, devices and modes, missing
checkpoints, evaluation during training and --stop_at_top_1_accuracy."""

import io
import os
import types

import numpy as np
import pytest
import tensorflow as tf

from tf_cnn_benchmarks import benchmark_cnn, run_plan
from tf_cnn_benchmarks.lifecycle import (
    checkpoints,
    eval_during_training,
    eval_runner,
    training_loop,
)
from tf_cnn_benchmarks.params import make_params

import checkout
import helpers

tf1 = tf.compat.v1
SIZE = 32  # stored images; eval's central crop keeps round(0.875 x 32) = 28 from offset 2
CROP = 28


def _jpeg(pixels) -> bytes:
    """RGB JPEG without chroma subsampling (the pipeline passes JPEG bytes through as stored)."""
    from PIL import Image
    out = io.BytesIO()
    Image.fromarray(pixels, 'RGB').save(out, 'JPEG', quality=95, subsampling=0)
    return out.getvalue()


def decode_with_tf(encoded: list[bytes]) -> list[np.ndarray]:
    """uint8 [h, w, 3] pixels of JPEG bytes, by TensorFlow's decoder (the pipeline's)."""
    graph = tf.Graph()
    with graph.as_default():
        feed = tf1.placeholder(tf.string, [])
        image = tf.io.decode_jpeg(feed, channels=3)
    with tf1.Session(graph=graph) as sess:
        return [sess.run(image, {feed: data}) for data in encoded]


def _example(encoded: bytes, label: int) -> bytes:
    feature = {
        'image/encoded': tf.train.Feature(bytes_list=tf.train.BytesList(value=[encoded])),
        'image/format': tf.train.Feature(bytes_list=tf.train.BytesList(value=[b'JPEG'])),
        'image/class/label': tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
    }
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def write_dataset(folder, *, per_subset=48, num_shards=2, seed=0):
    """ImageNet-format shards of 32x32 JPEG noise images whose mean colour depends on the label
    (1..10). Returns {subset: [(JPEG bytes, label)]}."""
    rng = np.random.RandomState(seed)
    os.makedirs(folder, exist_ok=True)
    written = {}
    for subset in ('train', 'validation'):
        items = []
        for i in range(per_subset):
            label = i % 10 + 1
            base = np.array([label * 23, 255 - label * 23, (label * 71) % 256], np.float64)
            pixels = np.clip(base + rng.normal(0, 40, [SIZE, SIZE, 3]), 0, 255).astype(np.uint8)
            items.append((_jpeg(pixels), label))
        for shard in range(num_shards):
            path = os.path.join(folder, '%s-%05d-of-%05d' % (subset, shard, num_shards))
            with tf.io.TFRecordWriter(path) as writer:
                for encoded, label in items[shard::num_shards]:
                    writer.write(_example(encoded, label))
        written[subset] = items
    return written


def numpy_trivial_accuracy(values: dict, items) -> tuple[float, float]:
    """Top-1/top-5 of the trivial model (flatten -> linear 1 -> relu 4096 -> linear classes)
    computed in numpy from checkpoint values, on the images decoded and then preprocessed as eval
    does: the central 28x28 of 32x32 (no resize needed), p / 127.5 - 1."""
    correct_1 = correct_5 = 0
    decoded = decode_with_tf([encoded for encoded, _ in items])
    for pixels, (_, label) in zip(decoded, items):
        crop = pixels[2:2 + CROP, 2:2 + CROP].astype(np.float32) / 127.5 - 1.0
        x = crop.reshape(1, -1)  # NHWC flatten, as ConvNetBuilder.flatten
        h = x @ values['cg/affine0/weights'] + values['cg/affine0/biases']
        h = np.maximum(h @ values['cg/affine1/weights'] + values['cg/affine1/biases'], 0)
        logits = (h @ values['cg/affine2/weights'] + values['cg/affine2/biases'])[0]
        higher = int(np.sum(logits > logits[label]))  # tf.nn.in_top_k: fewer than k higher
        correct_1 += higher < 1
        correct_5 += higher < 5
    return correct_1 / len(items), correct_5 / len(items)


@pytest.fixture(scope='module')
def trained(tmp_path_factory):
    """A dataset and a trivial model trained on its train subset for 12 steps."""
    root = tmp_path_factory.mktemp('eval')
    data_dir = str(root / 'data')
    items = write_dataset(data_dir)
    train_dir = str(root / 'train')
    benchmark_cnn.BenchmarkCNN(make_params(
        model='trivial', data_dir=data_dir, image_size=CROP, batch_size=8, num_batches=12,
        num_warmup_batches=0, init_learning_rate=0.003, train_dir=train_dir,
        display_every=100, shuffle_buffer_size=64), gpus=0).run()
    return types.SimpleNamespace(data_dir=data_dir, train_dir=train_dir, items=items)


def _eval(trained, **kwargs):
    defaults = dict(model='trivial', data_dir=trained.data_dir, image_size=CROP, batch_size=8,
                    eval=True, train_dir=trained.train_dir, use_datasets=True)
    defaults.update(kwargs)
    return benchmark_cnn.BenchmarkCNN(make_params(**defaults), gpus=0).run()


def test_eval_accuracy_equals_numpy_on_the_same_images(trained, capsys):
    result = _eval(trained)
    r = result['eval']
    assert r['num_examples'] == 48 and r['num_batches'] == 6 and r['global_step'] == 12
    assert result['restored_step'] == 12 and result['checkpoint_path'].endswith('model.ckpt-12')
    values = helpers.read_checkpoint_values(result['checkpoint_path'])
    top_1, top_5 = numpy_trivial_accuracy(values, trained.items['validation'])
    assert (r['top_1'], r['top_5']) == (top_1, top_5)
    out = capsys.readouterr().out
    lines = out.splitlines()
    # The original's lines: `Generating evaluation model`, `Successfully loaded model from
    # ...`, the accuracy with `[N examples]`, then the dashed `total images/sec` block, here
    # with the figures that explain it. Before: `[48 examples, global step 12]` and `eval
    # images/sec: X` with no dashes, no total line (scripts grep it).
    assert 'Generating evaluation model' in lines
    at = lines.index('Accuracy @ 1 = %.4f Accuracy @ 5 = %.4f [48 examples]' % (top_1, top_5))
    loaded = lines.index('Successfully loaded model from %s.' % result['checkpoint_path'])
    assert lines[loaded + 1] == 'Running evaluation at global_step 12' and loaded < at
    assert lines[at + 1:at + 3] == ['-' * 64, 'total images/sec: %.2f' % r['images_per_sec']]
    end = lines.index('-' * 64, at + 2)
    assert lines[end - 1].startswith('Host load: ') and end == len(lines) - 1
    assert 'eval images/sec' not in out and r['images_per_sec'] > 0
    # After the second of its 6 batches (the first sets up the session), how long the 5
    # after the first take (those the latency line counts).
    assert [line for line in out.splitlines() if line.startswith('Timed part: ')][0].startswith(
        'Timed part: 5 batches after the first, about ')
    # What else used the CPUs over the timed batches (metrics/host_load.py), as in training.
    # (or why not: these 5 batches may time less than the clock ticks can measure)
    assert [line for line in out.splitlines() if line.startswith('Host load: ')][0].startswith(
        ('Host load: other processes used ', 'Host load: not measured (the timed part lasted '))
    assert result['host_load'] is r['host_load'] and r['host_load']['wall_secs'] > 0


def test_the_eval_estimate_leaves_the_first_batchs_set_up_out():
    """--eval said 'Timed part: 15 more batches, about 32 s (2.14 s the first batch, set-up
    included)' of batches of 0.12 s (resnet50, 16 batches of 8: the rest took 3.4 s): the first
    batch's session set-up was taken for a batch's time. The clock is injected: the first
    batch takes 2.14 s, the others 0.12 s."""
    now = [0.0]
    times = iter([2.14] + [0.12] * 15)

    def run_batch(index):
        now[0] += next(times)
        return [index, 2 * index, 8]
    lines = []
    totals, batch_times, elapsed = eval_runner.timed_batches(
        run_batch, 16, log=lines.append, clock=lambda: now[0])
    # The 15 batches after the first (before: '14 more batches', those after the second,
    # beside a latency line 'over 15 batches after the first (set-up) batch').
    assert lines == ['Timed part: 15 batches after the first, about 1.8 s (120 ms the second '
                     'batch; the first took 2.14 s, set-up included)']
    assert list(totals) == [120, 240, 128] and elapsed == pytest.approx(2.14 + 15 * 0.12)
    assert batch_times == pytest.approx([2.14] + [0.12] * 15)
    # Two batches leave nothing to estimate after the second; during training (no log), no
    # line either.
    for batches, log in ((2, lines.append), (16, None)):
        lines.clear()
        times = iter([2.14] + [0.12] * 15)
        eval_runner.timed_batches(run_batch, batches, log=log, clock=lambda: now[0])
        assert lines == []


def test_the_readme_names_the_runs_without_a_timed_part_line(monkeypatch):
    """A docs reader's trial: README said every run prints `Timed part:`, and an evaluation of
    2 batches printed none (nothing is left to time after its second batch, where the line
    comes). The README names those runs now; the program prints none for each of them."""
    with open(os.path.join(checkout.REPO, 'README.md'), encoding='utf-8') as f:
        readme = ' '.join(f.read().split())
    assert ('a run with nothing left to time by then (an evaluation of one or two batches, one '
            'step without warm-up) prints none.') in readme
    for batches in (1, 2, 3):
        lines = []
        eval_runner.timed_batches(lambda index: [0, 0, 8], batches, log=lines.append)
        assert len(lines) == (batches > 2), (batches, lines)
    lines = []
    training_loop.run_loop(
        training_loop.LoopSpec(num_warmup=0, num_steps=1, images_per_step=4, display_every=10),
        lambda: (1.0,), log=lines.append)
    assert not [line for line in lines if line.startswith('Timed part')]


def _write_checkpoint(values: dict, train_dir: str, step: int) -> None:
    """Saves `values` ({checkpoint name: array}) as `train_dir`/model.ckpt-`step`."""
    graph = tf.Graph()
    with graph.as_default():
        variables = {name: tf1.Variable(value, name=name)
                     for name, value in values.items()}
        saver = tf1.train.Saver(variables)
        with tf1.Session(graph=graph) as sess:
            sess.run(tf1.global_variables_initializer())
            saver.save(sess, os.path.join(train_dir, 'model.ckpt'), global_step=step)


def test_eval_counts_a_known_answer(trained, tmp_path):
    # The trained checkpoint's accuracy is whatever 12 steps on shuffled input gave (0 once): the
    # equality above could then hold for an eval that counts nothing. Here the last layer's
    # weights are 0 and its biases rank classes 1 > 2 > ... > 5 > the rest for every image, so
    # top-1 is the share of label 1 (5 of 48) and top-5 that of labels 1-5 (25 of 48).
    values = helpers.read_checkpoint_values(_eval(trained)['checkpoint_path'])
    values['cg/affine2/weights'] = np.zeros_like(values['cg/affine2/weights'])
    biases = np.zeros_like(values['cg/affine2/biases'])
    biases[1:6] = [5, 4, 3, 2, 1]
    values['cg/affine2/biases'] = biases
    train_dir = str(tmp_path / 'known')
    _write_checkpoint(values, train_dir, 12)
    r = _eval(trained, train_dir=train_dir)['eval']
    assert (r['top_1'], r['top_5']) == (5 / 48, 25 / 48)
    assert numpy_trivial_accuracy(values, trained.items['validation']) == (5 / 48, 25 / 48)


def test_eval_on_two_replicated_devices_matches_one(trained):
    one = _eval(trained)['eval']
    two = _eval(trained, device='cpu', num_gpus=2, variable_update='replicated', batch_size=4)
    assert two['eval']['num_examples'] == 48 and two['num_devices'] == 2
    assert (two['eval']['top_1'], two['eval']['top_5']) == (one['top_1'], one['top_5'])


def test_eval_batch_size_flag(trained):
    result = _eval(trained, eval_batch_size=16)
    assert result['eval']['num_examples'] == 48 and result['per_device_batch_size'] == 16


@pytest.mark.parametrize('flags, given, expected', [
    ({}, None, (7, 50)),  # one pass: every record once, the last batch 2 examples + 6 padding
    ({'num_eval_batches': 2}, None, (2, 16)),
    # The original's whole batches: int(1.5 x 50 + 8 - 1) // 8 = 10 full batches (a user's
    # trial: this project scored ceil(E x records) examples, 75, the last batch padded).
    ({'num_eval_epochs': 1.5}, None, (10, 80)),
    # --eval counts --num_batches as given, or --num_epochs, as the original did (before: one
    # pass over the subset, whatever they said, with a warning that they had no effect).
    ({'eval': True}, 3, (3, 24)),
    ({'eval': True, 'num_epochs': 0.5}, None, (4, 32)),
    ({'eval': True, 'num_eval_batches': 2}, 3, (2, 16)),  # the eval flags come first
    ({'eval': True, 'num_eval_epochs': 1.5}, 3, (10, 80)),
    ({'num_eval_epochs': 0.001}, None, (1, 8)),  # 0 whole images: at least one batch
    ({}, 3, (7, 50)),  # during training, --num_batches is the training's: a pass
])
def test_number_of_eval_batches(flags, given, expected):
    dataset = types.SimpleNamespace(synthetic=False, num_examples=lambda subset: 50)
    plan = run_plan.make_eval_plan(make_params(**flags), dataset, num_devices=1,
                                   per_device_batch_size=8, num_batches=100,
                                   given_num_batches=given)
    assert (plan.num_batches, plan.num_examples) == expected


def test_synthetic_eval_counts_num_eval_epochs():
    # Before: --num_eval_epochs did nothing on synthetic data, and said nothing.
    dataset = types.SimpleNamespace(synthetic=True, num_examples=lambda subset: 50000)
    plan = run_plan.make_eval_plan(make_params(eval=True, num_eval_epochs=0.001), dataset,
                                   num_devices=1, per_device_batch_size=8, num_batches=100)
    assert (plan.num_batches, plan.num_examples) == (7, 56)  # ceil(50 / 8) full batches


def test_eval_on_real_data_honours_num_batches_and_num_epochs(trained):
    # A user's `--eval --num_batches=3` on 50,000 validation images: the original scored 3
    # batches, this project the whole set (a quick check became a full pass).
    r = _eval(trained, num_batches=2)['eval']
    assert (r['num_batches'], r['num_examples']) == (2, 16)
    r = _eval(trained, num_epochs=0.5)['eval']
    assert (r['num_batches'], r['num_examples']) == (3, 24)


def test_synthetic_eval_uses_num_batches():
    dataset = types.SimpleNamespace(synthetic=True, num_examples=lambda subset: 50000)
    plan = run_plan.make_eval_plan(make_params(), dataset, num_devices=1,
                                   per_device_batch_size=8, num_batches=7)
    assert (plan.num_batches, plan.num_examples) == (7, 56)


def test_eval_without_a_checkpoint_is_a_clear_error(tmp_path):
    with pytest.raises(checkpoints.CheckpointError, match=r'no checkpoint to evaluate in '
                       r'--train_dir .*; train first with --train_dir='):
        benchmark_cnn.BenchmarkCNN(make_params(eval=True, train_dir=str(tmp_path)),
                                   gpus=0).run()
    with pytest.raises(checkpoints.CheckpointError, match='--eval needs a checkpoint: give '
                       '--train_dir'):
        benchmark_cnn.BenchmarkCNN(make_params(eval=True), gpus=0).run()


def test_eval_during_training_and_stop_at_top_1(tmp_path, capsys, monkeypatch):
    # --stop_at_top_1_accuracy=0 is unset, as in the original (params/zero_values.py): every
    # evaluation scores at least 0.5 here, so 0.5 is reached at once.
    evaluate = eval_runner.Evaluator.evaluate
    monkeypatch.setattr(eval_runner.Evaluator, 'evaluate', lambda self, **kwargs: {
        **evaluate(self, **kwargs), 'top_1': 0.5})
    result = benchmark_cnn.BenchmarkCNN(make_params(
        model='trivial', batch_size=4, image_size=16, num_batches=10, num_warmup_batches=1,
        display_every=100, train_dir=str(tmp_path), eval_during_training_every_n_steps=3,
        num_eval_batches=2, stop_at_top_1_accuracy=0.5), gpus=0).run()
    # Global steps 2, 3, ...: the first evaluation is at 3 (after timed step 2) and 0.5 is
    # reached at once, so training stops there and saves.
    assert [e['global_step'] for e in result['evals']] == [3]
    assert result['stopped_at_top_1_accuracy'] and result['stopped_early']
    assert result['num_steps'] == 2 and result['global_step'] == 3
    assert result['eval']['num_examples'] == 8
    out = capsys.readouterr().out
    assert 'Stopping: eval top-1 accuracy' in out
    assert checkpoints.latest_checkpoint(str(tmp_path)).endswith('model.ckpt-3')


def test_eval_during_training_at_steps_without_train_dir(capsys):
    result = benchmark_cnn.BenchmarkCNN(make_params(
        model='trivial', batch_size=4, image_size=16, num_batches=4, num_warmup_batches=0,
        display_every=100, eval_during_training_at_specified_steps=['1', '4'],
        num_eval_batches=1), gpus=0).run()
    # The last step, due by the schedule, is the final evaluation: evaluated once.
    assert [e['global_step'] for e in result['evals']] == [1, 4]
    assert result['checkpoint_path'] is None and not result['stopped_early']
    assert [line for line in capsys.readouterr().out.splitlines()
            if 'evaluation at global_step' in line] == [
        'Running evaluation at global_step 1', 'Running final evaluation at global_step 4']


def test_training_ends_with_the_originals_final_evaluation(capsys):
    # Before: evaluations at global steps 2 and 4 of 5 only; the weights the run ended with
    # were never scored, and the header said `Mode: training`.
    bench = benchmark_cnn.BenchmarkCNN(make_params(
        model='trivial', batch_size=4, image_size=16, num_batches=4, num_warmup_batches=1,
        display_every=100, eval_during_training_every_n_steps=2, num_eval_batches=1), gpus=0)
    assert 'Mode:        training + evaluation' in bench.info_lines()
    result = bench.run()
    assert [e['global_step'] for e in result['evals']] == [2, 4, 5]
    lines = capsys.readouterr().out.splitlines()
    assert [line for line in lines if 'evaluation at global_step' in line] == [
        'Running evaluation at global_step 2', 'Running evaluation at global_step 4',
        'Running final evaluation at global_step 5']
    final = lines.index('Running final evaluation at global_step 5')
    assert lines[final + 1].startswith('Accuracy @ 1 = ')
    assert lines[final + 1].endswith(' [4 examples]')
    assert lines[final + 2].startswith('eval images/sec: ')


def test_every_n_epochs_uses_the_images_per_global_step():
    plan = types.SimpleNamespace(
        params=make_params(eval_during_training_every_n_epochs=0.5, num_warmup_batches=0),
        steps_per_epoch=100 / 8, examples_per_epoch=100, images_per_global_step=8)
    hook = eval_during_training.EvalDuringTrainingHook(plan, model=None, dataset=None)
    # Half an epoch = 50 images = 6.25 global steps of 8: evaluate at steps 7, 13, 19, 25.
    assert [s for s in range(1, 26) if hook.due(s)] == [7, 13, 19, 25]
    # After a step that passed several due points at once (warm-up): once.
    assert hook.due(8, before=0) and not hook.due(12, before=7)


def test_train_resume_eval_and_forward_only_on_the_shared_shards(imagenet_dir, tmp_path):
    def run(**kwargs):
        return benchmark_cnn.BenchmarkCNN(make_params(
            model='trivial', data_dir=imagenet_dir, image_size=32, batch_size=8,
            num_warmup_batches=0, init_learning_rate=0.001, display_every=100,
            train_dir=str(tmp_path), **kwargs), gpus=0).run()

    assert run(num_batches=3)['global_step'] == 3
    resumed = run(num_batches=2)
    assert resumed['restored_step'] == 3 and resumed['global_step'] == 5
    evaluated = run(eval=True, num_eval_batches=4)['eval']
    assert evaluated['global_step'] == 5 and evaluated['num_examples'] == 32
    assert evaluated['subset'] == 'validation' and 0 <= evaluated['top_1'] <= 1
    inference = run(forward_only=True, num_batches=2)
    assert inference['restored_step'] == 5 and inference['num_steps'] == 2


def test_timed_batches_stop_after_the_batch_a_stop_is_asked_in():
    # A signal asks the evaluation to stop: the batch that ran finishes, no other starts (the
    # last batch's stop is not asked: nothing is left to stop).
    asked = []

    def should_stop():
        asked.append(len(ran))
        return len(ran) >= 3
    ran = []
    totals, times, _ = eval_runner.timed_batches(
        lambda i: ran.append(i) or [1, 2, 4], 10, should_stop=should_stop)
    assert (ran, list(totals), len(times), asked) == ([0, 1, 2], [3, 6, 12], 3, [1, 2, 3])
    ran.clear()
    asked.clear()
    eval_runner.timed_batches(lambda i: ran.append(i) or [0, 0, 1], 2,
                              should_stop=lambda: asked.append(1) or False)
    assert (ran, asked) == ([0, 1], [1])


def test_specified_steps_the_run_never_reaches_get_one_warning(capsys):
    # Before: =1,3,7,30 on an 11-step run evaluated at 1, 3, 7 and the end; 30 (and =0) went
    # without a word.
    result = benchmark_cnn.BenchmarkCNN(make_params(
        model='trivial', batch_size=4, image_size=16, num_batches=4, num_warmup_batches=0,
        display_every=100, eval_during_training_at_specified_steps=['0', '3', '30', '40'],
        num_eval_batches=1), gpus=0).run()
    assert [e['global_step'] for e in result['evals']] == [3, 4]
    warnings = [line for line in capsys.readouterr().err.splitlines() if 'specified' in line]
    assert warnings == [
        "warning: --eval_during_training_at_specified_steps: 30 and 40 are after this run's last "
        'global step, 4, and 0 before its first, 1: no evaluation runs there (the final '
        'evaluation runs after global step 4)']


def test_unreached_evaluations_of_a_resumed_run_and_of_epochs():
    from tf_cnn_benchmarks.lifecycle import schedule_warnings
    assert schedule_warnings.unreached_evaluations(
        'eval_during_training_at_specified_epochs', [('0.5', 5), ('3', 30)], 10, 20) == (
        "--eval_during_training_at_specified_epochs: 3 (global step 30) is after this run's "
        'last global step, 20, and 0.5 (global step 5) before its first, 11 (it resumes from '
        'global step 10): no evaluation runs there (the final evaluation runs after global '
        'step 20)')
    assert schedule_warnings.unreached_evaluations('x', [('2', 2), ('20', 20)], 0, 20) is None
