"""The converter's input (tools/build_imagenet_tfrecords.py): the class folders of --input_dir,
their images, their synsets, and every image file the conversion leaves out, with the reason.

Only `input_dir/<class>/<image>` is read. An image file anywhere else is left out and reported
in one `warning:` line per reason (a count, the first five paths, what to do):

    input_dir/x.jpg                 in --input_dir itself, not in a class folder
    input_dir/.cache/x.jpg          in a hidden folder of --input_dir (a name starting with '.')
    input_dir/cats/.x.jpg           a hidden file
    input_dir/cats/2019/x.jpg       in a sub-folder of a class folder (any depth)

Left-out files count as images by their extension only (none is opened, so a large tree of
other files costs a listing, not a read). A class folder whose images are all left out is an
error naming where they are and the fix.

A class's synset is its folder name with each whitespace character written as '_' (`big cats`
-> `big_cats`), its text the folder name (whitespace other than a space written as a space):
labels.txt's `<label> <synset> <text>` and class_counts.txt's lines are split at whitespace, so
a synset is one word (input_data/class_labels.py reads them so).

Files Pillow cannot read are skipped with one warning; for photo formats Pillow reads only with a
plugin (HEIC/HEIF: pillow-heif; AVIF: a Pillow built with it or pillow-avif-plugin) the warning
names the plugin or the conversion to do, and load_image_plugins loads those plugins when they
are installed.
"""

from __future__ import annotations

import collections
import importlib
import os
import sys
from typing import NamedTuple


class ConvertError(Exception):
    """A problem with the input or output folder; printed as one line, exit status 1."""

    exit_status = 1


class FlagValueError(ConvertError):
    """A flag's value is unusable (e.g. a bad --class_text_file, an --output_dir that is
    read-only or already holds shards): another value or flag fixes it; exit status 2."""

    exit_status = 2


class ClassFolder(NamedTuple):
    """One class of the conversion.

    Attributes:
      synset: the folder name, whitespace as '_' (synset_of): one word.
      images: the image paths directly in the folder, sorted.
      text: the folder name as one line (text_of): image/class/text without --class_text_file.
    """

    synset: str
    images: list[str]
    text: str


def print_warning(text: str) -> None:
    """Prints `warning: <text>` to stderr."""
    print('warning: %s' % text, file=sys.stderr, flush=True)


def some_names(names: list[str], limit: int = 5) -> str:
    """'a, b, c' or 'a, b, c, d, e and 7 more'."""
    shown = ', '.join(names[:limit])
    return shown + (' and %d more' % (len(names) - limit) if len(names) > limit else '')


def synset_of(folder_name: str) -> str:
    """The synset of a class folder: its name with every whitespace character (those str.split
    splits at) written as '_', so that it stays one field of labels.txt: 'big cats' ->
    'big_cats'."""
    return ''.join('_' if c.isspace() else c for c in folder_name)


def text_of(folder_name: str) -> str:
    """A class folder's default text: its name with every whitespace character written as a
    space, so that it stays on its line of labels.txt (str.splitlines splits at some)."""
    return ''.join(' ' if c.isspace() else c for c in folder_name)


# Photo formats Pillow reads only with a plugin: (extensions, name, what to do).
_PLUGIN_FORMATS = (
    (('.heic', '.heif', '.hif'), 'HEIC/HEIF',
     'install the pillow-heif plugin (pip install pillow-heif; the converter loads it) or '
     'convert them to JPEG'),
    (('.avif',), 'AVIF',
     'install a Pillow that reads AVIF (pip install -U Pillow) or the pillow-avif-plugin '
     'plugin (the converter loads it), or convert them to JPEG'),
)
# Why files are skipped, as the converter's summary counts them.
SKIPPED_NOT_IMAGE = 'not an image Pillow can read'
SKIPPED_LINK = 'symbolic link whose target is missing or loops'
SKIPPED_LEFT_OUT = 'image file not directly in a class folder'


def load_image_plugins() -> list[str]:
    """Registers the Pillow plugins of _PLUGIN_FORMATS that are installed (pillow_heif,
    pillow_avif); returns the names of those loaded."""
    loaded = []
    for module, register in (('pillow_heif', 'register_heif_opener'), ('pillow_avif', None)):
        try:
            plugin = importlib.import_module(module)
            if register:
                getattr(plugin, register)()
        except Exception:  # not installed, or broken: its files stay unreadable, with the hint
            continue
        loaded.append(module)
    return loaded


