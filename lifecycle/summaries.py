"""TensorBoard summaries of a training (or forward-only) run, written to --train_dir.

--summary_verbosity (with --train_dir), the levels of the original's flag:
  1: cheap scalars: the graph, and every --save_summaries_steps global steps `total_loss` (the
     step's loss), `learning_rate` (the rate the update that reached that global step used, as
     the original's summary, fetched with its update: GraphInfo.applied_learning_rate) and
     `images_per_sec` (over the timed steps since the last
     summary, or since the timed part began, by the step lines' clock: the time of the
     evaluations, checkpoints and summaries between steps and the warm-up steps, whose first
     one also sets up the executor, are left out);
  2: also `log_gradients_summary/log_gradients` (the original's tag): one histogram of log|g|
     over every non-zero entry of every gradient (training only: a forward-only run has no
     gradients);
  3: also `input_images` (three images of a training batch, as the model receives them) and
     histograms of every trainable variable (`summaries/weights/<name>`) and of its gradient
     (`summaries/gradients/<name>`), by this project's checkpoint names (the original's tags
     were its variables' names, `v/cg/conv0/conv2d/kernel_1` and
     `v/cg/conv0/conv2d/kernel/gradients`: docs/usage-and-flags.md's departures).
Evaluations' accuracy goes to --eval_dir, else <train_dir>/eval (`EvalSummaryWriter`: the
original's tags `eval/Accuracy@1` and `eval/Accuracy@5`, and `eval/images_per_sec`).
Forward-only runs count summary steps in timed steps (their global step does not move); their
`total_loss` (or `base_loss`) is the forward pass's, as their step lines print it, and they have
no learning rate or gradients.

Summaries are labelled with the global step after the timed step that wrote them
(run_hooks.GlobalStepCounter: in an asynchronous cluster the shared global step read from the
session, which counts every worker's updates). They are written after the first timed step
whose global step reached the next multiple of --save_summaries_steps (a multiple reached
during the warm-up steps, or passed over by an asynchronous cluster, is written then, with that
step's values: the original wrote a summary during its warm-up from the warm-up step's own
tensors, which a hook here cannot fetch; docs/usage-and-flags.md lists this departure).

A full disk (or the file-size limit of `ulimit -f`) can cut the events file inside a record while
TensorFlow's writer says nothing: after closing it, `SummaryHook.end` walks the file's TFRecord
framing (each record's 12-byte header, its data skipped: input_data/shard_scan.py), and a file
that ends inside a record lists the summaries as not written, 'partly written (from global
step N on, the records are missing)', N the step of the first summary cut off.

The timed step's own tensors cannot be fetched by a hook without consuming an extra batch from
the staging areas, so the summaries of levels 2 and 3 come from a small input pipeline of their
own (the same code and preprocessing, a separate reader) and a forward/backward pass of tower
0's variables on that batch, run only on summary steps. The gradients are therefore those of one
batch at the current weights, not exactly the ones the step applied.
"""

from __future__ import annotations

import os

import tensorflow as tf

from .. import cnn_util, preprocessing, variable_mgr
from ..graph import tower_loop
from ..input_data import data_errors, shard_scan
from . import run_hooks

tf1 = tf.compat.v1


def scalar_summary(values: dict) -> tf1.Summary:
    """A Summary proto of {tag: float}."""
    return tf1.Summary(value=[tf1.Summary.Value(tag=tag, simple_value=float(value))
                              for tag, value in values.items()])


#: The level-2 histogram's tag, the original's (its name scope and name).
LOG_GRADIENTS_TAG = 'log_gradients_summary/log_gradients'


