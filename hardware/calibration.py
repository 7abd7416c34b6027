"""The one record of this host's measured figures: what was measured, its spread, the host's
load while it ran, and the rule that keeps only quiet measurements (issue 39.1).

Every measurement of the host (the CPU peak: hardware/cpu_peak.py; the reduced-precision
kernel factors: hardware/kernel_speed.py; the graph choices' factors: graph/graph_choices.py
and graph/memory_probe.py) goes through `measure`:

  1. it says what it measures and about how long it takes, before it starts (`announce`:
     one line on stdout, 'calibration: measuring <what> (about N s)');
  2. it runs under a host-load meter (metrics/host_load.py: other processes' CPU time on the
     cores the measurement uses, from /proc); the measurement returns its value and its
     spread over repeats (a relative figure: 0.03 = the repeats lay within 3% of the value);
  3. it is kept as the host's figure only when quiet: other processes used at most
     QUIET_LIMIT (a quarter) of its cores and the hypervisor stole at most
     host_load.STEAL_LIMIT. A busy measurement is not stored; the caller gets the last quiet
     one of the same key (or none) and `busy_note` says why in one line.

A busy measurement of a figure the record does not hold yet leaves a note in the record
(`busy|<key>|cpus <the allowed CPUs>`: when, and the others' load): for BUSY_RETRY_SECS after
it, a run on the same CPUs does not measure that figure again in passing (a busy try on CPU 0
does not hold back a run pinned to CPU 1, nor an unpinned one; each try cost a run 3-5 s on a
busy host and was thrown away) and says so in one line; `--calibrate` (a refresh) measures
whatever the note says, and a quiet measurement removes the notes of every CPU set.

A figure whose quiet measurements still move between calibrations (the CPU peak: on a 2-core
cloud VM the best 8-second rate of one kernel moved between 334 and 364 GFLOP/s over four
quiet measurements in a row) keeps its last SAMPLES quiet measurements, the host's figure
their median (`figure(..., median_by=...)`): one calibration moves it less than one
measurement moves.

The record is one JSON file, `$XDG_CACHE_HOME/tf_cnn_benchmarks/calibration.json` (default
`~/.cache/...`), {'version': 1, 'entries': {key: entry}}, an entry holding `kind`, `value` (a
number, or {name: number}), `spread`, `measured_utc`, `measure_secs`, `others_cores`,
`others_fraction`, `cores` and `quiet` (always true in the file); the entry of a sampled
figure is its median measurement, with `samples` (the last SAMPLES quiet ones, oldest
first). Each change is a read-modify-write under an exclusive lock on `calibration.json.lock`
beside it, then a rename (hardware/record_file.py): processes storing at once keep each
other's figures. A key names the CPU model, the TensorFlow version, the thread counts and the
CPUs they may use (`on_cpus`: a CPU set or quota smaller than the threads) and what was measured
(`host_key`), so a record copied to another host or TensorFlow answers nothing there.

The environment variable TF_CNN_CALIBRATION changes where the record is: a path (a record
of another place, or one a test wrote with the figures it injects), or 'off': no record is
read and nothing is measured (each figure is then `None`: the run uses today's graph, no CPU
peak, and the precision rules of the CPU's flags). The test suite runs with 'off'
(tests/conftest.py), so no test reads what this host measured.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import sys
import time
from typing import Callable, NamedTuple

from .. import cnn_util
from ..metrics import host_load
from . import cpu_quota, machine, record_file, user_dirs

RECORD_NAME = 'calibration.json'
VERSION = 1
ENV = 'TF_CNN_CALIBRATION'
OFF = 'off'
#: A measurement is the host's figure only when other processes used at most this share of
#: its cores (metrics/host_load.py's threshold for a representative run).
QUIET_LIMIT = host_load.OTHERS_LIMIT
#: Quiet measurements a sampled figure keeps (`figure`'s median_by); it is their median.
SAMPLES = 5
#: Seconds after a busy measurement of a figure not yet recorded during which a run does not
#: measure it again in passing (module docstring).
BUSY_RETRY_SECS = 600
BUSY_PREFIX = 'busy|'


class Measurement(NamedTuple):
    """One measured figure of the host.

    Attributes:
      kind: 'cpu peak', 'kernel factors' or 'graph choice'.
      key: the record's key (`host_key`).
      value: the figure: a float (FLOP/s, a factor) or {name: float}.
      spread: relative spread over the measurement's repeats (0.03: within 3%).
      measured_utc: when, ISO 8601 ('2026-12-04T20:10:00Z').
      measure_secs: seconds the measurement took.
      others_cores: core-equivalents other processes used meanwhile (None: not measured).
      others_fraction: others_cores / cores (None: not measured).
      cores: the cores the measurement used.
      quiet: whether it counts as the host's figure (QUIET_LIMIT; True when the load could not
        be read: the record then says 'load not measured').
      measured_now: True when this process measured it (False: read from the record).
      samples: the quiet measurements the figure is the median of (1 unless sampled).
      latest_utc: when the newest of those samples was measured ('' unless sampled).
    """
    kind: str
    key: str
    value: object
    spread: float
    measured_utc: str
    measure_secs: float
    others_cores: float | None
    others_fraction: float | None
    cores: int
    quiet: bool
    measured_now: bool
    samples: int = 1
    latest_utc: str = ''

    def date(self, stamp: str | None = None) -> str:
        """'2026-12-04 20:10 UTC' (minutes) of `stamp` (default measured_utc), or the stored
        text if not ISO 8601."""
        stamp = self.measured_utc if stamp is None else stamp
        return '%s %s UTC' % (stamp[:10], stamp[11:16]) if len(stamp) >= 16 else stamp

    def load_text(self) -> str:
        """'others 0.05 of 2 cores' or 'load not measured'."""
        if self.others_cores is None:
            return 'load not measured'
        return 'others %.2f of %d core%s' % (self.others_cores, self.cores,
                                             '' if self.cores == 1 else 's')

    def source(self) -> str:
        """'calibrated 2026-12-04 20:10 UTC, others 0.05 of 2 cores, spread 2%' ('measured
        now ...' when this process measured it; ', the median of 3 quiet calibrations' when
        the figure is a median: its date is the median sample's, the newest sample's follows)."""
        median = ''
        if self.samples > 1:
            median = ', the median of %d quiet calibrations' % self.samples
            if self.latest_utc and self.latest_utc != self.measured_utc:
                median += ', the newest %s' % self.date(self.latest_utc)
        return '%s %s, %s, spread %.0f%%%s' % (
            'measured now' if self.measured_now else 'calibrated', self.date(),
            self.load_text(), 100 * self.spread, median)


def cache_dir(environ=None) -> str:
    """`$XDG_CACHE_HOME/tf_cnn_benchmarks`, else `~/.cache/tf_cnn_benchmarks`."""
    return os.path.join(user_dirs.base_folder('XDG_CACHE_HOME', ('.cache',), environ),
                        'tf_cnn_benchmarks')


def record_path(environ=None) -> str | None:
    """The record's file: TF_CNN_CALIBRATION's path, else cache_dir()/calibration.json;
    None when TF_CNN_CALIBRATION is 'off'."""
    environ = os.environ if environ is None else environ
    value = environ.get(ENV, '').strip()
    if value.lower() == OFF:
        return None
    return value or os.path.join(cache_dir(environ), RECORD_NAME)


def host_key(cpu_model: str, tf_version: str, *parts, environ=None) -> str:
    """'AMD EPYC 7B13|tf 2.21.0|cpu peak|float32|2 threads': the CPU, TensorFlow and what;
    under ONEDNN_MAX_CPU_ISA (machine.onednn_isa_limit of `environ`, default os.environ) the
    cap after the version, 'AMD EPYC 7B13|tf 2.21.0|ONEDNN_MAX_CPU_ISA=AVX2|cpu peak|...':
    oneDNN's kernels under a cap are other kernels, and a capped run reads and keeps figures
    of its own (an uncapped run's keys stay as they were)."""
    limit = machine.onednn_isa_limit(environ)
    isa = ['ONEDNN_MAX_CPU_ISA=%s' % limit] if limit else []
    return '|'.join([cpu_model, 'tf %s' % tf_version] + isa + [str(p) for p in parts])


#: The records this process already said it cannot use (`load_record` says it once a path).
_SAID_UNUSABLE: set = set()


def record_problem(path: str) -> str | None:
    """Why the record at `path` cannot be read or written ('is a folder, not a file; ...'), or
    None (a missing file in a folder that can be made or written is no problem). A record
    under a home folder that does not exist cannot be written: the home folder is not made
    (user_dirs.py)."""
    if os.path.isdir(path):
        return 'is a folder, not a file: set %s to a file\'s path, or to %s' % (ENV, OFF)
    home = user_dirs.absent_home(path)
    if home:
        return '%s (set XDG_CACHE_HOME, or %s to a file\'s path, where this user can write)' % (
            user_dirs.absent_home_text(home), ENV)
    folder = os.path.dirname(os.path.abspath(path))
    while folder and not os.path.exists(folder):
        folder = os.path.dirname(folder) if os.path.dirname(folder) != folder else ''
    problem = cnn_util.write_problem(folder) if folder else None
    if problem:
        return 'cannot be written: %s (set %s to a path this user can write)' % (problem, ENV)
    return None


def load_record(path: str | None) -> dict:
    """{key: entry} of the record; {} when off or missing; {} and one warning line (once a
    path in this process) when it is unreadable, not JSON or of another version (a figure
    stored later replaces it)."""
    if not path:
        return {}
    try:
        with open(path, encoding='utf-8') as f:
            data = json.load(f)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        problem = record_problem(path) or (
            'cannot be read (%s): its figures are not used, and a figure stored now replaces '
            'it' % (getattr(e, 'strerror', None) or str(e).split(':')[0]))
        return _unusable(path, problem)
    if not isinstance(data, dict) or data.get('version') != VERSION:
        return _unusable(path, 'is not a calibration record of version %d: its figures are not '
                               'used, and a figure stored now replaces it' % VERSION)
    entries = data.get('entries')
    return entries if isinstance(entries, dict) else {}


def _unusable(path: str, problem: str) -> dict:
    if path not in _SAID_UNUSABLE:
        _SAID_UNUSABLE.add(path)
        _warn('the calibration record %s %s' % (path, problem))
    return {}


def _from_entry(key: str, entry) -> Measurement | None:
    if not isinstance(entry, dict) or 'value' not in entry:
        return None
    samples = entry.get('samples')
    try:
        return Measurement(str(entry.get('kind', '?')), key, entry['value'],
                           float(entry.get('spread', 0.0)), str(entry.get('measured_utc', '?')),
                           float(entry.get('measure_secs', 0.0)), entry.get('others_cores'),
                           entry.get('others_fraction'), int(entry.get('cores', 0)), True,
                           False, len(samples) if isinstance(samples, list) and samples else 1,
                           _newest(samples))
    except (TypeError, ValueError):
        return None


def _newest(samples) -> str:
    """The newest 'measured_utc' of an entry's samples ('' without samples)."""
    if not isinstance(samples, list):
        return ''
    return max((str(e.get('measured_utc', '')) for e in samples if isinstance(e, dict)),
               default='')


def _entry(m: Measurement) -> dict:
    return {'kind': m.kind, 'value': m.value, 'spread': round(m.spread, 4),
            'measured_utc': m.measured_utc, 'measure_secs': round(m.measure_secs, 2),
            'others_cores': m.others_cores, 'others_fraction': m.others_fraction,
            'cores': m.cores, 'quiet': True}


def _sampled_entry(old, new: dict, rank, floor: float | None = None) -> dict:
    """The entry of a sampled figure after the quiet measurement `new` (an `_entry`): the last
    SAMPLES quiet measurements (the old entry's samples, or the old entry itself) and, as the
    figure, the lower median of them by `rank(value)` (a measurement that was made, with its
    own date, load and spread). With `floor` (a rate this host just achieved: a peak below it
    is impossible), the old samples ranked below it are dropped: a peak of 1.0 GFLOP/s measured
    again at 219.3 after a run's 93 GFLOP/s is 219.3, not the median of the two."""
    samples = []
    if isinstance(old, dict):
        kept = old.get('samples')
        samples = [e for e in (kept if isinstance(kept, list) else [old])
                   if isinstance(e, dict) and 'value' in e]
    try:
        if floor is not None:
            samples = [e for e in samples if rank(e['value']) >= floor]
        samples = (samples + [new])[-SAMPLES:]
        ordered = sorted(samples, key=lambda e: rank(e['value']))
    except (KeyError, TypeError, ValueError):  # an older sample of another form
        samples, ordered = [new], [new]
    median = ordered[(len(ordered) - 1) // 2]
    return {**{k: v for k, v in median.items() if k != 'samples'}, 'samples': samples}


def lookup(key: str, path: str | None = None, *, record: dict | None = None
           ) -> Measurement | None:
    """The stored (quiet) measurement of `key`, or None."""
    entries = load_record(path if path is not None else record_path()) if record is None \
        else record
    return _from_entry(key, entries.get(key))


def store(path: str | None, measurements, median_by=None, floor: float | None = None) -> bool:
    """Adds or replaces the quiet ones of `measurements` in the record (under the record's
    lock, so concurrent stores of other processes are kept; atomically, a rename);
    with `median_by` (value -> number), an entry keeps its last SAMPLES quiet measurements
    and is their median by that number (the old ones below `floor` dropped: `_sampled_entry`).

    Returns:
      True when written; False when off, nothing quiet, or the folder is not writable (a
      read-only home loses only the record).
    """
    quiet = [m for m in measurements if m.quiet]
    if not path or not quiet:
        return False
    try:
        with record_file.locked(path):  # another process's store in between is not lost
            entries = load_record(path)
            for m in quiet:
                entries[m.key] = (_entry(m) if median_by is None
                                  else _sampled_entry(entries.get(m.key), _entry(m), median_by,
                                                      floor))
                for note in [k for k in entries if k.startswith(BUSY_PREFIX + m.key + '|cpus ')]:
                    entries.pop(note)  # every CPU set's: the figure is there now
            return _write(path, entries)
    except OSError:
        return False


def _write(path: str, entries: dict) -> bool:
    """Writes the record atomically (record_file.replace), within `record_file.locked`.
    Raises OSError (the temporary file removed; under a home folder that does not exist,
    before anything is made)."""
    record_file.replace(path, {'version': VERSION, 'entries': entries})
    return True


def cpu_set_text(cpus) -> str:
    """'0', '0,1', '2,5': the CPU numbers of `cpus` in order."""
    return ','.join(str(c) for c in sorted(cpus))


def busy_key(key: str, cpus=None) -> str:
    """'busy|<key>|cpus 0': the note of a busy try of `key` on the CPU set `cpus` (default:
    those this process may run on, host_load.allowed_cpus)."""
    cpus = host_load.allowed_cpus() if cpus is None else cpus
    return '%s%s|cpus %s' % (BUSY_PREFIX, key, cpu_set_text(cpus))


def note_busy(path: str | None, m: Measurement) -> bool:
    """Notes in the record that `m`, a busy measurement, was tried on this process's CPUs
    (`busy_key`; module docstring); False when not written (off, or a folder that is not
    writable)."""
    if not path:
        return False
    try:
        with record_file.locked(path):
            entries = load_record(path)
            entries[busy_key(m.key)] = {'busy_utc': m.measured_utc,
                                        'others_cores': m.others_cores, 'cores': m.cores}
            return _write(path, entries)
    except OSError:
        return False


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


def recent_busy_try(key: str, path: str) -> str | None:
    """The date ('2026-12-05 21:40 UTC') of a busy try of `key` on this process's CPUs
    (`busy_key`) within BUSY_RETRY_SECS before now, or None."""
    note = load_record(path).get(busy_key(key))
    if not isinstance(note, dict):
        return None
    try:
        when = datetime.datetime.strptime(str(note.get('busy_utc')), '%Y-%m-%dT%H:%M:%SZ')
    except ValueError:
        return None
    when = when.replace(tzinfo=datetime.timezone.utc)
    if not 0 <= (_now() - when).total_seconds() < BUSY_RETRY_SECS:
        return None
    return when.strftime('%Y-%m-%d %H:%M UTC')


def announce(what: str, secs: float, out=None, upto: bool = False) -> None:
    """Prints 'calibration: measuring <what> (about N s)' before a measurement starts ('up to
    N s' with `upto`: N is its budget, a cap small shapes end well within)."""
    print('calibration: measuring %s (%s %s s)' % (what, 'up to' if upto else 'about',
                                                    '%.0f' % secs if secs >= 1 else '%.1f' % secs),
          file=out or sys.stdout, flush=True)


def _utc_now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')


def is_quiet(load: dict) -> bool:
    """Quiet: others at most QUIET_LIMIT of the cores and steal at most host_load's limit
    (a figure that could not be read does not count against it)."""
    others, steal = load.get('others_fraction'), load.get('steal_fraction')
    return ((others is None or others <= QUIET_LIMIT)
            and (steal is None or steal <= host_load.STEAL_LIMIT))


def new_meter(cores: int):
    """The host-load meter of a measurement on `cores` (metrics/host_load.py Meter; tests
    replace this with a fake /proc's)."""
    return host_load.Meter(cores)


def measure(kind: str, key: str, fn: Callable[[], tuple], *, what: str, secs: float,
            cores: int, meter=None, out=None, upto: bool = False) -> Measurement:
    """Announces, runs `fn() -> (value, spread)` under a host-load meter, returns the
    Measurement (quiet or not; `store` keeps only quiet ones).

    Args:
      kind, key: the Measurement's.
      fn: the measurement; returns (value, relative spread over its repeats).
      what, secs, upto: what it measures and about (`upto`: at most) how long it takes.
      cores: the cores it uses (host_load.run_cores of its intra-op threads).
      meter: a host_load.Meter (tests give one over a fake /proc); default a new one.
    """
    announce(what, secs, out, upto)
    meter = meter or new_meter(cores)
    meter.start()
    start = time.perf_counter()
    value, spread = fn()
    seconds = time.perf_counter() - start
    load = meter.stop() or {}
    got = Measurement(kind, key, value, float(spread), _utc_now(), seconds,
                      load.get('others_cores'), load.get('others_fraction'), meter.cores,
                      is_quiet(load), True)
    JOURNAL.append(got)
    return got


def busy_note(fresh: Measurement, kept: Measurement | None, unwritable: str | None = None
              ) -> str:
    """The one line of a busy measurement: 'CPU peak (float32) measured now: not kept, other
    processes used 1.92 of 2 cores (96%, more than 25%); using the quiet calibration
    of 2026-12-03 19:00 UTC' (or '; no quiet calibration: run tf_cnn_benchmarks --calibrate
    on a quiet host'). With `unwritable` (`unwritable_text`: the record cannot be written),
    that reason comes first: a quiet measurement would not have been kept either."""
    load = 'other processes used %.2f of %s (%.0f%%, more than %.0f%%)' % (
        fresh.others_cores or 0.0, cnn_util.counted(fresh.cores, 'core'),
        100 * (fresh.others_fraction or 0.0),
        100 * QUIET_LIMIT)
    if unwritable:
        text = '%s measured now: not kept, %s; and %s' % (fresh.kind, unwritable, load)
    else:
        text = '%s measured now: not kept, %s' % (fresh.kind, load)
    if kept is not None:
        return text + '; using the quiet calibration of %s' % kept.date()
    if unwritable:
        return text + '; no quiet calibration'
    return text + '; no quiet calibration: ' + quiet_advice()


_CALIBRATING = [False]  # within `calibrating`: this process is `tf_cnn_benchmarks --calibrate`
_DEFERRED = [None]  # `defer`'s reason: nothing is measured now (a run a signal reached)


def defer(reason: str | None) -> str | None:
    """While `reason` is set, `figure` only reads the record and `quiet_advice` is `reason`;
    returns the reason it replaces (None: none was set)."""
    before, _DEFERRED[0] = _DEFERRED[0], reason
    return before


@contextlib.contextmanager
def calibrating():
    """Within it (preflight/calibrate.py) a busy figure's advice is to rerun it when quiet."""
    before, _CALIBRATING[0] = _CALIBRATING[0], True
    try:
        yield
    finally:
        _CALIBRATING[0] = before


def quiet_advice() -> str:
    """What to do when no quiet figure is recorded: 'run `tf_cnn_benchmarks --calibrate` on a
    quiet host', or within `calibrating` (that command itself) 'rerun this --calibrate when the
    host is quiet'; `defer`'s reason while it is set."""
    if _CALIBRATING[0] or _DEFERRED[0]:
        return _DEFERRED[0] or 'rerun this --calibrate when the host is quiet'
    return 'run `tf_cnn_benchmarks --calibrate` on a quiet host'


def off_text(environ=None) -> str | None:
    """'TF_CNN_CALIBRATION=off turns the calibration record off: unset it, or set it to a
    file's path, to measure and keep one' when the record is off (`record_path`), else None."""
    if record_path(environ) is not None:
        return None
    value = (os.environ if environ is None else environ).get(ENV, '').strip()
    return ('%s=%s turns the calibration record off: unset it, or set it to a file\'s path, '
            'to measure and keep one' % (ENV, value))


def unwritable_text(path: str) -> str:
    """Why the record at `path` cannot be written, with the fix: 'the calibration record
    /ro/c.json cannot be written: cannot write in /ro: Read-only file system (set
    TF_CNN_CALIBRATION to a path this user can write)' (`record_problem`'s words, else a
    failed write's). Once this process said why the record cannot be used (`_unusable`), the
    reason is not said again: 'the calibration record /x/c.json cannot be written (said
    above)'."""
    if path in _SAID_UNUSABLE:
        return 'the calibration record %s cannot be written (said above)' % path
    problem = record_problem(path) or (
        'could not be written (set %s to a path this user can write, or to %s)' % (ENV, OFF))
    return 'the calibration record %s %s' % (path, problem)


def figure(kind: str, key: str, fn: Callable[[], tuple], *, what: str, secs: float,
           cores: int, refresh: bool = False, measure_missing: bool = True, warn=None,
           path: str | None = None, meter=None, median_by=None, label: str | None = None,
           floor: float | None = None) -> Measurement | None:
    """The host's figure of `key`: the stored quiet one, else (or with `refresh`) measured
    now and stored when quiet; a busy measurement is not used: the last quiet one (or None)
    is, and `warn` gets `busy_note`'s line.

    Args:
      kind, key, fn, what, secs, cores, meter: see `measure`.
      refresh: measure again even when stored (--refresh_peak, --calibrate).
      measure_missing: False: never measure (a figure too costly for a first run; `defer`).
      warn: text -> None for the busy line (default: stderr 'warning: ...').
      path: the record (default `record_path()`; None from it: off, nothing measured).
      median_by: value -> number: the figure is the median of its last SAMPLES quiet
        measurements by that number (None: the last quiet measurement).
      label: what the warning lines call the figure (default `kind`), e.g. 'CPU peak
        (float16)': a run that needs two figures of one kind says which.
      floor: a rate by `median_by` this host just achieved: older samples below it are
        dropped when the new one is stored (`_sampled_entry`).

    Returns:
      a Measurement, or None (off, not measured, or busy without a quiet one). A sampled
      figure's is the stored median (`measured_now` when that is the measurement made now).
    """
    path = record_path() if path is None else path
    if not path:
        return None
    label = label or kind
    kept = lookup(key, path)
    if kept is not None and not refresh:
        return kept
    if not measure_missing or _DEFERRED[0]:
        return kept
    tried = None if refresh else recent_busy_try(key, path)
    if tried is not None:
        cpus = host_load.allowed_cpus()
        (warn or _warn)('%s not measured: its try at %s found this run\'s %s (%s) busy and is '
                        'not tried again on them for %d minutes; run `tf_cnn_benchmarks '
                        '--calibrate` when they are quiet' % (
                            label, tried, 'CPU' if len(cpus) == 1 else 'CPUs',
                            cpu_set_text(cpus), BUSY_RETRY_SECS // 60))
        return kept
    fresh = measure(kind, key, fn, what=what, secs=secs, cores=cores, meter=meter)
    if fresh.quiet:
        written = store(path, [fresh], median_by, floor)
        if not written:  # used by this run only: every run measures it again
            _say_not_kept(label, path, warn or _warn)
        stored = lookup(key, path) if written and median_by else None
        if stored is None:
            return fresh
        return stored._replace(measured_now=stored.measured_utc == fresh.measured_utc
                               and stored.value == fresh.value)
    unwritable = record_problem(path)
    (warn or _warn)(busy_note(fresh._replace(kind=label), kept,
                              unwritable and unwritable_text(path)))
    if kept is None and not unwritable:
        note_busy(path, fresh)
    return kept


def _warn(text: str) -> None:
    print('warning: %s' % text, file=sys.stderr, flush=True)


#: The records under a home folder that does not exist this process said it cannot keep.
_SAID_NOT_KEPT: set = set()


def _say_not_kept(label: str, path: str, warn) -> None:
    """The line of a quiet measurement the record could not keep: per figure ('CPU peak
    measured now: used by this run, not kept: ...'), but once a process for a record under a
    home folder that does not exist ('the measurements of this run are not cached: ...'):
    every figure of the run is lost the same way."""
    if user_dirs.absent_home(path):
        if path not in _SAID_NOT_KEPT:
            _SAID_NOT_KEPT.add(path)
            warn('the measurements of this run are not cached (each run measures them again): '
                 '%s' % unwritable_text(path))
        return
    warn('%s measured now: used by this run, not kept: %s' % (label, unwritable_text(path)))


#: Every Measurement `measure` made in this process, in order (quiet or not): --calibrate
#: reports them (preflight/calibrate.py), `journal_since` reads those after a mark.
JOURNAL: list = []


def journal_since(mark: int) -> list:
    """The Measurements made since `len(JOURNAL)` was `mark`."""
    return JOURNAL[mark:]


def cores(intra_threads: int | None) -> int:
    """The cores a measurement with these intra-op threads uses (host_load.run_cores)."""
    return host_load.run_cores(intra_threads, host_load.allowed_cpus())


def on_cpus(intra_threads: int) -> str:
    """The one rule of a key's CPU set, for every figure measured with intra-op threads (the
    CPU peak's '2 threads on 1 CPU', the kernel factors' and graph choices' '2 intra, 2 inter
    threads on 1 CPU'): ' on 1 CPU' when the process may run on fewer CPUs than its intra-op
    threads (taskset, a cpuset: host_load.allowed_cpus; a smaller container quota to 2
    decimals, ' on 0.5 CPUs': cpu_quota.cpus_figure), else '' (0 threads:
    TensorFlow sizes the pool by the mask). Such a figure is those CPUs', kept apart."""
    quota = cpu_quota.host_quota()
    cpus = cpu_quota.cpus_figure(cores(intra_threads), quota.cpus if quota else None)
    whole = isinstance(cpus, int)
    return ('' if not intra_threads or cpus >= intra_threads
            else ' on %s' % (cnn_util.counted(cpus, 'CPU') if whole else '%s CPUs' % cpus))
