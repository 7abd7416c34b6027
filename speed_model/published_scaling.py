"""The original's published multi-GPU results, kept as data with their source, and the step-time
model's predictions of them from each case's published one-GPU figure.

    python -m tf_cnn_benchmarks.speed_model.published_scaling      # the tables, printed
    python -m bench.bench_scaling_published                      # ... as a results/ file

Nothing of the model is fitted to these figures: each case is planned from its hardware
(hardware/links.py host presets), its configuration as published, and its one-GPU images/sec
only; the other rows are predictions, compared here with what was measured. Each case also
says in one line why its prediction is off (`Case.why`: an explanation written after the
comparison, never an input of it).

`comparison_data()` is the comparison as plain data (what bench/bench_scaling_published.py
writes to results/), `markdown(data)` its tables; bench/make_performance_page.py puts them into
docs/scaling.md and the README from the committed file.
"""

from __future__ import annotations

import argparse
import functools
import sys
from typing import NamedTuple

from ..hardware import links as links_lib
from . import layer_profile, step_time
from . import traffic_patterns as patterns

BENCHMARKS_PAGE = ('TensorFlow performance benchmarks, test date May 2017 '
                   '(tensorflow.org/performance/benchmarks; the page\'s source: '
                   'tensorflow/tensorflow, tensorflow/docs_src/performance/benchmarks.md)')
ISSUE_CASE = ('a user report quoted by this project: AlexNet at 112 images/sec on '
              'one GPU, 56 once the same GPU trains with its parameter server on another EC2 '
              'host (batch and instance type not reported)')


class Case(NamedTuple):
    """One published series.

    name: a label; model: registry name; batch_size: per GPU; variable_update, all_reduce,
    local_parameter_device: the published configuration; host: a hardware/links.py host
    preset; gpus_per_host: GPUs of a full host; ps_of_hosts: {hosts: ps tasks} (the ps tasks
    ran on the worker hosts); figures: ((GPUs, images/sec), ...), the first one GPU; source;
    why: one line on why the prediction is off (written after the comparison); gpu_link: the
    GPU-to-GPU link the run's software reached instead of the host's (hardware/links.py name;
    '' the host preset's); suspect: ((GPUs, evidence), ...) for published figures that are
    themselves suspect (kept in the comparison and its statistics, marked); compact_gradients:
    the runs all-reduced float32 gradients as float16 in one host's replicated all-reduce (the
    original with --use_fp16 and its default --compact_gradient_transfer:
    traffic_patterns.gradient_ratio_of)."""
    name: str
    model: str
    batch_size: int
    variable_update: str
    host: str
    figures: tuple
    source: str
    all_reduce: str = ''
    local_parameter_device: str = 'cpu'
    gpus_per_host: int = 8
    ps_of_hosts: tuple = ()
    network: str = ''
    ps_on_workers: bool = True
    why: str = ''
    gpu_link: str = ''
    suspect: tuple = ()
    compact_gradients: bool = False


_DGX = dict(host='dgx1_p100', source=BENCHMARKS_PAGE + ', "Details for NVIDIA DGX-1 (NVIDIA '
            'Tesla P100)", training synthetic data')
_EC2 = dict(host='ec2_p2.8xlarge', source=BENCHMARKS_PAGE + ', "Details for Amazon EC2 '
            'Distributed (NVIDIA Tesla K80)", training synthetic data; cross_replica_sync; ps '
            'tasks on the worker instances, as many as instances except where noted')
_EC2_ONE = dict(host='ec2_p2.8xlarge', source=BENCHMARKS_PAGE + ', "Details for Amazon EC2 '
                '(NVIDIA Tesla K80)", training synthetic data')

_HIDDEN = ('compute-bound: the traffic hides behind compute; what the runs lose (per-step '
           'overheads, stragglers) is not in the model')
#: TensorFlow 1.1 (May 2017) ran NCCL 1.x through tf.contrib.nccl: one ring, so one NVLink
#: per hop, not the four links of a DGX-1 P100. A ring is a chain of copies, one per hop, each
#: as fast as a copy over its link: the hop's rate is the measured copy's (hardware/links.py
#: 'nvlink1_link_copy', 18.31 GB/s over one NVLink 1.0 link, of its 20 GB/s line rate), and a
#: hop through host memory moves at a pinned copy's over PCIe 3.0 ('pcie3_copy', 11.69 GB/s
#: host to device, the slower of its two crossings).
NCCL1_RING = 'nvlink1_link_copy'
NCCL1_RING_PCIE = 'pcie3_copy'
_NCCL = ('NCCL 1.x\'s one ring in device order, after the backward pass, each hop at a measured '
         'copy\'s rate: one NVLink 1.0 link per hop, and at 8 GPUs the two hops without NVLink '
         'through host memory over PCIe; eight towers launched from one process are not in the '
         'model')


