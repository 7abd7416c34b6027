"""The timed loop and its statistics, with a fake step function (no TensorFlow session)."""

import math
import re
import time

import pytest

from tf_cnn_benchmarks import cnn_util
from tf_cnn_benchmarks.lifecycle import training_loop

# Step times (s) of 5 timed steps of 10 images: rates 100, 100, 50, 200, 80 images/sec.
KNOWN_TIMES = (0.1, 0.1, 0.2, 0.05, 0.125)


def test_rate_statistics_are_the_originals():
    stats = cnn_util.ImageRateStats(images_per_step=10)
    for seconds in KNOWN_TIMES:
        stats.add(seconds)
    mean, uncertainty, jitter = stats.summary()
    # mean: 50 images / 0.575 s.
    assert mean == pytest.approx(86.9565, abs=1e-4)
    # Standard error with the population std: mean rate 106, squared deviations
    # 36 + 36 + 3136 + 8836 + 676 = 12720; sqrt(12720 / 5) / sqrt(5) = 22.5565
    # (1.96x that = 44.2 was the old 95% interval; the sample std would give 25.2).
    assert uncertainty == pytest.approx(22.5565, abs=1e-4)
    # Jitter: median 100, absolute deviations 0, 0, 50, 100, 20 -> median 20; x 1.4826.
    assert jitter == pytest.approx(29.652, abs=1e-9)


def test_step_line_prints_the_originals_numbers():
    stats = cnn_util.ImageRateStats(images_per_step=10)
    for seconds in KNOWN_TIMES:
        stats.add(seconds)
    assert cnn_util.format_step_line(5, stats, 6.9077) == (
        '5\timages/sec: 87.0 +/- 22.6 (jitter = 29.7)\t6.908')
    assert cnn_util.format_step_line(5, stats, None) == (
        '5\timages/sec: 87.0 +/- 22.6 (jitter = 29.7)')


def test_step_line_format():
    stats = cnn_util.ImageRateStats(images_per_step=32)
    stats.add(0.5)
    assert cnn_util.format_step_line(1, stats, 6.9077) == (
        '1\timages/sec: 64.0 +/- 0.0 (jitter = 0.0)\t6.908')


def test_loop_step_lines_use_timed_steps_only(monkeypatch):
    """A fake clock: warm-up steps take 10 s each, timed steps KNOWN_TIMES; hooks take no time."""
    now = [0.0]
    durations = iter((10.0, 10.0) + KNOWN_TIMES)

    def step_fn():
        now[0] += next(durations)
        return (6.9077,)
    monkeypatch.setattr(training_loop.time, 'perf_counter', lambda: now[0])
    lines = []
    result = training_loop.run_loop(step_fn, num_warmup=2, num_steps=5, images_per_step=10,
                                    display_every=5, log=lines.append)
    step_lines = [line for line in lines if '\timages/sec:' in line]
    assert step_lines == ['1\timages/sec: 100.0 +/- 0.0 (jitter = 0.0)\t6.908',
                          '5\timages/sec: 87.0 +/- 22.6 (jitter = 29.7)\t6.908']
    assert result.step_times == pytest.approx(KNOWN_TIMES)
    assert 'total images/sec: 86.96' in lines


def _fake_steps(losses):
    it = iter(losses)
    return lambda: (next(it),)


def test_loop_prints_step_1_and_every_display_every():
    lines = []
    result = training_loop.run_loop(_fake_steps([7.0] * 2 + [6.0] * 25), num_warmup=2,
                                    num_steps=25, images_per_step=8, display_every=10,
                                    log=lines.append)
    steps = [line.split('\t')[0] for line in lines if '\timages/sec:' in line]
    assert steps == ['1', '10', '20']
    assert lines[0] == 'Running warm up' and 'Step\tImg/sec\ttotal_loss' in lines
    assert lines[-3] == lines[-1] == '-' * 64 and lines[-2].startswith('total images/sec: ')
    assert result.num_steps == 25 and result.warmup_losses == [7.0, 7.0]
    assert result.losses == [6.0] * 25 and len(result.step_times) == 25
    assert float(lines[-2].split(': ')[1]) == pytest.approx(result.images_per_sec, rel=1e-3)
    assert result.images_per_sec == pytest.approx(8 * 25 / result.elapsed_secs)


