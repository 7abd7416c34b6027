"""The performance page's plots (bench/svg_bars.py, bench/performance_plots.py): the same data
gives the same bytes, each bar shows its value, and the page links every chart it writes."""

import os
import re

import pytest

import checkout

svg_bars = checkout.load_bench('svg_bars')
plots = checkout.load_bench('performance_plots')
make_page = checkout.load_bench('make_performance_page')


def test_a_chart_draws_one_bar_a_row_with_its_value_and_the_reference_line():
    svg = svg_bars.bar_chart('T <1>', [('a', 2.0), ('b & c', 0.5)], reference_label='fp32')
    assert svg == svg_bars.bar_chart('T <1>', [('a', 2.0), ('b & c', 0.5)],
                                     reference_label='fp32')
    assert svg.startswith('<svg xmlns="http://www.w3.org/2000/svg"') and svg.endswith('</svg>\n')
    assert '<title>T &lt;1&gt;</title>' in svg and '>b &amp; c</text>' in svg
    widths = [float(w) for w in re.findall(r'<rect x="300" y="\d+" width="([\d.]+)"', svg)]
    assert len(widths) == 2 and widths[0] == pytest.approx(4 * widths[1], abs=0.2)  # 2 vs 0.5
    assert '>2.00x</text>' in svg and '>0.50x</text>' in svg
    line = re.search(r'<line x1="([\d.]+)"', svg)
    assert float(line.group(1)) == pytest.approx(300 + widths[0] / 2, abs=0.1)  # at 1.0
    assert '>fp32</text>' in svg


def test_a_chart_refuses_no_rows_and_negative_values():
    with pytest.raises(ValueError, match='at least one row'):
        svg_bars.bar_chart('t', [])
    with pytest.raises(ValueError, match='>= 0'):
        svg_bars.bar_chart('t', [('a', -1.0)])


def test_the_page_links_each_chart_the_generator_writes():
    results = make_page.load_results()
    written = make_page.outputs(results)
    charts = make_page.page_charts(results)
    assert charts  # the committed results have roofline pairs
    page = written[make_page.PAGE]
    for name in charts:
        assert '](img/%s)' % name in page
        path = os.path.join(os.path.dirname(make_page.PAGE), 'img', name)
        assert written[path] == charts[name][1]
    assert plots.charts([], [], []) == {} and plots.section({}) == []
