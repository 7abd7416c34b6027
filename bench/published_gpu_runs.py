"""Published one-GPU training runs on real GPUs, kept as data with their sources.

The validation data of the per-op GPU step model (speed_model/gpu_step.py): the model never
reads this file; bench/bench_gpu_model.py predicts each row from its GPU's data sheet and
compares. Every row: the GPU (a hardware/gpu_specs.py name), the model (a registry name; NVIDIA's
ResNet-50 v1.5 is 'resnet50_v1.5'), the per-GPU batch, the precision ('float32' or 'float16'),
XLA or not, real data or synthetic, the published images/sec and its source; what the run's
software offered that TensorFlow 2.21 does not (`filter_winograd`: no filter-gradient Winograd
before TensorFlow 1.5); and, for a published figure that is itself suspect, the evidence
(`suspect`): such a row stays in the table and in the error statistics.
"""

from __future__ import annotations

from typing import NamedTuple


class PublishedRun(NamedTuple):
    """One published figure (see the module docstring)."""
    gpu: str
    model: str
    batch_size: int
    dtype: str
    xla: bool
    published: float
    source: str
    real_data: bool = False
    note: str = ''
    filter_winograd: bool = True
    suspect: str = ''


TF_BENCHMARKS = ('tensorflow.org performance guide, "Benchmarks" (test date May 2017; '
                 'tensorflow/docs_src/performance/benchmarks.md): tf_cnn_benchmarks, TF 1.1, '
                 'CUDA 8, cuDNN 5.1, synthetic data, one GPU')
#: TensorFlow 1.1 with cuDNN 5.1 offered no filter-gradient Winograd
#: (speed_model/conv_algorithms.offers_winograd: tensorflow/tensorflow pull request #15283).
TF11 = dict(filter_winograd=False)
DGX1_P100 = TF_BENCHMARKS + ', "Details for NVIDIA DGX-1 (NVIDIA Tesla P100)"'
EC2_K80 = TF_BENCHMARKS + ', "Details for Amazon EC2 (NVIDIA Tesla K80)"'
LAMBDA = ('Lambda, "RTX 2080 Ti Deep Learning Benchmarks with TensorFlow" (Chuan Li, 2019; '
          'lambdalabs.com/blog/2080-ti-deep-learning-benchmarks): tf_cnn_benchmarks via '
          'lambdal/lambda-tensorflow-benchmark, TF 1.12, CUDA 10.0, cuDNN 7.4.1, synthetic '
          'data, FP32 table, one GPU')
LAMBDA_BATCH = ('batch not printed beside the table; the benchmark script\'s per-model '
                'default for 11 GB cards (resnet50 64, resnet152 32, inception3 64) is assumed')
DLE_RN50 = ('NVIDIA DeepLearningExamples, TensorFlow/Classification/ConvNets/resnet50v1.5/'
            'README.md, "Training performance results" (TensorFlow 20.06-tf1-py3 NGC container, '
            'real ImageNet data with DALI, averaged over an epoch)')

LAMBDA_LOGS = ('Lambda, lambdal/lambda-tensorflow-benchmark (commit c17619d), logs/%s.logs/'
               'syn-replicated-fp<16|32>-1gpus/<model>-<batch>/throughput/1, "total images/sec": '
               'tf_cnn_benchmarks, synthetic data, replicated, NCHW, sgd, one GPU; %s')
#: XLA in runs whose directory does not say so: the repository's README runs the benchmark as
#: `TF_XLA_FLAGS=--tf_xla_auto_jit=2 ./batch_benchmark.sh ...` (XLA's auto-clustering), and
#: these runs' logs print TensorFlow's "Compiled cluster using XLA!" during the warm-up.
AUTO_JIT = ('XLA auto-clustering: the log prints "Compiled cluster using XLA!" (the README\'s '
            'command sets TF_XLA_FLAGS=--tf_xla_auto_jit=2)')
LAMBDA_3090 = LAMBDA_LOGS % ('7662-GeForce_RTX_3090', 'TF 2.4.1, CUDA 11.1 (TF32 on by '
                             'default); ' + AUTO_JIT)
LAMBDA_A6000 = LAMBDA_LOGS % ('LambdaCloud-RTX_A6000', 'TF 2.4.1, CUDA 11.1 (TF32 on by '
                              'default); ' + AUTO_JIT)
LAMBDA_A100_PCIE = LAMBDA_LOGS % ('7502-A100-PCIE-40GB', 'A100-PCIE-40GB, TF 1.15.4 with CUDA '
                                  '11.1 (NVIDIA\'s TF 1.15 build, TF32 on by default); '
                                  + AUTO_JIT)