def log_gradients_histogram(grads) -> tf.Tensor:
    """The level-2 summary: a histogram tagged LOG_GRADIENTS_TAG of the natural log of |g| over
    every non-zero entry of `grads` (one distribution for the whole model: its spread shows
    vanishing or exploding gradients at a glance; zeros, whose log is -inf, are left out),
    whatever name scope it is built in.

    Args:
      grads: gradient tensors of any shapes and float dtypes.

    Returns:
      The serialized Summary (a scalar string tensor).
    """
    flat = tf.concat([tf.reshape(tf.cast(g, tf.float32), [-1]) for g in grads], 0)
    magnitudes = tf.abs(flat)
    scope, name = LOG_GRADIENTS_TAG.split('/')
    with tf1.name_scope(scope + '/'):  # absolute: the tag is the original's in any scope
        return tf1.summary.histogram(
            name, tf.math.log(tf.boolean_mask(magnitudes, magnitudes > 0)))


def _images_summary(images, data_format: str) -> tf.Tensor:
    """`input_images`: the first three images of a batch ([batch, h, w, 3] in `data_format`,
    scaled to [-1, 1]) as 8-bit pictures."""
    nhwc = images if data_format == 'NHWC' else tf.transpose(images, [0, 2, 3, 1])
    shown = tf.cast(tf.clip_by_value((tf.cast(nhwc[:3], tf.float32) + 1.0) * 127.5, 0.0, 255.0),
                    tf.uint8)
    return tf1.summary.image('input_images', shown, max_outputs=3)


def _name(variable) -> str:
    return variable_mgr.checkpoint_name(variable.op.name)


