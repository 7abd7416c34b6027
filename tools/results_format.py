"""The text `tf_cnn_results` prints: run tables, one run in full, a history, regressions.

Tables are markdown (as `tf_cnn_sweep report` and `compare` print them), so they read in a
terminal, in a CI log and pasted into an issue.
"""

from __future__ import annotations

import json
import shlex
import statistics

from tf_cnn_benchmarks import cnn_util
from tf_cnn_benchmarks import params as params_lib
from tf_cnn_benchmarks.history import (
    plots,
    records,
    regressions,
    run_flags,
    series_metric,
    step_notes,
)
from tf_cnn_benchmarks.metrics import clean_runs

from .config_message import (  # noqa: F401 (re-exported: history's error of many)
    LINE_LIMIT,
    SHOWN,
    many_configurations_message,
)


def json_line(row: dict) -> str:
    """A database row as `list --json` and `show --json` print it: one JSON object, its
    *_json columns parsed, 'images_per_sec_of' (a cluster run's: whose figure it is), and
    'clean' with 'unclean_reason' as `history --json` has them (metrics/clean_runs.py
    RunState.why: 'busy: ...; stopped at 157 of 3000 timed steps', None when clean), so that
    `jq 'select(.clean) | .images_per_sec'` leaves out busy and stopped runs."""
    out = dict(row)
    for name in ('params_json', 'environment_json', 'figures_json', 'given_flags_json'):
        out[name[:-5]] = json.loads(out.pop(name) or 'null')
    out['images_per_sec_of'] = records.rate_of(row)
    why = records.run_state(row).why()
    out['clean'], out['unclean_reason'] = not why, why or None
    return json.dumps(out, sort_keys=True)


def cell(value) -> str:
    """A markdown table cell's text: a `|` escaped (`\\|`, shown as `|`), a line break as the
    two characters `\\n` (`\\r` for a carriage return), so that a label such as 'a|b' or
    'a<newline>b' stays in its cell and its row on one line."""
    return one_line(str(value).replace('|', '\\|'))


def one_line(value) -> str:
    """`value`'s text on one line: a line break as the two characters `\\n` (`\\r` for a
    carriage return), as in `cell`, so that a label's line break does not start what reads as
    another field of `show`'s block."""
    return str(value).replace('\r\n', '\\n').replace('\n', '\\n').replace('\r', '\\r')


def table(head: list[str], rows: list[list[str]], numeric=()) -> list[str]:
    """A markdown table; columns whose index is in `numeric` are right-aligned; every cell
    escaped (`cell`)."""
    lines = ['| ' + ' | '.join(head) + ' |',
             '| ' + ' | '.join('---:' if i in numeric else '---' for i in range(len(head)))
             + ' |']
    return lines + ['| ' + ' | '.join(cell(c) for c in row) + ' |' for row in rows]


def when(row: dict) -> str:
    """'2026-01-02 03:04:05' (UTC) of a run."""
    return row['run_utc'][:19].replace('T', ' ')


def _ms(seconds) -> str:
    return '-' if seconds is None else '%.2f' % (1000.0 * seconds)


def list_lines(rows: list[dict]) -> list[str]:
    """`list`: one table row per run; its 'host load' column is history/records.py
    `host_load_word`; where a run listed is an evaluation or has an accuracy, a 'top-1 /
    top-5' column after images/sec (`_accuracy_cell`)."""
    if not rows:
        return ['no runs match.']
    scored = any(r['mode'] == 'evaluation' or r.get('top_1_accuracy') is not None
                 for r in rows)
    body = [['%d' % r['id'], when(r), r['hostname'] or '?', r['label'] or '-',
             records.describe_config(r), _rate_cell(r)] + ([_accuracy_cell(r)] if scored else [])
            + [_ms(r['step_time_median']), records.host_load_word(r)] for r in rows]
    head = ['run', 'finished (UTC)', 'host', 'label', 'configuration', 'images/sec'] + (
        ['top-1 / top-5'] if scored else []) + ['step ms (median)', 'host load']
    return table(head, body, numeric=(0, 5, 6, 7) if scored else (0, 5, 6)) + [
        '', '%s, %s.' % (cnn_util.counted(len(rows), 'run'),
                         cnn_util.counted(len({r['config_key'] for r in rows}), 'configuration'))]


