"""tf_cnn_results when its inputs or outputs fail: an ingested file whose images_per_sec is no
number, a page on a full disk, a --results_db name over the file system's limit (tools/
results_cli.py)."""

from __future__ import annotations

import errno
import json
import os

import pytest

import results_helpers as rh

_main = rh.results_command


@pytest.fixture
def db(tmp_path):
    path = str(tmp_path / 'results.sqlite')
    rh.fill(path, rh.series([1000, 1010, 990]))
    return path


def test_a_page_on_a_full_disk_names_its_path_and_the_fix(db, capsys, tmp_path, monkeypatch):
    # Before: 'error: output: No space left on device; give an output path this user can
    # write' (no path; and this user can write there), and an index.html.tmp left behind.
    import builtins
    real_open = builtins.open

    class Full:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def write(self, text):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def opener(path, *args, **kwargs):
        f = real_open(path, *args, **kwargs)
        return Full(f) if str(path).endswith('index.html.tmp') else f
    monkeypatch.setattr(builtins, 'open', opener)
    status, out, err = _main(capsys, 'html', str(tmp_path / 'site'), '--results_db=%s' % db)
    page = tmp_path / 'site' / 'index.html'
    assert (status, out) == (1, '') and err == (
        'error: cannot write %s: No space left on device; free space on its disk, or give an '
        'output path on another disk\n' % page)
    assert os.listdir(tmp_path / 'site') == []



@pytest.mark.parametrize('value, said', [
    ('"fast"', 'its images_per_sec is "fast", not a positive finite number'),
    ('Infinity', 'its images_per_sec is Infinity, not a positive finite number'),
    ('0', 'its images_per_sec is 0, not a positive finite number'),
    ('-3.5', 'its images_per_sec is -3.5, not a positive finite number'),
    (None, 'not a tf_cnn_benchmarks result (no images_per_sec)'),
])
def test_ingest_names_a_bad_images_per_sec_as_bad_not_missing(capsys, tmp_path, value, said):
    # Before: "fast" or Infinity read as 'no params, environment or images_per_sec'.
    from tf_cnn_benchmarks.lifecycle import results_log
    logs = tmp_path / 'logs'
    results_log.write_json(rh.result(10.0), str(logs))
    good = json.loads(next(logs.iterdir()).read_text())
    text = json.dumps(good).replace('"images_per_sec": 10.0', '"images_per_sec": %s' % value)
    if value is None:
        text = json.dumps({k: v for k, v in good.items() if k != 'images_per_sec'})
    bad = logs / 'tf_cnn_benchmarks_bad_1.json'
    bad.write_text(text)
    capsys.readouterr()
    status, out, _ = _main(capsys, 'ingest', str(logs), '--results_db=%s' % (tmp_path / 'db'))
    assert status == 1
    assert 'skipped: %s: %s' % (bad, said) in out.splitlines()


def test_ingest_skips_a_total_its_steps_contradict_as_the_baseline_gate_refuses_it(
        capsys, tmp_path):
    # Before: a JSON whose images_per_sec was edited to 5000 (its steps at about 10) went into
    # the database; --baseline now refuses it (metrics/result_rates.py: one rule for both).
    from tf_cnn_benchmarks.lifecycle import results_log
    logs = tmp_path / 'logs'
    results_log.write_json(dict(rh.result(10.0), steps=[
        {'step': i + 1, 'images_per_sec': r} for i, r in enumerate([9.9, 10.1, 10.0])]),
        str(logs))
    path = next(logs.iterdir())
    path.write_text(path.read_text().replace('"images_per_sec": 10.0,',
                                             '"images_per_sec": 5000,', 1))
    capsys.readouterr()
    status, out, err = _main(capsys, 'ingest', str(path), '--results_db=%s' % (tmp_path / 'db'))
    assert (status, out) == (1, ''), err
    assert ('%s: its images_per_sec (5000.00) is above what its steps allow (its fastest '
            'step: 10.10 images/sec), so its figures contradict each other' % path) in err


def test_a_results_db_name_too_long_is_named_so(capsys, tmp_path):
    # Before: 'no results database at ...' (the kernel's ENAMETOOLONG reads as missing).
    path = str(tmp_path / ('r' * 257 + '.sqlite'))
    status, out, err = _main(capsys, 'list', '--results_db=%s' % path)
    assert (status, out) == (2, '')
    assert err.startswith('error: the results database %s cannot be used: a name of 264 bytes '
                          % path)
    assert err.endswith("per name (NAME_MAX); give a shorter --results_db=PATH\n")


def test_ingest_into_an_immutable_database_leaves_no_file_beside_it(capsys, tmp_path):
    # Before (sweep53): exit 4 with the right message, and results.sqlite-shm and -wal left
    # beside the immutable file (SQLite made them, then could not write the file).
    import subprocess

    from tf_cnn_benchmarks.lifecycle import results_log
    folder = tmp_path / 'db'
    folder.mkdir()
    db = str(folder / 'results.sqlite')
    rh.fill(db, [rh.result(10.0)])
    logs = tmp_path / 'logs'
    results_log.write_json(rh.result(20.0), str(logs))
    assert sorted(os.listdir(folder)) == ['results.sqlite']
    capsys.readouterr()
    if subprocess.run(['chattr', '+i', db], capture_output=True).returncode:
        pytest.skip('chattr +i does not work here (not root, or a file system without it)')
    try:
        status, out, err = _main(capsys, 'ingest', str(logs), '--results_db=%s' % db)
        listed = sorted(os.listdir(folder))
    finally:
        subprocess.run(['chattr', '-i', db], check=True)
    assert (status, out) == (4, '')
    assert err == ('error: the results database %s cannot be written: the file is read-only '
                   '(nothing was written, nor made beside it); the read-only commands (list, '
                   'show, history, regressions, html) read it, writes need another '
                   '--results_db=PATH\n' % db)
    assert listed == ['results.sqlite']
