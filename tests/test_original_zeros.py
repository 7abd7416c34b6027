"""Scripts written for the original tf_cnn_benchmarks give 0 for "unset" where it read a flag as
a truth value (`num_batches or 100`, `if params.save_model_steps:`): taken with its meaning, the
header saying what each became (params/zero_values.py)."""

import glob
import re
import types

import pytest

from tf_cnn_benchmarks import params, run_header
from tf_cnn_benchmarks.params import make_params, zero_values
from tf_cnn_benchmarks.preflight import ineffective_flags, usage

import helpers

ZEROS = dict(num_batches=0, num_epochs=0, save_model_steps=0,
             eval_during_training_every_n_epochs=0, stop_at_top_1_accuracy=0,
             num_eval_batches=0, num_eval_epochs=0, datasets_num_private_threads=0,
             datasets_parallel_interleave_cycle_length=0, fp16_loss_scale=0, resnet_base_lr=0,
             autotune_threshold=0, max_ckpts_to_keep=0)


def test_every_zero_the_original_read_as_unset_is_accepted_with_its_meaning():
    # Each was 'error: --num_batches must be >= 1' (exit 2), or took 0 literally: a loss scale
    # refused, a rate of 0, a stop at the first evaluation, a GPU-only warning on a CPU.
    checked = usage.check_usage(make_params(**ZEROS), command=False, paths=False)
    p = checked.params
    assert {name: getattr(p, name) for name in ZEROS} == dict(
        {name: None for name in ZEROS}, max_ckpts_to_keep=0)  # nothing evaluates: no 100
    assert checked.given.num_batches == 0  # the flags as given stay (results' given_flags)
    assert ineffective_flags.messages(p, 0, 'synthetic', frozenset(ZEROS), device='cpu') == [
        '--max_ckpts_to_keep has no effect without --train_dir (checkpoints are written there)']
    # An evaluation's 0 batches (or epochs) without the other: the original's 100 batches.
    for zero in (dict(num_eval_batches=0), dict(num_eval_epochs=0)):
        q = zero_values.as_unset(make_params(eval=True, **zero))
        assert (q.num_eval_batches, q.num_eval_epochs) == (100, None)
    q = zero_values.as_unset(make_params(eval=True, num_eval_batches=0, num_eval_epochs=0.5))
    assert (q.num_eval_batches, q.num_eval_epochs) == (None, 0.5)
    assert zero_values.as_unset(make_params(num_batches=-1)).num_batches == -1  # still refused


# The runs the zeros are given in: a training run that evaluates, and an --eval given
# --num_batches (which an evaluation's own length overrides: a warning names that flag).
_MODES = {'training': dict(eval_during_training_every_n_steps=5, train_dir='/tmp/train'),
          'eval': dict(eval=True, train_dir='/tmp/train', num_batches=5)}


def test_the_zeros_are_the_tables_flags():
    assert list(ZEROS) == [*zero_values.UNSET_BY_ZERO, *zero_values.KEPT_ZERO]


@pytest.mark.parametrize('mode', sorted(_MODES))
@pytest.mark.parametrize('flag', sorted(ZEROS))
def test_each_zero_s_lines_name_the_flag_given(flag, mode):
    # --eval --num_eval_epochs=0 --num_batches=5 warned '--num_batches has no effect with
    # --eval and --num_eval_batches (...)': the 100 batches as_unset gives the original's 0
    # are --num_eval_batches', a flag the user never gave.
    given = dict(_MODES[mode], **{flag: 0})
    p = usage.check_usage(make_params(**given), command=False, paths=False).params
    header = zero_values.header_lines(given, params.resolve_params(p, 0))
    assert [line[13:].split(' ')[0].rstrip(',') for line in header
            if line[13:].startswith('--')] == ['--%s=0' % flag]
    for message in ineffective_flags.ignored_flags(p, 'synthetic', frozenset(given)):
        named = re.findall(r'--(\w+)', message.split(' (')[0])
        assert set(named) <= set(given), message
    if mode == 'eval' and flag in ('num_eval_batches', 'num_eval_epochs'):
        assert ineffective_flags.ignored_flags(p, 'synthetic', frozenset(given)) == [
            '--num_batches has no effect with --eval and %s (an evaluation\'s length is '
            '--num_eval_batches, else --num_eval_epochs, else --num_batches or --num_epochs, as '
            'in the original)' % {'num_eval_batches': '--num_eval_batches',  # its 100, as given
                                  'num_eval_epochs': '--num_eval_epochs=0'}[flag]]


