"""The gate recipes of the docs (docs/campaigns.md's CI recipe, the README's cheat-sheet
campaign) make runs the gate can judge: every run's timed part long enough for its host load
to be measured (metrics/host_load.py min_wall_secs), else `compare` leaves it out as unclean
and the configuration is never judged (sweep53: trivial's 50 steps at batch 32 on CIFAR-10
timed 0.09 s, 'not measured').

No run: the timed part's lower bound is its training FLOPs (3 x the forward FLOPs of the model
catalog, per image, x batch x steps) at FAST_FLOPS, a rate well above any CPU the recipe is
meant for; the real part is longer (overheads, a slower CPU).
"""

import os
import re
import shlex

import pytest

from tf_cnn_benchmarks.metrics import host_load
from tf_cnn_benchmarks.models import model_catalog

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# 1 TFLOP/s: over 3 times the 307.8 GFLOP/s peak measured on the project's 2-core CPU.
FAST_FLOPS = 1.0e12


def _sweeps_before_a_compare(path: str) -> list[list[str]]:
    """The `tf_cnn_sweep` commands (as argument lists) of each fenced block of `path` that
    also runs `tf_cnn_sweep compare` (a gate recipe)."""
    with open(os.path.join(REPO, path), encoding='utf-8') as f:
        text = f.read()
    found = []
    for block in re.findall(r'```sh\n(.*?)```', text, re.S):
        lines = block.replace('\\\n', ' ').splitlines()
        commands = [shlex.split(line, comments=True) for line in lines]
        if not any(c[:2] == ['tf_cnn_sweep', 'compare'] for c in commands):
            continue
        found += [c for c in commands if c[:1] == ['tf_cnn_sweep'] and c[1:2] != ['compare']]
    return found


def _flag(args: list[str], name: str, default=None) -> str | None:
    values = [a.split('=', 1)[1] for a in args if a.startswith('--%s=' % name)]
    return values[-1] if values else default


@pytest.mark.parametrize('path', ['docs/campaigns.md', 'README.md'])
def test_every_run_of_a_documented_gate_recipe_is_long_enough_to_be_judged(path):
    sweeps = _sweeps_before_a_compare(path)
    assert sweeps, 'no gate recipe found in %s' % path
    need = host_load.min_wall_secs(2, 2, 100)['others']  # 0.12 s on a 2-core CPU
    for args in sweeps:
        data = _flag(args, 'data_name', 'imagenet')
        steps = int(_flag(args, 'num_batches', '100'))
        for model in _flag(args, 'models').split(','):
            row = model_catalog.row(model, data)
            assert row is not None, (model, data)
            for batch in _flag(args, 'batch_sizes', str(row.batch_size)).split(','):
                secs = 3 * row.gflops * 1e9 * int(batch) * steps / FAST_FLOPS
                assert secs >= need, (
                    '%s: %s at batch %s, %d steps: its timed part may last %.3f s, under the '
                    '%.2f s its host load needs to be measured' % (path, model, batch, steps,
                                                                   secs, need))