class SummaryHook(run_hooks.RunHook):
    """Writes the event file (see the module docstring).

    Args:
      plan: the run's run_plan.RunPlan.
      model: the run's CNNModel (gradient histograms rebuild a tower).
      dataset: the run's dataset (input_images reads a batch of its own).

    Its images_per_sec divides by the timed steps' own seconds since the last summary
    (RunContext.timed: the step lines' clock), not by the wall time between summaries, which
    holds the evaluations, checkpoints and summaries run between steps.
    """

    output = 'the TensorBoard summaries'
    output_flag = '--train_dir'

    def __init__(self, plan, model, dataset):
        self.plan = plan
        self.model = model
        self.dataset = dataset
        self.p = plan.params
        self.writer = None
        self._ctx = None
        self._summary_op = None
        self._summary_step_ops: list = []
        self.counter = run_hooks.GlobalStepCounter(plan)
        self._last = (0, 0.0)  # (step, timed seconds) of the last summary.
        self.events_file: str | None = None  # the writer's file, when it could be told
        self._records_before = 0  # its records before the first summary (version, graph)
        self._steps: list[int] = []  # the global step of each summary record added

    def begin(self, ctx):
        self._ctx = ctx
        p = self.p
        if p.summary_verbosity >= 3 or (p.summary_verbosity >= 2 and self.plan.training):
            self._build_graph_summaries(ctx)
        before = set(_events_files(p.train_dir))
        self.writer = tf1.summary.FileWriter(p.train_dir, graph=ctx.info.graph)
        self.writer.flush()
        made = sorted(set(_events_files(p.train_dir)) - before)
        if len(made) == 1:
            self.events_file = os.path.join(p.train_dir, made[0])
            self._records_before = shard_scan.walk_tfrecord_headers(self.events_file)[0]
        line = no_summary_warning(self.plan, self.counter.begin(ctx))
        if line:
            cnn_util.warn(line)
        self._last = (0, ctx.timed.secs)

    def _build_graph_summaries(self, ctx):
        plan, p, info = self.plan, self.p, ctx.info
        with info.graph.as_default(), tf1.name_scope('summaries'):
            before = set(tf1.local_variables()) | set(tf1.global_variables())
            small = p._replace(shuffle_buffer_size=min(p.shuffle_buffer_size, 256),
                               batch_group_size=1)
            pipeline = preprocessing.pipeline_for(plan, self.dataset, train=plan.training,
                                                  params=small)
            [batch] = pipeline.build([plan.devices[0]])
            variables = info.mgr.trainable_variables(0) if info.mgr is not None else []  # frozen
            grads = self._gradients(variables, batch) if plan.training and variables else []
            ops = [log_gradients_histogram([g for _, g in grads])] if grads else []
            if p.summary_verbosity >= 3:
                ops.append(_images_summary(batch.images, p.data_format))
                ops += [tf1.summary.histogram('weights/' + _name(v), v) for v in variables]
                ops += [tf1.summary.histogram('gradients/' + _name(v), g) for v, g in grads]
            self._summary_op = tf1.summary.merge(ops)
            new = [v for v in tf1.local_variables() + tf1.global_variables() if v not in before]
            if new:
                ctx.sess.run(tf1.variables_initializer(new))
        self._summary_step_ops = list(pipeline.step_ops)
        if pipeline.warmup_ops:
            with data_errors.data_errors():
                ctx.sess.run(pipeline.warmup_ops)

    def _gradients(self, variables, batch) -> list:
        """[(variable, its gradient)] of tower 0's loss on `batch`, at the current weights
        (variables without a gradient left out)."""
        reuse = tower_loop.ReuseTower(variables[0].op.name.split('/')[0], self.plan.devices[0])
        [out] = tower_loop.build_towers(self.plan, self.model, [batch], reuse, phase_train=True,
                                        jit=False)
        grads = tf1.gradients(out.total_loss, variables)
        return [(v, g) for v, g in zip(variables, grads) if g is not None]

    def before_timed(self):
        """The images/sec of the first summary count from here, as the step lines do."""
        self._last = (0, self._ctx.timed.secs)

    def after_step(self, step, loss):
        before, global_step = self.counter.advance(step)
        if not run_hooks.crossed(before, global_step, self.p.save_summaries_steps):
            return
        sess = self._ctx.sess
        last_step, last_secs = self._last
        values = {'images_per_sec': self.plan.global_batch_size * (step - last_step)
                  / max(self._ctx.timed.secs - last_secs, 1e-9)}
        if loss is not None:
            values[self.p.loss_type_to_report] = loss  # total_loss or base_loss
        # The rate of the update that reached global_step (training graphs only).
        rate = getattr(self._ctx.info, 'applied_learning_rate', None)
        if rate is not None and not self.p.forward_only:
            values['learning_rate'] = sess.run(rate)
        self.writer.add_summary(scalar_summary(values), global_step)
        self._steps.append(global_step)
        if self._summary_op is not None:
            with data_errors.data_errors():
                serialized = sess.run([self._summary_op] + self._summary_step_ops)[0]
            self.writer.add_summary(serialized, global_step)
            self._steps.append(global_step)
        self._last = (step, self._ctx.timed.secs)

    def end(self, result):
        try:
            self.writer.close()
        except (OSError, tf.errors.OpError) as e:  # a full disk: the other outputs go on
            cut = self.cut_short()
            raise cnn_util.BenchmarkError('cannot write the summaries in %s: %s%s' % (
                self.p.train_dir, cnn_util.error_summary(e), '; %s' % cut if cut else '')
            ) from None
        cut = self.cut_short()
        if cut:
            raise cnn_util.BenchmarkError(cut)
        result['summary_dir'] = self.p.train_dir
        cnn_util.log_fn('TensorBoard summaries in %s' % self.p.train_dir)

    def cut_short(self) -> str | None:
        """None when the events file's framing is whole (or the file is unknown); else
        'partly written (from global step 6 on, the records are missing): the events file
        /td/events.out.tfevents.1.host is truncated: record 9 at byte 1644222 needs 497185
        bytes, the file ends at 2093056 (a full disk or the file-size limit cuts a file so)'.
        Reads the 12-byte header of each record and seeks past its data."""
        if self.events_file is None:
            return None
        try:
            records, problem = shard_scan.walk_tfrecord_headers(self.events_file)
        except OSError as e:
            return 'the events file %s cannot be read back: %s' % (self.events_file, e)
        if problem is None:
            return None
        done = records - self._records_before
        start = ('from global step %d on' % self._steps[done]
                 if 0 <= done < len(self._steps) else 'the last ones')
        return ('partly written (%s, the records are missing): the events file %s is %s (a '
                'full disk or the file-size limit cuts a file so)'
                % (start, self.events_file, problem))

    def written(self, result):
        return (['the TensorBoard summaries in %s' % result['summary_dir']]
                if result.get('summary_dir') else [])


