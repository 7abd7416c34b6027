"""The `--list_models` figures measured: every registered model with its size, cost and defaults.

`--list_models` prints model_catalog's stored copy (no TensorFlow, instant); this module
measures the models, to check and regenerate that copy (`python -m
tf_cnn_benchmarks.models.model_table` prints model_catalog.ROWS). Nothing is cached: each call
builds every model's inference graph once, at batch 1, with its variables recorded rather than
created (`flops.VariableRecorder`), which takes well under a minute for the whole zoo.
"""

from __future__ import annotations

import argparse

# flops and model_config load TensorFlow: imported where the models are measured, so that
# --help and a usage error answer at once.
from .model_catalog import ModelRow, format_model_table  # noqa: F401  (the table's format)


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
    return '\n'.join('    (%r, %r, %d, %d, %d, %d, %r, %d, %r),' % (
        r.name, r.dataset, r.image_size, r.parameters, round(r.gflops * 1e9), r.batch_size,
        r.learning_rate, r.min_image_size, r.fixed_image_size) for r in rows)


if __name__ == '__main__':  # python -m tf_cnn_benchmarks.models.model_table
    argparse.ArgumentParser(
        prog='python -m tf_cnn_benchmarks.models.model_table',
        description='Measures every registered model (about a minute) and prints '
        'model_catalog.ROWS, the stored copy --list_models prints.').parse_args()
    print(catalog_source(model_rows()))
