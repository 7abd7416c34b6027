"""What else used the CPUs while a run was timed: load average, other processes' CPU time, steal.

The same command runs several times slower while another job uses the CPUs (issue 33.6;
docs/performance-notes.md, "Measurements once in the code"); this module measures the
difference so the total block can say which was which.
Two samples of /proc, at the start and at the end of the timed part (lifecycle/figure_hooks.py
HostLoadHook takes them), give:

    load average     the 1-minute load average of /proc/loadavg (its first field) at each end.
                     It counts this run's own threads too, so it is reported beside the run's
                     cores but the warning does not use it.
    others' CPU      the busy CPU time of the CPUs this process may run on, minus this
                     process's own CPU time and that of its waited-for children, over the
                     timed part:
                       busy = user + nice + system + irq + softirq of the `cpuN` lines of
                              /proc/stat for the N in os.sched_getaffinity (guest time is
                              already inside user and nice; idle, iowait and steal are not busy)
                       self = utime + stime + cutime + cstime of /proc/self/stat
                       others_cpu_secs = max(0, d(busy) - d(self)) / ticks_per_sec
                     It is the whole host's CPU time less this process's (the /proc/stat
                     method, not a sum of /proc/[pid]/stat over the other processes), restricted
                     to the CPUs this process may use: kernel threads and interrupts count, and
                     children still running at the end count as others.
                       others_cores = others_cpu_secs / wall_secs   (core-equivalents)
                       others_fraction = others_cores / cores        (of the run's cores)
    steal            the `steal` column of the same /proc/stat lines: time a hypervisor gave
                     the virtual CPUs to other machines (0 on bare metal).
                       steal_fraction = steal_secs / (allowed CPUs x wall_secs)

`cores` (what the others' share divides by): for a training or evaluation run, every CPU in
the affinity mask, whatever its intra-op threads: its inter-op pool and its input pipeline's
threads run beside them on any CPU of the mask, and the others are counted over those same
CPUs, so the share is never more than 100% (a share of the intra-op threads read 'other
processes used 1.66 cores (166% of the run's 1)'); the line says so when the intra-op threads
are fewer (`intra_threads`). For a measurement confined to its intra-op threads (a
calibration's kernel, one op at a time: hardware/calibration.py) min(intra-op threads, CPUs in
the mask) (run_cores); intra-op 0 ("TensorFlow decides") counts as the whole mask.
/proc/stat and /proc/self/stat count in clock ticks (USER_HZ, os.sysconf('SC_CLK_TCK'), usually
100 a second), so a figure is good to about 2 ticks per counter over the timed part (0.02 s at
100 Hz): 2 x (allowed CPUs + 1) ticks for others' CPU time (each CPU's line and this
process's), 2 ticks per CPU for steal. A timed part too short for that rounding to stay within
the figure's limit gives no figure (None, and `error` says how long the timed part was and how
long it needs to be: `min_wall_secs`):

    others   measured when 2 x (CPUs + 1) / ticks_per_sec <= OTHERS_LIMIT x cores x wall_secs
             (2 CPUs, 2 cores, 100 Hz: 0.12 s)
    steal    measured when 2 / ticks_per_sec <= STEAL_LIMIT x wall_secs (100 Hz: 0.40 s)

A 3-step forward-only run of a small model times about 0.02 s: one tick of rounding there
reads as half a core, and two as more cores than the host has (`other processes used 2.86 of
2 cores`), so such a run says `not measured (the timed part lasted 0.02 s ...)` instead. What
is measured is bounded by the allowed CPUs' time (others_cpu_secs <= CPUs x wall_secs): no
figure says other processes used more CPUs than there are.

A cluster task's meter also counts the cluster's other tasks on this host apart
(metrics/cluster_tasks.py finds their processes: the tf_cnn_cluster launcher's descendants,
the owners of the cluster's local ports): their utime + stime over the same interval is

    cluster_cpu_secs   at most others_cpu_secs (a part of the others, never more)
    cluster_fraction   cluster_cpu_secs / wall_secs / cores
    outside_fraction   others_fraction - cluster_fraction: the processes that are not the
                       cluster's (the whole of others_fraction for a run on one host)

A cluster whose tasks share one host's cores is measured as such: the line says how much of
the others was the cluster's, and only the outside share can make the run not representative.
Where the cluster has other tasks on this host whose processes were not found (another user's,
say), the line and the warning say the others may be the cluster's own.

The run is called not representative when outside_fraction > OTHERS_LIMIT (25% of the run's
cores) or steal_fraction > STEAL_LIMIT (5%): `warning_text` says why in one line. Setting the
environment variable TF_CNN_BUSY_HOST_WARNING=0 keeps that line off stderr (the test suite
does, since its workers share the cores); the figures and result['host_load']['warning']
are unchanged.

Where /proc cannot be read (not Linux), the figures are None and the line says why.
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
from typing import Callable

from . import cluster_tasks

OTHERS_LIMIT = 0.25
STEAL_LIMIT = 0.05
# The total line's figure as other lines name it: never the words `total images/sec`, which
# only the total line itself holds (scripts grep for them: docs/output.md).
TOTAL_FIGURE = "the total line's images/sec"
# The intervals a measurement's `error` names ('the warm-up lasted 0.39 s, too short ...').
TIMED_PART, WARM_UP = 'the timed part', 'the warm-up'
WARNING_ENV = 'TF_CNN_BUSY_HOST_WARNING'
METHOD = ('/proc samples at the start and end of the timed part: others = busy ticks '
          '(user+nice+system+irq+softirq) of the affinity CPUs in /proc/stat - this '
          'process\'s utime+stime+cutime+cstime (/proc/self/stat); steal from /proc/stat; '
          'load average: /proc/loadavg 1-minute (counts this run too); share = others / '
          '(cores x wall), a run\'s cores being every CPU it may run on')


@dataclasses.dataclass(frozen=True)
class Sample:
    """One reading of /proc.

    Attributes:
      wall_secs: a monotonic clock, seconds.
      load_average: 1-minute load average, or None when /proc/loadavg is unreadable.
      busy_ticks: user+nice+system+irq+softirq summed over the allowed CPUs (clock ticks),
        or None when /proc/stat is unreadable.
      steal_ticks: steal summed over the allowed CPUs (clock ticks), or None.
      self_ticks: utime+stime+cutime+cstime of this process (clock ticks), or None.
      error: why a reading is None ('' when all were read).
      host_cpus: the `cpuN` lines of /proc/stat, every CPU of the host (the load average's
        CPUs), or None when not read.
    """

    wall_secs: float
    load_average: float | None
    busy_ticks: int | None
    steal_ticks: int | None
    self_ticks: int | None
    error: str = ''
    host_cpus: int | None = None


def _down(secs: float) -> float:
    """`secs` rounded down to the hundredth shown, so a stretch just short of what it needs
    never reads as long as it (0.119 s of 0.12 s needed: 0.11, not 0.12)."""
    return math.floor(round(secs * 100, 6)) / 100


def _up(secs: float) -> float:
    """`secs` rounded up to the hundredth shown (what a measurement needs)."""
    return math.ceil(round(secs * 100, 6)) / 100


def _read(path: str) -> str:
    with open(path, encoding='ascii', errors='replace') as f:
        return f.read()


class ProcReader:
    """Reads the samples from a /proc tree; every source injectable for tests.

    A sample is read (`read_files`: three files and the clock) and parsed (`parse`) apart, so
    that a measurement's start reads only (Meter.start) and the parsing waits for its end.

    Args:
      root: the /proc folder (a test passes a folder holding `loadavg`, `stat` and
        `self/stat` files).
      cpus: the CPU numbers whose `cpuN` lines count; default os.sched_getaffinity(0), asked
        when first needed (`cpus`).
      clock: () -> seconds, monotonic; default time.monotonic.
      ticks_per_sec: clock ticks a second of /proc's counters; default SC_CLK_TCK, asked when
        first needed.
      read: path -> text; default reads the file.
    """

    FILES = ('loadavg', 'stat', 'self/stat')

    def __init__(self, root: str = '/proc', *, cpus=None, clock: Callable[[], float] = None,
                 ticks_per_sec: int | None = None, read: Callable[[str], str] = _read):
        self.root = root
        self._cpus = None if cpus is None else frozenset(cpus)
        self.clock = clock or time.monotonic
        self._ticks_per_sec = ticks_per_sec
        self.read = read

    @property
    def cpus(self) -> frozenset:
        """The CPU numbers whose `cpuN` lines count."""
        if self._cpus is None:
            self._cpus = allowed_cpus()
        return self._cpus

    @property
    def ticks_per_sec(self) -> int:
        """Clock ticks a second of /proc's counters."""
        if self._ticks_per_sec is None:
            self._ticks_per_sec = _clock_ticks()
        return self._ticks_per_sec

    def read_files(self) -> tuple[float, dict]:
        """(the clock, {file of FILES: its text, or the OSError that kept it unread})."""
        texts = {}
        for name in self.FILES:
            try:
                texts[name] = self.read(os.path.join(self.root, *name.split('/')))
            except OSError as e:
                texts[name] = e
        return self.clock(), texts

    def parse(self, readings: tuple[float, dict]) -> Sample:
        """The Sample of `read_files`' readings: load average, the allowed CPUs' busy and steal
        ticks and this process's ticks; a source that cannot be read gives None and its
        reason in `error`."""
        wall, texts = readings
        errors, values = [], {}
        parsers = {'loadavg': lambda text: float(text.split()[0]),
                   'stat': lambda text: parse_stat(text, self.cpus),
                   'self/stat': parse_self_stat}
        for name in self.FILES:
            try:
                if isinstance(texts[name], OSError):
                    raise texts[name]
                values[name] = parsers[name](texts[name])
            except (OSError, ValueError, IndexError) as e:
                errors.append('%s/%s: %s' % (self.root, name, _why(e)))
        busy, steal = values.get('stat', (None, None))
        host_cpus = None if isinstance(texts['stat'], OSError) else count_cpus(texts['stat'])
        return Sample(wall, values.get('loadavg'), busy, steal, values.get('self/stat'),
                      '; '.join(errors), host_cpus or None)

    def sample(self) -> Sample:
        """Reads and parses one sample (`read_files`, `parse`)."""
        return self.parse(self.read_files())


