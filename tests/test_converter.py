"""tools.build_imagenet_tfrecords: shards, labels, fields, split, errors and exit status."""

import collections
import hashlib
import io
import os

import numpy as np
import pytest
import tensorflow as tf
from PIL import Image

from tests import input_helpers as h
from tf_cnn_benchmarks.input_data import dataset_info
from tf_cnn_benchmarks.tools import build_imagenet_tfrecords as convert_tool

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Class folders in unsorted creation order; labels follow the sorted names.
CLASSES = {'zebra': ('PNG', 'RGBA'), 'ant': ('JPEG', 'RGB'), 'moth': ('JPEG', 'CMYK'),
           'bee': ('GIF', 'P')}
PER_CLASS = 5
_cli = h.converter_cli  # the command in a process of its own


def _make_folders(root):
    for index, (name, (fmt, mode)) in enumerate(CLASSES.items()):
        folder = root / name
        folder.mkdir(parents=True)
        for i in range(PER_CLASS):
            suffix = {'JPEG': 'jpg'}.get(fmt, fmt.lower())
            (folder / ('img%d.%s' % (i, suffix))).write_bytes(
                h.image_bytes(12 + i, 10 + index, fmt=fmt, mode=mode, colour=(40 * index, 90, 30)))
    return root


def _records(paths):
    out = []
    with tf.Graph().as_default(), tf.compat.v1.Session() as sess:
        name = tf.compat.v1.placeholder(tf.string, [])
        batch = tf.data.TFRecordDataset(name).batch(1000)
        get = tf.compat.v1.data.make_initializable_iterator(batch)
        for path in paths:
            sess.run(get.initializer, {name: path})
            for record in sess.run(get.get_next()):
                out.append(tf.train.Example.FromString(record).features.feature)
    return out


@pytest.fixture(scope='module')
def converted(tmp_path_factory):
    root = tmp_path_factory.mktemp('conv')
    _make_folders(root / 'in')
    # ImageNet-style extra synsets without a folder are fine; moth and zebra get no text.
    (root / 'texts.txt').write_text('ant small insect\nbee buzzing insect\nn01440764 tench\n')
    warnings = []
    result = convert_tool.convert(str(root / 'in'), str(root / 'out'), **CONVERTED_FLAGS,
                                  class_text_file=str(root / 'texts.txt'), num_threads=2,
                                  progress=False, warn=warnings.append)
    return root, result, warnings


CONVERTED_FLAGS = dict(num_train_shards=3, num_validation_shards=2, validation_fraction=0.4,
                       seed=5)


def test_shards_labels_and_fields(converted):
    root, result, _ = converted
    out = root / 'out'
    names = sorted(n for n in os.listdir(out) if n not in ('labels.txt', 'class_counts.txt'))
    assert names == ['train-00000-of-00003', 'train-00001-of-00003', 'train-00002-of-00003',
                     'validation-00000-of-00002', 'validation-00001-of-00002']
    assert result['num_train'] == 12 and result['num_validation'] == 8  # round(0.4 * 5) = 2
    labels = {'ant': 1, 'bee': 2, 'moth': 3, 'zebra': 4}  # sorted folder order, 0 = background
    assert (out / 'labels.txt').read_text().splitlines() == [
        '1 ant small insect', '2 bee buzzing insect', '3 moth moth', '4 zebra zebra']
    train = _records(result['train'])
    validation = _records(result['validation'])
    assert len(train) == 12 and len(validation) == 8
    for f in train + validation:
        synset = f['image/class/synset'].bytes_list.value[0].decode()
        assert f['image/class/label'].int64_list.value == [labels[synset]]
        assert f['image/object/bbox/label'].int64_list.value == [labels[synset]]
        for key, value in (('xmin', 0.0), ('ymin', 0.0), ('xmax', 1.0), ('ymax', 1.0)):
            assert f['image/object/bbox/' + key].float_list.value == [value]
        assert f['image/format'].bytes_list.value == [b'JPEG']
        assert f['image/colorspace'].bytes_list.value == [b'RGB']
        encoded = f['image/encoded'].bytes_list.value[0]
        assert encoded[:3] == b'\xff\xd8\xff'  # everything stored as JPEG
        index = list(CLASSES).index(synset)
        assert f['image/height'].int64_list.value == [10 + index]
    per_class = collections.Counter(f['image/class/synset'].bytes_list.value[0]
                                    for f in validation)
    assert set(per_class.values()) == {2}
    text = {f['image/class/synset'].bytes_list.value[0]: f['image/class/text'].bytes_list.value[0]
            for f in train}
    assert text[b'ant'] == b'small insect' and text[b'zebra'] == b'zebra'


