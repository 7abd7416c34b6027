"""`tf_cnn_sweep compare A B`: B/A images/sec per configuration of two sweeps, with the noise.

A and B are sweep output directories (or their results.jsonl files), e.g. the same sweep on two
machines, two TensorFlow versions or two commits. Configurations (model, batch size per
device, devices, precision, variable_update) are matched between the sides; for each one in
both, the table gives each side's median images/sec over its successful repeats and its noise
(±: half the range of the repeats, (max - min) / 2, as a percentage of the median), the ratio
B/A of the medians, the p-value of a one-sided Mann-Whitney test over the repeats and a verdict
(tools/sweep/gate.py: slower, faster, same, or ? with the reason in the notes column when there
are too few repeats for the test; 3 per side are needed), and when the runs measured it, each
side's host load (tools/sweep/host_load.py: the busiest run's share of its cores that other
processes used, and how many runs were on a busy host). `--fail_on_slower=PCT` makes it a
regression gate: exit status 1 when a configuration is slower by the test and by more than PCT
percent, with the failed configurations listed.

Listed after the table: configurations found on only one side ("only in A"), and those both
sides ran but one side without a successful run ("failed in A": every run of it there failed or
was interrupted). Exit status 0 (1: the gate failed), or 2 when a side has no results file or
an argument is bad.
"""

from __future__ import annotations

import os
import sys

from . import gate, host_load, results

USAGE = ('usage: tf_cnn_sweep compare A B [--fail_on_slower=PCT]   (sweep output directories or '
         'results.jsonl files)')


def verdict(a: results.Stats, b: results.Stats) -> str:
    """'same', 'faster', 'slower' (B against A) or '?' when there are too few repeats for
    the test (tools/sweep/gate.py)."""
    return gate.judge(a, b).verdict


def _cell(stats: results.Stats) -> str:
    if stats.n < 2:
        return '%.1f (1 run)' % stats.median
    return '%.1f ±%.1f%% (n=%d)' % (stats.median, 100 * stats.noise, stats.n)


def _side(records: list[dict]) -> str:
    env = {}
    for name in ('tf_version', 'cpu_model', 'gpus', 'onednn'):
        values = []
        for r in records:
            v = (r.get('environment') or {}).get(name)
            v = (', '.join(v) or 'no GPU') if isinstance(v, list) else v
            if v is not None and v not in values:
                values.append(v)
        env[name] = ' / '.join(str(v) for v in values) or '?'
    return 'TF %s, %s, %s, oneDNN %s, %d runs' % (env['tf_version'], env['cpu_model'],
                                                  env['gpus'], env['onednn'], len(records))


def _host_cells(config, a_records, b_records, notes: str) -> list[str]:
    """[A host load, B host load, notes with 'busy host in A/B' added] of a configuration."""
    cells, busy = [], []
    for side, records in (('A', a_records), ('B', b_records)):
        mine = [r for r in records if results.config_of(r) == config]
        cells.append(host_load.compare_cell(mine))
        if any(host_load.is_busy(r) for r in mine if r.get('status') == 'ok'):
            busy.append(side)
    if busy:
        notes = '; '.join(n for n in (notes, 'busy host in %s' % ' and '.join(busy)) if n)
    return cells + [notes]


def compare(a_records: list[dict], b_records: list[dict], fail_pct: float | None = None
            ) -> tuple[list[list[str]], list[str], list[str], list[str], list[str], list[str]]:
    """Returns (rows, only in A, only in B, failed in A, failed in B, gate failures).

    Each row: [model, batch, devices, precision, variable_update, A cell, B cell, 'B/A' ratio
    with 3 decimals, p, verdict, notes]; when a record of either side has a host load
    (tools/sweep/host_load.py), [A host load, B host load] come before the notes, which then
    name a side with a run on a busy host; gate failures: the labels of the configurations that
    fail `fail_pct` (tools/sweep/gate.py; [] without it). The lists hold configuration labels:
    'only in' a side that has records of it (any status) while the other has none; 'failed in'
    a side without a successful run of a configuration both sides have records of.
    """
    a_stats = results.config_stats(a_records)
    b_stats = results.config_stats(b_records)
    hosts = host_load.any_measured(a_records + b_records)
    rows, gate_failed = [], []
    for config in sorted(set(a_stats) & set(b_stats), key=results.sort_key):
        a, b = a_stats[config], b_stats[config]
        ratio = '%.3f' % (b.median / a.median) if a.median else 'inf'
        j = gate.judge(a, b, fail_pct)
        row = [str(v) for v in config] + [_cell(a), _cell(b), ratio, gate.p_cell(j),
                                          j.verdict, gate.notes(j, fail_pct)]
        if hosts:
            row[-1:] = _host_cells(config, a_records, b_records, row[-1])
        rows.append(row)
        if j.failed:
            gate_failed.append(results.describe(config))
    a_ran = {results.config_of(r) for r in a_records}
    b_ran = {results.config_of(r) for r in b_records}

    def labels(configs):
        return [results.describe(c) for c in sorted(configs, key=results.sort_key)]

    return (rows, labels(a_ran - b_ran), labels(b_ran - a_ran),
            labels((a_ran & b_ran) - set(a_stats)), labels((a_ran & b_ran) - set(b_stats)),
            gate_failed)


