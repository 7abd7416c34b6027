"""`python -m tf_cnn_benchmarks`: the `tf_cnn_benchmarks` command (cli.py).

`python -m` puts the working folder first on sys.path, so a folder there named
`tf_cnn_benchmarks` without an `__init__.py` (a --train_dir or --benchmark_log_dir of that name,
a stray copy in /tmp) is found before an editable install, whose finder Python asks after its
own: that folder becomes the package, a namespace package whose `__init__` never runs. The
modules of the command still came from the install (its finder serves the package's modules),
so runs worked, but `--version`, the one answer that reads a name of the package's `__init__`
(`__version__`: console.version_line), failed with an ImportError traceback.
`_own_package` loads the folder of this file as the package first, so every answer reads the
one package this command belongs to.
"""

import os
import sys


def _own_package() -> None:
    """Registers this file's folder as the package `tf_cnn_benchmarks` (its `__init__` run)
    unless the package imported already is that folder's."""
    here = os.path.dirname(os.path.realpath(__file__))
    loaded = getattr(sys.modules.get(__package__), '__file__', None)
    if loaded and os.path.dirname(os.path.realpath(loaded)) == here:
        return
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        __package__, os.path.join(here, '__init__.py'), submodule_search_locations=[here])
    package = importlib.util.module_from_spec(spec)
    sys.modules[__package__] = package
    spec.loader.exec_module(package)


if __name__ == '__main__':
    _own_package()
    from . import console

    console.tf_cnn_benchmarks()
