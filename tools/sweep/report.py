"""The report of a sweep: `report.md` (a table per model) and PNG plots, from the results file.

Table cells are total images/sec over all devices: the median of the configuration's successful
repeats, then `±x%`, half the range of the repeats ((max - min) / 2) as a percentage of the
median (shown from 2 repeats on). Scaling efficiency on N devices = images/sec on N devices /
(N x images/sec on 1 device), same model, per-device batch size, precision and variable_update
(the medians). Plots, in <output_dir>/plots/: `<model>_images_per_sec.png` (images/sec against
the per-device batch size, one line per device count and variant, bars from the lowest to the
highest repeat) and, with runs on 1 device and on more, `<model>_scaling.png` (scaling
efficiency in % against the device count, one line per batch size and variant, 100% = linear).
After the utilisation section, "Host load" lists each run with what else used its CPUs
(tools/sweep/host_load.py).
"""

from __future__ import annotations

import datetime
import os
import re
import sys

from tf_cnn_benchmarks import cnn_util, package_info
from tf_cnn_benchmarks.runtime import file_systems, runtime_env

from . import figures, host_load, results


class NotSaved(OSError):
    """report.md or a plot could not be written (the errno, strerror and filename of the first
    failure: a full disk, say); `text` is the report for the screen all the same."""

    def __init__(self, error: OSError, filename: str, text: str):
        super().__init__(error.errno, error.strerror or str(error), error.filename or filename)
        self.text = text


MATPLOTLIB_HINT = ('matplotlib is not installed: pip install matplotlib, or %s; then run: '
                   'tf_cnn_sweep report OUTPUT_DIR' % package_info.install_hint('plot'))


def format_rate(stats: results.Stats | None, repeats: int = 0) -> str:
    """'160.0 ±9.4%' (median ± half-range), '160.0' for one repeat; '(n=2)' when fewer
    repeats than `repeats` succeeded; '-' without stats."""
    if stats is None:
        return '-'
    text = '%.1f' % stats.median
    if stats.n >= 2:
        text += ' ±%.1f%%' % (100 * stats.noise)
    if stats.n < repeats:
        text += ' (n=%d)' % stats.n
    return text


def _variants(configs: list[tuple]) -> tuple[bool, bool]:
    """Whether precision and variable_update vary among the configurations."""
    return len({c[3] for c in configs}) > 1, len({c[4] for c in configs}) > 1


def model_table(model: str, records: list[dict]) -> str:
    """The markdown table of one model: a row per (precision, variable_update, batch size), a
    column of images/sec per device count, then a scaling-efficiency column per count > 1."""
    mine = [r for r in records if r['config']['model'] == model]
    stats = results.config_stats(mine)
    configs = sorted({results.config_of(r) for r in mine}, key=results.sort_key)
    failed = {results.config_of(r) for r in mine if r['status'] == 'failed'}
    stopped = {results.config_of(r) for r in mine if r['status'] == 'stopped'}
    repeats = max((s.n for s in stats.values()), default=0)
    devices = sorted({c[2] for c in configs})
    show_precision, show_update = _variants(configs)
    head = ['batch/device'] + (['precision'] if show_precision else []) + (
        ['variable_update'] if show_update else [])
    head += ['%d device%s' % (n, '' if n == 1 else 's') for n in devices]
    head += ['efficiency %d' % n for n in devices if n > 1 and 1 in devices]
    lines = ['| ' + ' | '.join(head) + ' |', '|' + ' ---: |' * len(head)]
    rows = sorted({(c[3], c[4], c[1]) for c in configs}, key=results.sort_key)
    for precision, update, batch in rows:
        cells = [str(batch)] + ([precision] if show_precision else []) + (
            [update] if show_update else [])
        for n in devices:
            config = (model, batch, n, precision, update)
            text = format_rate(stats.get(config), repeats)
            if config in failed:
                text = 'failed' if text == '-' else text + ' (some failed)'
            elif config in stopped:  # timed out: its figure covers part of the run
                text = 'stopped' if text == '-' else text + ' (some stopped)'
            cells.append(text)
        for n in devices:
            if n > 1 and 1 in devices:
                eff = results.scaling_efficiency(stats, (model, batch, n, precision, update))
                cells.append('-' if eff is None else '%.1f%%' % (100 * eff))
        lines.append('| ' + ' | '.join(cells) + ' |')
    fixed = []
    if not show_precision and configs:
        fixed.append('precision %s' % configs[0][3])
    if not show_update and configs:
        fixed.append('variable_update %s' % configs[0][4])
    intro = 'images/sec (all devices)%s; %s' % (
        ', median of %d repeats ± half their range' % repeats if repeats > 1 else '',
        ', '.join(fixed) or 'all variants')
    return '## %s\n\n%s.\n\n%s\n' % (model, intro, '\n'.join(lines))