LAMBDA_3080 = LAMBDA_LOGS % ('3960X-GeForce_RTX_3080_XLA', 'TF 1.15.4 with CUDA 11.1 (NVIDIA\'s '
                             'TF 1.15 build, TF32 on by default), XLA')
LAMBDA_A100_SXM4 = LAMBDA_LOGS % ('7742-1xA100-SXM4-40GB_TF2_3', 'A100-SXM4-40GB, TF 2.3.0, CUDA '
                                  '11.0; float16 rows only (TF 2.3 predates TensorFlow\'s TF32 '
                                  'switch while cuDNN 8 may use TF32 for its float32 '
                                  'convolutions: which math its float32 rows ran is unknown)')
#: Lambda's VGG16 float16 run on the A100 SXM4 under TF 2.3, kept and marked: a broken run.
BROKEN_VGG16_FP16 = ('a broken run: 70.27 images/sec, a fifth of the same card\'s float32 '
                     '(364.23) in the same log folder; the run with XLA measured 68.35, real data '
                     '70.24, and 2, 4 and 8 GPUs 139.30, 278.27 and 557.12 (the same 70 per GPU): '
                     'the slowness is in that software stack\'s VGG16 float16 step on this GPU, '
                     'steady over 100 steps (jitter 0.0), not a disturbed measurement; the A100 '
                     'PCIe card ran VGG16 float16 at 1,189.76 under TF 1.15.4')
LAMBDA_RTX8000 = LAMBDA_LOGS % ('Gold_6230-Quadro_RTX_8000_trt2_TF2_2', 'TF 2.2.0, CUDA 10.0')
_SAME_AS_2019 = ('the float32 runs of resnet50, resnet152 and inception3 are left out: Lambda\'s '
                 '2019 table (LAMBDA) has them at the same batch')
LAMBDA_1080TI = LAMBDA_LOGS % ('i7-6850K-GeForce_GTX_1080_Ti', 'TF 2.2.0; ' + _SAME_AS_2019)
LAMBDA_2080TI = LAMBDA_LOGS % ('Gold_6230-GeForce_RTX_2080_Ti_trt2_TF1_15', 'TF 1.15.3, CUDA '
                               '10.0; ' + _SAME_AS_2019)
#: Lambda's logs, (model, float16 batch, float16 images/sec, float32 batch, float32 images/sec)
#: per run; a batch or figure of None: the row is left out (see the run's source).
_LAMBDA_LOGGED = (
    ('Quadro RTX 8000', False, LAMBDA_RTX8000, (
        ('alexnet', 4096, 6801.48, 2048, 4089.84), ('inception3', 512, 491.21, 256, 222.40),
        ('resnet152', 256, 339.27, 128, 137.93), ('resnet50', 512, 779.72, 256, 328.26),
        ('vgg16', 512, 341.88, 256, 186.83))),
    ('RTX 3090', True, LAMBDA_3090, (
        ('alexnet', 1920, 9473.29, 896, 6744.26), ('inception3', 48, 680.76, 112, 379.62),
        ('resnet152', 64, 467.80, 48, 211.81), ('resnet50', 96, 1019.62, 112, 568.43),
        ('vgg16', 96, 549.97, 48, 325.32))),
    ('RTX A6000', True, LAMBDA_A6000, (
        ('alexnet', 4096, 12367.54, 2048, 7373.08), ('inception3', 512, 958.77, 256, 413.37),
        ('resnet152', 256, 629.37, 128, 232.24), ('resnet50', 512, 1478.10, 256, 578.82),
        ('vgg16', 512, 772.18, 256, 339.01))),
    ('A100 PCIe 40GB', True, LAMBDA_A100_PCIE, (
        ('alexnet', 3584, 16486.68, 1792, 10187.09), ('inception3', 360, 1222.30, 224, 627.35),
        ('resnet152', 200, 886.42, 112, 390.08), ('resnet50', 448, 2075.05, 224, 953.43),
        ('vgg16', 448, 1189.76, 224, 503.61))),
    ('RTX 3080', True, LAMBDA_3080, (
        ('alexnet', 960, 7046.91, 448, 5665.33), ('inception3', 24, 412.09, 56, 293.21),
        ('resnet152', 32, 316.22, 24, 140.45), ('resnet50', 48, 875.20, 56, 425.67),
        ('vgg16', 48, 417.37, 24, 240.59))),
    ('GTX 1080 Ti', False, LAMBDA_1080TI, (
        ('alexnet', 1024, 2914.50, 512, 2636.41), ('inception3', 128, 156.85, None, None),
        ('resnet152', 64, 110.15, None, None), ('resnet50', 128, 273.45, None, None),
        ('vgg16', 128, 147.91, 56, 124.79))),
    ('RTX 2080 Ti', False, LAMBDA_2080TI, (
        ('alexnet', 1024, 5012.49, 512, 3764.59), ('inception3', 128, 383.72, None, None),
        ('resnet152', 64, 230.74, None, None), ('resnet50', 128, 601.43, None, None),
        ('vgg16', 128, 257.60, 64, 173.63))),
    ('A100 40GB', False, LAMBDA_A100_SXM4, (
        ('alexnet', 3584, 11754.73, None, None), ('inception3', 448, 1175.15, None, None),
        ('resnet152', 224, 905.08, None, None), ('resnet50', 448, 1990.02, None, None),
        ('vgg16', 448, 70.27, None, None))),
)
#: Rows whose published figure is itself suspect: (source, model, dtype) -> the evidence.
_SUSPECT = {(LAMBDA_A100_SXM4, 'vgg16', 'float16'): BROKEN_VGG16_FP16}


