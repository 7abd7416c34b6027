"""`--plan_scaling` and the dry run's predicted step: drives the step-time model (speed_model/).

    tf_cnn_benchmarks --plan_scaling --model=resnet50 --gpu_model=V100 \\
        --variable_update=distributed_replicated --interconnect_gbps=25 \\
        --single_device_images_per_sec=380 --plan_scaling_png=resnet50.png

What this driver adds to the model (speed_model/from_flags.py turns the flags into its inputs):

  * the Params of the step as the run would build it (`buildable`: without the planning
    flags), and the copies of a step counted by the dry run on the graph this configuration
    builds on one host (two GPUs, or worker 0 of a two-host cluster), printed beside the
    pattern's bytes for the same shape (speed_model/traffic_patterns.expected_counts);
  * one device's compute when --single_device_images_per_sec is not given: the newest
    matching one-device run of the results database (stored_runs.py `find_single_device_run`);
  * the printed plan and its PNG (--plan_scaling_png).

No step runs and no session starts. docs/scaling.md explains the model and its errors.
"""

from __future__ import annotations

import os

from .. import cnn_util, package_info
from ..hardware import gpu_plans
from ..speed_model import from_flags, scaling_report
from ..speed_model import traffic_patterns as patterns
from ..speed_model.from_flags import PlanError, all_reduce_of, profile_of
from . import gpu_build, memory_estimate, planned_step, progress, step_traffic
from .stored_runs import find_single_device_run

fmt = memory_estimate.format_bytes


def plan_inputs(p, bench, gpu, *, profile=None, counted=(), given=frozenset()
                ) -> scaling_report.PlanInputs:
    """The PlanInputs of the configuration `p` describes (bench: its BenchmarkCNN, for the
    model, dataset, batch and image size the run would use; profile: its layer profile, made
    when not given; given: the names of the flags the command line gave, cli.given_flags),
    with a one-device figure from the results database when the flags give none
    (`find_single_device_run`).

    Raises:
      PlanError: links, compute or the variable manager cannot be planned.
    """
    return from_flags.plan_inputs(p, bench.plan, gpu, profile=profile, counted=counted,
                                  find_run=lambda q, device: find_single_device_run(q, device),
                                  given=given)


PLAN_FLAGS = dict(plan_scaling=False, plan_scaling_png=None, plan_num_ps=0, dry_run=False,
                  single_device_images_per_sec=None, interconnect_gbps=None,
                  gpu_interconnect=None)


def buildable(p):
    """`p` without the planning flags: the Params of the run the plan is about."""
    return p._replace(**PLAN_FLAGS)


def _small_cluster(p, gpus: int):
    """(Params of a small configuration of the same manager, the Topology it is): one host
    with `gpus` GPUs, worker 0 of two hosts with a ps, or the controller of two workers."""
    mode = p.variable_update
    base = dict(device='gpu', num_gpus=gpus)
    if mode in ('parameter_server', 'replicated', 'independent'):
        return p._replace(**base), patterns.Topology(
            mode, gpus, all_reduce=all_reduce_of(p),
            local_parameter_device=p.local_parameter_device, forward_only=p.forward_only)
    ps = ['plan-ps0:2222'] if mode in ('parameter_server', 'distributed_replicated') else []
    workers = ['plan-worker0:2222', 'plan-worker1:2222']
    job = ('controller', dict(controller_host='plan-controller:2222')) \
        if mode == 'distributed_all_reduce' else ('worker', {})
    q = p._replace(job_name=job[0], task_index=0, ps_hosts=ps, worker_hosts=workers,
                   **job[1], **base)
    return q, patterns.Topology(mode, gpus, 2, len(ps), all_reduce=all_reduce_of(p),
                                forward_only=p.forward_only)


def counted_lines(make_bench, p, gpu, profile) -> list[str]:
    """The dry run's count of a small configuration's copies beside the pattern's bytes (the
    plan's longest phase: a build of its step, announced by preflight/progress.py)."""
    gpus = 2
    q, topo = _small_cluster(p._replace(gpu_model=p.gpu_model or (gpu.name if gpu else 'V100')),
                             gpus)
    shape = ('1 host x %d GPUs' % gpus if topo.hosts == 1 else
             '%s 0 of %d hosts x %d GPUs' % (q.job_name, topo.hosts, gpus))
    progress.announce('building the step of %s to count its copies: %d tower(s) of %s'
                      % (shape, gpus, p.model),
                      progress.BUILD_SECS_PER_PROFILE_OP * profile.ops * gpus, who='Scaling plan')
    built = planned_step.build_step(make_bench, buildable(q), gpus).built
    counted = {w: b for w, b in step_traffic.step_traffic(built.graph, built.fetches).totals
               .items() if b}
    m = profile.model_bytes
    g = m * patterns.gradient_ratio_of(topo, from_flags.compacts_gradients(p))
    expected = patterns.expected_counts(topo, m, 0 if p.forward_only else g)
    return _counted_words(shape, topo, counted, expected)


#: Counted and pattern bytes of one direction agree within this share of the larger (the count
#: leaves out tensors of 64 bytes or less: preflight/step_traffic.py).
AGREEMENT = 0.05


