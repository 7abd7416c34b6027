"""`tf_cnn_results history`'s error for filters that match runs of several configurations:
one line naming them in short form and the filters that pick one (`many_configurations_message`).
"""

from __future__ import annotations

from tf_cnn_benchmarks.history import records

#: The configurations a one-line error names before 'and N more', and the length it keeps
#: within (the error line, 'error: ' included), naming fewer configurations when longer.
SHOWN = 3
LINE_LIMIT = 200
_SHORT = {'batch_size': 'bs=%s', 'num_devices': 'x%s', 'num_workers': 'x%sw',
          'image_size': '%spx'}


def _first_few(items: list[str], shown: int = SHOWN, sep: str = '; ') -> str:
    """'a; b; c' or, past `shown` items, 'a; b; c and 6 more'."""
    text = sep.join(items[:shown])
    return text if len(items) <= shown else '%s and %d more' % (text, len(items) - shown)


def _short_config(row: dict, differ: list[str]) -> str:
    """A configuration in short form: its model, then only its parts in `differ` ('trivial
    bs=8', 'trivial fp32 imagenet'; records.describe_config's words)."""
    parts = [row['model']] + [(_SHORT.get(name, '%s') % row[name]) for name in differ
                              if name != 'model']
    return ' '.join(str(p) for p in parts)


def many_configurations_message(rows: list[dict], filter_flags: tuple) -> str:
    """history's error for rows of several configurations, within LINE_LIMIT characters: the
    count, the first few in short form (their differing parts only), the filter flags that
    pick the first ('--model=trivial --batch_size=8 picks the first'), or --config=KEY where
    a differing part has no filter (the workers). `filter_flags`: the configuration fields
    `tf_cnn_results` filters by (results_cli.FILTER_FLAGS)."""
    first = {}
    for row in rows:
        first.setdefault(row['config_key'], row)
    differ = [name for name in records.CONFIG_FIELDS
              if len({str(r[name]) for r in first.values()}) > 1]
    unfiltered = [name for name in differ if name not in filter_flags]
    by_cpus = len({records.cpus_in_key(key) for key in first}) > 1  # no filter picks them
    unfiltered += ['the allowed CPUs'] if by_cpus else []
    pick = ' '.join('--%s=%s' % (name, rows[0][name]) for name in differ
                    if name in filter_flags)
    where = ' (`tf_cnn_results show RUN` prints a KEY)'
    if unfiltered:
        hint = 'they differ in %s, which has no filter: give --config=KEY' % (
            ' and '.join(unfiltered))
    else:
        hint = '%s picks the first, or give --config=KEY' % pick
    short = [_short_config(r, differ) + (records.cpus_words(r['config_key'], '?') if by_cpus
                                         else '') for r in first.values()]
    # Fewer configurations, then no word on where a KEY is, until the line fits.
    for shown, tail in ((SHOWN, where), (2, where), (SHOWN, ''), (2, ''), (1, where), (1, '')):
        text = 'history shows one configuration; %d match the filters (%s): %s%s' % (
            len(first), _first_few(short, shown), hint, tail)
        if len('error: ' + text) <= LINE_LIMIT:
            break
    return text
