"""An inference user's trial of --eval and --forward_only (lenet, batch 8, NHWC on the CPU):

1. --eval printed `Timed part: 14 more batches ... the first took 127 ms, set-up included`
   beside `latency ... over 15 batches after the first (set-up) batch` (16 batches: the
   first line counted those after the second), and no note that `total images/sec` keeps the
   set-up batch, where a forward-only run without warm-up gives the figure without it.
2. --num_eval_batches=3 --num_eval_epochs=2 silently scored 3 batches; the original refused.
3. A forward-only run's header said `Optimizer:   momentum` under three warnings that the
   optimizer flags had no effect; --fp16_loss_scale warned of nothing there.
4. The calibration before a forward-only bfloat16 run said it measured `... and their
   gradients`, which such a run never runs.
5. An evaluation on synthetic data (random labels) printed its accuracy like a real one and
   stored top-1/top-5 0.0 in the results database.
"""

from __future__ import annotations

import types

import pytest
import tensorflow as tf

from tf_cnn_benchmarks import benchmark_cnn, params, run_header
from tf_cnn_benchmarks.graph import precision
from tf_cnn_benchmarks.hardware import kernel_speed
from tf_cnn_benchmarks.history import records
from tf_cnn_benchmarks.lifecycle import eval_runner
from tf_cnn_benchmarks.metrics import latency
from tf_cnn_benchmarks.params import make_params
from tf_cnn_benchmarks.preflight import ineffective_flags, usage

import helpers


def _timed(times):
    """eval_runner.timed_batches over batches of `times` seconds (an injected clock), 8
    examples each: (its lines, batch_times, elapsed)."""
    now, it = [0.0], iter(times)

    def run_batch(index):
        now[0] += next(it)
        return [1, 2, 8]
    lines = []
    _, batch_times, elapsed = eval_runner.timed_batches(run_batch, len(times), log=lines.append,
                                                        clock=lambda: now[0])
    return lines, batch_times, elapsed


def test_the_timed_part_and_the_latency_line_count_the_same_batches():
    lines, batch_times, _ = _timed([0.127] + [0.0035] * 15)
    assert lines[0].startswith('Timed part: 15 batches after the first, about 52.5 ms '
                               '(3.50 ms the second batch; the first took 127 ms')
    lat = latency.latency_ms(batch_times, 8, first_sets_up=True)
    assert latency.format_latency(lat).endswith('over 15 batches after the first (set-up) batch')


def test_an_eval_says_its_figure_without_the_set_up_batch():
    _, batch_times, elapsed = _timed([0.127] + [0.0035] * 15)
    without = eval_runner._without_first(128, [8], batch_times, elapsed)
    assert without == pytest.approx(120 / (15 * 0.0035))  # 2285.71
    r = {'batch_times': batch_times, 'images_per_sec_without_first': without}
    assert eval_runner.set_up_note(r) == (
        "note: the first batch took 127 ms, 36x the others' median: its set-up (session, "
        "kernels, input) is in the total line's images/sec, as in the original (2285.71 "
        "without that batch)")
    # A first batch no slower than twice the others' median, or one batch: no note.
    _, even, elapsed = _timed([0.006] + [0.0035] * 15)
    assert eval_runner.set_up_note({'batch_times': even, 'images_per_sec_without_first':
                                    eval_runner._without_first(128, [8], even, elapsed)}) is None
    assert eval_runner._without_first(8, [8], [0.1], 0.1) is None


@pytest.mark.parametrize('flags, text', [
    (dict(eval=True, num_eval_batches=3, num_eval_epochs=2.0),
     '--num_eval_batches and --num_eval_epochs exclude each other; give one (batches, or epochs '
     'of the evaluated subset). Received: num_eval_batches=3, num_eval_epochs=2'),
    (dict(eval_during_training_every_n_steps=5, num_eval_batches=3, num_eval_epochs=0.5),
     '--num_eval_batches and --num_eval_epochs exclude each other'),
])
def test_the_evaluations_batches_and_epochs_exclude_each_other(flags, text):
    with pytest.raises(params.ParamsError, match='^%s' % text.replace('(', r'\(').replace(
            ')', r'\)')):
        usage.check_usage(make_params(**flags), command=False, paths=False)


