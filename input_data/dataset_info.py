"""Dataset descriptions (ImageNet, CIFAR-10, synthetic) and the checks that keep bad data out.

This module owns what is known about a dataset before any graph is built: its number of classes,
default image size, published and real example counts, which files make up a subset, and whether
those files are intact. The input pipelines in `preprocessing.py` read the files it returns.

    dataset = dataset_info.get_dataset(params)      # name given or inferred from --data_dir
    dataset.num_examples('train')                    # real count when cheap to know, else published
    dataset.describe('train')                        # one phrase for the pipelines' descriptions
    dataset.header_name()                            # the header's Dataset: value
    dataset.num_classes                              # --num_classes, labels.txt, or published

ImageNet-format data is a folder of TFRecord shards named `train-00000-of-00008` ...
`validation-00001-of-00002`, each uncompressed, GZIP- or ZLIB-compressed (detected per shard).
Before a shard is used its record headers are walked (each record is an 8-byte little-endian
length, a 4-byte masked CRC-32C of that length, the data and a 4-byte CRC of the data), which
counts the records and finds truncated files and corrupt length fields; TF's own readers take a
file cut inside a header for a normal end of file. The records' data CRCs are checked by TF's
reader as it reads them during the run (a bad one fails the step, and `corrupt_records` names
its shard and record). The walk and the cache of shards seen before are in `shard_scan`. """

from __future__ import annotations

import dataclasses
import os
import re
from typing import Mapping

from .. import cnn_util
from ..runtime import file_systems
from . import class_labels, compression, image_folders, shard_files, shard_scan

SUBSETS = ('train', 'validation')


@dataclasses.dataclass(frozen=True)
class DatasetSpec:
    """What is published about a dataset.

    Attributes:
      name: 'imagenet', 'cifar10' or 'synthetic'.
      num_classes: labels lie in [0, num_classes). ImageNet has 1001: 0 is background.
      image_size: the usual model input height and width, in pixels.
      published_examples: subset -> number of examples of the published dataset.
      file_patterns: subset -> glob of the subset's files inside the data directory.
      file_format: 'tfrecord', 'cifar10_pickle' or '' (synthetic).
    """

    name: str
    num_classes: int
    image_size: int
    published_examples: Mapping[str, int]
    file_patterns: Mapping[str, str]
    file_format: str


IMAGENET = DatasetSpec('imagenet', 1001, 224, {'train': 1281167, 'validation': 50000},
                       {'train': 'train-*-of-*', 'validation': 'validation-*-of-*'}, 'tfrecord')
CIFAR10 = DatasetSpec('cifar10', 10, 32, {'train': 50000, 'validation': 10000},
                      {'train': 'data_batch_[1-5]', 'validation': 'test_batch'}, 'cifar10_pickle')
SYNTHETIC = DatasetSpec('synthetic', 1001, 224, dict(IMAGENET.published_examples), {}, '')
SPECS = {s.name: s for s in (IMAGENET, CIFAR10, SYNTHETIC)}

CIFAR10_FILES = {'train': tuple('data_batch_%d' % i for i in range(1, 6)),
                 'validation': ('test_batch',)}
# A shard's name: train-00003-of-00008, with an optional ending of the usual kinds
# (train-00003-of-00008.tfrecord, .tfrecords, .tfrec, a compression's .gz or .zlib; the
# compression itself is read from the file): the original's glob train-* read them all.
_SHARD_RE = re.compile(r'^(train|validation)-(\d+)-of-(\d+)'
                       r'((?:\.(?:tfrecords?|tfrec))?(?:\.(?:gz|gzip|zlib|zz))?)$')
SHARD_FORM = ('%s-NNNNN-of-NNNNN (a .tfrecord, .tfrecords, .tfrec, .gz or .zlib ending '
              'allowed)')
_EXPECTED = ('ImageNet TFRecord shards (train-NNNNN-of-NNNNN, validation-NNNNN-of-NNNNN, '
             'optionally ending in .tfrecord) or CIFAR-10 python batches (data_batch_1..5, '
             'test_batch)')


