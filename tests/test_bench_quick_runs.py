"""bench/bench_quick_runs.py keeps each run's own host-load verdict beside the load average (a
skeptic found the results file said nothing of the runs that warned their host was busy)."""

from __future__ import annotations

import subprocess

import checkout

bench_quick_runs = checkout.load_bench('bench_quick_runs')

BUSY = ('warning: total images/sec is not representative of this host: other processes used '
        '1.28 of the run\'s 2 cores (64%, more than 25%) during the timed part; rerun when the '
        'host is quiet\n')


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