def plugin_hint(paths: list[str]) -> str:
    """What to do about the files among `paths` in a photo format Pillow reads only with a
    plugin that is not loaded, e.g. '; HEIC/HEIF (x.heic): install the pillow-heif plugin ...',
    or ''."""
    from PIL import Image
    known = Image.registered_extensions()
    hints = []
    for extensions, name, fix in _PLUGIN_FORMATS:
        hits = [p for p in paths if os.path.splitext(p)[1].lower() in extensions
                and os.path.splitext(p)[1].lower() not in known]
        if hits:
            hints.append('%s (%s): %s' % (name, some_names([os.path.basename(p) for p in hits],
                                                           3), fix))
    return ''.join('; ' + h for h in hints)


def _has_image_extension(name: str) -> bool:
    from PIL import Image
    return os.path.splitext(name)[1].lower() in Image.registered_extensions()


def _is_image(path: str) -> bool:
    """True for a name with an image extension Pillow knows (not opened: a broken image is an
    error when it is encoded), else whether Pillow recognises the file's first bytes."""
    from PIL import Image, UnidentifiedImageError
    if _has_image_extension(path):
        return True
    try:
        with Image.open(path):
            return True
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError):
        return False


def _broken_links(folder: str) -> list[str]:
    """The paths in `folder` (not hidden) that are links to a missing target or a loop."""
    return sorted(path for path in (os.path.join(folder, f) for f in os.listdir(folder)
                                    if not f.startswith('.'))
                  if os.path.islink(path) and not os.path.exists(path))


def _images_below(folder: str) -> list[str]:
    """The files with an image extension anywhere under `folder`, sorted (links to folders not
    followed)."""
    found = []
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        found += [os.path.join(root, f) for f in sorted(files) if _has_image_extension(f)]
    return found


# Why an image file is left out -> (the warning's words after 'skipped N image file(s) ', the
# fix); {it} is 'it' or 'them'.
_LEFT_OUT = {
    'loose': ('in --input_dir itself, not in a class folder',
              'move {it} into {its} class folder to convert {it}'),
    'hidden_folder': ("in hidden folders of --input_dir (names starting with '.')",
                      'rename the folder to make it a class'),
    'hidden': ("that are hidden (names starting with '.')", 'rename {it} to convert {it}'),
    'nested': ('in sub-folders of class folders, which are not read (only '
               '<input_dir>/<class>/<image> is)',
               'move {it} up into {its} class folder to convert {it}'),
}


def left_out_line(reason: str, paths: list[str]) -> str:
    """The warning for the image files left out for `reason` (a key of _LEFT_OUT), e.g.
    "skipped 1 image file that is hidden (names starting with '.'): in/dogs/.x.jpg; rename it
    to convert it"."""
    where, fix = _LEFT_OUT[reason]
    one = len(paths) == 1
    if one:
        where = where.replace('that are', 'that is')
    return 'skipped %d image file%s %s: %s; %s' % (
        len(paths), '' if one else 's', where, some_names(paths),
        fix.format(it='it' if one else 'them', its='its' if one else 'their'))


def _no_images_message(folder: str, files: list[str], nested: list[str],
                       hidden: list[str]) -> str:
    """The error of a class folder without an image of its own: where its image files are (in
    sub-folders, hidden), or the files that are not images, and the fix."""
    if not nested and not hidden:
        return ('class folder %s has no images%s%s; add images to it, or leave it out of '
                '--input_dir (move or delete it)' % (
                    folder, ' (only files that are not images Pillow can read: %s)' % some_names(
                        [os.path.basename(f) for f in files]) if files else '',
                    plugin_hint(files)))
    said, fixes = [], []
    if nested:
        subs = sorted({os.path.relpath(p, folder).split(os.sep)[0] for p in nested})
        said.append('%d in %s (e.g. %s), as only images directly in a class folder are read '
                    '(<input_dir>/<class>/<image>)' % (
                        len(nested), 'its sub-folder ' + subs[0] if len(subs) == 1 else
                        'its %d sub-folders %s' % (len(subs), some_names(subs, 3)), nested[0]))
        fixes.append('move them up into %s, or give --input_dir=%s if its sub-folders are '
                     'the classes' % (folder, folder))
    if hidden:
        said.append("%d hidden (names starting with '.': %s)" % (len(hidden),
                                                                 some_names(hidden, 3)))
        fixes.append('rename the hidden ones')
    return ('class folder %s has no images of its own, only image files that are not read: '
            '%s; %s' % (folder, '; '.join(said), ', and '.join(fixes)))


