"""What the results database keeps of one run: a row made from a run's result dict (a run's
own record, or its results JSON) or from a sweep's results.jsonl record.

A row's fields (the columns of the `runs` table, history/store.py):

    content_key   sha256 of what the run measured (`content_key`): the same run reached
                  twice (recorded by the run, then its JSON or sweep folder ingested) is one row
    run_utc       when the run finished, 'YYYY-MM-DDTHH:MM:SS.ffffffZ' (orders a series)
    source        'run' (recorded by the run), 'sweep DIR' or 'json FILE' (ingested)
    label         the run's --label, else the ingest's --label, else None
    config_key    the configuration (`config_key`): 'model=resnet50|mode=training|...', and
                  '|cpus_allowed=N' where the run recorded its allowed CPUs
    model (the network it ran by today's names: a format-1 result or sweep record of a renamed
    model as its old network's today's name, 'mobilenet' -> 'mobilenet_v1',
    metrics/configuration.py stored_model; the content key keeps the name recorded),
    mode, precision ('fp32', 'fp16', 'bf16'), batch_size (per device), num_devices,
    num_workers, variable_update, device ('cpu'/'gpu'), data ('synthetic', 'imagenet',
    'cifar10'), image_size: the configuration's parts
    hostname, tf_version, cpu_model, cpu_flags (space-separated), gpus (comma-separated, ''
    none, None unknown), onednn: the environment's parts most filtered on
    images_per_sec   the run's total (a cluster's chief: the cluster's total)
    global_batch_size, num_steps
    step_time_median, step_time_min, step_time_max, step_time_mean, step_time_stdev (seconds)
    model_flops_per_sec, fraction_of_peak, input_share, peak_rss_bytes, latency_p50_ms,
    latency_p90_ms, latency_p99_ms: the total block's headline figures (None: not measured;
                      p90 also for a run recorded before schema 7 whose figures lacked it)
    top_1_accuracy, top_5_accuracy  fractions in [0, 1] of the run's last evaluation (an
                      --eval run's, or a training run's last evaluation during training:
                      result['eval'] top_1, top_5, lifecycle/eval_runner.py); None without
                      one, on synthetic data (random labels: no real accuracy), for a sweep
                      record's, and for a run recorded before schema 6
    params_json       every resolved flag, {name: value}
    given_flags_json  the flags the user gave at another value than the default, {name:
                      value} (a result's 'given_flags'); None for a run recorded before they
                      were kept, or a sweep record's (history/run_flags.py derives them)
    environment_json  the whole environment (hardware/machine.py environment())
    figures_json      the total block: {'utilisation', 'input', 'memory', 'latency_ms'} of a
                      result dict, or a sweep record's flat 'figures' when its JSON is gone;
                      and when the run recorded them, 'host_load' (result['host_load'],
                      metrics/host_load.py; a sweep record's subset) and 'timed_steps'
                      {'run', 'planned'} (metrics/clean_runs.py planned_steps);
                      'skipped_records' of a run with --skip_corrupt_records;
                      'stopped_by_signal' of a run a signal stopped, and an evaluation's
                      'partial' (stopped before its last batch: its accuracy is of the
                      batches scored), recorded since they were kept (no schema change:
                      the column is JSON); 'stopped_by_error' and 'partial' true of a
                      training run a failed output or a non-finite loss stopped ('the failed
                      checkpoint save at global step 20': lifecycle/checkpoints.py; 'the
                      non-finite loss (nan) at step 3': lifecycle/training_loop.py)
                      and beside the accuracy 'evaluation' {'num_examples', 'global_step',
                      'subset'}: what the last evaluation scored

`run_state` reads a row's host load and timed steps back for the rule of a clean run
(metrics/clean_runs.py); a row without them (recorded before they were kept) counts as clean
on load, and its planned steps are its params' --num_batches. `host_load_word` is the word
every view of the database marks a run with ('busy', 'not measured', ...).

No TensorFlow and nothing above this package: plain dicts in, plain dicts out.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import math
import re
import statistics

from ..metrics import clean_runs, configuration, result_rates

# The configuration: what a series of runs holds fixed; everything else (threads, layouts,
# the environment) may change along a series and is named when images/sec stepped. The one
# rule of every gate: metrics/configuration.py.
CONFIG_FIELDS = configuration.CONFIG_FIELDS
ENVIRONMENT_FIELDS = configuration.ENVIRONMENT_FIELDS
FIGURE_BLOCKS = ('utilisation', 'input', 'memory', 'latency_ms')
ROW_FIELDS = (
    'content_key', 'run_utc', 'source', 'label', 'config_key') + CONFIG_FIELDS + (
    'hostname', 'tf_version', 'cpu_model', 'cpu_flags', 'gpus', 'onednn',
    'images_per_sec', 'global_batch_size', 'num_steps',
    'step_time_median', 'step_time_min', 'step_time_max', 'step_time_mean', 'step_time_stdev',
    'model_flops_per_sec', 'fraction_of_peak', 'input_share', 'peak_rss_bytes',
    'latency_p50_ms', 'latency_p90_ms', 'latency_p99_ms', 'top_1_accuracy', 'top_5_accuracy',
    'params_json', 'environment_json', 'figures_json', 'given_flags_json')
TIME_FORMAT = '%Y-%m-%dT%H:%M:%S.%fZ'
_JSON_STAMP = re.compile(r'_(\d{8}T\d{6}\.\d{6})Z\.json$')


class RecordError(ValueError):
    """A result or sweep record lacks what a row needs; the message says what."""


class NothingTimedError(RecordError):
    """A result of a run that timed nothing (`timed_nothing`: stopped in the warm-up, no
    images/sec): a run's own result, which the run does not record either
    (lifecycle/results_db.py), so ingest leaves it out; the message says why."""


def timed_nothing(result: dict) -> bool:
    """True for a run's result that has no images/sec: stopped in the warm-up
    ('stopped_in_warmup'), or a cluster's worker stopped at its first timed step
    ('images_per_sec' None: lifecycle/timed_run.py loop_result). The one rule of the run's
    record (lifecycle/results_db.py) and of ingest (`from_result`)."""
    return bool(result.get('stopped_in_warmup')) or result.get('images_per_sec') is None


def nothing_timed_reason(result: dict) -> str:
    """Why a result that `timed_nothing` has no images/sec, for ingest's 'left out:' line:
    'stopped by SIGINT in the warm-up, before its first timed step (no images/sec; a run does
    not record such a run either)'."""
    stop = result.get('stopped_by_signal') or result.get('stopped_by_error')
    if result.get('stopped_in_warmup'):
        what = 'stopped%s in the warm-up, before its first timed step' % (
            ' by %s' % stop if isinstance(stop, str) else '')
    else:
        what = 'timed no step'
    return '%s (no images/sec; a run does not record such a run either)' % what


