"""Generates docs/performance.md, results/README.md, the README's figure tables and the tables of
docs/scaling.md from results/.

    python -m bench.make_performance_page            # write them
    python -m bench.make_performance_page --check    # exit 1 when one is stale

No figure of the performance page or of the README's "Quick runs" and "Headline figures"
tables is typed by hand: each comes from a result file (history/result_files.py format, written
by the bench scripts and `tf_cnn_sweep --publish`), and each row names that file. Files are
read by what they measured:

* `roofline_*` (bench/bench_roofline.py): our step against its hardware limit (the step's
  convolutions and matmuls each at its standalone speed); fraction of the limit = limit step
  time / our step time; bf16/fp32 = fp32 step time / bf16 step time, same model, batch, image
  size and mode;
* `precision` (bench/bench_precision.py): images/sec per model, precision and XLA mode;
* `sweep*` (tf_cnn_sweep --publish): the median images/sec of each configuration's ok runs;
* `vs_original*` (bench/bench_vs_original.py), and roofline files with an `original` rate:
  our images/sec against the original tf_cnn_benchmarks';
* `quick_runs` (bench/bench_quick_runs.py): the README's quick runs, wall time per command;
* `scaling_published`, `scaling_loopback` (bench/bench_scaling_published.py,
  bench/bench_scaling_loopback.py): the step-time model against the published results and a
  measured loopback cluster, in docs/scaling.md and the README's "How far off the scaling
  predictions are" (bench/scaling_pages.py).
* `elementwise_*` (bench/bench_elementwise.py): the memory-bound ops of one traced step per
  precision and --graph_choices value.
* `gpu_model_validation` (bench/bench_gpu_model.py): one GPU's images/sec from its data sheet
  against published runs, in docs/estimate-vs-reality.md (block `gpu-model`).

The README and docs/scaling.md are written by hand around their generated blocks, which sit
between `<!-- NAME:start ... -->` and `<!-- NAME:end -->` lines. tests/test_docs.py fails when
a committed page, block or index differs from what this writes.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import statistics
import sys

from . import performance_plots

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
RESULTS = os.path.join(REPO, 'results')
PAGE = os.path.join(REPO, 'docs', 'performance.md')
README = os.path.join(REPO, 'README.md')
SCALING = os.path.join(REPO, 'docs', 'scaling.md')
OUTPUT_PAGE = os.path.join(REPO, 'docs', 'output.md')
ESTIMATE_PAGE = os.path.join(REPO, 'docs', 'estimate-vs-reality.md')
INDEX = os.path.join(RESULTS, 'README.md')
BLOCK = re.compile(r'(<!-- (?P<name>[a-z-]+):start[^>]*-->\n).*?(<!-- (?P=name):end -->)', re.S)


def _load(path: str) -> dict:
    from tf_cnn_benchmarks.history import result_files  # the checkout, as bench scripts do
    return result_files.load(path)


def _commit(prov: dict) -> str:
    """The commit a file's provenance names, 12 characters, or 'none' (not a checkout)."""
    from tf_cnn_benchmarks.history import result_files
    return result_files.commit_text(prov)


def load_results(results_dir: str = RESULTS) -> list[tuple[str, dict]]:
    """[(file stem, document)] of every results/*.json, sorted by name (date first)."""
    return [(os.path.basename(p)[:-5], _load(p))
            for p in sorted(glob.glob(os.path.join(results_dir, '*.json')))]


def _host(prov: dict) -> str:
    return '%s (%s), TF %s' % (prov['cpu_model'], ', '.join(
        f for f in prov['cpu_flags'] if f.startswith(('avx512_bf16', 'amx', 'avx512_fp16')))
        or 'no bf16 units', '.'.join(prov['tensorflow'].split('.')[:2]))


def _table(header: list[str], rows: list[list[str]], align: str) -> str:
    lines = ['| %s |' % ' | '.join(header),
             '| %s |' % ' | '.join('---:' if a == 'r' else '---' for a in align)]
    return '\n'.join(lines + ['| %s |' % ' | '.join(r) for r in rows])


