"""Run flags that measure no images/sec, refused as flags of a sweep's runs (pkg56 finding 8):
`tf_cnn_sweep ... -- --dry_run` ran every dry run, then called each 'failed, exit status 0 ...
no results JSON' and exited 1. Now one error line before anything runs, exit 2, as the
flags the sweep sets itself are refused (tools/sweep/reserved.py)."""

from __future__ import annotations

import os

import pytest

from tf_cnn_benchmarks.tools.sweep import cli as sweep
from tf_cnn_benchmarks.tools.sweep import reserved


@pytest.mark.parametrize('flag, what', [
    ('--dry_run', 'a dry run builds the graph and runs no step'),
    ('--plan_scaling', 'it prints a predicted scaling plan and runs no step'),
    ('--calibrate=true', 'it measures this host for the calibration record and trains nothing'),
    ('--list_models', 'it prints the model table and runs nothing'),
    ('--only_check_args', 'it checks the flags and runs nothing'),  # absl's (params/absl_flags)
])
def test_a_flag_that_measures_nothing_is_refused_before_any_run(tmp_path, capsys, flag, what):
    out = tmp_path / 'sweep'
    status = sweep.main(['tf_cnn_sweep', '--output_dir=%s' % out, '--models=trivial',
                         '--batch_sizes=2', '--', '--device=cpu', flag])
    name = flag.split('=')[0]
    assert (status, capsys.readouterr().err) == (2, (
        "error: %s cannot be a flag of a sweep's runs: a sweep measures each run's images/sec, "
        'and %s; run tf_cnn_benchmarks %s with the same flags by itself. Received: %s\n'
        % (name, what, name, flag)))
    assert not os.path.exists(out)  # nothing ran, no folder made


def test_the_off_forms_pass_and_a_sweep_file_flag_is_refused_too(tmp_path, capsys):
    for off in ('--nodry_run', '--dry_run=false', '--plan_scaling=0'):
        assert reserved.reserved_flag(['--device=cpu', off]) is None, off
    sweep_file = tmp_path / 'sweep.yaml'
    sweep_file.write_text('models: [trivial]\nbatch_sizes: [2]\nflags: [--dry_run]\n')
    status = sweep.main(['tf_cnn_sweep', '--output_dir=%s' % (tmp_path / 'o'),
                         '--sweep_file=%s' % sweep_file])
    assert status == 2
    assert capsys.readouterr().err.startswith(
        "error: --dry_run cannot be a flag of a sweep's runs: ")
