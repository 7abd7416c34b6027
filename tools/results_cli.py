"""`tf_cnn_results`: the results database of every run, over time.

    tf_cnn_results list --model=resnet50 --precision=bf16 --since=7d
    tf_cnn_results show 42
    tf_cnn_results history --model=trivial --batch_size=32 --png=trivial.png
    tf_cnn_results regressions --min_change=5 --fail_on_regression
    tf_cnn_results html site/
    tf_cnn_results ingest runs/nightly-* other-host/logs

(`python -m tools.results_cli ...` from a checkout.) Every finished run of tf_cnn_benchmarks
and of tf_cnn_sweep records itself into the database (`--results_db=PATH`, default
$TF_CNN_RESULTS_DB, else $XDG_DATA_HOME/tf_cnn_benchmarks/results.sqlite, i.e.
~/.local/share/...; `--noresults_db` records nothing, and so does TF_CNN_RESULTS_DB=false;
a leading `~` of either is the home folder: `database_path`); `ingest` loads sweep folders and run
JSONs made elsewhere. Every command but `ingest` only reads the file and leaves its folder
as it found it (`store.open_read_only`): a database on a read-only mount, or one whose file
or folder this user cannot write, reads as well.

Commands:
  list         the runs matching the filters, oldest first (with a top-1 / top-5 column
               when an evaluation is listed); --limit=N: the N most recent of them, a last
               line counting the older ones left out (on a terminal, the last 50 unless
               --limit says otherwise; a pipe or file gets every run)
  show         runs in full (environment, figures, an evaluation's top-1 and top-5, every
               set flag, as arguments to paste back): by id, in the order given, or by the
               filters, oldest first; --limit=N as for list
  history      one configuration over time: a table, and a PNG (--png=PATH) with one line
               per host and the spread of each batch of repeats (the default name, in a
               current folder that cannot be written: a warning, no plot; the line `plot
               written to PATH` says where it went); --json: the series it plots as one
               JSON object (results_format.history_json), and no PNG unless --png
  regressions  where a configuration's images/sec stepped down beyond the noise on a host
               (history/regressions.py): the first slower run, its label, what changed;
               --fail_on_regression: exit 1 when one is still slower, 3 when nothing
               could be judged, or a series' possible step down (a CI gate); --json: one
               JSON object
  html         OUT_DIR/index.html: the regressions and every configuration's plot, one
               static page (no server, no script); the runs left out marked
  ingest       sweep folders (results.jsonl) and run JSONs (--benchmark_log_dir) into the
               database (a folder's other *.json files are counted and named, not read; a
               file given by path is read whatever its name; a JSON of a newer results
               format is skipped: upgrade); the same run twice is one row, a cluster
               run is its chief's JSON (the other workers' are skipped, named on one
               line); a run stopped in its warm-up (no images/sec) is left out, as the
               run leaves it out

Booleans (--json, --fail_on_regression, --include_unclean_runs) take a run's forms: --NAME,
--noNAME, --NAME=true or =false (tools/command_parser.py).

Filters (list, show, history, regressions, html): --model, --precision (fp32, fp16, bf16),
--mode (training, forward-only, evaluation), --batch_size (per device), --num_devices,
--variable_update, --device (cpu, gpu), --data (synthetic, imagenet, cifar10), --image_size,
--host and --label (shell patterns: 'node-*'), --since (2026-01-31, 2026-01-31T12:00, or an
age: 12h, 7d, 2w) and --until (the same forms; runs before it), --config (a configuration
key as `show` prints it).

Verdicts from clean runs (history, regressions, html): a run whose timed part shared the host
(other processes above 25% of its cores, steal above 5%) or was too short for its host load
to be measured ('not measured': a larger --num_batches measures it), or that stopped before
its planned steps (SIGINT after 28 of 100) is left out, with one line per reason ('left out 2
of 12 runs: 2 shared the host (others used > 25% of the cores)'); --include_unclean_runs
keeps them in. `show` says of each run whether it is clean (metrics/clean_runs.py has the
rule; a run recorded before its host load was kept counts as clean), `list` the same word per
row (its 'host load' column).

Exit status: 0 (also for a `list` that no run matches: `no runs match.`, and with --json no
line at all); 1 when --fail_on_regression finds a regression still slower (or, for
history, show and html, when there is nothing to show (no run matches the filters: one
`error:` line naming them) or an output fails after its checks;
for ingest, when a file or line could not be read as a result: the rest is ingested, or
nothing when no file read holds one; the JSON of a run stopped in its warm-up, which the run
does not record either, is left out on a `left out:` line, not an error);
2 for bad arguments, among them an output that cannot be written (history's --png, html's
OUT_DIR: checked before any work); 3 when --fail_on_regression could judge nothing (no series
matched, every run left out, every series too short for the test: a first night) or a
series' latest runs hold a possible step down the test cannot reach its level at
(history/regressions.py untestable_step: 4 or 5 runs before it and 3 after; or runs before
it spread so wide that a step of --min_change could not have been caught, the rule of
--baseline and `tf_cnn_sweep compare`); 4 when the
database cannot be used (missing, not a results database, damaged, newer, cannot be
written; one `error:` line); 70 for a bug (tools/results_failure.py). history's plot under
its default name in a current folder that cannot be written is a `warning:` line, exit 0.
`regressions --json` prints one JSON object (results_format.regressions_json) with the same
exit status; on a usage error or a database that cannot be used, the object of the refusal
(significance.refusal_json: 'error', 'gate', 'exit_status') beside the `error:` line, so that
its saved output is JSON on every status.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shlex
import sys

from tf_cnn_benchmarks import cnn_util, console
from tf_cnn_benchmarks.history import ingest, page, plots, records, regressions, store
from tf_cnn_benchmarks.metrics import clean_runs, significance
from tf_cnn_benchmarks.params import path_switch, text_values
from tf_cnn_benchmarks.preflight import path_lengths

from . import (
    results_failure,
    results_format,
    results_metric,
    results_outputs,
    results_parser,
)
from .results_parser import FILTER_FLAGS, TIME_FLAGS, UsageError, make_parser, time_bound

#: --since's bound (tools/results_parser.py), where callers of this module read it.
since_time = results_parser.since_time

#: The exit status when the database cannot be used (missing, not a results database,
#: damaged, newer, cannot be written): neither a regression (1) nor not judged (3).
DATABASE_ERROR = significance.DATABASE
#: `list`'s --limit on a terminal when none is given (a pipe or file gets every run).
TERMINAL_LIMIT = 50


def _selection(args, ids=None) -> dict:
    """store.select_runs' and count_runs' keywords of the filters and time bounds given."""
    chosen = {name: getattr(args, name) for name in FILTER_FLAGS}
    chosen.update({name: time_bound(getattr(args, name), name) if getattr(args, name) else None
                   for name in TIME_FLAGS})
    if chosen['since'] and chosen['until'] and chosen['since'] >= chosen['until']:  # ISO text
        raise UsageError('--since=%s is not before --until=%s, so no run can match; give a '
                         '--since earlier than --until (--since=2026-01-01 --until=2026-02-01 '
                         'is January)' % (cnn_util.shown_name(args.since),
                                          cnn_util.shown_name(args.until)))
    return dict(chosen, ids=ids)


def _rows(conn, args, ids=None) -> list[dict]:
    return store.select_runs(conn, **_selection(args, ids))


def _terminal() -> bool:
    """Whether stdout is a terminal (a person reading, not a script)."""
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False


def _limited_rows(conn, args, ids=None, default=None) -> tuple[list[dict], int]:
    """(the --limit most recent matching runs, oldest first; how many older ones matched
    too). `default` is the limit when --limit is not given; None or 0: every run."""
    limit = default if args.limit is None else args.limit
    if not limit:
        return _rows(conn, args, ids), 0
    rows = store.select_runs(conn, limit=limit, **_selection(args, ids))
    if len(rows) < limit:
        return rows, 0
    return rows, store.count_runs(conn, **_selection(args, ids)) - len(rows)


def limit_note(hidden: int) -> str:
    """The line after a listing cut by --limit: '(17,504 older runs not shown: --limit=0 for
    all)'."""
    return '(%s not shown: --limit=0 for all)' % ('{:,} older run{}'.format(
        hidden, '' if hidden == 1 else 's'))


