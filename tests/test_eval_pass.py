"""An evaluation scores every record exactly once, whatever the batch size and the devices.

The checkpoint here is written by hand so that the right accuracy is known without running the
model: the trivial model (flatten -> linear 1 -> relu 4096 -> linear 10) with weights that make
the bottleneck the mean pixel value, so a bright image is called class 2 and a dark one class 1,
with classes 3, 4, 5 next in the ranking (top-5 = {1, 2, 3, 4, 5}). The five validation records:

    record   image    label   top-1 hit   top-5 hit
    1        bright   2       yes         yes
    2        dark     1       yes         yes
    3        bright   2       yes         yes
    4        dark     2       no          yes
    5        bright   7       no          no

so top-1 = 3/5 = 0.6 and top-5 = 4/5 = 0.8 over the whole set; the first four give 0.75 and 1.0.
"""

import os
import signal

import numpy as np
import pytest
import tensorflow as tf

from tf_cnn_benchmarks import preprocessing, run_plan
from tf_cnn_benchmarks.lifecycle import eval_runner, skip_report

import helpers
import input_helpers as h
from helpers import TINY, run_command, tiny_bench, tiny_params

tf1 = tf.compat.v1
BRIGHT, DARK = (220, 220, 220), (30, 30, 30)
RECORDS = [(BRIGHT, 2), (DARK, 1), (BRIGHT, 2), (DARK, 2), (BRIGHT, 7)]
CROP = 28  # eval's central crop of the 32x32 images: no resize
STEP = 7


def crafted_values(num_classes=10) -> dict:
    """Checkpoint values of the trivial model described in the module docstring."""
    inputs = CROP * CROP * 3
    w1 = np.zeros([1, 4096], np.float32)
    b1 = np.zeros([4096], np.float32)
    w1[0, 0], b1[0] = 1.0, 1.0  # unit 0 = relu(mean pixel + 1): 1.73 bright, 0.24 dark
    w2 = np.zeros([4096, num_classes], np.float32)
    w2[0, 2] = 1.0  # logit 2 = unit 0
    b2 = -100.0 - np.arange(num_classes, dtype=np.float32)  # then classes 3, 4, 5, ...
    b2[1], b2[2] = 1.0, 0.0  # logit 1 = 1: class 2 wins on bright images only
    return {'cg/affine0/weights': np.full([inputs, 1], 1.0 / inputs, np.float32),
            'cg/affine0/biases': np.zeros([1], np.float32),
            'cg/affine1/weights': w1, 'cg/affine1/biases': b1,
            'cg/affine2/weights': w2, 'cg/affine2/biases': b2,
            'global_step': np.int64(STEP)}


def write_checkpoint(train_dir, values) -> str:
    """A TensorFlow checkpoint of `values` at step values['global_step'] in `train_dir`."""
    with tf.Graph().as_default():
        variables = {name: tf1.Variable(value, name=name.replace('/', '_'))
                     for name, value in values.items()}
        saver = tf1.train.Saver(variables)
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            return saver.save(sess, os.path.join(train_dir, 'model.ckpt'),
                              global_step=int(values['global_step']))


def write_records(folder, records, num_shards=2):
    """Train and validation shards of solid 32x32 JPEGs; validation record i goes to shard
    i % num_shards, which the deterministic interleave reads back in the original order."""
    made = [h.example(h.image_bytes(32, 32, colour=colour), label) for colour, label in records]
    for subset in ('train', 'validation'):
        h.write_shards(folder, subset, [made[k::num_shards] for k in range(num_shards)])
    return str(folder)


@pytest.fixture(scope='module')
def crafted(tmp_path_factory):
    root = tmp_path_factory.mktemp('eval_pass')
    train_dir = str(root / 'train')
    write_checkpoint(train_dir, crafted_values())
    return {'five': write_records(root / 'five', RECORDS),
            'four': write_records(root / 'four', RECORDS[:4], num_shards=1),
            'train_dir': train_dir}


def _eval(crafted, data='five', **kwargs):
    # No --num_batches (TINY's 3 would be the evaluation's length, as in the original): the
    # default, one pass over the subset.
    settings = dict(data_dir=crafted[data], train_dir=crafted['train_dir'], eval=True,
                    image_size=CROP, num_classes=10, num_batches=None)
    settings.update(kwargs)
    return tiny_bench(**settings).run()['eval']