def _why(error: BaseException) -> str:
    return getattr(error, 'strerror', None) or str(error) or type(error).__name__


def _clock_ticks() -> int:
    try:
        return int(os.sysconf('SC_CLK_TCK')) or 100
    except (AttributeError, ValueError, OSError):
        return 100


def allowed_cpus() -> frozenset:
    """The CPU numbers this process may run on (os.sched_getaffinity; all of them where the
    call does not exist)."""
    try:
        return frozenset(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return frozenset(range(os.cpu_count() or 1))


def parse_stat(text: str, cpus) -> tuple[int, int]:
    """(busy ticks, steal ticks) summed over the `cpuN` lines of /proc/stat with N in `cpus`.

    A line reads `cpuN user nice system idle iowait irq softirq steal guest guest_nice`
    (proc(5)); busy = user + nice + system + irq + softirq, steal = the 8th value (0 where
    the kernel has no such column).

    Raises:
      ValueError: no `cpuN` line of `cpus` is in the text.
    """
    busy = steal = found = 0
    for line in text.splitlines():
        name, _, rest = line.partition(' ')
        if not name.startswith('cpu') or name == 'cpu' or int(name[3:]) not in cpus:
            continue
        values = [int(v) for v in rest.split()]
        busy += values[0] + values[1] + values[2] + sum(values[5:7])
        steal += values[7] if len(values) > 7 else 0
        found += 1
    if not found:
        raise ValueError('no cpuN line for CPUs %s' % sorted(cpus))
    return busy, steal


def count_cpus(text: str) -> int:
    """The `cpuN` lines of a /proc/stat text: the host's online CPUs."""
    return sum(1 for line in text.splitlines() if line[3:4].isdigit() and line[:3] == 'cpu')


def parse_self_stat(text: str) -> int:
    """utime + stime + cutime + cstime (clock ticks) of a /proc/[pid]/stat line: fields 14-17
    of proc(5), counted after the parenthesised command name (which may hold spaces)."""
    fields = text.rpartition(')')[2].split()  # fields[0] is field 3 (state)
    return sum(int(v) for v in fields[11:15])


def run_cores(intra_threads: int | None, cpus) -> int:
    """The cores a measurement confined to its intra-op threads uses (a calibration's kernel;
    a training or evaluation run's share is of every allowed CPU: Meter's `whole_process`):
    min(intra-op threads, allowed CPUs); 0 or None threads: all the allowed CPUs (TensorFlow
    then sizes its pool by them)."""
    allowed = max(1, len(cpus))
    return min(intra_threads, allowed) if intra_threads and intra_threads > 0 else allowed


def measure(start: Sample, end: Sample, cores: int, num_cpus: int,
            ticks_per_sec: int, cluster: dict | None = None,
            figure: str = TOTAL_FIGURE, interval: str = TIMED_PART,
            intra_threads: int | None = None) -> dict:
    """The result dict's 'host_load' from two samples.

    Args:
      start, end: the Samples at the start and end of the timed part.
      cores: what the others' share divides by: a run's allowed CPUs, a confined
        measurement's run_cores (the module docstring).
      num_cpus: CPUs in the affinity mask (steal's denominator).
      ticks_per_sec: clock ticks a second of the counters.
      cluster: a cluster task's {'ticks': clock ticks its other local tasks' processes used
        over the interval (cluster_tasks.delta; None: not read), 'tasks': the cluster's other
        task addresses on this host, 'processes': their processes found}; None on one host.
      figure: the figure the timed part gave, which the warning names: TOTAL_FIGURE (a
        training, forward-only or --eval run), 'eval images/sec' (an evaluation during
        training).
      interval: what the samples bound, as `error` names it ('the timed part lasted 0.02 s,
        too short ...'): TIMED_PART, WARM_UP ('the warm-up'), or an --eval's 'the set-up'.
      intra_threads: a run's intra-op threads when fewer than `cores` (its share is of every
        allowed CPU: format_line says so), else None.

    Returns:
      {cores, intra_threads, cpus_allowed, host_cpus (the host's CPUs, which the load
       average counts over; None unread), wall_secs, load_average_before, load_average_after,
       others_cpu_secs, others_cores, others_fraction, cluster_tasks, cluster_processes,
       cluster_cpu_secs, cluster_cores, cluster_fraction, outside_fraction (the others less
       the cluster's; the cluster_ keys are None on one host), steal_secs, steal_fraction,
       representative (None when not measured), reasons [text], warning (text or None),
       error ('' or why a figure is None), others_limit, steal_limit (the warning's
       thresholds, fractions), method}. Seconds are wall or CPU seconds;
       fractions 0..1 (others_fraction may pass 1 when others use more CPUs than the run,
       never more than the allowed CPUs). A figure is None when its source cannot be read or
       the timed part is shorter than `min_wall_secs` (`error` then says how long it lasted).
    """
    wall = end.wall_secs - start.wall_secs
    out = {'cores': cores, 'intra_threads': intra_threads, 'cpus_allowed': num_cpus,
           'host_cpus': end.host_cpus, 'wall_secs': wall,
           'load_average_before': start.load_average, 'load_average_after': end.load_average,
           'others_cpu_secs': None, 'others_cores': None, 'others_fraction': None,
           'cluster_tasks': None, 'cluster_processes': None, 'cluster_cpu_secs': None,
           'cluster_cores': None, 'cluster_fraction': None, 'outside_fraction': None,
           'steal_secs': None, 'steal_fraction': None, 'representative': None, 'reasons': [],
           'warning': None, 'error': start.error or end.error,
           'others_limit': OTHERS_LIMIT, 'steal_limit': STEAL_LIMIT, 'method': METHOD}
    if wall <= 0:
        out['error'] = out['error'] or 'no time between the samples'
        return out
    cpus = max(1, num_cpus)
    need = min_wall_secs(cores, num_cpus, ticks_per_sec)
    short = []
    if None not in (start.busy_ticks, end.busy_ticks, start.self_ticks, end.self_ticks):
        if wall < need['others']:
            short.append('others\' CPU time needs %.2f s' % _up(need['others']))
        else:
            ticks = (end.busy_ticks - start.busy_ticks) - (end.self_ticks - start.self_ticks)
            out['others_cpu_secs'] = min(max(0, ticks) / ticks_per_sec, cpus * wall)
            out['others_cores'] = out['others_cpu_secs'] / wall
            out['others_fraction'] = out['others_cores'] / cores
            out['outside_fraction'] = out['others_fraction']
    if cluster is not None:
        _cluster_share(out, cluster, wall, cores, ticks_per_sec)
    if None not in (start.steal_ticks, end.steal_ticks):
        if wall < need['steal']:
            short.append('steal needs %.2f s' % _up(need['steal']))
        else:
            out['steal_secs'] = min(max(0, end.steal_ticks - start.steal_ticks) / ticks_per_sec,
                                    cpus * wall)
            out['steal_fraction'] = out['steal_secs'] / (cpus * wall)
    if short:
        out['error'] = '; '.join(e for e in (out['error'], (
            '%s lasted %.2f s, too short for /proc\'s clock ticks of %g s: %s'
            % (interval, _down(wall), 1.0 / ticks_per_sec, ', '.join(short)))) if e)
    if out['others_fraction'] is None and out['steal_fraction'] is None:
        return out
    if out['outside_fraction'] is not None and out['outside_fraction'] > OTHERS_LIMIT:
        out['reasons'].append(_others_reason(out))
    if out['steal_fraction'] is not None and out['steal_fraction'] > STEAL_LIMIT:
        out['reasons'].append(
            'the hypervisor took %s of the CPUs\' time for other machines (steal, more '
            'than %.0f%%)' % (share_above(out['steal_fraction'], STEAL_LIMIT, 1),
                              100 * STEAL_LIMIT))
    out['representative'] = not out['reasons']
    out['warning'] = warning_text(out, figure)
    return out


def _cluster_share(out: dict, cluster: dict, wall: float, cores: int,
                   ticks_per_sec: int) -> None:
    """Fills measure's cluster_ keys and outside_fraction from `cluster` (measure's arg)."""
    out['cluster_tasks'] = cluster.get('tasks')
    out['cluster_processes'] = cluster.get('processes')
    if out['others_cpu_secs'] is None or cluster.get('ticks') is None:
        return
    secs = min(cluster['ticks'] / ticks_per_sec, out['others_cpu_secs'])
    out['cluster_cpu_secs'] = secs
    out['cluster_cores'] = secs / wall
    out['cluster_fraction'] = out['cluster_cores'] / cores
    out['outside_fraction'] = max(0.0, out['others_fraction'] - out['cluster_fraction'])


def unfound_tasks(load: dict) -> bool:
    """True when the cluster has other tasks on this host and none of their processes was
    found (their CPU time may be among the others')."""
    return bool(load.get('cluster_tasks')) and not load.get('cluster_processes')


def share_above(fraction: float, limit: float, decimals: int = 0) -> str:
    """A share (`fraction` 0..1, above `limit`, a fraction) as a warning prints it beside
    'more than <limit>': 100 x fraction with `decimals` decimals and '%', or more (up to 2)
    where fewer would read as the limit (0.2504 of 25%: '25.04%', never '25%, more than
    25%'); closer still, rounded up to 0.01% ('25.01%'). The rule stays `fraction > limit`:
    the text shows enough digits to agree with it. E.g. '71%', '25.04%', '5.1%'."""
    for places in range(decimals, 3):
        text = '%.*f' % (places, 100 * fraction)
        if float(text) > 100 * limit:
            return text + '%'
    return '%.2f%%' % max(math.ceil(10000 * fraction) / 100, 100 * limit + 0.01)


def _others_reason(load: dict) -> str:
    cores = load['cores']
    outside = max(0.0, load['others_cores'] - (load.get('cluster_cores') or 0.0))
    who = 'other processes'
    if load.get('cluster_fraction'):
        who = 'processes outside the cluster'
    elif unfound_tasks(load):
        who = ('other processes (maybe the cluster\'s own %d other task%s on this host: '
               'their processes were not found)' % (
                   load['cluster_tasks'], '' if load['cluster_tasks'] == 1 else 's'))
    return '%s used %.2f of the run\'s %d core%s (%s, more than %.0f%%)' % (
        who, outside, cores, '' if cores == 1 else 's',
        share_above(load['outside_fraction'], OTHERS_LIMIT), 100 * OTHERS_LIMIT)


def min_wall_secs(cores: int, num_cpus: int, ticks_per_sec: int) -> dict:
    """The shortest timed part whose tick rounding keeps each figure within its limit
    (seconds): {'others': 2 x (num_cpus + 1) / (ticks_per_sec x OTHERS_LIMIT x cores),
    'steal': 2 / (ticks_per_sec x STEAL_LIMIT)} (the module docstring says why)."""
    return {'others': 2.0 * (max(1, num_cpus) + 1) / (ticks_per_sec * OTHERS_LIMIT
                                                      * max(1, cores)),
            'steal': 2.0 / (ticks_per_sec * STEAL_LIMIT)}


class Meter:
    """The host load over one interval: `start()` before it, `stop()` after it (`restart()`
    ends one interval and starts the next on the same sample).

    Args:
      intra_threads: the intra-op threads (0 or None: TensorFlow's choice).
      reader: a ProcReader (a test's fake /proc); default the real one.
      figure: the figure its warning names (measure's `figure`).
      whole_process: True for a training or evaluation run: the share is of every allowed
        CPU (its inter-op and input threads run beside the intra-op ones); False for a
        measurement confined to its intra-op threads (run_cores).
      cpu_limit: the whole CPUs of a container's CPU quota (hardware/cpu_quota.py), which
        caps the allowed CPUs the share divides by; None: no quota.
    """

    def __init__(self, intra_threads: int | None, reader: ProcReader | None = None,
                 figure: str = TOTAL_FIGURE, *, whole_process: bool = False,
                 cpu_limit: int | None = None):
        self.cpu_limit = cpu_limit
        self.reader = reader or ProcReader()
        self.figure = figure
        self.whole_process = whole_process
        self._intra_threads = intra_threads
        self._start = None
        self._cluster_pids = None
        self._cluster_tasks = 0

    @property
    def cores(self) -> int:
        """What the others' share divides by: the allowed CPUs (`whole_process`), else
        run_cores."""
        cpus = max(1, min(len(self.reader.cpus), self.cpu_limit or len(self.reader.cpus)))
        if self.whole_process:
            return cpus
        return run_cores(self._intra_threads, range(cpus))

    def _fewer_intra_threads(self) -> int | None:
        """A whole process's intra-op threads when fewer than its cores, else None."""
        intra = self._intra_threads
        return intra if self.whole_process and intra and 0 < intra < self.cores else None

    def watch_cluster(self, pids, tasks: int) -> None:
        """Counts the processes `pids` (metrics/cluster_tasks.py find) apart, as the cluster's
        `tasks` other tasks on this host."""
        self._cluster_pids, self._cluster_tasks = frozenset(pids), tasks

    def _read(self):
        cluster = (None if self._cluster_pids is None else cluster_tasks.ticks(
            self._cluster_pids, self.reader.root, self.reader.read))
        return self.reader.read_files(), cluster

    def start(self) -> None:
        """Reads the first sample's files (parsed by `stop`: reading is all the start does)."""
        self._start = self._read()

    def stop(self) -> dict | None:
        """Takes the second sample; returns `measure`'s dict (None without a `start`)."""
        load, self._start = self._measure(self._read()), None
        return load

    def restart(self, interval: str = TIMED_PART) -> dict | None:
        """Ends the interval and starts the next one on the same sample: `stop`'s dict of the
        interval that ended (None without a `start`), named `interval` in its error (the
        warm-up before a timed part: WARM_UP)."""
        readings = self._read()
        load = self._measure(readings, interval)
        self._start = readings
        return load

    def _measure(self, readings, interval: str = TIMED_PART) -> dict | None:
        if self._start is None:
            return None
        (files, ticks), (start_files, start_ticks) = readings, self._start
        end, start = self.reader.parse(files), self.reader.parse(start_files)
        cluster = None
        if self._cluster_pids is not None:
            cluster = {'ticks': (cluster_tasks.delta(start_ticks, ticks)
                                 if self._cluster_pids else None),
                       'tasks': self._cluster_tasks, 'processes': len(self._cluster_pids)}
        return measure(start, end, self.cores, len(self.reader.cpus), self.reader.ticks_per_sec,
                       cluster, self.figure, interval, self._fewer_intra_threads())


def _fmt(value, pattern: str, scale: float = 1.0) -> str:
    return '?' if value is None else pattern % (value * scale)


def format_line(load: dict) -> str:
    """The total block's line, e.g. 'Host load: other processes used 1.42 of 2 cores (71%),
    load average 3.1 before, 3.4 after, steal 0.0%'; 'Host load: not measured (why)' when
    neither CPU figure could be read (or the timed part was too short to measure: 'not
    measured (the timed part lasted 0.02 s, too short ...)'); a figure that is '?' (its source
    unreadable) gets the reason after the line, '(?: why)'; steal that a timed part too short
    for it could not measure reads 'steal not measured (the timed part lasted 0.37 s, too
    short for /proc's clock ticks of 0.01 s: steal needs 0.40 s)'. A run's share is of every
    CPU it may use, so never above 100%; with fewer intra-op threads than those CPUs the
    line says so: '1.66 of 2 cores (83%: of every CPU the run may use: its inter-op and input
    threads run beside its 1 intra-op thread)'. Others above a confined measurement's cores
    (run_cores fewer than the CPUs) read '1.50 cores (150% of the run's 1)'. A
    cluster task's line adds ', of which 1.30 the cluster's other tasks on this host' after
    the others (_cluster_clause)."""
    if load['others_fraction'] is None and load['steal_fraction'] is None:
        return 'Host load: not measured (%s)' % (load['error'] or 'unknown')
    cores = load['cores']
    others = load['others_cores']
    if others is not None and others > cores:  # more than a confined measurement's cores
        used = '%.2f cores (%.0f%% of the run\'s %d)' % (others, 100 * load['others_fraction'],
                                                         cores)
    else:
        used = '%s of %d core%s (%s%s)' % (_fmt(others, '%.2f'), cores, '' if cores == 1 else 's',
                                           _fmt(load['others_fraction'], '%.0f%%', 100),
                                           _whole_mask_note(load))
    line = ('Host load: other processes used %s%s, load average %s before, %s after, steal %s' % (
        used, _cluster_clause(load), _fmt(load['load_average_before'], '%.1f'),
        _fmt(load['load_average_after'], '%.1f'),
        'not measured' if load['steal_fraction'] is None
        else _fmt(load['steal_fraction'], '%.1f%%', 100)))
    if not load['error']:
        return line
    return line + (' (?: %s)' if '?' in line else ' (%s)') % load['error']


def _whole_mask_note(load: dict) -> str:
    """': of every CPU the run may use: its inter-op and input threads run beside its 1
    intra-op thread' when a run's intra-op threads are fewer than its cores (measure's
    `intra_threads`), else ''."""
    intra = load.get('intra_threads')
    if not intra:
        return ''
    return (': of every CPU the run may use: its inter-op and input threads run beside its %d '
            'intra-op thread%s' % (intra, '' if intra == 1 else 's'))


def _cluster_clause(load: dict) -> str:
    """', of which 1.30 the cluster's other tasks on this host (they shared its cores)' for a
    cluster task with other tasks here; '' on one host."""
    if not load.get('cluster_tasks') or load['others_cores'] is None:
        return ''
    if unfound_tasks(load) or load.get('cluster_cores') is None:
        return (', of which ? the cluster\'s %d other task%s on this host (their processes '
                'were not found: the others may be the cluster\'s own)' % (
                    load['cluster_tasks'], '' if load['cluster_tasks'] == 1 else 's'))
    shared = (' (the cluster\'s tasks shared its cores)'
              if load['cluster_fraction'] > OTHERS_LIMIT else '')
    return ', of which %.2f the cluster\'s other tasks on this host%s' % (
        load['cluster_cores'], shared)


def warning_text(load: dict, figure: str = TOTAL_FIGURE) -> str | None:
    """The warning (without 'warning: ') when the host was busy, else None: e.g. "the total
    line's images/sec is not representative of this host: other processes used 1.42 of the run's 2
    cores (71%, more than 25%) during the timed part; rerun when the host is quiet". `figure`:
    the figure the run printed (measure's `figure`: 'eval images/sec' for an evaluation
    during training)."""
    if not load['reasons']:
        return None
    return ('%s is not representative of this host: %s during the timed part; '
            'rerun when the host is quiet' % (figure, '; '.join(load['reasons'])))


def warning_enabled(environ=None) -> bool:
    """False when TF_CNN_BUSY_HOST_WARNING is '0' (or 'off', 'false', 'no')."""
    value = (os.environ if environ is None else environ).get(WARNING_ENV, '1')
    return value.strip().lower() not in ('0', 'off', 'false', 'no')
