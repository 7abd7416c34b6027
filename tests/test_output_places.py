"""Where a run writes, as a CI user met it: a refused results database is left exactly as it was
(no -wal or -shm file beside it); a home folder that does not exist is never made (the default
places under it are not used, one warning line per thing not kept, and the run goes on); the
messages of a folder that holds no files (/proc) and of a name that is not UTF-8 name the real
problem and the fix."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys

import pytest

from tf_cnn_benchmarks import params
from tf_cnn_benchmarks.hardware import calibration, user_dirs
from tf_cnn_benchmarks.history import store
from tf_cnn_benchmarks.input_data import shard_scan
from tf_cnn_benchmarks.preflight import output_paths
from tf_cnn_benchmarks.runtime import runtime_env

import helpers
import results_helpers as rh

TESTS = os.path.dirname(os.path.abspath(__file__))

# --- A refused database is left as it was.


def _make_unwritable(path: str) -> str | None:
    """Makes the file `path` unwritable for this process: chattr +i as root (permission bits
    do not stop root), else chmod 444. Returns how to undo it ('chattr', 'chmod'), or None
    when it could not be done here."""
    if os.geteuid() == 0:
        if shutil.which('chattr') is None:
            return None
        done = subprocess.run(['chattr', '+i', path], capture_output=True)
        return 'chattr' if done.returncode == 0 else None
    os.chmod(path, 0o444)
    return 'chmod'


def _undo(path: str, how: str) -> None:
    if how == 'chattr':
        subprocess.run(['chattr', '-i', path], check=True)
    else:
        os.chmod(path, 0o644)


def test_a_database_refused_as_unwritable_gets_no_file_beside_it(tmp_path):
    # Before: the identity check opened it read-only, and SQLite made x.sqlite-shm and
    # x.sqlite-wal in the writable folder; the run was refused (exit 2) all the same.
    db = str(tmp_path / 'x.sqlite')
    rh.fill(db, [rh.result(321.0)])
    before = open(db, 'rb').read()
    how = _make_unwritable(db)
    if how is None:
        pytest.skip('no way here to make a file this process cannot write (root without '
                    'chattr, or a file system without the immutable flag)')
    try:
        with pytest.raises(params.ParamsError, match='cannot be written: the file is read-only'):
            output_paths.check_output_paths(params.make_params(results_db=db))
        assert sorted(os.listdir(tmp_path)) == ['x.sqlite']
        with store.opened(db, read_only=True) as conn:  # the read-only commands still read it
            assert rh.count_runs(conn) == 1
        assert sorted(os.listdir(tmp_path)) == ['x.sqlite']
    finally:
        _undo(db, how)
    assert open(db, 'rb').read() == before


def test_the_identity_check_of_a_run_leaves_nothing_beside_a_database(tmp_path):
    """Ours (accepted) and another program's in WAL mode (refused): no -wal or -shm file."""
    ours = str(tmp_path / 'ours' / 'r.sqlite')
    os.makedirs(os.path.dirname(ours))
    rh.fill(ours, [rh.result(321.0)])
    theirs = str(tmp_path / 'theirs' / 'app.sqlite')
    os.makedirs(os.path.dirname(theirs))
    conn = sqlite3.connect(theirs)
    conn.execute('PRAGMA journal_mode=WAL')
    conn.execute('CREATE TABLE t (a)')
    conn.commit()
    conn.close()
    assert store.check_file(ours) is None
    assert 'an SQLite database of another program' in store.check_file(theirs)
    assert os.listdir(os.path.dirname(ours)) == ['r.sqlite']
    assert os.listdir(os.path.dirname(theirs)) == ['app.sqlite']


# --- A home folder that does not exist.


