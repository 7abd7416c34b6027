"""Converts a folder of class sub-folders of images into ImageNet-format TFRecord shards.

    python -m tools.build_imagenet_tfrecords --input_dir=photos --output_dir=photos_tfrecords \\
        --num_train_shards=8 --num_validation_shards=2 --validation_fraction=0.2 --seed=1

Input: `input_dir/<class>/<image>` for any image format Pillow reads; image files anywhere else
(in a class folder's sub-folders, hidden, loose in input_dir) are left out, each reason with a
warning (class_folders.py). Classes get labels 1..K in sorted folder-name order (0 stays the
background class, as in ImageNet's 1001 classes); the synset is the folder name with whitespace
written as '_' (one word of labels.txt), the text the folder name unless --class_text_file
gives lines `<synset> <text>` (a file that names none of the folders, or names a synset twice,
is an error; classes it gives no text get a warning). Each class's images are split with --seed:
round(fraction x count) go to validation; an empty split, or a class absent from a split, gets
a warning. Images in RGB JPEG are stored byte for byte; anything else (PNG, CMYK or grayscale
JPEG, GIF, 16-bit PNG or TIFF, ...) is converted to 8-bit RGB and stored as JPEG (quality 95):
high bit depths are scaled, not clipped, and alpha is composed onto white (image_encoding.py);
the summary counts every image whose pixel values changed, by conversion.

Output: `train-00000-of-0000N` ... and `validation-00000-of-0000M` with the standard keys
(`image/encoded`, `image/class/label`, `image/class/synset`, `image/class/text`, `image/height`,
`image/width`, `image/colorspace`, `image/channels`, `image/format`, `image/filename`, and one
full-image box `image/object/bbox/{xmin,ymin,xmax,ymax}` = 0, 0, 1, 1 with
`image/object/bbox/label`), plus `labels.txt` (`<label> <synset> <text>` per class) and
`class_counts.txt` (`<label> <synset> <train images> <validation images>` per class, also
printed at the end). The same input, flags and seed give byte-identical shards. Shards are
written under a temporary name and renamed when complete, so an interrupted run leaves no
truncated shard under a final name, and a run that fails removes the shards it wrote. Every
image is read once, while the shards are written; images Pillow cannot read (a truncated JPEG,
a text file named x.jpg) are all collected, none skipped: from the first one on no shard is
written, the rest are still read, and the run ends with one error naming how many and the
first five, each with its reason, and no shards in --output_dir. An image over Pillow's
limit against decompression bombs (178956970 pixels, width x height) is one of those, named
with its size and the fix (resize it, leave it out, or raise the limit with
--max_image_pixels); one over Pillow's warning size (89478485) is converted and named in a
warning. A failed run removes an --output_dir it created. Errors print one line
`error: ...` and exit with status 1 (2 for what a flag or another folder fixes: --input_dir not
a folder of class folders, an --output_dir that cannot be created or written (read-only),
already holds shards (--overwrite) or lies inside --input_dir, more shards than images, a bad
--class_text_file, a Python without Pillow).
"""

from __future__ import annotations

import collections
import concurrent.futures
import functools
import importlib.util
import os
import random
import sys
import tempfile
import time

from absl import flags

from tf_cnn_benchmarks import cnn_util, console, package_info
from tf_cnn_benchmarks.hardware import user_dirs

from . import image_encoding
from .class_folders import ConvertError, FlagValueError, list_classes, load_image_plugins
from .class_folders import print_warning as _warn
from .class_folders import some_names as _some
from .convert_report import (
    class_counts,
    format_class_counts,
    large_images_warning,
    skipped_line,
    unreadable_message,
    warn_empty_splits,
)

_SHARD_PREFIXES = ('train-', 'validation-')

#: The usage error of a Python without Pillow (setup.py installs it; a copy run from a checkout,
#: or an environment that removed it, may lack it), printed before any folder is read.
NO_PILLOW = ('tf_cnn_build_tfrecords needs Pillow to read the images, which is not installed: '
             'pip install Pillow, or %s' % package_info.install_hint())


