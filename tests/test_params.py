"""The parameter table and every validation rule (one test per rule, with the exact message)."""

import os

import pytest

from tf_cnn_benchmarks import params
from tf_cnn_benchmarks.params import ParamsError, make_params, validate_params
from tf_cnn_benchmarks.preflight import output_paths


def _error(**kwargs) -> str:
    with pytest.raises(ParamsError) as info:
        validate_params(make_params(**kwargs))
    return str(info.value)


def test_defaults_validate_and_names_are_unique():
    validate_params(make_params())
    assert len(params.SPEC_BY_NAME) == len(params.SPECS)
    assert make_params().batch_size == 0 and make_params().model == 'trivial'


def test_unknown_keyword_is_rejected():
    with pytest.raises(ParamsError, match='unknown parameter.*bogus'):
        make_params(bogus=1)


def test_a_misspelt_keyword_gets_the_commands_did_you_mean():
    # Before: 'unknown parameter(s): modle', where the command's --modle says 'Did you mean:
    # model'. The same rule (params/flag_names.py): absl's edit distance, then other tools' names.
    from tf_cnn_benchmarks import benchmark_cnn
    with pytest.raises(ParamsError) as e:
        benchmark_cnn.make_params(modle='resnet50')
    assert str(e.value) == 'unknown parameter(s): modle (did you mean model?)'
    with pytest.raises(ParamsError) as e:
        make_params(batchsize=2, lr=0.1, bogus=1)
    assert str(e.value) == ('unknown parameter(s): batchsize (did you mean batch_size?), bogus, '
                            'lr (did you mean init_learning_rate?)')


def test_params_are_immutable():
    p = make_params()
    with pytest.raises(AttributeError):
        p.batch_size = 3
    assert p._replace(batch_size=3).batch_size == 3 and p.batch_size == 0


