"""The named configurations under configs/: each parses and passes the usage check, the command
line wins over a configuration, the dry run plans the 8-GPU one, and the sweep takes its axes."""

import os
import subprocess
import sys

import pytest

from tests.test_sweep import _parsed
from tf_cnn_benchmarks import flag_parsing, params
from tf_cnn_benchmarks.hardware import machine
from tf_cnn_benchmarks.params import configs
from tf_cnn_benchmarks.preflight import usage
from tf_cnn_benchmarks.tools.sweep import cli as sweep

import checkout

# What each configuration promises, checked against what it parses to.
EXPECTED = {
    'ci_smoke': dict(model='trivial', device='cpu', batch_size=8, num_batches=20),
    'cluster_smoke_cpu': dict(model='trivial', device='cpu',
                              variable_update='distributed_replicated'),
    'resnet50_2workers_distributed_replicated': dict(
        model='resnet50', num_gpus=1, batch_size=64, variable_update='distributed_replicated'),
    'resnet50_8gpu_replicated_nccl': dict(model='resnet50', device='gpu', num_gpus=8,
                                          batch_size=64, variable_update='replicated',
                                          all_reduce_spec='nccl', data_format='NCHW'),
    'resnet50_cpu': dict(model='resnet50', device='cpu', batch_size=16, use_bf16=False),
    'resnet50_cpu_bf16': dict(model='resnet50', device='cpu', batch_size=16, use_bf16=True),
}


def test_every_shipped_configuration_is_listed_and_checked_here():
    assert configs.names() == sorted(EXPECTED)


@pytest.mark.parametrize('name', sorted(EXPECTED))
def test_a_configuration_parses_to_what_it_promises_and_passes_the_usage_check(name,
                                                                              monkeypatch):
    # A GPU configuration is checked as on a GPU host: the NVIDIA driver's evidence injected
    # (without one the command refuses --device=gpu before TensorFlow loads: issue 40.6).
    monkeypatch.setattr(machine, 'nvidia_driver_evidence',
                        lambda: '/proc/driver/nvidia/version (injected)')
    p = flag_parsing.parse_flags(['tf_cnn_benchmarks', '--config=' + name])
    assert {k: getattr(p, k) for k in EXPECTED[name]} == EXPECTED[name]
    assert p.config == name
    if name.startswith('cluster') or '2workers' in name:
        return  # the hosts come from the launcher, TF_CONFIG or Slurm
    checked = usage.check_usage(p, resolve=True, paths=True, model=True,
                                command='tf_cnn_benchmarks')
    assert checked.resolution.params.model == EXPECTED[name]['model']


def test_the_command_line_wins_over_the_configuration_wherever_it_is_given():
    for argv in (['--config=resnet50_cpu', '--batch_size=4'],
                 ['--batch_size=4', '--config=resnet50_cpu']):
        p = flag_parsing.parse_flags(['tf_cnn_benchmarks'] + argv)
        assert (p.model, p.batch_size, p.num_batches) == ('resnet50', 4, 20)


