"""Published one-GPU training runs on real GPUs, kept as data with their sources.

The validation data of the per-op GPU step model (speed_model/gpu_step.py): the model never
reads this file; bench/bench_gpu_model.py predicts each row from its GPU's data sheet and
compares. Every row: the GPU (a hardware/gpu_specs.py name), the model (a registry name; NVIDIA's
ResNet-50 v1.5 is 'resnet50_v1.5'), the per-GPU batch, the precision ('float32' or 'float16'),
XLA or not, real data or synthetic, the published images/sec and its source.
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


TF_BENCHMARKS = ('tensorflow.org performance guide, "Benchmarks" (test date May 2017; '
                 'tensorflow/docs_src/performance/benchmarks.md): tf_cnn_benchmarks, TF 1.1, '
                 'CUDA 8, cuDNN 5.1, synthetic data, one GPU')
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

RUNS: tuple[PublishedRun, ...] = (
    # The original tool's own published tables (Pascal, Kepler).
    PublishedRun('P100 SXM2', 'inception3', 64, 'float32', False, 142, DGX1_P100),
    PublishedRun('P100 SXM2', 'resnet50', 64, 'float32', False, 219, DGX1_P100),
    PublishedRun('P100 SXM2', 'resnet152', 64, 'float32', False, 91.8, DGX1_P100),
    PublishedRun('P100 SXM2', 'alexnet', 512, 'float32', False, 2987, DGX1_P100),
    PublishedRun('P100 SXM2', 'vgg16', 64, 'float32', False, 154, DGX1_P100),
    PublishedRun('K80', 'inception3', 64, 'float32', False, 30.8, EC2_K80),
    PublishedRun('K80', 'resnet50', 64, 'float32', False, 51.5, EC2_K80),
    PublishedRun('K80', 'alexnet', 512, 'float32', False, 684, EC2_K80),
    PublishedRun('K80', 'vgg16', 32, 'float32', False, 36.3, EC2_K80),
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
)
