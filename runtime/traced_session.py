"""Traced steps and the session of cluster runs.

`trace_options()` makes the RunOptions of every traced step (the total block's traced warm-up
step, the --print_step_breakdown steps, the --trace_file/--tfprof_file step): FULL_TRACE,
since SOFTWARE_TRACE returns no step stats for gRPC sessions in TF 2.21.

`TracedSession` is a tf.compat.v1.Session with a deadline on every run (cluster runs), failed
cluster runs turned into the caller's error (cnn_util.ClusterError naming the unreachable
peers), and a `close()` that never hangs (closing a session whose ps died blocks forever in TF
2.21; it is given a few seconds).
"""

from __future__ import annotations

import threading

import tensorflow as tf

from .. import cnn_util

tf1 = tf.compat.v1

#: Seconds a close may take; after a cluster error (a peer likely gone), FAILED_....
CLOSE_TIMEOUT_SECS = 10.0
FAILED_CLOSE_TIMEOUT_SECS = 2.0
_CLUSTER_ERRORS = (tf.errors.UnavailableError, tf.errors.DeadlineExceededError,
                   tf.errors.AbortedError, tf.errors.CancelledError,
                   # a closed coordination queue: the chief stopped (cluster/coordination.py)
                   tf.errors.OutOfRangeError)


def trace_options(partition_graphs: bool = False, timeout_ms: int = 0,
                  base: tf1.RunOptions | None = None) -> tf1.RunOptions:
    """RunOptions with a full trace (and the partition graphs, and a deadline, when asked),
    merged over `base` when given."""
    options = tf1.RunOptions()
    if base is not None:
        options.CopyFrom(base)
    options.trace_level = tf1.RunOptions.FULL_TRACE
    if partition_graphs:
        options.output_partition_graphs = True
    if timeout_ms and not options.timeout_in_ms:
        options.timeout_in_ms = timeout_ms
    return options


def undecodable_error(error: UnicodeDecodeError) -> tf.errors.OpError:
    """The error of a run whose status message TensorFlow could not decode as UTF-8 (a gRPC
    peer's message with stray bytes: its binding raises UnicodeDecodeError, the status code
    lost), as an UnavailableError (a transport-level failure, handled as the cluster's other
    lost peers are) whose message is the bytes decoded with U+FFFD for the stray ones: its
    text (a dropped session's 'Session handle is not found', say) still reads."""
    raw = error.object if isinstance(error.object, bytes) else bytes(error.object)
    text = raw.decode('utf-8', 'replace').strip()  # its lines kept: cnn_util.error_summary
    return tf.errors.UnavailableError(None, None, text or 'a TensorFlow error whose message '
                                      'is not UTF-8')


class TracedSession(tf1.Session):
    """A tf.compat.v1.Session with a per-run deadline, error translation and a bounded close
    (the session of cluster tasks).

    Args:
      target, graph, config: as for tf.compat.v1.Session.
      timeout_secs: deadline of every run (None: no deadline).
      error_hook: (tf.errors.OpError, session) -> Exception to raise instead, for cluster
        errors (Unavailable, DeadlineExceeded, Aborted, Cancelled, and OutOfRange: a queue
        the chief closed); None re-raises the error. A cnn_util.StopRequested it returns
        (the run was told to stop) leaves the session usable.
    """

    def __init__(self, target='', graph=None, config=None, *, timeout_secs=None,
                 error_hook=None):
        super().__init__(target, graph=graph, config=config)
        self._timeout_ms = int(timeout_secs * 1000) if timeout_secs else 0
        self._error_hook = error_hook
        self._close_started = False
        self._failed = False  # a cluster error happened: a peer is likely gone
        self._reopen = (target, graph, config, timeout_secs)
        self._replacement = None  # the session every run goes to after `cancel_in_flight`

    def cancel_in_flight(self) -> None:
        """Cancels the runs in flight (a step waiting in a collective all-reduce that a peer
        will not join: cluster/coordination.py ClusterStopHook) by closing this TensorFlow
        session; every later `run` goes to a new one on the same target, graph and config
        (a cluster task's variables and queues live on its server: they remain). Callables
        made before are gone with the old session. The cancelled run raises CancelledError,
        which the error hook translates as any other."""
        target, graph, config, timeout_secs = self._reopen
        self._replacement = TracedSession(target, graph=graph, config=config,
                                          timeout_secs=timeout_secs, error_hook=self._error_hook)
        tf1.Session.close(self)

    def _options(self, options):
        if not self._timeout_ms:
            return options
        merged = tf1.RunOptions()
        if options is not None:
            merged.CopyFrom(options)
        if not merged.timeout_in_ms:
            merged.timeout_in_ms = self._timeout_ms
        return merged

    def _translate(self, error):
        if self._error_hook is None or not isinstance(error, _CLUSTER_ERRORS):
            return None
        replacement = self._error_hook(error, self)
        if replacement is not None and not isinstance(replacement, cnn_util.StopRequested):
            self._failed = True
        return replacement

    def run_unchecked(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """session.run with the deadline but without error translation."""
        if self._replacement is not None:
            return self._replacement.run_unchecked(fetches, feed_dict, options, run_metadata)
        return super().run(fetches, feed_dict, self._options(options), run_metadata)

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        try:
            try:
                return self.run_unchecked(fetches, feed_dict, options, run_metadata)
            except UnicodeDecodeError as e:
                raise undecodable_error(e) from None
        except tf.errors.OpError as e:
            replacement = self._translate(e)
            if replacement is None:
                raise
            raise replacement from e

    def make_callable(self, fetches, feed_list=None, accept_options=False):
        inner = super().make_callable(fetches, feed_list, accept_options=True)

        def call(*args, options=None, run_metadata=None):
            try:
                try:
                    return inner(*args, options=self._options(options),
                                 run_metadata=run_metadata)
                except UnicodeDecodeError as e:
                    raise undecodable_error(e) from None
            except tf.errors.OpError as e:
                replacement = self._translate(e)
                if replacement is None:
                    raise
                raise replacement from e
        return call

    def close(self):
        """Closes in a helper thread, waiting at most CLOSE_TIMEOUT_SECS (a session whose peer
        died cannot be closed in TF 2.21: the close blocks forever); after a cluster error
        FAILED_CLOSE_TIMEOUT_SECS, and a close left open then says nothing (the error line
        already named the peer that is gone)."""
        if self._close_started:
            return
        self._close_started = True
        if self._replacement is not None:
            self._replacement.close()
        errors = []

        def close():
            try:
                tf1.Session.close(self)
            except Exception as e:  # reported below, in the caller's thread
                errors.append(e)
        thread = threading.Thread(target=close, daemon=True, name='session-close')
        thread.start()
        timeout = FAILED_CLOSE_TIMEOUT_SECS if self._failed else CLOSE_TIMEOUT_SECS
        thread.join(timeout)
        if thread.is_alive() and not self._failed:
            cnn_util.warn('the session did not close within %g s (a peer task is gone); '
                          'leaving it open' % timeout)
        elif errors:
            raise errors[0]
