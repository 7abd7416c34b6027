"""The step-time model and the scaling plan: traffic patterns, the layer-by-layer overlap,
the report (the published comparisons and a measured loopback cluster:
test_scaling_published.py).

The patterns are checked against the copies the dry run counts in built graphs (one build per
variable manager, trivial model at 16x16); the overlap against hand-worked timelines; the sweep
plans every model under every variable manager and checks each report's text, and the
command's own path plans them too (the catalog's totals; the placeholder builds of every model
are the slow test); the plan's network note, --plan_num_ps's bound.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest

from tf_cnn_benchmarks import benchmark_cnn, params
from tf_cnn_benchmarks.hardware import gpu_specs, links
from tf_cnn_benchmarks.models import model_catalog
from tf_cnn_benchmarks.preflight import dry_run, scaling_plan, step_traffic
from tf_cnn_benchmarks.speed_model import (
    from_flags,
    layer_profile,
    scaling_report,
    step_time,
)
from tf_cnn_benchmarks.speed_model import traffic_patterns as patterns
from tf_cnn_benchmarks.variable_managers import distributed

import checkout
import helpers

REPO = checkout.REPO
V100 = gpu_specs.lookup('V100')
GB = links.Link('1 GB/s', 1.0, 'network', 'test')  # 1e9 bytes/s
TEST_LINKS = patterns.Links(GB, 1, GB, GB)


# --- Traffic patterns.

def test_shard_loads_place_as_the_cluster_ps_placer_does():
    profile = layer_profile.from_model('alexnet')
    sizes = [layer.bytes for layer in profile.layers]
    placer = distributed.PsPlacer(4)
    for size in sizes:
        placer.place([size // 4], 'float32')
    assert patterns.shard_loads(sizes, 4) == placer.load
    # AlexNet's fc6 (9216 x 4096 float32 = 151 MB) makes one ps hold most of the model.
    assert max(placer.load) >= 0.6 * sum(sizes)


def test_ring_and_parameter_server_patterns_by_formula():
    m = 8e8
    ring = patterns.phases(patterns.Topology('replicated', 8, all_reduce='xring'), TEST_LINKS,
                           [m])
    assert [(s.resource, s.bytes) for s in ring.grad] == [('gpu_link', 2 * 7 / 8 * m)]
    central = patterns.phases(patterns.Topology('replicated', 8), TEST_LINKS, [m])
    assert central.grad[0].bytes == 7 * m  # GPU 0 receives 7 gradients and sends 7 totals
    four = [m / 4] * 4
    colocated = patterns.phases(patterns.Topology('parameter_server', 2, 4, 4), TEST_LINKS, four)
    got = {s.resource: s.bytes for s in colocated.read}
    # A host's worker reads 3/4 of the model from the others; its ps serves 3 workers a quarter.
    assert got == {'pcie': m, 'network': 0.75 * m, 'ps_link': 0.75 * m}
    apart = patterns.phases(patterns.Topology('parameter_server', 2, 4, 4, ps_on_workers=False),
                            TEST_LINKS, four)
    # One GPU per PCIe uplink: each GPU's link carries its own copy of the model.
    assert {s.resource: s.bytes for s in apart.grad} == {'pcie': m, 'network': m,
                                                         'ps_link': m}
    collective = patterns.phases(patterns.Topology('collective_all_reduce', 1, 4), TEST_LINKS,
                                 [m])
    assert collective.grad[0].bytes == m and collective.after[0][0].bytes == 2 * 3 / 4 * m
    repl = patterns.phases(patterns.Topology('distributed_replicated', 1, 2, 1), TEST_LINKS, [m])
    assert repl.read == () and repl.after and repl.grad
    assert patterns.phases(patterns.Topology('independent', 8), TEST_LINKS, [m]) == \
        patterns.Phases((), (), (), ())
    with pytest.raises(patterns.UnplannableError, match='horovod'):
        patterns.phases(patterns.Topology('horovod', 2), TEST_LINKS, [m])


SMALL = dict(model='trivial', image_size=16, batch_size=2, device='gpu', gpu_model='V100')
CLUSTER = dict(task_index=0, ps_hosts=['h0:1'], worker_hosts=['h0:2', 'h1:2'])
COUNTED = [
    dict(variable_update='parameter_server'),
    dict(variable_update='parameter_server', local_parameter_device='gpu'),
    dict(variable_update='replicated'),
    dict(variable_update='replicated', all_reduce_spec='xring'),
    dict(variable_update='replicated', all_reduce_spec='pscpu'),
    dict(variable_update='replicated', all_reduce_spec='psgpu'),
    dict(variable_update='replicated', use_nccl=True),  # NCCL's ring, counted (issue 40.4)
    dict(variable_update='independent'),
    dict(variable_update='parameter_server', job_name='worker', **CLUSTER),
    dict(variable_update='distributed_replicated', job_name='worker', **CLUSTER),
    dict(variable_update='collective_all_reduce', job_name='worker',
         **dict(CLUSTER, ps_hosts=[])),
    dict(variable_update='distributed_all_reduce', job_name='controller',
         controller_host='h0:3', **dict(CLUSTER, ps_hosts=[])),
    # Two-level specs on one host of two GPUs: the outer level between the two (the pattern said
    # GPU->GPU for pscpu/pscpu, which the graph sends through the host; the others had none).
    dict(variable_update='replicated', all_reduce_spec='pscpu/pscpu'),
    dict(variable_update='replicated', all_reduce_spec='nccl/pscpu'),
    dict(variable_update='replicated', all_reduce_spec='psgpu/xring'),
]
# Forward-only steps: the variables' reads alone (they had no pattern, and a note blaming NCCL,
# collective ops or a two-level spec that none of them has).
COUNTED += [dict(flags, forward_only=True) for flags in COUNTED
            if flags.get('all_reduce_spec') in (None, 'pscpu/pscpu')]


@pytest.mark.parametrize('flags', COUNTED, ids=lambda f: '-'.join(
    str(v) for k, v in f.items() if k in ('variable_update', 'local_parameter_device',
                                          'all_reduce_spec', 'job_name', 'use_nccl',
                                          'forward_only')))
def test_each_pattern_gives_the_bytes_the_dry_run_counts(flags):
    p = params.make_params(num_gpus=2, **SMALL, **flags)
    built = dry_run.build(benchmark_cnn.BenchmarkCNN(p, gpus=2))
    counted = step_traffic.step_traffic(built.graph, built.fetches).totals
    m = layer_profile.from_model('trivial', 'imagenet', 16).model_bytes
    hosts = 2 if p.job_name else 1
    topo = patterns.Topology(p.variable_update, 2, hosts, len(p.ps_hosts),
                             all_reduce=from_flags.all_reduce_of(p),
                             local_parameter_device=p.local_parameter_device,
                             forward_only=p.forward_only)
    expected = patterns.expected_counts(topo, m, m)
    counted = {way: size for way, size in counted.items() if size}
    assert sorted(counted) == sorted(expected)
    for way, size in expected.items():
        assert counted[way] == pytest.approx(size, rel=0.02), way


# --- The overlap of the step.

def _plan(topo, layers, compute):
    profile = layer_profile.LayerProfile('test', tuple(layers), 'test')
    return step_time.predict(profile, topo, TEST_LINKS, batch_size=1, compute_secs=compute)


def test_one_layer_cannot_overlap_its_own_reads_and_gradients():
    # 0.1 s to read, 0.3 s to compute, 0.1 s to send: nothing overlaps with one layer.
    found = _plan(patterns.Topology('parameter_server', 1), [layer_profile.Layer('w', 10**8, 1)],
                  0.3)
    assert found.step_secs == pytest.approx(0.5)
    assert found.exposed_secs == pytest.approx(0.2) and found.bound == 'pcie'


def test_two_layers_overlap_as_worked_by_hand():
    # Per layer: read 0.05, forward 0.05, backward 0.1, send 0.05. Forward: layer 1 waits for
    # its read (0.05) and ends at 0.1; layer 2's read arrived at 0.1, ends at 0.15. Backward:
    # layer 2 ends at 0.25, its gradient is sent by 0.30; layer 1 ends at 0.35, sent by 0.40.
    half = layer_profile.Layer('w', 5 * 10**7, 1)
    found = _plan(patterns.Topology('parameter_server', 1), [half, half], 0.3)
    assert found.step_secs == pytest.approx(0.40)
    # distributed_replicated (one worker, its ps on another host) sends layer 1's gradient by
    # 0.35 and then reads both masters after the update: 0.1 more.
    after = _plan(patterns.Topology('distributed_replicated', 1, 1, 1, ps_on_workers=False),
                  [half, half], 0.3)
    assert after.step_secs == pytest.approx(0.35 + 0.1)


def test_a_link_is_never_busier_than_the_step():
    # 8 workers' gradients through one ps: 8 x 0.1 s on the ps's link per direction.
    layers = [layer_profile.Layer('w%d' % i, 10**7, 1) for i in range(10)]
    found = _plan(patterns.Topology('parameter_server', 1, 8, 1, ps_on_workers=False), layers,
                  0.3)
    assert found.busy['ps_link'] == pytest.approx(0.8)
    assert found.step_secs >= 0.8 and found.bound == 'ps_link'


def test_the_single_device_figure_is_what_the_one_device_plan_predicts():
    profile = layer_profile.from_model('resnet50')
    one = patterns.Topology('parameter_server', 1)
    lk = patterns.Links(links.link('pcie3'), 1, links.link('pcie3'), links.link('10gbe'))
    compute = step_time.compute_from_single_device(219.0, 64, profile, one, lk)
    found = step_time.predict(profile, one, lk, batch_size=64, compute_secs=compute.secs)
    assert found.images_per_sec == pytest.approx(219.0, rel=1e-6)
    assert compute.secs < 64 / 219.0  # what the PCIe traffic that shows is taken off


def test_the_peak_figure_is_the_stated_arithmetic():
    # V100 float32 15.7 TFLOP/s at 50%: resnet50's 7.716 GFLOPs x 3 x 64 images.
    compute = step_time.compute_from_peak(V100, 'float32', 7715950592, 64)
    assert compute.secs == pytest.approx(64 * 3 * 7715950592 / (0.5 * 15.7e12))
    with pytest.raises(ValueError, match='V100 16GB has no bfloat16 arithmetic'):
        step_time.compute_from_peak(V100, 'bfloat16', 1e9, 64)


# --- The report.

def _inputs(model='alexnet', mode='parameter_server', batch=512, figure=684.0, **kw):
    profile = layer_profile.from_model(model)
    lk = patterns.Links(links.link('pcie3'), 2, links.link('pcie3'), links.link('10gbe'))
    base = scaling_report.PlanInputs(profile, batch, lk, None, mode, 8, 'K80', **kw)
    compute = step_time.compute_from_single_device(
        figure, batch, profile, scaling_report.topology(base, 1, 1), lk)
    return base._replace(compute=compute)


def test_the_plan_has_one_host_rows_then_2_to_128_hosts_with_bounds_and_knobs(tmp_path):
    inputs = _inputs()
    rows = scaling_report.plan_rows(inputs)
    assert [(r.hosts, r.prediction.devices) for r in rows] == [
        (1, 1), (1, 2), (1, 4), (1, 8), (2, 16), (4, 32), (8, 64), (16, 128), (32, 256),
        (64, 512), (128, 1024)]
    assert rows[0].efficiency == pytest.approx(1.0)
    assert rows[0].prediction.images_per_sec == pytest.approx(684.0)
    assert [r.prediction.topology.variable_update for r in rows] == ['parameter_server'] * 11
    last = rows[-1]
    # fc6 on one ps: that ps's link bounds 128 hosts; an all-reduce moves the bound.
    assert last.prediction.bound == 'ps_link' and last.efficiency < 0.1
    assert last.knob.change == '--variable_update=collective_all_reduce'
    assert last.knob.prediction.images_per_sec > 5 * last.prediction.images_per_sec
    lines = scaling_report.format_report(inputs, rows)
    assert lines[0] == ('Scaling plan:     alexnet, batch 512 per device, '
                        '--variable_update=parameter_server')
    assert any(line.startswith('128 x 8    1024  parameter_server') and
               line.endswith("a ps host's network link") for line in lines)
    assert any(line.startswith('  128 x 8: bound by a ps host\'s network link; '
                               '--variable_update=collective_all_reduce: ') for line in lines)
    path = scaling_report.write_png(inputs, rows, str(tmp_path / 'plan.png'))
    with open(path, 'rb') as f:
        assert f.read(8) == b'\x89PNG\r\n\x1a\n'


def test_the_one_host_rows_include_the_gpus_per_host_asked_for():
    # --num_gpus=3 planned 1, 2 and then 2 x 3: the 1 x 3 row the run asked about was missing.
    inputs = _inputs()
    counts = {n: scaling_report.one_host_counts(inputs._replace(gpus_per_host=n))
              for n in (1, 3, 6, 8, 16)}
    assert counts == {1: [1], 3: [1, 2, 3], 6: [1, 2, 4, 6], 8: [1, 2, 4, 8],
                      16: [1, 2, 4, 8, 16]}
    rows = scaling_report.plan_rows(inputs._replace(gpus_per_host=3), with_knobs=False)
    assert [(r.hosts, r.prediction.devices) for r in rows][:4] == [(1, 1), (1, 2), (1, 3),
                                                                    (2, 6)]


def test_no_knob_of_the_same_batch_beats_perfect_scaling_of_the_one_device_figure():
    # resnet50 under distributed_replicated from 380 images/sec on one V100 (docs/scaling.md's
    # first example, 25 Gbit/s): the model takes its own estimate of the one-device step's
    # exposed copies off the measured step; without the cap, parameter_server on 16 x 8
    # read 49,938 images/sec, above 128 x 380 = 48,640.
    profile = layer_profile.from_model('resnet50')
    lk = patterns.Links(links.link('pcie3'), 1, links.link('pcie3'), links.link('25gbe'))
    base = scaling_report.PlanInputs(profile, 64, lk, None, 'distributed_replicated', 8,
                                     'V100')
    inputs = base._replace(compute=step_time.compute_from_single_device(
        380.0, 64, profile, scaling_report.topology(base, 1, 1), lk))
    rows = scaling_report.plan_rows(inputs)
    assert rows[0].prediction.images_per_sec == pytest.approx(380.0)
    same_batch = [r for r in rows if r.knob and not r.knob.change.startswith(
        ('--batch_size', 'float16'))]
    assert same_batch, [r.knob for r in rows]
    assert all(r.knob.prediction.images_per_sec <= 380.0 * r.prediction.devices * (1 + 1e-9)
               for r in same_batch)
    uncut = scaling_report.predict_topology(inputs, scaling_report.topology(
        inputs, 16, 8, mode='parameter_server'))
    assert uncut.images_per_sec > 128 * 380.0  # what the cap is for
    row = next(r for r in rows if r.hosts == 16)
    assert row.knob.prediction.images_per_sec == pytest.approx(128 * 380.0)
    line = next(x for x in scaling_report.format_report(inputs, rows) if x.startswith('  16 x 8'))
    assert line.endswith('48640.0 images/sec (29% more; perfect scaling of the one-device '
                         'figure)'), line


MODES = [('parameter_server', 'cpu', ''), ('parameter_server', 'gpu', ''),
         ('replicated', 'cpu', ''), ('replicated', 'cpu', 'nccl'),
         ('replicated', 'cpu', 'pscpu/xring'), ('independent', 'cpu', ''),
         ('distributed_replicated', 'cpu', ''), ('collective_all_reduce', 'cpu', ''),
         ('distributed_all_reduce', 'cpu', ''), ('distributed_all_reduce', 'cpu', 'xring')]


def test_the_sweeps_cover_every_model_and_variable_manager():
    import tf_cnn_benchmarks
    assert {(r.name, r.dataset) for r in model_catalog.rows()} == {
        (name, d) for d in ('imagenet', 'cifar10') for name in tf_cnn_benchmarks.list_models(d)}
    # horovod runs no variable manager of its own here: the plan refuses it in one line.
    assert {mode for mode, _, _ in MODES} == set(params.VARIABLE_UPDATES)


def _check_report(lines: list[str], model: str, mode: str, rows) -> None:
    """The report of a plan: its header names the model and manager, one line per row of the
    plan (hosts x GPUs, devices, images/sec, bound) and a knob line per row that has one."""
    assert lines[0].startswith('Scaling plan:     %s, batch ' % model), lines[0]
    assert '--variable_update=%s' % mode in lines[0]
    assert lines[1].startswith('Device:') and lines[2].startswith('Bytes per step:')
    head = next(i for i, line in enumerate(lines) if line.startswith(('hosts ', 'workers ')))
    table = lines[head + 1:head + 1 + len(rows)]
    for line, r in zip(table, rows):
        assert line.startswith('%-9s %5d  ' % ('%d x %d' % (r.hosts, r.gpus_per_host),
                                                r.prediction.devices)), line
        assert ' %.1f ' % r.prediction.images_per_sec in line, line
        assert r.prediction.bound == 'gpu_link' or line.endswith(
            scaling_report.bound_label(r.prediction, None)), line
    knobbed = [r for r in rows if r.knob is not None]
    rest = lines[head + 1 + len(rows):]
    assert len([x for x in rest if x.startswith('  ')]) == len(knobbed)
    assert rest[0] == 'Knobs (planned with the same model):' if knobbed else \
        rest[0].startswith('Knobs: none needed')


def _sweep(profile_of) -> int:
    """Plans every model of the catalog under every variable manager of MODES and checks each
    report's text; returns the plans made."""
    lk = patterns.Links(links.link('pcie3'), 1, links.link('nvlink2'), links.link('25gbe'))
    planned = 0
    for row in model_catalog.rows():
        profile = profile_of(row)
        compute = step_time.compute_from_peak(V100, 'float32', profile.forward_flops,
                                              row.batch_size)
        for mode, device, spec in MODES:
            inputs = scaling_report.PlanInputs(
                profile, row.batch_size, lk, compute, mode, 8, 'V100 16GB', all_reduce=spec,
                local_parameter_device=device)
            rows = scaling_report.plan_rows(inputs)
            assert len(rows) == 11 and rows[-1].prediction.devices == 1024
            assert rows[0].efficiency == pytest.approx(1.0)
            for r in rows:
                ips = r.prediction.images_per_sec
                assert math.isfinite(ips) and ips > 0, (row.name, mode, r)
                assert 0 < r.efficiency <= 1 + 1e-9, (row.name, mode, r)
                assert r.prediction.bound in scaling_report.RESOURCE_NAMES
            if mode == 'independent':
                assert all(r.efficiency == pytest.approx(1.0) for r in rows)
            _check_report(scaling_report.format_report(inputs, rows), row.name, mode, rows)
            planned += 1
    return planned


