"""The loopback link as a cluster task sees it: TensorFlow's gRPC between two tasks of this host.

    rate = loopback.measure()        # LoopbackRate(bytes_per_sec=..., ...)

Two in-process servers (a ps and a worker task on free loopback ports, portpicker) and one
float32 variable of `megabytes` on the ps; each round the worker reads the variable (ps ->
worker) and adds a worker tensor of the same size into it (worker -> ps). The rate is the
bytes moved over the wall time of the timed rounds, the median of `repeats` measurements: what
a ps and a worker exchange per second over loopback, gRPC framing and tensor copies included
(a socket alone moves several times more; the tasks' rate is the one the step-time model
needs). The figure depends on the CPU and its load: report it with the load average.
"""

from __future__ import annotations

import statistics
import time
from typing import NamedTuple


class LoopbackRate(NamedTuple):
    """bytes_per_sec: the rate bytes move at (the two directions move alternately);
    seconds_per_round: wall time of one read + one update; megabytes: tensor size;
    cpu_secs_per_byte: CPU time (user + system, both tasks: they share this process) per byte
    moved; how: the method in words."""
    bytes_per_sec: float
    seconds_per_round: float
    megabytes: float
    cpu_secs_per_byte: float
    how: str


def _cpu_secs() -> float:
    import resource
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _free_port() -> int:
    try:
        import portpicker
        return portpicker.pick_unused_port()
    except ImportError:  # portpicker is a test extra; a socket bound to port 0 does the same
        import socket
        with socket.socket() as sock:
            sock.bind(('127.0.0.1', 0))
            return sock.getsockname()[1]


def measure(megabytes: float = 32.0, rounds: int = 6, repeats: int = 3) -> LoopbackRate:
    """Measures the gRPC rate between two tasks of this host (see the module docstring).

    Args:
      megabytes: size of the tensor moved each way per round (10^6 bytes).
      rounds: timed rounds per measurement (after one untimed round).
      repeats: measurements; the median is returned.

    Raises:
      ValueError: megabytes, rounds or repeats not > 0.
    """
    if not (megabytes > 0 and rounds > 0 and repeats > 0):
        raise ValueError('megabytes, rounds and repeats must be > 0. Received: %r, %r, %r'
                         % (megabytes, rounds, repeats))
    import tensorflow as tf
    tf1 = tf.compat.v1
    hosts = {'ps': ['127.0.0.1:%d' % _free_port()], 'worker': ['127.0.0.1:%d' % _free_port()]}
    spec = tf1.train.ClusterSpec(hosts)
    config = tf1.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=2)
    servers = [tf1.train.Server(spec, job_name=job, task_index=0, config=config)
               for job in ('ps', 'worker')]
    elements = int(megabytes * 1e6 / 4)
    graph = tf.Graph()
    with graph.as_default():
        with tf1.device('/job:ps/task:0/cpu:0'):
            var = tf1.Variable(tf.zeros([elements]), name='loopback_probe')
        with tf1.device('/job:worker/task:0/cpu:0'):
            local = tf1.Variable(tf.ones([elements]), name='loopback_local')
            read = tf.reduce_sum(var.read_value())  # ps -> worker
        with tf1.device('/job:ps/task:0/cpu:0'):
            update = var.assign_add(local.read_value(), read_value=False)  # worker -> ps
        init = tf1.global_variables_initializer()
    moved = 2 * elements * 4
    samples, cpu = [], []
    with tf1.Session(servers[1].target, graph=graph, config=config) as sess:
        sess.run(init)
        sess.run([read, update])
        for _ in range(repeats):
            start, start_cpu = time.perf_counter(), _cpu_secs()
            for _ in range(rounds):
                sess.run(read)
                sess.run(update)
            samples.append((time.perf_counter() - start) / rounds)
            cpu.append((_cpu_secs() - start_cpu) / (rounds * moved))
    per_round = statistics.median(samples)
    return LoopbackRate(moved / per_round, per_round, megabytes, statistics.median(cpu),
                        'TensorFlow gRPC between a ps and a worker task of this host: %g MB '
                        'read and %g MB added back per round, median of %d x %d rounds'
                        % (megabytes, megabytes, repeats, rounds))
