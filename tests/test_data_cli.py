"""Real data through the command line: end-to-end runs and every data error as one line.

The runs are the command's (cli.main) in the test's process (helpers.run_command: what they
print and their exit status; no TensorFlow start-up each)."""

import os
import shutil

import pytest
import tensorflow as tf
from PIL import Image

from tf_cnn_benchmarks import run_header

import helpers
import input_helpers

pytestmark = pytest.mark.cli

SMALL = ['--model=trivial', '--batch_size=4', '--image_size=32', '--num_batches=3',
         '--num_warmup_batches=1', '--display_every=1']


def test_end_to_end_on_the_shared_imagenet_shards(imagenet_dir):
    proc = helpers.run_command(*SMALL, '--data_dir=%s' % imagenet_dir, '--num_gpus=2',
                               '--device=cpu', '--variable_update=replicated')
    assert proc.returncode == 0, proc.stderr
    value, folder, counts = helpers.dataset_block(proc.stdout.splitlines())
    assert (value, folder) == ('imagenet', run_header.fit_path(imagenet_dir,
                                                              run_header.HEADER_VALUE_WIDTH))
    assert counts[0].startswith('train: 512 examples counted in 8 TFRecord shards')
    assert 'total images/sec: ' in proc.stdout


def test_end_to_end_on_a_converter_dataset(tmp_path, capfd):
    for k, colour in enumerate([(250, 10, 10), (10, 250, 10)]):
        folder = tmp_path / 'photos' / ('class_%d' % k)
        folder.mkdir(parents=True)
        for i in range(6):
            Image.new('RGB', (20 + i, 30), colour).save(folder / ('%d.png' % i))
    out = tmp_path / 'shards'
    convert = input_helpers.converter_main(
        capfd, '--input_dir=%s' % (tmp_path / 'photos'), '--output_dir=%s' % out,
        '--num_train_shards=2', '--num_validation_shards=1', '--validation_fraction=0.25',
        '--seed=3')
    assert convert.returncode == 0, convert.stderr
    proc = helpers.run_command(*SMALL, '--data_dir=%s' % out, '--nodistortions')
    assert proc.returncode == 0, proc.stderr
    assert 'train: 8 examples counted in 2 TFRecord shards' in proc.stdout


def _corrupt_copy(imagenet_dir, tmp_path):
    data = tmp_path / 'data'
    shutil.copytree(imagenet_dir, data)
    victim = data / 'train-00003-of-00008'
    os.chmod(victim, 0o644)
    victim.write_bytes(victim.read_bytes()[:5000])  # cut off inside a record
    return data, victim


def _bad_crc_copy(imagenet_dir, tmp_path):
    """A copy of the shared shards whose train-00003 has a bad data CRC at record 5."""
    data = tmp_path / 'crc'
    shutil.copytree(imagenet_dir, data)
    victim = data / 'train-00003-of-00008'
    os.chmod(victim, 0o644)
    return data, victim, input_helpers.damage_record(str(victim), 5)


def test_a_named_dataset_in_a_missing_or_empty_folder_stops_before_tensorflow(tmp_path):
    # With --data_name the folder was not listed before TensorFlow loaded: the same line came
    # 3 s later.
    for folder, expect in ((tmp_path / 'nowhere', 'does not exist'), (tmp_path, 'is empty')):
        proc = helpers.run_command(*SMALL, '--data_dir=%s' % folder, '--data_name=imagenet')
        assert proc.returncode == 1, proc.stderr
        [line] = [x for x in proc.stderr.splitlines() if x.startswith('error: ')]
        assert line.startswith('error: --data_dir %s %s' % (folder, expect)), line
        assert 'Loading TensorFlow' not in proc.stdout


def test_a_data_dir_that_is_a_file_is_one_line_with_the_fix(tmp_path):
    # It said only 'is not a directory'.
    shard = tmp_path / 'train-00000-of-00001'
    shard.write_bytes(b'')
    proc = helpers.run_command(*SMALL, '--data_dir=%s' % shard)
    assert (proc.returncode, proc.stdout) == (1, '')
    assert proc.stderr == (
        'error: --data_dir %s is not a directory: give the folder of ImageNet TFRecord shards '
        '(train-NNNNN-of-NNNNN, validation-NNNNN-of-NNNNN, optionally ending in .tfrecord) or '
        'CIFAR-10 python batches (data_batch_1..5, test_batch), or drop --data_dir for '
        'synthetic data\n' % shard)


