"""Install hints for an installed package and a checkout (pkg56 finding 4): every message that
tells the user to install the package or one of its extras gives both commands, from one
helper (package_info.install_hint). A wheel's user told `pip install -e '.[gpu]'` ran it in a
folder that was no checkout."""

from __future__ import annotations

import ast
import os

from tf_cnn_benchmarks import package_info, params
from tf_cnn_benchmarks.lifecycle import mlperf_log
from tf_cnn_benchmarks.preflight import usage
from tf_cnn_benchmarks.tools import build_imagenet_tfrecords as convert_tool
from tf_cnn_benchmarks.tools.sweep import report as sweep_report

import checkout

REPO = checkout.REPO


def test_the_hint_gives_the_installed_and_the_checkout_command():
    assert package_info.install_hint('gpu') == (
        "pip install 'tf_cnn_benchmarks[gpu]' (in a checkout: pip install -e '.[gpu]')")
    assert package_info.install_hint() == (
        'pip install tf_cnn_benchmarks (in a checkout: pip install -e .)')


def test_every_install_message_gives_both_commands():
    messages = [('gpu', usage.GPU_INSTALL), ('mlperf', mlperf_log.INSTALL_HINT),
                ('mlperf', params.SPEC_BY_NAME['ml_perf'].help),
                ('plot', sweep_report.MATPLOTLIB_HINT), (None, convert_tool.NO_PILLOW)]
    for extra, text in messages:
        assert package_info.install_hint(extra) in text, text


def _string_literals(path: str):
    for node in ast.walk(ast.parse(open(path, encoding='utf-8').read())):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value


def test_no_message_gives_a_checkout_command_alone():
    """A `pip install -e` in the package's code is the helper's (or the one message of a
    checkout's `import benchmark_cnn`, where the package cannot be imported, which gives both
    forms written out)."""
    found = []
    for folder, dirs, files in os.walk(REPO):
        rel = os.path.relpath(folder, REPO)
        if rel.split(os.sep)[0] in ('tests', 'bench', 'build', 'docs', 'results'):
            dirs[:] = []
            continue
        dirs[:] = [d for d in dirs if not d.startswith('.')]
        for name in files:
            path = os.path.join(folder, name)
            if not name.endswith('.py') or path == os.path.join(REPO, 'package_info.py'):
                continue
            for line, text in _string_literals(path):
                if 'pip install -e' in text and 'pip install tf_cnn_benchmarks' not in text:
                    found.append('%s:%d' % (os.path.relpath(path, REPO), line))
    assert found == []