def test_converted_dataset_trains_with_its_labels(converted):
    root, _, _ = converted
    p = h.make_params(data_dir=str(root / 'out'))
    ds = dataset_info.get_dataset(p)
    assert ds.name == 'imagenet' and ds.num_examples('train') == 12
    # labels.txt lists labels 1..4: the model gets 4 classes + background 0, not ImageNet's 1001.
    assert ds.num_classes == 5
    assert ds.describe_classes() == '5 (labels.txt in --data_dir: 4 classes, labels 1..4, + ' \
        'background 0)'
    _, outputs, _ = h.run_pipeline(p, steps=2, batch_size=4, image_size=16, num_classes=5)
    for images, labels in outputs[-1]:
        assert images.shape == (4, 16, 16, 3) and set(labels.tolist()) <= {1, 2, 3, 4}


def test_split_is_seeded(tmp_path):
    _make_folders(tmp_path / 'in')

    def split(seed):
        classes = convert_tool.list_classes(str(tmp_path / 'in'))
        _, validation = convert_tool.split_examples(classes, 0.4, seed)
        return sorted(p for p, _, _ in validation)

    assert split(1) == split(1)
    assert any(split(1) != split(s) for s in range(2, 6))


def test_rgb_jpeg_kept_byte_for_byte(tmp_path):
    data = h.image_bytes(9, 7, pixels=np.random.RandomState(0).randint(0, 256, (7, 9, 3)))
    path = tmp_path / 'a.jpg'
    path.write_bytes(data)
    assert convert_tool.image_encoding.read_image(str(path)) == (data, 7, 9, '')


def _png16_rgb(pixels: np.ndarray) -> bytes:
    """A 16-bit RGB PNG (colour type 2, bit depth 16), which Pillow cannot write, by hand (PNG
    specification, ISO/IEC 15948: the IHDR and IDAT chunks, filter type 0 per row)."""
    import struct
    import zlib

    def chunk(kind, body):
        return (struct.pack('>I', len(body)) + kind + body
                + struct.pack('>I', zlib.crc32(kind + body) & 0xFFFFFFFF))
    height, width, _ = pixels.shape
    rows = b''.join(b'\x00' + pixels[y].astype('>u2').tobytes() for y in range(height))
    return (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', width, height, 16, 2,
                                                              0, 0, 0))
            + chunk(b'IDAT', zlib.compress(rows)) + chunk(b'IEND', b''))


