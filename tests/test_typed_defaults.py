"""Flags typed at their default value (preflight/ineffective_flags.py): they warn only when the
default asks for a step the run will not take (STEP_DEFAULTS: --distortions on synthetic data,
--datasets_use_prefetch where no tf.data pipeline reads), and another optimizer's flags warn
when given at all; a default that means off, auto, 'same
as' or a setting of a step stays silent. Each tf.data message is true for the run it is
printed in. The README's and docs' example commands print no such warning."""

from __future__ import annotations

import re
import shlex

import pytest
import test_docs
from absl import flags

from tf_cnn_benchmarks import flag_parsing, params
from tf_cnn_benchmarks.preflight import ineffective_flags
from tf_cnn_benchmarks.tools import launch_cluster

# Every flag a rule of the modes names (ineffective_flags.ignored_flags).
RULE_FLAGS = tuple(dict.fromkeys(
    ineffective_flags.OPTIMIZER_FLAGS + ineffective_flags.TRAINING_ONLY_FLAGS
    + ineffective_flags.EVAL_FLAGS + ineffective_flags.INPUT_FLAGS
    + ineffective_flags.ONE_TOWER_FLAGS + ('variable_consistency',)
    + ('baseline', 'fail_on_slower', 'print_training_accuracy', 'trace_file', 'tfprof_file',
       'save_summaries_steps', 'freeze_when_forward_only', 'max_ckpts_to_keep',
       'eval_interval_secs', 'num_batches', 'num_epochs', 'gpu_model', 'summary_verbosity',
       'cross_replica_sync')))


def _at_default(name: str) -> str | None:
    """`--name=<its default>` as a user types it; None when the default cannot be typed."""
    default = params.SPEC_BY_NAME[name].default
    if default is None:
        return None
    if isinstance(default, bool):
        return '--%s=%s' % (name, 'true' if default else 'false')
    if isinstance(default, list):
        return '--%s=%s' % (name, ','.join(default))
    return '--%s=%s' % (name, default)


def warnings_of(args: list[str], visible_gpus: int = 0) -> list[str]:
    """The 'has no effect' lines the command prints for `args` (its flags, parsed as the
    command parses them, `given` from what the command line held)."""
    fv = flags.FlagValues()
    p = flag_parsing.parse_flags(['tf_cnn_benchmarks'] + list(args), fv)
    given = frozenset(n for n in params.SPEC_BY_NAME if fv[n].present)
    return ineffective_flags.messages(p, visible_gpus, None, given)


TYPED = [a for a in map(_at_default, RULE_FLAGS) if a]
# The flags of the optimizers a training run with the default --optimizer=sgd does not use:
# given at all, they warn (ineffective_flags.OPTIMIZER_OWN_FLAGS).
UNUSED = {n for own in ineffective_flags.OPTIMIZER_OWN_FLAGS.values() for n in own
          if n in RULE_FLAGS}
MODES = {  # mode flags -> the flags typed at their default that must warn there
    'one host, synthetic': ([], {'distortions', 'fuse_decode_and_crop',
                                 'datasets_use_prefetch'} | UNUSED),
    'forward-only': (['--forward_only'], {'distortions', 'fuse_decode_and_crop',
                                          'datasets_use_prefetch', 'fused_weight_decay'}),
    'eval': (['--eval', '--train_dir=/tmp/x'], {'distortions', 'fuse_decode_and_crop',
                                                'datasets_use_prefetch', 'fused_weight_decay'}),
    'RecordInput': (['--data_dir=/data', '--data_name=imagenet'],
                    {'datasets_use_prefetch'} | UNUSED),
    'tf.data': (['--data_dir=/data', '--data_name=imagenet', '--use_datasets'], UNUSED),
    'one worker': (['--job_name=worker', '--task_index=0', '--worker_hosts=h:2',
                    '--ps_hosts=h:1'], {'distortions', 'fuse_decode_and_crop',
                                        'datasets_use_prefetch',
                                        'fused_weight_decay'} | UNUSED),  # not folded here
}


