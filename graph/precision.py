"""Reduced precision: compute dtypes, loss scaling for float16, native bfloat16/float16 support.

This module owns
  * the dtypes of a run (`compute_dtypes`): float16 (--use_fp16) or bfloat16 (--use_bf16)
    activations and gradients, float32 master variables unless --fp16_vars;
  * loss scaling for float16 (Micikevicius et al. 2018, "Mixed Precision Training", ICLR,
    section 3.2): the loss is multiplied by a scale S before differentiation so that small
    gradients do not flush to zero in float16, and the gradients are divided by S afterwards.
    Static (--fp16_loss_scale, default 128) or automatic (--fp16_enable_auto_loss_scale): a step
    whose gradients hold an Inf or NaN is skipped and S is halved; after
    --fp16_inc_loss_scale_every_n finite steps in a row S is doubled (the dynamic scheme of the
    paper's section 3.2 and of NVIDIA's "Training with Mixed Precision" guide);
  * whether the hardware computes in the chosen dtype natively, in the words of the run's
    warnings (`native_support`; the header's shorter block: graph/precision_block.py).

bfloat16 has float32's exponent range, so it needs no loss scaling (Kalamkar et al. 2019, "A Study
of BFLOAT16 for Deep Learning Training", section 2).

The arithmetic of the automatic scale is a pure function, `next_loss_scale`, mirrored in graph ops
by `LossScaler.update_op`; the tests check one against the other.
"""

from __future__ import annotations

import contextlib

import tensorflow as tf
from tensorflow.python.framework import ops as tf_ops

from .. import cnn_util
from ..hardware import kernel_speed, machine

tf1 = tf.compat.v1

DEFAULT_FP16_LOSS_SCALE = 128.0
#: Bounds of the automatic loss scale. Below 1 scaling would shrink gradients instead; above
#: 2**24 every float16 gradient of a loss near 1 overflows anyway, and an unbounded scale could
#: reach float32 Inf, from which halving never recovers.
MIN_LOSS_SCALE = 1.0
MAX_LOSS_SCALE = 2.0 ** 24
#: Graph collections of the automatic loss scale's steps skipped (int64 local variable) and
#: its scale (float32 variable): what lifecycle/precision_report.py reads.
SKIPPED_STEPS = 'loss_scale_skipped_steps'
LOSS_SCALE = 'loss_scale_value'

# /proc/cpuinfo flags of native bfloat16 and float16 arithmetic on x86 CPUs.
_CPU_BF16_FLAGS = ('avx512_bf16', 'amx_bf16')
_CPU_FP16_FLAGS = ('avx512_fp16', 'amx_fp16')


def compute_dtypes(p) -> tuple[tf.DType, tf.DType]:
    """Returns (compute dtype, variable dtype) of a run.

    --use_fp16: (float16, float32), or (float16, float16) with --fp16_vars. --use_bf16:
    (bfloat16, float32). Otherwise (float32, float32). Batch norm parameters and statistics,
    logits, softmax and the loss stay float32 whatever the compute dtype (models/).
    """
    if p.use_fp16:
        return tf.float16, (tf.float16 if p.fp16_vars else tf.float32)
    if p.use_bf16:
        return tf.bfloat16, tf.float32
    return tf.float32, tf.float32


# --- Loss scaling.

def initial_loss_scale(p) -> float:
    """The loss scale of the first step: --fp16_loss_scale, else 128 (1 without --use_fp16)."""
    if not p.use_fp16:
        return 1.0
    return float(p.fp16_loss_scale) if p.fp16_loss_scale is not None else DEFAULT_FP16_LOSS_SCALE


def scale_text(scale: float) -> str:
    """A loss scale as the header and messages show it: exact, '16777216' (not '%g''s
    1.67772e+07), '128', '0.5' (cnn_util.number_text)."""
    return cnn_util.number_text(scale)


