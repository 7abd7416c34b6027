"""Shards that are listed but cannot be opened: found at start-up by opening each one, in every
input path (RecordInput, --use_datasets, --skip_corrupt_records, --eval), as one `error:` line
naming the file and the fix (realdata 1 and 2: a traceback of the start-up walk, TensorFlow's
error without a fix, or with --skip_corrupt_records a reader that retried the file for ever).

As root, chmod 000 blocks nothing: an unreadable file is simulated by an open that raises
PermissionError for it, and, where `setpriv` can drop the capabilities that let root read
anything, for real in a process of its own."""

import builtins
import os
import shutil
import stat
import subprocess
import sys

import pytest

from tests import input_helpers as h
from tf_cnn_benchmarks import cnn_util
from tf_cnn_benchmarks.input_data import dataset_info, shard_files

import helpers
from test_cli import REPO

SMALL = ['--model=trivial', '--batch_size=4', '--image_size=16', '--num_batches=2',
         '--num_warmup_batches=1']
NO_READ_OVERRIDE = ['setpriv', '--bounding-set', '-dac_override,-dac_read_search']


def _copy(source, folder):
    shutil.copytree(source, folder)
    os.chmod(folder, 0o755)
    for name in os.listdir(folder):
        os.chmod(os.path.join(folder, name), 0o644)
    return folder


@pytest.fixture
def deny(monkeypatch):
    """deny(path): from now on, opening `path` raises PermissionError, as for a user without
    read permission (os.open too: the header walk uses it)."""
    denied = set()
    real_open, real_os_open = builtins.open, os.open

    def fake_open(file, *args, **kwargs):
        if isinstance(file, (str, bytes, os.PathLike)) and os.fsdecode(file) in denied:
            raise PermissionError(13, 'Permission denied', os.fsdecode(file))
        return real_open(file, *args, **kwargs)

    def fake_os_open(path, *args, **kwargs):
        if os.fsdecode(path) in denied:
            raise PermissionError(13, 'Permission denied', os.fsdecode(path))
        return real_os_open(path, *args, **kwargs)

    monkeypatch.setattr(builtins, 'open', fake_open)
    monkeypatch.setattr(os, 'open', fake_os_open)
    return lambda path: denied.add(str(path))


def _error_lines(proc):
    return [x for x in proc.stderr.splitlines() if x.startswith('error: ')]


def test_an_unreadable_shard_is_one_line_naming_it_and_the_fix(tmp_path, deny):
    paths = h.solid_shards(str(tmp_path), num_shards=3, per_shard=2)
    deny(paths[1])
    deny(paths[2])
    for skip in (False, True):  # not a damaged shard: --skip_corrupt_records does not skip it
        with pytest.raises(cnn_util.DataError) as info:
            dataset_info.get_dataset(h.make_params(
                data_dir=str(tmp_path), skip_corrupt_records=skip)).scan('train')
        assert str(info.value) == (
            'cannot open shard %s: Permission denied (2 of the 3 imagenet train files cannot '
            'be opened): give this user read permission (chmod a+r %s) or run as a user who '
            'can read it' % (paths[1], paths[1]))


def test_a_folder_named_like_a_shard_is_one_line_not_a_traceback(tmp_path):
    """A folder train-00001-of-00003 passed the old check (a stat) and ended the start-up walk
    with an IsADirectoryError traceback."""
    paths = h.solid_shards(str(tmp_path), num_shards=3, per_shard=2)
    os.remove(paths[1])
    os.mkdir(paths[1])
    with pytest.raises(cnn_util.DataError) as info:
        dataset_info.get_dataset(h.make_params(data_dir=str(tmp_path))).scan('train')
    assert str(info.value) == (
        'shard %s is a folder, not a file: move it out of --data_dir or rename it (its name '
        'makes it one of the imagenet train shards)' % paths[1])


def test_a_named_pipe_is_not_opened(tmp_path):
    """Opening a named pipe waits for a writer: it is refused without being opened."""
    paths = h.solid_shards(str(tmp_path), num_shards=2, per_shard=2)
    os.remove(paths[0])
    os.mkfifo(paths[0])
    assert stat.S_ISFIFO(os.stat(paths[0]).st_mode)
    with pytest.raises(cnn_util.DataError, match=r'^cannot open shard .*train-00000-of-00002: '
                       r'not a regular file: restore it from a copy'):
        shard_files.check_files_readable(paths, 'imagenet train')


