"""A container's CPU quota (CFS bandwidth control), read from the cgroup files, and how much
it throttled a run.

`docker --cpus=0.5`, Kubernetes' CPU limits and systemd's CPUQuota= all set one: the process
may run on every CPU of its affinity mask, but only for `quota` microseconds of CPU time per
`period`, i.e. quota / period CPUs' worth. Past that, every thread of the process waits for
the next period ("throttled"). The affinity mask does not show it, so a run under a 0.5-CPU
quota picked 2 intra-op threads, was throttled in 97% of its periods and blamed other
processes. Where the process's CPUs are worked out (runtime/cpu_tuning.py
default_thread_counts; the host load's share: lifecycle/figure_hooks.py HostLoadHook) they
are min(affinity, ceil(quota CPUs)) (`usable`).

Files (the process's cgroup is /proc/self/cgroup's line; each level from it up to the mount's
root is read, and the smallest quota found wins):

    cgroup v2   ROOT/<path>/cpu.max          'max 100000' (none) or '50000 100000' (quota and
                                             period, microseconds)
                ROOT/<path>/cpu.stat         nr_periods, nr_throttled, throttled_usec
    cgroup v1   ROOT/cpu,cpuacct/<path>/cpu.cfs_quota_us, cpu.cfs_period_us (-1: none)
                ROOT/cpu,cpuacct/<path>/cpu.stat   nr_periods, nr_throttled, throttled_time (ns)

TF_CNN_CPU_QUOTA=off makes `host_quota` ignore them (tests/conftest.py sets it). Pure
reading: every file goes through `read` (a test passes a dict's lookup); a file that is
missing or unreadable means no quota there. No TensorFlow.
"""

from __future__ import annotations

import dataclasses
import math
import os
from typing import Callable

from ..metrics import host_load

ROOT = '/sys/fs/cgroup'
CGROUP_FILE = '/proc/self/cgroup'
V1_FOLDERS = ('cpu,cpuacct', 'cpu', 'cpuacct,cpu')
V2_FOLDERS = ('', 'unified')
#: Throttled in at least this share of the timed part's periods: the quota, not other
#: processes, bounded the run (`apply`).
THROTTLED_LIMIT = 0.5
ENV = 'TF_CNN_CPU_QUOTA'


def read_file(path: str) -> str:
    with open(path, encoding='ascii', errors='replace') as f:
        return f.read()


@dataclasses.dataclass(frozen=True)
class Quota:
    """A CPU quota.

    Attributes:
      cpus: quota / period, CPUs' worth of time (0.5 for `docker --cpus=0.5`).
      source: where it was read, e.g. 'cgroup v2 /sys/fs/cgroup/cpu.max: 50000 100000'.
      stat_path: the cpu.stat file of the cgroup that holds it (its throttling counts).
    """

    cpus: float
    source: str
    stat_path: str

    @property
    def whole_cpus(self) -> int:
        """ceil(cpus), at least 1: the CPUs a run can keep busy under it."""
        return max(1, math.ceil(round(self.cpus, 6)))

    def words(self) -> str:
        """'CPU quota 0.5 CPU (cgroup v2 /sys/fs/cgroup/cpu.max: 50000 100000)'."""
        return 'CPU quota %g CPU%s (%s)' % (round(self.cpus, 2), '' if self.cpus <= 1 else 's',
                                            self.source)


def _levels(path: str) -> list[str]:
    """'/a/b' -> ['/a/b', '/a', '/']."""
    out, path = [], '/' + path.strip('/')
    while True:
        out.append(path)
        if path == '/':
            return out
        path = os.path.dirname(path)


def _cgroup_paths(text: str) -> tuple[str | None, str | None]:
    """(v2 path, v1 cpu controller path) of a /proc/self/cgroup text (None: no such line)."""
    v2 = v1 = None
    for line in text.splitlines():
        parts = line.split(':', 2)
        if len(parts) != 3:
            continue
        if parts[0] == '0' and parts[1] == '':
            v2 = parts[2] or '/'
        elif 'cpu' in parts[1].split(','):
            v1 = parts[2] or '/'
    return v2, v1


def _v2(folder: str, read) -> Quota | None:
    text = read(os.path.join(folder, 'cpu.max')).split()
    if len(text) < 2 or text[0] == 'max':
        return None
    quota, period = int(text[0]), int(text[1])
    if quota <= 0 or period <= 0:
        return None
    return Quota(quota / period, 'cgroup v2 %s: %d %d' % (
        os.path.join(folder, 'cpu.max'), quota, period), os.path.join(folder, 'cpu.stat'))


def _v1(folder: str, read) -> Quota | None:
    quota = int(read(os.path.join(folder, 'cpu.cfs_quota_us')).strip())
    period = int(read(os.path.join(folder, 'cpu.cfs_period_us')).strip())
    if quota <= 0 or period <= 0:
        return None
    return Quota(quota / period, 'cgroup v1 %s: cfs_quota_us %d, cfs_period_us %d' % (
        folder, quota, period), os.path.join(folder, 'cpu.stat'))