def format_comparison(a_name: str, b_name: str, a_records: list[dict],
                      b_records: list[dict], fail_pct: float | None = None) -> tuple[str, bool]:
    """The text `compare` prints: the sides, a markdown table, the configurations only in one
    side, those without a successful run in one side, and with `fail_pct` the gate's line;
    and whether the gate failed."""
    rows, only_a, only_b, failed_a, failed_b, gate_failed = compare(a_records, b_records,
                                                                    fail_pct)
    head = ['model', 'batch/device', 'devices', 'precision', 'variable_update', 'A images/sec',
            'B images/sec', 'B/A', 'p', 'verdict', 'notes']
    hosts = host_load.any_measured(a_records + b_records)
    if hosts:
        head[-1:] = ['A host load', 'B host load', 'notes']
    lines = ['A: %s (%s)' % (a_name, _side(a_records)),
             'B: %s (%s)' % (b_name, _side(b_records)), '']
    flags_a = {' '.join(r.get('extra_flags', [])) for r in a_records}
    flags_b = {' '.join(r.get('extra_flags', [])) for r in b_records}
    if flags_a != flags_b:
        lines += ['note: the flags for every run differ: A: %s; B: %s' % (
            ' | '.join(sorted(flags_a)) or 'none', ' | '.join(sorted(flags_b)) or 'none'), '']
    if rows:
        lines.append('| ' + ' | '.join(head) + ' |')
        lines.append('| ' + ' | '.join('---' if i < 5 or i > 8 else '---:'
                                       for i in range(len(head))) + ' |')
        lines += ['| ' + ' | '.join(row).rstrip() + ' |' for row in rows]
        lines += ['', 'noise: ± half the range of the repeats as %% of the median; p: one-sided '
                      'Mann-Whitney U over the repeats (B slower, or faster, than A); slower/'
                      'faster: p <= %g; same: neither; ?: too few repeats for the test (%d per '
                      'side needed).' % (gate.regression.ALPHA,
                                         gate.regression.min_repeats())]
        if hosts:
            lines += ['', 'host load: the highest share of a run\'s cores that other processes '
                          'used during its timed part, over the side\'s runs (busy: runs above '
                          'the limit, whose images/sec is not representative; '
                          'metrics/host_load.py).']
    else:
        lines.append('no configuration has successful runs in both A and B.')
    for title, configs in (('only in A', only_a), ('only in B', only_b),
                           ('failed in A', failed_a), ('failed in B', failed_b)):
        if configs:
            lines += ['', '%s (%d): %s' % (title, len(configs), '; '.join(configs))]
    verdict = head.index('verdict')
    judged = sum(row[verdict] != '?' for row in rows)
    if fail_pct is not None:
        lines += [''] + gate.gate_lines(gate_failed, fail_pct, len(rows), judged)
    # A gate that judged nothing (every run failed, files of something else, too few repeats
    # for the test) fails.
    return '\n'.join(lines), bool(gate_failed) or (fail_pct is not None and not judged)


def main(argv: list[str]) -> int:
    """`compare A B`; returns the exit status."""
    if argv and argv[0] in ('-h', '--help'):
        print(USAGE + '\n\n' + __doc__)
        return 0
    try:
        paths, fail_pct = gate.parse_args(argv)
    except gate.UsageError as e:
        print('error: %s. %s' % (e, USAGE), file=sys.stderr)
        return 2
    if len(paths) != 2:
        print('error: compare takes two sweeps. Received %d argument(s). %s' % (
            len(paths), USAGE), file=sys.stderr)
        return 2
    sides = []
    for path in paths:
        jsonl = results.results_path(path)
        if not os.path.isfile(jsonl):
            print('error: no results file at %s (give a sweep output directory or its '
                  'results.jsonl)' % jsonl, file=sys.stderr)
            return 2
        records, bad = results.load_records(jsonl)
        if bad:
            print('warning: %s: %d line(s) are not sweep records and were skipped'
                  % (jsonl, bad), file=sys.stderr)
        sides.append(records)
    text, gate_failed = format_comparison(paths[0], paths[1], sides[0], sides[1], fail_pct)
    print(text)
    return 1 if gate_failed else 0
