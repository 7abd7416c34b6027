"""Non-ASCII paths under an ASCII file system encoding (LC_ALL=C, no UTF-8 mode): the converter
and a run over its shards work; a path TensorFlow cannot be given is one line naming the
encoding."""

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.cli

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ASCII = dict(os.environ, LC_ALL='C', PYTHONUTF8='0', PYTHONCOERCECLOCALE='0',
             TF_CPP_MIN_LOG_LEVEL='3')


def _run(args, timeout=300):
    return subprocess.run([sys.executable] + args, cwd=REPO, env=ASCII, capture_output=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def _images(root):
    from PIL import Image
    for folder, prefix in (('café', 'a'), ('chat', 'é')):  # a class and an image not ASCII
        os.makedirs(os.path.join(root, folder))
        for i in range(3):
            Image.new('RGB', (8, 8), (40 * i, 0, 0)).save(
                os.path.join(root, folder, '%s%d.jpg' % (prefix, i)))


@pytest.mark.timeout(600)
def test_non_ascii_paths_under_an_ascii_locale(tmp_path):
    _images(str(tmp_path / 'in'))
    out = str(tmp_path / 'données')
    converted = _run(['-m', 'tools.build_imagenet_tfrecords', '--input_dir=' + str(tmp_path / 'in'),
                      '--output_dir=' + out, '--num_train_shards=1', '--num_validation_shards=1',
                      '--progress=false'])
    assert converted.returncode == 0, converted.stderr.decode()
    assert sorted(os.listdir(out)) == ['class_counts.txt', 'labels.txt', 'train-00000-of-00001',
                                       'validation-00000-of-00001']
    with open(os.path.join(out, 'labels.txt'), encoding='utf-8') as f:
        assert f.read() == '1 café café\n2 chat chat\n'
    import tensorflow as tf
    names = set()
    for record in tf.compat.v1.io.tf_record_iterator(os.path.join(out, 'train-00000-of-00001')):
        feature = tf.train.Example.FromString(record).features.feature
        names.add(feature['image/filename'].bytes_list.value[0].decode('utf-8'))
        names.add(feature['image/class/synset'].bytes_list.value[0].decode('utf-8'))
    assert {'café', 'é0.jpg'} & names  # the names' own bytes
    common = ['tf_cnn_benchmarks.py', '--model=trivial', '--batch_size=2', '--image_size=16',
              '--num_batches=1', '--num_warmup_batches=0', '--data_dir=' + out]
    run = _run(common)  # shards in a folder named données are read (each record's CRCs checked)
    assert run.returncode == 0, run.stderr.decode()
    assert b'headers checked (record CRCs as read)' in run.stdout
    assert b'total images/sec' in run.stdout
    refused = _run(common + ['--train_dir=' + str(tmp_path / 'entraîné')])
    err = refused.stderr.decode('ascii')
    assert refused.returncode == 2 and err.count('\n') == 1, err
    assert err.startswith('error: --train_dir=')
    assert ('cannot be used: its name is not ASCII and this process reads names as ascii (the '
            'locale), so TensorFlow cannot be given it; run under a UTF-8 locale') in err
    assert not os.path.exists(tmp_path / 'entraîné')
