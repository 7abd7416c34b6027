"""Dataset descriptions, name inference, shard checks (truncation, corruption, counts), CIFAR-10."""

import os
import pickle
import shutil
import struct

import pytest

from tests import input_helpers as h
from tf_cnn_benchmarks import cnn_util
from tf_cnn_benchmarks.input_data import dataset_info, record_crc
from tf_cnn_benchmarks.runtime import file_systems


def _dataset(folder, **kwargs):
    return dataset_info.get_dataset(h.make_params(data_dir=str(folder), **kwargs))


def test_published_descriptions():
    assert dataset_info.IMAGENET.num_classes == 1001
    assert dataset_info.IMAGENET.published_examples == {'train': 1281167, 'validation': 50000}
    assert dataset_info.CIFAR10.num_classes == 10 and dataset_info.CIFAR10.image_size == 32
    assert dataset_info.CIFAR10.published_examples == {'train': 50000, 'validation': 10000}


def test_synthetic_without_data_dir():
    ds = dataset_info.get_dataset(h.make_params())
    assert ds.synthetic and ds.name == 'synthetic' and ds.num_examples('train') == 1281167
    assert 'published' in ds.describe('train')
    cifar = dataset_info.get_dataset(h.make_params(data_name='cifar10'))
    assert cifar.synthetic and cifar.num_classes == 10 and cifar.num_examples('validation') == 10000


def test_masked_crc_matches_tensorflow_writer(tmp_path):
    (path,) = h.write_shards(tmp_path, 'train', [[b'hello']])
    raw = open(path, 'rb').read()
    assert struct.unpack('<I', raw[8:12])[0] == record_crc.masked_crc32c(raw[:8])
    assert struct.unpack('<I', raw[-4:])[0] == record_crc.masked_crc32c(b'hello')


def test_infers_imagenet_and_counts_records(tmp_path):
    h.write_shards(tmp_path, 'train', [[b'a', b'b'], [b'c']])
    h.write_shards(tmp_path, 'validation', [[b'd']])
    ds = _dataset(tmp_path)
    assert ds.name == 'imagenet' and ds.inferred and not ds.synthetic
    assert ds.num_examples('train') == 3 and ds.num_examples('validation') == 1
    text = ds.describe('train')
    assert 'inferred' in text and '3 examples counted in 2 TFRecord shards' in text
    assert text.endswith(', headers checked (record CRCs as read)')


def test_real_shards(imagenet_dir):
    ds = dataset_info.get_dataset(h.make_params(data_dir=imagenet_dir))
    assert ds.name == 'imagenet'
    assert ds.num_examples('train') == 512 and ds.num_examples('validation') == 128
    assert len(ds.scan('train').files) == 8


def test_the_generated_sample_set_has_the_shared_sets_shape(sample_imagenet_dir):
    # What the real-data tests get on a clone without ../shared/data (tests/conftest.py).
    assert sorted(os.listdir(sample_imagenet_dir)) == (
        ['train-%05d-of-00008' % i for i in range(8)]
        + ['validation-%05d-of-00002' % i for i in range(2)])
    ds = dataset_info.get_dataset(h.make_params(data_dir=sample_imagenet_dir))
    assert ds.name == 'imagenet' and ds.num_classes == 1001
    assert ds.num_examples('train') == 512 and ds.num_examples('validation') == 128
    assert [len(list(h.tf.compat.v1.io.tf_record_iterator(f))) for f in ds.scan('train').files] \
        == [64] * 8


@pytest.mark.parametrize('setup, words', [
    ('missing', ['does not exist']),
    ('empty', ['is empty', 'train-NNNNN-of-NNNNN']),
    ('unrelated', ['no dataset files', 'notes.txt', 'train-NNNNN-of-NNNNN']),
])
def test_directory_errors_name_directory_and_pattern(tmp_path, setup, words):
    folder = tmp_path / 'data'
    if setup != 'missing':
        folder.mkdir()
    if setup == 'unrelated':
        (folder / 'notes.txt').write_text('x')
    with pytest.raises(cnn_util.DataError) as info:
        _dataset(folder)
    message = str(info.value)
    assert str(folder) in message and '\n' not in message
    for word in words:
        assert word in message


