"""Memory before it runs out: a run whose step would not fit stops before its first step.

`check_before_run(plan, graph, fetches)` estimates the peak memory of one step on each device
(preflight/memory_estimate.py: Grappler's virtual cluster, a fraction of a second for resnet50
at batch 64) and raises `OutOfMemoryError` naming the estimate, the memory and a
batch that fits when a device (a GPU of the table, or the host) would not hold it. An
out-of-memory error during a run is reported with the same advice (`exhausted_message`).
"""

from __future__ import annotations

import time
from typing import NamedTuple

import tensorflow as tf

from .. import cnn_util
from ..hardware import gpu_specs
from . import batch_search, memory_estimate

fmt = memory_estimate.format_bytes


class OutOfMemoryError(cnn_util.BenchmarkError):
    """The step would need more memory than a device has (the message says how much, and a
    batch that fits)."""


class MemoryVerdict(NamedTuple):
    """The tightest device of a run: name ('/GPU:0' or 'host'), estimate and memory (bytes),
    the run's per-device batch and the largest batch estimated to fit (linear in the batch;
    0: none), and from `batch_advice`'s search the smallest batch found not to fit (0: none
    searched)."""
    device: str
    estimate: int
    memory: int
    batch_size: int
    batch_that_fits: int
    smallest_over: int = 0

    @property
    def fits(self) -> bool:
        return self.estimate <= self.memory

    def advice(self) -> str:
        """'the estimated peak is 31.49 GiB on host, which has 5.12 GiB; --batch_size=48 should
        fit'; where the search found no batch to fit before its builds or time ran out, what it
        found not to fit."""
        if self.batch_that_fits:
            fit = '--batch_size=%d should fit' % self.batch_that_fits
        elif self.smallest_over > 1:
            fit = ('no batch was found to fit before the search stopped (--batch_size=%d does '
                   'not); a smaller one may: --dry_run searches longer' % self.smallest_over)
        else:
            fit = 'not even one image per device fits'
        return 'the estimated peak is %s on %s, which has %s; %s' % (
            fmt(self.estimate), self.device, fmt(self.memory), fit)


def visible_gpu_spec() -> gpu_specs.GpuSpec | None:
    """The table's entry for the first visible GPU (None: no GPU, or one the table lacks)."""
    gpus = tf.config.list_physical_devices('GPU')
    if not gpus:
        return None
    details = tf.config.experimental.get_device_details(gpus[0])
    return gpu_specs.from_device_name(details.get('device_name', ''))


def verdict(plan, graph, fetches, gpu=None) -> MemoryVerdict | None:
    """The run's tightest device: each GPU on its own, this host's CPU devices together (on
    the CPU, from memory_estimate.all_tensors_bound where that fits the host: no step can need
    more, and Grappler's estimate is not made).

    Args:
      plan: the run_plan.RunPlan (per-device batch, devices).
      graph, fetches: the built step.
      gpu: the GpuSpec of the GPUs (None: the visible GPU's table entry; GPUs the table lacks
        are not checked).

    Returns:
      A MemoryVerdict, or None when nothing could be checked.
    """
    on_gpu = plan.params.device == 'gpu'
    batch = plan.per_device_batch_size
    if not on_gpu:
        # The logical CPU devices' batches all live in the host's memory.
        memory = memory_estimate.host_memory()
        host = memory_estimate.all_tensors_bound(graph)
        if host is None or host.total > memory:
            # A ps task's memory is another host's: the ps holds what it holds (dry-run the
            # worker).
            host = memory_estimate.group_devices(
                memory_estimate.estimate_peaks(graph, fetches)).host
        towers = max(1, len(plan.devices))
        per_image = host.activations / max(1, batch * towers)
        fit = (int((memory - host.variables) // (per_image * towers)) if per_image
               else batch)
        return MemoryVerdict('host', host.total, memory, batch, max(0, fit))
    gpu = gpu or visible_gpu_spec()
    if gpu is None:
        return None
    groups = memory_estimate.group_devices(memory_estimate.estimate_peaks(graph, fetches,
                                                                          gpu=gpu))
    if not groups.gpus:
        return None
    memory = memory_estimate.device_memory('/GPU:0', gpu)
    device, peak = max(groups.gpus.items(), key=lambda item: item[1].total)
    return MemoryVerdict(device, peak.total, memory, batch,
                         memory_estimate.batch_that_fits(batch, peak, memory))


#: Graph builds the memory check's advice may cost before a run stops (it is a failure path).
ADVICE_BUILDS = 3
ADVICE_SECS = 30.0


def batch_advice(found: MemoryVerdict, estimate_at) -> MemoryVerdict:
    """`found` with batch_that_fits from graph builds at other batches (batch_search: the
    gradients and the optimizer's temporaries do not grow with the batch, so `found`'s
    one-point extrapolation overestimates the per-image cost).

    Args:
      found: the verdict at the run's batch (it does not fit).
      estimate_at: batch -> the estimate (bytes) of the tightest device at that batch.

    Returns:
      `found` with batch_that_fits the largest batch found to fit (0 if none: the search
      stops after ADVICE_BUILDS builds or ADVICE_SECS seconds, which one slow build on a
      loaded host can take) and smallest_over the smallest found not to fit.
    """
    lo, hi, _ = batch_search.search_batch(
        lambda b: estimate_at(b) / max(1, found.memory), found.batch_size,
        found.estimate / max(1, found.memory), time.monotonic() + ADVICE_SECS,
        max_builds=ADVICE_BUILDS)
    return found._replace(batch_that_fits=lo or 0, smallest_over=hi or 0)


def check_before_run(plan, graph, fetches, estimate_at=None) -> MemoryVerdict | None:
    """`verdict`, raising when the step would not fit.

    Args:
      estimate_at: batch -> bytes of the tightest device (a graph build at that batch); when
        given, the advice's batch comes from `batch_advice`.

    Raises:
      OutOfMemoryError: a device's estimate exceeds its memory.
    """
    found = verdict(plan, graph, fetches)
    if found is not None and not found.fits:
        if estimate_at is not None:
            found = batch_advice(found, estimate_at)
        raise OutOfMemoryError('not enough memory for this run: %s (check with --dry_run)'
                               % found.advice())
    return found


def estimate_for(plan, graph, fetches) -> int:
    """The estimate (bytes) of the tightest device of a built step (see `verdict`)."""
    found = verdict(plan, graph, fetches)
    return found.estimate if found is not None else 0


def exhausted_message(error: tf.errors.ResourceExhaustedError,
                      found: MemoryVerdict | None) -> str:
    """The one line for an out-of-memory error during a run, with the estimate's advice (or, for
    a full disk, which TensorFlow also reports as ResourceExhaustedError, that)."""
    text = (error.message or str(error)).strip()
    first = text.splitlines()[0][:200]
    if 'No space left on device' in text:  # ENOSPC is RESOURCE_EXHAUSTED too: a disk, not memory
        where = [line for line in text.splitlines() if 'No space left' in line][0][:200]
        return ('no space left on device while writing an output (%s); free space or choose '
                'another path (--train_dir, --graph_file, --benchmark_log_dir, ...)' % where)
    if found is None:
        return ('out of memory during the run (%s); use a smaller --batch_size (--dry_run '
                'estimates one that fits)' % first)
    return 'out of memory during the run (%s); %s' % (first, found.advice())
