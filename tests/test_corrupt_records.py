"""A record whose CRC fails is found by TensorFlow's reader as the run reads it (no CRC pass at
start-up, issue 29.6): the error names the shard, the record and --skip_corrupt_records, which
reads such a shard up to that record and counts and reports what it skips."""

import re

import pytest

from tests import input_helpers as h
from tf_cnn_benchmarks import cnn_util
from tf_cnn_benchmarks.input_data import data_errors, dataset_info


@pytest.fixture
def shards(tmp_path):
    """Two shards of 6 solid-colour records; record 2 of the second has a bad data CRC."""
    paths = h.solid_shards(str(tmp_path), per_shard=6)
    start = h.damage_record(paths[1], 2)
    return paths, start


def test_locate_names_the_shard_and_the_record(shards):
    from tf_cnn_benchmarks.input_data import corrupt_records
    paths, start = shards
    message = 'Graph execution error:\n\ncorrupted record at %d\n\t [[{{node x}}]]' % (
        start + 12)
    assert corrupt_records.locate(paths, message) == (
        'record 3 (index 2, byte %d) of %s: its data fails its CRC' % (start, paths[1]))
    assert corrupt_records.locate(paths, 'corrupted record at 3') == (
        'no shard of the 2 read holds a bad record there now (did the files change during the '
        'run?)')


def test_a_bad_length_crc_is_located_at_its_header(tmp_path):
    from tf_cnn_benchmarks.input_data import corrupt_records
    paths = h.write_shards(str(tmp_path), 'train', [[b'a' * 30] * 4])
    start = h.damage_record(paths[0], 3, where='length')
    assert corrupt_records.locate(paths, 'corrupted record at %d' % start) == (
        'record 4 (index 3, byte %d) of %s: its length field fails its CRC' % (start, paths[0]))


@pytest.mark.parametrize('use_datasets', [False, True])  # RecordInput, tf.data
def test_the_run_names_the_bad_record(shards, use_datasets):
    paths, start = shards
    p = h.make_params(data_dir=str(paths[0].rsplit('/', 1)[0]), use_datasets=use_datasets)
    assert dataset_info.get_dataset(p).scan('train').num_examples == 12  # no CRC pass
    with pytest.raises(cnn_util.DataError) as info:
        h.run_pipeline(p, steps=8)
    assert str(info.value) == (
        'corrupt TFRecord record: record 3 (index 2, byte %d) of %s: its data fails its '
        'CRC (data: %s); '
        '--skip_corrupt_records skips such a record (and counts what it skips)'
        % (start, paths[1], p.data_dir))


def test_without_the_shards_the_error_still_says_what_happened():
    import tensorflow as tf
    error = tf.errors.DataLossError(None, None, 'corrupted record at 77')
    assert str(data_errors.to_data_error(error)) == (
        'corrupt TFRecord record: in one of the shards read (corrupted record at 77); '
        '--skip_corrupt_records skips such a record (and counts what it skips)')


def test_skip_corrupt_records_counts_and_reports_the_skipped_records(shards, capsys):
    """The record whose data CRC fails is skipped alone: the records after it are found by
    their lengths and read (realdata 8: the rest of its shard was skipped with it)."""
    paths, _ = shards
    p = h.make_params(data_dir=str(paths[0].rsplit('/', 1)[0]), skip_corrupt_records=True)
    pipeline, outputs, _ = h.run_pipeline(p, steps=6)  # 24 images: 2 epochs of 11 and 2
    assert 'tf.data' in pipeline.description and 'RecordInput cannot read past a bad record' \
        in pipeline.description
    assert pipeline.skipped.by_shard == {paths[1]: 1} and pipeline.skipped.records == 1
    assert pipeline.skipped.crc_bad == {paths[1]: {2}} and pipeline.skipped.unusable_records == 0
    warnings = [x for x in capsys.readouterr().err.splitlines() if x.startswith('warning:')]
    assert warnings == [
        'warning: skipped record 3 (index 2) of %s (1 of its 6 records; 1 skipped an epoch so '
        'far): it fails its data CRC; the records after it are read (found by their lengths); '
        '--skip_corrupt_records' % paths[1]]
    # Labels cycle 1, 2, 3 over each shard's 6 records: an epoch reads 4, 4 and 3 of them
    # (record 3 of the second shard, label 3, is the one skipped; before, records 3..6 were).
    # The shuffle mixes the epochs' ends, so 24 images hold each label, not 2 epochs' counts
    # of each ({1: 10, 2: 7, 3: 7} on a loaded host): the skipped count above is the check.
    labels = [int(x) for step in outputs for _, lab in step for x in lab]
    counts = {k: labels.count(k) for k in (1, 2, 3)}
    assert sum(counts.values()) == 24 and min(counts.values()) >= 5


