"""The original's flags that work here do what they say: GPU options in the session config and
the environment, the reported loss, the images/sec average, one L2 loss, the learning rate on
the CPU, evaluations at epochs and their summaries in --eval_dir, the test ID in the results,
MLPerf lines."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import types

import pytest
import tensorflow as tf

from tf_cnn_benchmarks import benchmark_cnn, cnn_util, params
from tf_cnn_benchmarks.graph import learning_rate
from tf_cnn_benchmarks.lifecycle import eval_during_training, mlperf_log
from tf_cnn_benchmarks.models import model_config
from tf_cnn_benchmarks.params import original_flags
from tf_cnn_benchmarks.preflight.ineffective_flags import ignored_flags
from tf_cnn_benchmarks.runtime import gpu_settings, session_config
from tf_cnn_benchmarks.tools.sweep import cli as sweep

import helpers
from helpers import tiny_bench, tiny_params, tiny_run

tf1 = tf.compat.v1


def test_gpu_options_land_in_the_session_config():
    config = session_config.make_session_config(tiny_params(
        device='cpu', allow_growth=False, gpu_memory_frac_for_testing=0.4,
        use_unified_memory=True, force_gpu_compatible=True, timestamped_allocator=True,
        gpu_kt_max_interval=3, gpu_kt_max_bytes=4096, gpu_kt_max_pending=5, gpu_indices='1,0'),
        1)
    gpu = config.gpu_options
    assert gpu.allow_growth is False
    assert gpu.per_process_gpu_memory_fraction == pytest.approx(0.4)
    assert gpu.force_gpu_compatible
    assert gpu.experimental.use_unified_memory and gpu.experimental.timestamped_allocator
    assert (gpu.experimental.kernel_tracker_max_interval, gpu.experimental.kernel_tracker_max_bytes,
            gpu.experimental.kernel_tracker_max_pending) == (3, 4096, 5)
    assert gpu.experimental.collective_ring_order == '1,0'
    default = session_config.make_session_config(tiny_params(device='cpu'), 1).gpu_options
    assert default.allow_growth and default.per_process_gpu_memory_fraction == 0
    assert not default.force_gpu_compatible and default.experimental.collective_ring_order == ''


def test_rewriter_config_and_enable_optimizations_reach_the_graph_options():
    config = session_config.make_session_config(tiny_params(
        device='cpu', rewriter_config='constant_folding: OFF layout_optimizer: OFF'), 1)
    rewrite = config.graph_options.rewrite_options
    off = rewrite.OFF
    assert rewrite.constant_folding == off and rewrite.layout_optimizer == off
    plain = session_config.make_session_config(tiny_params(device='cpu'), 1)
    assert plain.graph_options.rewrite_options.constant_folding != off
    assert not plain.graph_options.rewrite_options.disable_meta_optimizer
    config = session_config.make_session_config(
        tiny_params(device='cpu', enable_optimizations=False), 1)
    assert config.graph_options.rewrite_options.disable_meta_optimizer
    assert config.graph_options.optimizer_options.opt_level == tf1.OptimizerOptions.L0


def test_a_malformed_rewriter_config_is_a_usage_error_before_the_graph_is_built(monkeypatch):
    # Right after TensorFlow loads: the BenchmarkCNN (and so the graph) is never made.
    with pytest.raises(params.ParamsError, match='--rewriter_config is not a RewriterConfig'):
        tiny_bench(rewriter_config='constant_folding: 7x')
    with pytest.raises(params.ParamsError, match='--rewriter_config is not a RewriterConfig'):
        session_config.make_session_config(tiny_params(rewriter_config='constant_folding: 7x'), 1)


def test_gpu_thread_and_cudnn_flags_set_their_environment_variables():
    p = tiny_params(device='gpu', gpu_thread_mode='gpu_shared', per_gpu_thread_count=3,
                    num_gpus=2, winograd_nonfused=False, autotune_threshold=4)
    assert gpu_settings.environment_updates(p, {}) == {
        'TF_GPU_THREAD_MODE': 'gpu_shared', 'TF_GPU_THREAD_COUNT': '6',
        'TF_ENABLE_WINOGRAD_NONFUSED': '0', 'TF_USE_CUDNN_BATCHNORM_SPATIAL_PERSISTENT': '1',
        'TF_AUTOTUNE_THRESHOLD': '4', 'TF_SYNC_ON_FINISH': '0'}
    # Defaults on a GPU run are the original's, and keep what the user exported.
    updates = gpu_settings.environment_updates(tiny_params(device='gpu'),
                                               {'TF_GPU_THREAD_MODE': 'global'})
    assert 'TF_GPU_THREAD_MODE' not in updates and 'TF_GPU_THREAD_COUNT' not in updates
    assert updates['TF_ENABLE_WINOGRAD_NONFUSED'] == '1'
    assert gpu_settings.environment_updates(tiny_params(device='gpu'), {})[
        'TF_GPU_THREAD_COUNT'] == '2'
    # TF_SYNC_ON_FINISH: the original exported 0 unless --sync_on_finish (TensorFlow unset
    # syncs the devices after every step); a user's exported value stays.
    assert gpu_settings.environment_updates(tiny_params(device='gpu'), {})[
        'TF_SYNC_ON_FINISH'] == '0'
    assert gpu_settings.environment_updates(tiny_params(device='gpu', sync_on_finish=True),
                                            {})['TF_SYNC_ON_FINISH'] == '1'
    assert 'TF_SYNC_ON_FINISH' not in gpu_settings.environment_updates(
        tiny_params(device='gpu'), {'TF_SYNC_ON_FINISH': '1'})
    # A CPU run gets none of them; a given flag still sets its variable.
    assert gpu_settings.environment_updates(tiny_params(device='cpu'), {}) == {}
    assert gpu_settings.environment_updates(tiny_params(device='cpu', sync_on_finish=True),
                                            {}) == {'TF_SYNC_ON_FINISH': '1'}


def test_ml_perf_with_eval_warns():
    [line] = ignored_flags(params.make_params(eval=True, train_dir='x', ml_perf=True))
    assert line.startswith('--ml_perf has no effect with --eval')


def test_gpu_flags_warn_with_device_cpu():
    lines = ignored_flags(tiny_params(device='cpu', gpu_thread_mode='gpu_shared',
                                             allow_growth=False))
    # Named as written (it said --allow_growth), with a value as given: a boolean set false
    # in both of its forms, --allow_growth=false and --noallow_growth.
    # The thread advice only for the thread flag (a user found it under --tf32=false).
    assert lines == ['--gpu_thread_mode=gpu_shared has no effect with --device=cpu (it sets GPU '
                     'options); use --num_intra_threads/--num_inter_threads for the CPU',
                     '--allow_growth=false (--noallow_growth) has no effect with --device=cpu '
                     '(it sets GPU options)']
    assert ignored_flags(tiny_params(gpu_thread_mode='gpu_shared')) == []
    # TF_SYNC_ON_FINISH=1 makes a step wait for its devices; a CPU device has nothing queued.
    assert ignored_flags(tiny_params(device='cpu', sync_on_finish=True)) == [
        "--sync_on_finish has no effect with --device=cpu (it waits for the GPUs' queued work "
        "at each step's end; a CPU step's work is done when its ops return)"]


def test_gpu_flags_warn_by_how_the_run_came_to_the_cpu():
    from tf_cnn_benchmarks.preflight import ineffective_flags
    # No --device given and no GPU visible: the CPU was chosen for the user.
    chosen = ineffective_flags.messages(tiny_params(device=None, per_gpu_thread_count=2),
                                        visible_gpus=0)
    assert chosen == ['--per_gpu_thread_count=2 has no effect on the CPU, where this run is '
                      'because no GPU is visible (it sets GPU options); use '
                      '--num_intra_threads/--num_inter_threads for the CPU']
    asked = ineffective_flags.messages(tiny_params(device='cpu', per_gpu_thread_count=2),
                                       visible_gpus=0)
    assert asked == ['--per_gpu_thread_count=2 has no effect with --device=cpu (it sets GPU '
                     'options); use --num_intra_threads/--num_inter_threads for the CPU']


def test_loss_type_to_report_base_loss_leaves_out_the_weight_decay(capsys):
    total = tiny_run(num_batches=3, weight_decay=0.01)
    capsys.readouterr()
    base = tiny_run(num_batches=3, weight_decay=0.01, loss_type_to_report='base_loss')
    assert 'Step\tImg/sec\tbase_loss' in capsys.readouterr().out.splitlines()
    # The same training (the gradients always include the decay); only the report differs.
    assert all(b < t for b, t in zip(base['losses'], total['losses']))
    same = tiny_run(num_batches=3, weight_decay=0.0, loss_type_to_report='base_loss')
    assert same['losses'] == pytest.approx(tiny_run(num_batches=3, weight_decay=0.0)['losses'])


def test_display_perf_ewma_weights_the_newest_steps():
    stats = cnn_util.ImageRateStats(10, ewma_alpha=0.5)
    plain = cnn_util.ImageRateStats(10)
    for seconds in (1.0, 1.0, 2.0):
        stats.add(seconds)
        plain.add(seconds)
    # Weights 0.25, 0.5, 1 (newest): mean step time 2.75 / 1.75 s.
    assert stats.summary()[0] == pytest.approx(10 / (2.75 / 1.75))
    assert plain.summary()[0] == pytest.approx(30 / 4.0)
    assert stats.summary()[1:] == plain.summary()[1:]


def _l2_ops(bench) -> int:
    graph = bench.build_graph().graph
    return sum(op.type == 'L2Loss' for op in graph.get_operations())


def test_single_l2_loss_op_builds_one_l2_loss_with_the_same_value():
    # 2 conv + 2 dense kernels and their 4 biases: the original's decay covers every
    # trainable variable outside batch norm.
    assert _l2_ops(tiny_bench(model='lenet', image_size=28)) == 8
    assert _l2_ops(tiny_bench(model='lenet', image_size=28, single_l2_loss_op=True)) == 1
    a = tiny_run(model='lenet', image_size=28, num_batches=2)
    b = tiny_run(model='lenet', image_size=28, num_batches=2, single_l2_loss_op=True)
    assert b['losses'] == pytest.approx(a['losses'], rel=1e-5)


def test_the_learning_rate_is_on_the_cpu_with_gpu_towers_so_compute_lr_on_cpu_is_a_no_op():
    bench = benchmark_cnn.BenchmarkCNN(tiny_params(device='gpu', local_parameter_device='gpu'),
                                       gpus=1)
    info = bench.build_graph()
    assert 'CPU' in info.learning_rate.device.upper()
    assert any('GPU' in op.device.upper() for op in info.graph.get_operations())


def _first_rate(model, images_per_step, **flags):
    """The rate at the first step after the model's warm-up (the ImageNet ResNets' 5 epochs of
    1,281,167 images; none for the others)."""
    p = params.make_params(model=model, **flags)
    net = model_config.get_model(model)
    first = 0 if p.init_learning_rate is not None else net.default_schedule(
        images_per_step, p.resnet_base_lr).warmup_steps
    with tf.Graph().as_default():
        lr = learning_rate.get_learning_rate(
            p, tf.constant(first, tf.int64), model=net, examples_per_epoch=1281167,
            images_per_step=images_per_step)
        with tf1.Session() as sess:
            return float(sess.run(lr))


def test_resnet_base_lr_is_the_imagenet_resnets_rate_per_256_images():
    assert _first_rate('resnet50', 64) == pytest.approx(0.128 * 64 / 256)
    assert _first_rate('resnet50', 64, resnet_base_lr=0.2) == pytest.approx(0.2 * 64 / 256)
    assert _first_rate('resnet101_v2', 512, resnet_base_lr=0.1) == pytest.approx(0.2)
    # Another model, or an explicit rate: the flag does nothing, and says so.
    assert _first_rate('trivial', 32, resnet_base_lr=0.2) == _first_rate('trivial', 32)
    assert original_flags.IMAGENET_RESNET.match('resnet50_v1.5')
    assert not original_flags.IMAGENET_RESNET.match('resnet56')
    [line] = [m for m in ignored_flags(params.make_params(model='resnet56',
                                                                 resnet_base_lr=0.2))]
    assert line.startswith('--resnet_base_lr has no effect with --model=resnet56')
    [line] = ignored_flags(params.make_params(model='resnet50', resnet_base_lr=0.2,
                                                     init_learning_rate=0.1))
    assert line.startswith('--resnet_base_lr has no effect with --init_learning_rate')
    assert ignored_flags(params.make_params(model='resnet50', resnet_base_lr=0.2)) == []


def test_variables_are_resource_variables_so_use_resource_vars_is_a_no_op():
    types_ = {op.type for op in tiny_bench().build_graph().graph.get_operations()}
    assert 'VarHandleOp' in types_ and not types_ & {'VariableV2', 'Variable'}


def test_the_sweep_gives_horovod_its_own_line():
    problem = sweep.invalid_configuration(
        {'model': ['trivial'], 'batch_size': [2], 'num_gpus': [1], 'precision': ['fp32'],
         'variable_update': ['horovod']}, [])
    assert problem is not None and 'Horovod\'s last release (0.28.1)' in problem


def test_the_sweeps_horovod_axis_is_one_line_and_exit_status_2(tmp_path, capsys):
    assert sweep.main(['tf_cnn_sweep', '--output_dir=%s' % tmp_path, '--models=trivial',
                       '--batch_sizes=8', '--variable_updates=horovod']) == 2
    err = capsys.readouterr().err
    assert err.startswith('error: --variable_updates: --variable_update=horovod is not '
                          'available: Horovod') and err.count('\n') == 1


def test_specified_epochs_become_global_steps():
    plan = types.SimpleNamespace(params=tiny_params(
        eval_during_training_at_specified_epochs=['0.5', '1', '0.01']), steps_per_epoch=100 / 8,
        examples_per_epoch=100, images_per_global_step=8)
    hook = eval_during_training.EvalDuringTrainingHook(plan, model=None, dataset=None)
    # ceil(epoch x 12.5), as the original's (epoch x 100 + 7) // 8: 7, 13 (before: int(),
    # 6 and 12, before the epoch's last images were trained); a tiny epoch still evaluates
    # after the first step.
    assert hook.at_steps == {1, 7, 13}
    assert [s for s in range(1, 20) if hook.due(s)] == [1, 7, 13]


@pytest.mark.parametrize('flag, value', [
    ('eval_during_training_every_n_epochs', 1.0),
    ('eval_during_training_at_specified_epochs', ['1', '2']),
])
def test_both_epoch_flags_evaluate_an_epoch_once_it_is_trained(flag, value):
    """A docs reader's trial: 17 records at 4 a step (4.25 steps an epoch) evaluated at global
    steps 5 and 9 with every_n_epochs=1 but at 4 and 8 with at_specified_epochs=1,2, before
    the epoch's 17th image was trained. The original rounds both up: (e x 17 + 3) // 4."""
    plan = types.SimpleNamespace(params=tiny_params(num_warmup_batches=0, **{flag: value}),
                                 steps_per_epoch=17 / 4, examples_per_epoch=17,
                                 images_per_global_step=4)
    hook = eval_during_training.EvalDuringTrainingHook(plan, model=None, dataset=None)
    assert [s for s in range(1, 11) if hook.due(s)] == [5, 9]


