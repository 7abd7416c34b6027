"""One host's GPUs as they are (issue 40, item 4): NCCL's all-reduce bytes counted in a built
step, planned on NVLink, PCIe with peer-to-peer and GeForce cards' path through host memory, and
the original's published one-host rows predicted from their one-GPU figures."""

from __future__ import annotations

import pytest
import tensorflow as tf

from tf_cnn_benchmarks import benchmark_cnn, params
from tf_cnn_benchmarks.hardware import gpu_specs
from tf_cnn_benchmarks.hardware import links as links_lib
from tf_cnn_benchmarks.preflight import dry_run, memory_estimate, step_traffic
from tf_cnn_benchmarks.speed_model import (
    from_flags,
    lambda_scaling,
    one_host_scaling,
    published_scaling,
    step_time,
)
from tf_cnn_benchmarks.speed_model import traffic_patterns as patterns

import checkout

GPUS = 8


@pytest.fixture(scope='module')
def nccl_step():
    p = params.make_params(model='trivial', image_size=16, batch_size=2, device='gpu',
                           num_gpus=GPUS, variable_update='replicated', use_nccl=True)
    built = dry_run.build(benchmark_cnn.BenchmarkCNN(p, gpus=GPUS))
    return built, step_traffic.step_traffic(built.graph, built.fetches)


def _tower0_gradient_bytes(graph) -> int:
    """Bytes of tower 0's trainable variables (float32 gradients of float32 variables)."""
    with graph.as_default():
        variables = [v for v in tf.compat.v1.trainable_variables() if v.name.startswith('v0/')]
    assert variables
    return sum(v.shape.num_elements() * v.dtype.base_dtype.size for v in variables)


def test_nccl_ring_bytes_of_8_replicated_towers_are_2_n_minus_1_over_n_of_the_gradients(
        nccl_step):
    built, traffic = nccl_step
    g = _tower0_gradient_bytes(built.graph)
    # trivial at 16x16x3: 768x1 + 1 + 1x4096 + 4096 + 4096x1001 + 1001 parameters, 4 bytes each.
    assert g == 4 * (768 + 1 + 4096 + 4096 + 4096 * 1001 + 1001)
    per_gpu = step_traffic.collective_bytes_per_gpu(traffic)
    assert sorted(per_gpu) == ['/GPU:%d' % i for i in range(GPUS)]
    for sent in per_gpu.values():
        assert sent == pytest.approx(2 * (GPUS - 1) / GPUS * g, rel=1e-12)
    # The dry run's GPU->GPU total is every GPU's share, as the pattern of the scaling plan says.
    assert traffic.totals['GPU->GPU'] == pytest.approx(2 * (GPUS - 1) * g, rel=1e-12)
    expected = patterns.expected_counts(patterns.Topology('replicated', GPUS, all_reduce='nccl'),
                                        g, g)
    assert expected['GPU->GPU'] == pytest.approx(traffic.totals['GPU->GPU'], rel=1e-12)
    ring = [t for t in traffic.transfers if t.destination == step_traffic.NCCL_RING]
    assert len(ring) == GPUS * 6 == traffic.counts['GPU->GPU']  # 6 gradients per tower


def test_the_dry_run_report_says_each_gpus_nccl_share(nccl_step, capsys):
    built, traffic = nccl_step
    p = params.make_params(model='trivial', image_size=16, batch_size=2, device='gpu',
                           num_gpus=GPUS, variable_update='replicated', use_nccl=True)
    bench = benchmark_cnn.BenchmarkCNN(p, gpus=GPUS)
    _, problems, _ = dry_run.report_lines(bench, built, gpu_specs.lookup('V100'), True)
    assert problems == []
    share = max(step_traffic.collective_bytes_per_gpu(traffic).values())
    logged = capsys.readouterr().out.splitlines()  # the copies' lines are logged at once
    assert '  (NCCL all-reduce: %s sent and as much received by each of 8 GPUs per step, ' \
        '2(N-1)/N of the gradients: ring all-reduce)' % memory_estimate.format_bytes(share) \
        in logged, logged