def _rate_cell(row: dict) -> str:
    """`list`'s images/sec: '1000.00'; a cluster run's says whose: '112.22 (total of 2
    workers)' (history/records.py rate_of)."""
    return '%.2f' % row['images_per_sec'] + records.rate_suffix(row)


def _accuracy_cell(row: dict) -> str:
    """`list`'s accuracy: '0.7510 / 0.9230' (fractions, as the run's 'Accuracy @ 1' line
    prints them), '-' for a run without an evaluation or recorded before it was kept."""
    if row.get('top_1_accuracy') is None:
        return '-'
    return '%.4f / %s' % (row['top_1_accuracy'], '-' if row.get('top_5_accuracy') is None
                          else '%.4f' % row['top_5_accuracy'])


def _accuracy_lines(row: dict) -> list[str]:
    """`show`'s accuracy line: '  accuracy: top-1 0.7510, top-5 0.9230 (the evaluation:
    50000 examples, validation subset, global step 6000)' (a training run's: 'the last
    evaluation during training: ...'); for an evaluation of synthetic data, that its
    accuracy is not stored (random labels: history/records.py stores null); for one
    recorded before the database kept it, that it was not recorded; [] for any other run
    without one."""
    if row.get('top_1_accuracy') is None:
        if row['mode'] != 'evaluation':
            return []
        if row.get('data') == 'synthetic':
            return ['  accuracy: not stored (synthetic data: its random labels make an '
                    'accuracy meaningless)']
        return ['  accuracy: not recorded (an evaluation recorded before the database kept '
                'it)']
    scored = json.loads(row['figures_json'] or '{}').get('evaluation') or {}
    parts = [template % scored[key] for key, template in (
        ('num_examples', '%s examples'), ('subset', '%s subset'),
        ('global_step', 'global step %s')) if scored.get(key) is not None]
    return ['  accuracy: top-1 %.4f, top-5 %s (%s%s)' % (
        row['top_1_accuracy'], '-' if row.get('top_5_accuracy') is None
        else '%.4f' % row['top_5_accuracy'],
        'the evaluation' if row['mode'] == 'evaluation' else
        'the last evaluation during training', ': ' + ', '.join(parts) if parts else '')]


def _figures(row: dict) -> str:
    parts = []
    if row['model_flops_per_sec'] is not None:
        parts.append('model %.1f GFLOP/s' % (row['model_flops_per_sec'] / 1e9))
    if row['fraction_of_peak'] is not None:
        parts.append('%.1f%% of peak' % (100 * row['fraction_of_peak']))
    if row['input_share'] is not None:
        parts.append('input wait %.1f%%' % (100 * row['input_share']))
    if row['peak_rss_bytes'] is not None:
        parts.append('peak RSS %.2f GiB' % (row['peak_rss_bytes'] / 2.0 ** 30))
    if row['latency_p50_ms'] is not None:
        parts.append('latency p50 %.2f ms, p90 %s ms, p99 %s ms' % (
            row['latency_p50_ms'], *('-' if row.get(key) is None else '%.2f' % row[key]
                                     for key in ('latency_p90_ms', 'latency_p99_ms'))))
    return ', '.join(parts) or 'none recorded'


def _skipped_lines(row: dict) -> list[str]:
    """`show`'s line of the records --skip_corrupt_records skipped ([] for a run without the
    flag, or recorded before they were kept): its images/sec came from the records left."""
    skipped = json.loads(row['figures_json'] or '{}').get('skipped_records')
    if skipped is None:
        return []
    if not skipped:
        return ['  skipped records: none (--skip_corrupt_records)']
    what = ('of the evaluated records' if row['mode'] == 'evaluation' else 'an epoch')
    return ['  skipped records: %d %s (--skip_corrupt_records: the figures come from the '
            'records left)' % (skipped, what)]


