"""The command's edges: answers that need no TensorFlow (usage errors, unknown models, --help,
--version, --list_models) come without loading it, output into a closed pipe ends quietly, and
flags that cannot work in a run say so."""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import signal
import subprocess
import sys
import textwrap

import pytest

from tf_cnn_benchmarks import __version__
from tf_cnn_benchmarks.models import model_catalog

import helpers

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(REPO, 'tests')

_MAIN = textwrap.dedent('''
    import json, sys
    sys.path.insert(0, {tests!r})
    import checkout
    checkout.load()
    from tf_cnn_benchmarks import cli
    try:
        status = cli.main(['tf_cnn_benchmarks'] + {args!r})
    except SystemExit as e:
        status = e.code
    sys.stdout.flush()
    print('\\nSTATUS ' + json.dumps([status, 'tensorflow' in sys.modules]))
''')


def run_main(*args):
    """cli.main(args) in a fresh process: (exit status, stdout, stderr, TensorFlow loaded)."""
    env = {k: v for k, v in os.environ.items() if k != 'TF_CPP_MIN_LOG_LEVEL'}
    proc = subprocess.run([sys.executable, '-c', _MAIN.format(tests=TESTS, args=list(args))],
                          capture_output=True, text=True, timeout=120, env=env, cwd=REPO)
    out, _, last = proc.stdout.rpartition('\nSTATUS ')
    assert last, proc.stdout[-2000:] + proc.stderr[-2000:]
    status, loaded = json.loads(last)
    return status, out, proc.stderr, loaded


@pytest.mark.parametrize('args, message', [
    (['--model=resnt50'], "error: unknown --model='resnt50'; did you mean resnet50, resnet50_v2 "
     'or resnet152? valid models for imagenet (and synthetic data): alexnet, densenet121, '),
    (['--model=nasnet'], 'error: --model=nasnet is a model of the original tf_cnn_benchmarks '
     'that this project does not build; --list_models lists the %s it builds\n'
     % model_catalog.count_text()),
    (['--data_name=coco'], 'error: --data_name=coco is the dataset of ssd300, a model of the '
     'original tf_cnn_benchmarks that this project does not build; --data_name takes imagenet or '
     'cifar10 (the datasets of the models --list_models lists) or synthetic\n'),
    (['--model=resnet50', '--data_name=librispeech'], 'error: --data_name=librispeech is the '
     'dataset of deepspeech2, a model of the original tf_cnn_benchmarks that this project does '
     'not build; --data_name takes imagenet or cifar10 (the datasets of the models '
     '--list_models lists) or synthetic\n'),
    (['--data_name=mnist'], "error: --data_name must be one of 'imagenet', 'cifar10', "
     "'synthetic'. Received: data_name='mnist'\n"),
    (['--model=densenet40_k12'], 'error: --model=densenet40_k12 is a cifar10 model and does not '
     'run on synthetic data (for synthetic cifar10 images add --data_name=cifar10)'),
    (['--job_name=worker', '--ps_hosts=localhost:2222', '--worker_hosts=localhost:2222'],
     'error: localhost:2222 is in both --ps_hosts and --worker_hosts; every task needs its own '
     'host:port.'),
    (['--job_name=worker', '--ps_hosts=127.0.0.1:2222', '--worker_hosts=localhost:2222'],
     'error: 127.0.0.1:2222 (--ps_hosts) and localhost:2222 (--worker_hosts) are the same '
     'address; every task needs its own host:port.'),
    (['--model=resnet50', '--image_size=8'],
     'error: --model=resnet50 needs --image_size >= 32. Received: 8'),
    (['--model=vgg16', '--image_size=64'],
     'error: --model=vgg16 takes only 224x224 images. Received: image_size=64'),
    (['--model=resnet20', '--data_name=cifar10', '--image_size=4'],
     'error: --model=resnet20 needs --image_size >= 8. Received: 4'),
    (['--train_dir=/proc/no_such_dir'], 'error: --train_dir=/proc/no_such_dir cannot be '
     'written: cannot create /proc/no_such_dir: No such file or directory. Choose another path.'),
])
def test_usage_errors_come_before_tensorflow_loads(args, message):
    status, out, err, loaded = run_main(*args)
    assert (status, loaded, out.strip()) == (2, False, '')
    assert err.startswith(message) and err.count('\n') == 1, err


