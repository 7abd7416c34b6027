"""The background stager: a Python thread runs the input pipeline's puts ahead of the steps.

A real-data step reads one batch per device from the staging areas (the gets are part of the
model's graph); someone has to put the next batches in. Running the puts inside the step's
session.run ties the two together: the step ends only when both the model and the next batch's
preprocessing are done, and no preprocessing runs between two session.run calls (the loop's
Python bookkeeping, the executor's start-up). The stager runs the puts on their own thread
instead, one session.run per wave (one put per device), back to back, so the input pipeline
works whenever there is room:

    main thread                          stager thread
    stager.take()  (waits for a wave)    run(puts) -> ready += 1   (waits while `capacity`
    session.run(step: gets + model)      run(puts) -> ready += 1    waves are staged, not taken)

Back-pressure is in Python, not in TensorFlow: at most `capacity` waves are staged and not yet
taken, and the main thread only starts a step once its wave is staged. So no put
and no get ever blocks inside TensorFlow (a blocked StagingArea op would hold one of the few
inter-op threads, and a get waiting on a stager that failed would never return).

Counting: every `take()` matches exactly one wave put by the stager or by the pipeline's warm-up
(`already_staged`); nothing is lost or counted twice. After `stop()`, the batches staged beyond
the last step are still in the areas; the caller drains them (`pipeline.drain_ops`).

Errors: a put that fails (a label out of range, an undecodable image, a corrupt record) stops
the stager; the next `take()`, or `stop()`, raises that same tf.errors.OpError on the main
thread, where `preprocessing.data_errors` turns it into the usual one-line DataError.
"""

from __future__ import annotations

import threading
import time

#: Seconds between checks of the stop flag and of the stager's health while waiting.
POLL_SECS = 0.05
#: Seconds `stop()` waits for a put in progress before giving up on the thread.
STOP_TIMEOUT_SECS = 120.0


class StagerError(RuntimeError):
    """The stager thread ended without an error of its own while a step waited for input."""


class BackgroundStager:
    """Runs `put_ops` on a daemon thread, keeping up to `capacity` waves staged for the steps.

    Args:
      sess: the session (tf.compat.v1.Session or a subclass); its run is thread-safe.
      put_ops: the ops staging one batch per device (one wave), e.g. pipeline.step_ops.
      capacity: waves staged and not yet taken, at most (the warm-up's included); one more
        than the warm-up fill keeps one wave in preparation while the step reads another.
      already_staged: waves in the staging areas before `start()` (the pipeline's warm-up
        fill, --batch_group_size).

    Raises:
      ValueError: capacity <= already_staged (the stager could never put a wave).

    Attributes:
      staged: waves put by this stager so far.
      taken: waves taken by steps so far.
    """

    def __init__(self, sess, put_ops, *, capacity: int = 2, already_staged: int = 0):
        if capacity <= already_staged:
            raise ValueError('capacity must exceed the waves already staged (%d). Received: '
                             'capacity=%r' % (already_staged, capacity))
        self._run = sess.make_callable(list(put_ops))
        self._free = threading.Semaphore(capacity - already_staged)
        self._ready = threading.Semaphore(already_staged)
        self._stop = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._loop, name='input-stager', daemon=True)
        self.staged = 0
        self.taken = 0

    def start(self) -> BackgroundStager:
        """Starts the thread; returns self."""
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.is_set():
            if not self._free.acquire(timeout=POLL_SECS):
                continue
            if self._stop.is_set():
                return
            try:
                self._run()
            except BaseException as e:  # noqa: BLE001 - handed to the main thread
                self._error = e
                return
            self.staged += 1
            self._ready.release()

    def take(self) -> None:
        """Waits until a wave is staged for the coming step and counts it as taken.

        Raises:
          tf.errors.OpError: the put of a wave failed on the stager thread (the same error).
          StagerError: the thread ended without an error (stopped, or never started).
        """
        while not self._ready.acquire(timeout=POLL_SECS):
            if self._error is not None:
                raise self._error
            if not self._thread.is_alive():
                if self._ready.acquire(blocking=False):
                    break  # staged just before the thread ended
                raise StagerError('the input stager is not running; no batch can come')
        self.taken += 1
        self._free.release()

    def stop(self, *, raise_error: bool = True) -> None:
        """Stops the thread after the put in progress, if any.

        Args:
          raise_error: raise the error of a failed put (a batch staged ahead of the last step
            failed: the data have a problem even though no step read it). False when another
            error is already on its way.

        Raises:
          tf.errors.OpError: as for `take`, when raise_error.
        """
        self._stop.set()
        if self._thread.is_alive():
            deadline = time.monotonic() + STOP_TIMEOUT_SECS
            while self._thread.is_alive() and time.monotonic() < deadline:
                self._thread.join(POLL_SECS)
        if raise_error and self._error is not None:
            raise self._error

    def __enter__(self) -> BackgroundStager:
        return self.start()

    def __exit__(self, exc_type, exc, tb) -> None:
        self.stop(raise_error=exc_type is None)