def _distinct(records: list[dict], name: str) -> str:
    values = []
    for r in records:
        value = (r.get('environment') or {}).get(name)
        if isinstance(value, list):
            value = ', '.join(value) or 'none'
        if value is not None and str(value) not in values:
            values.append(str(value))
    return ' / '.join(values) or 'unknown'


def merged_flags(args: list[str]) -> tuple[list[str], list[str]]:
    """(the flags that apply, those a later value of the same flag overrode) of the flags for
    every run (a --config's, then a sweep file's, then those after --): as absl parses them,
    a flag given twice takes its last value. A flag keeps the place of its first mention, with
    its last value; `--noX` and `--X=...` are the same flag X; a word without a leading '-' is
    the value of the flag before it ('--num_batches 2').

    E.g. ['--num_batches=20', '--xla', '--num_batches=2', '--noxla'] ->
    (['--num_batches=2', '--noxla'], ['--num_batches=20', '--xla'])."""
    groups: list[list[str]] = []
    for arg in args:
        if arg.startswith('-') or not groups:
            groups.append([arg])
        else:
            groups[-1].append(arg)
    last: dict[str, tuple[int, str]] = {}
    order: list[str] = []
    overridden: list[tuple[int, str]] = []
    for index, group in enumerate(groups):
        text = ' '.join(group)
        name = _flag_key(group) if group[0].startswith('-') else text
        key = name[2:] if name.startswith('no') and '=' not in group[0] and any(
            _flag_key(other) == name[2:] for other in groups) else name
        if key in last:
            overridden.append(last[key])
        else:
            order.append(key)
        last[key] = (index, text)
    return [last[key][1] for key in order], [text for _, text in sorted(overridden)]


def _flag_key(group: list[str]) -> str:
    return group[0].lstrip('-').split('=', 1)[0]


def link(path: str) -> str:
    """`path` as a markdown link's target: the characters that end or split one (space,
    parentheses, angle brackets, '%', control characters) percent-encoded, so that
    'sw ü/plots/x.png' links as 'sw%20ü/plots/x.png'; other characters (non-ASCII too, which
    a markdown link may hold) as they are."""
    return ''.join('%%%02X' % ord(c) if c in ' ()<>%' or ord(c) < 0x20 or ord(c) == 0x7f
                   else c for c in path)


#: `arg` as a shell reads it back ("--label='a b'"): cnn_util's, re-exported.
shell_arg = cnn_util.shell_arg


def code(text: str) -> str:
    """`text` as a markdown code span, its fence longer than any run of backticks in it."""
    fence = '`' * (max((len(run) for run in re.findall('`+', text)), default=0) + 1)
    pad = ' ' if text.startswith('`') or text.endswith('`') else ''
    return '%s%s%s%s%s' % (fence, pad, text, pad, fence)


def _flags_phrase(extra_flags: list[str]) -> str:
    """The report's flags for every run: those that apply, and those later values overrode,
    each as a shell reads it back (`shell_arg`)."""
    applied, overridden = merged_flags([shell_arg(a) for a in extra_flags])
    if not applied:
        return 'none'
    text = code(' '.join(applied))
    if overridden:
        text += (' (a flag given twice takes its later value: %s given earlier, e.g. by '
                 '--config, do%s not apply)' % (code(' '.join(overridden)),
                                               'es' if len(overridden) == 1 else ''))
    return text


