"""Edges of the eval and forward-only modes: a usage error up front, what the header and the
run say about weights and optimizers, and flags without effect on one device."""

import pytest

from tests.test_cli_edges import run_main

import helpers


@pytest.mark.cli
def test_eval_without_a_checkpoint_source_is_a_usage_error_before_tensorflow():
    status, out, err, loaded = run_main('--model=trivial', '--eval')
    assert (status, loaded, out.strip()) == (2, False, '')
    assert err == ("error: --eval needs a checkpoint: give --train_dir (a training run's "
                   "directory) or --checkpoint_path\n")


def test_forward_only_without_a_checkpoint_says_it_times_random_weights(capsys):
    helpers.tiny_run(forward_only=True, num_batches=1, num_warmup_batches=0)
    assert ('Forward-only: no --train_dir or --checkpoint_path; timing randomly initialised '
            'weights\n') in capsys.readouterr().out


@pytest.mark.parametrize('mode, shown', [({}, True), ({'forward_only': True}, False),
                                         ({'eval': True}, False)])
def test_only_training_headers_print_an_optimizer(mode, shown):
    lines = helpers.tiny_bench(**mode).info_lines()
    assert any(line.startswith('Optimizer:') for line in lines) == shown, lines


def test_hierarchical_copy_on_one_device_warns(capsys):
    helpers.tiny_bench(hierarchical_copy=True, variable_update='replicated')
    assert capsys.readouterr().err == (
        'warning: --hierarchical_copy has no effect on one device (it splits the all-reduce of '
        'several devices into two levels)\n')


def test_a_cluster_tasks_flags_are_checked_with_its_worker_list():
    # --worker_hosts is a list flag: a worker task of the README's quick tf_cnn_cluster run
    # failed here with "'list' object has no attribute 'split'" before any step.
    from tf_cnn_benchmarks import params
    from tf_cnn_benchmarks.preflight import ineffective_flags
    task = params.make_params(job_name='worker', task_index=1, ps_hosts=['127.0.0.1:1'],
                              worker_hosts=['127.0.0.1:2', '127.0.0.1:3'], device='cpu')
    assert ineffective_flags.messages(task, 0, None) == []
    one = params.make_params(job_name='worker', task_index=0, ps_hosts=['127.0.0.1:1'],
                             worker_hosts=['127.0.0.1:2'], device='cpu', hierarchical_copy=True,
                             variable_update='distributed_replicated')
    assert ineffective_flags.messages(one, 0, None) == [
        '--hierarchical_copy has no effect on one device (it splits the all-reduce of '
        'several devices into two levels)']


def test_an_unreadable_baseline_and_a_plot_without_matplotlib_are_usage_errors(monkeypatch):
    from tf_cnn_benchmarks import params
    from tf_cnn_benchmarks.preflight import usage
    with pytest.raises(params.ParamsError, match='--baseline=/nonexistent.json: cannot read it'):
        usage.check_extras(params.make_params(baseline='/nonexistent.json'))
    monkeypatch.setattr(usage.importlib.util, 'find_spec', lambda name: None)
    with pytest.raises(params.ParamsError, match='--plot_file needs matplotlib'):
        usage.check_extras(params.make_params(plot_file='/tmp/p.png'))


@pytest.mark.parametrize('workers, warned', [(['h:1'], True), (['h:1', 'h:2'], False)])
def test_hierarchical_copy_counts_a_clusters_workers_from_the_host_list(workers, warned):
    from tf_cnn_benchmarks import params
    from tf_cnn_benchmarks.preflight import ineffective_flags
    p = params.make_params(hierarchical_copy=True, job_name='worker', worker_hosts=workers,
                           ps_hosts=['h:3'], variable_update='distributed_replicated')
    said = any('--hierarchical_copy' in m for m in ineffective_flags.messages(p, 0))
    assert said == warned