def next_loss_scale(scale: float, good_steps: int, finite: bool, inc_every_n: int
                    ) -> tuple[float, int]:
    """One step of the automatic loss scale (pure Python; `LossScaler.update_op` in graph ops).

    Args:
      scale: the loss scale used by this step, >= MIN_LOSS_SCALE.
      good_steps: finite steps in a row before this one since the scale last changed.
      finite: whether every gradient of this step was finite.
      inc_every_n: double the scale after this many finite steps in a row (>= 1).

    Returns:
      (scale, good_steps) for the next step: non-finite halves the scale (not below
      MIN_LOSS_SCALE) and resets the count; the inc_every_n-th finite step in a row doubles it
      (not above MAX_LOSS_SCALE) and resets the count; any other finite step counts one more.

    Example: with inc_every_n=2 from (128, 0): finite -> (128, 1), finite -> (256, 0),
    Inf -> (128, 0).
    """
    if not finite:
        return max(scale / 2.0, MIN_LOSS_SCALE), 0
    if good_steps + 1 >= inc_every_n:
        return min(scale * 2.0, MAX_LOSS_SCALE), 0
    return scale, good_steps + 1


def all_finite(tensors) -> tf.Tensor:
    """Scalar bool tensor: True when no element of any of `tensors` is Inf or NaN.

    Each tensor is reduced on its own device (colocated with it: a gradient without a device
    string of its own stays on its tower's device, not the device this is called under), the
    boolean results combined where this is called.
    """
    checks = []
    for t in tensors:
        with tf_ops.colocate_with(t):
            checks.append(tf.reduce_all(tf.math.is_finite(t)))
    return tf.reduce_all(tf.stack(checks))


class LossScaler:
    """The loss scale of a float16 run, and the skipping of non-finite updates.

    Use (benchmark_cnn._build_train_op):
        scaler = LossScaler.from_params(p, device=param_device)   # before the gradients
        grads = tower.build_gradients(..., loss_scale=scaler.loss_scale,
                                      keep_non_finite=scaler.dynamic)
        train_ops = scaler.apply(tower_grads, apply_fn, global_step)

    Args:
      initial_scale: loss scale of the first step (float > 0).
      dynamic: automatic scaling: skip non-finite steps, halve and grow the scale.
      inc_every_n: with `dynamic`, double the scale after this many finite steps in a row.
      device: where the scale's variables live (the parameter device).

    Attributes:
      loss_scale: what the loss is multiplied by: a Python float when static, a float32 scalar
        tensor reading the `loss_scale/scale` variable when dynamic.
      dynamic: as given.
      scale_var, good_steps_var: the dynamic scale's state (float32 and int32 scalars, not
        trainable, saved in checkpoints as optional state); None when static.
      skipped_var: with `dynamic`, the steps this process skipped (int64 scalar, a local
        variable in the SKIPPED_STEPS collection, not saved); None when static.

    Raises:
      ValueError: initial_scale <= 0 (params.validate_params refuses it first).
    """

    def __init__(self, *, initial_scale: float, dynamic: bool, inc_every_n: int = 1000,
                 device: str = '/cpu:0'):
        if initial_scale <= 0:
            raise ValueError('loss scale must be > 0. Received: %r' % initial_scale)
        self.dynamic = dynamic
        self.inc_every_n = int(inc_every_n)
        self.device = device
        self.scale_var = self.good_steps_var = self.skipped_var = None
        self.loss_scale = float(initial_scale)
        if dynamic:
            with tf1.device(device), tf1.variable_scope('loss_scale'):
                self.scale_var = tf1.get_variable(
                    'scale', [], tf.float32, tf1.constant_initializer(float(initial_scale)),
                    trainable=False)
                self.good_steps_var = tf1.get_variable(
                    'good_steps', [], tf.int32, tf1.zeros_initializer(), trainable=False)
                self.loss_scale = tf.identity(self.scale_var.read_value(), name='value')
                # This process's count of skipped steps (a local variable: not saved; read by
                # lifecycle/precision_report.py through SKIPPED_STEPS).
                self.skipped_var = tf1.get_variable(
                    'skipped_steps', [], tf.int64, tf1.zeros_initializer(), trainable=False,
                    collections=[tf1.GraphKeys.LOCAL_VARIABLES, SKIPPED_STEPS])
                tf1.add_to_collection(LOSS_SCALE, self.scale_var)

    @classmethod
    def from_params(cls, p, device: str = '/cpu:0') -> LossScaler | None:
        """The scaler of a --use_fp16 run; None without --use_fp16 (no loss scaling)."""
        if not p.use_fp16:
            return None
        return cls(initial_scale=initial_loss_scale(p), dynamic=p.fp16_enable_auto_loss_scale,
                   inc_every_n=p.fp16_inc_loss_scale_every_n, device=device)

    def update_op(self, finite) -> tf.Operation:
        """The graph version of `next_loss_scale`: assigns the next scale and count.

        Args:
          finite: scalar bool tensor, this step's gradients were all finite.
        """
        scale, good = self.scale_var, self.good_steps_var
        with tf1.device(self.device), tf1.name_scope('loss_scale_update'):
            scale_now, good_now = scale.read_value(), good.read_value()
            grow = tf.logical_and(finite, good_now + 1 >= self.inc_every_n)
            new_scale = tf.where(
                finite,
                tf.where(grow, tf.minimum(scale_now * 2.0, MAX_LOSS_SCALE), scale_now),
                tf.maximum(scale_now / 2.0, MIN_LOSS_SCALE))
            new_good = tf.where(tf.logical_and(finite, tf.logical_not(grow)), good_now + 1, 0)
            return tf.group(scale.assign(new_scale), good.assign(new_good))

    def apply(self, tower_grads, apply_fn, global_step) -> list:
        """Returns the ops of one training step, skipping the update when gradients overflowed.

        Static scaling returns `apply_fn(tower_grads)` unchanged. Dynamic scaling checks every
        gradient of every tower (one decision for all towers, so replicated copies stay equal)
        and runs `apply_fn`'s ops only when all are finite (`tf.cond`); otherwise only the
        global step is incremented, so step numbers and learning-rate schedules count skipped
        steps too. Then the scale is updated (`update_op`).

        Args:
          tower_grads: per tower, a list of (gradient, variable) pairs.
          apply_fn: tower_grads -> list of ops applying them and incrementing `global_step`
            (a VariableMgr's `apply_gradients` with its optimizer).
          global_step: the int64 global step variable.

        Returns:
          A list of ops to group into the train op.
        """
        if not self.dynamic:
            return list(apply_fn(tower_grads))
        grads = [g for pairs in tower_grads for g, _ in pairs]
        with tf1.device(self.device):
            finite = tf.identity(all_finite(grads), name='gradients_finite')

        def apply_branch():
            with tf.control_dependencies(apply_fn(tower_grads)):
                return tf.constant(True)

        def skip_branch():
            with tf.control_dependencies([tf1.assign_add(global_step, 1),
                                          tf1.assign_add(self.skipped_var, 1)]):
                return tf.constant(False)

        with tf1.device(self.device):
            applied = tf.cond(finite, apply_branch, skip_branch, name='apply_if_finite')
            with tf.control_dependencies([applied]):
                update = self.update_op(finite)
        return [applied.op, update]


