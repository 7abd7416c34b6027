"""The paths and commands a run prints for later use: commands quoted for a shell, the paths
the program makes absolute and normalised, the run's working folder in its JSON, the last
line of a run its default database cannot record, and paths of undecodable bytes shown as
their bytes (an ASCII locale without UTF-8 mode), never as surrogate escapes."""

from __future__ import annotations

import json
import os
import shlex

import pytest

from tf_cnn_benchmarks import cnn_util, params
from tf_cnn_benchmarks.history import store
from tf_cnn_benchmarks.input_data import dataset_info
from tf_cnn_benchmarks.lifecycle import results_db
from tf_cnn_benchmarks.params import configs, flagfile_lines

import helpers

TINY = ['--model=trivial', '--batch_size=2', '--image_size=16', '--num_batches=1',
        '--num_warmup_batches=0']


def _command(line: str) -> list[str]:
    """The words of the command in a `Recorded as run N in DB (COMMAND)` line, as a shell
    splits them."""
    return shlex.split(line[line.index('(tf_cnn_results ') + 1:-1])


def test_suggested_commands_quote_their_paths(monkeypatch):
    # Before: `tf_cnn_results show 1 --results_db=../ré sults.db`, which a shell splits.
    line = results_db.recorded_line('/d/ré sults.db', 1)
    assert line == ("Recorded as run 1 in /d/ré sults.db (tf_cnn_results show 1 "
                    "--results_db='/d/ré sults.db')")
    assert _command(line) == ['tf_cnn_results', 'show', '1', '--results_db=/d/ré sults.db']
    assert results_db.ingest_command('/k/a b.json', '/o/r(1).sqlite') == (
        "`tf_cnn_results ingest '/k/a b.json' --results_db='/o/r(1).sqlite'`")
    assert results_db.ingest_command('/k/x.json', '/o/r.sqlite') == (  # nothing to quote
        '`tf_cnn_results ingest /k/x.json --results_db=/o/r.sqlite`')
    monkeypatch.setenv('TF_CNN_RESULTS_DB', '/w/rel é.db')  # named by the variable: named
    assert _command(results_db.recorded_line('/w/rel é.db', 2))[-1] == '--results_db=/w/rel é.db'
    assert cnn_util.shell_arg('TF_CNN_RESULTS_DB=rel é.db') == "TF_CNN_RESULTS_DB='rel é.db'"


def test_a_nested_flagfiles_fix_is_a_line_as_absl_reads_it(tmp_path, monkeypatch):
    # A flagfile's line is read without a shell: the fix names the path unquoted, and says so.
    folder = tmp_path / 'fl 日本'
    folder.mkdir()
    (folder / 'outer.txt').write_text('--flagfile=inner é.txt\n')
    (folder / 'inner é.txt').write_text('--batch_size=2\n')
    monkeypatch.chdir(tmp_path)
    with pytest.raises(flagfile_lines.FlagfileError) as e:
        flagfile_lines.expand_flagfiles(['--flagfile=%s/outer.txt' % folder])
    assert str(e.value).endswith(
        "it is beside outer.txt: make the line --flagfile=%s/inner é.txt (unquoted: absl reads a "
        "flagfile's lines as they are, no shell)" % folder)


def test_a_run_prints_absolute_paths_and_records_its_working_folder(tmp_path, monkeypatch):
    # Before, from cwd/sub: 'Results written to ../../logs//./x/../tf_cnn_...json' and
    # 'Recorded as run 1 in ../ré sults.db (tf_cnn_results show 1 --results_db=../ré sults.db)',
    # neither usable from another folder, and results_file '../../logs//./x/../tf_cnn_...json'.
    work = tmp_path / 'cwd' / 'sub'
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    run = helpers.run_command(*TINY, '--results_db=../ré sults.db',
                              '--benchmark_log_dir=../../logs//./x/..')
    assert run.returncode == 0, run.stderr
    written, recorded = run.stdout.splitlines()[-2:]
    logs = str(tmp_path / 'logs')
    assert written.startswith('Results written to %s/tf_cnn_benchmarks_trivial_' % logs)
    database = str(tmp_path / 'cwd' / 'ré sults.db')
    assert recorded == ("Recorded as run 1 in %s (tf_cnn_results show 1 --results_db='%s')"
                        % (database, database))
    (name,) = [n for n in os.listdir(logs) if n.endswith('.json')]
    with open(os.path.join(logs, name), encoding='utf-8') as f:
        result = json.load(f)
    assert result['results_file'] == os.path.join(logs, name) == written.split()[-1]
    assert result['working_dir'] == str(work)
    # The user's flags stay as given (the run's flags); working_dir reads them back.
    assert result['given_flags']['results_db'] == '../ré sults.db'
    assert os.path.normpath(os.path.join(result['working_dir'],
                                         result['given_flags']['results_db'])) == database


def test_a_run_its_default_database_cannot_record_ends_saying_so(tmp_path, monkeypatch):
    # Before: the one warning was the first of ~40 lines, and nothing at the end said so.
    home = str(tmp_path / 'nonexistent')
    monkeypatch.setenv('HOME', home)
    for name in ('XDG_DATA_HOME', 'TF_CNN_RESULTS_DB'):
        monkeypatch.delenv(name, raising=False)
    run = helpers.run_command(*TINY)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[-1] == (
        'Not recorded in a results database: its default place is under the home folder %s '
        '(HOME), which does not exist and is not made; give --results_db=PATH to record runs '
        '(--noresults_db: record nothing)' % home)
    assert store.run_path(None) is None and not os.path.exists(home)


def test_no_line_for_a_run_told_to_record_nothing(capsys):
    # --noresults_db: the run says nothing of the database, as before.
    result = {'images_per_sec': 10.0, 'num_steps': 1}
    results_db.RecordHook(None).report(result)
    assert capsys.readouterr().out == ''
    results_db.RecordHook(None, unused='is under the home folder /h (HOME), which does not '
                                       'exist and is not made').report(result)
    assert capsys.readouterr().out.startswith('Not recorded in a results database: its default '
                                              'place is under the home folder /h (HOME)')


def test_undecodable_bytes_of_a_path_show_as_bytes_not_surrogates(tmp_path, capsys):
    # LC_ALL=C PYTHONCOERCECLOCALE=0 PYTHONUTF8=0: '/tmp/nö' arrives as '/tmp/n\udcc3\udcb6'.
    # Before: '--data_dir /tmp/n\udcc3\udcb6 does not exist', 'fl \udce6\udc97...'.
    missing = str(tmp_path / 'n\udcc3\udcb6')
    with pytest.raises(cnn_util.DataError) as e:
        dataset_info.list_data_dir(missing)
    assert str(e.value).startswith('--data_dir %s/n\\xc3\\xb6 does not exist: ' % tmp_path)
    with pytest.raises(flagfile_lines.FlagfileError) as e:
        flagfile_lines.expand_flagfiles(['--flagfile=%s/fl \udce6\udc97\udca5/x é.txt' % tmp_path])
    assert str(e.value).startswith('--flagfile=%s/fl \\xe6\\x97\\xa5/x é.txt cannot be read: '
                                   % tmp_path)
    with pytest.raises(params.ParamsError, match=r'--config=/a\\xff: no such file'):
        configs.path_of('/a\udcff')
    cnn_util.warn('--train_dir %s is slow' % missing)
    assert '\\xc3\\xb6 is slow' in capsys.readouterr().err
    assert cnn_util.shown_name('plain é') == 'plain é'  # text that is no bytes stays
