"""Locating the first record the pipeline cannot use (bad_images.py): an image that does not
decode, a record of another schema, a label outside the classes (record_schema.py)."""

from tf_cnn_benchmarks.input_data import bad_images

import input_helpers

GOOD = input_helpers.example(input_helpers.image_bytes(8, 8), 1)


def _bad(name='x.jpg'):
    return input_helpers.example(b'\xff\xd8 not really a jpeg', 1, filename=name)


def test_names_the_first_bad_record_and_its_filename(tmp_path):
    files = input_helpers.write_shards(str(tmp_path), 'train', [
        [GOOD, GOOD], [GOOD, GOOD, GOOD, _bad('first.jpg'), GOOD, _bad('second.jpg')]])
    assert bad_images.locate_unusable_record(files) == (
        "record 4 (index 3) of %s (image/filename 'first.jpg'): its image does not "
        "decode" % files[1])


def test_a_bad_last_record_and_a_record_without_filename(tmp_path):
    bad = input_helpers.example(b'garbage', 1)
    files = input_helpers.write_shards(str(tmp_path), 'train', [[GOOD, bad], [GOOD]])
    assert bad_images.locate_unusable_record(files) == (
        'record 2 (index 1) of %s: its image does not decode' % files[0])


def test_clean_shards_and_the_time_budget(tmp_path):
    files = input_helpers.write_shards(str(tmp_path), 'train', [[GOOD] * 3, [GOOD] * 2])
    assert bad_images.locate_unusable_record(files) == (
        'none, the pipeline can use every record of the 2 shard(s)')
    assert bad_images.locate_unusable_record(files, budget_secs=0) == (
        'none among the first 0 records searched (0 s budget)')
    assert bad_images.locate_unusable_record([]) == 'none, no shards to search'


def test_records_of_another_schema_are_named_with_what_is_wrong(tmp_path):
    """A float label, two labels, -1 stored, no label (issue 41.6): each named by shard,
    record, image/filename and what is wrong."""
    from tf_cnn_benchmarks.input_data import record_schema
    problems = {'float': 'image/class/label is a float (FloatList), not an int64',
                'two': 'image/class/label holds 2 values (one is read)',
                -1: 'label -1 outside [0, 1001)',
                'none': 'no image/class/label (read as -1)'}
    for kind, problem in problems.items():
        odd = input_helpers.example_with_label(kind, filename='%s.jpg' % kind, size=(8, 8))
        files = input_helpers.write_shards(str(tmp_path / str(kind)), 'train', [
            [GOOD, GOOD], [GOOD, odd, GOOD]])
        assert bad_images.locate_unusable_record(files, num_classes=1001) == (
            "record 2 (index 1) of %s (image/filename '%s.jpg'): %s" % (files[1], kind, problem))
        assert record_schema.record_problem(odd, 1001) == problem
    big = input_helpers.example(input_helpers.image_bytes(8, 8), 7, filename='big.jpg')
    assert record_schema.record_problem(big, 5) == 'label 7 outside [0, 5)'
    assert record_schema.record_problem(big, None) is None  # the range is not checked
    assert record_schema.record_problem(b'junk') == 'not a tf.train.Example'
