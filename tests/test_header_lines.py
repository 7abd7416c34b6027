"""The header's lines against the original's, and the learning-rate line (run_header.py).

A user found, running the original side by side:

* the learning rate a run got was not shown: --minimum_learning_rate (here the floor of any
  rate, the model's default too) and --num_learning_rate_warmup_epochs changed the losses
  with no line saying the rate. The `LR schedule:` line after `Optimizer:` gives the schedule as
  resolved: the rate before any change and where it comes from, then its changes, warm-up
  and floor (graph/learning_rate.describe_schedule).
* a log parser of the original's output missed its lines: `SingleSess:` and `NUMA bind:` were
  not printed, `Model: lenet` was the original's `Model: lenet5`, `TensorFlow: 2.21.0` its
  `2.21`; and the `Optimizer:` line said nothing of the weight decay where it is in the loss
  (adam, a GPU, --gradient_clip), though it said so where it is folded into the updates. None
  of these was documented as a deliberate difference: the original's lines now keep its
  names, order and value shapes, this project's own lines between them; its lines of some
  runs too (`AllReduce:`, `Staged vars:`, `RewriterConfig:`).
"""

from __future__ import annotations

import ast
import dataclasses
import re
import types

import pytest
import tensorflow as tf

from tf_cnn_benchmarks import run_header
from tf_cnn_benchmarks.graph import learning_rate
from tf_cnn_benchmarks.models import model as model_lib
from tf_cnn_benchmarks.models import model_config
from tf_cnn_benchmarks.params import make_params

import helpers

# A model of constant default rate 0.003125 (whatever the batch), at 4 images a step.
MODEL = model_lib.CNNModel('constant', image_size=32, batch_size=128, learning_rate=0.003125)
EXAMPLES = 50000


def describe(**kwargs) -> str:
    return learning_rate.describe_schedule(make_params(**kwargs), MODEL, 4, EXAMPLES)


@pytest.mark.parametrize('kwargs, text', [
    ({}, "0.003125 (the model's default)"),
    (dict(minimum_learning_rate=0.01), "0.003125 (the model's default), floor 0.01: every update "
     'at it'),
    (dict(minimum_learning_rate=0.001), "0.003125 (the model's default), floor 0.001 "
     '(--minimum_learning_rate)'),
    (dict(num_learning_rate_warmup_epochs=1), "0.003125 (the model's default), warm-up from 0 "
     'over 1 epoch (12500 steps)'),
    (dict(num_learning_rate_warmup_epochs=1, minimum_learning_rate=0.01), '0.003125 (default), '
     'warm-up 1 epoch (12500 steps), floor 0.01: every update at it'),
    (dict(init_learning_rate=0.1, num_learning_rate_warmup_epochs=1),
     '0.1 (--init_learning_rate), warm-up from 0 over 1 epoch (12500 steps)'),
    (dict(init_learning_rate=0.1), '0.1 (--init_learning_rate)'),
    (dict(init_learning_rate=0.1, num_epochs_per_decay=2, learning_rate_decay_factor=0.5,
          minimum_learning_rate=0.01),
     '0.1 (--init_learning_rate), x0.5 every 2 epochs, floor 0.01 (--minimum_learning_rate)'),
    (dict(piecewise_learning_rate_schedule='0.1;1;0.01;2;0.001'),
     '0.1 (--piecewise_learning_rate_schedule), 0.01 from epoch 1, 0.001 from epoch 2'),
    (dict(init_learning_rate=0.1, num_learning_rate_warmup_epochs=0.00001),
     '0.1 (--init_learning_rate), warm-up from 0 over 1e-05 epochs (0 steps: none)'),
    (dict(init_learning_rate=0.1, num_learning_rate_warmup_epochs=0.0001),  # 1.25 steps
     '0.1 (--init_learning_rate), warm-up from 0 over 0.0001 epochs (1 step)'),
])
def test_the_schedule_line_says_the_rate_where_it_comes_from_and_its_changes(kwargs, text):
    assert describe(**kwargs) == text