def _lambda_rows() -> tuple[PublishedRun, ...]:
    out = []
    for gpu, xla, source, models in _LAMBDA_LOGGED:
        for model, b16, f16, b32, f32 in models:
            for dtype, batch, figure in (('float32', b32, f32), ('float16', b16, f16)):
                if batch is not None:
                    out.append(PublishedRun(gpu, model, batch, dtype, xla, figure, source,
                                            suspect=_SUSPECT.get((source, model, dtype), '')))
    return tuple(out)


RUNS: tuple[PublishedRun, ...] = (
    # The original tool's own published tables (Pascal, Kepler).
    PublishedRun('P100 SXM2', 'inception3', 64, 'float32', False, 142, DGX1_P100, **TF11),
    PublishedRun('P100 SXM2', 'resnet50', 64, 'float32', False, 219, DGX1_P100, **TF11),
    PublishedRun('P100 SXM2', 'resnet152', 64, 'float32', False, 91.8, DGX1_P100, **TF11),
    PublishedRun('P100 SXM2', 'alexnet', 512, 'float32', False, 2987, DGX1_P100, **TF11),
    PublishedRun('P100 SXM2', 'vgg16', 64, 'float32', False, 154, DGX1_P100, **TF11),
    PublishedRun('K80', 'inception3', 64, 'float32', False, 30.8, EC2_K80, **TF11),
    PublishedRun('K80', 'resnet50', 64, 'float32', False, 51.5, EC2_K80, **TF11),
    PublishedRun('K80', 'alexnet', 512, 'float32', False, 684, EC2_K80, **TF11),
    PublishedRun('K80', 'vgg16', 32, 'float32', False, 36.3, EC2_K80, **TF11),
    # Lambda's tf_cnn_benchmarks runs (Pascal, Volta, Turing).
    *(PublishedRun(gpu, model, batch, 'float32', False, figure, LAMBDA, note=LAMBDA_BATCH)
      for model, batch, figures in (
          ('resnet50', 64, (294, 213, 330, 300, 405, 236, 209)),
          ('resnet152', 32, (110, 83, 129, 107, 155, 90, 81)),
          ('inception3', 64, (194, 142, 221, 208, 259, 151, 136)))
      for gpu, figure in zip(('RTX 2080 Ti', 'RTX 2080', 'Titan RTX', 'Titan V', 'V100 32GB',
                              'Titan Xp', 'GTX 1080 Ti'), figures)),
    # NVIDIA's TensorFlow ResNet-50 v1.5 (Volta, Ampere).
    PublishedRun('A100 40GB', 'resnet50_v1.5', 256, 'float32', True, 909, DLE_RN50 +
                 ', DGX A100, TF32 + XLA', real_data=True),
    PublishedRun('A100 40GB', 'resnet50_v1.5', 256, 'float16', True, 2375, DLE_RN50 +
                 ', DGX A100, mixed precision + XLA', real_data=True),
    PublishedRun('V100 16GB', 'resnet50_v1.5', 128, 'float32', True, 412, DLE_RN50 +
                 ', DGX-1 V100 16G, FP32 + XLA', real_data=True),
    PublishedRun('V100 16GB', 'resnet50_v1.5', 256, 'float16', True, 1270, DLE_RN50 +
                 ', DGX-1 V100 16G, mixed precision + XLA', real_data=True),
    PublishedRun('V100 32GB', 'resnet50_v1.5', 128, 'float32', True, 432, DLE_RN50 +
                 ', DGX-2 V100 32G, FP32 + XLA', real_data=True),
    PublishedRun('V100 32GB', 'resnet50_v1.5', 256, 'float16', True, 1300, DLE_RN50 +
                 ', DGX-2 V100 32G, mixed precision + XLA', real_data=True),
    # Lambda's logged runs, Turing and Ampere (batch and precision in each log's path).
    *_lambda_rows(),
)
