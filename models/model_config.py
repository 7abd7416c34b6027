"""The model registry: one explicit table from name to factory, per dataset.

`get_model(name, dataset)` builds a model; `list_models()` drives the parametrised tests;
`register_model(name, dataset, func)` adds one for this process (the original's call). Depth
variants are `functools.partial` entries. The names and their `--list_models` figures are also
in model_catalog.py as plain data (no TensorFlow), checked against this registry by the tests.
"""

from __future__ import annotations

import functools

from ..runtime import runtime_env

# Imported directly (the original's `model_config.register_model`): TensorFlow's environment
# set and its start-up lines kept off stderr, as the package's names that load it do.
runtime_env.import_tensorflow()

from . import (
    alexnet_model,
    densenet_model,
    googlenet_model,
    inception_model,
    lenet_model,
    mobilenet_model,
    model_catalog,
    overfeat_model,
    resnet_model,
    trivial_model,
    vgg_model,
)
from . import model as model_lib
from .model_catalog import UnknownModelError  # noqa: F401  (raised by get_model)


def _table(entries):
    table = {}
    for name, factory in entries:
        if name in table:
            raise ValueError('model %r registered twice' % name)
        table[name] = factory
    return table


_p = functools.partial

_IMAGENET_MODELS = _table([
    ('trivial', trivial_model.TrivialModel),
    ('lenet', lenet_model.Lenet5Model),
    ('alexnet', alexnet_model.AlexnetModel),
    ('overfeat', overfeat_model.OverfeatModel),
    ('googlenet', googlenet_model.GooglenetModel),
    ('vgg11', _p(vgg_model.VggModel, 11)),
    ('vgg16', _p(vgg_model.VggModel, 16)),
    ('vgg19', _p(vgg_model.VggModel, 19)),
    ('inception3', inception_model.Inceptionv3Model),
    ('inception4', inception_model.Inceptionv4Model),
    ('resnet50', _p(resnet_model.ResnetModel, 'resnet50', (3, 4, 6, 3), 'v1')),
    ('resnet50_v1.5', _p(resnet_model.ResnetModel, 'resnet50_v1.5', (3, 4, 6, 3), 'v1.5')),
    ('resnet50_v2', _p(resnet_model.ResnetModel, 'resnet50_v2', (3, 4, 6, 3), 'v2')),
    ('resnet101', _p(resnet_model.ResnetModel, 'resnet101', (3, 4, 23, 3), 'v1')),
    ('resnet101_v1.5', _p(resnet_model.ResnetModel, 'resnet101_v1.5', (3, 4, 23, 3), 'v1.5')),
    ('resnet101_v2', _p(resnet_model.ResnetModel, 'resnet101_v2', (3, 4, 23, 3), 'v2')),
    ('resnet152', _p(resnet_model.ResnetModel, 'resnet152', (3, 8, 36, 3), 'v1')),
    ('resnet152_v1.5', _p(resnet_model.ResnetModel, 'resnet152_v1.5', (3, 8, 36, 3), 'v1.5')),
    ('resnet152_v2', _p(resnet_model.ResnetModel, 'resnet152_v2', (3, 8, 36, 3), 'v2')),
    # 'mobilenet' is the original's network, MobileNet v2; 'mobilenet_v2' the same network
    # (this project's earlier name of it); 'mobilenet_v1' is not in the original.
    ('mobilenet', _p(mobilenet_model.MobilenetModel, 'mobilenet')),
    ('mobilenet_v1', mobilenet_model.MobilenetV1Model),
    ('mobilenet_v2', _p(mobilenet_model.MobilenetModel, 'mobilenet_v2')),
    ('densenet121', densenet_model.Densenet121Model),
])

_CIFAR10_MODELS = _table([
    ('trivial', trivial_model.TrivialCifar10Model),
    ('alexnet', alexnet_model.AlexnetCifar10Model),
    ('densenet40_k12', _p(densenet_model.DensenetCifar10Model, 'densenet40_k12', 40, 12)),
    ('densenet100_k12', _p(densenet_model.DensenetCifar10Model, 'densenet100_k12', 100, 12)),
    ('densenet100_k24', _p(densenet_model.DensenetCifar10Model, 'densenet100_k24', 100, 24)),
] + [('resnet%d%s' % (depth, suffix),
      _p(resnet_model.ResnetCifar10Model, 'resnet%d%s' % (depth, suffix), depth, version))
     for depth in (20, 32, 44, 56, 110) for suffix, version in (('', 'v1'), ('_v2', 'v2'))])

_MODELS_BY_DATASET = {'imagenet': _IMAGENET_MODELS, 'cifar10': _CIFAR10_MODELS,
                      # Synthetic data imitates ImageNet.
                      'synthetic': _IMAGENET_MODELS}


def list_models(dataset: str | None = None) -> list[tuple[str, str]]:
    """Returns sorted (name, dataset) pairs of every registered model, or of one dataset's."""
    datasets = [dataset] if dataset else ['imagenet', 'cifar10']
    return sorted((name, d) for d in datasets for name in _MODELS_BY_DATASET[d])


def register_model(name: str, dataset: str, func) -> None:
    """Adds a model to this process's registry, as the original's `register_model`: `--model=
    name` (make_params(model=name)) then runs it, and `list_models()`, the package's
    `list_models(dataset)` and the `--model` check know it. Other processes do not (the
    command's `--list_models` prints the stored table: model_catalog.py; a model of the project
    itself goes into the table above, see docs/CONTRIBUTING.md).

    Args:
      name: the model's name.
      dataset: 'imagenet' (synthetic data runs ImageNet's models) or 'cifar10'.
      func: () -> a new models.model.CNNModel (called here once, to read its image size and
        defaults; the original's model functions took `params=`, and its model classes do not
        run here).

    Raises:
      ValueError: `name` is registered for `dataset` already, or `dataset` is another name.
      TypeError: `func()` does not return a models.model.CNNModel.
    """
    if dataset not in model_catalog.DATASETS:
        raise ValueError('cannot register model %r for dataset %r: give one of %s' % (
            name, dataset, ', '.join(model_catalog.DATASETS)))
    if name in _MODELS_BY_DATASET[dataset] or name in model_catalog.names(dataset):
        raise ValueError('model %r is already registered for dataset %r' % (name, dataset))
    model = func()
    if not isinstance(model, model_lib.CNNModel):
        raise TypeError('register_model(%r): the function must return a '
                        'tf_cnn_benchmarks.models.model.CNNModel; it returned %s' % (
                            name, type(model).__name__))
    _MODELS_BY_DATASET[dataset][name] = func
    model_catalog.add_registered(model_catalog.ModelRow(
        name, dataset, model.image_size, None, None, model.default_batch_size,
        model.default_learning_rate, model.min_image_size, bool(model.fixed_image_size)))


def get_model(name: str, dataset: str = 'imagenet') -> model_lib.CNNModel:
    """Returns a new model instance.

    Args:
      name: registry name, e.g. 'resnet50'.
      dataset: 'imagenet', 'cifar10' or 'synthetic' (synthetic uses the ImageNet models).

    Raises:
      UnknownModelError: `name` is not registered for `dataset`; the message lists the valid names
        (and says which dataset the name belongs to, if any, or the closest names:
        model_catalog.check_model).
    """
    table = _MODELS_BY_DATASET[dataset]
    if name in table:
        return table[name]()
    model_catalog.check_model(name, dataset)  # raises, naming the valid models
    raise UnknownModelError('--model=%s is missing from the registry of %s; valid: %s' % (
        name, dataset, ', '.join(sorted(table))))
