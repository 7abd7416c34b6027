"""The command line in a subprocess: output format, exit statuses, one-line errors. The
errors of a run (after TensorFlow loads) and the flagfile's run are checked on the command's
main in process (helpers.run_command: its output lines and exit status)."""

import os
import re
import subprocess
import sys

import pytest

import helpers

pytestmark = pytest.mark.cli

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEP_LINE = re.compile(r'^(\d+)\timages/sec: ([\d.]+) \+/- ([\d.]+) \(jitter = ([\d.]+)\)\t'
                       r'([\d.]+)$')


def run_cli(*args, timeout=240):
    """Runs `python tf_cnn_benchmarks.py ARGS` from the checkout; returns the CompletedProcess."""
    env = dict(os.environ)
    env.pop('TF_CPP_MIN_LOG_LEVEL', None)  # the command must quiet TensorFlow by itself
    return subprocess.run([sys.executable, os.path.join(REPO, 'tf_cnn_benchmarks.py'), *args],
                          capture_output=True, text=True, timeout=timeout, env=env, cwd=REPO)


def test_training_run_prints_the_documented_format():
    proc = run_cli('--model=trivial', '--batch_size=4', '--image_size=32', '--num_batches=12',
                   '--display_every=5', '--num_warmup_batches=2', '--device=cpu')
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ''  # no TensorFlow start-up chatter, no warnings
    lines = proc.stdout.splitlines()
    header = dict(line.split(':', 1) for line in lines[:lines.index('==========')]
                  if ':' in line and not line.startswith(' '))
    assert header['Model'].strip() == 'trivial'
    assert header['Mode'].strip() == 'training'
    assert header['Batch size'].strip() == '4 global'
    assert '             4 per device' in lines
    assert header['Devices'].strip().startswith("['/cpu:0']")
    assert header['Data format'].strip() == 'NHWC'
    assert header['Num batches'].strip() == '12'
    assert 'Step\tImg/sec\ttotal_loss' in lines
    steps = [STEP_LINE.match(line) for line in lines if STEP_LINE.match(line)]
    assert [int(m.group(1)) for m in steps] == [1, 5, 10]
    assert all(float(m.group(5)) > 0 for m in steps)
    total = [line for line in lines if line.startswith('total images/sec: ')]
    assert len(total) == 1 and float(total[0].split(': ')[1]) > 0
    # The total block: the total line as the original prints it, then the figures behind it.
    at = lines.index(total[0])
    assert lines[-2] == '-' * 64 and lines[at - 1] == '-' * 64
    assert [line.split(':')[0] for line in lines[at + 1:-2]] == [
        'compute images/sec', 'model FLOP/s', 'utilisation', 'peak memory', 'Host load']
    # After the block: the id the run was recorded under in the (default) results database.
    assert re.match(r'^Recorded as run \d+ in \S+/results\.sqlite \(tf_cnn_results show \d+\)$',
                    lines[-1]), lines[-1]


@pytest.mark.parametrize('args, status, text', [
    (['--model=resnet9000'], 2, "unknown --model='resnet9000'; did you mean resnet50, resnet101 "
     'or resnet50_v2? valid models for'),
    (['--batch_size=-1'], 2, '--batch_size must be >= 0 (0: the model default). Received: '
                             'batch_size=-1'),
    (['--num_batches=5', '--num_epochs=1'], 2, '--num_batches and --num_epochs exclude'),
    (['--eval', '--num_eval_batches=3', '--num_eval_epochs=2'], 2,
     '--num_eval_batches and --num_eval_epochs exclude'),
    (['--num_gpus=0'], 2, '--num_gpus must be >= 1'),
    (['--optimizer=lbfgs'], 2, '--optimizer must be one of'),
    (['--data_format=NWHC'], 2, '--data_format must be one of'),
    (['--bogus_flag=1'], 2, "Unknown command line flag 'bogus_flag'"),
    (['--batch_size=abc'], 2, 'error: --batch_size=abc: takes an integer (see --help)'),
    (['--weight_decay=1e-4x'], 2, 'error: --weight_decay=1e-4x: takes a number (see --help)'),
    (['--flagfile=/no/such/flagfile'], 2, 'error: --flagfile=/no/such/flagfile cannot be read: '
                                          'No such file or directory; give the path of'),
    (['--model=trivial', '--train_dir=/dev/null/ckpt'], 2,
     'error: --train_dir=/dev/null/ckpt cannot be written: /dev/null is a file, not a directory.'),
    (['--distortions', 'False'], 2, "unexpected positional argument 'False'"),
    (['--nodistortions=true'], 2, 'error: --nodistortions=true: --nodistortions takes no value; '
                                  'write --nodistortions or --distortions=false'),
    (['--batch_size=99999999999999999999999'], 2, 'error: --batch_size must fit in 64 bits.'),
    (['--distortions=maybe'], 2, 'error: --distortions=maybe: a boolean flag takes true or '
                                 'false (also --distortions, --nodistortions) (see --help)'),
    (['--gradient_clip=0'], 2, 'error: --gradient_clip must be > 0: it clips every gradient'),
    (['--eval_during_training_every_n_steps=3', '--eval_during_training_every_n_epochs=1'], 2,
     'error: --eval_during_training_every_n_steps and --eval_during_training_every_n_epochs '
     'exclude each other'),
])
def test_errors_are_one_line_with_exit_status(args, status, text):
    _assert_one_error_line(run_cli(*args), status, text)


