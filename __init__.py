"""tf_cnn_benchmarks: CNN training benchmarks for TensorFlow in the TF1 graph-and-session style.

The library API (the `tf_cnn_benchmarks` command is `cli.py`):

    import tf_cnn_benchmarks as tfcnn

    p = tfcnn.make_params(model='resnet50', batch_size=16, num_batches=10, device='cpu')
    result = tfcnn.run(p)   # dict: images_per_sec, losses, step_times, params, environment...
    tfcnn.list_models()     # ['alexnet', 'densenet121', 'googlenet', ...] (ImageNet's)

The original's calls work too (`benchmark_cnn.make_params`, `setup`, `BenchmarkCNN(p).run()`,
`models.model_config.register_model`); docs/python-api.md says more, signals and environment
variables included.

Errors: `ParamsError` (an invalid parameter or combination: a usage error), `UnknownModelError`
(a model name the registry does not know, or not defined for the dataset), `BenchmarkError`
(a runtime problem the user can fix) and its kinds `DataError`, `ClusterError`,
`CheckpointError`, `NonFiniteLossError`.

Importing the package loads neither TensorFlow nor any model (nor do `list_models` and
`UnknownModelError`): `run`, `BenchmarkCNN`, `CheckpointError` and `NonFiniteLossError` load them
on first use (TensorFlow reads its environment, which they prepare, when it is imported: oneDNN,
the BFC allocator and TF_CPP_MIN_LOG_LEVEL=2 unless set; runtime/runtime_env.py says more).

Layout, by concern (docs/CONTRIBUTING.md says more):

    tf_cnn_benchmarks.py, cli.py   the command        params/, run_plan.py    flags -> plan
    benchmark_cnn.py               one run
    preprocessing.py               input pipelines    variable_mgr.py, variable_managers/
    models/                        the networks       input_data/   datasets, image ops
    graph/       every op of the step: towers, train op, learning rate, precision choices
    lifecycle/   the loop, its phases and hooks: checkpoints, eval, summaries, signals, results
    metrics/     every reported figure and gate: utilisation, latency, baseline, significance
    preflight/   will it run: usage check, dry run, memory check, output paths, kernels, traffic
    runtime/     TensorFlow's environment, threads, GPU and session options, XLA
    hardware/    what the machine is: CPU and GPUs, GPU table, measured peaks and kernels
    cluster/     topology, servers, coordination, cluster variable managers
    tools/       converter, cluster launcher, sweep  bench/, tests/
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # loaded on first use (`__getattr__`): importing the package stays instant
    from .params import Params

__all__ = ['BenchmarkCNN', 'BenchmarkError', 'CheckpointError', 'ClusterError', 'DataError',
           'NonFiniteLossError', 'Params', 'ParamsError', 'UnknownModelError', 'list_models',
           'make_params', 'run']



def run(params: Params, *, hooks=(), print_header: bool = True) -> dict:
    """Runs one benchmark in this process, as the command does, and returns its result.

    Args:
      params: from `make_params(**flags)`; validated and resolved here.
      hooks: extra `lifecycle.run_hooks.RunHook`s (called after the run's own, phase by phase).
      print_header: print the header block (TensorFlow version, model, batch sizes, ...).

    Returns:
      The result dict of `BenchmarkCNN.run` (images_per_sec in images/sec, losses, step_times
      in seconds, params, environment, ...; `lifecycle/results_log.py` lists every key).

    Raises:
      ParamsError, UnknownModelError: invalid parameters.
      BenchmarkError: data, checkpoint, cluster or non-finite-loss problems, a --train_dir
        held by another run (runtime.dir_hold.HeldError), a failed --baseline gate.
      lifecycle.signals.Terminated: SIGTERM or SIGHUP stopped the run (a SystemExit, code 143
        or 129). A first SIGINT raises nothing: the result's 'stopped_by_signal' is 'SIGINT';
        a second signal ends the process (os._exit): docs/python-api.md.
    """
    from . import benchmark_cnn  # prepares TensorFlow's environment, then imports it quietly

    bench = benchmark_cnn.BenchmarkCNN(params, hooks=hooks)
    if print_header:
        bench.print_info()
    return bench.run()


def list_models(dataset: str = 'imagenet') -> list[str]:
    """The model names defined for `dataset` ('imagenet' or 'cifar10'), sorted."""
    from .models import model_catalog  # plain data: no TensorFlow

    return model_catalog.names(dataset)


def __getattr__(name: str):
    """The names that need TensorFlow, loaded on first use (TensorFlow's environment set and
    its start-up lines kept off stderr: runtime/runtime_env.py); the others too, so that
    importing the package loads nothing (console.py's Ctrl-C handler comes first).
    `__version__` is package_info.VERSION (written once; setup.py reads it too)."""
    if name == '__version__':
        from .package_info import VERSION
        return VERSION
    if name in ('BenchmarkError', 'ClusterError', 'DataError'):
        from . import cnn_util
        return getattr(cnn_util, name)
    if name in ('Params', 'ParamsError', 'make_params'):
        from . import params
        return getattr(params, name)
    if name in ('BenchmarkCNN', 'CheckpointError', 'NonFiniteLossError'):
        from .runtime import runtime_env
        runtime_env.import_tensorflow()
    if name == 'BenchmarkCNN':
        from .benchmark_cnn import BenchmarkCNN
        return BenchmarkCNN
    if name == 'UnknownModelError':  # no TensorFlow
        from .models.model_catalog import UnknownModelError
        return UnknownModelError
    if name == 'CheckpointError':
        from .lifecycle.checkpoints import CheckpointError
        return CheckpointError
    if name == 'NonFiniteLossError':
        from .lifecycle.training_loop import NonFiniteLossError
        return NonFiniteLossError
    raise AttributeError('module %r has no attribute %r' % (__name__, name))
