"""XLA: auto-clustering for the whole session (--xla) and one compiled cluster per tower
(--xla_compile).

--xla sets the session's global JIT level to ON_1: TensorFlow's auto-clustering pass groups the
compilable ops of the graph into clusters that XLA compiles. On a CPU, TensorFlow auto-clusters only
when the process enabled it before its first session (the `--tf_xla_cpu_global_jit` XLA flag;
measured on TF 2.21: setting it after a session ran has no effect in that process). The entry
script sets it in TF_XLA_FLAGS before importing TensorFlow (cpu_tuning.configure_environment);
library users get `enable_cpu_auto_jit()`, which works while no session ran yet, and a warning
when the probe finds auto-clustering inactive.

--xla_compile builds each tower's forward pass and gradients in one XLA scope (`tower_scope`:
what `tf.xla.experimental.jit_scope()` does, with a fixed `_XlaScope` per tower): every op gets the
`_XlaCompile`/`_XlaScope` attributes and `tf1.gradients` gives the gradient ops their forward op's
scope, so forward and backward of one tower form one cluster (ops XLA cannot compile, e.g.
StagingArea or stateful random ops, stay outside and split it). This works in graph mode on CPU
without any flag (measured on TF 2.21) once two Grappler passes are off (`configure_session`).
`tf.function(jit_compile=True)` does not fit here: the variable managers create variables through
`tf1.get_variable` custom getters while the tower is built, which a tf.function cannot lift.

Measured on TF 2.21 (CPU): both flags work with parameter_server, replicated and independent,
several logical CPU devices, the cluster modes (trivial model on loopback clusters), --staged_vars,
float16 with automatic loss scaling and bfloat16; no combination needs refusing.
"""

from __future__ import annotations

import contextlib
import os
import re

import tensorflow as tf
from tensorflow.core.framework import attr_value_pb2
from tensorflow.core.protobuf import rewriter_config_pb2

from .. import cnn_util
from . import cpu_tuning

tf1 = tf.compat.v1

_probe_result: dict[str, bool] = {}


def enable_cpu_auto_jit() -> None:
    """Lets --xla auto-cluster CPU ops in this process.

    Sets the XLA flag through TensorFlow's C API and TF_XLA_FLAGS (for the case the flags are
    not parsed yet). Effective only before the process's first session: the CPU device records
    its clustering policy when it is first created.
    """
    os.environ['TF_XLA_FLAGS'] = cpu_tuning.with_cpu_global_jit(os.environ.get('TF_XLA_FLAGS'))
    from tensorflow.python.client import pywrap_tf_session
    pywrap_tf_session.TF_SetTfXlaCpuGlobalJit(True)


def auto_clustering_active() -> bool:
    """Whether a session with global_jit_level ON_1 compiles CPU ops with XLA in this process.

    Runs a two-op graph once (cached) and looks for `_XlaCompile` in its partition graphs.
    """
    if 'cpu' not in _probe_result:
        graph = tf.Graph()
        with graph.as_default(), tf1.device('/cpu:0'):
            # Big enough for the default minimum cluster size.
            x = tf1.placeholder(tf.float32, [4, 4])
            y = x
            for _ in range(4):
                y = tf.nn.relu(tf.matmul(y, x) + 1.0)
            y = tf.reduce_sum(y)
        # Private thread pools: a first session with shared ones would fix TensorFlow's
        # process-wide pools at its sizes, ignoring --num_intra_threads/--num_inter_threads.
        config = tf1.ConfigProto(use_per_session_threads=True)
        config.graph_options.optimizer_options.global_jit_level = tf1.OptimizerOptions.ON_1
        metadata = tf1.RunMetadata()
        with tf1.Session(graph=graph, config=config) as sess:
            sess.run(y, {x: [[1.0] * 4] * 4},
                     options=tf1.RunOptions(output_partition_graphs=True),
                     run_metadata=metadata)
        _probe_result['cpu'] = any(node.op == '_XlaCompile' for g in metadata.partition_graphs
                                   for node in g.node)
    return _probe_result['cpu']


