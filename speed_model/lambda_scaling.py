"""Lambda's published 1 to 8 GPU series of tf_cnn_benchmarks on PCIe and NVLink hosts, kept as
data with their source, as cases of the published-scaling comparison.

    python -m bench.bench_multi_gpu_scaling      # these beside the original's one-host series

Lambda ran the original tool on each host with `--variable_update=replicated
--all_reduce_spec=nccl`, synthetic data, NCHW, one run per GPU count
(lambdal/lambda-tensorflow-benchmark, commit c17619d, logs/<host>.logs/syn-replicated-
fp<16|32>-<N>gpus/<model>-<batch>/throughput/1, "total images/sec"). A series is validated here
where its host's topology can be stated from its log (TensorFlow's device interconnect matrix:
peer-to-peer or not between each pair; each GPU's PCI bus id) or its vendor's description: the
hosts are hardware/links.py presets (`lambda_epyc7502x8`, `lambda_gold6230x8`,
`lambda_gold6230x8_geforce`, `dgx_a100`, `hgx2_v100`), each with that evidence. Each series is
predicted from its own one-GPU figure (published_scaling.compare), nothing fitted; the runs'
XLA (TF_XLA_FLAGS auto-clustering in the folders so named, and in 7502-A100-PCIE-40GB, whose
logs compile XLA clusters) is in that figure. The float16 runs used the original's defaults:
--use_fp16 with float32 variables and --compact_gradient_transfer, so their all-reduce moved the
gradients as float16, half the bytes of the float32 runs' (Case.compact_gradients).

Suspect figures stay in the comparison and its statistics, marked with their evidence
(`suspect_rows`): a float16 series without XLA of a model with batch norm whose own host scales
the same model near-linearly in float32 and the same series' VGG16 and AlexNet (no batch norm)
too. The traffic does not explain such a loss: the float16 all-reduce moves half the float32
run's bytes (over a step about twice as short), and in every such series VGG16's and AlexNet's
all-reduce moves at least as many bytes per second of compute as the batch-norm models' (from
about ResNet-152's to 2.6 times ResNet-50's); and, where Lambda logged two runs
of one configuration on one host, the GPU counts at which the two disagree by more than 10%.
`NOT_VALIDATED` lists the logged series left out, each with the reason.
"""

from __future__ import annotations

from .published_scaling import Case

LAMBDA_REPO = ('Lambda, lambdal/lambda-tensorflow-benchmark (commit c17619d), logs/%s.logs/'
               'syn-replicated-fp<16|32>-<N>gpus/<model>-<batch>/throughput/1, "total '
               'images/sec": tf_cnn_benchmarks, replicated, --all_reduce_spec=nccl, synthetic '
               'data, NCHW')

#: log folder: (host preset, label, software).
HOSTS = {
    '7502-A100-PCIE-40GB': ('lambda_epyc7502x8', 'A100 PCIe', 'TF 1.15.4, XLA'),
    '7502-RTX_A6000_XLA_TF1_15': ('lambda_epyc7502x8', 'RTX A6000', 'TF 1.15.4, XLA'),
    'Gold_6230-Quadro_RTX_8000_XLA_trt2_TF2_2': ('lambda_gold6230x8', 'Quadro RTX 8000',
                                                 'TF 2.2, XLA'),
    'Gold_6230-Quadro_RTX_8000_trt2_TF2_2': ('lambda_gold6230x8', 'Quadro RTX 8000', 'TF 2.2'),
    'Gold_6230-GeForce_RTX_2080_Ti_trt2_TF1_15': ('lambda_gold6230x8_geforce', 'RTX 2080 Ti',
                                                  'TF 1.15.3, run trt2'),
    'Gold_6230-GeForce_RTX_2080_Ti_trt_TF1_15': ('lambda_gold6230x8_geforce', 'RTX 2080 Ti',
                                                 'TF 1.15.3, run trt'),
    '7742-A100-SXM4-40GB_TF2_3_XLA': ('dgx_a100', 'A100 SXM4', 'TF 2.3, XLA'),
    'Platinum-Tesla_V100-SXM3-32GB_HP16_TF2_2': ('hgx2_v100', 'V100 SXM3', 'TF 2.2'),
}

