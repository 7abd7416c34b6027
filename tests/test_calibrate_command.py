"""`--calibrate` on a busy host: every figure it measured (the graph choices, made while the
step's plan is built, and the CPU peak) is counted in its report, and the header does not tell
a --calibrate run to add --calibrate. The host's load and the measurements are injected (a fake
meter, fake probes), so the test holds on any CPU and under any load."""

from __future__ import annotations

import datetime
import os
import re

import pytest

from tf_cnn_benchmarks.graph import graph_choices
from tf_cnn_benchmarks.hardware import calibration, cpu_peak

import helpers


@pytest.mark.cli
def test_a_busy_calibration_counts_every_figure_it_could_not_store(calibration_record,
                                                                   monkeypatch):
    monkeypatch.setattr(calibration, 'new_meter', lambda cores: helpers.FakeMeter(1.5, cores))

    def measure(shapes, intra, inter, spreads):
        # The 1x1 convolutions 0.5x as MatMuls (a spread of 0.1 between the passes: 20% of
        # it), 0.6x with a MatMul filter gradient, the memory-bound forms 1.2x: the busy report
        # shows what it found (prec58 item 3).
        got = {(s, form): {'matmul': 0.5, 'filter_matmul': 0.6}.get(form, 1.2)
               for s in shapes for form in graph_choices.forms_of(s)}
        spreads.update({key: 0.1 if f == 0.5 else 0.0 for key, f in got.items()})
        return got
    monkeypatch.setattr(graph_choices, 'measure', measure)
    monkeypatch.setattr(cpu_peak, 'measure', lambda dtype, threads: (
        {'flops_per_sec': 1e11, 'kernel': 'matmul'}, 0.02))
    got = helpers.run_command('--calibrate', '--model=resnet50', '--image_size=32',
                              '--batch_size=2', '--device=cpu', '--num_intra_threads=2')
    lines = (got.stdout + got.stderr).splitlines()
    assert got.returncode == 3, got.stdout + got.stderr
    not_stored = [x for x in lines if x.startswith('calibration: NOT stored')]
    assert len(not_stored) == 2, lines
    assert any(' graph choice' in x for x in not_stored)
    assert any(' cpu peak|float32|2 threads: 100.0 GFLOP/s' in x for x in not_stored)
    assert got.stdout.splitlines()[-1] == (
        'calibration: 2 of 2 figures not stored: the host was busy; run '
        '`tf_cnn_benchmarks --calibrate` again when it is quiet')
    # The choices' figures, not stored: their range and count below 0.90x, and the spread
    # the passes measured (it read 'spread 0%' whatever they measured: a placeholder).
    [choice] = [x for x in not_stored if ' graph choice' in x]
    assert ': 39 factors 0.50x-1.20x, 30 below 0.90x; spread up to 20%,' in choice, choice
    # The precision block keeps the header's indent (it lost it: `line.strip()`), and says
    # what the busy measurement would change; the table of its figures follows.
    block = lines[lines.index('Precision:   float32 compute, float32 variables') + 1]
    # resnet50's 36 1x1 convolutions of 85 places, built as MatMuls where quiet.
    assert block == ('             graph choices: none (measured on a busy host, not stored; '
                     'would change 36 of 85 places)')
    title = [i for i, x in enumerate(lines)
             if x.startswith('graph choices measured on a busy host, not stored or used')]
    assert title and 'on: what it would build' in ' '.join(lines[title[0]:title[0] + 2])
    assert any(x.startswith('  conv1x1_matmul on 2x8x8x64->256 0.50x (4 places), 2x8x8x64->64 '
                            '0.50x, ') for x in lines), lines
    assert not any('add --calibrate' in x for x in lines)
    # Before: 'the utilisation line will divide by nothing: ...'.
    assert any(x.startswith('calibration: there will be no utilisation line: no quiet '
                            'calibration of the float32 peak') for x in lines), lines
    assert not any('divide by nothing' in x for x in lines)