@pytest.fixture
def no_home(tmp_path, monkeypatch):
    """HOME names a folder that does not exist; the XDG folders and the program's variables
    are unset, so every default place is under it."""
    home = str(tmp_path / 'nonexistent')
    monkeypatch.setenv('HOME', home)
    for name in ('XDG_DATA_HOME', 'XDG_CACHE_HOME', 'TF_CNN_RESULTS_DB', 'TF_CNN_CALIBRATION'):
        monkeypatch.delenv(name, raising=False)
    return home


def test_the_default_database_under_no_home_is_one_warning_and_no_record(no_home, capsys):
    # Before: the run made HOME/.local/share/tf_cnn_benchmarks/results.sqlite.
    assert store.run_path(None) is None and store.run_path(True) is None
    output_paths.check_output_paths(params.make_params())  # goes on
    err = capsys.readouterr().err.splitlines()
    assert err == ['warning: the run is not recorded in the results database: its default place '
                   '%s/.local/share/tf_cnn_benchmarks/results.sqlite is under the home folder %s '
                   '(HOME), which does not exist and is not made; give --results_db=PATH to '
                   'record it, or --noresults_db to record nothing' % (no_home, no_home)]
    # A database named under it is refused before the run (a usage error), and the store makes
    # no home folder for a writer that gets there (tf_cnn_results ingest).
    named = os.path.join(no_home, 'r.sqlite')
    with pytest.raises(params.ParamsError, match='is under the home folder .* which does not '
                                                 'exist and is not made; give another'):
        output_paths.check_output_paths(params.make_params(results_db=named))
    with pytest.raises(store.StoreError, match='cannot be created: it is under the home folder'):
        store.open_store(store.resolve_path(None))
    from tf_cnn_benchmarks.lifecycle import results_db
    assert not results_db.unrecorded_dir('/proc/x.sqlite').startswith(no_home)
    assert not os.path.exists(no_home)


def test_measurements_under_no_home_are_used_not_cached_in_one_line(no_home):
    warnings = []
    for key in ('a', 'b'):  # two quiet figures of one run: one line
        got = calibration.figure('cpu peak', key, lambda: (7.0, 0.0), what='x', secs=1,
                                 cores=2, meter=helpers.FakeMeter(0.0), warn=warnings.append)
        assert got.value == 7.0  # used by this run
    assert warnings == [
        'the measurements of this run are not cached (each run measures them again): the '
        'calibration record %s/.cache/tf_cnn_benchmarks/calibration.json is under the home '
        'folder %s (HOME), which does not exist and is not made (set XDG_CACHE_HOME, or '
        'TF_CNN_CALIBRATION to a file\'s path, where this user can write)' % (no_home, no_home)]
    # A busy figure is not noted in a record there either.
    assert calibration.figure('cpu peak', 'c', lambda: (7.0, 0.0), what='x', secs=1, cores=2,
                              meter=helpers.FakeMeter(1.5), warn=warnings.append) is None
    assert not os.path.exists(no_home)


def test_a_home_that_is_a_file_is_named_so_and_the_record_s_reason_said_once(
        tmp_path, monkeypatch, capsys):
    # HOME=/etc/passwd: 'the home folder /etc/passwd (HOME), which does not exist' (it does: a
    # file), and a busy CPU peak's line repeated the record's reason the line above it gave.
    home = tmp_path / 'passwd'
    home.write_text('root:x:0:0\n')
    monkeypatch.setenv('HOME', str(home))
    for name in ('XDG_DATA_HOME', 'XDG_CACHE_HOME', 'TF_CNN_RESULTS_DB', 'TF_CNN_CALIBRATION'):
        monkeypatch.delenv(name, raising=False)
    output_paths.check_output_paths(params.make_params())
    assert capsys.readouterr().err.splitlines() == [
        'warning: the run is not recorded in the results database: its default place '
        '%s/.local/share/tf_cnn_benchmarks/results.sqlite is under the home folder %s (HOME), '
        'which is a file, not a folder; give --results_db=PATH to record it, or --noresults_db '
        'to record nothing' % (home, home)]
    warnings = []
    assert calibration.figure('CPU peak', 'k', lambda: (7.0, 0.0), what='x', secs=1, cores=2,
                              meter=helpers.FakeMeter(1.5), warn=warnings.append) is None
    record = '%s/.cache/tf_cnn_benchmarks/calibration.json' % home
    assert capsys.readouterr().err.splitlines() == [
        'warning: the calibration record %s is under the home folder %s (HOME), which is a '
        'file, not a folder (set XDG_CACHE_HOME, or TF_CNN_CALIBRATION to a file\'s path, '
        'where this user can write)' % (record, home)]
    assert len(warnings) == 1 and warnings[0].startswith(
        'CPU peak measured now: not kept, the calibration record %s cannot be written (said '
        'above); and other processes used' % record)