@pytest.mark.parametrize('case', ['missing', 'empty', 'no_match', 'truncated', 'label',
                                  'undecodable', 'no_image', 'no_label', 'bad_crc'])
def test_data_errors_are_one_line_with_exit_status_1(case, tmp_path, imagenet_dir):
    expect = {
        'missing': 'does not exist',
        'empty': 'is empty',
        'no_match': 'train-*-of-*',
        'truncated': 'train-00003-of-00008',
        'label': "labels must lie in [0, 1001), the classes of the model (imagenet's: 1000 "
                 'classes + background 0; --num_classes sets them) (-1: stored so, or a record '
                 'without image/class/label); a batch of %s train holds: [2000 2000 2000 '
                 '2000]; first such record: record 1 (index 0) of %s: label 2000 outside [0, 1001)'
                 % (tmp_path / 'labels', tmp_path / 'labels' / 'train-00000-of-00001'),
        'no_image': 'Input is empty. (a record without image/encoded: not an ImageNet-format '
                    'tf.train.Example?); first record the pipeline cannot use: record 3 '
                    '(index 2) of %s: '
                    'no image/encoded; write the shards with tf_cnn_build_tfrecords'
                    % (tmp_path / 'junk' / 'train-00001-of-00002'),
        'no_label': "(-1: stored so, or a record without image/class/label); a batch of %s "
                    'train holds: [-1 -1 -1 -1]; first such record: record 1 (index 0) of %s: no '
                    'image/class/label (read as -1)' % (tmp_path / 'nolabel', tmp_path / 'nolabel'
                                                        / 'train-00000-of-00001'),
        'undecodable': "; first record the pipeline cannot use: record 3 (index 2) of %s "
                       "(image/filename 'bad.jpg'): its image does not decode; re-encode or "
                       'remove that image and write its shard again (tf_cnn_build_tfrecords), '
                       'or --skip_corrupt_records to skip the records whose image does not '
                       'decode (each named, and counted)'
                       % (tmp_path / 'bad' / 'train-00001-of-00002'),
        'bad_crc': 'error: corrupt TFRecord record: record 6 (index 5, byte {start}) of '
                   '%s: its data fails '
                   'its CRC; --skip_corrupt_records skips such a record (and counts what it '
                   'skips)'
                   % (tmp_path / 'crc' / 'train-00003-of-00008'),
    }[case]
    args = list(SMALL)
    if case == 'missing':
        args.append('--data_dir=%s' % (tmp_path / 'nowhere'))
    elif case == 'empty':
        args.append('--data_dir=%s' % tmp_path)
    elif case == 'no_match':
        (tmp_path / 'readme.txt').write_text('not data')
        args += ['--data_dir=%s' % tmp_path, '--data_name=imagenet']
    elif case == 'truncated':
        data, _ = _corrupt_copy(imagenet_dir, tmp_path)
        args.append('--data_dir=%s' % data)
    elif case == 'bad_crc':  # found as the record is read (SMALL reads 16 records a shard)
        data, _, start = _bad_crc_copy(imagenet_dir, tmp_path)
        # The record's start byte: 8427 in the shared shards, another in the generated set.
        expect = expect.replace('{start}', str(start))
        args += ['--data_dir=%s' % data, '--batch_size=64', '--shuffle_buffer_size=512']
    elif case == 'undecodable':
        good = input_helpers.example(input_helpers.image_bytes(16, 16), 3)
        bad = input_helpers.example(b'not an image', 3, filename='bad.jpg')
        input_helpers.write_shards(str(tmp_path / 'bad'), 'train', [[good] * 4,
                                                                    [good, good, bad, good]])
        args.append('--data_dir=%s' % (tmp_path / 'bad'))
    elif case == 'no_image':  # an Example of another format: a label, no image/encoded
        good = input_helpers.example(input_helpers.image_bytes(16, 16), 3)
        imageless = tf.train.Example.FromString(good)
        del imageless.features.feature['image/encoded']
        input_helpers.write_shards(str(tmp_path / 'junk'), 'train', [
            [good] * 4, [good, good, imageless.SerializeToString(), good]])
        args.append('--data_dir=%s' % (tmp_path / 'junk'))
    elif case == 'no_label':
        unlabelled = tf.train.Example.FromString(
            input_helpers.example(input_helpers.image_bytes(16, 16), 3))
        del unlabelled.features.feature['image/class/label']
        input_helpers.write_shards(str(tmp_path / 'nolabel'), 'train', [
            [unlabelled.SerializeToString()] * 8])
        args.append('--data_dir=%s' % (tmp_path / 'nolabel'))
    else:  # a label beyond ImageNet's 1001 classes
        folder = tmp_path / 'labels'
        input_helpers.write_shards(str(folder), 'train', [[
            input_helpers.example(input_helpers.image_bytes(16, 16), 2000)] * 8])
        args.append('--data_dir=%s' % folder)
    proc = helpers.run_command(*args)
    assert proc.returncode == 1, proc.stderr
    assert 'Traceback' not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith('error: ')]
    assert len(errors) == 1 and expect in errors[0], proc.stderr
    assert 'total images/sec' not in proc.stdout
    # A folder that is missing or empty is known before TensorFlow loads: the run stops there.
    assert ('Loading TensorFlow' in proc.stdout) == (case not in ('missing', 'empty')), case


