"""Clusters of ps and worker tasks on TensorFlow's gRPC runtime.

topology.py (the cluster's shape), server.py (this task's server, sessions, start-up, serve loop,
initialisation), coordination.py (queues between tasks, a worker's hooks), figures.py (a
worker's `total images/sec` as the original meant it, its own figure, the chief's cluster
total), resolvers.py (where a task's cluster comes from), slurm_nodes.py (a Slurm step's nodes
and ranks in Slurm's order),
host_names.py (whether the cluster's host names resolve, looked up once at start-up),
run_flags.py (the run-defining flags every task shares, checked at start-up), flag_check.py
(where a worker writes and reads them at start-up, worker 0's lobby among them). The cluster's
flag rules are in params/cluster_rules.py, beside the other flag rules; the cluster variable
managers in variable_managers/distributed.py (the root variable_mgr.py chooses them).
"""
