"""The classes of the model: --num_classes, else the converter's labels.txt (labels 1..K plus
background 0), else the published count (ImageNet 1001, CIFAR-10 10)."""

import os

import numpy as np
import pytest

from tf_cnn_benchmarks import cnn_util, params
from tf_cnn_benchmarks.input_data import class_labels, dataset_info
from tf_cnn_benchmarks.lifecycle import checkpoints

import helpers
import input_helpers as h
from helpers import tiny_bench, tiny_params


def _labelled_dir(folder, labels_txt, labels=(1, 2, 3)):
    """Solid-colour train and validation shards with `labels` cycling, and a labels.txt."""
    os.makedirs(folder, exist_ok=True)
    for subset in ('train', 'validation'):
        records = [h.example(h.image_bytes(20, 20, colour=h.CLASS_COLOURS[(k % 3) + 1]), label)
                   for k, label in enumerate(labels * 2)]
        h.write_shards(folder, subset, [records])
    if labels_txt is not None:
        with open(os.path.join(folder, 'labels.txt'), 'w') as f:
            f.write(labels_txt)
    return str(folder)


CONVERTER_LABELS = '1 ant small insect\n2 bee bee\n3 moth moth\n'


def test_labels_txt_gives_k_plus_one_classes(tmp_path):
    data_dir = _labelled_dir(tmp_path, CONVERTER_LABELS)
    dataset = dataset_info.get_dataset(tiny_params(data_dir=data_dir))
    assert dataset.num_classes == 4
    assert dataset.describe_classes() == \
        '4 (labels.txt in --data_dir: 3 classes, labels 1..3, + background 0)'


def test_without_labels_txt_imagenet_keeps_1001(tmp_path):
    data_dir = _labelled_dir(tmp_path, None)
    dataset = dataset_info.get_dataset(tiny_params(data_dir=data_dir))
    assert dataset.describe_classes() == "1001 (imagenet's: 1000 classes + background 0)"
    synthetic = dataset_info.get_dataset(tiny_params(num_classes=None))  # the dataset's
    assert synthetic.num_classes == 1001


@pytest.mark.parametrize('text, labels', [
    ('# label synset text\n\n1 a A\n2 b\n', [1, 2]),  # comments, blank lines, no text
    ('0 cat\n1 dog\n', [0, 1]),                       # 0 as a real class: no background
])
def test_read_labels_file(tmp_path, text, labels):
    path = tmp_path / 'labels.txt'
    path.write_text(text)
    assert class_labels.read_labels_file(str(path)) == labels


def test_labels_starting_at_zero_have_no_background(tmp_path):
    data_dir = _labelled_dir(tmp_path, '0 cat\n1 dog\n2 owl\n', labels=(0, 1, 2))
    dataset = dataset_info.get_dataset(tiny_params(data_dir=data_dir))
    assert dataset.describe_classes() == '3 (labels.txt in --data_dir: 3 classes, labels 0..2)'


@pytest.mark.parametrize('text, message', [
    ('1 a\nbee b\n', 'line 2 is not "<label> <synset> <text>" with a label >= 0: \'bee b\'; '
                     'fix the file, or remove it and give --num_classes'),
    ('1 a\n-1 b\n', 'line 2 is not "<label> <synset> <text>" with a label >= 0: \'-1 b\''),
    ('1 a\n2 b\n1 c\n', 'lists label 1 twice (lines 1 and 3); fix the file'),
    ('# only a comment\n', 'lists no classes; fix the file, or remove it and give '
                           '--num_classes'),
])
def test_bad_labels_file_is_a_data_error(tmp_path, text, message):
    path = tmp_path / 'labels.txt'
    path.write_text(text)
    with pytest.raises(cnn_util.DataError) as raised:
        class_labels.read_labels_file(str(path))
    assert str(raised.value).startswith('%s %s' % (path, message))


def test_num_classes_flag_overrides_and_must_fit_the_labels(tmp_path):
    data_dir = _labelled_dir(tmp_path, CONVERTER_LABELS)
    dataset = dataset_info.get_dataset(tiny_params(data_dir=data_dir, num_classes=10))
    assert dataset.describe_classes() == \
        '10 (--num_classes; labels.txt in --data_dir: 3 classes, labels 1..3, + background 0)'
    with pytest.raises(params.ParamsError) as raised:
        dataset_info.get_dataset(tiny_params(data_dir=data_dir, num_classes=3))
    assert str(raised.value) == (
        '--num_classes=3 is too small for %s/labels.txt (3 classes, labels 1..3, + background '
        '0): give --num_classes >= 4, or drop it to use 4' % data_dir)