def utc_text(moment: datetime.datetime | None = None) -> str:
    """`moment` (default: now) as 'YYYY-MM-DDTHH:MM:SS.ffffffZ' in UTC (sorts as text)."""
    moment = moment or datetime.datetime.now(datetime.timezone.utc)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    return moment.astimezone(datetime.timezone.utc).strftime(TIME_FORMAT)


def parse_time(text: str) -> datetime.datetime:
    """An ISO 8601 time ('2026-01-02', '2026-01-02T03:04:05+01:00', '...Z') as an aware UTC
    datetime (no zone: UTC).

    Raises:
      ValueError: not an ISO 8601 date or time.
    """
    moment = datetime.datetime.fromisoformat(text.strip())
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    return moment.astimezone(datetime.timezone.utc)


precision_of = configuration.precision_of  # the configuration's parts: one rule
mode_of = configuration.mode_of
data_of = configuration.data_of


def config_key(config: dict, cpus: int | None = None) -> str:
    """'model=trivial|mode=training|precision=fp32|batch_size=32|num_devices=1|num_workers=1|
    variable_update=parameter_server|device=cpu|data=synthetic|image_size=32' (one line), and
    '|cpus_allowed=1' after it for a run that recorded its allowed CPUs (`cpus`:
    configuration.cpus_of its host load): runs pinned to other CPU counts are other
    configurations; a run that did not record it keeps the key without it."""
    key = '|'.join('%s=%s' % (name, config[name]) for name in CONFIG_FIELDS)
    return key if cpus is None else '%s|%s=%d' % (key, configuration.CPUS_FIELD, cpus)


