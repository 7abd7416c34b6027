"""`grep 'total images/sec' LOG | awk '{print $3}'` reads one figure, as with the original.

Users' scripts read a run's figure so, LOG often holding stdout and stderr together
(`2>&1 | tee LOG`); docs/output.md promises it reads what it read with the original. Before,
a run without warm-up steps printed `note: ... the set-up is in total images/sec (4.46
without that step) ...`, and the pipeline printed `first` before the figure; the busy-host
warning, the between-steps line and the chief's `cluster total images/sec` matched too. Now
only the total line holds those words; the others name "the total line's images/sec" or
"cluster images/sec". With --num_warmup_batches=0 the original still prints `Running warm up`
and `Done warm up` (scripts wait for the second), and so does this run.
"""

from __future__ import annotations

import re
import time
import types

from tf_cnn_benchmarks.cluster import figures
from tf_cnn_benchmarks.lifecycle import phase_runner, run_hooks, training_loop
from tf_cnn_benchmarks.metrics import host_load
from tf_cnn_benchmarks.tools import launch_cluster

import helpers

PHRASE = 'total images/sec'


def _awk3(line: str) -> str:
    """What `awk '{print $3}'` prints of `line`."""
    fields = line.split()
    return fields[2] if len(fields) > 2 else ''


def _inject(monkeypatch) -> None:
    """A slow first timed step (100 s more on the loop's clock), 1 s of hooks after every
    timed step (the between-steps line) and a busy host over every interval, whatever this
    host's speed and load: the loop's clock is offset, the samples /proc gave replaced."""
    offset = [0.0]
    clock = types.SimpleNamespace(perf_counter=lambda: time.perf_counter() + offset[0])
    monkeypatch.setattr(training_loop, 'time', clock)
    run_step, after_step = phase_runner.PhaseRunner.run_step, phase_runner.PhaseRunner.after_step

    def slow_first(self, step_fn, call, step_clock):
        out = run_step(self, step_fn, call, step_clock)
        if call == 1:  # the first timed step: no warm-up step before it
            offset[0] += 100.0
        return out

    def slow_hooks(self, step, loss, step_secs=0.0):
        after_step(self, step, loss, step_secs)
        offset[0] += 1.0

    monkeypatch.setattr(phase_runner.PhaseRunner, 'run_step', slow_first)
    monkeypatch.setattr(phase_runner.PhaseRunner, 'after_step', slow_hooks)
    measure = host_load.measure

    def busy(start, end, cores, num_cpus, ticks_per_sec, *args, **kwargs):
        # Over 10 s, others used 90% of the run's cores; no steal.
        ticks = int(0.9 * cores * 10 * ticks_per_sec)
        return measure(host_load.Sample(0.0, 3.0, 0, 0, 0),
                       host_load.Sample(10.0, 3.0, ticks, 0, 0), cores, num_cpus,
                       ticks_per_sec, *args, **kwargs)

    monkeypatch.setattr(host_load, 'measure', busy)
    monkeypatch.setenv(host_load.WARNING_ENV, '1')


