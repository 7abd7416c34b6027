"""The lifecycle from the command line: signals, SIGKILL and resume, the eval loop
(subprocesses under timeouts), the NaN guard and eval errors (the command's main in process),
and the ineffective-flag warnings."""

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from tf_cnn_benchmarks import benchmark_cnn
from tf_cnn_benchmarks.lifecycle import checkpoints
from tf_cnn_benchmarks.params import make_params
from tf_cnn_benchmarks.preflight import ineffective_flags

import helpers

pytestmark = pytest.mark.cli

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TINY = ['--model=trivial', '--batch_size=4', '--image_size=16', '--num_warmup_batches=1',
        '--init_learning_rate=0.002']
WAIT_SECS = 180


class Cli:
    """`python tf_cnn_benchmarks.py ARGS` in the repo root, output in files under `folder`;
    `command` replaces `python tf_cnn_benchmarks.py`."""

    def __init__(self, folder, name, args, command=None):
        self.out_path = os.path.join(folder, name + '.out')
        self.err_path = os.path.join(folder, name + '.err')
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL='3', PYTHONUNBUFFERED='1')
        with open(self.out_path, 'w') as out, open(self.err_path, 'w') as err:
            self.proc = subprocess.Popen((command or [sys.executable, 'tf_cnn_benchmarks.py'])
                                         + args,
                                         cwd=REPO, env=env, stdout=out, stderr=err,
                                         stdin=subprocess.DEVNULL)

    @property
    def out(self):
        with open(self.out_path) as f:
            return f.read()

    @property
    def err(self):
        with open(self.err_path) as f:
            return f.read()

    def wait_for(self, predicate, what):
        deadline = time.monotonic() + WAIT_SECS
        while time.monotonic() < deadline:
            if predicate():
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        self.kill()
        pytest.fail('%s did not happen (exit %s)\nstdout:\n%s\nstderr:\n%s'
                    % (what, self.proc.returncode, self.out[-3000:], self.err[-3000:]))

    def signal_when(self, predicate, what, signum=signal.SIGINT) -> int:
        """Waits until `predicate()` (`what` names it on a failure), sends `signum`, and returns
        the exit status; the process is killed if anything fails."""
        try:
            self.wait_for(predicate, what)
            self.proc.send_signal(signum)
            return self.wait()
        finally:
            self.kill()

    def wait(self):
        try:
            return self.proc.wait(WAIT_SECS)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail('timed out\nstdout:\n%s\nstderr:\n%s' % (self.out[-3000:],
                                                                 self.err[-3000:]))

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def _timed_steps(text):
    """Numbers of the step lines printed so far."""
    return [int(line.split('\t')[0]) for line in text.splitlines()
            if line[:1].isdigit() and '\timages/sec:' in line]


def _checkpoint_step(train_dir):
    path = checkpoints.latest_checkpoint(train_dir)
    return int(path.rsplit('-', 1)[1]) if path else 0


