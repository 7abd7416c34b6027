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
percent, with the failed configurations listed; 3 (not judged) when it could not judge a
configuration both sweeps ran (`?`, or no successful or clean run on a side: named with its
runs per side; `--allow_unjudged`, which needs the gate, passes on the judged ones). `--json`
prints one JSON object (`comparison_json`) instead of the text, and on a usage error the
refusal's (significance.refusal_json) beside the `error:` line. A note before the table says
when the flags for every run differ between the sides in what they set, and what changed
(two spellings of one value, `--noresults_db` and `--results_db=false`, are the same; the
flags that only name or place a run, a night's --label or --results_db, never count:
metrics/configuration.py, the rule of every gate). Sweeps whose runs ran another
configuration (another device, data, mode or image size, or another count of allowed CPUs
where their runs recorded it: a sweep under `taskset -c 0` against one that was not pinned)
are noted, and a gate refuses them (exit status 2).

The statistics and the gate use each side's clean runs (metrics/clean_runs.py): a run whose
timed part shared the host (other processes above 25% of its cores, steal above 5%), was too
short for its host load to be measured, or that ran fewer timed steps than its --num_batches
is left out, its configuration's notes say how
many of a side's runs were, and a line per side after the table says why ('B: left out 2 of
12 runs: 2 shared the host (others used > 25% of the cores)'). `--include_unclean_runs` keeps
them (their side's notes then say 'busy host in B').

Listed after the table: configurations found on only one side ("only in A"), those both sides
ran but one side without a successful run ("failed in A": every run of it there failed or was
interrupted), and those whose every successful run on a side was left out ("left out in A").
Exit status 0; 1 the gate failed (a configuration slower); 2 when a side has no results file
or no sweep record in it (an empty file, a run's results JSON), an argument is bad, or a gate's
sweeps ran other configurations; 3 the gate could not judge.
"""

from __future__ import annotations

import json
import os
import sys
from typing import NamedTuple

# Absolute: `python -m tools.sweep` in a checkout makes `tools` a top-level package.
from tf_cnn_benchmarks import cnn_util
from tf_cnn_benchmarks.metrics import clean_runs, configuration
from tf_cnn_benchmarks.metrics import significance as regression

from .. import command_parser
from . import gate, host_load, results

USAGE = ('usage: tf_cnn_sweep compare A B [--fail_on_slower=PCT [--allow_unjudged]] '
         '[--include_unclean_runs] [--json]   (sweep output directories or results.jsonl '
         'files)')
LEFT_OUT = 'left out'  # the status a left-out record is given in compare's copy


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
    return 'TF %s, %s, %s, oneDNN %s, %s' % (env['tf_version'], env['cpu_model'], env['gpus'],
                                             env['onednn'], cnn_util.counted(len(records), 'run'))


def clean_side(records: list[dict], include: bool = False
               ) -> tuple[list[dict], clean_runs.Selection]:
    """One side's records for the statistics: each successful record that is not clean
    (metrics/clean_runs.py) given status 'left out' in a copy (kept with `include`), and the
    selection over the successful records."""
    ok = [r for r in records if r.get('status') == 'ok']
    chosen = clean_runs.select(ok, host_load.record_state, include)
    out = [id(r) for r, _ in chosen.left_out]
    return [dict(r, status=LEFT_OUT) if id(r) in out else r for r in records], chosen


def _left_out_note(config, side: str, records: list[dict]) -> str:
    """'B: 2 of 3 runs left out (busy, stopped at 28 of 100)' or ''."""
    mine = [r for r in records if results.config_of(r) == config
            and r.get('status') in ('ok', LEFT_OUT)]
    gone = [r for r in mine if r['status'] == LEFT_OUT]
    if not gone:
        return ''
    badges = sorted({host_load.record_state(r).badge for r in gone})
    return '%s: %d of %s left out (%s)' % (side, len(gone), cnn_util.counted(len(mine), 'run'),
                                          ', '.join(badges))


class Comparison(NamedTuple):
    """What `compare` found; the lists hold configuration labels (results.describe).

    Attributes:
      rows: per configuration in both sides: [model, batch, devices, precision,
        variable_update, A cell, B cell, 'B/A' ratio with 3 decimals, p, verdict, notes]; when
        a record of either side has a host load (tools/sweep/host_load.py), [A host load, B
        host load] come before the notes, which then name a side with a busy run kept; the
        notes name a side whose runs were left out ('B: 2 of 3 runs left out (busy)').
      only_a, only_b: configurations a side has records of (any status) and the other none.
      failed_a, failed_b: configurations both sides have records of, one side without a
        successful run.
      left_out_a, left_out_b: configurations both sides ran whose every successful run on a
        side was left out (metrics/clean_runs.py).
      gate_failed: the configurations that fail `fail_pct` (tools/sweep/gate.py; [] without).
      chosen_a, chosen_b: each side's clean_runs.Selection over its successful runs.
      unjudged: the configurations both sides ran that the test could not judge, each with
        its runs per side and why: those with verdict `?` (too few runs for the test) and
        those without a successful (or clean) run on a side ('lenet bs=8 gpus=1 fp32
        parameter_server (runs: 3 in A, 2 in B (1 failed); too few for the test)').
      unjudged_why: which of the reasons those have: a subset of {'few', 'failed', 'left
        out'} (gate.unjudged_advice turns it into what to do).
    """
    rows: list
    only_a: list
    only_b: list
    failed_a: list
    failed_b: list
    left_out_a: list
    left_out_b: list
    gate_failed: list
    chosen_a: clean_runs.Selection
    chosen_b: clean_runs.Selection
    unjudged: list
    unjudged_why: set


def _notes(config, a_records, b_records, a_used, b_used, notes: str, hosts: bool) -> list[str]:
    """The last cells of a row: [A host load, B host load] when `hosts`, then the notes with
    the busy sides kept and the left-out runs of each side added."""
    cells, extra = [], [notes]
    if hosts:
        cells = [host_load.compare_cell([r for r in records if results.config_of(r) == config])
                 for records in (a_records, b_records)]
        busy = [side for side, used in (('A', a_used), ('B', b_used))
                if any(host_load.is_busy(r) for r in used
                       if r.get('status') == 'ok' and results.config_of(r) == config)]
        extra.append('busy host in %s' % ' and '.join(busy) if busy else '')
    extra += [_left_out_note(config, 'A', a_used), _left_out_note(config, 'B', b_used)]
    return cells + ['; '.join(n for n in extra if n)]


def compare(a_records: list[dict], b_records: list[dict], fail_pct: float | None = None,
            include_unclean: bool = False) -> Comparison:
    """B against A per configuration over each side's clean runs (all successful ones with
    `include_unclean`); see Comparison for what is returned."""
    a_used, chosen_a = clean_side(a_records, include_unclean)
    b_used, chosen_b = clean_side(b_records, include_unclean)
    a_stats = results.config_stats(a_used)
    b_stats = results.config_stats(b_used)
    hosts = host_load.any_measured(a_records + b_records)
    rows, gate_failed, unsure, weak = [], [], [], set()
    for config in sorted(set(a_stats) & set(b_stats), key=results.sort_key):
        a, b = a_stats[config], b_stats[config]
        ratio = '%.3f' % (b.median / a.median) if a.median else 'inf'
        j = gate.judge(a, b, fail_pct)
        row = [str(v) for v in config] + [_cell(a), _cell(b), ratio, gate.p_cell(j),
                                          j.verdict]
        rows.append(row + _notes(config, a_records, b_records, a_used, b_used,
                                 gate.notes(j, fail_pct), hosts))
        if j.failed:
            gate_failed.append(results.describe(config))
        if j.verdict == '?':
            unsure.append(config)
            weak |= {config} if j.reason.startswith(gate.WEAK) else set()
    a_ran = {results.config_of(r) for r in a_records}
    b_ran = {results.config_of(r) for r in b_records}
    both = a_ran & b_ran
    a_gone = {results.config_of(r) for r in a_used if r.get('status') == LEFT_OUT}
    b_gone = {results.config_of(r) for r in b_used if r.get('status') == LEFT_OUT}

    def labels(configs):
        return [results.describe(c) for c in sorted(configs, key=results.sort_key)]

    unjudged, why = [], set()
    for config in sorted(set(unsure) | (both - (set(a_stats) & set(b_stats))),
                         key=results.sort_key):
        text, reasons = _unjudged(config, a_used, b_used, config in unsure, config in weak)
        unjudged.append(text)
        why |= reasons
    return Comparison(
        rows, labels(a_ran - b_ran), labels(b_ran - a_ran),
        labels(both - set(a_stats) - a_gone), labels(both - set(b_stats) - b_gone),
        labels((both & a_gone) - set(a_stats)), labels((both & b_gone) - set(b_stats)),
        gate_failed, chosen_a, chosen_b, unjudged, why)


def _unjudged(config, a_used: list[dict], b_used: list[dict], too_few: bool,
              weak: bool = False) -> tuple[str, set]:
    """A configuration the test could not judge, with its runs per side and why ('lenet
    bs=8 gpus=1 fp32 parameter_server (runs: 3 in A, 0 in B (3 failed))'), and which of the
    reasons 'few', 'weak' (`gate.judge`: a slowdown of the gate's size could not have been
    caught), 'failed' and 'left out' it has."""
    sides, why = [], set()
    for name, used in (('A', a_used), ('B', b_used)):
        mine = [r for r in used if results.config_of(r) == config]
        counts: dict[str, int] = {}
        for r in mine:
            status = r.get('status')
            if status == 'ok' and r.get('images_per_sec') is None:
                status = 'failed'  # no figure: config_stats does not count it either
            counts[status] = counts.get(status, 0) + 1
        others = ['%d %s' % (n, 'left out as unclean' if status == LEFT_OUT else status)
                  for status, n in counts.items() if status != 'ok']
        why |= {'left out' if status == LEFT_OUT else 'failed' for status in counts
                if status != 'ok'}
        sides.append('%d in %s%s' % (counts.get('ok', 0), name,
                                     ' (%s)' % ', '.join(others) if others else ''))
    if too_few and not why:
        why = {'weak' if weak else 'few'}  # (with failed or left-out runs, fix those)
    return '%s (runs: %s%s)' % (results.describe(config), ', '.join(sides),
                                '; a slowdown of the gate\'s size could not have been caught'
                                if weak else '; too few for the test' if too_few else ''), why


def flags_meaning(extra_flags: list[str]) -> tuple:
    """What a record's flags for every run set: the values of the Params they parse to
    (flag_parsing.parse_flags), so two spellings of one value are equal (`--noresults_db`
    and `--results_db=false`, `--distortions` and `--distortions=true`, a flag at its
    default and none), as sorted (name, value) pairs without the flags that only name or
    place a run (metrics/configuration.py NAMING_FLAGS: a night's --label, --results_db);
    the flags themselves, as one pair, when they do not parse."""
    from tf_cnn_benchmarks import flag_parsing, params  # absolute: see the imports above
    try:
        p = flag_parsing.parse_flags(['tf_cnn_benchmarks'] + list(extra_flags), quiet=True)
    except params.ParamsError:
        return (('(flags that do not parse)', ' '.join(extra_flags)),)
    return tuple(sorted((name, tuple(v) if isinstance(v, list) else v)
                        for name, v in p._asdict().items()
                        if name not in configuration.NAMING_FLAGS))


def _flag_sets(records: list[dict]) -> tuple[set, set]:
    """(each distinct extra_flags of `records` joined by spaces, their meanings)."""
    given = {tuple(r.get('extra_flags', [])) for r in records}
    return {' '.join(f) for f in given}, {flags_meaning(f) for f in given}


def flag_changes(a_records: list[dict], b_records: list[dict]) -> tuple[str, list[str]]:
    """The note on the flags for every run when they differ between the sides in what they
    set ('' when not: the flags that name or place a run never count), and what changed
    from A to B ('--num_intra_threads None -> 1': metrics/configuration.py changed_flags, the
    words of every gate) when each side has one set of them."""
    (flags_a, meant_a), (flags_b, meant_b) = _flag_sets(a_records), _flag_sets(b_records)
    if meant_a == meant_b:
        return '', []
    changed = []
    if len(meant_a) == len(meant_b) == 1:
        changed = configuration.changed_flags(dict(*meant_a), dict(*meant_b))
    note = 'note: the flags for every run differ: A: %s; B: %s' % (
        ' | '.join(sorted(flags_a)) or 'none', ' | '.join(sorted(flags_b)) or 'none')
    return note + ('; what changed: %s' % '; '.join(changed) if changed else ''), changed


#: The parts of a configuration (metrics/configuration.py) a sweep sets for every run, not
#: per configuration: compare matches the others (results.AXES).
SWEEP_WIDE_PARTS = ('mode', 'device', 'data', 'image_size')


def other_configuration(a_records: list[dict], b_records: list[dict]) -> list[str]:
    """'device: 'cpu' in A, 'gpu' in B' for each part of the configuration the sides ran with
    other values, by the resolved flags of the successful runs of each configuration both
    ran (a part of one value per side; runs without resolved flags say nothing), and
    'cpus_allowed: 2 in A, 1 in B' where their host loads recorded other allowed-CPU counts
    (a sweep pinned with taskset against one that was not; runs without it say nothing)."""
    def parts(records, config):
        return {tuple(configuration.of_params(r['params'])[p] for p in SWEEP_WIDE_PARTS)
                for r in records if results.config_of(r) == config and r.get('status') == 'ok'
                and isinstance(r.get('params'), dict)}

    def cpus(records, config):  # the runs that recorded their allowed CPUs
        return {configuration.cpus_of(r.get('host_load')) for r in records
                if results.config_of(r) == config and r.get('status') == 'ok'} - {None}

    out = []
    shared = ({results.config_of(r) for r in a_records}
              & {results.config_of(r) for r in b_records})
    for config in sorted(shared, key=results.sort_key):
        lines = []
        a, b = parts(a_records, config), parts(b_records, config)
        if len(a) == len(b) == 1 and a != b:
            lines = configuration.differences(dict(zip(SWEEP_WIDE_PARTS, *a)),
                                              dict(zip(SWEEP_WIDE_PARTS, *b)),
                                              fields=SWEEP_WIDE_PARTS)
        a, b = cpus(a_records, config), cpus(b_records, config)
        if len(a) == len(b) == 1 and a != b:
            lines += ['%s: %d in A, %d in B' % (configuration.CPUS_FIELD, *a, *b)]
        out += [line for line in lines if line not in out]
    return out


def format_comparison(a_name: str, b_name: str, a_records: list[dict],
                      b_records: list[dict], fail_pct: float | None = None,
                      include_unclean: bool = False, allow_unjudged: bool = False
                      ) -> tuple[str, int, dict]:
    """The text `compare` prints: the sides, a markdown table, what was left out of each side
    and why, the configurations only in one side, those without a successful (or clean) run
    in one side, and with `fail_pct` the gate's line; the gate's exit status (gate.exit_status:
    0, 1 a configuration slower, 3 not judged; with `allow_unjudged`, configurations it could
    not judge do not count: --allow_unjudged); and the same as one JSON object
    (`comparison_json`)."""
    c = compare(a_records, b_records, fail_pct, include_unclean)
    head = ['model', 'batch/device', 'devices', 'precision', 'variable_update', 'A images/sec',
            'B images/sec', 'B/A', 'p', 'verdict', 'notes']
    hosts = host_load.any_measured(a_records + b_records)
    if hosts:
        head[-1:] = ['A host load', 'B host load', 'notes']
    lines = ['A: %s (%s)' % (a_name, _side(a_records)),
             'B: %s (%s)' % (b_name, _side(b_records)), '']
    note, changed = flag_changes(a_records, b_records)  # by meaning: --noresults_db is
    if note:                                             # --results_db=false
        lines += [note, '']
    other = other_configuration(a_records, b_records)
    if other:
        lines += ['note: A and B ran other configurations (%s): a gate (%s) refuses to judge '
                  'them' % ('; '.join(other), gate.OPTION), '']
    if c.rows:
        lines.append('| ' + ' | '.join(head) + ' |')
        lines.append('| ' + ' | '.join('---' if i < 5 or i > 8 else '---:'
                                       for i in range(len(head))) + ' |')
        lines += ['| ' + ' | '.join(row).rstrip() + ' |' for row in c.rows]
        lines += ['', 'noise: ± half the range of the repeats as %% of the median; p: one-sided '
                      'Mann-Whitney U over the repeats (B slower, or faster, than A); slower/'
                      'faster: p <= %g; same: neither; ?: too few repeats for the test (%d per '
                      'side needed), or for a gate, a slowdown of its size could not have been '
                      'caught (the notes say why).' % (gate.regression.ALPHA,
                                         gate.regression.min_repeats())]
        if hosts:
            lines += ['', 'host load: the highest share of a run\'s cores that other processes '
                          'used during its timed part, over the side\'s runs (busy: runs above '
                          'the limit, whose images/sec is not representative; '
                          'metrics/host_load.py).']
    else:
        lines.append('no configuration has clean successful runs in both A and B (the runs '
                     'left out as unclean are counted below).' if c.chosen_a.lines()
                     or c.chosen_b.lines() else
                     'no configuration has successful runs in both A and B.')
    left = ['%s: %s' % (side, line) for side, chosen in (('A', c.chosen_a), ('B', c.chosen_b))
            for line in chosen.lines()]
    if left:
        lines += [''] + left
    for title, configs in _lists(c):
        if configs:
            lines += ['', '%s (%d): %s' % (title, len(configs), '; '.join(configs))]
    shared = ({results.config_of(r) for r in c.chosen_a.kept}
              & {results.config_of(r) for r in c.chosen_b.kept})
    used = [r for r in c.chosen_a.kept + c.chosen_b.kept if results.config_of(r) in shared]
    missing = host_load.unmeasured(used)
    if missing:
        lines += ['', host_load.unmeasured_line(missing, len(used))]
    verdict = head.index('verdict')
    judged = sum(row[verdict] != '?' for row in c.rows)
    gate_line = None
    if fail_pct is not None:
        gone = [(side, [s for r, s in chosen.left_out
                        if results.describe(results.config_of(r)) in configs])
                for side, chosen, configs in (('A', c.chosen_a, c.left_out_a),
                                              ('B', c.chosen_b, c.left_out_b))]
        [gate_line] = gate.gate_lines(c.gate_failed, fail_pct, len(c.rows), judged,
                                      gate.left_out_parts(gone), len(missing),
                                      c.unjudged, c.unjudged_why, allow_unjudged)
        lines += ['', gate_line]
    # A regression found exits 1; a gate that judged nothing (every run failed or was left
    # out, files of something else, too few repeats for the test), or not a configuration
    # both sides ran (unless --allow_unjudged), exits 3: not judged is no pass.
    status = gate.exit_status(c.gate_failed, fail_pct, judged, c.unjudged, allow_unjudged)
    data = comparison_json(a_name, b_name, c, fail_pct, changed, other, gate_line, status)
    return '\n'.join(lines), status, data


def _lists(c: Comparison) -> list[tuple[str, list]]:
    return [('only in A', c.only_a), ('only in B', c.only_b), ('failed in A', c.failed_a),
            ('failed in B', c.failed_b), ('left out in A', c.left_out_a),
            ('left out in B', c.left_out_b)]


def _number(text: str):
    try:
        return float(text)
    except ValueError:
        return None


def comparison_json(a_name: str, b_name: str, c: Comparison, fail_pct: float | None,
                    changed: list[str], other: list[str], gate_line: str | None,
                    status: int) -> dict:
    """`compare --json`: one object, units in the key names.

    Returns:
      {'a', 'b' (the paths), 'fail_on_slower_pct' (None without a gate), 'what_changed' (the
       flags for every run, `flag_changes`), 'other_configuration' (`other_configuration`),
       'configurations': [{'model', 'batch_size_per_device', 'num_devices', 'precision',
       'variable_update', 'configuration' (results.describe), 'a_median_images_per_sec',
       'a_noise_pct', 'a_runs', the same for b, 'b_over_a_ratio', 'p_value' (one-sided, in
       the ratio's direction; None for '?'), 'verdict' ('slower', 'faster', 'same', '?'),
       'gate_failed', 'notes'}], 'not_judged' (each with its runs per side and why), the
       lists 'only_in_a', ..., 'left_out_in_b', 'left_out_runs' {'a', 'b': the lines saying
       how many and why}, 'gate': {'verdict' ('passed', 'regression', 'not judged'),
       'line'} (None without --fail_on_slower), and 'exit_status'}.
    """
    a_stats = results.config_stats(c.chosen_a.kept)  # the runs the statistics used
    b_stats = results.config_stats(c.chosen_b.kept)
    configs = []
    for row in c.rows:
        config = (row[0], int(row[1]), int(row[2]), row[3], row[4])
        a, b = a_stats.get(config), b_stats.get(config)
        configs.append({
            'model': row[0], 'batch_size_per_device': int(row[1]), 'num_devices': int(row[2]),
            'precision': row[3], 'variable_update': row[4],
            'configuration': results.describe(config),
            'a_median_images_per_sec': a and a.median, 'a_noise_pct': a and 100 * a.noise,
            'a_runs': a and a.n, 'b_median_images_per_sec': b and b.median,
            'b_noise_pct': b and 100 * b.noise, 'b_runs': b and b.n,
            'b_over_a_ratio': a and b and (b.median / a.median if a.median else None),
            'p_value': _number(row[8]), 'verdict': row[9],
            'gate_failed': results.describe(config) in c.gate_failed, 'notes': row[-1]})
    out = {'a': a_name, 'b': b_name, 'fail_on_slower_pct': fail_pct, 'what_changed': changed,
           'other_configuration': other, 'configurations': configs,
           'not_judged': list(c.unjudged)}
    out.update({title.replace(' ', '_').lower(): list(items) for title, items in _lists(c)})
    out['left_out_runs'] = {'a': c.chosen_a.lines(), 'b': c.chosen_b.lines()}
    out['gate'] = None if fail_pct is None else {'verdict': regression.VERDICTS[status],
                                                 'line': gate_line}
    out['exit_status'] = status
    return out


def main(argv: list[str]) -> int:
    """`compare A B`; returns the exit status (0; 1 a configuration slower beyond the gate's
    tolerance; 2 a usage error; 3 the gate could not judge). A usage error is one `error:`
    line on stderr and, with --json, its object (significance.refusal_json) on stdout."""
    if argv and argv[0] in ('-h', '--help'):
        print(USAGE + '\n\n' + __doc__)
        return 0
    as_json = command_parser.last_boolean(argv, gate.JSON[2:])  # before they parse
    try:
        return _compare(argv)
    except gate.UsageError as e:
        print('error: %s' % e, file=sys.stderr)
        if as_json:
            print(json.dumps(regression.refusal_json(str(e), regression.USAGE),
                             sort_keys=True))
        return regression.USAGE


def _compare(argv: list[str]) -> int:
    """`main` after --help.

    Raises:
      gate.UsageError: a bad argument, a side without sweep records, a gate's sweeps of other
        configurations.
    """
    try:
        paths, fail_pct, include, allow, as_json = gate.parse_options(argv)
    except gate.UsageError as e:
        raise gate.UsageError('%s. %s' % (e, USAGE)) from None
    if len(paths) != 2:
        raise gate.UsageError('compare takes two sweeps. Received %d argument(s). %s' % (
            len(paths), USAGE))
    gone = cnn_util.working_folder_problem(('the sweep', path) for path in paths)
    if gone:
        raise gate.UsageError(gone)
    sides = []
    for side, path in zip('AB', paths):
        jsonl = results.results_path(path)
        if not os.path.isfile(jsonl):
            raise gate.UsageError('no results file at %s (give a sweep output directory or '
                                  'its results.jsonl)' % jsonl)
        try:
            records, bad = results.load_records(jsonl)
        except OSError as e:
            raise gate.UsageError('cannot read %s: %s (give a sweep output directory this '
                                  'user can read)' % (jsonl, e.strerror or e)) from None
        if not records:  # a wrong path: no comparison (and no gate) against nothing
            raise gate.UsageError(
                '%s (%s) holds no sweep records (%s): give a sweep output directory or its '
                'results.jsonl' % (side, jsonl, 'an empty file' if not bad else
                                   '%s, none a sweep record' % cnn_util.counted(bad, 'line')))
        if bad:
            print('warning: %s: %s skipped: not sweep records'
                  % (jsonl, cnn_util.counted(bad, 'line')), file=sys.stderr)
        sides.append(records)
    other = other_configuration(*sides)
    if other and fail_pct is not None:  # the rule of every gate: metrics/configuration.py
        raise gate.UsageError(
            '%s: A and B ran other configurations (%s); a gate compares runs of the same '
            'configuration: give sweeps of the same --device, data (--data_dir, --data_name), '
            'mode (--forward_only, --eval), --image_size and allowed CPUs (taskset, numactl, '
            'a container\'s cpuset)' % (gate.OPTION, '; '.join(other)))
    text, status, data = format_comparison(paths[0], paths[1], sides[0], sides[1], fail_pct,
                                           include, allow)
    print(json.dumps(data, sort_keys=True) if as_json else text)
    return status
