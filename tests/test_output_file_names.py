"""Output paths as a new user's trial gave them: a file flag ending in '/' (the separator was
dropped, or the run failed once it had trained), a symbolic link as an output file (the
atomic rename replaced the link), /proc (called a folder another process removes) and loops of
links (called dangling) as output paths, and tf_cnn_results' own output paths."""

from __future__ import annotations

import os

import pytest

from tf_cnn_benchmarks import params
from tf_cnn_benchmarks.hardware import record_file
from tf_cnn_benchmarks.history import store
from tf_cnn_benchmarks.preflight import output_paths
from tf_cnn_benchmarks.runtime import file_systems

import helpers
import results_helpers as rh

needs_proc = pytest.mark.skipif(not os.path.isdir('/proc/self'), reason='needs /proc')


def _refusal(**kwargs) -> str:
    with pytest.raises(params.ParamsError) as raised:
        output_paths.check_output_paths(params.make_params(**kwargs))
    return str(raised.value)


def _loop(tmp_path) -> tuple[str, str]:
    """tmp_path/loopa -> loopb -> loopa; returns (loopa, the words for the loop)."""
    a, b = str(tmp_path / 'loopa'), str(tmp_path / 'loopb')
    os.symlink('loopb', a)
    os.symlink('loopa', b)
    return a, 'a loop of symbolic links (%s -> %s -> %s)' % (a, b, a)


# --- A file flag whose value ends in a path separator names a folder.


@pytest.mark.parametrize('name,example', [
    ('graph_file', 'graph.pbtxt'), ('trace_file', 'trace.json'), ('tfprof_file', 'profile.txt'),
    ('plot_file', 'plot.png'), ('plan_scaling_png', 'scaling.png'),
    ('results_db', 'results.sqlite')])
def test_a_file_flag_ending_in_a_slash_is_refused_with_a_file_name_in_it(tmp_path, name,
                                                                           example):
    # Before: --results_db=.../dbdir/ made an SQLite file `dbdir`, --graph_file=.../g/ a file
    # `g`, --trace_file=.../new/ failed only after the run had trained.
    folder = '%s/new-%s/' % (tmp_path, name)
    assert _refusal(**{name: folder}) == (
        '--%s=%s cannot be written: it names a folder (it ends in /); give a file name in it, '
        'e.g. %s%s' % (name, folder, folder, example))
    assert os.listdir(tmp_path) == []


def test_the_database_variable_ending_in_a_slash_is_refused_and_a_prefix_may_end_so(
        tmp_path, monkeypatch):
    monkeypatch.setenv(store.PATH_VARIABLE, '%s/db/' % tmp_path)
    assert _refusal() == (
        '$%s=%s/db/ cannot be written: it names a folder (it ends in /); give a file name in '
        'it, e.g. %s/db/results.sqlite' % (store.PATH_VARIABLE, tmp_path, tmp_path))
    monkeypatch.delenv(store.PATH_VARIABLE)
    # --partitioned_graph_file_prefix=DIR/ names the partition graphs' folder: accepted.
    output_paths.check_output_paths(params.make_params(
        partitioned_graph_file_prefix='%s/parts/' % tmp_path, results_db=False))


@pytest.mark.cli
def test_the_command_refuses_a_database_folder_before_it_runs(tmp_path):
    done = helpers.run_command('--model=trivial', '--results_db=%s/dbdir/' % tmp_path)
    assert (done.returncode, done.stdout) == (2, '')
    assert done.stderr == (
        'error: --results_db=%s/dbdir/ cannot be written: it names a folder (it ends in /); '
        'give a file name in it, e.g. %s/dbdir/results.sqlite\n' % (tmp_path, tmp_path))
    assert os.listdir(tmp_path) == []