def _stop_lines(row: dict) -> list[str]:
    """`show`'s line of a run a signal stopped (figures_json's 'stopped_by_signal', and an
    evaluation's 'partial'): '  stopped: by SIGINT after 3 of 10 batches: a partial
    evaluation, its accuracy and figures of the batches scored'; [] otherwise, and for a run
    recorded before they were kept (its `clean:` line still says where it stopped)."""
    figures = json.loads(row['figures_json'] or '{}')
    signal, partial = figures.get('stopped_by_signal'), figures.get('partial')
    # A failed output (a periodic checkpoint save) or a non-finite loss that stopped a
    # training run.
    signal = signal or figures.get('stopped_by_error')
    if not signal and not partial:
        return []
    steps = figures.get('timed_steps') if isinstance(figures.get('timed_steps'), dict) else {}
    unit = 'batches' if row['mode'] == 'evaluation' else 'timed steps'
    where = (' after %s of %s %s' % (steps['run'], steps['planned'], unit)
             if steps.get('run') is not None and steps.get('planned') is not None else '')
    line = '  stopped: by %s%s' % (signal or 'a signal', where)
    if partial and row['mode'] == 'evaluation':
        line += ': a partial evaluation, its accuracy and figures of the batches scored'
    elif partial:
        line += ': partial, the figures of the timed steps run'
    return [line]


def pasteable_flags(params: dict) -> list[str]:
    """Flags as arguments a shell passes back to `tf_cnn_benchmarks` unchanged.

    A flag left unset (None: derived at run time, or not used) is left out, as is a name that
    is no flag of today's command; booleans read `--NAME` or `--noNAME` (as `--[no]NAME` of a
    path-or-off flag does when off), lists are comma-joined, and a value a shell would split or
    expand is quoted.

    Args:
      params: {flag name: value} as a run's result records them (history/records.py).
    Returns:
      One '--NAME=VALUE' (or '--NAME', '--noNAME') string per flag, sorted by name.
    """
    out = []
    for name, value in sorted(params.items()):
        spec = params_lib.SPEC_BY_NAME.get(name)
        if value is None or spec is None:
            continue
        if isinstance(value, bool) and spec.kind in ('boolean', 'path_or_off'):
            out.append('--%s%s' % ('' if value else 'no', name))
            continue
        if isinstance(value, (list, tuple)):
            value = ','.join(map(str, value))
        out.append('--%s=%s' % (name, shlex.quote(str(value))))
    return out