def test_an_unknown_or_repeated_configuration_is_one_error_line_and_status_2():
    out = subprocess.run([sys.executable, os.path.join(checkout.REPO, 'tf_cnn_benchmarks.py'),
                          '--config=resnet50_gpu'], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and out.stdout == ''
    assert out.stderr.startswith('error: --config=resnet50_gpu: unknown configuration; known: '
                                 'ci_smoke, cluster_smoke_cpu, ')
    assert out.stderr.count('\n') == 1
    with pytest.raises(params.ParamsError, match='--config given 2 times'):
        flag_parsing.parse_flags(['x', '--config=ci_smoke', '--config=resnet50_cpu'])


def _dry_run(capsys, monkeypatch, *args):
    """The dry run's report of `tf_cnn_benchmarks --dry_run --gpu_model=V100 ARGS` (exit 0)."""
    from tf_cnn_benchmarks import benchmark_cnn
    from tf_cnn_benchmarks.preflight import dry_run
    monkeypatch.setattr(dry_run, 'MAX_SEARCH_SECS', 0.0)  # the report, not the batch search
    p = flag_parsing.parse_flags(['tf_cnn_benchmarks', *args, '--dry_run', '--gpu_model=V100'])
    checked = usage.check_usage(p, resolve=True, paths=True, model=True,
                                command='tf_cnn_benchmarks')
    make = lambda q, gpus: benchmark_cnn.BenchmarkCNN(q, gpus=gpus)
    assert dry_run.run(make, checked.params, 0) == 0
    return capsys.readouterr().out


def _dry_run_of_the_8_gpu_configuration(capsys, monkeypatch, *more):
    out = _dry_run(capsys, monkeypatch, '--config=resnet50_8gpu_replicated_nccl', *more)
    for text in ('planned for V100 16GB', '/GPU:7', 'Ops on a GPU without a GPU kernel: none',
                 'fits', 'on 8 device(s)', 'GPU <-> GPU'):
        assert text in out, text
    return out


def test_the_dry_run_plans_the_8_gpu_configurations_towers_and_all_reduce(capsys, monkeypatch):
    # A small model in the configuration's 8 towers (resnet50's: the slow test below).
    out = _dry_run_of_the_8_gpu_configuration(capsys, monkeypatch, '--model=trivial')
    assert "Devices:     ['/gpu:0', '/gpu:1', '/gpu:2', '/gpu:3', '/gpu:4', '/gpu:5'" in out
    assert 'Data format: NCHW\n' in out and 'Batch size:  512 global\n' in out


def test_the_dry_run_plans_a_worker_of_the_2_worker_configuration_per_gpu(capsys, monkeypatch):
    # The configuration's hosts come from the command line here (the launcher, TF_CONFIG or
    # Slurm elsewhere); a small model in its towers. Each of the worker's GPUs is checked
    # against the planned GPU, the ps's variables against the host (issue 33.1).
    out = _dry_run(capsys, monkeypatch, '--config=resnet50_2workers_distributed_replicated',
                   '--job_name=worker', '--task_index=0', '--ps_hosts=localhost:2222',
                   '--worker_hosts=localhost:2223,localhost:2224', '--model=trivial',
                   '--image_size=32')
    for text in ('planned for V100 16GB', '/job:worker/task:0/GPU:0', '/job:ps/task:0',
                 'usable (90% of 16.00 GiB)', 'Ops on a GPU without a GPU kernel: none'):
        assert text in out, text
    assert '/job:worker/task:0/GPU:1' not in out  # the configuration's one GPU per worker


@pytest.mark.slow
def test_the_dry_run_plans_the_8_gpu_configuration_on_a_v100_host(capsys, monkeypatch):
    out = _dry_run_of_the_8_gpu_configuration(capsys, monkeypatch, '--image_size=32')
    assert '/GPU:7    320.5 MiB of 14.40 GiB usable' in out


def test_the_sweep_takes_a_configurations_axes_and_its_other_flags_for_every_run(tmp_path):
    fv = _parsed(['--config=resnet50_cpu_bf16', '--batch_sizes=8,16',
                       '--output_dir=%s' % tmp_path])
    plan = sweep.build_plan(fv, ['--num_batches=3'])
    assert plan['axes'] == {'model': ['resnet50'], 'batch_size': [8, 16], 'num_gpus': [1],
                            'precision': ['bf16'], 'variable_update': ['parameter_server']}
    assert plan['extra_flags'] == ['--device=cpu', '--data_format=NHWC',
                                   '--num_warmup_batches=2', '--num_batches=20',
                                   '--num_batches=3']
    path = tmp_path / 'sweep.yaml'
    path.write_text('config: ci_smoke\nmodels: [trivial, lenet]\noutput_dir: %s\n' % tmp_path)
    plan = sweep.build_plan(_parsed(['--sweep_file=%s' % path]), [])
    assert plan['axes']['model'] == ['trivial', 'lenet'] and plan['axes']['batch_size'] == [8]
    with pytest.raises(sweep.SweepError, match=r'--config is set by the sweep for each run; '
                                               r'use --config before --'):
        sweep.build_plan(_parsed(['--models=trivial', '--batch_sizes=8',
                                       '--output_dir=%s' % tmp_path]), ['--config=ci_smoke'])


def test_a_configuration_given_with_a_space_or_in_a_flagfile_is_read(tmp_path):
    # A fresh user's finding: `--config NAME` and a flagfile's --config line were parsed and
    # silently ignored (the run took the defaults and recorded the name).
    p = flag_parsing.parse_flags(['tf_cnn_benchmarks', '--config', 'resnet50_cpu'])
    assert (p.model, p.batch_size, p.config) == ('resnet50', 16, 'resnet50_cpu')
    flagfile = tmp_path / 'run.flags'
    flagfile.write_text('--config=ci_smoke\n--num_batches=5\n')
    p = flag_parsing.parse_flags(['tf_cnn_benchmarks', '--flagfile=%s' % flagfile])
    assert (p.model, p.batch_size, p.num_batches) == ('trivial', 8, 5)
    p = flag_parsing.parse_flags(['tf_cnn_benchmarks', '--flagfile=%s' % flagfile,
                                  '--batch_size=2'])
    assert (p.batch_size, p.num_batches) == (2, 5)  # the command line still wins
    with pytest.raises(params.ParamsError, match='--config=nonexist: unknown configuration'):
        flag_parsing.parse_flags(['tf_cnn_benchmarks', '--config', 'nonexist'])
    flagfile.write_text('--config=nonexist\n')
    with pytest.raises(params.ParamsError, match='--config=nonexist: unknown configuration'):
        flag_parsing.parse_flags(['tf_cnn_benchmarks', '--flagfile=%s' % flagfile])
