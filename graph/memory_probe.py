"""The per-host probe of the memory-bound forms (models/memory_forms.py; graph/graph_choices.py
decides from it, hardware/kernel_speed.py choice_factors caches it).

Each `memory_forms.Site` is timed with its producers, forward and gradient together, in
today's form and in each other form (`Site.forms`), in the run's dtype, data format and thread
counts:

  * 'relu': x [N, H, W, C] -> training FusedBatchNormV3 -> ReLU; its gradient from one
    consumer, to x, gamma and beta.
  * 'residual': the branch's batch norm as above, then relu(shortcut + batch norm); the output
    read by two consumers (the next unit's shortcut and first convolution), so its gradient is
    tf.gradients' sum of two, then ReluGrad, to the branch's x, gamma, beta and the shortcut.

An incoming gradient that comes from a convolution is, where the run computes convolution
gradients in float32 (graph/precision.py float32_gradient_kinds), a float32 tensor cast to the
dtype, as in the step: the 'float32' forms read it before its cast. Inputs are random-valued
variables; the outputs are assigned to variables (stateful targets that no optimizer prunes).

Grappler is on, as in the run's own session: its remapper fuses the batch norm and the ReLU
into oneDNN's _FusedBatchNormEx wherever oneDNN takes the dtype (float32 on every x86 CPU,
bfloat16 with AVX-512), and that fusion is part of what today's form costs.

What is timed is what a form changes: each run is traced (RunOptions.FULL_TRACE) and the ops'
own durations are summed, leaving out the producers every form shares (`PRODUCERS`: the batch
norm and its gradient, variable reads and writes). The batch norm dominates a site (an Eigen
bfloat16 FusedBatchNormGradV3 takes about four times the ReLU, add, sum and ReluGrad together
on a CPU with AVX2 only: docs/performance-notes.md, "Measurements once in the code") and its
run-to-run noise alone exceeds what the forms save; its own time is the same in every form.
A site's factor is the form's sum / today's, the least of REPS traced runs each (the forms run
in turn), the larger of PASSES passes.
"""

from __future__ import annotations

import re
import time

import tensorflow as tf

from ..hardware import kernel_speed
from ..models import memory_forms
from . import precision

tf1 = tf.compat.v1

REPS = 5
PASSES = 2
#: The ops every form shares, not counted (oneDNN's kernel names included).
PRODUCERS = re.compile(r'BatchNorm|VariableOp|VarHandleOp|^(_Arg|_Retval|Const|NoOp|Identity)$')
#: Seconds the timed repetitions of all sites and passes may take together (at least
#: kernel_speed.MIN_REPS each; XLA's compilation, in the first untimed call, is not counted).
BUDGET_SECS = 10.0


def gradients_from_float32(dtype_name: str, threads: tuple[int, int],
                           kernel_shapes=None) -> bool:
    """Whether a run of this dtype, thread counts and kernel_speed.ProbeShapes computes
    convolution gradients in float32 (so a gradient from a convolution reaches these ops as a
    cast from float32)."""
    return 'conv' in precision.float32_gradient_kinds(tf.as_dtype(dtype_name), 'cpu', threads,
                                                      kernel_shapes)


def _var(dims, dtype):
    """A random-valued variable's value, [dims] in `dtype` (kept as a variable: nothing folds)."""
    return tf1.Variable(tf.cast(tf1.random_normal(dims), dtype), trainable=False).read_value()


def _sinks(tensors):
    """One op assigning each tensor to a variable of its own (a stateful target)."""
    sinks = [tf1.Variable(tf.zeros(t.shape, t.dtype), trainable=False) for t in tensors]
    return tf.group(*[s.assign(t, read_value=False) for s, t in zip(sinks, tensors)])


def site_target(site: memory_forms.Site, form: str | None, float32_gradients: bool):
    """The op running one site in `form` (None: today's), forward and gradient (module
    docstring); build inside a graph."""
    dtype = tf.as_dtype(site.dtype)
    nhwc = site.data_format == 'NHWC'
    dims = ([site.batch, site.height, site.width, site.channels] if nhwc else
            [site.batch, site.channels, site.height, site.width])

    def conv_gradient():
        return tf.cast(_var(dims, tf.float32), dtype) if float32_gradients else _var(dims, dtype)

    x = _var(dims, dtype)
    gamma, beta = (_var([site.channels], tf.float32) for _ in range(2))
    bn, _, _ = tf1.nn.fused_batch_norm(x, gamma, beta, epsilon=1e-5,
                                       data_format=site.data_format, is_training=True)
    if site.kind == 'relu':
        y = memory_forms.relu(bn, form)
        ys, grad_ys, wrt = [y], [conv_gradient()], [x, gamma, beta]
    else:
        shortcut = _var(dims, dtype)
        y = memory_forms.residual_relu(shortcut, bn, form)
        # The next unit's shortcut (its ReluGrad, in the dtype) and its first convolution.
        ys, grad_ys, wrt = [y, y], [_var(dims, dtype), conv_gradient()], [x, gamma, beta,
                                                                           shortcut]
    grads = tf.gradients(ys, wrt, grad_ys=grad_ys)
    return _sinks([y] + grads)


