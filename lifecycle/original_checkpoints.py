"""Checkpoints written by the original tf_cnn_benchmarks: their variable names as this project's.

lifecycle/checkpoints.py restores them through this module (a resume with --train_dir, --eval,
--forward_only, a warm start from --checkpoint_path). The original's names differ from this
project's only in their spelling, observed in checkpoints the original wrote (TensorFlow 2.21,
--device=cpu and --device=gpu, on 2026-12-06):

  original                                         here
  v/cg/conv0/conv2d/kernel (parameter_server)      cg/conv0/weights
  v0/cg/conv0/conv2d/kernel (replicated, indep.)   cg/conv0/weights
  v/cg/conv0/biases, v/cg/affine0/weights          cg/conv0/biases, cg/affine0/weights
  v/cg/conv0/batchnorm0/{beta,gamma,moving_*}      cg/conv0/batchnorm0/{beta,gamma,moving_*}
  v/cg/resnet_v10/conv1/... (a block's scope)      cg/conv1/... (resnet), cg/mixed_35x35_0/...
  v/cg/conv0/conv2d/kernel/Momentum (slots)        cg/conv0/weights/Momentum (also RMSProp,
                                                   RMSProp_1, Adam, Adam_1)
  append_apply_gradient_ops/beta1_power (beta2)   beta1_power, beta2_power
  loss_scale, loss_scale_normal_steps              loss_scale/scale, loss_scale/good_steps
  global_step                                      global_step
  (none)                                           images_seen

Both number their layers over the whole model (conv0, conv1, ... batchnorm0, ...), whatever
block holds them, so a layer is found by its number: `layer_key` drops a block's scope. Every
batch norm has the original's settings (tests/test_batch_norm_settings.py): a gamma where the
original's has one (none in inception3 and inception4), its epsilon. ResNet v2's layers differ
(the original normalises its first convolution and numbers its batch norms otherwise): those
checkpoints do not map, and the error says so. Where the names map but the layers compute
otherwise (trivial, the CIFAR-10 ResNet v1), `difference` says how, for a warning; the other
models gave the original's logits from its checkpoints (docs/train-dir.md).

The original flattens a convolution's output in the run's layout (NCHW, its GPU default, or
NHWC), this project always in NHWC order (models/convnet_builder.flatten): the rows of the dense
layer after the flatten (lenet, alexnet, vgg, overfeat, trivial) are reordered when the
original ran in NCHW, which its graph (model.ckpt-N.meta or graph.pbtxt beside the
checkpoint) shows.
"""

from __future__ import annotations

import collections
import os
import re
from typing import NamedTuple

import numpy as np
import tensorflow as tf
from google.protobuf import text_format
from tensorflow.core.framework import graph_pb2
from tensorflow.core.protobuf import meta_graph_pb2

from .. import cnn_util
from ..models import convnet_builder
from ..runtime import file_systems

tf1 = tf.compat.v1

#: Example of an original name, for messages.
EXAMPLE = 'v/cg/conv0/conv2d/kernel'
#: What maps, for messages.
MAPPED_MODELS = ('trivial, lenet, alexnet, vgg11/16/19, overfeat, googlenet, inception3/4 and '
                 'ResNet v1 and v1.5 (resnet50, resnet20, ...)')
_OUR_TOWER = re.compile(r'^v0?/')  # tower 0 (the others' copies are the same values)
_ANY_TOWER = re.compile(r'^v\d*/')
_KERNEL = re.compile(r'(^|/)conv2d/kernel(?=/|$)')
_LAYER = re.compile(r'^(conv|affine|batchnorm|dwconv)\d+$')
#: The original's name of its automatic loss scale (this project's 'loss_scale/scale').
LOSS_SCALE = 'loss_scale'
_RENAMED = {
    'append_apply_gradient_ops/beta1_power': 'beta1_power',
    'append_apply_gradient_ops/beta2_power': 'beta2_power',
    'loss_scale': 'loss_scale/scale',
    'loss_scale_normal_steps': 'loss_scale/good_steps',
}
_LAYOUT_OPS = {'Conv2D', 'MaxPool', 'AvgPool', 'FusedBatchNorm', 'FusedBatchNormV3'}
# The original transposes the images to NCHW at the start of each tower, by this name.
_IMAGES_TRANSPOSE = re.compile(r'^tower_0/v0?/transpose$')