@pytest.mark.parametrize('layout, example, input_dir, output_dir', [
    ('train/n01440764/a.JPEG', 'train/n01440764/a.JPEG', 'data/train', 'data_tfrecords'),
    ('n01440764/a.JPEG', 'n01440764/a.JPEG', 'data', 'data_tfrecords'),
])
def test_jpeg_class_folders_name_the_converter(tmp_path, layout, example, input_dir, output_dir):
    folder = tmp_path / 'data'
    (folder / layout).parent.mkdir(parents=True)
    (folder / layout).write_bytes(b'\xff\xd8\xff')
    (folder / 'val').mkdir()  # ImageNet's validation images, loose
    (folder / 'val' / 'ILSVRC2012_val_00000001.JPEG').write_bytes(b'\xff\xd8\xff')
    hint = ('it holds images in class folders (%s), not TFRecord shards: convert them with '
            '`tf_cnn_build_tfrecords --input_dir=%s --output_dir=%s`, then give --data_dir=%s; '
            'the converter splits --validation_fraction of each class off for validation'
            % (example, tmp_path / input_dir, tmp_path / output_dir, tmp_path / output_dir))
    for kwargs in ({}, {'data_name': 'imagenet'}):  # inferred, and named
        with pytest.raises(cnn_util.DataError) as info:
            _dataset(folder, **kwargs).subset_files('train')
        assert str(info.value).endswith('; ' + hint), str(info.value)


def test_a_nested_folder_in_a_class_folder_keeps_the_input_dir(tmp_path):
    """A user's finding: class folders 'big dog' and 'cat', with one image in cat/sub/, had the
    hint convert data/cat (as if cat/ were ImageNet's train/) instead of data."""
    for name in ('big dog/a.jpg', 'cat/b.jpg', 'cat/sub/c.jpg'):
        (tmp_path / 'data' / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / 'data' / name).write_bytes(b'\xff\xd8\xff')
    with pytest.raises(cnn_util.DataError) as info:
        _dataset(tmp_path / 'data')
    assert ('(big dog/a.jpg), not TFRecord shards: convert them with `tf_cnn_build_tfrecords '
            '--input_dir=%s --output_dir=%s_tfrecords`' % ((tmp_path / 'data',) * 2)
            in str(info.value)), str(info.value)


def test_loose_images_say_the_converter_needs_class_folders(tmp_path):
    (tmp_path / 'a.jpg').write_bytes(b'\xff\xd8\xff')
    with pytest.raises(cnn_util.DataError) as info:
        _dataset(tmp_path)
    assert str(info.value).endswith(
        '; it holds image files (a.jpg), not TFRecord shards: put them in one sub-folder per '
        'class and convert them with `tf_cnn_build_tfrecords --input_dir=%s --output_dir=%s'
        '_tfrecords`, then give --data_dir=%s_tfrecords' % (tmp_path, tmp_path, tmp_path))


def test_named_dataset_without_matching_files(tmp_path):
    h.write_cifar(tmp_path)
    with pytest.raises(cnn_util.DataError, match=r'no files matching train-\*-of-\* in'):
        _dataset(tmp_path, data_name='imagenet').scan('train')
    h.write_shards(tmp_path / 'only_train', 'train', [[b'a']])
    with pytest.raises(cnn_util.DataError, match=r'validation-\*-of-\*'):
        _dataset(tmp_path / 'only_train').num_examples('validation')


