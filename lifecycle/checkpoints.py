"""Checkpoints: what is saved, where a run restores from, and the hook that saves during training.

What a checkpoint holds (tower 0's names never depend on --variable_update or the towers):
  - the model's variables and the global step: `VariableMgr.savable_variables()`, tower 0's copy,
    named without the tower prefix ('cg/conv0/weights', 'global_step');
  - the training images the steps read (skipped updates included), 'images_seen'
    (graph/images_seen.py): epoch-based schedules count from it, so a resume with another
    global batch keeps its epoch; a checkpoint without it (an earlier version's) restores
    with global step x batch (one line);
  - the rest of the training state: the optimizer's slots (momentum, RMSProp, Adam), Adam's
    beta powers, the automatic loss scale, named the same way ('cg/conv0/weights/Momentum').
    It is optional on restore: a checkpoint written with another --optimizer restores the model
    and the step, and the missing state keeps its initial values (one warning line says so);
  - where the towers train apart (--variable_update=independent), every other tower's own copy
    of the above, under 'tower_<i>/' names ('tower_1/cg/conv0/weights'): a resumed run continues
    each tower's training. What a restore does where they are missing, or where the run has no
    such towers, is lifecycle/tower_copies.py's.
A checkpoint of the original tf_cnn_benchmarks ('v/cg/conv0/conv2d/kernel') restores by its names
there (lifecycle/original_checkpoints.py), or fails with an error that says whose it is.

Where a run restores from: lifecycle/checkpoint_source.py (`find_checkpoint`).

Saving is crash-safe: TensorFlow writes the checkpoint's files under temporary names, renames them
when complete and only then updates the `checkpoint` state file (itself written atomically), so a
process killed at any moment (SIGKILL) leaves the state file pointing at the last complete
checkpoint, which is what the next run restores. Such a kill leaves TensorFlow's temporaries
behind (`model.ckpt-N.index.tempstate<digits>` and `model.ckpt-N.data-*.tempstate<digits>` of a
save in progress, the directory `model.ckpt-N_temp/` of a sharded one, `checkpoint.tmp<hex>` of
the state file being replaced): `CheckpointHook` removes them when it starts
(`clean_stale_temporaries`; one line names what it removed), so they never pile up, and after
a save of its own that failed (a full disk: lifecycle/checkpoint_temporaries.py). Two
training runs must not share one --train_dir at the same time (they would also overwrite each
other's checkpoints): a run holds it (runtime/dir_hold.py).

`CheckpointHook` saves every --save_model_steps global steps or --save_model_secs seconds and
once at the end of the run (including a run stopped by SIGINT/SIGTERM or --stop_at_top_1_accuracy;
never after a non-finite loss: its weights are not worth resuming from, and `end` saves
nothing when result['stopped_by_error'] names it). The global step
counts the warm-up steps, and a checkpoint due during the warm-up is saved at its end, before
the first timed step, as an evaluation due there runs (lifecycle/eval_during_training.py):
several due there become that one, and a warning line says so before the run starts. It keeps
--max_ckpts_to_keep checkpoints, counting those of earlier runs in the same directory.

A save during the run that fails (a full disk, the file-size limit of `ulimit -f`, the
--train_dir removed) stops the run after that step, as a signal does: the total block of the
steps run, the results JSON and the database record (result['stopped_by_error'], e.g. 'the
failed checkpoint save at global step 20'), no final save, then one error line naming the
failed save, its fix, the latest checkpoint left in --train_dir and what kept the figures
(phase_runner.StoppedByOutput; exit status 1). A failed save at the last timed step is the
final save's failure: the final save tries once more, and the line lists what was written.
"""

from __future__ import annotations

import os
import time
import weakref

import tensorflow as tf

from .. import cnn_util, variable_mgr
from ..graph import images_seen
from ..runtime import file_systems
from . import (
    checkpoint_fit,
    checkpoint_lookup,
    original_checkpoints,
    phase_runner,
    run_hooks,
    tower_copies,
)
from .checkpoint_fit import CheckpointError  # noqa: F401 (the error of every checkpoint problem)
from .checkpoint_source import (  # noqa: F401 (where a run restores from: as before)
    ResumePoint,
    check_eval_checkpoint,
    evaluate_newest,
    find_checkpoint,
    latest_checkpoint,
    resolve_checkpoint_path,
    resume_point,
    rotated_away,
    start_warnings,
)
from .checkpoint_temporaries import (  # noqa: F401 (clean_stale_temporaries: as before)
    CHECKPOINT_BASENAME,
    CheckpointSaveError,
    clean_stale_temporaries,
    save_failure,
)

