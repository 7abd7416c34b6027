"""Every model's name and figures as plain data: `--model` checks and `--list_models` without
TensorFlow.

The registry (model_config.py) builds the models, and importing it loads TensorFlow and every
model module (seconds). This module holds the same names and their `--list_models` figures, so
the command refuses an unknown `--model` (with a "did you mean") and prints `--list_models`
before TensorFlow loads. It imports nothing of TensorFlow or the models.

ROWS is generated from the built models (`python -m tf_cnn_benchmarks.models.model_table`
prints it) and tests/test_model_table.py checks it against them, row by row: the registry's
names, default image sizes, exact trainable parameters, forward FLOPs, default batch sizes and
learning rates. Registering or changing a model means regenerating ROWS.
"""

from __future__ import annotations

import collections
import difflib
import os
import re

from ..params import original_flags

DATASETS = ('imagenet', 'cifar10')
#: The registry's source, read (not imported) for the message of a model missing from ROWS.
REGISTRY_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'model_config.py')

ModelRow = collections.namedtuple('ModelRow', ['name', 'dataset', 'image_size', 'parameters',
                                               'gflops', 'batch_size', 'learning_rate',
                                               'min_image_size', 'fixed_image_size'])
ModelRow.__doc__ = """One model of the table.

name, dataset: registry key. image_size: default input height and width in pixels. parameters:
trainable parameters (classifier of the dataset's width: 1001 ImageNet, 10 CIFAR-10). gflops:
forward GFLOPs per image at image_size (multiply-add = 2 FLOPs, see models/flops.py).
batch_size, learning_rate: the model's per-device defaults. min_image_size: the smallest
--image_size it takes; fixed_image_size: True when it takes only image_size (it flattens a
feature map of fixed size)."""

# (name, dataset, image size, trainable parameters, forward FLOPs per image, default batch,
# default learning rate, smallest image size, only its own image size), sorted by name then
# dataset. Generated: see the module docstring.
ROWS = (
    ('alexnet', 'cifar10', 32, 1756426, 65556224, 128, 0.1, 32, True),
    ('alexnet', 'imagenet', 227, 61842345, 1677585792, 512, 0.005, 227, True),
    ('densenet100_k12', 'cifar10', 32, 6979642, 3539032896, 64, 0.1, 8, False),
    ('densenet100_k24', 'cifar10', 32, 27249082, 13778695488, 64, 0.1, 8, False),
    ('densenet121', 'imagenet', 224, 7979881, 5668325376, 32, 0.0125, 32, False),
    ('densenet40_k12', 'cifar10', 32, 1019722, 529625856, 64, 0.1, 8, False),
    ('googlenet', 'imagenet', 224, 6999577, 3165345792, 32, 0.005, 32, False),
    ('inception3', 'imagenet', 299, 23819401, 11426436288, 32, 0.005, 75, False),
    ('inception4', 'imagenet', 299, 42649769, 24507952320, 32, 0.005, 75, False),
    ('lenet', 'imagenet', 28, 2173353, 28069888, 32, 0.005, 28, True),
    ('mobilenet', 'imagenet', 224, 3506153, 601551104, 32, 0.005, 32, False),
    ('mobilenet_v1', 'imagenet', 224, 4233001, 1137482752, 32, 0.005, 32, False),
    ('mobilenet_v2', 'imagenet', 224, 3506153, 601551104, 32, 0.005, 32, False),
    ('overfeat', 'imagenet', 231, 145924969, 5602816000, 32, 0.005, 231, True),
    ('resnet101', 'imagenet', 224, 44551209, 15140392960, 32, 0.016, 32, False),
    ('resnet101_v1.5', 'imagenet', 224, 44551209, 15602814976, 32, 0.016, 32, False),
    ('resnet101_v2', 'imagenet', 224, 44510953, 15602814976, 32, 0.016, 32, False),
    ('resnet110', 'cifar10', 32, 1727962, 505775360, 128, 0.1, 8, False),
    ('resnet110_v2', 'cifar10', 32, 1725930, 505775360, 128, 0.1, 8, False),
    ('resnet152', 'imagenet', 224, 60194857, 22564835328, 32, 0.016, 32, False),
    ('resnet152_v1.5', 'imagenet', 224, 60194857, 23027257344, 32, 0.016, 32, False),
    ('resnet152_v2', 'imagenet', 224, 60139241, 23027257344, 32, 0.016, 32, False),
    ('resnet20', 'cifar10', 32, 269722, 81102080, 128, 0.1, 8, False),
    ('resnet20_v2', 'cifar10', 32, 269370, 81102080, 128, 0.1, 8, False),
    ('resnet32', 'cifar10', 32, 464154, 137725184, 128, 0.1, 8, False),
    ('resnet32_v2', 'cifar10', 32, 463578, 137725184, 128, 0.1, 8, False),
    ('resnet44', 'cifar10', 32, 658586, 194348288, 128, 0.1, 8, False),
    ('resnet44_v2', 'cifar10', 32, 657786, 194348288, 128, 0.1, 8, False),
    ('resnet50', 'imagenet', 224, 25559081, 7715950592, 64, 0.032, 32, False),
    ('resnet50_v1.5', 'imagenet', 224, 25559081, 8178372608, 64, 0.032, 32, False),
    ('resnet50_v2', 'imagenet', 224, 25536233, 8178372608, 64, 0.032, 32, False),
    ('resnet56', 'cifar10', 32, 853018, 250971392, 128, 0.1, 8, False),
    ('resnet56_v2', 'cifar10', 32, 851994, 250971392, 128, 0.1, 8, False),
    ('trivial', 'cifar10', 32, 52235, 96256, 32, 0.001, 8, False),
    ('trivial', 'imagenet', 227, 4263877, 8517558, 32, 0.0001, 8, False),
    ('vgg11', 'imagenet', 224, 132867433, 15218188288, 64, 0.005, 224, True),
    ('vgg16', 'imagenet', 224, 138361641, 30940536832, 64, 0.005, 224, True),
    ('vgg19', 'imagenet', 224, 143671337, 39264133120, 64, 0.005, 224, True),
)