def test_shard_scans_under_no_home_are_not_cached_in_one_line(no_home, tmp_path):
    said = []
    cache = shard_scan.ScanCache(warn=said.append)
    shard = tmp_path / 'train-00000-of-00001'
    shard.write_bytes(b'')
    cache.put(str(shard), os.stat(shard), 0)
    cache.save()
    cache.save()
    assert said == ['the shard scans are not cached: the cache %s/.cache/tf_cnn_benchmarks/'
                    'shard_scans.json is under the home folder %s (HOME), which does not exist '
                    'and is not made; set XDG_CACHE_HOME to a folder this user can write to keep '
                    'them' % (no_home, no_home)]
    assert not os.path.exists(no_home)


def _spare_home(monkeypatch) -> str | None:
    """runtime_env.spare_home() as a fresh process calls it: no HOME_WRITERS variable set, the
    libraries' settings not spared yet."""
    for name in runtime_env.HOME_WRITERS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(runtime_env, '_SPARED', False)
    return runtime_env.spare_home()


def test_the_libraries_settings_go_to_a_temporary_folder_under_no_home(no_home, monkeypatch):
    # TensorFlow's Keras writes ~/.keras/keras.json as TensorFlow loads, matplotlib
    # ~/.config/matplotlib: both made HOME itself.
    folder = _spare_home(monkeypatch)
    try:
        assert folder and os.path.isdir(folder) and not folder.startswith(no_home)
        assert [os.environ[name] for name in runtime_env.HOME_WRITERS] == [folder, folder]
        assert runtime_env.spare_home() is None  # once a process
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    monkeypatch.setenv('HOME', os.path.dirname(no_home))  # a home that exists: nothing
    assert _spare_home(monkeypatch) is None


def test_the_plots_spare_a_home_that_does_not_exist(no_home, monkeypatch):
    # tf_cnn_results' and tf_cnn_sweep's plots load matplotlib outside a run's start.
    from tf_cnn_benchmarks.history import plots
    for name in runtime_env.HOME_WRITERS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(runtime_env, '_SPARED', False)
    plots._pyplot()
    folder = os.environ['MPLCONFIGDIR']
    try:
        assert not folder.startswith(no_home) and not os.path.exists(no_home)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_home_is_the_password_databases_when_home_is_unset():
    import pwd
    account = pwd.getpwuid(os.getuid()).pw_dir  # where os.path.expanduser('~') goes then
    assert user_dirs.home({}) == account
    assert user_dirs.home_origin({}) == ('HOME is unset: the account\'s home folder in the '
                                         'password database')
    assert user_dirs.home({'HOME': '/h'}) == '/h'
    assert user_dirs.home_origin({'HOME': '/h'}) == 'HOME'
    assert user_dirs.absent_home('/h/x', {'HOME': '/h-none'}) is None  # elsewhere
    assert store.data_folder({}) == os.path.join(account, '.local', 'share', 'tf_cnn_benchmarks')