def test_every_input_path_stops_with_the_same_line(tmp_path, imagenet_dir, deny):
    """Training with RecordInput, with --use_datasets, with --skip_corrupt_records, and --eval:
    the unreadable shard was a traceback ending in PermissionError (not yet scanned), or, once
    scanned, TensorFlow's 'Can't open' / 'Permission denied' with no fix."""
    data = _copy(imagenet_dir, str(tmp_path / 'data'))
    train_dir = str(tmp_path / 'train')
    helpers.tiny_run(train_dir=train_dir, num_batches=1)  # a checkpoint for --eval
    helpers.run_command(*SMALL, '--data_dir=%s' % data)  # scanned once, readable (the cache)
    for name in ('train-00005-of-00008', 'validation-00001-of-00002'):
        deny(os.path.join(data, name))
    runs = [helpers.run_command(*SMALL, '--data_dir=%s' % data, *extra) for extra in (
        [], ['--use_datasets'], ['--skip_corrupt_records'],
        ['--eval', '--train_dir=' + train_dir],
        ['--eval', '--train_dir=' + train_dir, '--skip_corrupt_records'])]
    for proc, name in zip(runs, ['train-00005-of-00008'] * 3 + ['validation-00001-of-00002'] * 2,
                          strict=True):
        assert proc.returncode == 1 and 'Traceback' not in proc.stderr, proc.stderr
        shard = os.path.join(data, name)
        assert _error_lines(proc) == [
            'error: cannot open shard %s: Permission denied: give this user read permission '
            '(chmod a+r %s) or run as a user who can read it' % (shard, shard)], proc.stderr


def _can_drop_read_override(tmp_path) -> str:
    """'' when setpriv can make root unable to read a mode-000 file here, else why not."""
    if not shutil.which('setpriv'):
        return 'no setpriv on this host'
    probe = tmp_path / 'probe'
    probe.write_text('x')
    probe.chmod(0)
    try:
        proc = subprocess.run(NO_READ_OVERRIDE + ['cat', str(probe)], capture_output=True,
                              text=True, timeout=60)
    finally:
        probe.chmod(0o644)
    if proc.returncode == 0 and os.geteuid() == 0:
        return 'setpriv did not take away the read override here'
    if proc.returncode != 0 and 'Permission denied' not in proc.stderr:
        return 'setpriv cannot drop capabilities here: %s' % proc.stderr.strip()
    return ''


def test_a_shard_made_unreadable_after_its_scan_stops_a_skipping_run(tmp_path, imagenet_dir):
    """The trial's case, for real: a shard scanned while readable (the scan cache knows it),
    then mode 000, read by a user who cannot read it with --skip_corrupt_records. The run hung
    after 'Initializing graph' with a thread at 100% CPU, deaf to Ctrl-C."""
    reason = _can_drop_read_override(tmp_path)
    if reason:
        pytest.skip(reason)
    data = _copy(imagenet_dir, str(tmp_path / 'data'))
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / 'cache'))
    command = [sys.executable, os.path.join(REPO, 'tf_cnn_benchmarks.py'), *SMALL,
               '--data_dir=%s' % data, '--skip_corrupt_records']
    first = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env,
                           cwd=REPO)
    assert first.returncode == 0, first.stderr
    shard = os.path.join(data, 'train-00005-of-00008')
    os.chmod(shard, 0)
    proc = subprocess.run(NO_READ_OVERRIDE + command, capture_output=True, text=True,
                          timeout=300, env=env, cwd=REPO)
    assert proc.returncode == 1, proc.stderr
    assert _error_lines(proc) == [
        'error: cannot open shard %s: Permission denied: give this user read permission '
        '(chmod a+r %s) or run as a user who can read it' % (shard, shard)], proc.stderr


def _remove_after_start_up(monkeypatch, path):
    """The next pipeline made loses `path` once its start-up scan and checks are done."""
    from tf_cnn_benchmarks import preprocessing
    made = preprocessing.make_input_pipeline

    def make_then_remove(*args, **kwargs):
        pipeline = made(*args, **kwargs)
        os.remove(path)
        return pipeline
    monkeypatch.setattr(preprocessing, 'make_input_pipeline', make_then_remove)


def test_a_shard_gone_during_the_run_is_one_line(tmp_path, monkeypatch):
    """tf.data's reader of a shard removed after the start-up checks: TensorFlow's NotFoundError
    ('error: TensorFlow: ...; No such file or directory', no fix) is named as the shard."""
    paths = h.solid_shards(str(tmp_path), num_shards=2, per_shard=4)
    _remove_after_start_up(monkeypatch, paths[0])
    with pytest.raises(cnn_util.DataError) as info:
        h.run_pipeline(h.make_params(data_dir=str(tmp_path), use_datasets=True), steps=3)
    assert str(info.value) == (
        'cannot open shard %s: No such file or directory (during the run; it could be opened '
        'at start-up): restore it from a copy, or check the disk or share it is on' % paths[0])


def test_record_input_cannot_open_is_named_with_the_reason(tmp_path, deny):
    """RecordInput says only "Can't open PATH" (the trial's traceback, whose lookup of a bad
    record then failed on the same file): the shard is opened again for the reason."""
    import tensorflow as tf

    from tf_cnn_benchmarks.input_data import data_errors
    paths = h.solid_shards(str(tmp_path / 'data'), num_shards=2, per_shard=2)
    deny(paths[1])
    error = tf.errors.InvalidArgumentError(
        None, None, "Can't open %s\n\t [[{{node input_pipeline/record_input_1}}]]" % paths[1])
    assert str(data_errors.to_data_error(error, str(tmp_path), tuple(paths))) == (
        'cannot open shard %s: Permission denied (during the run; it could be opened at '
        'start-up): give this user read permission (chmod a+r %s) or run as a user who can '
        'read it' % (paths[1], paths[1]))
