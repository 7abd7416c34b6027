"""One host's 1 to 8 GPUs: the original's published rows on NVLink and PCIe hosts against the
step-time model, and the all-reduce of the host's real GPU-to-GPU paths side by side.

    python -m bench.bench_multi_gpu_scaling      # both, as a results/ file

The published rows are every one-host series of the original's benchmarks page
(published_scaling.BENCHMARKS_PAGE): the DGX-1 (8 P100 on NVLink) and EC2 p2.8xlarge (8 K80 on
PCIe) series of published_scaling.CASES, and the page's other one-host series (`MORE_CASES`: the
DGX-1's batch-32 runs, the Google Compute Engine K80 host, EC2's ResNet-152); then Lambda's
1 to 8 GPU series of the original tool on PCIe hosts with and without peer-to-peer and on
NVSwitch hosts (speed_model/lambda_scaling.py), with their suspect figures marked. Each is
predicted from its own one-GPU figure (published_scaling.compare), nothing fitted.

The paths (`path_rows`): one ring all-reduce of a model's gradients on 2 to 8 GPUs over NVLink,
over PCIe with peer-to-peer, and over PCIe without it (GeForce boards: through host memory),
with the links of hardware/links.py, in seconds per step (traffic_patterns.phases and
step_time.busy_secs).
"""

from __future__ import annotations

import functools

from ..hardware import links as links_lib
from . import lambda_scaling, layer_profile, published_scaling, step_time
from . import traffic_patterns as patterns
from .published_scaling import BENCHMARKS_PAGE, Case

_DGX32 = dict(host='dgx1_p100', source=BENCHMARKS_PAGE + ', "Details for NVIDIA DGX-1 (NVIDIA '
              'Tesla P100)", other results (batch size 32), training synthetic data')
_GCE = dict(host='gce_k80x8', source=BENCHMARKS_PAGE + ', "Details for Google Compute Engine '
            '(NVIDIA Tesla K80)", training synthetic data; parameter_server with the variables '
            'on the CPU for every model')
_EC2 = dict(host='ec2_p2.8xlarge', source=BENCHMARKS_PAGE + ', "Details for Amazon EC2 (NVIDIA '
            'Tesla K80)", training synthetic data')
_PS = 'compute-bound: per-step overheads are not in the model'

#: The page's one-host series that published_scaling.CASES (the README's table) leaves out.
MORE_CASES: tuple[Case, ...] = (
    Case('DGX-1 VGG16 (batch 32)', 'vgg16', 32, 'replicated', all_reduce='nccl',
         gpu_link=published_scaling.NCCL1_RING, why=published_scaling._NCCL,
         figures=((1, 144), (2, 281), (4, 549), (8, 820)), **_DGX32),
    Case('DGX-1 ResNet-50 (batch 32)', 'resnet50', 32, 'parameter_server', why=_PS,
         figures=((1, 195), (2, 368), (4, 768), (8, 1485)), **_DGX32),
    Case('GCE K80 InceptionV3', 'inception3', 64, 'parameter_server', why=_PS,
         figures=((1, 30.5), (2, 57.8), (4, 116), (8, 227)), **_GCE),
    Case('GCE K80 ResNet-50', 'resnet50', 64, 'parameter_server', why=_PS,
         figures=((1, 51.9), (2, 99.0), (4, 195), (8, 387)), **_GCE),
    Case('GCE K80 ResNet-152', 'resnet152', 32, 'parameter_server', why=_PS,
         figures=((1, 20.0), (2, 38.2), (4, 75.8), (8, 148)), **_GCE),
    Case('GCE K80 AlexNet', 'alexnet', 512, 'parameter_server', why=_PS,
         figures=((1, 656), (2, 1209), (4, 2328), (8, 4640)), **_GCE),
    Case('GCE K80 VGG16', 'vgg16', 32, 'parameter_server', why=_PS,
         figures=((1, 35.4), (2, 64.8), (4, 120), (8, 234)), **_GCE),
    Case('EC2 p2.8xlarge ResNet-152', 'resnet152', 32, 'replicated',
         local_parameter_device='gpu', why=published_scaling._P2P,
         figures=((1, 19.7), (2, 37.6), (4, 74.9), (8, 149)), **_EC2),
)