def _counted_words(shape: str, topo, counted: dict, expected: dict | None) -> list[str]:
    """The 'Counted copies' line, the pattern's line (or why there is none:
    traffic_patterns.uncounted_reason) and, where the two differ in a direction by more than
    AGREEMENT, a line naming those directions."""
    ways = sorted(set(counted) | set(expected or {}))
    line = 'Counted copies:   %s (%s, dry run): %s per step' % (
        shape, topo.variable_update, ', '.join('%s %s' % (w, fmt(counted.get(w, 0)))
                                               for w in ways) or 'none')
    indent = ' ' * 18
    if expected is None:
        return [line, indent + '(no pattern to compare it with: %s)'
                % patterns.uncounted_reason(topo)]
    lines = [line, indent + 'the pattern for that shape: %s' % (
        ', '.join('%s %s' % (w, fmt(expected.get(w, 0))) for w in ways) or 'none')]
    differ = [w for w in ways if abs(counted.get(w, 0) - expected.get(w, 0))
              > AGREEMENT * max(counted.get(w, 0), expected.get(w, 0))]
    if differ:
        lines.append(indent + 'the count and the pattern differ (%s): the plan\'s bytes for '
                     'this configuration are not the graph\'s' % ', '.join(differ))
    return lines


def run(make_bench, p, visible_gpus: int, given=frozenset()) -> int:
    """`run_planned` with the GPU the flags name looked up here (hardware/gpu_plans.named_gpu):
    the library's and the tests' plan. Raises as `run_planned`."""
    return run_planned(make_bench, p, visible_gpus, gpu_plans.named_gpu(p), given)


def run_planned(make_bench, p, visible_gpus: int, named, given=frozenset()) -> int:
    """Prints the scaling plan of the configuration `p` describes; writes the PNG of
    --plan_scaling_png and, with --benchmark_log_dir=D, the plan as JSON
    (scaling_report.plan_data) to D/scaling_plan_<model>_<UTC time>.json. Returns 0.

    `given`: the names of the flags the command line gave (cli.given_flags), also those at
    their default value: an explicit --num_gpus=1 plans hosts of one GPU, where without the
    flag the multi-host rows have 8 (from_flags.gpus_per_host). `named`: the GPU the flags
    name (hardware/gpu_plans.named_gpu), or None, as the usage check decided it
    (preflight/usage.check_with_tensorflow returns it).

    Raises:
      PlanError: the configuration cannot be planned (one line says what to give).
      cnn_util.BenchmarkError: the PNG or the JSON cannot be written.
    """
    progress.start_probe()
    q, gpus, gpu = planned_step.plan_named_device(
        p._replace(job_name=None, ps_hosts=[], worker_hosts=[], controller_host=None),
        visible_gpus, named)
    if gpu is not None:
        unsupported = gpu_build.unsupported_warning(gpu)
        if unsupported:
            cnn_util.warn(unsupported)
    bench = make_bench(buildable(q), max(1, gpus))
    profile = profile_of(q, bench.plan)
    from_flags.check_num_ps(q, profile)
    counted = counted_lines(make_bench, q, gpu, profile) if gpu is not None else []
    inputs = plan_inputs(q, bench, gpu, profile=profile, counted=counted, given=given)
    for text in inputs.warnings:  # a one-device figure above what its own copies allow
        cnn_util.warn(text)
    try:
        rows = scaling_report.plan_rows(inputs)
    except patterns.UnplannableError as e:
        raise PlanError(str(e)) from None
    for line in scaling_report.format_report(inputs, rows):
        cnn_util.log_fn(line)
    if p.plan_scaling_png:
        try:
            path = scaling_report.write_png(inputs, rows, p.plan_scaling_png,
                                            scaling_report.alternatives(inputs))
        except ImportError:
            raise cnn_util.BenchmarkError(
                '--plan_scaling_png needs matplotlib (pip install matplotlib, or %s); the plan '
                'above is complete without it' % package_info.install_hint('plot')) from None
        except OSError as e:
            raise cnn_util.BenchmarkError('cannot write --plan_scaling_png %s: %s' % (
                p.plan_scaling_png, e.strerror or e)) from None
        cnn_util.log_fn('Figure:           %s' % os.path.abspath(path))
    if p.benchmark_log_dir:  # the plan as JSON, as the dry run writes its report
        from ..lifecycle import results_log
        results_log.write_json(scaling_report.plan_data(inputs, rows), p.benchmark_log_dir,
                               prefix='scaling_plan')
    return 0


def dry_run_lines(p, bench, gpu) -> list[str]:
    """The dry run's 'Predicted step' lines for the run itself (never raises: a configuration
    the model cannot plan is one line saying why; the results database gives the one-device
    figure when the flags give none)."""
    return dry_run_report(p, bench, gpu)[0]


def dry_run_report(p, bench, gpu) -> tuple[list[str], dict]:
    """`dry_run_lines` and the same prediction as plain data (from_flags
    .predicted_step_report) for the dry run's JSON."""
    return from_flags.predicted_step_report(
        p, bench.plan, gpu, find_run=lambda q, device: find_single_device_run(q, device))
