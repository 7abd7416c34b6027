"""--ml_perf (and the original's --ml_perf_compliance_logging): MLPerf-format log lines.

The lines come from the MLCommons logging package (`mlperf-logging`, module
`mlperf_logging.mllog`; `pip install -e '.[mlperf]'`), which prints each event to stdout as
`:::MLLOG {"namespace": "", "time_ms": ..., "event_type": ..., "key": ..., "value": ...,
"metadata": {...}}`. A run logs, in this order:

  begin: submission_benchmark (the model), global_batch_size, seed, opt_name,
    opt_base_learning_rate (the rate at the first step), train_samples (examples per epoch),
    init_stop, run_start;
  report: eval_accuracy (top-1) of every evaluation during training, with metadata epoch_num
    (global step / steps per epoch), then run_stop with status success (aborted when a signal
    or an error ended the run).

Without the package `make_hook` warns once and the run goes on without these lines. The
original's --ml_perf also changed its ImageNet preprocessing (mean subtraction instead of
scaling to [-1, 1]); here the images keep the usual range and the lines are the only effect.
"""

from __future__ import annotations

from .. import cnn_util
from . import run_hooks

INSTALL_HINT = ('pip install -e \'.[mlperf]\' (or pip install mlperf-logging) for the MLPerf '
                'log lines')


def load_mllog():
    """The package's (mllog module, constants module), or None when it is not installed."""
    try:
        from mlperf_logging import mllog
        from mlperf_logging.mllog import constants
    except ImportError:
        return None
    return mllog, constants


def make_hook(plan):
    """An MlPerfHook for the run, or None (with one warning line) without mlperf-logging."""
    loaded = load_mllog()
    if loaded is None:
        cnn_util.warn('--ml_perf prints no MLPerf lines: the mlperf-logging package is not '
                      'installed; %s' % INSTALL_HINT)
        return None
    return MlPerfHook(plan, *loaded)


class MlPerfHook(run_hooks.RunHook):
    """Logs the run's MLPerf events (see the module docstring) through mllog's logger."""

    def __init__(self, plan, mllog, constants):
        self.plan = plan
        self.c = constants
        self.logger = mllog.get_mllogger()
        self._stopped = False

    def begin(self, ctx):
        c, p, log = self.c, self.plan.params, self.logger
        log.event(key=c.SUBMISSION_BENCHMARK, value=self.plan.model)
        log.event(key=c.GLOBAL_BATCH_SIZE, value=self.plan.global_batch_size)
        log.event(key=c.SEED, value=p.tf_random_seed)
        if self.plan.training:
            log.event(key=c.OPT_NAME, value=p.optimizer)
            log.event(key=c.OPT_BASE_LR, value=float(ctx.sess.run(ctx.info.learning_rate)))
        log.event(key=c.TRAIN_SAMPLES, value=self.plan.examples_per_epoch)
        log.end(key=c.INIT_STOP)
        log.start(key=c.RUN_START)

    def report(self, result):
        c = self.c
        steps_per_epoch = self.plan.steps_per_epoch or 1.0
        for r in result.get('evals') or []:
            self.logger.event(key=c.EVAL_ACCURACY, value=float(r['top_1']),
                              metadata={c.EPOCH_NUM: r['global_step'] / steps_per_epoch})
        status = c.ABORTED if result.get('stopped_by_signal') else c.SUCCESS
        self._stop(status)

    def abort(self):
        try:
            self._stop(self.c.ABORTED)
        except Exception:  # noqa: BLE001 - abort must not raise
            pass

    def _stop(self, status):
        if not self._stopped:
            self._stopped = True
            self.logger.end(key=self.c.RUN_STOP, metadata={self.c.STATUS: status})