_M = ('alexnet', 'inception3', 'resnet152', 'resnet50', 'vgg16')

#: log folder: {precision: {model: (batch per GPU, ((GPUs, images/sec), ...))}}, as logged
#: (a GPU count run at another batch is left out of its series: 7502-A100-PCIE-40GB's float16
#: Inception-v3 on 4 GPUs ran batch 320, Gold_6230-GeForce_RTX_2080_Ti_trt2_TF1_15's float32
#: VGG16 on 2 GPUs batch 56).
SERIES: dict[str, dict] = {
    '7502-A100-PCIE-40GB': {
        'float32': dict(zip(_M, (
            (1792, ((1, 10187.09), (2, 20093.37), (4, 38784.8), (8, 75860.46))),
            (224, ((1, 627.35), (2, 1241.35), (4, 2446.44), (8, 4817.2))),
            (112, ((1, 390.08), (2, 739.39), (4, 1426.68), (8, 2715.19))),
            (224, ((1, 953.43), (2, 1866.33), (4, 3665.99), (8, 7197.02))),
            (224, ((1, 503.61), (2, 1005.66), (4, 2110.38), (8, 4073.72)))))),
        'float16': dict(zip(_M, (
            (3584, ((1, 16486.68), (2, 33629.38), (4, 65076.27), (8, 129265.6))),
            (360, ((1, 1222.3), (2, 2448.9), (8, 9639.76))),
            (200, ((1, 886.42), (2, 1742.83), (4, 3388.08), (8, 6485.06))),
            (448, ((1, 2075.05), (2, 4083), (4, 8153.19), (8, 15996.69))),
            (448, ((1, 1189.76), (2, 2398.15), (4, 4750.82), (8, 10222))))))},
    '7502-RTX_A6000_XLA_TF1_15': {
        'float32': dict(zip(_M, (
            (2048, ((1, 7095.96), (2, 13968.82), (4, 27340.51), (8, 53188.43))),
            (256, ((1, 368.46), (2, 730.42), (4, 1438.52), (8, 2859.41))),
            (128, ((1, 234.68), (2, 456.01), (4, 902.89), (8, 1729.75))),
            (256, ((1, 553.92), (2, 1094), (4, 2170), (8, 4280.37))),
            (256, ((1, 317.93), (2, 632.77), (4, 1295.58), (8, 2546.65)))))),
        'float16': dict(zip(_M, (
            (4096, ((1, 10000.58), (2, 19939.08), (4, 39046.57), (8, 77325.78))),
            (512, ((1, 742.39), (2, 1480.42), (4, 2942.52), (8, 5820.41))),
            (256, ((1, 591.76), (2, 1181.99), (4, 2329.87), (8, 4564.19))),
            (512, ((1, 1403.54), (2, 2798.66), (4, 5584.68), (8, 11056.85))),
            (512, ((1, 727.63), (2, 1446.86), (4, 2841.88), (8, 5850.34))))))},
    'Gold_6230-Quadro_RTX_8000_XLA_trt2_TF2_2': {
        'float32': dict(zip(_M, (
            (2048, ((1, 4501.44), (2, 8660.51), (4, 16846.17), (8, 33119.2))),
            (256, ((1, 242.57), (2, 471.93), (4, 922.79), (8, 1841.08))),
            (128, ((1, 150.01), (2, 286.74), (4, 560.62), (8, 1100.83))),
            (256, ((1, 369.94), (2, 719.15), (4, 1414.33), (8, 2813.1))),
            (256, ((1, 209.97), (2, 397.58), (4, 781.07), (8, 1615.91)))))),
        'float16': dict(zip(_M, (
            (4096, ((1, 6991.75), (2, 13753.1), (4, 27072.24), (8, 53769.48))),
            (512, ((1, 612.88), (2, 1200.31), (4, 2364.82), (8, 4721.02))),
            (256, ((1, 412.91), (2, 807.29), (4, 1581.41), (8, 3124.43))),
            (512, ((1, 966.97), (2, 1894.71), (4, 3738.47), (8, 7405.75))),
            (512, ((1, 597.33), (2, 1146.33), (4, 2265.92), (8, 4681.45))))))},
    'Gold_6230-Quadro_RTX_8000_trt2_TF2_2': {
        'float32': dict(zip(_M, (
            (2048, ((1, 4089.84), (2, 7479.84), (4, 13714.65), (8, 24604.68))),
            (256, ((1, 222.4), (2, 430.72), (4, 841.56), (8, 1697.18))),
            (128, ((1, 137.93), (2, 264.09), (4, 495.62), (8, 914.23))),
            (256, ((1, 328.26), (2, 639.36), (4, 1258.8), (8, 2522.17))),
            (256, ((1, 186.83), (2, 361.12), (4, 715.07), (8, 1488.47)))))),
        'float16': dict(zip(_M, (
            (4096, ((1, 6801.48), (2, 13492.01), (4, 26655.64), (8, 53446.07))),
            (512, ((1, 491.21), (2, 658.9), (4, 1109.32), (8, 1951.46))),
            (256, ((1, 339.27), (2, 483.68), (4, 778.09), (8, 1415.66))),
            (512, ((1, 779.72), (2, 1076.93), (4, 1629.83), (8, 2758.27))),
            (512, ((1, 341.88), (2, 673.43), (4, 1379.95), (8, 2986.7))))))},
    'Gold_6230-GeForce_RTX_2080_Ti_trt2_TF1_15': {
        'float32': dict(zip(_M, (
            (512, ((1, 3764.59), (2, 6732.53), (4, 8965.08), (8, 16973.87))),
            (64, ((1, 195.06), (2, 356.89), (4, 604.17), (8, 1279.36))),
            (32, ((1, 111.81), (2, 186.14), (4, 274.03), (8, 566.11))),
            (64, ((1, 291.82), (2, 539.23), (4, 917.31), (8, 1883.34))),
            (64, ((1, 173.63), (4, 478.97), (8, 906.88)))))),
        'float16': dict(zip(_M, (
            (1024, ((1, 5012.49), (2, 9711.21), (4, 17659.64), (8, 36809.84))),
            (128, ((1, 383.72), (2, 552.48), (4, 850.37), (8, 1597.39))),
            (64, ((1, 230.74), (2, 331.27), (4, 493.98), (8, 914.38))),
            (128, ((1, 601.43), (2, 947.35), (4, 1317.88), (8, 2331.81))),
            (128, ((1, 257.6), (2, 492.75), (4, 927.83), (8, 1932.36))))))},
    'Gold_6230-GeForce_RTX_2080_Ti_trt_TF1_15': {
        'float32': dict(zip(_M, (
            (512, ((1, 3764.06), (2, 6610.19), (4, 13343.04), (8, 26033.4))),
            (64, ((1, 198.25), (2, 352.87), (4, 693.42), (8, 1470.01))),
            (32, ((1, 112.7), (2, 185.49), (4, 359.15), (8, 729.76))),
            (64, ((1, 292.85), (2, 530.29), (4, 1067.38), (8, 2209.27))),
            (56, ((1, 164.93), (2, 291.26), (4, 597.07), (8, 1219.94)))))),
        'float16': dict(zip(_M, (
            (1024, ((1, 4836.93), (2, 8839.73), (4, 18566.12), (8, 38963.72))),
            (128, ((1, 377.8), (2, 527.71), (4, 865.93), (8, 1604.35))),
            (64, ((1, 231.38), (2, 324.81), (4, 598.86), (8, 1045.02))),
            (128, ((1, 597.08), (2, 931.38), (4, 1469.65), (8, 2436.06))),
            (120, ((1, 248.15), (2, 461.93), (4, 980.56), (8, 2105.62))))))},
    '7742-A100-SXM4-40GB_TF2_3_XLA': {
        'float32': dict(zip(_M, (
            (1792, ((1, 6698.3), (2, 13307.21), (4, 26538.96), (8, 52940))),
            (224, ((1, 417.15), (2, 827.8), (4, 1648.6), (8, 3274.73))),
            (112, ((1, 232.7), (2, 457.8), (4, 906.74), (8, 1783.46))),
            (224, ((1, 643.51), (2, 1276.88), (4, 2540.62), (8, 5035.8))),
            (224, ((1, 382.56), (2, 760.8), (4, 1518.18), (8, 3041.79)))))),
        'float16': dict(zip(_M, (
            (3584, ((1, 9846.33), (2, 19696.74), (4, 39330.09), (8, 78546.41))),
            (448, ((1, 1154.17), (2, 2294.79), (4, 4569.55), (8, 9055.82))),
            (224, ((1, 878.17), (2, 1739.55), (4, 3441.06), (8, 6697.88))),
            (448, ((1, 1888.37), (2, 3744.75), (4, 7479.9), (8, 14815.25))),
            (448, ((1, 68.35), (2, 136.66), (4, 273.31), (8, 547.53))))))},
    'Platinum-Tesla_V100-SXM3-32GB_HP16_TF2_2': {
        'float32': dict(zip(_M, (
            (1536, ((1, 5132.32), (8, 35882.03))), (192, ((1, 273.17), (8, 2006.58))),
            (96, ((1, 167.46), (8, 1091.83))), (192, ((1, 432.16), (8, 3135.52))),
            (192, ((1, 249.19), (8, 1941.84)))))),
        'float16': dict(zip(_M, (
            (3072, ((1, 9319.22), (8, 70869))), (384, ((1, 771.37), (8, 3413.54))),
            (192, ((1, 517.76), (8, 2300.72))), (384, ((1, 1276.24), (8, 4676.54))),
            (384, ((1, 455.93), (8, 3758.59))))))},
}

