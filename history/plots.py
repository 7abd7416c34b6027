"""The history plot of one configuration: images/sec per run, one line per host, the spread
of each batch of repeats, and the steps down found (a PNG made with matplotlib).

The x axis counts the configuration's runs in the order they finished (all hosts together), so
every run shows however the runs bunch in time; tick labels give the runs' dates (UTC
'12-01 02:10'; with the year, '2025-12-01 02:10', where the runs span more than one year, so
that a series across a new year reads in order: `ticks`). A batch of
repeats is a stretch of one host's consecutive runs with the same label, flags and
environment (a sweep's repeats, a night's runs): its spread is a band from its slowest to its
fastest run in the host's colour. A step down is a red dashed line before its first slower
run, labelled with the change.
"""

from __future__ import annotations

import io
import statistics

from .. import package_info
from ..runtime import runtime_env
from . import records, series_metric

# Host colours (matplotlib's tab10 without its red and orange, which mark steps down).
HOST_COLOURS = ('#1f77b4', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#bcbd22',
                '#7f7f7f')
STEP_COLOUR = '#d62728'


class PlotError(RuntimeError):
    """matplotlib is missing; the message names the fix."""


def _pyplot():
    runtime_env.spare_home()  # matplotlib makes ~/.config/matplotlib as it loads
    try:
        import matplotlib
    except ImportError:
        raise PlotError('the history plots need matplotlib, which is not installed: pip '
                        'install matplotlib, or %s' % package_info.install_hint('plot')
                        ) from None
    matplotlib.use('Agg', force=True)
    from matplotlib import pyplot
    return pyplot


def host_colour(hosts: list[str], host: str) -> str:
    """The colour of `host` among the sorted `hosts` of a plot (cycling past 8 hosts)."""
    return HOST_COLOURS[sorted(hosts).index(host) % len(HOST_COLOURS)]


def repeat_batches(runs: list[dict]) -> list[list[int]]:
    """Positions in `runs` (one host's, oldest first) of each batch of repeats: consecutive
    runs with the same label, flags and environment."""
    batches: list[list[int]] = []
    previous = None
    for i, run in enumerate(runs):
        same = previous is not None and run.get('label') == previous.get('label') \
            and not records.changes(previous, run)
        if same:
            batches[-1].append(i)
        else:
            batches.append([i])
        previous = run
    return batches


def spans_years(rows: list[dict]) -> bool:
    """Whether the runs (oldest first, run_utc 'YYYY-MM-DDTHH:MM:SS...Z') finished in more
    than one calendar year (UTC)."""
    return bool(rows) and rows[0]['run_utc'][:4] != rows[-1]['run_utc'][:4]


def ticks(rows: list[dict], most: int = 8) -> tuple[list[int], list[str]]:
    """The x axis' ticks of the runs `rows` (oldest first): (positions, at most `most`
    evenly spaced, and their labels, the run's UTC finish time 'MM-DD HH:MM', or
    'YYYY-MM-DD HH:MM' on every tick where the runs span more than one year: `spans_years`)."""
    step = max(1, -(-len(rows) // most))
    positions = list(range(0, len(rows), step))
    start = 0 if spans_years(rows) else 5
    return positions, [rows[i]['run_utc'][start:16].replace('T', ' ') for i in positions]


def history_png(rows: list[dict], steps=(), title: str = '', dpi: int = 80,
                metric=series_metric.IMAGES_PER_SEC) -> bytes:
    """The PNG (bytes) of one configuration's runs.

    Args:
      rows: the configuration's runs (store.select_runs dicts), oldest first.
      steps: (first slower run's id, change as a fraction, e.g. -0.12) of each step down.
      title: the plot's title (default: the configuration, records.describe_config).
      dpi: dots per inch of the 9 x 3.6 inch figure.
      metric: the figure plotted (history/series_metric.py; every row has it).

    Raises:
      PlotError: matplotlib is missing.
    """
    plt = _pyplot()
    position = {row['id']: i for i, row in enumerate(rows)}
    hosts = sorted({row['hostname'] or '?' for row in rows})
    fig, ax = plt.subplots(figsize=(9, 3.6))
    for host in hosts:
        runs = [row for row in rows if (row['hostname'] or '?') == host]
        xs = [position[row['id']] for row in runs]
        ys = [row[metric.column] for row in runs]
        colour = host_colour(hosts, host)
        for batch in repeat_batches(runs):
            if len(batch) > 1:
                bx = [xs[i] for i in batch]
                by = [ys[i] for i in batch]
                ax.fill_between([bx[0] - 0.3, bx[-1] + 0.3], min(by), max(by), color=colour,
                                alpha=0.18, linewidth=0)
                ax.plot([bx[0] - 0.3, bx[-1] + 0.3], [statistics.median(by)] * 2, color=colour,
                        linewidth=1, alpha=0.6)
        ax.plot(xs, ys, color=colour, linewidth=2, marker='o', markersize=4, label=host)
    for run_id, change in steps:
        if run_id in position:
            x = position[run_id] - 0.5
            ax.axvline(x, color=STEP_COLOUR, linestyle='--', linewidth=2)
            ax.annotate('%+.1f%%' % (100 * change), (x, 1.0), xycoords=('data', 'axes fraction'),
                        xytext=(3, -12), textcoords='offset points', color=STEP_COLOUR)
    positions, labels = ticks(rows, most=6 if spans_years(rows) else 8)  # the year's width
    ax.set_xticks(positions)
    ax.set_xticklabels(labels, fontsize=8 if len(labels[0]) < 12 else 7)
    ax.set_xlabel('run (oldest first; UTC %s time)' % (
        'year-month-day' if spans_years(rows) else 'month-day'))
    ax.set_ylabel(metric.label)
    ax.set_title(title or records.describe_config(rows[0]), fontsize=10)
    ax.grid(True, axis='y', alpha=0.3)
    ax.legend(fontsize=8, loc='best')
    fig.tight_layout()
    out = io.BytesIO()
    fig.savefig(out, format='png', dpi=dpi)
    plt.close(fig)
    return out.getvalue()
