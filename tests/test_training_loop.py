"""The timed loop and its statistics, with a fake step function (no TensorFlow session)."""


import pytest

from tf_cnn_benchmarks import cnn_util
from tf_cnn_benchmarks.lifecycle import run_hooks, training_loop

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
    result = training_loop.run_loop(Spec(num_warmup=2, num_steps=5, images_per_step=10,
                                         display_every=5), step_fn, log=lines.append)
    step_lines = [line for line in lines if '\timages/sec:' in line]
    assert step_lines == ['1\timages/sec: 100.0 +/- 0.0 (jitter = 0.0)\t6.908',
                          '5\timages/sec: 87.0 +/- 22.6 (jitter = 29.7)\t6.908']
    assert result.step_times == pytest.approx(KNOWN_TIMES)
    assert 'total images/sec: 86.96' in lines


Spec = training_loop.LoopSpec


def _fake_steps(losses):
    it = iter(losses)
    return lambda: (next(it),)


class _Hooks(run_hooks.RunHook):
    """after_step and should_stop as functions (None: the base's)."""

    def __init__(self, after_step=None, should_stop=None):
        self._after, self._stop = after_step, should_stop

    def after_step(self, step, loss):
        if self._after:
            self._after(step, loss)

    def should_stop(self):
        return bool(self._stop and self._stop())


def test_loop_prints_step_1_and_every_display_every():
    lines = []
    result = training_loop.run_loop(Spec(num_warmup=2, num_steps=25, images_per_step=8,
                                         display_every=10),
                                    _fake_steps([7.0] * 2 + [6.0] * 25), log=lines.append)
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
    training_loop.run_loop(Spec(num_warmup=0, num_steps=2, images_per_step=4, display_every=1,
                                show_loss=False), lambda: (None,), log=lines.append)
    # The original prints both warm-up lines with no warm-up step too (scripts wait for them).
    assert lines[:3] == ['Running warm up', 'Done warm up', 'Step\tImg/sec']
    assert all(not line.endswith('\t') for line in lines)
    step_lines = [line for line in lines if '\timages/sec:' in line]
    assert [line.count('\t') for line in step_lines] == [1, 1]


def test_accuracy_columns_follow_the_loss_column():
    lines = []
    training_loop.run_loop(Spec(num_warmup=0, num_steps=1, images_per_step=4, display_every=1,
                                extra_columns=('top_1_accuracy', 'top_5_accuracy')),
                           lambda: (2.5, 0.25, 0.75), log=lines.append)
    assert lines[2] == 'Step\tImg/sec\ttotal_loss\ttop_1_accuracy\ttop_5_accuracy'
    assert lines[3].split('\t')[2:] == ['2.500', '0.250', '0.750']


def test_time_in_hooks_is_reported_and_left_out_of_the_total(monkeypatch):
    # A fake clock: each step takes 0.01 s, each after_step 0.1 s (real sleeps stretched on a
    # loaded host, past the bounds this test had on them).
    step = _Clocked(monkeypatch, [0.01] * 3)

    def slow_hook(at, loss):
        step.now[0] += 0.1
    lines = []
    result = training_loop.run_loop(
        Spec(num_warmup=0, num_steps=3, images_per_step=4, display_every=1), step,
        [_Hooks(after_step=slow_hook)], log=lines.append)
    # Between steps: after steps 1 and 2; the hooks after step 3 come after the timed part.
    assert result.hook_secs == pytest.approx(0.2)
    assert result.after_last_secs == pytest.approx(0.1)
    assert result.elapsed_secs == pytest.approx(0.03)
    assert result.images_per_sec == pytest.approx(12 / 0.03)
    assert lines[-4] == ('0.20 s between steps went to checkpoints, summaries and evaluations '
                         "(not counted in the total line's images/sec)")


def _three_steps_with_a_save(monkeypatch, at: int, secs: float, step_secs: float = 0.05):
    """Three timed steps of `step_secs` with a save of `secs` after step `at`: (LoopResult,
    lines)."""
    step = _Clocked(monkeypatch, [step_secs] * 3)

    def save(done, loss):
        step.now[0] += secs if done == at else 0.0
    lines = []
    result = training_loop.run_loop(
        Spec(num_warmup=0, num_steps=3, images_per_step=4, display_every=1), step,
        [_Hooks(after_step=save)], log=lines.append)
    return result, lines