@pytest.mark.timeout(600)
def test_sigint_sigterm_save_and_sigkill_resumes_from_a_complete_checkpoint(tmp_path):
    dirs = {name: str(tmp_path / name) for name in ('int', 'term', 'kill')}
    common = TINY + ['--num_batches=100000', '--display_every=1']
    runs = {
        'int': Cli(str(tmp_path), 'int', common + ['--train_dir=' + dirs['int']]),
        'term': Cli(str(tmp_path), 'term', common + ['--train_dir=' + dirs['term']]),
        # A checkpoint after every step: most of the time is spent saving, so the kill most
        # likely lands inside a save.
        'kill': Cli(str(tmp_path), 'kill', common + ['--train_dir=' + dirs['kill'],
                                                     '--save_model_steps=1',
                                                     '--max_ckpts_to_keep=2']),
    }
    try:
        for name in ('int', 'term'):
            runs[name].wait_for(lambda r=runs[name]: len(_timed_steps(r.out)) >= 3,
                                name + ' run reaching timed step 3')
        runs['int'].proc.send_signal(signal.SIGINT)
        runs['term'].proc.send_signal(signal.SIGTERM)
        runs['kill'].wait_for(lambda: _checkpoint_step(dirs['kill']) >= 6,
                              'the checkpoint of global step 6')
        runs['kill'].proc.send_signal(signal.SIGKILL)
        assert runs['kill'].wait() == -signal.SIGKILL
        for name, status in (('int', -signal.SIGINT), ('term', 143)):
            run = runs[name]
            assert run.wait() == status, run.err
            signal_name = 'SIG' + name.upper()
            steps = _timed_steps(run.out)
            assert 'received %s: stopping after the current step' % signal_name in run.err
            assert 'total images/sec: ' in run.out
            assert 'Stopped by %s after %d timed steps' % (signal_name, steps[-1]) in run.out
            # The final checkpoint holds every step run: 1 warm-up + the timed steps.
            assert _checkpoint_step(dirs[name]) == 1 + steps[-1]
    finally:
        for run in runs.values():
            run.kill()
    # Resume after SIGKILL: from the newest checkpoint the state file names, complete on disk.
    latest = checkpoints.latest_checkpoint(dirs['kill'])
    assert os.path.exists(latest + '.index')
    assert os.path.exists(latest + '.data-00000-of-00001')
    killed_at = _checkpoint_step(dirs['kill'])
    params = dict(model='trivial', batch_size=4, image_size=16, num_batches=2,
                  num_warmup_batches=0, init_learning_rate=0.002, display_every=100)
    resumed = benchmark_cnn.BenchmarkCNN(make_params(train_dir=dirs['kill'], **params),
                                         gpus=0).run()
    assert resumed['restored_step'] == killed_at
    assert resumed['global_step'] == killed_at + 2
    fresh = benchmark_cnn.BenchmarkCNN(make_params(**params), gpus=0).run()
    assert resumed['losses'][0] < fresh['losses'][0] - 0.1  # trained weights, not a new start


@pytest.mark.timeout(600)
def test_a_signal_in_the_warm_up_stops_after_the_current_warm_up_step(tmp_path):
    """Ctrl-C in the warm-up said 'stopping after the current step', then finished the warm-up,
    printed the timed part's estimate and ran a timed step (issue 41.11). SIGINT exits 130 and
    SIGTERM 143, as after timed steps; the checkpoint holds the warm-up steps run; nothing is
    timed, so no images/sec and no row in the results database, nor from an ingest of its JSON."""
    import glob
    import json
    runs = {name: Cli(str(tmp_path), name, [
        '--model=trivial', '--batch_size=2', '--image_size=16', '--num_warmup_batches=100000',
        '--num_batches=10', '--train_dir=%s' % (tmp_path / name),
        '--results_db=%s' % (tmp_path / 'results.sqlite'),
        '--benchmark_log_dir=%s' % (tmp_path / ('log_' + name))]) for name in ('int', 'term')}
    try:
        for name, run in runs.items():
            run.wait_for(lambda r=run: 'Running warm up' in r.out, name + ' in the warm-up')
        runs['int'].proc.send_signal(signal.SIGINT)
        runs['term'].proc.send_signal(signal.SIGTERM)
        for name, status in (('int', -signal.SIGINT), ('term', 143)):
            run = runs[name]
            assert run.wait() == status, run.err
            signal_name = 'SIG' + name.upper()
            assert 'received %s: stopping after the current step' % signal_name in run.err
            lines = run.out.splitlines()
            stopped = [x for x in lines if x.startswith('Stopped in the warm-up after ')]
            assert len(stopped) == 1 and stopped[0].endswith(
                ' of 100000 warm-up steps: nothing was timed'), run.out
            warmup_steps = int(stopped[0].split()[5])
            for absent in ('Done warm up', 'Timed part:', 'Step\tImg/sec', 'total images/sec'):
                assert absent not in run.out, absent
            assert ('Stopped by %s in the warm-up: no images/sec (nothing timed; not recorded '
                    'in the results database)' % signal_name) in lines
            assert _checkpoint_step(str(tmp_path / name)) == warmup_steps
            result = json.load(open(glob.glob(str(tmp_path / ('log_' + name) / '*.json'))[0]))
            assert (result['stopped_in_warmup'], result['images_per_sec'], result['num_steps'],
                    result['stopped_by_signal']) == (True, None, 0, signal_name)
            assert len(result['warmup_losses']) == warmup_steps
    finally:
        for run in runs.values():
            run.kill()
    assert not os.path.exists(tmp_path / 'results.sqlite')
    # Their JSONs ingest as the runs recorded them: nothing, each named, exit status 0.
    from tf_cnn_benchmarks.history import ingest
    summary = ingest.ingest(str(tmp_path / 'results.sqlite'),
                            [str(tmp_path / 'log_int'), str(tmp_path / 'log_term')])
    assert (summary.added, summary.problems) == (0, [])
    assert [line.split(': ', 1)[1] for line in summary.left_out] == [
        'stopped by %s in the warm-up, before its first timed step (no images/sec; a run does '
        'not record such a run either)' % name for name in ('SIGINT', 'SIGTERM')]


