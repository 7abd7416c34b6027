"""GZIP- and ZLIB-compressed TFRecord shards (issue 33.4): detected per shard with no flag, read
with their compression, walked at start-up (truncation and damage named), counted in the header.
Before, a compressed shard was "corrupt" and --skip_corrupt_records dropped every one."""

import gzip
import os

import numpy as np
import pytest
import tensorflow as tf

from tests import input_helpers as h
from tf_cnn_benchmarks import cnn_util
from tf_cnn_benchmarks.input_data import bad_images, compression, dataset_info


@pytest.fixture
def plain(tmp_path):
    """4 train shards of 6 solid-colour records (labels 1..3), uncompressed."""
    h.solid_shards(str(tmp_path / 'plain'), num_shards=4, per_shard=6)
    return str(tmp_path / 'plain')


def _images(data_dir, **kwargs):
    """Every image and label of an evaluation-mode read (tf.data, files in order), 24 records."""
    p = h.make_params(data_dir=data_dir, use_datasets=True, **kwargs)
    pipeline, outputs, _ = h.run_pipeline(p, steps=6, train=False, subset='train')
    images = np.concatenate([i for step in outputs for i, _ in step])
    labels = np.concatenate([lab for step in outputs for _, lab in step])
    return pipeline, images, labels


def test_detect(tmp_path):
    from tf_cnn_benchmarks.input_data import compression
    kinds = {}
    for kind in ('', 'GZIP', 'ZLIB'):
        path = str(tmp_path / ('f_' + (kind or 'none')))
        with tf.io.TFRecordWriter(path, tf.io.TFRecordOptions(compression_type=kind)) as w:
            w.write(b'abc' * 40)
        kinds[kind] = compression.detect(path)
    assert kinds == {'': '', 'GZIP': 'GZIP', 'ZLIB': 'ZLIB'}
    # An uncompressed record of 0x8b1f bytes starts with the GZIP magic 1f 8b.
    (path,) = h.write_shards(str(tmp_path / 'magic'), 'train', [[b'a' * 0x8b1f]])
    assert open(path, 'rb').read(2) == b'\x1f\x8b' and compression.detect(path) == ''
    # Python's gzip module writes GZIP too; a zlib-looking header over junk is not ZLIB.
    (tmp_path / 'py.gz').write_bytes(gzip.compress(open(path, 'rb').read()))
    assert compression.detect(str(tmp_path / 'py.gz')) == 'GZIP'
    (tmp_path / 'junk').write_bytes(b'\x78\x9c' + b'junk' * 10)
    assert compression.detect(str(tmp_path / 'junk')) == ''


@pytest.mark.parametrize('kinds', [['GZIP'] * 4, ['ZLIB'] * 4, ['GZIP', '', 'ZLIB', '']],
                         ids=['gzip', 'zlib', 'mixed'])
def test_compressed_shards_give_the_same_images(plain, tmp_path, kinds):
    h.copy_shards(plain, str(tmp_path / 'c'), kinds)
    dataset = dataset_info.get_dataset(h.make_params(data_dir=str(tmp_path / 'c')))
    scan = dataset.scan('train')
    assert scan.num_examples == 24 and scan.compression == tuple(kinds)
    phrase = {'gzip': '(4 GZIP-compressed)', 'zlib': '(4 ZLIB-compressed)',
              'mixed': '(1 GZIP-, 1 ZLIB-compressed)'}[
                  'mixed' if '' in kinds else kinds[0].lower()]
    assert dataset.describe('train').endswith(
        '24 examples counted in 4 TFRecord shards %s, headers checked (record CRCs as read)'
        % phrase)
    _, expected, expected_labels = _images(plain)
    _, images, labels = _images(str(tmp_path / 'c'))
    np.testing.assert_array_equal(images, expected)
    np.testing.assert_array_equal(labels, expected_labels)


def test_record_input_reads_gzip_shards_and_mixed_ones_go_to_tf_data(plain, tmp_path):
    h.copy_shards(plain, str(tmp_path / 'g'), ['GZIP'] * 4)
    p = h.make_params(data_dir=str(tmp_path / 'g'))
    pipeline, outputs, _ = h.run_pipeline(p, steps=6)  # 24 records: each once
    assert 'RecordInput' in pipeline.description
    labels = [int(x) for step in outputs for _, lab in step for x in lab]
    assert {k: labels.count(k) for k in (1, 2, 3)} == {1: 8, 2: 8, 3: 8}
    h.copy_shards(plain, str(tmp_path / 'm'), ['GZIP', '', '', ''])
    pipeline, _, _ = h.run_pipeline(h.make_params(data_dir=str(tmp_path / 'm')), steps=1)
    assert 'tf.data' in pipeline.description and \
        '(shards of mixed compression: RecordInput takes one)' in pipeline.description


