"""The memory this process can still allocate on its host: /proc/meminfo's MemAvailable and
the soft address-space limit (RLIMIT_AS: `ulimit -v`, `prlimit --as`), the smaller of them.

Read by the memory check before a run (preflight/memory_estimate.py) and by the graph choices'
probe, which stays within it (graph/graph_choices.py); MemAvailable alone by the cluster
launcher, whose tasks share the host (tools/cluster_memory.py).
"""

from __future__ import annotations

import resource


def _proc_bytes(path: str, key: str) -> int | None:
    """The `key:` line of a /proc file given in kB ('MemAvailable:   123 kB'), as bytes; None
    where the file or the line is missing."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key + ':'):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def meminfo_available_bytes() -> int | None:
    """/proc/meminfo's MemAvailable, bytes: what the whole host can still give its processes
    without swapping (the launcher's check of its tasks, tools/cluster_memory.py); None where
    it is not known."""
    return _meminfo_available()


def _meminfo_available() -> int | None:
    return _proc_bytes('/proc/meminfo', 'MemAvailable')


def _mapped_bytes() -> int:
    """The address space this process maps now (VmSize), bytes (0 where unknown)."""
    return _proc_bytes('/proc/self/status', 'VmSize') or 0


def host_available_bytes() -> tuple[int, str]:
    """(bytes this process can still allocate, what limits it: 'MemAvailable' or 'RLIMIT_AS').

    The smaller of /proc/meminfo's MemAvailable and the soft address-space limit (`ulimit -v`,
    `prlimit --as`) less the address space already mapped; 64 GiB where neither is known.
    """
    candidates = []
    available = _meminfo_available()
    if available is not None:
        candidates.append((available, 'MemAvailable'))
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        candidates.append((max(0, soft - _mapped_bytes()), 'RLIMIT_AS'))
    if not candidates:
        return 64 << 30, 'unknown (assumed 64 GiB)'
    return min(candidates)