def pillow_missing() -> bool:
    """Whether Pillow (the `PIL` package, which reads and converts every image) cannot be
    imported: not installed, or hidden (`sys.modules['PIL'] = None`)."""
    try:
        return importlib.util.find_spec('PIL') is None
    except (ImportError, ValueError):  # a half-set-up PIL in sys.modules
        return True


def define_flags(fv: flags.FlagValues) -> None:
    flags.DEFINE_string('input_dir', None, 'Folder of class sub-folders of images.', flag_values=fv)
    flags.DEFINE_string('output_dir', None, 'Folder for the TFRecord shards (created).',
                        flag_values=fv)
    flags.DEFINE_integer('num_train_shards', 8, 'Number of train shards (not given: at most '
                         'one per train image).', lower_bound=1, flag_values=fv)
    flags.DEFINE_integer('num_validation_shards', 2, 'Number of validation shards (not given: '
                         'at most one per validation image).', lower_bound=1, flag_values=fv)
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
    flags.DEFINE_integer('max_image_pixels', None, 'Largest image to read, in pixels (width x '
                         'height); a larger one is an error, a guard against decompression '
                         "bombs (small files that decode to gigabytes). Not given: Pillow's "
                         'limit, 2 x PIL.Image.MAX_IMAGE_PIXELS = 178956970, with a warning '
                         'naming each image over 89478485; 0: no limit.', lower_bound=0,
                         flag_values=fv)


def read_class_texts(path: str | None) -> dict[str, str | None]:
    """Parses `<synset> <text>` lines (blank lines skipped); an empty dict without a file.

    Returns:
      {synset: text}, text None for a line holding only a synset.

    Raises:
      FlagValueError: the file cannot be read, or lists a synset twice.
    """
    if not path:
        return {}
    texts, line_of = {}, {}
    try:
        with open(path, encoding='utf-8') as f:
            for number, line in enumerate(f, start=1):
                parts = line.strip().split(None, 1)
                if not parts:
                    continue
                if parts[0] in texts:
                    raise FlagValueError(
                        '--class_text_file %s lists synset %r twice (lines %d and %d); keep '
                        'one line per synset' % (path, parts[0], line_of[parts[0]], number))
                texts[parts[0]] = parts[1] if len(parts) > 1 else None
                line_of[parts[0]] = number
    except (OSError, UnicodeDecodeError) as e:
        raise FlagValueError('cannot read --class_text_file %s: %s; check the path and that it '
                             'is UTF-8 text' % (path, getattr(e, 'strerror', None) or e)) from None
    return texts


def check_class_texts(texts: dict[str, str | None], synsets: list[str], path: str | None,
                      warn=_warn, default_texts: dict[str, str] | None = None
                      ) -> dict[str, str]:
    """Matches --class_text_file entries to the class folders.

    Synsets of the file without a folder are allowed (e.g. ImageNet's list of all synsets for a
    subset of its classes); a file that names none of the folders is a wrong file.

    Args:
      texts: read_class_texts' result.
      synsets: the classes' synsets (folder names, whitespace as '_': class_folders.py).
      path: the file's name, for messages; None when no file was given (nothing to check).
      warn: called with one line when some classes get no text.
      default_texts: {synset: the folder name} (ClassFolder.text); the synset when absent.

    Returns:
      {synset: text} for every class; the folder name where the file gives no text.

    Raises:
      FlagValueError: the file names none of the class folders.
    """
    if path is not None:
        if not texts:
            raise FlagValueError('--class_text_file %s has no "<synset> <text>" lines; give one '
                                 'line per class folder' % path)
        if not set(texts) & set(synsets):
            raise FlagValueError(
                '--class_text_file %s names none of the %d class folders (file: %s; folders: '
                '%s); its synsets must be the folder names' % (
                    path, len(synsets), _some(list(texts), 3), _some(synsets, 3)))
        missing = [s for s in synsets if not texts.get(s)]
        if missing:
            warn('--class_text_file %s has no text for %d of %d classes (%s); their '
                 'image/class/text is the folder name' % (path, len(missing), len(synsets),
                                                          _some(missing)))
    return {s: texts.get(s) or (default_texts or {}).get(s, s) for s in synsets}


