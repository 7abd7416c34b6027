"""Paths on TensorFlow's file systems (issue 41, item 1): a run reads its shards from and
writes its checkpoints, summaries and results JSON to ram:// (TensorFlow's in-memory file
system, in this process) and gs:// (TensorFlow's own GCS file system against a local emulator,
tests/gcs_emulator.py), resumes from them, and a scheme no file system serves is refused
before the run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from importlib import metadata

import gcs_emulator
import pytest
import tensorflow as tf

from tf_cnn_benchmarks import params
from tf_cnn_benchmarks.input_data import dataset_info, shard_scan
from tf_cnn_benchmarks.lifecycle import checkpoints
from tf_cnn_benchmarks.metrics import baseline
from tf_cnn_benchmarks.preflight import output_paths
from tf_cnn_benchmarks.runtime import file_systems

import checkout
import helpers
import input_helpers

gfile = tf.io.gfile


def _ram_folder() -> str:
    return 'ram://%s' % uuid.uuid4().hex


def _copy_shards(local_paths, folder: str) -> None:
    gfile.makedirs(folder)
    for path in local_paths:
        gfile.copy(path, '%s/%s' % (folder, os.path.basename(path)), overwrite=True)


def test_schemes_follow_tensorflows_uri_rule_and_registry(monkeypatch):
    assert [file_systems.scheme(p) for p in ('gs://b/x', 'ram://x', 'S3.a://b', '/tmp/gs://x',
                                             'gs:/b', 'c:\\x', '')] == [
        'gs', 'ram', 'S3.a', '', '', '', '']
    assert file_systems.scheme_problem('gs://b/x') is None
    assert file_systems.scheme_problem('/local') is None
    assert 's3://' in file_systems.scheme_problem('s3://b/x')
    assert 'give a local path' in file_systems.scheme_problem('foo://b/x')
    assert file_systems.unregistered_problem('ram://x') is None
    assert file_systems.unregistered_problem('s3://b/x').startswith(
        'TensorFlow %s has no file system for s3:// ' % tf.__version__)
    # What provides s3://: tensorflow-io, whose last release loads in TensorFlow 2.16 only.
    assert file_systems._provider('s3', '2.16.2') == (
        'pip install tensorflow-io==0.37.1 (its file systems register s3:// when tensorflow_io '
        'is imported, which this program does)')
    assert file_systems._provider('s3', '2.21.0') == (
        'tensorflow-io provides it, but its last release (0.37.1) is built for TensorFlow 2.16 '
        'and its file systems do not load in 2.21.0: give a local path or a gs:// one (copy '
        "the data there with your storage's own tools)")
    if tf.__version__.startswith('2.21.'):
        assert file_systems.scheme_problem('hdfs://n/x').endswith(
            'its file systems do not load in %s: give a local path or a gs:// one (copy the '
            "data there with your storage's own tools)" % tf.__version__)
    # Installed but built for another TensorFlow (0.37.1 in TensorFlow 2.21: its libraries'
    # symbols are missing, it registers nothing): said so, not 'pip install' it.
    real_version, real_requires = metadata.version, metadata.requires
    monkeypatch.setattr(metadata, 'version', lambda d: '0.37.1' if d == 'tensorflow-io'
                        else real_version(d))
    monkeypatch.setattr(metadata, 'requires', lambda d: [
        'tensorflow-io-gcs-filesystem ==0.37.1',
        'tensorflow <2.17.0,>=2.16.0 ; extra == "tensorflow"'] if d == 'tensorflow-io'
        else real_requires(d))
    assert file_systems.unregistered_problem('s3://b/x').endswith(
        '; tensorflow-io 0.37.1 is installed but its file systems did not load in TensorFlow '
        '%s (it is built for tensorflow <2.17.0,>=2.16.0): give a local path or a gs:// one '
        "(copy the data there with your storage's own tools)" % file_systems._tf_version())
    assert file_systems.unregistered_problem('foo://b/x').endswith('or give a local path')
    # With a plugin package installed the scheme is left to TensorFlow's registry.
    real = file_systems.importlib.util.find_spec
    monkeypatch.setattr(file_systems.importlib.util, 'find_spec',
                        lambda name: object() if name == 'tensorflow_io' else real(name))
    assert file_systems.scheme_problem('s3://b/x') is None


def test_remote_output_folders_are_write_tested_once_tensorflow_has_loaded():
    folder = _ram_folder()
    p = params.make_params(train_dir=folder + '/run', trace_file=folder + '/t/trace.json')
    output_paths.check_remote_paths(p)
    assert gfile.listdir(folder + '/run') == []  # the probe was removed again
    with pytest.raises(params.ParamsError, match=r"^--data_dir=s3://b/x: TensorFlow .* has no "
                       r'file system for s3://'):
        output_paths.check_remote_paths(params.make_params(data_dir='s3://b/x'))


def test_a_remote_data_dir_is_listed_counted_and_checked_like_a_local_one(tmp_path):
    folder = _ram_folder()
    local = input_helpers.solid_shards(str(tmp_path), num_shards=2, per_shard=3)
    _copy_shards(local, folder)
    with gfile.GFile(folder + '/labels.txt', 'w') as f:
        f.write('1 a red\n2 b green\n3 c blue\n')
    dataset = dataset_info.get_dataset(params.make_params(data_dir=folder))
    scan = dataset.scan('train')
    assert (dataset.name, dataset.num_classes, scan.num_examples, scan.records_per_file) == (
        'imagenet', 4, 6, (3, 3))
    cache = shard_scan.ScanCache(str(tmp_path / 'cache.json'))
    records, problems, kinds = shard_scan.scan_files(list(scan.files), cache=cache,
                                                     locate_problem=None)
    assert (records, problems) == ({f: 3 for f in scan.files}, {})
    gfile.remove(scan.files[1])  # (ram:// appends to a file written again)
    with gfile.GFile(scan.files[1], 'wb') as f:  # cut inside its last record
        f.write(open(local[1], 'rb').read()[:-9])
    damaged = dataset_info.get_dataset(params.make_params(data_dir=folder))
    damaged.use_scan_cache = False
    with pytest.raises(Exception, match=r'corrupt TFRecord shard ram://.*train-00001-of-00002: '
                       r'truncated: record 3 \(index 2\) at byte \d+ needs \d+ bytes'):
        damaged.scan('train')
    with pytest.raises(Exception, match=r'--data_dir ram://nothing-here does not exist'):
        dataset_info.get_dataset(params.make_params(data_dir='ram://nothing-here',
                                                    data_name='imagenet'))


def test_a_data_dir_that_is_missing_or_cannot_be_read_names_the_fix(tmp_path, monkeypatch):
    missing = str(tmp_path / 'missing')
    proc = helpers.run_command('--model=trivial', '--batch_size=2', '--image_size=16',
                               '--num_batches=1', '--noresults_db', '--data_dir=' + missing)
    assert proc.returncode == 1 and 'Traceback' not in proc.stderr
    assert proc.stderr.splitlines()[-1] == (
        'error: --data_dir %s does not exist: give the folder of ImageNet TFRecord shards '
        '(train-*-of-*, validation-*-of-*) or CIFAR-10 python batches (data_batch_1..5, '
        'test_batch), or drop --data_dir for synthetic data' % missing)

    def unreachable(path):  # TensorFlow's GCS client without a network
        raise OSError('%s: Error executing an HTTP request: libcurl code 6 meaning \'Could not '
                      'resolve hostname\', error details: Could not resolve host: '
                      'www.googleapis.com' % path)
    monkeypatch.setattr(dataset_info.file_systems, 'exists', unreachable)
    with pytest.raises(Exception) as info:
        dataset_info.get_dataset(params.make_params(data_dir='gs://no-such-bucket/x',
                                                    data_name='imagenet'))
    assert str(info.value).startswith('--data_dir gs://no-such-bucket/x cannot be read: gs://')
    assert str(info.value).endswith("Could not resolve host: www.googleapis.com; check the "
                                    "network access, the credentials and the bucket's name")


def test_a_run_on_ram_trains_saves_resumes_and_writes_its_results_there(tmp_path, capfd):
    """Shards, checkpoints, summaries, the trace, graph, tfprof and plot files and the results
    JSON on TensorFlow's ram:// file system (the stand-in for a bucket: a run in this process,
    nothing on the local disk); the run resumes from there, and an --eval of its checkpoint
    writes its scalars to an --eval_dir there."""
    folder = _ram_folder()
    for subset in ('train', 'validation'):
        _copy_shards(input_helpers.solid_shards(str(tmp_path / 'shards'), subset, num_shards=2,
                                                per_shard=4), folder + '/data')
    run = dict(data_dir=folder + '/data', train_dir=folder + '/run', num_batches=2,
               batch_size=2, image_size=16)
    outputs = dict(trace_file=folder + '/out/trace.json', graph_file=folder + '/out/g.pbtxt',
                   tfprof_file=folder + '/out/prof.txt', plot_file=folder + '/out/steps.png')
    first = helpers.tiny_run(benchmark_log_dir=folder + '/logs', summary_verbosity=1,
                             save_summaries_steps=1, num_warmup_batches=1, **outputs, **run)
    # 1 warm-up + 2 timed steps: the traced step is the warm-up step, not an extra one.
    assert (first['restored_step'], first['global_step']) == (None, 3)
    assert first['checkpoint_path'] == folder + '/run/model.ckpt-3'
    assert sorted(gfile.listdir(folder + '/out')) == ['g.pbtxt', 'prof.txt', 'steps.png',
                                                      'trace.json']
    with gfile.GFile(outputs['trace_file']) as f:
        assert 'traceEvents' in json.load(f)
    with gfile.GFile(outputs['plot_file'], 'rb') as f:
        assert f.read(8) == b'\x89PNG\r\n\x1a\n'
    names = sorted(gfile.listdir(folder + '/run'))
    events = [n for n in names if n.startswith('events.out.tfevents.')]
    assert len(events) == 1 and sorted(set(names) - set(events)) == [
        'checkpoint', 'model.ckpt-3.data-00000-of-00001', 'model.ckpt-3.index']
    [log] = gfile.listdir(folder + '/logs')
    assert first['results_file'] == '%s/logs/%s' % (folder, log)
    stored = baseline.load(first['results_file'])  # --baseline=ram://...: read through TF
    assert stored['global_step'] == 3
    second = helpers.tiny_run(**run)
    assert (second['restored_step'], second['global_step']) == (3, 5)
    assert checkpoints.resolve_checkpoint_path(folder + '/run') == folder + '/run/model.ckpt-5'
    assert checkpoints.resolve_checkpoint_path(folder + '/run/model.ckpt-3') == (
        folder + '/run/model.ckpt-3')  # (ram:// calls any prefix of a name a folder)
    # No --num_batches: the whole validation subset once (with it, --eval scores that many).
    evaluated = helpers.tiny_run(eval=True, eval_dir=folder + '/eval',
                                 **dict(run, num_batches=None))
    assert (evaluated['eval']['global_step'], evaluated['eval']['num_examples'],
            evaluated['checkpoint_path']) == (5, 8, folder + '/run/model.ckpt-5')
    [events] = gfile.listdir(folder + '/eval')  # the eval's scalars, in --eval_dir
    assert events.startswith('events.out.tfevents.')
    err = capfd.readouterr().err
    assert err.count('warning: --train_dir=%s/run' % folder) == 2  # one line per run
    # The evaluation only reads --train_dir: its outputs are --eval_dir's.
    assert err.count("warning: --eval_dir=%s/eval: written through TensorFlow's" % folder) == 1
    assert not os.path.exists('ram:') and not os.path.exists(os.path.join(checkout.REPO, 'ram:'))


@pytest.fixture
def emulator(tmp_path):
    reason = gcs_emulator.missing()
    if reason:
        pytest.skip(reason)
    with gcs_emulator.GcsEmulator(str(tmp_path)) as server:
        yield server


@pytest.mark.cli
def test_a_run_on_gcs_trains_saves_and_resumes_through_tensorflows_own_gs_file_system(
        emulator, tmp_path):
    """TensorFlow's built-in gs:// file system against a local emulator (its HTTPS requests
    through libcurl's proxy: tests/gcs_emulator.py): shards read, checkpoints, summaries and
    the results JSON written, the next run restoring from them."""
    for path in input_helpers.solid_shards(str(tmp_path / 'shards'), num_shards=2, per_shard=4):
        emulator.upload('data/' + os.path.basename(path), open(path, 'rb').read())
    env = {**{k: v for k, v in os.environ.items() if 'proxy' not in k.lower()},
           **emulator.env()}
    command = [sys.executable, os.path.join(checkout.REPO, 'tf_cnn_benchmarks.py'),
               '--model=trivial', '--batch_size=2', '--image_size=16', '--num_batches=2',
               '--num_warmup_batches=0', '--data_dir=gs://bucket/data', '--noresults_db',
               '--train_dir=gs://bucket/run1']
    first = subprocess.run(command + ['--benchmark_log_dir=gs://bucket/logs',
                                      '--summary_verbosity=1'],
                           capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)
    assert first.returncode == 0, first.stderr[-3000:]
    assert 'warning: --train_dir=gs://bucket/run1, --benchmark_log_dir=gs://bucket/logs: ' \
           "written through TensorFlow's file system (gs://)" in first.stderr
    names = emulator.names('run1/')
    assert [n for n in names if 'model.ckpt' in n or n.endswith('/checkpoint')] == [
        'run1/checkpoint', 'run1/model.ckpt-2.data-00000-of-00001', 'run1/model.ckpt-2.index']
    assert any(n.startswith('run1/events.out.tfevents.') for n in names)
    assert not any('.tf_cnn_benchmarks_probe' in n for n in emulator.names())
    [log] = [n for n in emulator.names('logs/') if n.endswith('.json')]
    assert json.loads(emulator.read(log))['checkpoint_path'] == 'gs://bucket/run1/model.ckpt-2'
    second = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env,
                            cwd=tmp_path)
    assert second.returncode == 0, second.stderr[-3000:]
    assert 'Restored from step 2: training state from gs://bucket/run1/model.ckpt-2' \
        in second.stdout
    assert 'Saved checkpoint gs://bucket/run1/model.ckpt-4 (global step 4)' in second.stdout
    assert sorted(os.listdir(tmp_path)) == ['cert.pem', 'key.pem', 'shards']  # no local gs:/


@pytest.mark.cli
def test_an_unreachable_gcs_is_one_line_without_a_traceback(tmp_path):
    """gs:// with no storage server to reach (TensorFlow's GCS client through a proxy port where
    nothing listens; one retry instead of TensorFlow's ten, which take about three minutes):
    the data folder cannot be read (exit 1), an output folder cannot be written (exit 2, before
    training), each said in one line with TensorFlow's reason, no traceback."""
    from test_usage_limits import run_mains
    env = {**{k: v for k, v in os.environ.items() if 'proxy' not in k.lower()},
           'https_proxy': 'http://127.0.0.1:%d' % helpers.free_port(),
           'GCS_RETRY_CONFIG_MAX_RETRIES': '1', 'GCS_RETRY_CONFIG_INIT_DELAY_TIME_US': '1000',
           'GOOGLE_AUTH_TOKEN_FOR_TESTING': 'token'}
    small = ['--model=trivial', '--batch_size=2', '--image_size=16', '--num_batches=2',
             '--noresults_db']
    results = run_mains([small + ['--data_dir=gs://bucket/imagenet'],
                         small + ['--train_dir=gs://bucket/run1']], str(tmp_path), env=env)
    starts = [(1, 'error: --data_dir gs://bucket/imagenet cannot be read: gs://bucket/imagenet: '),
              (2, 'error: --train_dir=gs://bucket/run1 cannot be written: gs://bucket/run1: ')]
    for (status, err, _), (expected, start) in zip(results, starts, strict=True):
        errors = [x for x in err.splitlines() if x.startswith('error: ')]
        assert (status, len(errors)) == (expected, 1), err
        assert errors[0].startswith(start) and "'Could not connect to server'" in errors[0]
        if status == 1:  # the data folder: what to check
            assert errors[0].endswith("; check the network access, the credentials and the "
                                      "bucket's name"), errors[0]
        assert 'Traceback' not in err
    assert os.listdir(tmp_path) == []  # no local gs:/ folder
