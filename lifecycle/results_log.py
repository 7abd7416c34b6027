"""Results for machines and people: the JSON record (--benchmark_log_dir), the plot (--plot_file).

`run()` returns a dict and --benchmark_log_dir writes that same dict as JSON, so a script gets
the same structure either way. Keys: a training, forward-only and --eval run's result has
every one of them (RESULT_KEYS; null where one does not apply to the mode or the flags;
tests/test_results_keys.py checks the three modes' key sets against RESULT_KEYS, and
tests/test_library_api.py that every top-level key a training and an --eval run write is
named here, and the keys of eval, host_load and utilisation):

    format (the results format, 2: metrics/configuration.py RESULTS_FORMAT; a JSON without
    it is format 1, written before 'mobilenet' meant MobileNet v2: its 'mobilenet' ran
    MobileNet v1 and reads as 'mobilenet_v1'; every JSON write_json writes has it),
    model, mode ('training', 'forward-only' or 'evaluation': the original's names, with
    'forward-only' for its 'forward only'), benchmark_test_id (--benchmark_test_id, or null),
    params {flag: value} (every flag, resolved), given_flags {flag: value} (those the user
    gave at another value than the default, as given: no cluster fields or values the run
    worked out filled in; null when not known), plan {the run plan's resolved values:
    devices, dtypes, threads, graph choices, ...: run_plan.RunPlan.summary},
    environment {tf_version, tf_cnn_benchmarks_version (this tool's version; absent in a JSON
                 written before it was kept), python_version, platform, hostname,
                 cpu_model, cpu_flags, cpu_cores, gpus [names], onednn} (hardware/machine.py),
    images_per_sec (global, timed steps), num_steps, elapsed_secs, step_times [s],
    graph_build_secs (building the step's graph, or the evaluation's),
    between_steps_secs, after_last_step_secs (the hooks' time between timed steps, and after
    the last one: neither in elapsed_secs; null in an evaluation),
    losses (each timed step's loss, the step lines' loss column: a forward-only step's is its
    forward pass's cross entropy; [] in an evaluation), warmup_losses,
    steps [{step, step_time_secs, images_per_sec (that step alone), mean_images_per_sec (the
    step line's figure: the mean over timed steps 1..step), loss, top_1_accuracy,
    top_5_accuracy (the step line's accuracy columns, null where not printed)}]
    (step_records),
    global_batch_size, per_device_batch_size, num_devices, num_workers, image_size,
    restored_step (int or null), checkpoint_path (null without --train_dir), checkpoints
    [the paths this run saved] (null when it saves none: without --train_dir, forward-only,
    --eval), global_step (an evaluation's: the global step evaluated last),
    stopped_at_top_1_accuracy (with evaluations during training: whether one reached
    --stop_at_top_1_accuracy; else null), frozen (forward-only: whether
    --freeze_when_forward_only froze the weights; else null), summary_dir (where this run's
    TensorBoard summaries went: --train_dir's, or an --eval run's evaluations' folder; null
    when none were written), graph_file, trace_file, tfprof_file, partition_graph_files,
    plot_file (the files --graph_file, --trace_file, --tfprof_file,
    --partitioned_graph_file_prefix and --plot_file wrote, null without them),
    step_breakdown (--print_step_breakdown's traced steps, else null:
    figure_hooks.StepBreakdownHook),
    eval (null, or {top_1, top_5 (fractions in [0, 1]), images_per_sec, num_examples,
          num_batches (run), planned_batches, partial (an --eval stopped by a signal:
          eval_stop.py), global_step, checkpoint_path, subset, elapsed_secs, batch_times,
          host_load, skipped_records (records --skip_corrupt_records skipped, null without
          it), skipped_left_out (those of them in shards left out at start-up), passes
          (planned passes over the subset), images_per_sec_without_first (the figure
          without the first, set-up batch; null with one batch), synthetic (true on
          synthetic data, whose random labels make the accuracy meaningless)}:
          lifecycle/eval_runner.py), evals [same],
    skipped_records (with --skip_corrupt_records, or in an --eval run's result: lifecycle/
    skip_report.py; else null), stopped_early, stopped_in_warmup (a signal stopped the run
    before its timed steps: nothing was timed), stopped_by_signal (null, 'SIGINT', 'SIGTERM'
    or 'SIGHUP': what stopped the timed loop early; a signal after it stops nothing),
    stopped_by_error
    (null, or the error that stopped the timed loop early: a failed output, 'the failed
    checkpoint save at global step 20', lifecycle/checkpoints.py; a training step's
    non-finite loss, 'the non-finite loss (nan) at step 3' or '... at warm-up step 2',
    lifecycle/training_loop.py: that step is in neither the timed steps nor the warm-up
    losses), results_file (the JSON's own path, absolute: `absolute`),
    working_dir (the run's working folder, absolute: a relative path among the flags, as
    given in params and given_flags, is read from it; null when the folder no longer existed),
    finished_utc ('YYYY-MM-DDTHH:MM:SS.ffffffZ', when the run finished: lifecycle/results_db.py),
    precision (a training or forward-only run: the header's precision facts,
    graph/precision_block.facts; null in an evaluation),
    the original tf_cnn_benchmarks' keys (`original_stats`): average_wall_time (seconds per
    step), last_average_loss, top_1_accuracy, top_5_accuracy (null without an evaluation)

and the figures of the total block (metrics/utilisation.py):

    utilisation {dtype, forward_flops_per_image, flops_multiplier (3 training, 1 inference),
                 flops_per_image, model_flops_per_sec, peak_flops_per_sec (null: unknown),
                 peak_source, measured_now, fraction_of_peak (null: unknown; at most 1),
                 above_peak (the rate was above the peak); a CPU's also step_precision,
                 peak_measured_utc, peak_others_fraction, peak_spread, peak_kernel (its
                 calibration record: hardware/calibration.py)},
    input {input_share, sync_share (fractions of the traced step's wall time),
           compute_images_per_sec, input_bound, breakdown {wall_ms, input_ms, compute_ms,
           sync_ms, overhead_ms, transfer_bytes}, method (how they were measured, or why
           not)} (figures null when nothing was traced),
    memory {allocators {name: bytes} (traced step), gpu_peak_bytes {GPU:i: bytes},
            process_peak_rss_bytes},
    latency_ms (null in training, and when the only batch was the set-up one) {p50, p90,
               p99 (null with one timed batch: mean is its time), mean, count, batch_size,
               set_up_left_out (always there: true when its first batch was left out, an
               --eval's, a forward-only run's without warm-up steps; else false)},
    baseline (null without --baseline) {file, baseline_images_per_sec, images_per_sec, ratio,
             p_slower, p_faster, verdict, reason, fail_on_slower_pct, failed, judged,
             num_steps, left_out, changes} (metrics/baseline.py compare)
    host_load (null when the timed part did not run) {cores, intra_threads, cpus_allowed,
             host_cpus (the CPUs the host has, /proc/stat's), wall_secs, load_average_before,
             load_average_after, others_cpu_secs, others_cores, others_fraction,
             cluster_tasks, cluster_processes, cluster_cpu_secs, cluster_cores,
             cluster_fraction, outside_fraction,
             steal_secs, steal_fraction, representative, reasons, warning, error,
             others_limit, steal_limit, method, warmup {wall_secs, load_average_before,
             others_fraction, cluster_fraction, outside_fraction, error: the set-up before
             the first batch}, stall (null unless the process was stopped or paused during
             the timed steps; not in an --eval's) {how ('SIGCONT' or 'long steps'),
             continued, stopped_secs, steps, longest_step_secs, median_step_secs,
             images_per_sec_without}} (metrics/host_load.py; stall: metrics/stall.py)

(Keys only some results add, outside RESULT_KEYS: aborted_by_signal, only in the results of
a run a second signal aborted after its timed loop: written before the process exited,
without the final checkpoint, lifecycle/signals.py; late_signal, the signal that reached a
complete run after its timed steps (its exit status: signals.exit_status); loss_scale,
automatic loss scaling's,
lifecycle/precision_report.py; a cluster task's task, total_line_images_per_sec and, the
chief's, cluster_images_per_sec and the figures beside it, cluster/coordination.py.)

Every non-finite float (a forward-only step's loss of diverged weights, in 'losses',
'steps' and 'last_average_loss'; any other, at any depth) is written as null, so the file is
strict JSON (`finite_for_json`; the step lines print nan; `run()` returns the floats).

A training run a non-finite loss stopped writes its JSON as a stopped run (stopped_by_error,
above), then fails; a run that fails otherwise (bad data) writes no JSON and no plot.
"""

