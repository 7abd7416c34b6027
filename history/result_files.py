"""Result files as committed data: `results/<date>-<cpu|gpu>-tf<X.Y>-<what>.json` and `.md`.

Written by the bench scripts (bench/bench_report.py) and by `tf_cnn_sweep --publish=WHAT`, read
by the performance page's generator (bench/make_performance_page.py). A file's JSON is

    {"what": "precision", "provenance": {...}, "data": <the writer's own result>}

and its markdown the provenance as a list, then the writer's table(s). The provenance says how
to make the file again and where it was measured: the command, the UTC date, the device kind,
the TensorFlow version, tf_cnn_benchmarks' version, the project's git commit (`-dirty` when
tracked files had changes; none for an installed package: `git_commit`), the CPU model, its
notable flags (hardware/machine.py: vector and reduced-precision units), its cores, the
1-minute load average before and after, and oneDNN on or off. The name says
what was measured on what (timm's results/ does the same), so a figure quoted anywhere can name
the file it came from; a second file of the same name on the same day replaces the first.
No TensorFlow.
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess

from .. import package_info
from ..hardware import machine


def git_commit(repo: str) -> str | None:
    """The commit checked out in `repo`: 40 hex digits, plus '-dirty' when tracked files have
    uncommitted changes; None unless `repo` is itself the top folder of a git work tree (an
    installed package's folder in site-packages, a venv inside some other repository, whose
    commit says nothing of this code), or without git."""
    try:
        top = subprocess.run(['git', '-C', repo, 'rev-parse', '--show-toplevel'],
                             capture_output=True, text=True, timeout=30, check=True).stdout
        if os.path.realpath(top.strip()) != os.path.realpath(repo):
            return None
        head = subprocess.run(['git', '-C', repo, 'rev-parse', 'HEAD'], capture_output=True,
                              text=True, timeout=30, check=True).stdout.strip()
        dirty = subprocess.run(['git', '-C', repo, 'status', '--porcelain',
                                '--untracked-files=no'], capture_output=True, text=True,
                               timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ('-dirty' if dirty.strip() else '')


def provenance(command: str, device: str, repo: str, load_before: float,
               tf_version: str | None = None) -> dict:
    """Where and how a result was measured.

    Args:
      command: the command line that makes the file again.
      device: 'cpu' or 'gpu' (what the figures ran on).
      repo: the checkout whose commit is recorded (the package's folder: none when installed).
      load_before: the 1-minute load average when the measurement started.
      tf_version: TensorFlow's version (default: the installed package's, read without import).

    Returns:
      {'date' (UTC, 'YYYY-MM-DDTHH:MM:SSZ'), 'command', 'device', 'tensorflow',
       'tf_cnn_benchmarks' (package_info.VERSION), 'commit' (None: not a checkout),
       'cpu_model', 'cpu_flags' (list), 'cpu_cores', 'load_average_before',
       'load_average_after', 'onednn' ('on'/'off')}.
    """
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    return {
        'date': now.strftime('%Y-%m-%dT%H:%M:%SZ'),
        'command': command,
        'device': device,
        'tensorflow': tf_version or machine.tf_version_installed() or 'unknown',
        'tf_cnn_benchmarks': package_info.VERSION,
        'commit': git_commit(repo),
        'cpu_model': machine.cpu_model(),
        'cpu_flags': machine.cpu_flags(),
        'cpu_cores': os.cpu_count(),
        'load_average_before': round(load_before, 2),
        'load_average_after': round(os.getloadavg()[0], 2),
        'onednn': machine.onednn(),
    }


def result_stem(what: str, prov: dict) -> str:
    """'2026-12-02-cpu-tf2.21-precision' for what='precision' measured that day on a CPU with
    TensorFlow 2.21.x; underscores and spaces in `what` become dashes."""
    version = '.'.join(prov['tensorflow'].split('.')[:2])
    return '%s-%s-tf%s-%s' % (prov['date'][:10], prov['device'], version,
                              '-'.join(what.replace('_', '-').split()))


def commit_text(prov: dict) -> str:
    """A provenance's commit as the performance page's tables show it: its first 12
    characters, or 'none' where none was recorded (not run from a git checkout)."""
    commit = prov.get('commit')
    return commit[:12] if commit else 'none'


def provenance_lines(prov: dict) -> list[str]:
    """The provenance as markdown list items (the head of every result's .md); a file
    written before the tool's version was kept has no 'tf_cnn_benchmarks' and shows none."""
    version = ('tf_cnn_benchmarks %s; ' % prov['tf_cnn_benchmarks']
               if prov.get('tf_cnn_benchmarks') else '')
    commit = prov.get('commit')
    return ['* command: `%s`' % prov['command'],
            '* date: %s; TensorFlow %s; %s%s' % (
                prov['date'], prov['tensorflow'], version,
                'commit `%s`' % commit[:12] if commit
                else 'commit none (not run from a git checkout: an installed package)'),
            '* host: %s, %s cores, CPU flags %s; oneDNN %s' % (
                prov['cpu_model'], prov['cpu_cores'], ' '.join(prov['cpu_flags']) or 'none',
                prov['onednn']),
            '* load average (1 min): %.2f before, %.2f after' % (
                prov['load_average_before'], prov['load_average_after'])]


def write(out_dir: str, what: str, data, markdown: str, prov: dict) -> str:
    """Writes out_dir/<stem>.json and out_dir/<stem>.md; returns the path without extension.

    Args:
      out_dir: the folder, created with its parents when missing.
      what: what was measured ('precision', 'roofline_resnet50_b16_bf16', ...).
      data: the writer's result (anything json.dump writes).
      markdown: the writer's table(s).
      prov: from `provenance`.

    Raises:
      OSError: the folder or a file cannot be written.
    """
    stem = os.path.join(out_dir, result_stem(what, prov))
    os.makedirs(out_dir, exist_ok=True)
    with open(stem + '.json', 'w', encoding='utf-8') as f:
        json.dump({'what': what, 'provenance': prov, 'data': data}, f, indent=1)
        f.write('\n')
    with open(stem + '.md', 'w', encoding='utf-8') as f:
        f.write('# %s\n\n%s\n\n%s\n' % (what, '\n'.join(provenance_lines(prov)),
                                        markdown.rstrip('\n')))
    return stem


def load(path: str) -> dict:
    """A result file's JSON: {'what', 'provenance', 'data'}.

    Raises:
      ValueError: the file is not JSON or lacks one of the three keys (named with the path).
    """
    try:
        with open(path, encoding='utf-8') as f:
            doc = json.load(f)
    except json.JSONDecodeError as e:
        raise ValueError('%s is not a result file: %s' % (path, e)) from None
    missing = [k for k in ('what', 'provenance', 'data')
               if not isinstance(doc, dict) or k not in doc]
    if missing:
        raise ValueError('%s is not a result file: no %s' % (path, ', '.join(missing)))
    return doc