@pytest.mark.parametrize('kwargs', [
    dict(piecewise_learning_rate_schedule=';'.join('0.000123456;%g' % (e + 0.123456)
                                                   for e in range(20)) + ';1e-05',
         num_learning_rate_warmup_epochs=12.3456, minimum_learning_rate=0.000123456),
    dict(init_learning_rate=0.000123456, num_epochs_per_decay=12.3456,
         learning_rate_decay_factor=0.123456, num_learning_rate_warmup_epochs=12.3456,
         minimum_learning_rate=0.000123456),
    dict(num_learning_rate_warmup_epochs=12.3456, minimum_learning_rate=0.000123456),
])
def test_the_schedule_line_stays_under_100_characters_with_its_label(kwargs):
    line = 'LR schedule: ' + describe(**kwargs)
    assert len(line) < 100, line
    assert line.startswith('LR schedule: 0.00')


def test_a_schedule_too_long_for_its_line_gives_way_by_whole_parts():
    # A user's finding: the line was cut at its 100th character ('..., floor 1....', read as
    # floor 1; or '..., fl...'). Whole parts after the rate give way to '...' now; the warm-up
    # and the floor are kept, numbers whole.
    line = learning_rate.describe_schedule(
        make_params(model='resnet50', resnet_base_lr=0.256, num_learning_rate_warmup_epochs=3.5,
                    minimum_learning_rate=0.0000123), model_config.get_model('resnet50'), 2,
        1281167)
    assert line == ('0.002 (--resnet_base_lr), ..., 4 changes, warm-up 3.5 epochs, '
                    'floor 1.23e-05')
    line = learning_rate.describe_schedule(
        make_params(model='trivial', init_learning_rate=0.0001, num_epochs_per_decay=0.001,
                    learning_rate_decay_factor=0.999, num_learning_rate_warmup_epochs=0.0001,
                    minimum_learning_rate=0.00005), MODEL, 2, 50000)
    assert line == '0.0001 (--init_learning_rate), ..., warm-up 0.0001 epochs, floor 5e-05'
    # One epoch is singular ('x1.5 every 1 epochs' before).
    assert describe(init_learning_rate=0.01, num_epochs_per_decay=1,
                    learning_rate_decay_factor=1.5) == (
        '0.01 (--init_learning_rate), x1.5 every 1 epoch')


@pytest.mark.parametrize('name, kwargs, images', [
    ('trivial', {}, 4),
    ('resnet50', {}, 48),
    ('resnet50', dict(resnet_base_lr=0.256), 48),
    ('trivial', dict(init_learning_rate=0.02), 4),
    ('trivial', dict(piecewise_learning_rate_schedule='0.3;1;0.01'), 4),
])
def test_the_rate_the_line_names_is_the_rate_of_the_first_update(name, kwargs, images):
    p = make_params(model=name, **kwargs)
    model = model_config.get_model(name)
    named = learning_rate.initial_rate(p, model, images)[0]
    # The first update after the model's own warm-up (resnet50's 5 epochs; the line says it).
    first = 0 if kwargs.keys() - {'resnet_base_lr'} else model.default_schedule(
        images, p.resnet_base_lr).warmup_steps
    with tf.Graph().as_default():
        step = tf.constant(first, tf.int64)
        rate = learning_rate.get_learning_rate(p, step, model=model, examples_per_epoch=1281167,
                                               images_per_step=images)
        with tf.compat.v1.Session() as sess:
            assert sess.run(rate) == pytest.approx(named, rel=1e-6)


def test_a_training_header_has_the_line_after_optimizer_and_an_inference_header_none():
    lines = helpers.tiny_bench(minimum_learning_rate=0.01).info_lines()
    at = [i for i, line in enumerate(lines) if line.startswith('Optimizer:')][0]
    # The trivial model's default: 1e-4 whatever the batch.
    assert lines[at + 1] == ("LR schedule: 0.0001 (the model's default), floor 0.01: every "
                             'update at it')
    assert lines[at + 2].startswith('Variables:')
    for mode in (dict(forward_only=True), dict(eval=True, train_dir='/nonexistent')):
        assert not any(line.startswith('LR schedule:')
                       for line in helpers.tiny_bench(**mode).info_lines())