def unscale(grad, loss_scale):
    """grad / loss_scale in the gradient's dtype (loss_scale: Python float or float32 tensor)."""
    if isinstance(loss_scale, (int, float)):
        return grad * (1.0 / loss_scale)
    return grad * tf.cast(1.0 / loss_scale, grad.dtype)


def is_unit_scale(loss_scale) -> bool:
    """True when `loss_scale` is the Python number 1 (no scaling to do)."""
    return isinstance(loss_scale, (int, float)) and loss_scale == 1.0


# --- Native support of the compute dtype.

def cpu_flags(cpuinfo_path: str = '/proc/cpuinfo') -> set[str]:
    """The feature flags of the first CPU in /proc/cpuinfo that oneDNN may use
    (hardware.machine.usable_cpu_flags: ONEDNN_MAX_CPU_ISA); empty where the file is absent."""
    try:
        with open(cpuinfo_path) as f:
            for line in f:
                if line.startswith('flags'):
                    return machine.usable_cpu_flags(line.split(':', 1)[1].split())
    except OSError:
        return set()
    return set()


def gpu_compute_capabilities() -> list[tuple[int, int]]:
    """(major, minor) compute capability of each visible GPU."""
    out = []
    for gpu in tf.config.list_physical_devices('GPU'):
        details = tf.config.experimental.get_device_details(gpu)
        if 'compute_capability' in details:
            out.append(tuple(details['compute_capability']))
    return out


def _listed(caps) -> str:
    """'7.0', '7.0/8.6': each distinct compute capability once, in order ('' for none)."""
    return '/'.join(dict.fromkeys('%d.%d' % tuple(c) for c in caps))