from __future__ import annotations

import datetime
import json
import math
import os

import numpy as np

from .. import cnn_util, package_info
from ..hardware import machine
from ..history import records
from ..metrics import configuration
from ..runtime import file_systems
from . import run_hooks

#: The keys of every result a training, forward-only or --eval run returns and writes as JSON,
#: whatever its flags and mode: a key that does not apply holds null (None). (Only some results
#: add others: a salvaged one's aborted_by_signal, automatic loss scaling's loss_scale, a
#: cluster task's keys: task, cluster_images_per_sec, ...; docs/training-lifecycle.md.)
RESULT_KEYS = (
    'format', 'model', 'mode', 'benchmark_test_id', 'params', 'given_flags', 'plan',
    'environment', 'images_per_sec', 'num_steps', 'elapsed_secs', 'step_times',
    'graph_build_secs', 'between_steps_secs', 'after_last_step_secs', 'losses',
    'warmup_losses', 'steps', 'global_batch_size', 'per_device_batch_size', 'num_devices',
    'num_workers', 'image_size', 'restored_step', 'checkpoint_path', 'checkpoints',
    'global_step', 'eval', 'evals', 'stopped_at_top_1_accuracy', 'skipped_records',
    'stopped_early', 'stopped_in_warmup', 'stopped_by_signal', 'stopped_by_error',
    'results_file', 'working_dir', 'finished_utc', 'precision', 'frozen', 'summary_dir',
    'graph_file', 'trace_file', 'tfprof_file', 'partition_graph_files', 'plot_file',
    'step_breakdown', 'average_wall_time', 'last_average_loss', 'top_1_accuracy', 'top_5_accuracy',
    'utilisation', 'input', 'memory', 'latency_ms', 'baseline', 'host_load')