def roofline_rows(results) -> list[dict]:
    """One dict per roofline file: model, batch, image, mode, precision, ours and limit step
    seconds, which limit ('strict': every op's fastest form plus the memory-bound ops at
    memory speed, in files that have it; 'compute': the big ops in the graph's form only),
    fraction of the limit, images/sec, original images/sec (or None), stem, prov."""
    rows = []
    for stem, doc in results:
        if not doc['what'].startswith('roofline'):
            continue
        data, meta = doc['data'], doc['data']['meta']
        limit = data.get('strict_limit') or data['limit']
        rows.append({'model': meta['model'], 'batch': meta['batch_size'],
                     'image': meta['image_size'],
                     'mode': 'forward-only' if meta['forward_only'] else 'training',
                     'precision': meta['precision'], 'ours': data['ours_step_secs'],
                     'limit': limit['secs'],
                     'limit_kind': 'strict' if data.get('strict_limit') else 'compute',
                     'fraction': limit['secs'] / data['ours_step_secs'],
                     'images_per_sec': meta['batch_size'] / data['ours_step_secs'],
                     'original': data.get('original'), 'stem': stem,
                     'prov': doc['provenance']})
    return rows


def _same_host_and_day(a: dict, b: dict) -> bool:
    """Two results files' provenance name one host (CPU model and flags, cores, TensorFlow)
    and one day."""
    return all(a.get(k) == b.get(k) for k in ('cpu_model', 'cpu_flags', 'cpu_cores',
                                              'tensorflow')) and a['date'][:10] == b['date'][:10]


def _minutes_apart(a: dict, b: dict) -> float:
    import datetime

    def when(prov):
        return datetime.datetime.fromisoformat(prov['date'].replace('Z', '+00:00'))
    return abs((when(a) - when(b)).total_seconds()) / 60


def bf16_ratios(rows: list[dict]) -> list[dict]:
    """bf16/fp32 speed (fp32 step time / bf16 step time) where one host has both files of one
    day; 'minutes_apart' is how far apart the two runs started."""
    out = []
    for r in rows:
        if r['precision'] != 'bf16':
            continue
        for f in rows:
            if f['precision'] == 'fp32' and all(f[k] == r[k] for k in (
                    'model', 'batch', 'image', 'mode')) and _same_host_and_day(f['prov'],
                                                                              r['prov']):
                out.append(dict(r, ratio=f['ours'] / r['ours'], fp32=f,
                                minutes_apart=_minutes_apart(f['prov'], r['prov'])))
    return out


def sweep_rows(results) -> list[list[str]]:
    rows = []
    for stem, doc in results:
        if not doc['what'].startswith('sweep'):
            continue
        by_config = {}
        for rec in doc['data']['records']:
            if rec.get('status') == 'ok' and rec.get('images_per_sec'):
                c = rec['config']
                key = (c['model'], c['batch_size'], c['num_gpus'], c['precision'],
                       c['variable_update'])
                by_config.setdefault(key, []).append(rec['images_per_sec'])
        for key, rates in sorted(by_config.items()):
            rows.append(['%s' % key[0], str(key[1]), str(key[2]), key[3], key[4],
                         '%.2f' % statistics.median(rates), str(len(rates)),
                         '`results/%s.json`' % stem])
    return rows


def quick_conditions(doc) -> str:
    """Under which conditions a quick_runs file timed its commands: host, TensorFlow, date,
    and the page cache (files from before bench_quick_runs recorded it ran the commands one
    after another, TensorFlow's files already in the page cache)."""
    prov = doc['provenance']
    cache = ('TensorFlow imported once before the first command' if
             doc['data'].get('page_cache') == 'warm' else
             'the commands ran one after another, TensorFlow\'s files in the page cache')
    return ('%s, %s cores, %s; warm-cache times (%s): a first command after a boot, which '
            'reads TensorFlow from disk, starts slower' % (
                _host(prov), prov.get('cpu_cores', '?'), prov['date'][:10], cache))


def quick_rows(results) -> tuple[list[list[str]], str | None]:
    """The newest quick_runs file's rows for the README, and its stem (None without one)."""
    quick = [(s, d) for s, d in results if d['what'] == 'quick_runs']
    if not quick:
        return [], None
    stem, doc = quick[-1]
    return [['`%s`' % r['command'], '%.1f s' % r['wall_secs'],  # as its results file rounds
             '-' if r['images_per_sec'] is None else '%.2f' % r['images_per_sec'],
             '%.1f' % r['load_before']]
            for r in doc['data']['rows']], stem


#: The README's name of each kind of limit a roofline file has (roofline_rows 'limit_kind').
LIMIT_NAMES = {
    'strict': ('strict limit', "every op's fastest form, memory-bound ops at memory speed"),
    'compute': ('compute limit', 'the convolutions and matmuls alone'),
}


