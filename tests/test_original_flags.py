"""Every flag of the original tf_cnn_benchmarks is a flag here (tests/data/original_flags.json),
with its type and default unless a deviation below says why; the original's documented command
lines parse and validate; the flags that do nothing here say so in one warning line."""

from __future__ import annotations

import json
import os
import re

import pytest

from tf_cnn_benchmarks import flag_parsing, params
from tf_cnn_benchmarks.params import original_flags
from tf_cnn_benchmarks.preflight import ineffective_flags

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data', 'original_flags.json')
ORIGINAL = json.load(open(DATA, encoding='utf-8'))['flags']
BY_NAME = {f['name']: f for f in ORIGINAL}

# Flags whose default or type differs here on purpose (docs/usage-and-flags.md says why).
DEVIATIONS = {
    'distortions': 'on by default here (the original: off)',
    'use_datasets': 'RecordInput by default here (faster on the CPU)',
    'device': 'gpu when one is visible, else cpu (the original: gpu)',
    'local_parameter_device': 'cpu by default here',
    'data_format': 'NCHW on GPU, NHWC on CPU by default',
    'num_inter_threads': 'measured default for the host (None) instead of 0',
    'trace_file': 'None instead of the empty string (both: no trace)',
    'kmp_blocktime': 'unset by default: KMP_BLOCKTIME is left alone',
    'kmp_affinity': 'unset by default: KMP_AFFINITY is left alone',
    'kmp_settings': 'a boolean here (the original: an integer 0/1; --kmp_settings=1 parses)',
    'ps_hosts': 'a list here (the same comma-separated text parses)',
    'worker_hosts': 'a list here (the same comma-separated text parses)',
    'variable_update': 'horovod is refused with its own line (test below)',
    'eval_dir': 'no default folder here: eval summaries are written only when it is given',
}


def _text(value) -> str:
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, list):
        return ','.join(value)
    return str(value)


def test_the_data_holds_the_originals_flag_set():
    assert len(ORIGINAL) == 138  # 137 in benchmark_cnn.py + ml_perf_compliance_logging
    assert len(BY_NAME) == len(ORIGINAL)
    assert BY_NAME['mkl'] == {'name': 'mkl', 'kind': 'boolean', 'default': False,
                              'source': 'benchmark_cnn.py'}


def test_every_original_flag_is_a_flag_here():
    missing = sorted(set(BY_NAME) - set(params.SPEC_BY_NAME))
    assert missing == []


@pytest.mark.parametrize('name', sorted(BY_NAME))
def test_type_and_default_match_the_original(name):
    original, ours = BY_NAME[name], params.SPEC_BY_NAME[name]
    if name in DEVIATIONS:
        return
    kind = 'string' if original['kind'] == 'enum' else original['kind']
    assert (ours.kind, ours.default) == (kind, original['default'])
    if original.get('choices'):
        assert set(ours.choices) == set(original['choices'])


@pytest.mark.parametrize('name', sorted(BY_NAME))
def test_the_originals_default_given_on_the_command_line_parses_and_validates(name):
    default = BY_NAME[name]['default']
    argv = ['prog'] if default is None else ['prog', '--%s=%s' % (name, _text(default))]
    p = flag_parsing.parse_flags(argv)
    params.validate_params(p)


@pytest.mark.parametrize('name', sorted(n for n in BY_NAME if BY_NAME[n].get('choices')))
def test_every_choice_of_an_original_enum_parses(name):
    choices = [c for c in BY_NAME[name]['choices'] if c != 'horovod']
    if name in ('device', 'local_parameter_device'):
        choices = [c for c in choices if c.islower()]  # the original also took CPU/GPU
    for choice in choices:
        p = flag_parsing.parse_flags(['prog', '--%s=%s' % (name, choice)])
        assert getattr(p, name) == choice


def test_boolean_flags_take_the_negated_form():
    for name in sorted(n for n in original_flags.DEFAULTS
                       if params.SPEC_BY_NAME[n].kind == 'boolean'):
        p = flag_parsing.parse_flags(['prog', '--no%s' % name])
        assert getattr(p, name) is False, name


def test_horovod_is_one_line_naming_why_and_the_replacement():
    p = flag_parsing.parse_flags(['prog', '--variable_update=horovod'])
    with pytest.raises(params.ParamsError) as e:
        params.validate_params(p)
    message = str(e.value)
    assert '\n' not in message
    assert 'Horovod' in message and '0.28.1' in message and 'TensorFlow 2.21' in message
    assert '--variable_update=collective_all_reduce' in message
    assert 'TF_CONFIG' in message and 'Slurm' in message and 'tf_cnn_cluster' in message


@pytest.mark.parametrize('name', original_flags.NO_EFFECT_FLAGS)
def test_a_flag_without_effect_warns_once_naming_it_and_what_to_use(name):
    spec = params.SPEC_BY_NAME[name]
    value = {'boolean': not spec.default, 'integer': 7, 'float': 0.5, 'list': ['1'],
             'string': spec.choices[-1] if spec.choices else 'x'}[spec.kind]
    # --use_tf_layers' default asks for the gone tf.layers: typed true it warns, false is
    # silent (ineffective_flags.OFF_SWITCHES; tests/test_typed_defaults.py).
    off_switch = name in ineffective_flags.OFF_SWITCHES
    if off_switch:
        value = True
    # An input flag in a run whose tf.data pipeline reads (elsewhere the mode's message,
    # 'on synthetic data', replaces this one: tests/test_typed_defaults.py).
    where = (dict(data_dir='/data', data_name='imagenet', use_datasets=True)
             if name in ineffective_flags.INPUT_FLAGS else {})
    p = params.make_params(**where, **{name: value})
    params.validate_params(p)
    given = {name} if off_switch else frozenset()
    mine = [m for m in ineffective_flags.ignored_flags(p, given=given)
            if m.startswith('--%s ' % name)]
    assert len(mine) == 1
    assert mine[0].startswith('--%s has no effect ' % name)
    assert '\n' not in mine[0]
    assert re.search(r'\buse (--|TF_|tf\.)|; nothing to use instead$', mine[0]), mine[0]
    assert ineffective_flags.ignored_flags(params.make_params()) == []  # defaults: silent