def _tiff16_rgb(pixels: np.ndarray, order: str = '<') -> bytes:
    """A 16-bit RGB TIFF (uncompressed, one strip), which Pillow cannot write, by hand (TIFF 6.0
    baseline: the header, BitsPerSample 16,16,16 at byte 8, the samples from byte 16, then
    the IFD of ten entries); `order` '<' little-endian (II), '>' big-endian (MM)."""
    import struct
    height, width, _ = pixels.shape
    data = pixels.astype(order + 'u2').tobytes()
    entries = [(256, 3, 1, width), (257, 3, 1, height), (258, 3, 3, 8), (259, 3, 1, 1),
               (262, 3, 1, 2), (273, 4, 1, 16), (277, 3, 1, 3), (278, 3, 1, height),
               (279, 4, 1, len(data)), (284, 3, 1, 1)]
    out = (b'II' if order == '<' else b'MM') + struct.pack(order + 'HI', 42, 16 + len(data))
    out += struct.pack(order + 'HHHH', 16, 16, 16, 0) + data + struct.pack(order + 'H', 10)
    for tag, kind, count, value in entries:  # a SHORT value is left-justified in its 4 bytes
        out += (struct.pack(order + 'HHIHH', tag, kind, count, value, 0)
                if kind == 3 and count == 1 else
                struct.pack(order + 'HHII', tag, kind, count, value))
    return out + struct.pack(order + 'I', 0)


def _stored(path) -> np.ndarray:
    encoded = convert_tool.image_encoding.read_image(str(path))
    return np.asarray(Image.open(io.BytesIO(encoded.data)).convert('RGB'),
                      np.float64), encoded.conversion


def test_high_bit_depth_images_are_scaled_not_clipped(tmp_path):
    """A 16-bit grayscale PNG of mean 127 (of 255) was stored as mean 254 (issue 41.5)."""
    ramp = np.linspace(0, 65535, 64 * 48).reshape(48, 64)  # 0 .. 65535 left to right, down
    grey = ramp.astype(np.uint16)
    images = {
        'i16.png': Image.fromarray(grey),  # I;16
        'i16b.tif': Image.frombytes('I;16B', (64, 48), grey.astype('>u2').tobytes()),
        'i32.tif': Image.fromarray(grey.astype(np.int32)),  # I, values within 0..65535
        'f32.tif': Image.fromarray((ramp / 65535).astype(np.float32)),  # F, within 0..1
    }
    expect = ramp * 255 / 65535
    conversions = {
        'i16.png': '16-bit grayscale (I;16) scaled to 8 bits',
        'i16b.tif': '16-bit grayscale (I;16B) scaled to 8 bits',
        'i32.tif': '32-bit integer grayscale (I) scaled to 8 bits from 0..65535',
        'f32.tif': '32-bit float grayscale (F) scaled to 8 bits from 0..1'}
    for name, image in images.items():
        image.save(tmp_path / name)
        pixels, conversion = _stored(tmp_path / name)
        assert conversion == conversions[name]
        assert abs(pixels.mean() - expect.mean()) < 1.5, name  # 127.5; clipped: about 254
        assert np.abs(pixels[..., 0] - expect).mean() < 2.0, name
    flat = Image.fromarray(np.full((16, 16), 127 * 257, np.uint16))
    flat.save(tmp_path / 'flat.png')
    assert abs(_stored(tmp_path / 'flat.png')[0].mean() - 127) < 1.0
    colour = np.zeros((16, 16, 3), np.uint16)
    colour[..., 0], colour[..., 1], colour[..., 2] = 200 * 257, 100 * 257, 30 * 257
    (tmp_path / 'rgb16.png').write_bytes(_png16_rgb(colour))
    pixels, conversion = _stored(tmp_path / 'rgb16.png')
    assert conversion == '16-bit RGB PNG reduced to 8 bits'
    np.testing.assert_allclose(pixels.reshape(-1, 3).mean(0), [200, 100, 30], atol=1.5)
    for order in '<>':  # Pillow opens a 16-bit RGB TIFF as RGB too: said, not "re-encoded"
        (tmp_path / 'rgb16.tif').write_bytes(_tiff16_rgb(colour, order))
        pixels, conversion = _stored(tmp_path / 'rgb16.tif')
        assert conversion == '16-bit RGB TIFF reduced to 8 bits'
        np.testing.assert_allclose(pixels.reshape(-1, 3).mean(0), [200, 100, 30], atol=1.5)
    Image.fromarray(np.full((8, 8, 3), 90, np.uint8)).save(tmp_path / 'rgb8.tif')
    assert _stored(tmp_path / 'rgb8.tif')[1] == 'RGB TIFF re-encoded as JPEG'
    big = Image.fromarray((ramp * 30).astype(np.int32))  # beyond 16 bits: 0..its maximum
    big.save(tmp_path / 'big.tif')
    pixels, conversion = _stored(tmp_path / 'big.tif')
    assert conversion == ('32-bit integer grayscale (I) scaled to 8 bits from 0..1.96605e+06 '
                          '(its maximum)')
    assert abs(pixels.mean() - 127.5) < 1.5


