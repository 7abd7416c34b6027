"""A run stopped (SIGSTOP/Ctrl-Z) or paused (`docker pause`) during its timed part is not
clean (metrics/stall.py): a trial user's `kill -STOP` of 4 s was recorded as clean with 380.88
images/sec instead of about 600. The rules with injected step times; the hook with a fake /proc
and a real SIGCONT; one real run stopped and continued."""

from __future__ import annotations

import glob
import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest
from test_host_load import FakeProc

from tf_cnn_benchmarks.lifecycle import figure_hooks, training_loop
from tf_cnn_benchmarks.metrics import baseline, clean_runs, stall

import helpers

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MS = 0.006  # a trivial step's median
# 100 timed steps of 6 ms, step 55 held up 4 s: 4.006 s.
HELD = [MS] * 54 + [MS + 4.0] + [MS] * 45


def test_a_sigcont_measures_the_stop_by_the_step_it_held_up():
    # 100 steps of 32 images: 3.2 s of work plus the 4 s stop.
    elapsed = sum(HELD)
    s = stall.judge(HELD, 1, images_per_sec=3200 / elapsed, elapsed_secs=elapsed)
    assert s['how'] == stall.SIGCONT and s['steps'] == [55]
    assert s['stopped_secs'] == pytest.approx(4.0)
    assert s['images_per_sec_without'] == pytest.approx(3200 / 0.6)
    assert stall.reason(s) == (
        'the process was stopped for 4.0 s during the timed part (SIGSTOP/Ctrl-Z, then '
        'SIGCONT: timed step 55 took 4.01 s, the median 6.00 ms): its images/sec include that '
        'time (about 5333.33 without it)')


def test_a_sigcont_that_held_up_no_step_reports_nothing_unless_the_figure_holds_the_gap():
    steps = [MS] * 100
    # A SIGCONT to a running process, or a stop during a checkpoint (not in the figure).
    assert stall.judge(steps, 1, elapsed_secs=sum(steps) + 0.005) is None
    # Stopped between two steps, inside the figure's seconds: 2 s outside the steps.
    s = stall.judge(steps, 1, images_per_sec=1.0, elapsed_secs=sum(steps) + 2.0)
    assert s['stopped_secs'] == pytest.approx(2.0) and s['steps'] == []
    assert 'then SIGCONT: between timed steps)' in stall.reason(s)
    # Two SIGCONTs: the two longest steps at least twice the median.
    two = [MS] * 10 + [1.0] + [MS] * 10 + [0.5] + [MS] * 10 + [0.011]
    assert stall.judge(two, 2)['steps'] == [11, 22]


def test_a_sigcont_with_too_few_steps_is_a_stall_of_unknown_length():
    s = stall.judge([0.2, 3.0], 1)
    assert s['stopped_secs'] is None and stall.is_stalled(s)
    state = clean_runs.state({'others_fraction': 0.0, 'steal_fraction': 0.0, 'stall': s})
    assert state.badge == 'stalled ?'
    assert 'stopped for an unknown time during the timed part (SIGSTOP/Ctrl-Z, then SIGCONT: ' \
           'too few timed steps to measure the stop)' in state.why()


def test_a_pause_without_signal_is_a_step_20x_the_median_and_1_s_above_it():
    s = stall.judge(HELD, 0)
    assert s['how'] == stall.LONG_STEPS and s['steps'] == [55]
    assert s['stopped_secs'] == pytest.approx(4.0)
    assert stall.reason(s).startswith(
        'the process was paused for 4.0 s during the timed part (a paused container or a '
        'stopped process, on an otherwise quiet host: timed step 55 took 4.01 s')
    # On a busy host the long step may be the neighbours' (the run is unclean as busy).
    assert stall.judge(HELD, 0, host_busy=True) is None
    # 83x the median but 0.49 s above it: a hiccup, not a pause.
    assert stall.judge([MS] * 54 + [0.5] + [MS] * 45, 0) is None
    # 1.2 s above the median but 7x it (0.2 s steps): within what a large model's steps vary.
    assert stall.judge([0.2] * 54 + [1.4] + [0.2] * 45, 0) is None
    assert stall.judge([0.2] * 54 + [4.3] + [0.2] * 45, 0)['steps'] == [55]


def test_without_warm_up_the_set_up_step_is_no_pause():
    first = [5.0] + [MS] * 99
    assert stall.judge(first, 0) is not None  # the rule alone would take it
    assert stall.judge(first, 0, first_sets_up=True) is None
    # The steps keep their numbers: the set-up step is step 1.
    assert stall.judge([5.0] + HELD, 0, first_sets_up=True)['steps'] == [56]


def test_a_stall_makes_the_run_unclean_everywhere_the_rule_is_read():
    load = {'others_fraction': 0.02, 'steal_fraction': 0.0,
            'stall': stall.judge(HELD, 1, images_per_sec=5000.0, elapsed_secs=10.0)}
    state = clean_runs.state(load, 100, 100)
    assert not state.clean and state.reasons == ['stalled']
    assert state.badge == state.verdict == 'stalled 4.0 s'
    assert state.why().startswith('stalled: the process was stopped for 4.0 s during the '
                                  'timed part (SIGSTOP/Ctrl-Z, then SIGCONT: timed step 55')
    assert state.describe().endswith('(left out of the verdicts unless --include_unclean_runs)')
    assert clean_runs.reason_lines([state]) == [
        '1 was stopped or paused during its timed part (its images/sec include it)']
    assert baseline._remedy(state) == 'rerun without stopping or pausing it'
    # A database row keeps the host load in its figures_json: the same verdict.
    from tf_cnn_benchmarks.history import records
    row = {'figures_json': json.dumps({'host_load': load,
                                       'timed_steps': {'run': 100, 'planned': 100}})}
    assert records.host_load_word(row) == 'stalled 4.0 s'
    # A sweep record keeps it too.
    from tf_cnn_benchmarks.tools.sweep import host_load as sweep_load
    record = {'host_load': sweep_load.record_host_load({'host_load': load})}
    assert sweep_load.record_state(record).stalled
    # No stall, or a SIGCONT that held nothing up: clean.
    assert clean_runs.state(dict(load, stall=None), 100, 100).clean