def test_epoch_steps_round_up_without_float_error():
    assert [original_flags.epoch_step(e, 17, 4) for e in (0, 1, 2, 4)] == [0, 5, 9, 17]
    # 0.3 x 10 = 3.0000000000000004 and 0.0082 x 50000 = 410.00000000000006: one step too
    # many without the rounding; 0.29 x 100 = 28.999999999999996: one image too few.
    assert original_flags.epoch_step(0.3, 10, 1) == 3
    assert original_flags.epoch_step(0.0082, 50000, 2) == 205
    assert original_flags.epoch_step(0.29, 100, 1) == 29
    # The image count is floored first, as the original's int(e x N + B - 1) // B: 0.0003
    # ImageNet epochs are 384.35 images, 96 steps of 4 (ceil(384.35 / 4) would be 97).
    assert original_flags.epoch_step(0.0003, 1281167, 4) == 96
    assert original_flags.specified_epoch_steps(['0.0003', 1], 1281167, 4) == [96, 320292]
    plan = types.SimpleNamespace(params=tiny_params(
        num_warmup_batches=0, eval_during_training_every_n_epochs=0.3), steps_per_epoch=10.0,
        examples_per_epoch=10, images_per_global_step=1)
    hook = eval_during_training.EvalDuringTrainingHook(plan, model=None, dataset=None)
    assert [s for s in range(1, 10) if hook.due(s)] == [3, 6, 9]


