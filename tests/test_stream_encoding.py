"""A stdout or stderr whose encoding cannot write a character the command prints
(PYTHONIOENCODING=ascii: a non-ASCII --train_dir, a label 'café', the sweep report's '±')
gets it as a backslash escape, never a UnicodeEncodeError (runtime/output_streams.py, installed
by every command's start: console.py)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap

import pytest

from tf_cnn_benchmarks.runtime import output_streams

import results_helpers

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(REPO, 'tests')


class StrictAscii(io.StringIO):
    """A text stream that raises as an ASCII TextIOWrapper with errors='strict' does, and
    cannot be reconfigured."""

    encoding = 'ascii'

    def write(self, text):
        text.encode('ascii')  # UnicodeEncodeError before anything is written
        return super().write(text)


def test_escaped_leaves_what_fits_and_escapes_the_rest():
    assert output_streams.escaped('café ± 12', 'ascii') == 'caf\\xe9 \\xb1 12'
    assert output_streams.escaped('café', 'utf-8') == 'café'
    assert output_streams.escaped('café ±', 'latin-1') == 'café ±'  # both are latin-1


def test_a_stream_that_cannot_be_reconfigured_is_escaped_by_the_guard():
    # Before: UnicodeEncodeError out of GuardedStream.write (the trial's traceback).
    stream = output_streams.GuardedStream(StrictAscii(), 1, 'stdout')
    print('Saved checkpoint /tmp/td é/model.ckpt-7', file=stream, flush=True)
    assert stream.inner.getvalue() == 'Saved checkpoint /tmp/td \\xe9/model.ckpt-7\n'
    assert stream.reason is None and stream.lost_lines == 0  # escaped, not lost
    assert stream.errors == 'backslashreplace'


def test_pythons_own_strict_stream_is_reconfigured_to_escape():
    raw = io.BytesIO()
    wrapper = io.TextIOWrapper(raw, encoding='ascii', errors='strict', write_through=True)
    assert output_streams._escaping(wrapper) is wrapper
    assert wrapper.errors == 'backslashreplace'
    wrapper.write('± café\n')
    assert raw.getvalue() == b'\\xb1 caf\\xe9\n'


def _ascii_env() -> dict:
    env = {k: v for k, v in os.environ.items() if k != 'TF_CPP_MIN_LOG_LEVEL'}
    env['PYTHONIOENCODING'] = 'ascii'
    return env


@pytest.mark.cli
def test_a_run_under_an_ascii_stdout_with_a_non_ascii_train_dir_writes_everything(tmp_path):
    # The trial: exit 1 and a UnicodeEncodeError from 'Saved checkpoint ...é...', after the
    # training, so the results JSON was never written.
    train_dir, log_dir = tmp_path / 'td é', tmp_path / 'bl'
    proc = subprocess.run(
        [sys.executable, os.path.join(REPO, 'tf_cnn_benchmarks.py'), '--model=trivial',
         '--batch_size=2', '--image_size=16', '--num_batches=2', '--num_warmup_batches=1',
         '--noresults_db', '--train_dir=%s' % train_dir, '--benchmark_log_dir=%s' % log_dir],
        capture_output=True, timeout=300, cwd=REPO, env=_ascii_env())
    stderr = proc.stderr.decode('ascii')  # every byte ASCII: escaped, not raw UTF-8
    assert proc.returncode == 0, stderr
    assert 'Traceback' not in stderr
    stdout = proc.stdout.decode('ascii')
    assert 'Saved checkpoint %s' % str(train_dir).replace('é', '\\xe9') in stdout
    [results] = list(log_dir.iterdir())
    result = json.loads(results.read_text())
    assert result['num_steps'] == 2 and result['checkpoint_path'].startswith(str(train_dir))


_RESULTS_LIST = textwrap.dedent('''
    import sys
    sys.path.insert(0, {tests!r})
    import checkout
    checkout.load()
    from tf_cnn_benchmarks import console
    sys.argv = ['tf_cnn_results', 'list', '--results_db={db}']
    console.tf_cnn_results()
''')


@pytest.mark.cli
def test_a_tool_under_an_ascii_stdout_lists_a_non_ascii_label_escaped(tmp_path):
    # The trial: `PYTHONIOENCODING=ascii tf_cnn_results list` with a run labelled 'café ü':
    # exit 1 and UnicodeEncodeError ... '\xe9'.
    db = str(tmp_path / 'lab.sqlite')
    results_helpers.fill(db, [results_helpers.result(100.0, label='café ü')])
    proc = subprocess.run([sys.executable, '-c', _RESULTS_LIST.format(tests=TESTS, db=db)],
                          capture_output=True, timeout=120, cwd=REPO, env=_ascii_env())
    assert (proc.returncode, proc.stderr) == (0, b'')
    assert '| caf\\xe9 \\xfc |' in proc.stdout.decode('ascii')