def test_a_folder_of_the_other_subset_names_it_and_the_flag_that_reads_it(tmp_path):
    """A user's finding: a folder of validation shards only, used for training, said 'no
    files matching train-*-of-*' and told them to give a folder of train shards."""
    h.write_shards(tmp_path / 'val', 'validation', [[b'a'], [b'b']])
    with pytest.raises(cnn_util.DataError) as info:
        _dataset(tmp_path / 'val').scan('train')
    assert str(info.value) == (
        'no files matching train-*-of-* in --data_dir %s (imagenet train); it holds only 2 '
        'validation shards: train on them with --data_subset=validation or evaluate them with '
        '--eval, else give the folder that holds the train data' % (tmp_path / 'val'))
    with pytest.raises(cnn_util.DataError) as info:  # a finding: '--eval' named with --eval
        _dataset(tmp_path / 'val', eval=True, data_subset='train').scan('train')
    assert str(info.value).endswith(
        'holds only 2 validation shards: evaluate them by dropping --data_subset=train (--eval '
        'reads the validation data), else give the folder that holds the train data'), info.value
    h.write_cifar(tmp_path / 'cifar', counts=(), test_count=3)
    with pytest.raises(cnn_util.DataError) as info:
        _dataset(tmp_path / 'cifar').scan('train')
    assert str(info.value).endswith('(cifar10 train); it holds only 1 validation batch file: '
                                    'train on it with --data_subset=validation or evaluate it '
                                    'with --eval, else give the folder that holds the train data')
    with pytest.raises(cnn_util.DataError, match='evaluate it by dropping --data_subset=train'):
        _dataset(tmp_path / 'cifar', eval=True, data_subset='train').scan('train')


def test_training_on_a_validation_subset_that_is_not_there_says_drop_the_flag(tmp_path):
    """Realdata 10: training with --data_subset=validation on a folder of train shards only
    was told '--eval --data_subset=train evaluates them'; the fix is to drop --data_subset."""
    h.write_shards(tmp_path / 'train', 'train', [[b'a'], [b'b']])
    with pytest.raises(cnn_util.DataError) as info:
        _dataset(tmp_path / 'train', data_subset='validation').scan('validation')
    assert str(info.value).endswith(
        'it holds only 2 train shards: train on them by dropping --data_subset=validation '
        '(training reads the train data), else give the folder that holds the validation '
        'data'), info.value
    with pytest.raises(cnn_util.DataError) as info:  # evaluations during training: as before
        _dataset(tmp_path / 'train').scan('validation')
    assert '--eval --data_subset=train evaluates them; evaluations during training need ' \
        'validation data' in str(info.value)


def test_data_name_of_another_dataset_says_what_the_folder_holds(tmp_path, imagenet_dir):
    with pytest.raises(cnn_util.DataError) as info:
        _dataset(imagenet_dir, data_name='cifar10').subset_files('train')
    assert str(info.value).endswith('(cifar10 train); it holds imagenet files: drop --data_name '
                                    '(it is inferred) or give --data_name=imagenet')
    h.write_cifar(str(tmp_path))
    with pytest.raises(cnn_util.DataError, match='it holds cifar10 files: drop --data_name'):
        _dataset(tmp_path, data_name='imagenet').subset_files('train')


def test_missing_shard_and_mixed_counts(tmp_path):
    paths = h.write_shards(tmp_path, 'train', [[b'a'], [b'b'], [b'c']])
    os.remove(paths[1])
    with pytest.raises(cnn_util.DataError, match='missing indices: 1') as info:
        _dataset(tmp_path).scan('train')
    assert '-of-3' in str(info.value) and str(tmp_path) in str(info.value)
    h.write_shards(tmp_path, 'train', [[b'a'], [b'b']])
    with pytest.raises(cnn_util.DataError, match='disagree on their count'):
        _dataset(tmp_path).scan('train')


def test_a_subset_of_the_shards_says_how_to_run_it(tmp_path):
    paths = h.write_shards(tmp_path, 'train', [[b'r%d' % i] for i in range(8)])
    for path in paths[3:]:
        os.remove(path)
    with pytest.raises(cnn_util.DataError) as info:
        _dataset(tmp_path).scan('train')
    assert str(info.value) == (
        '%s has 3 train shard(s) matching train-*-of-* but their names say -of-8 (missing '
        'indices: 3, 4, 5, 6, 7; out of range: none); copy the missing shards, renumber the ones '
        'there (train-00000-of-00003 ...), or pass --allow_shard_subset to use this subset '
        'deliberately' % tmp_path)
    dataset = _dataset(tmp_path, allow_shard_subset=True)
    assert dataset.scan('train').files == tuple(paths[:3]) and dataset.num_examples('train') == 3
    assert dataset.describe('train').endswith(
        'examples counted in 3 TFRecord shards, headers checked (record CRCs as read), a '
        'subset of -of-8 (--allow_shard_subset)')


