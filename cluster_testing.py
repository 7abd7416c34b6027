"""Test-only hooks of cluster runs, switched on by environment variables (never by flags).

The equivalence tests compare a cluster run with a local `replicated` run on as many devices.
Random initial values and synthetic inputs come from op-level seeds that depend on how many ops
the graph holds before them, and a worker's graph differs from a local one, so equal
--tf_random_seed alone does not give equal values. The test therefore takes the initial
variables and each tower's synthetic batch from the local run and makes the cluster use them:

  TF_CNN_CLUSTER_TEST_INIT=<file.npz>  keys 'var/<checkpoint name>' (initial values) and
      'input/<global tower>/images', 'input/<global tower>/labels' (synthetic batches; global
      tower = task index x devices per worker + local device index). The chief assigns the
      variables after initialising; every worker assigns its towers' batches.
  TF_CNN_CLUSTER_TEST_DUMP=<directory>  each worker writes '<job><index>.npz' at the end of its
      run: 'var/<checkpoint name>' (values after the run), 'losses', 'warmup_losses'.
"""

from __future__ import annotations

import os
import re

import numpy as np
import tensorflow as tf

tf1 = tf.compat.v1

ENV_INIT = 'TF_CNN_CLUSTER_TEST_INIT'
ENV_DUMP = 'TF_CNN_CLUSTER_TEST_DUMP'
_INPUT_VAR = re.compile(r'^synthetic_input_(\d+)/(images|labels)$')


def input_variables(graph) -> dict[tuple[int, str], tf.Variable]:
    """{(local tower index, 'images' or 'labels'): variable} of the synthetic input."""
    found = {}
    for var in graph.get_collection(tf1.GraphKeys.LOCAL_VARIABLES):
        match = _INPUT_VAR.match(var.op.name)
        if match:
            found[(int(match.group(1)), match.group(2))] = var
    return found


def _assign(sess, var, value) -> None:
    with tf1.device(var.device):
        holder = tf1.placeholder(var.dtype.base_dtype, var.shape)
        op = var.assign(holder)
    sess.run(op, feed_dict={holder: value})


def apply_initial_values(sess, info, cluster) -> bool:
    """Chief: assigns the savable variables from $TF_CNN_CLUSTER_TEST_INIT. Returns True when it
    did (the caller then re-runs the post-init copies).

    Raises:
      KeyError: the file lacks one of the model's variables.
    """
    path = os.environ.get(ENV_INIT)
    if not path or not cluster.is_chief:
        return False
    values = np.load(path)
    for name, var in info.mgr.savable_variables().items():
        if name == 'global_step':
            continue
        _assign(sess, var, values['var/' + name])
    return True


def apply_inputs(sess, info, cluster, devices_per_task: int) -> None:
    """Every worker: assigns its towers' synthetic batches from $TF_CNN_CLUSTER_TEST_INIT.

    Raises:
      ValueError: the run has no synthetic input variables.
    """
    path = os.environ.get(ENV_INIT)
    if not path:
        return
    values = np.load(path)
    found = input_variables(info.graph)
    if not found:
        raise ValueError('%s needs synthetic input (no --data_dir)' % ENV_INIT)
    for (tower, kind), var in sorted(found.items()):
        index = cluster.task_index * devices_per_task + tower
        _assign(sess, var, values['input/%d/%s' % (index, kind)])


def dump_result(sess, mgr, cluster, result) -> None:
    """Every worker: writes its variables and losses into $TF_CNN_CLUSTER_TEST_DUMP."""
    directory = os.environ.get(ENV_DUMP)
    if not directory:
        return
    values = sess.run(mgr.savable_variables())
    arrays = {'var/' + name: np.asarray(value) for name, value in values.items()}
    arrays['losses'] = np.asarray(result.get('losses') or [], np.float64)
    arrays['warmup_losses'] = np.asarray(result.get('warmup_losses') or [], np.float64)
    os.makedirs(directory, exist_ok=True)
    np.savez(os.path.join(directory, '%s%d.npz' % (cluster.job_name, cluster.task_index)),
             **arrays)
