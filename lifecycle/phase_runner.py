"""The one caller of the hooks' phases (lifecycle/run_hooks.py names them and their order).

    runner = PhaseRunner(hooks, plan)
    restored = runner.initialize(sess, info, init_variables, post_init)  # after_initialize
    result = runner.run(sess, info, timed_loop, make_result)  # begin, loop, finish or abort

`initialize` and `run` call the phases around a run; the timed loop
(lifecycle/training_loop.py) runs the steps and asks the runner for the phases between them
(`run_step`, `before_timed`, `after_step`, `should_stop`, `after_timed`, `total_figure`,
`total_lines`). The
evaluation's end calls `finish` (lifecycle/eval_runner.py). Nothing else iterates the hooks.

Each phase goes to the hooks whose class (or the hook object itself) defines it, in the hooks'
order: a hook that leaves a phase to `RunHook`'s empty method is not called for it (the
base's methods do nothing, so this changes no result, and a timed step calls no empty method).

The outputs of a finished run are written independently: a hook with an `output` (the
checkpoint, the results JSON, the trace, the plot) that fails in after_loop, end or report
is noted and the other hooks go on (the database record and the results JSON are still
written when the checkpoint cannot be); once every phase has run, `OutputsNotWritten` names
what was not written, why and the fix, and what was. A hook whose output fails during
the timed steps (a periodic checkpoint save: lifecycle/checkpoints.py) stops the run after
that step instead (its `should_stop`): the total block and the reports follow as after a
signal, and its `StoppedByOutput` from `end` makes the line begin with what stopped the run.
A non-finite loss that stopped the loop (its LoopResult's `error`: one host's training run,
training_loop.LoopSpec.stop_on_nonfinite) takes the same way: the phases after the loop run
(each hook reads result['stopped_by_error']: no final checkpoint), then `run` raises that
error, its line unchanged (outputs that failed beside it follow it as 'Not written: ...').
"""

from __future__ import annotations

import errno
from typing import Callable

from .. import cnn_util
from . import run_hooks


class OutputsNotWritten(cnn_util.BenchmarkError):
    """A finished run one or more of whose outputs could not be written (the others were):
    one line, `not_written_message` (exit status 1)."""


class StoppedByOutput(cnn_util.BenchmarkError):
    """An output that failed during the timed steps and so stopped the run after that step (a
    periodic checkpoint save): raised by its hook's `end`, once the result says so. Its message
    names the failure; `not_written_message` adds the fix (`_fix`), `after` and what holds the
    timed steps' figures.

    Args:
      message: what failed ('the checkpoint of global step 20 could not be saved in /td: ...').
      after: how the run ended ('the run stopped after 10 timed steps; the latest checkpoint
        in /td is model.ckpt-10').
      steps: the timed steps run (whose figures the reports hold).
    """

    def __init__(self, message: str, after: str, steps: int):
        super().__init__(message)
        self.after = after
        self.steps = steps


def _fix(hook, error: BaseException) -> str:
    """'free space there, or give another --train_dir' for a full disk; for a file over the
    process's file-size limit (EFBIG, 'File too large': another --train_dir would not help)
    'raise the process's file-size limit (`ulimit -f`; now 10240000 bytes)'; else
    'give another --train_dir' (or a general advice for a hook without a flag)."""
    text = str(error)
    code = getattr(error, 'errno', None)
    if code == errno.EFBIG or 'File too large' in text:
        return 'raise the process\'s file-size limit (`ulimit -f`; now %s)' % file_size_limit()
    full = (code in (errno.ENOSPC, errno.EDQUOT)
            or 'No space left' in text or 'quota exceeded' in text.lower())
    flag = hook.output_flag
    place = 'give another %s' % flag if flag else 'choose another path'
    return 'free space there, or %s' % place if full else place


def file_size_limit() -> str:
    """This process's file-size limit (RLIMIT_FSIZE) in bytes: '10240000 bytes' (in bytes, as
    shells count `ulimit -f` in 512- or 1024-byte blocks), 'unlimited', or 'unknown'."""
    try:
        import resource
        soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    except (ImportError, OSError, ValueError):
        return 'unknown'
    if soft == resource.RLIM_INFINITY:
        return 'unlimited'
    return '%d bytes' % soft


def _reason(error: BaseException) -> str:
    if isinstance(error, OSError) and not isinstance(error, cnn_util.BenchmarkError):
        where = ' %s' % error.filename if error.filename else ''
        return 'cannot write%s: %s' % (where, error.strerror or error)
    return str(error)


def _part(hook, error: BaseException) -> str:
    """'the checkpoint (--train_dir): <why>; <fix>' of one output not written."""
    if hook.output_flag:
        return '%s (%s): %s; %s' % (hook.output, hook.output_flag, _reason(error),
                                    _fix(hook, error))
    return '%s: %s; %s' % (hook.output, _reason(error), _fix(hook, error))