def test_a_default_database_this_user_cannot_write_is_one_warning_and_no_record(
        tmp_path, monkeypatch, capsys):
    # Before: a read-only home (or XDG_DATA_HOME) refused every run without --noresults_db
    # (exit 2), while a home that does not exist let it go on with a warning. The default
    # place now goes the second way; a database named by --results_db or TF_CNN_RESULTS_DB
    # stays a usage error. (Read-only storage stands in: chmod does not stop root.)
    from tf_cnn_benchmarks.history import store_paths
    data = tmp_path / 'data'
    monkeypatch.setenv('XDG_DATA_HOME', str(data))
    monkeypatch.delenv('TF_CNN_RESULTS_DB', raising=False)

    def read_only(path):
        return '%s is on a read-only file system' % tmp_path

    monkeypatch.setattr(store_paths, 'read_only_reason', read_only)
    monkeypatch.setattr(store, 'read_only_reason', read_only)
    default = str(data / 'tf_cnn_benchmarks' / 'results.sqlite')
    assert store.run_path(None) is None and store.run_path(True) is None
    output_paths.check_output_paths(params.make_params())  # goes on
    assert capsys.readouterr().err.splitlines() == [
        'warning: the run is not recorded in the results database: its default place %s cannot '
        'be made: %s is on a read-only file system; give --results_db=PATH to record it, or '
        '--noresults_db to record nothing' % (default, tmp_path)]
    named = str(tmp_path / 'r.sqlite')
    refused = ('--results_db%s: the results database %s cannot be made: %s is on a read-only '
               'file system; a run needs another --results_db=PATH (or --noresults_db to record '
               'nothing)')
    for given, origin in ((named, ''), (None, ' (not given: TF_CNN_RESULTS_DB)')):
        if given is None:
            monkeypatch.setenv('TF_CNN_RESULTS_DB', named)
        assert store.run_path(given) == named
        with pytest.raises(params.ParamsError) as raised:
            output_paths.check_output_paths(params.make_params(results_db=given))
        assert str(raised.value) == refused % (origin, named, tmp_path)
    assert not os.path.exists(data)


class _Account:
    """A password database's entry (pwd.struct_passwd's pw_dir)."""

    def __init__(self, pw_dir: str):
        self.pw_dir = pw_dir


@pytest.fixture
def empty_home(tmp_path, monkeypatch):
    """HOME set but empty (a CI job's `HOME=`), the working folder a fresh one, the XDG folders
    and the program's variables unset; the account's home in the password database is a folder
    of the test (never this host's). Returns (the account's home, the working folder)."""
    import pwd
    account, work = tmp_path / 'account', tmp_path / 'work'
    account.mkdir()
    work.mkdir()
    monkeypatch.setattr(pwd, 'getpwuid', lambda uid: _Account(str(account)))
    monkeypatch.setenv('HOME', '')
    for name in ('XDG_DATA_HOME', 'XDG_CACHE_HOME', 'TF_CNN_RESULTS_DB', 'TF_CNN_CALIBRATION'):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(work)
    return str(account), str(work)


def test_an_empty_home_is_the_account_s_home_as_an_unset_one(empty_home, capsys):
    # Before: `HOME=` joined '' and '.local/share': the results database and the calibration
    # record went into ./.local/share and ./.cache of the working folder, without a word.
    account, work = empty_home
    assert user_dirs.home() == account == user_dirs.home({})
    assert user_dirs.home_origin() == ('HOME is empty: the account\'s home folder in the '
                                       'password database')
    assert store.run_path(None) == os.path.join(account, '.local', 'share', 'tf_cnn_benchmarks',
                                                'results.sqlite')
    assert calibration.record_path() == os.path.join(account, '.cache', 'tf_cnn_benchmarks',
                                                     'calibration.json')
    assert shard_scan.ScanCache().path.startswith(account + os.sep)
    assert user_dirs.expand_home('~/r.sqlite') == os.path.join(account, 'r.sqlite')
    output_paths.check_output_paths(params.make_params())
    assert capsys.readouterr().err == ''
    assert os.listdir(work) == []


