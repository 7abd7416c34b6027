"""The pages as a reader walks them (README.md and docs/*.md; tests/test_docs.py checks their
commands, links and generated tables):

* a sentence that says what a flag does and ends in ':' is followed by commands that use it;
* every docs page is linked from docs/index.md and from the README's table of the manual;
* sources a page cites are files of the repository, not of the machine it was written on.
"""

from __future__ import annotations

import os
import re

import pytest
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


# ------------------------------------------------------------ the header lines the pages quote

def quoted_choice_lines(text: str) -> list[str]:
    """The header's graph-choices lines a page quotes: inline code spans (over line breaks) and
    code-block lines that start with 'graph choices', whitespace collapsed."""
    spans = [' '.join(s.split()) for s in re.findall(r'`([^`]+)`', text)]
    blocks = [line.strip() for block in re.findall(r'^```[a-z]*\n(.*?)^```', text,
                                                   re.MULTILINE | re.DOTALL)
              for line in block.splitlines()]
    return [q for q in spans + blocks
            if q.startswith('graph choices') and not q.startswith('graph choices ...')]


def _pattern(line: str, rest: str = '') -> str:
    """A printed line as a pattern: its figures (digits) any figures, then `rest`."""
    return re.sub(r'\d+', r'\\d+', re.escape(line)) + rest


def printed_choice_patterns(note: str) -> list[str]:
    """Patterns of the graph-choices lines the code prints (`note`: its not-calibrated line):
    the note, a forced list, the measured count (with or without its counts by choice) and the
    title of --print_graph_choices's table (its rows after it)."""
    from tf_cnn_benchmarks.graph import graph_choices
    from tf_cnn_benchmarks.models import fast_paths
    site = fast_paths.Conv1x1(16, 14, 14, 1024, 256, 1, 'NHWC', 'float32')
    measured = graph_choices.Choices('measured', {(site, 'matmul'): 0.6}, 'measured here')
    forced = graph_choices.Choices(frozenset({'conv1x1_matmul'}), {}, '')
    count = graph_choices.brief(measured, width=1000)[0]
    head = count.split(' (')[0]
    title = graph_choices.table(measured)[0]
    counted = forced._replace(forced_sites={'conv1x1_matmul': 1}, places={site: 1})
    return [_pattern(note), _pattern(graph_choices.brief(forced)[0]),
            _pattern(head, r'( \((\w+ \d+)(, \w+ \d+)*\))?'), _pattern(title, '( .*)?'),
            _pattern(graph_choices.table(counted)[0])]


def test_the_graph_choices_lines_the_pages_quote_are_printed(monkeypatch, calibration_record):
    # Before: speed-and-precision.md quoted `graph choices: none calibrated here for this step:
    # today's graph (...)`, a line the code no longer printed.
    from tf_cnn_benchmarks.graph import graph_choices

    import helpers
    monkeypatch.setattr(graph_choices, 'measure', lambda *a, **k: pytest.fail('the probe ran'))
    bench = helpers.tiny_bench(model='resnet50', image_size=32, batch_size=3, num_batches=1)
    note = graph_choices.brief(graph_choices.resolve(bench.plan, bench.model))[0]
    assert note.startswith('graph choices: none (not calibrated')
    patterns = printed_choice_patterns(note)
    quotes = [(os.path.relpath(p, REPO), q) for p in PAGES for q in quoted_choice_lines(_read(p))]
    assert len(quotes) >= 6
    assert [(p, q) for p, q in quotes if not any(re.fullmatch(x, q) for x in patterns)] == []
    old = ("graph choices: none calibrated here for this step: today's graph (add --calibrate to "
           "this command: 44 s)")
    assert not any(re.fullmatch(x, old) for x in patterns)


# ------------------------------------------------------------ figures and the files they cite

def test_the_usage_pages_run_times_are_its_quick_runs_files():
    # Before: "takes about a minute" for the resnet50 line the quick-runs file timed at 34.7 s,
    # and the two-tower line (trivial: seconds) called long; then the page copied the 34.7 s
    # of an older file while the README's table had moved on (30.9 s): it now points at the
    # README's table and the newest results file, and quotes no wall time of its own.
    text = _read(os.path.join(REPO, 'docs', 'usage-and-flags.md'))
    paragraph = text.split('## Calling it')[1].split('```\n\n')[1].split('\n\n')[0]
    assert "The README's quick-runs table times" in paragraph
    assert '`results/<date>-cpu-tf<X.Y>-quick-runs.md`' in paragraph
    assert re.findall(r'(?:took|`) (\d+(?:\.\d+)?) s\b', paragraph) == []
    assert 'long on\na 2-core CPU' not in text and "replicated` line runs the default" in text


#: Paths the pages cite in another project's repository (named beside them).
_OTHER_REPOSITORIES = ('tensorflow/docs_src/',)