def show_lines(row: dict) -> list[str]:
    """`show`: one run in full; its flags as the user gave them (history/run_flags.py), a
    line that pastes after `tf_cnn_benchmarks`."""
    env = json.loads(row['environment_json'] or '{}')
    given = run_flags.run_flags(row)
    # A shell comment when none was given: the line still pastes (`eval tf_cnn_benchmarks $L`).
    flags = ' '.join(pasteable_flags(given.flags)) or '# none: every flag at its default'
    notes = []
    if given.derived:
        notes.append('  flags derived from the resolved ones (recorded before the given flags '
                     'were kept): the values the run worked out and the defaults left out')
    cluster = run_flags.cluster_task(row)
    if cluster:
        notes.append('  cluster: one task, %s' % cluster)
    return [
        'run #%d' % row['id'],
        '  finished (UTC): %s; recorded %s from %s' % (when(row), row['recorded_utc'][:19]
                                                       .replace('T', ' '), row['source']),
        '  label: %s' % one_line(row['label'] or '-'),
        '  configuration: %s' % records.describe_config(row),
        '  config key: %s' % row['config_key'],
        '  images/sec: %.2f%s (global batch %s, %s timed step%s)' % (
            row['images_per_sec'], '' if (row.get('num_workers') or 1) <= 1
            else ', ' + records.rate_of(row), row['global_batch_size'], row['num_steps'],
            '' if row['num_steps'] == 1 else 's'),
        '  clean: %s' % records.run_state(row).describe(),
        *_accuracy_lines(row),
        *_stop_lines(row),
        '  step time ms: median %s, min %s, max %s, mean %s, stdev %s' % tuple(
            _ms(row['step_time_' + n]) for n in ('median', 'min', 'max', 'mean', 'stdev')),
        '  figures: %s' % _figures(row),
        *_skipped_lines(row),
        '  environment: host %s; TensorFlow %s; Python %s; %s (%s cores; %s); GPUs %s; '
        'oneDNN %s; %s' % (
            env.get('hostname'), env.get('tf_version'), env.get('python_version'),
            env.get('cpu_model'), env.get('cpu_cores'), ' '.join(env.get('cpu_flags') or [])
            or 'no notable flags', 'unknown' if env.get('gpus') is None
            else ', '.join(env['gpus']) or 'none', env.get('onednn'), env.get('platform')),
        '  tf_cnn_benchmarks: %s' % (env.get('tf_cnn_benchmarks_version')
                                     or 'not recorded (a run recorded before runs kept it)'),
        '  flags: %s' % flags,
    ] + notes + ['  content key: %s' % row['content_key']]


def history_lines(rows: list[dict], found: list[regressions.Regression], chosen=None,
                  metric=series_metric.IMAGES_PER_SEC) -> list[str]:
    """`history`: the configuration, one table row per run, then the steps down found (of
    `metric`, its column in the table: history/series_metric.py; a latency's steps up).

    Args:
      rows: the runs the search used (the clean ones, or all with --include_unclean_runs).
      found: the steps down found in them.
      chosen: the metrics/clean_runs.py Selection `rows` came from: its runs left out are
        listed after the table with the left-out lines.

    The step column marks a step down and every run `list` does not call clean, in its
    words (history/records.py `host_load_word`: 'busy', 'stopped at 28 of 100' for unclean
    runs kept, 'not measured' for a run too short to measure its host load).
    """
    slower = {r.first_slower['id']: r for r in found}
    body, previous = [], {}
    for row in rows:
        host = row['hostname'] or '?'
        before = previous.get(host)
        changed = '; '.join(records.changes(before, row)) if before else ''
        mark = '; '.join(m for m in (
            '%s %s' % (metric.step, regressions.summary(slower[row['id']])['change'])
            if row['id'] in slower else '', records.host_load_word(row, clean='')) if m)
        body.append(['%d' % row['id'], when(row), host, row['label'] or '-',
                     metric.fmt % row[metric.column], _ms(row['step_time_median']),
                     _ms(row['step_time_stdev']), mark, changed or '-'])
        previous[host] = row
    lines = ['%s (%s)' % (records.describe_config(rows[0]), rows[0]['config_key']), '']
    lines += table(['run', 'finished (UTC)', 'host', 'label', metric.label, 'step ms',
                    'step ms stdev', 'step', 'changed since the host\'s previous run'], body,
                   numeric=(0, 4, 5, 6))
    for host in sorted({r['hostname'] or '?' for r in rows}):
        mine = [r for r in rows if (r['hostname'] or '?') == host]
        batch = [mine[i][metric.column] for i in plots.repeat_batches(mine)[-1]]
        lines.append('')
        lines.append(('%%s: %%s; latest batch of repeats: %s %s median of %%d' % (
            metric.fmt, metric.label)) % (host, cnn_util.counted(len(mine), 'run'),
                                          statistics.median(batch), len(batch)))
    if chosen and chosen.left_out:
        lines += ['', 'left out: %s' % ', '.join('#%d %s (%s)' % (r['id'], when(r), s.badge)
                                                  for r, s in chosen.left_out)]
    lines += chosen.lines() if chosen else []
    unmeasured = clean_runs.unmeasured_line(
        [records.run_state(r) for r in rows],
        *(('run kept in the verdicts', 'runs kept in the verdicts') if chosen else ()))
    return lines + ([unmeasured] if unmeasured else []) + [''] + regression_lines(
        found, None, metric=metric)


