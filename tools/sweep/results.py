"""The results file of a sweep (JSON Lines) and the statistics the report and compare share.

`<output_dir>/results.jsonl` holds one JSON object per line, one per finished run, appended
(flushed and fsync'ed) as soon as the run ends. Fields of a record:

    format         the results format, 2 (metrics/configuration.py RESULTS_FORMAT); a record
                   without it is format 1, written before 'mobilenet' meant MobileNet v2: it
                   is read (`load_records`) with its config's model and key as the network it
                   ran, 'mobilenet' -> 'mobilenet_v1' (argv and params stay as run), so that
                   compare never matches it with a run of today's 'mobilenet', and a resumed
                   sweep runs today's again
    key            'model=trivial|batch_size=16|num_gpus=2|precision=fp32|
                    variable_update=parameter_server|repeat=0' (configuration + repeat index)
    config         {model, batch_size (per device), num_gpus (devices), precision (fp32, fp16
                    or bf16), variable_update, repeat (0-based index: repeat 1 on
                    screen and in report.md is 0 here, and in the run folder's -r0)}
    extra_flags    the flags passed to every run of the sweep, e.g. ['--device=cpu']
    argv           the run's full tf_cnn_benchmarks argument list
    status         'ok', 'failed' (non-zero exit, no results JSON, or --run_timeout_secs
                   reached before the run saved a result with timed steps), 'stopped'
                   (--run_timeout_secs reached, and the run's clean stop saved its result:
                   its figures cover the steps it ran, as its row in the results database,
                   'stopped at 327 of 100000', does; a resume does not rerun it,
                   --retry_failed does) or 'interrupted' (stopped by Ctrl-C/SIGTERM/SIGHUP: not
                   done, a resume reruns it)
    exit_status    the process's exit status (negative: killed by that signal)
    error          the run's last `error:` line (None when it succeeded); for a run stopped
                   at --run_timeout_secs, why and where ('timed out after 15 s
                   (--run_timeout_secs), at 327 of 100000 timed steps; ...')
    images_per_sec total images/sec of the run (all devices), None when it failed (a stopped
                   run's: over the steps it ran)
    global_batch_size  images per step over all devices
    step_time_secs {median, min, max, mean, stdev, count} over the timed steps, in seconds
                   (history/records.py step_time_summary, which the database reads back)
    params         every resolved flag of the run (from its results JSON; None when it failed)
    figures        {model_flops_per_sec, fraction_of_peak, peak_source, input_share,
                    compute_images_per_sec, input_bound, peak_rss_bytes, latency_p50_ms,
                    latency_p99_ms} from the run's results JSON (tools/sweep/figures.py;
                    None when it failed, a figure None when the run did not measure it)
    host_load      {cores, others_cores, others_fraction, steal_fraction, load_average_before,
                    load_average_after, representative, reasons, others_limit, steal_limit, error,
                    cluster_fraction (a cluster task: its other tasks' share here)}:
                    what else used the run's CPUs during its timed part (the run's
                    result['host_load'], metrics/host_load.py; tools/sweep/host_load.py; None
                    when it failed or its tf_cnn_benchmarks did not measure it)
    environment    {tf_version, tf_cnn_benchmarks_version (absent in older files),
                    python_version, cpu_model, cpu_cores, gpus [names] (None when unknown),
                    onednn ('on'/'off'), hostname, platform}
    started_utc    ISO 8601 start time; wall_secs: the process's wall time in seconds
    run_dir        folder of the run's stdout.log, stderr.log and results JSON (relative to the
                   output directory)
    no_space       true for a failed run that failed while the disk was full (its error says
                   so, or its folder's disk had no space left: disk.py): not its
                   configuration's failure, so a resume runs it again (false, or absent in
                   older files, otherwise)

A line that is not valid JSON (a sweep killed in the middle of a write) is skipped on reading;
for a key written several times (a rerun), the last record wins.
"""

from __future__ import annotations

import json
import os
import statistics

from tf_cnn_benchmarks import cnn_util  # absolute: `python -m tools.sweep`
from tf_cnn_benchmarks.metrics import configuration

AXES = ('model', 'batch_size', 'num_gpus', 'precision', 'variable_update')
FINAL_STATUSES = ('ok', 'failed', 'stopped')
RESULTS_NAME = 'results.jsonl'


def config_key(config: dict) -> str:
    """The record key of one run: the axes' values and the repeat index, '|'-separated."""
    return '|'.join('%s=%s' % (name, config[name]) for name in AXES + ('repeat',))


def config_of(record: dict) -> tuple:
    """The configuration of a record without its repeat: a tuple in AXES order."""
    return tuple(record['config'][name] for name in AXES)


def read_as_today(record: dict) -> dict:
    """`record` by today's model names: a format-1 record (no 'format') of a renamed model
    (metrics/configuration.py stored_model) with its old network's name in its config and key
    ('model=mobilenet_v1|...'); any other record as it is."""
    config = record.get('config') if isinstance(record, dict) else None
    if not isinstance(config, dict) or not all(n in config for n in AXES + ('repeat',)):
        return record
    model = configuration.stored_model(config['model'], configuration.format_of(record))
    if model == config['model']:
        return record
    config = dict(config, model=model)
    return dict(record, config=config, key=config_key(config))


def describe(config: tuple) -> str:
    """A short label: 'trivial bs=16 gpus=2 fp32 parameter_server'."""
    model, batch, gpus, precision, update = config
    return '%s bs=%s gpus=%s %s %s' % (model, batch, gpus, precision, update)


def results_path(path: str) -> str:
    """The results file of an output directory (or `path` itself when it is a file)."""
    return path if os.path.isfile(path) else os.path.join(path, RESULTS_NAME)