def _damage(path, how):
    raw = bytearray(open(path, 'rb').read())
    if how == 'truncated_data':
        raw = raw[:-7]
    elif how == 'truncated_header':
        raw = raw + raw[:5]
    elif how == 'bad_length':
        raw[3] ^= 0x40
    elif how == 'bad_data_crc':
        raw[14] ^= 0xFF
    open(path, 'wb').write(bytes(raw))


@pytest.mark.parametrize('how, words', [
    ('truncated_data', 'truncated: record 2 (index 1)'),
    ('truncated_header', 'stray bytes after record 2 (index 1)'),
    ('bad_length', 'corrupt length field of record 1 (index 0)'),
])
def test_corrupt_shard_is_an_error_naming_the_file(tmp_path, how, words):
    """Framing damage is found at start-up; a bad data CRC is found as the run reads the
    record (tests/test_corrupt_records.py)."""
    paths = h.write_shards(tmp_path, 'train', [[b'a' * 20, b'b' * 20], [b'c' * 20]])
    _damage(paths[0], how)
    with pytest.raises(cnn_util.DataError) as info:
        _dataset(tmp_path).scan('train')
    message = str(info.value)
    assert paths[0] in message and words in message and '--skip_corrupt_records' in message


def test_skip_corrupt_records_skips_and_reports(tmp_path, capsys):
    paths = h.write_shards(tmp_path, 'train', [[b'a' * 20, b'b' * 20, b'c' * 20], [b'd', b'e']])
    _damage(paths[0], 'truncated_data')
    ds = _dataset(tmp_path, skip_corrupt_records=True)
    scan = ds.scan('train')
    assert scan.files == (paths[1],) and scan.num_examples == 2
    assert scan.skipped_records == 2 and scan.skipped[0].path == paths[0]
    assert ds.num_examples('train') == 2
    assert '1 corrupt shard(s) skipped with 2 readable records' in ds.describe('train')
    assert 'skipped corrupt shard %s' % paths[0] in capsys.readouterr().err


def test_all_shards_corrupt_or_empty(tmp_path):
    paths = h.write_shards(tmp_path / 'bad', 'train', [[b'a' * 20]])
    _damage(paths[0], 'truncated_data')
    with pytest.raises(cnn_util.DataError) as e:
        _dataset(tmp_path / 'bad', skip_corrupt_records=True).scan('train')
    assert str(e.value) == ('every train shard in %s is corrupt: nothing is left to skip; write '
                            'them again (tf_cnn_build_tfrecords) or give the folder of intact '
                            'shards' % (tmp_path / 'bad'))
    h.write_shards(tmp_path / 'empty', 'train', [[]])
    with pytest.raises(cnn_util.DataError, match='hold no records'):
        _dataset(tmp_path / 'empty').scan('train')


def test_cifar10_inferred_and_counted(tmp_path):
    h.write_cifar(tmp_path, counts=(2, 3, 1, 1, 1), test_count=4)
    ds = _dataset(tmp_path)
    assert ds.name == 'cifar10' and ds.num_classes == 10
    assert ds.num_examples('train') == 8 and ds.num_examples('validation') == 4
    assert '8 examples counted in 5 pickle batches' in ds.describe('train')


def test_cifar10_errors(tmp_path):
    h.write_cifar(tmp_path / 'missing')
    os.remove(tmp_path / 'missing' / 'data_batch_3')
    with pytest.raises(cnn_util.DataError, match='lacks CIFAR-10 train file.*data_batch_3'):
        _dataset(tmp_path / 'missing').scan('train')
    h.write_cifar(tmp_path / 'labels', label_fn=lambda i: 12)
    with pytest.raises(cnn_util.DataError, match=r'label 12 of image 0 is outside \[0, 10\)'):
        _dataset(tmp_path / 'labels').scan('train')
    h.write_cifar(tmp_path / 'cut')
    path = tmp_path / 'cut' / 'data_batch_2'
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(cnn_util.DataError, match='cannot read CIFAR-10 batch .*data_batch_2'):
        _dataset(tmp_path / 'cut').scan('train')


