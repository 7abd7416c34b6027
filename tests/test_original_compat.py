"""Scripts and habits of the original tf_cnn_benchmarks: absl's help flags, the --mkl advice,
--save_summaries_steps without a verbosity and the first summary's images/sec, the defaults a
CPU run resolves otherwise listed."""

import os
import types

import pytest

from tf_cnn_benchmarks import flag_parsing, params
from tf_cnn_benchmarks.lifecycle import run_hooks, summaries
from tf_cnn_benchmarks.params import ParamsError, make_params
from tf_cnn_benchmarks.preflight import ineffective_flags

import checkout
import helpers


@pytest.mark.parametrize('argv, wanted, rest', [
    (['--help=false', '--model=x'], None, ['--model=x']),
    (['--nohelp', '--nohelpxml'], None, []),
    (['--helpxml'], 'xml', []),
    (['--helpfull=1'], 'helpfull', []),
    (['-?'], 'help', []),
    (['--model=x', '--', '--help'], None, ['--model=x', '--', '--help']),
    (['--help=false', '--version'], 'version', ['--version']),
    (['--version', '--helpshort'], 'help', ['--version']),  # help wins, as in every command
    (['--', '--version'], None, ['--', '--version']),
    (['--version=true'], 'version', []),  # was: Unknown command line flag 'version'
    (['--noversion', '--model=x'], None, ['--model=x']),
    (['--version=false'], None, []),
])
def test_absls_help_flags_read_as_absl_reads_them(argv, wanted, rest):
    # --help=false was 'error: Unknown command line flag 'help'' (exit 2), and --helpxml too.
    assert flag_parsing.help_request(['prog'] + argv) == (wanted, ['prog'] + rest)
    with pytest.raises(ParamsError, match='--help=maybe: a boolean flag takes true or false'):
        flag_parsing.help_request(['prog', '--help=maybe'])


@pytest.mark.cli
def test_helpxml_prints_every_flag_and_help_false_runs_on():
    done = helpers.run_command('--helpxml')
    assert done.returncode == 0 and done.stdout.startswith('<?xml')
    assert '<name>num_batches</name>' in done.stdout and '<usage>usage: tf_cnn' in done.stdout
    assert helpers.run_command('--help=false', '--nohelp', '--list_models').returncode == 0


@pytest.mark.cli
def test_absls_own_flags_parse_and_only_check_args_stops_after_the_checks():
    # The original took them (absl.app ran it): 'Unknown command line flag 'alsologtostderr'',
    # exit 2, broke old job scripts.
    done = helpers.run_command('--alsologtostderr', '--v=0', '--only_check_args')
    assert done.returncode == 0
    assert 'Loading TensorFlow' not in done.stdout and '--only_check_args' in done.stdout
    assert done.stderr.splitlines() == [
        "warning: --alsologtostderr has no effect here: the command prints its lines itself, "
        "not through absl's logging (its warnings and errors go to stderr, the rest to stdout)",
        "warning: --v/--verbosity has no effect here: the command prints its lines itself, not "
        "through absl's logging; TensorFlow's own C++ log follows TF_CPP_MIN_LOG_LEVEL and "
        "TF_CPP_MAX_VLOG_LEVEL"]
    # A usage error still exits 2; absl's own check of a value is one too.
    assert helpers.run_command('--only_check_args', '--batch_size=-1').returncode == 2
    bad = helpers.run_command('--stderrthreshold=loud', '--only_check_args')
    assert bad.returncode == 2 and bad.stderr.startswith('error: --stderrthreshold must be')
    # At absl's default they ask for nothing: no line.
    quiet = helpers.run_command('--nologtostderr', '--showprefixforinfo', '--undefok=foo',
                                '--foo=1', '--only_check_args')
    assert quiet.returncode == 0 and quiet.stderr == ''


def test_absls_own_flags_on_another_flag_values_leave_absls_global_flags_alone():
    from absl import flags

    from tf_cnn_benchmarks.params import absl_flags
    fv = flags.FlagValues()
    flag_parsing.parse_flags(['prog', '--log_dir=/tmp/x', '--pdb', '--verbosity=1'], fv)
    assert [line.split(' has')[0] for line in absl_flags.no_effect_lines(fv)] == [
        '--log_dir', '--v/--verbosity', '--pdb_post_mortem/--pdb']
    assert fv['v'].value == 1 and fv['pdb_post_mortem'].value is True
    assert flags.FLAGS['verbosity'].value == -1 and not flags.FLAGS['pdb_post_mortem'].value