def test_every_model_under_every_variable_manager_is_planned_from_its_totals():
    # The catalog's exact parameters and FLOPs, spread over 8 equal layers (no graph build),
    # and each plan's report.
    planned = _sweep(lambda row: layer_profile.uniform(
        row.name, 4 * row.parameters, int(row.gflops * 1e9), layers=8))
    assert planned == len(model_catalog.rows()) * len(MODES)


def _command_flags(mode: str, device: str, spec: str) -> list[str]:
    return (['--variable_update=%s' % mode] +
            (['--local_parameter_device=gpu'] if device == 'gpu' else []) +
            (['--all_reduce_spec=%s' % spec] if spec else []))


def test_the_command_plans_every_model_and_every_variable_manager(monkeypatch,
                                                                  tmp_path_factory):
    # `tf_cnn_benchmarks --plan_scaling ...` as cli.py runs it (flags, usage check, the
    # BenchmarkCNN of the planned run, scaling_plan.run) for every model under the default
    # manager and every manager of MODES for one ImageNet and one CIFAR-10 model, with two
    # builds left out: the placeholder build of the profile (the catalog's totals instead;
    # test_every_model_..._layer_by_layer builds them) and the dry run's count of copies
    # (test_each_pattern_gives_the_bytes_the_dry_run_counts and the command-line test).
    from tf_cnn_benchmarks import flag_parsing
    from tf_cnn_benchmarks.cluster import resolvers
    from tf_cnn_benchmarks.preflight import usage
    catalog = {(r.name, r.dataset): r for r in model_catalog.rows()}

    def profile(model, dataset='imagenet', image_size=None, num_classes=None, width=4):
        row = catalog[(model, dataset)]
        return layer_profile.uniform(model, width * row.parameters, int(row.gflops * 1e9), 8)
    monkeypatch.setattr(layer_profile, 'from_model', profile)
    # Each model's op profile (the per-op GPU model's input) as built once this test session
    # (test_cluster_memory.py counts every model's activations from the same builds).
    helpers.serve_shared_op_profiles(monkeypatch, tmp_path_factory)
    monkeypatch.setattr(scaling_plan, 'counted_lines', lambda *args: [])
    printed = []
    monkeypatch.setattr(scaling_plan.cnn_util, 'log_fn', printed.append)
    cases = [(name, dataset, MODES[0]) for name, dataset in sorted(catalog)]
    cases += [(name, dataset, mode) for name, dataset in (('resnet50', 'imagenet'),
                                                          ('resnet20', 'cifar10'))
              for mode in MODES[1:]]
    for name, dataset, (mode, device, spec) in cases:
        argv = (['tf_cnn_benchmarks', '--plan_scaling', '--model=%s' % name,
                 '--data_name=%s' % dataset, '--gpu_model=V100'] +
                _command_flags(mode, device, spec))
        checked = usage.check_usage(flag_parsing.parse_flags(argv), resolve=False, paths=False)
        del printed[:]
        assert scaling_plan.run(lambda q, n: benchmark_cnn.BenchmarkCNN(
            q, gpus=n, checked=usage.CheckedRun(resolvers.Resolution(q, 'flags'))),
            checked.params, 0) == 0, argv
        assert printed[0].startswith('Scaling plan:     %s, batch ' % name), argv
        assert sum(line.startswith('128 x 8    1024  ') for line in printed) == 1, printed
        assert printed[-1].startswith(('Knobs', '  128 x 8: ')), printed


