"""tf_cnn_sweep's --output_dir: made with its parents, or one error line with the fix."""

from __future__ import annotations

import errno
import os

import pytest

from tf_cnn_benchmarks.tools.sweep import cli as sweep


def test_an_output_dir_in_missing_folders_is_created_with_its_parents(tmp_path):
    # The README's `--output_dir=runs/a` on a fresh checkout, where runs/ does not exist yet.
    out = tmp_path / 'no' / 'such' / 'runs_a'
    sweep._prepare_output(str(out))
    assert sorted(p.name for p in out.iterdir()) == ['runs']


def test_an_output_dir_under_a_file_is_one_error(tmp_path):
    (tmp_path / 'plain').write_text('x')
    with pytest.raises(sweep.SweepError, match=r'^--output_dir .*plain/a cannot be created: '):
        sweep._prepare_output(str(tmp_path / 'plain' / 'a'))


def test_an_output_dir_on_a_read_only_mount_is_one_error_with_the_fix(tmp_path, monkeypatch,
                                                                     capsys):
    # It said only 'cannot be created: Read-only file system'.
    def read_only(path, *args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), path)

    monkeypatch.setattr(os, 'makedirs', read_only)
    for out, verb in ((tmp_path / 'sw', 'created'), (tmp_path, 'written')):
        assert sweep.main(['tf_cnn_sweep', '--models=trivial', '--batch_sizes=2',
                           '--output_dir=%s' % out]) == 2
        assert capsys.readouterr().err == (
            'error: --output_dir %s cannot be %s: Read-only file system; choose another path '
            '(a folder this user can write, made when missing)\n' % (out, verb))
