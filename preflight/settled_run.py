"""A run's settled plan: from its checked flags to the run plan with every value resolved, once,
after TensorFlow loads and before the graph (BenchmarkCNN receives it).

    run = settled_run.settle(params, visible_gpus, checked)   # SettledRun
    run.plan     # run_plan.RunPlan: devices, batch, dtypes, threads, XLA, session options

    CheckedRun --params.resolve_params--> the dataset, the model, the cluster
        --run_plan.make_plan (dtypes, thread counts)--> --the --baseline loaded and compared-->
        --runtime/session_config.settle (XLA's flags, NUMA, session options)-->
        --graph/precision.probe_shapes (a reduced-precision CPU run's largest convolution and
          matmul, its kernel factors' shapes)-->
        --graph/graph_choices.resolve (a training graph's forms)--> SettledRun

Without a CheckedRun (a library caller) the command's checks run here first
(preflight/usage.py: `check_usage` without the command-line rules, `check_with_tensorflow`).
The graph choices come after XLA's flags (their probe, with --calibrate or --refresh_peak, runs
sessions); on a CPU they read the host's calibration record. A task that only serves (a ps)
builds no graph: its plan has none.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

from .. import params as params_lib
from .. import run_plan
from ..cluster import resolvers, topology
from ..graph import graph_choices, precision
from ..history import run_flags
from ..input_data import dataset_info
from ..metrics import baseline, configuration
from ..models import model_config
from ..params import graph_choice_flag
from ..runtime import cpu_tuning, file_systems, session_config
from . import usage


class SettledRun(NamedTuple):
    """What a BenchmarkCNN runs with.

    Attributes:
      plan: the run_plan.RunPlan, its run-time values set (runtime/session_config.settle) and
        its graph choices resolved (None for a task that only serves).
      given_params: the checked Params before the machine's defaults were filled in (the
        flags as given, for the steps of this run at other flags: planned_step.build_step).
      model: the models.model.CNNModel; dataset: the input_data.dataset_info.Dataset.
      cluster: the cluster.topology.Cluster of a cluster task, else None.
      resolution: the cluster/resolvers.Resolution the Params come from.
      stored_baseline: the --baseline result, its configuration checked against the run's
        (metrics/baseline.py check_config), or None.
    """
    plan: run_plan.RunPlan
    given_params: params_lib.Params
    model: object
    dataset: dataset_info.Dataset
    cluster: topology.Cluster | None
    resolution: resolvers.Resolution
    stored_baseline: dict | None


def settle(p: params_lib.Params, visible_gpus: int,
           checked: usage.CheckedRun | None = None) -> SettledRun:
    """The run `p` describes on this host, settled (module docstring).

    Args:
      p: the Params (unused when `checked` is given: its params are the run's).
      visible_gpus: GPUs TensorFlow sees.
      checked: the command's usage.CheckedRun (nothing is checked again), or None.

    Raises:
      params.ParamsError: invalid flags, a cluster that does not resolve, more GPUs asked for
        than are visible, a --baseline of another configuration.
      model_config.UnknownModelError: the model is not defined for the dataset.
      cnn_util.DataError: the data directory is missing, empty or corrupt.
    """
    if checked is None:  # a library caller: the command's checks, once, here
        checked = usage.check_usage(p, command=False)
        usage.check_with_tensorflow(checked.params, visible_gpus)
    q = params_lib.resolve_params(checked.params, visible_gpus)
    dataset = dataset_info.get_dataset(q)
    model = model_config.get_model(q.model, dataset.name)
    cluster = topology.Cluster(q) if q.job_name else None
    plan = run_plan.make_plan(
        q, model=model, dataset=dataset, visible_gpus=visible_gpus, cluster=cluster,
        subset=dataset_info.default_subset(q), dtypes=precision.compute_dtypes(q),
        cluster_source=checked.resolution.description, threads=cpu_tuning.thread_counts(q),
        given_num_batches=checked.params.num_batches)
    stored, q = checked.baseline, plan.params
    if stored is None and file_systems.is_remote(q.baseline) and not q.eval:
        stored = baseline.load(q.baseline)  # through TensorFlow: not in the usage check
    if stored is not None:  # the configuration as the run resolved it: devices, workers, data
        stored = baseline.check_config(stored, q.baseline, q, dict(configuration.of_result({
            'params': q._asdict(), 'plan': {'dataset': plan.dataset},
            'num_devices': len(plan.devices), 'num_workers': plan.num_workers,
            'per_device_batch_size': plan.per_device_batch_size,
            'image_size': plan.image_size}), cpus_allowed=baseline.run_cpus()))
    # XLA's flags and the options of every session of this run (training, evaluation, frozen
    # inference; a cluster task's server): once, before the first session.
    plan = session_config.settle(plan)
    if checked.given is not None:
        plan = dataclasses.replace(plan, given_flags=run_flags.given_values(checked.given))
    # The shapes its reduced-precision kernels are timed at (hardware/kernel_speed.py).
    plan = dataclasses.replace(plan, kernel_shapes=precision.probe_shapes(plan))
    if cluster is None or not cluster.serves:
        choices = (graph_choices.resolve(plan, model) if plan.training
                   else graph_choices.Choices(graph_choice_flag.OFF, {}, ''))
        plan = dataclasses.replace(plan, graph_choices=choices)
    return SettledRun(plan, checked.params, model, dataset, cluster, checked.resolution, stored)

