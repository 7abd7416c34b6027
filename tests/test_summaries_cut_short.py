"""TensorBoard summaries cut short by a full disk: the events file ends inside a record while
TensorFlow's writer says nothing. Before, the run's line listed 'Written: the TensorBoard
summaries'; now the summaries are 'Not written: ... partly written (from global step N on,
the records are missing)' (lifecycle/summaries.py SummaryHook.cut_short). The tests cut a real
events file the run wrote."""

from __future__ import annotations

import os
import struct

import pytest
import tensorflow as tf

import helpers

tf1 = tf.compat.v1


def _record_offsets(path: str) -> list[int]:
    """The byte offset of each TFRecord record of `path`."""
    offsets, offset, size = [], 0, os.path.getsize(path)
    with open(path, 'rb') as f:
        while offset < size:
            f.seek(offset)
            (length,) = struct.unpack('<Q', f.read(8))
            offsets.append(offset)
            offset += 16 + length
    return offsets


def _cut_after_close(monkeypatch, records_from_end: int):
    """Closing the summaries' writer then cuts its events file inside its last
    `records_from_end`-th record (1: the last one), as a full disk does."""
    real = tf1.summary.FileWriter.close

    def close(self):
        real(self)
        folder = self.get_logdir()
        [name] = [n for n in os.listdir(folder) if n.startswith('events.out.tfevents.')]
        path = os.path.join(folder, name)
        start = _record_offsets(path)[-records_from_end]
        os.truncate(path, start + 14)  # its header and 2 bytes of its data
    monkeypatch.setattr(tf1.summary.FileWriter, 'close', close)


@pytest.mark.parametrize('records_from_end, step', [(1, 4), (2, 3)])
def test_a_cut_events_file_lists_the_summaries_as_not_written(tmp_path, monkeypatch,
                                                             records_from_end, step):
    _cut_after_close(monkeypatch, records_from_end)
    train_dir, db = tmp_path / 'td', tmp_path / 'r.sqlite'
    proc = helpers.run_command(
        '--model=trivial', '--batch_size=2', '--image_size=16', '--num_batches=4',
        '--num_warmup_batches=0', '--train_dir=%s' % train_dir, '--summary_verbosity=1',
        '--save_summaries_steps=1', '--results_db=%s' % db)
    assert proc.returncode == 1, proc.stderr
    [line] = [x for x in proc.stderr.splitlines() if x.startswith('error:')]
    assert ('Not written: the TensorBoard summaries (--train_dir): partly written (from global '
            'step %d on, the records are missing): the events file %s/events.out.tfevents.'
            % (step, train_dir)) in line
    assert 'is truncated: record ' in line
    written = line.split('Written: ')[1]
    assert 'TensorBoard' not in written and 'the checkpoint %s' % (train_dir / 'model.ckpt-4') \
        in written
    assert 'TensorBoard summaries in' not in proc.stdout


def test_a_whole_events_file_is_written(tmp_path):
    train_dir = tmp_path / 'td'
    proc = helpers.run_command(
        '--model=trivial', '--batch_size=2', '--image_size=16', '--num_batches=2',
        '--num_warmup_batches=0', '--train_dir=%s' % train_dir, '--summary_verbosity=1',
        '--save_summaries_steps=1', '--noresults_db')
    assert proc.returncode == 0, proc.stderr
    assert 'TensorBoard summaries in %s' % train_dir in proc.stdout.splitlines()