def _all_reduce_secs(links, gpus: int, g: float = 100e6) -> float:
    phases = patterns.phases(patterns.Topology('replicated', gpus, all_reduce='nccl'), links,
                             [g])
    assert phases.grad == () and len(phases.after) == 1  # after the backward pass
    return max(step_time.busy_secs(phases).values())


@pytest.mark.parametrize('gpus', [2, 4, 8])
def test_nvlink_then_pcie_peer_to_peer_then_host_memory(gpus):
    nvlink, p2p, host = (_all_reduce_secs(one_host_scaling.path_links(link, memory), gpus)
                         for _, link, memory in one_host_scaling.PATHS)
    assert nvlink < p2p < host
    g = 100e6
    ring = 2 * (gpus - 1) / gpus * g
    assert nvlink == pytest.approx(ring / links_lib.link('nvlink2').bytes_per_sec)
    assert p2p == pytest.approx(ring / links_lib.link('pcie3').bytes_per_sec)
    # Without peer-to-peer every byte the GPUs send is written to and read from host memory.
    assert host == pytest.approx(max(ring / links_lib.link('pcie3').bytes_per_sec,
                                     4 * (gpus - 1) * g /
                                     links_lib.link('ddr4_3200_2ch').bytes_per_sec))


def test_copies_between_gpus_overlap_the_backward_pass_nccl_does_not():
    links = one_host_scaling.path_links('pcie3', None)
    xring = patterns.phases(patterns.Topology('replicated', 4, all_reduce='xring'), links, [1e6])
    assert len(xring.grad) == 1 and xring.after == ()
    nccl = patterns.phases(patterns.Topology('replicated', 4, all_reduce='nccl'), links, [1e6])
    assert nccl.grad == () and len(nccl.after) == 1


@pytest.mark.parametrize('gpu, interconnect, link, host_memory', [
    ('GTX 1080', None, 'pcie3', 'ddr4_3200_2ch'),     # GeForce: no peer-to-peer
    ('RTX 4090', None, 'pcie4', 'ddr4_3200_2ch'),
    ('V100 PCIe 16GB', None, 'pcie3', None),          # a data-centre card: peer-to-peer
    ('P100', None, 'pcie3', None),                    # the table's P100 is the PCIe card
    # An SXM module sits on an NVLink board: its NVLink by default (they planned PCIe 3.0).
    ('V100 16GB', None, 'nvlink2', None),
    ('P100 SXM2', None, 'nvlink1', None),
    ('A100 80GB', None, 'nvlink3', None),
    ('H100 80GB', None, 'nvlink4', None),
    ('V100 16GB', 'pcie3', 'pcie3', None),            # named by hand
    ('V100 16GB', 'nvlink', 'nvlink2', None),         # its own NVLink generation
    ('A100 40GB', 'nvlink', 'nvlink3', None),
    ('RTX 3090', 'nvlink3', 'nvlink3', None),         # a bridge, named by hand
    # Lambda's Xeon Gold 6230 host as its logs show it: peer-to-peer between its Quadro RTX
    # 8000s, none between its GeForce RTX 2080 Tis (through one CPU's six DDR4-2933 channels).
    ('Quadro RTX 8000', 'lambda_gold6230x8', 'pcie3_copy', None),
    ('RTX 2080 Ti', 'lambda_gold6230x8_geforce', 'pcie3_copy', 'ddr4_2933_6ch'),
])
def test_the_plan_takes_the_hosts_real_gpu_path(gpu, interconnect, link, host_memory):
    p = params.make_params(gpu_model=gpu, gpu_interconnect=interconnect, num_gpus=8)
    _, found, _ = from_flags.plan_links(p, gpu_specs.lookup(gpu))
    assert found.gpu_link.name == link
    assert (found.host_memory.name if found.host_memory else None) == host_memory


def test_the_flag_and_its_docs_name_every_host_preset():
    spec = next(s for s in params.SPECS if s.name == 'gpu_interconnect')
    with open(checkout.REPO + '/docs/scaling.md') as f:
        docs = f.read()
    for name in links_lib.HOSTS:
        assert name in spec.help and '`%s`' % name in docs, name