def test_forward_only_lines_have_no_loss_column():
    lines = []
    training_loop.run_loop(lambda: (None,), num_warmup=0, num_steps=2, images_per_step=4,
                           display_every=1, show_loss=False, log=lines.append)
    assert lines[0] == 'Step\tImg/sec'
    assert all(not line.endswith('\t') for line in lines)
    assert [line.count('\t') for line in lines[1:3]] == [1, 1]


def test_accuracy_columns_follow_the_loss_column():
    lines = []
    training_loop.run_loop(lambda: (2.5, 0.25, 0.75), num_warmup=0, num_steps=1,
                           images_per_step=4, display_every=1, log=lines.append,
                           extra_format=lambda e: '%.3f\t%.3f' % e,
                           extra_columns=('top_1_accuracy', 'top_5_accuracy'))
    assert lines[0] == 'Step\tImg/sec\ttotal_loss\ttop_1_accuracy\ttop_5_accuracy'
    assert lines[1].split('\t')[2:] == ['2.500', '0.250', '0.750']


def test_time_in_hooks_is_reported_and_left_out_of_the_total():
    lines = []
    result = training_loop.run_loop(lambda: (1.0,), num_warmup=0, num_steps=3,
                                    images_per_step=4, display_every=1, log=lines.append,
                                    after_step=lambda step, loss: time.sleep(0.1))
    assert result.hook_secs == pytest.approx(0.3, abs=0.1)
    assert result.elapsed_secs < 0.1
    assert result.images_per_sec == pytest.approx(12 / result.elapsed_secs)
    assert re.fullmatch(r'0\.[34] s between steps went to checkpoints, summaries and '
                        r'evaluations \(not counted in total images/sec\)', lines[-4])


def test_non_finite_loss_stops_with_step_and_hint():
    with pytest.raises(training_loop.NonFiniteLossError) as info:
        training_loop.run_loop(_fake_steps([5.0, 5.0, math.nan, 1.0]), num_warmup=0,
                               num_steps=4, images_per_step=1, display_every=1,
                               learning_rate_fn=lambda: 0.5, log=lambda _: None)
    text = str(info.value)
    assert 'the loss became nan at step 3 (learning rate 0.5)' in text
    assert text.endswith('no images/sec are reported. Lower --init_learning_rate.')
    with pytest.raises(training_loop.NonFiniteLossError) as info:
        training_loop.run_loop(_fake_steps([math.inf]), num_warmup=1, num_steps=1,
                               images_per_step=1, display_every=1, nan_hint=' or X',
                               log=lambda _: None)
    assert str(info.value).startswith('the loss became inf at warm-up step 1; ')
    assert str(info.value).endswith('Lower --init_learning_rate or X.')


def test_should_stop_ends_early_and_after_step_sees_every_step():
    seen = []
    result = training_loop.run_loop(_fake_steps([1.0] * 10), num_warmup=0, num_steps=10,
                                    images_per_step=1, display_every=5,
                                    after_step=lambda s, loss: seen.append(s),
                                    should_stop=lambda: len(seen) >= 3, log=lambda _: None)
    assert result.stopped_early and result.num_steps == 3 and seen == [1, 2, 3]


@pytest.mark.parametrize('message, summary', [
    ("Graph execution error:\n\nDetected at node 'decode' defined at (most recent call last):\n"
     '  File "x.py", line 3, in <module>\n    sess.run(op)\nNode: \'decode\'\n'
     'Invalid JPEG data, size 22\n\t [[{{node decode}}]]', 'Invalid JPEG data, size 22'),
    ('Graph execution error:\n\nFrom /job:ps/replica:0/task:0:\nSocket closed\n'
     '=====================\nAdditional GRPC error information', 'Socket closed'),
    ('=====================\nRead less bytes than requested [[{{node save/RestoreV2}}]]',
     'Read less bytes than requested'),
    ('', 'Exception'),
])
def test_error_summary_keeps_the_informative_line(message, summary):
    assert cnn_util.error_summary(Exception(message)) == summary