def complete_keys(result: dict) -> dict:
    """Adds each of RESULT_KEYS that `result` lacks, as None (`finished_utc` excepted: the
    results database's hook stamps it, results_db.py), so that every mode's result has the
    same keys; returns `result`."""
    for key in RESULT_KEYS:
        if key != 'finished_utc':
            result.setdefault(key, None)
    return result


def common_fields(plan) -> dict:
    """The keys every result has, from the run's run_plan.RunPlan: 'params' are the resolved
    ones (the per-device batch and image size the run used, never 0), 'given_flags' those the
    user gave (RunPlan.given_flags), 'plan' the other resolved values (devices, dtypes, steps,
    examples per epoch, ...)."""
    p = plan.params
    return {
        configuration.FORMAT_KEY: configuration.RESULTS_FORMAT,  # 'format': 2
        'model': p.model,
        'mode': plan.mode,  # 'training', 'forward-only' or 'evaluation', as the header says
        'benchmark_test_id': p.benchmark_test_id,  # the user's label, or None
        'params': {k: (list(v) if isinstance(v, (list, tuple)) else v)
                   for k, v in p._asdict().items()},
        'plan': plan.summary(),
        'given_flags': plan.given_flags,
        'environment': machine.environment(),
        'global_batch_size': plan.global_batch_size,
        'per_device_batch_size': plan.per_device_batch_size,
        'num_devices': len(plan.devices),
        'num_workers': plan.num_workers,
        'image_size': plan.image_size,
        'working_dir': working_dir(),  # the user's relative flags are relative to it
    }


def working_dir() -> str | None:
    """The process's working folder (absolute), or None when it no longer exists (removed
    after the shell entered it)."""
    try:
        return os.getcwd()
    except OSError:
        return None