def not_written_message(failed: list, written: list[str]) -> str:
    """The line of a finished run whose outputs `failed` ([(hook, error)]) could not be
    written: 'the run finished, but not all of its outputs were written. Not written: the
    checkpoint (--train_dir): <why>; free space there, or give another --train_dir. Written:
    the results JSON /bl/x.json, the record in the results database /r.sqlite (run 3).'

    When one of them stopped the run (`StoppedByOutput`), the line is that failure's first:
    'the checkpoint of global step 20 could not be saved in /td: No space left on device; free
    space there, or give another --train_dir. The run stopped after 10 timed steps; the latest
    checkpoint in /td is model.ckpt-10. The figures of its 10 timed steps were kept: the
    results JSON /bl/x.json, the record in the results database /r.sqlite (run 3).' (another
    output that failed too comes before the last sentence, as 'Not written: ...').
    """
    stops = [f for f in failed if isinstance(f[1], StoppedByOutput)]
    if stops:
        return _stopped_message(stops[0], [f for f in failed if f is not stops[0]], written)
    parts = [_part(hook, error) for hook, error in failed]
    return ('the run finished, but not all of its outputs were written. %s. %s'
            % ('. '.join('Not written: %s' % part for part in parts),
               'Written: %s.' % ', '.join(written) if written else 'Nothing else was written.'))


def _stopped_message(stop, others: list, written: list[str]) -> str:
    """`not_written_message` of a run that an output's failure stopped (`StoppedByOutput`)."""
    hook, error = stop
    steps = cnn_util.counted(error.steps, 'timed step')
    if not error.steps:
        kept = ('Nothing was timed: no images/sec; written: %s.' % ', '.join(written) if written
                else 'Nothing was timed: no images/sec, results JSON or database record.')
    elif written:
        kept = 'The figures of its %s were kept: %s.' % (steps, ', '.join(written))
    else:
        kept = ('The figures of its %s are in the total block above (no results JSON or '
                'database record was written).' % steps)
    after = error.after[:1].upper() + error.after[1:]
    return '%s; %s. %s. %s%s' % (error, _fix(hook, error), after,
                                 ''.join('Not written: %s. ' % _part(h, e) for h, e in others),
                                 kept)

def stopped_message(error: BaseException, failed: list, written: list[str]) -> str:
    """The line of a run an error stopped (a non-finite loss) one or more of whose outputs
    `failed` ([(hook, error)]) could not be written: the error's own text, then 'Not written:
    the results JSON (--benchmark_log_dir): cannot write ...; free space there, or give
    another --benchmark_log_dir. Written: the record in the results database /r.sqlite (run
    3).' ('Nothing else was written.' when nothing was)."""
    parts = ''.join(' Not written: %s.' % _part(hook, e) for hook, e in failed)
    return '%s%s %s' % (str(error).rstrip(), parts, 'Written: %s.' % ', '.join(written)
                        if written else 'Nothing else was written.')


#: The phases, in the order run_hooks.py lists them.
PHASES = ('after_initialize', 'begin', 'wants_trace', 'traced', 'before_timed', 'after_step',
          'should_stop', 'after_timed', 'total_figure', 'total_lines', 'after_loop', 'end',
          'report', 'release', 'abort')


def _defines(hook, phase: str) -> bool:
    """True when `hook` has its own `phase` (not RunHook's empty one)."""
    if phase in getattr(hook, '__dict__', {}):  # set on the object itself
        return True
    method = getattr(type(hook), phase, None)
    return method is not None and method is not getattr(run_hooks.RunHook, phase)