def _main_thread():
    if threading.current_thread() is not threading.main_thread():
        pytest.skip('signal handlers are installed in the main thread only')


def test_the_watch_counts_sigcont_and_puts_the_previous_handler_back():
    _main_thread()
    seen = []
    previous = signal.signal(signal.SIGCONT, lambda signum, frame: seen.append(signum))
    try:
        watch = stall.ContinueWatch()
        watch.start()
        os.kill(os.getpid(), signal.SIGCONT)
        assert helpers.wait_for(lambda: watch.count, 5, _Alive())
        assert watch.count == 1 and seen == [signal.SIGCONT]  # the previous one still runs
        watch.stop()
        watch.stop()
        os.kill(os.getpid(), signal.SIGCONT)
        assert helpers.wait_for(lambda: len(seen) == 2, 5, _Alive())
        assert watch.count == 1
    finally:
        signal.signal(signal.SIGCONT, previous)


class _Alive:
    def poll(self):
        return None


def _quiet_hook(said):
    proc = FakeProc()
    proc.set('0.20', user=(1000, 1000), system=(100, 100), own=(500, 50, 10, 0))
    hook = figure_hooks.HostLoadHook(helpers.stub_plan(), reader=proc.reader(),
                                     warn=said.append, quota=None)
    hook.before_timed()
    # 10 s on 2 CPUs, every busy tick this process's: others 0%.
    proc.now += 10.0
    proc.set('0.30', user=(1500, 1000), system=(100, 100), own=(1000, 50, 10, 0))
    return hook


def test_the_hook_warns_once_and_records_the_stall_in_the_host_load():
    _main_thread()
    before = signal.getsignal(signal.SIGCONT)
    said = []
    hook = _quiet_hook(said)
    os.kill(os.getpid(), signal.SIGCONT)
    assert helpers.wait_for(lambda: hook.continued.count, 5, _Alive())
    hook.after_timed()
    assert signal.getsignal(signal.SIGCONT) == before
    loop = training_loop.LoopResult(images_per_sec=320.0, step_times=HELD, num_steps=100,
                                    elapsed_secs=10.0)
    lines = hook.total_lines(loop)
    assert lines[0].startswith('Host load: other processes used 0.00 of 2 cores (0%)')
    assert said == [stall.reason(hook.load['stall'])]
    assert said[0].endswith('its images/sec include that time (about 533.33 without it)')
    result = {}
    hook.end(result)
    assert result['host_load']['stall']['stopped_secs'] == pytest.approx(4.0)
    assert clean_runs.of_result(dict(result, num_steps=100)).stalled
    # The --baseline gate reads the same judged load (wiring: FiguresHook(host_load=judged)).
    assert hook.judged(loop) is hook.load


def test_the_hook_judges_a_quiet_run_without_a_pause_clean():
    said = []
    hook = _quiet_hook(said)
    hook.after_timed()
    hook.total_lines(training_loop.LoopResult(images_per_sec=3200.0, step_times=[MS] * 100,
                                              num_steps=100, elapsed_secs=0.6))
    assert said == [] and hook.load['stall'] is None


@pytest.mark.cli
@pytest.mark.timeout(300)
def test_a_real_run_stopped_and_continued_is_unclean(tmp_path):
    out, err = tmp_path / 'out', tmp_path / 'err'
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL='3', PYTHONUNBUFFERED='1')
    with open(out, 'w') as o, open(err, 'w') as e:
        proc = subprocess.Popen(
            [sys.executable, 'tf_cnn_benchmarks.py', '--model=trivial', '--batch_size=8',
             '--num_batches=400', '--num_warmup_batches=2', '--display_every=100',
             '--benchmark_log_dir=%s' % tmp_path], cwd=REPO, env=env, stdout=o, stderr=e,
            stdin=subprocess.DEVNULL)
    try:
        # Step 1's line: the timed steps are running (steps 2 to 400 are left).
        assert helpers.wait_for(lambda: '\n1\timages/sec' in out.read_text(), 240, proc), (
            err.read_text())
        proc.send_signal(signal.SIGSTOP)
        time.sleep(1.0)  # the stop itself (the process cannot move meanwhile)
        proc.send_signal(signal.SIGCONT)
        assert proc.wait(timeout=120) == 0, err.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = err.read_text()
    assert 'warning: the process was stopped for ' in text
    assert ('during the timed part (SIGSTOP/Ctrl-Z, then SIGCONT: timed step ' in text
            or 'SIGCONT: between timed steps)' in text), text
    assert ': its images/sec include that time (about ' in text
    (path,) = glob.glob(str(tmp_path / 'tf_cnn_benchmarks_*.json'))
    with open(path) as f:
        result = json.load(f)
    s = result['host_load']['stall']
    assert s['how'] == stall.SIGCONT and s['continued'] == 1
    assert s['stopped_secs'] >= 0.8
    assert result['images_per_sec'] < s['images_per_sec_without']
    assert 'stalled' in clean_runs.of_result(result).reasons
