"""How many of the project's functions a trivial CPU run calls before its first timed step.

    python -m bench.bench_first_step

Runs the command in this process (`cli.main`) with `--model=trivial --device=cpu
--num_batches=2 --num_warmup_batches=1` under `sys.setprofile`, and counts the distinct
project functions (code objects of the checkout's own modules, bench/ and tests/ left out;
module bodies and class bodies are not functions) that were called before the run's
`before_timed` phase: the count ends at the call that starts it (PhaseRunner.before_timed), and
a hook of this script removes the profile function. Lambdas, generator
expressions and comprehensions are functions to Python: they are counted too, and listed apart
in the data. The count is the same on every host (no timing): it measures how many places a
reader follows from the command to the first timed step (issue 38's target: at most 180).

The result: results/<date>-cpu-tf<X.Y>-first-step-functions.json and .md (bench/bench_report.py),
with the functions by file. The results database of the run goes into a temporary folder
($XDG_DATA_HOME), so the measurement leaves nothing behind.
"""

from __future__ import annotations

import collections
import inspect
import os
import sys
import tempfile

from . import bench_report
from .preamble import REPO, RESULTS, ArgumentParser, start

FLAGS = ['--model=trivial', '--device=cpu', '--num_batches=2', '--num_warmup_batches=1']
LEFT_OUT = ('bench' + os.sep, 'tests' + os.sep)
#: Where the count ends: the call that starts the run's before_timed phase (every hook's
#: before_timed, e.g. the host-load check of the warm-up, is in the phase, not before it; what
#: they do depends on the host's load, and the count must not).
STOP_AT, STOP_FILE = 'PhaseRunner.before_timed', os.path.join('lifecycle', 'phase_runner.py')


def _project_file(filename: str) -> str | None:
    """The path of `filename` inside the checkout (None outside it, or in bench/ or tests/)."""
    if filename.startswith('<'):  # '<frozen os>', '<string>': no file of the checkout
        return None
    path = os.path.abspath(filename)
    if not path.startswith(REPO + os.sep):
        return None
    rel = os.path.relpath(path, REPO)
    return None if rel.startswith(LEFT_OUT) else rel


class Counter:
    """A sys.setprofile function that records each project function called, once."""

    def __init__(self):
        self.seen: dict[tuple[str, int, str], None] = {}
        self.stopped = False
        self._files: dict[str, str | None] = {}

    def __call__(self, frame, event, arg):
        if event != 'call' or self.stopped:
            return
        code = frame.f_code
        if code.co_qualname == STOP_AT and code.co_filename.endswith(STOP_FILE):
            self.stopped = True  # the before_timed phase starts: its hooks are not counted
            return
        if not code.co_flags & inspect.CO_OPTIMIZED:  # a module or class body
            return
        rel = self._files.get(code.co_filename, '?')
        if rel == '?':
            rel = self._files[code.co_filename] = _project_file(code.co_filename)
        if rel is not None:
            self.seen.setdefault((rel, code.co_firstlineno, code.co_qualname), None)


def count(argv: list[str]) -> tuple[int, list[tuple[str, int, str]]]:
    """(the command's exit status, the project functions called before the first timed step,
    in the order first called)."""
    from tf_cnn_benchmarks import cli
    from tf_cnn_benchmarks.lifecycle import run_hooks

    counter = Counter()

    class StopCounting(run_hooks.RunHook):
        def before_timed(self):
            sys.setprofile(None)

    sys.setprofile(counter)
    try:
        status = cli.main(['tf_cnn_benchmarks'] + argv, hooks=[StopCounting()])
    finally:
        sys.setprofile(None)
    return status, list(counter.seen)


def main(argv=None) -> int:
    parser = ArgumentParser(prog='bench_first_step', description=__doc__.split('\n')[0])
    parser.add_argument('--out_dir', default=RESULTS, help='folder of the results file pair')
    args = parser.parse_args(argv)
    start()
    with tempfile.TemporaryDirectory() as data_home:
        os.environ['XDG_DATA_HOME'] = data_home  # the run's results database
        os.environ.pop('TF_CNN_RESULTS_DB', None)  # ... not the one the user named
        status, functions = count(FLAGS)
    by_file = collections.Counter(rel for rel, _, _ in functions)
    anonymous = [f for f in functions if '<' in f[2]]
    data = {'flags': FLAGS, 'status': status, 'functions': len(functions),
            'files': len(by_file), 'anonymous': len(anonymous),
            'by_file': dict(by_file.most_common()),
            'called': ['%s:%d:%s' % f for f in functions]}
    rows = [[rel, str(n)] for rel, n in by_file.most_common()]
    markdown = '\n\n'.join([
        'tf_cnn_benchmarks %s: %d project functions in %d files before the first timed step '
        '(%d of them lambdas, comprehensions or generator expressions); exit status %d.'
        % (' '.join(FLAGS), len(functions), len(by_file), len(anonymous), status),
        bench_report.markdown_table(['file', 'functions'], 'lr', rows)])
    return bench_report.finish(args.out_dir, 'first-step-functions', data, markdown, status)


if __name__ == '__main__':
    sys.exit(main())