def test_a_schedule_at_or_below_the_rate_floor_warns_that_it_has_no_effect():
    def warned(**flags):
        p = params.make_params(model='trivial', **flags)
        return [m for m in ineffective_flags.ignored_flags(p) if 'minimum_learning_rate=' in m]
    assert warned(init_learning_rate=0.1, minimum_learning_rate=5.0) == [
        '--init_learning_rate has no effect: --minimum_learning_rate=5 is at or above its rate '
        '0.1, so every update runs at 5']
    assert warned(piecewise_learning_rate_schedule='0.5;1;2', minimum_learning_rate=2.0) == [
        '--piecewise_learning_rate_schedule has no effect: --minimum_learning_rate=2 is at or '
        'above its largest rate 2, so every update runs at 2']
    assert warned(piecewise_learning_rate_schedule='0.5;1;3', minimum_learning_rate=2.0) == []
    assert warned(init_learning_rate=0.1, minimum_learning_rate=0.01) == []  # a real floor
    assert warned(minimum_learning_rate=5.0) == []  # the model's default rate: not known here
    assert warned(init_learning_rate=0.1, minimum_learning_rate=5.0, forward_only=True) == []


@pytest.mark.parametrize('args, text', [
    (['--display_perf_ewma=1.5'], '--display_perf_ewma is the weight of the newest step'),
    (['--gpu_indices=0,x'], '--gpu_indices takes distinct GPU indices'),
    (['--gpu_indices=1,1'], '--gpu_indices takes distinct GPU indices'),
    (['--gpu_indices=0,5', '--num_gpus=2'], "--gpu_indices orders the run's 2 devices, 0 to 1; "
     'index 5 is beyond them: give indices below 2 or raise --num_gpus. Received: '
     "gpu_indices='0,5', num_gpus=2"),
    (['--gpu_indices=1,0'], "index 1 is beyond them"),
    (['--gpu_thread_mode=global', '--per_gpu_thread_count=2'], '--per_gpu_thread_count needs'),
    (['--gpu_thread_mode=private'], '--gpu_thread_mode must be one of'),
    (['--loss_type_to_report=l2'], '--loss_type_to_report must be one of'),
    (['--eval_during_training_at_specified_epochs=1,two'], 'takes epoch numbers >= 0'),
    (['--trt_mode=FP64'], '--trt_mode must be one of'),
    # A misspelt name was accepted with the no-effect warning (nu_pipe57); the original's
    # registry refused it.
    (['--input_preprocessor=bogus'], "--input_preprocessor must be one of 'default', "
     "'official_models_imagenet'. Received: input_preprocessor='bogus'"),
])
def test_bad_values_of_the_originals_flags_are_usage_errors(args, text):
    p = flag_parsing.parse_flags(['prog'] + args)
    with pytest.raises(params.ParamsError, match=text.replace('(', r'\(')):
        params.validate_params(p)


# The original's documented command lines (its README and the performance guide), as given
# there (the data and checkpoint folders are placeholders).
DOCUMENTED = [
    '--num_gpus=1 --batch_size=32 --model=resnet50 --variable_update=parameter_server',
    '--data_format=NCHW --batch_size=256 --model=resnet50 --optimizer=momentum '
    '--variable_update=replicated --nodistortions --gradient_repacking=8 --num_gpus=8 '
    '--num_epochs=90 --weight_decay=1e-4 --data_dir=DATA --use_fp16 --train_dir=CKPT',
    '--local_parameter_device=cpu --num_gpus=8 --batch_size=32 --model=vgg16 '
    '--data_dir=DATA --variable_update=parameter_server --nodistortions',
    '--local_parameter_device=gpu --num_gpus=8 --batch_size=64 --model=vgg16 '
    '--variable_update=replicated --use_nccl=True',
    '--local_parameter_device=gpu --num_gpus=8 --batch_size=64 --model=vgg16 '
    '--variable_update=parameter_server',
    '--local_parameter_device=gpu --num_gpus=8 --batch_size=64 --model=resnet50 '
    '--variable_update=replicated --use_nccl=False',
    '--local_parameter_device=gpu --num_gpus=8 --batch_size=64 --model=resnet50 '
    '--variable_update=distributed_replicated --job_name=worker '
    '--ps_hosts=10.0.0.1:50000,10.0.0.2:50000 --worker_hosts=10.0.0.1:50001,10.0.0.2:50001 '
    '--task_index=0',
    '--local_parameter_device=gpu --num_gpus=8 --batch_size=64 --model=resnet50 '
    '--variable_update=distributed_replicated --job_name=ps '
    '--ps_hosts=10.0.0.1:50000,10.0.0.2:50000 --worker_hosts=10.0.0.1:50001,10.0.0.2:50001 '
    '--task_index=1',
]


@pytest.mark.parametrize('line', DOCUMENTED)
def test_the_originals_documented_command_lines_parse_and_validate(line):
    p = flag_parsing.parse_flags(['prog'] + line.split())
    params.validate_params(p)
    given = dict(arg[2:].split('=', 1) for arg in line.split() if '=' in arg)
    assert p.model == given['model'] and p.num_gpus == int(given['num_gpus'])
    assert p.variable_update == given['variable_update']