class _Evil:
    def __reduce__(self):
        return (os.system, ('echo pwned',))


def test_cifar10_refuses_code_in_pickles(tmp_path):
    h.write_cifar(tmp_path)
    with open(tmp_path / 'test_batch', 'wb') as f:
        pickle.dump({b'data': _Evil(), b'labels': []}, f)
    with pytest.raises(cnn_util.DataError, match='refusing to unpickle'):
        _dataset(tmp_path).scan('validation')


def test_default_subset():
    assert dataset_info.default_subset(h.make_params()) == 'train'
    assert dataset_info.default_subset(h.make_params(eval=True)) == 'validation'
    assert dataset_info.default_subset(h.make_params(data_subset='validation')) == 'validation'


def test_a_folder_without_a_subsets_shards_names_the_remedy(tmp_path):
    h.write_shards(tmp_path / 'only_train', 'train', [[b'a']])
    with pytest.raises(cnn_util.DataError) as e:
        _dataset(tmp_path / 'only_train').num_examples('validation')
    # The other subset's shards are there: named, with the flags that read them
    # (test_a_folder_of_the_other_subset_names_it_...); the remedies of an empty folder stay.
    assert str(e.value).endswith(
        '(imagenet validation); it holds only 1 train shard: --eval --data_subset=train '
        'evaluates it; evaluations during training need validation data (tf_cnn_build_tfrecords '
        '--validation_fraction above 0 writes it)')
    (tmp_path / 'other').mkdir()
    (tmp_path / 'other' / 'README').write_text('x')
    for subset in ('validation', 'train'):
        with pytest.raises(cnn_util.DataError) as e:
            _dataset(tmp_path / 'other', data_name='imagenet').num_examples(subset)
        assert str(e.value).endswith(dataset_info._missing_subset_hint(subset))
    assert dataset_info._missing_subset_hint('validation') == (
        '; --eval reads the validation shards: convert with tf_cnn_build_tfrecords '
        '--validation_fraction above 0 (default 0.2), or give the folder that holds '
        'validation-NNNNN-of-NNNNN')
    assert dataset_info._missing_subset_hint('train') == (
        '; give the folder that holds the train-NNNNN-of-NNNNN shards (tf_cnn_build_tfrecords '
        'writes them from JPEG folders)')


def test_a_data_dir_that_is_a_dangling_link_names_the_link_and_its_target(tmp_path):
    """A new user's --data_dir was a link to an unmounted share: 'does not exist' did not say
    the link was there and its target gone (shard links already said so)."""
    expected = dataset_info._EXPECTED
    link = tmp_path / 'imagenet'
    os.symlink(str(tmp_path / 'share' / 'imagenet'), str(link))
    with pytest.raises(cnn_util.DataError) as info:
        dataset_info.infer_dataset_name(str(link))
    assert str(info.value) == (
        '--data_dir %s is a symbolic link to %s, which does not exist: mount or restore the '
        'target (an unmounted share?), or give the folder of %s' % (
            link, tmp_path / 'share' / 'imagenet', expected))
    # A folder on the way that is a dangling link (relative here) is named the same way.
    os.symlink('mnt', str(tmp_path / 'data'))
    with pytest.raises(cnn_util.DataError) as info:
        dataset_info.list_data_dir(str(tmp_path / 'data' / 'imagenet'))
    assert str(info.value) == (
        '--data_dir %s does not exist: %s is a symbolic link to %s, which does not exist: mount '
        'or restore the target (an unmounted share?), or give the folder of %s' % (
            tmp_path / 'data' / 'imagenet', tmp_path / 'data', tmp_path / 'mnt', expected))
    # A plain missing folder keeps its line.
    with pytest.raises(cnn_util.DataError, match=r'^--data_dir \S+ does not exist: give the '
                       r'folder of .*, or drop --data_dir for synthetic data$'):
        dataset_info.list_data_dir(str(tmp_path / 'nothing' / 'here'))