def test_num_epochs_steps_have_no_float_error():
    # 0.0082 epochs of CIFAR-10's 50,000 images at 2 a step: 205 steps (before: 206).
    bench = benchmark_cnn.BenchmarkCNN(params.make_params(
        model='trivial', data_name='cifar10', batch_size=2, num_epochs=0.0082), gpus=0)
    assert bench.plan.num_batches == 205


def test_eval_at_specified_epochs_runs_on_one_host_only():
    p = params.make_params(job_name='worker', task_index=0, ps_hosts=['localhost:2222'],
                           worker_hosts=['localhost:2223'],
                           eval_during_training_at_specified_epochs=['1'])
    with pytest.raises(params.ParamsError, match='--eval_during_training_at_specified_epochs '
                       'runs on one host only'):
        params.validate_params(p)


def test_eval_at_specified_epochs_writes_its_summaries_to_eval_dir(imagenet_dir, tmp_path):
    # 512 training records in batches of 4: 128 steps per epoch; epochs 0.005 and 0.02 (0.64
    # and 2.56 steps, rounded up) are global steps 1 and 3; the last step, 4, has the
    # original's final evaluation.
    eval_dir = tmp_path / 'evals'
    result = tiny_run(data_dir=imagenet_dir, num_batches=4, image_size=32,
                      eval_during_training_at_specified_epochs=['0.005', '0.02'],
                      num_eval_batches=1, eval_dir=str(eval_dir))
    assert [e['global_step'] for e in result['evals']] == [1, 3, 4]
    events = glob.glob(str(eval_dir / 'events.out.tfevents.*'))
    assert len(events) == 1
    tops = [(e.step, v.simple_value) for e in tf1.train.summary_iterator(events[0])
            for v in e.summary.value if v.tag == 'eval/Accuracy@1']
    assert [s for s, _ in tops] == [1, 3, 4]
    assert [v for _, v in tops] == pytest.approx([e['top_1'] for e in result['evals']])


