"""Everything that builds ops of a run's step, in one place for training, forward-only runs,
evaluation and summaries: the typed handles (graph_info.py), the one tower loop for training,
evaluation and summaries (tower_loop.py), one tower's forward pass, loss and gradients
(tower.py), the train op (train_op.py), the count of images seen that epoch-based schedules use
(images_seen.py), learning rates and optimizers (learning_rate.py), the precision choices
(precision.py; the header's precision block: precision_block.py), the measured graph choices of
a training step (graph_choices.py: 1x1 convolutions as MatMuls, ReLUs and residual adds as XLA
clusters or in float32, where the per-host probe measures them faster; memory_probe.py times
the memory-bound forms; choice_lines.py holds the decision and its header lines and table),
weight decay inside the updates (fused_decay.py), the whole training or forward-only step
(builder.py), the evaluation's graph (eval_graph.py) and a frozen
forward-only graph (frozen.py).

Below the lifecycle (which runs these graphs); above the input pipeline, the variable managers
and the models, which it assembles, and the runtime settings and hardware facts it reads.
"""