# The command with each step of the loop announced on stdout and made 3 s longer: a signal sent
# when a step begins arrives during that step, whatever the host's speed.
_SLOW_STEPS = """
import sys, time
sys.path.insert(0, %r)
import checkout
checkout.load()
from tf_cnn_benchmarks import cli
from tf_cnn_benchmarks.lifecycle import timed_run
run_step, begun = timed_run.Step.__call__, []
def slow_step(self):
    begun.append(1)
    print('step %%d begins' %% len(begun), flush=True)
    time.sleep(3)
    return run_step(self)
timed_run.Step.__call__ = slow_step
sys.exit(cli.main(['tf_cnn_benchmarks'] + sys.argv[1:]))
""" % os.path.join(REPO, 'tests')


@pytest.mark.timeout(300)
def test_ctrl_c_in_the_first_of_three_warm_up_steps_stops_after_it(tmp_path):
    """--num_warmup_batches=3 and Ctrl-C in the first warm-up step: the run finished the
    warm-up, printed the timed part's estimate and ran a timed step (issue 41.11); now it stops
    after that step, exit status 130 (a Ctrl-C'd run: 0 before)."""
    run = Cli(str(tmp_path), 'int', [
        '--model=trivial', '--batch_size=2', '--image_size=16', '--num_warmup_batches=3',
        '--num_batches=5', '--noresults_db', '--train_dir=%s' % (tmp_path / 'train')],
        command=[sys.executable, '-c', _SLOW_STEPS])
    assert run.signal_when(lambda: 'step 1 begins' in run.out, 'the first warm-up step') == 130, \
        run.err
    lines = run.out.splitlines()
    assert [x for x in lines if x.startswith(('step ', 'Stopped'))] == [
        'step 1 begins', 'Stopped in the warm-up after 1 of 3 warm-up steps: nothing was timed',
        'Stopped by SIGINT in the warm-up: no images/sec (nothing timed; not recorded in the '
        'results database)']
    for absent in ('Done warm up', 'Timed part:', 'total images/sec'):
        assert absent not in run.out, absent
    assert 'received SIGINT: stopping after the current step' in run.err
    assert _checkpoint_step(str(tmp_path / 'train')) == 1


def test_a_nan_from_a_piecewise_schedule_names_that_flag():
    nan = helpers.run_command('--model=trivial', '--batch_size=4', '--image_size=16',
                              '--num_warmup_batches=0', '--num_batches=30',
                              '--piecewise_learning_rate_schedule=1e6;100;1')
    assert nan.returncode == 1, nan.stderr
    [line] = [x for x in nan.stderr.splitlines() if x.startswith('error:')]
    assert re.fullmatch(r'error: the loss became (nan|inf|-inf) at step \d+ \(learning rate '
                        r'1e\+06\); the run is invalid and only the timed steps before it are '
                        r'reported, as a partial run\. Lower '
                        r'the rates of --piecewise_learning_rate_schedule\.', line), line