@pytest.mark.parametrize('eval_batch_size, batches', [(1, 5), (2, 3), (3, 2), (5, 1), (8, 1)])
def test_every_record_once_whatever_the_batch(crafted, eval_batch_size, batches, capsys):
    # Before: batch 2 scored 4 examples (top-1 0.75), batch 8 scored 8 (records twice).
    r = _eval(crafted, eval_batch_size=eval_batch_size)
    assert (r['num_examples'], r['num_batches']) == (5, batches)
    assert (r['top_1'], r['top_5']) == (0.6, 0.8)
    out = capsys.readouterr().out.splitlines()
    # The original's lines; the global step on the line before them (it was in the bracket).
    at = out.index('Accuracy @ 1 = 0.6000 Accuracy @ 5 = 0.8000 [5 examples]')
    run = out.index('Running evaluation at global_step 7')
    assert out[run - 1] == 'Successfully loaded model from %s.' % os.path.join(
        crafted['train_dir'], 'model.ckpt-%d' % STEP)
    # Between them with several batches: the 'Timed part:' line, and the note of the first
    # batch's set-up where it took over twice the others' median.
    assert run < at <= run + 3


@pytest.mark.parametrize('update, devices, batch, batches', [
    ('replicated', 2, 2, 2),        # 4 slots a step: 4 + 1 + 3 padding
    ('parameter_server', 3, 1, 2),  # 3 slots a step: 3 + 2 + 1 padding
    ('independent', 2, 4, 1),       # 8 slots: 5 + 3 padding
])
def test_every_record_once_on_several_devices(crafted, update, devices, batch, batches):
    r = _eval(crafted, device='cpu', num_gpus=devices, variable_update=update,
              eval_batch_size=batch)
    assert (r['num_examples'], r['num_batches'], r['top_1'], r['top_5']) == (5, batches, 0.6,
                                                                            0.8)


def test_a_set_smaller_than_the_default_batch(crafted):
    # Before: a 4-record set under the batch of 32 scored 32 examples.
    r = _eval(crafted, data='four', batch_size=32)
    assert (r['num_examples'], r['num_batches'], r['top_1'], r['top_5']) == (4, 1, 0.75, 1.0)


@pytest.mark.parametrize('flags, eval_batch, examples, batches, top_1, top_5', [
    ({'num_eval_batches': 2}, 2, 4, 2, 0.75, 1.0),        # 2 full batches: records 1-4
    ({'num_eval_batches': 4}, 3, 12, 4, 8 / 12, 10 / 12),  # records 1-5, 1-5, 1-2
    # The original's whole batches of E epochs: int(2 x 5 + 3 - 1) // 3 = 4 full batches,
    # records 1-5, 1-5, 1-2 (before: 10 examples, 2 padding slots); int(0.8 x 5 + 2) // 3 = 2
    # batches, records 1-5, 1.
    ({'num_eval_epochs': 2.0}, 3, 12, 4, 8 / 12, 10 / 12),
    ({'num_eval_epochs': 0.8}, 3, 6, 2, 4 / 6, 5 / 6),
])
def test_num_eval_batches_and_epochs_keep_their_meaning(crafted, flags, eval_batch, examples,
                                                        batches, top_1, top_5):
    r = _eval(crafted, eval_batch_size=eval_batch, **flags)
    assert (r['num_examples'], r['num_batches']) == (examples, batches)
    assert (r['top_1'], r['top_5']) == (top_1, top_5)


def test_each_evaluation_starts_again_from_the_first_record(crafted):
    # The --eval_interval_secs loop and evaluation during training reuse one evaluator.
    bench = tiny_bench(data_dir=crafted['five'], eval=True, image_size=CROP, num_classes=10,
                       eval_batch_size=2, num_batches=None)
    evaluator = eval_runner.Evaluator(bench.plan, bench.model, bench.dataset,
                                       bench.session_config)
    values = crafted_values()
    for _ in range(3):
        r = evaluator.evaluate(values=values)
        assert (r['num_examples'], r['top_1'], r['top_5'], r['global_step']) == (5, 0.6, 0.8,
                                                                                 STEP)


