"""A dry run of real data says what its plan took from the data and what it leaves out: the
model's classes from the converter's labels.txt (a tiny folder gave 3 classes + background
where ImageNet has 1001, silently), the host's JPEG decoding (not in the predicted step); and
a --data_dir that is not there stays an error that says what a dry run without it plans."""

from __future__ import annotations

import os

import pytest

from tf_cnn_benchmarks import benchmark_cnn
from tf_cnn_benchmarks.params import make_params
from tf_cnn_benchmarks.preflight import dry_run

import helpers
import input_helpers as h


def _labelled_dir(folder, labels=(1, 2, 3)):
    """Solid-colour train shards of `labels` and the converter's labels.txt of 3 classes."""
    os.makedirs(folder, exist_ok=True)
    records = [h.example(h.image_bytes(20, 20, colour=h.CLASS_COLOURS[label]), label)
               for label in labels]
    h.write_shards(folder, 'train', [records])
    with open(os.path.join(folder, 'labels.txt'), 'w') as f:
        f.write('1 ant ant\n2 bee bee\n3 moth moth\n')
    return str(folder)


def _dry_run(monkeypatch, capsys, **flags):
    monkeypatch.setattr(dry_run, 'MAX_SEARCH_SECS', 0.0)  # no batch search: not what is tested
    p = make_params(model='trivial', image_size=16, batch_size=2, dry_run=True,
                    gpu_model='V100', **flags)
    assert dry_run.run(lambda q, gpus: benchmark_cnn.BenchmarkCNN(q, gpus=gpus), p, 0) == 0
    return capsys.readouterr().out.splitlines()


def test_a_real_data_dry_run_says_where_its_classes_came_from_and_what_it_leaves_out(
        tmp_path, monkeypatch, capsys):
    data_dir = _labelled_dir(tmp_path / 'data')
    lines = _dry_run(monkeypatch, capsys, data_dir=data_dir)
    (classes,) = [x for x in lines if 'classes from the data' in x]
    assert classes == (
        "Dry run:          4 classes from the data (labels.txt in %s: 3 classes, labels 1..3, "
        "+ background 0), not imagenet's 1001: the model's last layer is planned with 4 "
        "(--num_classes=1001 plans imagenet's)" % data_dir)
    assert lines.index(classes) == 1 + next(i for i, x in enumerate(lines)
                                            if x.startswith('Dry run:          training, '))
    (decoding,) = [x for x in lines if x.strip().startswith('real data:')]
    assert decoding.strip() == (
        "real data: the host's JPEG decoding and preprocessing are not in this prediction "
        "(only the batch's copy to the GPU is); where the host's CPUs cannot keep up, the run "
        "is slower")
    assert lines.index(decoding) > next(i for i, x in enumerate(lines)
                                        if x.startswith('Predicted step:'))
    # --num_classes chosen: nothing taken from the data to say.
    lines = _dry_run(monkeypatch, capsys, data_dir=data_dir, num_classes=1001)
    assert not any('classes from the data' in x for x in lines)
    assert any(x.strip().startswith('real data:') for x in lines)


def test_a_synthetic_dry_run_has_neither_line(monkeypatch, capsys):
    lines = _dry_run(monkeypatch, capsys)
    assert not any('classes from the data' in x or 'real data:' in x for x in lines)


@pytest.mark.cli
@pytest.mark.parametrize('data_name,shape', [(None, 'ImageNet'), ('cifar10', 'CIFAR-10')])
def test_a_missing_data_dir_stays_an_error_that_says_what_a_dry_run_plans_without_it(
        tmp_path, data_name, shape):
    flags = ['--model=trivial', '--data_dir=%s' % (tmp_path / 'absent')]
    flags += ['--data_name=%s' % data_name] if data_name else []
    out = helpers.run_command('--dry_run', '--gpu_model=V100', *flags)
    assert out.returncode == 1
    (error,) = out.stderr.splitlines()
    assert error.startswith('error: --data_dir %s does not exist: ' % (tmp_path / 'absent'))
    assert error.endswith('(a dry run without --data_dir plans synthetic %s-shaped input)'
                          % shape)
    # A run: the same error, without the dry run's words.
    out = helpers.run_command(*flags)
    assert out.returncode == 1 and 'a dry run' not in out.stderr
