"""The original's two other outputs of the traced step (lifecycle/profiling.py runs that step).

* `--nouse_chrome_trace_format`: --trace_file holds the step's StepStats protobuf in text format
  (`step_stats_text`) instead of a Chrome trace.
* `--partitioned_graph_file_prefix=DIR/name.pbtxt`: the graphs TensorFlow actually ran, one per
  device after partitioning and Grappler's rewrites, each written to
  `DIR/name_job_localhost_replica_0_task_0_device_CPU_0.pbtxt` (the device of the partition's
  first node, with '/' and ':' turned into '_', inserted before the extension); text format
  when the prefix ends in 'txt', else binary GraphDef (`partition_graph_files`).

lifecycle/profiling.py writes both files.
"""

from __future__ import annotations

import os


def step_stats_text(metadata) -> bytes:
    """`metadata.step_stats` (a tf RunMetadata's StepStats) in protobuf text format."""
    from google.protobuf import text_format
    return text_format.MessageToString(metadata.step_stats).encode('utf-8')


def partition_graph_paths(prefix: str, devices) -> list[str]:
    """The file of each partition (module docstring), for `devices` in order.

    Args:
      prefix: --partitioned_graph_file_prefix, e.g. 'out/graph.pbtxt'.
      devices: each partition's device, e.g. '/job:localhost/replica:0/task:0/device:CPU:0'.
    """
    folder, name = os.path.split(prefix)
    base, dot, ext = name.rpartition('.')
    if not dot:
        base, ext = name, ''
    return [os.path.join(folder, '%s%s%s' % (base, d.replace('/', '_').replace(':', '_'),
                                             dot + ext)) for d in devices]


def partition_graph_files(metadata, prefix: str) -> list[tuple[str, bytes]]:
    """(path, contents) of each GraphDef of `metadata.partition_graphs`, text or binary as the
    prefix says (module docstring)."""
    from google.protobuf import text_format
    graphs = list(metadata.partition_graphs)
    devices = [g.node[0].device if g.node else 'empty%d' % i for i, g in enumerate(graphs)]
    as_text = prefix.endswith('txt')
    return [(path, text_format.MessageToString(graph).encode('utf-8') if as_text
             else graph.SerializeToString())
            for graph, path in zip(graphs, partition_graph_paths(prefix, devices))]