def test_an_account_without_any_home_records_and_caches_nothing_in_the_working_folder(
        empty_home, monkeypatch, capsys):
    # HOME empty (or unset) and no home folder in the password database (a container's user
    # without an entry): the places under `~` are not used, as under a home that does not exist.
    import pwd

    def no_entry(uid):
        raise KeyError(uid)

    monkeypatch.setattr(pwd, 'getpwuid', no_entry)
    work = empty_home[1]
    assert user_dirs.home() == user_dirs.NO_HOME
    assert store.run_path(None) is None
    output_paths.check_output_paths(params.make_params())
    assert capsys.readouterr().err.splitlines() == [
        'warning: the run is not recorded in the results database: its default place '
        '~/.local/share/tf_cnn_benchmarks/results.sqlite is under the home folder ~, which this '
        'account does not have (HOME is empty, and the password database names no home folder '
        'for it); give --results_db=PATH to record it, or --noresults_db to record nothing']
    assert calibration.record_problem(calibration.record_path()).startswith(
        'is under the home folder ~, which this account does not have')
    assert user_dirs.expand_home('~/r.sqlite') == '~/r.sqlite'  # as os.path.expanduser leaves it
    assert os.listdir(work) == []


def test_the_libraries_settings_are_spared_under_an_empty_home(empty_home, monkeypatch):
    # Keras and matplotlib read an empty HOME as the root folder (os.path.expanduser): /.keras.
    folder = _spare_home(monkeypatch)
    try:
        assert folder and [os.environ[name] for name in runtime_env.HOME_WRITERS] == [folder] * 2
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.cli
def test_a_run_under_no_home_makes_no_home_and_gets_its_benchmark(tmp_path):
    """The CI user's run as a process (TensorFlow's Keras included): exit 0, its total line,
    one warning for the results, and no home folder made."""
    home = str(tmp_path / 'nonexistent')
    drop = ('XDG_DATA_HOME', 'XDG_CACHE_HOME', 'TF_CNN_RESULTS_DB', 'MPLCONFIGDIR',
            'KERAS_HOME')
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env['HOME'] = home
    proc = subprocess.run(
        [sys.executable, os.path.join(os.path.dirname(TESTS), 'tf_cnn_benchmarks.py'),
         '--model=trivial', '--batch_size=2', '--image_size=16', '--num_batches=2'],
        capture_output=True, text=True, env=env, cwd=str(tmp_path), timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert 'total images/sec' in proc.stdout
    assert [x for x in proc.stderr.splitlines() if 'results database' in x] == [
        'warning: the run is not recorded in the results database: its default place '
        '%s/.local/share/tf_cnn_benchmarks/results.sqlite is under the home folder %s (HOME), '
        'which does not exist and is not made; give --results_db=PATH to record it, or '
        '--noresults_db to record nothing' % (home, home)]
    assert not os.path.exists(home)


# --- Messages.


@pytest.mark.skipif(not os.path.isdir('/proc/self'), reason='needs /proc')
def test_a_database_in_proc_names_the_folder_that_holds_no_files():
    # Before: 'no folder can be created in /proc (No such file or directory)': no folder was
    # to be made, and no fix was given.
    with pytest.raises(params.ParamsError) as raised:
        output_paths.check_output_paths(params.make_params(results_db='/proc/results.sqlite'))
    assert str(raised.value) == (
        '--results_db: the results database /proc/results.sqlite cannot be made: the folder '
        '/proc exists but cannot hold files (a special file system: making a file there fails: '
        'No such file or directory); give another --results_db=PATH (or --noresults_db to '
        'record nothing)')


def test_a_name_that_is_not_utf8_says_so_under_a_utf8_locale(monkeypatch):
    # Before: 'run under a UTF-8 locale' under a UTF-8 locale.
    name = os.fsdecode(b'td\xff') if sys.getfilesystemencoding() == 'utf-8' else 'td\udcff'
    monkeypatch.setattr(sys, 'getfilesystemencoding', lambda: 'utf-8')
    assert output_paths.encoding_problem(name) == (
        'its name is not valid UTF-8 (byte 0xff at offset 2), and TensorFlow takes names as '
        'UTF-8; rename it (or give another path) with a name in UTF-8')
    with pytest.raises(params.ParamsError) as raised:
        output_paths.check_output_paths(params.make_params(train_dir=name))
    assert str(raised.value).startswith('--train_dir=td\\xff cannot be used: its name is not '
                                        'valid UTF-8')
    monkeypatch.setattr(sys, 'getfilesystemencoding', lambda: 'ascii')
    assert 'run under a UTF-8 locale' in output_paths.encoding_problem('caf\udcc3\udca9')


def test_a_default_database_under_a_home_that_does_not_exist_says_so(capsys, tmp_path,
                                                                      monkeypatch):
    # Runs never make a missing home (hardware/user_dirs.py): "runs record there" was wrong.
    home = str(tmp_path / 'nohome')
    for name in ('XDG_DATA_HOME', store.PATH_VARIABLE):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv('HOME', home)
    status, out, err = rh.results_command(capsys, 'list')
    path = os.path.join(home, '.local', 'share', 'tf_cnn_benchmarks', 'results.sqlite')
    assert (status, out) == (4, '') and err == (
        'error: no results database at %s: it is under the home folder %s (HOME), which does '
        'not exist and is not made, so runs do not record there; give --results_db=PATH or '
        'set $TF_CNN_RESULTS_DB\n' % (path, home))
    assert not os.path.exists(home)


def test_dangling_links_and_folders_as_output_paths_say_what_they_are(tmp_path):
    # Before: a dangling --results_db link was found only after the run (recorded under
    # unrecorded/), a dangling --train_dir link said 'File exists', a folder as the database
    # 'not a regular file (a folder or a device)' with no fix but --noresults_db.
    db, train, folder = tmp_path / 'db', tmp_path / 'train', tmp_path / 'dbdir'
    os.symlink(str(tmp_path / 'gone' / 'x.db'), str(db))
    os.symlink(str(tmp_path / 'gone2'), str(train))
    folder.mkdir()
    assert store.check_file(str(db)) == (
        'the results database %s is a symbolic link to %s, which does not exist: restore its '
        'target or give another --results_db=PATH' % (db, tmp_path / 'gone' / 'x.db'))
    assert store.check_file(str(folder)) == (
        'the results database %s is a folder, not a file; give another --results_db=PATH'
        % folder)
    with pytest.raises(params.ParamsError) as raised:
        output_paths.check_output_paths(params.make_params(train_dir=str(train)))
    assert '%s is a symbolic link to %s, which does not exist' % (
        train, tmp_path / 'gone2') in str(raised.value)
    assert not (tmp_path / 'gone').exists() and not (tmp_path / 'gone2').exists()


@pytest.mark.cli
def test_missing_folders_of_output_paths_are_made_and_said_first(tmp_path):
    # The original made them (gfile.MakeDirs); here they were refused with exit status 2:
    # 'only the last folder of a directory flag is made', 'a file flag's folder is not made'.
    train_dir, trace = tmp_path / 'runs' / 'a' / 'train', tmp_path / 'traces' / 't.json'
    done = helpers.run_command(
        '--model=trivial', '--batch_size=2', '--image_size=16', '--num_warmup_batches=1',
        '--num_batches=1', '--train_dir=%s' % train_dir, '--trace_file=%s' % trace,
        '--noresults_db')
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:2] == [
        'Made the missing folders %s, %s for --train_dir=%s' % (
            tmp_path / 'runs', tmp_path / 'runs' / 'a', train_dir),
        'Made the missing folder %s for --trace_file=%s' % (tmp_path / 'traces', trace)]
    assert os.path.isfile(trace) and os.path.isfile(train_dir / 'checkpoint')
