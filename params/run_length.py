"""The rules of how long a run and its evaluation are: --num_batches or --num_epochs, and
--num_eval_batches or --num_eval_epochs, at most one of each pair. The original refused both
of a pair (`At most one of --num_batches and --num_epochs may be specified`, asked of the
evaluation's pair too in its modes that evaluate); here the same, as usage errors before
TensorFlow loads. A 0 of these flags is "unset" (params/zero_values.as_unset runs first), so
`--num_eval_batches=0 --num_eval_epochs=2` is one of the pair. Pure Python.
"""

from __future__ import annotations

from .errors import ParamsError
from .zero_values import evaluates


def check_run_length(p) -> None:
    """Checks the run-length flags of `p` (Params, after zero_values.as_unset).

    Raises:
      ParamsError: --num_epochs not > 0; --num_batches with --num_epochs; or, in a run that
        evaluates (--eval, or --eval_during_training_* in a training run: the original's modes
        that evaluate), --num_eval_batches with --num_eval_epochs. One line, the values
        received, the fix.
    """
    if p.num_epochs is not None and not p.num_epochs > 0:
        raise ParamsError('--num_epochs must be > 0 (a fraction such as 0.01 is fine). '
                          'Received: num_epochs=%g' % p.num_epochs)
    if p.num_batches is not None and p.num_epochs is not None:
        raise ParamsError('--num_batches and --num_epochs exclude each other; give one. '
                          'Received: num_batches=%d, num_epochs=%g' % (p.num_batches, p.num_epochs))
    if (p.num_eval_batches is not None and p.num_eval_epochs is not None
            and (p.eval or (not p.forward_only and evaluates(p)))):
        raise ParamsError('--num_eval_batches and --num_eval_epochs exclude each other; give one '
                          '(batches, or epochs of the evaluated subset). Received: '
                          'num_eval_batches=%d, num_eval_epochs=%g'
                          % (p.num_eval_batches, p.num_eval_epochs))
