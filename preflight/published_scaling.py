"""The original's published multi-GPU results, kept as data with their source, and the step-time
model's predictions of them from each case's published one-GPU figure.

    python -m tf_cnn_benchmarks.preflight.published_scaling      # the tables of docs/scaling.md

Nothing of the model is fitted to these figures: each case is planned from its hardware
(hardware/links.py host presets), its configuration as published, and its one-GPU images/sec
only; the other rows are predictions, compared here with what was measured.
"""

from __future__ import annotations

import sys
from typing import NamedTuple

from ..hardware import gpu_specs
from ..hardware import links as links_lib
from . import layer_profile, step_time
from . import traffic_patterns as patterns

BENCHMARKS_PAGE = ('TensorFlow performance benchmarks, test date May 2017 '
                   '(tensorflow.org/performance/benchmarks; the page\'s source: '
                   'tensorflow/tensorflow, tensorflow/docs_src/performance/benchmarks.md)')
ISSUE_CASE = ('a user report quoted by this project\'s issue 34: AlexNet at 112 images/sec on '
              'one GPU, 56 once the same GPU trains with its parameter server on another EC2 '
              'host (batch and instance type not reported)')


class Case(NamedTuple):
    """One published series.

    name: a label; model: registry name; batch_size: per GPU; variable_update, all_reduce,
    local_parameter_device: the published configuration; host: a hardware/links.py host
    preset; gpus_per_host: GPUs of a full host; ps_of_hosts: {hosts: ps tasks} (the ps tasks
    ran on the worker hosts); figures: ((GPUs, images/sec), ...), the first one GPU; source."""
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


_DGX = dict(host='dgx1_p100', source=BENCHMARKS_PAGE + ', "Details for NVIDIA DGX-1 (NVIDIA '
            'Tesla P100)", training synthetic data')
_EC2 = dict(host='ec2_p2.8xlarge', source=BENCHMARKS_PAGE + ', "Details for Amazon EC2 '
            'Distributed (NVIDIA Tesla K80)", training synthetic data; cross_replica_sync; ps '
            'tasks on the worker instances, as many as instances except where noted')
_EC2_ONE = dict(host='ec2_p2.8xlarge', source=BENCHMARKS_PAGE + ', "Details for Amazon EC2 '
                '(NVIDIA Tesla K80)", training synthetic data')

CASES: tuple[Case, ...] = (
    Case('DGX-1 InceptionV3', 'inception3', 64, 'parameter_server',
         figures=((1, 142), (2, 284), (4, 569), (8, 1131)), **_DGX),
    Case('DGX-1 ResNet-50', 'resnet50', 64, 'parameter_server',
         figures=((1, 219), (2, 422), (4, 852), (8, 1734)), **_DGX),
    Case('DGX-1 ResNet-152', 'resnet152', 64, 'parameter_server',
         figures=((1, 91.8), (2, 181), (4, 356), (8, 716)), **_DGX),
    Case('DGX-1 AlexNet', 'alexnet', 512, 'replicated', all_reduce='nccl',
         figures=((1, 2987), (2, 5658), (4, 10509), (8, 17822)), **_DGX),
    Case('DGX-1 VGG16', 'vgg16', 64, 'replicated', all_reduce='nccl',
         figures=((1, 154), (2, 295), (4, 584), (8, 1081)), **_DGX),
    Case('EC2 p2.8xlarge InceptionV3', 'inception3', 64, 'parameter_server',
         figures=((1, 30.8), (2, 58.7), (4, 117), (8, 230)), **_EC2_ONE),
    Case('EC2 p2.8xlarge ResNet-50', 'resnet50', 64, 'replicated',
         local_parameter_device='gpu',
         figures=((1, 51.5), (2, 98.0), (4, 195), (8, 384)), **_EC2_ONE),
    Case('EC2 p2.8xlarge AlexNet', 'alexnet', 512, 'parameter_server',
         local_parameter_device='gpu',
         figures=((1, 684), (2, 1244), (4, 2479), (8, 4853)), **_EC2_ONE),
    Case('EC2 p2.8xlarge VGG16', 'vgg16', 32, 'parameter_server', local_parameter_device='gpu',
         figures=((1, 36.3), (2, 69.4), (4, 141), (8, 260)), **_EC2_ONE),
    Case('EC2 distributed InceptionV3', 'inception3', 64, 'distributed_replicated',
         ps_of_hosts=((8, 6),),
         figures=((1, 29.7), (8, 229), (16, 459), (32, 902), (64, 1783)), **_EC2),
    Case('EC2 distributed ResNet-50', 'resnet50', 64, 'distributed_replicated',
         figures=((1, 52.4), (8, 378), (16, 751), (32, 1388), (64, 2744)), **_EC2),
    Case('EC2 distributed ResNet-152', 'resnet152', 32, 'distributed_replicated',
         ps_of_hosts=((8, 4),),
         figures=((1, 19.4), (8, 146), (16, 291), (32, 565), (64, 981)), **_EC2),
)