def native_support(dtype: tf.DType, device: str, *, flags: set[str] | None = None,
                   capabilities: list[tuple[int, int]] | None = None,
                   measured: dict[str, float] | None = None, when: str = 'measured here',
                   gradients: bool = True, shapes=None,
                   norm_and_pool=('batch norm', 'pooling')) -> tuple[bool, str]:
    """Whether `device` computes in `dtype` natively, with the evidence.

    CPU: bfloat16 needs AVX512_BF16 or AMX_BF16, float16 AVX512_FP16 or AMX_FP16 (without them
    TensorFlow converts to float32 around each op: correct, usually slower than float32). A
    flag says what the hardware can do, not what TensorFlow's kernels do with it: with
    `measured` (kernel_speed.factors) the text says what they did here, and a CPU whose
    forward kernels in `dtype` are far slower than float32's (kernel_speed.FAR_SLOWER_FACTOR)
    is not native whatever its flags. GPU: bfloat16 needs compute capability >= 8.0 (Ampere),
    float16 tensor cores >= 7.0 (Volta); below, the dtype's data runs with float32 math
    (float16: the float32 rate, half the bytes: speed_model/gpu_step.math_path; bfloat16:
    TensorFlow casts each convolution to float32 and back, speed_model/bf16_casts.py) and
    counts as native: the speed model compares the two in the dry run's predicted step
    (preflight/dry_run.py) and warns where it predicts the dtype slower.

    Args:
      dtype: tf.bfloat16, tf.float16 or tf.float32.
      device: 'cpu' or 'gpu'.
      flags: CPU flags (default: `cpu_flags()`); capabilities: GPU compute capabilities
        (default: `gpu_compute_capabilities()`).
      measured: CPU only, {kind: seconds in dtype / in float32} of kernel_speed.KINDS.
      when: how `measured` was got (kernel_speed.when): 'measured here' or 'calibrated
        <date>'.
      gradients: False for a run without gradients (--forward_only, --eval): the text leaves
        out the gradient kernels and what runs in float32 for them.
      shapes: the kernel_speed.ProbeShapes `measured` was timed at (RunPlan.kernel_shapes),
        for kernel_speed.far_slower_warning's floor; None: no floor.
      norm_and_pool: what of batch norm and pooling the model has (`norm_and_pool_parts`):
        an emulated float16 run computes them in float32.

    Returns:
      (native, text), e.g. (False, 'CPU has no avx512_bf16/amx_bf16: bfloat16 is emulated').
    """
    if dtype == tf.float32:
        return True, '%s float32' % device.upper()
    name = dtype.name
    if device == 'gpu':
        caps = gpu_compute_capabilities() if capabilities is None else capabilities
        need = (8, 0) if dtype == tf.bfloat16 else (7, 0)
        if caps and all(c >= need for c in caps):
            return True, 'GPU compute capability %s >= %d.%d: native %s' % (
                _listed(caps), need[0], need[1], name)
        if caps:
            # Below its tensor cores the dtype's convolutions and products run with float32
            # math: float16 because TensorFlow asks cuDNN and cuBLAS for float32 compute
            # (TF_FP16_CONV_USE_FP32_COMPUTE, TF_FP16_MATMUL_USE_FP32_COMPUTE: default on), so
            # neither Pascal's 1/64-rate nor the P100's 2x float16 units set the speed
            # (tensorflow/tensorflow#25405: Pascal float16 20-30% faster than float32);
            # bfloat16 because no GPU before Ampere computes in it: TensorFlow casts each
            # convolution's operands to float32 and its result back (speed_model/
            # bf16_casts.py). The per-op model takes that path (speed_model/gpu_step.math_path);
            # the dry run's predicted step gives both dtypes' figures and warns where the
            # step's casts make the dtype slower than float32 (speed_model/from_flags.py).
            traffic = ('convolutions cast to float32 and back' if dtype == tf.bfloat16
                       else 'half the memory traffic')
            return True, ('GPU compute capability %s < %d.%d: no %s tensor cores; %s data '
                          'with float32 math, %s' % (
                              _listed(caps), need[0], need[1], name, name, traffic))
        return False, 'GPU compute capability unknown < %d.%d: no native %s' % (
            need[0], need[1], name)
    flags = cpu_flags() if flags is None else flags
    wanted = cpu_unit_flags(dtype)
    found = [f for f in wanted if f in flags]
    if found and measured is not None:
        slow = kernel_speed.far_slower_warning('', dtype, measured, shapes=shapes) is not None
        return not slow, 'CPU has %s, %s' % ('/'.join(found), kernel_speed.describe(
            dtype, measured, when=when, gradients=gradients, shapes=shapes))
    if found and dtype == tf.float16:
        # Not measured quietly here: no flag vouches for TensorFlow 2.21's float16 CPU kernels
        # (a fused float16 MatMul 400-580x, convolution gradients 160-250x float32's time on
        # a Xeon with AVX512_FP16: results/2026-12-06-cpu-tf2.21-kernel-factors.md). A busy
        # probe's factors far beyond what load explains are said (kernel_speed.busy_far_slower).
        # Gradient kinds that run in float32 without a quiet probe are not this run's cost.
        in_float32 = kernel_speed.fallback_gradient_kinds(dtype, shapes) if gradients else ()
        busy = {k: v for k, v in kernel_speed.busy_far_slower(dtype).items()
                if not k.endswith('_gradients')
                or (gradients and k.split('_')[0] not in in_float32)}
        if busy:
            return False, ('CPU has %s; float16 on a busy host (not kept): %s float32\'s time'
                           % ('/'.join(found), ', '.join(
                               '%s %s' % (k.replace('_gradients', ' grad'),
                                          kernel_speed.factor_text(v)) for k, v in busy.items())))
        return False, ('CPU has %s; float16 kernels %s (some took 400x float32\'s time)' % (
            '/'.join(found), 'measured on a busy host, not kept' if kernel_speed.busy_probe(
                dtype) else 'unmeasured here'))
    if found:
        return True, 'CPU has %s: native %s' % ('/'.join(found), name)
    limit = machine.onednn_isa_limit()
    text = 'CPU has no %s%s: no native %s arithmetic (emulated in software)' % (
        '/'.join(wanted), ' oneDNN may use (ONEDNN_MAX_CPU_ISA=%s)' % limit if limit else '',
        name)
    if measured is not None:  # gradients in float32 whatever was measured (gradient_scope)
        text += '; ' + kernel_speed.describe(dtype, measured, when=when,
                                             gradients=gradients).split('; gradients')[0]
        in_float32 = [part for part, wanted in (
            ('gradients', gradients),
            (' and '.join(norm_and_pool), dtype == tf.float16 and norm_and_pool)) if wanted]
        if in_float32:
            text += '; %s in float32' % ', '.join(in_float32)
    return False, text


