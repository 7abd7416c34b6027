"""Writing a benchmark's results as committed data: `results/<date>-<cpu|gpu>-tf<X.Y>-<what>`.

Every bench script ends in `write_results`, which writes two files into `results/` (the
checkout's top folder; `--out`/`--out_dir` of a script chooses another folder):

* `<stem>.json`: `{"what": ..., "provenance": {...}, "data": <the script's own result>}`;
* `<stem>.md`: the provenance as a short list, then the script's markdown table.

`stem` is `<UTC date>-<cpu or gpu>-tf<major.minor>-<what>`, e.g.
`2026-12-02-cpu-tf2.21-precision`: what was measured, on what kind of device, with which
TensorFlow, so that a figure quoted anywhere names the file it came from (a second run of the
same script on the same day replaces its file). The provenance holds the command that made the
file, the CPU model, its notable flags (the vector and reduced-precision units), cores, the load
average before and after, the TensorFlow version and the project's git commit (`-dirty` when
the working tree had uncommitted changes). `docs/performance.md` is generated from these files
(`python -m bench.make_performance_page`).
"""

from __future__ import annotations

import datetime
import json
import os
import shlex
import subprocess
import sys

from tf_cnn_benchmarks.hardware import machine

HERE = os.path.dirname(os.path.abspath(__file__))  # bench/
REPO = os.path.dirname(HERE)  # the checkout
RESULTS = os.path.join(REPO, 'results')
# The load average when the script started (bench/preamble.py imports this module first).
LOAD_AT_START = os.getloadavg()[0]


def markdown_table(header: list[str], align: str, rows: list[list[str]]) -> str:
    """A markdown table; `align` has one letter per column: 'l' left, 'r' right."""
    lines = ['| %s |' % ' | '.join(header),
             '| %s |' % ' | '.join('---:' if a == 'r' else '---' for a in align)]
    lines += ['| %s |' % ' | '.join(cells) for cells in rows]
    return '\n'.join(lines)


def git_commit(repo: str = REPO) -> str:
    """The checkout's commit, '<40 hex digits>' plus '-dirty' when tracked files changed;
    'unknown' outside a git checkout (or without git)."""
    try:
        head = subprocess.run(['git', '-C', repo, 'rev-parse', 'HEAD'], capture_output=True,
                              text=True, timeout=30, check=True).stdout.strip()
        dirty = subprocess.run(['git', '-C', repo, 'status', '--porcelain', '--untracked-files=no'],
                               capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return 'unknown'
    return head + ('-dirty' if dirty.strip() else '')


def command_line(argv: list[str] | None = None) -> str:
    """The command that runs this script again: 'python -m bench.<script> <args>' for a bench
    script (sys.argv[0] is its file under `python -m`), else argv as given."""
    argv = list(sys.argv if argv is None else argv)
    script = os.path.abspath(argv[0]) if argv else ''
    if os.path.dirname(script) == HERE and script.endswith('.py'):
        head = ['python', '-m', 'bench.' + os.path.basename(script)[:-3]]
    else:
        head = argv[:1]
    return shlex.join(head + argv[1:])


def _device() -> str:
    """'gpu' when TensorFlow (already imported by the script) sees a GPU, else 'cpu'."""
    tf = sys.modules.get('tensorflow')
    if tf is None:
        return 'cpu'
    return 'gpu' if tf.config.list_physical_devices('GPU') else 'cpu'


def provenance(argv: list[str] | None = None, device: str | None = None) -> dict:
    """Where and how a result was measured.

    Returns:
      {'date' (UTC, ISO 8601 to the second), 'command', 'device' ('cpu'/'gpu'), 'tensorflow'
       (version), 'commit', 'cpu_model', 'cpu_flags' (the notable ones, list), 'cpu_cores',
       'load_average_before', 'load_average_after' (1-minute, os.getloadavg), 'onednn'}.
    """
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    return {
        'date': now.strftime('%Y-%m-%dT%H:%M:%SZ'),
        'command': command_line(argv),
        'device': device or _device(),
        'tensorflow': machine.tf_version_installed() or 'unknown',
        'commit': git_commit(),
        'cpu_model': machine.cpu_model(),
        'cpu_flags': machine.cpu_flags(),
        'cpu_cores': os.cpu_count(),
        'load_average_before': round(LOAD_AT_START, 2),
        'load_average_after': round(os.getloadavg()[0], 2),
        'onednn': machine.onednn(),
    }


def result_stem(what: str, prov: dict) -> str:
    """'2026-12-02-cpu-tf2.21-precision' for what='precision' measured that day on a CPU with
    TensorFlow 2.21.x (underscores in `what` become dashes)."""
    version = '.'.join(prov['tensorflow'].split('.')[:2])
    return '%s-%s-tf%s-%s' % (prov['date'][:10], prov['device'], version,
                              what.replace('_', '-'))


def provenance_lines(prov: dict) -> list[str]:
    """The provenance as markdown list items (the head of every result's .md)."""
    return ['* command: `%s`' % prov['command'],
            '* date: %s; TensorFlow %s; commit `%s`' % (prov['date'], prov['tensorflow'],
                                                        prov['commit'][:12]),
            '* host: %s, %s cores, CPU flags %s; oneDNN %s' % (
                prov['cpu_model'], prov['cpu_cores'], ' '.join(prov['cpu_flags']) or 'none',
                prov['onednn']),
            '* load average (1 min): %.2f before, %.2f after' % (
                prov['load_average_before'], prov['load_average_after'])]


def write_results(out_dir: str, what: str, data, markdown: str,
                  argv: list[str] | None = None) -> str:
    """Writes out_dir/<stem>.json and out_dir/<stem>.md (see the module docstring), prints the
    table and the paths; returns the stem's path (without extension).

    Args:
      out_dir: the folder (created when missing); normally RESULTS.
      what: what was measured, e.g. 'precision', 'roofline_resnet50_b16_bf16'.
      data: the script's result (anything json.dump writes).
      markdown: the script's table(s).
      argv: the command line to record (default sys.argv).
    """
    prov = provenance(argv)
    stem = os.path.join(out_dir, result_stem(what, prov))
    os.makedirs(out_dir, exist_ok=True)
    with open(stem + '.json', 'w') as f:
        json.dump({'what': what, 'provenance': prov, 'data': data}, f, indent=1)
        f.write('\n')
    with open(stem + '.md', 'w') as f:
        f.write('# %s\n\n%s\n\n%s\n' % (what, '\n'.join(provenance_lines(prov)),
                                        markdown.rstrip('\n')))
    print(markdown)
    print('wrote %s.json and %s.md' % (stem, stem))
    return stem