def read_quota(read: Callable[[str], str] = read_file, root: str = ROOT,
               cgroup_file: str = CGROUP_FILE) -> Quota | None:
    """This process's CPU quota: the smallest of its cgroup's and its ancestors' (v2, else
    v1); None when there is none, or the files cannot be read (not Linux)."""
    try:
        v2, v1 = _cgroup_paths(read(cgroup_file))
    except OSError:
        return None
    candidates = []
    if v2 is not None:  # the unified hierarchy: at the root, or under unified/ (hybrid hosts)
        candidates += [(os.path.join(root, top, level.lstrip('/')), _v2)
                       for top in V2_FOLDERS for level in _levels(v2)]
    if v1 is not None:
        candidates += [(os.path.join(root, top, level.lstrip('/')), _v1)
                       for top in V1_FOLDERS for level in _levels(v1)]
    found = []
    for folder, reader in candidates:
        try:
            quota = reader(folder.rstrip('/') or '/', read)
        except (OSError, ValueError, IndexError):
            continue
        if quota is not None:
            found.append(quota)
    return min(found, key=lambda q: q.cpus) if found else None


def host_quota(environ=None) -> Quota | None:
    """This process's quota from the real files (`read_quota`), or None when
    TF_CNN_CPU_QUOTA is 'off' (the test suite's setting: no test depends on the host's
    cgroup; a user's, for the figures of the host as if unlimited)."""
    value = (os.environ if environ is None else environ).get(ENV, '')
    return None if value.strip().lower() == 'off' else read_quota()


def cpus_figure(allowed: int, quota_cpus: float | None) -> int | float:
    """A configuration's CPUs: the allowed CPUs' count, or a smaller CPU quota to 2 decimals
    (0.5 under `docker --cpus=0.5`: a run throttled to half a CPU is not one pinned to a whole
    CPU); whole counts as int (2, not 2.0)."""
    if quota_cpus is None or quota_cpus >= allowed:
        return allowed
    value = max(round(quota_cpus, 2), 0.01)
    return int(value) if float(value).is_integer() else value


def usable(cpus: int, quota: Quota | None) -> int:
    """The CPUs a process may keep busy: `cpus` (its affinity mask's, or physical cores),
    no more than the quota's whole CPUs."""
    return cpus if quota is None else max(1, min(cpus, quota.whole_cpus))


def throttling(quota: Quota | None, read: Callable[[str], str] = read_file) -> dict | None:
    """{nr_periods, nr_throttled, throttled_secs} of the quota's cpu.stat now (None: no
    quota, or unreadable)."""
    if quota is None:
        return None
    try:
        values = dict(line.split()[:2] for line in read(quota.stat_path).splitlines()
                      if len(line.split()) >= 2)
        secs = (int(values['throttled_usec']) / 1e6 if 'throttled_usec' in values
                else int(values.get('throttled_time', 0)) / 1e9)
        return {'nr_periods': int(values['nr_periods']),
                'nr_throttled': int(values['nr_throttled']), 'throttled_secs': secs}
    except (OSError, ValueError, KeyError):
        return None


def apply(load: dict | None, quota: Quota | None, before: dict | None,
          after: dict | None) -> None:
    """Adds load['cpu_quota'] to a host load (metrics/host_load.py measure's dict) of a run
    under a quota: {cpus, source, periods, throttled, throttled_fraction, throttled_secs}
    over the timed part (`before`, `after`: `throttling` at its ends; the counts None when
    not read). Throttled in at least THROTTLED_LIMIT of the periods, the quota bounded the
    run: the others' share is no reason for calling it not representative (CFS gave it its
    quota in those periods: other processes did not take it), and the warning says so.
    No quota: the dict unchanged."""
    if load is None or quota is None:
        return
    info = {'cpus': quota.cpus, 'source': quota.source, 'periods': None, 'throttled': None,
            'throttled_fraction': None, 'throttled_secs': None}
    load['cpu_quota'] = info
    if before is None or after is None:
        return
    periods = after['nr_periods'] - before['nr_periods']
    throttled = after['nr_throttled'] - before['nr_throttled']
    info.update(periods=periods, throttled=throttled,
                throttled_secs=after['throttled_secs'] - before['throttled_secs'],
                throttled_fraction=throttled / periods if periods > 0 else None)
    if (info['throttled_fraction'] or 0.0) < THROTTLED_LIMIT:
        return
    load['reasons'] = [r for r in load['reasons'] if not r.startswith(
        ('other processes', 'processes outside'))]
    load['representative'] = (None if load['representative'] is None
                              else not load['reasons'])
    load['warning'] = ('the run\'s %s throttled it in %d of %d periods (%.0f%%) of the timed '
                       'part: the quota, not other processes, bounded its images/sec; give '
                       'the container more CPU (docker --cpus) for a figure of the host' % (
                           quota.words(), throttled, periods, 100 * info['throttled_fraction']))
    if load['reasons']:  # steal: its own warning after
        load['warning'] += '; ' + host_load.warning_text(load)


def line_clause(load: dict | None) -> str:
    """'; CPU quota 0.5 CPU (...): throttled in 218 of 224 periods (97%)' for a host load
    with 'cpu_quota' ('' without; 'throttling not read' when cpu.stat was not)."""
    info = (load or {}).get('cpu_quota')
    if not info:
        return ''
    head = '; CPU quota %g CPU%s (%s)' % (round(info['cpus'], 2),
                                          '' if info['cpus'] <= 1 else 's', info['source'])
    if info['periods'] is None:
        return head + ': throttling not read'
    return head + ': throttled in %d of %d periods (%s)' % (
        info['throttled'], info['periods'], '?' if info['throttled_fraction'] is None
        else '%.0f%%' % (100 * info['throttled_fraction']))
