"""The count of training images the steps so far trained on: the variable `images_seen`.

Every training step counts, as it advances the global step, also one whose update automatic
loss scaling skipped (non-finite gradients: no weight changed): the count is the images the
steps read, as the original's epochs, which came from the global step, counted them. The
images whose updates were applied are this count minus the skipped steps' (the `loss scale:`
line and result['loss_scale'] say how many steps were skipped).

Epoch-based schedules count epochs from it (graph/learning_rate.py), not from the global step
times the batch: a run resumed with another --batch_size, --num_gpus or number of workers
(another global batch) goes on at the epoch its checkpoint reached (issue 33.3). Each
training step adds the images one global step applies (RunPlan.images_per_global_step: the
global batch; one worker's batch in an asynchronous cluster, where each worker's update is a
global step) after its update, once per global step: in a synchronous ps cluster only the
chief's train op counts, as only its update advances the shared global step
(VariableMgr.advances_global_step); it is saved with the checkpoint as 'images_seen'.

A checkpoint written before the count existed has no 'images_seen': the restore then sets it to
the restored global step x this run's images per global step (what the schedule assumed
before), and one line says so (lifecycle/checkpoints.py).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import tensorflow as tf

tf1 = tf.compat.v1

CHECKPOINT_NAME = 'images_seen'


class ImagesSeen(NamedTuple):
    """The count of a training graph.

    Attributes:
      variable: the int64 scalar variable 'images_seen' (non-trainable, global: saved).
      per_step: images one global step adds to it (RunPlan.images_per_global_step).
    """

    variable: Any
    per_step: int


def make_variable():
    """The int64 scalar variable 'images_seen', 0 at initialisation, in the current device scope
    (the global step's)."""
    return tf1.get_variable(CHECKPOINT_NAME, shape=[], dtype=tf.int64,
                            initializer=tf1.zeros_initializer(), trainable=False,
                            collections=[tf1.GraphKeys.GLOBAL_VARIABLES])