@dataclasses.dataclass(frozen=True)
class SkippedShard:
    """A shard left out by --skip_corrupt_records.

    Attributes:
      path: the shard's path.
      reason: what is wrong with it, e.g. 'truncated: record 12 at byte 50311 needs 9000 bytes'.
      readable_records: records before the damage; they are skipped with the shard.
    """

    path: str
    reason: str
    readable_records: int


@dataclasses.dataclass(frozen=True)
class SubsetScan:
    """The usable files of one subset and their real record count.

    Attributes:
      subset: 'train' or 'validation'.
      files: paths of the usable files, sorted.
      num_examples: records in `files`.
      records_per_file: one count per entry of `files`.
      skipped: shards left out at start-up (only with --skip_corrupt_records).
      compression: one per entry of `files`: '' (uncompressed), 'GZIP' or 'ZLIB', detected
        from each file (input_data/compression.py); () for CIFAR-10.
    """

    subset: str
    files: tuple[str, ...]
    num_examples: int
    records_per_file: tuple[int, ...]
    skipped: tuple[SkippedShard, ...] = ()
    compression: tuple[str, ...] = ()

    @property
    def skipped_records(self) -> int:
        """Readable records inside skipped shards (a lower bound of the records lost)."""
        return sum(s.readable_records for s in self.skipped)


# --- Datasets.

def list_data_dir(data_dir: str) -> list[str]:
    """The names in --data_dir (a local folder or a remote one: runtime/file_systems.py),
    hidden ones left out, sorted.

    Raises:
      cnn_util.DataError: the folder is missing, not a folder, empty or unreadable (one line
        naming it and the fix).
    """
    try:
        if not file_systems.exists(data_dir):
            link = (None if file_systems.is_remote(data_dir)
                    else file_systems.dangling_link_on(data_dir))
            if link:
                fix = ('point the link at the folder' if 'a loop of symbolic links' in link
                       else 'mount or restore the target (an unmounted share?)')
                raise cnn_util.DataError('--data_dir %s: %s, or give the folder of %s' % (
                    link, fix, _EXPECTED))
            raise cnn_util.DataError('--data_dir %s does not exist: give the folder of %s, or '
                                     'drop --data_dir for synthetic data' % (data_dir, _EXPECTED))
        if not file_systems.isdir(data_dir):
            raise cnn_util.DataError('--data_dir %s is not a directory: give the folder '
                                     'of %s, or drop --data_dir for synthetic data'
                                     % (data_dir, _EXPECTED))
        names = sorted(n for n in file_systems.listdir(data_dir) if not n.startswith('.'))
    except OSError as e:  # a remote file system's error (no credentials, no bucket, ...)
        fix = ("check the network access, the credentials and the bucket's name"
               if file_systems.is_remote(data_dir) else 'check its permissions')
        raise cnn_util.DataError('--data_dir %s cannot be read: %s; %s'
                                 % (data_dir, cnn_util.error_summary(e), fix)) from None
    if not names:
        raise cnn_util.DataError('--data_dir %s is empty: expected %s' % (data_dir, _EXPECTED))
    return names


def stray_names(names: list[str], subset: str) -> list[str]:
    """The names in --data_dir that the original's glob `subset-*` read as shards but that are
    no shard name here (train-00000-of-00008.bak, train-extra), sorted."""
    return [n for n in names if n.startswith(subset + '-') and not _SHARD_RE.match(n)]


def _strays_phrase(strays: list[str]) -> str:
    """'train-00000-of-00008.bak is not a shard name' (up to 3 named, then how many more)."""
    shown = ', '.join(strays[:3]) + (' and %d more' % (len(strays) - 3) if len(strays) > 3
                                     else '')
    return '%s %s not a shard name' % (shown, 'is' if len(strays) == 1 else 'are')


def _missing_subset_hint(subset: str) -> str:
    """The remedy for a folder without the subset's shards."""
    if subset == 'validation':
        return ('; --eval reads the validation shards: convert with tf_cnn_build_tfrecords '
                '--validation_fraction above 0 (default 0.2), or give the folder that holds '
                'validation-NNNNN-of-NNNNN')
    return ('; give the folder that holds the %s-NNNNN-of-NNNNN shards (tf_cnn_build_tfrecords '
            'writes them from JPEG folders)' % subset)