def test_the_header_says_what_each_zero_became():
    given = dict(num_batches=0, save_model_steps=0, num_eval_batches=0, max_ckpts_to_keep=0,
                 eval_during_training_every_n_steps=2)
    p = params.resolve_params(zero_values.as_unset(make_params(**given)), 0)
    assert zero_values.header_lines(given, p) == [
        'Flags at 0:  --num_batches=0 is unset, as in the original: 100 steps (the default)',
        '             --save_model_steps=0 is unset, as in the original: no checkpoint every N '
        'steps',
        '             --num_eval_batches=0, as in the original: 100 batches per evaluation (its '
        'default)',
        '             --max_ckpts_to_keep=0, as in the original: every checkpoint is kept']
    assert zero_values.header_lines({'num_batches': 5}, p) == []


def test_a_gpu_run_warms_up_as_long_as_the_originals_autotuning():
    resolve = params.resolve_params
    assert resolve(make_params(device='gpu', autotune_threshold=2), 1).num_warmup_batches == 20
    assert resolve(make_params(device='gpu'), 1).num_warmup_batches == 10
    assert resolve(make_params(device='cpu', autotune_threshold=2), 0).num_warmup_batches == 5


@pytest.mark.cli
def test_a_script_of_the_original_with_zeros_runs(tmp_path):
    train_dir = tmp_path / 'train'
    done = helpers.run_command(
        '--model=trivial', '--batch_size=2', '--image_size=16', '--num_warmup_batches=0',
        '--num_batches=0', '--num_epochs=0.000004', '--save_model_steps=1',
        '--max_ckpts_to_keep=0', '--display_every=10', '--autotune_threshold=0',
        '--train_dir=%s' % train_dir, '--noresults_db')
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert 'Num batches: 3' in lines  # ceil(4e-06 x 1,281,167 / 2)
    start = lines.index('Flags at 0:  --num_batches=0 is unset, as in the original: the steps '
                        'of --num_epochs=4e-06')
    # The GPU-only flag on the CPU has no effect at any value: the header says so (it said
    # 'TF_AUTOTUNE_THRESHOLD is not set'), and, unset, it gets no warning line.
    assert lines[start + 1:start + 5] == [
        '             --autotune_threshold=0 has no effect on the CPU, where this run is because '
        'no GPU is',
        '               visible (it sets GPU options)',
        '             --max_ckpts_to_keep=0, as in the original: every checkpoint is kept',
        '==========']
    assert 'warning: --autotune_threshold' not in done.stderr  # unset: no GPU-only warning
    kept = sorted(int(f.split('-')[-1].split('.')[0])
                  for f in glob.glob(str(train_dir / 'model.ckpt-*.index')))
    assert kept == [1, 2, 3]  # every checkpoint kept


def _zero_header(device='cpu', **given):
    """The `Flags at 0:` lines of a run given `given` (the header's: run_header's reasons)."""
    p = params.resolve_params(zero_values.as_unset(make_params(**given)), 0)
    plan = types.SimpleNamespace(given_flags=given, visible_gpus=int(device == 'gpu'),
                                 params=p._replace(device=device))
    return zero_values.header_lines(given, p, no_effect=run_header.zero_flag_reasons(
        plan, 'synthetic'))