def test_unknown_model_lists_both_datasets():
    with pytest.raises(model_catalog.UnknownModelError) as info:
        model_catalog.check_model('resnet9000', 'imagenet')
    message = str(info.value)
    assert message.startswith("unknown --model='resnet9000'; did you mean resnet50, resnet101 or "
                              'resnet50_v2? valid models for imagenet')
    # The run's dataset comes first: on ImageNet, resnet5 means resnet50, not CIFAR's resnet56.
    with pytest.raises(model_catalog.UnknownModelError, match='did you mean resnet50, '
                       'resnet152 or resnet50_v2[?]'):
        model_catalog.check_model('resnet5', 'imagenet')
    with pytest.raises(model_catalog.UnknownModelError, match='did you mean resnet56, '
                       'resnet44 or resnet32[?]'):
        model_catalog.check_model('resnet5', 'cifar10')
    with pytest.raises(ValueError, match="unknown dataset 'mnist'; give one of imagenet, "
                       'cifar10, synthetic'):
        model_catalog.names('mnist')
    imagenet, cifar10 = message.split('; for cifar10 (--data_name=cifar10): ')
    assert imagenet.endswith(', '.join(model_catalog.names('imagenet')))
    assert cifar10 == ', '.join(model_catalog.names('cifar10'))
    assert 'resnet56_v2' in cifar10 and 'densenet40_k12' in cifar10
    with pytest.raises(model_catalog.UnknownModelError, match='; valid models for imagenet'):
        model_catalog.check_model('zzz', 'cifar10')  # nothing close: no "did you mean"


def test_models_of_the_original_not_built_here_are_named_as_such():
    built = {name for name, _ in model_catalog.list_models()}
    # The counts themselves are the docs' (tests/test_docs.py checks docs/usage-and-flags.md's).
    assert model_catalog.count_text() == (
        '%d models (%d names: alexnet and trivial for ImageNet and CIFAR-10)' % (
            len(model_catalog.ROWS), len(built)))
    assert not built & set(model_catalog.ORIGINAL_ONLY)
    for name in model_catalog.ORIGINAL_ONLY:
        for dataset in ('imagenet', 'cifar10', 'synthetic'):
            with pytest.raises(model_catalog.UnknownModelError) as info:
                model_catalog.check_model(name, dataset)
            assert str(info.value) == (
                '--model=%s is a model of the original tf_cnn_benchmarks that this project '
                'does not build; --list_models lists the %s it builds'
                % (name, model_catalog.count_text()))


def test_a_model_registered_but_missing_from_the_catalog_names_the_command(tmp_path,
                                                                          monkeypatch):
    """A model added to models/model_config.py without regenerating ROWS: the command's check
    (before TensorFlow loads) says the table is stale and how to regenerate it, not 'unknown'."""
    registry = tmp_path / 'model_config.py'
    registry.write_text(open(model_catalog.REGISTRY_PATH, encoding='utf-8').read().replace(
        "    ('alexnet', alexnet_model.AlexnetCifar10Model),\n",
        "    ('alexnet', alexnet_model.AlexnetCifar10Model),\n"
        "    ('tinynet', tinynet_model.TinynetModel),\n"))
    assert model_catalog._registry_source_names() >= {'trivial', 'resnet50', 'densenet121'}
    monkeypatch.setattr(model_catalog, 'REGISTRY_PATH', str(registry))
    for dataset in ('cifar10', 'imagenet'):
        with pytest.raises(model_catalog.UnknownModelError) as info:
            model_catalog.check_model('tinynet', dataset)
        assert str(info.value) == (
            '--model=tinynet is registered in models/model_config.py but not in the stored '
            'table the command checks before TensorFlow loads (models/model_catalog.py ROWS is '
            'stale); regenerate it: python -m tf_cnn_benchmarks.models.model_table --write')
    with pytest.raises(model_catalog.UnknownModelError, match="unknown --model='tinynt'"):
        model_catalog.check_model('tinynt', 'cifar10')


