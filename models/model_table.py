"""The `--list_models` table: every registered model with its size, cost and defaults.

Nothing is cached: each call builds every model's inference graph once, at batch 1, with its
variables recorded rather than created (`flops.VariableRecorder`), which takes well under a
minute for the whole zoo.
"""

from __future__ import annotations

import collections

from . import flops, model_config

ModelRow = collections.namedtuple('ModelRow', ['name', 'dataset', 'image_size', 'parameters',
                                               'gflops', 'batch_size', 'learning_rate'])
ModelRow.__doc__ = """One model of the table.

name, dataset: registry key. image_size: default input height and width in pixels. parameters:
trainable parameters (classifier of the dataset's width: 1001 ImageNet, 10 CIFAR-10). gflops:
forward GFLOPs per image at image_size (multiply-add = 2 FLOPs, see models/flops.py).
batch_size, learning_rate: the model's per-device defaults."""

_COLUMNS = (  # (header, attribute, format, left-aligned)
    ('model', 'name', '{}', True),
    ('dataset', 'dataset', '{}', True),
    ('image', 'image_size', '{:d}', False),
    ('parameters', 'parameters', '{:,d}', False),
    ('GFLOPs', 'gflops', '{:.3f}', False),
    ('batch', 'batch_size', '{:d}', False),
    ('learning_rate', 'learning_rate', '{:g}', False),
)


def model_rows(models: list[tuple[str, str]] | None = None) -> list[ModelRow]:
    """Measures registered models.

    Args:
      models: (name, dataset) pairs; None means every model of `model_config.list_models()`.

    Returns:
      One ModelRow per model, in the order given (registry order: sorted by name, then dataset).

    Raises:
      model_config.UnknownModelError: a pair is not registered.
    """
    rows = []
    for name, dataset in model_config.list_models() if models is None else models:
        model = model_config.get_model(name, dataset)
        parameters, flops_per_image = flops.measure(model)
        rows.append(ModelRow(name, dataset, model.image_size, parameters, flops_per_image / 1e9,
                             model.default_batch_size, model.default_learning_rate))
    return rows


def format_model_table(rows: list[ModelRow]) -> str:
    """Formats rows as a fixed-width text table: a header line, a dashed line, one line per row.

    Columns (two spaces apart): model, dataset, image, parameters (with thousands separators),
    GFLOPs (forward, per image, 3 decimals), batch, learning_rate. Text columns are left-aligned,
    numbers right-aligned. No trailing newline.
    """
    cells = [[fmt.format(getattr(row, attr)) for _, attr, fmt, _ in _COLUMNS] for row in rows]
    widths = [max([len(header)] + [len(line[i]) for line in cells])
              for i, (header, _, _, _) in enumerate(_COLUMNS)]

    def line(values):
        parts = [v.ljust(w) if left else v.rjust(w)
                 for v, w, (_, _, _, left) in zip(values, widths, _COLUMNS, strict=True)]
        return '  '.join(parts).rstrip()

    out = [line([header for header, _, _, _ in _COLUMNS]), '  '.join('-' * w for w in widths)]
    out.extend(line(values) for values in cells)
    return '\n'.join(out)
