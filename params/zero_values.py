"""The original's flags whose 0 meant "not set": taken with that meaning here.

The original tf_cnn_benchmarks read these flags as Python truth values (`num_batches or 100`,
`if params.save_model_steps:`, `fp16_loss_scale or 128`, ...), so its users' scripts give 0 for
"unset" (a variable defaulting to 0 in a shell loop, a flagfile template). Here unset is None,
and some of the table's bounds would refuse the 0 (`--num_batches must be >= 1`): `as_unset`
replaces each such 0 with what the original made of it, before any rule reads the flags
(preflight/usage.check_usage), and `header_lines` says in the run's header what each became,
from the flags as given (RunPlan.given_flags) and the resolved ones:

    Flags at 0:  --num_batches=0 is unset, as in the original: 100 steps (the default)

A flag that has no effect in the run at any value says that instead, with the reason its
`warning:` line gives (run_header.zero_flag_reasons asks preflight/ineffective_flags.py), never
what its 0 would do (`--max_ckpts_to_keep=0 has no effect without --train_dir (checkpoints are
written there)`, not "every checkpoint is kept").

Most become None (unset here too). Two do not: `--num_eval_batches=0` or `--num_eval_epochs=0`
without the other evaluated the original's 100 batches (its default --num_batches), not its
usual default (--num_batches), so here 100 batches too; and `--max_ckpts_to_keep=0` stays 0,
which TensorFlow's Saver reads as "delete none" (the original passed it on unchanged).

Pure Python, no TensorFlow: the command calls it before TensorFlow loads.
"""

from __future__ import annotations

import textwrap

#: The original's count of steps without --num_batches or --num_epochs (its
#: _DEFAULT_NUM_BATCHES), which its --num_eval_batches=0 evaluated too.
ORIGINAL_DEFAULT_BATCHES = 100

#: The flags whose 0 is unset (None here), in the parameter table's order of concern, each with
#: what unset leaves when it is not worked out from other flags (`_meaning`).
UNSET_BY_ZERO = {
    'num_batches': None,  # worked out: the steps the run takes
    'num_epochs': None,
    'save_model_steps': 'no checkpoint every N steps',
    'eval_during_training_every_n_epochs': 'no evaluation every N epochs',
    'stop_at_top_1_accuracy': 'training does not stop at an accuracy',
    'num_eval_batches': None,  # worked out: what an evaluation scores
    'num_eval_epochs': None,
    'datasets_num_private_threads': "no private thread pool (tf.data runs on TensorFlow's "
                                    'shared threads)',
    'datasets_parallel_interleave_cycle_length': 'every shard (up to 64) read at once, the '
                                                 'default',
    'fp16_loss_scale': 'the default loss scale, 128',
    'resnet_base_lr': 'the default, 0.128 per 256 images',
    'autotune_threshold': 'TF_AUTOTUNE_THRESHOLD is not set',
}
#: The flags whose 0 is kept, with what it means (the original handed it on unchanged).
KEPT_ZERO = {
    'max_ckpts_to_keep': 'every checkpoint is kept',
}
_EVAL_DURING_TRAINING = ('eval_during_training_every_n_steps',
                         'eval_during_training_every_n_epochs',
                         'eval_during_training_at_specified_steps',
                         'eval_during_training_at_specified_epochs')


def zero_flags(values) -> list[str]:
    """The names of UNSET_BY_ZERO and KEPT_ZERO given 0 in `values` (Params, or a dict of the
    flags as given: RunPlan.given_flags), in UNSET_BY_ZERO's order, then KEPT_ZERO's."""
    get = values.get if isinstance(values, dict) else lambda name: getattr(values, name, None)
    return [name for name in (*UNSET_BY_ZERO, *KEPT_ZERO)
            if not isinstance(get(name), bool) and get(name) == 0]


def evaluates(p) -> bool:
    """Whether the run of Params `p` evaluates (--eval, or --eval_during_training_*: any of
    them set, after `as_unset`). run_plan.evaluates also asks for a training run; here a
    forward-only run's evaluation flags count too: the flags are still given."""
    return bool(p.eval or any(getattr(p, name) for name in _EVAL_DURING_TRAINING))


def as_unset(p):
    """`p` with each 0 of UNSET_BY_ZERO replaced by what the original made of it (module
    docstring): None, or for an evaluation's --num_eval_batches/--num_eval_epochs given 0
    without a positive other one, 100 batches (ORIGINAL_DEFAULT_BATCHES). Params without such
    a 0 are returned as they are.

    Args:
      p: Params as parsed (params.Params).

    Returns:
      Params (a new one when something changed).
    """
    zeros = [name for name in zero_flags(p) if name in UNSET_BY_ZERO]
    if not zeros:
        return p
    p = p._replace(**{name: None for name in zeros})
    if ({'num_eval_batches', 'num_eval_epochs'} & set(zeros) and p.num_eval_batches is None
            and p.num_eval_epochs is None and evaluates(p)):
        p = p._replace(num_eval_batches=ORIGINAL_DEFAULT_BATCHES)
    return p


def _said(name: str, given: dict, p, no_effect: dict) -> str:
    """What flag `name`, given 0, became in the run of resolved Params `p`: the rest of its
    header sentence after '--NAME=0' (`no_effect`: see header_lines)."""
    if name in no_effect:
        return ' has no effect ' + no_effect[name]
    unset = ' is unset, as in the original: '
    if name in ('num_batches', 'num_epochs'):
        if p.num_epochs is not None:
            return unset + 'the steps of --num_epochs=%g' % p.num_epochs
        return unset + '%d steps (%s)' % (
            p.num_batches, '--num_batches' if given.get('num_batches') else 'the default')
    if name in ('num_eval_batches', 'num_eval_epochs'):
        if not evaluates(p):
            return unset + 'nothing is evaluated in this run'
        if given.get('num_eval_epochs'):
            return unset + 'each evaluation scores --num_eval_epochs=%g' % p.num_eval_epochs
        if given.get('num_eval_batches'):
            return unset + 'each evaluation scores --num_eval_batches=%d' % p.num_eval_batches
        return ', as in the original: %d batches per evaluation (its default)' % (
            p.num_eval_batches)
    if name in KEPT_ZERO:
        return ', as in the original: ' + KEPT_ZERO[name]
    return unset + UNSET_BY_ZERO[name]


def header_lines(given: dict | None, p, width: int = 87,
                 no_effect: dict | None = None) -> list[str]:
    """The header's `Flags at 0:` lines: one sentence per flag of `given` at 0 (UNSET_BY_ZERO,
    KEPT_ZERO), each wrapped to `width` characters after the name column; [] when there is
    none.

    Args:
      given: {flag: value} as the user gave them (RunPlan.given_flags), or None (unknown).
      p: the run's resolved Params (RunPlan.params).
      no_effect: {flag: why} of those flags that have no effect in this run at any value,
        `why` the rest of their `warning:` line after '--NAME has no effect ' (e.g. 'without
        --train_dir (checkpoints are written there)'): their sentence says that instead.
    """
    lines = []
    for name in zero_flags(given or {}):
        lines += textwrap.wrap('--%s=0%s' % (name, _said(name, given, p, no_effect or {})),
                               width, subsequent_indent='  ')
    return ['%-13s%s' % ('Flags at 0:' if i == 0 else '', line) for i, line in enumerate(lines)]
