"""`tf_cnn_results html OUT_DIR`: one static page of the database, readable offline.

OUT_DIR/index.html holds everything: the steps down found (history/regressions.py), then per
model and precision one history plot per configuration (history/plots.py, embedded as PNG
data), each with the latest batch of repeats of every host. No server, no script, no file
beside it: the page can be mailed, archived as a CI artifact or opened from disk.

The search and the plots use the clean runs (metrics/clean_runs.py); the runs left out are
counted with the regressions (one line per reason) and listed under their configuration's
plot with a badge ('busy', 'stopped at 28 of 100', 'not measured' for a run too short for its
host load to be measured), the words `tf_cnn_results history` marks them with
(history/records.py `host_load_word`). With include_unclean (--include_unclean_runs) they are
kept, and listed with their badge as kept.
"""

from __future__ import annotations

import base64
import html
import os
import statistics

from .. import cnn_util
from ..metrics import clean_runs
from ..runtime import file_systems
from . import plots, records, regressions

STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #222; background: #fff; }
h1 { font-size: 1.4em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1em; margin-bottom: 0.3em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.4em 0 1em 0; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; } td.num { text-align: right; }
.badge { background: #fde7c7; color: #7a4100; border-radius: 0.6em; padding: 0 0.5em; }
.regression { color: #b00; } .ok { color: #060; } .note { color: #555; font-size: 0.85em; }
img { max-width: 100%; }
"""


def _e(value) -> str:
    return html.escape(str(value))


def _table(head: list[str], rows: list[list[str]], numeric=()) -> str:
    out = ['<table><tr>%s</tr>' % ''.join('<th>%s</th>' % _e(h) for h in head)]
    for row in rows:
        out.append('<tr>%s</tr>' % ''.join(
            '<td%s>%s</td>' % (' class="num"' if i in numeric else '', _e(cell))
            for i, cell in enumerate(row)))
    out.append('</table>')
    return '\n'.join(out)


def _regressions_section(found: list[regressions.Regression], searched: int, short: int,
                         min_change_pct: float, left_out: list[str] = (),
                         unjudged: list[regressions.Unjudged] = ()) -> str:
    note = ('%d series (configuration x host) searched, %d too short for the test (fewer than '
            '%d runs); a step counts when the one-sided Mann-Whitney test says slower and the '
            'median moved by more than %g%%.' % (searched, short, regressions.min_runs(),
                                                  min_change_pct))
    if left_out:
        note += ' ' + ' '.join(line.strip() for line in left_out)
    pending = ''
    if unjudged:  # a possible step down the test cannot judge yet: no 'No step down found'
        fields = [regressions.unjudged_summary(u) for u in unjudged]
        pending = ('<p class="regression">%s not judged: %s.</p>%s' % (
                       cnn_util.counted(len(unjudged), 'series', 'series'),
                       _e(regressions.unjudged_note(unjudged)),
                       _table(list(fields[0]), [list(f.values()) for f in fields])))
    if not found:
        return ('<h2>Regressions</h2>%s<p class="note">%s</p>' % (
            pending or '<p class="ok">No step down found.</p>', _e(note)))
    fields = [regressions.summary(r) for r in found]
    head = list(fields[0])
    return ('<h2>Regressions</h2><p class="regression">%s found.</p>%s%s'
            '<p class="note">%s</p>' % (cnn_util.counted(len(found), 'step down', 'steps down'),
                                        _table(head, [list(f.values()) for f in fields]),
                                        pending, _e(note)))


def _latest_table(runs: list[dict]) -> str:
    rows = []
    for host in sorted({r['hostname'] or '?' for r in runs}):
        mine = [r for r in runs if (r['hostname'] or '?') == host]
        batch = [mine[i] for i in plots.repeat_batches(mine)[-1]]
        rates = [r['images_per_sec'] for r in batch]
        spread = (max(rates) - min(rates)) / 2 / statistics.median(rates) if len(rates) > 1 \
            else 0.0
        rows.append([host, batch[-1]['run_utc'][:19].replace('T', ' '), batch[-1]['label'] or '-',
                     '%.1f' % statistics.median(rates) + records.rate_suffix(batch[-1]),
                     '±%.1f%%' % (100 * spread),
                     str(len(rates)), str(len(mine)), batch[-1]['tf_version'] or '?'])
    return _table(['host', 'latest run (UTC)', 'label', 'images/sec (latest batch)', 'spread',
                   'repeats', 'runs', 'TensorFlow'], rows, numeric=(3, 4, 5, 6))


def _marked_table(rows: list[dict], what: str) -> str:
    """The runs of a configuration `what` says (left out of the verdicts, or kept unclean),
    each with its host-load word (records.host_load_word, the
    words `list` and `history` give: 'busy', 'stopped at 28 of 100', 'not measured'); '' when
    there are none."""
    if not rows:
        return ''
    body = ''.join('<tr><td class="num">#%d</td><td>%s</td><td>%s</td><td>%s</td>'
                   '<td class="num">%s</td><td><span class="badge">%s</span></td></tr>' % (
                       r['id'], _e(r['run_utc'][:19].replace('T', ' ')),
                       _e(r['hostname'] or '?'), _e(r['label'] or '-'),
                       _e('%.1f' % r['images_per_sec'] + records.rate_suffix(r)),
                       _e(records.host_load_word(r, clean=''))) for r in rows)
    return ('<p class="note">%s</p><table><tr><th>run</th><th>finished (UTC)</th>'
            '<th>host</th><th>label</th><th>images/sec</th><th>why</th></tr>%s</table>'
            % (_e(what), body))


def _unclean_table(rows: list[dict], kept: bool) -> str:
    """The runs of a configuration left out of the verdicts (or kept, `kept`); '' when none."""
    what = ('%s kept in the verdicts (%s)' % (cnn_util.counted(len(rows), 'unclean run'),
                                               clean_runs.INCLUDE_FLAG) if kept else
            '%s left out of the verdicts (%s keeps them)' % (cnn_util.counted(len(rows), 'run'),
                                                            clean_runs.INCLUDE_FLAG))
    return _marked_table(rows, '%s:' % what)


def build_page(rows: list[dict], db_path: str, min_change_pct: float, title: str = '',
               include_unclean: bool = False,
               recent_runs: int = regressions.DEFAULT_RECENT_RUNS) -> str:
    """The page's HTML for `rows` (store.select_runs dicts, oldest first).

    Args:
      rows: the runs.
      db_path: the database (named on the page).
      min_change_pct: --min_change.
      title: the page's title (default 'tf_cnn_benchmarks results').
      include_unclean: keep unclean runs in the search and the plots (metrics/clean_runs.py).
      recent_runs: --recent_runs (regressions.find_steps).

    Raises:
      plots.PlotError: matplotlib is missing.
    """
    chosen = clean_runs.select(rows, records.run_state, include_unclean)
    unclean: dict[str, list] = {}
    for r, _ in chosen.left_out + chosen.kept_unclean:
        unclean.setdefault(r['config_key'], []).append(r)
    found, searched, short, unjudged = regressions.search(chosen.kept, min_change_pct,
                                                          recent_runs=recent_runs)
    steps_of: dict[str, list] = {}
    for r in found:
        steps_of.setdefault(r.config_key, []).append((r.first_slower['id'],
                                                      r.step.judgement.ratio - 1.0))
    first_of: dict[str, dict] = {}
    for row in rows:
        first_of.setdefault(row['config_key'], row)
    by_config: dict[str, list[dict]] = {key: [] for key in first_of}
    for row in chosen.kept:
        by_config[row['config_key']].append(row)
    groups: dict[tuple[str, str], list[str]] = {}
    for key, first in first_of.items():
        groups.setdefault((first['model'], first['precision']), []).append(key)
    hosts = sorted({r['hostname'] or '?' for r in rows})
    span = ('%s to %s' % (rows[0]['run_utc'][:10], rows[-1]['run_utc'][:10]) if rows
            else 'no runs')
    parts = ['<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
             '<title>%s</title><style>%s</style></head><body>' % (
                 _e(title or 'tf_cnn_benchmarks results'), STYLE),
             '<h1>%s</h1>' % _e(title or 'tf_cnn_benchmarks results'),
             '<p class="note">%s of %s on %s (%s), %s; database %s.</p>' % (
                 cnn_util.counted(len(rows), 'run'), cnn_util.counted(len(by_config),
                                                                      'configuration'),
                 cnn_util.counted(len(hosts), 'host'), _e(', '.join(hosts)), _e(span),
                 _e(db_path)),
             _regressions_section(found, searched, short, min_change_pct, chosen.lines(),
                                  unjudged)]
    unmeasured = clean_runs.unmeasured_line([records.run_state(r) for r in chosen.kept],
                                            'run kept in the verdicts',
                                            'runs kept in the verdicts')
    if unmeasured:  # kept with --include_unclean_runs
        parts.append('<p class="note">%s</p>' % _e(unmeasured))
    for (model, precision) in sorted(groups):
        parts.append('<h2 id="%s-%s">%s %s</h2>' % (_e(model), _e(precision), _e(model),
                                                     _e(precision)))
        for key in sorted(groups[(model, precision)]):
            runs, first = by_config[key], first_of[key]
            parts.append('<h3>%s</h3><p class="note">%s</p>' % (
                _e(records.describe_config(first)), _e(key)))
            if runs:
                png = plots.history_png(runs, steps_of.get(key, ()), dpi=100)
                parts.append('<img alt="images/sec per run of %s" src="data:image/png;base64,'
                             '%s">' % (_e(records.describe_config(first)),
                                       base64.b64encode(png).decode('ascii')))
                parts.append(_latest_table(runs))
            parts.append(_unclean_table(unclean.get(key, []), include_unclean))
    parts.append('</body></html>')
    return '\n'.join(parts)


def write_page(out_dir: str, rows: list[dict], db_path: str, min_change_pct: float,
               include_unclean: bool = False,
               recent_runs: int = regressions.DEFAULT_RECENT_RUNS) -> str:
    """Writes OUT_DIR/index.html (the folder is made when missing); returns its path
    (build_page says what the arguments are).

    Raises:
      OSError: the folder or file cannot be written (a full disk: no partial file is left),
        with the page's path as its filename; plots.PlotError: no matplotlib.
    """
    text = build_page(rows, db_path, min_change_pct, include_unclean=include_unclean,
                      recent_runs=recent_runs)
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, 'index.html')
    target = file_systems.write_target(path)  # an index.html that is a link: its target
    tmp = target + '.tmp'
    try:
        with open(tmp, 'w', encoding='utf-8') as f:
            f.write(text)
        os.replace(tmp, target)
    except OSError as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise OSError(e.errno, e.strerror, path) from None
    return path
