"""The step a run would build, built without running it: the graph, its fetches and sizes,
for the GPU it is planned for (shared by --dry_run and --plan_scaling).

    p, gpus, gpu = planned_step.plan_named_device(params, visible_gpus, named)  # named: decided
    built = planned_step.build(make_bench(p, gpus))    # Built(graph, fetches, ...)
    step = planned_step.build_step(make_bench, p, gpus, batch_size=64)   # StepAt(plan, built)
"""

from __future__ import annotations

from typing import NamedTuple

import tensorflow as tf

from .. import cnn_util, params
from ..hardware import gpu_plans, gpu_specs
from ..lifecycle import eval_runner
from . import memory_check


class Built(NamedTuple):
    """One graph build of a dry run: the graph, the fetches of one step, the savable
    variables (one copy of the model) and the per-device input batch bytes."""
    graph: tf.Graph
    fetches: list
    model_bytes: int
    batch_bytes: int


def build(bench) -> Built:
    """Builds the graph `bench` (a benchmark_cnn.BenchmarkCNN) would run: the eval graph with
    --eval, else the training or forward-only step (a frozen forward-only graph is planned as
    the unfrozen one: it holds the same tensors)."""
    plan = bench.plan
    if plan.params.eval:
        evaluator = eval_runner.Evaluator(plan, bench.model, bench.dataset,
                                            bench.session_config)
        graph, fetches = evaluator.graph, [evaluator.counts] + list(evaluator.pipeline.step_ops)
        savable, batch = evaluator.savable, plan.eval.per_device_batch_size
    else:
        info = bench.build_graph()
        graph = info.graph
        fetches = [info.train_op, info.loss] + list(info.pipeline.step_ops)
        savable, batch = info.mgr.savable_variables(), plan.per_device_batch_size
    model_bytes = sum(v.shape.num_elements() * v.dtype.base_dtype.size
                      for v in savable.values() if v is not None and v.shape.is_fully_defined())
    channels_pixels = 3 * plan.image_size * plan.image_size
    batch_bytes = batch * (channels_pixels * plan.compute_dtype.size + 4)
    return Built(graph, fetches, model_bytes, batch_bytes)


class DryRunFailed(cnn_util.BenchmarkError):
    """The run would not work as built; the message says why and what fits."""


def plan_device(p, visible_gpus: int) -> tuple:
    """`plan_named_device` with the GPU the flags name looked up here
    (hardware/gpu_plans.named_gpu).

    Raises:
      DryRunFailed: as `plan_named_device`.
    """
    return plan_named_device(p, visible_gpus, gpu_plans.named_gpu(p))


def plan_named_device(p, visible_gpus: int, named) -> tuple:
    """(Params with --device filled in, the GPU count to build with, GpuSpec or None).

    `named`: the GPU the flags name (hardware/gpu_plans.named_gpu: --gpu_model, or a host
    preset's where --device is not cpu), or None, as the usage check decided it
    (preflight/usage.check_with_tensorflow returns it). A visible GPU is planned as itself
    (its table entry; --gpu_model when the table lacks it); else --gpu_model plans --num_gpus
    GPUs of that model, or a host preset's GPU (--gpu_interconnect=dgx1_v100: its V100s; the
    returned Params name it in gpu_model); else the CPU.

    Raises:
      DryRunFailed: a GPU run is asked for, no GPU is visible and --gpu_model is not given, or
        the visible GPU is not in the table and --gpu_model is not given.
    """
    if named is not None and not p.gpu_model:  # a preset host's GPU
        p = p._replace(gpu_model=named.name)
    if visible_gpus and p.device != 'cpu':
        spec = memory_check.visible_gpu_spec() or named
        if spec is None:
            raise DryRunFailed('the visible GPU is not in the GPU table; give --gpu_model=NAME '
                               '(known: %s)' % ', '.join(gpu_specs.sorted_names()))
        return p, visible_gpus, spec
    device = params.default_device(p, 1 if named else 0)  # a named GPU is planned
    if device == 'gpu' and named is None:
        raise DryRunFailed('--dry_run --device=gpu without a visible GPU needs --gpu_model=NAME '
                           '(known: %s)' % ', '.join(gpu_specs.sorted_names()))
    if device == 'cpu':
        return p._replace(device='cpu'), 0, None
    return p._replace(device='gpu'), p.num_gpus, named


class StepAt(NamedTuple):
    """This run's step built at other flags: the run plan it was built for
    (run_plan.RunPlan: its per-device batch, devices) and the Built graph."""
    plan: object
    built: Built


def build_step(make_bench, p, gpus: int, *, batch_size: int | None = None,
               **changes) -> StepAt:
    """This run's step at per-device batch B: the one builder of "the step at another batch"
    (the memory check's advice, the dry run's batch search and ps task, the scaling plan's
    counted copies).

    Args:
      make_bench: (Params, gpus) -> benchmark_cnn.BenchmarkCNN: `benchmark_cnn.bench_factory`
        of the run (its cluster's resolution kept, nothing checked again), or a test's.
      p: the run's checked Params.
      gpus: the GPU count to build with.
      batch_size: the per-device batch B (--batch_size; --eval_batch_size with --eval), with
        --graph_choices=off (today's graph: the choices' probe would otherwise run at every
        batch a search tries); None: the run's own batch and graph choices.
      changes: other flags of the step (num_gpus=1: one tower; job_name='worker', ...).

    Returns:
      The StepAt: the plan it was built for and the Built graph (`build`).
    """
    if batch_size is not None:
        flag = 'eval_batch_size' if p.eval else 'batch_size'
        changes = {flag: batch_size, 'graph_choices': 'off', **changes}
    bench = make_bench(p._replace(**changes), gpus)
    return StepAt(bench.plan, build(bench))