def test_num_classes_flag_for_synthetic_and_cifar10(tmp_path):
    synthetic = dataset_info.get_dataset(tiny_params(num_classes=7))
    assert synthetic.describe_classes() == '7 (--num_classes)'
    cifar = h.write_cifar(str(tmp_path / 'cifar'))
    assert dataset_info.get_dataset(tiny_params(data_dir=cifar)).describe_classes() == \
        "10 (cifar10's)"
    with pytest.raises(params.ParamsError, match=r"^--num_classes=5 is too small for "
                       r"CIFAR-10's labels 0..9: give --num_classes >= 10 or drop it$"):
        dataset_info.get_dataset(tiny_params(data_dir=cifar, num_classes=5))
    with pytest.raises(params.ParamsError, match=r'^--num_classes must be >= 2\. Received: '
                       r'num_classes=1$'):
        params.validate_params(tiny_params(num_classes=1))


def test_training_builds_a_model_of_the_dataset_classes(tmp_path):
    data_dir = _labelled_dir(tmp_path / 'data', CONVERTER_LABELS)
    train_dir = str(tmp_path / 'train')
    bench = tiny_bench(data_dir=data_dir, train_dir=train_dir, num_batches=2)
    assert bench.plan.num_classes == 4
    assert 'Classes:     4 (labels.txt in --data_dir: 3 classes, labels 1..3, + background 0)' \
        in bench.info_lines()
    result = bench.run()
    assert result['plan']['num_classes'] == 4
    values = helpers.read_checkpoint_values(result['checkpoint_path'])
    assert values['cg/affine2/weights'].shape == (4096, 4)  # the output layer: 4 logits
    assert np.isfinite(result['losses']).all()
    # A checkpoint of 4 classes does not fit a model of 1001 (the old default for such data).
    with pytest.raises(checkpoints.CheckpointError) as raised:
        tiny_bench(data_dir=data_dir, train_dir=train_dir, eval=True, num_classes=1001).run()
    assert 'cg/affine2/biases has shape [4] there and [1001] here (another --model, ' \
        '--image_size, dataset or --num_classes?); use another --train_dir' in str(raised.value)


def test_a_label_beyond_labels_txt_names_where_the_classes_come_from(tmp_path):
    data_dir = _labelled_dir(tmp_path, '1 ant\n2 bee\n')  # the shards also hold label 3
    with pytest.raises(cnn_util.DataError) as raised:
        tiny_bench(data_dir=data_dir, batch_size=6, num_batches=1, distortions=False).run()
    assert str(raised.value).startswith(
        'label out of range: labels must lie in [0, 3), the classes of the model (labels.txt in '
        '%s: 2 classes, labels 1..2, + background 0; --num_classes sets them) (-1: stored so, '
        'or a record without image/class/label); a batch of %s train holds' % (data_dir,
                                                                              data_dir))
    assert ': label 3 outside [0, 3)' in str(raised.value)  # the first such record, named


# --- Through the command: the Classes line, and each classes error as one line.

@pytest.mark.cli
@pytest.mark.parametrize('case, status, expected', [
    ('runs', 0, 'Classes:     4 (labels.txt in --data_dir: 3 classes, labels 1..3, + '
                'background 0)'),
    ('flag', 0, 'Classes:     9 (--num_classes; labels.txt in --data_dir: 3 classes, labels '
                '1..3, + background 0)'),
    ('too_small', 2, 'error: --num_classes=3 is too small for {d}/labels.txt (3 classes, '
                     'labels 1..3, + background 0): give --num_classes >= 4, or drop it to '
                     'use 4'),
    ('bad_file', 1, 'error: {d}/labels.txt line 2 is not "<label> <synset> <text>" with a '
                    "label >= 0: 'two bee'; fix the file, or remove it and give --num_classes"),
])
def test_classes_through_the_command(tmp_path, case, status, expected):
    text = '1 one ant\ntwo bee\n' if case == 'bad_file' else CONVERTER_LABELS
    data_dir = _labelled_dir(tmp_path, text)
    flag = {'flag': ['--num_classes=9'], 'too_small': ['--num_classes=3']}.get(case, [])
    proc = helpers.run_command('--model=trivial', '--batch_size=2', '--image_size=16',
                               '--num_batches=1', '--num_warmup_batches=0',
                               '--data_dir=%s' % data_dir, *flag)
    assert proc.returncode == status, proc.stderr
    assert 'Traceback' not in proc.stderr
    expected = expected.format(d=data_dir)
    if status:
        assert [x for x in proc.stderr.splitlines() if x.startswith('error: ')] == [expected]
    else:
        assert expected in proc.stdout.splitlines()


def test_a_labels_txt_directory_is_an_error_not_ignored(tmp_path):
    data_dir = _labelled_dir(tmp_path, None)
    os.mkdir(os.path.join(data_dir, 'labels.txt'))
    with pytest.raises(cnn_util.DataError) as raised:
        dataset_info.get_dataset(tiny_params(data_dir=data_dir))
    assert str(raised.value) == (
        "cannot read %s/labels.txt: [Errno 21] Is a directory: '%s/labels.txt'; fix the file, "
        'or remove it and give --num_classes' % (data_dir, data_dir))