# The original tf_cnn_benchmarks' model names by dataset: its registry (its model_config module
# in the tensorflow/benchmarks repository: the ImageNet and CIFAR-10 tables, the COCO and
# LibriSpeech models, and the TF1-only models it registers into them). Facts, not generated:
# they change only if the original does. A model built here under a name not in its dataset's
# list is 'new' in --list_models (NOT_IN_ORIGINAL, derived below), so a contributor's model
# needs no entry here.
ORIGINAL_MODELS = {
    'imagenet': (
        'alexnet', 'googlenet', 'inception3', 'inception4', 'lenet', 'mobilenet', 'nasnet',
        'nasnetlarge', 'ncf', 'overfeat', 'resnet50', 'resnet50_v1.5', 'resnet50_v2',
        'resnet101', 'resnet101_v2', 'resnet152', 'resnet152_v2', 'trivial', 'vgg11', 'vgg16',
        'vgg19') + tuple('official_resnet%d%s' % (depth, suffix) for depth in (
            18, 34, 50, 101, 152, 200) for suffix in ('', '_v2')),
    'cifar10': (
        'alexnet', 'densenet40_k12', 'densenet100_k12', 'densenet100_k24', 'nasnet', 'trivial')
    + tuple('resnet%d%s' % (depth, suffix) for depth in (20, 32, 44, 56, 110)
            for suffix in ('', '_v2')),
    'coco': ('ssd300', 'trivial'),
    'librispeech': ('deepspeech2',),
}

# The original's model names that this project does not build (of any dataset): `check_model`
# says so instead of guessing a close name. Derived from ORIGINAL_MODELS and ROWS.
ORIGINAL_ONLY = tuple(sorted(
    {name for names in ORIGINAL_MODELS.values() for name in names} - {row[0] for row in ROWS}))


# How each model stands to the original's model of its name (the --list_models column
# 'original'): not in the original (NOT_IN_ORIGINAL: no model of that name for that dataset in
# ORIGINAL_MODELS), or built otherwise (docs/usage-and-flags.md, "Departures from the
# original": trivial's linear 1-unit layer; the ImageNet ResNet v2 stems without batch
# norm; mobilenet without the second 1001 -> 1001 classifier the original's base class put
# on top of its TF-slim MobileNet v2's logits; the CIFAR-10 models' 10 outputs where the
# original's have 11, and the CIFAR ResNets' stems and DenseNets' transitions). Every other
# model is the original's network.
def not_in_original(table_rows) -> frozenset:
    """The (name, dataset) pairs of `table_rows` (ROWS' tuples) whose name the original's
    registry of that dataset (ORIGINAL_MODELS) lacks."""
    return frozenset((r[0], r[1]) for r in table_rows if r[0] not in ORIGINAL_MODELS[r[1]])


NOT_IN_ORIGINAL = not_in_original(ROWS)
DIFFERS_FROM_ORIGINAL = frozenset(
    {('trivial', 'imagenet'), ('resnet50_v2', 'imagenet'), ('resnet101_v2', 'imagenet'),
     ('resnet152_v2', 'imagenet'), ('mobilenet', 'imagenet')}
    | {(row[0], row[1]) for row in ROWS if row[1] == 'cifar10'}) - NOT_IN_ORIGINAL
