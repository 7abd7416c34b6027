"""A cluster worker's images/sec figures: its `total images/sec` line as the original meant it,
its own figure, and the per-worker lines and cluster total its chief prints (pure Python; the
hook that measures and gathers them is cluster/coordination.py's ClusterStatsHook).

On one host `total images/sec` is the run's images over its timed seconds. A cluster worker's
`total images/sec` line keeps the original tf_cnn_benchmarks' meaning, the cluster's rate as
this worker sees it (`worker_view`), so a script that greps it from any worker's log reads
what it read there:

  synchronous updates, and forward-only runs (which move no global step): workers x this
    worker's timed steps x its batch / its timed seconds (every worker runs the same steps);
  asynchronous updates: the global steps every worker made during this worker's timed part
    (the shared global step read as the part starts and as it ends) x a worker's batch / that
    part's wall seconds.

The line right after it is this worker's own figure, its steps x batch / its timed seconds
(`this worker's images/sec: 37.19 (...)`): the results JSON's `images_per_sec`, which the
chief's per-worker lines repeat.

Each worker sends the chief its own images/sec, timed steps and seconds, its images and the
wall-clock start and end of its timed part (time.time(): the hosts' clocks are taken to agree,
as NTP keeps them). The chief's `cluster images/sec` is every worker's images over the
span from the earliest start to the latest end (`report`): one rule for synchronous and
asynchronous updates. Over the same steps it is the sum of the workers' figures within noise;
where the workers' timed parts do not line up (one paused, one finished early), it is what the
cluster trained in the time it took, where a sum of rates over different windows was not.
"""

from __future__ import annotations

from typing import NamedTuple

from .. import cnn_util


class WorkerStats(NamedTuple):
    """What one worker sends its chief at the end of its run (the stats queue's element).

    Attributes:
      task: the worker's task index.
      images_per_sec: its own images/sec (0.0 when it timed no step).
      steps: its timed steps (0: it timed none).
      secs: its timed seconds (between-step hooks' time left out), as its own figure counts.
      images: images its timed steps processed (steps x its batch over its devices).
      wall_start, wall_end: wall-clock time (time.time(), seconds since the epoch) at the start
        and at the end of its timed part.
    """

    task: int
    images_per_sec: float
    steps: int
    secs: float
    images: int
    wall_start: float
    wall_end: float


def own_line(images_per_sec: float, note: str) -> str:
    """"this worker's images/sec: 37.19 (its own steps; <note>)": the line after a cluster
    worker's `total images/sec`."""
    return "this worker's images/sec: %.2f (its own steps; %s)" % (images_per_sec, note)


def worker_view(own: float, num_workers: int, global_steps: tuple | None = None,
                images_per_global_step: int = 0, forward_only: bool = False
                ) -> tuple[float, list[str]]:
    """The `total images/sec` figure of a cluster worker and the line after it (see the
    module docstring).

    Args:
      own: this worker's own images/sec (its steps x batch / its timed seconds).
      num_workers: workers of the cluster (> 1).
      global_steps: asynchronous updates: (global steps every worker made during this
        worker's timed part, that part's wall seconds); None for synchronous updates and
        forward-only runs (workers x `own`).
      images_per_global_step: images one global step applies (a worker's batch), with
        `global_steps`.
      forward_only: the workers of a forward-only run never wait for each other, so the line
        adds that workers x this assumes they ran side by side the whole time, and that the
        chief's cluster total (images over the span of every timed part) is the measured one.

    Returns:
      (images/sec, [the own figure's line]).
    """
    if global_steps is None:
        note = ("the total above: %d workers x this, the cluster's rate as this worker sees it"
                % num_workers)
        if forward_only:
            note += (" if they ran side by side; forward-only workers do not wait for each "
                     "other: the chief's cluster total, over the span of every timed part, is "
                     "the measured figure")
        return own * num_workers, [own_line(own, note)]
    steps, secs = global_steps
    figure = steps * images_per_global_step / secs if secs > 0 else 0.0
    note = 'the total above: %s of all %d workers in its %.2f s timed part, x %d images' % (
        cnn_util.counted(steps, 'global step'), num_workers, secs, images_per_global_step)
    return figure, [own_line(own, note)]


def report(stats: list[WorkerStats], nothing_timed: str) -> tuple[list[str], dict]:
    """The chief's lines on its workers and the result keys they give.

    Args:
      stats: every worker's WorkerStats, in any order.
      nothing_timed: why a worker that timed no step has no figure (the words of its own
        total line).

    Returns:
      (lines, keys): one line per worker by task index ('worker 1 images/sec: 37.46 (30
      steps in 1.60 s)', or 'worker 1 images/sec: none (<why>)'), then the cluster total
      ('cluster images/sec: 7.05 (2 workers: 120 images in 17.02 s, from the first
      timed part's start to the last one's end)'); and {'worker_images_per_sec': by task
      index, 'cluster_images_per_sec', 'cluster_images', 'cluster_span_secs'}. A worker that
      timed no step leaves the total out, with one line saying so, and the keys empty (the
      others' images over their span would not be the cluster's, and 0.00 would read as a
      measured figure).
    """
    ordered = sorted(stats, key=lambda s: int(s.task))
    lines, untimed = [], []
    for s in ordered:
        if int(s.steps) <= 0:
            lines.append('worker %d images/sec: none (%s)' % (s.task, nothing_timed))
            untimed.append(int(s.task))
        else:
            lines.append('worker %d images/sec: %.2f (%d steps in %.2f s)' % (
                s.task, s.images_per_sec, s.steps, s.secs))
    if untimed:
        who = ('no worker timed a step' if len(untimed) == len(ordered) else
               'worker%s %s timed no step' % ('s' if len(untimed) > 1 else '',
                                              ', '.join(map(str, untimed))))
        lines.append('no cluster images/sec: %s (%s)' % (who, nothing_timed))
        return lines, {}
    images = sum(int(s.images) for s in ordered)
    span = max(float(s.wall_end) for s in ordered) - min(float(s.wall_start) for s in ordered)
    # A span shorter than a worker's own timed seconds (clocks that jumped): the longest
    # timed part instead, which bounds it from below.
    span = max(span, max(float(s.secs) for s in ordered))
    total = images / span
    lines.append("cluster images/sec: %.2f (%s: %d images in %.2f s, from the first "
                 "timed part's start to the last one's end)" % (
                     total, cnn_util.counted(len(ordered), 'worker'), images, span))
    return lines, {'worker_images_per_sec': [float(s.images_per_sec) for s in ordered],
                   'cluster_images_per_sec': total, 'cluster_images': images,
                   'cluster_span_secs': span}