def test_step_stats_trace_and_partition_graphs_of_the_traced_step(tmp_path):
    from google.protobuf import text_format
    from tensorflow.core.framework import graph_pb2, step_stats_pb2
    trace = tmp_path / 'step.pbtxt'
    result = tiny_run(num_gpus=2, device='cpu', trace_file=str(trace),
                      use_chrome_trace_format=False,
                      partitioned_graph_file_prefix=str(tmp_path / 'part.pbtxt'))
    stats = text_format.Parse(trace.read_text(), step_stats_pb2.StepStats())
    assert {d.device for d in stats.dev_stats} >= {
        '/job:localhost/replica:0/task:0/device:CPU:0',
        '/job:localhost/replica:0/task:0/device:CPU:1'}
    files = result['partition_graph_files']
    assert sorted(os.path.basename(f) for f in files) == [
        'part_job_localhost_replica_0_task_0_device_CPU_0.pbtxt',
        'part_job_localhost_replica_0_task_0_device_CPU_1.pbtxt']
    graph = text_format.Parse(open(files[1]).read(), graph_pb2.GraphDef())
    assert graph.node and all(n.device.endswith('CPU:1') for n in graph.node)


def test_benchmark_test_id_is_in_the_results_json(tmp_path):
    result = tiny_run(benchmark_test_id='resnet-8gpu-a', benchmark_log_dir=str(tmp_path))
    saved = json.load(open(result['results_file'], encoding='utf-8'))
    assert saved['benchmark_test_id'] == 'resnet-8gpu-a'
    assert tiny_run()['benchmark_test_id'] is None


