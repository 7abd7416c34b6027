"""When `replicated`'s gradient transfer options act (grad_transfer.py builds them), in pure
Python so that the command's flag check (preflight/ineffective_flags.py) reads the same rules
before TensorFlow loads.

* ``--variable_consistency=relaxed``: one-host `replicated` training defers every device's
  gradients by one step (the original's only mode for it; elsewhere each step applies its own).
* ``--compact_gradient_transfer`` (default on): with ``--use_fp16`` in `replicated` training on
  more than one device, the all-reduce moves float32 gradients as float16.
"""

from __future__ import annotations


def defers_gradients(p) -> bool:
    """Whether a run with Params `p` defers its all-reduced gradients by one step."""
    return (p.variable_consistency == 'relaxed' and p.variable_update == 'replicated'
            and not p.forward_only and not p.eval)


def casts_to_float16(p) -> bool:
    """Whether Params `p` ask for float32 gradients all-reduced as float16 wherever
    `replicated` all-reduces between devices: --use_fp16 with --compact_gradient_transfer in a
    step with gradients (speed_model/from_flags.py plans the bytes by it)."""
    return bool(p.compact_gradient_transfer and p.use_fp16 and not p.forward_only
                and not p.eval)


def compacts_gradients(p, num_devices: int) -> bool:
    """Whether a run with Params `p` on `num_devices` towers all-reduces its gradients as
    float16."""
    return casts_to_float16(p) and num_devices > 1 and p.variable_update == 'replicated'


def no_effect_reasons(p) -> dict[str, str]:
    """{flag name: why it has no effect in a run with Params `p`}, the rest of a line
    '--NAME has no effect ...', for the flags of this module where they do nothing (whatever
    their value: the caller warns only for flags the user chose)."""
    mode = p.variable_update
    if p.forward_only or p.eval:
        why = 'with --%s (no gradients)' % ('forward_only' if p.forward_only else 'eval')
        return {'variable_consistency': why, 'compact_gradient_transfer': why}
    out = {}
    if mode != 'replicated':
        out['variable_consistency'] = (
            'with --variable_update=%s (relaxed defers the gradients of '
            '--variable_update=replicated by one step, as in the original; elsewhere each step '
            'applies its own)' % mode)
    if not p.use_fp16:
        out['compact_gradient_transfer'] = (
            'without --use_fp16 (it moves float32 gradients as float16 in the all-reduce of '
            '--variable_update=replicated)')
    elif mode != 'replicated':
        out['compact_gradient_transfer'] = (
            'with --variable_update=%s (only the all-reduce of --variable_update=replicated '
            'moves gradients as float16)' % mode)
    elif p.num_gpus == 1 and not p.plan_scaling:
        out['compact_gradient_transfer'] = (
            'with --variable_update=replicated on one device (one tower: nothing is '
            'transferred)')
    return out
