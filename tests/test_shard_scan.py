"""The start-up scan of TFRecord shards: the fast header walk agrees with the exact one, and the
scan cache answers for shards seen before (no file read) until their size or time changes."""

import os
import time

import pytest

from tests import input_helpers as h
from tf_cnn_benchmarks import cnn_util
from tf_cnn_benchmarks.input_data import dataset_info, shard_scan


def _dataset(folder):
    return dataset_info.get_dataset(h.make_params(data_dir=str(folder)))


def _age(paths, secs=60):
    """Sets the shards' modification time `secs` in the past (older than the racy window)."""
    for path in paths:
        then = time.time() - secs
        os.utime(path, (then, then))


@pytest.fixture
def cache_file(tmp_path, monkeypatch):
    monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path / 'cache'))
    return tmp_path / 'cache' / 'tf_cnn_benchmarks' / 'shard_scans.json'


@pytest.fixture
def reads(monkeypatch):
    """Counts the shard walks."""
    counted = {'walked': []}
    walk = shard_scan.walk_headers

    def counting_walk(path):
        counted['walked'].append(os.path.basename(path))
        return walk(path)

    monkeypatch.setattr(shard_scan, 'walk_headers', counting_walk)
    return counted


@pytest.mark.parametrize('how', [None, 'truncated_data', 'truncated_header', 'bad_length'])
@pytest.mark.parametrize('size', [5, 40000])  # a block of headers per read; a read per record
def test_fast_walk_agrees_with_the_exact_walk(tmp_path, how, size):
    path, = h.write_shards(tmp_path, 'train', [[b'x' * (size + i) for i in range(30)]])
    if how:
        from tests.test_dataset_info import _damage
        _damage(path, how)
    records, problem = shard_scan.walk_tfrecord_headers(path)
    assert shard_scan.walk_headers(path) == (records, problem is None)


def test_second_scan_reads_no_shard_and_changes_are_seen(tmp_path, cache_file, reads):
    paths = h.write_shards(tmp_path / 'd', 'train', [[b'a'] * 3, [b'b'] * 4])
    _age(paths)
    first = _dataset(tmp_path / 'd').scan('train')
    assert first.num_examples == 7
    # Shards are walked in parallel: the order is the threads'.
    assert sorted(reads['walked']) == ['train-00000-of-00002', 'train-00001-of-00002']
    assert cache_file.exists()
    reads['walked'].clear()
    again = _dataset(tmp_path / 'd').scan('train')  # a new process would do the same
    assert (again.num_examples, again.records_per_file) == (7, (3, 4))
    assert reads == {'walked': []}
    # A new modification time (same size) or a new size: walked again.
    then = time.time() - 30
    os.utime(paths[0], (then, then))
    h.write_shards(tmp_path / 'new', 'train', [[b'a'] * 3, [b'b'] * 5])
    os.replace(tmp_path / 'new' / 'train-00001-of-00002', paths[1])
    _age(paths[1:], 20)
    changed = _dataset(tmp_path / 'd').scan('train')
    assert changed.records_per_file == (3, 5)
    assert sorted(reads['walked']) == ['train-00000-of-00002', 'train-00001-of-00002']
    # Truncation after the cache was written is still found (the size changed).
    with open(paths[1], 'r+b') as f:
        f.truncate(os.path.getsize(paths[1]) - 3)
    _age(paths[1:], 10)
    with pytest.raises(cnn_util.DataError, match='corrupt TFRecord shard .*truncated'):
        _dataset(tmp_path / 'd').scan('train')


def test_a_shard_written_just_now_is_not_trusted_from_the_cache(tmp_path, cache_file, reads):
    h.write_shards(tmp_path, 'train', [[b'a'] * 3])  # mtime within the racy window
    _dataset(tmp_path).scan('train')
    _dataset(tmp_path).scan('train')
    assert reads['walked'] == ['train-00000-of-00001'] * 2


def test_a_corrupt_cache_file_is_ignored_with_one_line(tmp_path, cache_file, reads, capsys):
    paths = h.write_shards(tmp_path / 'd', 'train', [[b'a'] * 3])
    _age(paths)
    cache_file.parent.mkdir(parents=True)
    cache_file.write_text('{"version": 1, "shards": {tr')
    assert _dataset(tmp_path / 'd').scan('train').num_examples == 3
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and err.startswith(
        'warning: ignoring the shard scan cache %s (' % cache_file), err
    assert 'every shard is walked and the file rewritten' in err
    reads['walked'].clear()
    assert _dataset(tmp_path / 'd').scan('train').num_examples == 3  # rewritten, used
    assert reads['walked'] == [] and capsys.readouterr().err == ''


def test_no_crc_pass_at_start_up(tmp_path, cache_file, reads):
    """The data CRCs are left to TensorFlow's reader during the run (issue 29.6): before, a
    run read every record of a data set up to 1 GiB at start-up (10 s a run until done)."""
    paths = h.write_shards(tmp_path / 'd', 'train', [[b'a' * 20] * 3, [b'b' * 20] * 4])
    from tests.test_dataset_info import _damage
    _damage(paths[0], 'bad_data_crc')
    _age(paths)
    dataset = _dataset(tmp_path / 'd')
    assert dataset.scan('train').records_per_file == (3, 4)
    assert dataset.describe('train').endswith('7 examples counted in 2 TFRecord shards, headers '
                                              'checked (record CRCs as read)')
    assert sorted(reads['walked']) == ['train-00000-of-00002', 'train-00001-of-00002']


def test_an_unreadable_cache_in_a_read_only_folder_is_not_promised_a_rewrite(
        tmp_path, cache_file, monkeypatch, capsys):
    """Realdata 10: the line said 'the file rewritten', then a second line said it could not
    be written. Now one line says it cannot be rewritten and what to do."""
    paths = h.write_shards(tmp_path / 'd', 'train', [[b'a'] * 3])
    _age(paths)
    cache_file.parent.mkdir(parents=True)
    cache_file.write_text('not json')
    real_access = os.access
    monkeypatch.setattr(os, 'access', lambda path, mode: False if os.path.samefile(
        path, cache_file.parent) else real_access(path, mode))
    before = cache_file.read_text()
    assert _dataset(tmp_path / 'd').scan('train').num_examples == 3
    assert capsys.readouterr().err.splitlines() == [
        'warning: ignoring the shard scan cache %s (Expecting value: line 1 column 1 (char 0)); '
        'every shard is walked, and the file cannot be rewritten (its folder %s is not '
        'writable by this user): set XDG_CACHE_HOME to a folder this user can write to keep '
        'the scans' % (cache_file, cache_file.parent)]
    assert cache_file.read_text() == before  # not tried