def dgx1_nvlink(i: int, j: int) -> bool:
    """Whether GPUs i and j of a DGX-1 (P100 or V100) have an NVLink between them: its hybrid
    cube-mesh joins the four GPUs of each half to each other and GPU k to GPU k + 4 (NVIDIA
    DGX-1 system architecture whitepaper, 2017, the NVLink topology figure)."""
    return i != j and (i // 4 == j // 4 or abs(i - j) == 4)


def ring_leaves_nvlink(gpus: int, linked=dgx1_nvlink) -> bool:
    """Whether NCCL 1.x's ring over GPUs 0 .. gpus-1 has a hop without NVLink: NCCL 1.x builds
    one ring in the devices' NVML index order (NVIDIA/nccl v1.3.4, src/core.cu: orderRanks
    sorts the ranks by NVML index; commBuildMaps joins each rank to the next and reaches a
    neighbour without peer-to-peer through a host-memory buffer). On a DGX-1 that happens at
    8 GPUs (hops 3 -> 4 and 7 -> 0: the GPUs sit on different CPU sockets, without
    peer-to-peer), not at 2 or 4."""
    return gpus > 1 and any(not linked(k, (k + 1) % gpus) for k in range(gpus))
_P2P = ('variables on the GPUs: peer-to-peer copies through the K80s\' PCIe switches are '
        'planned at the line rate')
_EC2_LINE = 'at the 10 Gbit/s line rate; gRPC over TCP on EC2 moved less'

CASES: tuple[Case, ...] = (
    Case('DGX-1 InceptionV3', 'inception3', 64, 'parameter_server', why=_HIDDEN,
         figures=((1, 142), (2, 284), (4, 569), (8, 1131)), **_DGX),
    Case('DGX-1 ResNet-50', 'resnet50', 64, 'parameter_server', why=_HIDDEN,
         figures=((1, 219), (2, 422), (4, 852), (8, 1734)), **_DGX),
    Case('DGX-1 ResNet-152', 'resnet152', 64, 'parameter_server', why=_HIDDEN,
         figures=((1, 91.8), (2, 181), (4, 356), (8, 716)), **_DGX),
    Case('DGX-1 AlexNet', 'alexnet', 512, 'replicated', all_reduce='nccl', why=_NCCL,
         gpu_link=NCCL1_RING,
         figures=((1, 2987), (2, 5658), (4, 10509), (8, 17822)), **_DGX),
    Case('DGX-1 VGG16', 'vgg16', 64, 'replicated', all_reduce='nccl', why=_NCCL,
         gpu_link=NCCL1_RING,
         figures=((1, 154), (2, 295), (4, 584), (8, 1081)), **_DGX),
    Case('EC2 p2.8xlarge InceptionV3', 'inception3', 64, 'parameter_server',
         why='compute-bound, PCIe copies planned at the line rate with two K80s per uplink; '
             'per-step overheads are not in the model',
         figures=((1, 30.8), (2, 58.7), (4, 117), (8, 230)), **_EC2_ONE),
    Case('EC2 p2.8xlarge ResNet-50', 'resnet50', 64, 'replicated',
         local_parameter_device='gpu', why=_P2P,
         figures=((1, 51.5), (2, 98.0), (4, 195), (8, 384)), **_EC2_ONE),
    Case('EC2 p2.8xlarge AlexNet', 'alexnet', 512, 'parameter_server',
         local_parameter_device='gpu', why=_P2P,
         figures=((1, 684), (2, 1244), (4, 2479), (8, 4853)), **_EC2_ONE),
    Case('EC2 p2.8xlarge VGG16', 'vgg16', 32, 'parameter_server', local_parameter_device='gpu',
         why=_P2P, figures=((1, 36.3), (2, 69.4), (4, 141), (8, 260)), **_EC2_ONE),
    Case('EC2 distributed InceptionV3', 'inception3', 64, 'distributed_replicated',
         ps_of_hosts=((8, 6),),
         why='compute-bound up to 32 GPUs, the ps links at 64; the barrier, stragglers and '
             'gRPC\'s overheads are not in the model',
         figures=((1, 29.7), (8, 229), (16, 459), (32, 902), (64, 1783)), **_EC2),
    Case('EC2 distributed ResNet-50', 'resnet50', 64, 'distributed_replicated',
         why='the ps holding the 8 MB fully connected layer bounds 32 and 64 GPUs ' + _EC2_LINE,
         figures=((1, 52.4), (8, 378), (16, 751), (32, 1388), (64, 2744)), **_EC2),
    Case('EC2 distributed ResNet-152', 'resnet152', 32, 'distributed_replicated',
         ps_of_hosts=((8, 4),), why='the network and ps links bound 16 to 64 GPUs ' + _EC2_LINE,
         figures=((1, 19.4), (8, 146), (16, 291), (32, 565), (64, 981)), **_EC2),
)

#: The user-reported AlexNet case, planned for the original's default AlexNet batch (512) on K80
#: hosts, with the network as the unknown: one row per network.
ISSUE_NETWORKS = ('1gbe', '10gbe', '25gbe')
ISSUE_BATCHES = (512, 128, 32)
ISSUE_FIGURES = (112.0, 56.0)
ISSUE_WHY = ('at 10 Gbit/s the model overlaps AlexNet\'s fully connected layers\' transfers '
             'with its convolutions; halving needs a far slower link, a small batch or no '
             'overlap (batch and instance not reported)')
#: The issue case's row quoted where one figure stands for it: the original's default AlexNet
#: batch on the 10 Gbit/s network of the p2 instances.
ISSUE_HEADLINE = ('10gbe', 512)


class Compared(NamedTuple):
    """One published figure and its prediction: case, GPUs, published and predicted
    images/sec, error (predicted / published - 1) and the predicted bound."""
    case: Case
    gpus: int
    published: float
    predicted: float
    error: float
    bound: str


def _links(case: Case, gpus: int = 1) -> patterns.Links:
    host = links_lib.host_preset(case.host)
    through_host = (case.gpu_link == NCCL1_RING and case.host.startswith('dgx1')
                    and ring_leaves_nvlink(min(gpus, case.gpus_per_host)))
    pcie = NCCL1_RING_PCIE if case.gpu_link == NCCL1_RING else host.pcie
    return patterns.Links(links_lib.link(pcie), host.gpus_per_pcie_uplink,
                          links_lib.link(case.gpu_link or host.gpu_link),
                          links_lib.link(case.network or host.network),
                          host_memory=(links_lib.link(host.host_memory) if host.host_memory
                                       else None),
                          ring_through_host=through_host)


def _topology(case: Case, gpus: int) -> patterns.Topology:
    hosts = max(1, gpus // case.gpus_per_host)
    per_host = min(gpus, case.gpus_per_host)
    cluster = case.variable_update in patterns.CLUSTER_MODES and not (
        case.variable_update == 'parameter_server' and hosts == 1 and case.ps_on_workers)
    ps = dict(case.ps_of_hosts).get(hosts, hosts) if cluster else 0
    return patterns.Topology(case.variable_update, per_host, hosts, ps,
                             ps_on_workers=case.ps_on_workers, all_reduce=case.all_reduce,
                             local_parameter_device=case.local_parameter_device)


@functools.lru_cache(maxsize=None)
def _profile(model: str) -> layer_profile.LayerProfile:
    """The model's ImageNet profile, built once per process (several cases share a model)."""
    return layer_profile.from_model(model, 'imagenet')


def compare(case: Case, profile=None) -> list[Compared]:
    """Every figure of `case` beside its prediction from the case's one-GPU figure."""
    profile = profile or _profile(case.model)
    one_gpus, one_figure = case.figures[0]
    first = _topology(case, one_gpus)
    compute = step_time.compute_from_single_device(
        one_figure, case.batch_size, profile, first, _links(case, one_gpus),
        gradient_ratio=patterns.gradient_ratio_of(first, case.compact_gradients))
    out = []
    for gpus, published in case.figures:
        topo = _topology(case, gpus)
        found = step_time.predict(
            profile, topo, _links(case, gpus), batch_size=case.batch_size,
            compute_secs=compute.secs,
            gradient_ratio=patterns.gradient_ratio_of(topo, case.compact_gradients))
        out.append(Compared(case, gpus, published, found.images_per_sec,
                            found.images_per_sec / published - 1, found.bound))
    return out


def issue_case(profile=None) -> list[tuple[str, int, float, str]]:
    """The user-reported AlexNet case: (network, batch, predicted images/sec, bound) per network and
    batch, one K80 worker with its ps on another host, planned from 112 images/sec."""
    profile = profile or _profile('alexnet')
    one, _ = ISSUE_FIGURES
    out = []
    for name in ISSUE_NETWORKS:
        links = patterns.Links(links_lib.link('pcie3'), 1, links_lib.link('pcie3'),
                               links_lib.link(name))
        for batch in ISSUE_BATCHES:
            compute = step_time.compute_from_single_device(
                one, batch, profile, patterns.Topology('parameter_server', 1), links)
            found = step_time.predict(
                profile, patterns.Topology('parameter_server', 1, 1, 1, ps_on_workers=False),
                links, batch_size=batch, compute_secs=compute.secs)
            out.append((name, batch, found.images_per_sec, found.bound))
    return out


def mean_abs_error(rows: list[Compared]) -> float:
    """Mean |error| of the multi-GPU rows (the one-GPU row is the input)."""
    errors = [abs(r.error) for r in rows if r.gpus > r.case.figures[0][0]]
    return sum(errors) / len(errors) if errors else 0.0


def _percent(error: float) -> float:
    """100 x error, with the sign of a rounding residue dropped ('+0.0%', not '-0.0%')."""
    return 0.0 if abs(error) < 5e-4 else 100 * error


def configuration(case: Case) -> str:
    """The case's variable update in words: 'replicated (nccl)', 'parameter_server (variables
    on the GPUs)'."""
    if case.all_reduce:
        return '%s (%s)' % (case.variable_update, case.all_reduce)
    if case.local_parameter_device == 'gpu':
        return '%s (variables on the GPUs)' % case.variable_update
    return case.variable_update


def comparison_data() -> dict:
    """Every comparison as plain data (what bench/bench_scaling_published.py writes).

    Returns:
      {'source': the published page, 'cases': [{'name', 'model', 'batch_size' (per GPU),
       'configuration', 'host', 'why', 'source', 'rows': [{'gpus', 'published', 'predicted'
       (images/sec), 'error' (predicted / published - 1), 'bound'}], 'mean_abs_error' (of the
       multi-GPU rows, a fraction)}], 'issue': {'source', 'why', 'published_one',
       'published_distributed' (images/sec), 'headline': [network, batch], 'rows':
       [{'network', 'label', 'batch', 'predicted', 'error' (against published_distributed),
       'bound'}]}}.
    """
    cases = []
    for case in CASES:
        rows = compare(case)
        cases.append({
            'name': case.name, 'model': case.model, 'batch_size': case.batch_size,
            'configuration': configuration(case), 'host': case.host, 'why': case.why,
            'source': case.source, 'mean_abs_error': mean_abs_error(rows),
            'rows': [{'gpus': r.gpus, 'published': r.published, 'predicted': r.predicted,
                      'error': r.error, 'bound': r.bound} for r in rows]})
    one, distributed = ISSUE_FIGURES
    issue = [{'network': name, 'label': links_lib.LABELS[name], 'batch': batch,
              'predicted': predicted, 'error': predicted / distributed - 1, 'bound': bound}
             for name, batch, predicted, bound in issue_case()]
    return {'source': BENCHMARKS_PAGE, 'cases': cases,
            'issue': {'source': ISSUE_CASE, 'why': ISSUE_WHY, 'published_one': one,
                      'published_distributed': distributed, 'headline': list(ISSUE_HEADLINE),
                      'rows': issue}}


def series_markdown(data: dict) -> list[str]:
    """The published series against their predictions, and the error of each, as two
    Markdown tables (from `comparison_data()`'s dict)."""
    lines = ['| case | batch | variable update | GPUs | published | predicted | error | '
             'bound |', '|---|---:|---|---:|---:|---:|---:|---|']
    summary = []
    for case in data['cases']:
        first = case['rows'][0]['gpus']
        for r in case['rows']:
            lines.append('| %s | %d | %s | %d | %.1f | %.1f | %+.1f%% | %s |' % (
                case['name'], case['batch_size'], case['configuration'], r['gpus'],
                r['published'], r['predicted'], _percent(r['error']),
                'input (the one-GPU figure)' if r['gpus'] == first else r['bound']))
        summary.append('| %s | %.1f%% | %+.1f%% |' % (
            case['name'], 100 * case['mean_abs_error'], _percent(case['rows'][-1]['error'])))
    return lines + ['', '| case | mean abs. error of the multi-GPU rows | error at the most '
                    'GPUs |', '|---|---:|---:|'] + summary


def issue_markdown(data: dict) -> list[str]:
    """The user-reported AlexNet case per network and batch, as a Markdown table."""
    issue = data['issue']
    lines = ['| network | batch | predicted images/sec (published: %g on one GPU, %g '
             'distributed) | error | bound |' % (issue['published_one'],
                                                 issue['published_distributed']),
             '|---|---:|---:|---:|---|']
    for r in issue['rows']:
        lines.append('| %s | %d | %.1f | %+.1f%% | %s |' % (
            r['label'], r['batch'], r['predicted'], _percent(r['error']), r['bound']))
    return lines


def markdown(data: dict | None = None) -> list[str]:
    """Every comparison table, from `comparison_data()`'s dict (computed when None; GPU peaks
    from hardware/gpu_specs.py are not used: every case has its measured one-GPU figure)."""
    data = data or comparison_data()
    return series_markdown(data) + [''] + issue_markdown(data)


if __name__ == '__main__':
    argparse.ArgumentParser(
        prog='python -m tf_cnn_benchmarks.speed_model.published_scaling',
        description=__doc__.split('\n\n')[0].replace('\n', ' ')).parse_args()
    sys.stdout.write('\n'.join(markdown()) + '\n')