#: The two runs Lambda logged of one configuration on one host.
TWIN_RUNS = (('Gold_6230-GeForce_RTX_2080_Ti_trt2_TF1_15',
              'Gold_6230-GeForce_RTX_2080_Ti_trt_TF1_15'),)
#: Two runs that differ by more than this at a GPU count leave both figures suspect there.
TWIN_TOLERANCE = 0.10
#: Models with batch norm (the float16-without-XLA rule of the module docstring).
BATCH_NORM_MODELS = ('inception3', 'resnet152', 'resnet50')

#: Logged series not validated, with the reason.
NOT_VALIDATED = (
    ('7662-GeForce_RTX_3090', 'eight GeForce RTX 3090 without peer-to-peer on an EPYC 7662 '
     'host, on PCI buses 28-2b and c4-c7 (two groups of four): how their switches reach the '
     'CPUs and host memory is not in the log; its series fall to 10-64% at 8 GPUs (VGG16 '
     'float32: 254 images/sec on 8 GPUs, 325 on one)'),
    ('*_NVLink_* (Quadro RTX 8000, RTX 2080 Ti)', 'NVLink bridges join pairs (the matrix: '
     'peer-to-peer within each pair only on the GeForce host): a ring mixes bridge and PCIe or '
     'host-memory hops, which the model\'s one link per ring does not plan'),
    ('LambdaCloud-RTX_A6000, Processor-LambdaCloud_*xQuadro_RTX_6000', 'cloud instances (the '
     'logs\' NUMA node reads -1, the CPU is named "Processor"): the topology under the '
     'virtual machine is not stated'),
    ('3970X-GeForce_RTX_3090_XLA, 3960X-GeForce_RTX_3080_XLA', 'desktop series of 2 and 3 '
     'GPUs, the 3090s with a bridge between GPUs 0 and 1 only'),
    ('7742-{1,2,4,8}xA100-SXM4-40GB_TF2_3', 'each GPU count from a separate run folder; the '
     'XLA series of the same host (7742-A100-SXM4-40GB_TF2_3_XLA) is validated'),
    ('the same hosts under other TensorFlow versions (..._trt_TF2_2, ..._trt_TF1_15 of the '
     'Quadro)', 'not added: the hosts are validated with the runs above'),
)


