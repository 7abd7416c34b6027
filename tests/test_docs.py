"""Docs that cannot rot: README.md and docs/ against today's code.

* every `tf_cnn_benchmarks`, `tf_cnn_sweep` and `tf_cnn_cluster` command line in README.md and
  docs/*.md (code blocks and inline code) parses with today's flags and passes the usage check
  (no TensorFlow, no run);
* the README's quick runs are bench/bench_quick_runs.py's, and each runs as written, made tiny
  by flags appended after it (later flags win): `tf_cnn_benchmarks` through the command's main
  in this process (its output and exit status), the launcher and the sweep as processes;
* every link between pages (README, docs/, results/README.md) resolves, anchors included;
* docs/performance.md, results/README.md and the generated tables of the README and
  docs/scaling.md are what `python -m bench.make_performance_page` writes from results/;
* the README stays short and keeps the two set-up commands .ci/run relies on.
"""

from __future__ import annotations

import ast
import glob
import os
import re
import shlex
import subprocess
import sys
import types

import pytest
from absl import flags

from tf_cnn_benchmarks import flag_parsing, params, run_header
from tf_cnn_benchmarks.hardware import links, machine
from tf_cnn_benchmarks.metrics import baseline
from tf_cnn_benchmarks.preflight import usage
from tf_cnn_benchmarks.tools import launch_cluster
from tf_cnn_benchmarks.tools.sweep import cli as sweep
from tf_cnn_benchmarks.tools.sweep import gate as sweep_gate

import checkout
import helpers

REPO = checkout.REPO
PAGES = [os.path.join(REPO, 'README.md')] + sorted(glob.glob(os.path.join(REPO, 'docs', '*.md')))
COMMANDS = ('tf_cnn_benchmarks', 'tf_cnn_sweep', 'tf_cnn_cluster')
_COMMAND = re.compile(r'(?:^|[\s;&(`])((?:%s) +[^`|;&#\s][^`|;&#]*)' % '|'.join(COMMANDS))
_FENCE = re.compile(r'^```')
_INLINE = re.compile(r'`([^`\n]+)`')


def _read(path: str) -> str:
    with open(path, encoding='utf-8') as f:
        return f.read()


def _logical_lines(block: list[str]) -> list[str]:
    """A code block's lines with backslash continuations joined."""
    out, pending = [], ''
    for line in block:
        if line.rstrip().endswith('\\'):
            pending += line.rstrip()[:-1] + ' '
            continue
        out.append(pending + line)
        pending = ''
    return out + ([pending] if pending else [])


def commands_in(text: str) -> list[str]:
    """Every command line of the three commands in a markdown text: in fenced code blocks but
    Python ones (a line's command up to a comment, pipe or `;`, continuations joined) and in
    inline code spans that start with the command. Lines with placeholders ('...') are left out."""
    found, block, fenced = [], [], False
    prose, python = [], False
    for line in text.splitlines():
        if _FENCE.match(line):
            if fenced and not python:  # a Python block names the package, runs no command
                for logical in _logical_lines(block):
                    found += [m.strip() for m in _COMMAND.findall(logical.split(' # ')[0])]
            block = []
            fenced, python = not fenced, line.strip() == '```python'
            continue
        (block if fenced else prose).append(line)
    for span in _INLINE.findall('\n'.join(prose)):
        words = span.split()
        # A command, not a name in a sentence (`tf_cnn_sweep compare` names the subcommand).
        if words[0] in COMMANDS and (len(words) > 2 or any(w.startswith('-') for w in words)):
            found.append(re.split(r' [|;&]', span)[0].strip())
    return [c for c in found if '...' not in c and '<' not in c]


def all_commands() -> list[tuple[str, str]]:
    return [(os.path.relpath(p, REPO), c) for p in PAGES for c in commands_in(_read(p))]