# --- Emulated reduced precision: convolution and matmul gradients in float32.

FLOAT32_CONV_GRADIENT = 'TfCnnBenchmarksConv2DGradInFloat32'
FLOAT32_MATMUL_GRADIENT = 'TfCnnBenchmarksMatMulGradInFloat32'


@tf.RegisterGradient(FLOAT32_CONV_GRADIENT)
def _conv2d_grad_in_float32(op, grad):
    """Gradients of a Conv2D (input, filter) computed in float32, returned in the op's dtype."""
    x, w = op.inputs
    kwargs = dict(strides=op.get_attr('strides'), padding=op.get_attr('padding'),
                  explicit_paddings=op.get_attr('explicit_paddings'),
                  data_format=op.get_attr('data_format'), dilations=op.get_attr('dilations'))
    x32, w32, g32 = (tf.cast(t, tf.float32) for t in (x, w, grad))
    dx = tf.raw_ops.Conv2DBackpropInput(input_sizes=tf.shape(x), filter=w32, out_backprop=g32,
                                        **kwargs)
    dw = tf.raw_ops.Conv2DBackpropFilter(input=x32, filter_sizes=tf.shape(w), out_backprop=g32,
                                         **kwargs)
    return tf.cast(dx, x.dtype), tf.cast(dw, w.dtype)


@tf.RegisterGradient(FLOAT32_MATMUL_GRADIENT)
def _matmul_grad_in_float32(op, grad):
    """Gradients of C = op(A) op(B) (op: optional transpose) in float32, in the op's dtype.

    With C = A B: dA = G B^T, dB = A^T G; the transposed cases follow from (X^T)^T = X.
    """
    a, b = op.inputs
    ta, tb = op.get_attr('transpose_a'), op.get_attr('transpose_b')
    a32, b32, g = (tf.cast(t, tf.float32) for t in (a, b, grad))
    if not ta and not tb:
        da, db = tf.matmul(g, b32, transpose_b=True), tf.matmul(a32, g, transpose_a=True)
    elif not ta and tb:
        da, db = tf.matmul(g, b32), tf.matmul(g, a32, transpose_a=True)
    elif ta and not tb:
        da, db = tf.matmul(b32, g, transpose_b=True), tf.matmul(a32, g)
    else:
        da = tf.matmul(b32, g, transpose_a=True, transpose_b=True)
        db = tf.matmul(g, a32, transpose_a=True, transpose_b=True)
    return tf.cast(da, a.dtype), tf.cast(db, b.dtype)