@pytest.mark.slow
def test_every_model_under_every_variable_manager_is_planned_layer_by_layer():
    # Each model's own variables and the FLOPs of their layers (placeholder builds, ~30 s).
    assert _sweep(lambda row: layer_profile.from_model(row.name, row.dataset)) == \
        len(model_catalog.rows()) * len(MODES)


def test_a_stored_run_feeds_the_compute_through_the_database_seam(monkeypatch):
    p = params.make_params(model='resnet50', batch_size=64, gpu_model='V100', device='gpu',
                           plan_scaling=True)
    bench = benchmark_cnn.BenchmarkCNN(scaling_plan.buildable(p), gpus=1)
    asked = []

    def stored(q, device):
        asked.append((q.model, device))
        return 250.0, 'results database: run 7'
    monkeypatch.setattr(scaling_plan, 'find_single_device_run', stored)
    inputs = scaling_plan.plan_inputs(p, bench, V100)
    assert asked == [('resnet50', 'V100 16GB')]
    assert inputs.compute.source == 'results database: run 7: 250 images/sec on one device'
    one = scaling_report.predict_topology(inputs, scaling_report.topology(inputs, 1, 1))
    assert one.images_per_sec == pytest.approx(250.0, rel=1e-6)
    monkeypatch.setattr(scaling_plan, 'find_single_device_run', lambda q, d: None)
    with pytest.raises(from_flags.PlanError, match='needs --single_device_images_per_sec'):
        scaling_plan.plan_inputs(p._replace(device='cpu', gpu_model=None), bench, None)