def test_a_save_after_the_last_timed_step_is_not_between_steps(monkeypatch):
    # A user's trial: --save_model_steps landing on the last timed step put its save in the
    # 'between steps' line (and the end-of-run save stood for it), though no step followed.
    result, lines = _three_steps_with_a_save(monkeypatch, at=3, secs=0.5)
    assert (result.hook_secs, result.after_last_secs) == (0.0, pytest.approx(0.5))
    assert result.elapsed_secs == pytest.approx(0.15)
    assert not [x for x in lines if 'between steps' in x]
    # Stopped early (a signal after step 2): the hooks after it are after the timed part too.
    step = _Clocked(monkeypatch, [0.05] * 3)

    def slow(at, loss):
        step.now[0] += 0.25
    result = training_loop.run_loop(
        Spec(num_warmup=0, num_steps=3, images_per_step=4, display_every=1), step,
        [_Hooks(after_step=slow, should_stop=lambda: step.now[0] > 0.3)], log=lines.append)
    assert (result.num_steps, result.hook_secs) == (2, pytest.approx(0.25))
    assert result.after_last_secs == pytest.approx(0.25)
    assert result.elapsed_secs == pytest.approx(0.1)


def test_a_short_save_left_out_of_the_total_is_said_too(monkeypatch):
    # A skeptic's run: one 0.04 s save in a 0.17 s loop was subtracted without a line (the line
    # needed 0.1 s as well as 1%).
    result, lines = _three_steps_with_a_save(monkeypatch, at=2, secs=0.04)
    assert result.hook_secs == pytest.approx(0.04)
    assert lines[-4] == ('0.04 s between steps went to checkpoints, summaries and evaluations '
                         "(not counted in the total line's images/sec)")



def test_without_warm_up_a_slow_first_step_is_said_with_the_figure_without_it(monkeypatch):
    # A skeptic's --num_warmup_batches=0 run: lenet's total 87 against a steady 450-930, and
    # nothing said the set-up was in it.
    lines = []
    result = training_loop.run_loop(
        Spec(num_warmup=0, num_steps=4, images_per_step=4, display_every=1),
        _Clocked(monkeypatch, [1.0, 0.01, 0.01, 0.01]), [], log=lines.append)
    assert result.images_per_sec == pytest.approx(16 / 1.03)
    assert lines[lines.index(training_loop.DASHES) - 1] == (
        "note: the first timed step took 1.00 s, 100x the others' median: with "
        "--num_warmup_batches=0 the set-up is in the total line's images/sec (400.00 without that "
        "step); "
        "1 or more warm-up steps leave it out")
    # Two steps: the second is the others' median.
    lines = []
    training_loop.run_loop(Spec(num_warmup=0, num_steps=2, images_per_step=4, display_every=1),
                           _Clocked(monkeypatch, [0.2, 0.02]), [], log=lines.append)
    assert [x for x in lines if x.startswith('note: the first timed step took 200 ms, 10x ')]
    # A first step like the others, or a warm-up step: no note.
    for warmup, times in ((0, [0.01] * 4), (1, [1.0] + [0.01] * 4)):
        lines = []
        training_loop.run_loop(Spec(num_warmup=warmup, num_steps=4, images_per_step=4,
                                    display_every=1), _Clocked(monkeypatch, times), [],
                               log=lines.append)
        assert not [x for x in lines if x.startswith('note: the first timed step')]


def test_the_default_rate_is_the_models_at_the_runs_batch():
    from tf_cnn_benchmarks.lifecycle import timed_run
    from tf_cnn_benchmarks.params import make_params

    def plan(model, batch):
        return type('Plan', (), dict(params=make_params(model=model), model=model,
                                     dataset='synthetic', images_per_global_step=batch))
    # lenet's constant 0.005 whatever the batch; resnet50's 0.128 per 256 images.
    assert timed_run.default_rate(plan('lenet', 2)) == pytest.approx(0.005)
    assert timed_run.default_rate(plan('resnet50', 256)) == pytest.approx(0.128)
    assert timed_run.default_rate(plan('no_such_model', 2)) == 0.0