def test_the_plan_says_where_its_gpu_link_came_from():
    for gpu, interconnect, words in (
            ('V100', None, 'the default for the V100 16GB, an SXM2 module on an NVLink board '
                           '(--gpu_interconnect=pcie3 for PCIe)'),
            ('T4', None, 'the default for the T4, a PCIe card: peer-to-peer over its PCIe'),
            ('RTX 3090', None, 'the default for the RTX 3090, a PCIe card without peer-to-peer'),
            ('V100', 'nvlink', "from --gpu_interconnect=nvlink (the V100 16GB's own)"),
            ('V100', 'pcie3', 'from --gpu_interconnect=pcie3'),
            ('V100', 'DGX1_V100', "from --gpu_interconnect=dgx1_v100 (the host's link)")):
        p = params.make_params(gpu_model=gpu, gpu_interconnect=interconnect)
        assert from_flags.gpu_link_origin(p, gpu_specs.lookup(gpu)).startswith(words), gpu


def test_a_visible_gpu_the_host_preset_cannot_hold_is_refused_by_the_plan():
    # A T4 host given --gpu_interconnect=dgx1_v100 (no --gpu_model: the flags' check cannot
    # know the GPU): the plan refuses what it planned on NVLink 2.0 before.
    p = params.make_params(gpu_interconnect='dgx1_v100')
    with pytest.raises(from_flags.PlanError) as info:
        from_flags.plan_links(p, gpu_specs.lookup('T4'))
    assert 'the T4 has no NVLink' in str(info.value)


@pytest.mark.parametrize('gpu, value, words', [
    ('T4', 'nvlink', 'the T4 has no NVLink'),
    # a generation was planned (NVLink 3.0 for two T4s); now refused as 'nvlink' is
    ('T4', 'nvlink3', 'the T4 has no NVLink'),
    ('A100', 'nvlink1', "the A100 40GB's NVLink is NVLink 3.0, not NVLink 1.0"),
    # a PCIe 3.0 card was planned at PCIe 4.0's rate on a visible V100S
    ('V100S', 'pcie4', "the V100S PCIe 32GB's host interface is PCIe 3.0")])
def test_a_link_the_visible_gpu_has_not_is_refused_by_the_plan(gpu, value, words):
    # No --gpu_model (a visible GPU): the plan itself refuses it.
    p = params.make_params(gpu_interconnect=value)
    with pytest.raises(from_flags.PlanError) as info:
        from_flags.plan_links(p, gpu_specs.lookup(gpu))
    assert words in str(info.value)


def test_geforce_boards_have_no_peer_to_peer():
    assert [links_lib.peer_to_peer_over_pcie(n) for n in (
        'GTX 1080', 'RTX 2080 Ti', 'RTX 3090', 'RTX 4090', 'RTX A6000', 'V100 16GB', 'T4')] == [
        False, False, False, False, True, True, True]


#: Each case's mean |error| of its multi-GPU rows before issue 40 (results/2026-12-03-cpu-
#: tf2.21-scaling-published.md, the README's table then): none may grow.
ERRORS_BEFORE = {
    'DGX-1 InceptionV3': 0.002, 'DGX-1 ResNet-50': 0.025, 'DGX-1 ResNet-152': 0.024,
    'DGX-1 AlexNet': 0.178, 'DGX-1 VGG16': 0.080, 'EC2 p2.8xlarge InceptionV3': 0.058,
    'EC2 p2.8xlarge ResNet-50': 0.060, 'EC2 p2.8xlarge AlexNet': 0.110,
    'EC2 p2.8xlarge VGG16': 0.064, 'EC2 distributed InceptionV3': 0.022,
    'EC2 distributed ResNet-50': 0.120, 'EC2 distributed ResNet-152': 0.034,
}


