"""How busy the host was during each run of a sweep: the report's "Host load" section and
compare's host columns.

Each run's results JSON has result['host_load'] (metrics/host_load.py: other processes' CPU
time on the run's CPUs over the timed part, the load average before and after, steal time);
`record_host_load` keeps the fields a sweep record carries, and:

    host_table(records)   the report section: one row per run (configuration and repeat),
                          its images/sec, others' CPU, load average, steal and whether the run
                          was on a busy host (its images/sec then not representative)
    compare_cell(records) a compare cell for one side's runs of a configuration: the busiest
                          run's others' share, how many runs were busy, and how many were
                          measured when not all were
    record_state(record)  the record as metrics/clean_runs.py RunState: its host load and its
                          timed steps (step_time_secs count) against its --num_batches; the
                          rule there says whether compare may use it

Records without the field (sweeps recorded before it, failed runs) show '-'; a report or compare
without any record that has it shows nothing of it (the output stays what it was). A run that
tried and could not measure it (a timed part too short for /proc's clock ticks) shows 'not
measured'; when no run could, the report's section says so, why, and how to get it measured.
"""

from __future__ import annotations

# Absolute: `python -m tools.sweep` in a checkout makes `tools` a top-level package.
from tf_cnn_benchmarks import cnn_util
from tf_cnn_benchmarks.metrics import clean_runs

from . import results

FIELDS = ('cores', 'cpus_allowed', 'intra_threads', 'others_cores', 'others_fraction',
          'steal_fraction', 'load_average_before', 'load_average_after', 'representative',
          'reasons', 'others_limit', 'steal_limit', 'error', 'cluster_fraction', 'cpu_quota',
          'stall')


def record_host_load(result: dict) -> dict | None:
    """The sweep record's 'host_load' from a run's result dict (None when it has none)."""
    load = result.get('host_load')
    if not isinstance(load, dict):
        return None
    return {name: load.get(name) for name in FIELDS}


def _load(record: dict) -> dict | None:
    load = record.get('host_load')
    return load if isinstance(load, dict) and load.get('others_fraction') is not None else None


def share(record: dict) -> tuple[float, int, float] | None:
    """(others' cores, the run's cores, others' share) of a record's measured host load, the
    share of every CPU the run may use as its own host-load line gives it
    (metrics/host_load.py: its inter-op and input threads run beside the intra-op ones), so
    never above 100%. A record of a run measured before that (its 'cores' its intra-op
    threads: 'others 1.16 of 1 (116%)') is read the same way: its cores are the CPUs it was
    allowed ('cpus_allowed'), else the machine's (environment cpu_cores); None when its load
    was not measured."""
    load = _load(record)
    if load is None:
        return None
    others = float(load.get('others_cores') or 0.0)
    cores = load.get('cores') or 1
    allowed = load.get('cpus_allowed') or (record.get('environment') or {}).get('cpu_cores')
    if isinstance(allowed, int) and allowed > cores:
        cores = allowed
    fraction = others / cores if load.get('others_cores') is not None else float(
        load['others_fraction'])
    return others, cores, min(fraction, 1.0)


def unmeasured(records: list[dict]) -> list[dict]:
    """The successful records whose run tried to measure its host load and could not (a
    'host_load' without others' share: a timed part too short for /proc's clock ticks, an
    unreadable /proc); records without the field (older sweeps) are not among them."""
    return [r for r in records if r.get('status') == 'ok'
            and isinstance(r.get('host_load'), dict)
            and r['host_load'].get('others_fraction') is None]


def _why_unmeasured(records: list[dict]) -> str:
    """The first of `records` (`unmeasured`'s) reason the load was not measured."""
    return next((r['host_load'].get('error') for r in records if r['host_load'].get('error')),
                '') or 'no reason recorded'


def unmeasured_line(records: list[dict], used: int) -> str:
    """compare's line for `records` (`unmeasured`'s) of the `used` runs compared: how many,
    why (the first run's reason), and how to get the load measured."""
    return ('host load: not measured for %d of %s compared (%s): whether the host was '
            'quiet during them is not known; lengthen their timed part (a larger --num_batches '
            'in the sweep\'s flags) until the load is measured'
            % (len(records), cnn_util.counted(used, 'run'), _why_unmeasured(records)))