tf1 = tf.compat.v1

_SAVER_COLLECTION = 'tf_cnn_benchmarks_checkpoint_saver'


def savable_state(mgr) -> tuple[dict, dict]:
    """Splits what a checkpoint holds into required and optional parts.

    Args:
      mgr: the run's VariableMgr, after the graph was built.

    Returns:
      (required, optional): {checkpoint name: variable}. required is
      `mgr.savable_variables()` (model variables and the global step); optional is every other
      global variable (optimizer slots, Adam's beta powers, the loss scale), tower 0's copy
      when towers have copies, named without the tower prefix.
    """
    required = mgr.savable_variables()
    taken = {id(v) for v in required.values()}
    optional = {}
    # Tower 0's (or the shared) copies first, so they are the ones saved.
    rest = sorted((v for v in tf1.global_variables() if id(v) not in taken),
                  key=lambda v: not _is_first_copy(v.op.name))
    for var in rest:
        name = variable_mgr.checkpoint_name(var.op.name)
        if name not in required and name not in optional:
            optional[name] = var
    return required, optional


def _is_first_copy(op_name: str) -> bool:
    head = op_name.split('/')[0]
    return not (head.startswith('v') and head[1:].isdigit() and head != 'v0')


def mirror_ops(saved: dict) -> list:
    """Ops copying each saved variable into its other towers' copies (same checkpoint name),
    except into those restored from their own entries (an independent run's towers:
    VariableMgr.tower_copies).

    Needed after a restore in modes where every tower owns its variables (replicated,
    independent), for the optimizer's slots that `VariableMgr.post_init_ops` does not cover,
    and for an independent run's towers the checkpoint has no copy of.
    """
    ops = []
    restored = {id(v) for v in saved.values()}
    for var in tf1.global_variables():
        source = saved.get(variable_mgr.checkpoint_name(var.op.name))
        if source is not None and source is not var and id(var) not in restored:
            with tf1.device(var.device):
                ops.append(var.assign(source.read_value()))
    return ops


def get_saver(graph, mgr, max_to_keep: int = 5) -> tf1.train.Saver:
    """The saver of the graph's checkpoints (created once per graph, then reused).

    Args:
      graph: the tf.Graph holding the run's variables (made the default here).
      mgr: the run's VariableMgr.
      max_to_keep: checkpoints kept on disk by this saver.
    """
    with graph.as_default():
        existing = tf1.get_collection(_SAVER_COLLECTION)
        if existing:
            return existing[0]
        required, optional = savable_state(mgr)
        saver = tf1.train.Saver(var_list={**required, **optional, **mgr.tower_copies()},
                                max_to_keep=max_to_keep,
                                save_relative_paths=True, name='checkpoint_saver')
        tf1.add_to_collection(_SAVER_COLLECTION, saver)
        return saver


