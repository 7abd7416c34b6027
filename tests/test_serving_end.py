"""The end of a serving task (cluster/server.py): a signal after every task it serves reported
done is no error.

A user's trial: `timeout -s TERM 12 tf_cnn_cluster --num_workers=2 -- ...`: the workers stopped
cleanly, the ps said `worker 1 ... is done (0 to go)`, then `[ps0] error: interrupted by
SIGTERM` (exit 143): tf_cnn_cluster stops its ps tasks once the workers exited, which is what
the ps waits for before it exits by itself. In process: no server, a stand-in cluster.
"""

from __future__ import annotations

import signal

import pytest

from tf_cnn_benchmarks.cluster import server
from tf_cnn_benchmarks.lifecycle import signals


class _Cluster:
    """The part of topology.Cluster a serving task's end reads."""

    job_name, task_index = 'ps', 0

    def describe(self, job: str, index: int) -> str:
        return '%s %d (localhost:2222)' % (job, index)

    def address(self, job: str, index: int) -> str:
        return 'localhost:%d' % (2223 + index)


def _end(monkeypatch, signum=None) -> dict:
    """`_end_serving` of a ps whose two workers are still up (they never close their ports
    here), with `signum` raised at its first look at them, under the command's own handlers
    (cli.py's signals.CommandSignals: outside a run's, a signal ends the command with an
    `error: interrupted by ...` line)."""
    looks = []

    def can_connect(address, timeout):
        looks.append(address)
        if signum is not None and len(looks) == 1:
            signal.raise_signal(signum)
        return True

    monkeypatch.setattr(server, 'can_connect', can_connect)
    monkeypatch.setattr(server, 'EXIT_GRACE_SECS', 0.3)
    monkeypatch.setattr(server.time, 'sleep', lambda secs: None)
    task = server.TaskServer(_Cluster())
    with signals.CommandSignals():
        return task._end_serving([('worker', 0), ('worker', 1)], server.time.monotonic())


@pytest.mark.parametrize('signum', [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_after_every_task_reported_done_is_said_without_error(monkeypatch, capsys,
                                                                       signum):
    result = _end(monkeypatch, signum)
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and out[0].startswith('ps 0 (localhost:2222): every task is done after ')
    # The line names the signal when its handler ran before the ps's last look; on a loaded
    # host (a full suite under -n 2) the look may come first: the plain end, no error either.
    assert out[0].endswith(('s; %s came as they exited, with nothing left to serve; exiting'
                            % signal.Signals(signum).name, ' s; exiting'))
    assert 'stopped_by_signal' not in result and result['role'] == 'ps'
    assert signals.exit_status(result) in (None, 0)  # the command's exit status: 0


def test_without_a_signal_the_end_is_as_before(monkeypatch, capsys):
    result = _end(monkeypatch)
    line = capsys.readouterr().out.splitlines()[-1]
    assert line.startswith('ps 0 (localhost:2222): every task is done after ')
    assert line.endswith(' s; exiting') and 'came' not in line
    assert set(result) == {'role', 'task_index', 'served_secs'}
