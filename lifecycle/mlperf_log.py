"""--ml_perf (and the original's --ml_perf_compliance_logging): MLPerf-format log lines that
MLCommons' compliance checker accepts.

The lines come from the MLCommons logging package (`mlperf-logging`, module
`mlperf_logging.mllog`; `pip install 'tf_cnn_benchmarks[mlperf]'`), which prints each event to
stdout as
`:::MLLOG {"namespace": "", "time_ms": ..., "event_type": ..., "key": ..., "value": ...,
"metadata": {...}}`. What a log must hold is the checker's (`python -m
mlperf_logging.compliance_checker --usage training --ruleset 4.0.0 LOG`, the last ruleset with
ResNet; its rules are the YAML files of `mlperf_logging/compliance_checker/training_4.0.0/`:
common.yaml, {closed,open}_common.yaml, {closed,open}_resnet.yaml). A training run with
evaluations during training logs, in this order:

  begin (init_start and cache_clear carry the time the hooks were made, before the graph was
    built): cache_clear (False: no cache is dropped here), init_start, submission_org,
    submission_platform, submission_division, submission_status (SUBMISSION_ENV),
    submission_benchmark ('resnet' for resnet50 and resnet50_v1.5, MLPerf's ResNet-50
    benchmark; other models by name, which the checker refuses), global_batch_size, seed,
    gradient_accumulation_steps (1), opt_name (MLPerf's name: OPT_NAMES; sgd_opt_momentum
    after it for --optimizer=momentum), opt_base_learning_rate (the schedule's rate
    before any change, after any warm-up: graph/learning_rate.initial_rate, as the shortest
    decimal of its float32: 0.0001 for --init_learning_rate=1e-4, not
    9.999999747378752e-05), train_samples (examples per epoch), eval_samples (examples one
    evaluation scores), init_stop, run_start, block_start;
  each evaluation during training (EvalDuringTrainingHook's listener): block_stop,
    eval_start, eval_stop, eval_accuracy (top-1), then block_start when timed steps remain;
    an evaluation a signal stopped after some of its batches (eval_during_training.py: its
    accuracy is partial) logs eval_stop without eval_accuracy (the checker's rules take
    every eval_accuracy as the quality of the weights at that epoch), and the run's run_stop
    is aborted, as for any signal;
    with --ml_perf the last timed step is always evaluated, so every block ends with its
    evaluation, and --num_epochs counts the warm-up steps (they train too: run_plan), so
    --num_epochs=2 --eval_during_training_every_n_epochs=1 logs two blocks, each ending with
    an evaluation, the last at epoch 2;
  after the last timed step: block_stop of a block still open (a run without evaluations, or
    one a signal stopped) with the samples it trained, warm-up steps included;
  a block's block_start is logged when the block closes (with the time it started), so a block
    that trained nothing (a signal before its first step, or right after an evaluation) logs
    neither line, and a --forward_only run (which trains nothing) no block at all: its log
    keeps train_samples, the size of the epoch (the checker wants exactly one), but no
    samples_count of images trained; it cannot evaluate during training, so the checker
    refuses it (the warning says so, and that a training run is needed, as in the original,
    whose --forward_only refused --eval_during_training_*);
  report: run_stop with status success only when the run reached its quality target (an
    evaluation's top-1 at least --stop_at_top_1_accuracy, else MLPerf's ResNet-50 target
    RESNET_TARGET_TOP_1), aborted otherwise: the target not reached, a model without a
    target (nothing to reach), a signal, an error. MLPerf's meaning: the results summarizer
    (mlperf_logging's rcp_checker) counts a run as converged only when its run_stop says
    success.
  a second signal's abort (lifecycle/signals.py, which exits without the phases after the
    loop) logs the open block's block_stop at the steps counted so far and run_stop aborted
    first (`close_on_abort`); its error line says when the log could not be closed.

Every block and evaluation event carries samples_count (images trained so far: global step x
global batch); block_start and block_stop also first_epoch_num, the block's first epoch in both
(MLCommons' rule: block_stop repeats block_start's first_epoch_num, mlperf_logging's
compliance_checker/training_0.7.0_warn/common.yaml), the evaluation events epoch_num (global
step / steps per epoch). The checker also wants evaluations: a run without
--eval_during_training_* fails it (no eval_start, eval_accuracy). A cluster's chief logs the
same lines, but a cluster run cannot evaluate during training, so the checker refuses its log:
an accepted one needs a one-host run (the warning says so, and names no flag a cluster
refuses).

Without the package `make_hook` warns once and the run goes on without these lines; with it,
a run whose log the checker will refuse (no evaluations, a model that is no MLPerf benchmark,
the closed division) gets one warning line saying why (`checker_gaps`). The
original's --ml_perf also changed its ImageNet preprocessing (mean subtraction instead of
scaling to [-1, 1]); here the images keep the usual range and the lines are the only effect.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time

from .. import cnn_util, package_info
from ..params import ParamsError
from . import run_hooks

INSTALL_HINT = ('pip install mlperf-logging, or %s, for the MLPerf log lines'
                % package_info.install_hint('mlperf'))
#: Environment variable -> (submission key, default, allowed values or None). The defaults of
#: the free-text fields say that nothing was set; division and status must be one of MLPerf's
#: values (training_4.0.0/common.yaml): a run of this tool is an open-division research run
#: unless said otherwise.
SUBMISSION_ENV = {
    'MLPERF_SUBMISSION_ORG': ('submission_org', 'unset', None),
    'MLPERF_SUBMISSION_PLATFORM': ('submission_platform', 'unset', None),
    'MLPERF_SUBMISSION_DIVISION': ('submission_division', 'open', ('closed', 'open')),
    'MLPERF_SUBMISSION_STATUS': ('submission_status', 'research',
                                 ('cloud', 'onprem', 'preview', 'research')),
}
#: Models logged as MLPerf's ResNet-50 benchmark.
RESNET_MODELS = ('resnet50', 'resnet50_v1.5')
#: MLPerf ResNet-50's quality target, top-1 (training_4.0.0/closed_resnet.yaml: >= 0.7590).
RESNET_TARGET_TOP_1 = 0.759
#: --optimizer -> opt_name, MLPerf's name (mllog's constants: sgd, lars, adam, ...): momentum
#: SGD is 'sgd' with its momentum as sgd_opt_momentum, as MLPerf's ResNet-50 reference logs
#: it. rmsprop has no MLPerf name and is logged as 'rmsprop'.
OPT_NAMES = {'sgd': 'sgd', 'momentum': 'sgd', 'adam': 'adam'}
#: The opt_name values the closed division's ResNet-50 rules allow (closed_resnet.yaml); for
#: any other the checker (4.1.68) stops with a FileNotFoundError instead of a verdict.
CLOSED_RESNET_OPT_NAMES = ('sgd', 'lars')


def float32_decimal(value) -> float:
    """The shortest decimal that reads back as the same float32 as `value`: a rate given as
    1e-4 and held in a float32 tensor (9.999999747378752e-05 as a Python float) is 0.0001
    again. Exact for any flag value of up to 7 significant digits."""
    import numpy as np
    return float(str(np.float32(value)))


def load_mllog():
    """The package's (mllog module, constants module), or None when it is not installed."""
    try:
        from mlperf_logging import mllog
        from mlperf_logging.mllog import constants
    except ImportError:
        return None
    return mllog, constants