def _other_subset_hint(subset: str, found: int, kind: str, evaluating=False,
                       subset_given=False) -> str:
    """'; it holds only 2 validation shards: ...' for a folder without the `subset` files but
    with `found` of the other subset's ('' when found is 0), naming the flags that read them
    and, else, what to give. `kind`: 'shard' or 'batch file'; `evaluating`: --eval is given
    (then the train subset was asked for with --data_subset=train); `subset_given`: the
    subset is --data_subset's (else the run's default, or its evaluations')."""
    if not found:
        return ''
    other, them = ('validation' if subset == 'train' else 'train'), 'it' if found == 1 else 'them'
    held = '; it holds only %s: ' % cnn_util.counted(found, '%s %s' % (other, kind))
    if subset == 'train' and evaluating:
        return held + ('evaluate %s by dropping --data_subset=train (--eval reads the validation '
                       'data), else give the folder that holds the train data' % them)
    if subset == 'train':
        return held + ('train on %s with --data_subset=validation or evaluate %s with --eval, '
                       'else give the folder that holds the train data' % (them, them))
    if subset_given and not evaluating:  # training, --data_subset=validation
        return held + ('train on %s by dropping --data_subset=validation (training reads the '
                       'train data), else give the folder that holds the validation data'
                       % them)
    return held + ('--eval --data_subset=train evaluates %s; evaluations during training need '
                   'validation data (tf_cnn_build_tfrecords --validation_fraction above 0 '
                   'writes it)' % them)


def _other_dataset_hint(data_dir: str, asked: str) -> str:
    """'; it holds X files: drop --data_name ...' when data_dir holds another dataset, else ''."""
    try:
        found = infer_dataset_name(data_dir)
    except cnn_util.DataError:
        return ''
    if found == asked:
        return ''
    return '; it holds %s files: drop --data_name (it is inferred) or give --data_name=%s' % (
        found, found)


def folder_dataset_name(data_dir: str, named: str | None = None) -> str:
    """The dataset of the files in `data_dir`: `named` (--data_name) once the folder is found
    to hold files (`list_data_dir`), else the name inferred from them (`infer_dataset_name`).
    The rule of a run's --data_dir, here once: the usage check asks it before TensorFlow loads,
    `get_dataset` when the input is built.

    Raises:
      cnn_util.DataError: as `list_data_dir`, or without `named` as `infer_dataset_name`.
    """
    if named:
        list_data_dir(data_dir)
        return named
    return infer_dataset_name(data_dir)


def infer_dataset_name(data_dir: str) -> str:
    """Returns 'imagenet' or 'cifar10' from the names of the files in `data_dir`.

    Raises:
      DataError: the directory is missing or empty, or holds neither kind of file (naming the
        converter when it holds images: image_folders.converter_hint), or both.
    """
    names = list_data_dir(data_dir)
    imagenet = any(_SHARD_RE.match(n) for n in names)
    cifar = any(n in CIFAR10_FILES['train'] + CIFAR10_FILES['validation'] for n in names)
    if imagenet and cifar:
        raise cnn_util.DataError('--data_dir %s holds both ImageNet shards and CIFAR-10 batches; '
                                 'give --data_name' % data_dir)
    if not (imagenet or cifar):
        shown = ', '.join(names[:5]) + (', ...' if len(names) > 5 else '')
        raise cnn_util.DataError('no dataset files in --data_dir %s: expected %s; found %s%s'
                                 % (data_dir, _EXPECTED, shown,
                                    _dataset_below(data_dir, names)
                                    or image_folders.converter_hint(data_dir)))
    return 'imagenet' if imagenet else 'cifar10'


_SUB_FOLDERS_LOOKED_IN = 20  # a remote folder's listing is a round trip each


