"""The package's shape: no import cycles, nothing shadowed, each module loaded once, the layout
docs/CONTRIBUTING.md describes."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(REPO, 'tests')
NOT_PACKAGE = ('tests', 'bench', 'build', 'examples', '.git')


def _package_modules() -> dict[str, str]:
    """{dotted module name inside the package ('' for __init__): file path}."""
    modules = {}
    for folder, dirs, files in os.walk(REPO):
        rel = os.path.relpath(folder, REPO)
        if rel != '.' and rel.split(os.sep)[0] in NOT_PACKAGE:
            dirs[:] = []
            continue
        dirs[:] = [d for d in dirs if d not in NOT_PACKAGE and not d.startswith('.')
                   and os.path.exists(os.path.join(folder, d, '__init__.py'))]
        package = '' if rel == '.' else rel.replace(os.sep, '.')
        for name in files:
            if not name.endswith('.py') or name == 'setup.py':
                continue
            stem = name[:-3]
            if stem == '__init__':
                modules[package] = os.path.join(folder, name)
            else:
                modules[(package + '.' if package else '') + stem] = os.path.join(folder, name)
    return modules


def _imports(module: str, path: str, known: set[str]) -> set[str]:
    """The package modules `module` imports anywhere in its file (function-local imports
    included), as dotted names inside the package."""
    is_package = os.path.basename(path) == '__init__.py'
    package = module if is_package else module.rpartition('.')[0]
    found = set()
    for node in ast.walk(ast.parse(open(path, encoding='utf-8').read())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split('.') if package else []
                base = base[:len(base) - (node.level - 1)] if node.level > 1 else base
                prefix = '.'.join(base + ([node.module] if node.module else []))
            elif node.module and node.module.split('.')[0] == 'tf_cnn_benchmarks':
                prefix = node.module[len('tf_cnn_benchmarks'):].lstrip('.')
            else:
                continue
            for alias in node.names:
                candidate = (prefix + '.' if prefix else '') + alias.name
                found.add(candidate if candidate in known else prefix)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split('.')[0] == 'tf_cnn_benchmarks':
                    found.add(alias.name[len('tf_cnn_benchmarks'):].lstrip('.'))
    return {m for m in found if m in known and m != module}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component of more than one module (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                component.append(other)
                if other == node:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return out


def test_the_module_import_graph_has_no_cycles():
    modules = _package_modules()
    known = set(modules)
    graph = {m: _imports(m, path, known) for m, path in modules.items()}
    # The walk sees the project: the layers import each other as docs/CONTRIBUTING.md says.
    assert {'run_plan', 'benchmark_cnn'} <= graph['cli'] | graph['benchmark_cnn'] | {
        'benchmark_cnn'}
    assert 'cluster.topology' in graph['preflight.settled_run']  # BenchmarkCNN's settled run
    assert 'lifecycle.checkpoints' in graph['cluster.server']
    cycles = _cycles(graph)
    assert cycles == [], (
        'import cycles %s: a module imports only its own layer and those below it '
        '(docs/CONTRIBUTING.md, the layers after "## Layout"); break each by passing the value '
        'in from the higher module (an argument, not an import), or by moving the shared part '
        'into a module both import' % cycles)


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': {'a'}}) == [['a', 'b', 'c']]


# The layers of docs/CONTRIBUTING.md, top to bottom (test_the_documented_layers_are_layers
# compares them): a module may import its own layer and those below it, never one above
# (function-local imports included). A module is placed by the longest entry that names it or
# its package.
LAYERS = [
    ('entry', ['tf_cnn_benchmarks', '', '__main__', 'cli', 'console', 'flag_parsing', 'tools']),
    ('orchestration', ['benchmark_cnn', 'run_header']),
    ('preflight', ['preflight']),
    ('cluster', ['cluster']),
    ('lifecycle', ['lifecycle']),
    ('history', ['history']),
    ('metrics', ['metrics']),
    ('speed_model', ['speed_model']),
    ('graph', ['graph']),
    ('blocks', ['preprocessing', 'variable_mgr', 'variable_managers', 'models', 'input_data']),
    ('runtime', ['runtime']),
    ('hardware', ['hardware']),
    ('plan', ['run_plan']),
    ('params', ['params', 'variable_managers.allreduce_spec']),
    # metrics/host_load.py reads /proc and imports nothing of the project: hardware's
    # calibration record (hardware/calibration.py) measures the load with it.
    ('util', ['cnn_util', 'package_info', 'metrics.host_load', 'metrics.cluster_tasks']),
]


def _documented_layers() -> list[tuple[str, list[str]]]:
    """The layer list of docs/CONTRIBUTING.md (the code block after "The layers, top to
    bottom") as LAYERS' entries: `cli.py` -> 'cli', `tools/` -> 'tools', `__init__.py` -> '',
    `metrics/host_load.py` -> 'metrics.host_load'; parenthesised remarks left out."""
    import re
    text = open(os.path.join(REPO, 'docs', 'CONTRIBUTING.md'), encoding='utf-8').read()
    block = text[text.index('The layers, top to bottom'):]
    block = block[block.index('```\n') + 4:]
    block = block[:block.index('```')]
    layers = []
    for line in block.splitlines():
        name, _, rest = line.partition(' ')
        entries = re.split(r',|\band\b', re.sub(r'\([^)]*\)', '', rest))
        layers.append((name, [e.strip().rstrip('/').removesuffix('.py').replace('/', '.')
                              .replace('__init__', '') for e in entries if e.strip()]))
    return layers


def test_the_documented_layers_are_layers():
    """docs/CONTRIBUTING.md's layer list is LAYERS, layer by layer, entry by entry."""
    documented = _documented_layers()
    assert [name for name, _ in documented] == [name for name, _ in LAYERS]
    for (name, entries), (_, ours) in zip(documented, LAYERS, strict=True):
        assert sorted(entries) == sorted(ours), (
            'layer %s: docs/CONTRIBUTING.md lists %s, LAYERS in tests/test_architecture.py %s; '
            'make them the same' % (name, sorted(entries), sorted(ours)))


def _layer_of(module: str, layers=LAYERS) -> int | None:
    """Index in `layers` of the longest entry naming `module` or a package above it."""
    best, best_len = None, -1
    for index, (_, names) in enumerate(layers):
        for name in names:
            if (module == name or (name and module.startswith(name + '.'))) \
                    and len(name) > best_len:
                best, best_len = index, len(name)
    return best


def _upward_imports(graph: dict[str, set[str]], layers=LAYERS) -> list[str]:
    """'a -> b (layer x imports layer y above it)' for each import that points up."""
    out = []
    for module in sorted(graph):
        here = _layer_of(module, layers)
        for other in sorted(graph[module]):
            there = _layer_of(other, layers)
            if here is not None and there is not None and there < here:
                out.append('%s -> %s (%s imports %s above it)'
                           % (module, other, layers[here][0], layers[there][0]))
    return out


def test_every_import_points_down_the_layers():
    modules = _package_modules()
    graph = {m: _imports(m, path, set(modules)) for m, path in modules.items()}
    unplaced = sorted(m for m in modules if _layer_of(m) is None)
    assert unplaced == [], (
        'modules in no layer of LAYERS: %s; place each in LAYERS (tests/test_architecture.py) '
        'and in the layer list of docs/CONTRIBUTING.md ("## Layout")' % unplaced)
    upward = _upward_imports(graph)
    assert upward == [], (
        'imports that point up the layers: %s; a module imports its own layer and those below '
        'it (docs/CONTRIBUTING.md, "## Layout"): pass the value in from the higher layer (its '
        'caller gives it as an argument) instead of importing it' % '; '.join(upward))


def test_the_layer_check_finds_an_upward_import_inside_a_function(tmp_path):
    low = tmp_path / 'low.py'
    low.write_text('import os\n\n\ndef f():\n    from .high import g\n    return g\n')
    found = _imports('low', str(low), {'low', 'high'})
    assert found == {'high'}
    layers = [('top', ['high']), ('bottom', ['low'])]
    assert _upward_imports({'low': found, 'high': set()}, layers) == [
        'low -> high (bottom imports top above it)']
    assert _upward_imports({'high': {'low'}, 'low': set()}, layers) == []


def test_the_layout_has_one_package_per_concern():
    packages = sorted(d for d in os.listdir(REPO)
                      if os.path.isfile(os.path.join(REPO, d, '__init__.py')))
    assert packages == ['cluster', 'graph', 'hardware', 'history', 'input_data', 'lifecycle',
                        'metrics', 'models', 'params', 'preflight', 'runtime', 'speed_model',
                        'tools', 'variable_managers']
    top = sorted(f[:-3] for f in os.listdir(REPO) if f.endswith('.py'))
    assert top == ['__init__', '__main__', 'benchmark_cnn',
                   'cli', 'cnn_util', 'console', 'flag_parsing', 'package_info', 'preprocessing',
                   'run_header', 'run_plan', 'setup', 'tf_cnn_benchmarks', 'variable_mgr']
    # The layout table lives in docs/CONTRIBUTING.md (the README links to it).
    layout = open(os.path.join(REPO, 'docs', 'CONTRIBUTING.md'), encoding='utf-8').read()
    for name in packages + [t for t in top if t not in ('__init__', 'setup')]:
        assert '`%s' % name in layout, (
            '%s is not in the layout table of docs/CONTRIBUTING.md ("## Layout"): give it a '
            'row' % name)


def _layout_rows() -> dict[str, str]:
    """{'graph/': its row, 'cli.py': its row, ...} of docs/CONTRIBUTING.md's layout table."""
    text = open(os.path.join(REPO, 'docs', 'CONTRIBUTING.md'), encoding='utf-8').read()
    start = text.index('## Layout')
    layout = text[start:text.index('\n## ', start)]
    rows = {}
    for line in layout.splitlines():
        if line.startswith('| `'):
            rows[line[3:line.index('`', 3)]] = line
    return rows


def test_the_layout_table_names_every_module():
    """Each package's row of the layout table names every module the package holds (in
    sub-packages too), as `name.py`."""
    rows = _layout_rows()
    missing = []
    for package in sorted(d for d in os.listdir(REPO)
                          if os.path.isfile(os.path.join(REPO, d, '__init__.py'))):
        row = rows.get(package + '/', '')
        for folder, dirs, files in os.walk(os.path.join(REPO, package)):
            dirs[:] = [d for d in dirs if not d.startswith(('.', '__'))]
            missing += [os.path.relpath(os.path.join(folder, name), REPO)
                        for name in sorted(files) if name.endswith('.py')
                        and name != '__init__.py' and '`%s`' % name not in row]
    assert missing == [], (
        '%s: name each, as `name.py` with what it holds, in its package\'s row of the layout '
        'table of docs/CONTRIBUTING.md ("## Layout")' % missing)


# Names of .py files the docs may give that are not the project's: others' files, examples.
_NOT_OURS = {'absl/flags/_flagvalues.py',  # params/flagfile_lines.py: absl's source
             'module.py',  # preflight/gpu_kernels.py: the shape of an origin
             'conv1x1_filter_gradient_vs_matmul.py', 'elementwise_standalone.py'}  # dated
# scratch scripts of attempts docs/performance-notes.md records


def test_docs_and_docstrings_name_only_files_that_exist():
    """A `something.py` named in the README, docs/ or the package's modules exists: a path with
    a folder at that path (from the checkout, or beside the naming file), a bare name as some
    file of the checkout. Catches references left behind by a move."""
    import re
    found, names = set(), set()
    texts = [os.path.join(REPO, 'README.md')] + [
        os.path.join(REPO, 'docs', f) for f in os.listdir(os.path.join(REPO, 'docs'))
        if f.endswith('.md')]
    for folder, dirs, files in os.walk(REPO):
        dirs[:] = [d for d in dirs if not d.startswith('.') and d not in ('results', 'build')]
        for name in files:
            path = os.path.join(folder, name)
            found.add(os.path.relpath(path, REPO))
            names.add(name)
            if name.endswith('.py') and os.path.relpath(folder, REPO).split(os.sep)[0] \
                    not in ('tests', 'bench', 'build'):
                texts.append(path)
    pattern = re.compile(r'(?<![\w./<>-])((?:\w+/)*\w+\.py)\b')
    stale = []
    for path in texts:
        text = open(path, encoding='utf-8').read()
        for m in pattern.finditer(text):
            name = m.group(1)
            beside = os.path.relpath(os.path.join(os.path.dirname(path), name), REPO)
            exists = (name in found or beside in found) if '/' in name else name in names
            ok = exists or name in _NOT_OURS
            if not ok:
                stale.append('%s:%d %s' % (os.path.relpath(path, REPO),
                                           text.count('\n', 0, m.start()) + 1, name))
    assert stale == []


def test_each_package_docstring_names_every_module_it_holds():
    """A package's docstring says what it holds: a module it does not name is either
    undocumented or in the wrong package."""
    missing = {}
    for package in sorted(d for d in os.listdir(REPO)
                          if os.path.isfile(os.path.join(REPO, d, '__init__.py'))):
        folder = os.path.join(REPO, package)
        with open(os.path.join(folder, '__init__.py'), encoding='utf-8') as f:
            doc = ast.get_docstring(ast.parse(f.read())) or ''
        unnamed = sorted(name for name in os.listdir(folder)
                         if name.endswith('.py') and name != '__init__.py'
                         and name not in doc)
        if unnamed:
            missing[package] = unnamed
    assert missing == {}, (
        '%s: name each module, with what it holds, in its package\'s docstring (%s)' % (
            missing, ', '.join('%s/__init__.py' % package for package in missing)))


_SHADOW_SCRIPT = textwrap.dedent('''
    import json, sys
    sys.path.insert(0, {tests!r})
    import checkout
    checkout.load()
    import tf_cnn_benchmarks as tfcnn
    from tf_cnn_benchmarks import params
    from tf_cnn_benchmarks.lifecycle import signals as our_signals
    result = tfcnn.run(tfcnn.make_params(model='trivial', batch_size=2, image_size=16,
                                         num_batches=1, num_warmup_batches=0),
                       print_header=False)
    import distributed, signals
    import importlib
    print('RESULT ' + json.dumps({{
        'users_modules': [distributed.MARK, signals.MARK],
        'ours_distinct': our_signals is not signals,
        'generic_names': sorted(n for n in ('params', 'models', 'tools', 'cnn_util', 'tower',
                                           'preprocessing', 'checkpoints', 'topology')
                                if n in sys.modules),
        'same_params': importlib.import_module('tf_cnn_benchmarks.params') is params,
        'same_error': tfcnn.ParamsError is params.ParamsError,
        'steps': result['num_steps'],
        'path_unchanged': [p for p in sys.path if p.rstrip('/') == {repo!r}],
    }}))
''')


def test_the_package_shadows_nothing_and_loads_each_module_once(tmp_path):
    for name in ('distributed', 'signals'):
        (tmp_path / (name + '.py')).write_text('MARK = "users %s"\n' % name)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL='3', PYTHONPATH=str(tmp_path))
    proc = subprocess.run([sys.executable, '-c', _SHADOW_SCRIPT.format(tests=TESTS, repo=REPO)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
    lines = [x for x in proc.stdout.splitlines() if x.startswith('RESULT ')]
    assert proc.returncode == 0 and lines, proc.stderr[-3000:]
    import json
    out = json.loads(lines[0][len('RESULT '):])
    assert out == {'users_modules': ['users distributed', 'users signals'], 'ours_distinct': True,
                   'generic_names': [], 'same_params': True, 'same_error': True, 'steps': 1,
                   'path_unchanged': []}


@pytest.mark.cli
def test_import_from_a_checkout_gives_the_package():
    """In the checkout, `import tf_cnn_benchmarks` finds the entry script first; it hands over
    to the package, so the library API is there and nothing generic is importable by it."""
    # The package's names load on first use (console.py's Ctrl-C handler comes before them).
    script = ('import sys, tf_cnn_benchmarks as t; '
              'print(t.__name__, list(t.__path__), callable(t.run), '
              '"tf_cnn_benchmarks.params" in sys.modules, callable(t.make_params), '
              '"tf_cnn_benchmarks.params" in sys.modules, "params" in sys.modules)')
    proc = subprocess.run([sys.executable, '-c', script], cwd=REPO, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ['tf_cnn_benchmarks', '[%r]' % REPO, 'True', 'False', 'True',
                                   'True', 'False']