def nothing_matches(args) -> str:
    """The `error:` text of `show`, `history` and `html` when no run matches: 'no run in
    /data/r.sqlite matches --model=nomodel --since=7d' (the filters given, as flags), or 'no
    run in /data/r.sqlite' without a filter."""
    given = ' '.join('--%s=%s' % (name, shlex.quote(str(getattr(args, name))))
                     for name in FILTER_FLAGS + TIME_FLAGS if getattr(args, name) is not None)
    return 'no run in %s%s' % (args.db_path, ' matches ' + given if given else '')


def _nothing_to_show(args, tail: str = '') -> int:
    """Prints the `error:` line of a command with nothing to show (`nothing_matches`); 1."""
    print('error: %s%s' % (nothing_matches(args), tail), file=sys.stderr)
    return 1


def _slug(row: dict) -> str:
    """The default PNG name's configuration: every part of it, so that two configurations
    never share a file ('trivial-fp32-training-bs32-x1-parameter_server-cpu-synthetic-32px';
    'x2x4w' with 4 workers; '_on_1_CPU' where the key has the allowed CPUs)."""
    workers = 'x%dw' % row['num_workers'] if (row.get('num_workers') or 1) > 1 else ''
    return re.sub(r'[^A-Za-z0-9_.-]+', '_', '%s-%s-%s-bs%s-x%s%s-%s-%s-%s-%spx%s' % (
        row['model'], row['precision'], row['mode'], row['batch_size'], row['num_devices'],
        workers, row['variable_update'], row['device'], row['data'], row['image_size'],
        records.cpus_words(row.get('config_key'))))