def test_the_summary_counts_every_conversion_that_changed_pixel_values(converted):
    _, result, _ = converted
    assert result['conversions'] == {'RGBA: alpha dropped onto white': 5,
                                     'CMYK converted to RGB': 5,
                                     'palette (P) expanded to RGB': 5}
    assert convert_tool.image_encoding.summary_line(result['conversions'], 20) == (
        'pixel values changed: 15 of 20 images, converted to 8-bit RGB JPEG (quality 95): 5 '
        'CMYK converted to RGB, 5 RGBA: alpha dropped onto white, 5 palette (P) expanded to RGB')
    assert convert_tool.image_encoding.summary_line({}, 4) == (
        'pixel values changed: none (every image is an 8-bit RGB JPEG, stored byte for byte)')


@pytest.mark.parametrize('setup, words', [
    ('missing', 'is not a directory'),
    ('no_classes', 'has no class sub-folders'),
    ('empty_class', 'has no images'),
    ('not_an_image', '1 of 3 images cannot be read'),
    ('too_many_shards', '--num_train_shards=50 is more than'),
    ('existing', 'already holds shards'),
])
def test_errors(tmp_path, setup, words):
    src, out = tmp_path / 'in', tmp_path / 'out'
    shards = 50 if setup == 'too_many_shards' else 2
    if setup != 'missing':
        src.mkdir()
    if setup in ('empty_class', 'not_an_image', 'too_many_shards', 'existing'):
        (src / 'cls').mkdir()
        if setup != 'empty_class':
            Image.new('RGB', (4, 4)).save(src / 'cls' / 'a.png')
            Image.new('RGB', (4, 4)).save(src / 'cls' / 'b.png')
    if setup == 'not_an_image':  # an image's name, not an image's bytes
        (src / 'cls' / 'broken.jpg').write_text('hello')
    if setup == 'existing':
        out.mkdir()
        (out / 'train-00000-of-00001').write_bytes(b'')
    with pytest.raises(convert_tool.ConvertError, match=words):
        convert_tool.convert(str(src), str(out), num_train_shards=shards,
                             num_validation_shards=1, validation_fraction=0.0, seed=0,
                             progress=False)


@pytest.mark.cli
def test_cli_error_exit_is_one_line(tmp_path):
    # Before: exit 1 for a bad flag value (a usage error: 2, as for tf_cnn_benchmarks).
    run = _cli('--input_dir=%s' % (tmp_path / 'nope'), '--output_dir=%s' % (tmp_path / 'o'))
    assert (run.returncode, run.stdout) == (2, '')
    assert run.stderr.splitlines() == [
        'error: --input_dir=%s is not a directory; give the folder of class sub-folders of '
        'images (input_dir/<class>/<image>)' % (tmp_path / 'nope')]
    run = _cli('--output_dir=x')
    assert run.returncode == 2 and 'error: --input_dir is required' in run.stderr