def test_published_rows_keep_their_errors_and_nccl_rows_come_closer():
    data = published_scaling.comparison_data()
    assert {c['name'] for c in data['cases']} == set(ERRORS_BEFORE)
    for case in data['cases']:
        assert case['mean_abs_error'] <= ERRORS_BEFORE[case['name']] + 5e-4, case['name']
    nccl = [r for c in data['cases'] if 'nccl' in c['configuration'] for r in c['rows']]
    # 8 DGX-1 AlexNet GPUs: +19% with an all-NVLink ring, +15.6% with NCCL 1.x's real one at
    # the links' line rates, +10% with each hop at its measured copy's rate.
    assert max(abs(r['error']) for r in nccl) < 0.15


def test_nccl1s_ring_in_device_order_leaves_the_dgx1s_nvlink_at_8_gpus():
    # Hybrid cube-mesh: 0-3 and 4-7 all linked, k to k + 4; NCCL 1.x rings 0, 1, ..., n-1.
    assert published_scaling.dgx1_nvlink(0, 3) and published_scaling.dgx1_nvlink(3, 7)
    assert not published_scaling.dgx1_nvlink(3, 4) and not published_scaling.dgx1_nvlink(7, 0)
    assert [published_scaling.ring_leaves_nvlink(n) for n in (1, 2, 4, 8)] == [
        False, False, False, True]
    links = patterns.Links(links_lib.link('pcie3'), 2, links_lib.link('nvlink1_link'),
                           links_lib.link('ib_edr'), ring_through_host=True)
    phases = patterns.phases(patterns.Topology('replicated', 8, all_reduce='nccl'), links,
                             [1000, 3000])
    (block,) = phases.after
    by = {stage.resource: stage for stage in block}
    # Every hop carries 2 (n-1) / n of the gradients: the two through host memory over PCIe.
    assert by['pcie'].bytes == by['gpu_link'].bytes == pytest.approx(2 * 7 / 8 * 4000)
    alexnet = next(c for c in published_scaling.CASES if c.name == 'DGX-1 AlexNet')
    bounds = {r.gpus: r.bound for r in published_scaling.compare(alexnet)}
    assert (bounds[4], bounds[8]) == ('gpu_link', 'pcie')


def test_nccl1s_ring_moves_each_hop_at_a_measured_copys_rate():
    # One NVLink 1.0 link: 18.31 of its 20 GB/s (p2pBandwidthLatencyTest, P100 SXM2); a hop
    # through host memory: a pinned PCIe 3.0 copy's 11.69 GB/s (bandwidthTest, P100).
    assert (links_lib.link('nvlink1_link_copy').gbytes_per_sec,
            links_lib.link('pcie3_copy').gbytes_per_sec) == (18.31, 11.69)
    alexnet = next(c for c in published_scaling.CASES if c.name == 'DGX-1 AlexNet')
    assert alexnet.gpu_link == published_scaling.NCCL1_RING == 'nvlink1_link_copy'
    eight = published_scaling._links(alexnet, 8)
    assert (eight.gpu_link.name, eight.pcie.name, eight.ring_through_host) == (
        'nvlink1_link_copy', 'pcie3_copy', True)
    measured = {r.gpus: r.predicted for r in published_scaling.compare(alexnet)}
    line = {r.gpus: r.predicted for r in published_scaling.compare(
        alexnet._replace(gpu_link='nvlink1_link'))}  # the line rates: host's PCIe 3.0 too
    assert measured[1] == line[1] and all(measured[n] < line[n] for n in (2, 4, 8))
    assert published_scaling._links(alexnet._replace(gpu_link='nvlink1_link'), 8).pcie.name \
        == 'pcie3'