def probe_config(intra: int, inter: int):
    """The probe session's ConfigProto: the run's thread counts, Grappler's default rewrites
    (module docstring)."""
    return tf1.ConfigProto(intra_op_parallelism_threads=intra,
                           inter_op_parallelism_threads=inter)


def op_type(node_stats) -> str:
    """The op type of a trace record ('_MklNativeFusedBatchNormV3', 'ReluGrad', '_XlaRun')."""
    label = node_stats.timeline_label
    return label.split(' = ', 1)[1].split('(', 1)[0] if ' = ' in label else node_stats.node_name


def own_secs(step_stats, skip=PRODUCERS) -> float:
    """Seconds summed over the traced ops' own durations, ops whose type matches `skip` left
    out."""
    return sum(n.all_end_rel_micros for d in step_stats.dev_stats for n in d.node_stats
               if not skip.search(op_type(n))) / 1e6


#: Untimed runs of a target first: XLA compiles a cluster lazily, once it has run twice (the
#: first runs take TensorFlow's own kernels), and again for every new set of fetches.
WARM_UP_RUNS = 3


def warm_up(sess, target) -> None:
    """Runs `target` WARM_UP_RUNS times (its XLA clusters compiled after)."""
    for _ in range(WARM_UP_RUNS):
        sess.run(target)


def traced_secs(sess, target) -> float:
    """`own_secs` of one traced run of `target`."""
    meta = tf1.RunMetadata()
    sess.run(target, options=tf1.RunOptions(trace_level=tf1.RunOptions.FULL_TRACE),
             run_metadata=meta)
    return own_secs(meta.step_stats)


def measure(sites, intra: int, inter: int, budget_secs: float = BUDGET_SECS,
            spreads: dict | None = None, kernel_shapes=None) -> dict:
    """{(site, form): that form's seconds / today's} for each site and form of `Site.forms`,
    the seconds of the ops the forms change (module docstring).

    Args:
      sites: memory_forms.Site values (distinct).
      intra, inter: the run's intra-op and inter-op threads.
      budget_secs: seconds the timed repetitions may take together (at least
        kernel_speed.MIN_REPS runs per site and pass; XLA compiles in the untimed runs of
        `warm_up`).
      spreads: when given, receives {(site, form): the largest pass's factor - the least's}.
      kernel_shapes: the run's kernel_speed.ProbeShapes (RunPlan.kernel_shapes), for its
        gradients' dtype (`gradients_from_float32`).
    """
    graph = tf.Graph()
    with graph.as_default():
        targets = {}
        for site in sites:
            f32 = gradients_from_float32(site.dtype, (intra, inter), kernel_shapes)
            targets[site] = [site_target(site, form, f32) for form in (None,) + site.forms()]
        init = tf1.global_variables_initializer()
    out: dict = {}
    passes: dict = {}
    with tf1.Session(graph=graph, config=probe_config(intra, inter)) as sess:
        sess.run(init)
        for ts in targets.values():
            for target in ts:
                warm_up(sess, target)
        end = time.perf_counter() + budget_secs
        todo = [site for _ in range(PASSES) for site in targets]
        for i, site in enumerate(todo):
            deadline = time.perf_counter() + max(0.0, end - time.perf_counter()) / (len(todo) - i)
            best = [float('inf')] * len(targets[site])
            for rep in range(REPS):
                for j, target in enumerate(targets[site]):
                    best[j] = min(best[j], traced_secs(sess, target))
                if rep + 1 >= kernel_speed.MIN_REPS and time.perf_counter() >= deadline:
                    break
            for form, secs in zip(site.forms(), best[1:]):
                factor = secs / max(best[0], 1e-9)
                passes.setdefault((site, form), []).append(factor)
                out[site, form] = max(out.get((site, form), 0.0), factor)
    if spreads is not None:
        spreads.update({key: max(v) - min(v) for key, v in passes.items()})
    return out
