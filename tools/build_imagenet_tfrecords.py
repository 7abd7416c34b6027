"""Converts a folder of class sub-folders of images into ImageNet-format TFRecord shards.

    python -m tools.build_imagenet_tfrecords --input_dir=photos --output_dir=photos_tfrecords \\
        --num_train_shards=8 --num_validation_shards=2 --validation_fraction=0.2 --seed=1

Input: `input_dir/<class>/<image>` for any image format Pillow reads. Classes get labels 1..K in
sorted folder-name order (0 stays the background class, as in ImageNet's 1001 classes); the
folder name is the synset, and the text is the folder name unless --class_text_file gives lines
`<synset> <text>`. Each class's images are split with --seed: round(fraction x count) go to
validation. Images in RGB JPEG are stored byte for byte; anything else (PNG, CMYK or grayscale
JPEG, GIF, ...) is converted to RGB and stored as JPEG (quality 95).

Output: `train-00000-of-0000N` ... and `validation-00000-of-0000M` with the standard keys
(`image/encoded`, `image/class/label`, `image/class/synset`, `image/class/text`, `image/height`,
`image/width`, `image/colorspace`, `image/channels`, `image/format`, `image/filename`, and one
full-image box `image/object/bbox/{xmin,ymin,xmax,ymax}` = 0, 0, 1, 1 with
`image/object/bbox/label`), plus `labels.txt` (`<label> <synset> <text>` per class). Shards are
written under a temporary name and renamed when complete, so an interrupted run leaves no
truncated shard under a final name, and a run that fails removes the shards it wrote. Errors
print one line `error: ...` and exit with status 1 (2 for bad flags).
"""

from __future__ import annotations

import concurrent.futures
import io
import os
import random
import sys
import time

from absl import flags

_SHARD_PREFIXES = ('train-', 'validation-')


class ConvertError(Exception):
    """A problem with the input or output folder; printed as one line."""


def define_flags(fv: flags.FlagValues) -> None:
    flags.DEFINE_string('input_dir', None, 'Folder of class sub-folders of images.', flag_values=fv)
    flags.DEFINE_string('output_dir', None, 'Folder for the TFRecord shards (created).',
                        flag_values=fv)
    flags.DEFINE_integer('num_train_shards', 8, 'Number of train shards.', lower_bound=1,
                         flag_values=fv)
    flags.DEFINE_integer('num_validation_shards', 2, 'Number of validation shards.',
                         lower_bound=1, flag_values=fv)
    flags.DEFINE_float('validation_fraction', 0.2, 'Fraction of each class for validation.',
                       lower_bound=0.0, upper_bound=1.0, flag_values=fv)
    flags.DEFINE_integer('seed', 0, 'Seed of the train/validation split and shard order.',
                         flag_values=fv)
    flags.DEFINE_string('class_text_file', None, 'Optional lines "<synset> <human-readable '
                        'text>" for image/class/text.', flag_values=fv)
    flags.DEFINE_integer('num_threads', os.cpu_count() or 1, 'Images encoded in parallel.',
                         lower_bound=1, flag_values=fv)
    flags.DEFINE_boolean('overwrite', False, 'Replace existing train-*/validation-* shards in '
                         '--output_dir.', flag_values=fv)
    flags.DEFINE_boolean('progress', True, 'Show a progress bar on stderr.', flag_values=fv)


def list_classes(input_dir: str) -> list[tuple[str, list[str]]]:
    """Returns [(synset, [image paths sorted])] for the sub-folders of input_dir, sorted.

    Raises:
      ConvertError: the folder is missing, has no sub-folders, or a sub-folder has no files.
    """
    if not os.path.isdir(input_dir):
        raise ConvertError('--input_dir %s is not a directory' % input_dir)
    classes = []
    for name in sorted(os.listdir(input_dir)):
        folder = os.path.join(input_dir, name)
        if name.startswith('.') or not os.path.isdir(folder):
            continue
        files = sorted(os.path.join(folder, f) for f in os.listdir(folder)
                       if not f.startswith('.') and os.path.isfile(os.path.join(folder, f)))
        if not files:
            raise ConvertError('class folder %s has no images' % folder)
        classes.append((name, files))
    if not classes:
        raise ConvertError('--input_dir %s has no class sub-folders (expected '
                           'input_dir/<class>/<image>)' % input_dir)
    return classes