# The original's header lines of a training run of one host (its print_info and the version
# line before it), in its order; `Batch size:` is followed by its per-device line.
ORIGINAL_LINES = ['TensorFlow', 'Model', 'Dataset', 'Mode', 'SingleSess', 'Batch size',
                  'Num batches', 'Num epochs', 'Devices', 'NUMA bind', 'Data format', 'Optimizer',
                  'Variables']


def _named(lines: list[str]) -> dict[str, str]:
    return {line.split(':', 1)[0]: line.split(':', 1)[1].strip() for line in lines
            if ':' in line and not line.startswith(' ')}


def test_the_originals_lines_keep_their_names_order_and_value_shapes():
    lines = helpers.tiny_bench().info_lines()
    names = [line.split(':', 1)[0] for line in lines if not line.startswith(' ')]
    assert [n for n in names if n in ORIGINAL_LINES] == ORIGINAL_LINES
    per_device = lines[lines.index('Batch size:  4 global') + 1]
    assert per_device == '             4 per device'
    named = _named(lines)
    assert re.fullmatch(r'\d+\.\d+', named['TensorFlow'])
    assert named['TensorFlow'] == '.'.join(tf.__version__.split('.')[:2])
    assert (named['SingleSess'], named['NUMA bind']) == ('False', 'False')
    assert named['Model'] == 'trivial'
    # The original's `Dataset:     imagenet (synthetic)`; this project's facts on the line after.
    at = lines.index('Dataset:     imagenet (synthetic)')
    assert lines[at + 1] == ('             train: 1281167 examples per epoch (published train '
                             'size)')


# The modes of a run, by their flags, and the original's `Mode:` value of each (its
# BenchmarkMode).
MODES = [({}, 'training'), (dict(forward_only=True), 'forward only'),
         (dict(eval=True, train_dir='/nonexistent'), 'evaluation'),
         (dict(eval_during_training_every_n_steps=2), 'training + evaluation')]


@pytest.mark.parametrize('kwargs, mode', MODES)
def test_every_modes_header_has_the_originals_lines_and_mode_value(kwargs, mode):
    # Before: `Mode: forward-only` (the original's `forward only`), `Mode: training` with
    # evaluations during training (`training + evaluation`), no `Optimizer:` line in
    # forward-only and eval runs, `Batch size:  4 global (eval)` and `Num batches: 3 per
    # evaluation`, and `Devices:     ['/cpu:0']  (no GPU visible: running on the CPU)`, whose
    # value ast.literal_eval could not read.
    lines = helpers.tiny_bench(**kwargs).info_lines()
    names = [line.split(':', 1)[0] for line in lines if not line.startswith(' ')]
    assert [n for n in names if n in ORIGINAL_LINES] == ORIGINAL_LINES
    named = _named(lines)
    assert named['Mode'] == mode
    assert named['Optimizer'].split(',')[0] == 'sgd'
    assert re.fullmatch(r'\d+ global', named['Batch size'])
    assert re.fullmatch(r'\d+', named['Num batches'])
    assert re.fullmatch(r'\d+\.\d\d', named['Num epochs'])
    assert ast.literal_eval(named['Devices']) == ['/cpu:0']
    at = lines.index("Devices:     ['/cpu:0']")
    assert lines[at + 1] == '             no GPU visible: running on the CPU'