def restore(sess, graph, mgr, path: str, model_name: str = '',
            images_per_step: int | None = None, training: bool = False) -> int:
    """Restores `path` into the graph's variables and syncs the towers' copies.

    Args:
      sess: a session of `graph`, variables already initialised.
      graph: the tf.Graph of the variables.
      mgr: the VariableMgr whose `savable_variables()` names the checkpoint's contents.
      path: a checkpoint prefix.
      model_name: for error messages.
      images_per_step: images one global step of this run applies: a checkpoint without
        'images_seen' (written before the images were counted, graph/images_seen.py) gets
        the restored global step x this, with one line saying so.
      training: for the advice of a damaged checkpoint's error (checkpoint_fit.damaged_error):
        a training run's, else an evaluation's or a forward-only run's.

    Variables stored as float16 restore into float32 ones and back (a checkpoint written with
    --fp16_vars, restored without it, or the other way round): their values are cast, and one
    line says so. A checkpoint the original tf_cnn_benchmarks wrote restores by its names
    there (lifecycle/original_checkpoints.py), and one line says so.

    Returns:
      The restored global step.

    Raises:
      CheckpointError: the checkpoint is unreadable, does not fit the model, or holds NaN or
        infinite values (the run that wrote it diverged).
    """
    with graph.as_default():
        required, optional = savable_state(mgr)
        var_list, cast, original = checkpoint_fit.check_fits(
            path, required, optional, model_name, training=training, copies=mgr.tower_copies())
        stored = original.names if original else {}
        reorder = original_checkpoints.rows_to_reorder(graph, path, var_list) if original else {}
        fed = {n: var_list[n] for n in set(cast) | set(reorder)}
        saver = _restorer(graph, {stored.get(n, n): v for n, v in var_list.items()
                                  if n not in fed})
        try:
            saver.restore(sess, path)
            checkpoint_fit.restore_fed(sess, path, fed, stored, reorder)
        except (tf.errors.OpError, IndexError, ValueError) as e:
            # ValueError: the Saver's own check that the files are there (a checkpoint removed
            # since it was found); IndexError: a truncated data file
            raise checkpoint_fit.damaged_error(path, e, training) from None
        problem = checkpoint_fit.non_finite_problem(sess, graph, path, var_list)
        if problem:
            raise CheckpointError(problem)
        if cast:
            cnn_util.log_fn(checkpoint_fit.cast_line(path, cast, var_list))
        if original:
            cnn_util.log_fn(original_checkpoints.mapped_line(path, original))
            differs = original_checkpoints.difference(model_name)
            if differs:
                cnn_util.warn('checkpoint %s: %s' % (path, differs))
        for line in tower_copies.restore_warnings(
                path, checkpoint_fit.open_reader(path).get_variable_to_shape_map(), mgr,
                var_list, training):
            cnn_util.warn(line)
        mirrors = mirror_ops(var_list)
        if mirrors:
            sess.run(mirrors)
        step = int(sess.run(required['global_step']))
        counter = optional.get(images_seen.CHECKPOINT_NAME)
        if counter is not None and images_seen.CHECKPOINT_NAME not in var_list:
            per_step = images_per_step or 0
            sess.run(counter.initializer, {counter.initializer.inputs[1]: step * per_step})
            cnn_util.log_fn(
                'Note: checkpoint %s does not count the images it saw (written by %s): taking '
                'global step %d x %d images a step = %d images seen; epoch-based schedules '
                'assume this run\'s global batch throughout' % (
                    path, 'the original tf_cnn_benchmarks.py' if original else 'an earlier version',
                    step, per_step, step * per_step))
        return step


_RESTORERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _restorer(graph, var_list: dict) -> tf1.train.Saver:
    """A saver restoring exactly `var_list`, built once per graph and name set (an eval loop
    restores many checkpoints into one graph)."""
    cache = _RESTORERS.setdefault(graph, {})
    key = tuple(sorted(var_list))
    if key not in cache:
        cache[key] = tf1.train.Saver(var_list=var_list, name='checkpoint_restorer')
    return cache[key]


def restore_or_initialize(sess, info, p) -> int | None:
    """Initialises the run's variables, restores the checkpoint the run should start from, then
    runs the variable manager's post-init ops (`initialize_or_restore`, then `post_init`).

    Self-contained for use by any process that owns the variables (the chief of a cluster).
    A run with hooks calls the two halves through its phase runner instead
    (lifecycle/phase_runner.py), which runs the hooks' after_initialize phase between them.
    It does not prime the input pipeline.

    Returns:
      The restored global step, or None when nothing was restored.

    Raises:
      CheckpointError: --checkpoint_path is not a checkpoint, or the checkpoint does not fit.
    """
    step = initialize_or_restore(sess, info, p)
    post_init(sess, info)
    return step


def initialize_or_restore(sess, info, p) -> int | None:
    """Runs `info.init_ops`, then restores the checkpoint the run should start from (see
    `find_checkpoint`); the variables then hold their initial or restored values, before the
    variable manager's post-init ops (`post_init`).

    Args:
      sess: a session of `info.graph`.
      info: the graph.graph_info.GraphInfo of the run.
      p: the run's Params (train_dir, checkpoint_path, model, forward_only).

    Returns:
      The restored global step, or None when nothing was restored.

    Raises:
      CheckpointError: --checkpoint_path is not a checkpoint, or the checkpoint does not fit.
    """
    sess.run(info.init_ops)
    path = find_checkpoint(p) if p.train_dir or p.checkpoint_path else None  # nowhere to look
    step = None
    for line in start_warnings(p, path):
        cnn_util.warn(line)
    if path is not None:
        step = restore(sess, info.graph, info.mgr, path, p.model,
                       images_per_step=getattr(info.images_seen, 'per_step', None),
                       training=not (p.eval or p.forward_only))
        what = 'weights for forward-only' if p.forward_only else 'training state'
        cnn_util.log_fn('Restored from step %d: %s from %s' % (step, what, path))
    elif p.forward_only and p.train_dir:
        cnn_util.log_fn('Forward-only: no checkpoint in --train_dir %s; timing randomly '
                        'initialised weights' % p.train_dir)
    elif p.forward_only:
        cnn_util.log_fn('Forward-only: no --train_dir or --checkpoint_path; timing randomly '
                        'initialised weights')
    return step


