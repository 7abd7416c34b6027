"""The `--list_models` figures measured: every registered model with its size, cost and defaults.

`--list_models` prints model_catalog's stored copy (no TensorFlow, instant); this module
measures the models, to check and regenerate that copy: `python -m
tf_cnn_benchmarks.models.model_table` prints model_catalog.ROWS, with `--write` rewrites them in
models/model_catalog.py, with `--check` exits 1 with one line naming the rows that are stale
(0 when none is). Nothing is cached: each call
builds every model's inference graph once, at batch 1, with its variables recorded rather than
created (`flops.VariableRecorder`), which takes well under a minute for the whole zoo.
"""

from __future__ import annotations

import argparse
import os
import sys

# flops and model_config load TensorFlow: imported where the models are measured, so that
# --help and a usage error answer at once.
from .. import cnn_util
from . import model_catalog
from .model_catalog import ModelRow, format_model_table  # noqa: F401  (the table's format)

#: The file whose ROWS `--check` and `--write` compare and rewrite.
CATALOG_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'model_catalog.py')
COMMAND = 'python -m tf_cnn_benchmarks.models.model_table'


def model_rows(models: list[tuple[str, str]] | None = None) -> list[ModelRow]:
    """Measures registered models.

    Args:
      models: (name, dataset) pairs; None means every model of `model_config.list_models()`.

    Returns:
      One ModelRow per model, in the order given (registry order: sorted by name, then dataset).

    Raises:
      model_config.UnknownModelError: a pair is not registered.
    """
    from . import flops, model_config
    rows = []
    for name, dataset in model_config.list_models() if models is None else models:
        model = model_config.get_model(name, dataset)
        parameters, flops_per_image = flops.measure(model)
        rows.append(ModelRow(name, dataset, model.image_size, parameters, flops_per_image / 1e9,
                             model.default_batch_size, model.default_learning_rate,
                             model.min_image_size, bool(model.fixed_image_size)))
    return rows


def catalog_source(rows: list[ModelRow]) -> str:
    """The body of model_catalog.ROWS for measured `rows` (one tuple a line, FLOPs as integers)."""
    return '\n'.join('    (%r, %r, %d, %d, %d, %d, %r, %d, %r),' % row
                     for row in catalog_source_rows(rows))


def stale_rows(rows: list[ModelRow]) -> str:
    """What differs between model_catalog.ROWS and measured `rows`, as a phrase: 'missing:
    tinynet/cifar10; changed: lenet/imagenet; not registered: x/imagenet'; '' when nothing."""
    def key(r):
        return '%s/%s' % (r[0], r[1])
    stored = {key(r): tuple(r) for r in model_catalog.ROWS}
    measured = {key(r): tuple(r) for r in catalog_source_rows(rows)}
    parts = [('missing', sorted(set(measured) - set(stored))),
             ('changed', sorted(k for k in set(measured) & set(stored)
                                if measured[k] != stored[k])),
             ('not registered', sorted(set(stored) - set(measured)))]
    return '; '.join('%s: %s' % (what, ', '.join(keys)) for what, keys in parts if keys)


def catalog_source_rows(rows: list[ModelRow]) -> list[tuple]:
    """`rows` as the tuples of model_catalog.ROWS (FLOPs as integers)."""
    return [(r.name, r.dataset, r.image_size, r.parameters, round(r.gflops * 1e9), r.batch_size,
             r.learning_rate, r.min_image_size, r.fixed_image_size) for r in rows]


def main(argv: list[str]) -> int:
    """`python -m tf_cnn_benchmarks.models.model_table [--check | --write]` (module docstring).

    Args:
      argv: the arguments without the program name.

    Returns:
      The exit status: 0; 1 when `--check` finds ROWS stale (one `error:` line on stderr
      naming the rows and the command that regenerates them).
    """
    parser = argparse.ArgumentParser(
        prog=COMMAND, description='Measures every registered model (under a minute) and prints '
        'model_catalog.ROWS, the stored copy --list_models prints.')
    cnn_util.add_check_and_write(parser, 'ROWS in models/model_catalog.py')
    args = parser.parse_args(argv)
    from ..runtime import runtime_env
    runtime_env.import_tensorflow()  # TensorFlow's start-up lines kept off stderr
    rows = model_rows()
    body = catalog_source(rows)
    if not (args.check or args.write):
        print(body)
        return 0
    return cnn_util.check_or_write_table(
        CATALOG_PATH, 'models/model_catalog.py ROWS', 'ROWS = (', ')', body, write=args.write,
        what=stale_rows(rows) or 'their order or format', count=len(rows), command=COMMAND)


if __name__ == '__main__':  # python -m tf_cnn_benchmarks.models.model_table
    sys.exit(main(sys.argv[1:]))