def test_the_extraction_finds_block_and_inline_commands():
    text = ('Run `tf_cnn_benchmarks --model=trivial | head -1` or `tf_cnn_sweep ... x`.\n'
            '```sh\n$ tf_cnn_benchmarks --model=a \\\n    --batch_size=2   # note\n'
            'srun -N2 tf_cnn_cluster --num_workers=2 -- --model=b\nnot tf_cnn_benchmarks.py\n'
            '```\n```python\nimport tf_cnn_benchmarks as tfcnn\n```\n')
    assert commands_in(text) == ['tf_cnn_benchmarks --model=a      --batch_size=2',
                                 'tf_cnn_cluster --num_workers=2 -- --model=b',
                                 'tf_cnn_benchmarks --model=trivial']


def test_the_pages_hold_many_commands_of_each_kind():
    kinds = [c.split()[0] for _, c in all_commands()]
    assert kinds.count('tf_cnn_benchmarks') >= 30
    assert kinds.count('tf_cnn_sweep') >= 8 and kinds.count('tf_cnn_cluster') >= 2


def _check_benchmark_args(args: list[str]) -> None:
    p = flag_parsing.parse_flags(['tf_cnn_benchmarks'] + args)
    usage.check_usage(p, resolve=False, paths=False)


def check_command(command: str, work_dir: str) -> None:
    """Raises (a ParamsError, SweepError, ...) when `command` does not parse or breaks a flag
    rule today."""
    # Shell values ($(date +%F), "$DB") stand for one word each.
    words = shlex.split(re.sub(r'\$\([^)]*\)|\$\w+', 'X', command))
    program, args = words[0], words[1:]
    if set(args) & {'--help', '--helpfull', '-h', '--version'}:
        return  # answered before any flag is parsed (cli.py, tools/sweep/cli.py)
    if program == 'tf_cnn_benchmarks':
        _check_benchmark_args(args)
    elif program == 'tf_cnn_cluster':
        opts, passthrough = launch_cluster.parse_args(args)
        tasks = launch_cluster.plan_tasks(opts, passthrough)
        assert tasks, command
        for task in tasks:  # each task's command line as the launcher starts it
            _check_benchmark_args(task['args'])
    elif args[:1] == ['compare']:
        paths, _ = sweep_gate.parse_args(args[1:])
        assert len(paths) == 2, command
    elif args[:1] == ['report']:
        assert len(args) == 2, command
    else:
        fv = flags.FlagValues()
        sweep.define_flags(fv)
        extra = []
        if '--' in args:
            extra = args[args.index('--') + 1:]
            args = args[:args.index('--')]
        rest = fv(['tf_cnn_sweep'] + args, known_only=True)
        if fv.sweep_file:  # the docs' example file, as the page describes it
            with open(os.path.join(work_dir, fv.sweep_file), 'w') as f:
                f.write('models: [resnet50, alexnet]\nbatch_sizes: [32, 64]\n'
                        'output_dir: runs/yaml\nflags: {num_batches: 100}\n')
        sweep.build_plan(fv, rest[1:] + extra)


@pytest.mark.parametrize('page,command', all_commands())
def test_every_documented_command_parses_with_todays_flags(page, command, tmp_path,
                                                           monkeypatch):
    monkeypatch.chdir(tmp_path)
    # A page's GPU command (--device=gpu) is for a GPU host: its flags are checked as there.
    monkeypatch.setattr(machine, 'nvidia_driver_evidence', lambda: '/proc/driver/nvidia/version')
    try:
        check_command(command, str(tmp_path))
    except (params.ParamsError, sweep.SweepError, launch_cluster.LaunchError,
            sweep_gate.UsageError, flags.Error) as e:
        pytest.fail('%s: `%s`: %s' % (page, command, e))


def test_a_scaling_plan_of_a_cluster_mode_needs_no_cluster(tmp_path):
    # docs/scaling.md's first example: a plan starts no task, so no cluster flags are needed.
    check_command('tf_cnn_benchmarks --plan_scaling --model=resnet50 --gpu_model=V100 '
                  '--variable_update=distributed_replicated', str(tmp_path))
    with pytest.raises(params.ParamsError, match='distributed_replicated needs a cluster'):
        check_command('tf_cnn_benchmarks --model=resnet50 '
                      '--variable_update=distributed_replicated', str(tmp_path))


