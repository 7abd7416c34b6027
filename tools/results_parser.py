"""`tf_cnn_results`' arguments: its commands, their filters and flags, and the values they
take (the time bounds --since and --until, --min_change, --mode, --limit).

The command itself is tools/results_cli.py; its docstring is the parser's help text.
"""

from __future__ import annotations

import argparse
import datetime
import re

from tf_cnn_benchmarks import console
from tf_cnn_benchmarks.hardware import user_dirs
from tf_cnn_benchmarks.history import records, regressions, store
from tf_cnn_benchmarks.metrics import clean_runs
from tf_cnn_benchmarks.params import gate_tolerance

from . import command_parser, recent_runs_flag, results_metric

FILTER_FLAGS = ('model', 'precision', 'mode', 'batch_size', 'num_devices', 'variable_update',
                'device', 'data', 'image_size', 'host', 'label', 'config')
#: The time bounds beside the filters: a run's finish time at or after --since, before --until.
TIME_FLAGS = ('since', 'until')
_INT_FILTERS = ('batch_size', 'num_devices', 'image_size')
_AGE = re.compile(r'^(\d+(?:\.\d+)?)([hdw])$')
_TIME_HELP = '2026-01-31, 2026-01-31T12:00, or an age: 12h, 7d, 2w'


class UsageError(Exception):
    """A bad argument: one `error:` line, exit status 2."""


class _Parser(command_parser.CommandParser):
    usage_error = UsageError


def time_bound(text: str, flag: str = 'since', now: datetime.datetime | None = None) -> str:
    """--since or --until as a run_utc bound: an ISO date or time (UTC unless it says
    otherwise), or an age '12h', '7d', '2w' before `now`.

    Args:
      text: the flag's value.
      flag: the flag's name, for the error ('since', 'until').
      now: the time an age counts back from (default: now, UTC).

    Returns:
      'YYYY-MM-DDTHH:MM:SS.ffffffZ' (history/records.py utc_text).

    Raises:
      UsageError: neither, or an age reaching back before year 1 (99999999999w).
    """
    age = _AGE.match(text.strip())
    if age:
        hours = float(age.group(1)) * {'h': 1, 'd': 24, 'w': 168}[age.group(2)]
        now = now or datetime.datetime.now(datetime.timezone.utc)
        try:
            return records.utc_text(now - datetime.timedelta(hours=hours))
        except (OverflowError, ValueError):  # before year 1: a traceback before
            raise UsageError('--%s=%s: an age reaching back before year 1; give a smaller '
                             'one (12h, 7d, 2w) or a date' % (flag, text)) from None
    try:
        return records.utc_text(records.parse_time(text))
    except ValueError:
        raise UsageError('--%s=%s: give a date or time (2026-01-31, 2026-01-31T12:00) or an '
                         'age (12h, 7d, 2w)' % (flag, text)) from None


def since_time(text: str, now: datetime.datetime | None = None) -> str:
    """--since as a run_utc bound (`time_bound`).

    Raises:
      UsageError: not a date, time or age.
    """
    return time_bound(text, 'since', now)