@pytest.mark.cli
def test_cli_success_with_progress_bar(tmp_path, capfd):
    (tmp_path / 'in' / 'cls').mkdir(parents=True)
    for i in range(3):
        Image.new('RGB', (5, 5), (i, 0, 0)).save(tmp_path / 'in' / 'cls' / ('%d.png' % i))
    run = h.converter_main(capfd, '--input_dir=%s' % (tmp_path / 'in'),
                           '--output_dir=%s' % (tmp_path / 'out'), '--num_train_shards=1',
                           '--num_validation_shards=1', '--validation_fraction=0.34', '--seed=2')
    assert run.returncode == 0, run.stderr
    assert '3/3 images' in run.stderr and 'Traceback' not in run.stderr
    # Each count with its noun in its number (it said '1 shards', '1 validation images').
    assert ('wrote 2 train images in 1 shard and 1 validation image in 1 shard of 1 class '
            '(labels 1..1) to ') in run.stdout
    assert run.stdout.splitlines()[-1] == (
        'pixel values changed: 3 of 3 images, converted to 8-bit RGB JPEG (quality 95): 3 RGB '
        'PNG re-encoded as JPEG')
    assert sorted(os.listdir(tmp_path / 'out')) == [
        'class_counts.txt', 'labels.txt', 'train-00000-of-00001', 'validation-00000-of-00001']


@pytest.mark.cli
def test_cli_scales_a_16_bit_png_and_counts_it_in_the_summary(tmp_path, capfd):
    """Issue 41.5 as a user meets it: a 16-bit grayscale PNG of mean 127 (of 255) beside an
    8-bit RGB JPEG was stored as mean 254, exit 0 and no word; now stored near 127 and counted
    in the summary's last line (the JPEG is kept byte for byte, not counted)."""
    (tmp_path / 'in' / 'a').mkdir(parents=True)
    (tmp_path / 'in' / 'b').mkdir()
    ramp = np.linspace(0, 65535, 64 * 48).reshape(48, 64).astype(np.uint16)
    Image.fromarray(ramp).save(tmp_path / 'in' / 'a' / 'scan.png')
    (tmp_path / 'in' / 'b' / 'photo.jpg').write_bytes(h.image_bytes(9, 7))
    run = h.converter_main(capfd, '--input_dir=%s' % (tmp_path / 'in'),
                           '--output_dir=%s' % (tmp_path / 'out'), '--num_train_shards=1',
                           '--num_validation_shards=1', '--validation_fraction=0')
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[-1] == (
        'pixel values changed: 1 of 2 images, converted to 8-bit RGB JPEG (quality 95): 1 '
        '16-bit grayscale (I;16) scaled to 8 bits')
    [scan] = [f for f in _records([str(tmp_path / 'out' / 'train-00000-of-00001')])
              if f['image/filename'].bytes_list.value == [b'scan.png']]
    pixels = np.asarray(Image.open(io.BytesIO(scan['image/encoded'].bytes_list.value[0])))
    assert abs(pixels.mean() - ramp.mean() / 257) < 1.5  # 127.5; clipped it was about 254
    assert (pixels == 255).mean() < 0.05  # clipped: 91% at 255


def test_unreadable_image_leaves_no_partial_shard_and_a_rerun_works(tmp_path):
    src, out = tmp_path / 'in', tmp_path / 'out'
    (src / 'cls').mkdir(parents=True)
    for name in ('a.png', 'b.png'):
        Image.new('RGB', (4, 4)).save(src / 'cls' / name)
    (src / 'cls' / 'broken.jpg').write_text('hello')
    for name in ('c.png', 'd.png'):
        Image.new('RGB', (4, 4)).save(src / 'cls' / name)
    # One image per shard, the bad one not first: finished shards exist when it fails.
    seed = next(s for s in range(100) if not convert_tool.split_examples(
        convert_tool.list_classes(str(src)), 0.0, s)[0][0][0].endswith('broken.jpg'))
    with pytest.raises(convert_tool.ConvertError) as info:
        convert_tool.convert(str(src), str(out), num_train_shards=5, num_validation_shards=1,
                             validation_fraction=0.0, seed=seed, progress=False)
    assert str(info.value) == (
        '1 of 5 images cannot be read, so --output_dir holds no shards: %s (not an image format '
        'Pillow knows); remove or convert it, then run again' % (src / 'cls' / 'broken.jpg'))
    assert not out.exists()  # the folder it created, left empty, is removed
    out.mkdir()  # a folder the user made stays, even empty
    with pytest.raises(convert_tool.ConvertError):
        convert_tool.convert(str(src), str(out), num_train_shards=5, num_validation_shards=1,
                             validation_fraction=0.0, seed=seed, progress=False)
    assert os.listdir(out) == []
    (out / 'train-00000-of-00001.tmp').write_bytes(b'partial shard of a killed run')
    (src / 'cls' / 'broken.jpg').unlink()
    result = convert_tool.convert(str(src), str(out), num_train_shards=1,
                                  num_validation_shards=1, validation_fraction=0.0, seed=0,
                                  progress=False)
    assert result['num_train'] == 4
    assert sorted(os.listdir(out)) == ['class_counts.txt', 'labels.txt', 'train-00000-of-00001']