def test_nan_guard_and_eval_without_checkpoint_exit_1(tmp_path):
    # Their output and exit status only: the command's main in process (helpers.run_command).
    nan_dir = str(tmp_path / 'nan')
    nan = helpers.run_command(*TINY[:-1], '--init_learning_rate=1e6', '--num_batches=30',
                              '--train_dir=' + nan_dir,
                              '--benchmark_log_dir=' + str(tmp_path / 'bl'))
    no_ckpt = helpers.run_command('--model=trivial', '--eval',
                                  '--train_dir=' + str(tmp_path / 'empty'))
    assert nan.returncode == 1, nan.stderr
    assert no_ckpt.returncode == 1, no_ckpt.stderr
    assert 'error: the loss became' in nan.stderr and 'Lower --init_learning_rate' in nan.stderr
    assert 'learning rate 1e+06' in nan.stderr
    # The steps before the NaN one are kept, as a failed save's stop keeps them
    # (tests/test_nan_stop_reports.py): the JSON names the loss and the step the line names.
    where = re.search(r'error: the loss became (\S+) at ((?:warm-up )?step (\d+))', nan.stderr)
    saved = json.loads((next((tmp_path / 'bl').iterdir())).read_text(),
                       parse_constant=lambda token: pytest.fail('non-strict JSON: ' + token))
    assert saved['stopped_by_error'] == 'the non-finite loss (%s) at %s' % where.group(1, 2)
    timed = 0 if where.group(2).startswith('warm-up') else int(where.group(3)) - 1
    assert saved['num_steps'] == timed and (saved['images_per_sec'] is None) == (not timed)
    assert ('total images/sec: ' in nan.stdout) == bool(timed)  # no total without a timed step
    assert 'Traceback' not in nan.stderr
    assert not os.path.exists(os.path.join(nan_dir, 'checkpoint'))  # nothing saved
    assert ('error: no checkpoint to evaluate in --train_dir %s' % (tmp_path / 'empty')
            in no_ckpt.stderr)
    assert 'Traceback' not in no_ckpt.stderr


@pytest.mark.timeout(400)
def test_eval_loop_waits_and_evaluates_each_new_checkpoint(tmp_path):
    train_dir = str(tmp_path / 'train')
    loop = Cli(str(tmp_path), 'loop', ['--model=trivial', '--batch_size=4', '--image_size=16',
                                       '--eval', '--eval_interval_secs=1',
                                       '--num_eval_batches=1', '--train_dir=' + train_dir])
    params = dict(model='trivial', batch_size=4, image_size=16, num_batches=1,
                  num_warmup_batches=0, init_learning_rate=0.002, display_every=100,
                  train_dir=train_dir)
    try:
        first = ('Waiting for a first checkpoint in %s: looking every 1 s '
                 '(--eval_interval_secs); SIGINT (Ctrl-C) stops\n' % train_dir)
        loop.wait_for(lambda: first in loop.out, 'the eval loop waiting')
        for step in (1, 2):
            benchmark_cnn.BenchmarkCNN(make_params(**params), gpus=0).run()
            # The wait line follows the evaluation's total block: waiting for it (not for the
            # block) leaves no race between the loop's next line and the SIGINT below.
            loop.wait_for(lambda s=step: ('newer than model.ckpt-%d in' % s) in loop.out,
                          'the evaluation of step %d' % step)
        loop.proc.send_signal(signal.SIGINT)
        assert loop.wait() == -signal.SIGINT, loop.err  # Ctrl-C: summary, then SIGINT
    finally:
        loop.kill()
    assert loop.out.count('Accuracy @ 1 = ') == 2
    assert [line for line in loop.out.splitlines() if line.startswith('Running evaluation')] == [
        'Running evaluation at global_step 1', 'Running evaluation at global_step 2']
    # One line per wait: what it waits for, where and how often it looks.
    assert [line for line in loop.out.splitlines() if line.startswith('Waiting for')] == [
        first.rstrip('\n')] + ['Waiting for a checkpoint newer than model.ckpt-%d in %s: '
                                'looking every 1 s (--eval_interval_secs); SIGINT (Ctrl-C) '
                                'stops' % (step, train_dir) for step in (1, 2)]
    # Stopped while waiting: it stops now, and says what it did (before: it promised to stop
    # 'after the current evaluation, then summarising', though none ran, and printed nothing).
    assert ('received SIGINT: stopping now (no evaluation is running): 2 evaluations done, the '
            'last of global step 2') in loop.err
    assert loop.out.splitlines()[-1] == (
        'Stopped by SIGINT while waiting for a checkpoint newer than model.ckpt-2: 2 '
        'evaluations done, the last of global step 2')
    assert 'saving' not in loop.err  # an eval-only run saves nothing