@pytest.mark.parametrize('damage', ['cut_500_bytes', 'random_bytes'])
def test_skip_corrupt_records_reports_what_was_skipped(tmp_path, imagenet_dir, damage):
    """A shard left out at start-up: its warning said 'N readable records skipped with it' and
    the closing line 'skipped records: none' (a new user's trial). Now the closing line counts
    the shard and its readable records."""
    from tf_cnn_benchmarks.input_data import shard_scan
    data, victim = _corrupt_copy(imagenet_dir, tmp_path)
    if damage == 'cut_500_bytes':
        shutil.copy(os.path.join(imagenet_dir, victim.name), victim)
        victim.write_bytes(victim.read_bytes()[:-500])
    else:
        victim.write_bytes(os.urandom(20000))
    readable = shard_scan.walk_tfrecord_headers(str(victim))[0]
    proc = helpers.run_command(*SMALL, '--data_dir=%s' % data, '--skip_corrupt_records')
    assert proc.returncode == 0, proc.stderr
    assert '1 corrupt shard(s) skipped with %d readable records' % readable in proc.stdout
    warned = [x for x in proc.stderr.splitlines() if x.startswith('warning: skipped')]
    assert len(warned) == 1 and warned[0].startswith('warning: skipped corrupt shard %s ' % victim)
    assert warned[0].endswith(': %d readable records skipped with it' % readable)
    assert 'skipped records: %s, 1 corrupt shard(s) left out at start-up with their %d readable ' \
           'record(s) (those after the damage cannot be counted) (--skip_corrupt_records)' % (
               'at least %d an epoch' % readable if readable else 'uncounted', readable) \
        in proc.stdout.splitlines()
    assert (readable > 0) == (damage == 'cut_500_bytes')