def scaling(figures) -> dict:
    """{GPUs: images/sec / (GPUs x the one-GPU figure)} of a series' ((GPUs, images/sec), ...)."""
    one = dict(figures)[1]
    return {gpus: figure / (gpus * one) for gpus, figure in figures}


def _twin_disagreements() -> dict:
    """{(folder, dtype, model, GPUs): evidence} where the two runs of a configuration scale
    differently by more than TWIN_TOLERANCE (each against its own one-GPU figure: the runs'
    batches may differ)."""
    out = {}
    for a, b in TWIN_RUNS:
        for dtype, models in SERIES[a].items():
            for model, (_, figures) in models.items():
                ours, theirs = scaling(figures), scaling(SERIES[b][dtype][model][1])
                for gpus in ours:
                    if gpus in theirs and abs(ours[gpus] / theirs[gpus] - 1) > TWIN_TOLERANCE:
                        why = ('Lambda\'s two runs of this configuration on this host disagree: '
                               '%.2f (%s) and %.2f (%s) of linear on %d GPUs' % (
                                   ours[gpus], HOSTS[a][2], theirs[gpus], HOSTS[b][2], gpus))
                        out[(a, dtype, model, gpus)] = out[(b, dtype, model, gpus)] = why
    return out


def suspect_rows(folder: str, dtype: str, model: str) -> dict:
    """{GPUs: evidence} of the series' suspect multi-GPU figures (module docstring)."""
    out = {}
    figures = SERIES[folder][dtype][model][1]
    if dtype == 'float16' and 'XLA' not in HOSTS[folder][2] and model in BATCH_NORM_MODELS:
        top = max(gpus for gpus, _ in figures)
        why = ('float16 without XLA, a model with batch norm: %.2f of linear on %d GPUs, where '
               'the same host runs it in float32 at %.2f (twice the all-reduced bytes: '
               'float16 moves its gradients as float16) and this series\' VGG16 and AlexNet '
               'scale near-linearly' % (
                   scaling(figures)[top], top,
                   scaling(SERIES[folder]['float32'][model][1])[top]))
        out.update({gpus: why for gpus, _ in figures if gpus > 1})
    twins = _twin_disagreements()
    for gpus, _ in figures:
        if (folder, dtype, model, gpus) in twins:
            out.setdefault(gpus, twins[(folder, dtype, model, gpus)])
    return out