def test_the_users_flags_typed_at_their_default_on_one_host_are_silent():
    said = warnings_of(['--cross_replica_sync=true', '--eval_batch_size=0',
                        '--save_model_secs=0', '--max_ckpts_to_keep=5',
                        '--optimizer=sgd', '--fail_on_slower=5', '--summary_verbosity=0',
                        '--datasets_prefetch_buffer_size=1', '--shuffle_buffer_size=10000',
                        '--resize_method=bilinear', '--use_datasets=false'])
    assert said == []
    # Another optimizer's flag given at all warns, at its default too (a user's finding:
    # --optimizer=sgd --momentum=0.9 said nothing; tests/test_optimizer_flag_findings.py).
    assert warnings_of(['--optimizer=sgd', '--momentum=0.9']) == [
        '--momentum has no effect with --optimizer=sgd (only --optimizer=momentum reads it)']


@pytest.mark.parametrize('mode', sorted(MODES))
def test_typed_at_its_default_a_flag_warns_only_when_the_default_asks_for_a_step(mode):
    """Every flag of the rules typed at its default: only the defaults that switch on a step
    this mode does not take warn, each with its mode's reason."""
    extra, expected = MODES[mode]
    said = warnings_of(TYPED + extra)  # the mode's flags last: they win
    warned = {m.split(' ', 1)[0][2:] for m in said}
    assert warned == expected, said
    assert expected - UNUSED <= ineffective_flags.STEP_DEFAULTS


def test_at_another_value_the_flags_warn_as_before():
    said = warnings_of(['--nocross_replica_sync', '--eval_batch_size=4', '--save_model_secs=60',
                        '--max_ckpts_to_keep=3'])
    assert {m.split(' ', 1)[0] for m in said} == {
        '--cross_replica_sync', '--eval_batch_size', '--save_model_secs', '--max_ckpts_to_keep'}


@pytest.mark.parametrize('args', [
    ['--nodistortions'], ['--nodistortions', '--eval', '--data_dir=/d', '--data_name=imagenet'],
    ['--nodistortions', '--forward_only'], ['--nofuse_decode_and_crop'],
    ['--nofuse_decode_and_crop', '--eval', '--train_dir=/tmp/x'],
    ['--nodistort_color', '--eval', '--train_dir=/tmp/x'],
])
def test_an_input_step_switched_off_where_the_run_lacks_it_is_silent(args):
    """A user's finding: --nodistortions on synthetic data (and with --eval) warned that
    --distortions has no effect; switching off a step the run does not take asks for nothing."""
    assert warnings_of(args) == []


TF_LAYERS = ('--use_tf_layers has no effect on TensorFlow 2.21: tf.layers is gone with Keras 3; '
             'every layer is built from tf.nn ops, which gives the same values; nothing to use '
             'instead')


@pytest.mark.parametrize('mode', [[], ['--data_dir=/d', '--data_name=imagenet'], ['--eval'],
                                  ['--forward_only']])
def test_use_tf_layers_warns_when_it_asks_for_tf_layers_not_when_it_turns_them_off(mode):
    """An auditor's finding: --use_tf_layers (asking for the gone tf.layers) was silent and
    --nouse_tf_layers (asking for the tf.nn ops every run builds) warned."""
    assert TF_LAYERS in warnings_of(['--use_tf_layers'] + mode)
    assert TF_LAYERS in warnings_of(['--use_tf_layers=true'] + mode)
    assert not [m for m in warnings_of(['--nouse_tf_layers'] + mode) if 'tf_layers' in m]
    assert not [m for m in warnings_of(['--use_tf_layers=false'] + mode) if 'tf_layers' in m]
    assert not [m for m in warnings_of(mode) if 'tf_layers' in m]  # not typed
    # A library run gives no command line: make_params(use_tf_layers=False) is silent too.
    p = params.make_params(use_tf_layers=False)
    assert not [m for m in ineffective_flags.ignored_flags(p, 'synthetic') if 'tf_layers' in m]


def test_an_input_step_switched_on_where_the_run_lacks_it_still_warns():
    assert warnings_of(['--distortions', '--distort_color', '--forward_only', '--data_dir=/d',
                        '--data_name=imagenet']) == [
        '--%s has no effect with --forward_only (its images get the central crop of '
        'evaluation: no random crop, flip or colour change)' % n
        for n in ('distortions', 'distort_color')]


SYNTHETIC = ('has no effect on synthetic data (no --data_dir: nothing is read or '
             'preprocessed)')
RECORD_INPUT = 'has no effect without --use_datasets (RecordInput reads the files)'