def test_the_dataset_line_of_real_data_is_the_originals_and_every_line_fits_100(tmp_path):
    # Before: `Dataset:     imagenet (inferred from the files in <folder>), train: ...` (155
    # characters in a user's converted folder) and `Classes:` repeating the folder (105).
    import input_helpers
    folder = tmp_path / ('a-rather-long-folder-name-of-a-converted-photo-collection-' * 2)
    input_helpers.solid_shards(str(folder), 'train')
    (folder / 'labels.txt').write_text('1 ant ant\n2 bee bee\n3 moth moth\n')
    lines = helpers.tiny_bench(data_dir=str(folder), num_batches=1).info_lines()
    at = lines.index('Dataset:     imagenet')
    assert lines[at + 1:at + 4] == [
        '             inferred from the files in',
        '             %s' % run_header.fit_path(str(folder), 87),
        '             train: 12 examples counted in 2 TFRecord shards, headers checked (record '
        'CRCs as read)']
    # The one epoch of --num_epochs and the learning-rate schedules (the models' own too).
    assert lines[at + 4] == ('             an epoch is these 12 examples (--num_epochs, LR '
                             'schedule; published: 1281167)')
    # Which pipeline reads the records, and how (nu_pipe57 finding 2).
    assert lines[at + 5] == ('Input:       RecordInput (2 files in parallel, shuffle buffer '
                             '10000), distortions, bilinear resize')
    assert lines[at + 6] == ('Classes:     4 (labels.txt in --data_dir: 3 classes, labels 1..3, '
                             '+ background 0)')
    assert max(len(line) for line in lines) <= 100


def _input_lines(lines: list[str]) -> list[str]:
    """The `Input:` line and its continuation lines."""
    if not any(line.startswith('Input:') for line in lines):
        return []
    at = [line.split(':', 1)[0] for line in lines].index('Input')
    end = at + 1
    while lines[end].startswith(' '):
        end += 1
    return lines[at:end]


@pytest.mark.parametrize('kwargs, reader', [
    ({}, 'RecordInput (2 files in parallel, shuffle buffer 10000)'),
    (dict(use_datasets=True), 'tf.data (shuffle buffer 10000, prefetch 1), 2 files interleaved'),
    (dict(use_datasets=True, datasets_use_caching=True, distort_color=True,
          resize_method='area'),
     'tf.data (shuffle buffer 10000, prefetch 1, cached), 2 files interleaved'),
    (dict(forward_only=True), 'RecordInput (2 files in parallel, shuffle buffer 10000)')])
def test_a_real_data_runs_header_says_which_pipeline_reads_it(tmp_path, kwargs, reader):
    # Before: the headers of a RecordInput run and a tf.data run were byte-identical, and
    # --datasets_use_caching was said nowhere (nu_pipe57 finding 2).
    from tf_cnn_benchmarks import preprocessing

    import input_helpers
    input_helpers.solid_shards(str(tmp_path), 'train')
    bench = helpers.tiny_bench(data_dir=str(tmp_path), num_batches=1, **kwargs)
    lines = bench.info_lines()
    shown = _input_lines(lines)
    assert all(len(line) <= 100 for line in shown)
    value = ' '.join(line[13:] for line in shown)
    assert value.startswith(reader + ', ')
    # The header says what the pipeline the run builds says of itself.
    pipeline = preprocessing.pipeline_for(bench.plan, bench.dataset, train=bench.plan.training)
    assert pipeline.description.endswith('; ' + value)
    names = [line.split(':', 1)[0] for line in lines if not line.startswith(' ')]
    assert names.index('Input') == names.index('Dataset') + 1


@pytest.mark.parametrize('kwargs', [{}, dict(forward_only=True),
                                    dict(eval=True, train_dir='/nonexistent')])
def test_synthetic_and_eval_runs_have_no_input_line(kwargs):
    assert _input_lines(helpers.tiny_bench(**kwargs).info_lines()) == []


