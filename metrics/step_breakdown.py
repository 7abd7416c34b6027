"""Where a step's time goes (--print_step_breakdown).

Method. A sampled step (timed step 1, then every --display_every-th timed step) runs with
`RunOptions.FULL_TRACE` (SOFTWARE_TRACE returns no step stats for gRPC sessions in TF 2.21). The
trace gives, for every op of every device of every task that took part, its start and end
(microseconds), plus one 'RecvTensor' record per transfer between tasks ('[15.6MB] ... from
<device> to <device>'). This task's ops (a controller: every worker's) are each one of:

  input    ops of the input pipeline (name scopes synthetic_input_*, input_pipeline,
           input_staging_*);
  sync     transfers and barriers: _Send/_Recv, RecvTensor, queue enqueue/dequeue (the sync
           tokens), collective ops;
  compute  everything else (forward, backward, gradient sums, optimizer updates on this task).

Ops run in parallel, so times are unions of intervals. With S the span of the step in the trace
(first op start to last op end, over all tasks) and W its wall time around session.run:

  compute  = time during which at least one of this task's compute ops ran
  input    = time one of its input ops ran and no compute op did
  sync     = S - compute - input: this task's devices had nothing to compute and were waiting
             for transfers, barrier tokens, or updates running on other tasks (a ps applying
             gradients), i.e. variable synchronisation
  overhead = W - S: client, session and RPC dispatch before the first op and after the last

On one host (no cluster) sync is the time the step waits on intra-host copies and gaps between
ops. The traced step's cross-task transfers are summed into `transfer_bytes` (from the
RecvTensor records; the sizes are printed with 3 significant digits). Tracing slows the sampled
steps a little; the other steps are not traced.

The sampled steps are traced by runtime/traced_session.py's `TracedSession` (the session of
cluster runs and of runs with --print_step_breakdown); lifecycle/figure_hooks.py's
`StepBreakdownHook` prints the lines.
"""

from __future__ import annotations

import re
from typing import Callable

import tensorflow as tf

tf1 = tf.compat.v1

INPUT_SCOPES = ('synthetic_input', 'input_pipeline', 'input_staging')
SYNC_OP_PREFIXES = ('_Send', '_Recv', '_HostSend', '_HostRecv', 'QueueEnqueue', 'QueueDequeue',
                    'Collective', 'NcclAllReduce')

def classify(node_name: str, op_type: str) -> str:
    """'input', 'sync' or 'compute' for one traced op (see the module docstring)."""
    if node_name == 'RecvTensor' or op_type.startswith(SYNC_OP_PREFIXES):
        return 'sync'
    head = node_name.split('/', 1)[0]
    if head.startswith(INPUT_SCOPES):
        return 'input'
    return 'compute'


def _op_type(label: str) -> str:
    """'foo = MatMul(a, b)' -> 'MatMul'."""
    _, _, rest = label.partition(' = ')
    return rest.split('(', 1)[0].strip()


_RECV_LABEL = re.compile(r'^\[([0-9.]+)([KMGT]?i?B)\].* from (\S+) to (\S+)')
# TensorFlow prints binary multiples with these names: '[15.6MB]' is 4096 x 1001 floats.
_UNITS = {'B': 1, 'KB': 2 ** 10, 'MB': 2 ** 20, 'GB': 2 ** 30, 'TB': 2 ** 40,
          'KiB': 2 ** 10, 'MiB': 2 ** 20, 'GiB': 2 ** 30, 'TiB': 2 ** 40}


def _task(device: str) -> str:
    return device.split('/device:', 1)[0]


def transfer_bytes(label: str) -> int:
    """Bytes of a RecvTensor record between two tasks ('[15.6MB] ... from A to B'); 0 for
    transfers within one task or unparsable labels."""
    match = _RECV_LABEL.match(label)
    if not match or _task(match.group(3)) == _task(match.group(4)):
        return 0
    return int(float(match.group(1)) * _UNITS.get(match.group(2), 1))


def _union_length(intervals) -> int:
    total, end = 0, None
    for a, b in sorted(intervals):
        if end is None or a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


def breakdown(step_stats, wall_secs: float, is_local: Callable[[str], bool]) -> dict:
    """Splits one traced step's wall time into input, compute, sync and overhead.

    Args:
      step_stats: RunMetadata.step_stats of a FULL_TRACE run.
      wall_secs: wall seconds of that run, measured by the caller.
      is_local: device name -> True for the devices whose ops count as this task's.

    Returns:
      {'wall_ms', 'input_ms', 'compute_ms', 'sync_ms', 'overhead_ms'} (milliseconds; the four
      parts add up to wall_ms) and 'transfer_bytes' (int, bytes moved between tasks).
    """
    spans = {'input': [], 'compute': [], 'sync': []}
    first, last, moved = None, None, 0
    for dev in step_stats.dev_stats:
        local = is_local(dev.device)
        for node in dev.node_stats:
            if node.node_name in ('_SOURCE', '_SINK'):
                continue
            start = node.all_start_micros
            end = start + max(node.all_end_rel_micros, 0)
            first = start if first is None else min(first, start)
            last = end if last is None else max(last, end)
            if node.node_name == 'RecvTensor':
                moved += transfer_bytes(node.timeline_label)
            if local:
                kind = classify(node.node_name, _op_type(node.timeline_label))
                spans[kind].append((start, end))
    wall_ms = wall_secs * 1e3
    span_ms = min(wall_ms, (last - first) / 1e3) if first is not None else 0.0
    compute_ms = _union_length(spans['compute']) / 1e3
    input_ms = _union_length(spans['compute'] + spans['input']) / 1e3 - compute_ms
    busy = compute_ms + input_ms
    if busy > span_ms > 0:  # clock skew between tasks: keep the parts within the span
        compute_ms, input_ms = compute_ms * span_ms / busy, input_ms * span_ms / busy
        busy = span_ms
    return {'wall_ms': wall_ms, 'input_ms': input_ms, 'compute_ms': compute_ms,
            'sync_ms': max(0.0, span_ms - busy), 'overhead_ms': max(0.0, wall_ms - span_ms),
            'transfer_bytes': moved}


def format_breakdown(what: str, parts: dict) -> str:
    """'Step breakdown<TAB><what><TAB>wall W ms = input I + compute C + sync S + overhead O
    <TAB>moved M MB'."""
    return ('Step breakdown\t%s\twall %.1f ms = input %.1f + compute %.1f + sync %.1f + '
            'overhead %.1f\tmoved %.2f MB between tasks' % (
                what, parts['wall_ms'], parts['input_ms'], parts['compute_ms'],
                parts['sync_ms'], parts['overhead_ms'], parts['transfer_bytes'] / 1e6))
