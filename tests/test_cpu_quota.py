"""A container's CPU quota (hardware/cpu_quota.py), read from fake cgroup files, and where it
counts: the default threads, the header's Threads line, the host load's share and its
throttling (a new user's trial: under a 0.5-CPU quota a run chose 2 threads, was throttled
in 97% of its periods and blamed other processes)."""

from __future__ import annotations

import pytest

from tf_cnn_benchmarks.hardware import cpu_quota
from tf_cnn_benchmarks.lifecycle import figure_hooks
from tf_cnn_benchmarks.metrics import host_load
from tf_cnn_benchmarks.runtime import cpu_tuning

import helpers


def _reader(files: dict):
    def read(path):
        if path not in files:
            raise FileNotFoundError(2, 'No such file or directory', path)
        return files[path]
    return read


V2 = {'/proc/self/cgroup': '0::/\n', '/cg/cpu.max': '50000 100000\n',
      '/cg/cpu.stat': 'usage_usec 10\nnr_periods 224\nnr_throttled 218\n'
                      'throttled_usec 9000000\n'}
V1 = {'/proc/self/cgroup': '4:memory:/m\n2:cpu,cpuacct:/pin54\n0::/\n',
      '/cg/cpu,cpuacct/pin54/cpu.cfs_quota_us': '150000\n',
      '/cg/cpu,cpuacct/pin54/cpu.cfs_period_us': '100000\n',
      '/cg/cpu,cpuacct/cpu.cfs_quota_us': '-1\n', '/cg/cpu,cpuacct/cpu.cfs_period_us': '100000\n',
      '/cg/cpu,cpuacct/pin54/cpu.stat': 'nr_periods 10\nnr_throttled 1\nthrottled_time 5\n'}


def _quota(files):
    return cpu_quota.read_quota(_reader(files), '/cg', '/proc/self/cgroup')


def test_a_v2_quota_is_read_with_its_source_and_whole_cpus():
    q = _quota(V2)
    assert (q.cpus, q.whole_cpus, q.stat_path) == (0.5, 1, '/cg/cpu.stat')
    assert q.words() == 'CPU quota 0.5 CPU (cgroup v2 /cg/cpu.max: 50000 100000)'
    assert cpu_quota.throttling(q, _reader(V2)) == {
        'nr_periods': 224, 'nr_throttled': 218, 'throttled_secs': 9.0}
    # 'max': no quota; a nested cgroup under a parent's smaller quota: the parent's.
    assert _quota(dict(V2, **{'/cg/cpu.max': 'max 100000\n'})) is None
    nested = dict(V2, **{'/proc/self/cgroup': '0::/a/b\n', '/cg/a/b/cpu.max': '200000 100000',
                         '/cg/a/cpu.max': '150000 100000'})
    assert (_quota(nested).cpus, _quota(nested).whole_cpus) == (0.5, 1)
    del nested['/cg/cpu.max']
    assert (_quota(nested).cpus, _quota(nested).whole_cpus) == (1.5, 2)


def test_a_v1_quota_is_read_and_minus_one_is_none():
    q = _quota(V1)
    assert (q.cpus, q.whole_cpus) == (1.5, 2)
    assert q.source == ('cgroup v1 /cg/cpu,cpuacct/pin54: cfs_quota_us 150000, cfs_period_us '
                        '100000')
    assert cpu_quota.throttling(q, _reader(V1))['throttled_secs'] == 5e-9
    unlimited = dict(V1, **{'/cg/cpu,cpuacct/pin54/cpu.cfs_quota_us': '-1\n'})
    assert _quota(unlimited) is None
    # No files at all (not Linux, no cgroup mounted), or unreadable ones: no quota.
    assert _quota({}) is None and _quota({'/proc/self/cgroup': '0::/\n'}) is None
    assert cpu_quota.host_quota({'TF_CNN_CPU_QUOTA': 'off'}) is None


def test_the_default_threads_and_the_header_count_the_quota(monkeypatch):
    monkeypatch.setattr(cpu_tuning, 'physical_cores', lambda: 2)
    assert cpu_tuning.default_thread_counts() == (2, 2)
    plain = cpu_tuning.describe((2, 2))
    assert plain == 'intra-op 2, inter-op 2 (2 physical cores)'  # no quota: as before
    monkeypatch.setattr(cpu_quota, 'host_quota', lambda: _quota(V2))
    assert cpu_tuning.default_thread_counts() == (1, 1)  # before: (2, 2) under 0.5 CPU
    assert cpu_tuning.describe((1, 1)) == (
        'intra-op 1, inter-op 1 (2 physical cores; CPU quota 0.5 CPU (cgroup v2 /cg/cpu.max: '
        '50000 100000))')
    assert cpu_quota.usable(2, _quota(V1)) == 2 and cpu_quota.usable(4, _quota(V1)) == 2


STAT = 'cpu  0 0 0 0 0 0 0 0\ncpu0 {u0} 0 0 0 0 0 0 0\ncpu1 {u1} 0 0 0 0 0 0 0\n'
SELF = '1 (python) R 1 1 1 0 -1 0 0 0 0 0 {own} 0 0 0 20 0 1 0 1 1 1\n'