def absolute(path: str | None) -> str | None:
    """A local `path` the run makes and prints for later use (the results JSON, the
    results database) as an absolute, normalised path (os.path.abspath: '../logs/./x/..' ->
    '/home/u/logs'), so a command that names it works from any folder; a remote path
    (gs://, runtime/file_systems.py), None, and a relative path whose working folder no
    longer exists are returned as they are."""
    if not path or file_systems.is_remote(path):
        return path
    try:
        return os.path.abspath(path)
    except OSError:  # the working folder was removed
        return path


def timed_nothing(result: dict) -> bool:
    """True for a run's result that has no images/sec: stopped in the warm-up
    ('stopped_in_warmup'), or a cluster's worker stopped at its first timed step
    ('images_per_sec' None: lifecycle/timed_run.py loop_result). The rule is
    history/records.py's, which ingest applies to a results JSON too."""
    return records.timed_nothing(result)


def step_records(step_times, losses, images_per_step: int, accuracies=None,
                 ewma_alpha: float | None = None, line_images: int | None = None) -> list[dict]:
    """Per timed step: {'step' (1-based), 'step_time_secs', 'images_per_sec' (this step
    alone: images_per_step / its seconds; None for a step of no measurable time),
    'mean_images_per_sec' (the step line's figure, the mean over timed steps 1..step, as the
    line printed after that step shows it, or would: cnn_util.running_means,
    --display_perf_ewma `ewma_alpha` included; of `line_images` a step, the images the step
    line counts, this task's in a cluster; default `images_per_step`), 'loss' (the step
    line's loss column; a forward-only step's is its forward pass's), 'top_1_accuracy',
    'top_5_accuracy' (the step line's accuracy columns, fractions of the step's batch: with
    --print_training_accuracy and in a forward-only run; None otherwise)}. `accuracies`: per
    timed step, (top-1, top-5), or None."""
    records = []
    means = cnn_util.running_means(step_times, line_images or images_per_step, ewma_alpha)
    for i, seconds in enumerate(step_times):
        loss = losses[i] if i < len(losses) else None
        top = (tuple(float(v) for v in accuracies[i][:2])
               if accuracies is not None and i < len(accuracies) else (None, None))
        records.append({'step': i + 1, 'step_time_secs': seconds,
                        'images_per_sec': images_per_step / seconds if seconds > 0 else None,
                        'mean_images_per_sec': means[i],
                        'loss': loss, 'top_1_accuracy': top[0], 'top_5_accuracy': top[1]})
    return records


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError('not JSON serializable: %r' % type(value).__name__)


