"""The sweep report's text where a CI engineer's trial found it not paste-able
(tools/sweep/report.py): the flags for every run as a shell reads them back, a plot's link
from a folder whose name has a space; a report.md that is a symbolic link."""

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


def test_a_flag_given_to_report_is_named_not_counted_as_a_folder(tmp_path, capsys,
                                                                  monkeypatch):
    # A docs reader's trial: 'report takes one sweep output directory. Received 2 argument(s)'.
    monkeypatch.chdir(tmp_path)
    rh.sweep_folder('swA', _records('trivial', 8, 1, [100.0, 101.0]))
    assert sweep.main(['tf_cnn_sweep', 'report', 'swA', '--include_unclean_runs']) == 2
    assert capsys.readouterr().err == (
        "error: report takes no flags (--include_unclean_runs): give only the sweep's output "
        'directory. usage: tf_cnn_sweep report OUTPUT_DIR\n')


def _loaded(record: dict, load: dict | None) -> dict:
    return dict(record, host_load=load)


# A run of --num_intra_threads=1 on 2 CPUs recorded before metrics/host_load.py divided the
# others by every CPU the run may use (commit 03ef60c): its record's 'cores' is 1.
OLD_INTRA_1 = {'cores': 1, 'others_cores': 1.16, 'others_fraction': 1.16,
               'steal_fraction': None, 'load_average_before': 3.8, 'load_average_after': 3.8,
               'representative': False, 'reasons': [], 'others_limit': 0.25,
               'steal_limit': 0.05, 'error': '', 'cluster_fraction': None}


def test_the_host_load_table_divides_by_every_cpu_the_run_may_use_never_above_100():
    # Before (sweep53): '1.16 of 1 (116%)' for a run of --num_intra_threads=1, whose own line
    # (metrics/host_load.py since 03ef60c) divides by every allowed CPU.
    from tf_cnn_benchmarks.tools.sweep import host_load as sweep_host_load
    old = _loaded(_record('trivial', 8, 1, 466.3), OLD_INTRA_1)
    new = _loaded(_record('trivial', 8, 1, 466.3, repeat=1),
                  dict(OLD_INTRA_1, cores=2, cpus_allowed=2, intra_threads=1,
                       others_fraction=0.58))
    table = sweep_host_load.host_table([old, new])  # old's machine: environment cpu_cores 2
    assert table.count('| 1.16 of 2 (58%) |') == 2, table
    # Without the CPUs it was allowed or the machine's, the share is still no more than 100%.
    assert '| 1.16 of 1 (100%) |' in sweep_host_load.host_table([dict(old, environment={})])
    assert 'cpus_allowed' in sweep_host_load.FIELDS and 'intra_threads' in sweep_host_load.FIELDS


def test_the_compare_host_load_cell_says_how_many_runs_were_measured():
    # Before (sweep53): '52% (1/1 busy)' for a side of 3 runs, 2 of them not measured.
    from tf_cnn_benchmarks.tools.sweep import host_load as sweep_host_load
    busy = dict(OLD_INTRA_1, cores=2, others_cores=1.04, others_fraction=0.52)
    quiet = dict(busy, others_cores=0.1, others_fraction=0.05, representative=True)
    short = dict(busy, others_cores=None, others_fraction=None, representative=None,
                 error='the timed part lasted 0.09 s, too short')
    runs = [_loaded(_record('trivial', 2, 1, 100.0, repeat=i), load)
            for i, load in enumerate([busy, short, short])]
    assert sweep_host_load.compare_cell(runs) == '52% (1 of 3 measured, 1 busy)'
    runs[0] = _loaded(runs[0], quiet)
    assert sweep_host_load.compare_cell(runs) == '5% (1 of 3 measured)'
    every = [_loaded(r, load) for r, load in zip(runs, [busy, quiet, busy])]
    assert sweep_host_load.compare_cell(every) == '52% (2/3 busy)'
    assert sweep_host_load.compare_cell([_loaded(r, short) for r in runs]) == '-'


def test_a_report_md_that_is_a_link_is_written_through(tmp_path):
    # Before: os.replace put a plain file in the link's place (the runs' published copy, which
    # the link pointed at, kept the old report); the results JSON and the plots keep links.
    published = tmp_path / 'site' / 'sweep.md'
    published.parent.mkdir()
    published.write_text('old report\n')
    out = tmp_path / 'sw'
    out.mkdir()
    os.symlink(published, out / 'report.md')
    text = sweep_report.write_report(str(out), _records('trivial', 8, 1, [100.0, 101.0]))
    assert os.path.islink(out / 'report.md')
    assert published.read_text() == text and '# tf_cnn_sweep report' in text
    assert not [n for n in os.listdir(out) + os.listdir(published.parent) if n.endswith('.tmp')]
