"""The hooks that report a run's figures (the computations are metrics/'s).

    StepBreakdownHook   --print_step_breakdown: sampled steps traced, one line each
"""

from __future__ import annotations

from typing import Callable

from .. import cnn_util
from ..metrics import step_breakdown
from ..runtime import traced_session
from . import run_hooks


class StepBreakdownHook(run_hooks.RunHook):
    """--print_step_breakdown: traces timed step 1 and every --display_every-th timed step,
    prints one 'Step breakdown' line per traced step and their mean at the end, and adds
    result['step_breakdown'] = {'steps': [per traced step: step, wall_ms, input_ms,
    compute_ms, sync_ms, overhead_ms, transfer_bytes], 'mean': the same averaged,
    'method': one line}.

    Args:
      is_local: device name -> True for the devices whose ops count as this task's.
    """

    KEYS = ('wall_ms', 'input_ms', 'compute_ms', 'sync_ms', 'overhead_ms', 'transfer_bytes')

    def __init__(self, is_local: Callable[[str], bool]):
        self.is_local = is_local
        self.records: list[dict] = []
        self._warmup = 0
        self._every = 1

    def begin(self, ctx):
        self._warmup = ctx.plan.num_warmup_batches
        self._every = ctx.plan.params.display_every
        if not isinstance(ctx.sess, traced_session.TracedSession):
            raise cnn_util.BenchmarkError('--print_step_breakdown needs a '
                                          'traced_session.TracedSession')
        ctx.sess.watch(ctx.info.train_op, self._should_trace, self._record)

    def _should_trace(self, call: int) -> bool:
        step = call - self._warmup
        return step == 1 or (step > 0 and step % self._every == 0)

    def _record(self, call, wall_secs, step_stats):
        parts = step_breakdown.breakdown(step_stats, wall_secs, self.is_local)
        parts['step'] = call - self._warmup
        self.records.append(parts)
        cnn_util.log_fn(step_breakdown.format_breakdown('step %d (traced)' % parts['step'], parts))

    def end(self, result):
        mean = {}
        if self.records:
            mean = {k: sum(r[k] for r in self.records) / len(self.records) for k in self.KEYS}
            cnn_util.log_fn(step_breakdown.format_breakdown(
                'mean of %d traced steps' % len(self.records), mean))
        result['step_breakdown'] = {
            'steps': list(self.records), 'mean': mean,
            'method': 'FULL_TRACE of timed step 1 and every --display_every-th; compute and '
                      'input: unions of this task\'s op intervals; sync: rest of the traced '
                      'span; overhead: wall - span (see step_breakdown.py)'}
