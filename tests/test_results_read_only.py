"""The results database where it cannot be written: a read-only mount and a read-only file
(`tf_cnn_results`' read-only commands read it; a run is refused before it starts)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

import pytest

from tf_cnn_benchmarks.history import store

import results_helpers as rh

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def db(tmp_path):
    return rh.three_series(str(tmp_path / 'results.sqlite'))

_READ_ALL = '''
import sys
sys.path.insert(0, {tests!r})
import checkout
checkout.load()
from tf_cnn_benchmarks.tools import results_cli
for args in {commands!r}:
    status = results_cli.main(['tf_cnn_results'] + args + ['--results_db=' + {db!r}])
    sys.stdout.flush()
    print('STATUS %s %d' % (args[0], status), flush=True)
'''


_RECORD = '''
import sys
sys.path.insert(0, {tests!r})
import checkout
checkout.load()
from tf_cnn_benchmarks.lifecycle import results_db
import results_helpers as rh
print('RECORDED %s' % results_db.record({db!r}, rh.result(321.0)), flush=True)
'''


def _read_only_session(mounted: str, db: str, commands, tmp_path):
    """In a private mount namespace with `mounted` (the database's folder, or the file) bound
    read-only: the results tool's `commands` on `db`, then a tiny run recording into it ('RUN
    <status>'), then a record made by the library (XDG_DATA_HOME under `tmp_path`, where the
    history plot goes too). Returns the CompletedProcess."""
    tests = os.path.join(REPO, 'tests')
    script = _READ_ALL.format(tests=tests, commands=commands, db=db)
    run = [sys.executable, os.path.join(REPO, 'tf_cnn_benchmarks.py'), '--model=trivial',
           '--batch_size=2', '--image_size=16', '--num_batches=1', '--num_warmup_batches=0',
           '--results_db=' + db]
    shell = ('mount --bind -o ro "$1" "$1" && "$2" -c "$3" && { "${@:6}"; echo "RUN $?"; } '
             '&& XDG_DATA_HOME="$4" "$2" -c "$5"')
    return subprocess.run(['unshare', '-rm', 'bash', '-c', shell, 'sh', mounted,
                           sys.executable, script, str(tmp_path / 'xdg'),
                           _RECORD.format(tests=tests, db=db), *run],
                          capture_output=True, text=True, timeout=300, cwd=str(tmp_path))


def _refused_run_line(db: str, reason: str) -> str:
    """The one line of a run refused before it starts for a database it cannot write."""
    return ('error: --results_db: the results database %s cannot be written: %s; '
            'tf_cnn_results\' read-only commands (list, show, history, regressions, html) read '
            'it, a run needs another --results_db=PATH (or --noresults_db to record nothing)'
            % (db, reason))


@pytest.mark.cli
def test_a_database_on_a_read_only_mount_reads_and_a_run_is_refused_before_it_starts(
        db, tmp_path):
    """A shared, read-only mount of the nightly database: every read-only command failed
    with `unable to open database file` (issue 41.3); a run trained, then kept its results
    elsewhere. Now the run is refused before it starts (exit 2, one line), as one into a
    read-only folder where the database does not exist yet; a result recorded anyway (the
    mount turned read-only during the run) is still kept elsewhere. The mount is a real
    read-only bind, made in a private mount namespace (root is not stopped by chmod)."""
    why = rh.private_mounts()
    if why:
        pytest.skip(why)
    folder = str(tmp_path / 'share')
    os.mkdir(folder)
    os.rename(db, os.path.join(folder, 'results.sqlite'))
    db = os.path.join(folder, 'results.sqlite')
    before = sorted(os.listdir(folder))
    page = str(tmp_path / 'page')
    copied = tmp_path / 'copied'  # a result file to ingest (one without a result is refused)
    copied.mkdir()
    (copied / 'results.jsonl').write_text('{"key": "a", "status": "failed"}\n')
    commands = [['list'], ['show', '1'], ['history', '--model=trivial', '--precision=fp32',
                                          '--host=node-b'],
                ['regressions'], ['html', page], ['html', os.path.join(folder, 'site')],
                ['ingest', str(copied)]]
    data_home = str(tmp_path / 'xdg')
    proc = _read_only_session(folder, db, commands, tmp_path)
    out, err = proc.stdout, proc.stderr
    statuses = [line.split()[1:] for line in out.splitlines() if line.startswith('STATUS ')]
    assert statuses == [['list', '0'], ['show', '0'], ['history', '0'], ['regressions', '0'],
                        ['html', '0'], ['html', '2'], ['ingest', '4']], out + err
    assert '\n20 runs, 2 configurations.\n' in out and 'run #1\n' in out
    assert '\nregressions: 1 step down in 1 series, 1 still slower (3 series searched;' in out
    assert os.path.exists(os.path.join(page, 'index.html'))
    assert os.path.exists(tmp_path / 'history-trivial-fp32-training-bs32-x1-parameter_server-'
                                     'cpu-synthetic-32px.png')
    # A page into the read-only folder: refused up front with the reason and the fix.
    assert ('error: html OUT_DIR %s/site: cannot write in %s: Read-only file system; give a '
            'folder this user can write (made when missing) for its index.html\n'
            % (folder, folder)) in err
    assert ('error: the results database %s cannot be written: %s is on a read-only file '
            'system (' % (db, folder)) in err
    # The run: refused before TensorFlow loads, one line (before: it trained and exited 0).
    assert 'RUN 2' in out.splitlines() and 'Loading TensorFlow' not in out, out + err
    assert [x for x in err.splitlines() if x.startswith('error: --')] == [
        _refused_run_line(db, '%s is on a read-only file system' % folder)]
    # A result recorded anyway is kept in the default database's folder.
    assert 'RECORDED None' in out.splitlines(), out + err
    kept = os.path.join(data_home, 'tf_cnn_benchmarks', 'unrecorded')
    names = os.listdir(kept)
    assert len(names) == 1 and names[0].startswith('tf_cnn_benchmarks_trivial_')
    warnings = [x for x in err.splitlines() if x.startswith('warning: ')]
    assert warnings == [
        'warning: the run was not recorded in the results database %s: %s is on a read-only '
        'file system. Its results are in %s instead: `tf_cnn_results ingest %s '
        '--results_db=PATH` records them into a database that can be written'
        % (db, folder, os.path.join(kept, names[0]), kept)]
    assert sorted(os.listdir(folder)) == before  # no -wal, -shm nor unrecorded/ left there


@pytest.mark.cli
def test_a_read_only_database_file_in_a_writable_folder_reads_and_a_run_is_refused(
        db, tmp_path):
    """The other read-only case of issue 41.3: the file read-only (a read-only bind mount of the
    file alone, in a private mount namespace), its folder writable. The read-only commands read
    it; a run is refused before it starts (it trained, then kept its results beside); a
    result recorded anyway goes to the folder's unrecorded/."""
    why = rh.private_mounts()
    if why:
        pytest.skip(why)
    folder = os.path.dirname(db)
    commands = [['list'], ['show', '1'], ['regressions']]
    proc = _read_only_session(db, db, commands, tmp_path)
    out, err = proc.stdout, proc.stderr
    statuses = [line.split()[1:] for line in out.splitlines() if line.startswith('STATUS ')]
    assert statuses == [['list', '0'], ['show', '0'], ['regressions', '0']], out + err
    assert '\n20 runs, 2 configurations.\n' in out and 'run #1\n' in out
    assert '\nregressions: 1 step down in 1 series' in out
    assert 'RUN 2' in out.splitlines() and 'Loading TensorFlow' not in out, out + err
    assert [x for x in err.splitlines() if x.startswith('error: ')] == [
        _refused_run_line(db, 'the file is read-only')]
    assert 'RECORDED None' in out.splitlines(), out + err
    kept = os.path.join(folder, 'unrecorded')
    [name] = os.listdir(kept)
    warnings = [x for x in err.splitlines() if x.startswith('warning: the run was not')]
    assert warnings == [
        'warning: the run was not recorded in the results database %s: the file is read-only. '
        'Its results are in %s instead: `tf_cnn_results ingest %s --results_db=PATH` records '
        'them into a database that can be written' % (db, os.path.join(kept, name), kept)]
    assert not os.path.exists(tmp_path / 'xdg')  # the database's own folder could take them


