"""A Slurm step's nodes and ranks in Slurm's own order: its hostlist and tasks-per-node forms.

Slurm writes a step's nodes compressed (SLURM_STEP_NODELIST) and its tasks per node run-length
encoded (SLURM_STEP_TASKS_PER_NODE), both in the order of the allocation, which is the order
block distribution (`srun --distribution=block`, the default) gives ranks: node 0 takes ranks
0 .. t0-1, node 1 the next t1, and so on. TensorFlow's SlurmClusterResolver sorts the node
names as text instead, so `node[9-10]` became node10, node9 and every rank was refused; this
module keeps Slurm's order.

Hostlist grammar (Slurm's src/common/hostlist.c, `hostlist_create`; man page `scontrol show
hostnames`):

    hostlist := name (SEP name)*          SEP: a comma, space or tab outside brackets
    name     := text ('[' ranges ']' text)*
    ranges   := range (',' range)*
    range    := DIGITS | DIGITS '-' DIGITS   low <= high; no sign

A range's numbers are zero-padded to the width of its low bound as written (`node[009-011]`:
node009, node010, node011; `node[9-10]`: node9, node10). With several bracket groups in one
name, the last group varies fastest and the groups before it are expanded as Slurm's recursion
does (`r[1-2]n[1-2]`: r1n1, r1n2, r2n1, r2n2; with three groups the middle one is outermost).
Text after the last group (`n[1-2]-ib`), which Slurm's own lists do not hold, is kept. Examples:

    n[1-2],m5,o[3-4,6]   n1 n2 m5 o3 o4 o6
    a[1-2],b3            a1 a2 b3
    node[08-10]          node08 node09 node10

Tasks per node: `2(x3),1` is 2, 2, 2, 1 (a count, optionally `(xREPEATS)`, comma separated).

The fixes of a step's variables: a malformed list's (`malformed_fix`), and the way to a local
run when --cluster_resolver=auto took a step whose variables are not this host's
(`auto_slurm_fix`).
"""

from __future__ import annotations

import os
import re

#: Slurm's bound on one range's hosts (hostlist.c MAX_RANGE): larger is taken for a typo.
MAX_RANGE = 64 * 1024
_RANGE = re.compile(r'^(\d+)(?:-(\d+))?$')
_TASKS = re.compile(r'^(\d+)(?:\(x(\d+)\))?$')


class HostlistError(ValueError):
    """A hostlist or tasks-per-node value that is not in Slurm's form; the message names the
    value and the part that is wrong."""


def _numbers(ranges: str, name: str) -> list[str]:
    """'1,3-5' -> ['1', '3', '4', '5'], each padded to its range's low bound's width."""
    out = []
    for part in ranges.split(','):
        match = _RANGE.match(part)
        if not match:
            raise HostlistError('%r: %r is not a number or a range LOW-HIGH' % (name, part))
        low, high = match.group(1), match.group(2) or match.group(1)
        if int(high) < int(low):
            raise HostlistError('%r: the range %s ends below its start' % (name, part))
        if int(high) - int(low) + 1 > MAX_RANGE:
            raise HostlistError('%r: the range %s holds more than %d hosts' % (name, part,
                                                                              MAX_RANGE))
        out.extend(str(i).zfill(len(low)) for i in range(int(low), int(high) + 1))
    return out


def _last_group(name: str) -> tuple[str, str, str] | None:
    """(before, ranges, after) of the last '[...]' of `name`, or None without brackets."""
    start = name.rfind('[')
    if start < 0:
        if ']' in name:
            raise HostlistError('%r: "]" without "["' % name)
        return None
    end = name.find(']', start)
    if end < 0:
        raise HostlistError('%r: "[" without "]"' % name)
    return name[:start], name[start + 1:end], name[end + 1:]


def _expand_name(name: str, whole: str) -> list[str]:
    group = _last_group(name)
    if group is None:
        return [name]
    before, ranges, after = group
    numbers = _numbers(ranges, whole)
    if '[' not in before:
        return [before + n + after for n in numbers]
    # Brackets in the prefix: for each value of the prefix's last group, the rest is expanded
    # again (hostlist.c _push_range_list), the name's last group varying fastest.
    head = _last_group(before)
    out = []
    for value in _numbers(head[1], whole):
        out.extend(_expand_name(head[0] + value + head[2] + '[' + ranges + ']' + after, whole))
    return out


def _names(hostlist: str) -> list[str]:
    """Splits at commas, spaces and tabs outside brackets."""
    names, current, depth = [], '', 0
    for char in hostlist:
        if char == '[':
            depth += 1
        elif char == ']':
            depth -= 1
        if depth == 0 and char in ', \t':
            if current:
                names.append(current)
            current = ''
            continue
        current += char
    if current:
        names.append(current)
    return names