@pytest.mark.parametrize('args, expected', [
    (['--nodatasets_use_prefetch'], ['--datasets_use_prefetch ' + SYNTHETIC]),
    (['--datasets_prefetch_buffer_size=4'], ['--datasets_prefetch_buffer_size ' + SYNTHETIC]),
    (['--datasets_sloppy_parallel_interleave'],
     ['--datasets_sloppy_parallel_interleave ' + SYNTHETIC]),
    (['--nodistort_color_in_yiq'], ['--distort_color_in_yiq ' + SYNTHETIC]),
    (['--data_dir=/d', '--data_name=imagenet', '--datasets_use_prefetch'],
     ['--datasets_use_prefetch ' + RECORD_INPUT]),
    (['--data_dir=/d', '--data_name=imagenet', '--nodatasets_use_prefetch'],
     ['--datasets_use_prefetch ' + RECORD_INPUT]),
    (['--data_dir=/d', '--data_name=imagenet', '--use_datasets', '--nodatasets_use_prefetch'],
     ['--datasets_use_prefetch has no effect here: the tf.data input always prefetches; use '
      '--datasets_prefetch_buffer_size to size it']),
    (['--data_dir=/d', '--data_name=imagenet', '--use_datasets',
      '--datasets_prefetch_buffer_size=4'], []),
])
def test_each_tf_data_message_is_true_for_its_run(args, expected):
    """Synthetic data and RecordInput have no tf.data pipeline: the mode's reason, never the
    original flag's advice to use a tf.data flag that does nothing there either."""
    assert warnings_of(args) == ['%s' % m for m in expected]


def _benchmark_args(command: str) -> list[list[str]]:
    """The flags of each tf_cnn_benchmarks process a documented command starts."""
    words = shlex.split(re.sub(r'\$\([^)]*\)|\$\w+', 'X', command))
    if set(words[1:]) & {'--help', '--helpfull', '-h', '--version'}:
        return []
    if words[0] == 'tf_cnn_benchmarks':
        return [words[1:]]
    if words[0] == 'tf_cnn_cluster':
        opts, passthrough = launch_cluster.parse_args(words[1:])
        return [task['args'] for task in launch_cluster.plan_tasks(opts, passthrough)]
    return []  # the sweep's runs take their flags from its file


DOC_RUNS = [(page, command) for page, command in test_docs.all_commands()
            if command.split()[0] != 'tf_cnn_sweep']


def test_the_docs_hold_runs_to_check():
    assert len(DOC_RUNS) >= 30


@pytest.mark.parametrize('page,command', DOC_RUNS)
def test_no_documented_command_warns_of_a_flag_without_effect(page, command, monkeypatch,
                                                              tmp_path):
    monkeypatch.chdir(tmp_path)
    for args in _benchmark_args(command):
        # A page's GPU command is for a GPU host: it sees the GPUs it asks for.
        gpus = 8 if '--device=gpu' in args or '--num_gpus' in ' '.join(args) else 0
        assert warnings_of(args, gpus) == [], '%s: `%s`' % (page, command)


@pytest.mark.parametrize('extra, why', [
    ({'gradient_clip': 1.0}, 'with --gradient_clip (the decay stays in the loss)'),
    ({'optimizer': 'adam'}, 'with --optimizer=adam (only sgd, momentum, rmsprop fold the decay '
                            'into their update; it stays in the loss)'),
    ({'weight_decay': 0.0}, 'with --weight_decay=0 (no decay to fold)'),
    ({'staged_vars': True}, 'with --staged_vars (the decay stays in the loss)')])
def test_fused_weight_decay_typed_where_the_decay_cannot_be_folded_warns(extra, why):
    """A user's finding: --fused_weight_decay=true beside --gradient_clip, adam or no decay
    was quietly off; typed at either value it now says why it has no effect."""
    for value in (True, False):
        p = params.make_params(fused_weight_decay=value, **extra)
        said = ineffective_flags.ignored_flags(p, 'synthetic', given={'fused_weight_decay'})
        assert '--fused_weight_decay has no effect %s' % why in said
    # Not typed: silent (the default run with adam folds nothing and asks for nothing).
    p = params.make_params(**extra)
    assert not [m for m in ineffective_flags.ignored_flags(p, 'synthetic')
                if m.startswith('--fused_weight_decay')]


def test_fused_weight_decay_where_it_folds_is_silent():
    p = params.make_params(fused_weight_decay=True, optimizer='momentum')
    assert not [m for m in ineffective_flags.ignored_flags(p, 'synthetic',
                                                           given={'fused_weight_decay'})
                if m.startswith('--fused_weight_decay')]