def read_class_texts(path: str | None) -> dict[str, str]:
    """Parses `<synset> <text>` lines; an empty dict without a file."""
    if not path:
        return {}
    texts = {}
    try:
        with open(path, encoding='utf-8') as f:
            for line in f:
                parts = line.strip().split(None, 1)
                if parts:
                    texts[parts[0]] = parts[1] if len(parts) > 1 else parts[0]
    except OSError as e:
        raise ConvertError('cannot read --class_text_file %s: %s' % (path, e.strerror)) from None
    return texts


def split_examples(classes, fraction: float, seed: int):
    """Splits each class with a seeded shuffle, then shuffles each split.

    Returns:
      (train, validation): lists of (path, label, synset), labels 1..K in class order.
    """
    rng = random.Random(seed)
    train, validation = [], []
    for label, (synset, files) in enumerate(classes, start=1):
        files = list(files)
        rng.shuffle(files)
        n_val = int(round(fraction * len(files)))
        validation += [(f, label, synset) for f in files[:n_val]]
        train += [(f, label, synset) for f in files[n_val:]]
    rng.shuffle(train)
    rng.shuffle(validation)
    return train, validation


def encode_image(path: str) -> tuple[bytes, int, int]:
    """Returns (JPEG bytes, height, width): the file itself for an RGB JPEG, else a conversion.

    Raises:
      ConvertError: Pillow cannot read the file.
    """
    from PIL import Image, UnidentifiedImageError
    try:
        with open(path, 'rb') as f:
            data = f.read()
        with Image.open(io.BytesIO(data)) as image:
            image.load()
            width, height = image.size
            if image.format == 'JPEG' and image.mode == 'RGB':
                return data, height, width
            if image.mode in ('RGBA', 'LA', 'P', 'PA'):
                image = image.convert('RGBA')
                background = Image.new('RGB', image.size, (255, 255, 255))
                background.paste(image, mask=image.split()[3])
                image = background
            out = io.BytesIO()
            image.convert('RGB').save(out, 'JPEG', quality=95)
            return out.getvalue(), height, width
    except UnidentifiedImageError:
        raise ConvertError('cannot read image %s: not an image format Pillow knows (remove the '
                           'file or convert it)' % path) from None
    except (OSError, ValueError, SyntaxError) as e:
        raise ConvertError('cannot read image %s: %s' % (path, e)) from None


def make_example(encoded: bytes, height: int, width: int, label: int, synset: str, text: str,
                 filename: str) -> bytes:
    """A serialized ImageNet-format tf.train.Example with one full-image box."""
    import tensorflow as tf

    def b(value):
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))

    def i(value):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))

    def f(value):
        return tf.train.Feature(float_list=tf.train.FloatList(value=[value]))

    feature = {
        'image/encoded': b(encoded), 'image/format': b(b'JPEG'),
        'image/colorspace': b(b'RGB'), 'image/channels': i(3),
        'image/height': i(height), 'image/width': i(width),
        'image/class/label': i(label), 'image/class/synset': b(synset.encode()),
        'image/class/text': b(text.encode()), 'image/filename': b(filename.encode()),
        'image/object/bbox/xmin': f(0.0), 'image/object/bbox/ymin': f(0.0),
        'image/object/bbox/xmax': f(1.0), 'image/object/bbox/ymax': f(1.0),
        'image/object/bbox/label': i(label),
    }
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


