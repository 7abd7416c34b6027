"""The valid ranges of the optimizers' hyper-parameters beyond the table's lower bounds
(params/__init__.py: --momentum, --rmsprop_momentum >= 0 there), each with its source;
`check_ranges` there calls `problem`. A value is refused whichever --optimizer the run uses, as
the table's bounds are: a value outside its range is a mistake in any command.

    flag                        range    source
    --adam_beta1, --adam_beta2  [0, 1)   Kingma & Ba 2015, "Adam: A Method for Stochastic
                                         Optimization", Algorithm 1 ("beta1, beta2 in [0, 1):
                                         exponential decay rates for the moment estimates").
                                         In TF1's AdamOptimizer the step is lr x sqrt(1 -
                                         beta2^t) / (1 - beta1^t): beta1 = 1 divides by 0 (the
                                         loss becomes NaN), beta2 = 1 makes every step 0.
    --adam_epsilon              > 0      the same step divides by sqrt(v_t) + epsilon, and v_t
                                         is 0 for a weight whose gradients were all 0: epsilon
                                         = 0 gives 0/0 (TF1 AdamOptimizer: "a small constant for
                                         numerical stability").
    --rmsprop_decay             [0, 1]   Tieleman & Hinton 2012, Coursera "Neural Networks for
                                         Machine Learning", lecture 6e: MeanSquare = decay x
                                         MeanSquare + (1 - decay) x g^2, a moving average (0.9
                                         there); above 1 the weight of g^2 is negative, the
                                         mean square can become negative and its square root
                                         NaN.
    --rmsprop_epsilon           > 0      TF1 RMSPropOptimizer: "small value to avoid zero
                                         denominator" (it divides by sqrt(ms + epsilon)).
"""

from __future__ import annotations

# flag -> (low, low included, high or None, high included, why).
RANGES = {
    'adam_beta1': (0.0, True, 1.0, False, 'Adam\'s decay rate of the first moment (Kingma & Ba '
                   '2015, Algorithm 1); at 1 its bias correction 1 - beta1^t is 0'),
    'adam_beta2': (0.0, True, 1.0, False, 'Adam\'s decay rate of the second moment (Kingma & '
                   'Ba 2015, Algorithm 1); at 1 every step is 0'),
    'adam_epsilon': (0.0, False, None, False, 'Adam divides by sqrt(v) + epsilon, and v is 0 '
                     'for a weight whose gradients were 0'),
    'rmsprop_decay': (0.0, True, 1.0, True, 'the weight of the old mean square in RMSProp\'s '
                      'moving average (Tieleman & Hinton 2012); above 1 the new gradient\'s '
                      'weight 1 - decay is negative'),
    'rmsprop_epsilon': (0.0, False, None, False, 'RMSProp divides by sqrt(mean square + '
                        'epsilon), which may be 0 without it'),
}


def interval(name: str) -> str:
    """The range of flag `name` as text: '[0, 1)', '> 0'."""
    low, low_in, high, high_in, _ = RANGES[name]
    if high is None:
        return '%s %g' % ('>=' if low_in else '>', low)
    return '%s%g, %g%s' % ('[' if low_in else '(', low, high, ']' if high_in else ')')


def problem(p) -> str | None:
    """The first optimizer hyper-parameter of `p` outside its range, as one usage-error line
    naming the flag, its range, why and the value received; None when all are within.

    Example: '--adam_beta1 must be in [0, 1): Adam's decay rate of the first moment (Kingma &
    Ba 2015, Algorithm 1); at 1 its bias correction 1 - beta1^t is 0. Received: adam_beta1=1.0'
    """
    for name, (low, low_in, high, high_in, why) in RANGES.items():
        value = getattr(p, name)
        if value is None:
            continue
        above_low = value >= low if low_in else value > low
        below_high = high is None or (value <= high if high_in else value < high)
        if not (above_low and below_high):
            return '--%s must be %s%s: %s. Received: %s=%r' % (
                name, 'in ' if high is not None else '', interval(name), why, name, value)
    return None