#: The lines --list_models prints after the table: what its 'original' column says.
TABLE_LEGEND = (
    "original: same = the original's network of that name; new = not in the original; "
    'differs = built otherwise (CIFAR-10 models: 10 outputs, the original\'s 11; trivial, '
    'mobilenet: one layer; resnet*_v2: one layer and where a unit strides; '
    'docs/usage-and-flags.md, "Departures from the original")')


def origin(name: str, dataset: str) -> str:
    """'new', 'differs' or 'same': how the model stands to the original's of its name (a
    model registered at run time: 'new')."""
    if (name, dataset) in NOT_IN_ORIGINAL or (name, dataset) not in {(r[0], r[1]) for r in ROWS}:
        return 'new'
    return 'differs' if (name, dataset) in DIFFERS_FROM_ORIGINAL else 'same'


def count_text() -> str:
    """'N models (M names: alexnet and trivial for ImageNet and CIFAR-10)': what the
    --list_models table counts (len(ROWS), its distinct names, and the names of both
    datasets). docs/usage-and-flags.md quotes the counts; tests/test_docs.py checks them."""
    names = [row[0] for row in ROWS]
    both = sorted({n for n in names if names.count(n) > 1})
    return '%d models (%d names: %s for ImageNet and CIFAR-10)' % (
        len(ROWS), len(set(names)), ' and '.join(both))


# Models registered at run time in this process (model_config.register_model): (name,
# dataset) -> ModelRow, their parameters and gflops None (not measured: --list_models prints
# the table above, in a process of its own).
_REGISTERED: dict[tuple[str, str], ModelRow] = {}


def add_registered(model_row: ModelRow) -> None:
    """Adds a model registered at run time (model_config.register_model) to this process's
    names; its dataset is 'imagenet' or 'cifar10'."""
    _REGISTERED[(model_row.name, model_row.dataset)] = model_row


class UnknownModelError(ValueError):
    """The model name is not registered for the dataset (a usage error, exit status 2)."""


def rows() -> list[ModelRow]:
    """Every model's ModelRow, sorted by name then dataset (gflops = FLOPs / 1e9)."""
    return [ModelRow(name, dataset, size, params, flops / 1e9, batch, lr, smallest, fixed)
            for name, dataset, size, params, flops, batch, lr, smallest, fixed in ROWS]


def names(dataset: str) -> list[str]:
    """The sorted model names of 'imagenet', 'cifar10' or 'synthetic' (ImageNet's models).

    Raises:
      ValueError: another dataset name (an empty list would read as "no models").
    """
    if dataset not in DATASETS + ('synthetic',):
        raise ValueError('unknown dataset %r; give one of %s' % (
            dataset, ', '.join(DATASETS + ('synthetic',))))
    dataset = 'imagenet' if dataset == 'synthetic' else dataset
    return sorted([row[0] for row in ROWS if row[1] == dataset]
                  + [name for name, d in _REGISTERED if d == dataset])


def list_models(dataset: str | None = None) -> list[tuple[str, str]]:
    """Sorted (name, dataset) pairs of every model (those registered at run time too), or of
    one dataset's."""
    return sorted([(row[0], row[1]) for row in ROWS if dataset in (None, row[1])]
                  + [key for key in _REGISTERED if dataset in (None, key[1])])