def test_a_shard_is_read_past_each_bad_record_and_stops_where_its_framing_ends(tmp_path):
    """record_tail: two records whose data CRC fails are passed over; a length field whose
    CRC fails ends the reading there (the next record cannot be found)."""
    from tf_cnn_benchmarks.input_data import record_tail
    [path] = h.write_shards(str(tmp_path), 'train', [[b'r%d' % i for i in range(6)]])
    h.damage_record(path, 1)
    h.damage_record(path, 3)
    tail = record_tail.read_tail(path, 1, 6)
    assert (tail.records, tail.indices, tail.bad, tail.stop) == (
        [b'r2', b'r4', b'r5'], [2, 4, 5], [1, 3], None)
    h.damage_record(path, 4, where='length')
    tail = record_tail.read_tail(path, 1, 6)
    assert (tail.indices, tail.bad, tail.stop, tail.reason) == (
        [2], [1, 3], 4, 'record 5 (index 4): its length field fails its CRC')


def test_skipped_records_in_the_total_block():
    from tf_cnn_benchmarks.input_data import skipped_records
    from tf_cnn_benchmarks.lifecycle import skip_report
    skipped = skipped_records.SkippedRecords()
    hook = skip_report.SkipReportHook()
    hook._skipped = skipped
    assert hook.total_lines(None) == [
        'skipped records: none (--skip_corrupt_records; record CRCs checked as read)']
    skipped.by_shard = {'a': 4, 'b': 60}
    assert hook.total_lines(None) == [
        'skipped records: 64 an epoch, the ends of 2 shard(s) that could not be read past a '
        'record (--skip_corrupt_records)']
    result = {}
    hook.end(result)
    assert result == {'skipped_records': 64}
    # Shards left out at start-up count with their readable records (a lower bound), also
    # when none of their records could be read.
    skipped.by_shard = {}
    skipped.left_out = (dataset_info.SkippedShard('c', 'truncated', 5),)
    assert hook.total_lines(None) == [
        'skipped records: at least 5 an epoch, 1 corrupt shard(s) left out at start-up with '
        'their 5 readable record(s) (those after the damage cannot be counted) '
        '(--skip_corrupt_records)']
    hook.end(result)
    assert result == {'skipped_records': 5}
    skipped.left_out = (dataset_info.SkippedShard('c', 'corrupt length field', 0),)
    assert hook.total_lines(None)[0].startswith('skipped records: uncounted, 1 corrupt shard(s)')


@pytest.mark.parametrize('frozen', [False, True])
def test_a_run_reports_the_skipped_records(shards, frozen, capsys):
    """The count reaches the total block and the result, also through a frozen graph (whose
    pipeline is an imported copy)."""
    from tests import helpers
    paths, _ = shards
    result = helpers.tiny_run(data_dir=str(paths[0].rsplit('/', 1)[0]), skip_corrupt_records=True,
                              num_batches=6, forward_only=frozen, freeze_when_forward_only=frozen)
    assert result['skipped_records'] == 1
    out = capsys.readouterr().out.splitlines()
    at = out.index('skipped records: 1 an epoch, 1 record(s) whose data CRC fails in 1 shard(s) '
                   '(the records after each are read) (--skip_corrupt_records)')
    # 6 steps of 4 images: 2.00 epochs of the 12 records counted, 2.18 of the 11 an epoch
    # reads (realdata 8: the header's figure was never corrected).
    assert out[at + 1] == (
        'epochs: with the 1 record an epoch skipped while reading, an epoch reads 11 records, '
        "not the 12 counted: the 6 timed steps read 2.18 epochs of them, not the header's 2.00 "
        '(which --num_epochs and the learning-rate schedule count)')