def configure_session(config: tf1.ConfigProto, p, num_devices: int = 1) -> None:
    """Sets the session options of --xla and --xla_compile in `config` (no-op without them).

    --xla_compile turns off two Grappler passes that run before XLA's clustering and would
    split a tower's cluster (measured on TF 2.21, CPU): the remapper fuses Conv2D/MatMul with
    their bias and activation into _FusedConv2D/_FusedMatMul ops XLA cannot compile, and
    constant folding replaces shape computations of the backward pass by constants that keep
    control edges from the forward pass, so forward and backward can no longer be one cluster
    without a cycle. With several logical CPU devices constant folding stays on: XLA's own
    folding in cluster encapsulation would put the folded constants of every tower's cluster on
    /cpu:0 and fail with "Multiple CPU devices"; each tower then compiles as a forward and a
    backward cluster.
    """
    if p.xla:
        config.graph_options.optimizer_options.global_jit_level = tf1.OptimizerOptions.ON_1
    if p.xla_compile:
        rewrite = config.graph_options.rewrite_options
        rewrite.remapping = rewriter_config_pb2.RewriterConfig.OFF
        if not (p.device == 'cpu' and (num_devices > 1 or p.job_name)):
            rewrite.constant_folding = rewriter_config_pb2.RewriterConfig.OFF


def prepare(p) -> str:
    """Run-time set-up of the XLA flags; returns the header's XLA text.

    Call before the run's first session. With --xla on a CPU, enables CPU auto-clustering and
    warns (one line) when the probe shows it inactive in this process (a session ran before);
    the run then goes on without auto-clustering.
    """
    parts = []
    if p.xla:
        text = 'auto-clustering (global_jit_level ON_1)'
        if p.device == 'cpu':
            enable_cpu_auto_jit()
            if not auto_clustering_active():
                cnn_util.warn('--xla: CPU auto-clustering is inactive in this process (a session '
                              'ran before TF_XLA_FLAGS=%s was set); the run continues without '
                              'it' % cpu_tuning.XLA_CPU_GLOBAL_JIT_FLAG)
                text += ', inactive on CPU'
        parts.append(text)
    if p.xla_compile:
        parts.append('one compiled cluster per tower (jit_scope)')
    return '; '.join(parts) or 'off'


_VARIABLE_OPS = ('VarHandleOp', 'VarIsInitializedOp', 'VariableV2', 'AssignVariableOp',
                 'AssignAddVariableOp', 'AssignSubVariableOp')
_VARIABLE_SET_UP = re.compile(r'/(Initializer|Assign|IsInitialized)(/|$)')


def _compile_op(node_def) -> bool:
    """Which ops of a tower the --xla_compile scope marks: all but the variables and their
    set-up (they run once; compiled, the initializers' random ops would draw other numbers
    than TensorFlow's and the initial weights would depend on --xla_compile)."""
    return node_def.op not in _VARIABLE_OPS and not _VARIABLE_SET_UP.search(node_def.name)


@contextlib.contextmanager
def tower_scope(p, tower: int):
    """With --xla_compile, marks the ops built inside for XLA compilation as tower `tower`'s
    cluster; without it, does nothing.

    What `tf.xla.experimental.jit_scope` does, with one fixed `_XlaScope` per tower, so that the
    forward pass (built in the tower's variable scope) and the gradients (built later) share
    it: `tf1.gradients` gives each gradient op its forward op's scope, and the ops built
    directly in the scope (summing a variable's gradient contributions, loss-scale division,
    clipping) join too. Variable creation and initializers are left out (`_compile_op`).
    """
    if not p.xla_compile:
        yield
        return
    attrs = {
        '_XlaCompile': lambda node_def: attr_value_pb2.AttrValue(b=_compile_op(node_def)),
        '_XlaScope': attr_value_pb2.AttrValue(s=b'tf_cnn_benchmarks_tower_%d' % tower),
        '_XlaSeparateCompiledGradients': attr_value_pb2.AttrValue(b=False),
    }
    # Graph._attr_scope is how jit_scope itself sets these attributes.
    with tf1.get_default_graph()._attr_scope(attrs):
        yield
