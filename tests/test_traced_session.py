"""runtime/traced_session.py: `cancel_in_flight` ends a run that waits for a peer that will not
come (a collective_all_reduce worker's step after its chief stopped: tests/test_cluster_stop.py
runs that on loopback) and sends every later run to a new session."""

from __future__ import annotations

import threading

import pytest
import tensorflow as tf

from tf_cnn_benchmarks import cnn_util
from tf_cnn_benchmarks.runtime import traced_session

tf1 = tf.compat.v1


def test_cancel_in_flight_ends_a_waiting_run_and_later_runs_go_to_a_new_session():
    graph = tf.Graph()
    with graph.as_default():
        queue = tf1.FIFOQueue(1, [tf.int32], shapes=[[]])
        take = queue.dequeue()  # nothing is ever enqueued: waits forever
        seven = tf.constant(7)
    sess = traced_session.TracedSession(graph=graph)
    raised = []

    def wait():
        try:
            sess.run(take)
        except tf.errors.OpError as e:
            raised.append(e)
    thread = threading.Thread(target=wait, daemon=True)
    thread.start()
    thread.join(0.5)
    assert thread.is_alive() and not raised  # it waits
    sess.cancel_in_flight()
    thread.join(60)  # a bound for a stuck thread, not a measured time
    assert not thread.is_alive() and isinstance(raised[0], tf.errors.CancelledError)
    assert sess.run(seven) == 7 and sess.run_unchecked(seven) == 7  # the new session
    sess.close()


def test_a_status_message_that_is_not_utf8_is_the_cluster_error_not_a_traceback(monkeypatch):
    """A full-suite run saw TensorFlow's binding raise UnicodeDecodeError (byte 0xf2 of a
    peer's status message) out of a cluster task's run: a traceback where the error hook
    would have named the lost peer. It reaches the hook as an UnavailableError now."""
    raw = (b'From /job:ps/replica:0/task:0:\nSession handle is not found: \xf2\x80 from '
           b'/job:ps/replica:0/task:0')

    def garbled(*args, **kwargs):
        raise UnicodeDecodeError('utf-8', raw, 29, 30, 'invalid continuation byte')
    seen = []

    def hook(error, session):
        seen.append(error)
        return RuntimeError('translated')
    graph = tf.Graph()
    with graph.as_default():
        seven = tf.constant(7)
    sess = traced_session.TracedSession(graph=graph, error_hook=hook)
    monkeypatch.setattr(tf1.Session, 'run', garbled)
    try:
        with pytest.raises(RuntimeError, match='^translated$'):
            sess.run(seven)
    finally:
        monkeypatch.undo()
        sess.close()
    assert isinstance(seen[0], tf.errors.UnavailableError)
    # Its lines kept: the one-line summary (and the dropped-session retry) read the second.
    assert cnn_util.error_summary(seen[0]) == (
        'Session handle is not found: \ufffd from /job:ps/replica:0/task:0')