def _check_output(path: str, is_file: bool) -> None:
    """Raises UsageError when history's --png or html's OUT_DIR cannot be written
    (results_outputs.output_problem)."""
    problem = results_outputs.output_problem(path, is_file)
    if problem:
        raise UsageError(problem)


def _clean(rows: list[dict], args) -> clean_runs.Selection:
    """The rows a verdict uses (metrics/clean_runs.py; all with --include_unclean_runs)."""
    return clean_runs.select(rows, records.run_state, args.include_unclean_runs)


def _history(conn, args) -> int:
    if args.png:
        _check_output(args.png, is_file=True)
    rows = results_metric.configurations_of(_rows(conn, args), args.metric)
    keys = list(dict.fromkeys(r['config_key'] for r in rows))
    if not keys:
        return _nothing_to_show(args)
    if len(keys) > 1:
        raise UsageError(results_format.many_configurations_message(rows, FILTER_FLAGS))
    measured, left = results_metric.measured(rows, args)
    if not measured:
        return results_metric.error(results_metric.none_measured(rows, args.metric))
    rows, chosen = measured, _clean(measured, args)
    found = (regressions.find_regressions(chosen.kept, args.min_change, metric=args.metric,
                                          recent_runs=args.recent_runs)[0]
             if chosen.kept else [])
    if args.json:  # the series as data; a PNG only where --png asks for one
        png = args.png if chosen.kept else None
        if png and _plot_failed(chosen.kept, found, png, args.metric):
            return 1
        print(json.dumps(results_metric.with_left_out(results_format.history_json(
            rows[0], chosen, found, args.min_change, png, args.metric), left), sort_keys=True))
    elif not chosen.kept:
        print('\n'.join(chosen.lines()))
    if not chosen.kept:
        print('error: every run of %s was left out of the history; %s keeps them'
              % (records.describe_config(rows[0]), clean_runs.INCLUDE_FLAG), file=sys.stderr)
        return 1
    if args.json:
        return 0
    print('\n'.join(results_format.history_lines(chosen.kept, found, chosen, args.metric)))
    if args.png:
        if _plot_failed(chosen.kept, found, args.png, args.metric):
            return 1
        print('plot written to %s' % args.png)
        return 0
    path = 'history-%s.png' % _slug(rows[0])
    problem = _current_folder_problem() or _write_plot(chosen.kept, found, path, args.metric)
    if problem:  # the default name: the plot was not asked for, the table is the answer
        cnn_util.warn('no plot written: %s: %s; --png=PATH writes it where this user can write'
                      % (path, problem))
        return 0
    print('plot written to %s' % path)
    return 0


def _write_plot(kept: list[dict], found: list, path: str, metric) -> str | None:
    """Writes the history PNG of the runs `kept` (their `metric`) with the steps down `found`
    to `path`; returns why it could not (after the checks: the storage changed, or a file in
    the way), or None."""
    png = plots.history_png(kept, [(r.first_slower['id'], metric.change(
        r.before, r.after, r.step.judgement.ratio)) for r in found], metric=metric)
    try:
        with open(path, 'wb') as f:
            f.write(png)
    except OSError as e:
        return e.strerror or str(e)
    return None


