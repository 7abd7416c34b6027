"""The graph choices' factors (each shape's factor: the choice's seconds / today's graph's),
kept in the host's calibration record beside the kernel factors (hardware/kernel_speed.py,
which re-exports `choice_key` and `choice_factors`; graph/graph_choices.py measures them).
"""

from __future__ import annotations

import tensorflow as tf

from . import calibration, machine

CHOICE_KIND = 'graph choice'


def choice_key(cpu_model: str, tf_version: str, intra: int, inter: int, item: str) -> str:
    """'AMD EPYC 7B13|tf 2.21.0|graph choice|2 intra, 1 inter threads|conv1x1 bfloat16 NHWC
    16x56x56x64->256'; '...|2 intra, 2 inter threads on 1 CPU|...' when the process may run
    on fewer CPUs than its intra-op threads (calibration.on_cpus: the CPU peak's rule), so a
    pinned run's choices are its own."""
    return calibration.host_key(cpu_model, tf_version, 'graph choice',
                                '%d intra, %d inter threads' % (intra, inter)
                                + calibration.on_cpus(intra), item)


def with_spread(got: dict) -> tuple[dict, float]:
    """(got, the spread of the whole measurement): the largest of its factors' spreads
    relative to the factor (a Measurement's spread is relative: 0.12 = within 12%), where
    each item of `got` is (factor, spread in factor units, graph/graph_choices.py's passes).
    It was 0.0 whatever the passes measured (--calibrate reported 'spread 0%')."""
    return got, max((float(sp) / max(float(f), 1e-9) for f, sp in got.values()), default=0.0)


def choice_factors(items, threads: tuple[int, int], measure_fn, *, refresh: bool = False,
                   measure_missing: bool = False, what: str = 'graph choices', secs: float = 0,
                   path: str | None = None, cpu_model: str | None = None,
                   tf_version: str | None = None, meter=None) -> tuple[dict, str]:
    """{item: (factor, spread)} of the items with a quiet factor in the record; with
    `measure_missing` (--calibrate) or `refresh` (--refresh_peak: all of them) the missing
    ones measured at once (announced: `what`, up to `secs`: the probes' budgets are caps,
    small shapes end well within them), under one host-load meter, and
    kept when quiet (a busy measurement is not kept: the last quiet factors, or none, are
    used, and a warning says so).

    Args:
      items: distinct strings naming what is measured (e.g. 'conv1x1 bfloat16 NHWC 16x56x56x64
        ->256'), the key's last part.
      threads: the run's (intra-op, inter-op) thread counts.
      measure_fn: (missing items, intra, inter) -> {item: (factor, spread)}.
      path: the record (default calibration.record_path(); off: nothing).

    Returns:
      ({item: (factor > 0, spread)}, when): when is 'measured here' if the factors were
      measured now, 'calibrated <date of the oldest>' from the record, '' for none.
    """
    path = calibration.record_path() if path is None else path
    if not path:
        return {}, ''
    intra, inter = int(threads[0]), int(threads[1])
    keys = {item: choice_key(cpu_model or machine.cpu_model(), tf_version or tf.__version__,
                             intra, inter, item) for item in items}
    record = calibration.load_record(path)
    kept = {item: calibration.lookup(key, record=record) for item, key in keys.items()}
    kept = {item: m for item, m in kept.items() if m is not None}
    todo = list(items) if refresh else [i for i in items if i not in kept]
    fresh = {}
    if todo and (refresh or measure_missing):
        batch = calibration.measure(
            CHOICE_KIND, 'graph choices', lambda: with_spread(measure_fn(todo, intra, inter)),
            what=what, secs=secs, cores=calibration.cores(intra), meter=meter, upto=True)
        for item in todo:
            factor, spread = batch.value[item]
            fresh[item] = batch._replace(key=keys[item], value=float(factor),
                                         spread=float(spread))
        kind = 'the graph choices\' factors'
        if batch.quiet:
            if not calibration.store(path, fresh.values()):
                calibration._warn('%s measured now are used by this run but not kept: %s'
                                  % (kind, calibration.unwritable_text(path)))
            kept.update(fresh)
        else:
            unwritable = calibration.record_problem(path)
            calibration._warn(calibration.busy_note(
                batch._replace(kind=kind), None if not kept else next(iter(kept.values())),
                unwritable and calibration.unwritable_text(path)))
    out = {item: (float(m.value), m.spread) for item, m in kept.items()}
    if not out:
        return {}, ''
    if any(m.measured_now for m in kept.values()):
        return out, 'measured here'
    return out, 'calibrated %s' % min(m.date() for m in kept.values())