def test_header_and_eval_line_describe_the_evaluation(crafted):
    # Before: the header's 'Eval:' line, then after 'Generating eval model' a second, longer
    # 'Eval:' line with the input's description. Now the header's is the longer one, the only one.
    flags = dict(data_dir=crafted['five'], train_dir=crafted['train_dir'], eval=True,
                 image_size=CROP, num_classes=10, eval_batch_size=2, num_batches=None)
    lines = tiny_bench(**flags).info_lines()
    start = lines.index('Mode:        evaluation')
    described = ('5 examples (every validation record once) in 3 batches of 2 (2 per device x 1 '
                 'device); the last batch holds 1 example and 1 padding slot, not scored')
    eval_value = ('%s; from imagenet (inferred from the files in %s), validation: 5 '
                  'examples counted in 2 TFRecord shards, headers checked (record CRCs as read); '
                  'tf.data without shuffling, each record once, central crop, bilinear resize'
                  % (described, crafted['five']))
    assert lines[start + 1:start + 7] == [
        'SingleSess:  False', 'Batch size:  2 global', '             2 per device',
        'Image size:  28x28', 'Num batches: 3', 'Num epochs:  1.00']
    assert lines[start + 7].startswith('Eval:        5 examples (every validation record')
    assert helpers.header_value(lines, 'Eval') == ' '.join(eval_value.split())
    # A final user: one 392-character line; the value wraps as the other header values do.
    eval_block = [line for line in lines[start + 7:] if line.startswith(('Eval:', ' ' * 13))]
    assert len(eval_block) > 1 and max(len(line) for line in eval_block) <= 100
    assert 'Accuracy @ 5 is 1' not in '\n'.join(lines)  # 10 classes
    out = run_command(*('--%s=%s' % item for item in {**TINY, **flags}.items()
                        if item[1] is not None)).stdout
    assert helpers.header_value(out.splitlines(), 'Eval') == ' '.join(eval_value.split())
    assert sum(line.startswith('Eval:') for line in out.splitlines()) == 1


def test_the_eval_input_described_is_the_pipelines(crafted):
    # The header describes the evaluation's input before its pipeline exists.
    bench = tiny_bench(data_dir=crafted['five'], eval=True, image_size=CROP, num_classes=10,
                       num_eval_epochs=2.0)
    pipeline = preprocessing.eval_pipeline_for(bench.plan, bench.dataset)
    assert preprocessing.describe_eval_input(bench.plan, bench.dataset) == pipeline.description
    assert 'records in a fixed order, round again' in pipeline.description


@pytest.mark.parametrize('classes, said', [(3, True), (5, True), (6, False)])
def test_accuracy_at_5_by_definition_is_said_once_in_the_header(classes, said, tmp_path):
    # Before: said by an --eval run after its header, never by evaluations during training.
    flags = dict(TINY, num_classes=classes, eval_during_training_every_n_steps=1,
                 num_batches=2, train_dir=str(tmp_path / 'train'))
    out = run_command(*('--%s=%s' % item for item in flags.items())).stdout
    lines = out.splitlines()
    value = helpers.header_value(lines, 'Eval')
    # Before: '16 synthetic examples ...; from synthetic'.
    assert value.endswith(' synthetic examples in 2 batches of 4 (4 per device x 1 '
                          'device), per evaluation during training'), value
    definition = ('             Accuracy @ 5 is 1 by definition here: the model has %d classes, '
                  'all of them in its top 5' % classes)
    assert [line for line in lines if 'by definition' in line] == ([definition] if said else [])
    if said:
        # Right after the Eval value (its first line and any continuation lines).
        start = next(i for i, line in enumerate(lines) if line.startswith('Eval:'))
        after = lines.index(definition)
        assert after > start and all(line.startswith(' ' * 13) for line in lines[start + 1:after])
        assert out.count('Accuracy @ 5 = 1.0000') == 2  # both evaluations
    eval_out = run_command(*('--%s=%s' % item for item in dict(
        TINY, num_classes=classes, eval=True, train_dir=str(tmp_path / 'train')).items())).stdout
    assert [line for line in eval_out.splitlines()
            if 'by definition' in line] == ([definition] if said else [])