def _class_folder(folder: str, left_out: dict[str, list[str]]) -> tuple[list[str], list[str]]:
    """(images, files that are not images) directly in `folder`; adds its hidden and nested
    image files to `left_out`.

    Raises:
      ConvertError: the folder holds no image directly (_no_images_message).
    """
    entries = sorted(os.listdir(folder))
    files = [os.path.join(folder, f) for f in entries
             if not f.startswith('.') and os.path.isfile(os.path.join(folder, f))]
    hidden = [os.path.join(folder, f) for f in entries if f.startswith('.')
              and os.path.isfile(os.path.join(folder, f)) and _has_image_extension(f)]
    nested = []
    for f in entries:
        if os.path.isdir(os.path.join(folder, f)):
            nested += _images_below(os.path.join(folder, f))
    images = [f for f in files if _is_image(f)]
    if not images:
        raise ConvertError(_no_images_message(folder, files, nested, hidden))
    left_out['hidden'] += hidden
    left_out['nested'] += nested
    return images, [f for f in files if f not in set(images)]


def list_classes(input_dir: str, warn=print_warning,
                 skipped: collections.Counter | None = None) -> list[ClassFolder]:
    """The class folders of input_dir, sorted by name.

    Files that are not images Pillow can read (`notes.txt`, `Thumbs.db`, `x.heic` without its
    plugin: neither an image extension Pillow knows nor bytes it recognises) are skipped, with
    one warning naming them all (plugin_hint's advice for some photo formats); so are symbolic
    links
    whose target is missing or loops (one warning naming them). Image files outside
    `input_dir/<class>/<image>` are left out with one warning per reason (the module
    docstring). `skipped`, when given, counts every file skipped, by reason (SKIPPED_*).

    Raises:
      FlagValueError: the folder is missing (or a file), or has no class sub-folders.
      ConvertError: a sub-folder has no images directly in it; two folders' synsets are the
        same ('big cats' and 'big_cats').
    """
    if not os.path.isdir(input_dir):
        raise FlagValueError('--input_dir=%s is not a directory; give the folder of class '
                             'sub-folders of images (input_dir/<class>/<image>)' % input_dir)
    classes, stray, folder_of = [], [], {}
    left_out = {reason: [] for reason in _LEFT_OUT}
    broken = _broken_links(input_dir)
    for name in sorted(os.listdir(input_dir)):
        folder = os.path.join(input_dir, name)
        if not os.path.isdir(folder):
            if os.path.isfile(folder) and _has_image_extension(name):
                left_out['loose'].append(folder)
            continue
        if name.startswith('.'):
            left_out['hidden_folder'] += _images_below(folder)
            continue
        broken += _broken_links(folder)
        synset = synset_of(name)
        if synset in folder_of:
            raise ConvertError('class folders %r and %r would both have synset %s (whitespace '
                               "in a folder name is written as '_': labels.txt's fields are "
                               'split at spaces); rename one of them' % (
                                   folder_of[synset], name, synset))
        folder_of[synset] = name
        images, not_images = _class_folder(folder, left_out)
        stray += not_images
        classes.append(ClassFolder(synset, images, text_of(name)))
    if not classes:
        raise FlagValueError('--input_dir=%s has no class sub-folders%s; give the folder that '
                             'holds them (input_dir/<class>/<image>)' % (
                                 input_dir, ' (only image files: %s)' % some_names(
                                     left_out['loose'], 3) if left_out['loose'] else ''))
    if stray:
        warn('skipped %s Pillow can read: %s%s' % (
            '%d files that are not images' % len(stray) if len(stray) > 1
            else '1 file that is not an image', ', '.join(stray), plugin_hint(stray)))
    if broken:
        warn('skipped %s whose target is missing or loops: %s' % (
            '%d symbolic links' % len(broken) if len(broken) > 1 else '1 symbolic link',
            ', '.join(broken)))
    for reason, paths in left_out.items():
        if paths:
            warn(left_out_line(reason, sorted(paths)))
    if skipped is not None:
        for reason, count in ((SKIPPED_NOT_IMAGE, len(stray)), (SKIPPED_LINK, len(broken)),
                              (SKIPPED_LEFT_OUT, sum(map(len, left_out.values())))):
            if count:
                skipped[reason] += count
    return classes