def _dataset_below(data_dir: str, names: list[str]) -> str:
    """'; its sub-folder imagenet_tfrecords holds ImageNet TFRecord shards: give
    --data_dir=<data_dir>/imagenet_tfrecords' when one of the first 20 sub-folders of `data_dir`
    holds a dataset's files; '' when none does (or one cannot be listed)."""
    looked = 0
    for name in names:
        path = os.path.join(data_dir, name)
        try:
            if not file_systems.isdir(path):
                continue
            looked += 1
            inside = file_systems.listdir(path)
        except OSError:
            continue
        if any(_SHARD_RE.match(n) for n in inside):
            what = 'ImageNet TFRecord shards'
        elif any(n in CIFAR10_FILES['train'] + CIFAR10_FILES['validation'] for n in inside):
            what = 'CIFAR-10 python batches'
        else:
            if looked >= _SUB_FOLDERS_LOOKED_IN:
                break
            continue
        return '; its sub-folder %s holds %s: give --data_dir=%s' % (name, what, path)
    return ''


class Dataset:
    """One dataset, synthetic or in a directory.

    Args:
      spec: the published description.
      data_dir: the directory of the files, or None for synthetic data of the spec's shapes.
      inferred: True when the name was inferred from the files (said in the header).
      skip_corrupt_records: leave out corrupt or truncated shards instead of raising.
      allow_shard_subset: accept shards whose indices do not cover 0..N-1 of `-of-N`.
      evaluating: the run is an --eval (for the remedy of a folder of the other subset only).
      data_subset: --data_subset (for the same remedy).
    """

    def __init__(self, spec: DatasetSpec, data_dir: str | None = None, *, inferred=False,
                 skip_corrupt_records=False, num_classes: int | None = None,
                 classes_source: str = '', allow_shard_subset=False, evaluating=False,
                 data_subset: str | None = None):
        self.spec = spec
        self.evaluating = evaluating  # --eval: a missing subset's hint names its flags
        self.data_subset = data_subset  # --data_subset, for the same hints
        self.data_dir = data_dir
        self.inferred = inferred
        self.skip_corrupt_records = skip_corrupt_records
        self.allow_shard_subset = allow_shard_subset
        self.use_scan_cache = True  # shard_scan.ScanCache: shards seen before are not walked
        self._subset_of: dict[str, int] = {}  # subset -> N of -of-N when only some are there
        self.num_classes = num_classes or spec.num_classes
        self.classes_source = classes_source or class_labels.published_classes(spec)
        self._scans: dict[str, SubsetScan] = {}
        self._empty: dict[str, int] = {}  # subset -> its shards that hold no records
        self._strays: dict[str, list[str]] = {}  # subset -> names like shards that are not

    name = property(lambda self: self.spec.name)
    image_size = property(lambda self: self.spec.image_size)

    @property
    def synthetic(self) -> bool:
        """True when no files are read (no --data_dir, or --data_name=synthetic)."""
        return self.data_dir is None or self.spec.file_format == ''

    def file_pattern(self, subset: str) -> str:
        """Glob of the subset's files, joined to the data directory."""
        return os.path.join(self.data_dir or '', self.spec.file_patterns[_check_subset(subset)])

    def subset_files(self, subset: str) -> list[str]:
        """Paths of the subset's files, sorted, after checking that none is missing.

        Raises:
          DataError: the directory is missing or empty; no file matches the pattern (or only
            names like shards that are none, `stray_names`: said so); ImageNet shards disagree
            on their count, name one index twice (train-00000-of-00008 and its .tfrecord) or
            do not number 0..N-1 of `-of-N` (missing indices are accepted with
            allow_shard_subset); a CIFAR-10 batch file is missing.
        """
        names = list_data_dir(self.data_dir)
        pattern = self.spec.file_patterns[_check_subset(subset)]
        if self.spec.file_format == 'cifar10_pickle':
            return self._cifar_files(subset, names)
        matches = [(n, _SHARD_RE.match(n)) for n in names]
        shards = [(n, m) for n, m in matches if m and m.group(1) == subset]
        strays = self._strays[subset] = stray_names(names, subset)
        if not shards:
            others = sum(1 for _, m in matches if m and m.group(1) != subset)
            if strays:  # train-00000-of-00008.bak matches train-*-of-*: say why it is no shard
                raise cnn_util.DataError(
                    'no %s shards in --data_dir %s (%s %s): %s; a shard is named %s: rename '
                    'the shards, or give the folder that holds them'
                    % (subset, self.data_dir, self.name, subset, _strays_phrase(strays),
                       SHARD_FORM % subset))
            raise cnn_util.DataError('no files matching %s in --data_dir %s (%s %s)%s'
                                     % (pattern, self.data_dir, self.name, subset,
                                        _other_dataset_hint(self.data_dir, self.name)
                                        or image_folders.converter_hint(self.data_dir)
                                        or _other_subset_hint(subset, others, 'shard',
                                                              self.evaluating,
                                                              self.data_subset == subset)
                                        or _missing_subset_hint(subset)))
        totals = sorted({int(m.group(3)) for _, m in shards})
        if len(totals) > 1:
            raise cnn_util.DataError('%s shards in %s disagree on their count (-of-%s); remove '
                                     'the stale ones' % (subset, self.data_dir,
                                                         ', -of-'.join(map(str, totals))))
        by_index: dict[int, list[str]] = {}
        for n, m in shards:
            by_index.setdefault(int(m.group(2)), []).append(n)
        twice = next((names for names in by_index.values() if len(names) > 1), None)
        if twice:  # train-00000-of-00008 and train-00000-of-00008.tfrecord
            raise cnn_util.DataError(
                '%s holds %s for one %s shard index: %s; remove the copies (each index once)'
                % (self.data_dir, cnn_util.counted(len(twice), 'file'), subset,
                   ' and '.join(twice)))
        indices = {int(m.group(2)) for _, m in shards}
        missing = sorted(set(range(totals[0])) - indices)
        extra = sorted(i for i in indices if i >= totals[0])
        if missing and not extra and self.allow_shard_subset:
            self._subset_of[subset] = totals[0]
        elif missing or extra:
            fix = ('; give each shard a name of its own index' if extra else
                   '; copy the missing shards, renumber the ones there (%s-00000-of-%05d ...), '
                   'or pass --allow_shard_subset to use this subset deliberately'
                   % (subset, len(shards)))
            raise cnn_util.DataError(
                '%s has %d %s shard(s) matching %s but their names say -of-%d (missing indices: '
                '%s; out of range: %s)%s' % (self.data_dir, len(shards), subset, pattern,
                                             totals[0], _short(missing), _short(extra), fix))
        return [os.path.join(self.data_dir, n) for n, _ in shards]

    def _cifar_files(self, subset, names):
        wanted = CIFAR10_FILES[subset]
        missing = [n for n in wanted if n not in names]
        if len(missing) == len(wanted):
            others = [n for n in CIFAR10_FILES[next(k for k in CIFAR10_FILES if k != subset)]
                      if n in names]
            raise cnn_util.DataError('no files matching %s in --data_dir %s (cifar10 %s)%s'
                                     % (self.spec.file_patterns[subset], self.data_dir, subset,
                                        _other_dataset_hint(self.data_dir, 'cifar10')
                                        or _other_subset_hint(subset, len(others), 'batch file',
                                                              self.evaluating,
                                                              self.data_subset == subset)))
        if missing:
            raise cnn_util.DataError('--data_dir %s lacks CIFAR-10 %s file(s) %s'
                                     % (self.data_dir, subset, ', '.join(missing)))
        return [os.path.join(self.data_dir, n) for n in wanted]

    def scan(self, subset: str) -> SubsetScan:
        """Lists, counts and checks the subset's files (once; the result is cached).

        Raises:
          DataError: see `subset_files`; a file cannot be opened (a dangling symbolic link, a
            folder, no read permission: `shard_files.check_files_readable`, whatever
            --skip_corrupt_records); a shard is truncated or
            corrupt (without
            --skip_corrupt_records); every shard is corrupt; the subset has no records; for
            CIFAR-10, a batch file cannot be read or holds labels outside [0, 10).
        """
        if subset not in self._scans:
            self._scans[subset] = self._scan(subset)
        return self._scans[subset]

    def _scan(self, subset):
        files = self.subset_files(subset)
        strays = self._strays.get(subset)
        if strays:  # the original's glob read them: never left out without a word
            cnn_util.warn('--data_dir %s: %s, not read (the original\'s glob %s-* read it as a '
                          'shard); a shard is named %s: rename it to read it, or move it out '
                          'of the folder' % (self.data_dir, _strays_phrase(strays), subset,
                                              SHARD_FORM % subset))
        shard_files.check_files_readable(files, '%s %s' % (self.name, subset),
                                         'shard' if self.spec.file_format == 'tfrecord' else 'file')
        if self.spec.file_format == 'cifar10_pickle':
            from . import cifar10_data
            counts = [len(cifar10_data.load_batches([f])[1]) for f in files]
            return SubsetScan(subset, tuple(files), sum(counts), tuple(counts), ())
        cache = shard_scan.ScanCache() if self.use_scan_cache else None
        counts, problems, kinds = shard_scan.scan_files(
            files, locate_problem=shard_scan.walk_tfrecord_headers, cache=cache)
        skipped = []
        for path in files:
            if path not in problems:
                continue
            if not self.skip_corrupt_records:
                raise cnn_util.DataError('corrupt TFRecord shard %s: %s (--skip_corrupt_records '
                                         'skips such shards)' % (path, problems[path]))
            skipped.append(SkippedShard(path, problems[path], counts[path]))
        good = [f for f in files if f not in problems]
        if not good:
            raise cnn_util.DataError(
                'every %s shard in %s is corrupt: nothing is left to skip; write them again '
                '(tf_cnn_build_tfrecords) or give the folder of intact shards'
                % (subset, self.data_dir))
        empty = [f for f in good if not counts[f]]
        counts = tuple(counts[f] for f in good)
        if not sum(counts):
            raise cnn_util.DataError(
                'the %s shards matching %s in %s hold no records (%d empty shard(s)%s: a '
                'conversion or copy that did not finish?); write them again '
                '(tf_cnn_build_tfrecords), or give the folder of the complete shards'
                % (subset, self.spec.file_patterns[subset], self.data_dir, len(good),
                   ', %d corrupt one(s) skipped' % len(skipped) if skipped else ''))
        for s in skipped:
            cnn_util.warn('skipped corrupt shard %s (%s): %d readable records skipped with it'
                          % (s.path, s.reason, s.readable_records))
        for path in empty:
            cnn_util.warn('shard %s holds no records (%d bytes; a conversion or copy that did '
                          'not finish?): the run reads the other %s shards; write it again '
                          '(tf_cnn_build_tfrecords)'
                          % (path, file_systems.getsize(path), subset))
        self._empty[subset] = len(empty)
        return SubsetScan(subset, tuple(good), sum(counts), counts, tuple(skipped),
                          tuple(kinds[f] for f in good))

    def num_examples(self, subset: str) -> int:
        """Examples per epoch: the real count of usable records, or the published size when
        the data is synthetic."""
        if self.synthetic:
            return self.spec.published_examples[_check_subset(subset)]
        return self.scan(subset).num_examples

    def describe_classes(self) -> str:
        """The header's phrase for the classes, e.g. '4 (labels.txt in --data_dir: 3 classes,
        labels 1..3, + background 0)' or '1001 (imagenet's: 1000 classes + background 0)': the
        labels.txt's folder is said as --data_dir (the `Dataset:` lines above show it), which
        keeps the line short whatever the path."""
        source = self.classes_source.replace(
            '%s in %s:' % (class_labels.LABELS_FILE, self.data_dir),
            '%s in --data_dir:' % class_labels.LABELS_FILE)
        return '%d (%s)' % (self.num_classes, source)

    def header_name(self) -> str:
        """The original's `Dataset:` value: 'imagenet (synthetic)', or 'imagenet' for data
        read from files (log parsers of the original read it)."""
        name = self.name if self.name != 'synthetic' else 'imagenet'
        return '%s (synthetic)' % name if self.synthetic else name

    def count_phrases(self, subset: str) -> list[str]:
        """The phrases of the subset's example count and checks, e.g. ['train: 512 examples
        counted in 8 TFRecord shards', 'headers checked (record CRCs as read)'] (`describe`
        joins them; the header wraps them: run_header.dataset_lines)."""
        if self.synthetic:
            return ['%s: %d examples per epoch (published %s size)'
                    % (subset, self.num_examples(subset), subset)]
        scan = self.scan(subset)
        kind = 'TFRecord shard' if self.spec.file_format == 'tfrecord' else 'pickle batch'
        kind += '' if len(scan.files) == 1 else ('es' if kind.endswith('batch') else 's')
        phrases = ['%s: %d examples counted in %d %s' % (
            subset, scan.num_examples, len(scan.files), kind)]
        if self.spec.file_format == 'tfrecord':
            phrases[0] += compression.describe(scan.compression)
            if self._empty.get(subset):
                phrases.append('%d of them empty' % self._empty[subset])
            phrases.append('headers checked (record CRCs as read)')
        if subset in self._subset_of:
            phrases.append('a subset of -of-%d (--allow_shard_subset)' % self._subset_of[subset])
        if scan.skipped:
            phrases.append('%d corrupt shard(s) skipped with %d readable records' % (
                len(scan.skipped), scan.skipped_records))
        return phrases

    def describe(self, subset: str) -> str:
        """One phrase (the input pipelines' descriptions, the header's `Eval:` line): name, how
        it was chosen, where the example count comes from, e.g. 'imagenet (inferred from the
        files in /data), train: 512 examples counted in 8 TFRecord shards, headers checked
        (record CRCs as read)'. The header's `Dataset:` lines: run_header.dataset_lines."""
        if self.synthetic:
            return 'synthetic (%s shapes, %d classes), %s' % (
                self.name if self.name != 'synthetic' else 'imagenet', self.num_classes,
                self.count_phrases(subset)[0])
        how = 'inferred from the files in' if self.inferred else 'in'
        return '%s (%s %s), %s' % (self.name, how, self.data_dir,
                                   ', '.join(self.count_phrases(subset)))


