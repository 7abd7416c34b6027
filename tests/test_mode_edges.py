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


@pytest.mark.parametrize('mode, line', [
    ({}, 'Optimizer:   sgd, weight decay 4e-05 inside the updates (fused)'),
    ({'forward_only': True, 'optimizer': 'momentum'},
     'Optimizer:   momentum, not applied (forward-only: no backward pass, no updates, no '
     'learning rate)'),
    ({'eval': True}, 'Optimizer:   sgd, not applied (eval: no backward pass, no updates, no '
     'learning rate)')])
def test_every_header_prints_the_optimizer_and_only_training_its_weight_decay(mode, line):
    # The original prints `Optimizer:` in every mode, the flag's value alone (a log parser
    # reads it: it stays first); forward-only and eval runs apply no updates, and said
    # `Optimizer:   momentum` while three warnings said the optimizer flags had no effect.
    assert line in helpers.tiny_bench(**mode).info_lines()


def test_hierarchical_copy_on_one_device_warns(capsys):
    helpers.tiny_bench(hierarchical_copy=True, variable_update='replicated')
    assert capsys.readouterr().err == (
        'warning: --hierarchical_copy has no effect with --variable_update=replicated on one '
        'device (one tower: there is no all-reduce, nothing to pack, merge or copy; '
        '--num_gpus=N gives N towers)\n')


def test_a_cluster_tasks_flags_are_checked_with_its_worker_list():
    # --worker_hosts is a list flag: a worker task of the README's quick tf_cnn_cluster run
    # failed here with "'list' object has no attribute 'split'" before any step.
    from tf_cnn_benchmarks import params
    from tf_cnn_benchmarks.preflight import ineffective_flags
    task = params.make_params(job_name='worker', task_index=1, ps_hosts=['127.0.0.1:1'],
                              worker_hosts=['127.0.0.1:2', '127.0.0.1:3'], device='cpu')
    assert ineffective_flags.messages(task, 0, None) == []
    # distributed_all_reduce's controller: the one cluster mode that reads --hierarchical_copy
    # (distributed_replicated never did: its line says so, test_all_reduce_flags_...).
    one = params.make_params(job_name='controller', controller_host='127.0.0.1:1',
                             worker_hosts=['127.0.0.1:2'], device='cpu', hierarchical_copy=True,
                             variable_update='distributed_all_reduce')
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
    p = params.make_params(hierarchical_copy=True, job_name='controller', worker_hosts=workers,
                           controller_host='h:3', variable_update='distributed_all_reduce')
    said = any('--hierarchical_copy' in m for m in ineffective_flags.messages(p, 0))
    assert said == warned


def _said(p, given=frozenset()):
    from tf_cnn_benchmarks.preflight import ineffective_flags
    return ineffective_flags.messages(p, 0, None, frozenset(given))


def test_forward_only_reads_loss_type_to_report_and_always_has_the_accuracy_columns():
    # Forward-only step lines have the original's columns (tests/test_forward_only.py): the
    # loss column named by --loss_type_to_report (before: "has no effect with --forward_only"),
    # and the accuracy columns, which --print_training_accuracy no longer adds there.
    from tf_cnn_benchmarks import params
    said = _said(params.make_params(forward_only=True, loss_type_to_report='base_loss',
                                    print_training_accuracy=True))
    assert said == ["--print_training_accuracy has no effect with --forward_only (its step "
                    "lines always have the top_1_accuracy and top_5_accuracy columns, as the "
                    "original's)"]


def test_cross_replica_sync_warns_where_no_workers_share_updates():
    from tf_cnn_benchmarks import params
    one_host = params.make_params(cross_replica_sync=False)
    assert ('--cross_replica_sync has no effect on one host (it chooses synchronous or '
            'asynchronous updates between a cluster\'s workers: --job_name, TF_CONFIG or '
            'Slurm)') in _said(one_host)
    # Typed at its default (true): on one host there is nothing to synchronise; silent.
    assert not [m for m in _said(params.make_params(), given={'cross_replica_sync'})
                if m.startswith('--cross_replica_sync ')]
    cluster = dict(job_name='worker', ps_hosts=['h:1'], variable_update='parameter_server',
                   cross_replica_sync=False)
    one_worker = params.make_params(worker_hosts=['h:2'], **cluster)
    assert ('--cross_replica_sync has no effect with one worker (it chooses synchronous or '
            'asynchronous updates between several workers)') in _said(one_worker)
    two = params.make_params(worker_hosts=['h:2', 'h:3'], **cluster)
    assert not [m for m in _said(two) if 'cross_replica_sync' in m]


def test_datasets_use_prefetch_warns_where_no_tf_data_pipeline_reads():
    """The tf.data input always prefetches (its default, True, is what happens with
    --use_datasets); RecordInput and synthetic data have no tf.data pipeline, so the flag,
    typed at any value, does nothing there."""
    from tf_cnn_benchmarks import params
    typed = {'datasets_use_prefetch'}
    record_input = params.make_params(data_dir='/data', data_name='imagenet')
    assert _said(record_input, typed) == [
        '--datasets_use_prefetch has no effect without --use_datasets (RecordInput reads the '
        'files)']
    assert _said(params.make_params(), typed) == [
        '--datasets_use_prefetch has no effect on synthetic data (no --data_dir: nothing is '
        'read or preprocessed)']
    tf_data = params.make_params(data_dir='/data', data_name='imagenet', use_datasets=True)
    assert _said(tf_data, typed) == []
    assert _said(record_input) == []  # not typed, at its default: nothing asked for
    # At another value: where tf.data reads, the original flag's own message, once; where
    # RecordInput reads, the mode's (the tf.data input's prefetching is not this run's).
    off = [m for m in _said(tf_data._replace(datasets_use_prefetch=False), typed)
           if m.startswith('--datasets_use_prefetch ')]
    assert off == ['--datasets_use_prefetch has no effect here: the tf.data input always '
                   'prefetches; use --datasets_prefetch_buffer_size to size it']
    assert _said(record_input._replace(datasets_use_prefetch=False), typed) == [
        '--datasets_use_prefetch has no effect without --use_datasets (RecordInput reads the '
        'files)']


@pytest.mark.cli
def test_the_command_warns_of_a_flag_typed_at_its_default_without_effect():
    out = helpers.run_command('--model=trivial', '--batch_size=2', '--num_batches=1',
                              '--num_warmup_batches=0', '--image_size=8', '--noresults_db',
                              '--datasets_use_prefetch', '--cross_replica_sync=false')
    assert out.returncode == 0, out.stderr
    assert ('warning: --datasets_use_prefetch has no effect on synthetic data (no --data_dir: '
            'nothing is read or preprocessed)') in out.stderr.splitlines()
    assert any(line.startswith('warning: --cross_replica_sync has no effect on one host ')
               for line in out.stderr.splitlines())