def test_ml_perf_without_the_package_warns_once(monkeypatch, capsys):
    monkeypatch.setattr(mlperf_log, 'load_mllog', lambda: None)
    result = tiny_run(ml_perf=True)
    err = capsys.readouterr().err.splitlines()
    assert [line for line in err if 'mlperf' in line] == [
        'warning: --ml_perf prints no MLPerf lines: the mlperf-logging package is not '
        'installed; ' + mlperf_log.INSTALL_HINT]
    assert result['num_steps'] == 3


def test_ml_perf_warns_once_of_a_log_the_checker_will_refuse(capsys):
    """A run without evaluations (the checker requires eval_accuracy) or of a model that is no
    MLPerf benchmark printed a log the checker fails, without a word."""
    pytest.importorskip('mlperf_logging')
    result = tiny_run(ml_perf=True)
    err = capsys.readouterr().err.splitlines()
    assert [line for line in err if 'ml_perf' in line] == [
        "warning: --ml_perf: MLCommons' compliance checker (training, ruleset 4.0.0) will "
        'refuse this log: it has no evaluations (add --eval_during_training_every_n_epochs=N '
        'or --eval_during_training_every_n_steps=N); --model=trivial is no MLPerf training '
        'benchmark (ResNet-50 is: --model=resnet50)',
        "warning: --ml_perf: MLPerf would not take this log as a result, even where MLCommons' "
        "compliance checker accepts it: it trains on synthetic data (no --data_dir), yet logs "
        "ImageNet's train_samples; give --data_dir=<ImageNet TFRecords>"]
    assert result['num_steps'] == 3
    assert mlperf_log.checker_gaps('resnet50', True, 'open') == []
    assert mlperf_log.checker_gaps('resnet50_v1.5', True, 'open') == []
    [closed] = mlperf_log.checker_gaps('resnet50', True, 'closed')
    assert closed.startswith("the closed division's ResNet-50 rules want the reference's "
                             'polynomial-decay learning rate (sgd_opt_* keys)')


