"""Text that is not UTF-8 and the results database: a `--label="x$(printf '\\xff')y"` (Python
reads the byte as the lone surrogate '\\udcff', PEP 383) used to end a finished run in a
traceback from SQLite's bind, its result lost. Now such a flag value is a usage error before
TensorFlow loads (params/text_values.py), any failure to write the row falls back to
unrecorded/ (lifecycle/results_db.py), and text an ingest brings in is stored escaped
(history/store.py bindable)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tf_cnn_benchmarks import params
from tf_cnn_benchmarks.history import ingest, store
from tf_cnn_benchmarks.lifecycle import results_db

import helpers
import results_helpers as rh

TESTS = os.path.dirname(os.path.abspath(__file__))
BAD = 'x\udcffy'  # the argument b'x\xffy' as Python reads it


@pytest.mark.parametrize('name, value', [('label', BAD), ('results_db', '/tmp/' + BAD),
                                         ('benchmark_log_dir', BAD), ('train_dir', BAD),
                                         ('eval_during_training_at_specified_steps', ['1', BAD])])
def test_a_flag_value_that_is_not_utf8_is_a_usage_error(name, value):
    with pytest.raises(params.ParamsError) as raised:
        params.validate_params(params.make_params(**{name: value}))
    text = str(raised.value)
    assert text.startswith('--%s is not UTF-8 text (received: ' % name), text
    assert "\\xffy'" in text and 'give the value in UTF-8' in text
    text.encode('utf-8')  # the message itself prints anywhere


def test_a_label_that_is_not_utf8_stops_the_command_before_tensorflow_loads(tmp_path):
    code = textwrap.dedent('''
        import sys
        sys.path.insert(0, %r)
        import checkout
        checkout.load()
        from tf_cnn_benchmarks import cli
        status = cli.main(['tf_cnn_benchmarks', '--model=trivial', '--num_batches=2',
                           '--results_db=%s', '--label=x\\udcffy'])
        print('status', status, 'tensorflow' in sys.modules)
    ''' % (TESTS, tmp_path / 'r.sqlite'))
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                          timeout=120)
    assert proc.stdout.splitlines()[-1] == 'status 2 False', proc.stdout + proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "error: --label is not UTF-8 text (received: b'x\\xffy')"), proc.stderr
    assert not os.path.exists(tmp_path / 'r.sqlite')


def test_the_command_refuses_the_label_with_exit_status_2():
    got = helpers.run_command('--model=trivial', '--num_batches=2', '--noresults_db',
                              '--label=' + BAD)
    assert got.returncode == 2 and got.stdout == ''
    assert got.stderr.count('\n') == 1 and got.stderr.startswith('error: --label is not UTF-8')


def test_any_failure_to_write_the_row_keeps_the_result_in_unrecorded(tmp_path, capsys,
                                                                     monkeypatch):
    # Before, only StoreError and RecordError fell back: a UnicodeEncodeError from SQLite's
    # bind (or any other error) ended the finished run in a traceback, its result lost.
    db = str(tmp_path / 'results.sqlite')

    def broken(path, result, source='run'):
        raise UnicodeEncodeError('utf-8', BAD, 1, 2, 'surrogates not allowed')

    monkeypatch.setattr(store, 'record_result', broken)
    assert results_db.record(db, rh.result(321.0)) is None
    err = capsys.readouterr().err
    kept = str(tmp_path / 'unrecorded')
    assert err.startswith('warning: the run was not recorded in the results database: '
                          "UnicodeEncodeError: 'utf-8' codec can't encode"), err
    assert '`tf_cnn_results ingest %s --results_db=%s` records them' % (kept, db) in err
    (name,) = os.listdir(kept)
    assert json.load(open(os.path.join(kept, name)))['images_per_sec'] == 321.0


def test_text_that_is_not_utf8_is_stored_escaped(tmp_path):
    # A run refuses such a label; an ingested JSON may still hold one (its '\udcff' escape),
    # and a file name with a byte that is not UTF-8 becomes the row's source.
    db = str(tmp_path / 'results.sqlite')
    assert rh.fill(db, [rh.result(321.0, label=BAD, host='node-' + BAD)]) == [1]
    folder = tmp_path / 'in'
    folder.mkdir()
    path = os.path.join(str(folder), 'tf_cnn_benchmarks_trivial_%s.json' % BAD)
    with open(path, 'w') as f:
        json.dump(rh.result(123.0, label='\ud800'), f)
    assert ingest.ingest(db, [str(folder)]).added == 1
    with store.opened(db, read_only=True) as conn:
        rows = store.select_runs(conn)
    assert [(r['label'], r['hostname']) for r in rows] == [
        ('x\\xffy', 'node-x\\xffy'), ('\\ud800', 'node-a')]
    assert rows[1]['source'].endswith('tf_cnn_benchmarks_trivial_x\\xffy.json')
    assert store.bindable(3) == 3 and store.bindable('é') == 'é'


def test_tf_cnn_results_reads_a_database_whose_name_is_not_utf8(tmp_path, capsys):
    db = str(tmp_path / ('r%s.sqlite' % BAD))
    rh.fill(db, [rh.result(321.0)])
    status, out, err = rh.results_command(capsys, 'list', '--results_db=' + db)
    assert status == 0 and '321.00' in out, err  # before: a UnicodeEncodeError in the URI


def test_a_filter_that_is_not_utf8_is_a_usage_error(tmp_path, capsys):
    db = str(tmp_path / 'r.sqlite')
    rh.fill(db, [rh.result(321.0)])
    status, out, err = rh.results_command(capsys, 'list', '--results_db=' + db,
                                          '--label=' + BAD)
    assert status == 2 and out == '' and err.startswith(
        "error: --label is not UTF-8 text (received: b'x\\xffy')") and err.count('\n') == 1


def test_utf8_bytes_read_under_an_ascii_locale_are_accepted():
    # LC_ALL=C without UTF-8 mode: the argument 'café' in UTF-8 arrives as 'caf\udcc3\udca9',
    # whose bytes are UTF-8 (accepted: stored as 'café'); b'x\xffy' stays refused.
    code = textwrap.dedent('''
        import sys
        sys.path.insert(0, %r)
        import checkout
        checkout.load()
        from tf_cnn_benchmarks.params import text_values
        from tf_cnn_benchmarks.history import store
        print(sys.getfilesystemencoding())
        print(text_values.problem({'label': 'caf\\udcc3\\udca9'}))
        print(store.bindable('caf\\udcc3\\udca9') == 'caf\\u00e9')
        print(text_values.problem({'label': 'x\\udcffy'}) is not None)
    ''' % TESTS)
    env = dict(os.environ, LC_ALL='C', PYTHONUTF8='0', PYTHONCOERCECLOCALE='0')
    out = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ['ascii', 'None', 'True', 'True']


def test_results_filters_read_under_an_ascii_locale_match_what_a_run_stored(tmp_path, capsys):
    # A user's trial under LC_ALL=C PYTHONUTF8=0: `tf_cnn_results list --label='café±'`
    # (and history, regressions, show --host=é) ended in a traceback from SQLite's bind
    # ("surrogates not allowed"); the run's own --label='café' was recorded as 'café'. The
    # filters' UTF-8 bytes are now that text (params/text_values.py as_text).
    db = str(tmp_path / 'r.sqlite')
    rh.fill(db, [rh.result(321.0, label='café±'), rh.result(123.0, label='x', host='hé')])
    ascii_read = 'caf\udcc3\udca9\udcc2\udcb1'  # the bytes of 'café±', each read as a surrogate
    status, out, err = rh.results_command(capsys, 'list', '--results_db=' + db,
                                          '--label=' + ascii_read)
    assert (status, err) == (0, '') and '321.00' in out and '123.00' not in out
    for command in ('history', 'regressions', 'show'):
        status, out, err = rh.results_command(capsys, command, '--results_db=' + db,
                                              '--host=h\udcc3\udca9')
        assert status in (0, 1) and 'Traceback' not in err and 'bug' not in err, err
        assert '123.00' in out or command == 'regressions', (command, out, err)
    # A bad time shows the value's bytes as the benchmark's messages do (cnn_util.shown_name).
    status, out, err = rh.results_command(capsys, 'list', '--results_db=' + db,
                                          '--since=\udcc3\udca9')
    assert (status, out) == (2, '') and err == (
        'error: --since=\\xc3\\xa9: give a date or time (2026-01-31, 2026-01-31T12:00) or an '
        'age (12h, 7d, 2w)\n')
