"""A training run's tf.data input keeps its read order with its seed, unless
--datasets_sloppy_parallel_interleave asks otherwise (preprocessing._TfDataPipeline.sloppy),
and its random draws repeat too where TensorFlow's op determinism is asked
(runtime_env.op_determinism)."""

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.framework import tensor_util

from tf_cnn_benchmarks import preprocessing
from tf_cnn_benchmarks.input_data import dataset_info
from tf_cnn_benchmarks.runtime import runtime_env

import helpers
import input_helpers

tf1 = tf.compat.v1


@pytest.fixture(scope='module')
def shards(tmp_path_factory):
    """4 training shards of 6 solid-colour records (labels 1..3), the tests' own."""
    folder = str(tmp_path_factory.mktemp('order'))
    input_helpers.solid_shards(folder, num_shards=4)
    return folder


def _dataset_ops(p) -> dict:
    """{op: (its 'deterministic' attr, the parallel calls it was given)} of the training input
    pipeline of `p`, as built into a graph (the map's calls; the interleave's: None)."""
    graph = tf.Graph()
    with graph.as_default():
        pipeline = preprocessing.make_input_pipeline(
            p, dataset_info.get_dataset(p), batch_size=4, image_size=16, num_classes=1001,
            data_format='NHWC', dtype=tf.float32, train=True)
        pipeline.build(['/cpu:0'])
    nodes = {n.name: n for n in graph.as_graph_def().node}
    ops = {}
    for node in nodes.values():
        if node.op in ('ParallelMapDatasetV2', 'ParallelInterleaveDatasetV4'):
            calls = None
            if node.op == 'ParallelMapDatasetV2':
                calls = int(tensor_util.MakeNdarray(nodes[node.input[1]].attr['value'].tensor))
            ops[node.op] = (node.attr['deterministic'].s.decode(), calls)
    return ops


@pytest.fixture
def op_determinism(monkeypatch):
    """TensorFlow's op determinism asked (TF_DETERMINISTIC_OPS=1), as the pipeline sees it."""
    monkeypatch.setattr(runtime_env, 'op_determinism', lambda: True)


def test_the_training_input_keeps_its_order_unless_sloppy_is_asked(shards):
    p = input_helpers.make_params(data_dir=shards, data_name='imagenet', use_datasets=True)
    # In order, several batches processed at once (the parallel map's speed is kept).
    assert _dataset_ops(p) == {'ParallelInterleaveDatasetV4': ('true', None),
                               'ParallelMapDatasetV2': ('true', tf.data.AUTOTUNE)}
    sloppy = p._replace(datasets_sloppy_parallel_interleave=True)
    assert _dataset_ops(sloppy) == {'ParallelInterleaveDatasetV4': ('false', None),
                                    'ParallelMapDatasetV2': ('false', tf.data.AUTOTUNE)}


def test_op_determinism_processes_one_training_batch_at_a_time(shards, op_determinism):
    # A parallel map's random ops (crop, flip, colour) would hand their draws to the batches
    # in the order the calls reach them.
    p = input_helpers.make_params(data_dir=shards, data_name='imagenet', use_datasets=True)
    assert _dataset_ops(p) == {'ParallelInterleaveDatasetV4': ('true', None),
                               'ParallelMapDatasetV2': ('true', 1)}


def test_the_order_of_the_labels_repeats_without_op_determinism(shards):
    p = input_helpers.make_params(data_dir=shards, data_name='imagenet', use_datasets=True,
                                  distort_color=True)
    runs = [[b[0][1] for b in input_helpers.run_pipeline(p, steps=6, image_size=16)[1]]
            for _ in range(3)]
    assert len({tuple(labels) for labels in runs[0]}) > 1  # the batches differ: an order
    for run in runs[1:]:
        for labels, first in zip(run, runs[0], strict=True):
            np.testing.assert_array_equal(labels, first)


def test_the_same_seed_gives_the_same_batches_colour_distortions_included(shards,
                                                                         op_determinism):
    p = input_helpers.make_params(data_dir=shards, data_name='imagenet', use_datasets=True,
                                  distort_color=True)
    runs = [input_helpers.run_pipeline(p, steps=6, image_size=16)[1] for _ in range(3)]
    for run in runs[1:]:
        for (images, labels), (first_images, first_labels) in zip(
                [b[0] for b in run], [b[0] for b in runs[0]], strict=True):
            np.testing.assert_array_equal(labels, first_labels)
            np.testing.assert_array_equal(images, first_images)


def test_two_runs_of_one_real_data_command_print_the_same_losses(shards, op_determinism):
    run = dict(data_dir=shards, data_name='imagenet', use_datasets=True, num_batches=6,
               distort_color=True, num_classes=None)
    first, second = helpers.tiny_losses(**run), helpers.tiny_losses(**run)
    np.testing.assert_array_equal(first, second)
    assert len(set(first.tolist())) > 1  # the batches differ: an order to keep


def test_each_device_takes_its_batch_in_order(shards, op_determinism):
    """Two devices' batches are taken in one session.run: each get_next waits for the one
    before it, so device 0 always gets the earlier batch (independent towers, which train on
    what they get, then repeat too)."""
    p = input_helpers.make_params(data_dir=shards, data_name='imagenet', use_datasets=True)
    graph = tf.Graph()
    with graph.as_default():
        pipeline = preprocessing.make_input_pipeline(
            p, dataset_info.get_dataset(p), batch_size=4, image_size=16, num_classes=1001,
            data_format='NHWC', dtype=tf.float32, train=True)
        pipeline.build(['/cpu:0', '/cpu:1'])
    gets = [n for n in graph.as_graph_def().node if n.op == 'IteratorGetNext']
    assert len(gets) == 2
    assert gets[0].input == ['input_pipeline/OneShotIterator']
    assert '^' + gets[0].name in gets[1].input
    run = dict(data_dir=shards, data_name='imagenet', use_datasets=True, num_batches=4,
               num_classes=None, device='cpu', num_gpus=2, variable_update='independent')
    np.testing.assert_array_equal(helpers.tiny_losses(**run), helpers.tiny_losses(**run))


def test_cifar10_files_repeat_too(tmp_path, op_determinism):
    # Solid images padded by 4 zeros and cropped at random: each crop's offsets show.
    folder = input_helpers.write_cifar(str(tmp_path / 'cifar'), counts=(8, 8, 8, 8, 8))
    run = dict(data_dir=folder, data_name='cifar10', num_batches=5, num_classes=None,
               image_size=None)
    first, second = helpers.tiny_losses(**run), helpers.tiny_losses(**run)
    np.testing.assert_array_equal(first, second)


@pytest.mark.parametrize('determinism', [False, True])
def test_the_sloppy_flag_says_op_determinism_overrides_it(shards, monkeypatch, determinism):
    # TensorFlow's op determinism keeps every tf.data order, the sloppy flag's too: it said
    # nothing and the runs repeated.
    from tf_cnn_benchmarks.preflight import ineffective_flags
    monkeypatch.setattr(runtime_env, 'op_determinism', lambda: determinism)
    p = input_helpers.make_params(data_dir=shards, data_name='imagenet', use_datasets=True,
                                  datasets_sloppy_parallel_interleave=True)
    warned = [m for m in ineffective_flags.ignored_flags(p, 'imagenet')
              if 'sloppy' in m]
    assert warned == (['--datasets_sloppy_parallel_interleave has no effect with '
                       'TensorFlow\'s op determinism on (TF_DETERMINISTIC_OPS: it keeps every '
                       'tf.data order)'] if determinism else [])