def test_ml_perf_in_a_cluster_names_no_flag_a_cluster_refuses(monkeypatch, capsys):
    """A cluster chief's --ml_perf warning suggested --eval_during_training_every_n_epochs=N,
    which a cluster refuses (`runs on one host only`): it says an accepted log needs a one-host
    run instead; on one host the suggestion stays."""
    pytest.importorskip('mlperf_logging')
    monkeypatch.setattr(mlperf_log, 'MlPerfHook', lambda *args, **kwargs: 'hook')
    for role in ('worker 0', ''):
        plan = helpers.stub_plan(model='resnet50', optimizer='momentum',
                                 stop_at_top_1_accuracy=None)
        plan.cluster_role = role
        assert mlperf_log.make_hook(plan) == 'hook'
    cluster, one_host = capsys.readouterr().err.splitlines()
    assert cluster == (
        "warning: --ml_perf: MLCommons' compliance checker (training, ruleset 4.0.0) will refuse "
        'this log: it has no evaluations, and a cluster run cannot have them (evaluation during '
        'training runs on one host only): an accepted MLPerf log needs a one-host run with '
        '--eval_during_training_every_n_epochs=N')
    assert one_host.endswith('refuse this log: it has no evaluations (add '
                             '--eval_during_training_every_n_epochs=N or '
                             '--eval_during_training_every_n_steps=N)')
    from tf_cnn_benchmarks.params import cluster_rules
    refused = cluster_rules.distributed_problem(params.make_params(
        job_name='worker', worker_hosts=['localhost:1'], variable_update='collective_all_reduce',
        eval_during_training_every_n_epochs=1))
    assert 'runs on one host only' in refused  # why the cluster's line names no such flag


def test_mlperf_submission_fields_come_from_the_environment():
    assert mlperf_log.submission_fields({}) == {
        'submission_org': 'unset', 'submission_platform': 'unset',
        'submission_division': 'open', 'submission_status': 'research'}
    assert mlperf_log.submission_fields({
        'MLPERF_SUBMISSION_ORG': 'Acme', 'MLPERF_SUBMISSION_PLATFORM': '8xV100',
        'MLPERF_SUBMISSION_DIVISION': 'closed', 'MLPERF_SUBMISSION_STATUS': ' onprem '}) == {
        'submission_org': 'Acme', 'submission_platform': '8xV100',
        'submission_division': 'closed', 'submission_status': 'onprem'}
    with pytest.raises(params.ParamsError) as raised:
        mlperf_log.submission_fields({'MLPERF_SUBMISSION_DIVISION': 'unset'})
    assert str(raised.value) == ("MLPERF_SUBMISSION_DIVISION=unset: MLPerf's submission "
                                 'division is one of closed, open')


def test_the_sweep_accepts_the_originals_flags():
    assert sweep.run_flags_problem(['--mkl', '--gpu_thread_mode=gpu_shared',
                                    '--loss_type_to_report=base_loss', '--nowinograd_nonfused',
                                    '--trt_mode=FP16']) is None
    assert 'Unknown command line flag' in sweep.run_flags_problem(['--no_such_flag'])


@pytest.mark.cli
def test_horovod_from_the_command_is_one_line_and_exit_status_2():
    from test_cli import run_cli
    proc = run_cli('--variable_update=horovod', '--horovod_device=gpu')
    assert proc.returncode == 2
    assert proc.stdout == ''
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith('error: --variable_update=horovod is not '
                                                   'available: Horovod')
    assert 'collective_all_reduce' in lines[0]


def test_mlperf_lines_go_to_the_stdout_of_the_run_not_of_mllogs_import():
    """mllog's shared logger keeps the sys.stdout of its import; a run's lines follow the
    stdout in place while it runs (a library caller's redirect_stdout, a notebook cell)."""
    pytest.importorskip('mlperf_logging')
    import contextlib
    import io

    from tf_cnn_benchmarks.lifecycle import mlperf_log
    mllog, constants = mlperf_log.load_mllog()
    mllog.get_mllogger()  # made at import, bound to the stdout of then
    for _ in range(2):  # each run's stdout, and one handler however many runs
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            mlperf_log._run_logger(mllog).event(key=constants.CACHE_CLEAR, value=False)
        assert out.getvalue().startswith(':::MLLOG {') and '"cache_clear"' in out.getvalue()
        assert out.getvalue().count('\n') == 1


