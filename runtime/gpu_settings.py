"""The original's GPU and graph-optimizer flags: environment variables and session options.

* `environment_updates(p, environ)`: the variables TensorFlow reads once, when it loads (the
  command sets them through cpu_tuning.configure_environment, before importing TensorFlow):
  TF_GPU_THREAD_MODE / TF_GPU_THREAD_COUNT (--gpu_thread_mode, --per_gpu_thread_count),
  TF_ENABLE_WINOGRAD_NONFUSED (--winograd_nonfused), TF_USE_CUDNN_BATCHNORM_SPATIAL_PERSISTENT
  (--batchnorm_persistent), TF_AUTOTUNE_THRESHOLD (--autotune_threshold), TF_SYNC_ON_FINISH
  (--sync_on_finish). TensorFlow 2.21's libraries still read every one of them, and every one
  acts on GPUs only: TF_SYNC_ON_FINISH makes each step's executor call Device::Sync at its
  end (tensorflow/core/common_runtime/direct_session.cc and distributed_runtime/graph_mgr.cc
  read it, default 1 when unset), and a CPU device's Sync returns at once
  (ThreadPoolDevice::Sync in common_runtime/threadpool_device.h).
* `configure_session(config, p)`: GPUOptions (--allow_growth, default on here;
  --gpu_memory_frac_for_testing, --use_unified_memory, --force_gpu_compatible,
  --timestamped_allocator, --gpu_kt_max_*, --gpu_indices as the collective ring order) and the
  graph rewriter (--enable_optimizations, --rewriter_config).
"""

from __future__ import annotations

import glob
import os

from .. import params as params_lib


def _on(value: bool) -> str:
    return '1' if value else '0'


def gpu_run_likely(p) -> bool:
    """Whether the run will use GPUs, judged before TensorFlow loads: --device=gpu, or no
    --device and an NVIDIA device node (/dev/nvidia0, ...) on this host."""
    if p.device is not None:
        return p.device == 'gpu'
    return bool(glob.glob('/dev/nvidia[0-9]*'))


def _given_flags(p) -> set[str]:
    return {n for n in ('gpu_thread_mode', 'per_gpu_thread_count')
            if getattr(p, n) != params_lib.SPEC_BY_NAME[n].default}


def environment_updates(p, environ=None) -> dict[str, str]:
    """The environment variables the GPU flags of `p` ask for, as {name: value}.

    A flag given on the command line (a value other than its default) sets its variable; the
    defaults (the original's: gpu_private threads, Winograd and persistent batch norm on,
    TF_SYNC_ON_FINISH=0: a step ends without waiting for the GPUs' queued work, where
    TensorFlow unset waits) are applied only to a run that will use GPUs (`gpu_run_likely`),
    and never over a value the user already exported. TF_GPU_THREAD_COUNT is
    --per_gpu_thread_count (0: 2, one thread for compute and one for copies), times --num_gpus
    with gpu_shared.

    Args:
      p: Params.
      environ: the current environment (default os.environ).
    """
    environ = os.environ if environ is None else environ
    wanted = {
        'TF_SYNC_ON_FINISH': ('sync_on_finish', _on(p.sync_on_finish)),
        'TF_ENABLE_WINOGRAD_NONFUSED': ('winograd_nonfused', _on(p.winograd_nonfused)),
        'TF_USE_CUDNN_BATCHNORM_SPATIAL_PERSISTENT': ('batchnorm_persistent',
                                                      _on(p.batchnorm_persistent)),
    }
    if p.autotune_threshold:
        wanted['TF_AUTOTUNE_THRESHOLD'] = ('autotune_threshold', str(p.autotune_threshold))
    wanted['TF_GPU_THREAD_MODE'] = ('gpu_thread_mode', p.gpu_thread_mode)
    if p.gpu_thread_mode != 'global':
        count = (p.per_gpu_thread_count or 2) * (p.num_gpus if p.gpu_thread_mode == 'gpu_shared'
                                                 else 1)
        wanted['TF_GPU_THREAD_COUNT'] = ('per_gpu_thread_count', str(count))
    gpu_run = gpu_run_likely(p)
    updates = {}
    for name, (flag, value) in wanted.items():
        if getattr(p, flag) != params_lib.SPEC_BY_NAME[flag].default:
            updates[name] = value  # given: wins over the environment
        elif gpu_run and name not in environ:
            updates[name] = value  # the original's default, on a GPU run
    if 'TF_GPU_THREAD_MODE' not in updates and 'TF_GPU_THREAD_MODE' in environ and (
            'per_gpu_thread_count' not in _given_flags(p)):
        updates.pop('TF_GPU_THREAD_COUNT', None)  # the user's own thread mode: theirs to size
    if not p.tf32:  # --notf32
        updates['NVIDIA_TF32_OVERRIDE'] = '0'  # cuBLAS and cuDNN read it: no TF32
    return {k: v for k, v in updates.items() if environ.get(k) != v}


def parse_rewriter_config(text: str):
    """--rewriter_config's text-format RewriterConfig as the protobuf message.

    Raises:
      params.ParamsError: the text is not a RewriterConfig in protobuf text format.
    """
    from google.protobuf import text_format
    from tensorflow.core.protobuf import rewriter_config_pb2
    try:
        return text_format.Parse(text, rewriter_config_pb2.RewriterConfig())
    except text_format.ParseError as e:
        raise params_lib.ParamsError(
            '--rewriter_config is not a RewriterConfig in protobuf text format (%s), e.g. '
            '"constant_folding: OFF layout_optimizer: OFF". Received: rewriter_config=%r'
            % (e, text)) from None


def configure_session(config, p) -> None:
    """Sets the GPU options and graph-rewriter options of `p` in the ConfigProto `config`.

    Raises:
      params.ParamsError: --rewriter_config does not parse (parse_rewriter_config).
    """
    gpu = config.gpu_options
    gpu.allow_growth = True if p.allow_growth is None else p.allow_growth
    if p.gpu_memory_frac_for_testing > 0:
        gpu.per_process_gpu_memory_fraction = p.gpu_memory_frac_for_testing
    if p.use_unified_memory:
        gpu.experimental.use_unified_memory = True
    gpu.force_gpu_compatible = p.force_gpu_compatible
    if p.timestamped_allocator:
        gpu.experimental.timestamped_allocator = True
    if p.gpu_kt_max_interval > 0:
        gpu.experimental.kernel_tracker_max_interval = p.gpu_kt_max_interval
    if p.gpu_kt_max_bytes > 0:
        gpu.experimental.kernel_tracker_max_bytes = p.gpu_kt_max_bytes
    if p.gpu_kt_max_pending > 0:
        gpu.experimental.kernel_tracker_max_pending = p.gpu_kt_max_pending
    if p.gpu_indices:
        gpu.experimental.collective_ring_order = p.gpu_indices
    if p.rewriter_config:
        config.graph_options.rewrite_options.MergeFrom(parse_rewriter_config(p.rewriter_config))
    if not p.enable_optimizations:
        import tensorflow as tf
        config.graph_options.optimizer_options.opt_level = tf.compat.v1.OptimizerOptions.L0
        config.graph_options.rewrite_options.disable_meta_optimizer = True