def test_a_command_with_a_flag_of_no_such_name_is_caught(tmp_path):
    with pytest.raises(params.ParamsError, match="Unknown command line flag 'no_such_flag'"):
        check_command('tf_cnn_benchmarks --model=trivial --no_such_flag=1', str(tmp_path))
    with pytest.raises(sweep.SweepError):
        check_command('tf_cnn_sweep --output_dir=a --models=nosuchnet --batch_sizes=2',
                      str(tmp_path))


# ------------------------------------------------------------------------ the quick runs

_QUICK_BLOCK = re.compile(r'<!-- quick-runs:start[^>]*-->\n(.*?)<!-- quick-runs:end -->', re.S)
bench_quick_runs = checkout.load_bench('bench_quick_runs')
TINY = ['--batch_size=2', '--num_batches=2', '--num_warmup_batches=1', '--image_size=32',
        '--noresults_db']


def readme_quick_runs() -> list[str]:
    block = _QUICK_BLOCK.search(_read(os.path.join(REPO, 'README.md'))).group(1)
    return re.findall(r'^\| `([^`]+)` \|', block, re.M)


def test_the_readme_quick_runs_are_the_ones_bench_quick_runs_times():
    assert readme_quick_runs() == list(bench_quick_runs.QUICK_RUNS)


_ENTRY = 'tf_cnn_benchmarks.py'  # what checkout_argv runs for `tf_cnn_benchmarks`


def _tiny(command: str, work_dir: str) -> list[str]:
    argv = bench_quick_runs.checkout_argv(command, work_dir)
    if 'tools.sweep' in argv:  # the sweep sets --batch_size itself: the rest after its --
        return argv + ['--image_size=16', '--num_batches=2', '--num_warmup_batches=1']
    return argv + TINY


@pytest.mark.cli
@pytest.mark.parametrize('command', bench_quick_runs.QUICK_RUNS)
def test_each_quick_run_runs_as_written(command, tmp_path):
    argv = _tiny(command, str(tmp_path))
    if command.startswith('tf_cnn_benchmarks '):  # its output and exit status: main in process
        proc = helpers.run_command(*argv[argv.index(_ENTRY) + 1:])
    else:  # the launcher's and the sweep's tasks are processes of their own anyway
        proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=400)
    assert proc.returncode == 0, proc.stderr[-3000:]
    if command.startswith('tf_cnn_sweep'):
        # runs/ did not exist in the work folder: the sweep made the parents of --output_dir.
        assert os.path.isfile(tmp_path / 'runs' / 'quick' / 'report.md')
        assert "1 of 1" in proc.stderr or 'ok' in proc.stdout
    else:
        # One warm-up step (TINY), which also set up the executor: the line is a bound.
        assert re.search(r'^(\[\w+\] )?Timed part: 2 steps, at most ', proc.stdout, re.M), \
            proc.stdout[-3000:]
        assert bench_quick_runs.images_per_sec(proc.stdout) > 0


_MEASURED = re.compile(r'\b\d[\d,.]*\s*(?:s|secs?|seconds|min|minutes|hours?|images/sec)\b|'
                       r'\b(?:an?|half an|a quarter of an) hour\b')


def test_the_readme_quotes_figures_only_in_its_generated_blocks():
    """The README said the default run 'takes over an hour' at a rate that gave 30 minutes
    (issue 41.13): a measured duration or rate belongs to a generated block, from one results
    file with its conditions."""
    text = re.sub(r'<!-- (\S+):start.*?<!-- \1:end -->', '', _read(os.path.join(REPO,
                                                                                'README.md')),
                  flags=re.S)
    assert _MEASURED.findall(text) == []
    block = _QUICK_BLOCK.search(_read(os.path.join(REPO, 'README.md'))).group(1)
    # The conditions: the CPU (any: the bench runs on AMD and Intel hosts), TensorFlow, cores,
    # date and page cache.
    assert re.search(r'From \[results/[^]]+-quick-runs\.md\]\([^)]+\): [^,]+\([^)]+\), TF '
                     r'2\.\d+, \d+ cores, \d{4}-\d\d-\d\d; warm-cache times \(', block)


