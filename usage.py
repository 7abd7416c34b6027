"""The usage check of a run's flags, before TensorFlow loads: one function for the command
(cli.py) and the sweep's check of each configuration (tools/sweep.py).

    Params --resolve the cluster's fields--> --flag rules--> --output paths--> --model--> ok

Loads no TensorFlow (the TF_CONFIG and Slurm resolvers load it when they are used).
"""

from __future__ import annotations

import importlib.util

from . import cnn_util, params
from .cluster import resolvers
from .hardware import gpu_specs
from .input_data import dataset_info
from .metrics import baseline
from .models import model_catalog
from .preflight import output_paths


def check_usage(p: params.Params, *, resolve: bool = True, paths: bool = True,
                model: bool = True) -> resolvers.Resolution:
    """Every check of the flags that needs no TensorFlow, in order.

    Args:
      p: the Params as parsed.
      resolve: fill in the cluster's fields first (--cluster_resolver: host flags, TF_CONFIG,
        Slurm; cluster/resolvers.py); else the Params are checked as given.
      paths: check that every output path can be written (preflight/output_paths.py).
      model: refuse an unknown --model, or one not defined for the dataset (`check_model`).

    Returns:
      The cluster/resolvers.Resolution: its params are the ones to run with (`p` itself, with
      no cluster source, when `resolve` is False).

    Raises:
      params.ParamsError: a flag rule is broken (params.validate_params, check_command_rules,
        check_gpu_model, check_extras),
        an output path cannot be written, or the cluster does not resolve.
      model_catalog.UnknownModelError: naming the closest models and the valid ones.
    """
    resolution = resolvers.resolve(p) if resolve else resolvers.Resolution(p, p.cluster_resolver)
    params.validate_params(resolution.params)
    check_command_rules(resolution.params)
    check_gpu_model(resolution.params)
    check_extras(resolution.params)
    if paths:
        output_paths.check_output_paths(resolution.params)
    if model:
        check_model(resolution.params)
    return resolution


def check_command_rules(p: params.Params) -> None:
    """Rules of a command-line run that library callers may break (tests build an eval graph
    without a checkpoint).

    Raises:
      params.ParamsError: --eval without --train_dir or --checkpoint_path.
    """
    if p.eval and not (p.train_dir or p.checkpoint_path):
        raise params.ParamsError('--eval needs a checkpoint: give --train_dir (a training run\'s '
                                 'directory) or --checkpoint_path')


def check_extras(p: params.Params) -> None:
    """What optional outputs and inputs need: matplotlib for --plot_file, a readable results
    JSON for --baseline (its configuration is compared once the run's is resolved).

    Raises:
      params.ParamsError: matplotlib is missing, or the --baseline file is unreadable
        (metrics/baseline.py's BaselineError).
    """
    if p.plot_file and importlib.util.find_spec('matplotlib') is None:
        raise params.ParamsError(
            '--plot_file needs matplotlib, which is not installed: pip install matplotlib (or '
            'pip install "tf_cnn_benchmarks[plot]"), or drop --plot_file')
    if p.baseline:
        baseline.load(p.baseline)


def check_gpu_model(p: params.Params) -> None:
    """--gpu_model names a GPU of hardware/gpu_specs.py and is asked for a GPU run.

    Raises:
      params.ParamsError: an unknown GPU name (the message lists the known ones), or
        --gpu_model with --device=cpu.
    """
    if p.gpu_model is None:
        return
    try:
        gpu_specs.lookup(p.gpu_model)
    except gpu_specs.UnknownGpuError as e:
        raise params.ParamsError('--gpu_model: %s' % e) from None
    if p.device == 'cpu':
        raise params.ParamsError('--gpu_model plans a GPU run; drop it or drop --device=cpu.')


def check_model(p: params.Params) -> None:
    """Refuses an unknown --model before TensorFlow loads (models/model_catalog.py).

    The dataset is --data_name, synthetic without --data_dir, else inferred from the names of
    the files in --data_dir; when that fails, nothing is checked here (the run then reports the
    data problem).

    Raises:
      model_catalog.UnknownModelError: naming the closest models and the valid ones.
    """
    dataset = p.data_name or (None if p.data_dir else 'synthetic')
    if dataset is None:
        try:
            dataset = dataset_info.infer_dataset_name(p.data_dir)
        except cnn_util.DataError:
            return
    model_catalog.check_model(p.model, dataset)
