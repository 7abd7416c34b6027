"""The step time of a data-parallel run before it runs: compute plus the communication that does
not overlap it, and from that images/sec and scaling efficiency.

    compute = step_time.compute_from_single_device(684.0, 512, profile, topo_1, links)
    found = step_time.predict(profile, topo, links, batch_size=512, compute_secs=compute.secs)
    found.images_per_sec, found.efficiency, found.bound

The model (docs/scaling.md has it with its sources and its errors):

  * Compute. t_c, the time one device computes one step, from a measured single-device figure
    X images/sec (the same configuration on one device: t_c is what is left of B / X once the
    one device's own communication that does not overlap is taken off), or without one from the
    GPU's data sheet by the per-op model of speed_model/gpu_step.py (`compute_from_gpu_model`:
    a roofline per op, tensor cores, TF32, XLA fusion, launch costs). The older flat estimate
    t_c = B x 3 x forward FLOPs / (utilisation x peak), utilisation an assumption
    (ASSUMED_UTILISATION), is kept as `compute_from_peak` for comparison. The forward pass
    is a third of it, the backward pass two thirds (the gradients with respect to the
    activations and to the weights each cost about a forward pass: the 3 x forward FLOPs of
    metrics/utilisation.py). Tasks sharing a host's cores (a CPU cluster on one machine) slow
    each other: t_c x max(1, threads / cores).
  * Communication. The bytes per step of each link (speed_model/traffic_patterns.py), over the
    link's rate (hardware/links.py), on the busiest instance of each kind of link; the links a
    transfer crosses in turn are pipelined (the slowest one sets the pace).
  * Overlap, layer by layer, in forward order (speed_model/layer_profile.py gives each variable's
    bytes and the FLOPs of the layer that uses it): a layer's forward pass starts when the
    previous one ended and its variables arrived (reads in creation order, one link busy at a
    time); a layer's gradient is sent once the backward pass made it (the last layer's first),
    after the gradients before it; traffic that needs every gradient first (packed all-reduces,
    distributed_replicated's read of the updated masters) starts when the backward pass ended.
    A link is never planned busier than the step: step >= every link's bytes / rate.
  * images/sec = devices x B / step; efficiency = images/sec / (devices x the one-device
    images/sec of the same configuration).

No constant here was fitted to a published multi-device result.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from . import traffic_patterns

#: Share of a training step's compute in the backward pass (3 x forward FLOPs in all: the
#: gradients with respect to activations and to weights each cost one forward pass).
BACKWARD_SHARE = 2.0 / 3.0
#: Without a measured figure, the share of the GPU's data-sheet peak the model is assumed to
#: reach. An assumption, stated as such (not fitted); give a measured figure instead.
ASSUMED_UTILISATION = 0.5
#: A row whose communication that does not overlap is below this share of the step is
#: compute-bound.
BOUND_SHARE = 0.05


class Compute(NamedTuple):
    """secs: one device's compute per step (seconds); source: where it comes from; step: the
    gpu_step.StepPrediction it came from (None: a measured figure or the flat estimate);
    measured: it was taken from a measured one-device figure of the configuration
    (--single_device_images_per_sec, a stored run), which holds the whole step, copies
    included; band: the validation_band.Band of a data-sheet figure (how far the per-op model
    was from published runs of that dtype; None for a measured figure or the flat estimate)."""
    secs: float
    source: str
    step: object = None
    measured: bool = False
    band: object = None


class Prediction(NamedTuple):
    """One planned configuration.

    topology: the traffic_patterns.Topology; batch_size: per device; compute_secs: one
    device's compute per step (after core sharing); step_secs; images_per_sec (all devices;
    infinite for a step of no compute and no copies: a plan whose measured one-device figure
    left no compute, scaling_report.from_single_device); busy: {resource: seconds per step
    its busiest link instance moves bytes}; exposed_secs: step - compute; bound: 'compute' or
    the resource of the largest busy time."""
    topology: object
    batch_size: int
    compute_secs: float
    step_secs: float
    images_per_sec: float
    busy: dict
    exposed_secs: float
    bound: str

    @property
    def devices(self) -> int:
        return self.topology.devices


@functools.lru_cache(maxsize=64)
def _shares(profile) -> tuple[np.ndarray, np.ndarray]:
    """(bytes share, compute share) per layer in forward order; compute follows the bytes
    where no layer has FLOPs (a profile without them)."""
    m = float(profile.model_bytes) or 1.0
    by_bytes = np.array([layer.bytes / m for layer in profile.layers] or [1.0])
    flops = float(profile.forward_flops)
    by_flops = (np.array([layer.flops / flops for layer in profile.layers]) if flops > 0
                else by_bytes)
    return by_bytes, by_flops


def _pipeline_end(ready: np.ndarray, work: np.ndarray) -> float:
    """When the last of a sequence of jobs ends, job j starting once it is ready (ready[j])
    and job j - 1 ended, and lasting work[j]: the recurrence end_j = max(end_{j-1}, ready_j)
    + work_j (end_0 = 0) in closed form, max over i of (ready_i + work_i + ... + work_J)."""
    done = np.cumsum(work)
    before = np.concatenate(([0.0], done[:-1]))
    return float(done[-1] + max(0.0, np.max(ready - before)))


def _block_secs(stages) -> float:
    return max((stage.secs for stage in stages), default=0.0)


def busy_secs(phases) -> dict:
    """{resource: seconds per step} of the busiest instance, the larger of its two directions
    (reads, later reads and input batches one way; gradients the other)."""
    down, up = {}, {}
    for stage in phases.read + phases.background + tuple(s for b in phases.after for s in b):
        down[stage.resource] = down.get(stage.resource, 0.0) + stage.secs
    for stage in phases.grad:
        up[stage.resource] = up.get(stage.resource, 0.0) + stage.secs
    return {r: max(down.get(r, 0.0), up.get(r, 0.0)) for r in sorted(set(down) | set(up))}


def step_secs(compute_secs: float, profile, phases, forward_only: bool = False) -> float:
    """The step of one device: the layer-by-layer overlap of the module docstring."""
    by_bytes, by_flops = _shares(profile)
    forward = compute_secs * (1.0 if forward_only else 1.0 - BACKWARD_SHARE)
    backward = 0.0 if forward_only else compute_secs * BACKWARD_SHARE
    read, grad = _block_secs(phases.read), _block_secs(phases.grad)
    # Forward: layer j starts when layer j - 1 ended and its variables arrived.
    clock = _pipeline_end(np.cumsum(by_bytes * read), by_flops * forward)
    # Backward, last layer first: layer j's gradient is sent after it was made and after the
    # gradients before it.
    made = clock + np.cumsum(by_flops[::-1] * backward)
    clock = float(made[-1]) if len(made) else clock
    sent = _pipeline_end(made, by_bytes[::-1] * grad) if grad else 0.0
    end = max(clock, sent) + sum(_block_secs(block) for block in phases.after)
    return max([end] + list(busy_secs(phases).values()))


def predict(profile, topo, links, *, batch_size: int, compute_secs: float,
            gradient_ratio: float = 1.0, batch_bytes: int = 0,
            core_share: float = 1.0, extra_busy: dict | None = None) -> Prediction:
    """The Prediction of `topo` (traffic_patterns.Topology) over `links`.

    Args:
      profile: the model's layer_profile.LayerProfile.
      topo, links: the cluster and its hardware.
      batch_size: per device.
      compute_secs: one device's compute per step, alone on its host (Compute.secs).
      gradient_ratio, batch_bytes: see traffic_patterns.phases.
      core_share: threads the host's tasks run / its cores: the compute slows by it when
        above 1.
      extra_busy: {resource: seconds per step} of other shared resources (a host's cores
        shared by every task: scaling_report.host_cpu_secs); the step is at least each.

    Raises:
      traffic_patterns.UnplannableError: see traffic_patterns.phases.
    """
    phases = traffic_patterns.phases(topo, links, [layer.bytes for layer in profile.layers],
                                     gradient_ratio=gradient_ratio, batch_bytes=batch_bytes)
    compute = compute_secs * max(1.0, core_share)
    busy = busy_secs(phases)
    busy.update(extra_busy or {})
    step = max([step_secs(compute, profile, phases, topo.forward_only)] + list(busy.values()))
    exposed = max(0.0, step - compute)
    bound = 'compute'
    if busy and exposed > BOUND_SHARE * step:
        bound = bounding_resource(compute, profile, phases, busy, step, topo.forward_only)
    rate = topo.devices * batch_size / step if step > 0 else float('inf')  # no compute, no copy
    return Prediction(topo, batch_size, compute, step, rate, busy, exposed, bound)


def _without(phases, resource: str):
    """`phases` with the stages of `resource` taken out (as if infinitely fast)."""
    def keep(stages):
        return tuple(s for s in stages if s.resource != resource)
    return phases._replace(read=keep(phases.read), grad=keep(phases.grad),
                           after=tuple(keep(b) for b in phases.after),
                           background=keep(phases.background))


def bounding_resource(compute: float, profile, phases, busy: dict, step: float,
                      forward_only: bool = False) -> str:
    """The resource that sets a step longer than its compute: the one whose busy time is the
    step (a link or the host's cores that cannot do more per step), else the one whose
    removal shortens the layer-by-layer step most, else the busiest."""
    floor = max(busy, key=busy.get)
    if busy[floor] >= step * (1 - 1e-9):
        return floor
    gains = {}
    for resource in busy:
        rest = {r: v for r, v in busy.items() if r != resource}
        shorter = max([step_secs(compute, profile, _without(phases, resource), forward_only)]
                      + list(rest.values()))
        gains[resource] = step - shorter
    best = max(gains, key=gains.get)
    if gains[best] > 1e-12:
        return best
    # Links tied in one stage (a ps's link and a worker's carrying the same bytes): neither
    # alone shortens the step; the busiest link of the timeline is named.
    moving = {s.resource for s in phases.read + phases.grad + phases.background}
    moving |= {s.resource for block in phases.after for s in block}
    links = {r: v for r, v in busy.items() if r in moving}
    return max(links, key=links.get) if links else floor


def compute_from_single_device(images_per_sec: float, batch_size: int, profile, topo_one,
                               links, *, gradient_ratio: float = 1.0, batch_bytes: int = 0,
                               source: str = 'measured') -> Compute:
    """One device's compute per step from its measured images/sec in `topo_one` (the
    configuration on one device): the t_c whose predicted step is batch / images_per_sec.

    Raises:
      ValueError: images_per_sec is not > 0.
    """
    if not images_per_sec > 0:
        raise ValueError('the single-device figure must be > 0 images/sec. Received: %r'
                         % (images_per_sec,))
    target = batch_size / images_per_sec
    phases = traffic_patterns.phases(topo_one, links, [layer.bytes for layer in profile.layers],
                                     gradient_ratio=gradient_ratio, batch_bytes=batch_bytes)

    def step_of(secs: float) -> float:
        return step_secs(secs, profile, phases, topo_one.forward_only)
    floor = step_of(0.0)
    if floor >= target:  # scaling_report.from_single_device plans the links faster instead
        return Compute(0.0, '%s: %s images/sec on one device, more than its own copies allow '
                       'over these links (%s images/sec at most): no compute left to plan'
                       % (source, images(images_per_sec), images(batch_size / floor)),
                       measured=True)
    return Compute(compute_for_step(step_of, target), '%s: %s images/sec on one device' % (
        source, images(images_per_sec)), measured=True)


def compute_for_step(step_of, target: float) -> float:
    """The compute t in [0, target] whose step `step_of(t)` (seconds, non-decreasing in t and
    at least t) is `target` seconds, by bisection; 0 where step_of(0) >= target."""
    lo, hi = 0.0, target
    if step_of(0.0) >= target:
        return 0.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if step_of(mid) < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def compute_from_peak(gpu, dtype: str, forward_flops_per_image: float, batch_size: int, *,
                      forward_only: bool = False,
                      utilisation: float = ASSUMED_UTILISATION) -> Compute:
    """One device's compute per step from the GPU table's peak (hardware/gpu_specs.py) at an
    assumed utilisation: B x (3 or 1) x forward FLOPs / (utilisation x peak).

    Raises:
      ValueError: the GPU has no arithmetic of `dtype`, or no FLOPs were counted.
    """
    peak = gpu.peak_tflops(dtype)
    if not peak:
        raise ValueError('%s has no %s arithmetic to plan from' % (gpu.name, dtype))
    if not forward_flops_per_image > 0:
        raise ValueError('no forward FLOPs counted for the model: give '
                         '--single_device_images_per_sec')
    work = batch_size * (1 if forward_only else 3) * forward_flops_per_image
    secs = work / (utilisation * peak * 1e12)
    return Compute(secs, '%s peak %.4g TFLOP/s (%s) x %.0f%% assumed utilisation: %s '
                   'images/sec' % (gpu.name, peak, dtype, 100 * utilisation,
                                   images(batch_size / secs)))


def compute_from_gpu_model(gpu, dtype: str, ops, batch_size: int, *, xla: bool = False,
                           tf32: bool = True, forward_only: bool = False,
                           winograd: bool = True, filter_winograd: bool = True) -> Compute:
    """One device's compute per step from the GPU's data sheet by the per-op model
    (speed_model/gpu_step.predict_step; `ops` is the model's op_profile.OpProfile), with the
    model's error band for the GPU and dtype (validation_band.band_for). The input's copies
    are left to the links of the step-time model (traffic_patterns' batch bytes).

    Raises:
      ValueError: an unknown dtype, or a batch below 1.
    """
    from . import gpu_step, validation_band
    found = gpu_step.predict_step(ops, gpu, dtype, batch_size=batch_size, xla=xla, tf32=tf32,
                                  forward_only=forward_only, winograd=winograd,
                                  filter_winograd=filter_winograd)
    return Compute(found.compute_secs, '%s from its data sheet, %s%s: %s images/sec' % (
        gpu.name, found.math_path, ', XLA' if xla else '', images(found.images_per_sec)),
        found, band=validation_band.band_for(gpu.name, dtype))


def images(rate: float) -> str:
    """'32258', '684', '29.7': an images/sec figure without exponents."""
    return '%.0f' % rate if rate >= 100 else '%.3g' % rate