def test_quick_runs_say_their_page_cache():
    page = checkout.load_bench('make_performance_page')
    prov = {'cpu_model': 'AMD EPYC', 'cpu_flags': ['avx2'], 'tensorflow': '2.21.0',
            'cpu_cores': 2, 'date': '2026-12-09T10:00:00Z'}
    new = page.quick_conditions({'provenance': prov, 'data': {'rows': [], 'page_cache': 'warm'}})
    assert new == ('AMD EPYC (no bf16 units), TF 2.21, 2 cores, 2026-12-09; warm-cache times '
                   '(TensorFlow imported once before the first command): a first command after '
                   'a boot, which reads TensorFlow from disk, starts slower')
    old = page.quick_conditions({'provenance': prov, 'data': {'rows': []}})
    assert '(the commands ran one after another, TensorFlow\'s files in the page cache)' in old


# ------------------------------------------------------------------------ links

_LINK = re.compile(r'!?\[[^\]]*\]\(([^)\s]+)\)')


def slug(heading: str) -> str:
    """The anchor mkdocs' toc (and GitHub) give a heading: lower case, markup and punctuation
    dropped, spaces to dashes."""
    text = re.sub(r'[`*_]', '', heading.strip().lower())
    text = re.sub(r'[^\w\- ]', '', text)
    return re.sub(r'[\s]+', '-', text).strip('-')


def anchors(path: str) -> set[str]:
    text, fenced, found = _read(path), False, set()
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced and re.match(r'^#{1,6} ', line):
            found.add(slug(line.lstrip('#')))
    return found


def broken_links(path: str) -> list[str]:
    problems = []
    text = re.sub(r'```.*?```', '', _read(path), flags=re.S)
    for target in _LINK.findall(text):
        if re.match(r'^[a-z]+:', target):
            continue  # http(s), mailto: outside the project
        file_part, _, anchor = target.partition('#')
        goal = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part \
            else path
        if not os.path.exists(goal):
            problems.append('%s -> %s: no such file' % (os.path.relpath(path, REPO), target))
        elif anchor and goal.endswith('.md') and anchor not in anchors(goal):
            problems.append('%s -> %s: no heading with that anchor' % (
                os.path.relpath(path, REPO), target))
    return problems


def test_every_link_between_pages_resolves():
    pages = PAGES + [os.path.join(REPO, 'results', 'README.md')]
    assert [p for page in pages for p in broken_links(page)] == []


def test_a_broken_link_or_anchor_is_found(tmp_path):
    (tmp_path / 'a.md').write_text('# Top part\n[x](b.md) [y](a.md#top-part) [z](a.md#nowhere) '
                                   '[w](https://example.com/none)\n')
    assert broken_links(str(tmp_path / 'a.md')) == [
        '%s -> b.md: no such file' % os.path.relpath(tmp_path / 'a.md', REPO),
        '%s -> a.md#nowhere: no heading with that anchor' % os.path.relpath(tmp_path / 'a.md',
                                                                          REPO)]
    assert slug("The original's other flags") == 'the-originals-other-flags'


# ------------------------------------------------------------------------ generated pages

make_page = checkout.load_bench('make_performance_page')


def test_the_performance_page_and_figure_tables_are_what_the_generator_writes():
    for path, text in make_page.outputs(make_page.load_results()).items():
        assert _read(path) == text, ('%s is stale: run python -m bench.make_performance_page'
                                     % os.path.relpath(path, REPO))


def test_every_headline_figure_names_its_results_file():
    rows = make_page.headline_rows(make_page.load_results())
    assert rows, 'no headline figures'
    for row in rows:
        assert re.search(r'\]\(results/[0-9-]+-(cpu|gpu)-tf[0-9.]+-[a-z0-9-]+\.md\)', row[-1])