def headline_rows(results) -> list[list[str]]:
    """A few figures for the README: per model the newest training bf16/fp32 ratio and
    fraction of the limit, and the quick resnet50 run's wall time; each with its file."""
    rows = []

    def add(figure, value, prov, *stems):
        rows.append([figure, value, _host(prov), prov['date'][:10],
                     ', '.join('[%s](results/%s.md)' % (stem, stem) for stem in stems)])
    for r in bf16_ratios(roofline_rows(results)):
        if r['mode'] == 'training':
            loads = (r['fp32']['prov'].get('load_average_before'),
                     r['prov'].get('load_average_before'))
            add('%s training, batch %d: bf16 / fp32 images/sec (the two runs %.0f min apart, '
                'load average %s and %s)' % (r['model'], r['batch'], r['minutes_apart'],
                                             *('%.1f' % x if x is not None else '?'
                                               for x in loads)),
                '%.2fx' % r['ratio'], r['prov'], r['stem'], r['fp32']['stem'])
    for r in roofline_rows(results):
        if r['mode'] == 'training' and r['precision'] == 'fp32':
            load = r['prov'].get('load_average_before')
            name, what = LIMIT_NAMES[r['limit_kind']]
            add('%s training, batch %d, fp32: fraction of the %s (%s%s)'
                % (r['model'], r['batch'], name, what,
                   '' if load is None else '; load average %.1f' % load),
                '%.2f' % r['fraction'], r['prov'], r['stem'])
    quick = [(s, d) for s, d in results if d['what'] == 'quick_runs']
    if quick:
        stem, doc = quick[-1]
        for r in doc['data']['rows']:
            if 'resnet50' in r['command'] and r['command'].startswith('tf_cnn_benchmarks'):
                add('the quick-start command, whole run (load average %.1f, warm page cache)'
                    % r['load_before'],
                    '%.1f s' % r['wall_secs'],  # as its results file rounds
                    doc['provenance'], stem)
    return rows


def example_output(results) -> str:
    """docs/output.md's example: the newest quick-runs file's resnet50 run, as it printed,
    with the file it comes from."""
    for stem, doc in reversed([(s, d) for s, d in results if d['what'] == 'quick_runs']):
        for r in doc['data']['rows']:
            if (r['command'].startswith('tf_cnn_benchmarks --model=resnet50')
                    and r.get('output')):
                return '```\n%s\n```\n\nFrom `results/%s.json` (%s, load average %.1f at ' \
                       'the start).' % (r['output'], stem, _host(doc['provenance']),
                                        r['load_before'])
    return 'No quick-runs file with the run\'s output yet: `python -m bench.bench_quick_runs`.'


def readme_blocks(results) -> dict[str, str]:
    """The text between the README's generated-block markers, by block name."""
    from . import scaling_pages
    quick, stem = quick_rows(results)
    head = ['figure', 'value', 'CPU / GPU, TensorFlow', 'date', 'from']
    scaling = scaling_pages.readme_rows(results)
    return {'scaling': (_table(['prediction', 'devices', 'published or measured images/sec',
                                'predicted', 'error', 'why', 'from'], scaling, 'llrrrll')
                        if scaling else 'No scaling comparison yet.'),
            'quick-runs': (_table(['command', 'wall time', 'images/sec', 'load average'], quick,
                                  'lrrr') + '\n\nFrom [results/%s.md](results/%s.md): %s.'
                           % (stem, stem, quick_conditions(dict(results)[stem])) if quick
                           else 'No quick-runs file yet: `python -m bench.bench_quick_runs`.'),
            'headline': (_table(head, headline_rows(results), 'lrlll')
                         if headline_rows(results) else 'No result files yet.')}


def render_blocks(text: str, blocks: dict[str, str]) -> str:
    """`text` with the body of each generated block replaced by blocks[its name].

    Raises:
      KeyError: a block of `text` has a name not in `blocks`.
    """
    def fill(match):
        return match.group(1) + blocks[match['name']] + '\n' + match.group(3)
    return BLOCK.sub(fill, text)


def render_readme(text: str, results) -> str:
    """`text` (the README) with every generated block replaced."""
    return render_blocks(text, readme_blocks(results))


def render_scaling(text: str, results) -> str:
    """`text` (docs/scaling.md) with its published and loopback tables replaced."""
    from . import scaling_pages
    return render_blocks(text, {
        'scaling-published': scaling_pages.published_block(results, 'series'),
        'scaling-issue': scaling_pages.published_block(results, 'issue'),
        'scaling-loopback': scaling_pages.loopback_block(results)})


