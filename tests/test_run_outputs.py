"""Each output of a finished run is written whatever happens to the others: a checkpoint that
cannot be saved (a full disk) still leaves the results JSON and the database record, a trace
or results JSON that cannot be written still leaves the record; the error line says which
were written and which not (lifecycle/phase_runner.py), and a failed save leaves no
`.tempstate` file (lifecycle/checkpoint_temporaries.py)."""

from __future__ import annotations

import errno
import json
import os
import resource
import sqlite3
import subprocess
import sys

import pytest
import tensorflow as tf

from tf_cnn_benchmarks import cnn_util
from tf_cnn_benchmarks.lifecycle import checkpoint_temporaries, profiling, results_log

import helpers

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOT_ALL = 'error: the run finished, but not all of its outputs were written. '


def _runs(db) -> int:
    return sqlite3.connect(db).execute('SELECT COUNT(*) FROM runs').fetchone()[0]


def test_a_failed_save_removes_its_temporary_files(tmp_path):
    (tmp_path / 'model.ckpt-5.index').write_text('a complete checkpoint')
    (tmp_path / 'model.ckpt-10.data-00000-of-00001.tempstate123').write_bytes(b'x' * 1000)
    error = tf.errors.ResourceExhaustedError(None, None, (
        "Graph execution error:\n\nNode: 'save/SaveV2'\n%s/model.ckpt-10.data-00000-of-00001."
        "tempstate123; No space left on device\n\t [[{{node save/SaveV2}}]]" % tmp_path))
    failure = checkpoint_temporaries.save_failure(error, str(tmp_path), 10)
    assert str(failure) == (
        'the checkpoint of global step 10 could not be saved in %s: No space left on device '
        '(writing model.ckpt-10.data-00000-of-00001.tempstate123); its temporary files were '
        'removed' % tmp_path)
    assert sorted(os.listdir(tmp_path)) == ['model.ckpt-5.index']


def _file_size_limit(limit_bytes: int):
    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))


@pytest.mark.cli
def test_a_checkpoint_that_cannot_be_saved_keeps_the_results_and_the_record(tmp_path):
    # The operator's trial: --train_dir on a full disk. Before: `total images/sec` printed,
    # then `error: no space left on device while writing an output (...tempstate...)`; no
    # results JSON and no database record, though both places had space. Here every file of
    # the process may hold 1 MB (RLIMIT_FSIZE: its writes beyond fail with EFBIG, 'File too
    # large'; Python ignores SIGXFSZ): the trivial model's 16 MB checkpoint cannot be written,
    # the JSON and the record can.
    train_dir, log_dir, db = tmp_path / 'td', tmp_path / 'bl', tmp_path / 'r.sqlite'
    env = {k: v for k, v in os.environ.items() if k != 'TF_CPP_MIN_LOG_LEVEL'}
    proc = subprocess.run(
        [sys.executable, os.path.join(REPO, 'tf_cnn_benchmarks.py'), '--model=trivial',
         '--batch_size=2', '--image_size=16', '--num_batches=2', '--num_warmup_batches=0',
         '--train_dir=%s' % train_dir, '--benchmark_log_dir=%s' % log_dir,
         '--results_db=%s' % db], capture_output=True, text=True, timeout=300, cwd=REPO,
        env=env, preexec_fn=_file_size_limit(1 << 20))
    assert proc.returncode == 1, proc.stderr
    assert 'Traceback' not in proc.stderr and 'total images/sec' in proc.stdout
    [line] = [x for x in proc.stderr.splitlines() if x.startswith('error:')]
    [results] = list(log_dir.iterdir())
    assert line == (
        NOT_ALL + 'Not written: the checkpoint (--train_dir): the checkpoint of global step 2 '
        'could not be saved in %s: File too large (writing %s); its temporary files were '
        'removed; raise the process\'s file-size limit (`ulimit -f`; now 1048576 '
        'bytes). Written: the results JSON %s, the record in the results database %s (run 1).'
        % (train_dir, line.split('(writing ')[1].split(')')[0], results, db))
    assert json.loads(results.read_text())['checkpoint_path'] is None
    assert _runs(db) == 1
    # No .tempstate left: the run made the folder and left it empty, so it is gone.
    assert not train_dir.exists() or not [n for n in os.listdir(train_dir) if 'tempstate' in n]


def test_a_trace_and_a_results_json_that_cannot_be_written_keep_the_others(tmp_path,
                                                                          monkeypatch):
    # Before: `error: cannot write .../trace.json: No space left on device`, exit 1, and the
    # database record (and, for the trace, the results JSON) lost; no fix in the line.
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    real_write = profiling._write
    monkeypatch.setattr(profiling, '_write', lambda path, data: (
        profiling.write_failed(path, full) if path.endswith('trace.json')
        else real_write(path, data)))
    monkeypatch.setattr(results_log, '_write_local', lambda path, text: (
        _raise(cnn_util.BenchmarkError('cannot write %s: %s' % (path, full.strerror)))))
    train_dir, log_dir, db = tmp_path / 'td', tmp_path / 'bl', tmp_path / 'r.sqlite'
    trace = tmp_path / 'trace.json'
    proc = helpers.run_command(
        '--model=trivial', '--batch_size=2', '--image_size=16', '--num_batches=2',
        '--num_warmup_batches=1', '--train_dir=%s' % train_dir, '--trace_file=%s' % trace,
        '--benchmark_log_dir=%s' % log_dir, '--results_db=%s' % db)
    assert proc.returncode == 1
    line = proc.stderr.splitlines()[-1]
    json_path = line.split('results JSON (--benchmark_log_dir): cannot write ')[1].split(':')[0]
    assert os.path.dirname(json_path) == str(log_dir)
    assert line == (
        NOT_ALL + 'Not written: the trace (--trace_file): cannot write %s: No space left on '
        'device; free space there, or give another --trace_file. Not written: the results '
        'JSON (--benchmark_log_dir): cannot write %s: No space left on device; free space '
        'there, or give another --benchmark_log_dir. Written: the checkpoint %s, the record in '
        'the results database %s (run 1).' % (trace, json_path, train_dir / 'model.ckpt-3', db))
    assert not trace.exists()
    assert not log_dir.exists()  # the folder the JSON's write made is removed with it
    assert _runs(db) == 1


def _raise(error):
    raise error