def is_original(names) -> bool:
    """Whether checkpoint variable names are the original tf_cnn_benchmarks' (a tower scope
    before 'cg/', or a 'conv2d/kernel')."""
    return any((_ANY_TOWER.match(n) and '/cg/' in n) or _KERNEL.search(n) for n in names)


def layer_key(name: str) -> str:
    """A variable's name with a block's scope dropped: 'cg/resnet_v10/conv1/weights' and
    'cg/mixed_35x35_0/conv1/weights' -> 'cg/conv1/weights' (layers are numbered over the whole
    model)."""
    parts = name.split('/')
    if parts[0] == 'cg':
        for i, part in enumerate(parts[1:], 1):
            if _LAYER.match(part):
                return '/'.join(['cg'] + parts[i:])
    return name


def original_key(name: str) -> str | None:
    """The `layer_key` of this project's name for an original checkpoint name
    ('v/cg/resnet_v10/conv1/conv2d/kernel/Momentum' -> 'cg/conv1/weights/Momentum'); None for
    another tower's copy ('v1/...')."""
    if _ANY_TOWER.match(name) and not _OUR_TOWER.match(name):
        return None
    name = _OUR_TOWER.sub('', name, count=1)
    name = _RENAMED.get(name, name)
    return layer_key(_KERNEL.sub(r'\1weights', name))


class Translation(NamedTuple):
    """An original checkpoint seen with this project's names.

    Attributes:
      names: {name here: name in the checkpoint} for each variable found there.
      shapes, dtypes: the checkpoint's shapes and dtypes under the names here.
    """

    names: dict
    shapes: dict
    dtypes: dict


def translate(shapes: dict, dtypes: dict, wanted) -> Translation:
    """Maps an original checkpoint's names onto the names `wanted` (this project's).

    A name maps when its `layer_key` is the key of exactly one checkpoint name and of exactly
    one wanted name (a key two names share maps neither).

    Args:
      shapes, dtypes: the checkpoint reader's {name: shape} and {name: tf.DType}.
      wanted: this run's checkpoint names.
    """
    stored = collections.defaultdict(list)
    for name in shapes:
        key = original_key(name)
        if key is not None:
            stored[key].append(name)
    ours = collections.defaultdict(list)
    for name in wanted:
        ours[layer_key(name)].append(name)
    names = {mine[0]: found[0] for key, mine in ours.items()
             for found in [stored.get(key, [])] if len(mine) == 1 and len(found) == 1}
    return Translation(names, {n: shapes[s] for n, s in names.items()},
                       {n: dtypes[s] for n, s in names.items()})


def mapped_line(path: str, translation: Translation) -> str:
    """The log line of a restore of an original checkpoint."""
    renamed = sorted(((s, n) for n, s in translation.names.items() if s != n),
                     key=lambda pair: (not _KERNEL.search(pair[0]), pair))
    return ('Checkpoint %s was written by the original tf_cnn_benchmarks.py: %d variables '
            'restored by their names there (e.g. %s as %s)' % (
                path, len(translation.names), *(renamed or [('global_step',) * 2])[0]))


def unmapped_message(path: str, model_name: str, missing: list, total: int) -> str:
    """The CheckpointError text for an original checkpoint whose names do not all map."""
    if re.match(r'^resnet\d+_v2$', model_name):
        why = ('the original\'s ResNet v2 layers differ from this project\'s (it normalises the '
               'first convolution\'s output and numbers its batch norms otherwise), so its ResNet '
               'v2 checkpoints do not load here: train afresh with another --train_dir')
    else:
        why = ('the original\'s checkpoints load for the --model they were written with among '
               '%s (CIFAR-10 ones with --num_classes=11): give that --model, or train afresh '
               'with another --train_dir' % MAPPED_MODELS)
    return ('checkpoint %s was written by the original tf_cnn_benchmarks.py (names such as %s), '
            'and %d of --model=%s\'s %d variables have no counterpart in it (e.g. %s): %s'
            % (path, EXAMPLE, len(missing), model_name, total, missing[0], why))


def shape_hint() -> str:
    """What a shape mismatch of an original checkpoint most likely means (in parentheses)."""
    return ('(the original\'s CIFAR-10 models have 11 classes: give --num_classes=11; else '
            'another --model, --image_size or dataset?)')