def append_record(path: str, record: dict) -> None:
    """Appends one record as a line and forces it to disk (a crash afterwards keeps it).

    Raises:
      OSError: the line cannot be written (a full disk), with `path` as its filename (a torn
        line is skipped on reading).
    """
    line = json.dumps(record, sort_keys=True, allow_nan=True)
    try:
        with open(path, 'a', encoding='utf-8') as f:
            f.write(line + '\n')
            f.flush()
            os.fsync(f.fileno())
    except OSError as e:
        raise OSError(e.errno, e.strerror, path) from None


def load_records(path: str) -> tuple[list[dict], int]:
    """Reads a results file; returns (the last record of each key in file order, bad lines),
    each by today's model names (`read_as_today`).

    A missing file gives ([], 0).
    """
    latest: dict[str, dict] = {}
    bad = 0
    if not os.path.exists(path):
        return [], 0
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            if not line.strip():
                continue
            try:
                record = read_as_today(json.loads(line))
                key = record['key']
            except (ValueError, KeyError, TypeError):
                bad += 1
                continue
            latest.pop(key, None)  # re-insert: a rerun moves to the end
            latest[key] = record
    return list(latest.values()), bad


def done_keys(records: list[dict], retry_failed: bool = False) -> set[str]:
    """Keys a resumed sweep skips: status 'ok', and 'failed' and 'stopped' unless
    retry_failed; never a run that failed for lack of space (`no_space`)."""
    statuses = ('ok',) if retry_failed else FINAL_STATUSES
    return {r['key'] for r in records
            if r.get('status') in statuses and not r.get('no_space')}


def resume_line(out_dir: str, records: list[dict], planned: set, done: set, todo: int,
                retry_failed: bool) -> str | None:
    """The line of a resume (None when nothing is skipped or run again): the runs skipped,
    those of them not ok (which --retry_failed runs again), and those that run again because
    they failed for lack of space (`no_space`).

    Args:
      out_dir: the sweep's folder; records: its records (`load_records`); planned: the keys of
        this sweep's runs; done: the keys skipped (`done_keys`); todo: how many runs run.
    """
    again = [r for r in records if r['key'] in planned and r.get('no_space')
             and r.get('status') == 'failed' and r['key'] not in done]
    if todo == len(planned) and not again:
        return None
    skipped = [r for r in records if r['key'] in planned and r['key'] in done]
    line = 'resuming: %d of %d runs already done in %s are skipped' % (
        len(planned) - todo, len(planned), results_path(out_dir))
    if not retry_failed and any(r['status'] != 'ok' for r in skipped):
        line += ' (%s: --retry_failed runs them again)' % status_counts(skipped)
    if again:
        line += '; %s that failed for lack of disk space %s again' % (
            cnn_util.counted(len(again), 'run'), 'runs' if len(again) == 1 else 'run')
    return line


def status_counts(records: list[dict]) -> str:
    """'1 failed, 2 stopped': the records not ok, by status."""
    counts: dict[str, int] = {}
    for r in records:
        if r['status'] != 'ok':
            counts[r['status']] = counts.get(r['status'], 0) + 1
    return ', '.join('%d %s' % (n, status) for status, n in counts.items())


def not_done_line(failed: list[dict], total: int, out_dir: str) -> str:
    """The error line's text at the end of a sweep with runs not ok: '1 of 4 runs of this
    sweep did not end ok (1 failed): see "Runs not done" in runs/a/report.md; ...'."""
    return ('%d of %d runs of this sweep did not end ok (%s): see "Runs not done" in %s; '
            '--retry_failed runs the failed and stopped ones again' % (
                len(failed), total, status_counts(failed), os.path.join(out_dir, 'report.md')))


def sort_key(values: tuple) -> tuple:
    """Orders configurations with numbers as numbers (batch 8 before 16) and text as text."""
    return tuple((0, v, '') if isinstance(v, int) else (1, 0, str(v)) for v in values)


class Stats:
    """The images/sec of a configuration's successful repeats.

    Attributes:
      values: images/sec of each repeat, in run order.
      median, low, high: median, minimum and maximum of the values (images/sec).
      noise: (high - low) / 2 / median, the half-range as a fraction of the median (0.0 for
        one repeat: no estimate, see `n`).
      n: number of repeats.
    """

    def __init__(self, values: list[float]):
        if not values:
            raise ValueError('Stats needs at least one value')
        self.values = list(values)
        self.n = len(values)
        self.median = statistics.median(values)
        self.low, self.high = min(values), max(values)
        self.noise = (self.high - self.low) / 2 / self.median if self.median else 0.0

    def __repr__(self):
        return 'Stats(%r)' % (self.values,)


def config_stats(records: list[dict]) -> dict[tuple, Stats]:
    """{configuration: Stats} over the records with status 'ok'."""
    values: dict[tuple, list[float]] = {}
    for record in records:
        if record.get('status') == 'ok' and record.get('images_per_sec') is not None:
            values.setdefault(config_of(record), []).append(float(record['images_per_sec']))
    return {config: Stats(v) for config, v in values.items()}


def scaling_efficiency(stats: dict[tuple, Stats], config: tuple) -> float | None:
    """images/sec on N devices / (N x images/sec on 1 device), same model, per-device batch,
    precision and variable_update (medians of the repeats); None without both figures."""
    model, batch, gpus, precision, update = config
    one = stats.get((model, batch, 1, precision, update))
    this = stats.get(config)
    if one is None or this is None or not one.median:
        return None
    return this.median / (int(gpus) * one.median)