def header(records: list[dict]) -> str:
    """Counts, the flags of every run (merged: `merged_flags`), the machine(s) and the dates of
    the runs."""
    counts = {s: sum(1 for r in records if r['status'] == s)
              for s in ('ok', 'failed', 'stopped', 'interrupted')}
    extra = records[0].get('extra_flags', []) if records else []
    return ('# tf_cnn_sweep report\n\n'
            '%s: %d ok, %d failed, %s%d interrupted. Flags for every run: %s.\n'
            'TensorFlow %s; CPU %s (%s cores); GPUs: %s; oneDNN %s.%s\n\n'
            'Scaling efficiency on N devices = images/sec on N devices / (N x images/sec on 1 '
            'device) at the same batch size per device.\n' % (
                cnn_util.counted(len(records), 'run'), counts['ok'], counts['failed'],
                '%d stopped (--run_timeout_secs), ' % counts['stopped'] if counts['stopped']
                else '', counts['interrupted'],
                _flags_phrase(extra), _distinct(records, 'tf_version'),
                _distinct(records, 'cpu_model'), _distinct(records, 'cpu_cores'),
                gpus_text(records), _distinct(records, 'onednn'), span_text(records)))


def gpus_text(records: list[dict]) -> str:
    """The report's GPUs: the names the runs saw ('none visible' where TensorFlow saw none);
    where no run told (each failed before its result), 'none used (CPU runs: --device=cpu)'
    when every run's flags say so, else 'unknown'."""
    values = []
    for r in records:
        gpus = (r.get('environment') or {}).get('gpus')
        if gpus is not None:
            text = ', '.join(gpus) or 'none visible'
            if text not in values:
                values.append(text)
    if values:
        return ' / '.join(values)
    if records and all(_device_of(r) == 'cpu' for r in records):
        return 'none used (CPU runs: --device=cpu)'
    return 'unknown'


def _device_of(record: dict) -> str | None:
    """The run's --device: its resolved params', else the last `--device=` of its argv."""
    device = (record.get('params') or {}).get('device')
    if device:
        return device
    for arg in record.get('argv') or []:
        if arg.startswith('--device='):
            device = arg.split('=', 1)[1]
    return device


def span_text(records: list[dict]) -> str:
    """' Runs from 2026-01-02T13:24:51+00:00 to 13:25:08 (UTC, 17 s).': the first run's start,
    the last one's end (its start plus its wall time) and the span; '' without start times."""
    spans = []
    for r in records:
        try:
            start = datetime.datetime.fromisoformat(r['started_utc'])
        except (KeyError, TypeError, ValueError):
            continue
        spans.append((start, start + datetime.timedelta(seconds=float(r.get('wall_secs')
                                                                        or 0.0))))
    if not spans:
        return ''
    first, last = min(s for s, _ in spans), max(e for _, e in spans)
    end = last.isoformat(timespec='seconds')
    if last.date() == first.date():
        end = last.strftime('%H:%M:%S')
    seconds = (last - first).total_seconds()
    took = ('%.0f s' % seconds if seconds < 120 else '%.0f min' % (seconds / 60)
            if seconds < 7200 else '%.1f h' % (seconds / 3600))
    return ' Runs from %s to %s (UTC, %s).' % (first.isoformat(timespec='seconds'), end, took)