@pytest.mark.cli
def test_the_originals_first_command_in_miniature_writes_an_mlperf_log_the_checker_passes(
        tmp_path):
    """The MLPerf log of a resnet50 run with evaluations passes MLCommons' compliance checker
    (training, ruleset 4.0.0, the last with ResNet); it missed submission_*, cache_clear,
    init_start, eval_samples, blocks and evaluations (issue 41.12)."""
    pytest.importorskip('mlperf_logging')
    from test_original_flags import DOCUMENTED

    # The original README's first command, then small sizes (later flags win) for a CPU, two
    # flags without effect, the MLPerf lines and an evaluation after each of the 2 steps.
    # The command's main in process (helpers.run_command): its output lines are the test.
    proc = helpers.run_command(
        *DOCUMENTED[0].split(), '--batch_size=2', '--image_size=32', '--num_batches=2',
        '--num_warmup_batches=0', '--device=cpu', '--ml_perf',
        '--eval_during_training_every_n_steps=1', '--num_eval_batches=1', '--mkl',
        '--use_python32_barrier', '--noresults_db')
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert 'Model:       resnet50' in lines and 'Variables:   parameter_server' in lines
    assert any(line.startswith('total images/sec: ') for line in lines)
    log = [line for line in lines if line.startswith(':::MLLOG ')]
    events = [json.loads(line[len(':::MLLOG '):]) for line in log]
    evaluation = ['block_stop', 'eval_start', 'eval_stop', 'eval_accuracy']
    assert [e['key'] for e in events] == [
        'cache_clear', 'init_start', 'submission_org', 'submission_platform',
        'submission_division', 'submission_status', 'submission_benchmark',
        'global_batch_size', 'seed', 'gradient_accumulation_steps', 'opt_name',
        'opt_base_learning_rate', 'train_samples', 'eval_samples', 'init_stop', 'run_start',
        'block_start'] + evaluation + ['block_start'] + evaluation + ['run_stop']
    values = {e['key']: e['value'] for e in events}
    assert [values[k] for k in ('submission_org', 'submission_platform', 'submission_division',
                                'submission_status', 'submission_benchmark')] == [
        'unset', 'unset', 'open', 'research', 'resnet']
    assert values['global_batch_size'] == 2 and values['eval_samples'] == 2
    assert values['opt_base_learning_rate'] == pytest.approx(0.128 * 2 / 256)
    assert [e['metadata']['samples_count'] for e in events if e['key'] == 'eval_accuracy'] == [
        2, 4]
    # An accuracy below MLPerf's ResNet-50 target of 0.759 is no success.
    assert events[-1]['metadata']['status'] == 'aborted'
    (tmp_path / 'mlperf.log').write_text('\n'.join(log) + '\n')
    checked = subprocess.run([sys.executable, '-m', 'mlperf_logging.compliance_checker',
                              '--usage', 'training', '--ruleset', '4.0.0',
                              '--log_output', str(tmp_path / 'checker.log'),
                              str(tmp_path / 'mlperf.log')],
                             capture_output=True, text=True, timeout=120, cwd=str(tmp_path))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert 'INFO - SUCCESS' in checked.stdout + checked.stderr
    assert 'training_4.0.0/open_resnet.yaml' in checked.stdout + checked.stderr
    warnings = proc.stderr.splitlines()
    assert len(warnings) == 3 and all(w.startswith('warning: --') for w in warnings)
    assert warnings[0].startswith('warning: --use_python32_barrier has no effect here')
    assert warnings[1].startswith('warning: --mkl has no effect on TensorFlow 2.21')
    # The checker's SUCCESS above is for synthetic data, which MLPerf would not take.
    assert warnings[2].startswith('warning: --ml_perf: MLPerf would not take this log as a '
                                  'result, even where MLCommons\' compliance checker accepts '
                                  'it: it trains on synthetic data')


