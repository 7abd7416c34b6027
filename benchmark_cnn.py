"""BenchmarkCNN: one run's header and orchestration (graph, session, hooks, loop).

    bench = BenchmarkCNN(params)   # its settled run plan, model and data (preflight/settled_run.py)
    bench.print_info()             # the header block (run_header.py)
    result = bench.run()           # dict: images_per_sec, losses, step_times, ...

The original's library calls work too: `make_params(**kwargs)` (or `make_params_from_flags()`
after absl parsed the flags), `setup(params)`, then `BenchmarkCNN(params).run()`, whose dict has
the original's keys (lifecycle/results_log.original_stats) among its own.

What a run does, in order: the graph of its step (graph/builder.py: input pipeline, towers,
train op), a session (a cluster task's from its server), initialise or restore
(lifecycle/checkpoints.py), the hooks' phases around the timed loop, all called by the phase
runner (lifecycle/phase_runner.py; the loop: lifecycle/timed_run.py).
--eval runs the evaluator instead (lifecycle/eval_runner.py), a ps task its serve loop.

Collaborators receive the run plan (run_plan.RunPlan) and the objects they use, never this
object.
"""

from __future__ import annotations

import functools
import time

if not __package__:  # `import benchmark_cnn` inside the checkout, as the original's scripts did
    # package_info.install_hint's two forms, written out: the package cannot be imported here.
    raise ImportError(
        'benchmark_cnn is a module of the package tf_cnn_benchmarks (the checkout folder), whose '
        'modules import each other relatively: write `from tf_cnn_benchmarks import '
        "benchmark_cnn` with the package installed: pip install tf_cnn_benchmarks (in a "
        "checkout: pip install -e .); docs/python-api.md")

from .runtime import runtime_env

# oneDNN kernels, BFC allocator, log level: set before TensorFlow loads, and its start-up lines
# kept off stderr.
runtime_env.import_tensorflow()

import tensorflow as tf
from absl import flags as absl_flags

from . import cnn_util, run_header, run_plan
from . import params as params_lib
from .cluster import coordination, resolvers, run_flags
from .cluster import server as cluster_server
from .graph import builder, frozen
from .graph.graph_info import GraphInfo
from .input_data import data_errors
from .lifecycle import (
    checkpoints,
    eval_runner,
    figure_hooks,
    phase_runner,
    run_hooks,
    signals,
    timed_run,
    wiring,
)
from .preflight import memory_check, planned_step, settled_run, usage
from .runtime import dir_hold, session_config

tf1 = tf.compat.v1

num_visible_gpus = session_config.num_visible_gpus
make_session_config = session_config.make_session_config


# The original's library API (its benchmark_cnn module): make_params, make_params_from_flags,
# setup, then BenchmarkCNN(params).run().
def make_params(**kwargs) -> params_lib.Params:
    """Params with the flags' defaults, overridden by `kwargs` (the package's `make_params`).

    Raises:
      params.ParamsError: a keyword is not a flag name. A value is checked when the run
        starts (or by `setup`), not here.
    """
    return params_lib.make_params(**kwargs)


def make_params_from_flags(flag_values: absl_flags.FlagValues = absl_flags.FLAGS
                           ) -> params_lib.Params:
    """Params of the parsed command-line flags, as the original's: every flag's value from
    `flag_values` (absl's global FLAGS), which must hold the flags (`params.define_flags()`)
    and have parsed them (`absl.app.run(main)`, or `FLAGS(sys.argv)`).

    Raises:
      params.ParamsError: the flags are not defined in `flag_values`, or not parsed yet.
    """
    if 'model' not in flag_values:
        raise params_lib.ParamsError(
            "the benchmark's flags are not defined: call tf_cnn_benchmarks.params.define_flags()"
            ' before parsing the command line (absl.app.run(main) or FLAGS(sys.argv))')
    if not flag_values.is_parsed():
        raise params_lib.ParamsError(
            'the command line is not parsed yet: run main through absl.app.run(main), or call '
            'FLAGS(sys.argv), before make_params_from_flags()')
    return params_lib.make_params_from_flags(flag_values)


def setup(params: params_lib.Params) -> params_lib.Params:
    """Checks `params` as a run would, before any graph, and returns them (the original's
    setup, which also set MKL and GPU-thread environment variables, filled in thread counts
    and opened a session to create the devices).

    Here TensorFlow's environment is prepared when this module is imported
    (runtime/runtime_env.py), and each run settles its own thread counts, logical devices and
    session options when BenchmarkCNN is made (preflight/settled_run.py): nothing global is
    set, and the params come back unchanged (the run resolves its defaults itself, so its
    results' given_flags stay the ones given). Calling it is optional.

    Raises:
      params.ParamsError: an invalid value or flag combination, or an output path that cannot
        be written (the checks of a library run: preflight/usage.check_usage).
      models.model_catalog.UnknownModelError: the model is not defined for the dataset.
    """
    usage.check_usage(params, command=False)
    return params