def gpu_model_block(results) -> str:
    """docs/estimate-vs-reality.md's tables from the newest `gpu_model_validation` file."""
    from . import bench_gpu_model
    found = [(stem, doc) for stem, doc in results if doc['what'] == bench_gpu_model.WHAT]
    if not found:
        return 'No results file yet: `python -m bench.bench_gpu_model`.'
    stem, doc = found[-1]
    return 'From `results/%s.json` (`%s` at commit `%s`):\n\n%s' % (
        stem, doc['provenance']['command'], _commit(doc['provenance']),
        bench_gpu_model.markdown(doc['data']).replace('## ', '### '))


def render_page(results) -> str:
    """docs/performance.md."""
    out = ['# Performance', '',
           '<!-- Generated by `python -m bench.make_performance_page` from results/; do not '
           'edit. -->', '',
           'Every figure on this page comes from a file in `results/` (named in its row), '
           'written by the command recorded in that file. Figures from a loaded machine are '
           'noisy: each file records the load average before and after. The history of '
           'earlier measurements is in [Performance notes](performance-notes.md).', '']
    rows = roofline_rows(results)
    out += ['## bfloat16 against float32, per model', '',
            'Our step time in float32 over our step time in bfloat16 (above 1: bfloat16 is '
            'faster), from two roofline files of one host.', '']
    ratios = bf16_ratios(rows)
    out += [_table(['model', 'batch', 'image', 'mode', 'fp32 ms', 'bf16 ms', 'bf16/fp32',
                    'host', 'from'],
                   [[r['model'], str(r['batch']), str(r['image']), r['mode'],
                     '%.1f' % (r['fp32']['ours'] * 1e3), '%.1f' % (r['ours'] * 1e3),
                     '%.2fx' % r['ratio'], _host(r['prov']),
                     '`results/%s.json`, `%s.json`' % (r['fp32']['stem'], r['stem'])]
                    for r in ratios], 'lrrlrrrll') if ratios else 'No pair of files yet.', '']
    out += ['## Fraction of the hardware limit', '',
            'Fraction = limit step time / our step time (`python -m bench.bench_roofline`). '
            'Two limits, named in each row: `strict`, every op at the least standalone time '
            'of its forms (a 1x1 convolution also as a MatMul) plus every other op\'s bytes '
            'at the measured memory bandwidth ([Speed choices](speed-choices.md)); `compute`, '
            'in files made before the strict limit existed, the step\'s convolutions and '
            'matmuls in the graph\'s own form, everything else free. Above 1 under `compute`: '
            'the graph computes an op in a faster form than the limit timed, or a standalone '
            'timing was disturbed.', '']
    out += [_table(['model', 'batch', 'mode', 'precision', 'ours ms', 'limit ms', 'limit',
                    'images/sec', 'fraction', 'load', 'from'],
                   [[r['model'], str(r['batch']), r['mode'], r['precision'],
                     '%.1f' % (r['ours'] * 1e3), '%.1f' % (r['limit'] * 1e3), r['limit_kind'],
                     '%.2f' % r['images_per_sec'], '%.2f' % r['fraction'],
                     '%.1f-%.1f' % (r['prov']['load_average_before'],
                                    r['prov']['load_average_after']),
                     '`results/%s.json`' % r['stem']] for r in rows],
                   'lrllrrlrrll') if rows else 'No roofline file yet.', '']
    out += precision_section(results) + sweep_section(results) + original_section(results)
    out += elementwise_section(results)
    out += performance_plots.section(page_charts(results))
    out += files_section(results)
    return '\n'.join(out).rstrip('\n') + '\n'


def precision_section(results) -> list[str]:
    rows = []
    for stem, doc in results:
        if doc['what'] == 'precision':
            for r in doc['data']['rows']:
                if r.get('images_per_sec'):
                    rows.append([r['model'], str(r['batch_size']), r['precision'], r['xla'],
                                 '%.2f' % r['images_per_sec'], '%.2fx' % r['vs_fp32'],
                                 '%.2f' % r['fraction_of_ceiling'], '`results/%s.json`' % stem])
    if not rows:
        return []
    return ['## Precision and XLA, whole runs', '',
            'Training images/sec per precision (`python -m bench.bench_precision`, fresh '
            'processes); of ceiling = model GFLOP/s over the best standalone convolution or '
            'matmul GFLOP/s in that dtype.', '',
            _table(['model', 'batch', 'precision', 'XLA', 'images/sec', 'vs fp32', 'of ceiling',
                    'from'], rows, 'lrllrrrl'), '']


