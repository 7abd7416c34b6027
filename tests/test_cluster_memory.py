"""tools/cluster_memory.py: the estimate of a cluster's memory holds for real models (the
figures measured in its docstring), and its table of forward outputs is the models' own."""

from __future__ import annotations

import pytest

from tf_cnn_benchmarks import flag_parsing
from tf_cnn_benchmarks.hardware import host_memory
from tf_cnn_benchmarks.models import model_catalog
from tf_cnn_benchmarks.tools import cluster_memory as cm
from tf_cnn_benchmarks.tools import launch_cluster

import helpers

GIB = 1 << 30
MIB = 1 << 20


def _params(*flags):
    return flag_parsing.parse_flags(['tf_cnn_benchmarks', '--job_name=worker'] + list(flags))


def test_resnet50_at_batch_8_is_estimated_above_what_its_workers_were_measured_at():
    # The out-of-memory killer ended workers at 1.26-1.32 GiB RSS; measured peaks (docstring):
    # the chief 1554 MiB RssAnon, ps0 72 MiB more a worker.
    _, worker, _ = cm.estimate_bytes({'ps': 1, 'worker': 20},
                                     _params('--model=resnet50', '--batch_size=8'))
    assert worker >= 1.26 * GIB
    assert worker >= (1554 + 72) * MIB


@pytest.mark.parametrize('model, batch, workers, measured_mib', [
    # (other workers + chief + ps0 RssAnon, MiB, from the module docstring's runs)
    ('resnet50', 8, 2, 1460 + 1554 + 766),
    ('resnet50', 2, 3, 879 + 890 + 1019 + 860),
    ('mobilenet_v1', 8, 2, 745 + 791 + 386),  # measured as 'mobilenet', then MobileNet v1
    ('inception3', 4, 2, 1276 + 1361 + 705),
    ('inception3', 1, 2, 962 + 1081 + 788),
    ('trivial', 2, 8, 7 * 390 + 420 + 740),
])
def test_the_estimate_covers_every_measured_cluster(model, batch, workers, measured_mib):
    total, _, _ = cm.estimate_bytes({'ps': 1, 'worker': workers},
                                    _params('--model=%s' % model, '--batch_size=%d' % batch))
    assert total >= cm.SHARED_BYTES + measured_mib * MIB


def test_the_advised_workers_fit_where_twenty_resnet50_workers_were_killed(capsys, monkeypatch):
    """20 resnet50 workers at batch 8 were let through on a host with about 22 GiB available
    and two were killed; now refused, and the count advised fits at the measured sizes."""
    started = []
    monkeypatch.setattr(launch_cluster.Launcher, 'start', lambda self: started.append(self))
    monkeypatch.setattr(host_memory, 'meminfo_available_bytes', lambda: 22 * GIB)
    flags = ['--', '--model=resnet50', '--batch_size=8', '--num_batches=3']
    assert launch_cluster.main(['--num_workers=20'] + flags) == 2
    err = capsys.readouterr().err
    advised = int(err.split('give --num_workers=')[1].split()[0])
    assert started == [] and advised >= 1
    # Measured: the chief 1554 MiB, ps0 788 MiB at 2 workers and 72 MiB more a worker, the
    # libraries 360 MiB once.
    measured = (360 + 788 + 1554 * advised + 72 * (advised - 2)) * MIB
    assert measured <= 22 * GIB
    assert launch_cluster.main(['--num_workers=%d' % advised] + flags) == 0 or started
    assert len(started) == 1


def test_activations_grow_with_the_images_and_towers():
    one = cm._model_figures(_params('--model=resnet50', '--batch_size=4'))
    towers = cm._model_figures(_params('--model=resnet50', '--batch_size=4', '--num_gpus=2'))
    half = cm._model_figures(_params('--model=resnet50', '--batch_size=4', '--image_size=112'))
    assert one[2] == int(cm.ACTIVATION_FACTOR * 4 * cm.ACTIVATION_KIB[('resnet50',
                                                                       'imagenet')] * 1024)
    assert towers[2] == pytest.approx(2 * one[2], rel=1e-6)
    assert half[2] == pytest.approx(one[2] / 4, rel=1e-6)
    assert cm._model_figures(_params('--model=trivial', '--data_name=cifar10'))[2] < one[2]