def test_should_stop_ends_early_and_after_step_sees_every_step():
    seen = []
    result = training_loop.run_loop(
        Spec(num_warmup=0, num_steps=10, images_per_step=1, display_every=5),
        _fake_steps([1.0] * 10), [_Hooks(after_step=lambda s, loss: seen.append(s),
                                         should_stop=lambda: len(seen) >= 3)],
        log=lambda _: None)
    assert result.stopped_early and result.num_steps == 3 and seen == [1, 2, 3]


def test_a_stop_in_the_warm_up_stops_after_that_step_and_times_nothing():
    """Ctrl-C in the warm-up said 'stopping after the current step', then finished the warm-up,
    printed the timed part's estimate and ran a timed step (issue 41.11)."""
    calls, lines = [], []

    class Stopper(_Hooks):
        def before_timed(self):
            calls.append('before_timed')

    def step():
        calls.append('step')
        return (1.0,)
    result = training_loop.run_loop(
        Spec(num_warmup=5, num_steps=10, images_per_step=4, display_every=1), step,
        [Stopper(should_stop=lambda: calls.count('step') >= 2)], log=lines.append)
    assert calls == ['step', 'step']  # the current warm-up step finished, then nothing
    assert lines == ['Running warm up',
                     'Stopped in the warm-up after 2 of 5 warm-up steps: nothing was timed']
    assert result.stopped_in_warmup and result.stopped_early
    assert (result.num_steps, result.warmup_losses, result.step_times) == (0, [1.0, 1.0], [])


def test_a_step_stopped_by_the_chief_ends_the_loop_uncounted(monkeypatch):
    """A step that raises StopRequested (a cluster's chief stopped: its go queue closed) ends
    the timed loop like should_stop, before that step: neither it nor its wait is counted."""
    step = _Clocked(monkeypatch, [1.0, 1.0, 1.0, 7.0])
    inner = step.__call__

    def stopped_at_third_timed_step():
        out = inner()
        if step.now[0] > 3.0:  # the fourth call: warm-up 1, timed 1, timed 2, timed 3
            raise cnn_util.StopRequested('was interrupted (SIGINT)')
        return out
    lines = []
    result = training_loop.run_loop(
        Spec(num_warmup=1, num_steps=10, images_per_step=4, display_every=1),
        stopped_at_third_timed_step, [], log=lines.append)
    assert result.stopped_early and not result.stopped_in_warmup
    assert (result.num_steps, result.step_times, result.elapsed_secs) == (2, [1.0, 1.0], 2.0)
    assert result.images_per_sec == 4.0 and 'total images/sec: 4.00' in lines
    # With hooks of 0.5 s after each timed step: those after the last counted step (2) are
    # after the timed part, not between steps.
    clocked = _Clocked(monkeypatch, [1.0, 1.0, 1.0, 7.0])
    calls = []

    def stopped_at_fourth_call():
        calls.append(1)
        out = clocked()
        if len(calls) == 4:  # warm-up 1, timed 1, timed 2, timed 3
            raise cnn_util.StopRequested('was interrupted (SIGINT)')
        return out

    def hook(at, loss):
        clocked.now[0] += 0.5
    result = training_loop.run_loop(
        Spec(num_warmup=1, num_steps=10, images_per_step=4, display_every=1),
        stopped_at_fourth_call, [_Hooks(after_step=hook)], log=lines.append)
    assert (result.num_steps, result.elapsed_secs) == (2, 2.0)
    assert (result.hook_secs, result.after_last_secs) == (0.5, 0.5)


def test_a_warm_up_step_stopped_by_the_chief_times_nothing():
    calls = []

    def step():
        calls.append('step')
        if len(calls) == 3:
            raise cnn_util.StopRequested('was interrupted (SIGTERM)')
        return (1.0,)
    lines = []
    result = training_loop.run_loop(
        Spec(num_warmup=5, num_steps=10, images_per_step=4, display_every=1), step, [],
        log=lines.append)
    assert lines == ['Running warm up',
                     'Stopped in the warm-up after 2 of 5 warm-up steps: nothing was timed']
    assert result.stopped_in_warmup and result.stopped_early
    assert (result.num_steps, result.warmup_losses) == (0, [1.0, 1.0])


