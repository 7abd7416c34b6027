"""Forward-only runs: the subset they read is the one the header names, and the accuracy
columns of --print_training_accuracy carry values."""

import pytest

import input_helpers as h
from helpers import tiny_bench


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
    assert 'Dataset:     imagenet (inferred from the files in %s), train: 12 examples counted ' \
           'in 2 TFRecord shards, CRCs checked' % train_only_dir in bench.info_lines()
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
    header = [x for x in bench.info_lines() if x.startswith('Dataset:')]
    assert header == ['Dataset:     imagenet (inferred from the files in %s), %s: %d examples '
                      'counted in %d TFRecord shards, CRCs checked'
                      % (imagenet_dir, expected, examples, examples // 64)]
    assert pipeline.description.startswith(header[0][len('Dataset:     '):] + ';')