def split_examples(classes, fraction: float, seed: int):
    """Splits each class with a seeded shuffle, then shuffles each split.

    Returns:
      (train, validation): lists of (path, label, synset), labels 1..K in class order.
    """
    rng = random.Random(seed)
    train, validation = [], []
    for label, (synset, files, _) in enumerate(classes, start=1):
        files = list(files)
        rng.shuffle(files)
        n_val = int(round(fraction * len(files)))
        validation += [(f, label, synset) for f in files[:n_val]]
        train += [(f, label, synset) for f in files[n_val:]]
    rng.shuffle(train)
    rng.shuffle(validation)
    return train, validation


def _utf8(name: str) -> bytes:
    """A name's bytes: UTF-8, and a file or folder name's bytes as on disk even when the
    process's file system encoding is ASCII (names read with surrogate escapes)."""
    return name.encode('utf-8', 'surrogateescape')


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
        'image/class/label': i(label), 'image/class/synset': b(_utf8(synset)),
        'image/class/text': b(_utf8(text)), 'image/filename': b(_utf8(filename)),
        'image/object/bbox/xmin': f(0.0), 'image/object/bbox/ymin': f(0.0),
        'image/object/bbox/xmax': f(1.0), 'image/object/bbox/ymax': f(1.0),
        'image/object/bbox/label': i(label),
    }
    # Deterministic: the feature map's order otherwise changes from process to process, and so
    # would the shards' bytes.
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString(
        deterministic=True)


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


class Tally:
    """What a conversion counts while it writes.

    Attributes:
      limits: image_encoding.PixelLimits of the images read.
      conversions: Counter({conversion: images}) of the images whose pixel values changed.
      large: [(path, width, height)] of the images over limits.warn.
    """

    def __init__(self, limits: image_encoding.PixelLimits):
        self.limits, self.conversions, self.large = limits, collections.Counter(), []

    def count(self, path: str, image: image_encoding.Encoded) -> None:
        if image.conversion:
            self.conversions[image.conversion] += 1
        if self.limits.warn and image.width * image.height > self.limits.warn:
            self.large.append((path, image.width, image.height))


def _write_shard(path: str, part, images, texts, progress: Progress,
                 tally: Tally) -> image_encoding.Unreadable | None:
    """Writes `part`'s records from `images` (read_image's answers, in part's order) to
    `path`; at the first unreadable image it stops, removes the partial shard and returns that
    image (the rest of `images` is left to the caller), else renames the shard into place."""
    import tensorflow as tf
    bad = None
    try:
        with tf.io.TFRecordWriter(os.fsencode(path + '.tmp')) as writer:
            for (src, label, synset), image in zip(part, images):
                progress.update()
                if isinstance(image, image_encoding.Unreadable):
                    bad = image
                    break
                writer.write(make_example(image.data, image.height, image.width, label,
                                          synset, texts.get(synset, synset),
                                          os.path.basename(src)))
                tally.count(src, image)
    except BaseException:
        if os.path.exists(path + '.tmp'):  # else the writer's own error is the one to say
            os.remove(path + '.tmp')  # no partial shard left behind
        raise
    if bad is not None:
        os.remove(path + '.tmp')
    else:
        os.replace(path + '.tmp', path)
    return bad