def _stored_result(model, rate, gpus, device='gpu', batch=64, **params_):
    return {'model': model, 'images_per_sec': rate, 'num_devices': 1, 'num_workers': 1,
            'per_device_batch_size': batch, 'step_times': [0.1, 0.1, 0.1],
            'finished_utc': params_.pop('when', '2026-12-01T10:00:00.000000Z'),
            'params': dict({'model': model, 'batch_size': batch, 'num_gpus': 1,
                            'device': device, 'variable_update': 'parameter_server'}, **params_),
            'environment': {'hostname': 'gpu-node-1', 'gpus': gpus, 'cpu_model': 'some CPU',
                            'tf_version': '2.21.0'}}


def test_the_newest_matching_one_device_run_of_the_results_database_feeds_the_plan(tmp_path):
    from tf_cnn_benchmarks.history import store
    db = str(tmp_path / 'results.sqlite')
    p = params.make_params(model='resnet50', batch_size=64, gpu_model='V100', device='gpu',
                           plan_scaling=True, results_db=db)
    assert scaling_plan.find_single_device_run(p, 'V100 16GB') is None  # no database yet
    assert not os.path.exists(db)  # and none made
    v100 = ['Tesla V100-SXM2-16GB']
    for result in (_stored_result('resnet50', 300.0, v100, when='2026-11-01T10:00:00.000000Z'),
                   _stored_result('resnet50', 310.0, v100),  # the newest V100 one
                   _stored_result('resnet50', 900.0, ['NVIDIA A100-SXM4-80GB'],
                                  when='2026-12-02T10:00:00.000000Z'),
                   _stored_result('resnet50', 150.0, v100, use_fp16=True,
                                  when='2026-12-02T11:00:00.000000Z'),
                   _stored_result('resnet50', 100.0, v100, batch=32,
                                  when='2026-12-02T12:00:00.000000Z')):
        store.record_result(db, result)
    rate, source = scaling_plan.find_single_device_run(p, 'V100 16GB')
    assert rate == 310.0 and source == 'results database: run 2 of 2026-12-01T10:00:00Z'
    assert scaling_plan.find_single_device_run(p, 'A100 80GB')[0] == 900.0
    assert scaling_plan.find_single_device_run(p._replace(use_fp16=True), 'V100 16GB')[0] == 150.0
    assert scaling_plan.find_single_device_run(p, 'CPU') is None
    assert scaling_plan.find_single_device_run(p._replace(results_db=False), 'V100 16GB') is None