def test_a_headline_ratio_pairs_two_files_of_one_host_and_day_and_says_how_far_apart():
    """A figure from two results files (bf16 / fp32) says under which conditions: the two runs'
    gap and load averages; files of another host (its CPU flags) or day are not paired."""
    def row(precision, date, flags=('avx2',), ours=1.0, load=2.0):
        prov = {'cpu_model': 'AMD EPYC', 'cpu_flags': list(flags), 'cpu_cores': 2,
                'tensorflow': '2.21.0', 'date': date, 'load_average_before': load}
        return {'model': 'resnet50', 'batch': 16, 'image': 224, 'mode': 'training',
                'precision': precision, 'ours': ours, 'prov': prov, 'stem': precision + date}
    fp32 = row('fp32', '2026-12-09T10:00:00Z', ours=2.0)
    pairs = make_page.bf16_ratios([fp32, row('bf16', '2026-12-09T10:03:00Z', load=3.5),
                                   row('bf16', '2026-12-09T11:00:00Z', flags=('avx512_bf16',)),
                                   row('bf16', '2026-12-10T10:00:00Z')])
    assert [(p['ratio'], p['minutes_apart'], p['prov']['load_average_before']) for p in pairs] \
        == [(2.0, 3.0, 3.5)]
    for figure in [r[0] for r in make_page.headline_rows(make_page.load_results())
                   if r[-1].count('](results/') == 2]:
        assert re.search(r'\(the two runs \d+ min apart, load average [\d.]+ and [\d.]+\)$',
                         figure), figure


def test_the_results_files_are_named_by_what_they_measured():
    names = [os.path.basename(p) for p in glob.glob(os.path.join(REPO, 'results', '*.json'))]
    assert names
    bad = [n for n in names if not re.match(
        r'^\d{4}-\d{2}-\d{2}-(cpu|gpu)-tf\d+\.\d+-[a-z0-9][a-z0-9.-]*\.json$', n)]
    assert bad == []
    for name in names:
        assert os.path.isfile(os.path.join(REPO, 'results', name[:-5] + '.md')), name


# ------------------------------------------------------------------------ quoted output

def _pages_text() -> dict[str, str]:
    """{page name: its text with every run of whitespace one space} (a quote spans lines)."""
    return {os.path.relpath(p, REPO): ' '.join(_read(p).split()) for p in PAGES}


def _gate_verdicts() -> dict[tuple, set]:
    """{the first three words after a gate line's verdict: the verdicts the program gives
    them}, from the format strings of `tf_cnn_results regressions` and `tf_cnn_sweep compare`
    (adjacent literals are one constant in the syntax tree)."""
    found = {}
    for module in ('tools/results_cli.py', 'tools/sweep/gate.py'):
        for node in ast.walk(ast.parse(_read(os.path.join(REPO, module)))):
            text = node.value if isinstance(node, ast.Constant) else ''
            text = text if isinstance(text, str) else ''
            m = re.match(r'gate: (FAILED|NOT JUDGED|passed): ([^%]*)', text)
            words = tuple(re.findall(r'[a-z]+', m.group(2)))[:3] if m else ()
            if len(words) == 3:
                found.setdefault(words, set()).add(m.group(1))
    return found


def test_every_gate_line_the_docs_quote_has_the_verdict_the_program_gives():
    # results-database.md said an all-left-out gate printed 'gate: FAILED: no series was
    # searched'; the program says 'gate: NOT JUDGED: no series was searched' (exit 3).
    verdicts = _gate_verdicts()
    assert verdicts[('no', 'series', 'was')] == {'NOT JUDGED'}
    wrong = []
    for page, text in _pages_text().items():
        for m in re.finditer(r'gate: (FAILED|NOT JUDGED|passed): ([^`]*)', text):
            words = tuple(re.findall(r'[a-z]+', m.group(2)))[:3]
            if words in verdicts and m.group(1) not in verdicts[words]:
                wrong.append('%s: %s' % (page, m.group(0)[:80]))
    assert wrong == []