def write_split(name: str, examples, num_shards: int, output_dir: str, texts, pool,
                progress: Progress, tally: Tally,
                unreadable: list[image_encoding.Unreadable]) -> list[str]:
    """Writes one split as num_shards shards, examples dealt round-robin. Returns the paths;
    counts each image written into `tally` (its conversion, whether it is large).

    Records are written in the examples' order whatever order the threads finish in. Every
    image is read once. Images Pillow cannot read are appended to `unreadable`: from the first
    one on (this split's or an earlier one's) no shard is written, and the remaining images
    are still read, so that the caller can name them all.
    """
    paths = []
    for shard in range(num_shards):
        path = os.path.join(output_dir, '%s-%05d-of-%05d' % (name, shard, num_shards))
        part = examples[shard::num_shards]
        images = pool.map(functools.partial(image_encoding.read_image, limits=tally.limits),
                          [p for p, _, _ in part])
        if not unreadable:
            bad = _write_shard(path, part, images, texts, progress, tally)
            if bad is None:
                paths.append(path)
                continue
            unreadable.append(bad)
        for image in images:  # the check goes on without writing
            progress.update()
            if isinstance(image, image_encoding.Unreadable):
                unreadable.append(image)
    return paths


def _remove_if_empty(created: list[str]) -> None:
    """Removes the folders _prepare_output created (innermost first) that are still empty."""
    for folder in created:
        try:
            os.rmdir(folder)
        except OSError:  # not empty (or gone): the folders around it stay too
            return


def _prepare_output(output_dir: str, overwrite: bool) -> list[str]:
    """Creates --output_dir (and missing parents) and removes shards a run left; returns the
    folders it created, innermost first (_remove_if_empty's argument when the run fails)."""
    created, folder = [], os.path.abspath(output_dir)
    while not os.path.exists(folder) and folder != os.path.dirname(folder):
        created.append(folder)
        folder = os.path.dirname(folder)
    try:
        os.makedirs(output_dir, exist_ok=True)
    except OSError as e:
        _remove_if_empty(created)
        raise FlagValueError('--output_dir=%s cannot be created: %s; choose another folder'
                             % (output_dir, e.strerror)) from None
    try:  # an existing folder this user cannot write (read-only): before any image is read
        with tempfile.TemporaryFile(dir=output_dir, prefix='.write-check-'):
            pass
    except OSError as e:
        _remove_if_empty(created)
        raise FlagValueError('--output_dir=%s cannot be written: %s; choose another folder'
                             % (output_dir, e.strerror)) from None
    for name in os.listdir(output_dir):  # partial shards of a killed run: never data
        if name.startswith(_SHARD_PREFIXES) and name.endswith('.tmp'):
            os.remove(os.path.join(output_dir, name))
    old = sorted(n for n in os.listdir(output_dir) if n.startswith(_SHARD_PREFIXES))
    if old and not overwrite:
        raise FlagValueError('--output_dir %s already holds shards (%s); pass --overwrite to '
                             'replace them, or choose another folder' % (output_dir, old[0]))
    for name in old:
        os.remove(os.path.join(output_dir, name))
    return created


def _import_tensorflow_quietly() -> None:
    """Imports TensorFlow with its C++ start-up chatter kept off stderr."""
    if 'tensorflow' in sys.modules:
        return
    os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
    # The installed package, or the checkout when run with -m from its top folder (its entry
    # script loads it as the package).
    from tf_cnn_benchmarks.runtime import runtime_env
    with cnn_util.captured_fd_stderr(), runtime_env.keras_deferred():  # Keras: never used
        import tensorflow  # noqa: F401