@pytest.mark.cli
def test_calibrate_says_what_it_calibrates_before_it_measures_and_counts_in_one_unit(
        calibration_record, monkeypatch):
    """A docs reader's trial: the summary line (`calibration: resnet50, batch 16 per device,
    ...`) came after the first, 80-second measurement, and the graph choices were announced
    as '24 sites' but reported as '39 factors'."""
    monkeypatch.setattr(graph_choices, 'measure', lambda shapes, intra, inter: {
        (s, form): 0.5 for s in shapes for form in graph_choices.forms_of(s)})
    monkeypatch.setattr(cpu_peak, 'measure', lambda dtype, threads: (
        {'flops_per_sec': 1e11, 'kernel': 'matmul'}, 0.02))
    got = helpers.run_command('--calibrate', '--model=resnet50', '--image_size=32',
                              '--device=cpu', '--num_intra_threads=2')
    assert got.returncode == 0, got.stdout + got.stderr
    lines = got.stdout.splitlines()
    summary = lines.index('calibration: resnet50, batch 64 per device, float32, 2 intra-op '
                          'threads; record %s' % calibration_record)  # the model's batch
    measuring = [i for i, x in enumerate(lines) if x.startswith('calibration: measuring ')]
    assert measuring and summary < measuring[0], lines
    announced = next(x for x in lines if x.startswith('calibration: measuring graph choices'))
    factors, sites = map(int, re.search(r'\((\d+) factors: each form of its (\d+) sites '
                                        r"against today's\)", announced).groups())
    assert sites < factors  # resnet50's 1x1 convolutions have more than one form
    stored = next(x for x in lines if x.startswith('calibration: stored graph choice'))
    assert ': %d factors 0.50x-0.50x, %d below 0.90x;' % (factors, factors) in stored, stored


def test_the_summary_line_counts_threads_in_their_number_and_names_a_pinned_cpu_set(
        monkeypatch):
    # A new user's '1 intra-op threads'; pinned with 2 threads the line lacked the 'on 1 CPU'
    # its peak line had.
    from tf_cnn_benchmarks import params
    from tf_cnn_benchmarks.preflight import calibrate
    monkeypatch.setattr(calibration.host_load, 'allowed_cpus', lambda: frozenset({0}))

    def line(threads):
        return calibrate.summary_line(params.make_params(
            model='resnet20', data_name='cifar10', batch_size=8, num_intra_threads=threads),
            '/r.json')
    assert line(1) == ('calibration: resnet20, batch 8 per device, float32, 1 intra-op thread; '
                       'record /r.json')
    assert ', 2 intra-op threads on 1 CPU; record' in line(2)
    assert ', default intra-op threads; record' in line(0)


def test_a_figure_tried_on_a_busy_host_is_not_tried_again_for_ten_minutes(tmp_path,
                                                                          monkeypatch):
    # Each busy try cost a run 3-5 s and was thrown away; a run within BUSY_RETRY_SECS of it
    # says so instead, --calibrate (a refresh) measures, and a quiet measurement ends the note.
    path = str(tmp_path / 'calibration.json')
    calls, warnings, clock = [], [], ['2026-12-05T21:00:00Z']
    monkeypatch.setattr(calibration.host_load, 'allowed_cpus', lambda: frozenset({0, 1}))
    monkeypatch.setattr(calibration, '_utc_now', lambda: clock[0])
    monkeypatch.setattr(calibration, '_now', lambda: datetime.datetime.strptime(
        clock[0], '%Y-%m-%dT%H:%M:%SZ').replace(tzinfo=datetime.timezone.utc))

    def figure(at, others, refresh=False):
        clock[0] = at
        return calibration.figure(
            'cpu peak', 'k', lambda: calls.append(at) or (7.0, 0.0), what='x', secs=1,
            cores=2, refresh=refresh, path=path, meter=helpers.FakeMeter(others),
            warn=warnings.append)

    assert figure('2026-12-05T21:00:00Z', 1.5) is None and len(calls) == 1  # busy: noted
    assert figure('2026-12-05T21:05:00Z', 1.5) is None and len(calls) == 1  # not tried again
    assert warnings[-1] == ("cpu peak not measured: its try at 2026-12-05 21:00 UTC found this "
                            "run's CPUs (0,1) busy and is not tried again on them for 10 "
                            'minutes; run `tf_cnn_benchmarks --calibrate` when they are quiet')
    assert warnings[0].endswith('no quiet calibration: run `tf_cnn_benchmarks --calibrate` on '
                                'a quiet host')  # a run's busy try
    with calibration.calibrating():  # --calibrate measures; it no longer advises itself
        assert figure('2026-12-05T21:05:00Z', 1.5, refresh=True) is None
    assert warnings[-1].endswith('no quiet calibration: rerun this --calibrate when the host '
                                 'is quiet')
    assert len(calls) == 2
    assert figure('2026-12-05T21:20:00Z', 0.0).value == 7.0 and len(calls) == 3  # 15 min on
    assert calibration.load_record(path).keys() == {'k'}  # the quiet figure ended the note