class _FigureHook(run_hooks.RunHook):
    """A total block's figure line made from the loop's images/sec."""

    def total_lines(self, loop):
        return ['compute images/sec: %.2f' % loop.images_per_sec]


def test_a_first_timed_step_stopped_by_the_chief_says_nothing_was_timed():
    """A worker whose chief stopped as its timed part began (StopRequested at the first timed
    step) printed `total images/sec: 0.00` and its figures from that 0.00; now its total line
    says no step was timed, in the words of the chief's line for it, and nothing else."""
    calls = []

    def step():
        calls.append('step')
        if len(calls) == 3:  # two warm-up steps, then the first timed one
            raise cnn_util.StopRequested('was interrupted (SIGINT)')
        return (1.0,)
    lines = []
    result = training_loop.run_loop(
        Spec(num_warmup=2, num_steps=10, images_per_step=4, display_every=1), step,
        [_FigureHook()], log=lines.append)
    assert lines[-3:] == [training_loop.DASHES, 'total images/sec: none (nothing timed: '
                          'stopped before the first timed step)', training_loop.DASHES]
    assert not any(line.startswith('compute images/sec') for line in lines)
    assert result.nothing_timed and result.stopped_early and not result.stopped_in_warmup
    assert (result.num_steps, result.step_times, result.warmup_losses) == (0, [], [1.0, 1.0])


class _Clocked:
    """A step function on a fake clock: each call takes the next of `durations` seconds."""

    def __init__(self, monkeypatch, durations, loss=1.0):
        self.now = [0.0]
        self.durations = iter(durations)
        self.loss = loss
        self.traced_calls = 0
        monkeypatch.setattr(training_loop.time, 'perf_counter', lambda: self.now[0])

    def __call__(self):
        self.now[0] += next(self.durations)
        return (self.loss,)

    def traced(self):
        self.traced_calls += 1
        return self(), 'stats %d' % self.traced_calls


def test_the_estimate_is_the_median_warm_up_step_not_the_fastest(monkeypatch):
    # A trial under load: 'about 14 s (1.40 s a step in the warm-up)', and the 10 timed steps
    # took 33.5 s: one fast warm-up step among slow ones set the estimate.
    step = _Clocked(monkeypatch, [9.0, 3.3, 1.4, 3.4, 3.3] + [3.35] * 10)
    lines = []
    training_loop.run_loop(Spec(num_warmup=5, num_steps=10, images_per_step=4,
                                display_every=50), step, log=lines.append)
    assert lines[2] == ('Timed part: 10 steps after 5 warm-up steps, about 33 s (3.30 s a step '
                        'in the warm-up)')


def test_after_the_warm_up_a_line_says_how_long_the_timed_part_takes(monkeypatch):
    # The first warm-up step (the executor's set-up) does not count: the median of the others
    # (it was their least, 2.00 s: under load that promised 14 s of a 33.5-s timed part).
    step = _Clocked(monkeypatch, [10.0, 2.5, 2.0] + [2.0] * 100)
    lines = []
    training_loop.run_loop(Spec(num_warmup=3, num_steps=100, images_per_step=4,
                                display_every=50), step, log=lines.append)
    assert lines[:3] == ['Running warm up', 'Done warm up',
                         'Timed part: 100 steps after 3 warm-up steps, about 3 min 45 s (2.25 s a '
                         'step in the warm-up)']
    assert lines[3] == 'Step\tImg/sec\ttotal_loss'