@pytest.mark.parametrize('kwargs, text', [
    ({'batch_size': -1}, '--batch_size must be >= 0 (0: the model default). Received: '
                         'batch_size=-1'),
    # What 0 is comes from the flag's help: '(0: off)' (before: only '>= 0', as if 0 were
    # an ordinary count).
    ({'save_model_secs': -5}, '--save_model_secs must be >= 0 (0: off). Received: '
                              'save_model_secs=-5'),
    ({'eval_batch_size': -2}, '--eval_batch_size must be >= 0 (0: --batch_size). Received: '),
    ({'num_warmup_batches': -3}, '--num_warmup_batches must be >= 0 (0: none). Received: '),
    ({'num_gpus': 0}, '--num_gpus must be >= 1. Received: num_gpus=0'),
    ({'optimizer': 'lbfgs'}, "--optimizer must be one of 'sgd', 'momentum', 'rmsprop', 'adam'. "
                             "Received: optimizer='lbfgs'"),
    ({'data_format': 'NWHC'}, "--data_format must be one of 'NHWC', 'NCHW'. "
                              "Received: data_format='NWHC'"),
    ({'device': 'tpu'}, "--device must be one of 'cpu', 'gpu'. Received: device='tpu'"),
    ({'variable_update': 'foo'}, "Received: variable_update='foo'"),
    ({'num_batches': 10, 'num_epochs': 1.0}, '--num_batches and --num_epochs exclude each other'),
    ({'save_model_steps': 1, 'save_model_secs': 5},
     '--save_model_steps and --save_model_secs exclude each other; give one (a checkpoint every N '
     'steps, or every N seconds). Received: save_model_steps=1, save_model_secs=5'),
    ({'use_fp16': True, 'use_bf16': True}, '--use_fp16 and --use_bf16 exclude each other'),
    ({'forward_only': True, 'eval': True}, '--forward_only and --eval exclude each other'),
    ({'staged_vars': True, 'variable_update': 'replicated'},
     '--staged_vars works only with --variable_update=parameter_server'),
    ({'use_nccl': True, 'device': 'cpu', 'variable_update': 'replicated', 'num_gpus': 2},
     '--use_nccl needs GPUs (NCCL has no CPU kernels); drop it or use --all_reduce_spec=xring'),
    # The fix it names is the one left: not the spec the user gave already.
    ({'use_nccl': True, 'all_reduce_spec': 'xring', 'variable_update': 'replicated',
      'device': 'cpu', 'num_gpus': 2},
     '--use_nccl and --all_reduce_spec exclude each other (--use_nccl is the spec nccl); drop '
     '--use_nccl to all-reduce with --all_reduce_spec=xring.'),
    ({'gradient_repacking': 2, 'agg_small_grads_max_bytes': 1000, 'all_reduce_spec': 'pscpu'},
     '--gradient_repacking and --agg_small_grads_max_bytes exclude each other here (the '
     'original, with --all_reduce_spec, merged the packs under the byte limit; fewer packs do '
     'that); use one. Received: gradient_repacking=2, agg_small_grads_max_bytes=1000'),
    ({'piecewise_learning_rate_schedule': '0.1;10'}, 'odd number of numbers'),
    ({'piecewise_learning_rate_schedule': '0.1;x;0.01'}, "numbers only: 'x' is not a number"),
    ({'piecewise_learning_rate_schedule': '0.1;10;0.01;5;0.001'}, 'positive and increasing'),
    ({'piecewise_learning_rate_schedule': 'nan;1;0.1'}, 'rates must be finite and >= 0'),
    ({'piecewise_learning_rate_schedule': '-0.1;1;0.01'}, 'rates must be finite and >= 0'),
    ({'piecewise_learning_rate_schedule': '0.1;10;0.01', 'init_learning_rate': 0.1},
     'exclude each other'),
    ({'data_name': 'synthetic', 'data_dir': '/data'}, '--data_name=synthetic ignores --data_dir'),
    ({'init_learning_rate': -0.1}, '--init_learning_rate must be >= 0'),
    ({'init_learning_rate': float('nan')}, '--init_learning_rate must be a finite number. '
     'Received: init_learning_rate=nan'),
    ({'num_epochs': 0}, '--num_epochs must be > 0 (a fraction such as 0.01 is fine). Received: '
     'num_epochs=0'),
    ({'gradient_clip': 0.0}, '--gradient_clip must be > 0: it clips every gradient element to '
     '[-value, value], so 0 would zero every gradient and freeze training (and a negative value '
     'is no range); drop the flag for no clipping. Received: gradient_clip=0'),
    ({'gradient_clip': -1.0}, '--gradient_clip must be > 0: it clips every gradient element to '
     '[-value, value], so 0 would zero every gradient and freeze training (and a negative value '
     'is no range); drop the flag for no clipping. Received: gradient_clip=-1'),
])
def test_each_rule_names_the_flag_and_value(kwargs, text):
    assert text in _error(**kwargs)


@pytest.mark.parametrize('kwargs, names', [
    ({'eval_during_training_every_n_steps': 3, 'eval_during_training_every_n_epochs': 1.0},
     '--eval_during_training_every_n_steps and --eval_during_training_every_n_epochs'),
    ({'eval_during_training_at_specified_steps': ['2'],
      'eval_during_training_at_specified_epochs': ['1']},
     '--eval_during_training_at_specified_steps and --eval_during_training_at_specified_epochs'),
])
def test_two_schedules_of_evaluations_during_training_are_refused(kwargs, names):
    """A user's finding: both schedules were accepted and merged; the original refuses more
    than one --eval_during_training_* flag, and the docs never promised a merge."""
    assert _error(**kwargs) == (
        '%s exclude each other (each one is the whole schedule of the evaluations during '
        'training); give one' % names)
    for name, value in kwargs.items():  # each alone is fine
        params.validate_params(make_params(**{name: value}))