def test_skip_corrupt_records_skips_names_and_counts_records_of_another_schema(tmp_path,
                                                                              capsys):
    """Records the pipeline cannot use are skipped alone (the rest of their shard is read),
    each named once (the first MAX_WARNED of the run), and counted once an epoch whatever the
    epochs read (issue 41.6)."""
    from tf_cnn_benchmarks.input_data import skipped_records

    def odd(label, i):
        return h.example_with_label(label, filename='odd%d.jpg' % i, size=(24, 20),
                                    colour=h.CLASS_COLOURS[1])
    good = h.example(h.image_bytes(24, 20, colour=h.CLASS_COLOURS[2]), 2, [(0.1, 0.1, 0.9, 0.9)])
    bad = [odd('float', 0), odd(-1, 1), odd(1001, 2), odd('float', 3), odd(-1, 4),
           odd('float', 5), odd(-1, 6)]
    paths = h.write_shards(str(tmp_path), 'train', [[good, bad[0], good, bad[1]],
                                                    [bad[2], good, bad[3], bad[4], bad[5], good,
                                                     bad[6], good]])
    p = h.make_params(data_dir=str(tmp_path), skip_corrupt_records=True)
    pipeline, outputs, _ = h.run_pipeline(p, steps=4)  # 16 images: 3 epochs of 5 usable
    labels = {int(x) for step in outputs for _, lab in step for x in lab}
    assert labels == {2}  # only the good records were read
    skipped = pipeline.skipped
    assert skipped.unusable == {paths[0]: {1, 3}, paths[1]: {0, 2, 3, 4, 6}}
    assert skipped.records == skipped.unusable_records == 7 and skipped.by_shard == {}
    warnings = [x for x in capsys.readouterr().err.splitlines() if x.startswith('warning:')]
    float_label = 'image/class/label is a float (FloatList), not an int64'
    named = {(paths[0], 1, 0, float_label), (paths[0], 3, 1, 'label -1 outside [0, 1001)'),
             (paths[1], 0, 2, 'label 1001 outside [0, 1001)'), (paths[1], 2, 3, float_label),
             (paths[1], 3, 4, 'label -1 outside [0, 1001)'), (paths[1], 4, 5, float_label),
             (paths[1], 6, 6, 'label -1 outside [0, 1001)')}
    lines = {"warning: skipped record %d (index %d) of %s (image/filename 'odd%d.jpg'): %s; "
             '--skip_corrupt_records' % (i + 1, i, path, k, problem)
             for path, i, k, problem in named}
    # The shards are read in parallel: which 5 come first varies.
    assert len(warnings) == skipped_records.MAX_WARNED + 1
    assert set(warnings[:-1]) <= lines and len(set(warnings[:-1])) == skipped_records.MAX_WARNED
    assert warnings[-1] == ('warning: more records the pipeline cannot use are skipped (the '
                            'first 5 are named above); the total block counts them')