def test_a_model_the_originals_registry_lacks_is_new_without_a_list_to_edit():
    """NOT_IN_ORIGINAL is derived from the original's registry (ORIGINAL_MODELS), so a new
    CIFAR-10 model is 'new', not 'differs' as every CIFAR-10 model of the original is."""
    assert model_catalog.NOT_IN_ORIGINAL == {
        ('densenet121', 'imagenet'), ('mobilenet_v1', 'imagenet'), ('mobilenet_v2', 'imagenet'),
        ('resnet101_v1.5', 'imagenet'), ('resnet152_v1.5', 'imagenet')}
    rows = model_catalog.ROWS + (('tinynet', 'cifar10', 32, 1, 1, 64, 0.01, 8, False),)
    assert model_catalog.not_in_original(rows) == model_catalog.NOT_IN_ORIGINAL | {
        ('tinynet', 'cifar10')}
    assert model_catalog.origin('resnet20', 'cifar10') == 'differs'
    assert 'nasnet' in model_catalog.ORIGINAL_ONLY and 'ssd300' in model_catalog.ORIGINAL_ONLY


def test_the_originals_datasets_not_read_here_are_those_of_its_models_not_built_here():
    from tf_cnn_benchmarks.params import original_flags
    for models in original_flags.ORIGINAL_ONLY_DATASETS.values():
        assert set(models) <= set(model_catalog.ORIGINAL_ONLY)
    assert not set(original_flags.ORIGINAL_ONLY_DATASETS) & set(model_catalog.DATASETS)


def test_version_and_list_models_need_no_tensorflow():
    status, out, err, loaded = run_main('--version')
    assert (status, loaded, err) == (0, False, '')
    assert out == 'tf_cnn_benchmarks %s (TensorFlow %s)\n' % (
        __version__, importlib.metadata.version('tensorflow'))
    status, out, err, loaded = run_main('--list_models')
    assert (status, loaded, err) == (0, False, '')
    lines = out.rstrip('\n').split('\n')
    assert len(lines) == 2 + len(model_catalog.ROWS) + 1
    assert lines[0].split() == ['model', 'dataset', 'image', 'parameters', 'GFLOPs', 'batch',
                                'learning_rate', 'original']
    resnet50 = [line.split() for line in lines if line.startswith('resnet50 ')]
    assert resnet50 == [['resnet50', 'imagenet', '224', '25,559,081', '7.716', '64', '0.032',
                         'same']]
    # The count says what it counts; the rows not in the original, or built otherwise, say so.
    assert lines[-1].startswith(model_catalog.count_text() + '; original: same = ')
    marks = {tuple(line.split()[:2]): line.split()[-1] for line in lines[2:-1]}
    assert len(marks) == len(model_catalog.ROWS)
    # 'new': exactly the models whose name the original's registry of that dataset lacks.
    new = {m for m, mark in marks.items() if mark == 'new'}
    assert new == {m for m in marks if m[0] not in model_catalog.ORIGINAL_MODELS[m[1]]}
    assert new >= {
        ('densenet121', 'imagenet'), ('mobilenet_v1', 'imagenet'), ('mobilenet_v2', 'imagenet'),
        ('resnet101_v1.5', 'imagenet'), ('resnet152_v1.5', 'imagenet')}
    # The original's MobileNet v2, less the second 1001 -> 1001 layer its base class added.
    assert marks[('mobilenet', 'imagenet')] == marks[('resnet50_v2', 'imagenet')] == 'differs'
    assert marks[('resnet20', 'cifar10')] == 'differs'
    assert marks[('trivial', 'imagenet')] == 'differs'


@pytest.mark.cli
@pytest.mark.parametrize('args', [['--help'], ['--list_models'], ['--version']])
def test_a_closed_pipe_ends_the_command_quietly(args):
    """`tf_cnn_benchmarks --help | head -1`: the reader went away; exit 141, no traceback."""
    # The reader is closed before the command starts (it was closed just after: a test
    # process descheduled there let --version's line reach the pipe first, exit 0).
    env = {k: v for k, v in os.environ.items() if k != 'TF_CPP_MIN_LOG_LEVEL'}
    proc = _closed_reader_run([sys.executable, os.path.join(REPO, 'tf_cnn_benchmarks.py'),
                               *args], env=env)
    assert (proc.returncode, proc.stderr) == (141, '')