def test_lambdas_series_are_planned_on_their_hosts_as_the_logs_show_them():
    cases = lambda_scaling.cases()
    assert {c.host for c in cases} == {'lambda_epyc7502x8', 'lambda_gold6230x8',
                                       'lambda_gold6230x8_geforce', 'dgx_a100', 'hgx2_v100'}
    assert all(c.variable_update == 'replicated' and c.all_reduce == 'nccl' for c in cases)
    assert all(c.figures[0][0] == 1 and lambda_scaling.is_lambda(c.source) for c in cases)
    geforce = next(c for c in cases if c.host == 'lambda_gold6230x8_geforce')
    links = published_scaling._links(geforce, 8)
    assert links.host_memory.name == 'ddr4_2933_6ch'  # no peer-to-peer: through host memory
    phases = patterns.phases(patterns.Topology('replicated', 8, all_reduce='nccl'), links,
                             [1000, 3000])
    (block,) = phases.after
    assert {stage.resource for stage in block} == {'gpu_link', 'host_memory'}
    quadro = next(c for c in cases if c.host == 'lambda_gold6230x8')
    assert published_scaling._links(quadro, 8).host_memory is None  # peer-to-peer


def test_suspect_published_figures_are_marked_by_the_data_not_by_the_error():
    # Float16 without XLA of a model with batch norm: every multi-GPU row of the series.
    quadro = lambda_scaling.suspect_rows('Gold_6230-Quadro_RTX_8000_trt2_TF2_2', 'float16',
                                         'resnet50')
    assert sorted(quadro) == [2, 4, 8] and 'float16 without XLA' in quadro[8]
    # ... not with XLA, not in float32, not for VGG16 (no batch norm).
    for folder, dtype, model in (('Gold_6230-Quadro_RTX_8000_XLA_trt2_TF2_2', 'float16',
                                  'resnet50'),
                                 ('Gold_6230-Quadro_RTX_8000_trt2_TF2_2', 'float32', 'resnet50'),
                                 ('Gold_6230-Quadro_RTX_8000_trt2_TF2_2', 'float16', 'vgg16')):
        assert lambda_scaling.suspect_rows(folder, dtype, model) == {}
    # Two runs of one configuration that scale differently by over 10%: both marked there.
    trt2, trt = lambda_scaling.TWIN_RUNS[0]
    a = lambda_scaling.suspect_rows(trt2, 'float32', 'alexnet')
    b = lambda_scaling.suspect_rows(trt, 'float32', 'alexnet')
    assert sorted(a) == sorted(b) == [4, 8] and a[4] == b[4]
    assert 'disagree' in a[4]
    assert lambda_scaling.scaling(((1, 100.0), (2, 150.0))) == {1: 1.0, 2: 0.75}


def test_lambdas_float16_series_all_reduce_float16_gradients_as_the_original_did():
    # Lambda ran the original with its default --compact_gradient_transfer: a float16 run's
    # all-reduce moved float16 gradients, which the comparison planned at float32's bytes.
    cases = lambda_scaling.cases()
    assert {c.compact_gradients for c in cases if 'float16' in c.name} == {True}
    assert {c.compact_gradients for c in cases if 'float32' in c.name} == {False}
    geforce = next(c for c in cases if c.name == 'RTX 2080 Ti alexnet float16 (TF 1.15.3, run '
                   'trt)')
    halved = {r.gpus: r.predicted for r in published_scaling.compare(geforce)}
    full = {r.gpus: r.predicted for r in published_scaling.compare(
        geforce._replace(compact_gradients=False))}
    assert halved[1] == pytest.approx(full[1], rel=1e-9)  # one GPU moves nothing
    assert all(halved[n] > full[n] for n in (2, 4, 8))  # bound by host memory: faster
    assert 'float32 either way' not in lambda_scaling.__doc__
    assert 'either way' not in lambda_scaling.suspect_rows(
        'Gold_6230-Quadro_RTX_8000_trt2_TF2_2', 'float16', 'resnet50')[8]


def test_the_committed_multi_gpu_comparison_is_what_the_model_predicts_today():
    from test_scaling_published import _same
    pages = checkout.load_bench('make_performance_page')
    stem, doc = checkout.load_bench('scaling_pages').newest(pages.load_results(),
                                                            'multi_gpu_scaling')
    assert doc is not None, 'no results/*-multi-gpu-scaling.json: python -m ' \
        'bench.bench_multi_gpu_scaling'
    _same(one_host_scaling.comparison_data(), doc['data'], stem)
