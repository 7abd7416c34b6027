"""The towers' own copies in a checkpoint, where the towers train apart (independent mode).

An independent run's towers train separate models, so its checkpoint keeps every tower's copy:
tower 0's under the plain names every mode reads ('cg/conv0/weights'), tower i's under
'tower_<i>/' ones ('tower_1/cg/conv0/weights', 'tower_1/cg/conv0/weights/Momentum';
variable_managers/base.py: `VariableMgr.tower_copies`). lifecycle/checkpoints.py saves and
restores them; this module says what a restore did with them:

  - into an independent run, each tower restores its own copy. A tower the checkpoint has no
    copy of (a checkpoint of another mode, of an independent run of fewer towers, of the
    original tf_cnn_benchmarks, whose tower copies are not read, or of a version that saved
    tower 0's copy alone) starts from tower 0's copy: one warning line names
    those towers (`missing_warning`);
  - into any other run (parameter_server, replicated, an independent run of fewer towers),
    tower 0's copy restores and the copies of the towers this run does not have are not read:
    a training run says so in one warning line (`dropped_warning`). --eval and the evaluation
    during training always score tower 0's weights, and say nothing.
"""

from __future__ import annotations

from .. import cnn_util, variable_mgr


def _towers(towers) -> str:
    """'tower 1', 'towers 1, 2'."""
    towers = sorted(towers)
    return '%s %s' % ('tower' if len(towers) == 1 else 'towers', ', '.join(map(str, towers)))


def missing_warning(path: str, copies: dict, restored: dict) -> str | None:
    """The warning for the towers whose own copies `path` lacks, or None.

    Args:
      path: the checkpoint prefix.
      copies: the run's `VariableMgr.tower_copies()`, {checkpoint name: variable}.
      restored: the names restored from `path` (checkpoint_fit.check_fits' var_list).
    """
    towers = {variable_mgr.copy_tower(n) for n in copies if n not in restored}
    if not towers:
        return None
    return ('checkpoint %s holds no own copy of %s (written with another --variable_update, '
            'with fewer towers, by the original tf_cnn_benchmarks, or by a version that saved '
            'tower 0\'s copy alone): %s from '
            'tower 0\'s weights and optimizer state, so %s not continue %s own training'
            % (path, _towers(towers), 'it starts' if len(towers) == 1 else 'they start',
               'it does' if len(towers) == 1 else 'they do',
               'its' if len(towers) == 1 else 'their'))


def dropped_warning(path: str, checkpoint_names, mgr) -> str | None:
    """The warning of a training run that leaves towers' own copies of `path` unread, or None.

    Args:
      path: the checkpoint prefix.
      checkpoint_names: the names `path` holds.
      mgr: the run's VariableMgr (its `tower_copies()`: {} unless its towers train apart).
    """
    copies = mgr.tower_copies()
    towers = {variable_mgr.copy_tower(n) for n in checkpoint_names
              if n not in copies and variable_mgr.copy_tower(n) is not None}
    if not towers:
        return None
    return ('checkpoint %s holds the own weights of %s, trained apart '
            '(--variable_update=independent): this --variable_update=%s run of %s restores '
            'tower 0\'s copy into every tower, and the others\' training is not continued'
            % (path, _towers(towers), mgr.params.variable_update,
               cnn_util.counted(mgr.num_towers, 'tower')))


def restore_warnings(path: str, checkpoint_names, mgr, restored: dict,
                     training: bool) -> list[str]:
    """The warnings of one restore of `path` into the run of `mgr` (at most one of each kind;
    see the module docstring): `missing_warning`, then, for a training run,
    `dropped_warning`. `restored`: the names restored (checkpoint_fit.check_fits' var_list)."""
    lines = [missing_warning(path, mgr.tower_copies(), restored)]
    if training:
        lines.append(dropped_warning(path, checkpoint_names, mgr))
    return [line for line in lines if line]