def test_a_busy_try_holds_back_only_the_same_measurement_on_the_same_cpus(tmp_path,
                                                                           monkeypatch):
    # A new user's busy try of the 1-thread peak under `taskset -c 0` (a spinner on CPU 0)
    # refused a peak for 10 minutes to a run pinned to the idle CPU 1, and to unpinned
    # 1-thread runs: the note named the key, not the CPUs it was busy on.
    path = str(tmp_path / 'calibration.json')
    cpus, calls, warnings = [frozenset({0})], [], []
    monkeypatch.setattr(calibration.host_load, 'allowed_cpus', lambda: cpus[0])

    def figure(others, key='k|1 threads'):
        return calibration.figure(
            'cpu peak', key, lambda: calls.append(cpus[0]) or (7.0, 0.0), what='x', secs=1,
            cores=1, path=path, meter=helpers.FakeMeter(others, cores=1), warn=warnings.append)

    assert figure(0.9) is None and len(calls) == 1  # busy on CPU 0: noted for CPU 0
    assert 'busy|k|1 threads|cpus 0' in calibration.load_record(path)
    assert figure(0.9) is None and len(calls) == 1  # CPU 0 again: held back, one line
    assert "found this run's CPU (0) busy" in warnings[-1]
    cpus[0] = frozenset({1})  # `taskset -c 1`: its own CPU was never tried
    assert figure(0.0).value == 7.0 and len(calls) == 2
    assert len(warnings) == 2  # the busy try's line and the held-back one only
    cpus[0] = frozenset({0})
    assert figure(0.9, key='k|2 threads on 1 CPU') is None and len(calls) == 3  # another key
    assert calibration.load_record(path).keys() == {'k|1 threads', 'busy|k|2 threads on 1 CPU'
                                                    '|cpus 0'}  # the quiet one ended CPU 0's


@pytest.mark.cli
def test_calibrate_refuses_a_record_that_is_a_folder(tmp_path, monkeypatch):
    # It printed 'stored cpu peak ...', exited 0, stored nothing and left a temporary file.
    monkeypatch.setenv('TF_CNN_CALIBRATION', str(tmp_path))
    got = helpers.run_command('--calibrate', '--model=trivial', '--batch_size=2',
                              '--device=cpu')
    assert got.returncode == 2
    # Refused before TensorFlow loads (no 'Loading TensorFlow' line), as a usage error.
    assert got.stdout == '' and got.stderr == (
        'error: --calibrate: the record %s is a folder, not a file: set TF_CNN_CALIBRATION to '
        "a file's path, or to off\n" % tmp_path)
    assert os.listdir(tmp_path) == []