@pytest.mark.parametrize('kwargs, text', [
    ({'job_name': 'worker', 'worker_hosts': ['localhost:1234'], 'ps_hosts': ['localhost:x']},
     '--ps_hosts items must be host:port'),
    ({'job_name': 'worker', 'worker_hosts': ['localhost:70000'], 'ps_hosts': ['localhost:1']},
     'port in 1..65535'),
    ({'job_name': 'worker', 'worker_hosts': ['a:1', 'a:1'], 'ps_hosts': ['b:2']},
     '--worker_hosts lists a:1 twice'),
    ({'job_name': 'worker', 'worker_hosts': ['a:1', ''], 'ps_hosts': ['b:2']},
     '--worker_hosts items must be host:port'),
    ({'job_name': 'worker', 'task_index': 2, 'worker_hosts': ['a:1', 'a:2'], 'ps_hosts': ['b:2']},
     '--task_index must be < 2, the number of worker hosts'),
    ({'job_name': 'worker', 'worker_hosts': ['a:1']},
     '--variable_update=parameter_server in a cluster needs --ps_hosts'),
    ({'job_name': 'ps'}, '--job_name=ps needs --worker_hosts'),
    ({'ps_hosts': ['a:1'], 'worker_hosts': ['b:1']}, 'need --job_name'),
    ({'variable_update': 'distributed_replicated'}, 'needs a cluster: give --job_name, '
     '--task_index, --ps_hosts and --worker_hosts, or run where TF_CONFIG or a Slurm step'),
    ({'variable_update': 'collective_all_reduce'}, 'needs a cluster: give --job_name, '
     '--task_index, --worker_hosts, or run where TF_CONFIG'),
    ({'job_name': 'worker', 'worker_hosts': ['a:1'], 'variable_update': 'replicated'},
     'is for one host'),
])
def test_cluster_rules(kwargs, text):
    assert text in _error(**kwargs)


def test_valid_cluster_passes():
    validate_params(make_params(job_name='worker', task_index=1, ps_hosts=['localhost:2222'],
                                worker_hosts=['localhost:2223', '127.0.0.1:2224']))


def test_piecewise_schedule_parses():
    assert params.parse_piecewise_schedule('0.1;30;0.01;60;0.001') == (
        [0.1, 0.01, 0.001], [30.0, 60.0])


def test_resolve_defaults_follow_the_machine():
    cpu = params.resolve_params(make_params(), num_visible_gpus=0)
    assert (cpu.device, cpu.data_format, cpu.num_warmup_batches, cpu.num_batches) == (
        'cpu', 'NHWC', 5, 100)
    gpu = params.resolve_params(make_params(), num_visible_gpus=1)
    assert (gpu.device, gpu.data_format, gpu.num_warmup_batches) == ('gpu', 'NCHW', 10)
    nchw_cpu = params.resolve_params(make_params(data_format='NCHW'), num_visible_gpus=0)
    assert nchw_cpu.data_format == 'NCHW'
    epochs = params.resolve_params(make_params(num_epochs=2.0), num_visible_gpus=0)
    assert epochs.num_batches is None


@pytest.mark.parametrize('kwargs, gpus, text', [
    ({'device': 'gpu'}, 0, '--device=gpu, but no GPU is visible; use --device=cpu'),
    ({'device': 'gpu', 'num_gpus': 4}, 2, '--num_gpus=4, but 2 GPU(s) are visible'),
    ({'local_parameter_device': 'gpu'}, 0, '--local_parameter_device=gpu, but no GPU'),
    ({'use_nccl': True, 'variable_update': 'replicated', 'num_gpus': 2}, 0,
     '--use_nccl needs GPUs'),
])
def test_resolve_rejects_missing_gpus(kwargs, gpus, text):
    with pytest.raises(ParamsError) as info:
        params.resolve_params(make_params(**kwargs), num_visible_gpus=gpus)
    assert text in str(info.value)