def _check_subset(subset):
    if subset not in SUBSETS:
        raise ValueError('subset must be train or validation. Received: %r' % (subset,))
    return subset


def _short(values, limit=8):
    if not values:
        return 'none'
    text = ', '.join(map(str, values[:limit]))
    return text + (', ...' if len(values) > limit else '')


def get_dataset(params) -> Dataset:
    """The dataset of a run, from --data_name and --data_dir.

    Without --data_dir the data is synthetic (of --data_name's shapes, ImageNet's by default).
    With --data_dir and no --data_name, the name is inferred from the files in the directory.

    The number of classes is --num_classes, else the converter's labels.txt in an ImageNet-format
    --data_dir (see `class_labels.resolve_num_classes`), else the published one.

    Args:
      params: a `params.Params`; reads data_dir, data_name, skip_corrupt_records,
        allow_shard_subset, num_classes, eval.

    Returns:
      A Dataset. Files are listed and checked lazily, by `scan` or `num_examples`.

    Raises:
      DataError: --data_dir is missing, empty, or holds no file of a known dataset; its
        labels.txt cannot be read (see `class_labels.read_labels_file`).
      params.ParamsError: --num_classes is too small for the dataset's labels.
    """
    name, data_dir = params.data_name, params.data_dir
    if not data_dir or name == 'synthetic':
        spec = SPECS[name or 'synthetic']
        return Dataset(spec, num_classes=params.num_classes,
                       classes_source='--num_classes' if params.num_classes else '')
    inferred = name is None
    name = folder_dataset_name(data_dir, name)
    num_classes, source = class_labels.resolve_num_classes(SPECS[name], data_dir,
                                                           params.num_classes)
    return Dataset(SPECS[name], data_dir, inferred=inferred,
                   skip_corrupt_records=params.skip_corrupt_records, num_classes=num_classes,
                   classes_source=source, allow_shard_subset=params.allow_shard_subset,
                   evaluating=bool(params.eval), data_subset=params.data_subset)


def default_subset(params) -> str:
    """--data_subset, or 'validation' with --eval and 'train' otherwise."""
    return params.data_subset or ('validation' if params.eval else 'train')