def missing_cited_files(path: str) -> list[str]:
    """The file paths a page cites in code spans (`graph/precision.py`,
    `../results/x.md`) that are neither under the repository's root nor beside the page."""
    found = []
    for span in re.findall(r'`([^`\s]+)`', _read(path)):
        if (re.fullmatch(r'[\w./-]+\.(md|py|json)', span) and '/' in span
                and not span.startswith(_OTHER_REPOSITORIES)):
            targets = [os.path.normpath(os.path.join(base, span))
                       for base in (REPO, os.path.dirname(path))]
            if not any(t.startswith(REPO + os.sep) and os.path.exists(t) for t in targets):
                found.append(span)
    return found


def test_every_file_a_page_cites_is_in_the_repository():
    # Before: docs/speed-choices.md cited `../shared/measurements/README.md` for the AMX host's
    # figures, a file of the machine it was written on, not of the repository.
    assert [(os.path.relpath(p, REPO), f) for p in PAGES for f in missing_cited_files(p)] == []


def test_a_file_outside_the_repository_is_found(tmp_path):
    page = tmp_path / 'page.md'  # the file exists on this machine, beside the checkout
    page.write_text('As in `../shared/measurements/README.md` and `graph/precision.py`.\n')
    assert missing_cited_files(str(page)) == ['../shared/measurements/README.md']


def test_the_readme_quick_runs_round_as_their_results_file():
    # Before: the README's table said `4 s` where its results file said 4.5 s ('%.0f' rounds
    # half to even) and 35 s for 34.7 s.
    readme = _read(os.path.join(REPO, 'README.md'))
    block = readme.split('<!-- quick-runs:start')[1].split('<!-- quick-runs:end')[0]
    cited = re.findall(r'\((results/[\w.-]+-quick-runs\.md)\)', block)
    rows = {r.split('|')[1].strip(): r.split('|')[2].strip() for r in block.splitlines()
            if r.startswith('| `')}
    recorded = {r.split('|')[1].strip(): r.split('|')[2].strip() + ' s'
                for r in _read(os.path.join(REPO, cited[0])).splitlines() if r.startswith('| `')}
    assert rows and rows == recorded


def test_the_regression_demo_is_linked_and_described_as_it_came_out():
    # Before: the README pointed "a sweep run twice and slowed the second time, found at its
    # first slowed run" at a docs section without one; the demo (results/) was linked from no
    # page, and one of its two slowed series was not found.
    import json
    stem = 'results/2026-12-03-cpu-tf2.21-regression-demo'
    series = json.loads(_read(os.path.join(REPO, stem + '.json')))['data']['series']
    readme = _read(os.path.join(REPO, 'README.md'))
    assert '](%s.md)' % stem in readme
    database = _read(os.path.join(REPO, 'docs', 'results-database.md'))
    assert '`%s.md`' % stem in database
    for page in (readme, database):
        text = ' '.join(page.split())
        for s in series:
            if not s['slowing']:
                continue
            said = re.search(r'`%s`[^,.]*?\(([^)]*)\)[^,.]*? (was found|was not found)'
                             % s['name'], text)
            assert said, s['name']
            assert said.group(2) == ('was found' if s['steps_down'] else 'was not found')


# ------------------------------------------------------------------------ finding the pages

def test_every_docs_page_is_linked_from_the_index_and_the_readmes_table():
    # Before: docs/index.md linked neither estimate-vs-reality.md, speed-choices.md nor
    # train-dir.md, and the README's table of the manual lacked the last two.
    pages = sorted(os.path.basename(p) for p in PAGES[1:]
                   if os.path.basename(p) not in ('index.md',))
    index = _read(os.path.join(REPO, 'docs', 'index.md'))
    readme = _read(os.path.join(REPO, 'README.md'))
    table = [line for line in readme.splitlines() if line.startswith('| [')]
    assert [p for p in pages if '](%s)' % p not in index] == []
    assert [p for p in pages if not any('](docs/%s)' % p in row for row in table)] == []


def test_every_timeout_example_keeps_the_runs_exit_status():
    # Before: training-lifecycle.md offered `timeout -s INT 20 tf_cnn_benchmarks ...`, which
    # exits 124 (timeout's own status), not the run's 130 that the pages tell scripts to read.
    uses = [(os.path.relpath(p, REPO), m) for p in PAGES
            for m in re.findall(r'\btimeout (?:-[^`\n]*?)?tf_cnn_\w+', ' '.join(_read(p).split()))]
    assert uses and [(p, m) for p, m in uses if '--preserve-status' not in m] == []


def test_the_scaling_pages_compute_without_a_figure_is_what_the_command_uses():
    # It said 't_c = batch x 3 x forward FLOPs / (50% x the data-sheet peak)' after the plan
    # had moved to the per-op model (step_time.compute_from_gpu_model).
    import inspect

    from tf_cnn_benchmarks.speed_model import from_flags
    text = _read(os.path.join(REPO, 'docs', 'scaling.md'))
    paragraph = next(p for p in text.split('\n\n') if p.startswith('**Compute** comes'))
    without = paragraph[paragraph.index('Without a figure'):]
    assert 'speed_model/gpu_step.py' in without and '50%' not in without, without
    source = inspect.getsource(from_flags)
    assert 'compute_from_gpu_model' in source and 'compute_from_peak' not in source
    assert 'utilisation is a stated assumption' not in text
