"""The dry run's JSON report (--benchmark_log_dir, preflight/dry_run.report_data): the batch it
planned and how far its batch search got."""

from __future__ import annotations

import json
import os

from tf_cnn_benchmarks import benchmark_cnn
from tf_cnn_benchmarks.params import make_params
from tf_cnn_benchmarks.preflight import batch_search, dry_run


def _make_bench(q, gpus):
    return benchmark_cnn.BenchmarkCNN(q, gpus=gpus)


def _report(tmp_path, **flags) -> dict:
    p = make_params(model='trivial', image_size=16, dry_run=True, num_gpus=1, gpu_model='V100',
                    benchmark_log_dir=str(tmp_path), **flags)
    assert dry_run.run(_make_bench, p, 0) == 0
    (written,) = os.listdir(tmp_path)
    with open(os.path.join(str(tmp_path), written)) as f:
        return json.load(f)


def test_the_report_gives_the_batch_the_run_uses_when_batch_size_is_not_given(
        tmp_path, monkeypatch):
    # It said "batch_size": 0 (the flag's unset value) while predicted_step.batch_size said 64.
    monkeypatch.setattr(dry_run, 'largest_batch', lambda *args: dry_run.LargestBatch(96))
    data = _report(tmp_path)
    default = benchmark_cnn.BenchmarkCNN(make_params(model='trivial'), gpus=1).plan
    assert data['batch_size'] == default.per_device_batch_size > 0
    assert data['batch_size'] == data['predicted_step']['batch_size']


def test_a_search_that_stopped_before_a_batch_failed_says_its_answer_is_a_lower_bound(
        tmp_path, monkeypatch, capsys):
    # The text said '64 or more (16 x the run's batch of 4, where the search stops)' and the
    # JSON only "largest_batch": 64.
    monkeypatch.setattr(batch_search, 'search_batch',
                        lambda probe, batch, ratio, deadline, limit, max_builds: (limit, None, 3))
    data = _report(tmp_path, batch_size=4)
    assert "64 or more (16 x the run's batch of 4, where the search stops)" in (
        capsys.readouterr().out)
    assert (data['largest_batch'], data['largest_batch_is_lower_bound']) == (64, True)


def test_a_bracketed_answer_is_not_a_lower_bound(tmp_path, monkeypatch):
    monkeypatch.setattr(batch_search, 'search_batch',
                        lambda probe, batch, ratio, deadline, limit, max_builds: (40, 41, 4))
    data = _report(tmp_path, batch_size=4)
    assert (data['largest_batch'], data['largest_batch_is_lower_bound']) == (40, False)