def post_init(sess, info) -> None:
    """Runs the variable manager's post-init ops exactly once (replicated copies made equal,
    staged variables primed with the initial or restored values)."""
    ops = info.mgr.post_init_ops()
    if ops:
        sess.run(ops)


class CheckpointHook(run_hooks.RunHook):
    """Saves checkpoints into --train_dir during and at the end of a training run.

    Args:
      plan: the run's run_plan.RunPlan (train_dir, save_model_steps, save_model_secs,
        max_ckpts_to_keep in its params; the global step after each timed step).
      clock: seconds, monotonic (tests inject a fake one).

    Saving happens after a timed step that took the global step to or past a multiple of
    --save_model_steps (run_hooks.GlobalStepCounter: in an asynchronous cluster the shared
    global step is read from the session), or when --save_model_secs passed since the last
    save. A checkpoint due during the warm-up steps (a multiple of --save_model_steps they
    reach, or --save_model_secs passed) is saved at their end, before the first timed step
    (`before_timed`: not in the timed part's time); where several multiples fall inside the
    warm-up, `begin` warns that one checkpoint stands for them (`warmup_warning`). (In an
    asynchronous cluster the warm-up's steps are not this task's to count: the first timed
    step saves it.) At `begin` it also removes the temporaries of a save that was killed
    midway (`clean_stale_temporaries`).
    """

    output = 'the checkpoint'
    output_flag = '--train_dir'

    def __init__(self, plan, clock=time.monotonic):
        self.plan = plan
        self.p = p = plan.params
        self.clock = clock
        self.saver = None
        self.paths: list[str] = []
        self._ctx = None
        self.counter = run_hooks.GlobalStepCounter(plan)
        self._saved_step = None
        self._surplus: list[str] = []
        self._last_time = 0.0
        self._prefix = os.path.join(p.train_dir, CHECKPOINT_BASENAME)
        self.failed: CheckpointSaveError | None = None  # a save during the run that failed

    def begin(self, ctx):
        self._ctx = ctx
        file_systems.makedirs(self.p.train_dir)
        clean_stale_temporaries(self.p.train_dir)
        self.saver = get_saver(ctx.info.graph, ctx.info.mgr, self.p.max_ckpts_to_keep)
        self._surplus = self._recover_earlier()
        start = self.counter.begin(ctx)
        self._last_time = self.clock()
        line = self.warmup_warning(start)
        if line:
            cnn_util.warn(line)

    def _recover_earlier(self) -> list[str]:
        """Counts the checkpoints of earlier runs (the state file's) against
        --max_ckpts_to_keep: the Saver keeps the newest of them and removes the oldest one at
        each save; those beyond what it keeps (a resume with a lower --max_ckpts_to_keep) are
        returned, for `save` to remove after its first save, so the folder keeps the newest
        N from then on (the Saver alone removes one a save)."""
        state = tf1.train.get_checkpoint_state(self.p.train_dir)
        if state is None:
            return []
        earlier = list(state.all_model_checkpoint_paths)
        keep = self.p.max_ckpts_to_keep
        surplus = earlier[:-keep] if keep and len(earlier) > keep else []
        self.saver.recover_last_checkpoints(earlier[len(surplus):])
        return surplus

    def _counts_warmup(self) -> bool:
        """Whether this task counts the warm-up's global steps (one host, a synchronous
        cluster: each warm-up step adds one)."""
        return bool(self.plan.num_warmup_batches) and not self.plan.asynchronous

    def warmup_warning(self, start: int) -> str | None:
        """The warning for the checkpoints --save_model_steps puts inside the warm-up steps of
        a run that begins at global step `start`, when there are several (one, saved at the
        warm-up's end, stands for them), else None. E.g. 'the 5 warm-up steps
        (--num_warmup_batches=5) pass 2 checkpoints --save_model_steps=2 schedules (global
        steps 2, 4): one at the warm-up's end, global step 5, stands for them; give
        --num_warmup_batches=2 or fewer to save on schedule' (a checkpoint due at the
        warm-up's last step is on schedule)."""
        every = self.p.save_model_steps
        if not every or not self._counts_warmup():
            return None
        warmup = self.plan.num_warmup_batches
        end = start + warmup
        due = list(range((start // every + 1) * every, end + 1, every))
        if len(due) < 2:
            return None
        shown = ', '.join(str(g) for g in due[:3]) + (', ...' if len(due) > 3 else '')
        return ('the %d warm-up steps (--num_warmup_batches=%d) pass %d checkpoints '
                '--save_model_steps=%d schedules (global steps %s): one at the warm-up\'s end, '
                'global step %d, stands for them; give --num_warmup_batches=%d or fewer to save '
                'on schedule' % (warmup, warmup, len(due), every, shown, end, due[0] - start))

    def before_timed(self):
        """Saves the checkpoint due during the warm-up steps, if any (the class docstring)."""
        if not self._counts_warmup():
            return
        start, end = self.counter.warmed_up()
        if run_hooks.crossed(start, end, self.p.save_model_steps) or self._secs_due():
            self._save_during_run()

    def _secs_due(self) -> bool:
        return bool(self.p.save_model_secs) and (
            self.clock() - self._last_time >= self.p.save_model_secs)

    def after_step(self, step, loss):
        del loss
        before, global_step = self.counter.advance(step)
        if run_hooks.crossed(before, global_step, self.p.save_model_steps) or self._secs_due():
            self._save_during_run()

    def _save_during_run(self) -> None:
        """A save due during the run; one that fails stops the run after this step
        (`should_stop`; `end` says so)."""
        try:
            self.save()
        except CheckpointSaveError as e:
            self.failed = e

    def should_stop(self):
        return self.failed is not None

    def save(self) -> str:
        """Saves now; returns the checkpoint prefix.

        Raises:
          CheckpointError: the save failed (a full disk, a --train_dir made read-only,
            removed or replaced by a file during the run, ...): its temporary files removed
            (`save_failure`).
        """
        sess = self._ctx.sess
        global_step = int(sess.run(self._ctx.info.global_step))
        if global_step == self._saved_step and self.paths:
            return self.paths[-1]
        try:
            if not file_systems.isdir(self.p.train_dir):
                # Removed during the run: the Saver would make it again, without the run's
                # hold (runtime/dir_hold.py), and let a second run resume from it.
                raise FileNotFoundError(2, 'removed during the run', self.p.train_dir)
            path = self.saver.save(sess, self._prefix, global_step=global_step,
                                   write_meta_graph=False)
        except (tf.errors.OpError, OSError, ValueError) as e:  # a full disk: no partial files
            # left; ValueError: the Saver's own check of the folder (replaced by a file)
            raise save_failure(e, self.p.train_dir, global_step) from None
        for earlier in self._surplus:
            if earlier not in self.saver.last_checkpoints:
                try:
                    tf1.train.remove_checkpoint(earlier)
                except (tf.errors.OpError, OSError):
                    pass  # gone already (removed by hand)
        self._surplus = []
        self.paths.append(path)
        self._saved_step = global_step
        self._last_time = self.clock()
        return path

    def end(self, result):
        if self.failed is not None and (result.get('stopped_early')
                                        or result.get('stopped_in_warmup')):
            self._stopped(result)
        if result.get('stopped_by_error'):  # a non-finite loss: its weights are not saved
            result['checkpoint_path'] = None
            result['checkpoints'] = list(self.paths)
            cnn_util.log_fn('No checkpoint saved at the end: %s stopped the run'
                            % result['stopped_by_error'])
            return
        path = self.save()  # a save failed at the last step: the final save tries again
        cnn_util.log_fn('Saved checkpoint %s (global step %d)' % (path, self._saved_step))
        result['checkpoint_path'] = path
        result['checkpoints'] = list(self.paths)
        result['global_step'] = self._saved_step

    def _stopped(self, result: dict) -> None:
        """`end` of a run a failed save stopped: no final save; the result says why the run
        stopped, then phase_runner.StoppedByOutput names the save, the latest checkpoint left
        and the timed steps run."""
        step = self.failed.global_step
        result['checkpoint_path'] = None
        result['checkpoints'] = list(self.paths)
        result['stopped_by_error'] = 'the failed checkpoint save at global step %d' % step
        steps = result.get('num_steps') or 0
        try:
            latest = checkpoint_lookup.latest_checkpoint(self.p.train_dir)
        except checkpoint_lookup.StateFileError:
            latest = None
        left = ('the latest checkpoint in %s is %s' % (self.p.train_dir, os.path.basename(latest))
                if latest else 'no checkpoint is left in %s (a folder the run made and left '
                'empty is removed at its end)' % self.p.train_dir)
        cnn_util.log_fn('Stopped by %s after %s' % (result['stopped_by_error'],
                                                    cnn_util.counted(steps, 'timed step')))
        raise phase_runner.StoppedByOutput(
            str(self.failed), 'the run stopped after %s; %s' % (
                cnn_util.counted(steps, 'timed step'), left), steps)

    def written(self, result):
        path = result.get('checkpoint_path')
        return ['the checkpoint %s' % path] if path else []
