"""The pages as a reader walks them (README.md and docs/*.md; tests/test_docs.py checks their
commands, links and generated tables):

* a sentence that says what a flag does and ends in ':' is followed by commands that use it;
* every docs page is linked from docs/index.md and from the README's table of the manual;
* sources a page cites are files of the repository, not of the machine it was written on.
"""

from __future__ import annotations

import os
import re

import test_docs

import checkout

REPO = checkout.REPO
PAGES = test_docs.PAGES


def _read(path: str) -> str:
    with open(path, encoding='utf-8') as f:
        return f.read()


def introduced_blocks(text: str) -> list[tuple[str, str]]:
    """(the last sentence of the paragraph before a fenced block, the block) for each fenced
    block whose paragraph ends in ':'."""
    found = []
    for match in re.finditer(r'((?:^[^\n`][^\n]*\n)+)\n?```[a-z]*\n(.*?)^```', text,
                             re.MULTILINE | re.DOTALL):
        paragraph = ' '.join(match.group(1).split())
        if paragraph.endswith(':'):
            found.append((re.split(r'(?<=[.;)])\s+(?=[`A-Z])', paragraph)[-1], match.group(2)))
    return found


def flag_sentence_problems(text: str) -> list[str]:
    """Sentences that start with a flag (`--dry_run` plans ...:) whose block's commands do not
    all use that flag."""
    problems = []
    for sentence, block in introduced_blocks(text):
        flag = re.match(r'`(--\w+)', sentence)
        commands = test_docs.commands_in('```\n%s```\n' % block)
        if flag and commands:
            problems += ['%s -> %s' % (sentence, c) for c in commands
                         if not re.search(r'%s\b' % flag.group(1), c)]
    return problems


def test_a_flags_sentence_is_followed_by_commands_that_use_it():
    # Before: "`--dry_run` plans a GPU run on any machine:" was followed by a GPU run without
    # --dry_run (the README's quick start).
    assert [(os.path.relpath(p, REPO), problem) for p in PAGES
            for problem in flag_sentence_problems(_read(p))] == []


def test_a_command_without_the_flag_its_sentence_names_is_found():
    text = ('Install it. `--dry_run` plans a GPU run on any machine:\n\n```sh\n'
            'pip install x && tf_cnn_benchmarks --model=resnet50 --device=gpu\n```\n\n'
            'Then `--dry_run` checks it:\n```sh\ntf_cnn_benchmarks --model=a --dry_run\n```\n')
    assert flag_sentence_problems(text) == [
        '`--dry_run` plans a GPU run on any machine: -> '
        'tf_cnn_benchmarks --model=resnet50 --device=gpu']