@pytest.mark.parametrize('flag, relative, text', [
    ('train_dir', 'afile/ckpts', 'afile is a file, not a directory'),
    ('benchmark_log_dir', 'afile', 'afile is a file, not a directory'),
    ('trace_file', 'afile/trace.json', 'afile is a file, not a directory'),
    ('plot_file', 'adir', 'it is a directory; give a file name'),
    ('plot_file', 'plot.txt', 'the plot is a PNG image; give a name ending in .png'),
    ('graph_file', 'afile/deeper/g.pbtxt', 'afile is a file, not a directory'),
])
def test_unwritable_output_paths_are_refused_up_front(tmp_path, flag, relative, text):
    (tmp_path / 'afile').write_text('x')
    (tmp_path / 'adir').mkdir()
    path = str(tmp_path / relative)
    with pytest.raises(ParamsError) as info:
        output_paths.check_output_paths(make_params(**{flag: path}))
    if text.startswith('afile'):
        text = str(tmp_path / text)
    assert str(info.value) == '--%s=%s cannot be written: %s. Choose another path.' % (
        flag, path, text)


def test_an_eval_whose_train_dir_cannot_take_its_summaries_names_eval_dir(tmp_path):
    # Before: "Choose another path." where the --train_dir holds the checkpoint to evaluate.
    (tmp_path / 'afile').write_text('x')
    path = str(tmp_path / 'afile' / 'ckpts')
    with pytest.raises(ParamsError) as info:
        output_paths.check_output_paths(make_params(train_dir=path, eval=True,
                                                    summary_verbosity=1))
    assert str(info.value) == (
        '--train_dir=%s cannot be written: %s is a file, not a directory. An --eval writes '
        'only its summaries there: give --eval_dir=DIR (a folder this user can write) or '
        '--summary_verbosity=0.' % (path, tmp_path / 'afile'))


def test_output_paths_that_do_not_exist_yet_pass(tmp_path):
    output_paths.check_output_paths(make_params(
        train_dir=str(tmp_path / 'a'), benchmark_log_dir=str(tmp_path / 'logs'),
        trace_file=str(tmp_path / 't.json'), plot_file='relative.png'))
    assert sorted(os.listdir(tmp_path)) == []  # the check leaves nothing behind


@pytest.mark.parametrize('flag, relative, missing', [
    ('train_dir', 'a/b', ['a']),
    ('benchmark_log_dir', 'a/b/c', ['a', 'a/b']),
    ('trace_file', 'nonexistent_dir/t.json', ['nonexistent_dir']),
    ('graph_file', 'new/deeper/g.pbtxt', ['new', 'new/deeper']),
    ('plan_scaling_png', 'nonexist/dir/s.png', ['nonexist', 'nonexist/dir']),
])
def test_missing_folders_of_output_paths_are_made_and_said(tmp_path, flag, relative, missing):
    # The original made them (gfile.MakeDirs: the trace's folder, --train_dir); they were
    # refused: 'the folder a does not exist (create it first: only the last folder of a
    # directory flag is made)', 'its folder ... does not exist (a file flag's folder is not
    # made: create it first)', exit status 2.
    path = str(tmp_path / relative)
    p = make_params(**{flag: path}, **(dict(plan_scaling=True) if 'png' in flag else {}))
    output_paths.check_output_paths(p)
    assert os.listdir(tmp_path) == []  # the check leaves nothing behind
    folders = [str(tmp_path / m) for m in missing]
    assert output_paths.parent_folders(p) == [(flag, f) for f in folders]
    assert output_paths.make_parent_folders(p) == ['Made the missing folder%s %s for --%s=%s' % (
        's' if len(folders) > 1 else '', ', '.join(folders), flag, path)]
    assert all(os.path.isdir(f) for f in folders) and not os.path.exists(path)
    assert output_paths.make_parent_folders(p) == []  # nothing missing any more


_WRITTEN_BY_A_RUN = ['train_dir', 'benchmark_log_dir', 'trace_file', 'graph_file', 'results_db']