def test_the_baseline_example_of_too_few_steps_is_what_the_gate_prints():
    # docs/campaigns.md: 2 steps against 40 spread evenly over +-20% of 100 images/sec.
    quoted = re.search(r'`\.\.\.: (same, but NOT JUDGED: with 2 steps here against 40 .*?)`',
                       _pages_text()['docs/campaigns.md']).group(1)
    spread = [80.0 + 40.0 * i / 39 for i in range(40)]
    stored = {'images_per_sec': 100.0,
              'steps': [{'step': i + 1, 'images_per_sec': r} for i, r in enumerate(spread)]}
    c = baseline.compare(stored, [100.5, 99.5], 100.0, 5.0)
    assert baseline.format_line(c).endswith('): ' + quoted)
    assert baseline.exit_status(c) == 3


def test_the_gpu_interconnect_values_are_one_list_in_help_error_and_docs():
    # The docs told users to run --gpu_interconnect=nvlink1_link_copy, which --help, the
    # unknown-value error and the flag table left out; --help left out pcie2.
    names = links.gpu_link_names()
    assert {'pcie2', 'nvlink', 'nvlink1_link_copy', 'pcie3_copy', 'dgx1_v100'} <= set(names)
    for name in names:
        links.check_plan_flags(params.make_params(plan_scaling=True, gpu_interconnect=name))

    def listed(text: str) -> list[str]:
        """The link and host names in `text`, each once, in order."""
        looks = re.compile(r'(pcie|nvlink|dgx|hgx|ec2|gce|lambda)\w*(\.\w+)?$')
        words = re.findall(r'[\w.]+', text)
        return list(dict.fromkeys(w.rstrip('.') for w in words if looks.match(w.rstrip('.'))))

    help_text = params.SPEC_BY_NAME['gpu_interconnect'].help.split(' Default:')[0]
    with pytest.raises(params.ParamsError) as e:
        links.check_plan_flags(params.make_params(plan_scaling=True, gpu_interconnect='pcie9'))
    error = str(e.value).split('give ', 1)[1]
    row = re.search(r'^\| `--gpu_interconnect=L` \| the GPU-to-GPU link: (.*?) \(a host preset',
                    _read(os.path.join(REPO, 'docs', 'scaling.md')), re.M).group(1)
    for where, text in (('--help', help_text), ('the error', error), ('scaling.md', row)):
        assert listed(text) == names, where


def test_a_non_utf8_train_dir_is_quoted_as_the_usage_check_refuses_it():
    # output.md quoted a message of preflight/output_paths.py that the flag-value check
    # (params/text_values.py) keeps from ever being printed.
    with pytest.raises(params.ParamsError) as e:
        usage.check_usage(flag_parsing.parse_flags(['tf_cnn_benchmarks', '--train_dir=td\udcff']),
                          resolve=False, paths=True)
    head = str(e.value).split('): ')[0] + ')'
    assert head == "--train_dir is not UTF-8 text (received: b'td\\xff')"
    assert '`error: %s' % head in _pages_text()['docs/output.md']


def test_a_shortened_device_list_is_shown_as_the_header_prints_it():
    # usage-and-flags.md showed '(16 devices)' on the Devices: line; it is on the next line.
    found = 0
    for path in PAGES:
        lines = _read(path).splitlines()
        for i, line in enumerate(lines):
            m = re.match(r"Devices: +\['/cpu:0', .*'/cpu:(\d+)'\]$", line)
            if not m or '...' not in line:
                continue
            plan = types.SimpleNamespace(  # a CPU run's plan as run_header reads it
                devices=['/cpu:%d' % k for k in range(int(m.group(1)) + 1)],
                params=types.SimpleNamespace(device='cpu'), visible_gpus=[])
            printed = (['Devices:     ' + run_header.describe_devices(plan.devices)]
                       + run_header.device_notes(plan))
            assert lines[i:i + len(printed)] == printed, path
            found += 1
        assert not re.search(r"'/cpu:\d+'\] \(\d+ devices\)", ' '.join(lines)), path
    assert found


