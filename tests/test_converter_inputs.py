"""tf_cnn_build_tfrecords' input (tools/class_folders.py): image files outside
`input_dir/<class>/<image>` are reported, a class folder whose images all lie in sub-folders says
so, and a folder name with whitespace still gives labels.txt lines of three fields."""

import os

import pytest
import tensorflow as tf

from tests import input_helpers as h
from tf_cnn_benchmarks.input_data import class_labels
from tf_cnn_benchmarks.tools import build_imagenet_tfrecords as convert_tool
from tf_cnn_benchmarks.tools import class_folders

FLAGS = dict(num_train_shards=1, num_validation_shards=1, validation_fraction=0.0, seed=0,
             progress=False)


def _jpegs(*paths):
    for path in paths:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'wb') as f:
            f.write(h.image_bytes(6, 5))


def _skipped(warnings):
    """The warnings about skipped files (--validation_fraction=0 adds one of its own)."""
    return [w for w in warnings if w.startswith('skipped ')]


def _user_folder(root):
    """The reported layout: p2/big cats/sub/deep.jpg and p2/dogs/.hidden.jpg (valid JPEGs),
    other images at class level; also a loose image and a hidden folder's."""
    p2 = str(root / 'p2')
    _jpegs(*('%s/%s/%d.jpg' % (p2, c, i) for c in ('big cats', 'dogs') for i in range(2)),
           p2 + '/big cats/sub/deep.jpg', p2 + '/dogs/.hidden.jpg', p2 + '/loose.jpg',
           p2 + '/.thumbs/t.jpg')
    return p2


def test_every_image_file_left_out_is_reported_with_its_reason(tmp_path):
    # Before: deep.jpg and .hidden.jpg (and the loose and hidden-folder ones) were left out
    # without a word, exit 0.
    p2 = _user_folder(tmp_path)
    warnings = []
    result = convert_tool.convert(p2, str(tmp_path / 'out'), **FLAGS, warn=warnings.append)
    assert result['num_train'] == 4
    assert _skipped(warnings) == [
        'skipped 1 image file in --input_dir itself, not in a class folder: %s/loose.jpg; move '
        'it into its class folder to convert it' % p2,
        "skipped 1 image file in hidden folders of --input_dir (names starting with '.'): "
        '%s/.thumbs/t.jpg; rename the folder to make it a class' % p2,
        "skipped 1 image file that is hidden (names starting with '.'): %s/dogs/.hidden.jpg; "
        'rename it to convert it' % p2,
        'skipped 1 image file in sub-folders of class folders, which are not read (only '
        '<input_dir>/<class>/<image> is): %s/big cats/sub/deep.jpg; move it up into its class '
        'folder to convert it' % p2]


def test_many_left_out_files_are_counted_and_the_first_five_named(tmp_path):
    src = str(tmp_path / 'in')
    nested = ['%s/cls/a/b/%d.jpg' % (src, i) for i in range(7)]
    _jpegs(src + '/cls/0.jpg', *nested)
    (tmp_path / 'in' / 'cls' / 'a' / 'notes.txt').write_text('not an image: not reported')
    warnings = []
    convert_tool.convert(src, str(tmp_path / 'out'), **FLAGS, warn=warnings.append)
    assert _skipped(warnings) == [
        'skipped 7 image files in sub-folders of class folders, which are not read (only '
        '<input_dir>/<class>/<image> is): %s and 2 more; move them up into their class folder '
        'to convert them' % ', '.join(nested[:5])]


@pytest.mark.cli
def test_cli_reports_the_left_out_files_and_exits_0(tmp_path, capfd):
    p2 = _user_folder(tmp_path)
    proc = h.converter_main(capfd, '--input_dir=%s' % p2, '--output_dir=%s' % (tmp_path / 'out'),
                            '--num_train_shards=1', '--num_validation_shards=1', '--noprogress')
    assert proc.returncode == 0, proc.stderr
    warned = [line for line in proc.stderr.splitlines() if line.startswith('warning: skipped')]
    assert len(warned) == 4
    assert any(line.endswith('big cats/sub/deep.jpg; move it up into its class folder to '
                             'convert it') for line in warned)
    assert any('/dogs/.hidden.jpg; rename it' in line for line in warned)


def test_a_class_folder_of_sub_folders_says_where_its_images_are_and_what_to_do(tmp_path, capsys):
    # Before: 'error: class folder p3/cats has no images', nothing about its sub-folder.
    p3 = str(tmp_path / 'p3')
    _jpegs(p3 + '/cats/2019/a.jpg', p3 + '/cats/2019/b.jpg', p3 + '/dogs/a.jpg')
    status = convert_tool.main(['tf_cnn_build_tfrecords', '--input_dir=%s' % p3,
                                '--output_dir=%s' % (tmp_path / 'out'), '--noprogress'])
    out, err = capsys.readouterr()
    assert (status, out) == (1, '')
    assert err.splitlines() == [
        'error: class folder %s/cats has no images of its own, only image files that are not '
        'read: 2 in its sub-folder 2019 (e.g. %s/cats/2019/a.jpg), as only images directly in a '
        'class folder are read (<input_dir>/<class>/<image>); move them up into %s/cats, or '
        'give --input_dir=%s/cats if its sub-folders are the classes' % (p3, p3, p3, p3)]