def convert(input_dir: str, output_dir: str, *, num_train_shards: int | None,
            num_validation_shards: int | None,
            validation_fraction: float, seed: int, class_text_file: str | None = None,
            num_threads: int = 1, overwrite: bool = False, progress: bool = True,
            max_image_pixels: int | None = None, warn=_warn) -> dict:
    """Runs the conversion (see the module docstring).

    Args:
      num_train_shards, num_validation_shards: shards per split; None (the flag not given):
        the flag's default (8, 2), at most one per image of the split; a count given that
        exceeds the split's images raises ConvertError.
      max_image_pixels: --max_image_pixels: None for Pillow's limits (image_encoding
        .pixel_limits), 0 for none.
      warn: called with each warning line (classes without text, empty splits, skipped files)
        before any shard is written, and with the one naming large images after; the default
        prints `warning: <line>` to stderr.

    Returns:
      {'train': [paths], 'validation': [paths], 'classes': [(label, synset, text)],
       'class_counts': [(label, synset, train images, validation images)],
       'num_train': int, 'num_validation': int, 'conversions': Counter({conversion: images})
       of the images whose pixel values changed (image_encoding.py), 'skipped':
       Counter({reason: files}) of the files left out (class_folders.SKIPPED_*)}. A split
       with no images writes no shards.

    Raises:
      FlagValueError: --input_dir missing or without class sub-folders, --output_dir that is
        it, inside it, not creatable, not writable or holding shards without overwrite, more
        shards than images, a bad --class_text_file (unreadable, a synset twice, no folder
        named).
      ConvertError: a class folder without images, images
        Pillow cannot read or over the pixel limit (all of them counted, the first five
        named: unreadable_message). An --output_dir this call created is removed then.
    """
    out, into = os.path.realpath(output_dir), os.path.realpath(input_dir)
    if out == into:
        raise FlagValueError('--output_dir=%s is --input_dir; its shards would lie among the '
                             'class folders: choose a folder outside it' % output_dir)
    if out.startswith(into + os.sep):
        raise FlagValueError('--output_dir=%s is inside --input_dir; its shards would become a '
                             'class next time: choose a folder outside it' % output_dir)
    load_image_plugins()
    limits = image_encoding.pixel_limits(max_image_pixels)
    with image_encoding.pixel_check():  # checked by read_image, each image named
        return _convert(input_dir, output_dir, num_train_shards, num_validation_shards,
                        validation_fraction, seed, class_text_file, num_threads, overwrite,
                        progress, limits, warn)


def _convert(input_dir, output_dir, num_train_shards, num_validation_shards,
             validation_fraction, seed, class_text_file, num_threads, overwrite, progress,
             limits, warn) -> dict:
    """convert's work, with Pillow's own pixel check off."""
    skipped = collections.Counter()
    classes = list_classes(input_dir, warn, skipped)
    texts = check_class_texts(read_class_texts(class_text_file), [c.synset for c in classes],
                              class_text_file, warn, {c.synset: c.text for c in classes})
    train, validation = split_examples(classes, validation_fraction, seed)
    # A count the user did not give (None) is the flag's default, at most one shard per image.
    num_train_shards = num_train_shards or max(1, min(8, len(train)))
    num_validation_shards = num_validation_shards or max(1, min(2, len(validation)))
    for name, examples, shards in (('train', train, num_train_shards),
                                   ('validation', validation, num_validation_shards)):
        if examples and shards > len(examples):
            raise FlagValueError('--num_%s_shards=%d is more than the %d %s images; use fewer '
                                 'shards' % (name, shards, len(examples), name))
    warn_empty_splits(classes, train, validation, validation_fraction, warn)
    created = _prepare_output(output_dir, overwrite)
    bar = Progress(len(train) + len(validation), progress)
    tally = Tally(limits)
    result = {'train': [], 'validation': [], 'num_train': len(train),
              'num_validation': len(validation),
              'classes': [(i, c.synset, texts[c.synset])
                          for i, c in enumerate(classes, start=1)],
              'class_counts': class_counts(classes, train, validation),
              'conversions': tally.conversions, 'skipped': skipped}
    unreadable = []
    try:
        _import_tensorflow_quietly()
        with concurrent.futures.ThreadPoolExecutor(num_threads) as pool:
            for name, examples, shards in (('train', train, num_train_shards),
                                           ('validation', validation, num_validation_shards)):
                if examples:
                    result[name] = write_split(name, examples, shards, output_dir, texts, pool,
                                               bar, tally, unreadable)
        if unreadable:
            raise ConvertError(unreadable_message(unreadable, len(train) + len(validation)))
    except BaseException:
        bar.interrupt()
        # An incomplete set of shards is no dataset: leave the folder as it was found.
        for stale in os.listdir(output_dir):
            if stale.startswith(_SHARD_PREFIXES):
                os.remove(os.path.join(output_dir, stale))
        _remove_if_empty(created)
        raise
    if tally.large:
        warn(large_images_warning(tally.large, limits.warn))
    with open(os.path.join(output_dir, 'labels.txt'), 'w', encoding='utf-8',
              errors='surrogateescape') as f:
        for label, synset, text in result['classes']:
            f.write('%d %s %s\n' % (label, synset, text))
    with open(os.path.join(output_dir, 'class_counts.txt'), 'w', encoding='utf-8',
              errors='surrogateescape') as f:
        f.write('# label synset train validation\n')
        for row in result['class_counts']:
            f.write('%d %s %d %d\n' % row)
    return result


