"""The performance page's plots (docs/img/perf-*.svg), drawn from the same rows as its tables.

Three charts, each bar labelled with what it measured and the file's date: bfloat16 against
float32 per model (fp32 step time / bf16 step time), the fraction of the hardware limit per
roofline file, and our images/sec against the original's. Written by
`python -m bench.make_performance_page` beside the page; a chart with no data is not drawn.
"""

from __future__ import annotations

from . import svg_bars

IMG_DIR = 'img'  # below docs/


def _label(r: dict, *keys: str) -> str:
    return ' '.join([str(r[k]) for k in keys] + [r['prov']['date'][:10]])


def charts(ratios: list[dict], rooflines: list[dict], originals: list[list[str]]
           ) -> dict[str, tuple[str, str]]:
    """{file name: (alt text, SVG)} of the charts that have data.

    Args:
      ratios: make_performance_page.bf16_ratios rows (model, batch, mode, ratio, prov).
      rooflines: make_performance_page.roofline_rows rows (model, batch, mode, precision,
        fraction, prov).
      originals: the rows of the page's "against the original" table: [model, batch,
        precision or data, ours, original, ratio, from].
    """
    out = {}
    if ratios:
        out['perf-bf16-vs-fp32.svg'] = (
            'bfloat16 against float32 per model', svg_bars.bar_chart(
                'bfloat16 / float32 images/sec (above 1: bfloat16 faster)',
                [(_label(r, 'model', 'mode') + ' b%d' % r['batch'], r['ratio']) for r in ratios],
                reference_label='float32'))
    if rooflines:
        out['perf-fraction-of-limit.svg'] = (
            'fraction of the hardware limit per roofline file', svg_bars.bar_chart(
                'Fraction of the hardware limit (limit step time / ours)',
                [(_label(r, 'model', 'mode', 'precision'), r['fraction']) for r in rooflines],
                unit='', reference_label='the limit'))
    if originals:
        out['perf-vs-original.svg'] = (
            'our images/sec against the original tf_cnn_benchmarks', svg_bars.bar_chart(
                'Ours / the original tf_cnn_benchmarks (images/sec)',
                [('%s b%s %s' % (row[0], row[1], row[2]), float(row[5])) for row in originals],
                reference_label='the original'))
    return out


def section(charts_by_name: dict[str, tuple[str, str]]) -> list[str]:
    """The page's "Plots" section: one image line per chart (links relative to docs/)."""
    if not charts_by_name:
        return []
    lines = ['## Plots', '', 'The tables above as bars (each bar names its model and the date '
             'of its file; the tables name the files).', '']
    for name, (alt, _) in charts_by_name.items():
        lines += ['![%s](%s/%s)' % (alt, IMG_DIR, name), '']
    return lines
