"""XLA: --xla_compile and --xla compile the towers and reproduce the non-XLA losses under every
local variable manager; the session options; what the compile scope leaves out."""

import functools
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.protobuf import rewriter_config_pb2

from tf_cnn_benchmarks import benchmark_cnn
from tf_cnn_benchmarks.runtime import xla_jit

import helpers

tf1 = tf.compat.v1
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# The cluster counts here are those of --xla/--xla_compile: without the weight-decay update
# clusters of --fused_weight_decay (tests/test_fused_decay.py runs the two together).
_params = functools.partial(helpers.tiny_params, batch_size=2, init_learning_rate=0.002,
                            fused_weight_decay=False)


def _losses_and_clusters(p, steps=2):
    """Runs `steps` training steps; returns (losses, number of XLA clusters in the step)."""
    bench = benchmark_cnn.BenchmarkCNN(p, gpus=0)
    info = bench.build_graph()
    losses = []
    metadata = tf1.RunMetadata()
    with info.graph.as_default(), bench.create_session(info) as sess:
        bench.initialize(sess, info)
        for step in range(steps):
            options = tf1.RunOptions(output_partition_graphs=True) if step == 0 else None
            _, loss = sess.run([info.train_op, info.loss], options=options,
                               run_metadata=metadata if step == 0 else None)
            losses.append(float(loss))
    clusters = sum(node.op == '_XlaCompile' for g in metadata.partition_graphs for node in g.node)
    return losses, clusters


@pytest.mark.parametrize('kwargs, max_clusters', [
    (dict(), 1),
    (dict(variable_update='replicated', num_gpus=2), None),
    (dict(variable_update='independent', num_gpus=2), None),
    (dict(variable_update='parameter_server', num_gpus=2), None),
    (dict(staged_vars=True), None),
    (dict(model='resnet20', data_name='cifar10', optimizer='momentum', image_size=0), 1),
    (dict(use_fp16=True, fp16_enable_auto_loss_scale=True), 1),
    (dict(use_bf16=True), 1),
], ids=['ps', 'replicated', 'independent', 'ps_2_towers', 'staged_vars', 'resnet20', 'fp16',
        'bf16'])
def test_xla_compile_matches_non_xla_losses(kwargs, max_clusters):
    plain, none = _losses_and_clusters(_params(**kwargs))
    compiled, clusters = _losses_and_clusters(_params(xla_compile=True, **kwargs))
    assert none == 0 and clusters >= 1
    if max_clusters is not None:  # one tower on one device: forward and backward in one cluster
        assert clusters == max_clusters
    # XLA fuses and reorders float arithmetic; bfloat16 rounds differently once fused.
    rtol = 1e-3 if kwargs.get('use_bf16') else 1e-5
    np.testing.assert_allclose(compiled, plain, rtol=rtol)
    if not kwargs.get('staged_vars'):  # staged variables: step 2 still sees the initial values
        assert plain[-1] < plain[0]


_AUTO_SCRIPT = textwrap.dedent('''
    import json, os, sys
    sys.path.insert(0, os.path.join({repo!r}, 'tests'))
    import checkout
    checkout.load()
    from tf_cnn_benchmarks.runtime import runtime_env
    tf = runtime_env.import_tensorflow()  # as the command loads it (without Keras)
    tf.compat.v1.disable_eager_execution()
    import test_xla
    from tf_cnn_benchmarks.runtime import xla_jit
    out = []
    for kwargs in {cases!r}:
        # --xla first: CPU auto-clustering must be enabled before the process's first session.
        out.append([test_xla._losses_and_clusters(test_xla._params(xla=xla, **kwargs))
                    for xla in (True, False)])
    print('RESULT ' + json.dumps([xla_jit.auto_clustering_active(), out]))
''')
AUTO_CASES = [dict(), dict(model='lenet', image_size=28, variable_update='replicated', num_gpus=2)]