def _plot_failed(kept: list[dict], found: list, path: str, metric) -> bool:
    """Writes the plot --png asked for; on failure prints its `error:` line and returns
    True."""
    problem = _write_plot(kept, found, path, metric)
    if problem:
        print('error: --png=%s: %s; give a file name in a folder this user can write'
              % (path, problem), file=sys.stderr)
    return problem is not None


def _current_folder_problem() -> str | None:
    """Why the default plot cannot be made in the current folder ('cannot write in /x:
    Read-only file system'), or None."""
    try:
        folder = os.getcwd()
    except OSError as e:  # the folder was removed
        return 'the current folder is gone (%s)' % (e.strerror or e)
    return cnn_util.write_problem(folder)


def _gate(args, search: regressions.Search, chosen) -> tuple[int, str | None]:
    """`regressions --fail_on_regression`: (the exit status, the gate's line); (0, None)
    without the flag. 1 (significance.REGRESSION) when a step down is still slower (the line
    also names the series it could not judge); 3 (NOT_JUDGED) when something could not be
    judged: no series matched, every run was left out (the line points at the reasons: the
    lines above it, or with --json the object's `left_out`), every series has too few runs
    (a first night), or a series' latest runs hold a possible step down the test cannot
    judge (history/regressions.py untestable_step: too few runs on a side, or a step of
    --min_change the test could not have caught against the spread of the runs before it;
    the line names each series, its runs on each side and the runs that judge it); else 0."""
    if not args.fail_on_regression:
        return significance.PASSED, None
    still = [r for r in search.found if r.still_slower]
    unjudged = ''
    if search.unjudged:
        unjudged = '%d of %s could not be judged: %s' % (
            len(search.unjudged), cnn_util.counted(search.searched, 'series', 'series'),
            '; '.join(results_format.unjudged_line(u) for u in search.unjudged))
    if still:
        return significance.REGRESSION, ('gate: FAILED: %s still %s by more than %g%%%s'
                                         % (cnn_util.counted(len(still), 'regression')
                                            + results_format.of_metric(args.metric),
                                            args.metric.worse, args.min_change,
                                            '; and ' + unjudged if unjudged else ''))
    if not search.searched and chosen.total:
        return significance.NOT_JUDGED, (
            'gate: NOT JUDGED: no series was searched: every one of the %d matching runs was '
            'left out (%s; %s keeps them)' % (
                chosen.total, 'why: the left_out key' if args.json else 'see above',
                clean_runs.INCLUDE_FLAG))
    if not search.searched:
        return significance.NOT_JUDGED, (
            'gate: NOT JUDGED: no series was searched (no run matches the filters: check '
            '--host, --model and the other filters against `tf_cnn_results list`)')
    if search.short == search.searched:
        return significance.NOT_JUDGED, (
            'gate: NOT JUDGED: nothing could be judged: each of the %d series has fewer than '
            '%d runs for the test' % (search.searched, regressions.min_runs()))
    if unjudged:
        return significance.NOT_JUDGED, 'gate: NOT JUDGED: %s. %s' % (
            unjudged, results_format.unjudged_advice(search.unjudged))
    return significance.PASSED, 'gate: passed'



def _regressions(conn, args) -> int:
    matching = _rows(conn, args)
    rows, left = results_metric.measured(matching, args)
    chosen = _clean(rows, args)
    search = regressions.search(chosen.kept, args.min_change, metric=args.metric,
                                recent_runs=args.recent_runs)
    unmeasured = clean_runs.unmeasured_line([records.run_state(r) for r in chosen.kept],
                                            'run kept in the verdicts',
                                            'runs kept in the verdicts')
    status, line = _gate(args, search, chosen)
    if matching and not rows and args.fail_on_regression:
        status, line = results_metric.none_measured_gate(len(matching), args.metric)
    if args.json:
        gate = None if line is None else {'line': line,
                                          'verdict': significance.VERDICTS[status]}
        print(json.dumps(results_metric.with_left_out(results_format.regressions_json(
            chosen, search.found, args.min_change, unmeasured, gate, status, search.unjudged,
            args.metric), left), sort_keys=True))
        return status
    print('\n'.join(results_format.regression_lines(search.found,
                                                    (search.searched, search.short),
                                                    search.unjudged, args.metric)
                    + chosen.lines() + ([unmeasured] if unmeasured else [])
                    + ([line] if line else [])))
    return status


