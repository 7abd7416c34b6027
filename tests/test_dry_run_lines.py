"""Words of the dry run's report (preflight/dry_run.py): the host's memory line, the copies the
design allows, where TensorFlow places a cluster task's ops without a device."""

from __future__ import annotations

import types

import pytest
import tensorflow as tf

from tf_cnn_benchmarks.hardware import gpu_specs
from tf_cnn_benchmarks.params import make_params
from tf_cnn_benchmarks.preflight import dry_run, gpu_kernels, memory_estimate

GIB = 1 << 30
V100 = gpu_specs.lookup('V100')


def test_the_host_line_calls_its_figure_usable_and_says_how_it_is_made(monkeypatch):
    # It said '19.92 GiB available (MemAvailable)' of 0.9 x (MemAvailable - 256 MiB).
    monkeypatch.setattr(memory_estimate, 'host_available_bytes',
                        lambda: (10 * GIB + (256 << 20), 'MemAvailable'))
    usable = memory_estimate.host_memory()
    assert usable == 9 * GIB
    fits = {'/GPU:0': (GIB, int(V100.memory_bytes * 0.9)), 'host': (GIB, usable),
            '/job:ps/task:0': (GIB, usable)}
    lines = dry_run.memory_lines(fits, V100, [])
    (host,) = [x for x in lines if x.strip().startswith('host')]
    assert host.endswith('1.00 GiB of 9.00 GiB usable (90% of 10.25 GiB available '
                         '(MemAvailable) less 256.0 MiB): fits')
    (ps,) = [x for x in lines if 'job:ps' in x]
    assert 'usable (its host planned as this one: 90% of 10.25 GiB' in ps
    assert not any('available (MemAvailable):' in x for x in lines)


def _budget(**flags):
    p = make_params(model='trivial', device='gpu', **flags)
    built = types.SimpleNamespace(model_bytes=1000, batch_bytes=10)
    return dry_run.traffic_budget(p, p.num_gpus, built)


def test_no_gpu_to_gpu_copies_are_allowed_where_the_design_makes_none():
    # 'GPU->GPU 0 B in 0 tensors (the design allows ...)' was printed for pscpu and for one-GPU
    # workers: the budget allowed copies between GPUs that these steps never make.
    assert _budget(num_gpus=2, variable_update='replicated')['GPU->GPU'] == 4000
    assert _budget(num_gpus=2, variable_update='replicated',
                   all_reduce_spec='pscpu')['GPU->GPU'] == 0
    assert _budget(num_gpus=2, variable_update='replicated',
                   all_reduce_spec='pscpu/pscpu#2')['GPU->GPU'] == 0
    assert _budget(num_gpus=2, variable_update='replicated',
                   all_reduce_spec='pscpu:32k:xring')['GPU->GPU'] == 4000
    assert _budget(num_gpus=1, variable_update='replicated')['GPU->GPU'] == 0
    worker = dict(variable_update='distributed_replicated', job_name='worker', task_index=0,
                  ps_hosts=['h0:1'], worker_hosts=['h0:2', 'h1:2'])
    assert _budget(num_gpus=1, **worker)['GPU->GPU'] == 0
    assert _budget(num_gpus=2, **worker)['GPU->GPU'] == 4000


def test_a_cluster_tasks_ops_without_a_device_are_placed_on_its_own_task():
    # 'placed by TensorFlow on /GPU:0 5' beside '/job:worker/task:0/GPU:0 894': the five were
    # the worker's too.
    graph = tf.Graph()
    with graph.as_default():
        with tf.compat.v1.device('/job:worker/task:0/device:GPU:0'):
            x = tf.compat.v1.placeholder(tf.float32, [4], name='x')
        y = tf.identity(x, name='unplaced')  # an op with a GPU kernel and no device
        tf.strings.as_string(y, name='on_cpu')  # no GPU kernel
    placed = gpu_kernels.placed_devices(graph)
    assert placed['unplaced'] == '/job:worker/task:0/GPU:0'
    assert placed['on_cpu'] == '/job:worker/task:0/CPU:0'
    local = tf.Graph()
    with local.as_default():
        with tf.compat.v1.device('/device:GPU:0'):
            x = tf.compat.v1.placeholder(tf.float32, [4], name='x')
        tf.identity(x, name='unplaced')
    assert gpu_kernels.placed_devices(local)['unplaced'] == '/GPU:0'


def _documented_example() -> list[str]:
    import os

    from checkout import REPO
    with open(os.path.join(REPO, 'docs', 'planning-a-gpu-run.md'), encoding='utf-8') as f:
        text = f.read()
    start = text.index('$ tf_cnn_benchmarks --dry_run --gpu_model=V100 --model=resnet50 '
                       '--num_gpus=8')
    return text[start:text.index('```', start)].splitlines()


#: The example's lines that do not depend on the host's speed or memory, by their start.
_STABLE = ('Ops per device:', 'Ops without a device:', 'Ops on a GPU', 'Copies per step',
           '  GPU->GPU', '  (NCCL', '  /GPU:0', '  /GPU:1', 'Predicted step:', '  ' * 9)


@pytest.mark.slow
def test_the_planning_pages_8_gpu_example_is_what_the_command_prints(monkeypatch, capsys):
    # Its output had drifted: 31099 ops against 31129, /CPU:0 38 against 62, 7160 ops
    # without a device against 7166, host '52 B' against '177 B'.
    from tf_cnn_benchmarks import benchmark_cnn
    documented = _documented_example()
    monkeypatch.setattr(dry_run, 'largest_batch', lambda *args: dry_run.LargestBatch(185))
    p = make_params(model='resnet50', num_gpus=8, variable_update='replicated', use_nccl=True,
                    dry_run=True, gpu_model='V100')
    assert dry_run.run(lambda q, gpus: benchmark_cnn.BenchmarkCNN(q, gpus=gpus), p, 0) == 0
    printed = capsys.readouterr().out.splitlines()
    graph = next(x for x in printed if x.startswith('Graph:'))
    assert graph.split(' ops,')[0] in '\n'.join(documented)
    for line in documented:
        if line.startswith(_STABLE):
            assert line in printed, line
    host = next(x for x in documented if x.strip().startswith('host'))
    assert any(x.startswith(host.split(' of ')[0] + ' of ') for x in printed), host