class BenchmarkCNN:
    """One benchmark run: training (or forward-only) on synthetic or real data.

    Args:
      p: Params; the run plan is settled from them (preflight/settled_run.settle: checked
        unless `checked` is given, resolved, the session options made).
      gpus: number of visible GPUs; None asks TensorFlow.
      hooks: extra lifecycle.run_hooks.RunHook objects (test seams, library users), called
        with the run's own in every phase.
      checked: the preflight/usage.CheckedRun of the command (its params replace `p`; its
        resolution's description is the header's 'Cluster:' text, '' for a local run): nothing
        is checked again. None (a library caller): the command's checks run here
        (usage.check_usage without the command-line rules, usage.check_with_tensorflow).
      pipeline_factory: (plan, dataset, train=bool) -> the input pipeline of the training or
        forward-only graph; default preprocessing.pipeline_for.

    Attributes:
      plan: the run_plan.RunPlan; params: its resolved Params; model: the CNNModel;
      dataset: the input_data.dataset_info.Dataset; resolution: the cluster/resolvers
      .Resolution the run's Params come from; cluster: the cluster.topology.Cluster of a
      cluster task, else None; session_config: the tf.compat.v1.ConfigProto of this run's
      sessions (runtime/session_config.make_session_config).

    Raises:
      params.ParamsError: invalid flags or flag combination, or a cluster that does not
        resolve (cluster/resolvers.py); a --baseline of another configuration.
      model_config.UnknownModelError: unknown model, or a model not defined for the dataset.
      cnn_util.DataError: data directory missing, empty or corrupt.
    """

    def __init__(self, p, gpus=None, hooks=(), checked=None, pipeline_factory=None):
        run = settled_run.settle(p, num_visible_gpus() if gpus is None else gpus, checked)
        self.plan: run_plan.RunPlan = run.plan
        self.params = run.plan.params
        self.model, self.dataset, self.cluster = run.model, run.dataset, run.cluster
        self.given_params = run.given_params  # before the defaults are filled in
        self.resolution, self.stored_baseline = run.resolution, run.stored_baseline
        self.session_config = run.plan.session_config
        self.server = cluster_server.TaskServer(self.cluster) if self.cluster else None
        self.pipeline_factory = pipeline_factory
        self.extra_hooks = list(hooks)
        self.memory = None  # preflight.memory_check.MemoryVerdict of the built step
        self._precision_lines = None

    # --- Header.
    def precision_lines(self) -> list[str]:
        """The header's precision lines, made once (run_header.py precision_lines: on a
        CPU with reduced precision this measures its kernels, or reads them cached)."""
        if self._precision_lines is None:
            self._precision_lines = run_header.precision_lines(self.plan)
        return self._precision_lines

    def info_lines(self) -> list[str]:
        """The header block, one string per line (run_header.py; a ps task's, and a worker's
        of distributed_all_reduce, say what they serve: run_header.ps_header_lines,
        served_worker_header_lines)."""
        if self.cluster is not None and self.cluster.job_name == 'ps':
            return run_header.ps_header_lines(self.plan, self.model)
        if self.cluster is not None and self.cluster.serves:  # distributed_all_reduce's worker
            return run_header.served_worker_header_lines(self.plan)
        p, resume = self.params, None
        if self.plan.training and self.plan.is_chief and (p.train_dir or p.checkpoint_path):
            resume = checkpoints.resume_point(p)  # reads the files: no graph yet
        elif p.eval or (p.forward_only and (p.train_dir or p.checkpoint_path)):
            checkpoints.check_eval_checkpoint(p)  # a damaged one said before the graph too
        precision = self.precision_lines()
        return run_header.header_lines(self.plan, self.dataset, precision, resume, self.model)

    def print_info(self) -> None:
        for line in self.info_lines():
            cnn_util.log_fn(line)

    # --- Graph.
    def build_graph(self) -> GraphInfo:
        """Builds the whole training (or forward-only) step into a new graph (graph/builder.py),
        with the manager of --variable_update (variable_mgr.py; a cluster task's with its
        cluster)."""
        return builder.build_graph(self.plan, self.model, self.dataset, cluster=self.cluster,
                                   pipeline_factory=self.pipeline_factory)

    # --- Run.
    def run(self) -> dict:
        """Builds the graph, initialises, warms up and runs the timed steps.

        Returns:
          A dict: images_per_sec (float, global), losses (timed steps), warmup_losses,
          step_times (seconds), num_steps, global_batch_size, per_device_batch_size,
          num_devices, model, image_size, elapsed_secs; the original's keys num_workers,
          num_steps, average_wall_time (seconds per step), last_average_loss, top_1_accuracy
          and top_5_accuracy (fractions; None without an evaluation): results_log
          .original_stats.

          With --eval, the evaluation's result (eval_runner.run_eval). Lifecycle keys
          (params, plan, environment, steps, restored_step, checkpoint_path, eval, ...): see
          results_log. A ps task's serve loop returns {'role', 'task_index', 'served_secs'}.

        Raises:
          training_loop.NonFiniteLossError: the loss became NaN or Inf (one host's run: after
            its reports were written, the result dict in the error's `result`).
          checkpoints.CheckpointError: no checkpoint for --eval, or one that does not fit.
          signals.Terminated: SIGTERM or SIGHUP stopped the run (after saving); exit status 143
            or 129.
          dir_hold.HeldError: --train_dir or --eval_dir is held by another run.
        """
        p = self.params
        # The command holds them already (cli.py); a library caller's run takes them here.
        with dir_hold.hold_run_dirs(p):
            if self.server is not None:
                self.server.start(self.plan.server_config)
                if self.cluster.serves:  # ps tasks (and distributed_all_reduce workers)
                    return self.server.serve(self._run_flag_values())
            self.precision_lines()  # its warnings, when the header was not printed
            if p.eval:
                return eval_runner.run_eval(self.plan, self.model, self.dataset,
                                            self.session_config, wiring.eval_hooks(self.plan))
            runner = phase_runner.PhaseRunner(self.make_hooks(), self.plan)
            if p.forward_only and p.freeze_when_forward_only:
                return self._run_frozen(runner)
            cnn_util.log_fn('Generating %s model' % ('training' if self.plan.training else
                                                     'forward-only'))
            build_start = time.perf_counter()
            info = self.build_graph()
            build_secs = time.perf_counter() - build_start
            self.memory = memory_check.check_before_run(  # stops a run that would not fit
                self.plan, info.graph, _step_fetches(info), estimate_at=self._estimate_at)
            with info.graph.as_default(), self.create_session(info) as sess, \
                    data_errors.data_errors(files=info.pipeline.record_files,
                                            skipped=info.pipeline.skipped):
                cnn_util.log_fn('Initializing graph')
                restored_step = self.initialize(sess, info, runner)
                return self._run_loop(runner, sess, info, build_secs, restored_step)

    def make_bench(self, q, gpus: int) -> BenchmarkCNN:
        """This run with other Params `q` (another batch, device or cluster shape): its
        cluster's resolution kept, nothing checked again (`bench_factory`)."""
        return bench_factory(self.resolution)(q, gpus)

    def _estimate_at(self, batch_size: int) -> int:
        """Estimated peak bytes of the tightest device with another per-device batch."""
        step = planned_step.build_step(self.make_bench, self.given_params, self.plan.visible_gpus,
                                       batch_size=batch_size)
        return memory_check.estimate_for(step.plan, step.built.graph, step.built.fetches)

    def _run_frozen(self, runner) -> dict:
        """--forward_only --freeze_when_forward_only: time inference on a graph whose variables
        were turned into constants (after restoring a checkpoint, when there is one)."""
        cnn_util.log_fn('Generating forward-only model (frozen)')
        start = time.perf_counter()
        info = self.build_graph()
        with info.graph.as_default(), self.create_session(info) as sess:
            restored_step = checkpoints.restore_or_initialize(sess, info, self.params)
            frozen_info, num_nodes = frozen.freeze(sess, info, restored_step or 0)
        build_secs = time.perf_counter() - start
        cnn_util.log_fn('Froze the variables into constants (%d graph nodes)' % num_nodes)
        pipeline = frozen_info.pipeline
        with frozen_info.graph.as_default(), self.create_session(frozen_info) as sess, \
                data_errors.data_errors(files=pipeline.record_files,
                                        skipped=pipeline.skipped):
            if frozen_info.init_ops:  # the local variables: the synthetic input
                sess.run(frozen_info.init_ops)
            if pipeline.warmup_ops:
                sess.run(pipeline.warmup_ops)
            return self._run_loop(runner, sess, frozen_info, build_secs, restored_step,
                                  extra={'frozen': True})

    def _run_loop(self, runner, sess, info, build_secs, restored_step, extra=None) -> dict:
        """The phases around the timed loop (lifecycle/phase_runner.py: begin, the loop, then
        after_loop..release, or abort); then a SIGTERM's exit and the --baseline gate (not for a
        run a signal stopped: the command exits 130 or 143 for it, cli.py)."""
        def make_result(loop):
            result = timed_run.loop_result(self.plan, loop, build_secs, restored_step)
            result.update(extra or {})
            return result

        result = runner.run(sess, info, timed_run.timed_loop, make_result)
        signals.raise_if_terminated(result)  # SIGTERM, SIGHUP: after everything was saved
        if result.get('stopped_by_signal') is None:  # an interrupted run is not judged
            figure_hooks.raise_if_slower(result)  # --baseline, after the results were written
        return result

    def create_session(self, info):
        """A session on this host's devices (a cluster run connects to its server instead,
        comparing its run-defining flags with the other workers' while it waits for its peers:
        cluster/flag_check.py)."""
        if self.server is not None:
            return self.server.create_session(info.graph, self.session_config,
                                              self._run_flag_values())
        return tf1.Session(config=self.session_config)

    def initialize(self, sess, info, hooks=()) -> int | None:
        """Initialises or restores the variables (checkpoints.initialize_or_restore: the latest
        checkpoint in --train_dir, else --checkpoint_path; a cluster's chief does it for the
        cluster), then, through the phase runner, the hooks' after_initialize phase, then the
        manager's post-init ops, and primes the pipeline.

        Args:
          hooks: the run's hooks, or its lifecycle.phase_runner.PhaseRunner.

        Returns:
          The restored global step, or None when nothing was restored.
        """
        runner = (hooks if isinstance(hooks, phase_runner.PhaseRunner)
                  else phase_runner.PhaseRunner(hooks, self.plan))
        if self.server is not None:  # its post_init primes the pipeline too
            return runner.initialize(sess, info, self._initialize_task, self.server.post_init)
        restored = runner.initialize(
            sess, info, functools.partial(checkpoints.initialize_or_restore, p=self.params),
            checkpoints.post_init)
        if info.pipeline.warmup_ops:  # primes the pipeline
            sess.run(info.pipeline.warmup_ops)
        return restored

    def _initialize_task(self, sess, info) -> int | None:
        return self.server.initialize_variables(sess, info, self.params,
                                                self._run_flag_values())

    def _run_flag_values(self) -> dict:
        """This task's run-defining flags for the cluster's start-up check, each value not
        given saying where it came from (cluster/run_flags.py)."""
        return run_flags.run_flag_values(self.plan, self.given_params)

    def make_hooks(self) -> list[run_hooks.RunHook]:
        """The run hooks this run needs (lifecycle/wiring.py; a cluster task's from
        cluster/coordination.py), then the extra hooks given to the constructor."""
        is_local = (coordination.local_device_predicate(self.cluster)
                    if self.cluster is not None else None)
        hooks = wiring.make_hooks(self.plan, self.model, self.dataset, is_local_device=is_local,
                                  stored_baseline=self.stored_baseline,
                                  session_config=self.session_config)
        if self.server is not None:
            hooks += coordination.cluster_hooks(self.server)
        return hooks + self.extra_hooks

    def make_step_fn(self, sess, info) -> timed_run.Step:
        """One step: () -> (loss or None, *extra values) (lifecycle/timed_run.py)."""
        return timed_run.Step(sess, info, self.plan)

    @staticmethod
    def drain_pipeline(sess, info) -> None:
        """Empties the staging areas after the last step (lifecycle/timed_run.py)."""
        timed_run.drain_pipeline(sess, info)


def bench_factory(resolution: resolvers.Resolution, hooks=()):
    """(Params, gpus) -> a BenchmarkCNN of the run `resolution` resolved, with other Params
    (another batch, device or cluster shape): the cluster's source and description kept,
    the flags not checked again (they are the checked run's, changed by the caller). The
    command's `make_bench` for the dry run and the scaling plan, and `BenchmarkCNN.make_bench`
    for the memory check's advice; preflight/planned_step.build_step builds their steps."""
    def make_bench(q, gpus: int) -> BenchmarkCNN:
        return BenchmarkCNN(q, gpus=gpus, hooks=hooks, checked=usage.CheckedRun(
            resolvers.Resolution(q, resolution.source, resolution.description)))
    return make_bench


def _step_fetches(info) -> list:
    """What one step runs: the train op, the loss and the input pipeline's step ops."""
    return [info.train_op, info.loss, *info.pipeline.step_ops]