def sweep_section(results) -> list[str]:
    rows = sweep_rows(results)
    if not rows:
        return []
    rates = {(r[0], r[1], r[2], r[3], r[4], r[7]): float(r[5]) for r in rows}
    ratios = [[m, b, d, u, '%.2fx' % (rate / rates[(m, b, d, 'fp32', u, f)]), f]
              for (m, b, d, p, u, f), rate in rates.items()
              if p == 'bf16' and (m, b, d, 'fp32', u, f) in rates]
    text = ['## Sweeps', '', 'Median images/sec of each configuration\'s repeats '
            '(published with `tf_cnn_sweep`\'s `--publish`; every run a fresh process, repeats '
            'alternating).', '',
            _table(['model', 'batch', 'devices', 'precision', 'variables', 'images/sec',
                    'runs', 'from'], rows, 'lrrllrrl'), '']
    if ratios:
        text += ['bfloat16 against float32 in the same sweep (median over median):', '',
                 _table(['model', 'batch', 'devices', 'variables', 'bf16/fp32', 'from'], ratios,
                        'lrrlrl'), '']
    return text


def original_rows(results) -> list[list[str]]:
    """[model, batch, precision or data, ours, original, ratio, from] of every file that ran
    the original beside ours (roofline files with an `original` rate, vs_original files)."""
    rows = []
    for r in roofline_rows(results):
        if r['original']:
            rows.append([r['model'], str(r['batch']), r['precision'],
                         '%.2f' % r['images_per_sec'], '%.2f' % r['original'],
                         '%.2f' % (r['images_per_sec'] / r['original']),
                         '`results/%s.json`' % r['stem']])
    for stem, doc in results:
        if doc['what'].startswith('vs_original'):
            for r in doc['data']['rows']:
                if r.get('ours') and r.get('original'):
                    rows.append([r['model'], str(r['batch_size']), r.get('data', 'synthetic'),
                                 '%.2f' % r['ours'], '%.2f' % r['original'],
                                 '%.2f' % (r['ours'] / r['original']), '`results/%s.json`' % stem])
    return rows


def original_section(results) -> list[str]:
    rows = original_rows(results)
    text = ['## Against the original tf_cnn_benchmarks', '']
    if not rows:
        return text + ['No result file compares with the original yet: it needs the original '
                       'script and a Python with tf-keras (`python -m bench.bench_vs_original '
                       '--original_dir=... --original_python=...`). Earlier, dated comparisons '
                       'are in [Performance notes](performance-notes.md#against-the-original).',
                       '']
    return text + [_table(['model', 'batch', 'precision or data', 'ours', 'original', 'ratio',
                           'from'], rows, 'lrlrrrl'), '']


#: bench_elementwise's rows: (row, op types of its per-type table, oneDNN's prefixes folded).
MEMORY_ROWS = (('Relu', ('Relu',)), ('ReluGrad', ('ReluGrad',)), ('AddV2', ('AddV2',)),
               ('AddN', ('AddN',)), ('Cast', ('Cast',)),
               ('XLA clusters', ('XlaRun', 'XlaCompile')))


def elementwise_section(results) -> list[str]:
    """The memory-bound ops of one traced step per configuration (`elementwise_*`,
    bench/bench_elementwise.py)."""
    text = []
    for stem, doc in results:
        if not doc['what'].startswith('elementwise'):
            continue
        steps = doc['data']['steps']
        cols = list(steps)
        rows = [[row] + ['%.1f' % sum(steps[c]['per_type_ms'].get(t, 0.0) for t in types)
                         for c in cols] for row, types in MEMORY_ROWS]
        rows.append(['all ops'] + ['%.1f' % sum(steps[c]['per_type_ms'].values())
                                   for c in cols])
        rows.append(['step (median of timed steps)'] + ['%.0f' % (1e3 * steps[c]['step_secs'])
                                                        for c in cols])
        text += ['%s, batch %s, %s (load %.1f-%.1f), `results/%s.json`:' % (
            doc['data']['meta']['model'], doc['data']['meta']['batch_size'],
            _host(doc['provenance']), doc['provenance']['load_average_before'],
            doc['provenance']['load_average_after'], stem), '',
                 _table(['ms per op type'] + cols, rows, 'l' + 'r' * len(cols)), '']
    if not text:
        return []
    return ['## Memory-bound ops, per configuration', '',
            'Traced training steps per precision and `--graph_choices` value, each op\'s '
            'least, `--num_inter_threads=1` (`python -m bench.bench_elementwise`; the op-by-op '
            'tables, alone and with producers, are in the file\'s `.md`).', ''] + text


