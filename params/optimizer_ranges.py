"""The valid ranges of the optimizers' hyper-parameters beyond the table's lower bounds
(params/__init__.py: --momentum, --rmsprop_momentum >= 0 there), each with its source;
`check_ranges` there calls `problem`. A value is refused whichever --optimizer the run uses, as
the table's bounds are: a value outside its range is a mistake in any command (a warning would
let it stand until the command's --optimizer changes); the line says when the run's optimizer
does not read the flag. Each bound has its own reason.

    flag                        range    source
    --momentum,                 [0, 1)   the heavy ball, Polyak 1964, "Some methods of speeding
      --rmsprop_momentum                 up the convergence of iteration methods"; Sutskever,
                                         Martens, Dahl & Hinton 2013, "On the importance of
                                         initialization and momentum in deep learning" (mu in
                                         [0, 1)): v = mu x v + g forgets a gradient after k
                                         steps by mu^k only when mu < 1; at 1 every old
                                         gradient is kept (RMSProp's momentum accumulates
                                         g / sqrt(ms + eps) the same way in TF1).
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

# flag -> (low, low included, why below it, high or None, high included, why above it).
RANGES = {
    'momentum': (0.0, True, 'a negative momentum flips the sign of the velocity every step',
                 1.0, False, 'the heavy-ball velocity v = momentum x v + gradient (Polyak 1964; '
                 'Sutskever et al. 2013) forgets old gradients only when momentum < 1; at 1 or '
                 'above it never decays and the steps grow without bound'),
    'rmsprop_momentum': (0.0, True, 'a negative momentum flips the sign of the velocity every '
                         'step', 1.0, False, 'RMSProp\'s momentum accumulates its scaled '
                         'gradients as the heavy ball does (Polyak 1964; Sutskever et al. 2013), '
                         'forgetting old ones only when momentum < 1; at 1 or above the steps '
                         'grow without bound'),
    'adam_beta1': (0.0, True, 'the first moment is a moving average, m = beta1 x m + (1 - beta1) '
                   'x g, and a negative beta1 flips the sign of the old gradients every step '
                   '(Kingma & Ba 2015, Algorithm 1: beta1 in [0, 1))',
                   1.0, False, 'Adam\'s decay rate of the first moment (Kingma & Ba 2015, '
                   'Algorithm 1); at 1 its bias correction 1 - beta1^t is 0'),
    'adam_beta2': (0.0, True, 'the second moment is a moving average, v = beta2 x v + (1 - '
                   'beta2) x g^2, and a negative beta2 can make it negative and its square root '
                   'NaN (Kingma & Ba 2015, Algorithm 1: beta2 in [0, 1))',
                   1.0, False, 'Adam\'s decay rate of the second moment (Kingma & Ba 2015, '
                   'Algorithm 1); at 1 every step is 0'),
    'adam_epsilon': (0.0, False, 'Adam divides by sqrt(v) + epsilon, and v is 0 for a weight '
                     'whose gradients were 0', None, False, ''),
    'rmsprop_decay': (0.0, True, 'the weight of the old mean square in RMSProp\'s moving '
                      'average (Tieleman & Hinton 2012) cannot be negative: the mean square '
                      'could become negative and its square root NaN',
                      1.0, True, 'the weight of the old mean square in RMSProp\'s moving average '
                      '(Tieleman & Hinton 2012); above 1 the new gradient\'s weight 1 - decay is '
                      'negative'),
    'rmsprop_epsilon': (0.0, False, 'RMSProp divides by sqrt(mean square + epsilon), which may '
                        'be 0 without it', None, False, ''),
}
# The optimizer that reads each flag (graph/learning_rate.make_optimizer).
READ_BY = {'momentum': 'momentum', 'rmsprop_decay': 'rmsprop', 'rmsprop_momentum': 'rmsprop',
           'rmsprop_epsilon': 'rmsprop', 'adam_beta1': 'adam', 'adam_beta2': 'adam',
           'adam_epsilon': 'adam'}


def interval(name: str) -> str:
    """The range of flag `name` as text: '[0, 1)', '> 0'."""
    low, low_in, _, high, high_in, _ = RANGES[name]
    if high is None:
        return '%s %g' % ('>=' if low_in else '>', low)
    return '%s%g, %g%s' % ('[' if low_in else '(', low, high, ']' if high_in else ')')


def problem(p) -> str | None:
    """The first optimizer hyper-parameter of `p` outside its range, as one usage-error line
    naming the flag, its range, why (the reason of the bound it crossed) and the value
    received; None when all are within. A value out of range is refused whatever --optimizer
    is (a command holding it is wrong, and goes wrong the day its optimizer changes); for
    another optimizer's flag the line says the run would not read it anyway.

    Example: '--adam_beta1 must be in [0, 1): Adam's decay rate of the first moment (Kingma &
    Ba 2015, Algorithm 1); at 1 its bias correction 1 - beta1^t is 0. Received: adam_beta1=1.0'
    """
    for name, (low, low_in, low_why, high, high_in, high_why) in RANGES.items():
        value = getattr(p, name)
        if value is None:
            continue
        above_low = value >= low if low_in else value > low
        below_high = high is None or (value <= high if high_in else value < high)
        if not (above_low and below_high):
            unread = ('' if READ_BY[name] == p.optimizer else ' (--optimizer=%s does not read '
                      'it, but the value is impossible for --optimizer=%s)' % (
                          p.optimizer, READ_BY[name]))
            return '--%s must be %s%s: %s. Received: %s=%r%s' % (
                name, 'in ' if high is not None else '', interval(name),
                low_why if not above_low else high_why, name, value, unread)
    return None
