"""The figures behind a sweep's images/sec: utilisation, input wait, memory, latency.

Each run's results JSON has them (metrics/utilisation.py); `record_figures` keeps the few
a sweep record carries, and `figures_table` is the report's "Utilisation and input" section:
per configuration the medians over its successful repeats of model FLOP/s, the fraction of the
device's peak, the share of the step spent waiting for input, compute images/sec (what the step
would do with free input), the process's peak RSS and, for inference, the p50 latency.
"""

from __future__ import annotations

import statistics

from . import results

FIELDS = ('model_flops_per_sec', 'fraction_of_peak', 'peak_source', 'input_share',
          'compute_images_per_sec', 'input_bound', 'peak_rss_bytes', 'latency_p50_ms',
          'latency_p90_ms', 'latency_p99_ms')


def record_figures(result: dict) -> dict:
    """The sweep record's 'figures' from a run's result dict (absent figures are None)."""
    util = result.get('utilisation') or {}
    inp = result.get('input') or {}
    mem = result.get('memory') or {}
    lat = result.get('latency_ms') or {}
    return {'model_flops_per_sec': util.get('model_flops_per_sec'),
            'fraction_of_peak': util.get('fraction_of_peak'),
            'peak_source': util.get('peak_source'),
            'input_share': inp.get('input_share'),
            'compute_images_per_sec': inp.get('compute_images_per_sec'),
            'input_bound': inp.get('input_bound'),
            'peak_rss_bytes': mem.get('process_peak_rss_bytes'),
            'latency_p50_ms': lat.get('p50'), 'latency_p90_ms': lat.get('p90'),
            'latency_p99_ms': lat.get('p99')}


def _median(records: list[dict], name: str):
    values = [r['figures'][name] for r in records
              if r.get('figures') and isinstance(r['figures'].get(name), (int, float))
              and not isinstance(r['figures'].get(name), bool)]
    return statistics.median(values) if values else None


def _fmt(value, pattern: str, scale: float = 1.0) -> str:
    return '-' if value is None else pattern % (value * scale)


def figures_table(records: list[dict]) -> str:
    """The report section (markdown); '' when no successful run has figures."""
    ok = [r for r in records if r.get('status') == 'ok' and r.get('figures')]
    if not ok:
        return ''
    by_config: dict[tuple, list[dict]] = {}
    for r in ok:
        by_config.setdefault(results.config_of(r), []).append(r)
    lines = ['## Utilisation and input\n',
             'Medians over the successful repeats. Model FLOP/s = FLOPs per image (forward x 3 '
             'for training, x 1 for inference) x images/sec; % of peak: of the GPU data-sheet '
             'peak, or of this CPU\'s measured peak, for the run\'s dtype; input wait: share of '
             'a traced step spent waiting for input (input-bound above 10%).\n',
             '| configuration | model GFLOP/s | % of peak | input wait | compute images/sec | '
             'peak RSS GiB | p50 latency ms |',
             '| --- | ---: | ---: | ---: | ---: | ---: | ---: |']
    for config in sorted(by_config, key=results.sort_key):
        rs = by_config[config]
        share = _median(rs, 'input_share')
        wait = _fmt(share, '%.1f%%', 100)
        if share is not None and share > 0.1:
            wait += ' input-bound'
        lines.append('| %s | %s | %s | %s | %s | %s | %s |' % (
            results.describe(config), _fmt(_median(rs, 'model_flops_per_sec'), '%.1f', 1e-9),
            _fmt(_median(rs, 'fraction_of_peak'), '%.1f%%', 100), wait,
            _fmt(_median(rs, 'compute_images_per_sec'), '%.1f'),
            _fmt(_median(rs, 'peak_rss_bytes'), '%.2f', 1.0 / (1 << 30)),
            _fmt(_median(rs, 'latency_p50_ms'), '%.2f')))
    sources = sorted({r['figures'].get('peak_source') or '-' for r in ok})
    lines += ['', 'Peaks: %s.' % '; '.join(sources)]
    return '\n'.join(lines) + '\n'
