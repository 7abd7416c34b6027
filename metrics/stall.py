"""Whether the process was stopped or paused during a run's timed part, and for how long.

A process stopped by SIGSTOP (Ctrl-Z, `kill -STOP`) or frozen with its container (`docker
pause`: the cgroup freezer) uses no CPU while it waits, so the host-load check
(metrics/host_load.py), which counts other processes' CPU time, finds the host quiet; yet the
timed step that was running when it stopped holds the whole wait, and the total line's
images/sec includes it (a trivial run stopped for 4 s of its 6 s: 380.88 images/sec instead of
about 600). Two detectors, read after the timed part (nothing is added to the step loop):

    a SIGCONT   `ContinueWatch` installs a SIGCONT handler for the timed part only (in the
                main thread; the previous handler is put back after) and counts the signals.
                The shell's `fg`/`bg` and `kill -CONT` send one; a stop always ends with one.
                The time the process was stopped is then read from the step times: for each
                SIGCONT, the longest timed step at least CONT_RATIO (2) times the median
                gives its time above the median (a stop shorter than a step's own time is
                not told apart from an ordinary slow step, and moves the figure by less than
                a step). No such step: the stop fell between the steps, and the figure's
                time outside the steps (its wall seconds less the steps', normally the
                loop's own under 1%) is taken for it when at least 2 medians and GAP_SHARE
                (5%) of those seconds; else it fell in what the figure does not count (a
                checkpoint, an evaluation) or there was none (a SIGCONT to a running
                process): nothing to report. Fewer than MIN_STEPS timed steps: no
                median to read it by, the time is unknown (None) and the run is still held
                to be stalled.
    long steps  `docker pause` sends no signal. A timed step at least FREEZE_RATIO (20) times
                the run's median and at least FREEZE_MIN_SECS (1 s) above it, on a host that
                was otherwise quiet (not busy by metrics/clean_runs.py), is taken for a pause.
                Why 20x and 1 s: on a quiet host a step's time varies by its kernels' and its
                input's scheduling (a trivial model's longest of 1000 steps on a quiet 2-core
                host is a few times its median, the busiest a few tens of ms), so a step 20
                times the median is not the model's; the second second keeps a
                milliseconds-long step's hiccups (a page-fault storm, a collection) out, and
                a pause that short moves a figure of seconds by little. A busy host makes
                the run unclean already, and its long steps may be its neighbours'. Its
                limit: a pause shorter than 19 of a large model's steps (a 1 s step paused
                for 4 s) is not seen; SIGSTOP is, by its SIGCONT.

Without warm-up steps (--num_warmup_batches=0) the first timed step carries the session's
set-up and is left out of both (training_loop._set_up_line says it).

`judge` gives the dict HostLoadHook (lifecycle/figure_hooks.py) keeps as
result['host_load']['stall'] (None when neither detector fired); `is_stalled` is the
clean-run rule's reason (metrics/clean_runs.py 'stalled') and `reason` its one-line text,
the same in the total block's warning, the results JSON's reading and `tf_cnn_results show`.
"""

from __future__ import annotations

import signal
import statistics
import threading

from .. import cnn_util

CONT_RATIO = 2.0
FREEZE_RATIO = 20.0
FREEZE_MIN_SECS = 1.0
MIN_STEPS = 3
GAP_SHARE = 0.05
SIGCONT, LONG_STEPS = 'SIGCONT', 'long steps'  # the 'how' of a stall dict


class ContinueWatch:
    """Counts the SIGCONTs the process gets between `start` and `stop`.

    `start` installs the handler only in the main thread (Python's signal handlers live
    there; elsewhere, as in a test's thread, it counts nothing) and where the platform has
    SIGCONT; the previous handler (a callable one is also called) is put back by `stop`,
    which may be called more than once.
    """

    def __init__(self):
        self.count = 0
        self._previous = None
        self._installed = False

    def start(self) -> None:
        self.count = 0
        if (self._installed or not hasattr(signal, 'SIGCONT')
                or threading.current_thread() is not threading.main_thread()):
            return
        try:
            self._previous = signal.signal(signal.SIGCONT, self._handle)
        except (ValueError, OSError):
            return
        self._installed = True

    def _handle(self, signum, frame) -> None:
        self.count += 1
        if callable(self._previous):
            self._previous(signum, frame)

    def stop(self) -> None:
        if not self._installed:
            return
        self._installed = False
        previous, self._previous = self._previous, None
        signal.signal(signal.SIGCONT, signal.SIG_DFL if previous is None else previous)