def test_eval_during_training_scores_the_whole_validation_set(crafted):
    result = tiny_bench(data_dir=crafted['five'], image_size=CROP, num_classes=10,
                        num_batches=2, eval_batch_size=2,
                        eval_during_training_at_specified_steps=['2']).run()
    [r] = result['evals']
    assert (r['num_examples'], r['num_batches'], r['global_step']) == (5, 3, 2)
    assert result['plan']['eval']['num_examples'] == 5


def test_cifar10_evaluation_scores_each_test_image_once(tmp_path):
    data_dir = h.write_cifar(str(tmp_path / 'cifar'), test_count=3)
    train_dir = str(tmp_path / 'train')
    tiny_bench(data_dir=data_dir, train_dir=train_dir, image_size=0, num_batches=1).run()
    bench = tiny_bench(data_dir=data_dir, train_dir=train_dir, image_size=0, eval=True,
                       eval_batch_size=2, num_batches=None)
    r = bench.run()['eval']
    assert (r['num_examples'], r['num_batches']) == (3, 2)
    assert r['top_1'] in (0.0, 1 / 3, 2 / 3, 1.0)


def test_synthetic_evaluation_scores_full_batches(tmp_path):
    train_dir = str(tmp_path)
    write_checkpoint(train_dir, crafted_values(num_classes=1001))
    r = tiny_bench(eval=True, train_dir=train_dir, image_size=CROP, num_batches=3,
                   eval_batch_size=2, num_classes=None).run()['eval']
    assert (r['num_examples'], r['num_batches']) == (6, 3)


# --- The plan of an evaluation (pure arithmetic).

class _Data:
    synthetic = False

    def __init__(self, records):
        self.records = records

    def num_examples(self, subset):
        return self.records


@pytest.mark.parametrize('flags, records, devices, expected', [
    ({}, 50, 1, (7, 50, 6)),                        # every record once: 6 full + 2 of 8
    ({}, 48, 1, (6, 48, 0)),
    ({}, 5, 2, (1, 5, 11)),                         # global batch 16
    ({'num_eval_batches': 2}, 50, 1, (2, 16, 0)),
    ({'num_eval_epochs': 1.5}, 50, 1, (10, 80, 0)),  # int(75 + 7) // 8 full batches
    ({'num_eval_epochs': 1.14}, 50, 1, (8, 64, 0)),  # 57 images (not 56.99...): 8 batches
    ({'num_eval_epochs': 0.001}, 30, 1, (1, 8, 0)),  # 0 whole images: at least one batch
    ({'num_eval_epochs': 1.0}, 48, 2, (3, 48, 0)),   # global batch 16: one pass exactly
])
def test_make_eval_plan(flags, records, devices, expected):
    plan = run_plan.make_eval_plan(tiny_params(**flags), _Data(records), num_devices=devices,
                                   per_device_batch_size=8, num_batches=100)
    assert (plan.num_batches, plan.num_examples, plan.padding) == expected
    assert plan.global_batch_size == 8 * devices and plan.subset == 'validation'


def test_make_eval_plan_synthetic_and_subset():
    synthetic = type('Synthetic', (), {'synthetic': True, 'num_examples': lambda s, x: 50000})()
    plan = run_plan.make_eval_plan(tiny_params(eval=True, data_subset='train', eval_batch_size=3),
                                   synthetic, num_devices=2, per_device_batch_size=8,
                                   num_batches=7)
    assert (plan.subset, plan.per_device_batch_size, plan.num_batches, plan.num_examples) == (
        'train', 3, 7, 42)
    assert plan.describe() == '42 synthetic examples in 7 batches of 6 (3 per device x 2 devices)'
    one = run_plan.make_eval_plan(tiny_params(eval=True, eval_batch_size=1), synthetic,
                                  num_devices=1, per_device_batch_size=1, num_batches=1)
    assert one.describe() == '1 synthetic example in 1 batch of 1 (1 per device x 1 device)'


@pytest.mark.parametrize('examples, batches, expected', [
    (12, 3, '12 examples (1.20 passes over the 10 validation records in a fixed order) in 3 '
            'batches of 4 (4 per device x 1 device)'),
    (6, 2, '6 examples (the first 6 of the 10 validation records in a fixed order, each once) '
           'in 2 batches of 4 (4 per device x 1 device); the last batch holds 2 examples and 2 '
           'padding slots, not scored'),
])
def test_eval_plan_describe(examples, batches, expected):
    plan = run_plan.EvalPlan('validation', 4, 4, batches, examples, 10)
    assert plan.describe() == expected


