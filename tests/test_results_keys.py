"""The results JSON of every mode: one key set (results_log.RESULT_KEYS, null where a key does
not apply), what a forward-only run prints kept in it (the loss and accuracy columns, and the
TensorBoard loss), and each step's printed images/sec (`mean_images_per_sec`) beside its own
(`images_per_sec`)."""

import glob
import json
import os
import random
import re

import pytest
import tensorflow as tf

from tf_cnn_benchmarks import cnn_util
from tf_cnn_benchmarks.lifecycle import results_log

import helpers

STEP_LINE = re.compile(r'^(\d+)\timages/sec: (\d+\.\d) \+/- [\d.]+ \(jitter = [\d.]+\)'
                       r'((?:\t-?[\d.]+|\tnan|\tinf)*)$')


def _written(directory) -> dict:
    (path,) = glob.glob(os.path.join(str(directory), '*.json'))
    with open(path, encoding='utf-8') as f:
        return json.load(f)


def _step_lines(out: str) -> dict:
    """{step: (printed mean images/sec, [the other columns as printed])}."""
    lines = {}
    for line in out.splitlines():
        m = STEP_LINE.match(line)
        if m:
            lines[int(m.group(1))] = (float(m.group(2)), m.group(3).split('\t')[1:])
    return lines


def test_the_documented_key_list_is_in_the_modules_docstring():
    words = set(re.findall(r'\w+', results_log.__doc__))
    assert [k for k in results_log.RESULT_KEYS if k not in words] == []
    assert len(set(results_log.RESULT_KEYS)) == len(results_log.RESULT_KEYS)


def test_training_forward_only_and_eval_jsons_have_the_same_documented_keys(tmp_path):
    # Before: an --eval JSON had no baseline, global_step, summary_dir, ...; a training run
    # without --train_dir no summary_dir or checkpoints; forward-only no trace_file, ...
    keys = set(results_log.RESULT_KEYS)
    plain = helpers.tiny_run(num_batches=2, benchmark_log_dir=str(tmp_path / 'plain'))
    assert set(plain) == keys  # run()'s dict too
    training = _written(tmp_path / 'plain')
    assert (training['summary_dir'], training['checkpoints'], training['baseline']) == (
        None, None, None)
    train_dir = str(tmp_path / 'train')
    helpers.tiny_run(num_batches=2, train_dir=train_dir, summary_verbosity=1,
                     save_summaries_steps=1, benchmark_log_dir=str(tmp_path / 'saved'))
    saved = _written(tmp_path / 'saved')
    assert saved['summary_dir'] == train_dir and len(saved['checkpoints']) == 1
    helpers.tiny_run(num_batches=2, forward_only=True,
                     benchmark_log_dir=str(tmp_path / 'forward'))
    forward = _written(tmp_path / 'forward')
    assert forward['frozen'] is False and forward['checkpoints'] is None
    helpers.tiny_run(eval=True, train_dir=train_dir, summary_verbosity=1, num_eval_batches=2,
                     benchmark_log_dir=str(tmp_path / 'eval'))
    evaluation = _written(tmp_path / 'eval')
    assert evaluation['summary_dir'] == os.path.join(train_dir, 'eval')
    assert evaluation['baseline'] is None and evaluation['global_step'] == 2
    for written in (training, saved, forward, evaluation):
        assert set(written) == keys, (written['mode'], set(written) ^ keys)
    assert [w['mode'] for w in (training, forward, evaluation)] == [
        'training', 'forward-only', 'evaluation']


def test_a_forward_only_json_holds_the_printed_loss_and_accuracies(tmp_path, capsys):
    # Before: losses all null, last_average_loss null, no step accuracy anywhere, and no
    # total_loss summary, though the step lines print all three.
    train_dir = str(tmp_path / 'train')
    result = helpers.tiny_run(forward_only=True, num_batches=3, display_every=1,
                              num_classes=3, benchmark_log_dir=str(tmp_path / 'json'),
                              train_dir=train_dir, summary_verbosity=1,
                              save_summaries_steps=1)
    printed = _step_lines(capsys.readouterr().out)
    assert sorted(printed) == [1, 2, 3]
    written = _written(tmp_path / 'json')
    assert written['losses'] == result['losses'] and None not in written['losses']
    for step in written['steps']:
        loss, top_1, top_5 = printed[step['step']][1]
        assert '%.3f' % step['loss'] == loss
        assert ('%.3f' % step['top_1_accuracy'], '%.3f' % step['top_5_accuracy']) == (
            top_1, top_5)
    assert written['last_average_loss'] == written['losses'][-1]
    summaries = {}
    for path in glob.glob(os.path.join(train_dir, 'events.out.tfevents.*')):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                summaries.setdefault(value.tag, []).append((event.step, value.simple_value))
    assert [step for step, _ in summaries['total_loss']] == [1, 2, 3]
    assert [v for _, v in summaries['total_loss']] == pytest.approx(written['losses'])


def test_training_steps_keep_the_printed_accuracy_only_when_printed(tmp_path):
    plain = helpers.tiny_run(num_batches=2)
    assert [(s['top_1_accuracy'], s['top_5_accuracy']) for s in plain['steps']] == [
        (None, None)] * 2
    shown = helpers.tiny_run(num_batches=2, print_training_accuracy=True, num_classes=3)
    assert all(0.0 <= s['top_1_accuracy'] <= s['top_5_accuracy'] == 1.0
               for s in shown['steps'])  # 3 classes: every label in the top 5


@pytest.mark.parametrize('alpha', [None, 0.3])
def test_running_means_are_the_step_lines_means(alpha):
    rng = random.Random(4)
    stats = cnn_util.ImageRateStats(8, alpha)
    times = [rng.uniform(0.01, 0.2) for _ in range(40)]
    expected = []
    for seconds in times:
        stats.add(seconds)
        expected.append(stats.summary()[0])
    assert cnn_util.running_means(times, 8, alpha) == pytest.approx(expected, rel=1e-9)
    assert cnn_util.running_means([], 8, alpha) == []


def test_each_step_record_has_the_step_lines_mean_beside_its_own_rate(capsys):
    result = helpers.tiny_run(num_batches=4, display_every=1, display_perf_ewma=0.5)
    printed = _step_lines(capsys.readouterr().out)
    for step in result['steps']:
        # The line's figure, one decimal: the record's mean so far, not the step's own rate.
        assert '%.1f' % step['mean_images_per_sec'] == '%.1f' % printed[step['step']][0]
        assert step['images_per_sec'] == pytest.approx(4 / step['step_time_secs'])
