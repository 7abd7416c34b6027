"""The CPU peak that utilisation lines divide by: measured once per key into the calibration
record, re-measured on refresh, the median of the last quiet calibrations, and what a record
that cannot be kept or read says (moved from test_utilisation.py, which kept the lines'
arithmetic)."""

import json
import os

from tf_cnn_benchmarks.hardware import cpu_peak
from tf_cnn_benchmarks.metrics import host_load

import helpers


def _peak(rate, **kw):
    return helpers.measurement({'flops_per_sec': rate, 'kernel': 'matmul'}, **kw)


# --- The CPU peak in the calibration record, and its key.

def test_cpu_peak_is_measured_once_per_key_and_remeasured_on_refresh(tmp_path, capsys,
                                                                     monkeypatch):
    monkeypatch.setattr(host_load, 'allowed_cpus', lambda: frozenset({0, 1}))  # any host
    path = str(tmp_path / 'cache' / 'calibration.json')
    measured = []

    def fake_measure(dtype, threads):
        measured.append((dtype, threads))
        return {'flops_per_sec': 1e9 * (len(measured)), 'kernel': 'conv3x3'}, 0.01
    kw = dict(cpu_model='Test CPU', tf_version='2.21.0', path=path, measure_fn=fake_measure,
              meter=helpers.FakeMeter(0.0))
    first = cpu_peak.cpu_peak('float32', 2, **kw)
    assert first.measured_now and cpu_peak.flops_per_sec(first) == 1e9
    assert first.key == 'Test CPU|tf 2.21.0|cpu peak|float32|2 threads'
    again = cpu_peak.cpu_peak('float32', 2, **kw)
    assert not again.measured_now and cpu_peak.flops_per_sec(again) == 1e9
    assert again.measured_utc == first.measured_utc
    capsys.readouterr()
    other = cpu_peak.cpu_peak('float32', 1, **kw)  # another thread count: another key
    said = capsys.readouterr()
    assert 'the CPU peak (float32, 1 thread: a matmul chain' in said.out + said.err
    assert other.measured_now and cpu_peak.flops_per_sec(other) == 2e9
    # A refresh adds a quiet measurement; the peak is the (lower) median of those kept.
    refreshed = cpu_peak.cpu_peak('float32', 2, refresh=True, **kw)
    assert not refreshed.measured_now and cpu_peak.flops_per_sec(refreshed) == 1e9
    assert refreshed.samples == 2 and refreshed.measured_utc == first.measured_utc
    stored = json.load(open(path))['entries']
    assert sorted(stored) == ['Test CPU|tf 2.21.0|cpu peak|float32|1 threads',
                              'Test CPU|tf 2.21.0|cpu peak|float32|2 threads']
    entry = stored['Test CPU|tf 2.21.0|cpu peak|float32|2 threads']
    assert entry['value']['flops_per_sec'] == 1e9
    assert [e['value']['flops_per_sec'] for e in entry['samples']] == [1e9, 3e9]
    assert measured == [('float32', 2), ('float32', 1), ('float32', 2)]


def test_the_peak_is_the_median_of_the_last_five_quiet_calibrations(tmp_path):
    path = str(tmp_path / 'calibration.json')
    rates = iter([3e11, 3.6e11, 3.3e11, 9e11, 3.4e11, 3.5e11])

    def fake_measure(dtype, threads):
        return {'flops_per_sec': next(rates), 'kernel': 'conv3x3'}, 0.05
    kw = dict(cpu_model='c', tf_version='v', path=path, measure_fn=fake_measure,
              meter=helpers.FakeMeter(0.0), refresh=True)
    got = [cpu_peak.cpu_peak('float32', 2, **kw) for _ in range(6)]
    # medians of [3], [3, 3.6], [3, 3.6, 3.3], [.., 9], [.., 3.4], then the last five only
    assert [cpu_peak.flops_per_sec(m) / 1e11 for m in got] == [3, 3, 3.3, 3.3, 3.4, 3.5]
    assert [m.samples for m in got] == [1, 2, 3, 4, 5, 5]
    assert [m.measured_now for m in got] == [True, False, True, False, True, True]
    assert got[-1].source().endswith(', spread 5%, the median of 5 quiet calibrations')
    # A busy calibration adds nothing: the quiet median stays.
    busy = cpu_peak.cpu_peak('float32', 2, **{**kw, 'meter': helpers.FakeMeter(1.5),
                                              'measure_fn': lambda d, t: (
                                                  {'flops_per_sec': 1e11, 'kernel': 'x'}, 0)})
    assert cpu_peak.flops_per_sec(busy) == 3.5e11 and busy.samples == 5


def test_a_median_peak_names_its_own_date_and_the_newest_samples(tmp_path, monkeypatch):
    from tf_cnn_benchmarks.hardware import calibration
    stamps = iter(['2026-12-01T10:00:00Z', '2026-12-02T11:00:00Z', '2026-12-03T12:00:00Z'])
    monkeypatch.setattr(calibration, '_utc_now', lambda: next(stamps))
    rates = iter([3.0e11, 3.2e11, 2.0e11])
    kw = dict(cpu_model='c', tf_version='v', path=str(tmp_path / 'calibration.json'),
              measure_fn=lambda d, t: ({'flops_per_sec': next(rates), 'kernel': 'conv3x3'}, 0.0),
              meter=helpers.FakeMeter(0.0), refresh=True)
    for _ in range(3):
        cpu_peak.cpu_peak('float32', 2, **kw)
    got = cpu_peak.cpu_peak('float32', 2, **{**kw, 'refresh': False})
    assert cpu_peak.flops_per_sec(got) == 3.0e11  # the median of 2.0, 3.0 and 3.2: the first
    assert got.source() == ('calibrated 2026-12-01 10:00 UTC, others 0.00 of 2 cores, spread '
                            '0%, the median of 3 quiet calibrations, the newest 2026-12-03 '
                            '12:00 UTC')