def test_the_dry_run_prints_the_predicted_step(capsys):
    p = params.make_params(model='resnet20', data_name='cifar10', batch_size=32, num_gpus=2,
                           gpu_model='V100', dry_run=True, variable_update='replicated',
                           single_device_images_per_sec=4000.0, interconnect_gbps='25')
    assert dry_run.run(lambda q, n: benchmark_cnn.BenchmarkCNN(q, gpus=n), p, 0) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith('Predicted step:'))
    assert '(--single_device_images_per_sec: 4000 images/sec on one device)' in line
    assert 'images/sec on 2 device(s)' in out and 'bound by ' in out


@pytest.mark.cli
def test_plan_scaling_on_the_command_line(tmp_path):
    png = tmp_path / 'vgg16.png'
    # The command's main in process (helpers.run_command): its output lines and exit status.
    out = helpers.run_command(
        '--plan_scaling', '--model=vgg16', '--gpu_interconnect=dgx1_v100',
        '--variable_update=replicated', '--use_nccl', '--single_device_images_per_sec=400',
        '--interconnect_gbps=ib_edr', '--plan_scaling_png=%s' % png)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    assert any(x.startswith('Device:           V100 16GB; compute ') for x in lines)
    assert any(x.startswith('1 x 8         8  replicated') for x in lines)
    assert any(x.startswith('128 x 8    1024  distributed_replicated') for x in lines)
    assert any(x.startswith('Counted copies:   1 host x 2 GPUs (replicated, dry run)')
               for x in lines)
    assert png.read_bytes()[:4] == b'\x89PNG'
    bad = subprocess.run(
        [sys.executable, os.path.join(REPO, 'tf_cnn_benchmarks.py'), '--plan_scaling',
         '--interconnect_gbps=11gbe'], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2
    assert bad.stderr.startswith("error: --interconnect_gbps: unknown network '11gbe'")


@pytest.mark.cli
def test_a_plan_scaling_png_that_cannot_be_written_is_refused_before_tensorflow_loads(
        tmp_path, monkeypatch):
    # It loaded TensorFlow, printed the plan, then failed to write the PNG (exit 1).
    import errno
    import tempfile

    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, 'Read-only file system')

    monkeypatch.setattr(tempfile, 'TemporaryFile', read_only)
    png = tmp_path / 'x.png'
    out = helpers.run_command('--plan_scaling', '--model=resnet50', '--gpu_model=V100',
                              '--plan_scaling_png=%s' % png)
    assert (out.returncode, out.stdout) == (2, '')
    assert out.stderr == ('error: --plan_scaling_png=%s cannot be written: cannot create a file '
                          'in %s: Read-only file system. Choose another path.\n' % (png, tmp_path))


