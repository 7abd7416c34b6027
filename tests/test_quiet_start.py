"""TensorFlow's start-up lines (oneDNN notice, CUDA probing, absl's preamble) stay off stderr:
in library use, in the command and in the test run's own processes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from tf_cnn_benchmarks.runtime import runtime_env

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(REPO, 'tests')
CHATTER = ('oneDNN custom operations', 'cudart_stub', 'Could not find cuda drivers',
           'absl::InitializeLog', 'cuInit')

ONEDNN = ('I0000 00:00:1796093307.742795    8660 port.cc:153] oneDNN custom operations are on. '
          'You may see slightly different numerical results.\n')
PREAMBLE = ('WARNING: All log messages before absl::InitializeLog() is called are written to '
            'STDERR\n')
WARN = 'W0000 00:00:1796093307.743140    8660 cpu_feature_guard.cc:10] some warning\n'
ERROR = 'E0000 00:00:1796093307.743140    8660 cuda_executor.cc:1] some error\n'
CUINIT = ('E0000 00:00:1796094356.012584   27609 cuda_platform.cc:52] failed call to cuInit: '
          'INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)\n')


def test_shown_lines_follow_the_log_level():
    text = PREAMBLE + ONEDNN + 'a Python warning\n' + WARN + CUINIT + ERROR
    assert runtime_env.shown_lines(text, 0) == text
    assert runtime_env.shown_lines(text, 1) == 'a Python warning\n' + WARN + ERROR
    assert runtime_env.shown_lines(text, 2) == 'a Python warning\n' + ERROR
    assert runtime_env.shown_lines(text, 3) == 'a Python warning\n'


def test_keras_cannot_load_while_tensorflow_loads_and_can_after(monkeypatch):
    monkeypatch.delitem(sys.modules, 'keras', raising=False)
    with runtime_env.keras_deferred():
        with pytest.raises(ModuleNotFoundError):
            import keras  # noqa: F401
    assert 'keras' not in sys.modules  # the next `import keras` (tf.keras) loads it
    loaded = object()
    monkeypatch.setitem(sys.modules, 'keras', loaded)
    with runtime_env.keras_deferred():  # a Keras already loaded stays
        assert sys.modules['keras'] is loaded
    assert sys.modules['keras'] is loaded


_LIBRARY_RUN = textwrap.dedent('''
    import os, sys
    sys.path.insert(0, {tests!r})
    import checkout
    tfcnn = checkout.load()
    result = tfcnn.run(tfcnn.make_params(model='trivial', batch_size=2, image_size=16,
                                         num_batches=2, num_warmup_batches=0),
                       print_header=False)
    print('RESULT', result['num_steps'], os.environ['TF_CPP_MIN_LOG_LEVEL'],
          'keras' in sys.modules)
''')


def test_library_import_and_run_print_no_tensorflow_chatter(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != 'TF_CPP_MIN_LOG_LEVEL'}
    proc = subprocess.run([sys.executable, '-c', _LIBRARY_RUN.format(tests=TESTS)], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # 2 steps; TF_CPP_MIN_LOG_LEVEL defaulted to 2; Keras not loaded (runtime_env.keras_deferred)
    assert 'RESULT 2 2 False' in proc.stdout
    assert [c for c in CHATTER if c in proc.stderr + proc.stdout] == []


@pytest.mark.cli
def test_the_test_run_prints_no_tensorflow_chatter(tmp_path):
    """pytest with xdist: neither the controller nor the workers print TensorFlow's lines."""
    env = {k: v for k, v in os.environ.items() if k != 'TF_CPP_MIN_LOG_LEVEL'}
    proc = subprocess.run(
        [sys.executable, '-m', 'pytest', '-q', '-n', '1', '-p', 'no:cacheprovider',
         'tests/test_architecture.py::test_the_cycle_finder_finds_a_cycle'],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert '1 passed' in proc.stdout
    assert [c for c in CHATTER if c in proc.stderr + proc.stdout] == []


def test_importing_the_model_registry_prints_no_tensorflow_chatter(tmp_path):
    """The original's scripts import model_config itself (register_model): its model modules
    loaded TensorFlow, whose start-up lines (cudart_stub, oneDNN) went to stderr."""
    env = {k: v for k, v in os.environ.items() if k != 'TF_CPP_MIN_LOG_LEVEL'}
    script = ('import sys; sys.path.insert(0, %r); import checkout; checkout.load(); '
              'from tf_cnn_benchmarks.models import model_config; '
              "print('MODELS', len(model_config.list_models()))" % TESTS)
    proc = subprocess.run([sys.executable, '-c', script], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert 'MODELS ' in proc.stdout
    assert [c for c in CHATTER if c in proc.stderr + proc.stdout] == []