def submission_fields(environ=None) -> dict[str, str]:
    """{submission key: value} from SUBMISSION_ENV (defaults where unset or empty).

    Raises:
      ParamsError: a division or status that is not one of MLPerf's values.
    """
    environ = os.environ if environ is None else environ
    fields = {}
    for name, (key, default, allowed) in SUBMISSION_ENV.items():
        value = environ.get(name, '').strip() or default
        if allowed and value not in allowed:
            raise ParamsError('%s=%s: MLPerf\'s %s is one of %s' % (
                name, value, key.replace('_', ' '), ', '.join(allowed)))
        fields[key] = value
    return fields


def make_hook(plan, evaluations=None, base_rate=None, synthetic=False):
    """An MlPerfHook for the run, or None (with one warning line) without mlperf-logging;
    one warning line when the compliance checker will refuse the run's log (`checker_gaps`).

    Args:
      plan: the run plan.
      evaluations: the run's eval_during_training.EvalDuringTrainingHook, or None; the hook
        listens to its evaluations.
      base_rate: opt_base_learning_rate: the schedule's rate before any change or warm-up
        (graph/learning_rate.initial_rate; resnet50's default ramps from 0 over 5 epochs);
        None: the rate at the first step.
      synthetic: the run trains on synthetic data (no --data_dir): one more warning line
        (`not_mlperf_results`).

    Raises:
      ParamsError: see `submission_fields`.
    """
    loaded = load_mllog()
    if loaded is None:
        cnn_util.warn('--ml_perf prints no MLPerf lines: the mlperf-logging package is not '
                      'installed; %s' % INSTALL_HINT)
        return None
    submission = submission_fields()
    gaps = checker_gaps(plan.model, evaluations is not None, submission['submission_division'],
                        cluster=bool(plan.cluster_role), training=plan.training,
                        optimizer=plan.params.optimizer)
    if gaps:
        cnn_util.warn('--ml_perf: MLCommons\' compliance checker (training, ruleset 4.0.0) will '
                      'refuse this log: %s' % '; '.join(gaps))
    # A forward-only run trains nothing (the line above says so): not 'trains on synthetic'.
    unreal = not_mlperf_results(synthetic and plan.training, plan.params.stop_at_top_1_accuracy,
                                plan.model in RESNET_MODELS)
    if unreal:
        cnn_util.warn('--ml_perf: MLPerf would not take this log as a result, even where '
                      'MLCommons\' compliance checker accepts it: %s' % '; '.join(unreal))
    hook = MlPerfHook(plan, *loaded, submission=submission, base_rate=base_rate)
    if evaluations is not None:
        evaluations.listeners.append(hook)
    return hook


