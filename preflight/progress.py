"""What a long dry run or scaling plan is doing while it works: a line before each phase that
may take longer than PROGRESS_SECS, with what it does and roughly how long it takes.

    progress.start_probe()      # once, at the start: the others' CPU time is measured from here
    progress.announce('building the step: 8 tower(s) of resnet50', cpu_secs)
    -> 'Dry run:          building the step: 8 tower(s) of resnet50 (roughly 10-22 s) ...'

The phase's CPU seconds come from a rough cost per op (the constants below, each with its
source), stretched by the host's load (`estimate`): the dry run (preflight/dry_run.py) and
`--plan_scaling` (preflight/scaling_plan.py) announce their phases through `announce`.
"""

from __future__ import annotations

import os
import time

from .. import cnn_util

#: A phase expected to last at least this long gets a line before it (what, and roughly how
#: long), so that a long dry run or plan is never silent.
PROGRESS_SECS = 2.0
#: Rough CPU costs of the phases on one core, for those lines only (nothing is decided by
#: them): building the step, CPU seconds per op of the one-forward placeholder build
#: (speed_model/layer_profile.py) times the towers; Grappler's peak memory and the placement
#: and copies check (gpu_kernels.check_placement, step_traffic.step_traffic), CPU seconds per
#: op of the step. The check's rate decides only whether it gets a line (that line gives no
#: figure). Where they were measured: results/2026-12-05-cpu-tf2.21-dry-run-speed.md and
#: docs/performance-notes.md, "Measurements once in the code".
BUILD_SECS_PER_PROFILE_OP = 2.5e-3
CHECK_SECS_PER_OP = 4e-5
GRAPPLER_SECS_PER_OP = 6e-5
#: The shortest interval over which the others' CPU time is measured for the stretch (seconds);
#: host_load.min_wall_secs of one core on 2 CPUs is 0.24 s at 100 ticks a second.
PROBE_SECS = 0.3
_probe: dict = {}


def load_factor(cores: int | None = None, load: float | None = None) -> float:
    """The 1-minute load average over the CPUs this process may use, at least 1: the most a
    phase could be stretched on this host now (the load average counts this process's own
    threads too, so it overstates the others: the upper end of a range only)."""
    from ..metrics import host_load
    cores = cores or len(host_load.allowed_cpus()) or 1
    if load is None:
        try:
            load = os.getloadavg()[0]
        except OSError:
            load = 0.0
    return max(1.0, load / cores)


def stretch(others_cores: float, cpus: int) -> float:
    """How much longer than its CPU time a one-thread phase lasts while other processes use
    `others_cores` core-equivalents of `cpus` CPUs: max(1, (others + 1) / cpus) (the
    scheduler shares the CPUs among the others' demand and this thread alike)."""
    return max(1.0, (others_cores + 1.0) / max(1, cpus))


def start_probe() -> None:
    """Starts measuring other processes' CPU time (metrics/host_load.py, one core: the
    phases are one thread) for the next announcement's stretch."""
    from ..metrics import host_load
    meter = host_load.Meter(1)
    meter.start()
    _probe['meter'], _probe['since'] = meter, time.monotonic()


def others_cores() -> tuple[float, int] | None:
    """(other processes' core-equivalents since the probe started or last read, the CPUs):
    waits until PROBE_SECS have passed; None without a probe or where /proc cannot tell."""
    meter = _probe.get('meter')
    if meter is None:
        return None
    time.sleep(max(0.0, PROBE_SECS - (time.monotonic() - _probe['since'])))
    load, _probe['since'] = meter.restart(), time.monotonic()
    if not load or load['others_cores'] is None:
        return None
    return load['others_cores'], load['cpus_allowed']


def estimate(cpu_secs: float, others: tuple[float, int] | None, load: float) -> tuple:
    """(low, high) seconds a one-thread phase of `cpu_secs` of CPU lasts on this host now.

    low: stretched by the others' measured CPU time (`others_cores`' pair; quiet when not
    measured). It understates a crowded host: the others' CPU time is capped by the CPUs,
    not by how many threads wait for them. high: stretched by the load average per CPU
    (`load`, load_factor's), which counts the waiting threads but also this run's own.
    Reported case (2 CPUs): load average 4.9 stretched a build 2.45 x while the others used
    1.3 cores (1.15 x) and the build took between the two; at load 13 a build of 13.4 s of
    CPU took 84.8 s, near the high end."""
    low = cpu_secs * (stretch(*others) if others is not None else 1.0)
    return low, max(low, cpu_secs * load)


def announce(what: str, cpu_secs: float, who: str = 'Dry run', rough: bool = True) -> None:
    """Logs 'Dry run:          <what> (roughly N s) ...', or '(roughly N-M s) ...' when
    `estimate`'s ends differ by more than a quarter, when the phase may reach PROGRESS_SECS.
    `who` names the command's mode at the line's start: 'Dry run' or 'Scaling plan'; without
    `rough` the line gives no figure ('Dry run:          <what> ...': a phase whose cost per op
    decides whether it gets a line but is not known well enough to be printed)."""
    if cpu_secs * load_factor() < PROGRESS_SECS:
        return
    low, high = estimate(cpu_secs, others_cores(), load_factor())
    if high >= PROGRESS_SECS:
        cnn_util.log_fn('%-18s%s%s ...' % (who + ':', what,
                                           ' (roughly %s)' % span(low, high) if rough else ''))


def span(low: float, high: float) -> str:
    """'12 s' (the high end, when within a quarter of the low, or when both ends round to the
    same figure: never '3-3 s'), else '12-58 s', '40 s-3 min'."""
    a, b = _rough(low), _rough(high)
    if high <= 1.25 * low or a == b:
        return b
    return '%s-%s' % (a.split()[0] if a.split()[1] == b.split()[1] else a, b)


def _rough(secs: float) -> str:
    return '%.0f s' % secs if secs < 90 else '%.0f min' % (secs / 60)
