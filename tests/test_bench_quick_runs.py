"""bench/bench_quick_runs.py and bench/bench_vs_original.py keep what each run said beside its
figure: its own busy-host verdict, and (against the original) a loss that went nan (a skeptic
found the results files said nothing of either)."""

from __future__ import annotations

import subprocess

import checkout

bench_quick_runs = checkout.load_bench('bench_quick_runs')
bench_vs_original = checkout.load_bench('bench_vs_original')

BUSY = ('warning: the total line\'s images/sec is not representative of this host: other '
        'processes used 1.28 of the run\'s 2 cores (64%, more than 25%) during the timed '
        'part; rerun when the host is quiet\n')


def _timed(monkeypatch, stderr: str) -> dict:
    done = subprocess.CompletedProcess([], 0, stdout='total images/sec: 12.50\n', stderr=stderr)
    monkeypatch.setattr(bench_quick_runs.subprocess, 'run', lambda *a, **k: done)
    return bench_quick_runs.time_command('tf_cnn_benchmarks --model=trivial', 60)


def test_each_run_keeps_its_own_busy_verdict(monkeypatch):
    busy, quiet = _timed(monkeypatch, BUSY), _timed(monkeypatch, '')
    assert (busy['busy'], quiet['busy']) == (True, False)
    assert busy['images_per_sec'] == 12.5
    table = bench_quick_runs.markdown([busy, quiet]).splitlines()
    assert table[0].endswith('| load before | the run said |')
    assert table[2].endswith('| busy host |') and table[3].endswith('| quiet host |')


def test_the_comparison_with_the_original_keeps_busy_runs_and_nan_losses(monkeypatch):
    outputs = iter([('1\timages/sec: 50.0 +/- 0.0 (jitter = 0.0)\t6.900\n'
                     'total images/sec: 50.00\n', BUSY),
                    ('1\timages/sec: 40.0 +/- 0.0 (jitter = 0.0)\tnan\n'
                     'total images/sec: 40.00\n', '')])
    monkeypatch.setattr(bench_vs_original.subprocess, 'run', lambda *a, **k: (
        subprocess.CompletedProcess([], 0, *next(outputs))))
    args = type('Args', (), dict(warmup=1, repeats=1, steps_scale=1.0, timeout=60,
                                 original_python='python', original_dir='.'))()
    row = bench_vs_original.measure(next(iter(bench_vs_original.CONFIGS)), args)
    assert (row['ours'], row['original']) == (50.0, 40.0)
    assert row['notes'] == {'ours': ['busy host'], 'original': ['loss nan']}
    meta = dict(cpu='x', cores=2, tensorflow='2.21', warmup=1, repeats=1, load_before=0.1,
                load_after=0.2)
    table = bench_vs_original.markdown([row], None, meta)
    assert table.splitlines()[2].endswith('| the runs said |')
    assert table.splitlines()[-1].endswith('| original: loss nan; ours: busy host |')