def test_the_usage_page_quotes_no_quick_run_figure():
    # usage-and-flags.md quoted 34.7 s and 4.5 s from the 2026-12-05 file as 'the README's
    # quick runs' when the README's table was the 2026-12-06 file's: it points at them.
    text = _read(os.path.join(REPO, 'docs', 'usage-and-flags.md'))
    calling = text.split('## Calling it')[1].split('Every run says after its')[0]
    assert _MEASURED.findall(calling) == []
    assert not re.search(r'results/\d{4}-\d\d-\d\d-[\w.-]*quick-runs', calling)
    assert "README's quick-runs table" in calling


# ------------------------------------------------------------------------ the front door

def test_the_readme_is_short_and_starts_with_the_two_set_up_commands():
    text = _read(os.path.join(REPO, 'README.md'))
    assert len(text.splitlines()) <= 250
    first = text.split('\n## ')[1]
    assert first.startswith('Quick start')
    assert ('pip install -e . && tf_cnn_benchmarks --model=resnet50 --batch_size=16 '
            '--num_batches=10') in first
    assert "pip install -e '.[test]' && python -m pytest -q -n 2 tests" in first
    assert 'python -m pytest -q -n 2 tests' in _read(os.path.join(REPO, '.ci', 'run'))


def test_the_suite_loads_no_timing_plugin(pytestconfig):
    """pytest-benchmark, where installed, warned 'Benchmarks are automatically disabled because
    xdist plugin is active' once per worker of `-n 2`: noise in every run of a suite that
    times nothing (pyproject.toml leaves the plugin out; the README's Tests section says so)."""
    assert not pytestconfig.pluginmanager.has_plugin('benchmark')
    readme = _read(os.path.join(REPO, 'README.md')).split('\n## Tests')[1]
    # The suite's time is CONTRIBUTING's, measured (the README said 'about ten minutes' when
    # it took 13): the README links to it and quotes none.
    assert '[its time on 2 cores](docs/CONTRIBUTING.md#tests)' in readme
    assert re.search(r'On 2 cores it takes about \d+ minutes: [\d,]+ s',
                     _read(os.path.join(REPO, 'docs', 'CONTRIBUTING.md')))
    assert 'tests/test_gpu_model.py::test_no_row_beyond_35_percent' in readme


def test_the_site_builds_strictly_with_no_warning(tmp_path):
    # mkdocs is in the test extra; the site goes to a temporary folder, never the checkout.
    proc = subprocess.run([sys.executable, '-m', 'mkdocs', 'build', '--strict', '--site-dir',
                           str(tmp_path / 'site')], cwd=REPO, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert [line for line in proc.stderr.splitlines() if not line.startswith('INFO')] == []
    assert os.path.isfile(tmp_path / 'site' / 'performance' / 'index.html')


def test_every_docs_page_is_in_the_site_nav():
    nav = _read(os.path.join(REPO, 'mkdocs.yml'))
    pages = [os.path.basename(p) for p in glob.glob(os.path.join(REPO, 'docs', '*.md'))]
    assert [p for p in pages if ': %s' % p not in nav] == []


if __name__ == '__main__':
    sys.exit(pytest.main([__file__]))


def test_the_docs_model_counts_are_the_catalogs():
    """The prose counts of the models ('lists the 38 models this project builds (36 names:
    ...') are what --list_models counts (model_catalog.count_text), on every page that quotes
    them, so a new model cannot leave them stale."""
    from tf_cnn_benchmarks.models import model_catalog
    rows = model_catalog.ROWS
    names = {row[0] for row in rows}
    quoted = []
    for page in PAGES:
        text = ' '.join(_read(page).split())
        quoted += [(os.path.relpath(page, REPO), int(m.group(1)), int(m.group(2)))
                   for m in re.finditer(r'\b(\d+) models [^()]{0,40}\((\d+) names\b', text)]
    stale = [q for q in quoted if q[1:] != (len(rows), len(names))]
    assert stale == [], (
        '%s: --list_models counts %s; update the prose (docs/CONTRIBUTING.md, "A model")'
        % (stale, model_catalog.count_text()))
    assert 'docs/usage-and-flags.md' in {page for page, _, _ in quoted}
