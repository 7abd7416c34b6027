"""Forward-only runs: the subset they read is the one the header names, and their step lines
have the original's columns (loss, top-1 and top-5 accuracy), with values."""

import pytest

from tf_cnn_benchmarks import run_header

import input_helpers as h
from helpers import dataset_block, tiny_bench

WIDTH = run_header.HEADER_VALUE_WIDTH


@pytest.fixture(scope='module')
def train_only_dir(tmp_path_factory):
    """A data directory with train shards only (2 x 6 solid images), no validation split."""
    folder = str(tmp_path_factory.mktemp('train_only'))
    h.solid_shards(folder, 'train')
    return folder


def test_forward_only_reads_train_like_the_header_says(train_only_dir):
    # Before: the pipeline read validation while the header said train, so a train-only
    # directory failed with "no files matching validation-*-of-*".
    bench = tiny_bench(data_dir=train_only_dir, forward_only=True, num_batches=2)
    lines = bench.info_lines()
    assert dataset_block(lines)[2] == ['train: 12 examples counted in 2 TFRecord shards, '
                                       'headers checked (record CRCs as read)']
    result = bench.run()
    assert result['num_steps'] == 2 and result['plan']['subset'] == 'train'
    assert result['plan']['examples_per_epoch'] == 12


@pytest.mark.parametrize('subset, expected', [(None, 'train'), ('train', 'train'),
                                              ('validation', 'validation')])
def test_forward_only_pipeline_and_header_agree(subset, expected, imagenet_dir):
    bench = tiny_bench(data_dir=imagenet_dir, forward_only=True, data_subset=subset)
    pipeline = bench.build_graph().pipeline
    assert bench.plan.subset == pipeline.subset == expected
    examples = {'train': 512, 'validation': 128}[expected]
    lines = bench.info_lines()
    counts = ('%s: %d examples counted in %d TFRecord shards, headers checked (record CRCs as '
              'read)' % (expected, examples, examples // 64))
    value, folder, shown = dataset_block(lines)
    # (a path longer than the line is shown with its middle elided)
    assert (value, folder) == ('imagenet', run_header.fit_path(imagenet_dir, WIDTH))
    assert all(len(x) <= 100 for x in lines)  # wrapped between phrases (validation's 105)
    assert ', '.join(shown) == counts
    assert pipeline.description.startswith('imagenet (inferred from the files in %s), %s;'
                                           % (imagenet_dir, counts))


@pytest.mark.parametrize('flags, loss_name', [
    ({}, 'total_loss'), (dict(print_training_accuracy=True), 'total_loss'),
    (dict(loss_type_to_report='base_loss'), 'base_loss')])
def test_forward_only_step_lines_have_the_originals_columns(tiny_run, capsys, flags, loss_name):
    # The original's forward-only lines: `Step Img/sec total_loss top_1_accuracy
    # top_5_accuracy`, with or without --print_training_accuracy. Before: `Step Img/sec` alone,
    # and with the flag the accuracy in columns 3-4 instead of 4-5.
    # 2 classes: every label is in the top 5 (top 2), so the top-5 column is exactly 1.000.
    result = tiny_run(forward_only=True, num_classes=2, num_batches=2, display_every=1,
                      **flags)
    lines = capsys.readouterr().out.splitlines()
    start = lines.index('Step\tImg/sec\t%s\ttop_1_accuracy\ttop_5_accuracy' % loss_name)
    # Without warm-up the 'Timed part:' estimate follows the first step's line.
    step_lines = [line for line in lines[start + 1:] if line.split('\t')[0].isdigit()]
    assert len(step_lines) == 2
    for step, line in zip((1, 2), step_lines):
        fields = line.split('\t')
        assert fields[0] == str(step) and fields[1].startswith('images/sec: ')
        assert len(fields) == 5 and fields[4] == '1.000'
        assert fields[3] in ('0.000', '0.250', '0.500', '0.750', '1.000')  # 4 images a batch
        # The forward pass's cross entropy over 2 classes (the original printed 0.000 there).
        assert 0.0 < float(fields[2]) < 20.0
    # The loss column is kept (before: None, a figure printed and kept nowhere).
    assert ['%.3f' % loss for loss in result['losses']] == [
        line.split('\t')[2] for line in step_lines]