def _history_run(row: dict, state) -> dict:
    """One run of `history --json`: its row's figures and the clean-run rule's verdict."""
    why = state.why()
    return {'id': row['id'], 'run_utc': row['run_utc'], 'host': row['hostname'],
            'label': row['label'], 'images_per_sec': row['images_per_sec'],
            **{m: row.get(m) for m in series_metric.METRICS},
            'images_per_sec_of': records.rate_of(row),
            'step_time_median_secs': row['step_time_median'],
            'clean': not why, 'unclean_reason': why or None}


def history_json(first: dict, chosen, found: list[regressions.Regression],
                 min_change_pct: float, png: str | None,
                 metric=series_metric.IMAGES_PER_SEC) -> dict:
    """`history --json`: the series `history` plots, one object, units in the key names.

    Args:
      first: a row of the configuration (its key and description).
      chosen: the metrics/clean_runs.py Selection of the configuration's runs: its kept
        ones are the series (every run with --include_unclean_runs).
      found: the steps down found in the series (history/regressions.py).
      min_change_pct: --min_change.
      png: the plot written (--png), or None.
      metric: the figure followed (--metric; history/series_metric.py).

    Returns:
      {'config_key', 'configuration', 'metric' (its column), 'runs': [{'id', 'run_utc'
       ('YYYY-MM-DDTHH:MM:SS.ffffffZ'), 'host', 'label', 'images_per_sec',
       'latency_p50_ms', 'latency_p90_ms', 'latency_p99_ms' (None: not recorded),
       'images_per_sec_of' (history/records.py rate_of),
       'step_time_median_secs', 'clean', 'unclean_reason' (metrics/clean_runs.py RunState.why:
       'busy: ...; stopped at 28 of 100 timed steps', None when clean)}] oldest first,
       'left_out_runs' (the unclean runs left out of the series, the same fields),
       'left_out' (the lines saying why, as `regressions --json`), 'steps_down' (as
       `regressions_json`'s), 'min_change_pct', 'png'}.
    """
    states = {id(row): state for row, state in chosen.left_out + chosen.kept_unclean}
    clean = clean_runs.RunState()
    return {'config_key': first['config_key'], 'configuration': records.describe_config(first),
            'metric': metric.column,
            'runs': [_history_run(r, states.get(id(r), clean)) for r in chosen.kept],
            'left_out_runs': [_history_run(r, s) for r, s in chosen.left_out],
            'left_out': chosen.lines(), 'steps_down': [_step_json(r) for r in found],
            'min_change_pct': min_change_pct, 'png': png}


def _steps_down(found: list, metric=series_metric.IMAGES_PER_SEC) -> str:
    """'2 steps down' ('1 step up of latency p99 ms' for a latency)."""
    return cnn_util.counted(len(found), metric.step, metric.step.replace('step', 'steps')) + (
        of_metric(metric))


def of_metric(metric) -> str:
    """'' for images/sec, ' of latency p99 ms' for a latency: what a count of steps is of."""
    return '' if metric.higher_is_better else ' of %s' % metric.label