def test_one_warm_up_step_gives_a_bound_and_the_first_timed_step_the_estimate(monkeypatch):
    # The only warm-up step set up the executor (0.27 s); the timed steps take 0.02 s: the line
    # after the warm-up is a bound that says so, the first timed step's gives the estimate.
    step = _Clocked(monkeypatch, [0.27] + [0.02] * 80)
    lines = []
    training_loop.run_loop(Spec(num_warmup=1, num_steps=80, images_per_step=2,
                                display_every=100), step, log=lines.append)
    assert lines[2] == ('Timed part: 80 steps, at most 22 s (270 ms the only warm-up step, '
                        'set-up included)')
    assert lines[4].startswith('1\timages/sec: 100.0')
    assert lines[5] == 'Timed part: 79 more steps, about 1.6 s (20.0 ms the first timed step)'
    assert len([line for line in lines if line.startswith('Timed part')]) == 2


def test_one_warm_up_step_and_one_timed_step_have_only_the_bound(monkeypatch):
    lines = []
    training_loop.run_loop(Spec(num_warmup=1, num_steps=1, images_per_step=2, display_every=10),
                           _Clocked(monkeypatch, [0.27, 0.02]), log=lines.append)
    assert [line for line in lines if line.startswith('Timed part')] == [
        'Timed part: 1 step, at most 0.3 s (270 ms the only warm-up step, set-up included)']


def test_without_warm_up_steps_the_estimate_follows_the_second_timed_step(monkeypatch):
    # The first step carries the set-up: a final user's estimate from it ran 14x long.
    step = _Clocked(monkeypatch, [3.5] + [0.25] * 10)
    lines = []
    training_loop.run_loop(Spec(num_warmup=0, num_steps=11, images_per_step=4,
                                display_every=100), step, log=lines.append)
    assert lines[3].startswith('1\timages/sec: ')
    # The steps after the first, as the latency line counts them (it said '9 more' beside
    # 'over 10 batches after the first').
    assert lines[4] == ('Timed part: 10 steps after the first, about 2.5 s (250 ms the second '
                        'step; the first took 3.50 s, set-up included)')
    assert len([line for line in lines if line.startswith('Timed part')]) == 1
    # A run of 2 steps: the first gives the estimate of the one left.
    lines = []
    training_loop.run_loop(Spec(num_warmup=0, num_steps=2, images_per_step=4,
                                display_every=100), _Clocked(monkeypatch, [0.5, 0.25]),
                           log=lines.append)
    assert [line for line in lines if line.startswith('Timed part')] == [
        'Timed part: 1 more step, about 0.5 s (500 ms the first step, set-up included)']


def test_a_one_step_run_without_warm_up_has_nothing_left_to_estimate(monkeypatch):
    lines = []
    training_loop.run_loop(Spec(num_warmup=0, num_steps=1, images_per_step=4, display_every=10),
                           _Clocked(monkeypatch, [0.25]), log=lines.append)
    assert not [line for line in lines if line.startswith('Timed part')]
    assert training_loop.rest_line(1, 3.0, 'batch', 'batches') == (
        'Timed part: 1 more batch, about 3.0 s (3.00 s the first batch, set-up included)')


def test_durations_read_as_a_person_would_say_them():
    assert [training_loop.format_duration(s) for s in (0.04, 9.94, 59.4, 75, 3600, 4000)] == [
        '40.0 ms', '9.9 s', '59 s', '1 min 15 s', '1 h 0 min', '1 h 7 min']
    # A last user's edges: 0.054 and 0.074 s both read '0.1 s' (0.0499 '49.9 ms'); 3599.6 s
    # read '60 min 0 s'. Rounded before the unit is chosen.
    assert [training_loop.format_duration(s) for s in (0.054, 0.074, 9.96, 59.6, 3599.6)] == [
        '54.0 ms', '74.0 ms', '10 s', '1 min 0 s', '1 h 0 min']


def test_a_sub_millisecond_batch_is_not_shown_as_zero_seconds():
    # Before: 'Timed part: 2 more batches, about 0.0 s (0.00 s the second batch; ...)' for a
    # 2-batch --eval of the trivial model.
    from tf_cnn_benchmarks.lifecycle import eval_runner
    assert eval_runner.rest_line(2, 0.00173, 0.0512) == (
        'Timed part: 2 batches after the first, about 3.46 ms (1.73 ms the second batch; the '
        'first took 51.2 ms, set-up included)')
    assert [training_loop.format_step_secs(s) for s in (2.0, 0.01, 0.0099, 0.0004, 1e-6)] == [
        '2.00 s', '10.0 ms', '9.90 ms', '0.400 ms', 'under 0.01 ms']
    assert training_loop.timed_part_line(4, 0.0025, 5) == (
        'Timed part: 4 steps after 5 warm-up steps, about 10.0 ms (2.50 ms a step in the '
        'warm-up)')