class Progress:
    """A one-line progress bar on stderr: `[#####.....] 120/500 images`."""

    def __init__(self, total: int, enabled: bool = True, width: int = 30):
        self.total, self.enabled, self.width, self.done = total, enabled, width, 0
        self._last = 0.0

    def interrupt(self) -> None:
        """Ends a partly drawn bar with a newline, so that an error line starts on its own."""
        if self.enabled and 0 < self.done < self.total:
            sys.stderr.write('\n')
            sys.stderr.flush()

    def update(self, count: int = 1) -> None:
        self.done += count
        now = time.monotonic()
        if self.enabled and (now - self._last >= 0.2 or self.done >= self.total):
            self._last = now
            filled = self.width * self.done // max(self.total, 1)
            sys.stderr.write('\r[%s%s] %d/%d images' % ('#' * filled, '.' * (self.width - filled),
                                                        self.done, self.total))
            if self.done >= self.total:
                sys.stderr.write('\n')
            sys.stderr.flush()


def write_split(name: str, examples, num_shards: int, output_dir: str, texts, pool,
                progress: Progress) -> list[str]:
    """Writes one split as num_shards shards, examples dealt round-robin. Returns the paths."""
    import tensorflow as tf
    paths = []
    for shard in range(num_shards):
        path = os.path.join(output_dir, '%s-%05d-of-%05d' % (name, shard, num_shards))
        part = examples[shard::num_shards]
        encoded = pool.map(encode_image, [p for p, _, _ in part])
        try:
            with tf.io.TFRecordWriter(path + '.tmp') as writer:
                for (src, label, synset), (data, height, width) in zip(part, encoded,
                                                                      strict=True):
                    writer.write(make_example(data, height, width, label, synset,
                                              texts.get(synset, synset), os.path.basename(src)))
                    progress.update()
        except BaseException:
            os.remove(path + '.tmp')  # no partial shard left behind
            raise
        os.replace(path + '.tmp', path)
        paths.append(path)
    return paths


def _prepare_output(output_dir: str, overwrite: bool) -> None:
    try:
        os.makedirs(output_dir, exist_ok=True)
    except OSError as e:
        raise ConvertError('--output_dir %s cannot be created: %s; choose another folder'
                           % (output_dir, e.strerror)) from None
    for name in os.listdir(output_dir):  # partial shards of a killed run: never data
        if name.startswith(_SHARD_PREFIXES) and name.endswith('.tmp'):
            os.remove(os.path.join(output_dir, name))
    old = sorted(n for n in os.listdir(output_dir) if n.startswith(_SHARD_PREFIXES))
    if old and not overwrite:
        raise ConvertError('--output_dir %s already holds shards (%s); pass --overwrite to '
                           'replace them' % (output_dir, old[0]))
    for name in old:
        os.remove(os.path.join(output_dir, name))


def _import_tensorflow_quietly() -> None:
    """Imports TensorFlow with its C++ start-up chatter kept off stderr."""
    if 'tensorflow' in sys.modules:
        return
    os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if repo not in sys.path:  # run as a script rather than with -m from the checkout
        sys.path.insert(0, repo)
    from tf_cnn_benchmarks import cnn_util
    with cnn_util.captured_fd_stderr():
        import tensorflow  # noqa: F401