def folds_batch_norm(dtype, device, phase_train) -> bool:
    """Whether an inference graph folds batch norm into the convolutions (ConvNetBuilder).

    True for bfloat16/float16 inference on the CPU. There Grappler's remapper fuses a float32
    convolution with the batch norm (and ReLU) after it into one oneDNN convolution, but not a
    bfloat16 one: resnet50 --forward_only --use_bf16 ran 52 Conv2D, 53 batch norms, 56 casts
    and the residual adds and ReLUs as separate ops. Folded (a convolution and a bias add),
    the remapper fuses bias, ReLU and residual add into the convolution in every dtype.
    float32 keeps the graph it had (its fusion already happens), GPUs too (cuDNN's own).
    """
    return (not phase_train) and device == 'cpu' and dtype != tf.float32


def float32_norm_and_pool(dtype, device) -> bool:
    """Whether a tower computes batch norm (with the ReLU after it) and pooling in float32,
    cast around (ConvNetBuilder.float32_norm_and_pool): float16 on a CPU without float16
    arithmetic.

    There TensorFlow's oneDNN rewrite leaves float16 batch norm and pooling to its generic
    kernels, which take about three times the float32 oneDNN batch norm and far more than its
    pooling gradient (docs/performance-notes.md, "Measurements once in the code"). bfloat16
    keeps its own: on a CPU with AVX512_BF16 its oneDNN batch norm is faster than float32's;
    GPUs keep the graph they had.
    """
    return dtype == tf.float16 and emulated(dtype, device)


#: The op types of what float32_norm_and_pool computes in float32, by the name the header uses.
NORM_AND_POOL_OPS = (('batch norm', ('FusedBatchNorm', 'FusedBatchNormV2', 'FusedBatchNormV3')),
                     ('pooling', ('MaxPool', 'AvgPool')))


def norm_and_pool_parts(plan) -> tuple[str, ...]:
    """Which of 'batch norm' and 'pooling' (NORM_AND_POOL_OPS) the run's model has, from its
    forward pass built once at batch 1 (models/flops.placeholder_graph, cached per process):
    what a float16 run without float16 arithmetic computes in float32 (`float32_norm_and_pool`;
    lenet has no batch norm: its header said 'batch norm, pooling' in float32)."""
    from ..models import flops
    _, graph, _ = flops.placeholder_graph(plan.model, plan.dataset, plan.image_size,
                                          plan.num_classes)
    types = {op.type for op in graph.get_operations()}
    return tuple(part for part, ops in NORM_AND_POOL_OPS if types.intersection(ops))


def cpu_unit_flags(dtype) -> tuple[str, ...]:
    """The /proc/cpuinfo flags of `dtype`'s arithmetic units (bfloat16 or float16) on x86."""
    return _CPU_BF16_FLAGS if dtype == tf.bfloat16 else _CPU_FP16_FLAGS


def has_cpu_units(dtype, flags: set[str] | None = None) -> bool:
    """Whether the CPU's flags (default `cpu_flags()`) name units of `dtype`'s arithmetic:
    AVX512_BF16 or AMX_BF16 for bfloat16, AVX512_FP16 or AMX_FP16 for float16 (what its
    kernels do with them is measured: native_support)."""
    flags = cpu_flags() if flags is None else flags
    return any(f in flags for f in cpu_unit_flags(dtype))


def cpu_faster_choice(dtype, flags: set[str] | None = None) -> str:
    """What a CPU run in `dtype` (tf.float16 or tf.bfloat16) should use instead, from the CPU's
    flags (default `cpu_flags()`): '--use_bf16 (this CPU has avx512_bf16/amx_bf16)' for float16
    where the CPU has bfloat16 units (lenet: 1211 images/sec in bfloat16, 10.5 in float16 on a
    Xeon with AMX_BF16 and AVX512_FP16), else 'float32 (drop --use_fp16)' ('--use_bf16')."""
    flags = cpu_flags() if flags is None else flags
    bf16 = [f for f in cpu_unit_flags(tf.bfloat16) if f in flags]
    if dtype == tf.float16 and bf16:
        return '--use_bf16 (this CPU has %s)' % '/'.join(bf16)
    return 'float32 (drop --use_%s)' % ('fp16' if dtype == tf.float16 else 'bf16')


