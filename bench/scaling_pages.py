"""The generated parts of docs/scaling.md and the README's scaling table, from results/.

bench/make_performance_page.py fills, from the newest file of each kind:

* docs/scaling.md, blocks `scaling-published` and `scaling-issue`: the published comparisons
  (`scaling_published`, bench/bench_scaling_published.py: the original's published images/sec
  and the step-time model's predictions of them), and the user-reported AlexNet case;
* docs/scaling.md, block `scaling-loopback`: the measured loopback cluster against its
  prediction (`scaling_loopback`, bench/bench_scaling_loopback.py);
* README.md, block `scaling`: one row per published case (at its most GPUs, with the mean
  error of its multi-GPU rows), the user-reported AlexNet case and each loopback worker count:
  published or measured images/sec, predicted, error, one line of why, and the file.

Errors are predicted / published (or measured) - 1: positive where the model is optimistic.
Nothing here imports TensorFlow (published_scaling.markdown only formats the file's data).
"""

from __future__ import annotations

from tf_cnn_benchmarks.hardware import links as links_lib
from tf_cnn_benchmarks.speed_model import published_scaling

from . import bench_scaling_loopback


def newest(results, what: str):
    """(stem, document) of the newest results file of kind `what`, or (None, None)."""
    found = [(stem, doc) for stem, doc in results if doc['what'] == what]
    return found[-1] if found else (None, None)


def _percent(error: float) -> str:
    """'+1.2%'; '+0.0%' for a rounding residue of either sign."""
    return '%+.1f%%' % (0.0 if abs(error) < 5e-4 else 100 * error)


def _load(value) -> str:
    return '?' if value is None else '%.2f' % value


def published_block(results, part: str) -> str:
    """docs/scaling.md's published tables, naming their file: part 'series' (the published
    series and their errors) or 'issue' (the user-reported AlexNet case)."""
    stem, doc = newest(results, 'scaling_published')
    if doc is None:
        return 'No published comparison yet: `python -m bench.bench_scaling_published`.'
    tables = (published_scaling.series_markdown if part == 'series'
              else published_scaling.issue_markdown)(doc['data'])
    return '\n'.join(tables + ['', 'From `results/%s.json` (`%s` at commit `%s`).' % (
        stem, doc['provenance']['command'], doc['provenance']['commit'][:12])])


def loopback_block(results) -> str:
    """docs/scaling.md's loopback table and its inputs, naming their file."""
    stem, doc = newest(results, 'scaling_loopback')
    if doc is None:
        return 'No loopback comparison yet: `python -m bench.bench_scaling_loopback`.'
    d, prov = doc['data'], doc['provenance']
    again = d.get('one_worker_again')
    ratios = [r['ratio'] for r in d['rows']]
    lines = [
        'Measured on %s (%d cores), %s UTC, `%s` at commit `%s`; from `results/%s.json`.' % (
            d['cpu'], d['cores'], prov['date'][:16].replace('T', ' '), prov['command'],
            prov['commit'][:12], stem), '',
        '* %s, batch %d per worker, %d intra-op thread(s) per worker;' % (
            d['model'], d['batch_size'], d['threads']),
        '* loopback: %.0f MB/s between two tasks, %.2f ns of CPU per byte moved (load average '
        '%.1f);' % (d['loopback_bytes_per_sec'] / 1e6, d['loopback_cpu_secs_per_byte'] * 1e9,
                    d['load_at_rate']),
        '* 1 ps + 1 worker: %.1f images/sec (load average %.1f, other processes used %s '
        'cores), the single-device figure of the predictions%s.' % (
            d['one_worker'], d['one_worker_load'], _load(d.get('one_worker_others_cores')),
            '' if again is None else '; %.1f (%s) when run again at the end' % (
                again, _percent(again / d['one_worker'] - 1))),
        ''] + bench_scaling_loopback.table_lines(d['rows']) + [
        '', 'Measured / predicted: %.2f to %.2f. "others\' cores" is what other processes '
        'used of the cores during that cluster run, start-up included (core-equivalents, '
        '`metrics/host_load.py`); the load average counts the run\'s own tasks too.' % (
            min(ratios), max(ratios))]
    return '\n'.join(lines)


def _case_row(case: dict, link: str) -> list[str]:
    last = case['rows'][-1]
    return [case['name'], '%d GPUs' % last['gpus'], '%g' % last['published'],
            '%.1f' % last['predicted'],
            '%s (mean %.1f%%)' % (_percent(last['error']), 100 * case['mean_abs_error']),
            case['why'], link]


def _issue_row(issue: dict, link: str) -> list[str]:
    network, batch = issue['headline']
    row = next(r for r in issue['rows'] if (r['network'], r['batch']) == (network, batch))
    others = [r['error'] for r in issue['rows']]
    return ['EC2 AlexNet, ps on another host (a user report)',
            '1 GPU', '%g' % issue['published_distributed'],
            '%.1f (%s, batch %d)' % (row['predicted'], links_lib.LABELS.get(network, network),
                                     batch),
            '%s (%s to %s over 1-25 Gbit/s, batch 32-512)' % (
                _percent(row['error']), _percent(min(others)), _percent(max(others))),
            issue['why'], link]


def readme_rows(results) -> list[list[str]]:
    """The README's scaling rows: prediction, devices, published or measured images/sec,
    predicted, error, why, from."""
    rows = []
    stem, doc = newest(results, 'scaling_published')
    if doc is not None:
        link = '[published](results/%s.md)' % stem
        rows += [_case_row(case, link) for case in doc['data']['cases']]
        rows.append(_issue_row(doc['data']['issue'], link))
    stem, doc = newest(results, 'scaling_loopback')
    if doc is not None:
        d = doc['data']
        link = '[loopback](results/%s.md)' % stem
        again = d.get('one_worker_again')
        drift = ('' if again is None else '; the 1-worker input drifted %s within the run'
                 % _percent(again / d['one_worker'] - 1))
        for r in d['rows']:
            others = r.get('others_cores')
            busy = ' with other jobs' if others is None or others >= 0.1 else ''
            rows.append([
                'Loopback cluster, 1 ps + %d workers (%s)' % (r['workers'], d['cpu']),
                '%d workers' % r['workers'], '%.1f' % r['measured'], '%.1f' % r['predicted'],
                _percent(r['predicted'] / r['measured'] - 1),
                'the %d tasks share the %d cores%s (others used %s cores, load average '
                '%.1f-%.1f)%s' % (r['workers'] + 1, d['cores'], busy, _load(others),
                                  r['load_before'], r['load_after'], drift), link])
    return rows
