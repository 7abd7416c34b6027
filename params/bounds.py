"""A numeric flag's allowed range, as its usage error says it (validate_params).

The table's lower bound (`ParamSpec.lower`), said with what 0 means for the original's flags
whose 0 is "unset" (zero_values.py: 0 passes, taken so, before any rule reads the flags), so
the line never calls 0 refused where 0 is accepted:

    --save_model_steps must be >= 1, or 0 (unset, as in the original: no checkpoint every N
    steps). Received: save_model_steps=-3

the float16 loss scale's range (`loss_scale_problem`), and the upper bound of a fraction:
--stop_at_top_1_accuracy is a top-1 accuracy in [0, 1], as the original's evaluations reported
it (`Accuracy @ 1 = 0.7512`); a run can never reach 1.5.

The upper bound of a thread count (`THREAD_FLAGS`, at most `MOST_THREADS` = 1024), the same on
every host (a dry run or a cluster task's flags may be checked on another host than the one that
runs them): 1024 is above the logical CPUs of today's largest servers (8 sockets x 60 cores x 2
hyper-threads = 960; 2 x 192 x 2 = 768), so no host runs more threads of one pool at once, and
every thread costs its stack and a thread of the host: --num_intra_threads=100000 made 15,786
threads and 19 GB before its first step, without a word. A count above this host's CPUs but
within the bound runs, with one warning (runtime/cpu_tuning.oversubscription_warning).

Pure Python, no TensorFlow: the command calls it before TensorFlow loads.
"""

from __future__ import annotations

import re

from ..cnn_util import number_text
from .zero_values import KEPT_ZERO, UNSET_BY_ZERO

#: What 0 makes of the zero-is-unset flags whose unset value is worked out from other flags
#: (UNSET_BY_ZERO's None).
_WORKED_OUT = {
    'num_batches': 'the default number of steps',
    'num_epochs': 'the default number of steps',
    'num_eval_batches': '100 batches, unless --num_eval_epochs is given',
    'num_eval_epochs': '100 batches, unless --num_eval_batches is given',
}
#: The flags that are fractions in [0, 1], with what they are.
#: The flags that size a thread pool, bounded above by MOST_THREADS.
THREAD_FLAGS = ('num_intra_threads', 'num_inter_threads', 'datasets_num_private_threads',
                'per_gpu_thread_count')
#: The most threads one pool may have (the module's docstring says why 1024).
MOST_THREADS = 1024
FRACTIONS = {'stop_at_top_1_accuracy': 'a top-1 accuracy, a fraction from 0 to 1 (0.75 for '
                                       '75%), as the evaluations print it'}


#: What a flag's help says 0 is: '... (0: off).', '...; 0 uses the model default.'
_HELP_ZERO = re.compile(r'\(0: ([^);]+)|\b0 uses ([^.;]+)')


def zero_meaning(name: str, help_text: str = '') -> str | None:
    """What 0 means for flag `name` ('no checkpoint every N steps'), or, for a flag whose 0 is
    its own value, what its help text says 0 is ('the model default' from '0 uses the model
    default', 'off' from '(0: off)'); None when 0 is not special."""
    if name in KEPT_ZERO:
        return KEPT_ZERO[name]
    if name in UNSET_BY_ZERO:
        return UNSET_BY_ZERO[name] or _WORKED_OUT.get(name, 'unset')
    found = _HELP_ZERO.search(help_text)
    return (found.group(1) or found.group(2)).strip() if found else None


def problem(name: str, lower, value, help_text: str = '') -> str | None:
    """The usage error of `value` for flag `name` with lower bound `lower` (None: none), or
    None when it is in range; `help_text` (the flag's help) says what 0 is where the flag's
    own value 0 is special: '--batch_size must be >= 0 (0: the model default)'."""
    meaning = zero_meaning(name, help_text)
    if lower is not None and value < lower:
        if meaning is None:
            bound = '>= %s' % lower
        elif lower > 0:
            bound = '>= %s, or 0 (unset, as in the original: %s)' % (lower, meaning)
        else:
            bound = '>= %s (0: %s)' % (lower, meaning)
        return '--%s must be %s. Received: %s=%r' % (name, bound, name, value)
    if name in THREAD_FLAGS and value > MOST_THREADS:
        return ('--%s must be at most %d: more threads than the logical CPUs of any host today '
                '(960 on 8 sockets of 60 cores), which only crowd the CPUs and take memory; '
                'give at most this host\'s CPUs. Received: %s=%r'
                % (name, MOST_THREADS, name, value))
    if name in FRACTIONS and value > 1:
        return '--%s must be at most 1: it is %s. Received: %s=%r' % (
            name, FRACTIONS[name], name, value)
    return None


def loss_scale_problem(scale) -> str | None:
    """The usage error of --fp16_loss_scale=`scale` (None: unset) outside (0, 2**24], or None
    (without --use_fp16 the float16 flags have no effect: one warning each,
    preflight/ineffective_flags.py)."""
    if scale is None or 0 < scale <= 2.0 ** 24:
        return None
    return ('--fp16_loss_scale must be > 0 and at most 2**24 = 16777216 (the automatic scale\'s '
            'bound; float16 holds at most 65504, the default is 128; 0 is unset, as in the '
            'original: that default). Received: fp16_loss_scale=' + number_text(scale))