def _read_command(conn, args) -> int:
    if args.command == 'list':
        rows, hidden = _limited_rows(conn, args, default=TERMINAL_LIMIT if _terminal() else None)
        if args.json:  # no run: no line at all (a JSON-lines reader parses every line)
            print(''.join(results_format.json_line(r) + '\n' for r in rows), end='')
        else:
            print('\n'.join(results_format.list_lines(rows)))
        _say_hidden(hidden, args.json)
        return 0
    if args.command == 'show':
        return _show(conn, args)
    if args.command == 'history':
        return _history(conn, args)
    if args.command == 'regressions':
        return _regressions(conn, args)
    _check_output(args.out_dir, is_file=False)
    rows = _rows(conn, args)
    if not rows:  # nothing to show, as `show` and `history` say: no page (it wrote an empty one)
        return _nothing_to_show(args, '; no page written')
    path = page.write_page(args.out_dir, rows, args.db_path, args.min_change,
                           include_unclean=args.include_unclean_runs, recent_runs=args.recent_runs)
    print('page written to %s' % path)
    return 0


def _say_hidden(hidden: int, json_lines: bool) -> None:
    """`limit_note` after a cut listing: its last line, or on stderr after JSON lines."""
    if hidden:
        print(limit_note(hidden), file=sys.stderr if json_lines else sys.stdout)


def _show(conn, args) -> int:
    """`show`: the runs asked for by id, in the order asked (each once), or the runs the
    filters match, oldest first; 1 with an `error:` line when an id names no run or nothing
    matches."""
    if not args.ids and all(getattr(args, n) is None for n in FILTER_FLAGS + TIME_FLAGS):
        raise UsageError('show takes run ids (as `list` prints them) or filters')
    ids = list(dict.fromkeys(args.ids))
    rows, hidden = _limited_rows(conn, args, ids=ids)
    if ids:
        matched = _rows(conn, args, ids=ids) if hidden else rows  # the cut ones exist
        missing = sorted(set(ids) - {r['id'] for r in matched})
        if missing:
            print('error: no run %s in %s' % (', '.join('#%d' % i for i in missing),
                                               args.db_path), file=sys.stderr)
            return 1
        rows.sort(key=lambda r: ids.index(r['id']))
    if not rows:  # filters that match nothing: nothing to show, as `history` says
        return _nothing_to_show(args)
    for row in rows:
        print(results_format.json_line(row) if args.json
              else '\n'.join(results_format.show_lines(row)))
    _say_hidden(hidden, args.json)
    return 0


def database_path(given: str | None) -> str:
    """The database a command reads (or ingest writes): --results_db's value as a run reads
    it (params/path_switch.py: 'true' is the default place; a leading `~` the home folder),
    else TF_CNN_RESULTS_DB's path, else the default place (history/store.py).

    Raises:
      UsageError: an empty value (`--results_db=$DB` with DB unset), or one that names no
        database: --results_db=false, or without the flag TF_CNN_RESULTS_DB=false (a run
        then records nothing).
    """
    if given is not None:
        word = given.strip().lower()
        if not word:
            raise UsageError('--results_db= names no file (an unset shell variable?); give '
                             '--results_db=PATH, or leave the flag out for the default '
                             'database (%s)' % store.default_path())
        if word in path_switch.OFF_WORDS:
            raise UsageError('--results_db=%s names no database (on a run it records nothing); '
                             'give --results_db=PATH (./%s for a file of that name)'
                             % (given, given))
        if word in path_switch.ON_WORDS:
            given = None
    path = store.resolve_path(given)
    if path is None:
        raise UsageError('$%s=%s turns the results database off (runs record nothing), so '
                         'there is none to read; give --results_db=PATH, or unset %s for the '
                         'default one' % (store.PATH_VARIABLE, os.environ[store.PATH_VARIABLE],
                                          store.PATH_VARIABLE))
    return path