def test_a_loop_of_symbolic_links_is_called_a_loop(tmp_path):
    """Before: `ln -s loop x/loop; --data_dir=x/loop` said 'is a symbolic link to x/loop, which
    does not exist' (os.stat fails with ELOOP, not ENOENT)."""
    loop = tmp_path / 'loop'
    os.symlink('loop', str(loop))
    with pytest.raises(cnn_util.DataError) as info:
        dataset_info.list_data_dir(str(loop))
    assert str(info.value) == (
        '--data_dir %s is a loop of symbolic links (%s -> %s): point the link at the folder, '
        'or give the folder of %s' % (loop, loop, loop, dataset_info._EXPECTED))
    os.symlink('b', str(tmp_path / 'a'))
    os.symlink('a', str(tmp_path / 'b'))
    assert file_systems.missing_link_target(str(tmp_path / 'a')) == (
        'a loop of symbolic links (%s -> %s -> %s)' % (tmp_path / 'a', tmp_path / 'b',
                                                       tmp_path / 'a'))
    assert file_systems.link_loop(str(tmp_path)) is None


def test_a_loop_inside_a_folder_without_a_dataset_is_listed_not_a_traceback(tmp_path):
    # Before: the converter hint's DirEntry.is_dir() raised OSError (ELOOP): a traceback.
    folder = tmp_path / 'x'
    folder.mkdir()
    os.symlink('loop', str(folder / 'loop'))
    os.symlink('q', str(folder / 'p'))
    os.symlink('p', str(folder / 'q'))
    (folder / 'notes.txt').write_text('')
    with pytest.raises(cnn_util.DataError) as info:
        dataset_info.infer_dataset_name(str(folder))
    assert str(info.value).startswith('no dataset files in --data_dir %s' % folder)
    assert 'loop' in str(info.value) and '\n' not in str(info.value)


def test_a_folder_whose_sub_folder_holds_the_dataset_names_the_sub_folder(tmp_path):
    # Before: a folder holding shards/ beside images/ advised converting the images.
    top = tmp_path / 'top'
    h.solid_shards(str(top / 'shards'), num_shards=2, per_shard=1)
    (top / 'images' / 'cat').mkdir(parents=True)
    (top / 'images' / 'cat' / 'a.jpg').write_bytes(b'')
    (top / 'cifar').mkdir()
    (top / 'cifar' / 'test_batch').write_bytes(b'')
    with pytest.raises(cnn_util.DataError) as info:
        dataset_info.infer_dataset_name(str(top))
    assert str(info.value).endswith('found cifar, images, shards; its sub-folder cifar holds '
                                    'CIFAR-10 python batches: give --data_dir=%s' % (top / 'cifar'))
    os.remove(str(top / 'cifar' / 'test_batch'))
    with pytest.raises(cnn_util.DataError) as info:
        dataset_info.infer_dataset_name(str(top))
    assert str(info.value).endswith('; its sub-folder shards holds ImageNet TFRecord shards: '
                                    'give --data_dir=%s' % (top / 'shards'))
    shutil.rmtree(str(top / 'shards'))  # no dataset below: the images' converter, as before
    with pytest.raises(cnn_util.DataError) as info:
        dataset_info.infer_dataset_name(str(top))
    assert 'convert them with `tf_cnn_build_tfrecords --input_dir=%s' % (top / 'images') in str(
        info.value)