def failures(records: list[dict], base: str = '') -> str:
    """A list of the runs whose last record is not ok, with their exit status and error.

    Repeats are numbered from 1 as in the progress lines ('repeat 1' is config['repeat'] 0).
    Each run's logs folder is its run_dir (relative to the sweep's folder) under `base`: ''
    in report.md, the sweep's folder on the screen.
    """
    bad = [r for r in records if r['status'] != 'ok']
    if not bad:
        return ''
    lines = ['## Runs not done\n']
    for r in bad:
        rate = ('; %.2f images/sec over those steps' % r['images_per_sec']
                if r['status'] == 'stopped' and r.get('images_per_sec') is not None else '')
        lines.append('- %s repeat %d: %s, exit status %s: %s%s (logs: %s)' % (
            results.describe(results.config_of(r)), r['config']['repeat'] + 1,
            r['status'], r['exit_status'], short(r.get('error')), rate,
            _under(base, r['run_dir']) if r.get('run_dir') else '-'))
    return '\n'.join(lines) + '\n'


def _under(base: str, path: str) -> str:
    """`path` (relative to the sweep's folder) as seen from where `base` is relative to:
    'runs/x' under 'runs/fail' is 'runs/fail/runs/x'; under '' or '.' it stays 'runs/x'."""
    return os.path.normpath(os.path.join(base, path)) if base else path


def write_report(output_dir: str, records: list[dict], *, for_screen: bool = False) -> str:
    """Writes output_dir/report.md and the plots; returns the markdown text.

    report.md names the runs' logs and the plots relative to itself; with `for_screen` the
    text returned names them as seen from the current folder (under output_dir), so that a
    path printed on the terminal opens from where the command ran.
    Without matplotlib the report says how to install it (and a warning goes to stderr).

    Raises:
      NotSaved: report.md or a plot could not be written (no partial report.md is left); its
        `text` is the text this returns otherwise.
    """
    models = []
    for r in records:
        if r['config']['model'] not in models:
            models.append(r['config']['model'])
    failed = None
    try:
        plots = [os.path.relpath(p, output_dir)
                 for p in write_plots(os.path.join(output_dir, 'plots'), records)]
    except ImportError:
        print('warning: no plots: %s' % MATPLOTLIB_HINT, file=sys.stderr)
        plots = None
    except OSError as e:  # a full disk
        failed, plots = (e, os.path.join(output_dir, 'plots')), []
    parts = [header(records)] + [model_table(m, records) for m in models]
    parts.append(figures.figures_table(records))
    parts.append(host_load.host_table(records))

    def text_under(base: str) -> str:
        if plots is None:
            plot_text = 'Plots not drawn: %s.' % MATPLOTLIB_HINT
        else:
            plot_text = '\n'.join('![%s](%s)' % (os.path.basename(p), link(_under(base, p)))
                                  for p in plots)
        return '\n'.join(p for p in parts + [
            failures(records, base),
            '## Plots\n\n' + (plot_text or 'No successful runs.') + '\n'] if p)

    text = text_under('')
    path = os.path.join(output_dir, 'report.md')
    try:  # atomic; a report.md that is a link is written through (the link stays)
        file_systems.write_local(path, text, prefix='.report_')
    except OSError as e:  # a full disk: write_local leaves no partial report behind
        failed = failed or (e, path)
    shown = text_under(output_dir) if for_screen else text
    if failed is not None:
        raise NotSaved(failed[0], failed[1], shown)
    return shown


def short(text: str | None, limit: int = 160) -> str:
    """`text` cut to `limit` characters with '...' (error lines can list every model)."""
    text = text or '-'
    return text if len(text) <= limit else text[:limit - 3] + '...'


def _mode(records: list[dict]) -> str:
    forward = {bool((r.get('params') or {}).get('forward_only')) for r in records
               if r['status'] == 'ok'}
    return {frozenset([True]): 'inference', frozenset([False]): 'training'}.get(
        frozenset(forward), 'training and inference')


def _label(parts: list[str]) -> str:
    return ', '.join(p for p in parts if p) or 'all runs'