def regression_lines(found: list[regressions.Regression], counts: tuple[int, int] | None,
                     unjudged: list[regressions.Unjudged] = (),
                     metric=series_metric.IMAGES_PER_SEC) -> list[str]:
    """`regressions`: a block per step down, a block per series whose latest runs hold a
    possible step down the test cannot judge (`unjudged`: history/regressions.py
    untestable_step), then one summary line (with `counts`: the series searched and those too
    short; 'regressions: nothing could be judged (...)' when no series had runs enough for the
    test, as the gate's line then says). `metric`: the figure searched (a latency's
    regression is a step up: 'REGRESSION (latency p99 ms higher)', 'first higher run')."""
    lines, worse = [], metric.worse
    what = '' if metric.higher_is_better else ' (%s %s)' % (metric.label, worse)
    for r in found:
        fields = regressions.summary(r)
        lines += ['REGRESSION%s: %s on %s' % (what, fields['configuration'], fields['host']),
                  '  first %s run: %s (label: %s)' % (worse, fields['first slower run'],
                                                      one_line(fields['label'])),
                  '  %s: %s, %s, Mann-Whitney p=%s' % (
                      metric.label, fields[metric.label], fields['change'], fields['p']),
                  '  still %s: %s' % (worse, fields['still slower']),
                  '  what changed: %s' % fields['what changed'], '']
    for u in unjudged:
        fields = regressions.unjudged_summary(u)
        lines += ['NOT JUDGED: %s on %s' % (fields['configuration'], fields['host']),
                  '  possible %s at run: %s (label: %s)' % (
                      metric.step, fields['first run after'], one_line(fields['label'])),
                  '  %s: %s, %s, Mann-Whitney p %s: %s' % (
                      metric.label, fields[metric.label], fields['change'], fields['p'],
                      fields['why']),
                  '  judgeable after: %s' % fields['more runs'],
                  '  what changed: %s' % fields['what changed'], '']
    still = sum(1 for r in found if r.still_slower)
    if counts is None:
        text = ('%s found, %d still %s' % (_steps_down(found, metric), still, worse) if found
                else 'no %s found' % metric.step)
        return lines + [text + _unjudged_note(unjudged) + '.']
    searched, short = counts
    if found:
        head = 'regressions: %s in %d series, %d still %s' % (
            _steps_down(found, metric), len({(r.config_key, r.hostname) for r in found}), still,
            worse)
    elif short == searched:  # no series searched, or each too short: no verdict, not 'none'
        head = 'regressions: nothing could be judged'
    else:
        head = 'regressions: none found' if unjudged else 'regressions: none'
    return lines + ['%s%s (%d series searched; %d with fewer than %d runs, too few for the '
                    'test).' % (head, _unjudged_note(unjudged), searched, short,
                                regressions.min_runs())]


def _unjudged_note(unjudged) -> str:
    """', 1 series not judged: ...', or '' when every series with runs enough was judged."""
    if not unjudged:
        return ''
    return ', %s not judged: %s' % (cnn_util.counted(len(unjudged), 'series', 'series'),
                                    regressions.unjudged_note(unjudged))


def unjudged_line(u: regressions.Unjudged) -> str:
    """A series the gate could not judge, for its line: '<configuration> on <host> (a
    possible step down of -50.0% at run #7: 5 runs before it and 3 after are too few for the
    test; judgeable after 1 more run)', or for runs before it spread wider than --min_change
    '... (a possible step down of -5.8% at run #4: with 3 runs before it and 3 after the test
    could not have caught a 5% step (p at best 0.35, above the level 0.05); no number of runs
    after it can judge it: 1 of the 3 runs before it (#3) lies more than 5% below their
    median (1000.0): ...)' (history/step_notes.py never_reason)."""
    fields = regressions.unjudged_summary(u)
    step = u.step
    after = ('judgeable after ' + fields['more runs'] if step.more_runs is not None else
             'no number of runs after it can judge it: ' + step_notes.never_reason(
                 u.before, step.min_change_pct, u.metric))
    head = '%s on %s (a possible %s of %s at run %s: ' % (
        fields['configuration'], fields['host'], u.metric.step, fields['change'],
        fields['first run after'].split()[0])
    if step.too_few_runs:
        return head + ('%d runs before it and %d after are too few for the test; %s)' % (
            len(u.before), len(u.after), after))
    return head + ('with %d runs before it and %d after the test could not have caught a %g%% '
                   'step (p at best %.2g, above the level %.2g); %s)' % (
                       len(u.before), len(u.after), step.min_change_pct, step.p_at_change,
                       step.level, after))


