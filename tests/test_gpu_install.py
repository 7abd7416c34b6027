"""The GPU host's install path (issue 40, item 6): setup.py's `gpu` extra installs TensorFlow
with its CUDA libraries, and a GPU run where no NVIDIA driver is visible is refused before
TensorFlow loads with one line and exit status 2 (--dry_run keeps working without a GPU)."""

from __future__ import annotations

import ast
import os

import pytest
from test_usage_limits import run_mains

from tf_cnn_benchmarks import params
from tf_cnn_benchmarks.hardware import machine
from tf_cnn_benchmarks.preflight import usage

import checkout


def _setup_extras() -> dict:
    """setup.py's extras_require, read as data (setup.py is not run)."""
    tree = ast.parse(open(os.path.join(checkout.REPO, 'setup.py'), encoding='utf-8').read())
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == 'extras_require':
            return ast.literal_eval(node.value)
    raise AssertionError('setup.py has no extras_require')


def test_setup_has_a_gpu_extra_with_tensorflow_and_cuda():
    extras = _setup_extras()
    assert [r for r in extras['gpu'] if r.startswith('tensorflow')] == [
        'tensorflow[and-cuda]>=2.16']


def test_readme_and_docs_give_the_gpu_install():
    """The README's set-up is a checkout's; the GPU page gives both forms the refusal gives."""
    assert usage.GPU_INSTALL == ("pip install 'tf_cnn_benchmarks[gpu]' (in a checkout: pip "
                                 "install -e '.[gpu]')")
    readme = open(os.path.join(checkout.REPO, 'README.md'), encoding='utf-8').read()
    assert "pip install -e '.[gpu]'" in readme
    guide = open(os.path.join(checkout.REPO, 'docs', 'planning-a-gpu-run.md'),
                 encoding='utf-8').read()
    assert "pip install -e '.[gpu]'" in guide and "pip install 'tf_cnn_benchmarks[gpu]'" in guide


@pytest.mark.parametrize('kwargs, refused', [
    (dict(device='gpu'), '--device=gpu'),
    (dict(device='gpu', num_gpus=8), '--device=gpu'),
    (dict(local_parameter_device='gpu'), '--local_parameter_device=gpu'),
    (dict(device='gpu', dry_run=True), None),          # the dry run plans without a GPU
    (dict(device='gpu', plan_scaling=True), None),
    (dict(device='cpu'), None),
    (dict(), None),                                    # no --device: the CPU when no GPU
])
def test_gpu_run_without_a_driver_is_refused(kwargs, refused):
    p = params.make_params(**kwargs)
    if refused is None:
        usage.check_gpu_driver(p, find_driver=lambda: None)
        return
    with pytest.raises(params.ParamsError) as info:
        usage.check_gpu_driver(p, find_driver=lambda: None)
    text = str(info.value)
    assert '\n' not in text
    assert text.startswith('%s, but no GPU is visible; use %s=cpu' % (refused,
                                                                       refused.split('=')[0]))
    assert usage.GPU_INSTALL in text and '/proc/driver/nvidia/version' in text


def test_gpu_run_with_a_driver_passes_the_check():
    usage.check_gpu_driver(params.make_params(device='gpu'),
                           find_driver=lambda: '/proc/driver/nvidia/version')


def test_driver_evidence_reads_proc_libcuda_and_nvidia_smi(monkeypatch):
    monkeypatch.setattr(machine.os.path, 'exists', lambda path: False)
    monkeypatch.setattr(machine.ctypes.util, 'find_library', lambda name: None)
    monkeypatch.setattr(machine.shutil, 'which', lambda name: None)
    assert machine.nvidia_driver_evidence() is None
    monkeypatch.setattr(machine.shutil, 'which',
                        lambda name: '/usr/bin/nvidia-smi' if name == 'nvidia-smi' else None)
    assert machine.nvidia_driver_evidence() == '/usr/bin/nvidia-smi'
    monkeypatch.setattr(machine.ctypes.util, 'find_library',
                        lambda name: 'libcuda.so.1' if name == 'cuda' else None)
    assert machine.nvidia_driver_evidence() == 'libcuda (libcuda.so.1)'
    monkeypatch.setattr(machine.os.path, 'exists',
                        lambda path: path == machine.NVIDIA_DRIVER_VERSION_FILE)
    assert machine.nvidia_driver_evidence() == '/proc/driver/nvidia/version'


@pytest.mark.cli
def test_command_refuses_before_tensorflow_loads(tmp_path):
    if machine.nvidia_driver_evidence() is not None:
        pytest.skip('an NVIDIA driver is visible here: the refusal cannot happen')
    results = run_mains([['--device=gpu', '--model=trivial'],
                         ['--device=gpu', '--num_gpus=8', '--model=trivial']], str(tmp_path))
    for status, err, loaded in results:
        assert (status, loaded, err.count('\n')) == (2, False, 1)
        assert err.startswith('error: --device=gpu, but no GPU is visible; use --device=cpu, '
                              'or on a GPU host install the NVIDIA driver, then pip install '
                              "'tf_cnn_benchmarks[gpu]' (in a checkout: pip install -e "
                              "'.[gpu]'); no NVIDIA driver found here: ")


def test_readme_gpu_command_asks_for_the_gpu():
    """The README's GPU command names --device=gpu: pasted on a host without a GPU it stops
    with the driver line at once instead of a long ResNet-50 run on the CPU."""
    readme = open(os.path.join(checkout.REPO, "README.md"), encoding='utf-8').read()
    commands = [line for line in readme.splitlines()
                if line.startswith("pip install -e '.[gpu]' && tf_cnn_benchmarks")]
    assert len(commands) == 1
    assert '--device=gpu' in commands[0].split()
