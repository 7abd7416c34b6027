"""The whole training (or forward-only) step of a run, built into a new graph:

    input pipeline --Batch per device--> build_towers (forward, loss)
      --> the towers' mean loss and accuracy, the learning rate (of the images seen)
      --> build_train_op (gradients, aggregation, apply; training only), then the images
          seen counted (graph/images_seen.py) --> GraphInfo
"""

from __future__ import annotations

import tensorflow as tf

from .. import preprocessing, variable_mgr
from . import images_seen, learning_rate, tower_loop, train_op
from .graph_info import GraphInfo

tf1 = tf.compat.v1


def build_graph(plan, model, dataset, *, cluster=None, pipeline_factory=None) -> GraphInfo:
    """Builds the step of `plan` into a new graph.

    Args:
      plan: the run's run_plan.RunPlan.
      model: the run's CNNModel.
      dataset: the run's input_data.dataset_info.Dataset.
      cluster: the cluster.topology.Cluster of a cluster task, else None: the variable
        manager is this task's (variable_mgr.make_variable_mgr, made inside the new graph
        after the input is built), and the towers' mean loss, accuracy and the learning rate
        are computed on its local CPU (on one host: the parameter device).
      pipeline_factory: (plan, dataset, train=bool) -> preprocessing.InputPipeline; default
        preprocessing.pipeline_for (a seam for tests and tools).

    Returns:
      GraphInfo.
    """
    p = plan.params
    pipeline_factory = pipeline_factory or preprocessing.pipeline_for
    graph = tf.Graph()
    with graph.as_default():
        tf1.set_random_seed(p.tf_random_seed)
        with tf1.device(plan.param_device):
            global_step = tf1.train.get_or_create_global_step()
            seen = images_seen.make_variable() if plan.training else None
        pipeline = pipeline_factory(plan, dataset, train=plan.training)
        batches = pipeline.build(list(plan.devices))
        mgr = variable_mgr.make_variable_mgr(p, plan.devices, plan.param_device,
                                             cluster=cluster)
        outputs = tower_loop.build_towers(plan, model, batches, mgr, phase_train=plan.training)
        with tf1.device(cluster.local_cpu if cluster else plan.param_device):
            # --loss_type_to_report: TowerOutput's total_loss or base_loss.
            loss = tf.add_n([getattr(o, p.loss_type_to_report) for o in outputs]) / len(outputs)
            loss_parts = tf.stack([tf.add_n([o.base_loss for o in outputs]),
                                   tf.add_n([o.decay_loss for o in outputs])]) / len(outputs)
            top_1 = tf.add_n([o.top_1 for o in outputs]) / len(outputs)
            top_5 = tf.add_n([o.top_5 for o in outputs]) / len(outputs)
            lr = learning_rate.get_learning_rate(
                p, global_step, model=model, examples_per_epoch=plan.examples_per_epoch,
                images_per_step=plan.images_per_global_step, images_seen=seen)
            # Only the summaries read it (lifecycle/wiring.py adds their hook on these terms).
            summarised = p.train_dir and p.summary_verbosity >= 1 and plan.is_chief
            applied_lr = (learning_rate.applied_learning_rate(
                p, global_step, model=model, examples_per_epoch=plan.examples_per_epoch,
                images_per_step=plan.images_per_global_step, images_seen=seen)
                if plan.training and summarised else None)
        if plan.training:
            step_op = train_op.build_train_op(plan, mgr, outputs, global_step, lr,
                                              images_seen=seen)
        else:
            # The manager's step ops too: with --staged_vars every step reads the values the
            # step before put, so a forward-only step must put the next ones (or the second
            # step waits for ever on an empty staging area).
            step_op = tf.group(*[o.logits for o in outputs], *mgr.step_ops())
        init_ops = [tf1.global_variables_initializer(), tf1.local_variables_initializer()]
    return GraphInfo(graph, step_op, loss, lr, global_step, top_1, top_5, pipeline, mgr,
                     init_ops, loss_parts,
                     images_seen.ImagesSeen(seen, plan.images_per_global_step)
                     if seen is not None else None, applied_lr)
