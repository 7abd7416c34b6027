"""The original's lines of an evaluation: `N<TAB>X examples/sec` every --display_every batches
(--eval and evaluations during training), and around the evaluations of a training run
`Resuming training` and `Done with training` (the original's _eval_once and training loop)."""

import re

from tf_cnn_benchmarks.lifecycle import eval_runner

import helpers

PROGRESS = re.compile(r'^(\d+)\t(\d+\.\d) examples/sec$')


def test_progress_lines_every_display_every_batches_with_the_windows_rate():
    # A fake clock: batches of 0.5 s, 8 examples each but the last (3 scored, 5 padding).
    now = [0.0]

    def run_batch(index):
        now[0] += 0.5
        return [1, 2, 3 if index == 4 else 8]
    lines = []
    totals, times, _ = eval_runner.timed_batches(
        run_batch, 5, clock=lambda: now[0], display_every=2, progress=lines.append)
    # Batches 1-2 and 3-4: 16 examples in 1 s; batch 5 ends no window of 2.
    assert lines == ['2\t16.0 examples/sec', '4\t16.0 examples/sec']
    assert list(totals) == [5, 10, 35] and len(times) == 5
    lines.clear()
    eval_runner.timed_batches(run_batch, 5, clock=lambda: now[0], display_every=1,
                              progress=lines.append)
    assert lines[-1] == '5\t6.0 examples/sec'  # the padded batch: its 3 scored examples
    assert len(lines) == 5


def test_an_eval_run_prints_a_progress_line_every_display_every_batches(tmp_path, capsys):
    train_dir = str(tmp_path)
    helpers.tiny_run(num_batches=1, train_dir=train_dir)
    capsys.readouterr()
    result = helpers.tiny_run(eval=True, train_dir=train_dir, num_eval_batches=5,
                              display_every=2)
    lines = capsys.readouterr().out.splitlines()
    progress = [PROGRESS.match(line) for line in lines if PROGRESS.match(line)]
    assert [int(m.group(1)) for m in progress] == [2, 4]
    assert all(float(m.group(2)) > 0 for m in progress)
    running = lines.index('Running evaluation at global_step 1')
    accuracy = [i for i, line in enumerate(lines) if line.startswith('Accuracy @ 1 = ')][0]
    assert running < lines.index(progress[0].group(0)) < lines.index(progress[1].group(0)) \
        < accuracy
    assert result['eval']['num_batches'] == 5


def test_evaluations_during_training_print_the_originals_lines(capsys):
    result = helpers.tiny_run(num_batches=4, num_warmup_batches=1, display_every=2,
                              eval_during_training_every_n_steps=2, num_eval_batches=2)
    assert [e['global_step'] for e in result['evals']] == [2, 4, 5]
    lines = capsys.readouterr().out.splitlines()
    kept = [line for line in lines if line.startswith((
        'Running evaluation', 'Running final', 'Accuracy @ 1', 'eval images/sec', 'Resuming',
        'Done with', '----')) or PROGRESS.match(line) or re.match(r'^\d+\timages/sec', line)]
    shape = [re.sub(r'[\d.]+', '#', re.split(r' = | \+/-', line)[0]) for line in kept]
    assert shape == [
        '#\timages/sec: #',  # timed step 1
        'Running evaluation at global_step #', '#\t# examples/sec', 'Accuracy @ #',
        'eval images/sec: #', 'Resuming training',
        '#\timages/sec: #',  # timed step 2
        'Running evaluation at global_step #', '#\t# examples/sec', 'Accuracy @ #',
        'eval images/sec: #', 'Resuming training',
        '#\timages/sec: #',  # timed step 4
        'Done with training',
        'Running final evaluation at global_step #', '#\t# examples/sec', 'Accuracy @ #',
        'eval images/sec: #',
        '-' * 64, '-' * 64]  # the total block
    assert lines.count('Done with training') == 1
