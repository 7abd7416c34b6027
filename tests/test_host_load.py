"""metrics/host_load.py and its hook (issue 33.6, "a busy host is invisible"): fake /proc
readings give exact lines, result keys and the warning; one real run beside a busy-loop child
sees the child's CPU time."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time

import pytest

from tf_cnn_benchmarks import benchmark_cnn
from tf_cnn_benchmarks.lifecycle import figure_hooks, run_hooks, training_loop
from tf_cnn_benchmarks.metrics import clean_runs, host_load

import helpers

# /proc/stat lines: cpuN user nice system idle iowait irq softirq steal guest guest_nice.
STAT = ('cpu  {t} 0 0 0 0 0 0 {s2} 0 0\n'
        'cpu0 {u0} 5 {y0} 900 7 {i0} {q0} {s0} 3 0\n'
        'cpu1 {u1} 0 {y1} 800 0 0 0 {s1} 0 0\n'
        'cpu2 5000 0 5000 0 0 0 0 0 0 0\n'
        'intr 1 2 3\nctxt 99\n')
SELF_STAT = ('4242 (python (x) y) R 1 4242 4242 0 -1 4194560 100 0 0 0 '
             '{ut} {st} {cut} {cst} 20 0 9 0 30087 3133440 393\n')


class FakeProc:
    """A /proc whose files the test sets between samples (ProcReader's `read` seam)."""

    def __init__(self):
        self.files = {}
        self.now = 100.0

    def set(self, load, user=(0, 0), system=(0, 0), irq=0, softirq=0, steal=(0, 0),
            own=(0, 0, 0, 0)):
        self.files['/fake/loadavg'] = '%s 1.00 0.50 3/150 999\n' % load
        self.files['/fake/stat'] = STAT.format(
            t=sum(user), s2=sum(steal), u0=user[0], y0=system[0], i0=irq, q0=softirq,
            s0=steal[0], u1=user[1], y1=system[1], s1=steal[1])
        self.files['/fake/self/stat'] = SELF_STAT.format(ut=own[0], st=own[1], cut=own[2],
                                                         cst=own[3])

    def read(self, path):
        if path not in self.files:
            raise FileNotFoundError(2, 'No such file or directory')
        return self.files[path]

    def reader(self, cpus=(0, 1)):
        return host_load.ProcReader('/fake', cpus=cpus, clock=lambda: self.now,
                                    ticks_per_sec=100, read=self.read)


def _busy_samples(proc, steal=(0, 0)):
    """10 s on 2 CPUs: 2,020 busy ticks, 600 of them this process's -> others 14.2 s."""
    reader = proc.reader()
    proc.set('3.10', user=(1000, 1000), system=(100, 100), own=(500, 50, 10, 0))
    start = reader.sample()
    proc.now += 10.0
    # +900 +700 user, +100 +200 system, +60 irq, +60 softirq = 2,020; own +500 +80 +20 = 600.
    proc.set('3.42', user=(1900, 1700), system=(200, 300), irq=60, softirq=60,
             own=(1000, 130, 30, 0), steal=steal)
    return start, reader.sample()


def test_parse_stat_sums_the_busy_columns_of_the_allowed_cpus_only():
    text = STAT.format(t=0, s2=0, u0=10, y0=20, i0=3, q0=4, s0=7, u1=100, y1=200, s1=9)
    # cpu0: 10 + 5 (nice) + 20 + 3 + 4 = 42 (idle 900, iowait 7 and guest 3 are not busy);
    # cpu1: 300; cpu2 is outside the mask.
    assert host_load.parse_stat(text, {0, 1}) == (342, 16)
    assert host_load.parse_stat(text, {1}) == (300, 9)
    with pytest.raises(ValueError, match=r'no cpuN line for CPUs \[7\]'):
        host_load.parse_stat(text, {7})


def test_parse_self_stat_counts_utime_stime_and_the_childrens_after_the_command_name():
    assert host_load.parse_self_stat(SELF_STAT.format(ut=11, st=22, cut=33, cst=44)) == 110


def test_run_cores_are_the_intra_op_threads_within_the_affinity_mask():
    assert host_load.run_cores(2, {0, 1, 2, 3}) == 2
    assert host_load.run_cores(8, {0, 1}) == 2
    assert host_load.run_cores(0, {0, 1, 2}) == 3
    assert host_load.run_cores(None, set()) == 1


def test_a_busy_host_gives_the_line_the_keys_and_the_warning():
    start, end = _busy_samples(FakeProc())
    load = host_load.measure(start, end, cores=2, num_cpus=2, ticks_per_sec=100)
    assert host_load.format_line(load) == (
        'Host load: other processes used 1.42 of 2 cores (71%), load average 3.1 before, '
        '3.4 after, steal 0.0%')
    assert load['others_cpu_secs'] == pytest.approx(14.2)
    assert load['others_cores'] == pytest.approx(1.42)
    assert load['others_fraction'] == pytest.approx(0.71)
    assert (load['steal_secs'], load['steal_fraction']) == (0.0, 0.0)
    assert (load['load_average_before'], load['load_average_after']) == (3.1, 3.42)
    assert (load['cores'], load['cpus_allowed'], load['wall_secs']) == (2, 2, 10.0)
    assert load['representative'] is False and load['error'] == ''
    assert load['warning'] == (
        "the total line's images/sec is not representative of this host: other processes used "
        "1.42 of the run's 2 cores (71%, more than 25%) during the timed part; rerun "
        "when the host is quiet")
    assert set(load) == {
        'cores', 'cpus_allowed', 'host_cpus', 'wall_secs', 'load_average_before',
        'load_average_after',
        'others_cpu_secs', 'others_cores', 'others_fraction', 'steal_secs', 'steal_fraction',
        'representative', 'reasons', 'warning', 'error', 'others_limit', 'steal_limit',
        'method', 'cluster_tasks', 'cluster_processes', 'cluster_cpu_secs', 'cluster_cores',
        'cluster_fraction', 'outside_fraction', 'intra_threads'}
    assert load['outside_fraction'] == load['others_fraction']  # one host: all outside
    assert load['cluster_fraction'] is None


def test_a_quiet_host_has_no_warning_and_steal_above_5_percent_has_one():
    proc = FakeProc()
    reader = proc.reader()
    proc.set('0.20', user=(100, 100), own=(0, 0, 0, 0))
    start = reader.sample()
    proc.now += 4.0
    # 2 x 4 s of CPU, 740 ticks busy, 700 of them ours: others 0.4 s = 0.10 core = 5%.
    proc.set('1.94', user=(470, 470), own=(650, 50, 0, 0))
    quiet = host_load.measure(start, reader.sample(), 2, 2, 100)
    assert host_load.format_line(quiet) == (
        'Host load: other processes used 0.10 of 2 cores (5%), load average 0.2 before, '
        '1.9 after, steal 0.0%')
    assert quiet['representative'] is True and quiet['warning'] is None

    # 150 steal ticks over 2 CPUs x 10 s = 7.5% (the others stay at 71%).
    start, end = _busy_samples(FakeProc(), steal=(100, 50))
    stolen = host_load.measure(start, end, 2, 2, 100)
    assert host_load.format_line(stolen).endswith(', steal 7.5%')
    assert stolen['reasons'][1] == ("the hypervisor took 7.5% of the CPUs' time for other "
                                    "machines (steal, more than 5%)")
    assert stolen['warning'].count('; ') == 2  # two reasons and the advice: still one line


def test_others_never_go_below_zero_and_one_core_is_singular():
    proc = FakeProc()
    reader = proc.reader(cpus=(0,))
    proc.set('1.00', user=(100, 0), own=(0, 0, 0, 0))
    start = reader.sample()
    proc.now += 1.0
    proc.set('1.00', user=(200, 0), own=(103, 0, 0, 0))  # tick rounding: ours > the CPU's
    load = host_load.measure(start, reader.sample(), 1, 1, 100)
    assert host_load.format_line(load) == (
        'Host load: other processes used 0.00 of 1 core (0%), load average 1.0 before, 1.0 '
        'after, steal 0.0%')


def _interval(proc, secs, user, own=0, steal=(0, 0), cpus=(0, 1)):
    """Two samples `secs` apart with `user` ticks (per CPU) and `own` ticks of this process."""
    reader = proc.reader(cpus=cpus)
    proc.set('1.00', own=(0, 0, 0, 0))
    start = reader.sample()
    proc.now += secs
    proc.set('1.00', user=user, own=(own, 0, 0, 0), steal=steal)
    return start, reader.sample()


def test_a_timed_part_too_short_for_the_clock_ticks_is_not_measured():
    # The reported case: a 3-step forward-only run timed 0.07 s; 20 busy ticks not its own
    # (tick rounding) read as 'other processes used 2.86 of 2 cores (143%)'.
    proc = FakeProc()
    load = host_load.measure(*_interval(proc, 0.07, user=(15, 10), own=5), 2, 2, 100)
    assert host_load.format_line(load) == (
        "Host load: not measured (the timed part lasted 0.07 s, too short for /proc's clock "
        "ticks of 0.01 s: others' CPU time needs 0.12 s, steal needs 0.40 s)")
    assert (load['others_cores'], load['steal_fraction'], load['representative'],
            load['warning']) == (None, None, None, None)
    # 2 x (2 CPUs + 1) ticks of rounding within a quarter of 2 cores; 2 ticks within 5%.
    assert host_load.min_wall_secs(2, 2, 100) == {'others': 0.12, 'steal': 0.4}
    assert host_load.min_wall_secs(1, 8, 250)['others'] == pytest.approx(0.288)  # 18 / 62.5
    # Long enough for the others' figure, not for steal's: that one is 'not measured' and says
    # why (before: 'steal ? (?: the timed part lasted ...: steal 0.40 s)').
    proc = FakeProc()
    load = host_load.measure(*_interval(proc, 0.2, user=(20, 10), own=10), 2, 2, 100)
    assert host_load.format_line(load) == (
        "Host load: other processes used 1.00 of 2 cores (50%), load average 1.0 before, 1.0 "
        "after, steal not measured (the timed part lasted 0.20 s, too short for /proc's clock "
        "ticks of 0.01 s: steal needs 0.40 s)")
    # Just short of what it needs: shown rounded down, the need rounded up (a skeptic read
    # 'lasted 0.12 s, too short ...: others' CPU time needs 0.12 s').
    proc = FakeProc()
    load = host_load.measure(*_interval(proc, 0.119, user=(15, 10), own=5), 2, 2, 100)
    assert "the timed part lasted 0.11 s, too short for /proc's clock ticks of 0.01 s: others' " \
        "CPU time needs 0.12 s" in host_load.format_line(load)
    # A source that cannot be read is still '?', its reason after '?:'.
    proc = FakeProc()
    start, end = _interval(proc, 0.5, user=(20, 10), own=10)
    end = dataclasses.replace(end, load_average=None, error='/fake/loadavg: gone')
    load = host_load.measure(start, end, 2, 2, 100)
    assert host_load.format_line(load).endswith('1.0 before, ? after, steal 0.0% (?: '
                                                '/fake/loadavg: gone)')


def test_no_figure_says_others_used_more_cpus_than_there_are():
    proc = FakeProc()  # 0.5 s on 2 CPUs holds 100 ticks; rounding gave 106 not ours
    load = host_load.measure(*_interval(proc, 0.5, user=(56, 50)), 2, 2, 100)
    assert load['others_cores'] == 2.0 and load['others_fraction'] == 1.0
    assert host_load.format_line(load).startswith(
        'Host load: other processes used 2.00 of 2 cores (100%), ')
    # A run on 1 of the 2 CPUs: others may use more than its cores, and the line says so.
    proc = FakeProc()
    load = host_load.measure(*_interval(proc, 1.0, user=(100, 60), own=10), 1, 2, 100)
    assert host_load.format_line(load) == (
        "Host load: other processes used 1.50 cores (150% of the run's 1), load average 1.0 "
        "before, 1.0 after, steal 0.0%")


def test_an_unreadable_proc_says_not_measured_and_why():
    proc = FakeProc()
    reader = proc.reader()
    start = reader.sample()
    proc.now += 1.0
    load = host_load.measure(start, reader.sample(), 2, 2, 100)
    assert host_load.format_line(load) == (
        'Host load: not measured (/fake/loadavg: No such file or directory; /fake/stat: No such '
        'file or directory; /fake/self/stat: No such file or directory)')
    assert load['others_fraction'] is None and load['representative'] is None
    assert load['warning'] is None


def test_the_warning_can_be_kept_off_stderr_by_the_environment():
    assert host_load.warning_enabled({}) is True
    assert host_load.warning_enabled({'TF_CNN_BUSY_HOST_WARNING': '1'}) is True
    assert host_load.warning_enabled({'TF_CNN_BUSY_HOST_WARNING': '0'}) is False
    assert host_load.warning_enabled({'TF_CNN_BUSY_HOST_WARNING': 'off'}) is False


# --- The hook in the timed loop.

class _Step:
    def __call__(self):
        return (1.0,)


_plan = helpers.stub_plan


class _Load(run_hooks.RunHook):
    """Moves the fake /proc on by the busy samples' second reading during the timed steps."""

    def __init__(self, proc):
        self.proc = proc

    def after_step(self, step, loss):
        if step == 2:
            self.proc.now += 10.0
            self.proc.set('3.42', user=(1900, 1700), system=(200, 300), irq=60, softirq=60,
                          own=(1000, 130, 30, 0))


def test_the_meters_start_only_reads_and_its_stop_parses_both_samples(monkeypatch):
    # Nothing but three file reads at the start of the timed part: the CPUs, the clock ticks
    # and the parsing wait for the stop, which gives what two parsed samples give.
    proc = FakeProc()
    asked = []
    real_parse = host_load.parse_stat
    monkeypatch.setattr(host_load, 'parse_stat',
                        lambda text, cpus: asked.append('parse') or real_parse(text, cpus))
    monkeypatch.setattr(host_load, 'allowed_cpus', lambda: asked.append('cpus') or {0, 1})
    monkeypatch.setattr(host_load, '_clock_ticks', lambda: asked.append('ticks') or 100)
    meter = host_load.Meter(2, host_load.ProcReader('/fake', clock=lambda: proc.now,
                                                    read=proc.read))
    proc.set('3.10', user=(1000, 1000), system=(100, 100), own=(500, 50, 10, 0))
    meter.start()
    assert asked == []
    proc.now += 10.0
    proc.set('3.42', user=(1900, 1700), system=(200, 300), irq=60, softirq=60,
             own=(1000, 130, 30, 0))
    load = meter.stop()
    assert asked.count('parse') == 2 and asked.count('cpus') == 1 and 'ticks' in asked
    assert load == host_load.measure(*_busy_samples(FakeProc()), cores=2, num_cpus=2,
                                     ticks_per_sec=100)
    assert meter.stop() is None  # one stop per start


def test_the_hook_samples_around_the_timed_steps_and_reports_last_in_the_total_block(
        capsys, monkeypatch):
    proc = FakeProc()
    proc.set('3.10', user=(1000, 1000), system=(100, 100), own=(500, 50, 10, 0))
    warnings = []
    hook = figure_hooks.HostLoadHook(_plan(), reader=proc.reader(), warn=warnings.append)
    lines = []
    spec = training_loop.LoopSpec(num_warmup=1, num_steps=2, images_per_step=4,
                                  display_every=10)
    training_loop.run_loop(spec, _Step(), [_Load(proc), hook], log=lines.append)
    assert lines[-2:] == [
        'Host load: other processes used 1.42 of 2 cores (71%), load average 3.1 before, '
        '3.4 after, steal 0.0%', training_loop.DASHES]
    assert lines[-3].startswith('total images/sec: ')
    assert warnings == [host_load.warning_text(hook.load)]
    result = {}
    hook.end(result)
    assert result['host_load']['others_fraction'] == pytest.approx(0.71)

    # Without a `warn` seam the warning is one stderr line, unless the environment says no.
    monkeypatch.setenv('TF_CNN_BUSY_HOST_WARNING', '1')
    proc.set('3.10', user=(1000, 1000), system=(100, 100), own=(500, 50, 10, 0))
    real = figure_hooks.HostLoadHook(_plan(intra=0), reader=proc.reader())
    training_loop.run_loop(spec, _Step(), [_Load(proc), real], log=lines.append)
    err = capsys.readouterr().err
    assert err == ("warning: the total line's images/sec is not representative of this host: other "
                   "processes used 1.42 of the run's 2 cores (71%, more than 25%) during the "
                   "timed part; rerun when the host is quiet\n")
    monkeypatch.setenv('TF_CNN_BUSY_HOST_WARNING', '0')
    proc.set('3.10', user=(1000, 1000), system=(100, 100), own=(500, 50, 10, 0))
    off = figure_hooks.HostLoadHook(_plan(), reader=proc.reader())
    training_loop.run_loop(spec, _Step(), [_Load(proc), off], log=lines.append)
    assert capsys.readouterr().err == '' and off.load['warning'] is not None


def test_a_run_with_fewer_intra_op_threads_than_cpus_shares_every_cpu_it_may_use():
    # A user's trial: --num_intra_threads=1 on 2 CPUs printed 'other processes used 1.66 cores
    # (166% of the run's 1)': the run's inter-op and input threads use both CPUs, and the
    # others were counted over both. The share is of the CPUs the run may use, never > 100%.
    proc, said = FakeProc(), []
    hook = figure_hooks.HostLoadHook(_plan(intra=1), reader=proc.reader(), warn=said.append)
    proc.set('2.00', own=(0, 0, 0, 0))
    hook.meter.start()
    hook.before_timed()
    proc.now += 1.0
    proc.set('2.00', user=(100, 76), own=(10, 0, 0, 0))  # 166 ticks not ours: 1.66 cores
    hook.after_timed()
    load = hook.load
    assert (load['cores'], load['intra_threads']) == (2, 1)
    assert load['others_fraction'] == pytest.approx(0.83) and load['others_fraction'] <= 1
    assert host_load.format_line(load) == (
        'Host load: other processes used 1.66 of 2 cores (83%: of every CPU the run may use: '
        'its inter-op and input threads run beside its 1 intra-op thread), load average 2.0 '
        'before, 2.0 after, steal 0.0%')
    # Others on every CPU the whole time: 100%, not more.
    proc.now += 1.0
    proc.set('2.00', user=(210, 186), own=(10, 0, 0, 0))
    hook.before_timed()
    proc.now += 1.0
    proc.set('2.00', user=(320, 296), own=(10, 0, 0, 0))
    hook.after_timed()
    assert hook.load['others_fraction'] == 1.0
    assert '2.00 of 2 cores (100%: ' in host_load.format_line(hook.load)
    # As many intra-op threads as CPUs: the line as before, no note.
    full = figure_hooks.HostLoadHook(_plan(intra=2), reader=proc.reader())
    full.meter.start()
    full.before_timed()
    proc.now += 1.0
    proc.set('2.00', user=(420, 346), own=(10, 0, 0, 0))
    full.after_timed()
    assert full.load['intra_threads'] is None
    assert host_load.format_line(full.load).startswith(
        'Host load: other processes used 1.50 of 2 cores (75%), ')


def test_a_warm_up_too_short_to_measure_is_named_the_warm_up():
    # Before: the results JSON's host_load.warmup.error said 'the timed part lasted 0.05 s'
    # about the warm-up.
    proc = FakeProc()
    proc.set('1.00', own=(0, 0, 0, 0))
    hook = figure_hooks.HostLoadHook(_plan(), reader=proc.reader(), warn=[].append)
    hook.meter.start()  # as `begin` does (a one-host run)
    proc.now += 0.05
    hook.before_timed()
    proc.now += 0.07
    hook.after_timed()
    assert hook.load['warmup']['error'] == (
        "the warm-up lasted 0.05 s, too short for /proc's clock ticks of 0.01 s: others' CPU "
        "time needs 0.12 s, steal needs 0.40 s")
    assert hook.load['error'].startswith('the timed part lasted 0.07 s, too short')


def test_a_run_without_warm_up_steps_names_no_warm_up():
    # A user's trial: --num_warmup_batches=0 printed 'the warm-up was too short to measure the
    # other processes' (there was no warm-up); the load average alone warns, and says why.
    # The fake host has 3 CPUs (cpu0..cpu2): the run may use all of them here.
    proc, said = FakeProc(), []
    plan = _plan()
    plan.num_warmup_batches = 0
    every = (0, 1, 2)
    hook = figure_hooks.HostLoadHook(plan, reader=proc.reader(every), warn=said.append)
    proc.set('6.10', own=(0, 0, 0, 0))
    hook.meter.start()  # as `begin` does (a one-host run)
    proc.now += 0.01
    hook.before_timed()
    assert said == [
        "the host may be busy as the run starts: the host's load average 6.1 on its 3 CPUs (it "
        "counts this run's own threads too; with --num_warmup_batches=0 no warm-up step ran to "
        "measure the other processes over); if the timed part's host load says so, stop it "
        "(Ctrl-C) and rerun when the host is quiet"]
    assert not any('warm-up was' in text for text in said)
    proc.now += 1.0
    hook.after_timed()
    assert hook.load['warmup'] is None and hook.load['wall_secs'] == pytest.approx(1.0)
    # A quiet load average says nothing; with warm-up steps the old line is unchanged.
    proc.set('5.90', own=(0, 0, 0, 0))
    quiet = figure_hooks.HostLoadHook(plan, reader=proc.reader(every), warn=said.append)
    quiet.meter.start()
    quiet.before_timed()
    assert len(said) == 1
    proc.set('6.10', own=(0, 0, 0, 0))
    warm = figure_hooks.HostLoadHook(_plan(), reader=proc.reader(every), warn=said.append)
    warm.meter.start()
    warm.before_timed()
    assert 'the warm-up was too short to measure the other processes' in said[-1]


def test_a_pinned_run_is_not_warned_of_the_load_on_cpus_it_does_not_use():
    # A new user's trial: three spinners on CPU 1, the run under `taskset -c 0` with
    # --num_warmup_batches=0 said 'the host may be busy as the run starts: load average 2.7
    # on 1 CPU': the host's load average set against the run's one CPU. The verdict is the
    # run's own CPUs' busy time over the set-up (from the hook's making to the timed part).
    proc, said = FakeProc(), []
    plan = _plan()
    plan.num_warmup_batches = 0
    proc.set('2.70', user=(0, 0), own=(0, 0, 0, 0))
    hook = figure_hooks.HostLoadHook(plan, reader=proc.reader((0,)), warn=said.append)
    proc.now += 3.0  # the graph built, the session made: cpu0 is the run's own (300 ticks)
    proc.set('2.70', user=(310, 300), own=(300, 0, 0, 0))  # cpu1 busy: not the run's
    hook.meter.start()  # `begin`
    proc.now += 0.01
    hook.before_timed()
    assert said == []  # before: 'load average 2.7 on 1 CPU'
    # Others on the run's own CPU over the set-up: said, with its measured share.
    proc2, said2 = FakeProc(), []
    proc2.set('2.70', own=(0, 0, 0, 0))
    busy = figure_hooks.HostLoadHook(plan, reader=proc2.reader((0,)), warn=said2.append)
    proc2.now += 3.0
    proc2.set('2.70', user=(300, 300), own=(75, 0, 0, 0))  # others: 225 of 300 ticks
    busy.meter.start()
    proc2.now += 0.01
    busy.before_timed()
    assert said2 == [
        "the host is busy as the run starts: other processes used 0.75 of the run's 1 core "
        "(75%, more than 25%) over the 3.0 s of set-up and warm-up (the host's load average "
        "2.7); the timed part's images/sec may not be representative: stop it (Ctrl-C) and "
        "rerun when the host is quiet"]
    # Not measured at all (a too short set-up): the host's load average says nothing of a
    # pinned run's CPUs; the whole host's line stays for a run on every CPU (above).
    warm = host_load.measure(host_load.Sample(0.0, 4.9, 0, 0, 0, '', 3),
                             host_load.Sample(0.01, 4.9, 0, 0, 0, '', 3), 1, 1, 100)
    assert warm['host_cpus'] == 3 and figure_hooks.start_lines(warm) == []


class _Phases(run_hooks.RunHook):
    def __init__(self):
        self.log = []

    def wants_trace(self, call):
        self.log.append('step %d' % call)
        return False

    def before_timed(self):
        self.log.append('before_timed')

    def after_timed(self):
        self.log.append('after_timed')

    def total_lines(self, loop):
        self.log.append('total_lines')
        return []


def test_before_and_after_timed_bracket_the_timed_steps_only():
    phases = _Phases()
    spec = training_loop.LoopSpec(num_warmup=2, num_steps=2, images_per_step=4,
                                  display_every=10)
    training_loop.run_loop(spec, _Step(), [phases], log=lambda line: None)
    assert phases.log == ['step 1', 'step 2', 'before_timed', 'step 3', 'step 4', 'after_timed',
                          'total_lines']


# --- A real run beside a busy loop.

class _Slow(run_hooks.RunHook):
    """Stretches the timed part to about 1.5 s, so the busy child's share is well measured."""

    def after_step(self, step, loss):
        time.sleep(0.15)


def test_a_real_run_beside_a_busy_loop_sees_the_others_cpu_time():
    cpus = sorted(os.sched_getaffinity(0))
    child = subprocess.Popen([sys.executable, '-c', 'while True: pass'])
    try:
        os.sched_setaffinity(child.pid, {cpus[0]})  # pinned to one of the run's CPUs
        time.sleep(0.2)  # the interpreter is up and spinning
        result = benchmark_cnn.BenchmarkCNN(
            helpers.tiny_params(num_batches=10, batch_size=2, image_size=8), gpus=0,
            hooks=[_Slow()]).run()
    finally:
        child.kill()
        child.wait(timeout=30)
    load = result['host_load']
    assert load['wall_secs'] >= 1.4
    # The child spins a core for the whole timed part (less its share on a loaded host).
    assert load['others_cores'] > 0.2, load
    assert load['error'] == '' and load['cpus_allowed'] == len(cpus)


def test_a_share_just_above_the_limit_never_reads_as_the_limit():
    # A new user's busy warning read '0.50 of the run's 2 cores (25%, more than 25%)': the
    # share, 25.04%, was rounded to the limit. Now it shows the digits that put it above.
    start = host_load.Sample(0.0, 1.0, 0, 0, 0)
    end = host_load.Sample(100.0, 1.0, 5008, 0, 0)  # 50.08 CPU s over 100 s of 2 cores
    load = host_load.measure(start, end, 2, 2, 100)
    assert load['outside_fraction'] == pytest.approx(0.2504)
    assert "(25.04%, more than 25%)" in load['warning']
    steal = host_load.measure(host_load.Sample(0.0, 1.0, 0, 0, 0),
                              host_load.Sample(100.0, 1.0, 0, 1008, 0), 2, 2, 100)
    assert steal['steal_fraction'] == pytest.approx(0.0504)
    assert '(steal, more than 5%)' in steal['warning']
    assert 'took 5.04% of the CPUs' in steal['warning']
    assert [host_load.share_above(f, 0.25) for f in (0.71, 0.2549, 0.2504, 0.250001)] == [
        '71%', '25.5%', '25.04%', '25.01%']
    assert [host_load.share_above(f, 0.05, 1) for f in (0.0551, 0.05004)] == ['5.5%', '5.01%']
    state = clean_runs.state(load)
    assert state.why() == ("busy: other processes used 25.04% of the run's cores (more than "
                           "25%)")
