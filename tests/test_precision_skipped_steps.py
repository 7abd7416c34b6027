"""Automatic loss scaling's skipped steps are counted and said (lifecycle/precision_report.py):
a `loss scale:` line after `total images/sec` and result['loss_scale']. A scale of 2**24
overflows the first float16 gradients of any loss near 1 (the gradient of the cross entropy
at the logits, up to 1 / batch, times 2**24 is past float16's 65504), so the count does not
depend on this host."""

from tf_cnn_benchmarks.lifecycle import precision_report

from helpers import tiny_bench, tiny_run

AUTO = dict(use_fp16=True, fp16_enable_auto_loss_scale=True, fp16_loss_scale=2.0 ** 24)


def test_skipped_steps_are_counted_in_the_result_and_the_total_block(capsys):
    result = tiny_run(num_batches=3, num_warmup_batches=1, **AUTO)
    figures = result['loss_scale']
    # Every step overflows until the scale is 2**24 / 2**k < 65504 * batch: none here.
    assert figures == {'skipped_steps': 3, 'timed_steps': 3, 'warmup_skipped_steps': 1,
                       'initial': 2.0 ** 24, 'final': 2.0 ** 20}
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith('loss scale:'))
    assert line == ('loss scale: 3 of 3 timed steps skipped, 1 of the warm-up steps '
                    '(non-finite gradients: their updates were not applied; images/sec counts '
                    'them as steps), 1048576 now (started at 16777216)')
    assert len(set(result['losses'])) == 1  # nothing was applied


def test_skipped_steps_count_in_the_images_seen_as_the_docstring_says(tmp_path):
    """A user's finding (nu_optim57 5): images_seen's description said it counted the images
    the updates applied, but skipped steps count (as the global step, the original's epoch
    count, does): every step here is skipped, and the checkpoint's count is every step's."""
    import tensorflow as tf

    from tf_cnn_benchmarks.graph import images_seen

    result = tiny_run(num_batches=3, num_warmup_batches=1, train_dir=str(tmp_path), **AUTO)
    assert result['loss_scale']['skipped_steps'] == 3  # and the warm-up step: nothing applied
    path = tf.train.latest_checkpoint(str(tmp_path))
    assert tf.train.load_variable(path, 'global_step') == 4
    assert tf.train.load_variable(path, 'images_seen') == 4 * 4  # 4 steps of batch 4
    assert 'one whose update automatic loss scaling skipped' in ' '.join(
        images_seen.__doc__.split())


def test_no_count_without_automatic_scaling():
    result = tiny_run(num_batches=1, num_warmup_batches=0, use_fp16=True)
    assert 'loss_scale' not in result


def test_the_line_without_warmup_skips():
    hook = precision_report.LossScaleReportHook(128.0)
    hook._at_begin, hook._at_timed, hook._at_end = (0, 128.0), (0, 128.0), (1, 64.0)

    class Loop:
        num_steps = 5
    assert hook.total_lines(Loop()) == [
        'loss scale: 1 of 5 timed steps skipped (non-finite gradients: their updates were not '
        'applied; images/sec counts them as steps), 64 now (started at 128)']


def test_the_result_records_the_precision_blocks_facts():
    result = tiny_run(num_batches=1, num_warmup_batches=0, **AUTO)
    facts = result['precision']
    assert facts['compute_dtype'] == 'float16' and facts['variable_dtype'] == 'float32'
    assert facts['loss_scale'] == {'initial': 2.0 ** 24, 'automatic': True,
                                   'inc_every_n': 1000}
    assert set(facts) >= {'native', 'emulated', 'onednn_max_cpu_isa', 'float32_gradients',
                          'kernel_factors', 'kernel_factors_measured', 'kernel_shapes'}
    assert facts['kernel_factors'] is None  # tests/conftest.py: the record is off
    assert tiny_run(num_batches=1, num_warmup_batches=0)['precision']['loss_scale'] is None


def test_a_resumed_run_started_at_its_checkpoints_scale_and_its_header_says_so(tmp_path,
                                                                               capsys):
    """An auditor's finding: a resumed run said 'started at' the flag's scale (and its header
    named only that) though it continued from the checkpoint's, 4x larger."""
    # Doubles after every finite step: 128 -> 1024 after 3 (the trivial model's float16
    # gradients at a scale of 128..4096 are finite).
    growing = dict(use_fp16=True, fp16_enable_auto_loss_scale=True, fp16_loss_scale=128.0,
                   fp16_inc_loss_scale_every_n=1, train_dir=str(tmp_path), num_warmup_batches=0)
    first = tiny_run(num_batches=3, **growing)
    assert first['loss_scale']['initial'] == 128.0 and first['loss_scale']['final'] == 1024.0
    capsys.readouterr()
    bench = tiny_bench(num_batches=2, **growing)
    bench.print_info()  # the command's header, before the run restores anything
    second = bench.run()
    assert second['restored_step'] == 3
    assert second['loss_scale'] == {'skipped_steps': 0, 'timed_steps': 2,
                                    'warmup_skipped_steps': 0, 'initial': 1024.0,
                                    'final': 4096.0}
    lines = capsys.readouterr().out.splitlines()
    assert next(x for x in lines if x.startswith('loss scale:')).endswith(
        ', 4096 now (started at 1024)')
    resume = lines.index(next(x for x in lines if x.startswith('Resume:')))
    assert lines[resume + 1] == (
        '             auto loss scale from the checkpoint: 1024 (Precision: a new run\'s 128)')
    assert any('auto loss scale 128 (x2 per 1 finite steps)' in x for x in lines)
