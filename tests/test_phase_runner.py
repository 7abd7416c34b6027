"""The phase runner (lifecycle/phase_runner.py): every hook phase from one place, once, in order;
abort when the loop raises; after_initialize on a resumed run too."""

from __future__ import annotations

import time

import pytest

from tf_cnn_benchmarks import benchmark_cnn, cnn_util
from tf_cnn_benchmarks.lifecycle import phase_runner, run_hooks

import helpers

#: The phases a training run of 2 timed steps after 1 warm-up step calls, in order.
# The warm-up step's should_stop, then once more after before_timed: a signal during the work
# at the warm-up's end (an evaluation due there) stops the run before its first timed step.
TWO_STEPS = ['after_initialize', 'begin', 'wants_trace 1', 'should_stop', 'before_timed',
             'should_stop', 'wants_trace 2', 'after_step 1', 'should_stop', 'wants_trace 3',
             'after_step 2', 'should_stop', 'after_timed', 'total_figure', 'total_lines',
             'after_loop', 'end', 'report', 'release']


class Recorder(run_hooks.RunHook):
    """Records every phase it is called in, and the global step after_initialize sees."""

    def __init__(self, fail_at_step=None):
        self.log = []
        self.fail_at_step = fail_at_step
        self.initial_step = None

    def after_initialize(self, ctx):
        self.log.append('after_initialize')
        self.initial_step = int(ctx.sess.run(ctx.info.global_step))

    def begin(self, ctx):
        self.log.append('begin')

    def wants_trace(self, call):
        self.log.append('wants_trace %d' % call)
        return False

    def traced(self, call, wall_secs, step_stats):
        self.log.append('traced %d' % call)

    def before_timed(self):
        self.log.append('before_timed')

    def after_step(self, step, loss):
        self.log.append('after_step %d' % step)
        if step == self.fail_at_step:
            raise cnn_util.BenchmarkError('stopped by the test at step %d' % step)

    def should_stop(self):
        self.log.append('should_stop')
        return False

    def after_timed(self):
        self.log.append('after_timed')

    def total_figure(self, loop):
        self.log.append('total_figure')
        return None

    def total_lines(self, loop):
        self.log.append('total_lines')
        return []

    def after_loop(self, result):
        self.log.append('after_loop')

    def end(self, result):
        self.log.append('end')

    def report(self, result):
        self.log.append('report')

    def release(self):
        self.log.append('release')

    def abort(self):
        self.log.append('abort')


def _run(recorder, **flags):
    flags = {'num_batches': 2, 'num_warmup_batches': 1, **flags}
    return benchmark_cnn.BenchmarkCNN(helpers.tiny_params(**flags), gpus=0,
                                      hooks=[recorder]).run()


def test_every_phase_once_in_order_for_a_tiny_run():
    recorder = Recorder()
    _run(recorder)
    assert recorder.log == TWO_STEPS
    assert recorder.initial_step == 0


def test_a_raising_loop_aborts_instead_of_the_phases_after_it():
    recorder = Recorder(fail_at_step=1)
    with pytest.raises(cnn_util.BenchmarkError, match='stopped by the test at step 1'):
        _run(recorder)
    assert recorder.log == TWO_STEPS[:TWO_STEPS.index('after_step 1') + 1] + ['abort']


def test_after_initialize_on_a_resumed_run(tmp_path):
    first = Recorder()
    _run(first, train_dir=str(tmp_path))
    resumed = Recorder()
    result = _run(resumed, train_dir=str(tmp_path))
    assert result['restored_step'] == 3  # 1 warm-up + 2 timed steps of the first run
    assert resumed.initial_step == 3  # after_initialize saw the restored variables
    assert resumed.log == TWO_STEPS


def test_phases_go_only_to_the_hooks_that_define_them():
    calls = []

    class OnlyAfterStep(run_hooks.RunHook):
        def after_step(self, step, loss):
            calls.append(('class', step))

    class Plain:  # no RunHook: its phases are whatever the object has
        pass

    plain = Plain()
    plain.after_step = lambda step, loss: calls.append(('object', step))
    runner = phase_runner.PhaseRunner([OnlyAfterStep(), plain, run_hooks.RunHook()])
    assert [len(runner._calls[phase]) for phase in ('after_step', 'begin', 'should_stop')] == \
        [2, 0, 0]
    runner.after_step(4, 1.0)
    assert calls == [('class', 4), ('object', 4)]
    assert runner.should_stop() is False


def test_run_aborts_and_reraises_without_finishing():
    recorder = Recorder()
    runner = phase_runner.PhaseRunner([recorder], plan=None)

    def loop(sess, info, plan, phases):
        assert phases is runner
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        runner.run(None, None, loop, make_result=dict)
    assert recorder.log == ['begin', 'abort']
    result = runner.run(None, None, lambda sess, info, plan, phases: {'images_per_sec': 1.0},
                        dict)
    assert result == {'images_per_sec': 1.0}
    assert recorder.log[2:] == ['begin', 'after_loop', 'end', 'report', 'release']


def test_initialize_calls_after_initialize_between_the_two_halves():
    order = []

    class Hook(run_hooks.RunHook):
        def after_initialize(self, ctx):
            order.append(('after_initialize', ctx.sess, ctx.info, ctx.plan))

    runner = phase_runner.PhaseRunner([Hook()], plan='the plan')
    restored = runner.initialize(
        'sess', 'info', lambda sess, info: order.append(('init', sess, info)) or 7,
        lambda sess, info: order.append(('post_init', sess, info)))
    assert restored == 7
    assert order == [('init', 'sess', 'info'), ('after_initialize', 'sess', 'info', 'the plan'),
                     ('post_init', 'sess', 'info')]


