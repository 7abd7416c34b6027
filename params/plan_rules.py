"""The rules of the step-time model's flags: --plan_scaling and the flags that feed it and
--dry_run (--single_device_images_per_sec, --interconnect_gbps, --gpu_interconnect,
--plan_scaling_png, --plan_num_ps). Pure Python, before TensorFlow loads."""

from __future__ import annotations

from .errors import ParamsError


def check_plan_flags(p) -> None:
    """Checks the step-time model's flags of `p` (Params); the values of --interconnect_gbps
    and --gpu_interconnect are looked up in hardware/links.py (`links.check_plan_flags`).

    Raises:
      ParamsError: a flag without --plan_scaling or --dry_run to feed, a pair that excludes
        each other, or a non-positive --single_device_images_per_sec.
    """
    if p.plan_scaling and (p.dry_run or p.eval):
        raise ParamsError('--plan_scaling excludes --%s: %s; run them one after the other.' % ((
            'dry_run', 'each prints a report of its own (the plan: 1 to 1,024 GPUs; the dry run: '
            'this run\'s step checked)') if p.dry_run else ('eval', 'it plans no evaluation')))
    for name in ('plan_scaling_png', 'plan_num_ps'):
        if getattr(p, name) and not p.plan_scaling:
            raise ParamsError('--%s needs --plan_scaling.' % name)
    planning = [n for n in ('single_device_images_per_sec', 'interconnect_gbps',
                            'gpu_interconnect') if getattr(p, n) is not None]
    if planning and not (p.plan_scaling or p.dry_run):
        raise ParamsError('--%s feeds the step-time model of --plan_scaling and --dry_run; add '
                          'one of them or drop the flag.' % planning[0])
    if p.single_device_images_per_sec is not None and not p.single_device_images_per_sec > 0:
        raise ParamsError('--single_device_images_per_sec must be > 0 (images/sec of one device). '
                          'Received: single_device_images_per_sec=%g'
                          % p.single_device_images_per_sec)