def test_an_evaluations_line_says_its_records_are_cached(tmp_path):
    # Before: the `Eval:` line left out --datasets_use_caching, which evaluations honour.
    import input_helpers
    input_helpers.solid_shards(str(tmp_path), 'validation')
    lines = {}
    for caching in (False, True):
        bench = helpers.tiny_bench(data_dir=str(tmp_path), eval=True, train_dir='/nonexistent',
                                   use_datasets=True, datasets_use_caching=caching)
        lines[caching] = ' '.join(' '.join(bench.info_lines()).split())
        assert _input_lines(bench.info_lines()) == []
    assert 'tf.data without shuffling, cached, each record once' in lines[True]
    assert 'cached' not in lines[False]


@pytest.mark.parametrize('path, room, shown', [
    ('/data/imagenet', 20, '/data/imagenet'),
    ('/a/' + 'x' * 30 + '/end', 20, '/a/xxx...xxxxxxx/end')])
def test_a_folder_too_long_for_its_line_is_shown_with_its_middle_elided(path, room, shown):
    assert run_header.fit_path(path, room) == shown and len(shown) <= room


def test_lenet_is_named_as_the_original_named_it():
    lines = helpers.tiny_bench(model='lenet', image_size=28).info_lines()
    assert 'Model:       lenet5' in lines


def test_single_sess_and_numa_bind_say_what_the_plan_does():
    bench = helpers.tiny_bench()
    plan = bench.plan
    config = tf.compat.v1.ConfigProto()
    config.experimental.use_numa_affinity = True
    changed = dataclasses.replace(
        plan, params=plan.params._replace(variable_update='distributed_all_reduce'),
        session_config=config)
    named = _named(run_header.header_lines(changed, bench.dataset, []))
    assert (named['SingleSess'], named['NUMA bind']) == ('True', 'True')


@pytest.mark.parametrize('kwargs, optimizer', [
    (dict(optimizer='adam', weight_decay=1e-4), 'adam, weight decay 0.0001 in the loss'),
    (dict(weight_decay=1e-4, gradient_clip=1.0), 'sgd, weight decay 0.0001 in the loss'),
    (dict(weight_decay=1e-4), 'sgd, weight decay 0.0001 inside the updates (fused)'),
    (dict(optimizer='adam', weight_decay=0.0), 'adam'),
])
def test_the_optimizer_line_says_where_the_weight_decay_is(kwargs, optimizer):
    assert _named(helpers.tiny_bench(**kwargs).info_lines())['Optimizer'] == optimizer


@pytest.mark.parametrize('kwargs, lines', [
    (dict(variable_update='replicated', num_gpus=2, device='cpu'), ['AllReduce:   None']),
    (dict(variable_update='replicated', num_gpus=2, device='cpu', all_reduce_spec='xring'),
     ['AllReduce:   xring']),
    (dict(staged_vars=True), ['Staged vars: True']),
    (dict(rewriter_config='constant_folding: OFF'), ['RewriterConfig: constant_folding: OFF']),
    (dict(), []),
    # A mode that does not read the spec (a warning says so) does not show it as its own.
    (dict(variable_update='parameter_server', all_reduce_spec='xring'), []),
    (dict(variable_update='collective_all_reduce', all_reduce_spec='xring', job_name='worker',
          worker_hosts=['localhost:2210']), ['AllReduce:   None']),
])
def test_the_originals_lines_of_some_runs(kwargs, lines):
    header = helpers.tiny_bench(**kwargs).info_lines()
    assert [line for line in header if line.startswith(
        ('AllReduce:', 'Staged vars:', 'RewriterConfig:'))] == lines
    if lines and lines[0].startswith('AllReduce:'):  # right after Variables, as there
        assert header[header.index(lines[0]) - 1] == 'Variables:   %s' % (
            kwargs['variable_update'])


def test_the_resume_line_of_one_step_says_step():
    from tf_cnn_benchmarks.lifecycle import checkpoints
    plan = types.SimpleNamespace(examples_per_epoch=1000, images_per_global_step=16)
    assert run_header.resume_lines(plan, checkpoints.ResumePoint('d/model.ckpt-1', 1, None)) == [
        'Resume:      global step 1 of model.ckpt-1, which does not count its images (an '
        'earlier version): epochs count as 1 step x 16 images']