def convert(input_dir: str, output_dir: str, *, num_train_shards: int, num_validation_shards: int,
            validation_fraction: float, seed: int, class_text_file: str | None = None,
            num_threads: int = 1, overwrite: bool = False, progress: bool = True) -> dict:
    """Runs the conversion (see the module docstring).

    Returns:
      {'train': [paths], 'validation': [paths], 'classes': [(label, synset, text)],
       'num_train': int, 'num_validation': int}. A split with no images writes no shards.

    Raises:
      ConvertError: bad input folder, unreadable image, more shards than images, existing
        shards without overwrite.
    """
    if os.path.abspath(output_dir).startswith(os.path.abspath(input_dir) + os.sep):
        raise ConvertError('--output_dir %s is inside --input_dir; its shards would become a '
                           'class next time' % output_dir)
    classes = list_classes(input_dir)
    texts = read_class_texts(class_text_file)
    train, validation = split_examples(classes, validation_fraction, seed)
    for name, examples, shards in (('train', train, num_train_shards),
                                   ('validation', validation, num_validation_shards)):
        if examples and shards > len(examples):
            raise ConvertError('--num_%s_shards=%d is more than the %d %s images; use fewer '
                               'shards' % (name, shards, len(examples), name))
    _prepare_output(output_dir, overwrite)
    _import_tensorflow_quietly()
    bar = Progress(len(train) + len(validation), progress)
    result = {'train': [], 'validation': [], 'num_train': len(train),
              'num_validation': len(validation),
              'classes': [(i, s, texts.get(s, s)) for i, (s, _) in enumerate(classes, start=1)]}
    try:
        with concurrent.futures.ThreadPoolExecutor(num_threads) as pool:
            for name, examples, shards in (('train', train, num_train_shards),
                                           ('validation', validation, num_validation_shards)):
                if examples:
                    result[name] = write_split(name, examples, shards, output_dir, texts, pool,
                                               bar)
    except BaseException:
        bar.interrupt()
        # An incomplete set of shards is no dataset: leave the folder as it was found.
        for stale in os.listdir(output_dir):
            if stale.startswith(_SHARD_PREFIXES):
                os.remove(os.path.join(output_dir, stale))
        raise
    with open(os.path.join(output_dir, 'labels.txt'), 'w', encoding='utf-8') as f:
        for label, synset, text in result['classes']:
            f.write('%d %s %s\n' % (label, synset, text))
    return result


def main(argv: list[str] | None = None) -> int:
    """Command-line entry; returns the exit status (0, 1 for errors, 2 for bad flags)."""
    argv = list(sys.argv if argv is None else argv)
    fv = flags.FlagValues()
    define_flags(fv)
    if any(a in ('-h', '--help', '-help', '--helpfull', '--helpshort') for a in argv[1:]):
        print(__doc__.split('\n\n')[0] + '\n')
        print(__doc__.split('\n\n')[1].replace('    python -m tools.build_imagenet_tfrecords',
                                                'usage: tf_cnn_build_tfrecords'))
        print('\nflags:')
        for name in sorted(fv):
            flag = fv[name]
            print('  --%s: %s (default: %s)' % (name, flag.help, flag.default_as_str))
        return 0
    try:
        rest = fv(argv)
        if len(rest) > 1:
            raise flags.Error('unexpected arguments: %s' % ' '.join(rest[1:]))
        for name in ('input_dir', 'output_dir'):
            if not fv[name].value:
                raise flags.Error('--%s is required' % name)
    except flags.Error as e:
        print('error: %s' % e, file=sys.stderr)
        return 2
    try:
        result = convert(fv.input_dir, fv.output_dir, num_train_shards=fv.num_train_shards,
                         num_validation_shards=fv.num_validation_shards,
                         validation_fraction=fv.validation_fraction, seed=fv.seed,
                         class_text_file=fv.class_text_file, num_threads=fv.num_threads,
                         overwrite=fv.overwrite, progress=fv.progress)
    except (ConvertError, OSError) as e:
        print('error: %s' % e, file=sys.stderr)
        return 1
    print('wrote %d train images in %d shards and %d validation images in %d shards of %d '
          'classes (labels 1..%d) to %s' % (
              result['num_train'], len(result['train']), result['num_validation'],
              len(result['validation']), len(result['classes']), len(result['classes']),
              fv.output_dir))
    return 0


def run_main() -> None:
    """Console entry point of `tf_cnn_build_tfrecords`."""
    sys.exit(main())


if __name__ == '__main__':
    run_main()