def test_xla_auto_clustering_matches_non_xla_losses():
    # Auto-clustering on a CPU is a per-process switch: run in a fresh process (trivial with
    # parameter_server; lenet's convolutions and pooling on two replicated towers).
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL='3')
    proc = subprocess.run(
        [sys.executable, '-c', _AUTO_SCRIPT.format(repo=REPO, cases=AUTO_CASES)],
        capture_output=True, text=True, timeout=300, env=env, cwd=REPO)
    lines = [x for x in proc.stdout.splitlines() if x.startswith('RESULT ')]
    assert proc.returncode == 0 and lines, proc.stderr[-3000:]
    active, cases = json.loads(lines[0][len('RESULT '):])
    assert active
    for (xla_losses, xla_clusters), (plain_losses, plain_clusters) in cases:
        assert xla_clusters >= 1 and plain_clusters == 0
        np.testing.assert_allclose(xla_losses, plain_losses, rtol=1e-5)


def test_xla_after_a_session_warns_and_says_so_in_the_header(capsys, monkeypatch):
    # The run sets TF_XLA_FLAGS in this process's environment (xla_jit.enable_cpu_auto_jit):
    # undone afterwards, so the later tests' subprocesses of this pytest worker do not get it.
    monkeypatch.setenv('TF_XLA_FLAGS', os.environ.get('TF_XLA_FLAGS', ''))
    bench = benchmark_cnn.BenchmarkCNN(_params(xla=True), gpus=0)
    line = next(x for x in bench.info_lines() if x.startswith('XLA:'))
    assert line.startswith('XLA:         auto-clustering (global_jit_level ON_1)')
    if not xla_jit.auto_clustering_active():  # a session ran in this process before
        assert line.endswith(', inactive on CPU')
        assert 'warning: --xla: CPU auto-clustering is inactive' in capsys.readouterr().err


def test_session_options():
    config = benchmark_cnn.make_session_config(_params(xla=True, device='cpu'), 1)
    assert (config.graph_options.optimizer_options.global_jit_level ==
            tf1.OptimizerOptions.ON_1)
    off = rewriter_config_pb2.RewriterConfig.OFF
    one = benchmark_cnn.make_session_config(_params(xla_compile=True, device='cpu'), 1)
    assert one.graph_options.rewrite_options.remapping == off
    assert one.graph_options.rewrite_options.constant_folding == off
    two = benchmark_cnn.make_session_config(_params(xla_compile=True, device='cpu'), 2)
    assert two.graph_options.rewrite_options.constant_folding != off
    plain = benchmark_cnn.make_session_config(_params(device='cpu'), 1)
    assert plain.graph_options.rewrite_options.remapping != off
    assert (plain.graph_options.optimizer_options.global_jit_level !=
            tf1.OptimizerOptions.ON_1)


def test_compile_scope_leaves_out_variables_and_initializers():
    graph = tf.Graph()
    with graph.as_default(), xla_jit.tower_scope(_params(xla_compile=True), 0):
        var = tf1.get_variable('w', [2, 2], initializer=tf1.truncated_normal_initializer())
        y = tf.matmul(tf.ones([1, 2]), var)
    marked = {op.name for op in graph.get_operations()
              if '_XlaCompile' in op.node_def.attr and op.get_attr('_XlaCompile')}
    assert y.op.name in marked
    assert not any(name == 'w' or '/Initializer/' in name or name.endswith('/Assign')
                   for name in marked)
    assert y.op.get_attr('_XlaScope') == b'tf_cnn_benchmarks_tower_0'
    with graph.as_default(), xla_jit.tower_scope(_params(), 0):
        z = tf.ones([1])
    assert '_XlaCompile' not in z.op.node_def.attr


def test_enable_cpu_auto_jit_sets_the_xla_flag(monkeypatch):
    monkeypatch.setenv('TF_XLA_FLAGS', '--tf_xla_min_cluster_size=2')
    xla_jit.enable_cpu_auto_jit()
    assert os.environ['TF_XLA_FLAGS'] == '--tf_xla_min_cluster_size=2 --tf_xla_cpu_global_jit'
    xla_jit.enable_cpu_auto_jit()
    assert os.environ['TF_XLA_FLAGS'].count('--tf_xla_cpu_global_jit') == 1