def not_mlperf_results(synthetic: bool, target: float | None, resnet: bool) -> list[str]:
    """What in a run makes its log no MLPerf result though the checker accepts it, with what
    to change; [] when nothing does.

    Args:
      synthetic: the run trains on synthetic data (no --data_dir): its log still holds
        ImageNet's train_samples (1281167), for random images.
      target: --stop_at_top_1_accuracy, or None (MLPerf's own target, RESNET_TARGET_TOP_1).
      resnet: the model is logged as MLPerf's ResNet-50.
    """
    notes = []
    if synthetic:
        notes.append('it trains on synthetic data (no --data_dir), yet logs ImageNet\'s '
                     'train_samples; give --data_dir=<ImageNet TFRecords>')
    if resnet and target is not None and target < RESNET_TARGET_TOP_1:
        notes.append('--stop_at_top_1_accuracy=%g is below MLPerf ResNet-50\'s target %g, and '
                     'run_stop says success at it' % (target, RESNET_TARGET_TOP_1))
    return notes


def checker_gaps(model: str, evaluates: bool, division: str, *,
                 cluster: bool = False, training: bool = True,
                 optimizer: str = 'sgd') -> list[str]:
    """What in a run's log the compliance checker will refuse, with what to change; [] for a
    log it can accept (a ResNet-50 run with evaluations during training, open division).

    Args:
      model: --model.
      evaluates: whether the run evaluates during training (--eval_during_training_*).
      division: the submission division ('open' or 'closed').
      cluster: a cluster task's run, which cannot evaluate during training (those flags run
        on one host only: params/cluster_rules.py), so its log has no evaluations to add.
      training: False for a --forward_only run, which trains nothing and so cannot evaluate
        during training either (as in the original, where --forward_only with
        --eval_during_training_* is an error; here those flags have no effect with it).
      optimizer: --optimizer; in the closed division its opt_name (OPT_NAMES) must be one of
        CLOSED_RESNET_OPT_NAMES.

    The checker's rules (training_4.0.0): common.yaml requires eval_start, eval_stop and
    eval_accuracy; submission_benchmark must name an MLPerf benchmark (ResNet-50 is this
    program's one); closed_resnet.yaml also wants the reference's polynomial-decay keys
    (sgd_opt_end_learning_rate of 0.0001, sgd_opt_learning_rate_decay_poly_power, ...), which
    no schedule of this program has.
    """
    gaps = []
    if not training:
        gaps.append('it has no evaluations, and a --forward_only run cannot have them (it '
                    'trains nothing, so --eval_during_training_* has no effect): an accepted '
                    'MLPerf log needs a training run (without --forward_only) with '
                    '--eval_during_training_every_n_epochs=N')
    elif not evaluates and cluster:
        gaps.append('it has no evaluations, and a cluster run cannot have them (evaluation '
                    'during training runs on one host only): an accepted MLPerf log needs a '
                    'one-host run with --eval_during_training_every_n_epochs=N')
    elif not evaluates:
        gaps.append('it has no evaluations (add --eval_during_training_every_n_epochs=N or '
                    '--eval_during_training_every_n_steps=N)')
    if model not in RESNET_MODELS:
        gaps.append('--model=%s is no MLPerf training benchmark (ResNet-50 is: '
                    '--model=resnet50)' % model)
    if division == 'closed':
        gaps.append("the closed division's ResNet-50 rules want the reference's "
                    'polynomial-decay learning rate (sgd_opt_* keys), which this program does '
                    'not run (MLPERF_SUBMISSION_DIVISION=open, the default, has no such rule)')
        opt_name = OPT_NAMES.get(optimizer, optimizer)
        if opt_name not in CLOSED_RESNET_OPT_NAMES:
            gaps.append('--optimizer=%s logs opt_name %s, and the closed division allows %s '
                        '(the checker stops with a FileNotFoundError for it): use '
                        '--optimizer=momentum' % (optimizer, opt_name,
                                                  ' or '.join(CLOSED_RESNET_OPT_NAMES)))
    return gaps