def test_a_zero_without_effect_is_said_to_have_none_not_what_its_0_does():
    """A docs reader's trial: `--max_ckpts_to_keep=0` without --train_dir warned that it has
    no effect without --train_dir, and the header said `every checkpoint is kept`."""
    assert _zero_header(max_ckpts_to_keep=0) == [
        'Flags at 0:  --max_ckpts_to_keep=0 has no effect without --train_dir (checkpoints are '
        'written there)']
    assert _zero_header(max_ckpts_to_keep=0, train_dir='/tmp/t') == [
        'Flags at 0:  --max_ckpts_to_keep=0, as in the original: every checkpoint is kept']
    # The zeros taken as unset: no warning (unset), but no effect claimed either where the flag
    # has none at any value in the run.
    assert _zero_header(fp16_loss_scale=0, resnet_base_lr=0, save_model_steps=0) == [
        'Flags at 0:  --save_model_steps=0 has no effect without --train_dir (checkpoints are '
        'written there)',
        '             --fp16_loss_scale=0 has no effect without --use_fp16 (only float16 compute '
        'scales the',
        "               loss: bfloat16 has float32's exponent range, and float32 needs no "
        'scaling)',
        '             --resnet_base_lr=0 has no effect with --model=trivial: it sets the default '
        'learning',
        '               rate of the ImageNet ResNets (resnet50, resnet101, resnet152 and their '
        '_v1.5/_v2);',
        '               use --init_learning_rate']
    assert _zero_header(fp16_loss_scale=0, resnet_base_lr=0, use_fp16=True, model='resnet50',
                        save_model_steps=0, train_dir='/tmp/t') == [
        'Flags at 0:  --save_model_steps=0 is unset, as in the original: no checkpoint every N '
        'steps',
        '             --fp16_loss_scale=0 is unset, as in the original: the default loss scale, '
        '128',
        '             --resnet_base_lr=0 is unset, as in the original: the default, 0.128 per 256 '
        'images']
    assert _zero_header(device='gpu', autotune_threshold=0) == [
        'Flags at 0:  --autotune_threshold=0 is unset, as in the original: TF_AUTOTUNE_THRESHOLD '
        'is not set']


@pytest.mark.cli
def test_the_warning_and_the_header_agree_on_a_zero_without_effect():
    done = helpers.run_command(
        '--model=trivial', '--batch_size=2', '--image_size=16', '--num_warmup_batches=0',
        '--num_batches=1', '--max_ckpts_to_keep=0', '--noresults_db')
    assert done.returncode == 0, done.stderr
    assert ('warning: --max_ckpts_to_keep has no effect without --train_dir (checkpoints are '
            'written there)') in done.stderr.splitlines()
    assert ('Flags at 0:  --max_ckpts_to_keep=0 has no effect without --train_dir (checkpoints '
            'are written there)') in done.stdout.splitlines()
    assert 'every checkpoint is kept' not in done.stdout


@pytest.mark.parametrize('flag', sorted(ZEROS))
def test_a_negative_value_s_error_says_0_is_accepted(flag):
    # Before: '--save_model_steps must be >= 1' for -3, though 0 is accepted ('0: off').
    spec = next(s for s in params.SPECS if s.name == flag)
    with pytest.raises(params.ParamsError) as e:
        params.validate_params(make_params(**{flag: -3 if spec.kind == 'integer' else -3.0}))
    text = str(e.value)
    if flag == 'fp16_loss_scale':  # its own rule: > 0 and at most 2**24
        assert text.startswith('--fp16_loss_scale must be > 0 and at most 2**24') and (
            '0 is unset, as in the original: that default' in text), text
        return
    assert text.startswith('--%s must be >= %s' % (flag, spec.lower))
    assert ('or 0 (unset, as in the original: ' if spec.lower else '(0: ') in text, text


def test_a_top_1_accuracy_above_1_is_refused():
    # The original's accuracy is a fraction (Accuracy @ 1 = 0.7512): 1.5 can never be reached,
    # and was accepted without a word.
    params.validate_params(make_params(stop_at_top_1_accuracy=1.0))
    with pytest.raises(params.ParamsError, match=r'^--stop_at_top_1_accuracy must be at most 1: '
                       r'it is a top-1 accuracy, a fraction from 0 to 1 \(0\.75 for 75%\)'):
        params.validate_params(make_params(stop_at_top_1_accuracy=1.5))