_CLOSED_READER = textwrap.dedent('''
    import sys
    sys.path.insert(0, {tests!r})
    import checkout
    checkout.load()
    from tf_cnn_benchmarks import console
    sys.argv = [{command!r}] + {args!r}
    console.{command}()
''')


def _closed_reader_run(argv: list[str], env=None) -> subprocess.CompletedProcess:
    """Runs argv with a stdout whose reader closed before the command wrote anything (what
    `| head -1` is once head has its line); stderr is captured."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(argv, stdout=write_end, stderr=subprocess.PIPE, text=True,
                              timeout=120, cwd=REPO, env=env)
    finally:
        os.close(write_end)


#: The tools' console commands and their `python -m` forms in a checkout.
_TOOL_MODULES = {'tf_cnn_build_tfrecords': 'tools.build_imagenet_tfrecords',
                 'tf_cnn_cluster': 'tools.launch_cluster', 'tf_cnn_sweep': 'tools.sweep',
                 'tf_cnn_results': 'tools.results_cli'}


def test_console_commands_are_the_ones_checked_with_a_closed_reader():
    # Each console command of setup.py: its console form and, for the tools, the `python -m` form.
    assert _console_commands() == ['tf_cnn_benchmarks', *_TOOL_MODULES]


@pytest.mark.cli
@pytest.mark.parametrize('command, args', [
    *[(command, ['--help']) for command in ['tf_cnn_benchmarks', *_TOOL_MODULES]],
    ('tf_cnn_results', ['list', '--help']), ('tf_cnn_sweep', ['compare', '--help']),
    ('tf_cnn_sweep', ['report', '--help'])])
def test_every_console_command_ends_quietly_with_141_when_its_reader_closed(command, args):
    # Before: tf_cnn_sweep and tf_cnn_build_tfrecords printed a BrokenPipeError traceback (exit
    # 1); tf_cnn_results and tf_cnn_cluster exited 0 (argparse drops the help's write error).
    proc = _closed_reader_run([sys.executable, '-c', _CLOSED_READER.format(
        tests=TESTS, command=command, args=args)])
    assert (proc.returncode, proc.stderr) == (141, '')


@pytest.mark.cli
@pytest.mark.parametrize('module', sorted(_TOOL_MODULES.values()))
def test_every_tools_python_m_form_ends_quietly_with_141_when_its_reader_closed(module):
    # `python -m tools.sweep --help | head -1` in a checkout: the tools' own run_main.
    proc = _closed_reader_run([sys.executable, '-m', module, '--help'])
    assert (proc.returncode, proc.stderr) == (141, '')


def test_nchw_on_the_cpu_warns_once(capsys):
    helpers.tiny_run(num_batches=1, data_format='NCHW', num_gpus=2, device='cpu')
    err = capsys.readouterr().err
    # The figure is named as resnet50's (before: 'and resnet50 trained 30% slower', read as
    # this model's slowdown in a trivial run).
    assert err.count('warning: --data_format=NCHW on the CPU: oneDNN converts the layout around '
                     'its ops, which slows training (resnet50\'s figure, the one model measured: '
                     '5.2 against 7.45 images/sec in NHWC at batch 16, 30% slower, '
                     'docs/performance-notes.md); '
                     'NHWC is the CPU default (drop --data_format)\n') == 1
    assert 'warning' not in err.replace('warning: --data_format=NCHW', '')


def test_an_eval_with_num_eval_batches_warns_that_num_batches_has_no_effect(imagenet_dir,
                                                                          tmp_path, capsys):
    helpers.tiny_run(data_dir=imagenet_dir, train_dir=str(tmp_path), num_batches=1)
    capsys.readouterr()
    helpers.tiny_run(data_dir=imagenet_dir, train_dir=str(tmp_path), eval=True, num_batches=7,
                     num_eval_batches=1, distort_color=True)
    err = capsys.readouterr().err
    assert err.splitlines() == [
        'warning: --distort_color has no effect with --eval (its images get the central crop '
        'of evaluation: no random crop, flip or colour change)',
        "warning: --num_batches has no effect with --eval and --num_eval_batches (an "
        "evaluation's length is --num_eval_batches, else --num_eval_epochs, else --num_batches "
        "or --num_epochs, as in the original)"]


@pytest.mark.parametrize('name, meant', [
    ('learning_rate', 'init_learning_rate'),  # absl's edit distance: learning_rate_decay_factor
    ('lr', 'init_learning_rate'),
    ('epochs', 'num_epochs'),
    ('batch', 'batch_size'),  # absl: batch_group_size, batch_size, batchnorm_persistent
    ('num_batch', 'num_batches'),  # a prefix of one flag
    ('num_warmup', 'num_warmup_batches'),
    ('result_file', 'benchmark_log_dir'),  # absl: plot_file, resnet_base_lr, results_db
    ('results_file', 'benchmark_log_dir'),  # the results JSON's key; absl: results_db
    ('result_dir', 'benchmark_log_dir'),
    # Words that abbreviate a flag's words: absl's prefix distance gave fuse_decode_and_crop.
    ('fuse_decay', 'fused_weight_decay'),
    ('eval_every_n_steps', 'eval_during_training_every_n_steps'),
    ('batch_szie', None),  # a typo, not an abbreviation: absl's suggestion (batch_size)
    ('bogus', None),
])
def test_an_unknown_flag_suggests_the_flag_it_most_likely_meant(name, meant):
    from tf_cnn_benchmarks import flag_parsing, params
    assert flag_parsing.suggest_flag(name, [s.name for s in params.SPECS]) == meant


def test_an_unknown_flag_is_one_line_naming_the_renamed_flag():
    proc = helpers.run_command('--learning_rate=1')
    assert (proc.returncode, proc.stdout) == (2, '')
    assert proc.stderr == ("error: Unknown command line flag 'learning_rate'. Did you mean: "
                           'init_learning_rate ? (see --help)\n')


# Ctrl-C while the command imports: the SIGINT is sent by the process itself from inside its
# first import of `module` (a patched __import__), so it lands there on every host, however
# fast or loaded.
_INTERRUPTED_IMPORT = textwrap.dedent('''
    import builtins, os, signal, sys
    sys.path.insert(0, {tests!r})
    import checkout
    checkout.load()
    from tf_cnn_benchmarks import console
    # Python's own Ctrl-C handler, even where this process was started with SIGINT ignored
    # (a background job of a non-interactive shell: `.ci/run &`).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    real_import = builtins.__import__
    def interrupting_import(name, *args, **kwargs):
        if name == {module!r}:
            builtins.__import__ = real_import
            os.kill(os.getpid(), signal.SIGINT)
        return real_import(name, *args, **kwargs)
    builtins.__import__ = interrupting_import
    sys.argv = ['tf_cnn_benchmarks'] + {args!r}
    console.{command}()
    print('not interrupted')
''')


@pytest.mark.parametrize('command, module, args', [
    ('tf_cnn_benchmarks', 'absl', ['--help']),
    ('tf_cnn_benchmarks', 'numpy', ['--model=trivial']),
    ('tf_cnn_sweep', 'absl', ['--help']),
])
def test_ctrl_c_while_the_command_imports_ends_quietly_with_status_130(command, module, args):
    # Before: a KeyboardInterrupt traceback (the console scripts imported the command first).
    proc = subprocess.run(
        [sys.executable, '-c', _INTERRUPTED_IMPORT.format(tests=TESTS, module=module, args=args,
                                                           command=command)],
        capture_output=True, text=True, timeout=120, cwd=REPO)
    # Ended by SIGINT after its line (a shell reports 130 and stops its loop): -2 here.
    assert (proc.returncode, proc.stdout, proc.stderr) == (-signal.SIGINT, '',
                                                           'error: interrupted\n')


_CONSOLE_COMMAND = textwrap.dedent('''
    import sys
    sys.path.insert(0, {tests!r})
    import checkout
    checkout.load()
    from tf_cnn_benchmarks import console
    sys.argv = [{command!r}] + {args!r}
    try:
        console.{command}()
    except SystemExit as e:
        sys.stdout.flush()
        print('STATUS', e.code, sorted(m for m in sys.modules if m.startswith(
            ('tf_cnn_benchmarks.', 'absl', 'numpy', 'tensorflow'))))
''')


def _console_commands() -> list[str]:
    """The console scripts setup.py installs (each a function of console.py)."""
    with open(os.path.join(REPO, 'setup.py'), encoding='utf-8') as f:
        return re.findall(r"'(tf_cnn_\w+) = tf_cnn_benchmarks\.console:\1'", f.read())


def test_every_console_command_is_checked_for_its_version():
    assert _console_commands() == ['tf_cnn_benchmarks', 'tf_cnn_build_tfrecords',
                                   'tf_cnn_cluster', 'tf_cnn_sweep', 'tf_cnn_results']


@pytest.mark.cli
@pytest.mark.parametrize('command', _console_commands())
def test_every_console_command_answers_version_before_it_imports(command):
    # Before: only tf_cnn_benchmarks knew --version; tf_cnn_sweep said "error: the flags for
    # every run: Unknown command line flag 'version'" and the other three refused it too.
    proc = subprocess.run(
        [sys.executable, '-c', _CONSOLE_COMMAND.format(tests=TESTS, command=command,
                                                        args=['--version'])],
        capture_output=True, text=True, timeout=120, cwd=REPO)
    assert proc.stderr == ''
    # The version comes from package_info.py, which imports nothing.
    assert proc.stdout == 'tf_cnn_benchmarks %s (TensorFlow %s)\nSTATUS 0 %s\n' % (
        __version__, importlib.metadata.version('tensorflow'),
        sorted(CONSOLE_MODULES + ['tf_cnn_benchmarks.package_info']))


def _tool_main(command: str):
    """The main of a command's `python -m` form, called with the program name and args."""
    from tf_cnn_benchmarks.tools import build_imagenet_tfrecords, launch_cluster, results_cli
    from tf_cnn_benchmarks.tools import sweep as sweep_command
    mains = {'tf_cnn_build_tfrecords': build_imagenet_tfrecords.main,
             'tf_cnn_cluster': lambda argv: launch_cluster.main(argv[1:]),
             'tf_cnn_sweep': sweep_command.main, 'tf_cnn_results': results_cli.main}

    def main(argv):
        try:
            return mains[command](argv)
        except SystemExit as e:  # argparse's --help
            return e.code
    return main


