"""Recognises a --data_dir of image files (JPEG folders) instead of TFRecord shards, and says how
to convert it with the converter `tf_cnn_build_tfrecords` (tools/build_imagenet_tfrecords.py).

The layouts recognised, looking at a few entries only (ImageNet's train folder holds 1,000
class folders of about 1,300 images each):

    DIR/n01440764/x.JPEG            class folders: the converter's own input
    DIR/train/n01440764/x.JPEG      ImageNet's download (train/, val/): convert DIR/train
    DIR/x.JPEG                      loose images: the converter needs class folders

A class folder that also holds a folder of images (DIR/cat/sub/x.jpg) is still a class folder:
only a sub-folder without images of its own (ImageNet's train/) moves the input a level down.

Loads no TensorFlow.
"""

from __future__ import annotations

import itertools
import os

IMAGE_EXTENSIONS = ('.jpeg', '.jpg', '.png', '.gif', '.bmp', '.webp', '.tif', '.tiff')
_PEEK = 20  # entries looked at in a folder
_CONVERTER = 'tf_cnn_build_tfrecords'


def _entries(folder: str) -> list[os.DirEntry]:
    """Up to _PEEK entries of `folder`, not hidden, sorted by name; [] when unreadable."""
    try:
        with os.scandir(folder) as it:
            found = itertools.islice((e for e in it if not e.name.startswith('.')), _PEEK * 50)
            return sorted(found, key=lambda e: e.name)[:_PEEK]
    except OSError:
        return []


def _is(entry: os.DirEntry, kind: str) -> bool:
    """entry.is_dir() or entry.is_file() (`kind` 'dir' or 'file'); False where the answer is an
    OSError (a loop of symbolic links raises ELOOP, an unreadable target EACCES): the hint
    looks past such an entry, the dataset check names it."""
    try:
        return entry.is_dir() if kind == 'dir' else entry.is_file()
    except OSError:
        return False


def _an_image(folder: str) -> str | None:
    """The name of an image file among the first entries of `folder`, or None."""
    for entry in _entries(folder):
        if entry.name.lower().endswith(IMAGE_EXTENSIONS) and _is(entry, 'file'):
            return entry.name
    return None


def _class_folder_image(folder: str) -> str | None:
    """'n01440764/x.JPEG' when one of the first sub-folders of `folder` holds images, or None."""
    for entry in _entries(folder):
        if _is(entry, 'dir'):
            image = _an_image(entry.path)
            if image:
                return '%s/%s' % (entry.name, image)
    return None


def converter_hint(data_dir: str) -> str:
    """'; it holds image files (...), not TFRecord shards: convert them with ...' or ''.

    Args:
      data_dir: the --data_dir, an existing folder.

    Returns:
      A phrase to append to a "no dataset files" error: the layout found (an example path),
      the converter command with its --input_dir and an --output_dir beside data_dir
      (`<data_dir>_tfrecords`), and the --data_dir to give then; '' when no images are seen.
    """
    folder = os.path.normpath(data_dir)
    output = folder + '_tfrecords'
    then = ', then give --data_dir=%s' % output
    split = '; the converter splits --validation_fraction of each class off for validation'
    # ImageNet's download first: its val/ of loose images would pass for a class folder. A
    # sub-folder that holds images itself is a class folder (maybe with a nested folder of
    # more images), not a download's train/: it does not move the input down a level.
    for entry in sorted(_entries(folder), key=lambda e: e.name != 'train'):  # train/ first
        if _is(entry, 'dir') and not _an_image(entry.path):
            example = _class_folder_image(entry.path)
            if example:
                return ('; it holds images in class folders (%s/%s), not TFRecord shards: '
                        'convert them with `%s --input_dir=%s --output_dir=%s`%s%s'
                        % (entry.name, example, _CONVERTER, entry.path, output, then, split))
    example = _class_folder_image(folder)
    if example:
        return ('; it holds images in class folders (%s), not TFRecord shards: convert them '
                'with `%s --input_dir=%s --output_dir=%s`%s%s'
                % (example, _CONVERTER, folder, output, then, split))
    image = _an_image(folder)
    if image:
        return ('; it holds image files (%s), not TFRecord shards: put them in one sub-folder '
                'per class and convert them with `%s --input_dir=%s --output_dir=%s`%s'
                % (image, _CONVERTER, folder, output, then))
    return ''