@pytest.mark.cli
def test_cli_error_after_the_checked_images_bar_starts_its_own_line(tmp_path, capfd):
    (tmp_path / 'in' / 'cls').mkdir(parents=True)
    for i in range(3):
        Image.new('RGB', (5, 5)).save(tmp_path / 'in' / 'cls' / ('%d.png' % i))
    (tmp_path / 'in' / 'cls' / 'z.jpg').write_text('not an image')
    run = h.converter_main(capfd, '--input_dir=%s' % (tmp_path / 'in'),
                           '--output_dir=%s' % (tmp_path / 'out'), '--num_train_shards=4',
                           '--validation_fraction=0', '--seed=1', '--num_threads=1')
    assert run.returncode == 1
    assert run.stderr.splitlines()[-1].startswith('error: 1 of 4 images cannot be read, ')
    assert run.stderr.splitlines()[-2].endswith(' 4/4 images')


def test_cli_help_lists_the_flags_and_exits_0():
    run = _cli('--help')
    assert run.returncode == 0 and run.stderr == ''
    assert run.stdout.startswith('Converts a folder of class sub-folders of images')
    assert 'usage: tf_cnn_build_tfrecords --input_dir=photos' in run.stdout
    for name in ('input_dir', 'output_dir', 'num_train_shards', 'validation_fraction', 'overwrite'):
        assert '  --%s: ' % name in run.stdout


def _digests(folder):
    return {name: hashlib.sha256((folder / name).read_bytes()).hexdigest()
            for name in sorted(os.listdir(folder))}


def test_same_input_gives_identical_bytes_in_another_process(converted):
    """The fixture converted in this process; the CLI converts again in a new one.

    Protobuf map order differs from process to process: without deterministic serialization
    every shard's digest differed from run to run.
    """
    root, _, _ = converted
    run = _cli('--input_dir=%s' % (root / 'in'), '--output_dir=%s' % (root / 'again'),
               '--class_text_file=%s' % (root / 'texts.txt'), '--num_threads=2', '--noprogress',
               *('--%s=%s' % item for item in CONVERTED_FLAGS.items()))
    assert run.returncode == 0, run.stderr
    digests = _digests(root / 'out')
    assert len(digests) == 7  # 5 shards, labels.txt, class_counts.txt
    assert _digests(root / 'again') == digests
    # The per-class table, at the end of stdout: round(0.4 x 5) = 2 validation images each.
    assert run.stdout.splitlines()[:6] == [
        'label  synset    train  validation',
        '    1  ant           3           2',
        '    2  bee           3           2',
        '    3  moth          3           2',
        '    4  zebra         3           2',
        'total               12           8']
    assert run.stderr.splitlines() == [
        'warning: --class_text_file %s has no text for 2 of 4 classes (moth, zebra); their '
        'image/class/text is the folder name' % (root / 'texts.txt')]


