"""A train folder probed by several cluster tasks at once: one task's probe made the missing
folder and removed it again while another's was about to create its test file there, and that
task refused --train_dir ('cannot create a file in .../train: No such file or directory', exit
2; a launcher test failed so under load). The probe tries again when the folder vanished; a
folder still there where making a file fails so is a special file system's (/proc)."""

import os
import tempfile

import pytest

from tf_cnn_benchmarks.preflight import output_paths


def test_a_folder_removed_by_another_probe_meanwhile_is_tried_again(tmp_path, monkeypatch):
    real, calls = tempfile.TemporaryFile, []

    def vanishing_once(*args, **kwargs):
        calls.append(kwargs.get('dir'))
        if len(calls) == 1:
            os.rmdir(kwargs['dir'])  # another task's probe removed it meanwhile
            raise FileNotFoundError(2, 'No such file or directory')
        return real(*args, **kwargs)

    monkeypatch.setattr(tempfile, 'TemporaryFile', vanishing_once)
    train = tmp_path / 'train'
    assert output_paths._creatable_dir_problem(str(train)) is None
    assert calls == [str(train), str(train)] and not train.exists()  # what it made, removed


def test_a_folder_that_always_vanishes_is_one_clear_problem(tmp_path, monkeypatch):
    def vanishing(*args, **kwargs):
        os.rmdir(kwargs['dir'])
        raise FileNotFoundError(2, 'No such file or directory')

    monkeypatch.setattr(tempfile, 'TemporaryFile', vanishing)
    train = tmp_path / 'train'
    assert output_paths._creatable_dir_problem(str(train)) == (
        'cannot create a file in %s: it was removed as soon as it was made, %d times (another '
        'process removes it)' % (train, output_paths.PROBE_TRIES))


@pytest.mark.parametrize('error, expected', [
    # /proc: making a file fails with ENOENT though the folder is there (a special file
    # system), which read as 'removed as soon as it was made, 5 times'.
    (FileNotFoundError(2, 'No such file or directory'),
     'the folder %s exists but cannot hold files (a special file system: making a file there '
     'fails: No such file or directory)'),
    (PermissionError(13, 'Permission denied'), 'cannot create a file in %s: Permission denied'),
])
def test_problems_of_a_folder_still_there_are_not_tried_again(tmp_path, monkeypatch, error,
                                                               expected):
    calls = []

    def failing(*args, **kwargs):
        calls.append(1)
        raise error

    monkeypatch.setattr(tempfile, 'TemporaryFile', failing)
    assert output_paths._creatable_dir_problem(str(tmp_path)) == expected % tmp_path
    assert calls == [1]