def test_help_ends_with_absls_flags_in_one_paragraph_and_helpfull_adds_their_help():
    short = helpers.run_command('--help')
    full = helpers.run_command('--helpfull')
    assert short.returncode == full.returncode == 0
    assert short.stdout.rstrip().endswith('--helpfull adds their help.')
    assert '--[no]alsologtostderr' not in short.stdout
    assert full.stdout.startswith(short.stdout.rstrip())
    assert '--[no]alsologtostderr' in full.stdout and '--[no]only_check_args' in full.stdout
    assert len(full.stdout.splitlines()) - len(short.stdout.splitlines()) < 80


@pytest.mark.parametrize('loaded, advice', [
    (False, '; for the threads it set use --num_intra_threads and --num_inter_threads (this '
            'TensorFlow loads no OpenMP runtime, so the --kmp_* flags do nothing either)'),
    (True, '; for the threads it set use --num_intra_threads, and --kmp_blocktime, '
           '--kmp_affinity, --kmp_settings for the OpenMP runtime this build loads'),
])
def test_the_mkl_advice_names_no_flag_that_then_warns(loaded, advice):
    # It advised --kmp_blocktime, --kmp_affinity, --kmp_settings, and giving them printed three
    # lines: '--kmp_blocktime has no effect: no OpenMP runtime is loaded ...'.
    [line] = ineffective_flags.messages(make_params(mkl=True), 0, 'synthetic',
                                        openmp_loaded=lambda: loaded, device='cpu')
    assert line.startswith('--mkl has no effect on TensorFlow 2.21') and line.endswith(
        'use TF_ENABLE_ONEDNN_OPTS=0 to turn it off' + advice)


def test_save_summaries_steps_without_a_verbosity_says_it_writes_nothing():
    # The original wrote no summary at --summary_verbosity=0 either; here it said nothing.
    assert ineffective_flags.ignored_flags(make_params(train_dir='d', save_summaries_steps=2)) == [
        '--save_summaries_steps has no effect without --summary_verbosity (at its default, 0, '
        'no summary is written; --summary_verbosity=1 writes the loss, learning rate and '
        'images/sec)']
    assert ineffective_flags.ignored_flags(make_params(
        train_dir='d', save_summaries_steps=2, summary_verbosity=1)) == []


def test_the_first_summarys_images_per_sec_counts_timed_steps_only(tmp_path):
    # It counted the warm-up steps and the time since the hook began, the first step's set-up
    # included: 70.4 images/sec in the summary where the step line said 489.1.
    timed = run_hooks.TimedSteps()  # the timed steps' clock the loop advances
    plan = helpers.stub_plan(
        summary_verbosity=1, save_summaries_steps=2, forward_only=False,
        loss_type_to_report='total_loss', train_dir=str(tmp_path))
    plan.asynchronous, plan.num_batches = False, 2  # (summaries.no_summary_warning reads it)
    plan.global_step_after = lambda start, step: start + 2 + step  # 2 warm-up steps
    hook = summaries.SummaryHook(plan, None, None)
    values = {'global_step': 0, 'learning_rate': 0.25}
    sess = types.SimpleNamespace(run=lambda fetch: values[fetch])
    hook.begin(types.SimpleNamespace(sess=sess, timed=timed, info=types.SimpleNamespace(
        graph=None, global_step='global_step', learning_rate='next_learning_rate',
        applied_learning_rate='learning_rate')))
    written = []
    hook.writer.close()
    hook.writer = types.SimpleNamespace(add_summary=lambda s, step: written.append((step, {
        v.tag: v.simple_value for v in s.value})))
    hook.before_timed()  # the warm-up steps, set-up included, are not on the timed clock
    timed.secs += 0.5
    hook.after_step(1, 6.5)  # global step 3: the multiple 2 of the warm-up, written now
    timed.secs += 0.5
    hook.after_step(2, 6.0)  # global step 4
    assert written == [(3, {'images_per_sec': 8.0, 'total_loss': 6.5, 'learning_rate': 0.25}),
                       (4, {'images_per_sec': 8.0, 'total_loss': 6.0, 'learning_rate': 0.25})]


def test_the_defaults_a_cpu_run_resolves_otherwise_are_listed_as_differing():
    # --num_warmup_batches was in the flag table (5 on a CPU) but not in the list, though the
    # original warmed up 10 steps on every device (max(10, 5 x autotune_threshold^2)).
    original = {'num_warmup_batches': 10, 'data_format': 'NCHW', 'device': 'gpu',
                'num_inter_threads': 0}
    resolved = params.resolve_params(make_params(), 0)
    differing = [n for n, value in original.items() if getattr(resolved, n) != value]
    assert differing == list(original)
    with open(os.path.join(checkout.REPO, 'docs', 'usage-and-flags.md')) as f:
        text = ' '.join(f.read().split())
    paragraph = text[text.index("Flags whose default differs from the original's on purpose"):]
    paragraph = paragraph[:paragraph.index('## ')]
    assert [n for n in differing if '`--%s`' % n not in paragraph] == []
