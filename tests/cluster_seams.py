"""Test seams of cluster runs: a RunHook that sets initial values and dumps results, and the
task entry script that adds it (production code has no test switches; it takes hooks).

The equivalence tests compare a cluster run with a local `replicated` run on as many devices.
Random initial values and synthetic inputs come from op-level seeds that depend on how many ops
the graph holds before them, and a worker's graph differs from a local one, so equal
--tf_random_seed alone does not give equal values. The test therefore takes the initial
variables and each tower's synthetic batch from the local run and makes the cluster use them.

Run a task as `python tests/cluster_seams.py [--seam_init=F.npz] [--seam_dump=DIR]
[--seam_nan_at=N] FLAGS...`:

  --seam_init=<file.npz>  keys 'var/<checkpoint name>' (initial values) and
      'input/<global tower>/images', 'input/<global tower>/labels' (synthetic batches; global
      tower = task index x devices per worker + local device index). The chief assigns the
      variables after initialising; every worker assigns its towers' batches (the hooks'
      after_initialize phase).
  --seam_nan_at=<step>  this task's run fails after its timed step N as a NaN loss fails it
      (lifecycle/training_loop.NonFiniteLossError), whatever the loss: one worker's failure.
  --seam_dump=<directory>  each worker writes '<job><index>.npz' at the end of its run:
      'var/<checkpoint name>' (values after the run), 'losses', 'warmup_losses'.
"""

from __future__ import annotations

import os
import re
import sys

import numpy as np

_INPUT_VAR = re.compile(r'^synthetic_input_(\d+)/(images|labels)$')


def input_variables(graph) -> dict:
    """{(local tower index, 'images' or 'labels'): variable} of the synthetic input."""
    import tensorflow as tf
    found = {}
    for var in graph.get_collection(tf.compat.v1.GraphKeys.LOCAL_VARIABLES):
        match = _INPUT_VAR.match(var.op.name)
        if match:
            found[(int(match.group(1)), match.group(2))] = var
    return found


def _assign(sess, var, value) -> None:
    import tensorflow as tf
    tf1 = tf.compat.v1
    with tf1.device(var.device):
        holder = tf1.placeholder(var.dtype.base_dtype, var.shape)
        op = var.assign(holder)
    sess.run(op, feed_dict={holder: value})


def make_seam_hook(init_path: str | None, dump_dir: str | None):
    """A RunHook applying --seam_init and --seam_dump (see the module docstring)."""
    from tf_cnn_benchmarks.lifecycle import run_hooks

    class SeamHook(run_hooks.RunHook):
        def __init__(self):
            self._ctx = None

        def after_initialize(self, ctx):
            if not init_path:
                return
            values = np.load(init_path)
            plan, info = ctx.plan, ctx.info
            if plan.is_chief:
                for name, var in info.mgr.savable_variables().items():
                    if name != 'global_step':
                        _assign(ctx.sess, var, values['var/' + name])
            found = input_variables(info.graph)
            if not found:
                raise ValueError('--seam_init needs synthetic input (no --data_dir)')
            task = plan.params.task_index
            for (tower, kind), var in sorted(found.items()):
                index = task * len(plan.devices) + tower
                _assign(ctx.sess, var, values['input/%d/%s' % (index, kind)])

        def begin(self, ctx):
            self._ctx = ctx

        def end(self, result):
            if not dump_dir:
                return
            sess, mgr, p = self._ctx.sess, self._ctx.info.mgr, self._ctx.plan.params
            values = sess.run(mgr.savable_variables())
            arrays = {'var/' + name: np.asarray(value) for name, value in values.items()}
            arrays['losses'] = np.asarray(result.get('losses') or [], np.float64)
            arrays['warmup_losses'] = np.asarray(result.get('warmup_losses') or [], np.float64)
            os.makedirs(dump_dir, exist_ok=True)
            np.savez(os.path.join(dump_dir, '%s%d.npz' % (p.job_name, p.task_index)), **arrays)

    return SeamHook()


def make_nan_hook(step: int):
    """A RunHook whose after_step raises the NaN loss's error at timed step `step`."""
    from tf_cnn_benchmarks.lifecycle import run_hooks, training_loop

    class NanHook(run_hooks.RunHook):
        def after_step(self, at, loss):
            if at == step:
                raise training_loop.NonFiniteLossError(
                    'the loss became nan at step %d; the run is invalid (test seam)' % at)

    return NanHook()


def task_main(argv: list[str]) -> int:
    """The tf_cnn_benchmarks command with the seam hook; argv as sys.argv."""
    seams = {'--seam_init': None, '--seam_dump': None, '--seam_nan_at': None}
    rest = [argv[0]]
    for arg in argv[1:]:
        name, _, value = arg.partition('=')
        if name in seams:
            seams[name] = value
        else:
            rest.append(arg)
    import checkout
    checkout.load()
    from tf_cnn_benchmarks import cli
    hooks = [make_seam_hook(seams['--seam_init'], seams['--seam_dump'])]
    if seams['--seam_nan_at']:
        hooks.append(make_nan_hook(int(seams['--seam_nan_at'])))
    return cli.main(rest, hooks=hooks)


if __name__ == '__main__':
    _status = task_main(sys.argv)
    from tf_cnn_benchmarks.runtime import runtime_env
    runtime_env.exit_process(_status)  # as the command ends (cli.run_main)
