"""The header's precision block: what a run computes in which dtype, and why, in at most three
lines of at most 100 characters (the graph choices' line included).

The block is made of phrases, packed into lines in order, '; ' between two on one line, the
first line after 'Precision:   ', the others indented alike (13 characters):

  * the compute phrase: the dtypes, the CPU flags of the reduced dtype's units where there are
    some, and what runs in float32 besides the variables (gradients of the kinds whose
    reduced-precision kernels measured slow, or all of them where the dtype is emulated;
    float16's batch norm and pooling there), e.g. 'bfloat16 compute on avx512_bf16/amx_bf16,
    float32 variables and matmul gradients';
  * the loss scale of a float16 training run ('loss scale 128', 'auto loss scale 128 (x2 per
    1000 finite steps)');
  * the support: on a GPU its compute capability against the dtype's (or, in float32, the TF32
    phrases: run_header.tf32_line); on a CPU without the units 'emulated: ...', with them the
    kernel factors measured against float32 at the run's largest convolution and matmul
    (hardware/kernel_speed.py), forward and gradients of each kind, and their date, e.g. 'time
    vs float32 on 2026-12-05: conv fwd 1.02x, grad 0.96x; matmul fwd 1.02x, grad 3.10x'.

Where the phrases need more lines than the block has room for, terser forms are tried in turn
(`LEVELS`): shorter factor wording; an emulated dtype's forward factors only (its gradients run in
float32 whatever its gradient kernels measured); the ONEDNN_MAX_CPU_ISA detail left to the
warning line, which says it in full (run_header.precision_lines); the automatic loss scale's
doubling period left to the flag; 'float16 kernels unmeasured here' without its reason;
'emulated' without the units; the factors without their date; 'grads' for 'gradients'; a GPU
without the dtype's tensor cores in one phrase. The tersest form fits every combination
(tests/test_precision_block_fit.py); `squeeze` is the hard bound behind it. Longer texts (the
warnings, graph/precision.native_support) are not the block.
"""

from __future__ import annotations

import tensorflow as tf

from ..hardware import kernel_speed, machine
from . import precision

#: The widest line of the block, its indent included, and its most lines.
WIDTH = 100
INDENT = 13
MAX_LINES = 3
#: What the block says of kernel factors this run measured on a busy host and did not keep.
BUSY = 'measured, not kept (busy host)'
#: Terser and terser forms of the phrases (see the module docstring), tried in this order.
LEVELS = ('full', 'short factors', 'emulated forward factors', 'no isa detail',
          'no loss scale period', 'short unmeasured', 'short emulated', 'no factor date',
          'short gradients', 'short gpu')


def _and(items) -> str:
    """'a', 'a and b', 'a, b, c' (short)."""
    items = list(items)
    return ' and '.join(items) if len(items) <= 2 else ', '.join(items)


def loss_scale_phrase(p, level: int = 0) -> str:
    """'loss scale 128', 'auto loss scale 128 (x2 per 1000 finite steps)' (from LEVELS'
    'no loss scale period' on: 'auto loss scale 128'), or '' (not --use_fp16, or no backward
    pass: --forward_only, --eval)."""
    if not p.use_fp16 or p.forward_only or p.eval:
        return ''
    scale = precision.scale_text(precision.initial_loss_scale(p))
    if not p.fp16_enable_auto_loss_scale:
        return 'loss scale %s' % scale
    if level >= LEVELS.index('no loss scale period'):
        return 'auto loss scale %s' % scale
    return 'auto loss scale %s (x2 per %d finite steps)' % (scale, p.fp16_inc_loss_scale_every_n)


def factors_phrase(measured: dict[str, float], date: str, gradients: bool = True,
                   level: int = 0) -> str:
    """The kernel factors (seconds in the reduced dtype / in float32, kernel_speed.KINDS, at
    the run's largest convolution and matmul), forward ('fwd') and gradients ('grad') of each
    kind, each a factor of its own: 'time vs float32 on 2026-12-05: conv fwd 1.49x, grad 142x;
    matmul fwd 1.35x, grad 0.61x' (from 'short factors' on, one decimal: '2026-12-05, fwd/grad
    vs float32: conv 1.5x/142x, matmul 1.4x/0.6x'); without `gradients` the forward factors:
    'time vs float32 on 2026-12-05: conv 1.02x, matmul 1.02x' (short: '2026-12-05 vs float32:
    ...'). `date`: the measurement's, 'YYYY-MM-DD'. (It used to write 'conv 1.49/142x', which
    read as one number divided by another.)"""
    f = kernel_speed.factor_text
    short = level >= LEVELS.index('short factors')
    if level >= LEVELS.index('no factor date'):
        date = ''  # the tersest form: the date is in the results JSON (plan.precision)
    if not gradients:
        forward = ', '.join('%s %s' % (kind, f(measured[kind])) for kind in ('conv', 'matmul'))
        return ('%s vs float32: %s' if short else 'time vs float32 on %s: %s') % (
            date, forward) if date else 'vs float32: %s' % forward
    pairs = [(kind, f(measured[kind]), f(measured[kind + '_gradients']))
             for kind in ('conv', 'matmul')]
    if short:
        def one(v):
            return '%.1fx' % v if v < 10 else '%.0fx' % v
        return '%sfwd/grad vs float32: %s' % (date and date + ', ', ', '.join(
            '%s %s/%s' % (kind, one(measured[kind]), one(measured[kind + '_gradients']))
            for kind in ('conv', 'matmul')))
    return 'time vs float32 on %s: %s' % (date, '; '.join('%s fwd %s, grad %s' % p
                                                          for p in pairs))


