"""The phrases that say how an input pipeline reads and processes its records: the
pipelines' `description` (preprocessing.py) and the header's `Input:` and `Eval:` values,
made from the flags and the shard scan alone (no TensorFlow), so that the header can say
them before any pipeline exists."""

from __future__ import annotations

from .. import cnn_util


def processing_phrase(params, train: bool) -> str:
    """How each image is processed, e.g. 'distortions + colour, bilinear resize' (training),
    'central crop, area resize' (evaluation)."""
    if not train:
        return eval_processing(params)
    if params.distortions:
        what = 'distortions' + (' + colour' if params.distort_color else '')
    else:
        what = 'central crop + flip'
    return '%s, %s resize' % (what, params.resize_method)


def record_input_reading(params, scan) -> str:
    """RecordInputPipeline's reading phrase: 'RecordInput (8 files in parallel, shuffle buffer
    10000)' (`scan`: the subset's dataset_info.SubsetScan; up to 64 files at once)."""
    return 'RecordInput (%s in parallel, shuffle buffer %d)' % (
        cnn_util.counted(min(64, len(scan.files)), 'file'), params.shuffle_buffer_size)


def cycle_length(params, scan) -> int:
    """The files tf.data reads at once: --datasets_parallel_interleave_cycle_length, or (0)
    every file of `scan`, up to 64."""
    return params.datasets_parallel_interleave_cycle_length or min(64, len(scan.files))


def tf_data_phrase(params, train: bool) -> str:
    """tf.data's options, e.g. 'tf.data (shuffle buffer 10000, prefetch 32, cached)' (the
    shuffle buffer, --datasets_repeat_cached_sample's batch and a sloppy order: training
    only)."""
    extras = [x for x, on in (('cached', params.datasets_use_caching),
                              ('one repeated batch', params.datasets_repeat_cached_sample)) if on]
    if train and params.datasets_sloppy_parallel_interleave:
        extras.append('sloppy order')
    return 'tf.data (%sprefetch %d%s)' % (
        'shuffle buffer %d, ' % params.shuffle_buffer_size if train else '',
        params.datasets_prefetch_buffer_size, ''.join(', ' + x for x in extras))


def dataset_reading(params, scan, train: bool, full_pass: bool = False) -> str:
    """DatasetPipeline's reading phrase: `tf_data_phrase`, the files interleaved, and why
    tf.data reads the shards when --use_datasets did not ask for it."""
    why = ''
    if not params.use_datasets and not full_pass:
        why = (' (--skip_corrupt_records: RecordInput cannot read past a bad record)'
               if params.skip_corrupt_records else
               ' (shards of mixed compression: RecordInput takes one)')
    return '%s, %s interleaved%s' % (tf_data_phrase(params, train),
                                     cnn_util.counted(cycle_length(params, scan), 'file'), why)


def full_pass_reading(eval_plan, params=None) -> str:
    """How the full-pass mode reads the records of an evaluation (run_plan.EvalPlan): one
    phrase of the pipeline's description, with 'cached' when `params` (Params) has
    --datasets_use_caching (the records cached in memory as first read)."""
    cached = ', cached' if params is not None and params.datasets_use_caching else ''
    return 'tf.data without shuffling%s, %s' % (cached, (
        'each record once' if eval_plan.num_examples <= eval_plan.examples_per_epoch
        else 'records in a fixed order, round again'))


def eval_processing(params) -> str:
    """The description's phrase of eval preprocessing (no randomness)."""
    return 'central crop, %s resize' % params.resize_method
