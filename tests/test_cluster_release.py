"""Worker 0's release of the other workers at the end of a run (cluster/coordination.py): it
stays up after the last release token is taken until the other workers have exited, so that a
worker whose dequeue answer is still on its way does not fail before its done token (on a busy
host the ps then stopped with 'went away before reporting done')."""

import types

import pytest

from tf_cnn_benchmarks.cluster import coordination, topology

import helpers

CLUSTER = dict(job_name='worker', task_index=0, ps_hosts=['127.0.0.1:2221'],
               worker_hosts=['127.0.0.1:2222', '127.0.0.1:2223', '127.0.0.1:2224'])


COORD = types.SimpleNamespace(release_size=0)


class _Session:
    def run(self, fetch):
        return 0  # every release token taken


def _hook(variable_update):
    p = helpers.tiny_params(variable_update=variable_update, **CLUSTER)
    server = types.SimpleNamespace(cluster=topology.Cluster(p))
    return coordination.ClusterStatsHook(server)


def test_worker_0_waits_for_the_other_workers_to_exit(monkeypatch):
    alive = {'127.0.0.1:2223': 3, '127.0.0.1:2224': 5}  # polls each stays reachable
    asked = []

    def can_connect(address, timeout_secs):
        asked.append(address)
        assert address in alive, 'worker 0 or a ps probed: %s' % address
        alive[address] -= 1
        return alive[address] >= 0

    monkeypatch.setattr(coordination, 'can_connect', can_connect)
    monkeypatch.setattr(coordination.time, 'sleep', lambda secs: None)
    _hook('parameter_server')._wait_released(_Session(), COORD)
    assert asked.count('127.0.0.1:2223') == 4 and asked.count('127.0.0.1:2224') == 6


def test_the_wait_ends_after_the_grace_time(monkeypatch):
    clock = iter(range(0, 1000, 1))
    monkeypatch.setattr(coordination.time, 'monotonic', lambda: float(next(clock)))
    monkeypatch.setattr(coordination.time, 'sleep', lambda secs: None)
    monkeypatch.setattr(coordination, 'can_connect', lambda address, timeout_secs: True)
    _hook('parameter_server')._wait_released(_Session(), COORD)
    assert next(clock) <= 2 * coordination.RELEASE_GRACE_SECS + 4  # ended, not polling on


def test_workers_that_serve_each_other_are_not_waited_for(monkeypatch):
    # They wait for worker 0's done token themselves: waiting for their exit would stall.
    monkeypatch.setattr(coordination, 'can_connect',
                        lambda address, timeout_secs: pytest.fail('probed ' + address))
    monkeypatch.setattr(coordination.time, 'sleep', lambda secs: None)
    _hook('distributed_all_reduce')._wait_released(_Session(), COORD)
