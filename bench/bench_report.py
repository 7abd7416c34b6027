"""Writing a benchmark's results as committed data: `results/<date>-<cpu|gpu>-tf<X.Y>-<what>`.

One contract for every bench script: arguments in, a results file out. Its `main(argv)` parses
the arguments, measures, and ends in `finish` (`write_results`, then the exit status), which
writes two files into `results/` (the checkout's top folder; `--out`/`--out_dir` of a script
chooses another folder):

* `<stem>.json`: `{"what": ..., "provenance": {...}, "data": <the script's own result>}`;
* `<stem>.md`: the provenance as a short list, then the script's markdown table.

`stem` is `<UTC date>-<cpu or gpu>-tf<major.minor>-<what>`, e.g.
`2026-12-02-cpu-tf2.21-precision`: the format, naming and provenance (command, CPU and its
flags, load averages, TensorFlow version, git commit) are history/result_files.py's, shared
with `tf_cnn_sweep --publish`. `docs/performance.md` is generated from these files
(`python -m bench.make_performance_page`).
"""

from __future__ import annotations

import os
import shlex
import sys

from tf_cnn_benchmarks.history import result_files

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


def provenance(argv: list[str] | None = None) -> dict:
    """history/result_files.provenance for this script's command, device and checkout."""
    return result_files.provenance(command_line(argv), _device(), REPO, LOAD_AT_START)


def write_results(out_dir: str, what: str, data, markdown: str,
                  argv: list[str] | None = None, prov: dict | None = None) -> str:
    """Writes out_dir/<stem>.json and out_dir/<stem>.md (see the module docstring), prints the
    table and the paths; returns the stem's path (without extension).

    Args:
      out_dir: the folder (created when missing); normally RESULTS.
      what: what was measured, e.g. 'precision', 'roofline_resnet50_b16_bf16'.
      data: the script's result (anything json.dump writes).
      markdown: the script's table(s).
      argv: the command line to record (default sys.argv).
      prov: the provenance, when the script needed it (its stem) before writing; default
        `provenance(argv)` now.
    """
    stem = result_files.write(out_dir, what, data, markdown, prov or provenance(argv))
    print(markdown)
    print('wrote %s.json and %s.md' % (stem, stem))
    return stem


def finish(out_dir: str, what: str, data, markdown: str, status: int = 0) -> int:
    """The tail of every bench script's `main`: writes the results file pair
    (`write_results`: out_dir/<stem>.json and .md) and returns the exit status `status` (0
    unless the script says otherwise, e.g. 1 when a command it timed failed)."""
    write_results(out_dir, what, data, markdown)
    return status


def machine_meta(load_before: float) -> dict:
    """This host as a result's data records it: {'cpu': the CPU model, 'cpu_flags': its bf16
    flags ('amx_bf16 avx512_bf16', or 'no bf16 flags'), 'tensorflow': the version (None when
    TensorFlow is not loaded), 'load_before': `load_before`, the 1-minute load average when
    measuring started, 'load_after': the load average now}."""
    from tf_cnn_benchmarks.hardware import machine
    flags = sorted({'amx_bf16', 'avx512_bf16'} & set(machine.cpu_flags()))
    tf = sys.modules.get('tensorflow')
    return {'cpu': machine.cpu_model(), 'cpu_flags': ' '.join(flags) or 'no bf16 flags',
            'tensorflow': tf.__version__ if tf else None, 'load_before': load_before,
            'load_after': os.getloadavg()[0]}


def header_lines(headers: dict) -> list[str]:
    """'Header lines:' and one bullet per configuration: {name: the run header's lines (the
    first, the precision line's title, dropped)} -> '- name: line / line' ('(none)' without)."""
    return ['Header lines:', ''] + ['- %s: %s' % (k, ' / '.join(x.strip() for x in v[1:])
                                                  or '(none)') for k, v in headers.items()]
