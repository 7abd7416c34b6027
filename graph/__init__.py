"""The graph of a run, built in one place for training, forward-only runs, evaluation and
summaries: the typed handles (graph_info.py), the towers (towers.py: the one tower loop), the
train op (train_op.py), the whole training or forward-only step (builder.py) and the
evaluation's graph (eval_graph.py).

Below the lifecycle (which runs these graphs) and the cluster (which supplies its variable
manager); above the input pipeline, the tower, the variable managers, the models and the speed
settings, which it assembles.
"""