@pytest.mark.cli
@pytest.mark.timeout(300)
def test_eval_interval_loop_on_real_data(crafted, tmp_path):
    from test_lifecycle_cli import Cli
    loop = Cli(str(tmp_path), 'loop', [
        '--model=trivial', '--image_size=28', '--num_classes=10', '--eval',
        '--eval_interval_secs=1', '--eval_batch_size=2', '--data_dir=' + crafted['five'],
        '--train_dir=' + crafted['train_dir']])
    assert loop.signal_when(lambda: 'total images/sec: ' in loop.out,
                            'the evaluation') == -signal.SIGINT, loop.err  # Ctrl-C'd (0 before)
    assert ('Running evaluation at global_step 7\n' in loop.out
            and 'Accuracy @ 1 = 0.6000 Accuracy @ 5 = 0.8000 [5 examples]\n' in loop.out)


@pytest.mark.parametrize('flags, scored, each', [
    ({}, 4, 'distinct records, each scored once'),
    ({'num_eval_epochs': 2.0}, 8, 'the records left, each once a pass (2.00 passes)'),
])
def test_a_skipped_record_leaves_its_slot_unscored(crafted, tmp_path, capsys, flags, scored,
                                                  each):
    """Realdata 4: record 3 skipped (its data CRC fails; before realdata 8, record 5 after it
    in its shard too), the pass of five slots was filled by reading records again: '[5
    examples]' and a header of 'every validation record once'. The slot is padding now: the 4
    records left (1, 2, 4, 5: top-1 2/4, top-5 3/4) are scored, each once a pass, and the lines
    say so."""
    folder = write_records(tmp_path / 'flip', RECORDS)  # shard 0: records 1, 3, 5
    h.damage_record(os.path.join(folder, 'validation-00000-of-00002'), 1)
    bench = tiny_bench(data_dir=folder, train_dir=crafted['train_dir'], eval=True,
                       image_size=CROP, num_classes=10, num_batches=None,
                       skip_corrupt_records=True, eval_batch_size=2, **flags)
    header = 'Eval:        ' + helpers.header_value(bench.info_lines(), 'Eval')
    r = bench.run()['eval']
    assert (r['num_examples'], r['top_1'], r['top_5']) == (scored, 0.5, 0.75)
    out = capsys.readouterr().out.splitlines()
    assert header.startswith('Eval:        up to %d examples (' % (5 * len(flags) + 5))
    assert "; a record --skip_corrupt_records skips is not scored, nor replaced) in " in header
    at = out.index('Accuracy @ 1 = 0.5000 Accuracy @ 5 = 0.7500 [%d examples]' % scored)
    assert out[at + 1] == (
        'skipped records: 1 of the validation records (--skip_corrupt_records: 1 while '
        'reading, their slots not scored); the %d examples scored are %s' % (scored, each))


def test_an_unusable_record_is_not_replaced_by_another(crafted, tmp_path):
    """Record 5's label 70 lies outside the 10 classes: skipped alone, 4 examples scored (the
    first record was read again in its place: 5 examples, top-1 0.8)."""
    folder = write_records(tmp_path / 'label', RECORDS[:4] + [(BRIGHT, 70)])
    r = tiny_bench(data_dir=folder, train_dir=crafted['train_dir'], eval=True, image_size=CROP,
                   num_classes=10, num_batches=None, skip_corrupt_records=True).run()['eval']
    assert (r['num_examples'], r['top_1'], r['top_5'], r['skipped_records']) == (4, 0.75, 1.0,
                                                                                 1)


def test_a_shard_left_out_at_start_up_is_not_called_read_twice(tmp_path):
    """A truncated shard, left out at start-up: the plan counts the other shards' records, all
    scored once; the line said '... the pass's N examples were read from the records left,
    some twice'."""
    line = skip_report.skipped_line({'skipped_records': 13, 'skipped_left_out': 13,
                                     'subset': 'validation', 'num_examples': 64, 'passes': 1.0})
    assert line == ('skipped records: 13 of the validation records (--skip_corrupt_records: 13 '
                    'readable in shards left out at start-up, not among the records the header '
                    'counted); the 64 examples scored are distinct records, each scored once')
    assert skip_report.skipped_line({'skipped_records': None}) is None