def any_measured(records: list[dict]) -> bool:
    """True when a record has a measured host load."""
    return any(_load(r) for r in records)


def _pct(value, digits: int = 0) -> str:
    return '-' if value is None else '%.*f%%' % (digits, 100 * value)


def _num(value, pattern: str) -> str:
    return '-' if value is None else pattern % value


def is_busy(record: dict) -> bool:
    """True when the run's host load made its images/sec not representative."""
    load = _load(record)
    return bool(load) and load.get('representative') is False


def record_state(record: dict) -> clean_runs.RunState:
    """The metrics/clean_runs.py RunState of a sweep record (a record without a host load
    or params counts as clean on what it lacks)."""
    steps = record.get('step_time_secs') or {}
    return clean_runs.state(record.get('host_load'), steps.get('count'),
                            clean_runs.planned_from_params(record.get('params') or {}))


def host_table(records: list[dict]) -> str:
    """The report section (markdown), one row per run in file order ('not measured' for a run
    whose load could not be measured); when no run's load was measured but some tried, the
    section says so, why and how to get it measured; '' when no record has the field (a sweep
    recorded before runs measured it, or none succeeded)."""
    rows = [r for r in records if r.get('status') == 'ok']
    missing = unmeasured(rows)
    if not any_measured(rows):
        if not missing:
            return ''
        return ('## Host load\n\nNot measured for %s of the %d successful runs (%s): whether the '
                'host was quiet during them is not known. Lengthen their timed part (a larger '
                '--num_batches in the sweep\'s flags) until it is measured.\n'
                % ('any' if len(missing) == len(rows) else '%d' % len(missing), len(rows),
                   _why_unmeasured(missing)))
    limits = next(_load(r) for r in records if _load(r))
    lines = ['## Host load\n',
             'Per run, over its timed part (metrics/host_load.py): CPU time other processes '
             'used on the run\'s CPUs, in cores and as a share of the run\'s cores; the '
             '1-minute load average before and after (it counts the run itself); steal: the '
             'CPUs\' time a hypervisor gave to other machines. busy: others above %s of the '
             'run\'s cores or steal above %s; that run\'s images/sec is not representative.\n'
             % (_pct(limits.get('others_limit')), _pct(limits.get('steal_limit'))),
             '| run | images/sec | others\' CPU | load average | steal | host |',
             '| --- | ---: | ---: | ---: | ---: | --- |']
    for r in rows:
        load, cut = _load(r) or {}, share(r)
        others = '-' if not cut else '%.2f of %s (%s)' % (cut[0], cut[1], _pct(cut[2]))
        average = '-' if not load else '%s → %s' % (
            _num(load.get('load_average_before'), '%.1f'),
            _num(load.get('load_average_after'), '%.1f'))
        lines.append('| %s repeat %d | %s | %s | %s | %s | %s |' % (
            results.describe(results.config_of(r)), r['config']['repeat'] + 1,
            _num(r.get('images_per_sec'), '%.1f'), others, average,
            _pct(load.get('steal_fraction'), 1) if load else '-',
            ('busy' if is_busy(r) else 'quiet') if load else
            'not measured' if r in missing else '-'))
    busy = sum(1 for r in rows if is_busy(r))
    lines += ['', '%d of %s on a busy host.%s' % (
        busy, cnn_util.counted(len(rows), 'run'),
        ' Not measured for %d (%s).' % (len(missing), _why_unmeasured(missing))
        if missing else '')]
    return '\n'.join(lines) + '\n'


def compare_cell(records: list[dict]) -> str:
    """One side's runs of a configuration: the highest others' share (`share`) and the busy
    runs: '71% (2/3 busy)' when every successful run's load was measured, '5%' when none was
    busy; when some were not, how many were: '52% (1 of 3 measured, 1 busy)', '5% (2 of 3
    measured)'; '-' when none was."""
    ran = [r for r in records if r.get('status') == 'ok']
    loads = [r for r in ran if _load(r)]
    if not loads:
        return '-'
    highest = max(share(r)[2] for r in loads)
    busy = sum(1 for r in loads if is_busy(r))
    if len(loads) < len(ran):
        return _pct(highest) + ' (%d of %d measured%s)' % (
            len(loads), len(ran), ', %d busy' % busy if busy else '')
    return _pct(highest) + (' (%d/%d busy)' % (busy, len(loads)) if busy else '')
