"""The model registry: one explicit table from name to factory, per dataset.

`get_model(name, dataset)` builds a model; `list_models()` drives the parametrised tests and
`--list_models`. Depth variants are `functools.partial` entries.
"""

from __future__ import annotations

from models import model as model_lib
from models import trivial_model


class UnknownModelError(ValueError):
    """The model name is not registered for the dataset."""


def _table(entries):
    table = {}
    for name, factory in entries:
        if name in table:
            raise ValueError('model %r registered twice' % name)
        table[name] = factory
    return table


_IMAGENET_MODELS = _table([
    ('trivial', trivial_model.TrivialModel),
])

_CIFAR10_MODELS = _table([
])

_MODELS_BY_DATASET = {'imagenet': _IMAGENET_MODELS, 'cifar10': _CIFAR10_MODELS,
                      # Synthetic data imitates ImageNet.
                      'synthetic': _IMAGENET_MODELS}


def list_models(dataset: str | None = None) -> list[tuple[str, str]]:
    """Returns sorted (name, dataset) pairs of every registered model, or of one dataset's."""
    datasets = [dataset] if dataset else ['imagenet', 'cifar10']
    return sorted((name, d) for d in datasets for name in _MODELS_BY_DATASET[d])


def get_model(name: str, dataset: str = 'imagenet') -> model_lib.CNNModel:
    """Returns a new model instance.

    Args:
      name: registry name, e.g. 'resnet50'.
      dataset: 'imagenet', 'cifar10' or 'synthetic' (synthetic uses the ImageNet models).

    Raises:
      UnknownModelError: `name` is not registered for `dataset`; the message lists the valid names
        (and says which dataset the name belongs to, if any).
    """
    table = _MODELS_BY_DATASET[dataset]
    if name in table:
        return table[name]()
    valid = ', '.join(sorted(table))
    others = [d for d in ('imagenet', 'cifar10') if name in _MODELS_BY_DATASET[d]]
    if others:
        raise UnknownModelError('--model=%s is a %s model and does not run on %s; models for %s: '
                                '%s' % (name, others[0], dataset, dataset, valid))
    raise UnknownModelError('unknown --model=%r; valid models for %s: %s' % (name, dataset, valid))