def no_summary_warning(plan, start: int) -> str | None:
    """The warning before a run whose steps reach no multiple of --save_summaries_steps (its
    scalars would never be written, while its end says `TensorBoard summaries in DIR`), or
    None. `start`: the global step before the warm-up steps (a training run's global steps
    end at start + warm-up + timed steps; a forward-only run counts its timed steps). None
    where the steps are not this task's to count (an asynchronous cluster) or without
    --save_summaries_steps (its own warning: preflight/ineffective_flags.py)."""
    p, every = plan.params, plan.params.save_summaries_steps
    if not every or plan.asynchronous:
        return None
    if plan.training:
        first, last, kind = start, start + plan.num_warmup_batches + plan.num_batches, 'global'
    else:
        first, last, kind = 0, plan.num_batches, 'timed'
    if run_hooks.crossed(first, last, every):
        return None
    return ('--save_summaries_steps=%d writes no summary in this run: its last %s step is %d, '
            'before the next multiple of %d (%d), so %s gets the graph only; give '
            '--save_summaries_steps=%d or less, or more steps (--num_batches)'
            % (every, kind, last, every, (first // every + 1) * every, p.train_dir,
               max(last - first, 1)))


def _events_files(folder: str) -> list[str]:
    """The names of TensorBoard events files in `folder` ([] when it cannot be listed)."""
    try:
        return [n for n in tf.io.gfile.listdir(folder) if n.startswith('events.out.tfevents.')]
    except (OSError, tf.errors.OpError):
        return []


#: An evaluation's TensorBoard tags: the original's accuracy tags, then this project's rate.
EVAL_TAGS = {'top_1': 'eval/Accuracy@1', 'top_5': 'eval/Accuracy@5',
             'images_per_sec': 'eval/images_per_sec'}
#: The tags' suffix for a partial evaluation (a signal stopped it after some of its batches):
#: kept apart, so that a curve of the original's tags holds only whole evaluations.
PARTIAL_SUFFIX = '_partial'


class EvalSummaryWriter:
    """Eval scalars for TensorBoard (EVAL_TAGS, at the evaluated global step; a partial
    evaluation's with PARTIAL_SUFFIX: 'eval/Accuracy@1_partial'): in --eval_dir when given,
    else in <train_dir>/eval with --summary_verbosity >= 1.

    Attributes:
      folder: where they go, or None when nothing is written.
    """

    def __init__(self, p):
        self.writer = None
        self.written = False
        self.folder = p.eval_dir or (os.path.join(p.train_dir, 'eval')
                                     if p.train_dir and p.summary_verbosity >= 1 else None)
        if self.folder:
            self.writer = tf1.summary.FileWriter(self.folder)

    def write(self, r: dict) -> None:
        if self.writer is None:
            return
        suffix = PARTIAL_SUFFIX if r.get('partial') else ''
        values = [tf1.Summary.Value(tag=tag + suffix, simple_value=r[key])
                  for key, tag in EVAL_TAGS.items()]
        self.writer.add_summary(tf1.Summary(value=values), r['global_step'])
        self.written = True
        self.writer.flush()

    def close(self, announce: str | None = None) -> None:
        """Closes the event file; with `announce` (what they are: '' for an --eval run's,
        ' of the evaluations' during training), says where they went when any was written,
        as a training run's `TensorBoard summaries in DIR`."""
        if self.writer is None:
            return
        self.writer.close()
        if announce is not None and self.written:
            cnn_util.log_fn('TensorBoard summaries%s in %s' % (announce, self.folder))