def test_dangling_links_are_named_with_their_targets(tmp_path):
    """Through a chain of links the missing end is named; several are counted (issue 41.2);
    a CIFAR-10 batch that is a dangling link is refused the same way."""
    paths = h.solid_shards(str(tmp_path / 'data'), num_shards=3, per_shard=2)
    os.remove(paths[1])
    os.symlink('hop', paths[1])  # relative: data/hop -> share/x, which is gone
    os.symlink(str(tmp_path / 'share' / 'x'), str(tmp_path / 'data' / '.hop'))
    os.rename(str(tmp_path / 'data' / '.hop'), str(tmp_path / 'data' / 'hop'))
    os.remove(paths[2])
    os.symlink(str(tmp_path / 'gone'), paths[2])
    for skip in (False, True):
        with pytest.raises(cnn_util.DataError) as info:
            _dataset(tmp_path / 'data', skip_corrupt_records=skip).scan('train')
        assert str(info.value) == (
            'shard %s is a symbolic link to %s, whose target %s does not exist (2 of the 3 '
            'imagenet train files cannot be opened): mount or restore the target (an unmounted '
            'share?), or remove the link and pass --allow_shard_subset (the other shards are '
            'then a subset)' % (paths[1], tmp_path / 'data' / 'hop',
                                              tmp_path / 'share' / 'x'))
    cifar = h.write_cifar(str(tmp_path / 'cifar'))
    os.remove(os.path.join(cifar, 'test_batch'))
    os.symlink(str(tmp_path / 'nope'), os.path.join(cifar, 'test_batch'))
    with pytest.raises(cnn_util.DataError, match=r'^file .*test_batch is a symbolic link to '
                       r'.*nope, which does not exist'):
        _dataset(tmp_path / 'cifar').scan('validation')


def test_shards_with_a_tfrecord_ending_are_read(tmp_path, capsys):
    """train-00000-of-00002.tfrecord was refused ('expected ... (train-*-of-*, ...); found
    train-00000-of-00002.tfrecord', a name that matches; realdata 5): the original's glob
    train-* read it. The ending is accepted, compressed ones' .gz too."""
    paths = h.write_shards(str(tmp_path), 'train', [[b'a', b'b'], [b'c']])
    os.rename(paths[0], paths[0] + '.tfrecord')
    os.rename(paths[1], paths[1] + '.tfrecord.gz')
    dataset = _dataset(tmp_path)
    assert dataset.name == 'imagenet' and dataset.num_examples('train') == 3
    assert dataset.scan('train').files == (paths[0] + '.tfrecord', paths[1] + '.tfrecord.gz')
    assert capsys.readouterr().err == ''
    with pytest.raises(cnn_util.DataError) as info:  # the same index twice
        h.write_shards(str(tmp_path), 'train', [[b'a'], [b'b']])
        _dataset(tmp_path).scan('train')
    assert str(info.value) == (
        '%s holds 2 files for one train shard index: train-00000-of-00002 and '
        'train-00000-of-00002.tfrecord; remove the copies (each index once)' % tmp_path)


def test_a_name_the_original_read_as_a_shard_is_named_not_ignored(tmp_path, capsys):
    """A stray train-00000-of-00002.bak beside the shards was left out without a word (the
    original's glob train-* read it); alone, the error said the folder held no file matching
    train-*-of-*, which it does."""
    paths = h.write_shards(str(tmp_path), 'train', [[b'a', b'b'], [b'c']])
    with open(paths[0] + '.bak', 'wb') as f:
        f.write(open(paths[0], 'rb').read())
    assert _dataset(tmp_path).num_examples('train') == 3
    assert capsys.readouterr().err == (
        "warning: --data_dir %s: train-00000-of-00002.bak is not a shard name, not read (the "
        "original's glob train-* read it as a shard); a shard is named train-NNNNN-of-NNNNN (a "
        ".tfrecord, .tfrecords, .tfrec, .gz or .zlib ending allowed): rename it to read it, or "
        "move it out of the folder\n" % tmp_path)
    for path in paths:
        os.remove(path)
    with pytest.raises(cnn_util.DataError) as info:
        _dataset(tmp_path, data_name='imagenet').scan('train')
    assert str(info.value) == (
        'no train shards in --data_dir %s (imagenet train): train-00000-of-00002.bak is not a '
        'shard name; a shard is named train-NNNNN-of-NNNNN (a .tfrecord, .tfrecords, .tfrec, '
        '.gz or .zlib ending allowed): rename the shards, or give the folder that holds them'
        % tmp_path)