def main(argv: list[str] | None = None) -> int:
    """Command-line entry; returns the exit status (0, 1 for errors, 2 for bad flags)."""
    argv = list(sys.argv if argv is None else argv)
    version = console.answer_version(argv[1:])
    if version is not None:
        return version
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
        print('  --version: %s' % console.VERSION_HELP)
        return 0
    try:
        rest = fv(argv)
        if len(rest) > 1:
            raise flags.Error('unexpected arguments: %s' % ' '.join(rest[1:]))
        for name in ('input_dir', 'output_dir'):
            if not fv[name].value:
                raise flags.Error('--%s is required' % name)
        for name in ('input_dir', 'output_dir', 'class_text_file'):  # '~/x' after '=': home
            if fv[name].value:
                fv[name].value = user_dirs.expand_home(fv[name].value)
        gone = cnn_util.working_folder_problem(
            ('--' + name, fv[name].value) for name in ('input_dir', 'output_dir',
                                                       'class_text_file'))
        if gone:
            raise flags.Error(gone)
        if pillow_missing():
            raise flags.Error(NO_PILLOW)
    except flags.Error as e:
        print('error: %s' % e, file=sys.stderr)
        return 2
    try:
        given = lambda name: fv[name].value if fv[name].present else None  # noqa: E731
        result = convert(fv.input_dir, fv.output_dir,
                         num_train_shards=given('num_train_shards'),
                         num_validation_shards=given('num_validation_shards'),
                         validation_fraction=fv.validation_fraction, seed=fv.seed,
                         class_text_file=fv.class_text_file, num_threads=fv.num_threads,
                         overwrite=fv.overwrite, progress=fv.progress,
                         max_image_pixels=fv.max_image_pixels)
    except BrokenPipeError:  # the reader of stdout went away: console.finish, exit 141
        raise
    except (ConvertError, OSError) as e:
        print('error: %s' % e, file=sys.stderr)
        return getattr(e, 'exit_status', 1)
    print('\n'.join(format_class_counts(result['class_counts'])))
    n, classes = cnn_util.counted, len(result['classes'])
    splits = ['%s in %s' % (n(result['num_' + k], k + ' image'), n(len(result[k]), 'shard'))
              for k in ('train', 'validation')]
    print('wrote %s and %s of %s (labels 1..%d) to %s (per-class counts in class_counts.txt)'
          % (*splits, n(classes, 'class', 'classes'), classes, fv.output_dir))
    print(skipped_line(result['skipped']))
    print(image_encoding.summary_line(result['conversions'],
                                      result['num_train'] + result['num_validation']))
    return 0


def run_main() -> None:
    """Console entry point of `tf_cnn_build_tfrecords`."""
    from tf_cnn_benchmarks.runtime import runtime_env
    console.finish(main, runtime_env.exit_process)  # TensorFlow loaded: no last collections


if __name__ == '__main__':
    run_main()