def check_model(name: str, dataset: str) -> None:
    """Refuses a model name that `dataset` has no model of.

    Args:
      name: the --model value.
      dataset: 'imagenet', 'cifar10' or 'synthetic' (ImageNet's models).

    Raises:
      UnknownModelError: one line: for a name of the other dataset, which one and the flag
        that selects it; for a model of the original that is not built here (ORIGINAL_ONLY),
        that; for a name models/model_config.py registers but ROWS lacks, that ROWS is stale
        and the command that regenerates it; for an unknown name, the closest names ("did you
        mean") and the valid names of both datasets.
    """
    table = names(dataset)
    if name in table:
        return
    if name in ORIGINAL_ONLY:
        raise UnknownModelError(
            '--model=%s is a model %s; --list_models lists the %s it builds'
            % (name, original_flags.NOT_BUILT, count_text()))
    others = [d for d in DATASETS if name in names(d)]
    if others:
        fix = ''
        if dataset == 'synthetic':
            fix = ' (for synthetic %s images add --data_name=%s)' % (others[0], others[0])
        raise UnknownModelError('--model=%s is %s %s model and does not run on %s data%s; models '
                                'for %s: %s' % (name, 'an' if others[0][0] in 'aeiou' else 'a',
                                                others[0], dataset, fix, dataset,
                                                ', '.join(table)))
    if name in _registry_source_names():
        raise UnknownModelError(
            '--model=%s is registered in models/model_config.py but not in the stored table '
            'the command checks before TensorFlow loads (models/model_catalog.py ROWS is '
            'stale); regenerate it: python -m tf_cnn_benchmarks.models.model_table --write'
            % name)
    # The run's dataset first: --model=resnet5 on ImageNet means resnet50, not CIFAR's resnet56.
    close = (difflib.get_close_matches(name.lower(), table, n=3, cutoff=0.6)
             or difflib.get_close_matches(name.lower(), sorted({row[0] for row in ROWS}),
                                          n=3, cutoff=0.6))
    guess = ''
    if close:
        guess = 'did you mean %s? ' % (close[0] if len(close) == 1 else '%s or %s' % (
            ', '.join(close[:-1]), close[-1]))
    raise UnknownModelError(
        'unknown --model=%r; %svalid models for imagenet (and synthetic data): %s; for cifar10 '
        '(--data_name=cifar10): %s' % (name, guess, ', '.join(names('imagenet')),
                                       ', '.join(names('cifar10'))))


def _registry_source_names() -> set[str]:
    """The names model_config.py's tables give as literal `('name', factory)` entries, read
    from its text (importing it loads TensorFlow): for the message of a model registered there
    but missing from ROWS. Empty when the file cannot be read."""
    try:
        with open(REGISTRY_PATH, encoding='utf-8') as f:
            text = f.read()
    except OSError:
        return set()
    return set(re.findall(r"^\s*\('([\w.]+)',", text, re.MULTILINE))


def row(name: str, dataset: str) -> ModelRow | None:
    """The ModelRow of a model ('synthetic' means ImageNet's models), or None."""
    dataset = 'imagenet' if dataset == 'synthetic' else dataset
    return next((r for r in rows() if (r.name, r.dataset) == (name, dataset)),
                _REGISTERED.get((name, dataset)))


def image_size_problem(name: str, dataset: str, image_size: int | None) -> str | None:
    """Why `--image_size` does not suit the model, as the usage line; None when it does.

    Args:
      name, dataset: a registered model ('synthetic' means ImageNet's models).
      image_size: --image_size in pixels; None or 0 means the model's own.
    """
    model = row(name, dataset)
    size = image_size or model.image_size
    if size != model.image_size and model.fixed_image_size:
        return '--model=%s takes only %dx%d images. Received: image_size=%d' % (
            name, model.image_size, model.image_size, size)
    if size < model.min_image_size:
        return '--model=%s needs --image_size >= %d. Received: %d' % (
            name, model.min_image_size, size)
    return None


_COLUMNS = (  # (header, attribute, format, left-aligned)
    ('model', 'name', '{}', True),
    ('dataset', 'dataset', '{}', True),
    ('image', 'image_size', '{:d}', False),
    ('parameters', 'parameters', '{:,d}', False),
    ('GFLOPs', 'gflops', '{:.3f}', False),
    ('batch', 'batch_size', '{:d}', False),
    ('learning_rate', 'learning_rate', '{:g}', False),
    ('original', None, '{}', True),  # origin(): same, new, differs
)


def format_model_table(table_rows: list[ModelRow]) -> str:
    """Formats rows as a fixed-width text table: a header line, a dashed line, one line per row.

    Columns (two spaces apart): model, dataset, image, parameters (with thousands separators),
    GFLOPs (forward, per image, 3 decimals), batch, learning_rate, original (`origin`: same,
    new, differs; TABLE_LEGEND says them). Text columns are left-aligned, numbers
    right-aligned. No trailing newline.
    """
    cells = [[fmt.format(getattr(row, attr) if attr else origin(row.name, row.dataset))
              for _, attr, fmt, _ in _COLUMNS] for row in table_rows]
    widths = [max([len(header)] + [len(line[i]) for line in cells])
              for i, (header, _, _, _) in enumerate(_COLUMNS)]

    def line(values):
        parts = [v.ljust(w) if left else v.rjust(w)
                 for v, w, (_, _, _, left) in zip(values, widths, _COLUMNS, strict=True)]
        return '  '.join(parts).rstrip()

    out = [line([header for header, _, _, _ in _COLUMNS]), '  '.join('-' * w for w in widths)]
    out.extend(line(values) for values in cells)
    return '\n'.join(out)