class Output(run_hooks.RunHook):
    """An output hook that writes `what` in `phase`, or fails there with `error`."""

    def __init__(self, what: str, flag: str, phase: str, error=None):
        self.output, self.output_flag, self.what, self.error = what, flag, what, error
        self.done = False
        setattr(self, phase, self._write)

    def _write(self, result):
        if self.error is not None:
            raise self.error
        self.done = True

    def written(self, result):
        return ['%s /out/%s' % (self.what, self.what.split()[-1])] if self.done else []


def test_a_failed_output_does_not_stop_the_others():
    # The operator's trial: the checkpoint failed at the final save (end) and the results
    # JSON and the database record, due in report, were never written.
    recorder = Recorder()
    checkpoint = Output('the checkpoint', '--train_dir', 'end', cnn_util.BenchmarkError(
        'the checkpoint of global step 10 could not be saved in /td: No space left on device'))
    trace = Output('the trace', '--trace_file', 'after_loop',
                   OSError(28, 'No space left on device', '/t.json'))
    results = Output('the results JSON', '--benchmark_log_dir', 'report')
    record = Output('the record', None, 'report')
    runner = phase_runner.PhaseRunner([checkpoint, trace, recorder, results, record])
    with pytest.raises(phase_runner.OutputsNotWritten) as raised:
        runner.finish({})
    assert recorder.log == ['after_loop', 'end', 'report', 'release']
    assert results.done and record.done
    assert str(raised.value) == (
        'the run finished, but not all of its outputs were written. Not written: the trace '
        '(--trace_file): cannot write /t.json: No space left on device; free space there, or '
        'give another --trace_file. Not written: the checkpoint (--train_dir): the checkpoint '
        'of global step 10 could not be saved in /td: No space left on device; free space '
        'there, or give another --train_dir. Written: the results JSON /out/JSON, the record '
        '/out/record.')


def test_a_loop_a_nan_stopped_is_finished_then_its_error_raised():
    """A non-finite loss that stopped the loop (LoopResult.error): every phase after the loop
    runs (the reports keep the steps before it), then the error, its line unchanged; an
    output that failed beside it follows it as 'Not written: ...'."""
    from tf_cnn_benchmarks.lifecycle import training_loop
    nan = 'the loss became nan at step 3; the run is invalid. Lower --init_learning_rate.'

    def stopped_loop(*args):
        return training_loop.LoopResult(
            num_steps=2, stopped_early=True, error=training_loop.NonFiniteLossError(nan),
            stopped_by_error='the non-finite loss (nan) at step 3')
    recorder, results = Recorder(), Output('the results JSON', '--benchmark_log_dir', 'report')
    runner = phase_runner.PhaseRunner([recorder, results])
    with pytest.raises(training_loop.NonFiniteLossError) as raised:
        runner.run(None, None, stopped_loop, lambda loop: {'num_steps': loop.num_steps})
    assert str(raised.value) == nan and raised.value.result == {'num_steps': 2}
    assert recorder.log == ['begin', 'after_loop', 'end', 'report', 'release']
    assert results.done
    full = Output('the results JSON', '--benchmark_log_dir', 'report',
                  OSError(28, 'No space left on device', '/bl/x.json'))
    runner = phase_runner.PhaseRunner([full, Output('the record', None, 'report')])
    with pytest.raises(training_loop.NonFiniteLossError) as raised:
        runner.run(None, None, stopped_loop, lambda loop: {})
    assert str(raised.value) == nan + (
        ' Not written: the results JSON (--benchmark_log_dir): cannot write /bl/x.json: No space '
        'left on device; free space there, or give another --benchmark_log_dir. Written: the '
        'record /out/record.')


def test_a_hook_without_an_output_still_ends_the_run_at_once():
    recorder = Recorder()
    fails = run_hooks.RunHook()
    fails.end = lambda result: (_ for _ in ()).throw(cnn_util.BenchmarkError('figures failed'))
    with pytest.raises(cnn_util.BenchmarkError, match='^figures failed$'):
        phase_runner.PhaseRunner([fails, recorder]).finish({})
    assert recorder.log == ['after_loop']


def test_the_timed_steps_clock_adds_each_timed_step_and_none_of_the_hooks_work():
    """The summaries' images_per_sec divided by the wall time between summaries: an evaluation
    between steps made a new user's 180 images/sec read 10 in TensorBoard. The clock hooks
    read (RunContext.timed) adds the loop's own step times only."""
    from tf_cnn_benchmarks.lifecycle import training_loop

    class Evaluates(run_hooks.RunHook):
        def __init__(self):
            self.seen = []

        def after_step(self, step, loss):
            self.seen.append(runner.timed.secs)
            busy = time.perf_counter() + 0.05  # an evaluation's work between steps
            while time.perf_counter() < busy:
                pass

    hook = Evaluates()
    runner = phase_runner.PhaseRunner([hook])
    spec = training_loop.LoopSpec(num_warmup=1, num_steps=3, images_per_step=4,
                                  display_every=10)
    result = training_loop.run_loop(spec, lambda: (1.0,), runner, log=lambda line: None)
    times = result.step_times
    assert hook.seen == [times[0], times[0] + times[1], times[0] + times[1] + times[2]]
    assert runner._context(None, None).timed is runner.timed  # what every hook's ctx holds