def cpus_in_key(key: str | None) -> int | None:
    """The allowed-CPU count a `config_key` holds, None when it holds none."""
    head, _, value = (key or '').rpartition('|%s=' % configuration.CPUS_FIELD)
    return int(value) if head and value.isdigit() else None


def describe_config(row: dict) -> str:
    """A short label: 'trivial fp32 training bs=32 x1 parameter_server cpu synthetic 32px'
    (x: devices; 'x2 x4w' with 4 workers; ' on 1 CPU' after it where its key has the allowed
    CPUs)."""
    workers = ' x%dw' % row['num_workers'] if (row.get('num_workers') or 1) > 1 else ''
    return '%s %s %s bs=%s x%s%s %s %s %s %spx%s' % (
        row['model'], row['precision'], row['mode'], row['batch_size'], row['num_devices'],
        workers, row['variable_update'], row['device'], row['data'], row['image_size'],
        cpus_words(row.get('config_key')))


def cpus_words(key: str | None, unknown: str | None = None) -> str:
    """' on 1 CPU' for a configuration key with its allowed CPUs; without, '' (or with
    `unknown`, e.g. '?': ' on ? CPUs')."""
    cpus = cpus_in_key(key)
    if cpus is None and unknown is None:
        return ''
    return ' on %s CPU%s' % (unknown if cpus is None else cpus, '' if cpus == 1 else 's')


def content_key(hostname, model, mode, images_per_sec, step_times_min, step_times_max,
                num_steps) -> str:
    """sha256 (hex) of what a run measured: host, model, mode, its images/sec (exact, as
    repr), its fastest and slowest step (seconds) and its number of timed steps.

    Every source of a run has these, bit for bit (a float survives JSON unchanged): its own
    result dict, its results JSON and its sweep record (which keeps the step times' min, max
    and count). Two different runs agree on all of them only by an accident of the 17th digit.
    """
    text = json.dumps([hostname, model, mode, repr(float(images_per_sec)),
                       None if step_times_min is None else repr(float(step_times_min)),
                       None if step_times_max is None else repr(float(step_times_max)),
                       int(num_steps or 0)])
    return hashlib.sha256(text.encode('utf-8')).hexdigest()


def step_time_summary(step_times) -> dict | None:
    """{median, min, max, mean, stdev (population), count} of step times in seconds (the
    sweep record's `step_time_secs`), None without any."""
    times = [float(t) for t in step_times or [] if t is not None]
    if not times:
        return None
    return {'median': statistics.median(times), 'min': min(times), 'max': max(times),
            'mean': statistics.fmean(times), 'stdev': statistics.pstdev(times),
            'count': len(times)}


