"""--forward_only --freeze_when_forward_only: the run's graph with its variables as constants.

`freeze(sess, info)` turns a built forward-only graph (graph.graph_info.GraphInfo), whose variables
hold their restored or initial values in `sess`, into a new graph where every variable is a
constant (tf.compat.v1.graph_util.convert_variables_to_constants), except its local variables
(the input's state, not weights), keeping the ops the timed loop
and the hooks run: the step op, loss, accuracies, learning rate and the input pipeline's ops.
"""

from __future__ import annotations

import tensorflow as tf

tf1 = tf.compat.v1


def freeze(sess, info, global_step: int):
    """Returns (frozen GraphInfo, number of graph nodes).

    Args:
      sess: a session of `info.graph` with the variables initialised or restored.
      info: the forward-only graph.graph_info.GraphInfo.
      global_step: the step the weights come from (a constant of the frozen graph).

    The frozen GraphInfo has no variable manager (mgr=None); its init ops initialise the local
    variables, which stay variables (the synthetic input's images and labels), and must run
    before its first step; its pipeline is `info.pipeline.imported_into(graph)`.
    """
    tensors = [info.loss, info.top_1, info.top_5, info.learning_rate]
    # Local variables are the step's state, not weights: the synthetic images above all. As
    # constants they would let Grappler fold the whole forward pass into one constant (the
    # trivial model then "ran" 123,878 images/sec in bfloat16 against 5,005 unfrozen).
    local = info.graph.get_collection(tf1.GraphKeys.LOCAL_VARIABLES)
    initializers = [v.initializer.name for v in local]
    keep = ([info.train_op.name] + [t.op.name for t in tensors] + info.pipeline.op_names()
            + initializers)
    frozen = tf1.graph_util.convert_variables_to_constants(
        sess, info.graph.as_graph_def(), keep,
        variable_names_blacklist=[v.op.name for v in local])
    graph = tf.Graph()
    with graph.as_default():
        tf1.import_graph_def(frozen, name='')
        step = tf.constant(global_step, tf.int64, name='frozen_global_step')
        loss, top_1, top_5, lr = [graph.get_tensor_by_name(t.name) for t in tensors]
        frozen_info = info._replace(
            graph=graph, train_op=graph.get_operation_by_name(info.train_op.name), loss=loss,
            top_1=top_1, top_5=top_5, learning_rate=lr, global_step=step, mgr=None,
            init_ops=[graph.get_operation_by_name(name) for name in initializers],
            pipeline=info.pipeline.imported_into(graph), loss_parts=None)
    return frozen_info, len(frozen.node)
