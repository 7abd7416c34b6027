"""Benchmark and train CNNs with TensorFlow: `python tf_cnn_benchmarks.py --model=resnet50`.

The entry script of a checkout. The command itself lives in `cli.py` (flags -> Params ->
validate -> BenchmarkCNN(params).run()); this file only makes sure it runs inside the
`tf_cnn_benchmarks` package whichever way it is started:

  * `tf_cnn_benchmarks` (the installed console command), `python -m tf_cnn_benchmarks`
    (__main__.py) and `python -m tf_cnn_benchmarks.tf_cnn_benchmarks`: already inside the
    package, the last two run the command as the console command does;
  * `python tf_cnn_benchmarks.py` in a checkout, and `import tf_cnn_benchmarks` from a program
    whose working directory is the checkout (Python then finds this file before any installed
    package): the folder holding this file is loaded as the package `tf_cnn_benchmarks` and
    takes this module's place in `sys.modules`. Nothing is added to `sys.path`, so the
    project's modules never shadow other libraries (`params`, `signals`, ...) and each is
    loaded once, as `tf_cnn_benchmarks.<name>`.
"""

import importlib.util
import os
import sys


def load_checkout_package(folder: str):
    """Loads `folder` (a checkout: it holds `__init__.py`) as the package `tf_cnn_benchmarks`.

    Returns:
      The package module, also registered in `sys.modules['tf_cnn_benchmarks']`.
    """
    spec = importlib.util.spec_from_file_location(
        'tf_cnn_benchmarks', os.path.join(folder, '__init__.py'),
        submodule_search_locations=[folder])
    package = importlib.util.module_from_spec(spec)
    sys.modules['tf_cnn_benchmarks'] = package
    spec.loader.exec_module(package)
    return package


if __package__:  # a module of the package: the console command, `python -m`
    from .cli import main, run_main  # noqa: F401
    if __name__ == '__main__':  # python -m tf_cnn_benchmarks.tf_cnn_benchmarks
        from . import console

        console.tf_cnn_benchmarks()
else:  # a file of a checkout
    _package = load_checkout_package(os.path.dirname(os.path.abspath(__file__)))
    if __name__ == '__main__':
        from tf_cnn_benchmarks import console  # a quiet Ctrl-C before the command imports

        console.tf_cnn_benchmarks()
    else:  # `import tf_cnn_benchmarks` found this file: the import returns the package
        sys.modules[__name__] = _package