def test_a_writable_database_read_with_locks_leaves_the_folder_as_it_was(db, capsys):
    # An operator's trial: `tf_cnn_results list` (and `show 3`, `show 3 | head -1`) on a
    # database with nothing beside it left r.sqlite-shm (32 KiB) and an empty r.sqlite-wal,
    # against the help's "only reads the file". The read with locks is now a query-only
    # read-write connection, whose close (the last) removes them (history/store.py).
    folder = os.path.dirname(db)
    before, listed = open(db, 'rb').read(), sorted(os.listdir(folder))
    for args in (['list'], ['show', '3'], ['history', '--model=trivial', '--precision=fp32',
                                           '--host=node-b'], ['regressions']):
        status, out, _ = rh.results_command(capsys, *args, '--results_db=%s' % db)
        assert status == 0 and out, args
        assert sorted(os.listdir(folder)) == listed, args  # no -wal, -shm
    assert open(db, 'rb').read() == before
    doc = open(os.path.join(REPO, 'docs', 'results-database.md'), encoding='utf-8').read()
    assert 'makes a `-shm`\nfile (32 KB) and an empty `-wal` file' not in doc
    code = ('import sys; sys.path.insert(0, %r); import checkout; checkout.load(); '
            'from tf_cnn_benchmarks.tools import results_cli; results_cli.run_main()'
            % os.path.join(REPO, 'tests'))
    shell = '"$1" -c "$2" show 3 --results_db="$3" | head -1'  # the reader goes away
    proc = subprocess.run(['bash', '-c', shell, 'sh', sys.executable, code, db], timeout=120,
                          capture_output=True, text=True)
    assert proc.stdout == 'run #3\n' and proc.stderr == '', proc.stderr
    assert sorted(os.listdir(folder)) == listed and open(db, 'rb').read() == before


def test_readers_and_a_writer_at_once_see_every_run_and_leave_no_side_files(db):
    # Two readers open while a run records: each read is consistent (WAL), a reader opened
    # after the write sees it, and the last close leaves the folder with the file alone.
    folder = os.path.dirname(db)
    first = store.open_read_only(db)
    second = store.open_read_only(db)
    assert rh.count_runs(first) == 20
    rh.fill(db, [rh.result(100.0)])  # a writer's whole connection, opened and closed
    assert rh.count_runs(second) == 21
    first.close()
    third = store.open_read_only(db)
    assert rh.count_runs(third) == 21
    with pytest.raises(sqlite3.OperationalError, match='readonly'):
        third.execute("UPDATE runs SET label = 'x'")  # no statement of a reader writes
    assert os.path.exists(db + '-wal')  # the WAL of open connections stays while they are
    second.close()
    third.close()
    assert sorted(os.listdir(folder)) == ['results.sqlite']
    with store.opened(db, read_only=True) as conn:
        assert rh.count_runs(conn) == 21  # the last close folded the run into the file