def write_plots(plot_dir: str, records: list[dict]) -> list[str]:
    """Draws the PNGs of every model with successful runs; returns their paths.

    Raises:
      ImportError: matplotlib is missing.
    """
    runtime_env.spare_home()  # matplotlib makes ~/.config/matplotlib as it loads
    import matplotlib
    matplotlib.use('Agg', force=True)
    from matplotlib import pyplot as plt
    stats = results.config_stats(records)
    os.makedirs(plot_dir, exist_ok=True)
    machine = 'TF %s, %s' % (_distinct(records, 'tf_version'), _distinct(records, 'cpu_model'))
    gpus = _distinct(records, 'gpus')
    if gpus not in ('none', 'unknown'):
        machine += ', ' + gpus
    paths = []
    for model in sorted({c[0] for c in stats}):
        configs = sorted((c for c in stats if c[0] == model), key=results.sort_key)
        show_precision, show_update = _variants(configs)
        fixed = [configs[0][3] if not show_precision else '',
                 configs[0][4] if not show_update else '']
        subtitle = ', '.join([p for p in fixed if p] + [machine])
        fig, ax = plt.subplots(figsize=(7.5, 4.8))
        lines = sorted({(c[2], c[3], c[4]) for c in configs}, key=results.sort_key)
        for n, precision, update in lines:
            points = [c for c in configs if (c[2], c[3], c[4]) == (n, precision, update)]
            xs = [c[1] for c in points]
            ys = [stats[c].median for c in points]
            err = [[stats[c].median - stats[c].low for c in points],
                   [stats[c].high - stats[c].median for c in points]]
            label = _label(['%d device%s' % (n, '' if n == 1 else 's'),
                            precision if show_precision else '', update if show_update else ''])
            ax.errorbar(xs, ys, yerr=err, marker='o', capsize=4, label=label)
        batches = sorted({c[1] for c in configs})
        ax.set_xscale('log', base=2)
        ax.set_xticks(batches, [str(b) for b in batches])
        ax.minorticks_off()
        ax.set_ylim(bottom=0)
        ax.set_xlabel('batch size per device (images)')
        ax.set_ylabel('images/sec (all devices)')
        ax.set_title('%s: %s throughput\n%s' % (model, _mode(records), subtitle), fontsize=11)
        ax.grid(True, alpha=0.3)
        ax.legend(title='median of repeats; bars: min-max', fontsize=9, title_fontsize=9)
        paths.append(_save(fig, plt, os.path.join(plot_dir, '%s_images_per_sec.png' % model)))
        scaling = _scaling_plot(plt, model, configs, stats, subtitle, show_precision, show_update)
        if scaling is not None:
            paths.append(_save(scaling, plt, os.path.join(plot_dir, '%s_scaling.png' % model)))
    return paths


def _scaling_plot(plt, model, configs, stats, machine, show_precision, show_update):
    series = sorted({(c[1], c[3], c[4]) for c in configs}, key=results.sort_key)
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    devices, highest = set(), 0.0
    for batch, precision, update in series:
        points = []
        for c in configs:
            if (c[1], c[3], c[4]) == (batch, precision, update):
                eff = results.scaling_efficiency(stats, c)
                if eff is not None:
                    points.append((c[2], 100 * eff))
        if len(points) < 2:
            continue
        devices.update(n for n, _ in points)
        highest = max([highest] + [e for _, e in points])
        label = _label(['batch %d/device' % batch, precision if show_precision else '',
                        update if show_update else ''])
        ax.plot([n for n, _ in points], [e for _, e in points], marker='o', label=label)
    if not devices:
        plt.close(fig)
        return None
    ticks = sorted(devices)
    ax.axhline(100, color='gray', linestyle='--', linewidth=1, label='linear scaling (100%)')
    ax.set_xticks(ticks, [str(n) for n in ticks])
    ax.set_xlim(min(ticks) - 0.3, max(ticks) + 0.3)
    ax.set_ylim(0, max(110, highest * 1.1))
    ax.set_xlabel('devices')
    ax.set_ylabel('scaling efficiency (%)')
    ax.set_title('%s: scaling efficiency = images/sec on N devices / (N x on 1)\n%s'
                 % (model, machine), fontsize=11)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=9)
    return fig


def _save(fig, plt, path: str) -> str:
    fig.tight_layout()
    fig.savefig(path, format='png', dpi=100)
    plt.close(fig)
    return path