_WITHOUT_MATPLOTLIB = """
import json, sys
sys.modules['matplotlib'] = None  # import matplotlib -> ImportError, as where it is missing
sys.path.insert(0, %r)
import checkout
checkout.load()
from tf_cnn_benchmarks import cli
status = cli.main(['tf_cnn_benchmarks'] + %r)
sys.stdout.flush()
print('\\nSTATUS ' + json.dumps([status, 'tensorflow' in sys.modules]))
"""


@pytest.mark.cli
def test_a_plan_scaling_png_without_matplotlib_is_refused_before_tensorflow_loads(tmp_path):
    """A docs reader's trial: the whole plan was printed, then `error: --plan_scaling_png needs
    matplotlib`, exit 1; scaling.md says an unusable FILE is refused before TensorFlow loads,
    as --plot_file without matplotlib is (exit 2)."""
    args = ['--plan_scaling', '--model=resnet50', '--gpu_model=V100',
            '--plan_scaling_png=%s' % (tmp_path / 'x.png')]
    proc = subprocess.run(
        [sys.executable, '-c', _WITHOUT_MATPLOTLIB % (os.path.join(REPO, 'tests'), args)],
        capture_output=True, text=True, timeout=120, cwd=REPO)
    out, _, last = proc.stdout.rpartition('\nSTATUS ')
    assert last, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert json.loads(last) == [2, False]  # exit 2, TensorFlow not loaded
    assert out.strip() == ''
    assert proc.stderr == (
        'error: --plan_scaling_png needs matplotlib, which is not installed: pip install '
        "matplotlib, or pip install 'tf_cnn_benchmarks[plot]' (in a checkout: pip install -e "
        "'.[plot]'); or drop --plan_scaling_png\n")