def unjudged_advice(unjudged: list[regressions.Unjudged]) -> str:
    """What judges the series the gate could not: more runs where a count of them would,
    else a larger --min_change or --since past the runs spread too wide before the step."""
    counted = [u.step.more_runs is not None for u in unjudged]
    never = ('a larger --min_change does, or --since past the runs spread too wide before '
             'the possible step')
    if all(counted):
        advice = "More runs of the configuration judge it (the next night's)"
    elif not any(counted):
        advice = 'No number of runs judges it; ' + never
    else:
        advice = ("More runs judge those with a count (the next night's); for the others "
                  'no number of runs does; ' + never)
    return advice + '; filters (--since, --config) leave out a configuration no longer run'


def _step_json(r: regressions.Regression) -> dict:
    """One step down of `regressions --json` (a latency's step up): its runs and figures,
    units in the key names ('median_latency_p99_ms_before' for a latency)."""
    j, m = r.step.judgement, r.metric
    before, after = m.medians(r.before, r.after)
    return {'first_slower_run_id': r.first_slower['id'],
            'first_slower_run_utc': r.first_slower['run_utc'],
            'label': r.first_slower.get('label'), 'last_run_before_id': r.last_before['id'],
            'median_%s_before' % m.column: before, 'runs_before': len(r.before),
            'median_%s_after' % m.column: after,
            'runs_after': len(r.after), 'change_pct': 100.0 * m.change(r.before, r.after,
                                                                       j.ratio),
            'p_value': j.p_slower, 'significance_level': r.step.level,
            'still_slower': r.still_slower, 'what_changed': list(r.changes),
            'host_load_rise': step_notes.load_rise(r.before, r.after)}


def _unjudged_json(u: regressions.Unjudged) -> dict:
    """A series' possible step down the test cannot judge, for `regressions --json`."""
    m = u.metric
    before, after = m.medians(u.before, u.after)
    return {'first_run_after_id': u.first_after['id'],
            'first_run_after_utc': u.first_after['run_utc'], 'label': u.first_after.get('label'),
            'last_run_before_id': u.last_before['id'],
            'median_%s_before' % m.column: before, 'runs_before': len(u.before),
            'median_%s_after' % m.column: after,
            'runs_after': len(u.after), 'change_pct': 100.0 * m.change(u.before, u.after,
                                                                       u.step.ratio),
            'smallest_p_value': u.step.smallest_p, 'significance_level': u.step.level,
            'p_value_at_min_change': u.step.p_at_change,
            'why': ('too few runs' if u.step.too_few_runs else 'the corrected level'
                    if step_notes.corrected_cause(u.step) else 'too wide a spread'),
            'possible_step_points': u.step.splits,
            'more_runs_needed': u.step.more_runs, 'what_changed': list(u.changes),
            'host_load_rise': step_notes.load_rise(u.before, u.after)}


