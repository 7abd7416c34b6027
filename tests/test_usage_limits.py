"""Usage errors of path flags and device counts (issue 41, items 1, 7-10): an empty path flag,
a scheme no file system serves, a --config named with its file's suffix, a --train_dir too deep
for the checkpoint files, more logical CPU devices than make sense; each one `error:` line and
exit status 2 before anything is built."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
import types

import pytest

from tf_cnn_benchmarks import params
from tf_cnn_benchmarks import run_header as header
from tf_cnn_benchmarks.hardware import machine
from tf_cnn_benchmarks.models import model_catalog
from tf_cnn_benchmarks.params import configs, device_rules
from tf_cnn_benchmarks.preflight import output_paths, path_lengths, usage
from tf_cnn_benchmarks.runtime import file_systems

import checkout

TESTS = os.path.join(checkout.REPO, 'tests')

# cli.main for each argv in one process, absl's flags reset between them: (status, stderr,
# TensorFlow loaded) per case.
_MAINS = textwrap.dedent('''
    import contextlib, io, json, sys
    sys.path.insert(0, {tests!r})
    import checkout
    checkout.load()
    from absl import flags
    from tf_cnn_benchmarks import cli
    out = []
    for args in {cases!r}:
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            try:
                status = cli.main(['tf_cnn_benchmarks'] + args)
            except SystemExit as e:
                status = e.code
        flags.FLAGS.unparse_flags()
        out.append([status, err.getvalue(), 'tensorflow' in sys.modules])
    print('\\nCASES ' + json.dumps(out))
''')


def run_mains(cases: list[list[str]], cwd: str, env: dict | None = None
              ) -> list[tuple[int, str, bool]]:
    """(exit status, stderr, whether TensorFlow was loaded) of cli.main for each argv of
    `cases`, all in one subprocess (one TensorFlow import), in `cwd`, with `env` (default: this
    process's environment)."""
    env = {k: v for k, v in (os.environ if env is None else env).items()
           if k != 'TF_CPP_MIN_LOG_LEVEL'}
    proc = subprocess.run([sys.executable, '-c', _MAINS.format(tests=TESTS, cases=cases)],
                          capture_output=True, text=True, timeout=300, env=env, cwd=cwd)
    _, _, last = proc.stdout.rpartition('\nCASES ')
    assert last, proc.stdout[-2000:] + proc.stderr[-2000:]
    return [tuple(case) for case in json.loads(last)]


def _deep_folder(root: str, length: int) -> str:
    """An existing folder under `root` whose path is `length` characters long."""
    path = root
    while len(path) + 201 < length:
        path = os.path.join(path, 'd' * 200)
    path = os.path.join(path, 'e' * (length - len(path) - 1))
    os.makedirs(path)
    return path


@pytest.mark.cli
def test_path_flag_problems_are_one_line_and_status_2_before_tensorflow_loads(tmp_path):
    deep = os.path.join(_deep_folder(str(tmp_path), 4040), 'run')  # its folder can be made
    cases = [['--data_dir='], ['--train_dir=s3://bucket/run1'],
             ['--data_dir=hdfs://namenode/imagenet'], ['--results_db=gs://bucket/r.sqlite'],
             ['--config=resnet50_cpu.flags', '--num_batches=-1'],
             ['--config=' + os.path.join(checkout.REPO, 'configs', 'ci_smoke.flags'),
              '--num_batches=-1'],
             ['--train_dir=' + deep, '--num_batches=100']]
    results = run_mains(cases, str(tmp_path))
    assert [(status, loaded, err.count('\n')) for status, err, loaded in results] == [
        (2, False, 1)] * len(cases)
    errors = [err for _, err, _ in results]
    assert errors[0] == ("error: --data_dir is given an empty value (an unset variable in a "
                         "script?); give a path, or drop the flag for synthetic data. "
                         "Received: data_dir=''\n")
    for text, name in zip(errors[1:3], ('--train_dir=s3://bucket/run1: ',
                                        '--data_dir=hdfs://namenode/imagenet: ')):
        scheme = file_systems.scheme(name.split('=')[1])
        assert text == ('error: %sTensorFlow %s has no file system for %s:// (registered: '
                        'file://, gs://, ram://); %s\n' % (
                            name, file_systems._tf_version(), scheme,
                            file_systems._provider(scheme, file_systems._tf_version())))
    assert errors[3].startswith('error: --results_db=gs://bucket/r.sqlite: the results database '
                                'is an SQLite file, which needs a local disk')
    # The configuration was read (resnet50_cpu's flags), and the next rule stopped the run.
    assert errors[4] == errors[5] == ('error: --num_batches must be >= 1, or 0 (unset, as in '
                                      'the original: the default number of steps). Received: '
                                      'num_batches=-1\n')
    # Before: the folder could be made, the run trained 110 steps and lost them at the save.
    assert errors[6] == ('error: --train_dir=%s cannot be used: the run would write '
                         'model.ckpt-111.data-00000-of-00001.tempstate%s there, a path of %d '
                         'bytes, over this system\'s limit of 4095 (PATH_MAX 4096 with the '
                         'terminating NUL); choose a shorter --train_dir\n'
                         % (deep, '0' * 20, len(deep) + 65))
    assert not os.path.exists(deep)


def _folder_over_path_max(root: str) -> str:
    """An existing folder under `root` whose path is over 4096 bytes, made level by level
    relative to the folder above (a path that long cannot be given to mkdir whole)."""
    path, fd = root, os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        while len(path) <= 4096:
            os.mkdir('d' * 200, dir_fd=fd)
            deeper = os.open('d' * 200, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd, path = deeper, os.path.join(path, 'd' * 200)
    finally:
        os.close(fd)
    return path


@pytest.mark.cli
def test_a_path_over_path_max_is_refused_for_its_length_not_as_missing(tmp_path):
    # Before: an existing folder over PATH_MAX reads as missing (ENAMETOOLONG), and an output
    # flag in it was refused with 'the folder ... does not exist (create it first...)', an
    # input flag after TensorFlow loaded with '... does not exist' or 'is not a checkpoint'.
    deep = _folder_over_path_max(str(tmp_path))
    flags = ['train_dir', 'eval_dir', 'benchmark_log_dir', 'data_dir', 'checkpoint_path',
             'trace_file', 'graph_file', 'tfprof_file', 'partitioned_graph_file_prefix',
             'plot_file', 'results_db', 'baseline']
    values = [os.path.join(deep, 'x.png' if flag == 'plot_file' else 'x') for flag in flags]
    cases = [['--model=trivial', '--device=cpu', '--num_batches=2', '--%s=%s' % (flag, value)]
             for flag, value in zip(flags, values)]
    results = run_mains(cases, str(tmp_path))
    assert results == [(2, 'error: --%s=%s cannot be used: a path of %d bytes, over this '
                        'system\'s limit of 4095 (PATH_MAX 4096 with the terminating NUL); '
                        'choose a shorter --%s\n' % (flag, value, len(value), flag), False)
                       for flag, value in zip(flags, values)]


def test_a_name_over_name_max_in_a_given_path_is_refused_for_its_length(tmp_path):
    path = os.path.join(str(tmp_path), 'n' * 256, 'run')
    with pytest.raises(params.ParamsError) as raised:
        path_lengths.check_given_paths(params.make_params(data_dir=path))
    assert str(raised.value) == (
        "--data_dir=%s cannot be used: a name of 256 bytes (%s...), over this file system's "
        "limit of 255 per name (NAME_MAX); choose a shorter --data_dir"
        % (path, 'n' * 60))
    path_lengths.check_given_paths(params.make_params(data_dir=str(tmp_path), results_db=True,
                                                      train_dir='gs://b/' + 'x' * 5000))


@pytest.mark.cli
def test_a_thousand_logical_cpu_devices_are_refused_before_tensorflow_loads(tmp_path):
    # 1000 built for minutes without a word; 100000 first printed a 1.4 MB Devices: line.
    results = run_mains([['--device=cpu', '--num_gpus=%d' % n, '--config=ci_smoke.flags']
                         for n in (1000, 100000)], str(tmp_path))
    assert results == [(2, 'error: --num_gpus=%d asks for %d logical CPU devices (towers), '
                        'and this process may use %d CPUs: beyond one tower per CPU (and beyond '
                        '16, the most GPUs of one host) a tower only adds graph to build, not '
                        'compute; give --num_gpus <= %d\n'
                        % (n, n, device_rules.usable_cpus(), device_rules.cpu_tower_limit()), False)
                       for n in (1000, 100000)]


def test_real_data_whose_input_batch_alone_exceeds_the_host_is_refused_before_the_build(
        imagenet_dir, tmp_path):
    # At --batch_size=100000000 the input pipeline's per-image chains built for minutes.
    q = params.make_params(model='trivial', data_dir=imagenet_dir, batch_size=4000, num_gpus=2)
    per_image = 227 * 227 * 3 * 4
    usage.check_input_batch(q, 'imagenet', available=8000 * per_image)  # fits: no error
    with pytest.raises(params.ParamsError) as e:
        usage.check_input_batch(q, 'imagenet', available=7999 * per_image)
    assert str(e.value) == (
        'not enough memory for --batch_size=4000: the input batch alone is %.2f GiB of float32 '
        'images (4000 x 2 tower(s) x 227x227x3), more than the %.2f GiB this host can '
        'allocate; give --batch_size=3999 at most (the step needs more than its input)'
        % (8000 * per_image / (1 << 30), 7999 * per_image / (1 << 30)))
    usage.check_input_batch(q._replace(data_dir=None), 'synthetic', available=1)  # synthetic
    results = run_mains([['--model=trivial', '--batch_size=100000000', '--num_batches=1',
                          '--data_dir=%s' % imagenet_dir]], str(tmp_path))
    [(status, err, loaded)] = results
    assert (status, loaded) == (2, False) and err.count('\n') == 1
    assert err.startswith('error: not enough memory for --batch_size=100000000: the input batch '
                          'alone is ') and 'give --batch_size=' in err


def test_the_cpu_tower_limit_is_one_per_cpu_and_at_least_sixteen():
    assert [device_rules.cpu_tower_limit(c) for c in (1, 2, 16, 17, 96)] == [16, 16, 16, 17, 96]
    p = params.make_params(num_gpus=17)
    with pytest.raises(params.ParamsError, match=r'--num_gpus=17 asks for 17 logical CPU '
                       r'devices \(towers\), and this process may use 2 CPUs: .* give '
                       r'--num_gpus <= 16$'):
        device_rules.check_cpu_towers(p, 'cpu', cpus=2)
    device_rules.check_cpu_towers(p, 'cpu', cpus=17)  # one per CPU
    device_rules.check_cpu_towers(p._replace(num_gpus=16), 'cpu', cpus=2)  # any one-host GPU layout
    device_rules.check_cpu_towers(p, 'gpu', cpus=2)  # GPUs are checked against those visible
    device_rules.check_cpu_towers(p._replace(job_name='ps'), 'cpu', cpus=2)  # a ps builds no towers


def test_the_header_shortens_a_long_device_list_and_keeps_it_a_python_literal():
    assert header.describe_devices(['/cpu:%d' % i for i in range(8)]) == str(
        ['/cpu:%d' % i for i in range(8)])
    many = ['/cpu:%d' % i for i in range(100000)]
    shown = header.describe_devices(many)
    # Before: "[...] (100000 devices)", which the original's log parsers (ast.literal_eval of
    # the value) could not read; the count is a note on the line after it.
    assert shown == "['/cpu:0', '/cpu:1', '/cpu:2', ..., '/cpu:99999']"
    assert ast.literal_eval(shown) == ['/cpu:0', '/cpu:1', '/cpu:2', Ellipsis, '/cpu:99999']
    plan = types.SimpleNamespace(devices=tuple(many), visible_gpus=0,
                                 params=types.SimpleNamespace(device='cpu'))
    assert header.device_notes(plan) == ['             100000 devices',
                                         '             no GPU visible: running on the CPU']


def test_every_path_flag_given_empty_is_refused_and_unset_is_not():
    # --trace_file='' was the original's default (no trace): a script may give it.
    assert params.EMPTY_MEANS_NONE == ('trace_file',)
    params.validate_params(params.make_params(trace_file=''))
    for name in set(params.PATH_FLAGS) - {'trace_file'}:
        for value in ('', '  '):
            with pytest.raises(params.ParamsError, match='^--%s is given an empty value' % name):
                params.validate_params(params.make_params(**{name: value}))
        params.validate_params(params.make_params(**{name: None}))


def test_a_configuration_is_found_by_its_name_its_file_name_or_a_path(tmp_path, monkeypatch):
    path = os.path.join(configs.CONFIG_DIR, 'resnet50_cpu.flags')
    assert configs.path_of('resnet50_cpu') == configs.path_of('resnet50_cpu.flags') == path
    assert configs.path_of(path) == path
    with pytest.raises(params.ParamsError, match=r'^--config=resnet50\.flags: unknown '
                       r'configuration; known: ci_smoke, '):
        configs.path_of('resnet50.flags')
    with pytest.raises(params.ParamsError, match=r'no such file; give a configuration\'s name; '
                       r'known: ci_smoke, '):
        configs.path_of(str(tmp_path / 'mine.flags'))
    # The docs' configs/NAME.flags given outside the checkout: the name to use instead.
    monkeypatch.chdir(tmp_path)
    for given in ('configs/resnet50_cpu.flags', str(tmp_path / 'resnet50_cpu.flags')):
        with pytest.raises(params.ParamsError) as raised:
            configs.path_of(given)
        assert str(raised.value) == (
            "--config=%s: no such file in %s; give the configuration's name, "
            '--config=resnet50_cpu, which is found from any folder' % (given, os.getcwd()))


def test_the_longest_paths_count_the_last_step_and_the_host_name(tmp_path):
    train_dir = str(tmp_path / 'run')
    os.makedirs(train_dir)
    with open(os.path.join(train_dir, 'checkpoint'), 'w') as f:
        f.write('model_checkpoint_path: "model.ckpt-123456"\n'
                'all_model_checkpoint_paths: "model.ckpt-123000"\n')
    p = params.make_params(train_dir=train_dir, num_batches=50, num_warmup_batches=2,
                           summary_verbosity=1)
    assert path_lengths.last_step_bound(p) == 123456 + 53
    assert path_lengths.last_step_bound(p._replace(worker_hosts=['a:1', 'b:1'])) == 123456 + 106
    assert path_lengths.last_step_bound(p._replace(num_epochs=1.0, num_batches=None)) == 2**63 - 1
    names = [os.path.relpath(path, train_dir) for _, path in path_lengths.written_paths(p, 'h')]
    assert names == ['tf_cnn_benchmarks.hold',
                     'model.ckpt-123509.data-00000-of-00001.tempstate' + '0' * 20,
                     'checkpoint.tmp' + 'f' * 32, 'events.out.tfevents.0000000000.h']
    path_lengths.check_path_lengths(p, 'h')
    with pytest.raises(params.ParamsError, match=r'^--train_dir=.* the run would write '
                       r'events\.out\.tfevents\.0+\.hhhh.* there, a name of 281 bytes .*, over '
                       r'this file system\'s limit of 255 per name \(NAME_MAX\); choose a '
                       r'shorter --train_dir$'):
        path_lengths.check_path_lengths(p, 'h' * 250)  # TensorFlow puts the host in the name
    assert path_lengths.length_problem('/a/bbb', 2, 100) == (
        "a name of 3 bytes (bbb...), over this file system's limit of 2 per name (NAME_MAX)")
    assert path_lengths.length_problem('/a/bb', 2, 6) is None
    assert path_lengths.length_problem('/a/bbb', 3, 6).startswith('a path of 6 bytes, over this '
                                                                   'system\'s limit of 5')
    # Remote paths have their own limits, and dry runs write nothing.
    assert path_lengths.written_paths(p._replace(train_dir='gs://b/' + 'x' * 5000), 'h') == []
    assert path_lengths.written_paths(p._replace(dry_run=True), 'h') == []


def test_a_run_without_output_flags_writes_no_file_whose_path_could_be_too_long(
        tmp_path, monkeypatch):
    checked = []
    monkeypatch.setattr(path_lengths, 'check_path_lengths', checked.append)
    p = params.make_params(results_db=False)
    output_paths.check_output_paths(p)
    assert checked == [] and path_lengths.written_paths(p, 'h') == []
    with_dir = p._replace(train_dir=str(tmp_path / 'run'))
    output_paths.check_output_paths(with_dir)
    assert checked == [with_dir]


def test_only_remote_outputs_are_named_in_the_warning(tmp_path, capsys):
    p = params.make_params(train_dir='ram://run1', benchmark_log_dir=str(tmp_path),
                           trace_file='gs://bucket/t.json', data_dir='ram://data',
                           results_db=False)
    output_paths.check_output_paths(p)
    assert capsys.readouterr().err == (
        "warning: --train_dir=ram://run1, --trace_file=gs://bucket/t.json: written through "
        "TensorFlow's file systems (gs://, ram://), where the checks of a local disk do not "
        "apply: no hold of the folder against a second run, no free-space, path-length or "
        "write test before TensorFlow loads (then a file is written and removed there)\n")
    output_paths.check_output_paths(p._replace(train_dir=None, trace_file=None))
    assert capsys.readouterr().err == ''
    assert not os.path.exists('ram:') and not os.path.exists('gs:')


def test_an_eval_reads_its_train_dir_and_writes_only_where_its_summaries_go():
    p = params.make_params(train_dir='ram://run', eval=True, eval_dir='ram://eval')
    assert output_paths.output_dirs(p) == ('benchmark_log_dir', 'eval_dir')
    assert output_paths.remote_outputs(p) == ['--eval_dir=ram://eval']
    assert output_paths.output_dirs(p._replace(eval_dir=None, summary_verbosity=1)) == (
        'train_dir', 'benchmark_log_dir', 'eval_dir')  # <train_dir>/eval
    assert 'train_dir' in output_paths.output_dirs(p._replace(eval=False))


@pytest.mark.cli
def test_a_training_directory_on_read_only_storage_can_be_evaluated(tmp_path):
    """--eval of a checkpoint folder on a read-only mount was refused up front ('--train_dir
    ... cannot be written'), though an evaluation only reads it; its summaries still need a
    folder that can be written. The mount is a read-only bind in a private mount namespace."""
    import helpers
    from results_helpers import private_mounts as _private_mounts
    why = _private_mounts()
    if why:
        pytest.skip(why)
    train_dir = str(tmp_path / 'run')
    # ImageNet's 1001 classes, as the command's --eval below (not helpers.TINY_CLASSES).
    helpers.tiny_run(train_dir=train_dir, num_batches=1, num_classes=None)
    command = [sys.executable, os.path.join(checkout.REPO, 'tf_cnn_benchmarks.py'),
               '--model=trivial', '--batch_size=2', '--image_size=16', '--noresults_db',
               '--eval', '--num_eval_batches=1', '--train_dir=' + train_dir]
    shell = ('mount --bind -o ro "$1" "$1" && shift && "$@"; echo "STATUS $?"; '
             '"$@" --summary_verbosity=1; echo "STATUS $?"')
    proc = subprocess.run(['unshare', '-rm', 'bash', '-c', shell, 'sh', train_dir, *command],
                          capture_output=True, text=True, timeout=300, cwd=str(tmp_path),
                          env={**os.environ, 'TF_CPP_MIN_LOG_LEVEL': '3'})
    statuses = [x for x in proc.stdout.splitlines() if x.startswith('STATUS ')]
    assert statuses == ['STATUS 0', 'STATUS 2'], proc.stdout[-2000:] + proc.stderr[-2000:]
    assert 'Accuracy @ 1 = ' in proc.stdout
    assert [x for x in proc.stderr.splitlines() if x.startswith('error: ')] == [
        'error: --train_dir=%s cannot be written: cannot create a file in %s: Read-only file '
        'system. An --eval writes only its summaries there: give --eval_dir=DIR (a folder this '
        'user can write) or --summary_verbosity=0.' % (train_dir, train_dir)]


@pytest.mark.cli
@pytest.mark.skipif(machine.nvidia_driver_evidence() is not None,
                    reason='an NVIDIA driver is visible: TensorFlow counts the GPUs first')
def test_device_rules_on_a_host_without_gpu_come_before_tensorflow_loads(tmp_path):
    """Each of these loaded TensorFlow first (2-3 s); two ended with exit status 1."""
    results = run_mains([['--num_gpus=17'], ['--model=resnet50', '--plan_scaling',
                                              '--noresults_db'],
                         ['--dry_run', '--device=gpu']], str(tmp_path))
    assert [(status, loaded, err.count('\n')) for status, err, loaded in results] == [
        (2, False, 1)] * 3
    towers, plan, dry = (err for _, err, _ in results)
    assert towers.startswith('error: --num_gpus=17 asks for 17 logical CPU devices (towers)')
    assert plan.startswith('error: --plan_scaling on a host without a GPU plans CPU towers, '
                           'which needs the images/sec of one device: give '
                           '--single_device_images_per_sec=N')
    assert dry.startswith('error: --dry_run --device=gpu on a host without a GPU (no NVIDIA '
                          'driver found) plans the GPU named by --gpu_model=NAME; give one '
                          '(e.g. --gpu_model=V100; known: A10, A100 40GB, ')  # sorted


def test_device_rules_before_tensorflow_follow_the_driver_and_the_flags():
    none, driver = (lambda: None), (lambda: '/proc/driver/nvidia/version')
    no_run, a_run = (lambda q, device: None), (lambda q, device: (120.0, 'results database'))

    def problem(find_driver=none, find_run=no_run, **flags):
        try:
            usage.check_without_gpu(params.make_params(**flags), find_driver, find_run)
        except params.ParamsError as e:
            return str(e).split(';')[0].split(':')[0]
        return None

    assert problem(num_gpus=17).startswith('--num_gpus=17 asks for 17 logical CPU devices')
    assert problem(num_gpus=17, device='cpu', find_driver=driver).startswith('--num_gpus=17')
    assert problem(num_gpus=17, find_driver=driver) is None  # TensorFlow counts the GPUs
    assert problem(num_gpus=16) is None
    assert problem(dry_run=True, device='gpu') == (
        '--dry_run --device=gpu on a host without a GPU (no NVIDIA driver found) plans the GPU '
        'named by --gpu_model=NAME')
    assert problem(dry_run=True, device='gpu', gpu_model='V100') is None
    assert problem(dry_run=True, device='gpu', find_driver=driver) is None
    assert problem(plan_scaling=True, device='gpu').startswith('--plan_scaling --device=gpu')
    assert problem(plan_scaling=True) == ('--plan_scaling on a host without a GPU plans CPU '
                                          'towers, which needs the images/sec of one device')
    assert problem(plan_scaling=True, find_run=a_run) is None  # a stored one-device run
    assert problem(plan_scaling=True, single_device_images_per_sec=100.0) is None
    assert problem(plan_scaling=True, gpu_model='V100') is None
    assert problem(plan_scaling=True, gpu_interconnect='dgx1_v100') is None  # the preset's GPU
    assert problem(plan_scaling=True, find_driver=driver) is None
    assert problem(dry_run=True) is None  # a dry run of CPU towers needs no figure
    # NCCL needs GPUs: refused before TensorFlow loads where it will see none ...
    nccl = dict(num_gpus=2, variable_update='replicated', use_nccl=True)
    assert problem(**nccl) == '--use_nccl needs GPUs (NCCL has no CPU kernels)'
    assert problem(all_reduce_spec='nccl', variable_update='replicated', num_gpus=2) == (
        '--all_reduce_spec=nccl uses nccl, which needs GPUs')
    # One tower all-reduces nothing: a warning (test_flag_effect_rules), as on one GPU.
    assert problem(all_reduce_spec='nccl', variable_update='replicated') is None
    assert problem(find_driver=driver, **nccl) is None  # TensorFlow counts the GPUs
    # ... but a dry run or scaling plan of a named GPU plans GPUs: NCCL and many towers fit.
    assert problem(dry_run=True, gpu_model='A100', **nccl) is None
    assert problem(plan_scaling=True, gpu_model='A100', **nccl) is None
    assert problem(dry_run=True, **nccl) == (  # no --gpu_model: CPU towers are planned
        '--use_nccl needs GPUs (NCCL has no CPU kernels)')
    with pytest.raises(params.ParamsError, match=r'xring on CPU, or give --gpu_model=NAME to '
                       r'plan GPUs\.$'):
        usage.check_without_gpu(params.make_params(dry_run=True, **nccl), none, no_run)
    # A host preset plans its GPUs in a dry run too (it planned the CPU before).
    assert problem(dry_run=True, gpu_interconnect='dgx1_v100', **nccl) is None
    # One host holds at most 16 GPUs: a plan of 2000 planned 2 x 2000 up to 128 x 2000.
    for flags in (dict(plan_scaling=True, gpu_model='V100'), dict(dry_run=True, gpu_model='A100')):
        assert problem(num_gpus=17, **flags) == (
            '--num_gpus=17 plans 17 GPUs in one host, and the largest hosts hold 16 (DGX-2, HGX-2)')
        assert problem(num_gpus=16, **flags) is None


@pytest.mark.parametrize('flags,advice', [
    (dict(dry_run=True), '(--plan_scaling plans more hosts of them)'),
    # It advised '--plan_scaling plans more hosts of them' to a command given --plan_scaling.
    (dict(plan_scaling=True), "(the plan's rows go on to more hosts of them)")])
def test_the_advice_on_too_many_gpus_in_one_host_fits_the_flags_given(flags, advice):
    with pytest.raises(params.ParamsError) as e:
        usage.check_without_gpu(params.make_params(num_gpus=64, gpu_model='V100', **flags),
                                lambda: None, lambda q, device: None)
    assert str(e.value) == (
        '--num_gpus=64 plans 64 GPUs in one host, and the largest hosts hold 16 (DGX-2, HGX-2); '
        'give --num_gpus <= 16 %s' % advice)


def test_towers_asked_as_gpus_on_a_host_without_one_warn_that_they_run_on_the_cpu(capsys):
    p = params.make_params(num_gpus=3)
    assert device_rules.cpu_towers_warning(p, 'cpu', cpus=2) == (
        '--num_gpus=3 and no GPU is visible: its 3 towers run as logical CPU devices on the 2 '
        'CPU cores this process may use; --device=cpu asks for this on purpose')
    assert device_rules.cpu_towers_warning(p._replace(device='cpu'), 'cpu') is None  # on purpose
    assert device_rules.cpu_towers_warning(p, 'gpu') is None  # GPUs visible
    assert device_rules.cpu_towers_warning(p._replace(num_gpus=1), 'cpu') is None
    assert device_rules.cpu_towers_warning(p._replace(job_name='ps'), 'cpu') is None
    usage.check_with_tensorflow(p, 0)  # the command's check once TensorFlow loaded: no GPU
    assert capsys.readouterr().err == 'warning: %s\n' % device_rules.cpu_towers_warning(p, 'cpu')
    usage.check_with_tensorflow(p._replace(device='cpu'), 0)
    assert capsys.readouterr().err == ''
    # A dry run of a named GPU plans GPUs, not CPU towers: no warning.
    usage.check_with_tensorflow(p._replace(dry_run=True, gpu_model='Quadro RTX 8000'), 0)
    assert capsys.readouterr().err == ''
    usage.check_with_tensorflow(p._replace(dry_run=True), 0)  # without one: CPU towers
    assert 'towers run as logical CPU devices' in capsys.readouterr().err
    assert usage.planned_gpus(p._replace(plan_scaling=True, gpu_model='V100'), 0) == 1
    assert usage.planned_gpus(p._replace(dry_run=True, gpu_model='V100'), 4) == 4
    assert usage.planned_gpus(p._replace(gpu_model='V100'), 0) == 0  # a run, not a plan


def test_the_input_batch_is_judged_only_for_a_model_and_size_the_catalog_takes():
    # check_model asks the input batch first; an unknown --model, or an --image_size the model
    # does not take, still gets its own line, not the batch's (far beyond any host here).
    huge = dict(data_dir='/no/such/folder', batch_size=10 ** 12)
    with pytest.raises(params.ParamsError) as e:
        usage.check_model(params.make_params(model='vgg16', image_size=100, **huge), 'imagenet')
    assert str(e.value) == '--model=vgg16 takes only 224x224 images. Received: image_size=100'
    with pytest.raises(model_catalog.UnknownModelError, match=r"^unknown --model='resnet49'"):
        usage.check_model(params.make_params(model='resnet49', **huge), 'imagenet')
    with pytest.raises(params.ParamsError, match=r'^not enough memory for --batch_size='):
        usage.check_model(params.make_params(model='vgg16', **huge), 'imagenet')


def test_the_checks_after_tensorflow_loads_report_the_layers_top_down():
    # The remote outputs (this package) before the device's towers (params/device_rules.py),
    # those before TensorFlow's reading of --rewriter_config (runtime/gpu_settings.py).
    towers = dict(device='cpu', num_gpus=100000)
    remote = dict(train_dir='s3://bucket/run1')
    cases = [(dict(towers, **remote), r'^--train_dir=s3://bucket/run1: TensorFlow '),
             (dict(towers, rewriter_config='garbage'), r'^--num_gpus=100000 asks for '),
             (dict(remote, rewriter_config='garbage'), r'^--train_dir=s3://bucket/run1: ')]
    for flags, first in cases:
        with pytest.raises(params.ParamsError, match=first):
            usage.check_with_tensorflow(params.make_params(**flags), 0)
