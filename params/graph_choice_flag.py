"""--graph_choices: which measured graph choices a training graph makes (graph/graph_choices.py).

Grammar: `measured` (the default: each choice where the per-host probe measured it faster),
`off` (today's graph, no choice), or a comma-separated list of choice names, each forced on
wherever it applies (the others off): e.g. `--graph_choices=conv1x1_matmul` or
`--graph_choices=conv1x1_matmul,shortcut_matmul,residual_xla`. The float32 forms apply to
bfloat16 and float16 graphs only; where a site is given both an XLA and a float32 form, XLA's
is built.
"""

from __future__ import annotations

#: The choices, each with what it builds (graph/graph_choices.py measures and applies them).
CHOICES = {
    'conv1x1_matmul': 'a 1x1 convolution of stride 1 as one MatMul (its gradients MatMuls)',
    'shortcut_matmul': 'a 1x1 convolution of stride 2 (a projection shortcut) as a strided '
                       'slice and one MatMul',
    'conv1x1_filter_matmul': 'a 1x1 convolution (stride 1 or 2) whose filter gradient is one '
                             'MatMul (forward and input gradient stay convolutions)',
    'relu_xla': 'the ReLU after a batch norm as an XLA cluster, its gradient (with the sum of '
                'its consumers\' gradients) as another',
    'residual_xla': 'a residual unit\'s add and ReLU as one XLA cluster, its gradient (the sum '
                    'of the output\'s gradients and ReluGrad) as another',
    'relu_float32': 'the ReLU after a batch norm and its gradient in float32, cast around '
                    '(reduced precision only)',
    'residual_float32': 'a residual unit\'s add and ReLU and their gradient in float32, cast '
                        'around (reduced precision only)',
}
MEASURED, OFF = 'measured', 'off'


def parse(value: str | None):
    """'measured', 'off', or the frozenset of forced choice names.

    Raises:
      ValueError: an empty value or an unknown name (the message lists the valid ones).
    """
    text = (value or '').strip()
    if text in (MEASURED, OFF):
        return text
    names = [part.strip() for part in text.split(',')]
    unknown = [n for n in names if n not in CHOICES]
    if not text or unknown:
        raise ValueError('--graph_choices takes measured, off or a comma-separated list of %s. '
                         'Received: graph_choices=%r' % (', '.join(CHOICES), value))
    return frozenset(names)
