"""Loads the checkout under test as the package `tf_cnn_benchmarks` (tests and their subprocesses).

The checkout's folder is the package (setup.py maps it), so it is loaded from its path rather
than found on `sys.path`: an installed copy elsewhere, or the entry script `tf_cnn_benchmarks.py`
beside it, can then never stand in for it. A subprocess script does
`sys.path.insert(0, TESTS); import checkout; checkout.load()`.
"""

import importlib
import importlib.machinery
import importlib.util
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load(folder: str = REPO):
    """Registers `folder` as `tf_cnn_benchmarks` in sys.modules (once) and returns the package."""
    loaded = sys.modules.get('tf_cnn_benchmarks')
    if loaded is not None and list(getattr(loaded, '__path__', [])) == [folder]:
        return loaded
    # The entry script of the checkout loads it as the package (load_checkout_package) when it
    # is imported as a file; the tests thereby use the very loader users' checkouts use.
    spec = importlib.util.spec_from_file_location(
        '_tf_cnn_benchmarks_entry', os.path.join(folder, 'tf_cnn_benchmarks.py'))
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
    return sys.modules['tf_cnn_benchmarks']


def load_bench(name: str):
    """Imports bench/<name>.py as `bench.<name>`, as `python -m bench.<name>` in the checkout
    does (bench/ is a namespace package of scripts, not part of tf_cnn_benchmarks), after
    loading the checkout as the package."""
    load()
    if 'bench' not in sys.modules:
        spec = importlib.machinery.ModuleSpec('bench', None, is_package=True)
        package = importlib.util.module_from_spec(spec)
        package.__path__ = [os.path.join(REPO, 'bench')]
        sys.modules['bench'] = package
    return importlib.import_module('bench.' + name)
