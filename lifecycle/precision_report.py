"""The run's precision in the result: the facts the header's precision block shows
(`PrecisionFactsHook`: result['precision']), and the steps automatic loss scaling skipped, in
the total block and the result (`LossScaleReportHook`).

With --fp16_enable_auto_loss_scale a step whose gradients are not all finite changes no
variable (graph/precision.LossScaler.apply: only the global step advances) and halves the
scale. The step still ran and still counts: its images are in images/sec and its step line is
printed, so a run whose steps were mostly skipped would look like a normal one. This hook reads
the graph's count (precision.SKIPPED_STEPS) around the timed steps and says it: a `loss scale:`
line after `total images/sec`, e.g. 'loss scale: 8 of 12 timed steps skipped (non-finite
gradients: their updates were not applied; images/sec counts them as steps), 16 now (started
at 16777216)', and result['loss_scale'] = {'skipped_steps', 'timed_steps',
'warmup_skipped_steps', 'initial', 'final'}. 'started at' and 'initial' are the scale the run
began with: the checkpoint's where it resumed (its restored `loss_scale/scale`), else the
flags' (graph/precision.initial_loss_scale), which the header's precision block shows (it is
printed before the restore; its `Resume:` lines then name the checkpoint's scale:
run_header.resume_lines).
"""

from __future__ import annotations

from .. import cnn_util
from . import run_hooks


class LossScaleReportHook(run_hooks.RunHook):
    """Counts the steps automatic loss scaling skipped (a --use_fp16 training run with
    --fp16_enable_auto_loss_scale); does nothing where the graph has no count.

    Args:
      initial: the first step's loss scale of a run that restores none
        (graph/precision.initial_loss_scale); the scale read at `begin`, after the restore,
        replaces it.
    """

    def __init__(self, initial: float):
        self.initial = float(initial)
        self._sess = self._count = self._scale = None
        self._at_begin = self._at_timed = self._at_end = None
        self._final = None

    def begin(self, ctx: run_hooks.RunContext) -> None:
        import tensorflow as tf
        graph = ctx.sess.graph
        counts = graph.get_collection('loss_scale_skipped_steps')
        scales = graph.get_collection('loss_scale_value')
        if counts and scales:
            self._sess, self._count, self._scale = ctx.sess, counts[0], scales[0]
            self._read = lambda: self._sess.run([self._count, self._scale])
            self._errors = (tf.errors.OpError,)
            self._at_begin = self._get()
            if self._at_begin is not None:  # restored from a checkpoint, or the flags'
                self.initial = self._at_begin[1]

    def _get(self):
        """(skipped steps so far, the scale now), or None where the session cannot say."""
        try:
            count, scale = self._read()
        except self._errors:
            return None
        return int(count), float(scale)

    def before_timed(self) -> None:
        if self._count is not None:
            self._at_timed = self._get()

    def after_timed(self) -> None:
        if self._count is not None:
            self._at_end = self._get()

    def figures(self, timed_steps: int) -> dict | None:
        """result['loss_scale'], or None without the counts."""
        if self._at_timed is None or self._at_end is None:
            return None
        warmup = self._at_timed[0] - self._at_begin[0] if self._at_begin else None
        return {'skipped_steps': self._at_end[0] - self._at_timed[0],
                'timed_steps': int(timed_steps), 'warmup_skipped_steps': warmup,
                'initial': self.initial, 'final': self._at_end[1]}

    def total_lines(self, loop) -> list[str]:
        self._final = self.figures(getattr(loop, 'num_steps', 0) or 0)
        if self._final is None:
            return []
        f = self._final
        warmup = (', %d of the warm-up steps' % f['warmup_skipped_steps']
                  if f['warmup_skipped_steps'] else '')
        return ['loss scale: %d of %s skipped%s (non-finite gradients: their updates were not '
                'applied; images/sec counts them as steps), %s now (started at %s)' % (
                    f['skipped_steps'], cnn_util.counted(f['timed_steps'], 'timed step'),
                    warmup, cnn_util.number_text(f['final']),
                    cnn_util.number_text(f['initial']))]

    def end(self, result: dict) -> None:
        if self._final is not None:
            result['loss_scale'] = self._final


class PrecisionFactsHook(run_hooks.RunHook):
    """Adds result['precision'] (graph/precision_block.facts: what the header's block shows,
    as values) to a run whose plan is resolved."""

    def __init__(self, plan):
        self._plan = plan

    def end(self, result: dict) -> None:
        from ..graph import precision_block
        result['precision'] = precision_block.facts(self._plan)