def test_gpu_hosts_planned_on_this_hosts_loopback_say_so(monkeypatch):
    # --interconnect_gbps=loopback (gRPC measured on this CPU host) was applied to 128 hosts of
    # V100s without a word.
    from tf_cnn_benchmarks.hardware import loopback
    measured = loopback.LoopbackRate(0.5e9, 0.1, 8.0, 1e-9, 'test')
    monkeypatch.setattr(loopback, 'measure', lambda *a, **k: measured)
    p = params.make_params(model='trivial', batch_size=4, gpu_model='V100', device='gpu',
                           plan_scaling=True, single_device_images_per_sec=380.0,
                           interconnect_gbps='loopback')
    bench = benchmark_cnn.BenchmarkCNN(scaling_plan.buildable(p), gpus=1)
    inputs = scaling_plan.plan_inputs(p, bench, V100)
    note = ("the hosts' network is this host's loopback (gRPC between two tasks of this "
            "process, measured now: 0.5 GB/s), not a network between V100 16GB hosts; give "
            "their network as --interconnect_gbps (Gbit/s, or 25gbe, ib_hdr, ...)")
    assert inputs.network_note == note
    header = scaling_report.header_lines(inputs)
    assert header[header.index(next(h for h in header if h.startswith('Links:'))) + 1] == (
        'Network:          ' + note)
    assert from_flags.predicted_step_report(p, bench.plan, V100)[0][-1].strip() == note
    # A given network, and CPU towers on their own host's loopback, say nothing.
    given = scaling_plan.plan_inputs(p._replace(interconnect_gbps='25'), bench, V100)
    assert given.network_note == '' and not any(
        h.startswith('Network:') for h in scaling_report.header_lines(given))
    assert from_flags.loopback_note(measured, None) == ''


def test_more_ps_tasks_than_the_models_variables_is_a_usage_error():
    # --plan_num_ps=100000 was planned ('100000 ps tasks on hosts of their own').
    three = layer_profile.LayerProfile('m', (None,) * 3, 'test')
    from_flags.check_num_ps(params.make_params(plan_scaling=True, plan_num_ps=3), three)
    with pytest.raises(params.ParamsError) as e:
        from_flags.check_num_ps(params.make_params(plan_scaling=True, plan_num_ps=4), three)
    assert str(e.value) == ('--plan_num_ps=4 is more ps tasks than m has variables (3): each '
                            'variable is placed whole on one ps task, so the others would hold '
                            'none; give --plan_num_ps=3 or fewer')


@pytest.mark.cli
def test_plan_num_ps_beyond_the_models_variables_stops_the_plan_with_status_2():
    out = helpers.run_command('--plan_scaling', '--model=trivial', '--gpu_model=V100',
                              '--single_device_images_per_sec=380', '--plan_num_ps=100000')
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stderr.startswith('error: --plan_num_ps=100000 is more ps tasks than trivial '
                                 'has variables (')
    assert 'Parameter servers' not in out.stdout