@pytest.mark.parametrize('command', ['tf_cnn_build_tfrecords', 'tf_cnn_cluster', 'tf_cnn_sweep',
                                     'tf_cnn_results'])
def test_each_commands_main_answers_version_as_the_console_command_does(command, capsys):
    from tf_cnn_benchmarks import console
    main = _tool_main(command)
    assert main([command, '--version']) == 0
    assert capsys.readouterr() == (console.version_line() + '\n', '')
    assert main([command, '--help', '--version']) == 0  # help wins, as for tf_cnn_benchmarks
    out = capsys.readouterr().out
    assert console.version_line() not in out
    assert '  --version' in out and console.VERSION_HELP in ' '.join(out.split())


@pytest.mark.parametrize('args, answered', [
    (['--version'], True), (['compare', '--version'], True),
    (['--num_workers=2', '--version'], True),
    (['--', '--version'], False), (['--num_workers=2', '--', '--version'], False),
    (['--version', '--help'], False), (['-h', '--version'], False), (['--versions'], False),
])
def test_version_is_answered_before_dash_dash_and_not_with_help(args, answered, capsys):
    from tf_cnn_benchmarks import console
    assert console.answer_version(args) == (0 if answered else None)
    assert capsys.readouterr().out == (console.version_line() + '\n' if answered else '')


