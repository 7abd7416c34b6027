"""The calibration record's read-modify-write under a lock (hardware/record_file.py): figures
stored by processes at once are all kept."""

from __future__ import annotations

import json
import multiprocessing
import os

import pytest

from tf_cnn_benchmarks.hardware import calibration, record_file

import checkout
import helpers

PER_PROCESS = 200


def test_two_processes_storing_at_once_keep_every_figure(tmp_path):
    # Before: each store read the record, added its entry and renamed its copy over it; the
    # other process's entries stored in between were lost (226 of 400 kept).
    path = str(tmp_path / 'calibration.json')
    calls = [(path, [helpers.measurement(float(i), key='p%d|k%03d' % (p, i))])
             for i in range(PER_PROCESS) for p in range(2)]
    # spawn: the children load this checkout (checkout.load, not an installed copy) and import
    # only the record's module (no TensorFlow, no forked threads); chunks of one call
    # alternate the two workers, so their read-modify-writes interleave.
    with multiprocessing.get_context('spawn').Pool(2, initializer=checkout.load) as pool:
        written = pool.starmap(calibration.store, calls, chunksize=1)
    assert written == [True] * len(calls)
    entries = json.load(open(path))['entries']
    assert len(entries) == 2 * PER_PROCESS
    assert (entries['p0|k000']['value'], entries['p1|k199']['value']) == (0.0, 199.0)
    assert sorted(os.listdir(tmp_path)) == ['calibration.json', 'calibration.json.lock']


def test_a_lock_held_past_its_wait_keeps_nothing(tmp_path, monkeypatch):
    # A writer that cannot get the lock gives up (its run uses the figure, not kept), as on a
    # folder it cannot write; the record stays as it was.
    path = str(tmp_path / 'calibration.json')
    assert calibration.store(path, [helpers.measurement(1.0, key='a')])
    monkeypatch.setattr(record_file, 'LOCK_WAIT_SECS', 0.0)
    with record_file.locked(path):  # another open file: flock(2) locks it out as a process
        with pytest.raises(OSError, match='stayed locked by another process'):
            with record_file.locked(path):
                pass
        assert calibration.store(path, [helpers.measurement(2.0, key='b')]) is False
    assert list(json.load(open(path))['entries']) == ['a']
