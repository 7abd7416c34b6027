"""Test set-up: the checkout as the package under test, TensorFlow quiet and in graph mode,
shared data paths.

TensorFlow loads in the processes that run tests (pytest-xdist's workers, or pytest itself
without -n), through runtime/runtime_env.import_tensorflow, which keeps its start-up lines off
stderr; xdist's controller runs no test and never loads it.
"""

import atexit
import gc
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
# The OpenMP variables a run's header names when set (runtime/cpu_tuning.py: KMP_BLOCKTIME,
# KMP_AFFINITY, KMP_SETTINGS, OMP_NUM_THREADS), which the command sets only where they are
# unset: a host that sets one (OMP_NUM_THREADS=1 in many CI images) changed the tests' header
# lines. The tests and their subprocesses run without them unless a test sets them.
from tf_cnn_benchmarks.runtime import cpu_tuning  # noqa: E402 (no TensorFlow: controller-safe)

for _name in cpu_tuning._MANAGED_VARIABLES:
    os.environ.pop(_name, None)
# oneDNN on, as the command's default (runtime/runtime_env.py) sets it where it is unset: the
# tests' NCHW and kernel expectations are its; a host with TF_ENABLE_ONEDNN_OPTS=0 in its
# environment (TensorFlow's start-up line suggests it) failed them.
os.environ['TF_ENABLE_ONEDNN_OPTS'] = '1'
# The caches of the tests and their subprocesses (shard scans: input_data/shard_scan.py; the
# CPU peak and kernel speeds, measured in seconds each: hardware/) stay out of the user's cache
# directory. One cache for the whole session: pytest-xdist's workers inherit the folder the
# controller made (it removes it), so a figure measured by one worker is read by the other.
if 'TF_CNN_TESTS_CACHE_HOME' not in os.environ:  # the controller, or pytest without -n
    os.environ['TF_CNN_TESTS_CACHE_HOME'] = tempfile.mkdtemp(prefix='tf_cnn_tests_cache_')
    atexit.register(shutil.rmtree, os.environ['TF_CNN_TESTS_CACHE_HOME'], True)
os.environ['XDG_CACHE_HOME'] = os.environ['TF_CNN_TESTS_CACHE_HOME']
# Matplotlib's config folder (plots: history/plots.py, the sweep's, --plot_file) too: by default
# ~/.config/matplotlib, which it makes; where $HOME cannot be written it warns on stderr of
# every process that imports it, and the tests' stderr would depend on the host's $HOME.
os.environ['MPLCONFIGDIR'] = os.path.join(os.environ['TF_CNN_TESTS_CACHE_HOME'], 'matplotlib')
# So does the results database every finished run records into (history/store.py): the tests
# never write into the user's own.
os.environ['XDG_DATA_HOME'] = tempfile.mkdtemp(prefix='tf_cnn_tests_data_')
os.environ.pop('TF_CNN_RESULTS_DB', None)  # the user's own database, named by its variable
atexit.register(shutil.rmtree, os.environ['XDG_DATA_HOME'], True)
# The tests' workers share the cores, so every run would see a busy host: its `warning:` line
# stays off stderr (metrics/host_load.py; the Host load line and result keys are unchanged).
os.environ['TF_CNN_BUSY_HOST_WARNING'] = '0'
# No test reads what this host measured, nor measures it in passing (issue 39.3): the
# calibration record is off (hardware/calibration.py), so every run uses today's graph, no
# CPU peak, and the precision rules of the CPU's flags; a test that needs a figure injects it
# (a record it writes, under TF_CNN_CALIBRATION=<its file>, or a measure_fn / probe stand-in).
os.environ['TF_CNN_CALIBRATION'] = 'off'
# Nor its container's CPU quota (hardware/cpu_quota.py): the default threads, the header's
# Threads line and the host load's share stay the same in a container with `--cpus`; a test of
# the quota injects its cgroup files.
os.environ['TF_CNN_CPU_QUOTA'] = 'off'
from tf_cnn_benchmarks.runtime import runtime_env  # noqa: E402


def pytest_configure(config):
    """Loads TensorFlow in graph mode, except in pytest-xdist's controller."""
    if getattr(config, 'workerinput', None) is None and getattr(config.option, 'numprocesses',
                                                                None):
        return
    runtime_env.import_tensorflow().compat.v1.disable_eager_execution()


def pytest_collection_finish(session):
    """Takes every object alive once the tests are collected (TensorFlow's and the test
    modules' hundreds of thousands, alive to the end) out of the garbage collector's reach
    (gc.freeze), as the command does before it exits (runtime_env.exit_process): each full
    collection of a test process walked them all again (11.5 s of 244 CPU seconds in five
    model-building test files; 6.7 s frozen). Objects made later, the tests' graphs among
    them, are collected as before."""
    del session
    gc.freeze()


SHARED_DATA = os.path.join(os.path.dirname(REPO), 'shared', 'data')
IMAGENET_TFRECORDS = os.path.join(SHARED_DATA, 'imagenet_tfrecords')


@pytest.fixture(scope='session')
def sample_imagenet_dir(tmp_path_factory):
    """ImageNet-format shards shaped like the shared ones (512 train records in 8 shards, 128
    validation in 2, labels within ImageNet's 1001 classes), built once per test process with
    the project's converter over generated images (input_helpers.build_sample_imagenet)."""
    import input_helpers
    return input_helpers.build_sample_imagenet(str(tmp_path_factory.mktemp('sample_data')))


@pytest.fixture
def imagenet_dir(request):
    """The real ImageNet-format shards in ../shared/data; where that folder is absent (a clone
    of the project alone), the generated sample_imagenet_dir of the same shape."""
    # TF_CNN_TESTS_SAMPLE_DATA=1 uses the generated set even where the shared one is present
    # (to check that a clone of the project alone passes).
    if os.path.isdir(IMAGENET_TFRECORDS) and not os.environ.get('TF_CNN_TESTS_SAMPLE_DATA'):
        return IMAGENET_TFRECORDS
    return request.getfixturevalue('sample_imagenet_dir')


@pytest.fixture
def tiny_run():
    """helpers.tiny_run: runs the trivial model on tiny inputs in process; kwargs override."""
    import helpers
    return helpers.tiny_run


@pytest.fixture
def calibration_record(tmp_path, monkeypatch):
    """A calibration record of the test's own (TF_CNN_CALIBRATION=<tmp file>: no figure of
    this host in it) on a quiet host (a fake load meter); the path of the record."""
    from tf_cnn_benchmarks.hardware import calibration

    import helpers
    path = tmp_path / 'calibration.json'
    monkeypatch.setenv('TF_CNN_CALIBRATION', str(path))
    monkeypatch.setattr(calibration, 'new_meter', lambda cores: helpers.FakeMeter(0.0, cores))
    yield path
