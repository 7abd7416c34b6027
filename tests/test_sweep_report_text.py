"""The sweep report's text where a CI engineer's trial found it not paste-able
(tools/sweep/report.py): the flags for every run as a shell reads them back, a plot's link
from a folder whose name has a space."""

from __future__ import annotations

import os
import re
import shlex

from test_sweep import _record, _records

from tf_cnn_benchmarks.tools.sweep import cli as sweep
from tf_cnn_benchmarks.tools.sweep import report as sweep_report

import results_helpers as rh


def test_the_flags_for_every_run_are_quoted_as_a_shell_reads_them(tmp_path):
    # Before: 'Flags for every run: `--label=a b`.' (unquoted, unlike `tf_cnn_results show`).
    extra = ['--device=cpu', '--label=a b', '--num_batches', '2', '--trace_file=$HOME/t']
    text = sweep_report.header([dict(_record('trivial', 8, 1, 100.0), extra_flags=extra)])
    flags = re.search(r'Flags for every run: `(.*)`\.', text).group(1)
    assert flags == "--device=cpu --label='a b' --num_batches 2 --trace_file='$HOME/t'"
    assert shlex.split(flags) == ['--device=cpu', '--label=a b', '--num_batches', '2',
                                  '--trace_file=$HOME/t']
    assert sweep_report.code('a `b` c') == '``a `b` c``'
    assert sweep_report.code('`x') == '`` `x ``'


def test_a_plots_link_from_a_folder_with_a_space_is_percent_encoded(tmp_path, capsys,
                                                                   monkeypatch):
    # Before: '![trivial_images_per_sec.png](sw ü/plots/trivial_images_per_sec.png)': a
    # markdown link that ends at the space.
    monkeypatch.chdir(tmp_path)
    rh.sweep_folder('sw ü', _records('trivial', 8, 1, [100.0, 101.0]))
    assert sweep.main(['tf_cnn_sweep', 'report', 'sw ü']) == 0
    links = re.findall(r'!\[[^]]*\]\(([^)]*)\)', capsys.readouterr().out)
    assert links == ['sw%20ü/plots/trivial_images_per_sec.png']
    assert os.path.isfile(links[0].replace('%20', ' '))
    assert sweep_report.link('a (1)/<b>%.png') == 'a%20%281%29/%3Cb%3E%25.png'