def regressions_json(chosen, found: list[regressions.Regression], min_change_pct: float,
                     unmeasured: str | None, gate: dict | None, exit_status: int,
                     unjudged: list[regressions.Unjudged] = (),
                     metric=series_metric.IMAGES_PER_SEC) -> dict:
    """`regressions --json`: one object, units in the key names; with --metric a latency
    (history/series_metric.py), 'metric' names it, its figures' keys name its column
    ('latest_latency_p99_ms', 'median_latency_p99_ms_before') and 'steps_down' holds its
    steps up (the regressions: change_pct positive).

    Args:
      chosen: the metrics/clean_runs.py Selection of the matching runs (its kept ones were
        searched).
      found: the steps down found (history/regressions.py find_regressions).
      min_change_pct: --min_change.
      unmeasured: the line on runs whose host load was not measured, or None.
      gate: {'verdict' ('passed', 'regression', 'not judged'), 'line'}, None without
        --fail_on_regression.
      exit_status: the command's.
      unjudged: the series whose latest runs hold a possible step down the test cannot judge
        (history/regressions.py search).

    Returns:
      {'metric', 'min_change_pct', 'min_runs_per_series', 'series': [{'config_key', 'configuration',
       'host', 'runs', 'latest_run_id', 'latest_images_per_sec', 'median_images_per_sec',
       'verdict' ('regression': a step down still slower; 'not judged': a possible step down
       in its latest runs that the test cannot judge (too few runs on a side, or a step of
       --min_change it could not have caught against the spread of the runs before it),
       'possible_step_down' says where, why and how many more runs judge it; 'recovered':
       steps down, none still slower; 'no step down'; 'too few runs': fewer than
       min_runs_per_series), 'steps_down':
       [{'first_slower_run_id', 'first_slower_run_utc', 'label', 'last_run_before_id',
       'median_images_per_sec_before', 'runs_before', 'median_images_per_sec_after',
       'runs_after', 'change_pct', 'p_value', 'significance_level', 'still_slower',
       'what_changed', 'host_load_rise' (history/step_notes.py load_rise: the load the
       runs after the step recorded more of, [] when none)}], 'possible_step_down': None or
       {'first_run_after_id', 'first_run_after_utc', 'label', 'last_run_before_id',
       'median_images_per_sec_before', 'runs_before', 'median_images_per_sec_after',
       'runs_after', 'change_pct',
       'smallest_p_value' (the most the test can show with those runs), 'significance_level'
       (what it must reach), 'p_value_at_min_change' (the most a step of --min_change can
       show against the runs before it), 'why' ('too few runs': the smallest p-value is above
       the level; 'too wide a spread': the p-value at --min_change is), 'more_runs_needed'
       (None: no number of runs), 'what_changed', 'host_load_rise'}}], 'series_searched',
       'series_with_too_few_runs', 'series_not_judged' (those with a
       possible_step_down), 'runs_matching', 'runs_left_out',
       'left_out' (the lines saying why), 'host_load_not_measured' (the line, or None), 'gate',
       'exit_status'}.
    """
    need = regressions.min_runs()
    steps: dict[tuple, list] = {}
    for r in found:
        steps.setdefault((r.config_key, r.hostname), []).append(r)
    possible = {(u.config_key, u.hostname): u for u in unjudged}
    series = []
    groups = regressions.series_of(chosen.kept)
    for (key, host), runs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] or '')):
        mine = steps.get((key, host), [])
        verdict = ('too few runs' if len(runs) < need else
                   'regression' if any(r.still_slower for r in mine) else
                   'not judged' if (key, host) in possible else
                   'recovered' if mine else 'no step down')
        series.append({'config_key': key, 'configuration': records.describe_config(runs[0]),
                       'host': host, 'runs': len(runs), 'latest_run_id': runs[-1]['id'],
                       'latest_' + metric.column: runs[-1][metric.column],
                       'median_' + metric.column: statistics.median(
                           r[metric.column] for r in runs),
                       'verdict': verdict, 'steps_down': [_step_json(r) for r in mine],
                       'possible_step_down': (_unjudged_json(possible[key, host])
                                              if (key, host) in possible else None)})
    return {'metric': metric.column, 'min_change_pct': min_change_pct,
            'min_runs_per_series': need, 'series': series,
            'series_searched': len(groups),
            'series_with_too_few_runs': sum(s['verdict'] == 'too few runs' for s in series),
            'series_not_judged': len(unjudged),
            'runs_matching': chosen.total, 'runs_left_out': len(chosen.left_out),
            'left_out': chosen.lines(), 'host_load_not_measured': unmeasured or None, 'gate': gate,
            'exit_status': exit_status}