@pytest.mark.cli
def test_an_mlperf_log_of_n_epochs_trains_n_epochs_and_ends_each_block_with_an_evaluation(
        tmp_path, monkeypatch):
    """A new user's trial (`--num_epochs=2 --eval_during_training_every_n_epochs=1`): the
    warm-up steps trained on top of the 2 epochs, so the log ended with a block of 0.31 epoch
    and no evaluation; opt_base_learning_rate was float32's 9.999999747378752e-05 for 1e-4;
    run_stop said success for a model without a quality target at accuracy 0."""
    pytest.importorskip('mlperf_logging')
    from input_helpers import solid_shards
    solid_shards(str(tmp_path), 'train', num_shards=2, per_shard=6)  # 12 images: 6 steps
    solid_shards(str(tmp_path), 'validation', num_shards=1, per_shard=4)
    monkeypatch.setenv('MLPERF_SUBMISSION_ORG', 'Acme')
    proc = helpers.run_command(
        '--model=trivial', '--data_dir=%s' % tmp_path, '--batch_size=2', '--image_size=16',
        '--num_epochs=2', '--num_warmup_batches=2', '--init_learning_rate=1e-4', '--ml_perf',
        '--eval_during_training_every_n_epochs=1', '--device=cpu', '--noresults_db')
    assert proc.returncode == 0, proc.stderr
    assert ('Num epochs:  1.67 timed; 2.00 with the 2 warm-up steps, which train too '
            '(--ml_perf: --num_epochs counts them)') in proc.stdout.splitlines()
    events = [json.loads(line[len(':::MLLOG '):]) for line in proc.stdout.splitlines()
              if line.startswith(':::MLLOG ')]
    keys = [e['key'] for e in events]
    block = ['block_start', 'block_stop', 'eval_start', 'eval_stop', 'eval_accuracy']
    assert keys[keys.index('run_start') + 1:] == block + block + ['run_stop']
    values = {e['key']: e['value'] for e in events}
    assert values['opt_base_learning_rate'] == 1e-4  # the flag's value, not float32's
    assert values['submission_org'] == 'Acme'
    blocks = [(e['metadata']['first_epoch_num'], e['metadata']['samples_count'])
              for e in events if e['key'] in ('block_start', 'block_stop')]
    # block_stop repeats its block_start's first epoch (MLCommons' rule; it gave the block's
    # end before); its samples_count is the samples trained so far: 2 epochs in all.
    assert blocks == [(0.0, 0), (0.0, 12), (1.0, 12), (1.0, 24)]
    assert [e['metadata']['epoch_num'] for e in events if e['key'] == 'eval_accuracy'] == [
        1.0, 2.0]
    # trivial has no quality target: nothing was reached, so no success (MLPerf's meaning).
    assert events[-1]['metadata']['status'] == 'aborted'


def test_mlperf_run_stop_is_success_only_when_a_target_was_reached():
    pytest.importorskip('mlperf_logging')
    _, constants = mlperf_log.load_mllog()
    stops = []
    hook = mlperf_log.MlPerfHook.__new__(mlperf_log.MlPerfHook)
    hook.c, hook._stop = constants, stops.append
    hook.plan = types.SimpleNamespace(model='trivial', params=types.SimpleNamespace(
        stop_at_top_1_accuracy=None))
    hook.report({'evals': [{'top_1': 1.0}]})  # no target: nothing to reach
    hook.plan.params.stop_at_top_1_accuracy = 0.5
    hook.report({'evals': [{'top_1': 0.4}, {'top_1': 0.6}]})
    hook.report({'evals': [{'top_1': 0.4}]})
    hook.report({'evals': [{'top_1': 0.6}], 'stopped_by_signal': 'SIGINT'})
    assert stops == ['aborted', 'success', 'aborted', 'aborted']
    # A float32 rate read back from the session, as the shortest decimal of that float32.
    assert mlperf_log.float32_decimal(0.25600001215934753) == 0.256
    assert mlperf_log.float32_decimal(9.999999747378752e-05) == 1e-4


def test_a_dry_runs_flags_without_effect_warn():
    # Before: a dry run took --train_dir, --results_db and a one-GPU --gpu_interconnect
    # silently, though it saves, records and copies nothing.
    lines = ignored_flags(params.make_params(dry_run=True, gpu_model='V100', train_dir='t',
                                             results_db='r.sqlite', gpu_interconnect='pcie3'))
    assert lines == [
        '--train_dir has no effect with --dry_run (nothing is trained, saved or recorded; its '
        'report goes to --benchmark_log_dir)',
        '--results_db has no effect with --dry_run (nothing is trained, saved or recorded; its '
        'report goes to --benchmark_log_dir)',
        '--gpu_interconnect has no effect with --dry_run on one GPU (no byte crosses a GPU <-> '
        'GPU link; --plan_scaling plans several GPUs)']
    [line] = ignored_flags(params.make_params(dry_run=True, gpu_model='V100', num_gpus=2,
                                              variable_update='independent',
                                              gpu_interconnect='nvlink2'))
    assert 'on independent towers, which share nothing' in line
    # Several replicated GPUs cross the link; a host preset names the GPU the dry run plans.
    assert ignored_flags(params.make_params(dry_run=True, num_gpus=2, gpu_model='V100',
                                            variable_update='replicated',
                                            gpu_interconnect='nvlink2')) == []
    assert ignored_flags(params.make_params(dry_run=True, gpu_interconnect='dgx1_v100')) == []
    # --noresults_db asks for what the dry run does anyway: no warning (a final user's trial).
    assert ignored_flags(params.make_params(dry_run=True, results_db=False)) == []