def test_a_step_below_a_second_reads_in_ms_to_three_digits():
    # A user's runs: 'Timed part ... (8.84 ms a step)' for one, '(0.01 s a step)' for a 10-ms
    # step of another: from 0.01 s the seconds kept one significant digit.
    assert [training_loop.format_step_secs(s) for s in (
        0.0123, 0.123, 1.5, 0.0104, 0.9994, 0.9996, 0.00884, 5e-5, 1e-5)] == [
        '12.3 ms', '123 ms', '1.50 s', '10.4 ms', '999 ms', '1.00 s', '8.84 ms', '0.05 ms',
        '0.01 ms']  # not '0.0500 ms', '0.0100 ms' (a last user's)
    assert training_loop.timed_part_line(10, 0.0104, 2) == (
        'Timed part: 10 steps after 2 warm-up steps, about 0.1 s (10.4 ms a step in the '
        'warm-up)')


class _Tracer(run_hooks.RunHook):
    def __init__(self, calls, lines=()):
        self.calls, self.lines, self.got = set(calls), list(lines), []

    def wants_trace(self, call):
        return call in self.calls

    def traced(self, call, wall_secs, step_stats):
        self.got.append((call, wall_secs, step_stats))

    def total_lines(self, loop):
        return self.lines


def test_hooks_get_the_traces_they_ask_for_and_add_their_total_lines_in_order(monkeypatch):
    step = _Clocked(monkeypatch, [1.0] * 6)
    a = _Tracer({2, 4}, ['a: %s' % 'first'])   # the last warm-up step and timed step 2
    b = _Tracer({4, 6}, ['b: second'])
    lines = []
    result = training_loop.run_loop(Spec(num_warmup=2, num_steps=4, images_per_step=1,
                                         display_every=10), step, [a, b], log=lines.append)
    # One trace serves every hook that asked for that step; the others run untraced.
    assert step.traced_calls == 3
    assert a.got == [(2, 1.0, 'stats 1'), (4, 1.0, 'stats 2')]
    assert b.got == [(4, 1.0, 'stats 2'), (6, 1.0, 'stats 3')]
    assert result.step_times == [1.0] * 4
    total = lines.index('total images/sec: 1.00')
    assert lines[total + 1:] == ['a: first', 'b: second', training_loop.DASHES]


class _Figure(run_hooks.RunHook):
    """Gives the total line's figure, as a cluster worker's ClusterStatsHook does."""

    def __init__(self, given):
        self.given, self.seen = given, []

    def total_figure(self, loop):
        self.seen.append(loop.images_per_sec)
        return self.given


def test_a_hooks_total_figure_replaces_the_total_line_and_its_lines_follow_it(monkeypatch):
    """A cluster worker's `total images/sec` is the cluster's rate as it sees it, its own
    figure on the next line, before the other hooks' lines; the loop's result keeps its own
    images/sec. The first hook that gives a figure wins."""
    step = _Clocked(monkeypatch, [1.0] * 3)
    first = _Figure((8.0, ["this worker's images/sec: 4.00 (its own steps; ...)"]))
    second = _Figure((99.0, ['never']))
    lines = []
    result = training_loop.run_loop(
        Spec(num_warmup=1, num_steps=2, images_per_step=4, display_every=10), step,
        [_Figure(None), first, second, _Tracer((), ['a: first'])], log=lines.append)
    total = lines.index('total images/sec: 8.00')
    assert lines[total + 1:] == ["this worker's images/sec: 4.00 (its own steps; ...)",
                                 'a: first', training_loop.DASHES]
    assert result.images_per_sec == 4.0 and first.seen == [4.0] and second.seen == []