def test_a_peak_taken_beside_a_burner_is_not_kept(tmp_path, capsys):
    path = str(tmp_path / 'calibration.json')
    kw = dict(cpu_model='c', tf_version='v', path=path)
    quiet = cpu_peak.cpu_peak('float32', 2, measure_fn=lambda d, t: (
        {'flops_per_sec': 2e11, 'kernel': 'matmul'}, 0.01), meter=helpers.FakeMeter(0.4), **kw)
    assert quiet.quiet and quiet.others_fraction == 0.2  # 20%: within a quarter
    busy = cpu_peak.cpu_peak('float32', 2, refresh=True, measure_fn=lambda d, t: (
        {'flops_per_sec': 0.7e11, 'kernel': 'matmul'}, 0.3), meter=helpers.FakeMeter(1.8), **kw)
    assert busy == quiet._replace(measured_now=False, measure_secs=busy.measure_secs)
    assert cpu_peak.flops_per_sec(cpu_peak.cpu_peak('float32', 2, **kw)) == 2e11
    err = capsys.readouterr().err
    assert ('CPU peak (float32) measured now: not kept, other processes used 1.80 of 2 cores '
            '(90%') in err


def test_a_peak_that_cannot_be_kept_names_the_unwritable_record(tmp_path, capsys,
                                                                 monkeypatch):
    # TF_CNN_CALIBRATION naming a record on read-only storage (a test runs as root, whom
    # permission bits do not stop: the read-only mount is stood in for): the busy line gave
    # the host's load as the only reason, and a quiet peak was dropped without a word.
    from tf_cnn_benchmarks.hardware import calibration

    def read_only(path, entries):
        raise OSError(30, 'Read-only file system')

    monkeypatch.setattr(calibration, '_write', read_only)
    monkeypatch.setattr(calibration.cnn_util, 'write_problem', lambda folder: (
        'cannot write in %s: Read-only file system' % folder))
    path = str(tmp_path / 'calibration.json')
    kw = dict(cpu_model='c', tf_version='v', path=path, measure_fn=lambda d, t: (
        {'flops_per_sec': 2e11, 'kernel': 'matmul'}, 0.01))
    unwritable = ('the calibration record %s cannot be written: cannot write in %s: Read-only '
                  'file system (set TF_CNN_CALIBRATION to a path this user can write)'
                  % (path, tmp_path))
    busy = cpu_peak.cpu_peak('float32', 2, meter=helpers.FakeMeter(1.8), **kw)
    assert busy is None
    assert capsys.readouterr().err == (
        'warning: CPU peak (float32) measured now: not kept, %s; and other processes used 1.80 '
        'of 2 cores (90%%, more than 25%%); no quiet calibration\n' % unwritable)
    quiet = cpu_peak.cpu_peak('float32', 2, meter=helpers.FakeMeter(0.0), **kw)
    assert quiet.measured_now and cpu_peak.flops_per_sec(quiet) == 2e11  # this run uses it
    assert capsys.readouterr().err == (
        'warning: CPU peak (float32) measured now: used by this run, not kept: %s\n' % unwritable)
    # No temporary file; the lock file was made before the stand-in's write failed (on
    # read-only storage it cannot be made either: hardware/record_file.py).
    assert os.listdir(tmp_path) == ['calibration.json.lock']


def test_the_record_follows_xdg_cache_home_and_the_environment():
    from tf_cnn_benchmarks.hardware import calibration
    assert calibration.record_path({'XDG_CACHE_HOME': '/x/cache'}) == \
        '/x/cache/tf_cnn_benchmarks/calibration.json'
    assert calibration.record_path({}) == os.path.join(
        os.path.expanduser('~'), '.cache', 'tf_cnn_benchmarks', 'calibration.json')
    assert calibration.record_path({'TF_CNN_CALIBRATION': '/r.json'}) == '/r.json'
    assert calibration.record_path({'TF_CNN_CALIBRATION': 'off'}) is None


def test_a_corrupt_record_is_measured_again(tmp_path):
    path = tmp_path / 'calibration.json'
    path.write_text('{not json')
    peak = cpu_peak.cpu_peak('float32', 2, cpu_model='c', tf_version='v', path=str(path),
                             measure_fn=lambda d, t: ({'flops_per_sec': 5e9, 'kernel': 'matmul'},
                                                      0.0), meter=helpers.FakeMeter())
    assert peak.measured_now and json.loads(path.read_text())['entries'][
        'c|tf v|cpu peak|float32|2 threads']['value']['kernel'] == 'matmul'


def test_the_real_measurement_keeps_to_its_budget():
    import time
    # CPU seconds, not wall time: on a loaded host the wall time stretches with the others'
    # work, the work this measurement does does not (a 0.2 s budget is well under 10 CPU-s).
    start = time.process_time()
    value, spread = cpu_peak.measure('float32', 1, budget_secs=0.2)
    assert time.process_time() - start < 10.0
    assert value['kernel'] in ('matmul', 'conv3x3') and 1e8 < value['flops_per_sec'] < 1e14
    assert 0.0 <= spread < 10.0