def phrases(p, dtype: tf.DType, variable_dtype: tf.DType, *, level: int = 0,
            flags: set[str] | None = None, capabilities=None,
            measured: dict[str, float] | None = None, date: str = '', planned: str = '',
            tf32: str | None = None, environ=None, shapes=None, busy: bool = False,
            norm_and_pool=('batch norm', 'pooling')) -> list[str]:
    """The block's phrases in order (module docstring), at terseness `level` (an index of
    LEVELS).

    Args:
      p: the run's Params (device, use_fp16, the loss scale flags, forward_only, eval).
      dtype, variable_dtype: the compute and variable dtypes.
      flags: the CPU's flags (default precision.cpu_flags()); capabilities: the GPUs'
        (major, minor) compute capabilities (default precision.gpu_compute_capabilities()).
      measured: CPU only, {kind: factor} of kernel_speed.KINDS, or None (no quiet probe).
      date: the measurement's date, 'YYYY-MM-DD'.
      planned: ' (--gpu_model=V100 16GB)' for a dry run planning a GPU that is not here: after
        'compute' in the compute phrase.
      tf32: a float32 GPU run's TF32 text (run_header.tf32_line: phrases between '; '), or None.
      environ: the environment (default os.environ): ONEDNN_MAX_CPU_ISA.
      shapes: the kernel_speed.ProbeShapes `measured` was timed at (RunPlan.kernel_shapes),
        for the gradients it runs in float32 (kernel_speed.float32_gradient_kinds).
      busy: no quiet factors, but this run measured them on a busy host, not kept
        (kernel_speed.busy_probe): 'kernels measured, not kept (busy host)', not 'unmeasured'.
      norm_and_pool: what of batch norm and pooling the model has
        (precision.norm_and_pool_parts): an emulated float16 run computes them in float32.
    """
    gradients = not (p.forward_only or p.eval)
    loss = [loss_scale_phrase(p, level)] if loss_scale_phrase(p, level) else []
    in_float32: list[str] = []
    where, support = '', []
    if dtype == tf.float32:
        support = tf32.split('; ') if tf32 else []
    elif p.device == 'gpu':
        caps = precision.gpu_compute_capabilities() if capabilities is None else capabilities
        native, text = precision.native_support(dtype, 'gpu', capabilities=caps)
        support = [text]
        if native and '; ' in text and level >= LEVELS.index('short gpu'):
            support = ['%s: no %s tensor cores' % (text.split(': ')[0], dtype.name)]
        elif native and '; ' in text:  # no tensor cores of the dtype: the capability, the path
            support = [text.split(': ')[0], 'no %s tensor cores: float32 math, %s' % (
                dtype.name, text.split(' with float32 math, ')[-1])]
    else:
        flags = precision.cpu_flags() if flags is None else flags
        wanted = precision.cpu_unit_flags(dtype)
        found = [f for f in wanted if f in flags]
        if found:
            where = ' on %s' % '/'.join(found)
            if gradients:
                kinds = (kernel_speed.float32_gradient_kinds(measured, shapes)
                         if measured is not None
                         else kernel_speed.fallback_gradient_kinds(dtype, shapes))
                grads = 'grads' if level >= LEVELS.index('short gradients') else 'gradients'
                in_float32 += ['%s %s' % ('/'.join(kinds), grads)] if kinds else []
            if measured is not None:
                support = [factors_phrase(measured, date, gradients, level)]
            elif level >= LEVELS.index('short unmeasured'):  # the warning says the rest
                support = ['%s kernels %s' % (dtype.name, 'not kept (busy)' if busy
                                              else 'unmeasured here')]
            elif dtype == tf.float16:  # 'float16 kernels unmeasured here (...)'
                support = [precision.native_support(dtype, 'cpu', flags=flags)[1].split('; ')[1]]
            else:  # a busy probe's factors are in its warning line, not kept
                support = ['native %s, kernels %s' % (dtype.name, BUSY if busy
                                                      else 'unmeasured here')]
        else:
            in_float32 += ['gradients'] if gradients else []
            in_float32 += list(norm_and_pool) if dtype == tf.float16 else []
            limit = machine.onednn_isa_limit(environ)
            support = ['emulated: no %s' % '/'.join(wanted)]
            if level >= LEVELS.index('short emulated'):  # the warning names the units
                support = ['emulated']
            elif limit and level < LEVELS.index('no isa detail'):
                support[0] += ' under ONEDNN_MAX_CPU_ISA=%s' % limit
            if measured is None and busy and level < LEVELS.index('short unmeasured'):
                support.append('kernels %s' % BUSY)
            if measured is not None:
                support.append(factors_phrase(
                    measured, date, gradients and level < LEVELS.index('emulated forward factors'),
                    level))
    if variable_dtype == tf.float32:
        kept = 'float32 %s' % _and(['variables'] + in_float32)
    else:
        kept = '%s variables' % variable_dtype.name + (
            ', float32 %s' % _and(in_float32) if in_float32 else '')
    return ['%s compute%s%s, %s' % (dtype.name, where, planned, kept)] + loss + support