def test_missing_class_texts_warn(converted):
    root, result, warnings = converted
    assert warnings == [
        '--class_text_file %s has no text for 2 of 4 classes (moth, zebra); their '
        'image/class/text is the folder name' % (root / 'texts.txt')]
    assert [text for _, _, text in result['classes']] == [
        'small insect', 'buzzing insect', 'moth', 'zebra']


def _small_folders(root, sizes):
    for name, count in sizes.items():
        (root / name).mkdir(parents=True)
        for i in range(count):
            Image.new('RGB', (4, 3), (i, 0, 0)).save(root / name / ('%d.png' % i))
    return root


def test_per_class_counts_and_classes_missing_from_a_split(tmp_path):
    # round(0.5 x n): 1 -> 0 (Python rounds half to even), 2 -> 1, 4 -> 2, 3 -> 2.
    src = _small_folders(tmp_path / 'in', {'c1': 1, 'c2': 2, 'c4': 4, 'c3': 3})
    warnings = []
    result = convert_tool.convert(str(src), str(tmp_path / 'out'), num_train_shards=2,
                                  num_validation_shards=1, validation_fraction=0.5, seed=3,
                                  progress=False, warn=warnings.append)
    assert result['class_counts'] == [(1, 'c1', 1, 0), (2, 'c2', 1, 1), (3, 'c3', 1, 2),
                                      (4, 'c4', 2, 2)]
    assert (tmp_path / 'out' / 'class_counts.txt').read_text().splitlines() == [
        '# label synset train validation', '1 c1 1 0', '2 c2 1 1', '3 c3 1 2', '4 c4 2 2']
    per_label = collections.Counter(
        (split, f['image/class/label'].int64_list.value[0])
        for split in ('train', 'validation') for f in _records(result[split]))
    assert per_label == {('train', 1): 1, ('train', 2): 1, ('train', 3): 1, ('train', 4): 2,
                         ('validation', 2): 1, ('validation', 3): 2, ('validation', 4): 2}
    assert warnings == ['1 of 4 classes have no validation images (c1); raise '
                        '--validation_fraction or add images']
    assert convert_tool.format_class_counts(result['class_counts']) == [
        'label  synset    train  validation',
        '    1  c1            1           0',
        '    2  c2            1           1',
        '    3  c3            1           2',
        '    4  c4            2           2',
        'total                5           5']


@pytest.mark.parametrize('fraction, warning', [
    (0.0, 'the validation split is empty (--validation_fraction=0 of 3 images): no validation '
          'shards are written (--eval needs them); raise --validation_fraction'),
    (1.0, 'the train split is empty (--validation_fraction=1 of 3 images): no train shards are '
          'written; lower --validation_fraction'),
])
def test_an_empty_split_warns(tmp_path, fraction, warning):
    src = _small_folders(tmp_path / 'in', {'a': 1, 'b': 2})
    warnings = []
    result = convert_tool.convert(str(src), str(tmp_path / 'out'), num_train_shards=1,
                                  num_validation_shards=1, validation_fraction=fraction, seed=0,
                                  progress=False, warn=warnings.append)
    assert warnings == [warning]
    assert result['num_train'] + result['num_validation'] == 3


@pytest.mark.parametrize('text, words', [
    ('a x\nb y\n\na z\n', "lists synset 'a' twice (lines 1 and 4); keep one line per synset"),
    ('n01 tench\nn02 goldfish\n', 'names none of the 2 class folders (file: n01, n02; folders: '
                                   'a, b); its synsets must be the folder names'),
    ('\n\n', 'has no "<synset> <text>" lines; give one line per class folder'),
])
def test_bad_class_text_file_is_one_error_line_exit_2(tmp_path, text, words):
    src = _small_folders(tmp_path / 'in', {'a': 1, 'b': 1})
    path = tmp_path / 'texts.txt'
    path.write_text(text)
    with pytest.raises(convert_tool.FlagValueError) as info:
        convert_tool.convert(str(src), str(tmp_path / 'out'), num_train_shards=1,
                             num_validation_shards=1, validation_fraction=0.0, seed=0,
                             class_text_file=str(path), progress=False, warn=pytest.fail)
    assert str(info.value) == '--class_text_file %s %s' % (path, words)
    assert not (tmp_path / 'out').exists()  # checked before anything is written


