"""The classes of a run's model: --num_classes, the converter's labels.txt, or the published count.

A folder made by the converter (tools/build_imagenet_tfrecords.py) holds, beside its shards,
`labels.txt`: one `<label> <synset> <text>` line per class, labels 1..K in folder-name order, 0
staying the background class as in ImageNet's 1001. Its fields are separated by whitespace: the
label and the synset are one word each (the converter writes a folder name's whitespace as '_'
in the synset: `1 big_cats big cats`), the text is the rest of the line. Such a dataset has
K + 1 classes, not 1001:

    resolve_num_classes(IMAGENET, '/data/flowers', None)
    -> (6, 'labels.txt in /data/flowers: 5 classes, labels 1..5, + background 0')

The input pipelines check every label against the number chosen here.
"""

from __future__ import annotations

import os

from .. import cnn_util
from .. import params as params_lib
from ..runtime import file_systems

# The converter writes this beside the shards.
LABELS_FILE = 'labels.txt'


def published_classes(spec) -> str:
    """The header's phrase for a dataset's published classes (dataset_info.DatasetSpec)."""
    if spec.num_classes == 1001:
        return "imagenet's: 1000 classes + background 0"
    return "%s's" % spec.name


def read_labels_file(path: str) -> list[int]:
    """The labels of a converter labels.txt: one `<label> <synset> <text>` line per class (blank
    lines and lines starting with '#' are skipped; the label is the line's first word, the
    synset its second, the text the rest: `line.split(None, 2)`).

    Returns:
      The labels (ints >= 0), in file order.

    Raises:
      DataError: the file cannot be read, a line does not start with a label >= 0, a label
        appears twice, or there is no label.
    """
    fix = 'fix the file, or remove it and give --num_classes'
    try:
        with file_systems.open_file(path, 'r') as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise cnn_util.DataError('cannot read %s: %s; %s' % (path, e, fix)) from None
    labels, seen = [], {}
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text or text.startswith('#'):
            continue
        first = text.split()[0]
        if not first.isdigit():
            raise cnn_util.DataError('%s line %d is not "<label> <synset> <text>" with a label '
                                     '>= 0: %r; %s' % (path, number, line[:80], fix))
        label = int(first)
        if label in seen:
            raise cnn_util.DataError('%s lists label %d twice (lines %d and %d); %s'
                                     % (path, label, seen[label], number, fix))
        seen[label] = number
        labels.append(label)
    if not labels:
        raise cnn_util.DataError('%s lists no classes; %s' % (path, fix))
    return labels


def resolve_num_classes(spec, data_dir: str, requested: int | None
                        ) -> tuple[int, str]:
    """The classes of the model for a dataset in `data_dir`, and where the number comes from.

    An ImageNet-format directory with a labels.txt (the converter writes one, labels 1..K) has
    max(label) + 1 classes: K + 1 with the background class 0. `requested` (--num_classes)
    overrides it but must leave room for every label.

    Args:
      spec: the dataset's published description (dataset_info.DatasetSpec).
      data_dir: the data directory.
      requested: --num_classes, or None.

    Returns:
      (num_classes, source phrase for the header), e.g. (4, 'labels.txt in /data: 3 classes,
      labels 1..3, + background 0').

    Raises:
      DataError: labels.txt cannot be read (see `read_labels_file`).
      params.ParamsError: `requested` is at most the largest label of labels.txt, or below
        CIFAR-10's 10.
    """
    path = os.path.join(data_dir, LABELS_FILE)
    labels = None
    if spec.file_format == 'tfrecord' and file_systems.exists(path):
        labels = read_labels_file(path)  # a directory of that name is an error, not ignored
    if spec.file_format == 'cifar10_pickle' and requested and requested < spec.num_classes:
        raise params_lib.ParamsError('--num_classes=%d is too small for CIFAR-10\'s labels 0..9: '
                                     'give --num_classes >= 10 or drop it' % requested)
    if labels is None:
        return (requested, '--num_classes') if requested else (spec.num_classes,
                                                               published_classes(spec))
    top = max(labels)
    found = '%d classes, labels %d..%d%s' % (len(labels), min(labels), top,
                                             '' if 0 in labels else ', + background 0')
    if requested is None:
        return top + 1, '%s in %s: %s' % (LABELS_FILE, data_dir, found)
    if requested <= top:
        raise params_lib.ParamsError(
            '--num_classes=%d is too small for %s (%s): give --num_classes >= %d, or drop it '
            'to use %d' % (requested, path, found, top + 1, top + 1))
    return requested, '--num_classes; %s in %s: %s' % (LABELS_FILE, data_dir, found)