def test_throttling_in_the_timed_part_is_said_not_blamed_on_other_processes():
    files, now = dict(V2), [0.0]

    def at(secs, u0, u1, own, periods, throttled):
        now[0] = secs
        files.update({'/p/loadavg': '0.9 0 0 1/1 1\n', '/p/stat': STAT.format(u0=u0, u1=u1),
                      '/p/self/stat': SELF.format(own=own),
                      '/cg/cpu.stat': 'nr_periods %d\nnr_throttled %d\nthrottled_usec %d\n'
                                      % (periods, throttled, throttled * 50000)})
    reader = host_load.ProcReader('/p', cpus=(0, 1), clock=lambda: now[0], ticks_per_sec=100,
                                  read=_reader(files))
    at(0.0, 0, 0, 0, 0, 0)
    hook = figure_hooks.HostLoadHook(helpers.stub_plan(), reader=reader, quota=_quota(V2),
                                     cgroup_read=_reader(files), warn=[].append)
    hook.meter.start()
    at(2.0, 100, 0, 100, 20, 19)
    hook.before_timed()
    # 10 s: the run 5 s of CPU (its 0.5 CPU), others 8.8 s over both CPUs; throttled 218 of
    # 224 periods.
    at(12.0, 600, 880, 600, 244, 237)
    said = []
    hook.warn = said.append
    hook.after_timed()
    load = hook.load
    assert load['cores'] == 1  # min(2 allowed CPUs, the quota's 1 whole CPU)
    assert load['cpu_quota'] == {'cpus': 0.5, 'source': 'cgroup v2 /cg/cpu.max: 50000 100000',
                                 'periods': 224, 'throttled': 218,
                                 'throttled_fraction': pytest.approx(218 / 224),
                                 'throttled_secs': pytest.approx(218 * 0.05)}
    assert load['reasons'] == [] and load['representative'] is True
    lines = figure_hooks.host_load_lines(load, said.append)
    assert said == [
        "the run's CPU quota 0.5 CPU (cgroup v2 /cg/cpu.max: 50000 100000) throttled it in "
        "218 of 224 periods (97%) of the timed part: the quota, not other processes, bounded "
        "its images/sec; give the container more CPU (docker --cpus) for a figure of the host"]
    assert lines[0].endswith('; CPU quota 0.5 CPU (cgroup v2 /cg/cpu.max: 50000 100000): '
                             'throttled in 218 of 224 periods (97%)')
    assert 'other processes used 0.88' in lines[0]


def test_no_quota_keeps_the_host_load_line_and_dict_as_before():
    load = host_load.measure(host_load.Sample(0.0, 1.0, 0, 0, 0),
                             host_load.Sample(10.0, 1.0, 100, 0, 0), 2, 2, 100)
    before = dict(load)
    cpu_quota.apply(load, None, None, None)
    assert load == before and 'cpu_quota' not in load
    assert figure_hooks.host_load_lines(load) == [host_load.format_line(load)]
    # A quota barely used (throttled in 1 of 10 periods): noted, the others' rule unchanged.
    busy = host_load.measure(host_load.Sample(0.0, 1.0, 0, 0, 0),
                             host_load.Sample(10.0, 1.0, 1000, 0, 0), 1, 2, 100)
    cpu_quota.apply(busy, _quota(V1), {'nr_periods': 0, 'nr_throttled': 0,
                                       'throttled_secs': 0.0},
                    {'nr_periods': 10, 'nr_throttled': 1, 'throttled_secs': 0.1})
    assert busy['representative'] is False and busy['reasons'][0].startswith(
        'other processes used')


def test_a_run_under_a_quota_is_a_configuration_of_the_quotas_cpus(monkeypatch):
    # A last user's trial: a baseline under a 0.5-CPU quota (throttled in 33 of 33 periods)
    # counted as 1 whole CPU, the same as a run pinned to one CPU: "+197.6% faster", passed.
    from tf_cnn_benchmarks.metrics import baseline, configuration
    assert configuration.cpus_of({'cpus_allowed': 2}) == 2
    assert configuration.cpus_of({'cpus_allowed': 2, 'cpu_quota': {'cpus': 0.5}}) == 0.5
    assert configuration.cpus_of({'cpus_allowed': 2, 'cpu_quota': {'cpus': 1.0}}) == 1
    assert configuration.cpus_of({'cpus_allowed': 2, 'cpu_quota': {'cpus': 4.0}}) == 2
    assert configuration.cpus_of({'cpus_allowed': None}) is None
    assert configuration.cpus_differ({configuration.CPUS_FIELD: 0.5},
                                     {configuration.CPUS_FIELD: 1})
    monkeypatch.setattr(host_load, 'allowed_cpus', lambda: frozenset({0, 1}))
    assert baseline.run_cpus() == 2
    monkeypatch.setattr(cpu_quota, 'host_quota', lambda: _quota(V2))
    assert baseline.run_cpus() == 0.5  # an unlimited baseline of 2 CPUs is refused


def test_a_peak_under_a_smaller_cpu_quota_is_keyed_by_the_quota(monkeypatch):
    """A 0.5-CPU container (docker --cpus=0.5) measured and read the host's unthrottled
    '2 threads' peak: its figures are the quota's, kept apart ('on 0.5 CPUs')."""
    from tf_cnn_benchmarks.hardware import calibration, cpu_peak
    monkeypatch.setattr(host_load, 'allowed_cpus', lambda: frozenset({0, 1}))
    monkeypatch.setattr(cpu_quota, 'host_quota', lambda: cpu_quota.Quota(0.5, 'test', ''))
    assert cpu_peak.cache_key('Test CPU', '2.21.0', 'float32', 2).endswith(
        '|2 threads on 0.5 CPUs')
    assert calibration.on_cpus(1) == ' on 0.5 CPUs'
    monkeypatch.setattr(cpu_quota, 'host_quota', lambda: cpu_quota.Quota(1.0, 'test', ''))
    assert calibration.on_cpus(2) == ' on 1 CPU'
    monkeypatch.setattr(cpu_quota, 'host_quota', lambda: cpu_quota.Quota(4.0, 'test', ''))
    assert calibration.on_cpus(2) == ''  # a quota above the threads: the host's figure
    assert calibration.on_cpus(0) == ''