def test_cli_bad_class_text_file_exit_2(tmp_path):
    src = _small_folders(tmp_path / 'in', {'a': 1})
    (tmp_path / 'texts.txt').write_text('a x\na y\n')
    run = _cli('--input_dir=%s' % src, '--output_dir=%s' % (tmp_path / 'out'),
               '--class_text_file=%s' % (tmp_path / 'texts.txt'))
    assert run.returncode == 2 and run.stdout == ''
    assert run.stderr.splitlines() == [
        "error: --class_text_file %s lists synset 'a' twice (lines 1 and 2); keep one line "
        'per synset' % (tmp_path / 'texts.txt')]


def test_stray_files_are_skipped_with_one_warning_naming_them_all(tmp_path):
    src, out = tmp_path / 'in', tmp_path / 'out'
    for cls in ('a', 'b'):
        (src / cls).mkdir(parents=True)
        for i in range(2):
            Image.new('RGB', (4, 4)).save(src / cls / ('%d.png' % i))
    (src / 'a' / 'notes.txt').write_text('hello')
    (src / 'b' / 'Thumbs.db').write_bytes(b'\x00' * 20)
    Image.new('RGB', (4, 4)).save(src / 'b' / 'no_extension', 'PNG')  # an image all the same
    warnings = []
    result = convert_tool.convert(str(src), str(out), num_train_shards=1,
                                  num_validation_shards=1, validation_fraction=0.0, seed=0,
                                  progress=False, warn=warnings.append)
    assert result['num_train'] == 5
    assert warnings[0] == 'skipped 2 files that are not images Pillow can read: %s, %s' % (
        src / 'a' / 'notes.txt', src / 'b' / 'Thumbs.db')
    assert not any('notes.txt' in w for w in warnings[1:])  # one warning
    os.remove(src / 'b' / 'Thumbs.db')  # one such file: it said 'that is not images'
    warnings = []
    convert_tool.convert(str(src), str(tmp_path / 'out1'), num_train_shards=1,
                         num_validation_shards=1, validation_fraction=0.0, seed=0,
                         progress=False, warn=warnings.append)
    assert warnings[0] == 'skipped 1 file that is not an image Pillow can read: %s' % (
        src / 'a' / 'notes.txt')


def test_broken_symbolic_links_are_skipped_with_one_warning_naming_them(tmp_path):
    # Before: a dangling or looping link was left out of the counts without a word.
    src = tmp_path / 'in'
    for cls in ('cat', 'dog'):
        (src / cls).mkdir(parents=True)
        Image.new('RGB', (4, 4)).save(src / cls / '0.png')
    os.symlink(str(tmp_path / 'nonexistent.jpg'), str(src / 'dog' / 'dangling.jpg'))
    os.symlink('x', str(src / 'cat' / 'x.jpg'))
    os.symlink('x.jpg', str(src / 'cat' / 'x'))
    os.symlink('loop', str(src / 'loop'))
    warnings = []
    result = convert_tool.convert(str(src), str(tmp_path / 'out'), num_train_shards=1,
                                  num_validation_shards=1, validation_fraction=0.0, seed=0,
                                  progress=False, warn=warnings.append)
    assert result['num_train'] == 2
    assert warnings[0] == 'skipped 4 symbolic links whose target is missing or loops: %s' % (
        ', '.join(str(p) for p in (src / 'loop', src / 'cat' / 'x', src / 'cat' / 'x.jpg',
                                   src / 'dog' / 'dangling.jpg')))
    assert not any('symbolic' in w for w in warnings[1:])  # one warning
