"""Variable management: where each tower's variables live and how gradients become updates.

The root variable_mgr.py is the entry (the --variable_update tables and the one factory for a
run on one host and a cluster task); this package holds the rest: the `VariableMgr` base and
the helpers every manager shares (base.py), the one-host managers parameter_server,
replicated and independent (one_host.py), the cluster managers (distributed.py), the
all-reduce algorithms (allreduce.py), gradient packing and ring and group plans
(allreduce_plans.py), the `--all_reduce_spec` grammar (allreduce_spec.py: pure Python, in
the params layer, so the flag is checked before TensorFlow loads), the float16 compaction and
one-step deferral around the all-reduce (grad_transfer.py) and when they act
(transfer_rules.py: pure Python, read by the flag check too).

This file imports nothing, so importing allreduce_spec loads no TensorFlow.
"""