@pytest.mark.cli
def test_calibrate_refuses_a_record_it_cannot_write_before_tensorflow_loads(tmp_path,
                                                                          monkeypatch):
    # It loaded TensorFlow first, then said the record could not be written.
    monkeypatch.setattr(calibration.cnn_util, 'write_problem', lambda folder: (
        'cannot write in %s: Read-only file system' % folder))
    monkeypatch.setenv('TF_CNN_CALIBRATION', str(tmp_path / 'c.json'))
    got = helpers.run_command('--calibrate', '--model=trivial', '--batch_size=2',
                              '--device=cpu')
    assert (got.returncode, got.stdout) == (2, '')
    assert got.stderr == (
        'error: --calibrate: the record %s cannot be written: cannot write in %s: Read-only '
        'file system (set TF_CNN_CALIBRATION to a path this user can write)\n'
        % (tmp_path / 'c.json', tmp_path))


def test_a_record_that_cannot_be_read_is_named_once_and_replaced(tmp_path, monkeypatch,
                                                                 capsys):
    path = tmp_path / 'calibration.json'
    path.write_text('{broken')
    monkeypatch.setattr(calibration, '_SAID_UNUSABLE', set())
    assert calibration.load_record(str(path)) == {}
    assert calibration.load_record(str(path)) == {}
    assert capsys.readouterr().err == (
        'warning: the calibration record %s cannot be read (Expecting property name enclosed '
        'in double quotes): its figures are not used, and a figure stored now replaces it\n'
        % path)
    assert calibration.store(str(path), [helpers.measurement(7.0, key='k')])
    assert calibration.lookup('k', str(path)).value == 7.0
    # A record of another version is not used either, and said so.
    path.write_text('{"version": 99, "entries": {}}')
    monkeypatch.setattr(calibration, '_SAID_UNUSABLE', set())
    assert calibration.load_record(str(path)) == {}
    assert 'is not a calibration record of version 1' in capsys.readouterr().err
    # A write that fails leaves no temporary file behind.
    folder = tmp_path / 'folder_record'
    folder.mkdir()
    assert not calibration.store(str(folder), [helpers.measurement(7.0, key='k')])
    # (The lock file beside the record stays: hardware/record_file.py; none beside a folder.)
    assert sorted(os.listdir(tmp_path)) == ['calibration.json', 'calibration.json.lock',
                                            'folder_record']


def test_a_record_in_a_folder_that_cannot_be_written_is_named(tmp_path, monkeypatch):
    # Tried for real (cnn_util.write_problem): os.access let root pass on a read-only mount.
    tried = []
    monkeypatch.setattr(calibration.cnn_util, 'write_problem', lambda folder: tried.append(
        folder) or 'cannot write in %s: Read-only file system' % folder)
    path = tmp_path / 'new' / 'calibration.json'  # the nearest existing folder is tried
    assert calibration.record_problem(str(path)) == (
        'cannot be written: cannot write in %s: Read-only file system (set TF_CNN_CALIBRATION '
        'to a path this user can write)' % tmp_path)
    assert tried == [str(tmp_path)]
    monkeypatch.undo()
    assert calibration.record_problem(str(path)) is None  # a writable folder: no problem


def test_a_record_in_a_folder_where_no_file_can_be_made_says_what_is_wrong(tmp_path):
    # Before: TF_CNN_CALIBRATION=/proc/nope.json said 'cannot write in /proc: No such file or
    # directory', of a folder that exists.
    if not os.path.isdir('/proc/self'):
        pytest.skip('no procfs here')
    assert calibration.record_problem('/proc/nope.json') == (
        'cannot be written: cannot write in /proc: not a normal folder (making a file there '
        'fails: No such file or directory) (set TF_CNN_CALIBRATION to a path this user can '
        'write)')
    assert calibration.record_problem(str(tmp_path / 'c.json')) is None


def test_a_one_core_host_is_counted_in_the_singular():
    from tf_cnn_benchmarks.preflight import calibrate
    busy = helpers.measurement({'flops_per_sec': 1e11, 'kernel': 'matmul'}, others_cores=0.9,
                               cores=1, key='cpu|tf 2.21.0|cpu peak|float32|1 threads')
    assert not busy.quiet
    assert 'other processes used 0.90 of 1 core (90%, more than 25%)' in calibration.busy_note(
        busy, None)
    assert calibrate.report_line(busy).startswith(
        'calibration: NOT stored (other processes used 0.90 of 1 core, more than 25%)')