# An --eval run whose batch number {at} (from 0) sends SIGINT to its own process, so the signal
# comes inside that batch on any host, however fast or loaded.
_SIGNAL_IN_EVAL_BATCH = textwrap.dedent('''
    import os, signal, sys
    sys.path.insert(0, {tests!r})
    import checkout
    checkout.load()
    from tf_cnn_benchmarks import cli
    from tf_cnn_benchmarks.lifecycle import eval_runner
    timed_batches = eval_runner.timed_batches

    def signalling(run_batch, num_batches, **kwargs):
        def run(index):
            if index == {at}:
                os.kill(os.getpid(), signal.SIGINT)
            return run_batch(index)
        return timed_batches(run, num_batches, **kwargs)
    eval_runner.timed_batches = signalling
    sys.exit(cli.main(['tf_cnn_benchmarks'] + {args!r}))
''')


@pytest.mark.timeout(400)
def test_ctrl_c_stops_an_eval_after_the_current_batch(tmp_path):
    # Before: the whole evaluation ran (3000 batches in a user's trial), then exit 130 with no
    # line saying what was stopped.
    train_dir = str(tmp_path / 'train')
    benchmark_cnn.BenchmarkCNN(make_params(
        model='trivial', batch_size=4, image_size=16, num_batches=1, num_warmup_batches=0,
        train_dir=train_dir), gpus=0).run()
    args = ['--model=trivial', '--batch_size=4', '--image_size=16', '--eval',
            '--num_eval_batches=50', '--train_dir=' + train_dir, '--noresults_db']
    runs = {}
    for at in (4, 49):  # the fifth batch; the last
        log_dir = str(tmp_path / ('json%d' % at))
        runs[at] = subprocess.run(
            [sys.executable, '-c', _SIGNAL_IN_EVAL_BATCH.format(
                tests=os.path.join(REPO, 'tests'), at=at,
                args=args + ['--benchmark_log_dir=' + log_dir])],
            capture_output=True, text=True, timeout=WAIT_SECS, cwd=REPO,
            env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL='3'))
    stopped = runs[4]
    assert stopped.returncode == 130, stopped.stderr
    assert ('received SIGINT: stopping the evaluation of model.ckpt-1 after the current batch, '
            'then printing the accuracy of the batches scored so far (send it again to abort '
            'at once)') in stopped.stderr
    lines = stopped.stdout.splitlines()
    at = lines.index('Stopped by SIGINT after 5 of 50 batches of the evaluation of '
                     'model.ckpt-1: the accuracy below is partial, over the 20 examples scored')
    assert re.match(r'Accuracy @ 1 = [\d.]+ Accuracy @ 5 = [\d.]+ \[20 examples\]$',
                    lines[at + 1])
    [saved] = [json.load(open(os.path.join(tmp_path, 'json4', name)))
               for name in os.listdir(tmp_path / 'json4')]
    assert (saved['stopped_by_signal'], saved['eval']['partial'], saved['eval']['num_batches'],
            saved['eval']['planned_batches'], saved['eval']['num_examples']) == (
        'SIGINT', True, 5, 50, 20)
    # In the last batch: the evaluation is complete; the run finishes as if none had come.
    last = runs[49]
    assert last.returncode == 0, last.stderr
    assert '[200 examples]' in last.stdout and 'partial' not in last.stdout
    assert ('Received SIGINT during the last batch: the evaluation is complete, not stopped by '
            'it') in last.stdout
    [saved] = [json.load(open(os.path.join(tmp_path, 'json49', name)))
               for name in os.listdir(tmp_path / 'json49')]
    assert (saved['stopped_by_signal'], saved['eval']['partial']) == (None, False)


