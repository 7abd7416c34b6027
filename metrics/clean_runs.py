"""Which runs a verdict may use: the one rule of a clean run, shared by every gate and every
history command (`tf_cnn_results regressions`, `history`, `html`; `tf_cnn_sweep compare`;
`--baseline`).

A run is clean when all three hold:

    the host was its own   during its timed part other processes used at most OTHERS_LIMIT (a
                           quarter) of the run's cores (a cluster task's others less its cluster's
                           other tasks on this host: `cluster_fraction`; a cluster sharing one
                           host's cores is measured as such), and the hypervisor's steal took at
                           most STEAL_LIMIT (5%) of its CPUs' time: metrics/host_load.py measures
                           both into result['host_load'] (its `others_fraction` and
                           `steal_fraction`; the limits are that module's, so its warning and this
                           rule agree). A run whose load was not recorded (results from before the
                           measurement) counts as clean: there is nothing to judge it by. A run
                           whose load was measured but gave no figure (its timed part too short
                           for /proc's clock ticks, a host without /proc) is not clean: whether
                           its host was quiet is not known, and a run that short is the one a
                           neighbour's burst moves most. It is left out like a busy run (`show`
                           and `list` say 'not measured'), counted with the others ('3 had no
                           measured host load (run too short: a longer timed part (a larger
                           --num_batches) measures it)'). It is not judged by a longer window
                           (the warm-up, the whole process) instead: that would judge another
                           interval than the one its images/sec covers; the remedy is a timed
                           part long enough to measure.
    it ran its planned steps   timed steps run == timed steps planned (the run plan's
                           num_batches: --num_batches, or what --num_epochs gives). A run
                           stopped by SIGINT after 1 or 28 of 100 steps is not clean: its
                           images/sec covers a few steps, and the first are the slowest. A run
                           that reached --stop_at_top_1_accuracy ended as it planned to; a run
                           stopped in the warm-up timed nothing and is not recorded at all
                           (lifecycle/results_db.py). Planned steps unknown: clean.
    it was not stalled     the process was not stopped (SIGSTOP/Ctrl-Z) or paused (`docker
                           pause`) during its timed steps: such a wait uses no CPU, so the host
                           looks quiet, but its images/sec include it. metrics/stall.py detects
                           it (a SIGCONT during the timed part, or a timed step 20x the median
                           and 1 s above it on a quiet host) into result['host_load']['stall'].

The verdicts leave the other runs out and say how many and why (`Selection.lines`, one line
per reason, e.g. 'left out 2 of 12 runs: 2 shared the host (others used > 25% of the
cores)'); INCLUDE_FLAG (`--include_unclean_runs`, the same on every command) keeps them in.
`RunState.badge` is the mark `show`, `history` and the page give such a run: 'busy',
'steal 7%', 'stopped at 28 of 100', 'stalled 4.0 s'.

Pure: each caller reads its own format (a result dict: `of_result`; a database row:
history/records.py run_state; a sweep record: tools/sweep/host_load.py record_state) into a
RunState.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Iterable

from .. import cnn_util
from . import host_load
from . import stall as stall_lib

OTHERS_LIMIT = host_load.OTHERS_LIMIT
STEAL_LIMIT = host_load.STEAL_LIMIT
INCLUDE_FLAG = '--include_unclean_runs'
INCLUDE_HELP = ('keep runs that shared the host (other processes above %.0f%% of their cores, '
                'or steal above %.0f%%), that were stopped or paused during their timed part, '
                'whose host load was not measured (too short a timed part) or that stopped '
                'before their planned steps in the verdicts; they are left out by default' % (
                    100 * OTHERS_LIMIT, 100 * STEAL_LIMIT))
#: How a run's host load gets measured: what the left-out line of such runs advises.
UNMEASURED_FIX = 'a longer timed part (a larger --num_batches) measures it'
# Why a run is not clean, in the order the lines give them: (key, plural text, singular).
REASONS = (
    ('busy', 'shared the host (others used > %.0f%% of the cores)' % (100 * OTHERS_LIMIT),
     'shared the host (others used > %.0f%% of the cores)' % (100 * OTHERS_LIMIT)),
    ('steal', 'lost > %.0f%% of the CPUs\' time to steal (the hypervisor)' % (
        100 * STEAL_LIMIT), 'lost > %.0f%% of the CPUs\' time to steal (the hypervisor)' % (
        100 * STEAL_LIMIT)),
    ('stalled', 'were stopped or paused during their timed part (their images/sec include '
     'it)', 'was stopped or paused during its timed part (its images/sec include it)'),
    ('stopped', 'stopped before their planned steps', 'stopped before its planned steps'),
    ('unmeasured', 'had no measured host load', 'had no measured host load'),
)


@dataclasses.dataclass(frozen=True)
class RunState:
    """What the rule needs of one run.

    Attributes:
      others_fraction: other processes' CPU time over the timed part / (run's cores x wall
        seconds), a fraction (may pass 1); None when not measured.
      cluster_fraction: the part of others_fraction that was the cluster's other tasks on
        this host; None on one host (or not measured).
      unmeasured: why the host load was recorded but not measured ('run too short', or the
        meter's error); '' when measured or not recorded.
      steal_fraction: steal time / (allowed CPUs x wall seconds), a fraction; None when not
        measured.
      steps_run: timed steps the run made; None when unknown.
      steps_planned: timed steps it planned; None when unknown.
      unit: what those steps are, in `why`'s words: 'timed steps', an evaluation's 'batches'.
      stall: result['host_load']['stall'] (metrics/stall.py judge's dict; None: none).
    """

    others_fraction: float | None = None
    steal_fraction: float | None = None
    steps_run: int | None = None
    steps_planned: int | None = None
    cluster_fraction: float | None = None
    unmeasured: str = ''
    unit: str = 'timed steps'
    stall: dict | None = None

    @property
    def outside_fraction(self) -> float | None:
        """others_fraction less the cluster's own tasks' share (None when not measured)."""
        if self.others_fraction is None:
            return None
        return max(0.0, self.others_fraction - (self.cluster_fraction or 0.0))

    @property
    def busy(self) -> bool:
        """Processes outside the run's cluster used more than OTHERS_LIMIT of its cores."""
        return self.outside_fraction is not None and self.outside_fraction > OTHERS_LIMIT

    @property
    def steal(self) -> bool:
        """The hypervisor took more than STEAL_LIMIT of the CPUs' time."""
        return self.steal_fraction is not None and self.steal_fraction > STEAL_LIMIT

    @property
    def stalled(self) -> bool:
        """The process was stopped or paused during its timed steps (metrics/stall.py)."""
        return stall_lib.is_stalled(self.stall)

    @property
    def stopped(self) -> bool:
        """Fewer timed steps than planned."""
        return (self.steps_run is not None and bool(self.steps_planned)
                and self.steps_run < self.steps_planned)

    @property
    def reasons(self) -> list[str]:
        """The keys of REASONS that hold ([] for a clean run): 'unmeasured' when its host load
        was recorded without a figure."""
        return [key for key, _, _ in REASONS if getattr(self, key)]

    @property
    def clean(self) -> bool:
        """No reason holds."""
        return not self.reasons

    @property
    def badge(self) -> str:
        """'busy', 'steal 7%', 'stalled 4.0 s', 'stopped at 28 of 100', 'not measured', joined
        by ', '; '' when clean."""
        parts = []
        if self.busy:
            parts.append('busy')
        if self.steal:
            parts.append('steal %.0f%%' % (100 * self.steal_fraction))
        if self.stalled:
            parts.append('stalled %s' % stall_lib.stopped_words(self.stall).replace(
                'an unknown time', '?'))
        if self.stopped:
            parts.append('stopped at %d of %d' % (self.steps_run, self.steps_planned))
        if self.unmeasured:
            parts.append('not measured')
        return ', '.join(parts)

    def why(self) -> str:
        """Why the run is not clean, e.g. 'busy: other processes used 71% of the run's cores
        (more than 25%); stopped at 28 of 100 timed steps'; '' when it is clean."""
        parts = []
        if self.busy:
            parts.append('busy: %s used %s of the run\'s cores (more than %.0f%%)' % (
                'processes outside the cluster' if self.cluster_fraction else 'other processes',
                host_load.share_above(self.outside_fraction, OTHERS_LIMIT), 100 * OTHERS_LIMIT))
        if self.steal:
            parts.append('steal: the hypervisor took %s of the CPUs\' time (more than '
                         '%.0f%%)' % (host_load.share_above(self.steal_fraction, STEAL_LIMIT, 1),
                                      100 * STEAL_LIMIT))
        if self.stalled:
            parts.append('stalled: %s' % stall_lib.reason(self.stall))
        if self.stopped:
            parts.append('stopped at %d of %d %s' % (self.steps_run, self.steps_planned,
                                                     self.unit))
        if self.unmeasured:
            parts.append('host load not measured (%s): whether the host was quiet is not '
                         'known' % self.unmeasured)
        return '; '.join(parts)

    @property
    def verdict(self) -> str:
        """The host-load word of `list` and `show`: 'clean', or the badge: 'busy', 'steal 7%',
        'stalled 4.0 s', 'stopped at 28 of 100', 'not measured' (its load could not be
        measured)."""
        return self.badge or 'clean'

    def describe(self) -> str:
        """One line for `show`: why the run is not clean and that the verdicts leave it out
        ('host load not measured (run too short): ... (left out of the verdicts unless
        --include_unclean_runs)'), or 'clean (...)' with its others' share (and the cluster's)
        or 'host load not recorded'."""
        if self.why():
            return '%s (left out of the verdicts unless %s)' % (self.why(), INCLUDE_FLAG)
        if self.others_fraction is None and self.steal_fraction is None:
            return 'clean (host load not recorded: counts as clean)'
        cluster = ('' if not self.cluster_fraction else ': the cluster\'s other tasks on this '
                   'host %.0f%%, the rest %.0f%%' % (100 * self.cluster_fraction,
                                                    100 * self.outside_fraction))
        return 'clean (other processes used %s of the run\'s cores%s)' % (
            '?' if self.others_fraction is None else '%.0f%%' % (100 * self.others_fraction),
            cluster)


def state(load: dict | None, steps_run=None, steps_planned=None,
          unit: str = 'timed steps') -> RunState:
    """A RunState from a host_load dict (metrics/host_load.py measure's, or the sweep
    record's subset; None: not measured) and the timed steps run and planned (`unit`: what
    they are, an evaluation's 'batches')."""
    recorded = isinstance(load, dict)
    load = load if recorded else {}
    others, steal = _fraction(load.get('others_fraction')), _fraction(load.get('steal_fraction'))
    unmeasured = ''
    if recorded and others is None and steal is None:
        error = str(load.get('error') or '')
        unmeasured = 'run too short' if 'too short' in error else (error or 'unknown')
    stall = load.get('stall') if isinstance(load.get('stall'), dict) else None
    return RunState(others, steal, _count(steps_run), _count(steps_planned),
                    _fraction(load.get('cluster_fraction')), unmeasured, unit, stall)


def _fraction(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _count(value) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value)


def planned_steps(result: dict) -> int | None:
    """The timed steps a run's result dict (lifecycle/results_log.py) planned: its plan's
    num_batches (an evaluation: its eval plan's), else its params' --num_batches; the steps it
    ran when it reached --stop_at_top_1_accuracy (it ended as planned); None when unknown."""
    if result.get('stopped_at_top_1_accuracy'):
        return _count(result.get('num_steps'))
    plan = result.get('plan') if isinstance(result.get('plan'), dict) else {}
    if result.get('mode') == 'evaluation':
        return _count((plan.get('eval') or {}).get('num_batches'))
    if plan.get('num_batches') is not None:
        return _count(plan['num_batches'])
    params = result.get('params') if isinstance(result.get('params'), dict) else {}
    return _count(params.get('num_batches'))


def planned_from_params(params: dict) -> int | None:
    """The planned timed steps of a run's resolved flags (a sweep record's, a database row's
    recorded before its planned steps were kept): --num_batches (what --num_epochs gave,
    resolved by the run); None for an evaluation and with --stop_at_top_1_accuracy (such a
    run may end early as planned)."""
    if not isinstance(params, dict) or params.get('eval'):
        return None
    if params.get('stop_at_top_1_accuracy') is not None:
        return None
    return _count(params.get('num_batches'))


def of_result(result: dict) -> RunState:
    """The RunState of a run's result dict (run(), a results JSON)."""
    return state(result.get('host_load'), result.get('num_steps'), planned_steps(result))


@dataclasses.dataclass
class Selection:
    """The runs a verdict uses and those it left out.

    Attributes:
      kept: the items the verdict uses, in their order.
      left_out: (item, RunState) of the unclean items left out.
      kept_unclean: (item, RunState) of the unclean items kept (with INCLUDE_FLAG).
      total: all the items.
      noun: what an item is ('runs', 'repeats').
    """

    kept: list
    left_out: list
    kept_unclean: list
    total: int
    noun: str = 'runs'

    def lines(self) -> list[str]:
        """What was left out and why, one line per reason ([] when every run was clean):
        'left out 2 of 12 runs: 2 shared the host (others used > 25% of the cores)', or with
        several reasons 'left out 3 of 12 runs (--include_unclean_runs keeps them):' and
        '  2 shared the host ...' lines; with INCLUDE_FLAG 'kept 2 unclean runs of 12
        (--include_unclean_runs): ...'. A run with several reasons (busy and stopped) is counted
        under each, so the counts below can add up to more than the head's; the head then says
        how many such runs there are: 'left out 26 of 26 runs, 1 of them for more than one
        reason (--include_unclean_runs keeps them):'."""
        pairs = self.left_out or self.kept_unclean
        if not pairs:
            return []
        if self.left_out:
            head = 'left out %d of %s' % (len(pairs), self._counted(self.total))
            hint = '%s keeps them' % INCLUDE_FLAG
        else:
            head = 'kept %s of %d' % (self._counted(len(pairs), 'unclean '), self.total)
            hint = INCLUDE_FLAG
        reasons = reason_lines([s for _, s in pairs])
        if len(reasons) == 1 and self.left_out:
            return ['%s: %s; %s' % (head, reasons[0], hint)]
        if len(reasons) == 1:
            return ['%s (%s): %s' % (head, hint, reasons[0])]
        several = sum(len(s.reasons) > 1 for _, s in pairs)
        if several:
            head += ', %d of them for more than one reason' % several
        return ['%s (%s):' % (head, hint)] + ['  ' + r for r in reasons]

    def _counted(self, count: int, prefix: str = '') -> str:
        """'1 run', '2 runs' ('1 repeat', ...): `noun` is the plural; its singular drops the s."""
        return cnn_util.counted(count, prefix + self.noun.removesuffix('s'), prefix + self.noun)


def unmeasured_line(states: list[RunState], noun: str = 'run', plural: str | None = None
                    ) -> str:
    """The line a verdict adds when some of the runs it used had no measured host load (kept
    with INCLUDE_FLAG: the rule leaves them out otherwise), e.g. 'host load: not measured for 3
    of 12 runs (run too short): whether the host was quiet during them is not known; a longer
    timed part (a larger --num_batches) measures it'; '' when every run's was measured (or not
    recorded). `noun` (and its `plural`, default noun + 's': cnn_util.counted) says what
    `states` are, e.g. 'run kept in the verdicts' where they are not every run shown."""
    mine = [s for s in states if s.unmeasured]
    if not mine:
        return ''
    return ('host load: not measured for %d of %s (%s): whether the host was quiet during '
            'them is not known; %s' % (len(mine), cnn_util.counted(len(states), noun, plural),
                                       mine[0].unmeasured, UNMEASURED_FIX))


def reason_lines(states: list[RunState]) -> list[str]:
    """Per reason that holds for any of `states`: '2 shared the host (others used > 25% of
    the cores)', '1 stopped before its planned steps (28 of 100)'."""
    out = []
    for key, plural, singular in REASONS:
        mine = [s for s in states if getattr(s, key)]
        if not mine:
            continue
        text = '%d %s' % (len(mine), singular if len(mine) == 1 else plural)
        if key == 'stopped':
            text += ' (%s)' % ', '.join('%d of %d' % (s.steps_run, s.steps_planned)
                                        for s in mine[:5]) + (', ...' if len(mine) > 5
                                                              else '')
        if key == 'unmeasured':
            text += ' (%s: %s)' % (mine[0].unmeasured, UNMEASURED_FIX)
        out.append(text)
    return out


def select(items: Iterable, state_of: Callable[[object], RunState], include: bool = False,
           noun: str = 'runs') -> Selection:
    """Splits `items` by the rule: the clean ones (and, with `include`, the others too) are
    kept in their order.

    Args:
      items: runs in any form `state_of` reads.
      state_of: item -> RunState.
      include: INCLUDE_FLAG was given: keep unclean runs (they are counted, not left out).
      noun: what the lines call an item.
    """
    items = list(items)
    kept, left_out, kept_unclean = [], [], []
    for item in items:
        s = state_of(item)
        if s.clean:
            kept.append(item)
        elif include:
            kept.append(item)
            kept_unclean.append((item, s))
        else:
            left_out.append((item, s))
    return Selection(kept, left_out, kept_unclean, len(items), noun)