#: The issue's AlexNet case, planned for the original's default AlexNet batch (512) on K80
#: hosts, with the network as the unknown: one row per network.
ISSUE_NETWORKS = ('1gbe', '10gbe', '25gbe')
ISSUE_BATCHES = (512, 128, 32)
ISSUE_FIGURES = (112.0, 56.0)


class Compared(NamedTuple):
    """One published figure and its prediction: case, GPUs, published and predicted
    images/sec, error (predicted / published - 1) and the predicted bound."""
    case: Case
    gpus: int
    published: float
    predicted: float
    error: float
    bound: str


def _links(case: Case) -> patterns.Links:
    host = links_lib.host_preset(case.host)
    return patterns.Links(links_lib.link(host.pcie), host.gpus_per_pcie_uplink,
                          links_lib.link(host.gpu_link),
                          links_lib.link(case.network or host.network))


def _topology(case: Case, gpus: int) -> patterns.Topology:
    hosts = max(1, gpus // case.gpus_per_host)
    per_host = min(gpus, case.gpus_per_host)
    cluster = case.variable_update in patterns.CLUSTER_MODES and not (
        case.variable_update == 'parameter_server' and hosts == 1 and case.ps_on_workers)
    ps = dict(case.ps_of_hosts).get(hosts, hosts) if cluster else 0
    return patterns.Topology(case.variable_update, per_host, hosts, ps,
                             ps_on_workers=case.ps_on_workers, all_reduce=case.all_reduce,
                             local_parameter_device=case.local_parameter_device)


def compare(case: Case, profile=None) -> list[Compared]:
    """Every figure of `case` beside its prediction from the case's one-GPU figure."""
    profile = profile or layer_profile.from_model(case.model, 'imagenet')
    links = _links(case)
    one_gpus, one_figure = case.figures[0]
    compute = step_time.compute_from_single_device(
        one_figure, case.batch_size, profile, _topology(case, one_gpus), links)
    out = []
    for gpus, published in case.figures:
        found = step_time.predict(profile, _topology(case, gpus), links,
                                  batch_size=case.batch_size, compute_secs=compute.secs)
        out.append(Compared(case, gpus, published, found.images_per_sec,
                            found.images_per_sec / published - 1, found.bound))
    return out


def issue_case(profile=None) -> list[tuple[str, int, float, str]]:
    """The issue's AlexNet case: (network, batch, predicted images/sec, bound) per network and
    batch, one K80 worker with its ps on another host, planned from 112 images/sec."""
    profile = profile or layer_profile.from_model('alexnet', 'imagenet')
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


def markdown() -> list[str]:
    """The comparison tables of docs/scaling.md (GPU peaks from hardware/gpu_specs.py are not
    used: every case has its measured one-GPU figure)."""
    lines = ['| case | batch | variable update | GPUs | published | predicted | error | '
             'bound |', '|---|---:|---|---:|---:|---:|---:|---|']
    summary = []
    for case in CASES:
        rows = compare(case)
        for r in rows:
            lines.append('| %s | %d | %s%s | %d | %.1f | %.1f | %+.1f%% | %s |' % (
                case.name, case.batch_size, case.variable_update,
                ' (%s)' % case.all_reduce if case.all_reduce else
                (' (variables on the GPUs)' if case.local_parameter_device == 'gpu' else ''),
                r.gpus, r.published, r.predicted, _percent(r.error),
                'input (the one-GPU figure)' if r.gpus == case.figures[0][0] else r.bound))
        summary.append('| %s | %.1f%% | %+.1f%% |' % (
            case.name, 100 * mean_abs_error(rows), _percent(rows[-1].error)))
    lines += ['', '| case | mean abs. error of the multi-GPU rows | error at the most GPUs |',
              '|---|---:|---:|'] + summary
    lines += ['', '| network | batch | predicted images/sec (published: %g on one GPU, %g '
              'distributed) | error | bound |' % ISSUE_FIGURES, '|---|---:|---:|---:|---|']
    for name, batch, predicted, bound in issue_case():
        lines.append('| %s | %d | %.1f | %+.1f%% | %s |' % (
            links_lib.LABELS[name], batch, predicted, _percent(predicted / ISSUE_FIGURES[1] - 1),
            bound))
    return lines


def gpu_of(case: Case) -> gpu_specs.GpuSpec:
    """The case's GPU (its host preset's)."""
    return gpu_specs.lookup(links_lib.host_preset(case.host).gpu)


if __name__ == '__main__':
    sys.stdout.write('\n'.join(markdown()) + '\n')
