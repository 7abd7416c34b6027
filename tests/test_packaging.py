"""The source distribution holds what the test and docs extras need (MANIFEST.in).

Without MANIFEST.in, setuptools' sdist shipped tests/test_*.py but not tests/conftest.py, the
tests' helper modules or tests/data/, nor docs/, mkdocs.yml, bench/, results/ or examples/: the
suite could not be collected from an unpacked sdist (pkg56 finding 1). The rules are read here
as setuptools reads them (a subset of its commands; an unknown one fails the test) and applied
to the tracked files: no sdist is built.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import re
import subprocess

import pytest

import checkout

REPO = checkout.REPO
#: Tracked files the suite and the docs build read, besides the package itself: every file
#: under these folders, and these top-level files (pyproject.toml: pytest's options; .ci/run:
#: tests/test_docs.py compares its test command with the README's; results/: the generated
#: pages and the links into it; bench/: the scripts tests load and the page generator).
NEEDED_FOLDERS = ('tests', 'docs', 'results', 'bench', 'examples', '.ci')
NEEDED_FILES = ('README.md', 'mkdocs.yml', 'pyproject.toml', 'setup.py')


def _path_glob(glob: str) -> re.Pattern:
    """`include`'s glob over a whole '/'-separated path: `*` and `?` stay inside one part of
    it, as in setuptools; `[...]` is a character class."""
    parts = re.split(r'(\*|\?|\[[^]]*\])', glob)
    body = ''.join('[^/]*' if p == '*' else '[^/]' if p == '?' else p if p.startswith('[')
                   else re.escape(p) for p in parts)
    return re.compile('^%s$' % body)


def manifest_files(rules: str, files: list[str]) -> set[str]:
    """The files of `files` ('/'-separated, relative to the checkout) that MANIFEST.in
    `rules` put in the sdist (setuptools' defaults aside).

    Raises:
      ValueError: a command this reader does not know (named with its line).
    """
    chosen: set[str] = set()
    for number, line in enumerate(rules.splitlines(), 1):
        words = line.split('#', 1)[0].split()
        if not words:
            continue
        command, args = words[0], words[1:]
        if command in ('include', 'exclude'):
            hit = {f for f in files for g in args if _path_glob(g).match(f)}
        elif command in ('recursive-include', 'recursive-exclude'):
            folder = args[0].rstrip('/') + '/'
            hit = {f for f in files if f.startswith(folder)
                   and any(fnmatch.fnmatchcase(posixpath.basename(f), g) for g in args[1:])}
        elif command in ('global-include', 'global-exclude'):
            hit = {f for f in files
                   if any(fnmatch.fnmatchcase(posixpath.basename(f), g) for g in args)}
        elif command in ('graft', 'prune'):
            hit = {f for f in files for d in args if f.startswith(d.rstrip('/') + '/')}
        else:
            raise ValueError('MANIFEST.in line %d: unknown command %r' % (number, command))
        if command in ('include', 'recursive-include', 'global-include', 'graft'):
            chosen |= hit
        else:
            chosen -= hit
    return chosen


def _tracked() -> list[str]:
    try:
        proc = subprocess.run(['git', '-C', REPO, 'ls-files'], capture_output=True, text=True,
                              timeout=60)
    except OSError:
        proc = None
    if proc is None or proc.returncode != 0 or not proc.stdout.strip():
        pytest.skip('not a git checkout (an unpacked sdist, say): no tracked files to check')
    return proc.stdout.splitlines()


def test_the_sdist_holds_every_tracked_file_the_tests_and_docs_need():
    tracked = _tracked()
    needed = [f for f in tracked if f.split('/')[0] in NEEDED_FOLDERS or f in NEEDED_FILES]
    # The suite's own set-up is among them (what the sdist left out before MANIFEST.in).
    assert {'tests/conftest.py', 'tests/helpers.py', 'tests/checkout.py',
            'tests/data/original_flags.json', 'mkdocs.yml', 'docs/index.md'} <= set(needed)
    with open(os.path.join(REPO, 'MANIFEST.in'), encoding='utf-8') as f:
        shipped = manifest_files(f.read(), tracked)
    assert sorted(set(needed) - shipped) == []


def test_the_manifest_reader_leaves_out_what_no_rule_covers():
    files = ['tests/conftest.py', 'tests/test_a.py', 'tests/data/x.json', 'docs/a.md',
             'bench/results/scratch.json', 'bench/b.py', 'tests/__pycache__/c.pyc',
             'mkdocs.yml', 'README.md']
    assert manifest_files('recursive-include tests test_*.py\ninclude README.md\n', files) == {
        'tests/test_a.py', 'README.md'}
    assert manifest_files('graft tests\ngraft bench\nprune bench/results\n'
                          'global-exclude *.py[cod]\ninclude *.yml\n', files) == {
        'tests/conftest.py', 'tests/test_a.py', 'tests/data/x.json', 'bench/b.py',
        'mkdocs.yml'}
    with pytest.raises(ValueError, match="line 1: unknown command 'grafts'"):
        manifest_files('grafts tests\n', files)


def _package_data() -> list[str]:
    """setup.py's package_data globs of the package (read from its source, not run)."""
    import ast
    with open(os.path.join(REPO, 'setup.py'), encoding='utf-8') as f:
        tree = ast.parse(f.read())
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == 'package_data':
            return ast.literal_eval(node.value)['tf_cnn_benchmarks']
    raise AssertionError('setup.py has no package_data')


def test_the_installed_package_holds_every_manual_page_that_messages_name():
    """Messages and --help name docs/*.md (e.g. docs/real-data.md); a wheel held only the
    modules and configs/*.flags, so an installed package's user had no such file (stop 56's
    left-alone note). package_data ships docs/ in the package's folder."""
    globs = _package_data()
    named = set()
    for folder, dirs, files in os.walk(REPO):
        dirs[:] = [d for d in dirs if d not in ('tests', 'bench', 'build', '.git', 'docs')]
        for name in files:
            if name.endswith('.py'):
                with open(os.path.join(folder, name), encoding='utf-8') as f:
                    named |= set(re.findall(r'docs/[\w.-]+\.md', f.read()))
    assert {'docs/real-data.md', 'docs/train-dir.md'} <= named
    pages = set(os.listdir(os.path.join(REPO, 'docs')))
    assert sorted(n for n in named if n[len('docs/'):] not in pages) == []
    shipped = {n for n in named if any(fnmatch.fnmatchcase(n, g) for g in globs)}
    assert sorted(named - shipped) == []
    # What the pages show ships too: their pictures.
    pictures = ['docs/img/' + n for n in os.listdir(os.path.join(REPO, 'docs', 'img'))] + [
        'docs/' + n for n in pages if n.endswith('.png')]
    assert pictures and [p for p in pictures
                         if not any(fnmatch.fnmatchcase(p, g) for g in globs)] == []
