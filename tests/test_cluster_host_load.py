"""A cluster's own tasks on one host are not "other processes" (metrics/cluster_tasks.py,
metrics/host_load.py), and a host already busy as the run starts is said before the timed part
(lifecycle/figure_hooks.py HostLoadHook): fake /proc readings give exact figures and lines; a
real listening child is found by its port; a local cluster counts its tasks apart."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from tf_cnn_benchmarks.lifecycle import figure_hooks
from tf_cnn_benchmarks.metrics import clean_runs, cluster_tasks, host_load

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STAT = 'cpu0 {u0} 0 0 900 0 0 0 0 0 0\ncpu1 {u1} 0 0 900 0 0 0 0 0 0\n'
SELF = '1 (python) R 1 1 1 0 -1 0 0 0 0 0 {own} 0 0 0 20 0 9 0 50 0 0\n'
# /proc/[pid]/stat: pid (comm) state ppid ... utime(14) stime(15) ... starttime(22).
PID_STAT = '{pid} (tf task) S {ppid} 1 1 0 -1 0 0 0 0 0 {ut} {st} 0 0 20 0 9 0 {start} 0 0\n'


class FakeProc:
    """A /proc with loadavg, stat, self/stat and per-pid stat files (ProcReader's seam)."""

    def __init__(self):
        self.files, self.now = {}, 100.0

    def set(self, load, busy, own, tasks=None):
        """busy: (cpu0, cpu1) user ticks; own: this process's ticks; tasks: {pid: ticks}."""
        self.files['/fake/loadavg'] = '%s 1 1 3/150 999\n' % load
        self.files['/fake/stat'] = STAT.format(u0=busy[0], u1=busy[1])
        self.files['/fake/self/stat'] = SELF.format(own=own)
        for pid, ticks in (tasks or {}).items():
            self.files['/fake/%d/stat' % pid] = PID_STAT.format(pid=pid, ppid=1, ut=ticks,
                                                                st=0, start=7)

    def read(self, path):
        if path not in self.files:
            raise FileNotFoundError(2, 'No such file or directory')
        return self.files[path]

    def reader(self):
        return host_load.ProcReader('/fake', cpus=(0, 1), clock=lambda: self.now,
                                    ticks_per_sec=100, read=self.read)


def _cluster_meter(proc, pids, tasks):
    meter = host_load.Meter(0, proc.reader())
    meter.watch_cluster(pids, tasks)
    return meter


def test_the_clusters_other_tasks_are_counted_apart_and_do_not_make_the_run_busy():
    proc = FakeProc()
    meter = _cluster_meter(proc, {11, 12}, 2)
    proc.set('4.9', (1000, 1000), 500, {11: 100, 12: 200})
    meter.start()
    proc.now += 10.0
    # 10 s on 2 cores: busy +1,500 +1,500, own +1,200 -> others 18 s (1.80 cores, 90%); the ps
    # and the other worker +700 +700 = 14 s (1.40 cores, 70%) of them: outside 20%.
    proc.set('5.1', (2500, 2500), 1700, {11: 800, 12: 900})
    load = meter.stop()
    assert load['others_cores'] == pytest.approx(1.8)
    assert load['cluster_cpu_secs'] == pytest.approx(14.0)
    assert load['cluster_fraction'] == pytest.approx(0.7)
    assert load['outside_fraction'] == pytest.approx(0.2)
    assert (load['cluster_tasks'], load['cluster_processes']) == (2, 2)
    assert load['representative'] is True and load['warning'] is None
    assert host_load.format_line(load) == (
        "Host load: other processes used 1.80 of 2 cores (90%), of which 1.40 the cluster's "
        "other tasks on this host (the cluster's tasks shared its cores), load average 4.9 "
        "before, 5.1 after, steal 0.0%")
    # The clean rule reads the same: not busy, and `show` says whose the CPU time was.
    state = clean_runs.state(load, 10, 10)
    assert state.clean and not state.busy
    assert state.describe() == ("clean (other processes used 90% of the run's cores: the "
                                "cluster's other tasks on this host 70%, the rest 20%)")
    # Without the cluster's share, the same figures were 'busy' (the reported bug).
    assert clean_runs.state(dict(load, cluster_fraction=None), 10, 10).busy


def test_outsiders_above_the_limit_still_warn_and_say_they_are_not_the_cluster():
    proc = FakeProc()
    meter = _cluster_meter(proc, {11}, 1)
    proc.set('3', (0, 0), 0, {11: 0})
    meter.start()
    proc.now += 10.0
    proc.set('3', (1500, 1500), 1000, {11: 400})  # others 20 s, the cluster's 4 s
    load = meter.stop()
    assert load['outside_fraction'] == pytest.approx(0.8)
    assert load['warning'] == (
        "the total line's images/sec is not representative of this host: processes outside the "
        "cluster used 1.60 of the run's 2 cores (80%, more than 25%) during the timed part; "
        "rerun when the host is quiet")
    assert clean_runs.state(load).why() == (
        "busy: processes outside the cluster used 80% of the run's cores (more than 25%)")


def test_tasks_whose_processes_were_not_found_are_named_as_possibly_the_others():
    proc = FakeProc()
    meter = _cluster_meter(proc, set(), 2)  # 2 local tasks, no process found
    proc.set('3', (0, 0), 0)
    meter.start()
    proc.now += 10.0
    proc.set('3', (1500, 1500), 1000)
    load = meter.stop()
    assert load['cluster_processes'] == 0 and load['cluster_fraction'] is None
    assert ("of which ? the cluster's 2 other tasks on this host (their processes were not "
            "found: the others may be the cluster's own)") in host_load.format_line(load)
    assert load['warning'].startswith(
        "the total line's images/sec is not representative of this host: other processes "
        "(maybe the cluster's own 2 other tasks on this host: their processes were not found) "
        "used 2.00")


def test_the_clusters_share_never_exceeds_the_others_and_a_reused_pid_is_not_counted():
    start = {(11, 7): 100, (12, 7): 50}
    # pid 12 exited and a new process took its number (another start time): not counted.
    assert cluster_tasks.delta(start, {(11, 7): 160, (12, 99): 5000}) == 60
    assert cluster_tasks.delta(None, {}) is None
    proc = FakeProc()
    meter = _cluster_meter(proc, {11}, 1)
    proc.set('1', (0, 0), 0, {11: 0})
    meter.start()
    proc.now += 1.0
    proc.set('1', (50, 50), 60, {11: 900})  # the task's ticks above the host's others
    load = meter.stop()
    assert load['cluster_cpu_secs'] == load['others_cpu_secs'] == pytest.approx(0.4)


def test_local_ports_take_this_hosts_addresses_only():
    addresses = ['127.0.0.1:5000', 'localhost:5001', '[::1]:5002', 'node-a:5003',
                 'node-a.example.org:5004', 'node-b:5005', 'bad']
    assert cluster_tasks.local_ports(addresses, hostnames={'node-a'}) == {
        5000, 5001, 5002, 5003, 5004}


def test_find_takes_the_launchers_descendants_and_the_owners_of_the_ports():
    files = {
        '/p/net/tcp': ('  sl  local_address rem_address   st tx_queue rx_queue tr tm->when '
                       'retrnsmt   uid  timeout inode\n'
                       '   0: 00000000:1388 00000000:0000 0A 00000000:00000000 00:00000000 '
                       '00000000  1000        0 4711 1\n'
                       '   1: 0100007F:1389 0100007F:9999 01 00000000:00000000 00:00000000 '
                       '00000000  1000        0 4712 1\n'),
        '/p/net/tcp6': 'header\n',
    }
    # 50 launcher -> 51 (this process) and 52; 53 a child of 52; 60 holds port 5000 (0x1388);
    # 61 holds the connected (not listening) socket of port 5001; 70 is unrelated.
    for pid, ppid in ((50, 1), (51, 50), (52, 50), (53, 52), (60, 1), (61, 1), (70, 1)):
        files['/p/%d/stat' % pid] = PID_STAT.format(pid=pid, ppid=ppid, ut=0, st=0, start=1)
    fds = {'/p/60/fd': {'3': 'socket:[4711]'}, '/p/61/fd': {'3': 'socket:[4712]'},
           '/p/70/fd': {'0': '/dev/null'}}

    def listdir(path):
        if path == '/p':
            return ['50', '51', '52', '53', '60', '61', '70', 'net', 'self']
        if path in fds:
            return list(fds[path])
        raise FileNotFoundError(path)

    def read(path):
        if path not in files:
            raise FileNotFoundError(path)
        return files[path]

    def readlink(path):
        folder, name = path.rsplit('/', 1)
        return fds[folder][name]

    found = cluster_tasks.find({5000, 5001}, 50, root='/p', self_pid=51, read=read,
                               listdir=listdir, readlink=readlink)
    assert found == {50, 52, 53, 60}
    assert cluster_tasks.find({5000}, None, root='/p', self_pid=51, read=read,
                              listdir=listdir, readlink=readlink) == {60}
    assert cluster_tasks.launcher_pid({cluster_tasks.LAUNCHER_ENV: '50'}) == 50
    assert cluster_tasks.launcher_pid({cluster_tasks.LAUNCHER_ENV: 'x'}) is None


def test_a_real_task_is_found_by_its_listening_port():
    """A hand-started task (no launcher): the process serving a cluster port of this host."""
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    child = subprocess.Popen([sys.executable, '-c', (
        'import socket, sys, time\n'
        's = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n'
        's.bind(("127.0.0.1", %d)); s.listen(); print("up", flush=True); time.sleep(60)\n'
        % port)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == 'up'
        ports = cluster_tasks.local_ports(['127.0.0.1:%d' % port])
        assert cluster_tasks.find(ports, None) == {child.pid}
        assert cluster_tasks.find(set(), None) == set()
    finally:
        child.kill()
        child.wait()


class _Plan:
    def __init__(self, job_name=''):
        self.threads = (0, 0)
        self.num_warmup_batches = 2
        self.params = type('P', (), {'job_name': job_name})()


def test_a_host_busy_over_the_warm_up_is_said_before_the_timed_part():
    proc, said = FakeProc(), []
    hook = figure_hooks.HostLoadHook(_Plan(), reader=proc.reader(), warn=said.append)
    proc.set('4.9', (0, 0), 0)
    hook.begin(None)
    proc.now += 2.0
    proc.set('4.9', (200, 200), 140)  # 2 s of warm-up: others 2.6 s = 1.30 cores (65%)
    hook.before_timed()
    assert said == [
        "the host is busy as the run starts: other processes used 1.30 of the run's 2 cores "
        "(65%, more than 25%) over the 2.0 s of warm-up steps (the host's load average 4.9); "
        "the timed part's images/sec may not be representative: stop it (Ctrl-C) and rerun "
        "when the host is quiet"]
    proc.now += 10.0
    proc.set('4.0', (1200, 1200), 1940)  # timed: others 2 s of 20 (10%): representative
    hook.after_timed()
    assert hook.load['representative'] is True and len(said) == 1  # the final rule is its own
    assert hook.load['warmup']['others_fraction'] == pytest.approx(0.65)
    # A quiet warm-up says nothing.
    proc2, said2 = FakeProc(), []
    hook2 = figure_hooks.HostLoadHook(_Plan(), reader=proc2.reader(), warn=said2.append)
    proc2.set('0.5', (0, 0), 0)
    hook2.begin(None)
    proc2.now += 2.0
    proc2.set('0.5', (200, 200), 380)
    hook2.before_timed()
    assert said2 == []


def test_a_warm_up_too_short_to_measure_falls_back_to_a_high_load_average():
    warm = host_load.measure(host_load.Sample(0.0, 4.9, 0, 0, 0),
                             host_load.Sample(0.01, 4.9, 0, 0, 0), 2, 2, 100)
    assert warm['representative'] is None
    assert figure_hooks.warmup_lines(warm) == [
        "the host may be busy as the run starts: the host's load average 4.9 on its 2 CPUs (it "
        "counts this run's own threads too; the warm-up was too short to measure the other "
        "processes); if the timed part's host load says so, stop it (Ctrl-C) and rerun when the "
        "host is quiet"]
    quiet = dict(warm, load_average_before=3.9)  # at most CPUs + the run's cores: nothing
    assert figure_hooks.warmup_lines(quiet) == [] and figure_hooks.warmup_lines(None) == []


def test_a_cluster_tasks_hook_finds_its_peers_before_the_warm_up():
    proc, said = FakeProc(), []
    calls = []

    def find():
        calls.append(1)
        return {11}, 1
    hook = figure_hooks.HostLoadHook(_Plan('worker'), reader=proc.reader(), warn=said.append,
                                     find_cluster=find)
    proc.set('3', (0, 0), 0, {11: 0})
    hook.begin(None)
    proc.now += 2.0
    proc.set('3', (200, 200), 100, {11: 280})  # others 3 s, all the ps's: not busy
    hook.before_timed()
    assert calls == [1] and said == []
    assert hook.warmup['outside_fraction'] == pytest.approx(0.05)


# A real launch of tf_cnn_cluster: tests/test_launcher.py (its shared launches).