def _number(value):
    """A finite int/float, else None (JSON's NaN, booleans and text are no figures)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value if math.isfinite(value) else None


finite_number = _number  # the rule of a stored figure (history/schema.py's migrations too)


def _json(value) -> str:
    return json.dumps(value, sort_keys=True, allow_nan=True, default=str)


def _base_row(params: dict, environment: dict, plan: dict | None, source: str,
              label: str | None) -> dict:
    """The configuration and environment columns of a row."""
    config = configuration.of_params(params, plan)
    gpus = environment.get('gpus')
    row = dict(config, config_key=config_key(config), source=source,
               label=params.get('label') or label,
               hostname=environment.get('hostname'), tf_version=environment.get('tf_version'),
               cpu_model=environment.get('cpu_model'),
               cpu_flags=' '.join(environment.get('cpu_flags') or []),
               gpus=None if gpus is None else ', '.join(gpus), onednn=environment.get('onednn'),
               params_json=_json(params), environment_json=_json(environment))
    return row


def _with_steps(row: dict, summary: dict | None) -> dict:
    summary = summary or {}
    for name in ('median', 'min', 'max', 'mean', 'stdev'):
        row['step_time_' + name] = _number(summary.get(name))
    return row


def from_result(result: dict, source: str = 'run', label: str | None = None,
                run_utc: str | None = None) -> dict:
    """The row of a run's result dict (run() / --benchmark_log_dir JSON, results_log.py).

    Args:
      result: the result dict.
      source: where it came from ('run', 'json FILE', 'sweep DIR').
      label: the label when the run's --label is unset.
      run_utc: when it finished; default: the result's 'finished_utc', else the time in its
        results file's name, else now.

    Raises:
      NothingTimedError: a result of a run that timed nothing (`timed_nothing`: stopped in
        the warm-up; its 'images_per_sec' null), which a run does not record either.
      RecordError: no params, environment or images/sec (not a result of tf_cnn_benchmarks),
        or images/sec figures that are no positive finite numbers ("fast", Infinity, 0) or
        contradict each other (metrics/result_rates.py: the rule --baseline applies), or a
        newer results format than this version reads (configuration.newer_format).
    """
    newer = configuration.newer_format(result)
    if newer:
        raise RecordError(newer)
    params, environment = result.get('params'), result.get('environment')
    if (isinstance(params, dict) and isinstance(environment, dict)
            and 'images_per_sec' in result and timed_nothing(result)):
        raise NothingTimedError(nothing_timed_reason(result))
    rate = _number(result.get('images_per_sec'))
    missing = [name for name, value in (('params', params), ('environment', environment),
                                        ('images_per_sec', result.get('images_per_sec')))
               if value is None or (name != 'images_per_sec' and not isinstance(value, dict))]
    if missing:
        raise RecordError('not a tf_cnn_benchmarks result (no %s)' % ', '.join(missing))
    wrong = result_rates.problem(result)  # "fast", Infinity, NaN, true, 0; steps beyond it
    if wrong:
        raise RecordError(wrong)
    params = dict(params, model=result.get('model') or params.get('model'))
    plan = result.get('plan') if isinstance(result.get('plan'), dict) else None
    row = _base_row(params, environment, plan, source, label)
    row['num_devices'] = result.get('num_devices') or row['num_devices']
    row['num_workers'] = result.get('num_workers') or 1
    row['batch_size'] = result.get('per_device_batch_size') or row['batch_size']
    row['image_size'] = result.get('image_size') or row['image_size']
    recorded_model = row['model']  # the content key's: the same run ingested again matches
    row['model'] = configuration.stored_model(recorded_model, configuration.format_of(result))
    row['config_key'] = config_key(row, configuration.cpus_of(result.get('host_load')))
    summary = step_time_summary(result.get('step_times'))
    total = _number(result.get('cluster_images_per_sec'))
    row.update(
        run_utc=run_utc or _result_time(result), images_per_sec=total or rate,
        global_batch_size=result.get('global_batch_size'),
        num_steps=result.get('num_steps') or (summary or {}).get('count'),
        content_key=content_key(environment.get('hostname'), recorded_model, row['mode'], rate,
                                (summary or {}).get('min'), (summary or {}).get('max'),
                                (summary or {}).get('count')),
        figures_json=_json(_with_stop(_with_cluster(_with_skipped(_with_cleanliness(
            {k: result.get(k) for k in FIGURE_BLOCKS}, result.get('host_load'),
            result.get('num_steps') or (summary or {}).get('count'),
            clean_runs.planned_steps(result)), result.get('skipped_records')), result, total),
            result)),
        given_flags_json=(_json(result['given_flags'])
                          if isinstance(result.get('given_flags'), dict) else None))
    util, inp = result.get('utilisation') or {}, result.get('input') or {}
    mem, lat = result.get('memory') or {}, result.get('latency_ms') or {}
    row.update(model_flops_per_sec=_number(util.get('model_flops_per_sec')),
               fraction_of_peak=_number(util.get('fraction_of_peak')),
               input_share=_number(inp.get('input_share')),
               peak_rss_bytes=_number(mem.get('process_peak_rss_bytes')),
               latency_p50_ms=_number(lat.get('p50')), latency_p90_ms=_number(lat.get('p90')),
               latency_p99_ms=_number(lat.get('p99')))
    return _with_steps(_with_accuracy(row, result), summary)


def _with_accuracy(row: dict, result: dict) -> dict:
    """`row` with top_1_accuracy and top_5_accuracy (fractions) of the result's last
    evaluation (result['eval'], else the original's top-level keys), and figures_json's
    'evaluation' {'num_examples', 'global_step', 'subset'} beside them; None without one,
    and on synthetic data (row['data']): its random labels score nothing real."""
    evaluation = result.get('eval') if isinstance(result.get('eval'), dict) else {}
    if row.get('data') == 'synthetic':
        evaluation, result = {}, {}
    for k in (1, 5):
        row['top_%d_accuracy' % k] = _number(evaluation.get('top_%d' % k, result.get(
            'top_%d_accuracy' % k)))
    if evaluation and row['top_1_accuracy'] is not None:
        figures = json.loads(row['figures_json'])
        figures['evaluation'] = {k: evaluation.get(k)
                                 for k in ('num_examples', 'global_step', 'subset')}
        row['figures_json'] = _json(figures)
    return row


def _result_time(result: dict) -> str:
    if result.get('finished_utc'):
        return utc_text(parse_time(result['finished_utc']))
    stamp = _JSON_STAMP.search(str(result.get('results_file') or ''))
    if stamp:
        return utc_text(datetime.datetime.strptime(stamp.group(1), '%Y%m%dT%H%M%S.%f'))
    return utc_text()


def from_sweep_record(record: dict, source: str, label: str | None = None) -> dict:
    """The row of a successful sweep record (tools/sweep/results.py) whose run JSON is gone.

    Raises:
      RecordError: the record is not a successful run's, or lacks params or images/sec, or
        is of a newer results format than this version reads (configuration.newer_format).
    """
    newer = configuration.newer_format(record)
    if newer:
        raise RecordError(newer)
    if record.get('status') != 'ok':
        raise RecordError('the run did not succeed (status %r)' % record.get('status'))
    params, rate = record.get('params'), _number(record.get('images_per_sec'))
    if not isinstance(params, dict) or rate is None:
        raise RecordError('no params or images_per_sec in the sweep record')
    environment = record.get('environment') or {}
    row = _base_row(params, environment, None, source, label)
    recorded_model = row['model']  # the content key's: the same run ingested again matches
    row['model'] = configuration.stored_model(recorded_model, configuration.format_of(record))
    row['config_key'] = config_key(row, configuration.cpus_of(record.get('host_load')))
    summary = record.get('step_time_secs') or {}
    finished = parse_time(record['started_utc']) + datetime.timedelta(
        seconds=float(record.get('wall_secs') or 0.0))
    figures = record.get('figures') or {}
    row.update(
        run_utc=utc_text(finished), images_per_sec=rate,
        global_batch_size=record.get('global_batch_size'), num_steps=summary.get('count'),
        content_key=content_key(environment.get('hostname'), recorded_model, row['mode'], rate,
                                summary.get('min'), summary.get('max'), summary.get('count')),
        figures_json=_json(_with_cleanliness(
            {'sweep_figures': figures}, record.get('host_load'), summary.get('count'),
            clean_runs.planned_from_params(params))),
        model_flops_per_sec=_number(figures.get('model_flops_per_sec')),
        fraction_of_peak=_number(figures.get('fraction_of_peak')),
        input_share=_number(figures.get('input_share')),
        peak_rss_bytes=_number(figures.get('peak_rss_bytes')),
        latency_p50_ms=_number(figures.get('latency_p50_ms')),
        latency_p90_ms=_number(figures.get('latency_p90_ms')),
        latency_p99_ms=_number(figures.get('latency_p99_ms')))
    return _with_steps(row, summary)


def _with_cleanliness(figures: dict, load, steps_run, steps_planned) -> dict:
    """`figures` with 'host_load' and 'timed_steps' added where the run recorded them."""
    if isinstance(load, dict):
        figures['host_load'] = load
    if steps_planned is not None:
        figures['timed_steps'] = {'run': steps_run, 'planned': steps_planned}
    return figures


def _with_skipped(figures: dict, skipped) -> dict:
    """`figures` with 'skipped_records' (records --skip_corrupt_records skipped: an epoch in
    training, of the evaluated subset in an --eval) where the run read with the flag."""
    if isinstance(skipped, int) and not isinstance(skipped, bool):
        figures['skipped_records'] = skipped
    return figures


def _with_stop(figures: dict, result: dict) -> dict:
    """`figures` with 'stopped_by_signal' ('SIGINT', 'SIGTERM', 'SIGHUP'; 'SIGPIPE': the
    reader of stdout went away) where a signal stopped the run, and for an evaluation
    'partial' (result['eval']['partial']: True when a signal stopped it before its last
    batch, its accuracy then of the batches scored); 'stopped_by_error' and 'partial' True
    where a failed output or a non-finite loss stopped the run (result['stopped_by_error']:
    'the failed checkpoint save at global step 20', 'the non-finite loss (nan) at step 3')."""
    if isinstance(result.get('stopped_by_signal'), str):
        figures['stopped_by_signal'] = result['stopped_by_signal']
    if isinstance(result.get('stopped_by_error'), str):
        figures['stopped_by_error'] = result['stopped_by_error']
        figures['partial'] = True
    evaluation = result.get('eval')
    if result.get('mode') == 'evaluation' and isinstance(evaluation, dict):
        figures['partial'] = bool(evaluation.get('partial'))
    return figures


def _with_cluster(figures: dict, result: dict, total: float | None) -> dict:
    """`figures` with 'cluster' for a run of several workers: {'workers': N, 'total': whether
    the row's images/sec is the cluster's total (the chief's 'cluster_images_per_sec'), else
    the chief's own share (no total: a worker timed no step), 'worker_images_per_sec': each
    worker's by task index, or None (the controller's one graph)}, and 'span_secs' where the
    total is the workers' images over their timed parts' span (the chief's
    'cluster_span_secs', cluster/figures.py; a chief of before recorded the sum of its
    workers' images/sec, without it)."""
    workers = result.get('num_workers')
    if isinstance(workers, int) and workers > 1:
        per_worker = result.get('worker_images_per_sec')
        figures['cluster'] = {'workers': workers, 'total': total is not None,
                              'worker_images_per_sec': per_worker
                              if isinstance(per_worker, list) else None}
        span = _number(result.get('cluster_span_secs'))
        if total is not None and span is not None:
            figures['cluster']['span_secs'] = span
    return figures


def rate_suffix(row: dict) -> str:
    """What follows a row's images/sec in a table: '' for one host's run, ' (total of 2
    workers)' or ' (worker 0 only)' for a cluster's (`rate_of`, short), so that no table passes
    a cluster's figure off as one host's."""
    of = rate_of(row, short=True)
    return '' if of == 'the run' else ' (%s)' % of


def rate_of(row: dict, short: bool = False) -> str:
    """What a row's images/sec is: 'the run' on one host; for a cluster run 'the cluster\'s
    total: its 2 workers\' images over 4.21 s, the first one\'s timed start to the last
    one\'s end (each worker\'s own images/sec: 56.08, 56.14)' (short: 'total of 2 workers'),
    or, where the cluster had no total, 'worker 0\'s own share (no cluster total: a worker
    timed no step)' (short: 'worker 0 only'). A total recorded before the span was (no
    'span_secs') was the sum of the workers' images/sec, and says so: 'the cluster\'s total:
    the sum of its 2 workers\' images/sec (56.08, 56.14)' (short: 'sum of 2 workers'). A
    cluster run recorded before even that was kept reads as the total, which its chief
    recorded whenever it had one."""
    workers = row.get('num_workers') or 1
    if workers <= 1:
        return 'the run'
    try:
        cluster = (json.loads(row.get('figures_json') or '{}') or {}).get('cluster') or {}
    except (ValueError, AttributeError):
        cluster = {}
    if cluster.get('total') is False:
        return 'worker 0 only' if short else (
            'worker 0\'s own share (no cluster total: a worker timed no step)')
    span = cluster.get('span_secs')
    spanned = isinstance(span, (int, float)) and not isinstance(span, bool)
    if short:
        return ('total of %d workers' if spanned else 'sum of %d workers') % workers
    rates = cluster.get('worker_images_per_sec')
    numbers = isinstance(rates, list) and rates and all(
        isinstance(r, (int, float)) and not isinstance(r, bool) for r in rates)
    listed = ', '.join('%.2f' % r for r in rates) if numbers else ''
    if spanned:
        return ('the cluster\'s total: its %d workers\' images over %.2f s, the first one\'s '
                'timed start to the last one\'s end%s' % (
                    workers, span, ' (each worker\'s own images/sec: %s)' % listed
                    if listed else ''))
    return 'the cluster\'s total: the sum of its %d workers\' images/sec%s' % (
        workers, ' (%s)' % listed if listed else '')


def run_state(row: dict) -> clean_runs.RunState:
    """The RunState (metrics/clean_runs.py) of a database row: its figures_json's
    'host_load' and 'timed_steps'; for a row without them (recorded before they were kept)
    no load (clean on load) and, for a training or forward-only run without
    --stop_at_top_1_accuracy, its params' --num_batches as the planned steps."""
    try:
        figures = json.loads(row.get('figures_json') or '{}') or {}
    except ValueError:
        figures = {}
    steps = figures.get('timed_steps') if isinstance(figures.get('timed_steps'), dict) else None
    if steps is not None:
        run, planned = steps.get('run'), steps.get('planned')
    else:
        try:
            params = json.loads(row.get('params_json') or '{}') or {}
        except ValueError:
            params = {}
        run, planned = row.get('num_steps'), clean_runs.planned_from_params(params)
    return clean_runs.state(figures.get('host_load'), run, planned,
                            'batches' if row.get('mode') == 'evaluation' else 'timed steps')


def host_load_word(row: dict, clean: str = 'clean') -> str:
    """The host-load word of a database row, the one every view of the database gives it
    (`tf_cnn_results list`'s column, `history`'s mark, the `html` page's): the words `show`
    gives (metrics/clean_runs.py RunState.verdict: 'busy', 'stopped at 28 of 100', 'not
    measured' for a run too short to measure, ...), `clean` for a clean one."""
    verdict = run_state(row).verdict
    return clean if verdict == 'clean' else verdict


def changes(before: dict, after: dict) -> list[str]:
    """What differs between two rows' environments and flags: ['tf_version 2.20.0 -> 2.21.0',
    '--num_intra_threads 0 -> 1', ...] (environment first; the flags that name or place a run
    left out: metrics/configuration.py changes, the words of every gate); a row's --model as
    its model column says (a renamed model's old network by today's name: stored_model)."""
    return configuration.changes(json.loads(before.get('environment_json') or '{}'),
                                 json.loads(after.get('environment_json') or '{}'),
                                 _flags_of(before), _flags_of(after))


def _flags_of(row: dict) -> dict:
    flags = json.loads(row.get('params_json') or '{}')
    if row.get('model') and flags.get('model') in configuration.RENAMED_MODELS:
        flags['model'] = row['model']
    return flags