def test_a_run_without_warm_up_has_one_total_line_in_its_combined_output(
        monkeypatch, tmp_path, capfd):
    _inject(monkeypatch)
    done = helpers.run_command(
        '--model=trivial', '--batch_size=2', '--image_size=16', '--num_classes=10',
        '--num_batches=3', '--num_warmup_batches=0', '--display_every=1',
        '--train_dir=%s' % tmp_path, '--save_summaries_steps=1', '--summary_verbosity=1',
        '--noresults_db')
    fd = capfd.readouterr()
    assert done.returncode == 0, done.stderr[-3000:]
    lines = (done.stdout + done.stderr + fd.out + fd.err).splitlines()
    # The lines that used to match are there, and name the figure without the phrase.
    note = [line for line in lines if line.startswith('note: the first timed step took')]
    assert len(note) == 1 and "the set-up is in the total line's images/sec (" in note[0]
    between = [line for line in lines if 'between steps went to checkpoints' in line]
    assert len(between) == 1 and between[0].endswith("(not counted in the total line's "
                                                     "images/sec)"), between
    busy = [line for line in lines if 'representative' in line]
    assert any(line.startswith("warning: the total line's images/sec is not representative "
                               "of this host: other processes used") for line in busy), busy
    # grep 'total images/sec' LOG | awk '{print $3}': one line, the figure.
    matched = [line for line in lines if PHRASE in line]
    assert len(matched) == 1, matched
    assert matched[0].startswith('total images/sec: ')
    assert float(_awk3(matched[0])) > 0
    # As the original: both warm-up lines, then the step lines.
    assert lines.index('Running warm up') + 1 == lines.index('Done warm up')
    assert lines.index('Done warm up') < lines.index('Step\tImg/sec\ttotal_loss')


def test_the_chiefs_cluster_lines_do_not_say_total_images_per_sec():
    stats = [figures.WorkerStats(task=t, steps=30, images=60, secs=1.6, images_per_sec=37.5,
                                 wall_start=100.0 + t, wall_end=101.6 + t) for t in (0, 1)]
    lines, keys = figures.report(stats, training_loop.NOTHING_TIMED)
    assert not [line for line in lines if PHRASE in line], lines
    assert lines[-1].startswith('cluster images/sec: %.2f (2 workers: 120 images in '
                                % keys['cluster_images_per_sec'])
    stats[1] = stats[1]._replace(steps=0, images=0)
    lines, _ = figures.report(stats, training_loop.NOTHING_TIMED)
    assert lines[-1].startswith('no cluster images/sec: worker 1 timed no step (')
    assert not [line for line in lines if PHRASE in line], lines


def test_the_launcher_reads_the_chiefs_line_in_the_new_and_the_old_form():
    for line in ('cluster images/sec: 7.05 (2 workers: 120 images in 17.02 s, ...)',
                 'cluster total images/sec: 7.05 (2 workers: 120 images in 17.02 s, ...)',
                 'cluster images/sec: 7.05 (2 workers, one graph)'):
        assert float(launch_cluster._CLUSTER_TOTAL.match(line).group(1)) == 7.05
    assert launch_cluster._CLUSTER_TOTAL.match('total images/sec: 7.05') is None
    assert launch_cluster._TOTAL.match('cluster images/sec: 7.05') is None


def test_the_loops_own_lines_say_the_phrase_only_on_the_total_line():
    lines = []
    result = training_loop.run_loop(
        training_loop.LoopSpec(num_warmup=0, num_steps=3, images_per_step=4, display_every=1),
        lambda: (1.0,), log=lines.append)
    assert result.num_steps == 3
    assert [line for line in lines if PHRASE in line] == [
        'total images/sec: %.2f' % result.images_per_sec]
    assert re.match(r'^total images/sec: [0-9.]+$', lines[-2])


def test_what_the_warm_ups_end_prints_stays_above_the_step_table():
    # A cron user's 2>&1 log had the busy-host warning (printed as the timed part begins,
    # lifecycle/figure_hooks.py) between the `Step` header and step 1, inside the table a
    # `sed -n '/^Step/,/^---/p'` reads.
    lines = []

    class _Warns(run_hooks.RunHook):
        def before_timed(self):
            lines.append('warning: the host is busy as the run starts')

    losses = iter([7.0] * 4)
    training_loop.run_loop(training_loop.LoopSpec(num_warmup=2, num_steps=2, images_per_step=4,
                                                  display_every=1),
                           lambda: (next(losses),), [_Warns()], log=lines.append)
    header = lines.index('Step\tImg/sec\ttotal_loss')
    assert lines.index('warning: the host is busy as the run starts') == header - 1
    assert lines[header + 1].startswith('1\timages/sec: ')