@pytest.mark.timeout(300, method='thread')  # the old reader spun here without end
def test_a_shard_that_cannot_be_opened_during_the_run_is_skipped_not_retried(
        shards, monkeypatch, capsys):
    """A shard readable at start-up that cannot be opened when read (gone, or its permission
    taken away) is skipped whole with one line naming it: TensorFlow's reader, whose errors
    --skip_corrupt_records ignores, retried opening it at 100% CPU for ever (realdata 1)."""
    import os

    from tf_cnn_benchmarks import preprocessing
    paths, _ = shards
    made = preprocessing.make_input_pipeline

    def make_then_remove(*args, **kwargs):
        pipeline = made(*args, **kwargs)  # the start-up scan and checks are done
        os.remove(paths[0])
        return pipeline

    monkeypatch.setattr(preprocessing, 'make_input_pipeline', make_then_remove)
    p = h.make_params(data_dir=str(paths[0].rsplit('/', 1)[0]), skip_corrupt_records=True)
    pipeline, outputs, _ = h.run_pipeline(p, steps=2)  # 8 images from the 5 records left
    assert {int(x) for step in outputs for _, lab in step for x in lab} <= {1, 2, 3}
    assert pipeline.skipped.by_shard == {paths[0]: 6, paths[1]: 1}
    assert pipeline.skipped.unopened == {paths[0]: 'No such file or directory'}
    warnings = [x for x in capsys.readouterr().err.splitlines() if x.startswith('warning:')]
    # The shards are read in parallel: the running total is 6 or 7 (the other shard first).
    [gone] = [w for w in warnings if paths[0] in w]
    assert re.fullmatch(
        r'warning: skipped all 6 records of %s \((6|7) skipped an epoch so far\): it cannot '
        r'be opened any more \(No such file or directory; it could at start-up\); '
        r'--skip_corrupt_records' % re.escape(paths[0]), gone), gone


def test_the_header_says_an_epoch_may_read_fewer_records(shards):
    """The header's epoch is counted before any record is read: with --skip_corrupt_records it
    says that records skipped while reading make it shorter, and where the figure comes."""
    from tests import helpers
    paths, _ = shards
    lines = helpers.tiny_bench(data_dir=str(paths[0].rsplit('/', 1)[0]),
                               skip_corrupt_records=True).info_lines()
    text = ' '.join(line.strip() for line in lines)
    assert ('an epoch is these 12 examples (--num_epochs, LR schedule; published: 1281167) '
            'fewer when --skip_corrupt_records skips records while reading (the total block '
            'then says how many an epoch reads)') in text.replace(', fewer', ' fewer')


def test_records_the_evaluations_skipped_are_in_the_total_block(tmp_path, capsys):
    """Realdata 10: an evaluation during training skipped a record, and the total block said
    'skipped records: none' (it counted the training pipeline's only)."""
    from tests import helpers
    h.solid_shards(str(tmp_path), 'train', num_shards=1, per_shard=4)
    bad = h.example_with_label(2000, filename='bad.jpg', size=(24, 20))
    good = h.example(h.image_bytes(24, 20), 1, [(0.1, 0.1, 0.9, 0.9)])
    h.write_shards(str(tmp_path), 'validation', [[good, bad, good]])
    helpers.tiny_run(data_dir=str(tmp_path), skip_corrupt_records=True, num_batches=2,
                     eval_during_training_every_n_steps=100)
    out = capsys.readouterr().out.splitlines()
    assert 'skipped records: none in training (--skip_corrupt_records; record CRCs checked as ' \
           'read)' in out
    assert ('skipped records in the evaluations: 1 of the validation records an evaluation '
            '(--skip_corrupt_records; named in the warnings above; the accuracy lines count '
            'the records left)') in out


def test_a_repeated_cached_batch_is_said_to_read_no_epoch(shards):
    """Realdata 10: --datasets_repeat_cached_sample --num_epochs=1 said 'Num epochs: 1.00'
    while one cached batch was repeated."""
    from tests import helpers
    paths, _ = shards
    folder = str(paths[0].rsplit('/', 1)[0])
    lines = helpers.tiny_bench(data_dir=folder, use_datasets=True, num_batches=None,
                               num_epochs=1, datasets_repeat_cached_sample=True).info_lines()
    assert 'Num epochs:  1.00 (--datasets_repeat_cached_sample: every step repeats one batch, ' \
           'read once: no epoch of records is read)' in lines
    lines = helpers.tiny_bench(data_dir=folder, num_batches=None, num_epochs=1).info_lines()
    assert 'Num epochs:  1.00' in lines
