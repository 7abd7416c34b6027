"""The losses of each graph choice forced on against today's graph, step by step, in bfloat16
units in the last place (ulps).

    python -m bench.bench_choice_losses [--steps=30] [--image_size=64] [--batch_size=4]

Runs `tf_cnn_benchmarks` as fresh processes on the same synthetic batches (--tf_random_seed,
--init_learning_rate=1e-4: a smooth trajectory) with --use_bf16 and --display_every=1: today's
graph twice (its run-to-run spread: the floor of any comparison) and each choice of
params/graph_choice_flag.py forced on once. Per choice: the first step's loss difference (the
same weights), the largest over the steps, and the steps within one ulp of today's loss (one
ulp of a loss x: 2**(floor(log2 |x|) - 7), bfloat16's 8 significant bits). Losses are read from
the step lines (3 decimals: well under an ulp for losses above 0.5).

Writes results/<date>-cpu-tf<X.Y>-choice-losses-<model>.json and .md (bench/bench_report.py).
"""

from __future__ import annotations

import math
import os
import subprocess
import sys

from . import bench_report
from .preamble import REPO, RESULTS, ArgumentParser

CHOICES = ('conv1x1_matmul', 'shortcut_matmul', 'conv1x1_filter_matmul', 'relu_xla',
           'residual_xla', 'relu_float32', 'residual_float32')


def ulp(loss: float) -> float:
    """One bfloat16 ulp at `loss` (8 significant bits)."""
    return 2.0 ** (math.floor(math.log2(abs(loss))) - 7)


def run_losses(args, graph_choices: str) -> list[float]:
    """The step losses of one run (raises RuntimeError with the output's tail on a failure)."""
    cmd = [sys.executable, 'tf_cnn_benchmarks.py', '--model=%s' % args.model,
           '--image_size=%d' % args.image_size, '--batch_size=%d' % args.batch_size,
           '--num_batches=%d' % args.steps, '--num_warmup_batches=0', '--display_every=1',
           '--use_bf16', '--tf_random_seed=3', '--init_learning_rate=1e-4', '--noresults_db',
           '--graph_choices=%s' % graph_choices]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True,
                          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL='3'))
    losses = [float(line.split('\t')[-1]) for line in proc.stdout.splitlines()
              if line.split('\t')[0].isdigit() and 'images/sec' in line]
    if proc.returncode != 0 or len(losses) != args.steps:
        raise RuntimeError('%s: exit %d, %d losses: %s' % (graph_choices, proc.returncode,
                                                           len(losses), proc.stderr[-1500:]))
    return losses


def compare(base: list[float], other: list[float]) -> dict:
    """{'first_ulps', 'max_ulps', 'within_one_ulp' (steps)} of `other` against `base`."""
    ulps = [abs(a - b) / ulp(a) for a, b in zip(base, other)]
    return {'first_ulps': ulps[0], 'max_ulps': max(ulps),
            'within_one_ulp': sum(u <= 1.0 for u in ulps)}


def main(argv=None) -> int:
    parser = ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--model', default='resnet50')
    parser.add_argument('--image_size', type=int, default=64)
    parser.add_argument('--batch_size', type=int, default=4)
    parser.add_argument('--steps', type=int, default=30)
    parser.add_argument('--choices', default=','.join(CHOICES))
    args = parser.parse_args(argv)
    runs = {'off': run_losses(args, 'off'), 'off again': run_losses(args, 'off')}
    for name in args.choices.split(','):
        runs[name] = run_losses(args, name)
        print('%-22s %s' % (name, compare(runs['off'], runs[name])), flush=True)
    rows = {name: compare(runs['off'], losses) for name, losses in runs.items() if name != 'off'}
    title = ('%s training in bfloat16, batch %d, %dx%d synthetic, %d steps: each run against '
             '--graph_choices=off (ulp: bfloat16\'s at that step\'s loss)'
             % (args.model, args.batch_size, args.image_size, args.image_size, args.steps))
    table = bench_report.markdown_table(
        ['--graph_choices', 'step 1 (ulps)', 'largest (ulps)', 'steps within 1 ulp'], 'lrrr',
        [[name, '%.2f' % r['first_ulps'], '%.2f' % r['max_ulps'],
          '%d of %d' % (r['within_one_ulp'], args.steps)] for name, r in rows.items()])
    losses = 'Losses of `off`: ' + ', '.join('%.3f' % x for x in runs['off'])
    return bench_report.finish(RESULTS, 'choice-losses-%s' % args.model,
                               {'args': vars(args), 'losses': runs, 'rows': rows},
                               '\n'.join([title, '', table, '', losses]))


if __name__ == '__main__':
    sys.exit(main())