def test_a_class_folder_of_hidden_images_and_several_sub_folders(tmp_path):
    src = str(tmp_path / 'in')
    _jpegs(src + '/cats/.a.jpg', src + '/cats/2019/x.jpg', src + '/cats/2020/y.jpg')
    with pytest.raises(convert_tool.ConvertError) as e:
        convert_tool.convert(src, str(tmp_path / 'out'), **FLAGS)
    assert str(e.value) == (
        'class folder {s}/cats has no images of its own, only image files that are not read: 2 '
        'in its 2 sub-folders 2019, 2020 (e.g. {s}/cats/2019/x.jpg), as only images directly '
        "in a class folder are read (<input_dir>/<class>/<image>); 1 hidden (names starting "
        "with '.': {s}/cats/.a.jpg); move them up into {s}/cats, or give --input_dir={s}/cats "
        'if its sub-folders are the classes, and rename the hidden ones'.format(s=src))


def test_loose_images_without_class_folders_are_named_in_the_error(tmp_path):
    src = str(tmp_path / 'in')
    _jpegs(src + '/a.jpg', src + '/b.jpg')
    with pytest.raises(convert_tool.FlagValueError) as e:
        convert_tool.convert(src, str(tmp_path / 'out'), **FLAGS)
    assert str(e.value) == (
        '--input_dir=%s has no class sub-folders (only image files: %s/a.jpg, %s/b.jpg); give '
        'the folder that holds them (input_dir/<class>/<image>)' % (src, src, src))


def test_a_folder_name_with_whitespace_gives_lines_that_split_into_their_fields(tmp_path):
    # Before: '1 big cats big cats', which splits into four fields, not <label> <synset> <text>.
    src, out = str(tmp_path / 'in'), tmp_path / 'out'
    _jpegs(src + '/big cats/0.jpg', src + '/big cats/1.jpg', src + '/dogs/0.jpg')
    result = convert_tool.convert(src, str(out), **FLAGS, warn=lambda line: None)
    assert (out / 'labels.txt').read_text().splitlines() == ['1 big_cats big cats',
                                                             '2 dogs dogs']
    for line in (out / 'labels.txt').read_text().splitlines():
        label, synset, text = line.split(None, 2)
        assert label.isdigit() and synset in ('big_cats', 'dogs')
    assert [line.split() for line in (out / 'class_counts.txt').read_text().splitlines()[1:]] \
        == [['1', 'big_cats', '2', '0'], ['2', 'dogs', '1', '0']]
    assert class_labels.read_labels_file(str(out / 'labels.txt')) == [1, 2]
    features = [tf.train.Example.FromString(r).features.feature
                for r in tf.compat.v1.io.tf_record_iterator(result['train'][0])]
    assert sorted((f['image/class/synset'].bytes_list.value[0],
                   f['image/class/text'].bytes_list.value[0]) for f in features) == [
        (b'big_cats', b'big cats'), (b'big_cats', b'big cats'), (b'dogs', b'dogs')]


def test_a_class_text_file_names_such_a_folder_by_its_synset(tmp_path):
    src, out = str(tmp_path / 'in'), tmp_path / 'out'
    _jpegs(src + '/big cats/0.jpg', src + '/dogs/0.jpg')
    (tmp_path / 'texts.txt').write_text('big_cats Panthera\n')
    warnings = []
    convert_tool.convert(src, str(out), **FLAGS, class_text_file=str(tmp_path / 'texts.txt'),
                         warn=warnings.append)
    assert (out / 'labels.txt').read_text().splitlines() == ['1 big_cats Panthera',
                                                             '2 dogs dogs']
    assert 'no text for 1 of 2 classes (dogs)' in warnings[0]


def test_two_folders_with_the_same_synset_are_refused(tmp_path):
    src = str(tmp_path / 'in')
    _jpegs(src + '/big cats/0.jpg', src + '/big_cats/0.jpg')
    with pytest.raises(convert_tool.ConvertError) as e:
        convert_tool.convert(src, str(tmp_path / 'out'), **FLAGS)
    assert e.value.exit_status == 1
    assert str(e.value) == (
        "class folders 'big cats' and 'big_cats' would both have synset big_cats (whitespace in "
        "a folder name is written as '_': labels.txt's fields are split at spaces); rename one "
        'of them')


def test_synset_and_text_of_a_folder_name_stay_one_word_and_one_line():
    name = 'a b\tc\nd\u2028e'
    assert class_folders.synset_of(name) == 'a_b_c_d_e'
    assert class_folders.text_of(name) == 'a b c d e'
    assert len(class_folders.synset_of(name).split()) == 1
    assert class_folders.text_of(name).splitlines() == ['a b c d e']


@pytest.mark.cli
def test_shard_counts_not_given_fit_a_small_folder(tmp_path, capsys):
    """The benchmark's hint (`tf_cnn_build_tfrecords --input_dir=DIR --output_dir=...`) on six
    images was refused: `--num_train_shards=8 is more than the 4 train images`. Counts not given
    are at most one shard per image; a count given is still checked."""
    folder = str(tmp_path / 'jp')
    _jpegs(*('%s/%s/%d.jpg' % (folder, c, i) for c in ('cat', 'dog') for i in range(3)))
    argv = ['tf_cnn_build_tfrecords', '--input_dir=%s' % folder, '--noprogress']
    assert convert_tool.main(argv + ['--output_dir=%s' % (tmp_path / 'a')]) == 0
    shards = sorted(os.listdir(tmp_path / 'a'))
    assert [s for s in shards if s.startswith('train-')] == [
        'train-%05d-of-00004' % i for i in range(4)]
    assert [s for s in shards if s.startswith('validation-')] == [
        'validation-%05d-of-00002' % i for i in range(2)]
    capsys.readouterr()
    assert convert_tool.main(argv + ['--output_dir=%s' % (tmp_path / 'b'),
                                     '--num_train_shards=8']) == 2
    assert capsys.readouterr().err == (
        'error: --num_train_shards=8 is more than the 4 train images; use fewer shards\n')