@pytest.mark.parametrize('mode, written', [
    ({}, _WRITTEN_BY_A_RUN),
    (dict(dry_run=True), ['benchmark_log_dir']),
    (dict(plan_scaling=True), ['benchmark_log_dir', 'plan_scaling_png']),
    (dict(calibrate=True), []),
])
def test_only_the_folders_of_outputs_the_mode_writes_are_made(tmp_path, monkeypatch, mode,
                                                              written):
    # A --dry_run (or --plan_scaling) writes only its JSON into --benchmark_log_dir (and the
    # plan's PNG), yet made the missing folders of --train_dir, --results_db, --graph_file...
    monkeypatch.delenv('TF_CNN_RESULTS_DB', raising=False)
    names = _WRITTEN_BY_A_RUN + (['plan_scaling_png'] if 'plan_scaling' in mode else [])
    paths = {n: str(tmp_path / n / 'sub' / ('out.png' if n == 'plan_scaling_png' else 'out'))
             for n in names}
    lines = output_paths.make_parent_folders(make_params(**paths, **mode))
    assert lines == ['Made the missing folders %s, %s for --%s=%s' % (
        tmp_path / n, tmp_path / n / 'sub', n, paths[n]) for n in written]
    assert sorted(os.listdir(tmp_path)) == sorted(written)


def test_a_named_results_database_s_missing_folders_are_made_and_said(tmp_path, monkeypatch):
    # --results_db=/tmp/a/b/r.sqlite made a/ and b/ without a word (history/store.py's
    # makedirs), unlike every other output path; $TF_CNN_RESULTS_DB likewise.
    monkeypatch.delenv('TF_CNN_RESULTS_DB', raising=False)
    path = str(tmp_path / 'a' / 'b' / 'r.sqlite')
    p = make_params(results_db=path)
    assert output_paths.make_parent_folders(p) == [
        'Made the missing folders %s, %s for --results_db=%s' % (
            tmp_path / 'a', tmp_path / 'a' / 'b', path)]
    env_path = str(tmp_path / 'c' / 'r.sqlite')
    monkeypatch.setenv('TF_CNN_RESULTS_DB', env_path)
    assert output_paths.make_parent_folders(make_params()) == [
        'Made the missing folder %s for $TF_CNN_RESULTS_DB=%s' % (tmp_path / 'c', env_path)]
    assert output_paths.named_database(make_params(results_db=False)) is None


def test_a_relative_xdg_data_home_is_ignored_as_the_specification_says(tmp_path, monkeypatch):
    # XDG_DATA_HOME=rel/dir made ./rel/dir/tf_cnn_benchmarks/results.sqlite under the working
    # folder; the XDG Base Directory Specification says a relative value is to be ignored.
    from tf_cnn_benchmarks.history import store
    env = {'HOME': str(tmp_path), 'XDG_DATA_HOME': 'rel/dir'}
    assert store.default_path(env) == str(
        tmp_path / '.local' / 'share' / 'tf_cnn_benchmarks' / 'results.sqlite')
    assert store.default_origin(env) == ' (not given: under ~/.local/share)'
    env['XDG_DATA_HOME'] = str(tmp_path / 'xdg')
    assert store.default_path(env) == str(tmp_path / 'xdg' / 'tf_cnn_benchmarks' / 'results.sqlite')


def test_a_folder_under_a_file_is_still_refused(tmp_path):
    (tmp_path / 'afile').write_text('x')
    path = str(tmp_path / 'afile' / 'a' / 't.json')
    with pytest.raises(ParamsError) as info:
        output_paths.check_output_paths(make_params(trace_file=path))
    assert str(info.value) == ('--trace_file=%s cannot be written: %s is a file, not a '
                               'directory. Choose another path.' % (path, tmp_path / 'afile'))


def test_a_train_dir_made_by_another_task_meanwhile_passes(tmp_path, monkeypatch):
    # Two workers of one cluster sharing --train_dir check it at the same moment: the other
    # worker's mkdir lands between this one's exists() and mkdir() (seen in CI).
    real_mkdir = os.mkdir

    def mkdir_after_the_other_task(path, *args):
        real_mkdir(path, *args)
        raise FileExistsError(17, 'File exists', path)

    monkeypatch.setattr(output_paths.os, 'mkdir', mkdir_after_the_other_task)
    # (No results database: the patched mkdir would leave its probe folder behind.)
    output_paths.check_output_paths(make_params(train_dir=str(tmp_path / 'ckpt'),
                                                results_db=False))
    monkeypatch.undo()
    assert os.path.isdir(tmp_path / 'ckpt')  # the other task's folder stays