# Models whose names map but whose layers compute otherwise than the original's.
_DIFFERENCES = [
    (re.compile(r'^trivial$'),
     'the original\'s 1-unit layer has a ReLU, this project\'s is linear (models/trivial_model'
     '.py): the outputs differ wherever that unit is negative'),
    (re.compile(r'^resnet(20|32|44|56|110)$'),
     'the original\'s CIFAR-10 ResNet v1 has no ReLU after its first convolution, this '
     'project\'s has (He et al. 2016): the restored network computes another function'),
]


def difference(model_name: str) -> str | None:
    """How --model differs from the original's model of that name, when its checkpoints map
    but compute otherwise here; None when they compute the same."""
    for pattern, text in _DIFFERENCES:
        if pattern.match(model_name):
            return text
    return None


# --- The layout of the dense layer after a flatten.

def flattened_rows(graph) -> dict:
    """{checkpoint name: (height, width, channels)} of the dense kernels whose rows are a
    flattened [height, width, channels] tensor (models/convnet_builder.py records them)."""
    return dict(graph.get_collection(convnet_builder.FLATTENED_ROWS))


def _graph_nodes(path: str):
    """The nodes of the original's graph beside checkpoint `path` (its model.ckpt-N.meta, else
    the train_dir's graph.pbtxt), or None when neither is there or readable."""
    meta = path + '.meta'
    pbtxt = os.path.join(os.path.dirname(path), 'graph.pbtxt')
    try:
        if file_systems.exists(meta):
            with file_systems.open_file(meta, 'rb') as f:
                return meta_graph_pb2.MetaGraphDef.FromString(f.read()).graph_def.node
        if file_systems.exists(pbtxt):
            with file_systems.open_file(pbtxt) as f:
                return text_format.Parse(f.read(), graph_pb2.GraphDef()).node
    except (OSError, ValueError, text_format.ParseError):
        return None
    return None


def written_layout(path: str) -> str | None:
    """'NCHW' or 'NHWC': the layout the original ran in when it wrote checkpoint `path`, from
    its convolutions and pools (or, in a model without them, from its tower's transpose of the
    images to NCHW); None when its graph is not beside the checkpoint."""
    nodes = _graph_nodes(path)
    if nodes is None:
        return None
    formats = {n.attr['data_format'].s.decode() for n in nodes
               if n.op in _LAYOUT_OPS and 'data_format' in n.attr}
    if formats:
        return 'NCHW' if 'NCHW' in formats else 'NHWC'
    nchw = any(n.op == 'Transpose' and _IMAGES_TRANSPOSE.match(n.name) for n in nodes)
    return 'NCHW' if nchw else 'NHWC'


def rows_to_reorder(graph, path: str, names) -> dict:
    """{name: (height, width, channels)} of the variables among `names` (a dense kernel after a
    flatten, and its optimizer slots) whose rows the original wrote in NCHW order; one line
    says what was done, or a warning when the layout cannot be told."""
    rows = flattened_rows(graph)
    if not rows:
        return {}
    layout = written_layout(path)
    if layout is None:
        cnn_util.warn('checkpoint %s was written by the original tf_cnn_benchmarks.py, and its '
                      'graph (%s.meta or graph.pbtxt) is not beside it: the rows of %s are taken '
                      'in NHWC order; if the original ran with --data_format=NCHW (its GPU '
                      'default) they are in another order and that layer computes nonsense; copy '
                      'the .meta file with the checkpoint'
                      % (path, os.path.basename(path), ', '.join(sorted(rows))))
        return {}
    if layout == 'NHWC':
        return {}
    chosen = {n: hwc for kernel, hwc in rows.items() for n in names
              if n == kernel or n.startswith(kernel + '/')}
    cnn_util.log_fn('Checkpoint %s was written in NCHW: the rows of %s (and its optimizer '
                    'slots) reordered from channels-first to this project\'s NHWC flatten'
                    % (path, ', '.join(sorted(rows))))
    return chosen


def nchw_rows_to_nhwc(value: np.ndarray, hwc) -> np.ndarray:
    """A dense kernel [C*H*W, out] whose rows are a flattened NCHW tensor, as the kernel
    [H*W*C, out] of the same function on the NHWC flatten."""
    height, width, channels = hwc
    out = value.shape[1]
    return value.reshape(channels, height, width, out).transpose(1, 2, 0, 3).reshape(-1, out)
