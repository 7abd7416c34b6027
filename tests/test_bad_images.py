"""Locating the record whose image does not decode (bad_images.py)."""

from tf_cnn_benchmarks.input_data import bad_images

import input_helpers

GOOD = input_helpers.example(input_helpers.image_bytes(8, 8), 1)


def _bad(name='x.jpg'):
    return input_helpers.example(b'\xff\xd8 not really a jpeg', 1, filename=name)


def test_names_the_first_bad_record_and_its_filename(tmp_path):
    files = input_helpers.write_shards(str(tmp_path), 'train', [
        [GOOD, GOOD], [GOOD, GOOD, GOOD, _bad('first.jpg'), GOOD, _bad('second.jpg')]])
    assert bad_images.locate_undecodable_image(files) == (
        "record 3 of %s (image/filename 'first.jpg')" % files[1])


def test_a_bad_last_record_and_a_record_without_filename(tmp_path):
    bad = input_helpers.example(b'garbage', 1)
    files = input_helpers.write_shards(str(tmp_path), 'train', [[GOOD, bad], [GOOD]])
    assert bad_images.locate_undecodable_image(files) == 'record 1 of %s' % files[0]


def test_clean_shards_and_the_time_budget(tmp_path):
    files = input_helpers.write_shards(str(tmp_path), 'train', [[GOOD] * 3, [GOOD] * 2])
    assert bad_images.locate_undecodable_image(files) == (
        'none, every record of the 2 shard(s) decodes')
    assert bad_images.locate_undecodable_image(files, budget_secs=0) == (
        'none among the first 0 records searched (0 s budget)')
    assert bad_images.locate_undecodable_image([]) == 'none, no shards to search'