def finite_for_json(value):
    """`value` with every non-finite float (NaN, Inf, -Inf; Python's or numpy's, in dicts,
    lists and tuples at any depth, and in numpy arrays) replaced by None, so that strict JSON
    (no NaN or Infinity tokens: JavaScript's JSON.parse, Python's json with parse_constant
    raising) reads what `write_json` writes: a forward-only run of diverged weights has
    `"loss": null` where its step lines print nan. numpy scalars and arrays become Python's;
    other values are returned as they are (the dict given is not changed: a copy is made)."""
    if isinstance(value, dict):
        return {key: finite_for_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_for_json(item) for item in value]
    if isinstance(value, np.ndarray):
        return finite_for_json(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def write_json(result: dict, directory: str, prefix: str = 'tf_cnn_benchmarks',
               quiet: bool = False) -> str:
    """Writes `result` as `<directory>/<prefix>_<model>_<UTC time>.json` atomically (the dry
    run's prefix is 'dry_run', so that `results ingest` finds no run in it), with its results
    format ('format', metrics/configuration.py RESULTS_FORMAT) where `result` has none, and
    says so in one line (`Results written to PATH`) unless `quiet`.

    A remote `directory` (gs://, ram://: runtime/file_systems.py) gets the file written in one
    piece through TensorFlow's file system (an object appears when complete).

    Returns:
      The file's path, absolute for a local one (`absolute`; also stored in
      result['results_file'] before writing; None again when the write fails).

    Raises:
      cnn_util.BenchmarkError: the file cannot be written (a full disk, ...); no partial file is
        left behind, nor a folder this call made for it.
    """
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime('%Y%m%dT%H%M%S.%fZ')
    path = absolute(os.path.join(directory, '%s_%s_%s.json' % (prefix, result['model'], stamp)))
    result['results_file'] = path
    result.setdefault(configuration.FORMAT_KEY, configuration.RESULTS_FORMAT)
    # Strict JSON: a non-finite float is written as null (finite_for_json), and allow_nan=False
    # makes any that slipped through an error here rather than a file strict readers refuse.
    # The text is made before any folder, so a result that cannot be written makes none.
    text = json.dumps(finite_for_json(result), indent=1, default=_json_default, allow_nan=False)
    made = _missing_folders(directory)
    try:
        file_systems.makedirs(directory)
    except OSError as e:
        result['results_file'] = None
        _remove_empty(made)
        raise cnn_util.BenchmarkError('cannot create the folder %s for the results JSON: %s'
                                      % (directory, e.strerror or e)) from None
    try:
        if file_systems.is_remote(path):
            try:
                file_systems.write_remote(path, text + '\n')
            except OSError as e:
                raise cnn_util.BenchmarkError('cannot write %s: %s' % (
                    path, cnn_util.error_summary(e))) from None
        else:
            _write_local(path, text + '\n')
    except cnn_util.BenchmarkError:
        result['results_file'] = None
        _remove_empty(made)
        raise
    if not quiet:
        cnn_util.log_fn('Results written to %s' % path)
    return path


def _write_local(path: str, text: str) -> None:
    """Writes `text` to the local `path` through a temporary file beside it, renamed
    (runtime/file_systems.write_local).

    Raises:
      cnn_util.BenchmarkError: a full disk, ...: the temporary file is removed.
    """
    try:
        file_systems.write_local(path, text)
    except OSError as e:  # a full disk: one error line, no partial file left
        raise cnn_util.BenchmarkError('cannot write %s: %s' % (path, e.strerror or e)) from None


def _missing_folders(directory: str) -> list[str]:
    """The local folders `makedirs(directory)` would make, deepest first ([] for a remote
    path or one that exists)."""
    if file_systems.is_remote(directory):
        return []
    missing, folder = [], os.path.abspath(directory)
    while not os.path.exists(folder) and os.path.dirname(folder) != folder:
        missing.append(folder)
        folder = os.path.dirname(folder)
    return missing


def _remove_empty(folders: list[str]) -> None:
    """Removes each of `folders` (deepest first) that exists and is empty."""
    for folder in folders:
        try:
            os.rmdir(folder)
        except OSError:
            pass


def check_plot_available() -> None:
    """Raises cnn_util.BenchmarkError when matplotlib (needed by --plot_file) is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise cnn_util.BenchmarkError(
            '--plot_file needs matplotlib, which is not installed: pip install matplotlib, or '
            '%s; or drop --plot_file' % package_info.install_hint('plot')) from None


def write_plot(result: dict, path: str) -> str:
    """Writes a PNG of images/sec (and the loss, when there is one) per timed step.

    Raises:
      cnn_util.BenchmarkError: matplotlib is missing, or the file cannot be written (no
        partial file is left).
    """
    check_plot_available()
    import matplotlib
    matplotlib.use('Agg', force=True)
    from matplotlib import pyplot as plt
    steps = result.get('steps') or []
    xs = [s['step'] for s in steps]
    rates = [s['images_per_sec'] for s in steps]
    losses = [s['loss'] for s in steps]
    has_loss = any(x is not None for x in losses)
    fig, axes = plt.subplots(2 if has_loss else 1, 1, sharex=True, figsize=(8, 6 if has_loss
                                                                            else 3.5))
    axes = np.atleast_1d(axes)
    axes[0].plot(xs, rates, color='tab:blue')
    axes[0].set_ylabel('images/sec')
    axes[0].set_title('%s, %s: %.1f images/sec' % (result['model'], result.get('mode', ''),
                                                   result.get('images_per_sec', 0.0)))
    if has_loss:
        axes[1].plot(xs, losses, color='tab:red')
        axes[1].set_ylabel('total loss')
    axes[-1].set_xlabel('timed step')
    fig.tight_layout()
    if file_systems.is_remote(path):  # drawn in memory, written through TensorFlow
        import io
        buffer = io.BytesIO()
        fig.savefig(buffer, format='png', dpi=80)
        plt.close(fig)
        try:
            file_systems.write_remote(path, buffer.getvalue())
        except OSError as e:
            raise cnn_util.BenchmarkError('cannot write %s: %s' % (
                path, cnn_util.error_summary(e))) from None
        cnn_util.log_fn('Plot written to %s' % path)
        return path
    directory = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(directory, exist_ok=True)
        fig.savefig(path, format='png', dpi=80)
    except OSError as e:  # a full disk: no partial file left (a link's target, not the link)
        if os.path.isfile(path):
            os.remove(file_systems.write_target(path))
        raise cnn_util.BenchmarkError('cannot write %s: %s' % (path, e.strerror or e)) from None
    finally:
        plt.close(fig)
    cnn_util.log_fn('Plot written to %s' % path)
    return path


def original_stats(result: dict) -> dict:
    """The keys the original tf_cnn_benchmarks' `BenchmarkCNN.run()` returned, from `result`
    (a training, forward-only or --eval run's), for scripts written against it. Each key is
    always present here (None where the original left it out):

      num_workers, num_steps, images_per_sec: as they are in `result` already (num_steps: this
        process's timed steps, or the last evaluation's batches; the original's summed every
        worker's steps in a cluster with a global step watcher);
      average_wall_time: seconds per timed step (elapsed_secs / num_steps; per batch in an
        evaluation), None when nothing was timed (the original: 0);
      last_average_loss: the last timed step's total loss (the step lines' figure: averaged
        over the towers, weight decay included; a forward-only step's is its forward pass's,
        where the original gave 0.0), None without one (nothing timed: absent there);
      top_1_accuracy, top_5_accuracy: fractions in [0, 1] of the last evaluation (--eval, or
        the last evaluation during training; the original averaged the batches' accuracies),
        None without an evaluation.
    """
    steps, elapsed = result.get('num_steps') or 0, result.get('elapsed_secs')
    losses = [loss for loss in result.get('losses') or [] if loss is not None]
    last_eval = result.get('eval') or {}
    return {
        'num_workers': result.get('num_workers'),
        'num_steps': result.get('num_steps'),
        'images_per_sec': result.get('images_per_sec'),
        'average_wall_time': (elapsed / steps if steps and elapsed is not None
                              and not timed_nothing(result) else None),
        'last_average_loss': float(losses[-1]) if losses else None,
        'top_1_accuracy': last_eval.get('top_1'),
        'top_5_accuracy': last_eval.get('top_5'),
    }


class OriginalStatsHook(run_hooks.RunHook):
    """Adds the original's keys (`original_stats`) to the result in phase `end`: after the
    evaluations during training set 'eval' (their hook comes first), before `report` writes
    the JSON; and every key of RESULT_KEYS the run did not set, as None (`complete_keys`)."""

    def end(self, result):
        result.update(original_stats(result))
        complete_keys(result)


class ResultsLogHook(run_hooks.RunHook):
    """Writes the result dict as JSON into --benchmark_log_dir (phase `report`: every hook's
    keys are in it; or earlier, by a second signal: signals.SignalHook.salvage)."""

    output = 'the results JSON'
    output_flag = '--benchmark_log_dir'

    def __init__(self, directory: str):
        self.directory = directory
        self.path = None

    def report(self, result):
        complete_keys(result)  # also a salvaged result's (signals.py), before `end`
        result.setdefault('finished_utc', records.utc_text())
        self.path = write_json(result, self.directory)

    def written(self, result):
        return ['the results JSON %s' % self.path] if self.path else []


class PlotHook(run_hooks.RunHook):
    """Writes --plot_file (phase `report`; its name is in the result from phase `end`); none
    for a run that timed nothing (`timed_nothing`)."""

    output = 'the plot'
    output_flag = '--plot_file'

    def __init__(self, path: str):
        self.path = path
        self.done = False

    def end(self, result):
        result['plot_file'] = None if timed_nothing(result) else self.path

    def report(self, result):
        if timed_nothing(result):
            cnn_util.log_fn('No plot written to %s: nothing was timed' % self.path)
            return
        write_plot(result, self.path)
        self.done = True

    def written(self, result):
        return ['the plot %s' % self.path] if self.done else []