def test_tf_cnn_results_refuses_a_database_or_png_that_names_a_folder(tmp_path, capsys):
    db = str(tmp_path / 'r.sqlite')
    rh.fill(db, [rh.result(321.0)])
    status, out, err = rh.results_command(capsys, 'list', '--results_db=%s/dbdir/' % tmp_path)
    assert (status, out, err) == (2, '', (
        'error: --results_db=%s/dbdir/: it names a folder (it ends in /); give a file name in '
        'it, e.g. %s/dbdir/results.sqlite\n' % (tmp_path, tmp_path)))
    status, out, err = rh.results_command(capsys, 'history', '--results_db=' + db,
                                          '--png=%s/new/' % tmp_path)
    assert (status, out, err) == (2, '', (  # before: the table, then 'Is a directory', 1
        'error: --png=%s/new/: it names a folder (it ends in /); give a file name in it, '
        'e.g. %s/new/history.png\n' % (tmp_path, tmp_path)))
    assert not (tmp_path / 'dbdir').exists() and not (tmp_path / 'new').exists()


# --- A symbolic link given as an output file: its target is written, the link stays.


def _links(tmp_path, name: str) -> tuple[str, str, str, str]:
    """(live link, its target holding 'old', dangling link, its missing target)."""
    real = tmp_path / 'real'
    real.mkdir(exist_ok=True)
    target = real / name
    target.write_text('old')
    live, dangling = tmp_path / ('live-' + name), tmp_path / ('dangling-' + name)
    os.symlink(str(target), str(live))
    os.symlink(str(tmp_path / 'gone' / name), str(dangling))
    return str(live), str(target), str(dangling), str(tmp_path / 'gone' / name)


def _write_json(path):  # a run's JSON (--benchmark_log_dir), the results page
    file_systems.write_local(path, 'new')


def _write_profile(path):  # --trace_file, --tfprof_file, the partition graphs
    from tf_cnn_benchmarks.lifecycle import profiling
    profiling._write(path, b'new')


def _write_record(path):  # the calibration record (TF_CNN_CALIBRATION)
    record_file.replace(path, {'new': 1})


@pytest.mark.parametrize('write', [_write_json, _write_profile, _write_record])
def test_the_write_helpers_write_a_link_s_target_and_keep_the_link(tmp_path, write):
    # Before: the rename over the path replaced a live link by a plain file (the target kept
    # its old text) and a dangling one (its target never made).
    live, target, dangling, gone = _links(tmp_path, 'out')
    (tmp_path / 'gone').mkdir()
    for link, written in ((live, target), (dangling, gone)):
        write(link)
        assert os.path.islink(link) and 'new' in open(written).read(), link
    for folder in ('real', 'gone'):  # no temporary file left beside the targets
        assert os.listdir(tmp_path / folder) == ['out']


def test_the_graph_file_through_a_link_writes_the_target(tmp_path):
    import tensorflow as tf

    from tf_cnn_benchmarks.lifecycle import profiling
    live, target, dangling, gone = _links(tmp_path, 'g.pbtxt')
    graph = tf.Graph()
    with graph.as_default():
        tf.constant(1.0, name='one')
    for link, written in ((live, target), (dangling, gone)):
        profiling.write_graph(graph, link)
        assert os.path.islink(link) and 'name: "one"' in open(written).read()


def test_the_usage_check_makes_and_probes_a_link_s_target_folder(tmp_path):
    live, target, dangling, gone = _links(tmp_path, 't.json')
    p = params.make_params(trace_file=dangling, graph_file=live, results_db=False)
    output_paths.check_output_paths(p)
    assert output_paths.folders_to_make(p) == [
        ('--trace_file=%s' % dangling, os.path.dirname(gone))]
    if os.path.isdir('/proc/self'):  # the link's folder is writable, its target's is not
        os.symlink('/proc/t.json', str(tmp_path / 'in-proc'))
        assert 'the folder /proc exists but cannot hold files' in _refusal(
            trace_file=str(tmp_path / 'in-proc'), results_db=False)


# --- The causes named in the error lines.


@needs_proc
@pytest.mark.parametrize('name,value', [
    ('graph_file', '/proc/g.pb'), ('trace_file', '/proc/t.json'),
    ('tfprof_file', '/proc/p.txt'), ('plot_file', '/proc/p.png'),
    ('partitioned_graph_file_prefix', '/proc/g.pbtxt'), ('graph_file', 'g.pb')])
def test_a_file_in_proc_is_a_special_file_system_not_a_vanished_folder(
        name, value, monkeypatch):
    # Before: 'it was removed as soon as it was made, 5 times (another process removes it)'.
    monkeypatch.chdir('/proc')  # the relative name too
    assert _refusal(**{name: value}) == (
        '--%s=%s cannot be written: the folder /proc exists but cannot hold files (a special '
        'file system: making a file there fails: No such file or directory). Choose another '
        'path.' % (name, value))