def expand_hostlist(hostlist: str) -> list[str]:
    """Slurm's compressed hostlist -> host names, in Slurm's order (see the module docstring).

    Raises:
      HostlistError: an empty list, unbalanced brackets, a range that is not LOW-HIGH with
        LOW <= HIGH, or one of more than MAX_RANGE hosts.
    """
    hosts = []
    for name in _names(hostlist):
        hosts.extend(_expand_name(name, name))
    if not hosts:
        raise HostlistError('%r names no host' % hostlist)
    return hosts


def expand_tasks_per_node(value: str) -> list[int]:
    """Slurm's tasks per node, e.g. '2(x3),1' -> [2, 2, 2, 1].

    Raises:
      HostlistError: a part that is not COUNT or COUNT(xREPEATS).
    """
    counts = []
    for part in value.split(','):
        match = _TASKS.match(part.strip())
        if not match:
            raise HostlistError('%r: %r is not COUNT or COUNT(xREPEATS)' % (value, part))
        counts.extend([int(match.group(1))] * int(match.group(2) or 1))
    return counts


def block_addresses(hostlist: str, tasks_per_node: str, port_base: int) -> list[str]:
    """Every rank's 'host:port' under block distribution: the ranks of a node follow each other
    in Slurm's node order, and its tasks listen on port_base, port_base + 1, ... in rank order.

    Args:
      hostlist: SLURM_STEP_NODELIST.
      tasks_per_node: SLURM_STEP_TASKS_PER_NODE.
      port_base: the first port of each node (--slurm_port_base).

    Returns:
      One address per rank, rank 0 first.

    Raises:
      HostlistError: either value malformed, or they disagree on the number of nodes.
    """
    hosts = expand_hostlist(hostlist)
    counts = expand_tasks_per_node(tasks_per_node)
    if len(counts) != len(hosts):
        raise HostlistError('%d node(s) in %r but %d count(s) in the tasks per node %r'
                            % (len(hosts), hostlist, len(counts), tasks_per_node))
    return ['%s:%d' % (host, port_base + k) for host, n in zip(hosts, counts, strict=True)
            for k in range(n)]


def malformed_fix(nodelist: str, per_node: str, job_nodelist: str = '') -> str:
    """The remedy for a step's node list or tasks per node that this module cannot read: which
    variable to fix and what its valid form looks like.

    Args:
      nodelist: SLURM_STEP_NODELIST; per_node: SLURM_STEP_TASKS_PER_NODE.
      job_nodelist: SLURM_JOB_NODELIST ('' when unset): srun copies it into the step's list
        when the step spans the whole allocation, so the fix names both then.
    """
    try:
        expand_hostlist(nodelist)
    except HostlistError:
        source = ('SLURM_JOB_NODELIST and SLURM_STEP_NODELIST (srun copies the first into the '
                  'second)' if job_nodelist.strip() == nodelist
                  else 'SLURM_STEP_NODELIST (srun sets it in a step)')
        return ('fix %s: a Slurm hostlist looks like node[01-03], node[1,3-5],gpu7 or '
                'node01,node02' % source)
    try:
        expand_tasks_per_node(per_node)
    except HostlistError:
        return ('fix SLURM_STEP_TASKS_PER_NODE (srun sets it): one count per node, e.g. '
                '2(x3),1 for 2 tasks on each of 3 nodes then 1')
    return ('fix SLURM_STEP_TASKS_PER_NODE or SLURM_STEP_NODELIST (srun sets both for one '
            'step): one task count per node of the list, in its order')


def auto_slurm_fix(environ=None) -> str:
    """The way out of a cluster --cluster_resolver=auto took from the Slurm variables, for the
    end of its errors (a local run where a Slurm step's variables leaked in: a shell inside
    `srun --pty`, a CI runner a Slurm job started): 'the cluster came from the Slurm variables
    of this environment (SLURM_PROCID=1 of SLURM_STEP_NUM_TASKS=2: ...); --cluster_resolver=flags
    runs without one (or unset the SLURM_* variables)'."""
    environ = os.environ if environ is None else environ
    return ('the cluster came from the Slurm variables of this environment (SLURM_PROCID=%s of '
            'SLURM_STEP_NUM_TASKS=%s: --cluster_resolver=auto runs a Slurm step of more than '
            'one task as a cluster); --cluster_resolver=flags runs without one (or unset the '
            'SLURM_* variables)' % (environ.get('SLURM_PROCID', '').strip(),
                                    environ.get('SLURM_STEP_NUM_TASKS', '').strip()))