@pytest.mark.parametrize('message, summary', [
    ("Graph execution error:\n\nDetected at node 'decode' defined at (most recent call last):\n"
     '  File "x.py", line 3, in <module>\n    sess.run(op)\nNode: \'decode\'\n'
     'Invalid JPEG data, size 22\n\t [[{{node decode}}]]', 'Invalid JPEG data, size 22'),
    ('Graph execution error:\n\nFrom /job:ps/replica:0/task:0:\nSocket closed\n'
     '=====================\nAdditional GRPC error information', 'Socket closed'),
    ('=====================\nRead less bytes than requested [[{{node save/RestoreV2}}]]',
     'Read less bytes than requested'),
    ('', 'Exception'),
    ("Error in user-defined function passed to ParallelMapDatasetV2:12 transformation with "
     "iterator: Iterator::Root::Prefetch::ParallelMapV2: Name: <unknown>, Key: "
     "image/class/label, Index: 1.  Data types don't match.\n\t [[{{node ParseSingleExample}}]]",
     "Name: <unknown>, Key: image/class/label, Index: 1.  Data types don't match."),
])
def test_error_summary_keeps_the_informative_line(message, summary):
    assert cnn_util.error_summary(Exception(message)) == summary


def test_a_fraction_of_a_millisecond_between_steps_is_not_said(monkeypatch):
    # A last user's trial: 0.16 ms between the steps of a 12 ms timed part (1.3%, no checkpoint,
    # summary or evaluation) read '0.01 s between steps went to checkpoints, ...'.
    result, lines = _three_steps_with_a_save(monkeypatch, at=1, secs=0.00016, step_secs=0.004)
    assert result.hook_secs == pytest.approx(0.00016)
    assert not [x for x in lines if 'between steps' in x]


def test_the_estimate_says_what_it_leaves_out(monkeypatch):
    # An operator's trial: 'Timed part: 1000 steps, about 10 s' for a run of summaries every
    # step that took 8 minutes; the line now names the work between steps it does not count.
    left_out = 'summaries every step and checkpoints every 50 steps'
    lines = []
    training_loop.run_loop(Spec(num_warmup=3, num_steps=100, images_per_step=4,
                                display_every=50, left_out=left_out),
                           _Clocked(monkeypatch, [10.0, 2.5, 2.0] + [2.0] * 100),
                           log=lines.append)
    assert lines[2] == ('Timed part: 100 steps after 3 warm-up steps, about 3 min 45 s (2.25 s '
                        'a step in the warm-up), '
                        'plus summaries every step and checkpoints every 50 steps (not in the '
                        'estimate)')
    lines = []
    training_loop.run_loop(Spec(num_warmup=0, num_steps=11, images_per_step=4,
                                display_every=100, left_out=left_out),
                           _Clocked(monkeypatch, [3.5] + [0.25] * 10), log=lines.append)
    assert lines[4].endswith('set-up included), plus %s (not in the estimate)' % left_out)


def test_what_the_estimate_leaves_out_comes_from_the_flags():
    import types

    from tf_cnn_benchmarks.lifecycle import timed_run

    import helpers

    def left_out(training=True, chief=True, **flags):
        plan = types.SimpleNamespace(params=helpers.tiny_params(**flags), training=training,
                                     is_chief=chief)
        return timed_run.left_out_of_estimate(plan)
    assert left_out() == ''
    assert left_out(train_dir='/td', summary_verbosity=3, save_summaries_steps=1,
                    save_model_steps=50) == 'summaries every step and checkpoints every 50 steps'
    assert left_out(train_dir='/td', save_model_secs=600,
                    eval_during_training_every_n_epochs=2.0) == (
        'checkpoints every 600 s and evaluations every 2 epochs')
    # No --train_dir: neither summaries nor checkpoints are written; not the chief: neither.
    assert left_out(summary_verbosity=1, save_summaries_steps=5, save_model_steps=5) == ''
    assert left_out(chief=False, train_dir='/td', summary_verbosity=1,
                    save_summaries_steps=5) == ''
    assert left_out(train_dir='/td', summary_verbosity=0, save_summaries_steps=5) == ''
    assert left_out(eval_during_training_every_n_steps=10) == 'evaluations every 10 steps'