@pytest.mark.parametrize('name', ['train_dir', 'benchmark_log_dir', 'eval_dir', 'graph_file'])
def test_a_loop_of_links_as_an_output_path_is_named_a_loop(tmp_path, name):
    # Before: 'loopa is a symbolic link to loopb, which does not exist' (loopb exists).
    a, loop = _loop(tmp_path)
    problem = 'it is %s; give a file name that leads to a file' if name == 'graph_file' else (
        a + ' is %s')
    assert _refusal(**{name: a}) == '--%s=%s cannot be written: %s. Choose another path.' % (
        name, a, problem % loop)


def test_a_loop_of_links_as_the_database_is_named_a_loop(tmp_path, capsys):
    a, loop = _loop(tmp_path)
    assert _refusal(results_db=a) == (
        '--results_db: the results database %s is %s; give another --results_db=PATH (or '
        '--noresults_db to record nothing)' % (a, loop))
    status, _, err = rh.results_command(capsys, 'list', '--results_db=' + a)
    assert (status, err) == (4, 'error: no results database at %s: it is %s; give another '
                                '--results_db=PATH\n' % (a, loop))


def test_tf_cnn_results_names_a_loop_and_a_file_on_the_way(tmp_path, capsys):
    # Before: ingest 'does not exist', html 'cannot write ...: File exists' (exit 1), and a
    # --png under a file 'its folder ... does not exist'.
    a, loop = _loop(tmp_path)
    db = str(tmp_path / 'r.sqlite')
    rh.fill(db, [rh.result(321.0)])
    status, _, err = rh.results_command(capsys, 'ingest', a, '--results_db=' + db)
    assert (status, err) == (2, 'error: ingest: %s is %s\n' % (a, loop))
    status, _, err = rh.results_command(capsys, 'html', a, '--results_db=' + db)
    assert (status, err) == (2, 'error: html OUT_DIR %s: it is %s; give a folder this user can '
                                'write (made when missing) for its index.html\n' % (a, loop))
    (tmp_path / 'afile').write_text('')
    png = str(tmp_path / 'afile' / 'x.png')
    status, out, err = rh.results_command(capsys, 'history', '--results_db=' + db, '--png=' + png)
    assert (status, out, err) == (2, '', 'error: --png=%s: %s is a file, not a folder; give a '
                                         'file name in a folder this user can write\n'
                                  % (png, tmp_path / 'afile'))


def test_the_results_page_through_a_link_writes_the_target(tmp_path):
    from tf_cnn_benchmarks.history import page
    db = str(tmp_path / 'r.sqlite')
    rh.fill(db, [rh.result(321.0)])
    with store.opened(db) as conn:
        rows = store.select_runs(conn)
    live, target, _, _ = _links(tmp_path, 'page.html')
    site = tmp_path / 'site'
    site.mkdir()
    os.symlink(live, str(site / 'index.html'))  # a link to a link
    assert page.write_page(str(site), rows, db, 5.0) == str(site / 'index.html')
    assert os.path.islink(site / 'index.html') and '<html' in open(target).read()
    assert os.listdir(tmp_path / 'real') == ['page.html']


def test_a_plot_that_fails_through_a_link_removes_the_target_not_the_link(tmp_path,
                                                                          monkeypatch):
    # Before: the partial file's clean-up removed the link and left the target half written.
    import errno

    from matplotlib import figure

    from tf_cnn_benchmarks import cnn_util
    from tf_cnn_benchmarks.lifecycle import results_log

    def full_disk(self, path, **kwargs):
        open(path, 'w').write('half')
        raise OSError(errno.ENOSPC, 'No space left on device')

    monkeypatch.setattr(figure.Figure, 'savefig', full_disk)
    live, target, _, _ = _links(tmp_path, 'plot.png')
    result = {'model': 'trivial', 'steps': [{'step': 1, 'images_per_sec': 1.0, 'loss': 1.0}]}
    with pytest.raises(cnn_util.BenchmarkError, match='No space left on device'):
        results_log.write_plot(result, live)
    assert os.path.islink(live) and not os.path.exists(target)
