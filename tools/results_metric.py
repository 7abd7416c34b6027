"""`tf_cnn_results history` and `regressions` --metric: the figure a series is followed by
(history/series_metric.py: images/sec, the default, or a per-batch latency percentile, whose
rise is the regression), its flag, and the runs left out for lacking it (one line).

    tf_cnn_results history --mode=forward-only --batch_size=1 --metric=latency_p99_ms
    tf_cnn_results regressions --metric=latency_p99_ms --fail_on_regression
"""

from __future__ import annotations

import argparse
import sys

from tf_cnn_benchmarks.history import records, series_metric
from tf_cnn_benchmarks.metrics import significance


def _metric(text: str) -> series_metric.Metric:
    try:
        return series_metric.metric_of(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_flag(parser) -> None:
    """Adds --metric=NAME (a series_metric.Metric; default images_per_sec) to `parser`."""
    parser.add_argument('--metric', type=_metric, default=series_metric.IMAGES_PER_SEC,
                        metavar='NAME', help=series_metric.HELP)


def measured(rows: list[dict], args) -> tuple[list[dict], str | None]:
    """The rows that recorded args.metric, and the line on those left out (printed here
    unless --json: the JSON object carries it, `with_left_out`), None when none was."""
    kept, line = series_metric.measured(rows, args.metric)
    if line and not args.json:
        print(line)
    return kept, line


def with_left_out(obj: dict, line: str | None) -> dict:
    """A --json object with 'metric_left_out': the line on the runs left out for lacking the
    metric (None: none was)."""
    return dict(obj, metric_left_out=line)


def none_measured(rows: list[dict], metric: series_metric.Metric) -> str:
    """The `error:` text of `history` when no run of the configuration recorded the metric:
    'no run of trivial fp32 training ... recorded latency p99 ms (a latency is measured by
    --forward_only runs and --eval); --metric=images_per_sec follows its images/sec'."""
    return ('no run of %s recorded %s (a latency is measured by --forward_only runs and '
            '--eval); --metric=images_per_sec follows its images/sec'
            % (records.describe_config(rows[0]), metric.label))


def none_measured_gate(total: int, metric: series_metric.Metric) -> tuple[int, str]:
    """`regressions --fail_on_regression` when runs matched but none recorded the metric:
    (NOT_JUDGED, its gate line)."""
    return significance.NOT_JUDGED, (
        'gate: NOT JUDGED: no series was searched: none of the %d matching runs recorded %s '
        '(a latency is measured by --forward_only runs and --eval)' % (total, metric.label))


def error(text: str) -> int:
    """Prints `error: text` to stderr; 1."""
    print('error: %s' % text, file=sys.stderr)
    return 1


def configurations_of(rows: list[dict], metric: series_metric.Metric) -> list[dict]:
    """The rows `history` picks its one configuration from: for a latency, only the
    configurations whose runs recorded it (forward-only runs and evaluations), when any did,
    so that `--model=lenet --metric=latency_p99_ms` over lenet's training and forward-only
    runs follows the forward-only one (it named training first, which has no latency); all
    `rows` for images/sec or when none recorded the metric (none_measured says so)."""
    if metric.higher_is_better:
        return rows
    keys = {r['config_key'] for r in rows if r.get(metric.column) is not None}
    return [r for r in rows if r['config_key'] in keys] or rows