def test_the_activation_table_is_the_models_forward_outputs(monkeypatch, tmp_path_factory):
    """ACTIVATION_KIB is generated (python -m tf_cnn_benchmarks.tools.cluster_memory); every
    catalog model has its row, equal to what speed_model/op_profile.py counts now (the
    profiles built once this test session: test_scaling_plan.py plans every model from them)."""
    helpers.serve_shared_op_profiles(monkeypatch, tmp_path_factory)
    stale = cm.stale_keys({(row[0], row[1]): 0 for row in model_catalog.ROWS}).split(
        '; changed')[0]
    assert set(cm.ACTIVATION_KIB) == {(row[0], row[1]) for row in model_catalog.ROWS}, (
        'tools/cluster_memory.py ACTIVATION_KIB is stale (%s); run python -m '
        'tf_cnn_benchmarks.tools.cluster_memory --write' % stale)
    assert cm.activation_table() == cm.ACTIVATION_KIB, (
        'tools/cluster_memory.py ACTIVATION_KIB is stale (%s); run python -m '
        'tf_cnn_benchmarks.tools.cluster_memory --write'
        % cm.stale_keys(cm.activation_table()))


def test_the_generator_answers_help_and_refuses_unknown_flags(capsys, monkeypatch):
    """pkg56 finding 8: `python -m tf_cnn_benchmarks.tools.cluster_memory --help` ignored
    --help and built every model to print the table."""
    monkeypatch.setattr(cm, 'activation_table', lambda: pytest.fail('measured the models'))
    with pytest.raises(SystemExit) as info:
        cm.main(['--help'])
    out, err = capsys.readouterr()
    assert (info.value.code, err) == (0, '')
    assert out.startswith('usage: python -m tf_cnn_benchmarks.tools.cluster_memory [-h]')
    assert cm.main(['--bogus']) == 2
    assert capsys.readouterr() == ('', 'error: unrecognized arguments: --bogus (see python -m '
                                   'tf_cnn_benchmarks.tools.cluster_memory --help)\n')


def test_a_catalog_model_without_its_activation_row_is_refused_not_planned_with_zero(
        monkeypatch):
    """A model added to the catalog but not to ACTIVATION_KIB planned 0 bytes of activations;
    now the check refuses it with the command that regenerates the table."""
    table = {k: v for k, v in cm.ACTIVATION_KIB.items() if k != ('resnet20', 'cifar10')}
    monkeypatch.setattr(cm, 'ACTIVATION_KIB', table)
    with pytest.raises(cm.MemoryProblem) as info:
        cm.estimate_bytes({'ps': 1, 'worker': 2}, _params('--model=resnet20',
                                                          '--data_name=cifar10'))
    assert str(info.value) == (
        'the memory check has no activation figure for --model=resnet20 on cifar10: '
        'tools/cluster_memory.py ACTIVATION_KIB is stale; regenerate it: python -m '
        'tf_cnn_benchmarks.tools.cluster_memory --write')


def test_the_generator_checks_and_rewrites_its_table(capsys, monkeypatch, tmp_path):
    """--check: exit 1 and one line naming the stale rows and the command; --write rewrites
    the table in place, after which --check passes (the measured table injected)."""
    measured = {**cm.ACTIVATION_KIB, ('tinynet', 'cifar10'): 721}
    del measured[('lenet', 'imagenet')]
    measured[('trivial', 'cifar10')] = 50
    monkeypatch.setattr(cm, 'activation_table', lambda: dict(measured))
    copy = tmp_path / 'cluster_memory.py'
    copy.write_text(open(cm.__file__, encoding='utf-8').read())
    monkeypatch.setattr(cm, 'SOURCE_PATH', str(copy))
    assert cm.main(['--check']) == 1
    assert capsys.readouterr() == ('', (
        'error: tools/cluster_memory.py ACTIVATION_KIB is stale (missing: tinynet/cifar10; '
        'changed: trivial/cifar10; not in the catalog: lenet/imagenet); run python -m '
        'tf_cnn_benchmarks.tools.cluster_memory --write\n'))
    assert cm.main(['--write']) == 0
    assert capsys.readouterr().out.startswith('wrote tools/cluster_memory.py ACTIVATION_KIB')
    text = copy.read_text()
    assert "    ('tinynet', 'cifar10'): 721,\n    ('trivial', 'cifar10'): 50,\n" in text
    assert "('lenet', 'imagenet')" not in text
    monkeypatch.setattr(cm, 'ACTIVATION_KIB', measured)
    assert cm.main(['--check']) == 0
    assert cm.main(['--check', '--write']) == 2
