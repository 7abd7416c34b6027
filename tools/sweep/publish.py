"""`tf_cnn_sweep --publish=WHAT`: a finished sweep as a committed result file.

After the sweep's report, writes `<--publish_dir>/<date>-<cpu|gpu>-tf<X.Y>-<WHAT>.json` and
`.md` (history/result_files.py: the sweep's command, the host's CPU and flags, load averages,
TensorFlow's and tf_cnn_benchmarks' versions, and the commit of the package's folder when it
is a git checkout's top folder: none for an installed package) holding the sweep's records
and its report, so a figure quoted from a sweep names its file. The report's plots are
published beside the .md as `<stem>-<plot>.png` (`<stem>-resnet50_images_per_sec.png`: the
stem is the result file's own, so no other file's plot has the name), and its links point
at them; a plot the sweep folder no longer holds is named, not linked. `--publish_dir`
defaults to `results` (relative to the current folder: the checkout's `results/` when run from
its top folder).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import urllib.parse

from tf_cnn_benchmarks.history import result_files  # absolute: `python -m tools.sweep`

from . import report as report_lib
from . import results

# What a published file may be called: the file name's last part.
_WHAT = re.compile(r'^[A-Za-z0-9][A-Za-z0-9_.-]*$')
CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# A plot in the report: `![name.png](plots/name.png)` (report.py write_report, its target
# percent-encoded by report.link).
_PLOT = re.compile(r'^!\[(?P<alt>[^]]*)\]\(plots/(?P<target>[^)/]+\.png)\)$', re.M)


def what_problem(what: str | None) -> str | None:
    """The usage error for a --publish value that cannot be a file name part; None when fine."""
    if what is None or _WHAT.match(what):
        return None
    return ('--publish=%s: takes a name of letters, digits, dots, dashes and underscores, e.g. '
            '--publish=precision-training' % what)


def device_of(records: list[dict]) -> str:
    """'gpu' when any successful run of the sweep ran on a GPU (its resolved --device), else
    'cpu'."""
    for r in records:
        if (r.get('params') or {}).get('device') == 'gpu':
            return 'gpu'
    return 'cpu'


def publish(output_dir: str, what: str, publish_dir: str, argv: list[str],
            load_before: float) -> str:
    """Writes the sweep in output_dir as a result file; returns its path without extension.

    Args:
      output_dir: the sweep's folder (results.jsonl, report.md).
      what: the file name's last part (checked by `what_problem`).
      publish_dir: the folder of result files, created when missing.
      argv: the sweep's command line (argv[0] the program).
      load_before: the 1-minute load average when the sweep started.

    Raises:
      OSError: the folder or a file cannot be written, or the sweep has no report.
    """
    records, _ = results.load_records(results.results_path(output_dir))
    with open(os.path.join(output_dir, 'report.md'), encoding='utf-8') as f:
        report = f.read()
    tf_versions = sorted({(r.get('environment') or {}).get('tf_version') or '' for r in records})
    prov = result_files.provenance(
        shlex.join(['tf_cnn_sweep'] + list(argv[1:])), device_of(records), CHECKOUT,
        load_before, tf_version=tf_versions[-1] or None)
    data = {'records': records}
    stem = result_files.result_stem(what, prov)
    os.makedirs(publish_dir, exist_ok=True)
    report = publish_plots(report, os.path.join(output_dir, 'plots'), publish_dir, stem)
    return result_files.write(publish_dir, what, data, report, prov)


def publish_plots(report: str, plot_dir: str, publish_dir: str, stem: str) -> str:
    """Copies each plot the report shows from plot_dir to publish_dir/<stem>-<name>.png and
    returns the report with its links pointing there; a plot not in plot_dir is named in
    words instead of linked.

    Raises:
      OSError: a plot cannot be copied.
    """
    def publish_one(m: re.Match) -> str:
        name = urllib.parse.unquote(m.group('target'))
        source = os.path.join(plot_dir, name)
        if not os.path.isfile(source):
            return '%s: not published (the sweep folder no longer holds the plot).' % name
        published = '%s-%s' % (stem, name)
        shutil.copyfile(source, os.path.join(publish_dir, published))
        return '![%s](%s)' % (m.group('alt'), report_lib.link(published))

    return _PLOT.sub(publish_one, report)