def test_a_zero_of_the_pair_is_unset_and_a_run_without_evaluation_is_not_refused():
    p = usage.check_usage(make_params(eval=True, num_eval_batches=0, num_eval_epochs=2.0),
                          command=False, paths=False).params
    assert (p.num_eval_batches, p.num_eval_epochs) == (None, 2.0)
    p = usage.check_usage(make_params(eval=True, num_eval_batches=3, num_eval_epochs=0),
                          command=False, paths=False).params
    assert (p.num_eval_batches, p.num_eval_epochs) == (3, None)
    # As the original: only its modes that evaluate asked (here the flags only warn).
    usage.check_usage(make_params(num_eval_batches=3, num_eval_epochs=2.0), command=False,
                      paths=False)


def test_forward_only_loss_scale_flags_have_no_effect():
    p = make_params(forward_only=True, use_fp16=True, fp16_loss_scale=128.0)
    assert ('--fp16_loss_scale has no effect with --forward_only (the loss scale keeps float16 '
            'gradients from underflowing, and a run without a backward pass has none)'
            in ineffective_flags.ignored_flags(p, 'synthetic', frozenset({'fp16_loss_scale'})))
    p = make_params(use_fp16=True, fp16_loss_scale=128.0)  # training scales its loss: silent
    assert not [m for m in ineffective_flags.ignored_flags(p, 'synthetic',
                                                           frozenset({'fp16_loss_scale'}))
                if m.startswith('--fp16_loss_scale')]


def test_the_optimizer_line_of_a_forward_only_run_says_it_is_not_applied():
    plan = types.SimpleNamespace(training=False, params=make_params(forward_only=True))
    assert run_header.optimizer_phrase(plan) == (
        ', not applied (forward-only: no backward pass, no updates, no learning rate)')
    lines = helpers.tiny_bench(forward_only=True, optimizer='momentum',
                               init_learning_rate=0.5).info_lines()
    assert not [line for line in lines if line.startswith('LR schedule')]


def test_a_forward_only_runs_calibration_names_no_gradients(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(kernel_speed, '_MEMO', {})
    factors = {'conv': 0.8, 'conv_gradients': 0.9, 'matmul': 0.7, 'matmul_gradients': 0.9}
    for inference, tail in ((True, '32x1024x1024) (about 3 s)\n'),
                            (False, '32x1024x1024, and their gradients) (about 3 s)\n')):
        kernel_speed._MEMO.clear()
        got = kernel_speed.probe(
            tf.bfloat16, (2, 1), path=str(tmp_path / ('c%d.json' % inference)),
            shapes=kernel_speed.DEFAULT_SHAPES._replace(inference=inference),
            measure_fn=lambda *a: (factors, 0.01), cpu_model='Test CPU', tf_version='2.21.0',
            meter=helpers.FakeMeter(0.0))
        assert got.value == factors  # the same probe, the same record: only the words differ
        assert capsys.readouterr().out.endswith(tail)
    # A forward-only or eval plan's shapes are marked; a training plan's are not.
    monkeypatch.setattr(precision, 'cpu_flags', lambda path='/proc/cpuinfo': {'avx512_bf16'})
    for training in (False, True):
        plan = types.SimpleNamespace(
            compute_dtype=tf.bfloat16, params=types.SimpleNamespace(device='cpu', eval=False),
            model='lenet', dataset='imagenet', image_size=None, num_classes=1001,
            per_device_batch_size=8, eval=None, training=training)
        assert precision.probe_shapes(plan).inference is not training


def test_a_synthetic_evaluation_says_its_accuracy_means_nothing_and_stores_none(capsys):
    result = benchmark_cnn.BenchmarkCNN(make_params(
        model='trivial', batch_size=4, image_size=16, num_batches=2, num_warmup_batches=0,
        display_every=100, eval_during_training_at_specified_steps=['1', '2'],
        num_eval_batches=1), gpus=0).run()
    assert len(result['evals']) == 2 and result['eval']['synthetic'] is True
    lines = capsys.readouterr().out.splitlines()
    at = [i for i, line in enumerate(lines) if line.startswith('Accuracy @ 1 = ')]
    assert len(at) == 2 and lines[at[0] + 1] == eval_runner.SYNTHETIC_NOTE
    assert lines.count(eval_runner.SYNTHETIC_NOTE) == 1  # one note per run
    row = records.from_result(result)
    assert row['data'] == 'synthetic'
    assert (row['top_1_accuracy'], row['top_5_accuracy']) == (None, None)
    # Real data keeps its figures.
    real = dict(result, params=dict(result['params'], data_dir='/data', data_name='imagenet'),
                plan=None)
    assert records.from_result(real)['top_1_accuracy'] == result['eval']['top_1']