def files_section(results) -> list[str]:
    rows = [['`%s`' % stem, doc['provenance']['date'], _host(doc['provenance']),
             '%.1f-%.1f' % (doc['provenance']['load_average_before'],
                            doc['provenance']['load_average_after']),
             '`%s`' % _commit(doc['provenance']),
             '`%s`' % doc['provenance']['command']]
            for stem, doc in results]
    return ['## The files', '', 'Every file this page read, with how it was made.', '',
            _table(['file', 'date (UTC)', 'host', 'load', 'commit', 'command'], rows, 'llllll')
            if rows else 'None yet.', '']


def render_index(results) -> str:
    """results/README.md: what the files are, and one row per file."""
    rows = [['[%s](%s.md)' % (stem, stem), doc['what'], doc['provenance']['date'][:10],
             _host(doc['provenance']), '`%s`' % doc['provenance']['command']]
            for stem, doc in results]
    return '\n'.join([
        '# Results', '',
        '<!-- Generated by `python -m bench.make_performance_page`; do not edit. -->', '',
        'Committed measurements, one pair of files per measurement: '
        '`<date>-<cpu or gpu>-tf<X.Y>-<what>.json` (`{"what", "provenance", "data"}`) and its '
        '`.md` (the provenance, then the tables). The provenance holds the command that made '
        'the file, the UTC date, the TensorFlow version, the project\'s git commit, the CPU '
        'model, its notable flags and cores, and the load average before and after '
        '(`history/result_files.py`). The bench scripts write them (`python -m bench.<script>`), '
        'and so does `tf_cnn_sweep --publish=WHAT`; `docs/performance.md` is generated from '
        'them.', '',
        _table(['file', 'what', 'date', 'host', 'command'], rows, 'lllll') if rows
        else 'No files yet.', ''])


def page_charts(results) -> dict[str, tuple[str, str]]:
    """The page's plots: {file name: (alt text, SVG)} (bench/performance_plots.py)."""
    rows = roofline_rows(results)
    return performance_plots.charts(bf16_ratios(rows), rows, original_rows(results))


def outputs(results) -> dict[str, str]:
    """{path: text} of every file this script writes (README.md with its blocks filled, the
    page's SVG plots under docs/img/)."""
    with open(README, encoding='utf-8') as f:
        readme = f.read()
    with open(SCALING, encoding='utf-8') as f:
        scaling = f.read()
    with open(OUTPUT_PAGE, encoding='utf-8') as f:
        output_page = f.read()
    with open(ESTIMATE_PAGE, encoding='utf-8') as f:
        estimate_page = f.read()
    written = {PAGE: render_page(results), README: render_readme(readme, results),
               INDEX: render_index(results), SCALING: render_scaling(scaling, results),
               OUTPUT_PAGE: render_blocks(output_page,
                                          {'example-output': example_output(results)}),
               ESTIMATE_PAGE: render_blocks(estimate_page,
                                            {'gpu-model': gpu_model_block(results)})}
    for name, (_, svg) in page_charts(results).items():
        written[os.path.join(os.path.dirname(PAGE), performance_plots.IMG_DIR, name)] = svg
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog='make_performance_page', description=__doc__)
    parser.add_argument('--check', action='store_true',
                        help='exit 1 when a page it writes is stale')
    args = parser.parse_args(argv)
    results = load_results()
    written = outputs(results)
    if args.check:
        stale = []
        for path, text in written.items():
            try:
                with open(path, encoding='utf-8') as f:
                    same = f.read() == text
            except FileNotFoundError:
                same = False
            if not same:
                stale.append(os.path.relpath(path, REPO))
        for name in stale:
            print('error: %s is stale; run python -m bench.make_performance_page' % name,
                  file=sys.stderr)
        return 1 if stale else 0
    for path, text in written.items():
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w', encoding='utf-8') as f:
            f.write(text)
    print('wrote %s from %d result files' % (
        ', '.join(os.path.relpath(p, REPO) for p in written), len(results)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
