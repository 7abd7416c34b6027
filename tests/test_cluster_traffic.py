"""The per-step network estimate of a cluster worker (the `Network per step` line,
variable_managers/distributed.py traffic_bytes): a forward-only worker sends no gradients (it
said the model's size, 17.06 MB for trivial)."""

from __future__ import annotations

import pytest
from test_distributed import _cluster_params

from tf_cnn_benchmarks import benchmark_cnn
from tf_cnn_benchmarks.variable_managers import distributed


@pytest.mark.parametrize('mode, forward_only, sent, received', [
    ('parameter_server', False, 1, 1),          # gradients out, updated variables in
    ('parameter_server', True, 0, 1),           # only the variables' reads, each step
    ('distributed_replicated', False, 1, 1),
    ('distributed_replicated', True, 0, 0),     # the towers' own copies: nothing each step
    ('collective_all_reduce', True, 0, 0),      # no gradients to all-reduce
])
def test_a_forward_only_workers_traffic_estimate_sends_no_gradients(mode, forward_only, sent,
                                                                    received):
    """In models: the estimate per step and worker (the `Network per step` line) said a
    forward-only worker sent the model's size in gradients (17.06 MB for trivial)."""
    extra = dict(ps_hosts=[]) if mode == 'collective_all_reduce' else {}
    p = _cluster_params(variable_update=mode, forward_only=forward_only, **extra)
    info = benchmark_cnn.BenchmarkCNN(p, gpus=0).build_graph()
    with info.graph.as_default():
        size = distributed.model_bytes(info.mgr.trainable_variables(0))
        assert size > 0
        assert info.mgr.traffic_bytes() == {'sent': sent * size, 'received': received * size}