def test_ignored_flag_warnings():
    def warnings(**kwargs):
        return ineffective_flags.ignored_flags(make_params(**kwargs))

    assert warnings() == []
    assert warnings(forward_only=True, momentum=0.5, save_model_steps=3) == [
        '--momentum has no effect with --forward_only (no gradients, no updates)',
        '--save_model_steps has no effect with --forward_only (no gradients, no updates)']
    assert warnings(eval=True, print_training_accuracy=True, optimizer='adam') == [
        '--optimizer has no effect with --eval (nothing is trained)',
        '--print_training_accuracy has no effect with --eval (eval prints top-1/top-5 itself)']
    assert warnings(summary_verbosity=2, save_summaries_steps=5) == [
        '--summary_verbosity has no effect without --train_dir (summaries are written there)',
        '--save_summaries_steps has no effect without --train_dir (summaries are written '
        'there)']
    assert warnings(train_dir='/t', summary_verbosity=1) == [
        '--summary_verbosity=1 writes only the graph without --save_summaries_steps']
    assert warnings(save_model_secs=60) == [
        '--save_model_secs has no effect without --train_dir (checkpoints are written there)']
    assert warnings(stop_at_top_1_accuracy=0.7, num_eval_batches=3) == [
        '--num_eval_batches has no effect without --eval or --eval_during_training_*',
        '--stop_at_top_1_accuracy has no effect without --eval_during_training_* (no '
        'evaluation runs during training)']
    assert warnings(eval_interval_secs=10, freeze_when_forward_only=True) == [
        '--eval_interval_secs has no effect without --eval',
        '--freeze_when_forward_only has no effect without --forward_only']
    assert warnings(eval_during_training_every_n_steps=5, num_eval_batches=3,
                    stop_at_top_1_accuracy=0.7) == []
    synthetic = 'on synthetic data (no --data_dir: nothing is read or preprocessed)'
    # --nodistortions turns off a step synthetic data lacks: silent (a user's finding).
    assert warnings(distort_color=True, use_datasets=True, distortions=False) == [
        '--distort_color has no effect ' + synthetic, '--use_datasets has no effect ' + synthetic]
    real = dict(data_dir='/data', data_name='imagenet')
    assert warnings(distort_color=True, datasets_use_caching=True, **real) == [
        '--datasets_use_caching has no effect without --use_datasets (RecordInput reads the '
        'files)']
    assert warnings(use_datasets=True, datasets_use_caching=True, **real) == []
    # --skip_corrupt_records reads TFRecords with tf.data (input_data/skipped_records.py).
    assert warnings(skip_corrupt_records=True, datasets_use_caching=True, **real) == []
    order = ("(an evaluation's length is --num_eval_batches, else --num_eval_epochs, else "
             "--num_batches or --num_epochs, as in the original)")
    # --eval runs --num_batches (on real data too, as the original: before, it warned there).
    assert warnings(eval=True, num_batches=5, **real) == []
    assert warnings(eval=True, num_batches=5) == []
    assert warnings(eval=True, num_batches=5, num_eval_batches=2) == [
        '--num_batches has no effect with --eval and --num_eval_batches ' + order]
    assert warnings(eval=True, num_epochs=0.5, num_eval_epochs=1.0, **real) == [
        '--num_epochs has no effect with --eval and --num_eval_epochs ' + order]


def test_warnings_are_printed_once_each_at_the_start(capsys):
    benchmark_cnn.BenchmarkCNN(make_params(
        model='trivial', batch_size=2, image_size=16, num_batches=1, num_warmup_batches=0,
        forward_only=True, optimizer='momentum', weight_decay=1e-4), gpus=0).run()
    err = capsys.readouterr().err.splitlines()
    assert err.count('warning: --optimizer has no effect with --forward_only (no gradients, '
                     'no updates)') == 1
    assert err.count('warning: --weight_decay has no effect with --forward_only (no '
                     'gradients, no updates)') == 1
