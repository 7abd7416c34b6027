"""Test set-up: the checkout as the package under test, TensorFlow quiet and in graph mode,
shared data paths.

TensorFlow loads in the processes that run tests (pytest-xdist's workers, or pytest itself
without -n), through runtime/runtime_env.import_tensorflow, which keeps its start-up lines off
stderr; xdist's controller runs no test and never loads it.
"""

import atexit
import os
import shutil
import tempfile

import pytest

import checkout

REPO = checkout.REPO
checkout.load()
os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
# A run with the default --cluster_resolver=auto takes its cluster from TF_CONFIG or a Slurm step:
# the tests and their subprocesses run without them unless a test sets them.
for _name in [n for n in os.environ if n == 'TF_CONFIG' or n.startswith('SLURM')]:
    del os.environ[_name]
# The shard scan cache (input_data/shard_scan.py) of the tests and their subprocesses stays out
# of the user's cache directory.
os.environ['XDG_CACHE_HOME'] = tempfile.mkdtemp(prefix='tf_cnn_tests_cache_')
atexit.register(shutil.rmtree, os.environ['XDG_CACHE_HOME'], True)
# So does the results database every finished run records into (history/store.py): the tests
# never write into the user's own.
os.environ['XDG_DATA_HOME'] = tempfile.mkdtemp(prefix='tf_cnn_tests_data_')
atexit.register(shutil.rmtree, os.environ['XDG_DATA_HOME'], True)
# The tests' workers share the cores, so every run would see a busy host: its `warning:` line
# stays off stderr (metrics/host_load.py; the Host load line and result keys are unchanged).
os.environ['TF_CNN_BUSY_HOST_WARNING'] = '0'
from tf_cnn_benchmarks.runtime import runtime_env  # noqa: E402


def pytest_configure(config):
    """Loads TensorFlow in graph mode, except in pytest-xdist's controller."""
    if getattr(config, 'workerinput', None) is None and getattr(config.option, 'numprocesses',
                                                                None):
        return
    runtime_env.import_tensorflow().compat.v1.disable_eager_execution()

SHARED_DATA = os.path.join(os.path.dirname(REPO), 'shared', 'data')
IMAGENET_TFRECORDS = os.path.join(SHARED_DATA, 'imagenet_tfrecords')


@pytest.fixture
def imagenet_dir():
    """The real ImageNet-format shards in ../shared/data; skips where ../shared is absent."""
    if not os.path.isdir(IMAGENET_TFRECORDS):
        pytest.skip('../shared/data/imagenet_tfrecords is absent (needs the shared folder beside '
                    'the checkout)')
    return IMAGENET_TFRECORDS


@pytest.fixture
def tiny_run():
    """helpers.tiny_run: runs the trivial model on tiny inputs in process; kwargs override."""
    import helpers
    return helpers.tiny_run