def judge(step_times, continued: int = 0, *, first_sets_up: bool = False,
          host_busy: bool = False, images_per_sec: float | None = None,
          elapsed_secs: float | None = None) -> dict | None:
    """The stall of a timed part, by the module docstring's rules, or None.

    Args:
      step_times: wall seconds of each timed step, in order (training_loop.LoopResult).
      continued: SIGCONTs seen during the timed part (ContinueWatch.count).
      first_sets_up: the first timed step carries the set-up (no warm-up steps): left out.
      host_busy: other processes used more than the clean rule allows (the long-step rule
        is then not applied).
      images_per_sec: the total line's figure; elapsed_secs: the wall seconds it covers
        (for the figure without the stopped time).

    Returns:
      None when neither detector fired (or a SIGCONT held up no timed step), else {'how':
      'SIGCONT' or 'long steps', 'continued': SIGCONTs seen, 'stopped_secs': seconds of the
      timed steps above the median, or of the figure's time between them (None: unknown,
      too few steps), 'steps': the 1-based timed steps held up ([] between them),
      'longest_step_secs', 'median_step_secs' (None with too few
      steps), 'images_per_sec_without': the figure without the stopped time (None when not
      known)}.
    """
    times = [float(t) for t in step_times]
    offset = 1 if first_sets_up and times else 0
    considered = times[offset:]
    if not considered or (not continued and len(considered) < MIN_STEPS):
        return None
    if len(considered) < MIN_STEPS:  # a SIGCONT, but no median to measure the stop by
        return _record(SIGCONT, continued, None, [], max(considered), None, None)
    median = statistics.median(considered)
    order = sorted(range(len(considered)), key=lambda i: considered[i], reverse=True)
    if continued:
        held = [i for i in order if considered[i] >= CONT_RATIO * median][:continued]
        how = SIGCONT
    elif host_busy:
        return None
    else:
        held = [i for i in order if considered[i] >= FREEZE_RATIO * median
                and considered[i] - median >= FREEZE_MIN_SECS]
        how = LONG_STEPS
    stopped = sum(considered[i] - median for i in held)
    if continued and not held and elapsed_secs:
        gap = elapsed_secs - sum(times)  # the figure's seconds outside the timed steps
        if gap >= max(CONT_RATIO * median, GAP_SHARE * elapsed_secs):
            stopped = gap
    if not stopped:
        return None
    without = None
    if images_per_sec and elapsed_secs and elapsed_secs > stopped:
        without = images_per_sec * elapsed_secs / (elapsed_secs - stopped)
    return _record(how, continued, stopped, sorted(i + 1 + offset for i in held),
                   max(considered), median, without)


def _record(how, continued, stopped, steps, longest, median, without) -> dict:
    return {'how': how, 'continued': continued, 'stopped_secs': stopped, 'steps': steps,
            'longest_step_secs': longest, 'median_step_secs': median,
            'images_per_sec_without': without}


def is_stalled(stall) -> bool:
    """True when a result['host_load']['stall'] value (`judge`'s dict, or None) makes the run
    unclean: a detector fired and the stopped time is above 0 or unknown."""
    if not isinstance(stall, dict) or stall.get('how') not in (SIGCONT, LONG_STEPS):
        return False
    secs = stall.get('stopped_secs')
    return secs is None or (isinstance(secs, (int, float)) and secs > 0)


def stopped_words(stall: dict) -> str:
    """'4.0 s', '0.35 s', 'an unknown time' (the badge's and the reason's duration)."""
    secs = stall.get('stopped_secs')
    if not isinstance(secs, (int, float)) or isinstance(secs, bool):
        return 'an unknown time'
    return '%.1f s' % secs if secs >= 1 else '%.2f s' % secs


def reason(stall: dict) -> str:
    """One line: what happened and what the figure includes, e.g. 'the process was stopped
    for 4.0 s during the timed part (SIGSTOP/Ctrl-Z, then SIGCONT: timed step 512 took
    4.01 s, the median 5.77 ms): its images/sec include that time (about 602.14 without
    it)'. '' when `stall` is not a stall (is_stalled)."""
    if not is_stalled(stall):
        return ''
    steps = stall.get('steps') or []
    seen = ''
    if steps and stall.get('median_step_secs'):
        seen = ': %s took %s, the median %s' % (
            'timed step %d' % steps[0] if len(steps) == 1 else
            'timed steps %s' % ', '.join(str(s) for s in steps[:5]) + (
                ', ...' if len(steps) > 5 else ''),
            'up to %s' % cnn_util.format_step_secs(stall['longest_step_secs']) if len(steps) > 1
            else cnn_util.format_step_secs(stall['longest_step_secs']),
            cnn_util.format_step_secs(stall['median_step_secs']))
    if stall['how'] == SIGCONT:
        if not seen:
            seen = (': between timed steps' if stall.get('median_step_secs') else
                    ': too few timed steps to measure the stop')
        what = ('the process was stopped for %s during the timed part (SIGSTOP/Ctrl-Z, then '
                'SIGCONT%s)' % (stopped_words(stall), seen))
    else:
        what = ('the process was paused for %s during the timed part (a paused container or '
                'a stopped process, on an otherwise quiet host%s)' % (stopped_words(stall), seen))
    without = stall.get('images_per_sec_without')
    return '%s: its images/sec include that time%s' % (
        what, ' (about %.2f without it)' % without if isinstance(without, (int, float))
        else '')