def is_lambda(source: str) -> bool:
    """Whether a case's source is one of Lambda's logs (LAMBDA_REPO)."""
    return source.startswith(LAMBDA_REPO.split('%s')[0])


def cases() -> list[Case]:
    """One published_scaling.Case per validated series (replicated, NCCL), host preset as the
    log shows it, source the log's path, suspect figures marked."""
    out = []
    for folder, precisions in SERIES.items():
        host, label, software = HOSTS[folder]
        for dtype, models in precisions.items():
            for model, (batch, figures) in models.items():
                suspect = suspect_rows(folder, dtype, model)
                out.append(Case(
                    '%s %s %s (%s)' % (label, model, dtype, software), model, batch,
                    'replicated', host, figures, LAMBDA_REPO % folder, all_reduce='nccl',
                    why=_WHY[host], suspect=tuple(sorted(suspect.items())),
                    compact_gradients=dtype == 'float16'))
    return out


_RING = ('NCCL\'s ring after the backward pass, each hop at %s; per-step work that grows with '
         'the towers of one process is not in the model')
_WHY = {
    'lambda_epyc7502x8': _RING % 'PCIe 4.0\'s line rate (peer-to-peer, a root port per GPU)',
    'lambda_gold6230x8': _RING % 'a measured PCIe 3.0 copy\'s rate (peer-to-peer through two '
                                 'PCIe switches)',
    'lambda_gold6230x8_geforce': _RING % 'a measured PCIe 3.0 copy\'s rate, every byte through '
                                         'host memory (no peer-to-peer); the switches\' uplinks '
                                         'are not in the log: each GPU\'s own link is planned',
    'dgx_a100': _RING % 'NVLink 3.0\'s line rate through the NVSwitches',
    'hgx2_v100': _RING % 'a measured NVLink 2.0 copy\'s rate through the NVSwitches',
}