#: The paths `path_rows` compares: (label, GPU-to-GPU link, host memory or None).
PATHS = (('NVLink 2.0 (V100 SXM2)', 'nvlink2', None),
         ('PCIe 3.0, peer-to-peer', 'pcie3', None),
         ('PCIe 3.0, no peer-to-peer (GeForce): host memory', 'pcie3',
          links_lib.DEFAULT_HOST_MEMORY_NO_P2P))


def one_host_cases() -> list[Case]:
    """Every published one-host series: CASES on one host, MORE_CASES, then Lambda's
    (lambda_scaling.cases)."""
    return [c for c in published_scaling.CASES if max(g for g, _ in c.figures) <= c.gpus_per_host
            ] + list(MORE_CASES) + lambda_scaling.cases()


#: The issue's bound on a multi-GPU row's |error|.
ROW_TARGET = 0.15


def _row(r) -> dict:
    return {'gpus': r.gpus, 'published': r.published, 'predicted': r.predicted,
            'error': r.error, 'bound': r.bound,
            'suspect': dict(r.case.suspect).get(r.gpus, '')}


@functools.lru_cache(maxsize=None)
def _profile(model: str) -> layer_profile.LayerProfile:
    return layer_profile.from_model(model, 'imagenet')


def path_links(gpu_link: str, host_memory: str | None) -> patterns.Links:
    """The Links of one PATHS entry (PCIe 3.0 to the host, one GPU per uplink, 10 GbE)."""
    return patterns.Links(links_lib.link('pcie3'), 1, links_lib.link(gpu_link),
                          links_lib.link('10gbe'),
                          host_memory=links_lib.link(host_memory) if host_memory else None)


def all_reduce_secs(profile, gpus: int, links: patterns.Links) -> float:
    """Seconds one NCCL all-reduce of the profile's float32 gradients over `gpus` GPUs keeps
    its busiest resource busy (step_time.busy_secs of the replicated NCCL pattern)."""
    phases = patterns.phases(patterns.Topology('replicated', gpus, all_reduce='nccl'), links,
                             [layer.bytes for layer in profile.layers])
    return max(step_time.busy_secs(phases).values(), default=0.0)


def path_rows(models=('resnet50', 'vgg16'), gpus=(2, 4, 8)) -> list[dict]:
    """[{'model', 'gradient_bytes', 'gpus', 'ring_bytes_per_gpu', 'paths': {label: seconds}}]
    for each model and GPU count (see the module docstring)."""
    out = []
    for model in models:
        profile = _profile(model)
        for n in gpus:
            out.append({'model': model, 'gradient_bytes': profile.model_bytes, 'gpus': n,
                        'ring_bytes_per_gpu': 2 * (n - 1) / n * profile.model_bytes,
                        'paths': {label: all_reduce_secs(profile, n, path_links(link, memory))
                                  for label, link, memory in PATHS}})
    return out