@pytest.mark.parametrize('kwargs,text', [
    (dict(fused_weight_decay='false'), "--fused_weight_decay takes a boolean. Received: "
                                       "fused_weight_decay='false'"),
    (dict(batch_size=2.5), '--batch_size takes an integer. Received: batch_size=2.5'),
    (dict(weight_decay=True), '--weight_decay takes a float. Received: weight_decay=True'),
])
def test_library_values_of_the_wrong_type_are_refused(kwargs, text):
    # The command line parses types; the library API gets whatever Python value it is given.
    with pytest.raises(ParamsError) as e:
        validate_params(make_params(**kwargs))
    assert str(e.value) == text
    validate_params(make_params(weight_decay=1, batch_size=2))  # an int is a float too


def test_a_parsers_message_names_its_flag_once():
    from tf_cnn_benchmarks.params import flag_error
    # The flag first: kept; its bare name first: the dashes added; else the flag before it.
    assert str(flag_error('--interconnect_gbps', ValueError(
        "--interconnect_gbps must be > 0. Received: '0'"))) == (
            "--interconnect_gbps must be > 0. Received: '0'")
    assert str(flag_error('gpu_model', "unknown GPU model 'x'")) == (
        "--gpu_model: unknown GPU model 'x'")
    assert str(flag_error('gpu', '--gpu_model: x')) == '--gpu: --gpu_model: x'  # another flag
    with pytest.raises(params.ParamsError) as err:
        params.validate_params(params.make_params(variable_update='replicated',
                                                  all_reduce_spec='ring'))
    assert str(err.value).startswith("--all_reduce_spec 'ring': unknown algorithm 'ring'")


def test_use_nccl_with_a_spec_is_refused_on_a_gpu_too():
    """`--dry_run --gpu_model=V100 --num_gpus=2 --variable_update=replicated --use_nccl
    --all_reduce_spec=xring` ended in the manager's ValueError traceback."""
    assert _error(use_nccl=True, all_reduce_spec='pscpu', variable_update='replicated',
                  device='gpu', num_gpus=2).startswith(
        '--use_nccl and --all_reduce_spec exclude each other')
    validate_params(make_params(use_nccl=True, all_reduce_spec='pscpu'))  # no all-reduce: warns


@pytest.mark.cli
@pytest.mark.parametrize('args, line', [
    (['--device=cpu', '--num_gpus=2', '--variable_update=replicated', '--use_nccl',
      '--all_reduce_spec=xring'], 'error: --use_nccl and --all_reduce_spec exclude each other '
     '(--use_nccl is the spec nccl); drop --use_nccl to all-reduce with --all_reduce_spec=xring.'),
    (['--dry_run', '--gpu_model=V100', '--num_gpus=2', '--variable_update=replicated',
      '--use_nccl', '--all_reduce_spec=xring'], 'error: --use_nccl and --all_reduce_spec '
     'exclude each other'),
    (['--device=cpu', '--num_gpus=2', '--variable_update=replicated', '--gradient_repacking=2',
      '--agg_small_grads_max_bytes=1000'], 'error: --gradient_repacking and '
     '--agg_small_grads_max_bytes exclude each other here'),
    (['--job_name=worker', '--ps_hosts=127.0.0.1:1', '--worker_hosts=127.0.0.1:2',
      '--staged_vars'], "error: --staged_vars runs on one host only; drop it from cluster runs "
     "(this project's cluster parameter_server does not stage its reads from the ps, as the "
     "original's did; use --variable_update=distributed_replicated for local copies of the "
     "variables)."),
])
def test_the_multi_device_refusals_are_one_line_and_exit_2(args, line):
    from helpers import run_command
    out = run_command('--model=trivial', '--batch_size=2', '--num_batches=1', *args)
    errors = [e for e in out.stderr.splitlines() if e.startswith('error:')]
    assert out.returncode == 2 and len(errors) == 1, out.stderr
    assert errors[0].startswith(line) and 'Traceback' not in out.stderr