@pytest.mark.parametrize('args, status, text', [
    (['--device=gpu'], 2, '--device=gpu, but no GPU is visible; use --device=cpu'),
    (['--model=trivial', '--image_size=16', '--batch_size=2', '--num_batches=20',
      '--num_warmup_batches=0', '--init_learning_rate=1e9'], 1, 'the loss became'),
    (['--model=trivial', '--image_size=16', '--batch_size=2', '--num_batches=20',
      '--num_warmup_batches=0', '--weight_decay=1e8'], 1,
     'The weight-decay term dominates the loss ('),
    # Larger than Grappler's 16 TiB virtual device: TensorFlow's allocation error before.
    (['--model=trivial', '--batch_size=100000000', '--num_batches=1'], 1,
     'error: not enough memory for this run: the estimated peak is '),
])
def test_errors_after_tensorflow_loads_are_one_line_with_exit_status(args, status, text):
    _assert_one_error_line(helpers.run_command(*args), status, text)


def test_an_absurd_learning_rate_is_the_first_flag_the_nan_advice_names():
    """A user's finding: this run's advice named only --weight_decay (at its default)."""
    proc = helpers.run_command('--model=lenet', '--batch_size=2', '--num_batches=2',
                               '--init_learning_rate=1e30', '--noresults_db')
    _assert_one_error_line(proc, 1, 'the loss became')
    line = next(x for x in proc.stderr.splitlines() if x.startswith('error: '))
    advice = re.split(r'(?:no images/sec are reported|as a partial run)\. ', line, maxsplit=1)[1]
    assert advice[advice.index('--'):].startswith('--init_learning_rate'), line


def test_save_model_steps_with_save_model_secs_is_refused_before_tensorflow_loads(tmp_path):
    # A user's trial: the pair was accepted (the original refuses it: 'At most one of
    # --save_model_secs and --save_model_steps can be specified').
    train_dir = tmp_path / 'x'
    proc = run_cli('--model=trivial', '--batch_size=2', '--num_batches=2',
                   '--train_dir=%s' % train_dir, '--save_model_steps=1', '--save_model_secs=5')
    _assert_one_error_line(proc, 2, 'error: --save_model_steps and --save_model_secs exclude '
                                    'each other; give one')
    assert 'Loading TensorFlow' not in proc.stdout and not train_dir.exists()


def _assert_one_error_line(proc, status, text):
    assert proc.returncode == status, proc.stderr
    assert 'Traceback' not in proc.stderr
    error_lines = [line for line in proc.stderr.splitlines() if line.startswith('error: ')]
    assert len(error_lines) == 1 and text in error_lines[0], proc.stderr
    # No total block for a failed run; a NaN loss's stop keeps that of the steps before it,
    # and says so after it (tests/test_nan_stop_reports.py).
    if 'total images/sec' in proc.stdout:
        assert error_lines[0].startswith('error: the loss became ')
        assert re.search(r'^Stopped by the non-finite loss \(\S+\) at step \d+ after \d+ timed '
                         r'steps?$', proc.stdout, re.M), proc.stdout


def test_help_lists_every_flag_and_exits_0():
    from tf_cnn_benchmarks import params
    proc = run_cli('--help')
    assert proc.returncode == 0
    for spec in params.SPECS:
        name = ('--[no]%s:' if spec.kind in ('boolean', 'path_or_off') else '--%s:') % spec.name
        assert name in proc.stdout
    # Where the manual that messages name is: the package's own docs/ (a wheel ships it).
    manual = [line for line in proc.stdout.splitlines() if line.startswith('Manual: ')]
    assert len(manual) == 1 and manual[0].startswith(
        'Manual: the docs/*.md files that messages name are in ')
    folder = manual[0].rsplit(' ', 1)[1]
    assert os.path.isfile(os.path.join(folder, 'real-data.md'))


def test_a_flagfile_that_is_not_utf8_is_one_error_line(tmp_path):
    flagfile = tmp_path / 'flags.txt'
    flagfile.write_bytes('--model=trivial\n'.encode('utf-16'))  # a BOM, then UTF-16
    proc = run_cli('--flagfile=%s' % flagfile)
    assert proc.returncode == 2 and 'Traceback' not in proc.stderr
    assert proc.stderr.strip() == ('error: --flagfile=%s is UTF-16 text (it starts with a UTF-16 '
                                   'byte-order mark: Notepad\'s "Unicode"); save it as UTF-8'
                                   % flagfile)


def test_flagfile(tmp_path):
    flagfile = tmp_path / 'flags.txt'
    flagfile.write_text('--model=trivial\n--batch_size=2\n--image_size=16\n--num_batches=2\n'
                        '--num_warmup_batches=0\n')
    proc = helpers.run_command('--flagfile=%s' % flagfile)
    assert proc.returncode == 0, proc.stderr
    assert 'Batch size:  2 global' in proc.stdout and 'total images/sec: ' in proc.stdout