#: The package's modules a console command has loaded before it imports its own: console.py
#: and the guard of stdout and stderr it installs (runtime/output_streams.py), both of the
#: standard library only.
CONSOLE_MODULES = ['tf_cnn_benchmarks.console', 'tf_cnn_benchmarks.runtime',
                   'tf_cnn_benchmarks.runtime.output_streams']


def test_importing_the_package_loads_none_of_its_modules():
    # The console scripts' Ctrl-C handler is installed only after the package's __init__ ran.
    proc = subprocess.run([sys.executable, '-c', textwrap.dedent('''
        import sys
        sys.path.insert(0, {tests!r})
        import checkout
        checkout.load()
        import tf_cnn_benchmarks.console
        print(sorted(m for m in sys.modules if m.startswith(('tf_cnn_benchmarks.', 'absl',
                                                              'numpy'))))
        from tf_cnn_benchmarks import ParamsError, params
        print(ParamsError is params.ParamsError)
    ''').format(tests=TESTS)], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert proc.stdout.splitlines() == [str(CONSOLE_MODULES), 'True'], proc.stderr


@pytest.mark.cli
@pytest.mark.parametrize('module', ['tf_cnn_benchmarks', 'tf_cnn_benchmarks.tf_cnn_benchmarks',
                                    'tf_cnn_benchmarks.cli'])
def test_every_python_m_form_of_the_command_runs_it(module, tmp_path):
    # `python -m tf_cnn_benchmarks.tf_cnn_benchmarks --nosuchflag` imported the command and
    # exited 0 without running it (a user's script "passed" having run nothing).
    proc = subprocess.run([sys.executable, '-m', module, '--model=nosuchmodel'],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: unknown --model='nosuchmodel'; "), proc.stderr


def test_a_top_1_accuracy_above_1_is_one_error_line_before_tensorflow_loads():
    proc = helpers.run_command('--model=trivial', '--eval_during_training_every_n_steps=1',
                               '--stop_at_top_1_accuracy=1.5')
    assert proc.returncode == 2
    assert proc.stderr.startswith('error: --stop_at_top_1_accuracy must be at most 1')
    assert len(proc.stderr.splitlines()) == 1 and 'Loading TensorFlow' not in proc.stdout


#: `python -m tf_cnn_benchmarks ARGS` as an editable install runs it (pip install -e .):
#: setuptools' finder of the checkout asked after Python's own path finder, the working folder
#: first on sys.path (`-c` puts it there as `-m` does).
_EDITABLE_M = textwrap.dedent('''
    import importlib.machinery, importlib.util, runpy, sys
    REPO = {repo!r}

    class Editable:
        @classmethod
        def find_spec(cls, name, path=None, target=None):
            if name == 'tf_cnn_benchmarks':
                return importlib.util.spec_from_file_location(
                    name, REPO + '/__init__.py', submodule_search_locations=[REPO])
            if name.rpartition('.')[0] == 'tf_cnn_benchmarks':
                return importlib.machinery.PathFinder.find_spec(name, [REPO])
            return None

    sys.meta_path.insert(sys.meta_path.index(importlib.machinery.PathFinder) + 1, Editable)
    sys.argv = ['tf_cnn_benchmarks'] + {args!r}
    runpy._run_module_as_main({module!r})
''')


@pytest.mark.cli
@pytest.mark.parametrize('module', ['tf_cnn_benchmarks', 'tf_cnn_benchmarks.tf_cnn_benchmarks'])
def test_python_m_version_beside_a_folder_named_like_the_package(tmp_path, module):
    """A user's trial: `python -m tf_cnn_benchmarks --version` in a folder holding a folder
    named tf_cnn_benchmarks (a --train_dir of that name) ended in `ImportError: cannot import
    name '__version__' from 'tf_cnn_benchmarks' (unknown location)`, exit 1, while runs worked:
    that folder was the package (a namespace package), only the modules came from the install."""
    (tmp_path / 'tf_cnn_benchmarks' / 'eval').mkdir(parents=True)

    def run(*args):
        script = _EDITABLE_M.format(repo=REPO, args=list(args), module=module)
        return subprocess.run([sys.executable, '-c', script], capture_output=True, text=True,
                              timeout=120, cwd=tmp_path)

    version = run('--version')
    assert (version.returncode, version.stderr) == (0, ''), version.stderr[-2000:]
    assert version.stdout.startswith('tf_cnn_benchmarks %s (TensorFlow ' % __version__)
    usage = run('--model=nosuchmodel')  # a run's answer, as before
    assert usage.returncode == 2 and usage.stderr.startswith("error: unknown --model="), (
        usage.stderr[-2000:])