def emulated(dtype, device) -> bool:
    """True for float16/bfloat16 on a CPU without the CPU flags of native arithmetic in it."""
    return dtype != tf.float32 and device == 'cpu' and not has_cpu_units(dtype)


def float32_gradient_kinds(dtype, device, threads=(0, 0), shapes=None) -> tuple[str, ...]:
    """The op kinds ('conv', 'matmul') whose gradients a tower computes in float32.

    Both where `dtype` is `emulated`; on a CPU with the flags, those whose gradient kernels
    were measured slower than float32's (kernel_speed.float32_gradient_kinds), or without a
    quiet measurement kernel_speed.fallback_gradient_kinds; none on a GPU or in float32.
    `threads`: the run's (intra-op, inter-op) counts, and `shapes` its
    kernel_speed.ProbeShapes (RunPlan.kernel_shapes; None: the probe's default), for the
    measurement.
    """
    if dtype == tf.float32 or device != 'cpu':
        return ()
    if emulated(dtype, device):
        return ('conv', 'matmul')
    measured = kernel_speed.factors(dtype, threads, shapes=shapes)
    if measured is None:  # no quiet probe of this host (or the record is off): the flags'
        return kernel_speed.fallback_gradient_kinds(dtype, shapes)
    return kernel_speed.float32_gradient_kinds(measured, shapes)


def gradient_scope(dtype, device, threads=(0, 0), shapes=None):
    """The scope to build a tower's forward pass in: the Conv2D and MatMul ops built inside
    get their gradients computed in float32 where `float32_gradient_kinds` says so (an
    emulated dtype: both; `threads`, `shapes`: the run's, for its measurement).

    On a CPU without AVX512_BF16/FP16 the reduced-precision convolution and MatMul gradient
    kernels are several times slower than float32's, and float32 convolution gradients bring a
    bfloat16 resnet50 step most of the way back to the float32 step time
    (docs/performance-notes.md, "Measurements once in the code"). The forward ops stay
    in the compute dtype. Gradients come back in the op's dtype, so everything downstream (loss
    scaling, the variables' float32 gradients) is unchanged; they are as accurate or better.
    """
    kinds = float32_gradient_kinds(dtype, device, threads, shapes)
    overrides = {op: name for kind, op, name in (('conv', 'Conv2D', FLOAT32_CONV_GRADIENT),
                                                 ('matmul', 'MatMul', FLOAT32_MATMUL_GRADIENT))
                 if kind in kinds}
    if overrides:
        return tf1.get_default_graph().gradient_override_map(overrides)
    return contextlib.nullcontext()


def probe_shapes(plan):
    """The kernel_speed.ProbeShapes of a reduced-precision CPU run (RunPlan.kernel_shapes): its
    model's largest convolution and matmul at its per-device batch (an --eval run's: the
    evaluation's), from the model's forward pass built once at batch 1 with placeholder
    variables (models/flops.placeholder_graph, cached per process), cut to the probe's bound
    (kernel_speed.NATIVE_BOUND times the default's for bfloat16 on a CPU with its units);
    None for a float32 or GPU run. A forward-only or eval run's are marked `inference`."""
    if plan.compute_dtype == tf.float32 or plan.params.device != 'cpu':
        return None
    from ..models import flops
    _, graph, _ = flops.placeholder_graph(plan.model, plan.dataset, plan.image_size,
                                          plan.num_classes)
    batch = (plan.eval.per_device_batch_size if plan.params.eval and plan.eval is not None
             else plan.per_device_batch_size)
    # bfloat16 on a CPU with its units runs near float32's speed: its probe times the run's
    # ops whole up to a larger bound (alexnet's 8x9216x4096 matmul, not a cut 1x8192x4096).
    near = plan.compute_dtype == tf.bfloat16 and has_cpu_units(tf.bfloat16)
    shapes = kernel_speed.run_shapes(graph, batch, kernel_speed.NATIVE_BOUND if near else 1)
    return shapes._replace(inference=not plan.training)  # no gradients: none announced