def run(argv: list[str]) -> int:
    """The command without the program name; returns the exit status.

    Raises:
      UsageError, store.StoreError, plots.PlotError, OSError.
    """
    parser = make_parser(__doc__)
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help
        return int(e.code or 0)
    # The database holds UTF-8 text: a filter or label that is not (a byte read as a lone
    # surrogate, PEP 383) cannot be bound to a query, nor match anything.
    problem = text_values.problem({name: getattr(args, name, None)
                                   for name in FILTER_FLAGS + TIME_FLAGS})
    if problem:
        raise UsageError(problem)
    for name in FILTER_FLAGS:  # UTF-8 bytes read under an ASCII locale: the text they mean
        if isinstance(getattr(args, name, None), str):
            setattr(args, name, text_values.as_text(getattr(args, name)))
    args.db_path = database_path(getattr(args, 'results_db', None))
    problem = results_outputs.database_name_problem(
        args.db_path, getattr(args, 'results_db', None), store.PATH_VARIABLE)
    if problem:
        raise UsageError(problem)
    gone = cnn_util.working_folder_problem(
        [('--results_db' if hasattr(args, 'results_db') else 'the results database',
          args.db_path),
         ('--png', getattr(args, 'png', None)), ('the page folder', getattr(args, 'out_dir', None))]
        + [('the path', path) for path in getattr(args, 'paths', None) or []])
    if gone:
        raise UsageError(gone)
    too_long = path_lengths.path_problem(args.db_path)  # over PATH_MAX it reads as missing
    if too_long:
        raise UsageError('the results database %s cannot be used: %s; give a shorter '
                         '--results_db=PATH' % (args.db_path, too_long))
    if args.command == 'ingest':
        try:
            summary = ingest.ingest(args.db_path, args.paths, args.label)
        except ingest.NothingReadError as e:  # bad data, as a skipped file is: 1
            print('error: ingest: %s' % e, file=sys.stderr)
            return 1
        except (FileNotFoundError, ingest.NoResultsError) as e:
            raise UsageError('ingest: %s' % e) from None
        print('\n'.join(summary.lines()))
        print('database: %s' % args.db_path)
        if summary.problems:  # the rest is in; what was not must not pass for done
            print('error: ingest: %s could not be read as a result (named above); the other '
                  'runs were ingested: fix or remove %s and ingest again (a run already in the '
                  'database is not added twice)' % (
                      cnn_util.counted(len(summary.problems), 'file or line', 'files or lines'),
                      'it' if len(summary.problems) == 1 else 'them'), file=sys.stderr)
            return 1
        return 0
    with store.opened(args.db_path, read_only=True) as conn:
        return _read_command(conn, args)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry (argv[0] is the program); returns the exit status."""
    argv = list(sys.argv if argv is None else argv)
    version = console.answer_version(argv[1:])
    if version is not None:
        return version
    try:
        return run(argv[1:])
    except UsageError as e:
        return _refuse(str(e), significance.USAGE, argv[1:])
    except store.StoreError as e:  # missing, not ours, damaged, newer, cannot be written
        return _refuse(str(e), DATABASE_ERROR, argv[1:])
    except plots.PlotError as e:
        print('error: %s' % e, file=sys.stderr)
        return 1
    except BrokenPipeError:  # the reader went away (`tf_cnn_results list | head`): 141
        raise  # console.finish ends the command quietly
    except OSError as e:  # the plot or the page cannot be written (after `_check_output`)
        fix = ('free space on its disk, or give an output path on another disk'
               if e.errno in (errno.ENOSPC, errno.EDQUOT)
               else 'give an output path this user can write')
        print('error: cannot write %s: %s; %s' % (e.filename or 'the output', e.strerror or e,
                                                  fix), file=sys.stderr)
        return 1
    except Exception as e:  # a bug: one line and exit status 70, no traceback
        return _refuse(*results_failure.failure(e, argv[1:]), argv[1:])


def _refuse(message: str, status: int, argv: list[str]) -> int:
    """Prints the `error:` line (stderr) and, for `regressions --json`, the gate's object
    (significance.refusal_json) on stdout, so that a CI job's saved JSON is JSON on a refusal
    too; returns `status`. A value's bytes that were not decoded (PEP 383) read as '\\xc3\\xa9'
    (cnn_util.shown_name), as the benchmark's messages show them."""
    message = cnn_util.shown_name(message)
    print('error: %s' % message, file=sys.stderr)
    if results_failure.gate_json(argv):
        print(json.dumps(significance.refusal_json(message, status), sort_keys=True))
    return status


def run_main() -> None:
    """Console entry point of `tf_cnn_results`."""
    console.finish(main)


if __name__ == '__main__':
    run_main()
