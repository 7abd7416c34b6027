"""One device's stored images/sec for `--plan_scaling` and the dry run's predicted step: the
newest matching run of the results database (history/store.py). Loads no TensorFlow, so the
command can tell before TensorFlow loads whether a plan of CPU towers has its figure
(preflight/usage.py).
"""

from __future__ import annotations

import os

from ..hardware import gpu_specs, machine
from ..history import records, store


def find_single_device_run(p, device: str) -> tuple[float, str] | None:
    """A stored run's images/sec of this configuration on one device, and where it comes from
    ('results database: run 42 of 2025-01-01T10:00:00Z'), or None.

    The results database (--results_db, history/store.py; never created here) answers for the
    model, per-device batch, precision (--use_fp16/--use_bf16), mode (--forward_only) and the
    device (`device`: a GPU table name such as 'V100 16GB', matched against the GPUs the
    stored run's host reported, or 'CPU': a CPU run on this host's CPU model), on one device
    and one worker; the newest matching run's total images/sec wins.
    """
    path = store.resolve_path(p.results_db)
    if path is None or not os.path.isfile(path):
        return None
    config = {'model': p.model, 'precision': records.precision_of(p._asdict()),
              'mode': records.mode_of(p._asdict()), 'batch_size': p.batch_size,
              'num_devices': 1}
    try:
        with store.opened(path, create=False) as conn:
            rows = store.select_runs(conn, **config)
    except store.StoreError:
        return None  # a database that cannot be read plans nothing (the run's record says so)
    this_cpu = machine.cpu_model()
    for row in reversed(rows):  # newest first
        if (row.get('num_workers') or 1) != 1 or not row.get('images_per_sec'):
            continue
        if device == 'CPU':
            found = row.get('device') == 'cpu' and row.get('cpu_model') == this_cpu
        else:
            names = [n.strip() for n in (row.get('gpus') or '').split(',') if n.strip()]
            specs = [gpu_specs.from_device_name(n) for n in names]
            found = row.get('device') == 'gpu' and any(s is not None and s.name == device
                                                        for s in specs)
        if found:
            return float(row['images_per_sec']), 'results database: run %s of %s' % (
                row['id'], row['run_utc'][:19] + 'Z')
    return None
