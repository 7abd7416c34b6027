"""The regression search in small, on real runs of the trivial model: a flat series and a
series slowed in its second half, recorded by the runs themselves into a fresh results
database; `tf_cnn_results regressions` finds the step at the first slowed run and names the
changed flag, leaves the flat series alone, and `--fail_on_regression` exits 1; `html` lists
the step. The full-size demonstration, with `tf_cnn_sweep` and the page in Chromium, is
bench/bench_regression_demo.py (its figures: results/*-regression-demo.md).

How the runs are made, so that the test holds on a loaded 2-core CI host under `pytest -n 2`
within a minute (figures from the 2-core development host, a KVM guest with an AMD EPYC, at
load averages of 5-12 from other people's jobs):

* One process makes every run (the library's `run()`, each run recording itself through the
  hook a command's run records with), not a process per run as in a sweep: a fresh process
  spends 7-13 s importing TensorFlow there, and the test makes 24 runs. A process's first
  runs are slower (images/sec rose over its first 4-5 runs), so 4 unrecorded runs go first.
* The slowing is `--print_step_breakdown --display_every=1` on the CIFAR-10 trivial model,
  not the issue's `--num_intra_threads=1`. In one process TensorFlow makes its intra-op
  pool once, at the first session, so that flag could not take effect; and what it takes
  away is the second core, which the other worker holds much of the time: -30% on the idle
  host (runtime/cpu_tuning.py), far less on a busy one. A full trace of every step, and its
  breakdown, costs a fixed amount per step (a few ms, by the op) whatever the host's free
  cores, on a step of under a millisecond: images/sec 0.20-0.41 of the untraced series' in
  9 trials, against 0.5-0.75 for `--optimizer=adam` on the ImageNet-size model (whose
  4.2M-parameter update it slows). Both flags are reporting flags, outside a configuration
  (history/records.py CONFIG_FIELDS) and ignored by --baseline too, so the series stays one
  and `regressions` names them.
* Every run has one intra-op and one inter-op thread (it needs one core of the two), no
  graph choices probe, and 400 timed steps (0.3-1 s untraced, 1-3 s traced).
* Flat and slowed runs alternate, so a drift of the host's speed reaches both alike, with 5
  runs a side (a split in the middle then counts with one run out of order) and
  --min_change=45: the traced step (-59% to -83% in 10 trials) passes it, while the flat
  series would need the median of its second half 45% below its first's: a drift of the
  host's speed by 1.8x between the halves. The other pytest worker, whose processes share
  the two cores with this run's one thread, can take half of its core at most when it runs
  a three-process cluster test. Other people's jobs can do more: on the development host
  one trial saw images/sec rise 4.5x within the minute (load average 10 falling to 5) and
  the traced runs at the end as fast as the untraced at the start. With runs spread
  lognormally around steady means, simulated: log sd 0.15 (untraced runs here at load 4-5:
  0.1-0.2), the flat series flagged in 0.09% of trials and a step to 0.3x missed in under
  0.01%; log sd 0.25 (load 6-12: 0.2-0.6), 1.7% and 2.6%.

It runs with `-m slow`, not in the README's test command: it times real runs, so its verdicts
follow the host's speed. On 2026-12-05 a new user ran the test command while a second copy of
the suite ran beside it (an Intel Xeon with AMX, 2 cores): the flat series fell from about
36,000 to 8,000-23,000 images/sec within the minute and was rightly flagged as a step down.
The default run tests both verdicts on runs with recorded loads and figures
(tests/test_clean_runs.py: a step behind two busy full-speed runs found at the first slowed
run; a flat series with three busy runs not flagged); bench/bench_clean_verdicts.py repeats
them on real runs (results/*-clean-verdicts.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tf_cnn_benchmarks.history import store
from tf_cnn_benchmarks.tools import results_cli

TESTS = os.path.dirname(os.path.abspath(__file__))
PER_SIDE = 5  # runs before and after the change, per series
MIN_CHANGE_PCT = 45
FLAT_BATCH, SLOWED_BATCH = 8, 16
COMMON = {'model': 'trivial', 'data_name': 'cifar10', 'device': 'cpu', 'num_batches': 400,
          'num_intra_threads': 1, 'num_inter_threads': 1, 'graph_choices': 'off'}
SLOWING = {'print_step_breakdown': True, 'display_every': 1}
CHANGED = '--display_every 10 -> 1; --print_step_breakdown False -> True'
WARMUP_RUNS = 4

_RUNS = textwrap.dedent('''
    import contextlib, io, json, sys
    sys.path.insert(0, {tests!r})
    import checkout
    tfcnn = checkout.load()
    db, per_side, common = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
    flat, slowed, slowing = int(sys.argv[4]), int(sys.argv[5]), json.loads(sys.argv[6])
    warmup = int(sys.argv[7])
    def run(**flags):
        with contextlib.redirect_stdout(io.StringIO()):
            tfcnn.run(tfcnn.make_params(**dict(common, **flags)), print_header=False)
    for i in range(warmup):  # unrecorded: a process's first runs are slower
        run(batch_size=(flat, slowed)[i % 2], results_db=False)
    for i in range(2 * per_side):
        label = 'sweep-%d' % (1 + i // per_side)
        for batch, extra in ((flat, {{}}), (slowed, slowing if i >= per_side else {{}})):
            run(batch_size=batch, results_db=db, label=label, **extra)
''')


def _results(capsys, *args):
    # The runs share the two cores with the other pytest worker, so most record a busy host:
    # the search keeps them (issue 39.4 leaves such runs out by default;
    # tests/test_clean_runs.py tests that).
    status = results_cli.main(['tf_cnn_results'] + list(args) + ['--include_unclean_runs'])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.slow  # its verdicts follow the host's speed: see the module's last paragraph
@pytest.mark.cli
def test_real_runs_slowed_in_their_second_half_are_found_at_the_first_slowed_run(tmp_path,
                                                                               capsys):
    db = str(tmp_path / 'results.sqlite')
    proc = subprocess.run(
        [sys.executable, '-c', _RUNS.format(tests=TESTS), db, str(PER_SIDE), json.dumps(COMMON),
         str(FLAT_BATCH), str(SLOWED_BATCH), json.dumps(SLOWING), str(WARMUP_RUNS)],
        capture_output=True, text=True, timeout=600, cwd=str(tmp_path),
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL='3'))
    assert proc.returncode == 0, proc.stderr[-3000:]
    with store.opened(db, create=False) as conn:
        rows = store.select_runs(conn)
    flat = [r for r in rows if r['batch_size'] == FLAT_BATCH]
    slowed = [r for r in rows if r['batch_size'] == SLOWED_BATCH]
    assert len(flat) == len(slowed) == 2 * PER_SIDE
    figures = 'images/sec: flat %s; slowed %s' % tuple(
        ', '.join('%.0f' % r['images_per_sec'] for r in s) for s in (flat, slowed))
    first = slowed[PER_SIDE]
    change = '--min_change=%g' % MIN_CHANGE_PCT

    status, out, err = _results(capsys, 'regressions', '--results_db=' + db, change)
    assert status == 0 and err == ''
    assert out.count('REGRESSION: ') == 1, figures + '\n' + out
    assert 'REGRESSION: trivial fp32 training bs=%d ' % SLOWED_BATCH in out, figures + out
    assert '  first slower run: #%d %s (label: sweep-2)\n' % (
        first['id'], first['run_utc'][:19].replace('T', ' ')) in out, figures + '\n' + out
    assert '  what changed: %s\n' % CHANGED in out, out

    status, out, _ = _results(capsys, 'regressions', '--results_db=' + db, change,
                              '--fail_on_regression')
    assert status == 1 and out.rstrip().endswith(
        'gate: FAILED: 1 regression still slower by more than %g%%' % MIN_CHANGE_PCT), out
    status, out, _ = _results(capsys, 'regressions', '--results_db=' + db, change,
                              '--batch_size=%d' % FLAT_BATCH, '--fail_on_regression')
    assert status == 0 and 'REGRESSION' not in out and out.rstrip().endswith('gate: passed'), (
        figures + '\n' + out)

    status, out, _ = _results(capsys, 'html', str(tmp_path / 'site'), '--results_db=' + db,
                              change)
    page = (tmp_path / 'site' / 'index.html').read_text(encoding='utf-8')
    assert status == 0 and '1 step down found.' in page
    assert page.count('src="data:image/png;base64,') == 2  # one plot per series
    assert '<td>%s</td>' % CHANGED.replace('>', '&gt;') in page