def _percent(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError('takes a number (percent), e.g. 5') from None
    problem = gate_tolerance.not_finite(value, 'percent, >= 0 and below 100', text)
    if problem:  # nan fails no comparison of the range, inf and -inf would meet it
        raise argparse.ArgumentTypeError(problem)
    if not 0 <= value < 100:  # a step of 100% or more is to 0 images/sec or below: none
        raise argparse.ArgumentTypeError(
            'must be >= 0 and below 100 (percent slower; a run cannot be 100% slower, so no '
            'step could count)')
    return value


def _limit(text: str) -> int:
    """--limit: a whole number >= 0 (0: every run)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError('takes a whole number of runs, e.g. 20 (0: all)'
                                         ) from None
    if value < 0:
        raise argparse.ArgumentTypeError('must be >= 0 (a number of runs; 0: all)')
    return value


#: --mode as a run's flags name it, for the stored mode: 'forward_only' (the run's
#: --forward_only) is 'forward-only', 'eval' (--eval) is 'evaluation'.
_MODE_SPELLINGS = {'forward_only': 'forward-only', 'eval': 'evaluation', 'train': 'training'}


def _mode(text: str) -> str:
    """--mode=forward_only, as the run's flag is spelt, taken as the stored 'forward-only'
    (a user's --mode=forward_only matched no run and said nothing of the spelling)."""
    return _MODE_SPELLINGS.get(text, text)


def _add_limit(p: _Parser, default: str) -> None:
    p.add_argument('--limit', type=_limit, metavar='N',
                   help='only the N most recent matching runs, still oldest first; a last '
                   'line says how many older ones were left out (0: all; default: %s)'
                   % default)


def make_parser(description: str) -> _Parser:
    """The parser of `tf_cnn_results` with `description` as its help text.

    Raises (on parse_args):
      UsageError: a bad argument (the message names it).
    """
    common = _Parser(add_help=False)
    common.add_argument('--results_db', default=argparse.SUPPRESS, metavar='PATH',
                        help='the database (default: %s)' % store.default_path())
    filters = _Parser(add_help=False)
    for name in FILTER_FLAGS:
        filters.add_argument('--' + name, type=(int if name in _INT_FILTERS else
                                                _mode if name == 'mode' else str))
    filters.add_argument('--since', help='runs finished at or after: ' + _TIME_HELP)
    filters.add_argument('--until', help='runs finished before (--since=2026-01-01 '
                         '--until=2026-02-01 is January): ' + _TIME_HELP)
    change = _Parser(add_help=False)
    change.add_argument('--min_change', type=_percent, default=regressions.DEFAULT_MIN_CHANGE_PCT,
                        metavar='PCT', help='the smallest step that counts, in percent of the '
                        'median before it, >= 0 and below 100 (default %(default)g)')
    recent_runs_flag.add_flag(change)
    change.add_boolean(clean_runs.INCLUDE_FLAG[2:], clean_runs.INCLUDE_HELP.replace('%', '%%'))
    parser = _Parser(prog='tf_cnn_results', parents=[common], allow_abbrev=False,
                     description=description,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--version', action='store_true',  # answered in main, never parsed
                        help=console.VERSION_HELP)
    sub = parser.add_subparsers(dest='command', metavar='COMMAND', parser_class=_Parser)
    sub.required = True
    p = sub.add_parser('list', parents=[common, filters], allow_abbrev=False, help='runs')
    p.add_boolean('json', 'print the runs as JSON lines')
    _add_limit(p, 'all; on a terminal, the last 50')
    p = sub.add_parser('show', parents=[common, filters], allow_abbrev=False, help='runs in full')
    p.add_argument('ids', nargs='*', type=int, metavar='RUN_ID')
    p.add_boolean('json', 'print the runs as JSON lines')
    _add_limit(p, 'all')
    p = sub.add_parser('history', parents=[common, filters, change], allow_abbrev=False,
                       help='one configuration over time')
    p.add_argument('--png', metavar='PATH', type=user_dirs.expand_home,
                   help='the plot (default: history-<configuration>.png in the current '
                   'folder; where it cannot be written, a warning and no plot; with --json, '
                   'none unless --png is given)')
    p.add_boolean('json', 'print the series as one JSON object instead of the table: the '
                  'configuration key, per run its id, time, host, images/sec, clean or not '
                  'and why; no PNG unless --png')
    results_metric.add_flag(p)
    p = sub.add_parser('regressions', parents=[common, filters, change], allow_abbrev=False,
                       help='steps down beyond the noise')
    p.add_boolean('fail_on_regression', 'exit 1 when a step down is still slower, 3 when '
                  'nothing could be judged, or a possible step down could not be (too few '
                  'runs, or runs too spread for --min_change) (a CI gate)')
    p.add_boolean('json', 'print one JSON object: each series\' verdict with its figures, the '
                  'gate\'s verdict and exit status')
    results_metric.add_flag(p)
    p = sub.add_parser('html', parents=[common, filters, change], allow_abbrev=False,
                       help='a static page')
    p.add_argument('out_dir', metavar='OUT_DIR')
    p = sub.add_parser('ingest', parents=[common], allow_abbrev=False,
                       help='sweep folders and run JSONs into the database')
    p.add_argument('paths', nargs='+', metavar='PATH')
    p.add_argument('--label', help='the label of runs that have none')
    return parser