def pack(texts, width: int = WIDTH) -> list[str]:
    """The phrases `texts` in lines of at most `width` characters where each fits: the first
    line 'Precision:   ' and the phrases that fit after it ('; ' between two), the others
    indented alike. A phrase longer than a line has a line of its own."""
    lines: list[str] = []
    for text in texts:
        if lines and len(lines[-1]) + 2 + len(text) <= width:
            lines[-1] += '; ' + text
        else:
            lines.append(('Precision:' if not lines else '').ljust(INDENT) + text)
    return lines


def block(p, dtype: tf.DType, variable_dtype: tf.DType, *, room: int = MAX_LINES,
          **kwargs) -> list[str]:
    """The precision block (without the graph choices): the fullest form of `phrases` whose
    lines fit in `room` lines of at most WIDTH characters, else the tersest form. `kwargs`:
    `phrases`' (flags, capabilities, measured, date, planned, tf32, environ, shapes, busy,
    norm_and_pool)."""
    for level in range(len(LEVELS)):
        lines = pack(phrases(p, dtype, variable_dtype, level=level, **kwargs))
        if len(lines) <= room and all(len(line) <= WIDTH for line in lines):
            return lines
    return squeeze(lines, room)


def squeeze(lines: list[str], room: int) -> list[str]:
    """`lines` cut to `room` lines of at most WIDTH characters, whatever they hold: what does
    not fit ends the last line as '...' (the safety net behind LEVELS, whose tersest form
    fits every case tests/test_precision_block_fit.py builds)."""
    cut = [line if len(line) <= WIDTH else line[:WIDTH - 3] + '...' for line in lines[:room]]
    if len(lines) > room and not cut[-1].endswith('...'):
        last = cut[-1][:WIDTH - 4] if len(cut[-1]) > WIDTH - 4 else cut[-1]
        cut[-1] = last + ' ...'
    return cut


def facts(plan) -> dict:
    """What the header's precision block shows, as values for the results JSON
    (result['precision']; run_header.precision_lines formats the same): the dtypes, whether
    the device computes the reduced dtype natively or it is emulated, the ONEDNN_MAX_CPU_ISA
    cap, the gradient kinds computed in float32, the kernel factors ({kind: seconds in the
    dtype / in float32}, hardware/kernel_speed.KINDS), when they were measured ('2026-12-07
    02:13 UTC') and the shapes, and the first step's loss scale (float16 training).

    Args:
      plan: the run's run_plan.RunPlan (reads the memoised probe: measures nothing new
        unless no caller asked before).
    """
    p, dtype = plan.params, plan.compute_dtype
    out = {'compute_dtype': dtype.name, 'variable_dtype': plan.variable_dtype.name,
           'onednn_max_cpu_isa': machine.onednn_isa_limit(), 'native': True,
           'emulated': False, 'float32_gradients': [], 'kernel_factors': None,
           'kernel_factors_measured': None, 'kernel_shapes': None, 'loss_scale': None}
    training = not (p.forward_only or p.eval)
    if p.use_fp16 and training:
        out['loss_scale'] = {'initial': precision.initial_loss_scale(p),
                             'automatic': bool(p.fp16_enable_auto_loss_scale),
                             'inc_every_n': (p.fp16_inc_loss_scale_every_n
                                             if p.fp16_enable_auto_loss_scale else None)}
    if dtype == tf.float32 or p.device != 'cpu':
        return out
    shapes = plan.kernel_shapes
    out['kernel_shapes'] = shapes.text() if shapes is not None else None
    out['emulated'] = precision.emulated(dtype, 'cpu')
    speed = kernel_speed.probe(dtype, plan.threads, shapes=shapes)
    measured = dict(speed.value) if speed is not None else None
    if speed is not None:
        out['kernel_factors'] = {k: float(v) for k, v in measured.items()}
        out['kernel_factors_measured'] = speed.date()
    out['native'] = precision.native_support(dtype, 'cpu', measured=measured,
                                             gradients=training, shapes=shapes)[0]
    if training:
        out['float32_gradients'] = list(precision.float32_gradient_kinds(
            dtype, 'cpu', plan.threads, shapes))
    return out