def _undecodable_shards(folder, *, all_cut=False):
    """Two shards of 4 records (a 64x48 noise JPEG each, image/filename 'good.jpg'): record 1
    of the first holds junk bytes ('junk.jpg'), record 2 of the second a JPEG cut in half
    ('half.jpg'); with all_cut every image is cut in half."""
    import numpy as np
    pixels = np.random.default_rng(0).integers(0, 256, (48, 64, 3))
    jpeg = input_helpers.image_bytes(64, 48, pixels=pixels)
    good = input_helpers.example(jpeg, 3, filename='good.jpg')
    junk = input_helpers.example(b'junk bytes, not an image', 3, filename='junk.jpg')
    half = input_helpers.example(jpeg[:len(jpeg) // 2], 3, filename='half.jpg')
    if all_cut:
        return input_helpers.write_shards(str(folder), 'train', [[half] * 4] * 2)
    return input_helpers.write_shards(str(folder), 'train', [[good, junk, good, good],
                                                             [good, good, half, good]])


def test_skip_corrupt_records_skips_names_and_counts_images_that_do_not_decode(tmp_path):
    """Before, an image that does not decode stopped the run with --skip_corrupt_records too
    (a new user's trial); now each such record is skipped, named in a warning line and
    counted in the closing line."""
    paths = _undecodable_shards(tmp_path / 'bad')
    proc = helpers.run_command(*SMALL, '--data_dir=%s' % (tmp_path / 'bad'),
                               '--skip_corrupt_records')
    assert proc.returncode == 0, proc.stderr
    assert sorted(x for x in proc.stderr.splitlines() if x.startswith('warning: skipped')) == [
        "warning: skipped record 2 (index 1) of %s (image/filename 'junk.jpg'): its image does not "
        'decode; --skip_corrupt_records' % paths[0],
        "warning: skipped record 3 (index 2) of %s (image/filename 'half.jpg'): its image does not "
        "decode; --skip_corrupt_records (the bare lines on stderr such as 'Input file read "
        "error', 'Premature end of JPEG file' or 'Improper call to JPEG library in state 201' "
        "are libjpeg's, printed each time it meets such an image)" % paths[1]]
    assert ('skipped records: 2 an epoch, 2 record(s) the pipeline cannot use (another schema, '
            'a label outside the classes, an image that does not decode) in 2 shard(s) '
            '(--skip_corrupt_records)' in proc.stdout.splitlines())


def test_every_image_skipped_is_one_error_line_with_a_fix(tmp_path):
    """Every image cut in half: with --skip_corrupt_records nothing is left to read; that is
    said (not TensorFlow's 'End of sequence')."""
    _undecodable_shards(tmp_path / 'half', all_cut=True)
    proc = helpers.run_command(*SMALL, '--data_dir=%s' % (tmp_path / 'half'),
                               '--skip_corrupt_records')
    assert proc.returncode == 1 and 'Traceback' not in proc.stderr, proc.stderr
    assert [x for x in proc.stderr.splitlines() if x.startswith('error: ')] == [
        'error: no record is left to read: --skip_corrupt_records skipped every record of the '
        'shards (8 an epoch, named in the warnings above); re-encode the images that do not '
        'decode and write the shards again (tf_cnn_build_tfrecords), or give a --data_dir of '
        'usable records']


def test_an_empty_shard_is_warned_of_and_all_empty_is_an_error(tmp_path):
    """A 0-byte shard beside good ones was read silently (a new user's trial)."""
    good = input_helpers.example(input_helpers.image_bytes(16, 16), 3)
    paths = input_helpers.write_shards(str(tmp_path / 'one'), 'train', [[good] * 4, []])
    input_helpers.write_shards(str(tmp_path / 'all'), 'train', [[], []])
    one, every = _run_clis(SMALL + ['--data_dir=%s' % (tmp_path / 'one')],
                           SMALL + ['--data_dir=%s' % (tmp_path / 'all')])
    assert one.returncode == 0, one.stderr
    assert [x for x in one.stderr.splitlines() if x.startswith('warning: shard')] == [
        'warning: shard %s holds no records (0 bytes; a conversion or copy that did not '
        'finish?): the run reads the other train shards; write it again '
        '(tf_cnn_build_tfrecords)' % paths[1]]
    assert '             train: 4 examples counted in 2 TFRecord shards, 1 of them empty\n' \
           '             headers checked (record CRCs as read)\n' in one.stdout  # lines <= 100
    assert every.returncode == 1 and 'Traceback' not in every.stderr, every.stderr
    assert [x for x in every.stderr.splitlines() if x.startswith('error: ')] == [
        'error: the train shards matching train-*-of-* in %s hold no records (2 empty '
        'shard(s): a conversion or copy that did not finish?); write them again '
        '(tf_cnn_build_tfrecords), or give the folder of the complete shards'
        % (tmp_path / 'all')]


def test_skip_corrupt_records_counts_a_bad_crc_found_while_reading(tmp_path, imagenet_dir):
    data, victim, _ = _bad_crc_copy(imagenet_dir, tmp_path)
    proc = helpers.run_command(*SMALL, '--data_dir=%s' % data, '--skip_corrupt_records',
                               '--batch_size=64', '--shuffle_buffer_size=512')
    assert proc.returncode == 0, proc.stderr
    # Realdata 8: records 6..64 were skipped, 58 of them intact.
    assert 'skipped records: 1 an epoch, 1 record(s) whose data CRC fails in 1 shard(s) (the ' \
           'records after each are read) (--skip_corrupt_records)' in proc.stdout.splitlines()
    assert ('warning: skipped record 6 (index 5) of %s (1 of its 64 records; 1 skipped an '
            'epoch so far): it fails its data CRC; the records after it are read (found by '
            'their lengths); --skip_corrupt_records' % victim) in proc.stderr.splitlines()


@pytest.mark.parametrize('flag', [None, '--skip_corrupt_records'])
def test_gzip_compressed_shards_train(tmp_path, imagenet_dir, flag):
    """Before: 'corrupt TFRecord shard ...', and with --skip_corrupt_records 'every train
    shard ... is corrupt' (issue 33.4)."""
    input_helpers.copy_shards(imagenet_dir, str(tmp_path / 'gz'), ['GZIP'] * 8)
    proc = helpers.run_command(*SMALL, '--data_dir=%s' % (tmp_path / 'gz'), *[flag] if flag else [])
    assert proc.returncode == 0, proc.stderr
    assert '             train: 512 examples counted in 8 TFRecord shards (8 GZIP-compressed)\n' \
           '             headers checked (record CRCs as read)\n' in proc.stdout  # lines <= 100
    assert 'total images/sec' in proc.stdout and 'warning' not in proc.stderr


def test_a_record_that_is_not_an_example_is_named(tmp_path):
    """RecordInput's batched parse fails on bytes that are no Example at all; the error names
    the first such record (bytes that parse as an empty Example fail later, at the decode)."""
    from tf_cnn_benchmarks.input_data import data_errors
    good = input_helpers.example(input_helpers.image_bytes(16, 16), 3)
    shards = input_helpers.write_shards(str(tmp_path), 'train', [[good, b'junkjunkjunk']])
    error = tf.errors.InvalidArgumentError(
        None, None, "Could not parse example input, value: 'junkjunkjunk'")
    translated = data_errors.to_data_error(error, str(tmp_path), tuple(shards))
    assert str(translated) == (
        'a TFRecord record is not a tf.train.Example (data: %s); first such record: record 2 '
        '(index 1) of %s: not a tf.train.Example; write the shards with tf_cnn_build_tfrecords '
        '(or the ImageNet/CIFAR-10 format of docs/real-data.md)' % (tmp_path, shards[0]))


def _run_clis(*arg_lists):
    """The command's CompletedProcess for each list of arguments, in order."""
    return [helpers.run_command(*args) for args in arg_lists]


def test_a_dangling_shard_link_is_one_line_naming_its_target(tmp_path, imagenet_dir):
    """A shard folder of links into a share that is not mounted: training, training with
    --skip_corrupt_records and --eval ended with a FileNotFoundError traceback of the shard
    scan (issue 41.2)."""
    links = tmp_path / 'links'
    links.mkdir()
    for name in os.listdir(imagenet_dir):
        (links / name).symlink_to(os.path.join(imagenet_dir, name))
    for name, target in [('train-00003-of-00008', tmp_path / 'share' / 'train-00003'),
                         ('validation-00001-of-00002', tmp_path / 'share' / 'validation-1')]:
        (links / name).unlink()
        (links / name).symlink_to(target)
    train_dir = str(tmp_path / 'train')
    # A checkpoint for --eval, of ImageNet's 1001 classes as the command's (not TINY_CLASSES).
    helpers.tiny_run(train_dir=train_dir, num_batches=1, num_classes=None)
    data = '--data_dir=%s' % links
    runs = _run_clis(SMALL + [data], SMALL + [data, '--skip_corrupt_records'],
                     ['--model=trivial', '--batch_size=4', '--image_size=16', data, '--eval',
                      '--train_dir=' + train_dir])
    for proc, shard, target in zip(runs, ['train-00003-of-00008'] * 2 + [
            'validation-00001-of-00002'], ['train-00003', 'train-00003', 'validation-1'],
            strict=True):
        assert proc.returncode == 1, proc.stderr
        assert 'Traceback' not in proc.stderr
        errors = [line for line in proc.stderr.splitlines() if line.startswith('error: ')]
        assert errors == [
            'error: shard %s is a symbolic link to %s, which does not exist: mount or restore '
            'the target (an unmounted share?), or remove the link and pass --allow_shard_subset '
            '(the other shards are then a subset)'
            % (links / shard, tmp_path / 'share' / target)], proc.stderr


def _schema_shards(folder, subset, kind):
    """Two shards of 4 good records; record 2 of the second has its label made a float, two
    labels or -1 (image/filename 'odd.jpg')."""
    good = input_helpers.example(input_helpers.image_bytes(16, 16), 3, filename='good.jpg')
    return input_helpers.write_shards(str(folder), subset, [
        [good] * 4, [good, good, input_helpers.example_with_label(kind), good]])


def test_records_of_another_schema_are_named_in_training_skipping_and_eval(tmp_path):
    """A float label stopped with TensorFlow's parse error and 'first undecodable record in the
    shards: none'; a label of -1 was called a record without a label and named nothing
    (issue 41.6). Now: the shard, record and image/filename, or with --skip_corrupt_records
    the record skipped, named and counted."""
    shards = {kind: _schema_shards(tmp_path / kind, 'train', kind)[1]
              for kind in ('float', 'two')}
    evaluated = _schema_shards(tmp_path / 'minus', 'validation', -1)[1]
    train_dir = str(tmp_path / 'train')
    # A checkpoint for --eval, of ImageNet's 1001 classes as the command's (not TINY_CLASSES).
    helpers.tiny_run(train_dir=train_dir, num_batches=1, num_classes=None)
    small = ['--model=trivial', '--batch_size=4', '--image_size=16', '--num_batches=3']
    runs = _run_clis(small + ['--data_dir=%s' % (tmp_path / 'float')],
                     small + ['--data_dir=%s' % (tmp_path / 'two'), '--skip_corrupt_records'],
                     small + ['--data_dir=%s' % (tmp_path / 'minus'), '--eval',
                              '--train_dir=' + train_dir])
    floated, skipped, minus = runs
    for proc in (floated, minus):
        assert proc.returncode == 1 and 'Traceback' not in proc.stderr, proc.stderr
    errors = [x for x in floated.stderr.splitlines() if x.startswith('error: ')]
    assert len(errors) == 1 and errors[0].endswith(
        "Data types don't match. Data type: float but expected type: int64 (a record of another "
        "schema than the ImageNet format); first record the pipeline cannot use: record 3 "
        "(index 2) of "
        "%s (image/filename 'odd.jpg'): image/class/label is a float (FloatList), not an "
        "int64; write the shards with tf_cnn_build_tfrecords (the ImageNet format of "
        "docs/real-data.md), or --skip_corrupt_records to skip such records"
        % shards['float']), floated.stderr
    errors = [x for x in minus.stderr.splitlines() if x.startswith('error: ')]
    assert len(errors) == 1 and errors[0].startswith('error: label out of range: ')
    assert errors[0].endswith("; first such record: record 3 (index 2) of %s "
                              "(image/filename 'odd.jpg'): "
                              'label -1 outside [0, 1001)' % evaluated), minus.stderr
    assert skipped.returncode == 0, skipped.stderr
    assert [x for x in skipped.stderr.splitlines() if x.startswith('warning: skipped')] == [
        "warning: skipped record 3 (index 2) of %s (image/filename 'odd.jpg'): "
        "image/class/label holds 2 "
        'values (one is read); --skip_corrupt_records' % shards['two']]
    assert ('skipped records: 1 an epoch, 1 record(s) the pipeline cannot use (another schema, '
            'a label outside the classes, an image that does not decode) in 1 shard(s) '
            '(--skip_corrupt_records)'
            in skipped.stdout.splitlines())


def test_libjpegs_own_lines_are_said_whose_they_are(tmp_path):
    """libjpeg prints 'Premature end of JPEG file' and the like straight to stderr, past
    TensorFlow's log level (realdata 9: bare lines between the command's own): the error of
    a JPEG that does not decode says whose they are."""
    import numpy as np
    jpeg = input_helpers.image_bytes(64, 48, pixels=np.random.default_rng(0).integers(
        0, 256, (48, 64, 3)))
    good = input_helpers.example(jpeg, 3, filename='good.jpg')
    half = input_helpers.example(jpeg[:len(jpeg) // 2], 3, filename='half.jpg')
    input_helpers.write_shards(str(tmp_path / 'cut'), 'train', [[good, half, good, good]])
    proc = helpers.run_command(*SMALL, '--data_dir=%s' % (tmp_path / 'cut'))
    assert proc.returncode == 1, proc.stderr
    [error] = [x for x in proc.stderr.splitlines() if x.startswith('error: ')]
    assert error.endswith(
        "(each named, and counted); the bare lines on stderr such as 'Input file read error', "
        "'Premature end of JPEG file' or 'Improper call to JPEG library in state 201' are "
        "libjpeg's, printed each time it meets such an image"), error
