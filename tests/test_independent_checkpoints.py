"""Checkpoints of --variable_update=independent: every tower's own copy is saved and restored."""

import numpy as np
import tensorflow as tf

from tf_cnn_benchmarks.lifecycle import checkpoints, eval_runner, run_hooks

import helpers

tf1 = tf.compat.v1

# Two logical CPUs training apart; momentum, so the slots must come back too.
INDEPENDENT = dict(device='cpu', num_gpus=2, variable_update='independent', optimizer='momentum',
                   init_learning_rate=0.002)
_run = helpers.tiny_run


class _TowerWeights(run_hooks.RunHook):
    """Records each tower's classifier weights once restored (and post-init ops ran)."""

    def begin(self, ctx):
        with ctx.info.graph.as_default():
            found = {v.op.name: v for v in tf1.global_variables()}
        self.values = ctx.sess.run({n: found[n] for n in ('v0/cg/affine0/weights',
                                                          'v1/cg/affine0/weights')})


def _warnings(capsys) -> list:
    return [line for line in capsys.readouterr().err.splitlines() if line.startswith('warning:')]


def test_independent_resume_continues_every_tower(tmp_path, capsys):
    whole = _run(num_batches=4, **INDEPENDENT)['losses']
    train_dir = str(tmp_path)
    first = _run(train_dir=train_dir, num_batches=2, **INDEPENDENT)
    capsys.readouterr()
    second = _run(train_dir=train_dir, num_batches=2, **INDEPENDENT)
    assert second['restored_step'] == 2 and second['global_step'] == 4
    # The same losses as one uninterrupted run: tower 1 continued its own weights and slots
    # (restarting it from tower 0's copy changed the mean loss of steps 3 and 4).
    np.testing.assert_allclose(first['losses'] + second['losses'], whole, rtol=1e-5)
    saved = helpers.read_checkpoint_values(first['checkpoint_path'])
    # Tower 0 under the names every mode reads; tower 1's own copy, slots included, beside it.
    assert 'cg/affine0/weights' in saved and 'cg/affine0/weights/Momentum' in saved
    assert 'tower_1/cg/affine0/weights/Momentum' in saved
    assert not np.array_equal(saved['cg/affine0/weights'], saved['tower_1/cg/affine0/weights'])
    assert _warnings(capsys) == []


def test_a_checkpoint_of_one_copy_starts_every_independent_tower_from_tower_0(tmp_path, capsys):
    # A replicated run's checkpoint (one copy: also what an independent run saved before its
    # towers' copies were) resumed as independent: one warning line, no traceback.
    train_dir = str(tmp_path)
    saved = _run(train_dir=train_dir, num_batches=2, **dict(INDEPENDENT,
                                                            variable_update='replicated'))
    stored = helpers.read_checkpoint_values(saved['checkpoint_path'])
    assert not any(n.startswith('tower_') for n in stored)
    capsys.readouterr()
    weights = _TowerWeights()
    resumed = helpers.tiny_bench(hooks=[weights], train_dir=train_dir, num_batches=1,
                                 **INDEPENDENT).run()
    assert resumed['restored_step'] == 2
    assert _warnings(capsys) == [
        'warning: checkpoint %s holds no own copy of tower 1 (written with another '
        '--variable_update, with fewer towers, by the original tf_cnn_benchmarks, or by a version '
        'that saved tower 0\'s copy alone): it starts from tower 0\'s weights and optimizer '
        'state, so it does not continue its own training' % saved['checkpoint_path']]
    for name in ('v0/cg/affine0/weights', 'v1/cg/affine0/weights'):
        np.testing.assert_array_equal(weights.values[name], stored['cg/affine0/weights'])


def test_an_independent_checkpoint_in_other_modes_and_eval_is_tower_0s(tmp_path, capsys):
    train_dir = str(tmp_path)
    path = _run(train_dir=train_dir, num_batches=2, **INDEPENDENT)['checkpoint_path']
    stored = helpers.read_checkpoint_values(path)
    capsys.readouterr()
    # A training run of another mode restores tower 0's copy and says the others are dropped.
    weights = _TowerWeights()
    replicated = helpers.tiny_bench(hooks=[weights], train_dir=train_dir, num_batches=1,
                                    **dict(INDEPENDENT, variable_update='replicated')).run()
    assert replicated['restored_step'] == 2
    assert _warnings(capsys) == [
        'warning: checkpoint %s holds the own weights of tower 1, trained apart '
        '(--variable_update=independent): this --variable_update=replicated run of 2 towers '
        'restores tower 0\'s copy into every tower, and the others\' training is not continued'
        % path]
    for name in ('v0/cg/affine0/weights', 'v1/cg/affine0/weights'):
        np.testing.assert_array_equal(weights.values[name], stored['cg/affine0/weights'])
    # --eval scores tower 0's weights, silently.
    evaluating = dict(device='cpu', num_gpus=2, variable_update='independent', eval=True,
                      checkpoint_path=path)
    bench = helpers.tiny_bench(**evaluating)
    evaluator = eval_runner.Evaluator(bench.plan, bench.model, bench.dataset,
                                      bench.session_config)
    with tf1.Session(graph=evaluator.graph, config=bench.session_config) as sess:
        sess.run(evaluator.init_ops)
        assert checkpoints.restore(sess, evaluator.graph, evaluator.mgr, path, 'trivial') == 2
        restored = sess.run(evaluator.savable['cg/affine0/weights'])
    np.testing.assert_array_equal(restored, stored['cg/affine0/weights'])
    assert _warnings(capsys) == []
    evaluated = _run(num_eval_batches=1, **evaluating)
    assert evaluated['eval']['global_step'] == 2
