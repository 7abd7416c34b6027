"""`--calibrate` on a busy host: every figure it measured (the graph choices, made while the
step's plan is built, and the CPU peak) is counted in its report, and the header does not tell
a --calibrate run to add --calibrate. The host's load and the measurements are injected (a fake
meter, fake probes), so the test holds on any CPU and under any load."""

from __future__ import annotations

import pytest

from tf_cnn_benchmarks.graph import graph_choices
from tf_cnn_benchmarks.hardware import calibration, cpu_peak

import helpers


@pytest.mark.cli
def test_a_busy_calibration_counts_every_figure_it_could_not_store(calibration_record,
                                                                   monkeypatch):
    monkeypatch.setattr(calibration, 'new_meter', lambda cores: helpers.FakeMeter(1.5, cores))
    monkeypatch.setattr(graph_choices, 'measure', lambda shapes, intra, inter: {
        (s, form): 0.5 for s in shapes for form in graph_choices.forms_of(s)})
    monkeypatch.setattr(cpu_peak, 'measure', lambda dtype, threads: (
        {'flops_per_sec': 1e11, 'kernel': 'matmul'}, 0.02))
    got = helpers.run_command('--calibrate', '--model=resnet50', '--image_size=32',
                              '--batch_size=2', '--device=cpu', '--num_intra_threads=2')
    lines = (got.stdout + got.stderr).splitlines()
    assert got.returncode == 3, got.stdout + got.stderr
    not_stored = [x for x in lines if x.startswith('calibration: NOT stored')]
    assert len(not_stored) == 2, lines
    assert any(' graph choice' in x for x in not_stored)
    assert any(' cpu peak|float32|2 threads: 100.0 GFLOP/s' in x for x in not_stored)
    assert got.stdout.splitlines()[-1] == (
        'calibration: 2 of 2 figures not stored: the host was busy; run '
        '`tf_cnn_benchmarks --calibrate` again when it is quiet')
    assert "graph choices: measured on a busy host, not stored: today's graph" in lines
    assert not any('add --calibrate' in x for x in lines)
