"""The converter's reports (tools/build_imagenet_tfrecords.py): the per-class count table,
the warnings about empty splits and large images, the error naming the images it cannot read,
and the summary's line on the files it skipped."""

from __future__ import annotations

import collections
import math

from tf_cnn_benchmarks import cnn_util

from . import image_encoding
from .class_folders import print_warning as _warn
from .class_folders import some_names as _some


def warn_empty_splits(classes, train, validation, fraction: float, warn=_warn) -> None:
    """Warns about an empty split, or else about the classes a split has no images of.

    Args:
      classes: list_classes' result.
      train, validation: split_examples' result.
      fraction: --validation_fraction.
      warn: called with each warning line.
    """
    total = len(train) + len(validation)
    for name, examples, fix in (('train', train, 'lower'), ('validation', validation, 'raise')):
        if not examples:
            warn('the %s split is empty (--validation_fraction=%g of %d images): no %s shards '
                 'are written%s; %s --validation_fraction' % (
                     name, fraction, total, name,
                     ' (--eval needs them)' if name == 'validation' else '', fix))
            continue
        present = {synset for _, _, synset in examples}
        absent = [c.synset for c in classes if c.synset not in present]
        if absent:
            warn('%d of %d classes have no %s images (%s); %s --validation_fraction or add '
                 'images' % (len(absent), len(classes), name, _some(absent), fix))


def class_counts(classes, train, validation) -> list[tuple[int, str, int, int]]:
    """[(label, synset, train images, validation images)] per class, labels 1..K."""
    counts = {c.synset: [0, 0] for c in classes}
    for column, examples in enumerate((train, validation)):
        for _, _, synset in examples:
            counts[synset][column] += 1
    return [(label, synset, *counts[synset])
            for label, synset in enumerate((c.synset for c in classes), start=1)]


def format_class_counts(counts) -> list[str]:
    """The per-class count table printed at the end: a header, one row per class, the total."""
    width = max([len('synset')] + [len(synset) for _, synset, _, _ in counts])
    row = '%5s  %-' + str(width) + 's  %7s  %10s'
    lines = [row % ('label', 'synset', 'train', 'validation')]
    lines += [row % (label, synset, n_train, n_val) for label, synset, n_train, n_val in counts]
    lines.append(row % ('total', '', sum(c[2] for c in counts), sum(c[3] for c in counts)))
    return lines


def unreadable_message(unreadable: list[image_encoding.Unreadable], total: int,
                       limit: int = 5) -> str:
    """The one error line of a conversion that met images it cannot read (sorted by path).

    Example: '2 of 40 images cannot be read, so --output_dir holds no shards: in/a/x.jpg (not an
    image format Pillow knows), in/b/cut.jpg (image file is truncated (3 bytes not
    processed)); remove or convert them, then run again'. An image over the pixel limit
    (Unreadable.pixels) gets its fix instead: '1 of 17 images cannot be read, ...: in/b/scan.jpg
    (14000x14000 = 196000000 pixels, over Pillow's limit against decompression bombs of
    178956970 pixels); resize it or leave it out, or pass --max_image_pixels=196000000 to read
    it if you trust it (561 MB as RGB), then run again'.
    """
    bad = sorted(unreadable)
    named = ', '.join('%s (%s)' % (u.path, u.reason) for u in bad[:limit])
    more = ' and %d more' % (len(bad) - limit) if len(bad) > limit else ''
    large = [u.pixels for u in bad if u.pixels]
    others = len(bad) - len(large)
    fixes = []
    if large:
        it = 'them' if len(large) > 1 else 'it'
        fixes.append('resize %s or leave %s out, or pass --max_image_pixels=%d to read %s if '
                     'you trust %s (%s%s as RGB)' % (
                         it, it, max(large), it, it, 'up to ' if len(large) > 1 else '',
                         decoded_size(max(large))))
    if others:
        fixes.append('remove or convert %s' % (
            'it' if others == 1 and not large else 'them' if not large else
            'the other one' if others == 1 else 'the others'))
    return ('%d of %d images cannot be read, so --output_dir holds no shards: %s%s; %s, then '
            'run again' % (len(bad), total, named, more, '; '.join(fixes)))


def decoded_size(pixels: int) -> str:
    """The memory an image of `pixels` takes decoded as 8-bit RGB: '287 MB', '1 KB'."""
    size = 3 * pixels
    if size >= 2**20:
        return '%d MB' % round(size / 2**20)
    return '%d KB' % math.ceil(size / 2**10)


def large_images_warning(large: list[tuple[str, int, int]], limit: int) -> str:
    """The warning naming the images converted though over Pillow's warning size `limit`.

    Args:
      large: [(path, width, height)].

    Example: "1 image is over 89478485 pixels, where Pillow warns of a possible decompression
    bomb: in/a/pano.jpg (10000x10000 = 100000000 pixels); converted at full size, which a run
    decodes whole each time it reads it (286 MB as RGB): resize it if it need not be that
    large".
    """
    large = sorted(large)
    one = len(large) == 1
    named = ', '.join('%s (%dx%d = %d pixels)' % (p, w, h, w * h) for p, w, h in large[:5])
    most = max(w * h for _, w, h in large)
    return ('%s over %d pixels, where Pillow warns of a possible decompression bomb: %s%s; '
            'converted at full size, which a run decodes whole each time it reads %s (%s%s '
            'as RGB): resize %s if %s need not be that large' % (
                cnn_util.counted(len(large), 'image is', 'images are'), limit, named,
                ' and %d more' % (len(large) - 5) if len(large) > 5 else '',
                'it' if one else 'one', '' if one else 'up to ', decoded_size(most),
                'it' if one else 'them', 'it' if one else 'they'))


def skipped_line(skipped: collections.Counter) -> str:
    """The summary's line on the files left out, e.g. 'files skipped: 3 (named in the warnings
    above): 2 not an image Pillow can read, 1 image file not directly in a class folder'."""
    if not skipped:
        return 'files skipped: none'
    return 'files skipped: %d (named in the warnings above): %s' % (
        sum(skipped.values()), ', '.join('%d %s' % (n, reason) for reason, n in sorted(
            skipped.items(), key=lambda kv: (-kv[1], kv[0]))))