class _CurrentStdout(logging.StreamHandler):
    """A handler that writes to sys.stdout as it is when a line is logged. mllog's shared
    logger binds the sys.stdout of its import: a caller of the library that redirects
    stdout for a run (contextlib.redirect_stdout, a notebook cell) would lose the run's lines."""

    @property
    def stream(self):
        return sys.stdout

    @stream.setter
    def stream(self, value):  # StreamHandler.__init__ sets it; the current one is used
        del value


def _run_logger(mllog):
    """An mllog.MLLogger of this run whose lines go to the current sys.stdout, as mllog's
    own default logger's do ('tf_cnn_benchmarks.mlperf', INFO, not propagated)."""
    logger = logging.getLogger('tf_cnn_benchmarks.mlperf')
    logger.propagate = False
    logger.setLevel(logging.INFO)
    if not any(isinstance(h, _CurrentStdout) for h in logger.handlers):
        logger.addHandler(_CurrentStdout())
    return type(mllog.get_mllogger())(logger=logger)  # mllog's MLLogger class


class MlPerfHook(run_hooks.RunHook):
    """Logs the run's MLPerf events (see the module docstring) through mllog's logger; made
    before the graph is built (its time is init_start's)."""

    def __init__(self, plan, mllog, constants, submission: dict[str, str], base_rate=None):
        self.plan = plan
        self.base_rate = base_rate
        self.c = constants
        self.logger = _run_logger(mllog)
        self.submission = submission
        self.init_ms = int(time.time() * 1000)
        self.counter = run_hooks.GlobalStepCounter(plan)
        self.global_step = 0
        self._ctx = None
        self._block = None  # the open block: (its start's time_ms, its first global step)
        self._stopped = False
        self._stop_lock = threading.Lock()

    def _progress(self, global_step: int, epoch_key: str) -> dict:
        epoch = global_step / (self.plan.steps_per_epoch or 1.0)
        return {epoch_key: round(epoch, 6),
                self.c.SAMPLES_COUNT: global_step * self.plan.global_batch_size}

    def benchmark(self) -> str:
        """MLPerf's benchmark name of the run's model."""
        return self.c.RESNET if self.plan.model in RESNET_MODELS else self.plan.model

    def begin(self, ctx):
        c, p, log = self.c, self.plan.params, self.logger
        log.event(key=c.CACHE_CLEAR, value=False, time_ms=self.init_ms)
        log.start(key=c.INIT_START, time_ms=self.init_ms)
        for key, value in self.submission.items():
            log.event(key=key, value=value)
        log.event(key=c.SUBMISSION_BENCHMARK, value=self.benchmark())
        log.event(key=c.GLOBAL_BATCH_SIZE, value=self.plan.global_batch_size)
        log.event(key=c.SEED, value=p.tf_random_seed)
        if self.plan.training:
            log.event(key=c.GRADIENT_ACCUMULATION_STEPS, value=1)
            log.event(key=c.OPT_NAME, value=OPT_NAMES.get(p.optimizer, p.optimizer))
            if p.optimizer == 'momentum':
                log.event(key='sgd_opt_momentum', value=p.momentum)
            log.event(key=c.OPT_BASE_LR, value=float32_decimal(
                ctx.sess.run(ctx.info.learning_rate) if self.base_rate is None
                else self.base_rate))
        log.event(key=c.TRAIN_SAMPLES, value=self.plan.examples_per_epoch)
        eval_plan = self.plan.eval
        log.event(key=c.EVAL_SAMPLES, value=eval_plan.num_examples if eval_plan else 0)
        log.end(key=c.INIT_STOP)
        log.start(key=c.RUN_START)
        self._ctx = ctx
        self.global_step = self.counter.begin(ctx)
        self._start_block()

    def _start_block(self):
        """Opens a block at the current global step; its block_start is logged (with this
        time) when it closes having trained samples (`_stop_block`). A forward-only run
        trains nothing: it opens none (its steps' images are no training samples)."""
        if not self.plan.training:
            return
        self._block = (int(time.time() * 1000), self.global_step)

    def _stop_block(self):
        """Closes the open block: block_start (its own time) and block_stop, both with the
        block's first epoch as first_epoch_num and block_stop with the samples trained so far;
        nothing for a block that trained no samples (a signal before its first step)."""
        if self._block is None:
            return
        start_ms, first_step = self._block
        self._block = None
        if self.global_step <= first_step:
            return
        first_epoch = self._progress(first_step, self.c.FIRST_EPOCH_NUM)
        self.logger.start(key=self.c.BLOCK_START, time_ms=start_ms, metadata=first_epoch)
        self.logger.end(key=self.c.BLOCK_STOP, metadata={
            **first_epoch, self.c.SAMPLES_COUNT: self._progress(
                self.global_step, self.c.EPOCH_NUM)[self.c.SAMPLES_COUNT]})

    def after_step(self, step, loss):
        del loss
        self.global_step = self.counter.advance(step)[1]

    def eval_started(self, global_step: int) -> None:
        """EvalDuringTrainingHook: an evaluation of the weights at `global_step` begins."""
        self.global_step = global_step
        self._stop_block()
        self.logger.start(key=self.c.EVAL_START,
                          metadata=self._progress(global_step, self.c.EPOCH_NUM))

    def eval_finished(self, global_step: int, r: dict, more_steps: bool) -> None:
        """EvalDuringTrainingHook: the evaluation ended with result `r`; `more_steps`: timed
        steps follow (a new block starts). A partial evaluation (r['partial']: a signal
        stopped it) logs eval_stop but no eval_accuracy: its top-1 is of some batches only."""
        progress = self._progress(global_step, self.c.EPOCH_NUM)
        self.logger.end(key=self.c.EVAL_STOP, metadata=progress)
        if not r.get('partial'):
            self.logger.event(key=self.c.EVAL_ACCURACY, value=float(r['top_1']),
                              metadata=progress)
        if more_steps:
            self._start_block()

    def _close_block(self):
        """Closes the open block at the session's global step: the warm-up steps trained too
        (a signal in the warm-up ends the loop before any timed step the counter sees)."""
        if self._block is None:
            return
        if self.plan.training and self._ctx is not None:
            try:
                self.global_step = int(self._ctx.sess.run(self._ctx.info.global_step))
            except Exception:  # noqa: BLE001 - a lost cluster task: the timed steps' count
                pass
        self._stop_block()

    def after_timed(self):
        self._close_block()

    def after_loop(self, result):
        del result
        self._close_block()  # a signal in the warm-up: no after_timed

    def _target(self) -> float | None:
        target = self.plan.params.stop_at_top_1_accuracy
        if target is None and self.benchmark() == self.c.RESNET:
            target = RESNET_TARGET_TOP_1
        return target

    def report(self, result):
        evals = result.get('evals') or []
        target = self._target()
        reached = target is not None and any(r['top_1'] >= target for r in evals
                                             if not r.get('partial'))
        self._stop(self.c.SUCCESS if reached and not result.get('stopped_by_signal')
                   and not result.get('stopped_by_error') else self.c.ABORTED)

    def abort(self):
        try:
            self._stop(self.c.ABORTED)
        except Exception:  # noqa: BLE001 - abort must not raise
            pass

    def close_on_abort(self) -> bool:
        """A second signal's abort (signals.SignalHook's closer, from another thread): closes
        the open block at the steps counted so far and logs run_stop aborted, unless run_stop
        was logged; returns whether the log now ends with its run_stop on stdout."""
        try:
            self._stop(self.c.ABORTED)
            sys.stdout.flush()
        except Exception:  # noqa: BLE001 - a closed or full stdout: the log stays open
            return False
        return True

    def _stop(self, status):
        with self._stop_lock:  # the main thread's report and a second signal's abort
            if not self._stopped:
                self._stopped = True
                self._stop_block()
                self.logger.end(key=self.c.RUN_STOP, metadata={self.c.STATUS: status})
