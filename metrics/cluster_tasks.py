"""Which processes of this host are the cluster's other tasks, and their CPU time.

A cluster's tasks on one host share its cores: a worker's host load (metrics/host_load.py)
would count the ps and the other workers as "other processes" and call every local cluster's
images/sec not representative. Two things identify the cluster's processes here (Linux,
/proc only):

    the launcher       tf_cnn_cluster sets LAUNCHER_ENV (its process id) in each task's
                       environment; the launcher and every descendant of it (the `ppid`
                       field of /proc/[pid]/stat) are the cluster's.
    the tasks' ports   a task started by hand, by Slurm or from TF_CONFIG serves its gRPC
                       server on its cluster address: the processes holding a listening
                       socket (/proc/net/tcp and tcp6, state 0A) on the port of a task
                       address of this host (`local_ports`) are the cluster's; a socket's
                       owner is the process whose /proc/[pid]/fd links to `socket:[inode]`
                       (readable for the user's own processes only).

`find` gives their pids once (before the warm-up: the scan reads every process's fds), and
`ticks` their utime + stime (clock ticks) at each sample, keyed by (pid, start time) so a
reused pid is not taken for the task. This process is never among them.
"""

from __future__ import annotations

import os
import socket

LAUNCHER_ENV = 'TF_CNN_CLUSTER_LAUNCHER_PID'
_LOOPBACK = ('localhost', 'ip6-localhost', '::1', '0.0.0.0', '::')


def _read(path: str) -> str:
    with open(path, encoding='ascii', errors='replace') as f:
        return f.read()


def local_ports(addresses, hostnames=None) -> set[int]:
    """The ports of the task `addresses` ('host:port', '[::1]:port') whose host is this one:
    a loopback name or address (127.x, ::1, localhost) or one of `hostnames` (default this
    host's name and fully qualified name, compared without case)."""
    names = {n.lower() for n in (hostnames if hostnames is not None
                                 else _own_names()) if n}
    ports = set()
    for address in addresses:
        host, _, port = str(address).rpartition(':')
        host = host.strip('[]').lower()
        if not port.isdigit():
            continue
        if host in _LOOPBACK or host.startswith('127.') or host in names \
                or host.split('.')[0] in names:
            ports.add(int(port))
    return ports


def _own_names() -> set[str]:
    try:
        name = socket.gethostname()
        return {name, name.split('.')[0], socket.getfqdn()}
    except OSError:
        return set()


def _stat_fields(text: str) -> list[str]:
    """/proc/[pid]/stat's fields from field 3 (state) on, after the command name."""
    return text.rpartition(')')[2].split()


def parse_ticks(text: str) -> tuple[int, int, int]:
    """(ppid, start time, utime + stime) of a /proc/[pid]/stat line (proc(5) fields 4, 22,
    14 + 15; clock ticks)."""
    f = _stat_fields(text)
    return int(f[1]), int(f[19]), int(f[11]) + int(f[12])


def listening_inodes(tcp_text: str, ports: set[int]) -> set[str]:
    """The socket inodes of /proc/net/tcp(6) lines listening (state 0A) on `ports`."""
    out = set()
    for line in tcp_text.splitlines()[1:]:
        f = line.split()
        if len(f) > 9 and f[3] == '0A' and int(f[1].rpartition(':')[2], 16) in ports:
            out.add(f[9])
    return out


def find(ports: set[int], launcher_pid: int | None, root: str = '/proc',
         self_pid: int | None = None, read=_read, listdir=os.listdir,
         readlink=os.readlink) -> set[int]:
    """The pids of the cluster's other processes on this host: the launcher and its
    descendants, and the owners of listening sockets on `ports`; never `self_pid` (default
    this process). Unreadable entries are skipped (another user's processes, a process
    gone)."""
    self_pid = os.getpid() if self_pid is None else self_pid
    pids = [int(n) for n in _listdir(listdir, root) if n.isdigit()]
    found = set()
    if launcher_pid:
        parents = {}
        for pid in pids:
            try:
                parents[pid] = parse_ticks(read(os.path.join(root, str(pid), 'stat')))[0]
            except (OSError, ValueError, IndexError):
                continue
        for pid in parents:
            seen, p = set(), pid
            while p and p not in seen:
                if p == launcher_pid:
                    found.add(pid)
                    break
                seen.add(p)
                p = parents.get(p)
        if launcher_pid in parents:
            found.add(launcher_pid)
    if ports:
        inodes = set()
        for name in ('tcp', 'tcp6'):
            try:
                inodes |= listening_inodes(read(os.path.join(root, 'net', name)), ports)
            except (OSError, ValueError):
                continue
        links = {'socket:[%s]' % i for i in inodes}
        for pid in pids if links else ():
            fd_dir = os.path.join(root, str(pid), 'fd')
            for fd in _listdir(listdir, fd_dir):
                try:
                    if readlink(os.path.join(fd_dir, fd)) in links:
                        found.add(pid)
                        break
                except OSError:
                    continue
    found.discard(self_pid)
    return found


def _listdir(listdir, path: str) -> list[str]:
    try:
        return listdir(path)
    except OSError:
        return []


def ticks(pids, root: str = '/proc', read=_read) -> dict:
    """{(pid, start time): utime + stime} of the `pids` still running (clock ticks)."""
    out = {}
    for pid in pids:
        try:
            _, start, used = parse_ticks(read(os.path.join(root, str(pid), 'stat')))
        except (OSError, ValueError, IndexError):
            continue
        out[(pid, start)] = used
    return out


def delta(start: dict | None, end: dict | None) -> int | None:
    """Clock ticks the processes present in both `ticks` readings used between them (None
    without readings)."""
    if start is None or end is None:
        return None
    return sum(max(0, end[k] - v) for k, v in start.items() if k in end)


def launcher_pid(environ=None) -> int | None:
    """LAUNCHER_ENV's process id, or None when unset or not a number."""
    value = (os.environ if environ is None else environ).get(LAUNCHER_ENV, '')
    return int(value) if value.strip().isdigit() else None