@pytest.mark.parametrize('how, words', [
    ('truncated', 'GZIP-compressed: the GZIP stream ends early (the file is truncated) '),
    ('flipped', 'GZIP-compressed: corrupt GZIP data (zlib: '),
    ('extra', 'GZIP-compressed: bytes after the end of the GZIP stream after record 6 (index 5)'),
])
def test_a_damaged_gzip_shard_is_named_at_start_up(plain, tmp_path, how, words, capsys):
    paths = h.copy_shards(plain, str(tmp_path / 'g'), ['GZIP'] * 4)
    raw = bytearray(open(paths[2], 'rb').read())
    raw = {'truncated': raw[:len(raw) // 2], 'extra': raw + b'\0\0'}.get(how, raw)
    if how == 'flipped':
        raw[len(raw) // 2] ^= 0xFF
    open(paths[2], 'wb').write(bytes(raw))
    with pytest.raises(cnn_util.DataError) as info:
        dataset_info.get_dataset(h.make_params(data_dir=str(tmp_path / 'g'))).scan('train')
    assert str(info.value).startswith('corrupt TFRecord shard %s: %s' % (paths[2], words))
    assert str(info.value).endswith('(--skip_corrupt_records skips such shards)')
    skipping = dataset_info.get_dataset(h.make_params(data_dir=str(tmp_path / 'g'),
                                                      skip_corrupt_records=True))
    scan = skipping.scan('train')
    assert scan.files == tuple(paths[:2] + paths[3:]) and scan.num_examples == 18
    assert 'skipped corrupt shard %s (GZIP-compressed: ' % paths[2] in capsys.readouterr().err


def test_the_scan_cache_keeps_the_compression(plain, tmp_path, monkeypatch):
    from tf_cnn_benchmarks.input_data import compression
    monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path / 'cache'))
    paths = h.copy_shards(plain, str(tmp_path / 'g'), ['GZIP', '', 'ZLIB', ''])
    then = 1700000000
    for path in paths:
        os.utime(path, (then, then))
    first = dataset_info.get_dataset(h.make_params(data_dir=str(tmp_path / 'g'))).scan('train')
    monkeypatch.setattr(compression, 'walk', None)  # a second scan decompresses nothing
    monkeypatch.setattr(compression, 'detect', None)
    again = dataset_info.get_dataset(h.make_params(data_dir=str(tmp_path / 'g'))).scan('train')
    assert again.compression == first.compression == ('GZIP', '', 'ZLIB', '')
    assert again.records_per_file == (6, 6, 6, 6)


def test_undecodable_images_and_bad_crcs_are_located_in_gzip_shards(tmp_path):
    from tf_cnn_benchmarks.input_data import corrupt_records
    good = h.example(h.image_bytes(8, 8), 1)
    bad = h.example(b'not an image', 1, filename='bad.jpg')
    source = h.write_shards(str(tmp_path / 'p'), 'train', [[good] * 3, [good, good, bad]])
    paths = h.copy_shards(str(tmp_path / 'p'), str(tmp_path / 'g'), ['GZIP', 'GZIP'])
    assert bad_images.locate_unusable_record(paths) == (
        "record 3 (index 2) of %s (image/filename 'bad.jpg'): its image does not decode" % paths[1])
    # A record written with a bad data CRC, then compressed (the stream's own check passes).
    start = h.damage_record(source[0], 1)
    open(paths[0], 'wb').write(gzip.compress(open(source[0], 'rb').read()))
    assert dataset_info.get_dataset(h.make_params(data_dir=str(tmp_path / 'g'))).scan(
        'train').num_examples == 6
    assert corrupt_records.locate(paths, 'corrupted record at %d' % (start + 12)) == (
        'record 2 (index 1, byte %d of the GZIP stream uncompressed) of %s: its data fails its CRC'
        % (start, paths[0]))


def test_every_message_names_a_record_from_1_with_its_index_from_0():
    # Before: 'record 2' was the third record in some messages (an index) and 'after record 2'
    # the second in others (a count).
    assert compression.record_name(2) == 'record 3 (index 2)'
    assert compression.record_name(5, 'byte 8427') == 'record 6 (index 5, byte 8427)'
    assert compression.after_records(3) == 'after record 3 (index 2)'
    assert compression.after_records(0) == 'before the end of the first record'