def comparison_data() -> dict:
    """{'source', 'cases': [{'name', 'model', 'batch_size', 'configuration', 'host', 'source',
    'why', 'rows': [{'gpus', 'published', 'predicted', 'error', 'bound', 'suspect'}],
    'max_abs_error'}], 'summary': {'nccl_rows', 'nccl_max_abs_error', 'nccl_beyond_15',
    'nccl_trusted_rows', 'nccl_trusted_max_abs_error', 'nccl_suspect_rows', 'all_rows',
    'all_max_abs_error', 'all_median_abs_error'} (over the multi-GPU rows; 'trusted': those no
    evidence marks suspect), 'paths': path_rows()}."""
    cases, nccl, trusted, every = [], [], [], []
    for case in one_host_cases():
        rows = published_scaling.compare(case, _profile(case.model))
        multi = [r for r in rows if r.gpus > case.figures[0][0]]
        every += [abs(r.error) for r in multi]
        if case.all_reduce == 'nccl':
            nccl += [abs(r.error) for r in multi]
            trusted += [abs(r.error) for r in multi if r.gpus not in dict(case.suspect)]
        cases.append({'name': case.name, 'model': case.model, 'batch_size': case.batch_size,
                      'configuration': published_scaling.configuration(case),
                      'host': case.host, 'source': case.source, 'why': case.why,
                      'rows': [_row(r) for r in rows],
                      'max_abs_error': max(abs(r.error) for r in multi)})
    return {'source': BENCHMARKS_PAGE, 'cases': cases,
            'summary': {'nccl_rows': len(nccl), 'nccl_max_abs_error': max(nccl),
                        'nccl_beyond_15': sum(1 for e in nccl if e > ROW_TARGET),
                        'nccl_trusted_rows': len(trusted),
                        'nccl_trusted_max_abs_error': max(trusted),
                        'nccl_suspect_rows': len(nccl) - len(trusted),
                        'all_rows': len(every), 'all_max_abs_error': max(every),
                        'all_median_abs_error': sorted(every)[len(every) // 2]},
            'paths': path_rows()}


def markdown(data: dict) -> list[str]:
    """The comparison's tables (from `comparison_data()`'s dict)."""
    s = data['summary']
    lines = ['Multi-GPU rows of one host predicted from each series\' published one-GPU figure '
             '(nothing fitted). Replicated with NCCL: %d rows, largest error %.1f%%, %d beyond '
             '15%%; without the %d rows whose published figure is suspect (marked, evidence '
             'below): %d rows, largest error %.1f%%. All %d multi-GPU rows: median %.1f%%, '
             'largest %.1f%%.' % (
                 s['nccl_rows'], 100 * s['nccl_max_abs_error'], s['nccl_beyond_15'],
                 s['nccl_suspect_rows'], s['nccl_trusted_rows'],
                 100 * s['nccl_trusted_max_abs_error'], s['all_rows'],
                 100 * s['all_median_abs_error'], 100 * s['all_max_abs_error']), '',
             '| case | host | batch | variable update | GPUs | published | predicted | error | '
             'bound |', '|---|---|---:|---|---:|---:|---:|---:|---|']
    suspect = {}
    for case in data['cases']:
        for r in case['rows']:
            mark = ''
            if r.get('suspect'):
                mark = ' [s%d]' % (1 + list(suspect).index(r['suspect'])
                                   if r['suspect'] in suspect else len(suspect) + 1)
                suspect.setdefault(r['suspect'], None)
            lines.append('| %s | %s | %d | %s | %d | %.1f%s | %.1f | %+.1f%% | %s |' % (
                case['name'], case['host'], case['batch_size'], case['configuration'],
                r['gpus'], r['published'], mark, r['predicted'], published_scaling._percent(
                    r['error']), 'input' if r['gpus'] == case['rows'][0]['gpus'] else r['bound']))
    sources = list(dict.fromkeys(c['source'] for c in data['cases']))
    if suspect:
        lines += ['', 'Suspect published figures (kept in the table and the statistics):', '']
        lines += ['* [s%d] %s' % (i + 1, why) for i, why in enumerate(suspect)]
    lambdas = [c for c in data['cases'] if lambda_scaling.is_lambda(c['source'])]
    whys = list(dict.fromkeys((c['host'], c['why']) for c in lambdas))
    lines += ['', 'Why each series is off (written after the comparison, never an input):', '']
    lines += ['* %s: %s [%d]' % (c['name'], c['why'], 1 + sources.index(c['source']))
              for c in data['cases'] if c not in lambdas]
    lines += ['* Lambda\'s series on %s: %s' % (host, why) for host, why in whys]
    lines += ['', 'Lambda\'s logged series not validated, and why:', '']
    lines += ['* %s: %s' % (folder, why) for folder, why in lambda_scaling.NOT_VALIDATED]
    lines += ['', 'Sources:', ''] + ['%d. %s' % (i + 1, s) for i, s in enumerate(sources)]
    labels = [label for label, _, _ in PATHS]
    lines += ['', 'One NCCL all-reduce of the float32 gradients, ms per step on the busiest '
              'resource (2(N-1)/N of the gradients per GPU):', '',
              '| model | gradients | GPUs | per GPU | %s |' % ' | '.join(labels),
              '|---|---:|---:|---:|%s|' % '|'.join('---:' for _ in labels)]
    for r in data['paths']:
        lines.append('| %s | %.1f MiB | %d | %.1f MiB | %s |' % (
            r['model'], r['gradient_bytes'] / (1 << 20), r['gpus'],
            r['ring_bytes_per_gpu'] / (1 << 20),
            ' | '.join('%.2f' % (1e3 * r['paths'][label]) for label in labels)))
    return lines