class PhaseRunner:
    """Calls each phase of `hooks` (lifecycle.run_hooks.RunHook objects), once per hook that
    defines it, in the hooks' order.

    Args:
      hooks: the run's hooks. (The loop and BenchmarkCNN.initialize take a PhaseRunner as it
        is, and make one of a list of hooks.)
      plan: the run's run_plan.RunPlan, for the RunContext of after_initialize and begin
        (None when neither is called, as in the loop's own tests).
    """

    def __init__(self, hooks=(), plan=None):
        self.hooks = list(hooks)
        self.plan = plan
        self._owners = {phase: [h for h in self.hooks if _defines(h, phase)] for phase in PHASES}
        self._calls = {phase: [getattr(h, phase) for h in owners]
                       for phase, owners in self._owners.items()}
        self._tracers = [h for h in self.hooks if _defines(h, 'wants_trace')]
        self.timed = run_hooks.TimedSteps()  # every RunContext's: the loop adds each step

    def _context(self, sess, info) -> run_hooks.RunContext:
        return run_hooks.RunContext(sess=sess, info=info, plan=self.plan, timed=self.timed)

    def _call(self, phase: str, *args) -> None:
        for call in self._calls[phase]:
            call(*args)

    # --- Around the run.
    def initialize(self, sess, info, init_variables: Callable[..., int | None],
                   post_init: Callable[..., None]) -> int | None:
        """`init_variables(sess, info)` (initialise or restore: returns the restored global
        step or None), the after_initialize phase, then `post_init(sess, info)` (the variable
        manager's post-init ops, a cluster's ready signal, the pipeline's warm-up). Returns
        the restored global step."""
        restored = init_variables(sess, info)
        self._call('after_initialize', self._context(sess, info))
        post_init(sess, info)
        return restored

    def run(self, sess, info, timed_loop: Callable[..., object],
            make_result: Callable[[object], dict]) -> dict:
        """begin, then `timed_loop(sess, info, plan, self)` (the warm-up and timed steps, which
        call the phases between steps: lifecycle/timed_run.timed_loop), then `finish` with
        `make_result(loop)`; `abort` instead when the loop raises (the exception goes on).
        Returns the result dict.

        Raises:
          The loop's `error` (training_loop.NonFiniteLossError: a non-finite loss stopped
            it), after `finish`, with the result dict as its `result`; `finish`'s errors.
        """
        self._call('begin', self._context(sess, info))
        try:
            loop = timed_loop(sess, info, self.plan, self)
        except BaseException:
            self.abort()
            raise
        result = make_result(loop)
        error = getattr(loop, 'error', None)
        self.finish(result, stopped_by=error)
        if error is not None:
            error.result = result
            raise error
        return result

    def finish(self, result: dict, stopped_by: cnn_util.BenchmarkError | None = None) -> None:
        """The phases after a loop that ended (finished, or stopped): after_loop, end, report,
        release (each phase for every hook before the next phase starts).

        A hook with an `output` that raises cnn_util.BenchmarkError or OSError in after_loop,
        end or report does not stop the others (the module docstring); any other hook's error
        ends the run at once, as before.

        Args:
          result: the run's result dict.
          stopped_by: the error that stopped the loop (its LoopResult's `error`), or None.

        Raises:
          OutputsNotWritten: after release, when an output hook failed: what was not written
            (why, the fix) and what was (each hook's `written`).
          `stopped_by`'s class, when an output hook failed after such a stop: its message,
            then 'Not written: ...' and what was written (`stopped_message`).
        """
        failed = []
        for phase in ('after_loop', 'end', 'report'):
            for hook, call in zip(self._owners[phase], self._calls[phase]):
                try:
                    call(result)
                except (cnn_util.BenchmarkError, OSError) as e:
                    if getattr(hook, 'output', None) is None:
                        raise
                    failed.append((hook, e))
        self._call('release')
        if failed:
            written = [w for hook in self.hooks
                       for w in getattr(hook, 'written', lambda r: [])(result)]
            if stopped_by is not None:
                error = type(stopped_by)(stopped_message(stopped_by, failed, written))
                error.result = result
                raise error
            raise OutputsNotWritten(not_written_message(failed, written))

    def abort(self) -> None:
        """Every hook's abort (the loop raised)."""
        self._call('abort')

    # --- Between the steps (lifecycle/training_loop.py).
    def run_step(self, step_fn, call: int, clock) -> tuple:
        """Runs step `call` (1-based over warm-up and timed steps): traced, with the trace (its
        RunMetadata) handed to the hooks that asked for it, when one asks (RunHook.wants_trace;
        with the partition graphs when one of them has `wants_partition_graphs` True). One
        trace serves every hook that asked for the step."""
        tracers = [h for h in self._tracers if h.wants_trace(call)]
        if not tracers:
            return step_fn()
        start = clock()
        if any(getattr(h, 'wants_partition_graphs', False) for h in tracers):
            out, trace = step_fn.traced(partition_graphs=True)
        else:
            out, trace = step_fn.traced()
        wall = clock() - start
        for hook in tracers:
            hook.traced(call, wall, trace)
        return out

    def before_timed(self) -> None:
        self._call('before_timed')

    def after_step(self, step: int, loss, step_secs: float = 0.0) -> None:
        """Adds the timed step's wall seconds to the timed steps' clock (`timed`), then the
        after_step phase."""
        self.timed.secs += step_secs
        self._call('after_step', step, loss)

    def should_stop(self) -> bool:
        """True when any hook says stop (every hook is asked)."""
        return any([ask() for ask in self._calls['should_stop']])

    def after_timed(self) -> None:
        self._call('after_timed')

    def total_figure(self, loop) -> tuple[float, list[str]] | None:
        """The first hook's (images/sec, lines) for the `total images/sec` line, or None."""
        for figure in self._calls['total_figure']:
            given = figure(loop)
            if given is not None:
                return given
        return None

    def total_lines(self, loop) -> list[str]:
        """The total block's lines of every hook, in the hooks' order."""
        return [line for lines in self._calls['total_lines'] for line in lines(loop)]
