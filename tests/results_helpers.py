"""Result dicts and databases for the results-database tests (history/, tools/results_cli.py),
made without running a model: the keys are those of lifecycle/results_log.py.

    result(1000.0, host='node-a')                  # one run's result dict
    fill(db_path, [result(...), ...])              # recorded as the run hook does
    series(rates, start=..., host=..., **params)   # results one hour apart
    count_runs(conn)                               # the runs in a database
    columns_at(4)                                  # the row columns a schema-4 file has
    sweep_folder(path, records)                    # a sweep's folder of those records
"""

from __future__ import annotations

import datetime
import os
import subprocess

from tf_cnn_benchmarks.history import store
from tf_cnn_benchmarks.tools.sweep import results as sweep_results

T0 = datetime.datetime(2026, 1, 5, tzinfo=datetime.timezone.utc)
ENVIRONMENT = {'tf_version': '2.21.0', 'python_version': '3.11.2', 'platform': 'Linux-test',
               'hostname': 'node-a', 'cpu_model': 'Test CPU', 'cpu_flags': ['avx2', 'fma'],
               'cpu_cores': 2, 'gpus': [], 'onednn': 'on'}
PARAMS = {'model': 'trivial', 'batch_size': 32, 'num_gpus': 1, 'variable_update':
          'parameter_server', 'device': 'cpu', 'image_size': 32, 'use_fp16': False,
          'use_bf16': False, 'forward_only': False, 'eval': False, 'data_dir': None,
          'data_name': None, 'num_intra_threads': 0, 'label': None,
          'benchmark_log_dir': None}


def result(rate: float, *, host: str = 'node-a', finished: datetime.datetime | None = None,
           env: dict | None = None, steps: int = 4, **params) -> dict:
    """A training run's result dict at `rate` images/sec (its step times spread ±1%)."""
    p = dict(PARAMS, **params)
    batch = p['batch_size'] * p['num_gpus']
    step = batch / rate
    times = [step * (1 + 0.01 * ((i % 3) - 1)) for i in range(steps)]
    return {
        'model': p['model'], 'mode': 'training', 'params': p, 'plan': {'dataset': 'synthetic'},
        'environment': dict(ENVIRONMENT, hostname=host, **(env or {})),
        'images_per_sec': rate, 'num_steps': steps, 'step_times': times,
        'global_batch_size': batch, 'per_device_batch_size': p['batch_size'],
        'num_devices': p['num_gpus'], 'num_workers': 1, 'image_size': p['image_size'],
        'utilisation': {'model_flops_per_sec': 2.0e9, 'fraction_of_peak': 0.25},
        'input': {'input_share': 0.01}, 'memory': {'process_peak_rss_bytes': 2 ** 30},
        'latency_ms': None,
        'finished_utc': (finished or T0).isoformat(),
    }


def series(rates, *, start: datetime.datetime = T0, host: str = 'node-a', env=None,
           change_at: int | None = None, changed: dict | None = None, **params) -> list[dict]:
    """One result per rate, an hour apart; from index `change_at` on, `changed` overrides
    params (e.g. {'num_intra_threads': 1})."""
    out = []
    for i, rate in enumerate(rates):
        extra = dict(params)
        if change_at is not None and i >= change_at:
            extra.update(changed or {})
        out.append(result(rate, host=host, env=env,
                          finished=start + datetime.timedelta(hours=i), **extra))
    return out


def fill(db_path: str, results: list[dict]) -> list[int | None]:
    """Records the results into the database at `db_path` (as the run hook does)."""
    return [store.record_result(db_path, r) for r in results]


#: Where `three_series` turns slower: node a's 7th run (index 6).
SLOW_AT = 6


def three_series(db_path: str) -> str:
    """A database at `db_path` of three series: node a, 6 runs then 3 runs 30% slower with
    --num_intra_threads=1 (labelled slow-build, from SLOW_AT); node b, the same configuration,
    flat; and a bfloat16 configuration of 2 runs on node a. Returns `db_path`."""
    a = series([1000, 1010, 990, 1005, 995, 1002, 700, 705, 698], host='node-a',
               change_at=SLOW_AT, changed={'num_intra_threads': 1, 'label': 'slow-build'})
    b = series([800, 805, 795, 802, 798, 801, 799, 803, 797], host='node-b')
    bf16 = series([1500, 1490], use_bf16=True, host='node-a')
    fill(db_path, [r for pair in zip(a, b) for r in pair] + bf16)
    return db_path


def private_mounts() -> str | None:
    """Why a read-only bind mount cannot be made in a private mount namespace here, or None
    (`unshare -rm`: a user and mount namespace of this process's own; nothing outside sees it,
    and it holds for root, whom chmod does not stop)."""
    import shutil
    if not (shutil.which('unshare') and shutil.which('mount')):
        return 'no unshare or mount command'
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        probe = subprocess.run(['unshare', '-rm', 'sh', '-c', 'mount --bind -o ro "$0" "$0" && '
                                '! touch "$0/x" 2>/dev/null', folder],
                               capture_output=True, text=True, timeout=30)
    return None if probe.returncode == 0 else 'unshare -rm: %s' % probe.stderr.strip()


def count_runs(conn) -> int:
    """The number of runs in the database of the sqlite3 connection `conn`."""
    return conn.execute('SELECT COUNT(*) FROM runs').fetchone()[0]


def columns_at(version: int) -> list[str]:
    """The columns of history/records.py ROW_FIELDS that a file of schema `version` has (the
    program of that schema wrote only those; history/store.py ADDED_IN)."""
    from tf_cnn_benchmarks.history import records
    later = {name for added, names in store.ADDED_IN.items() if added > version
             for name in names}
    return [name for name in records.ROW_FIELDS if name not in later]


def sweep_folder(path: str, records: list[dict]) -> str:
    """A sweep's output folder as tf_cnn_sweep leaves it: `records` appended to
    path/results.jsonl (tools/sweep/results.py; the folder is made when missing). Returns
    `path`."""
    os.makedirs(path, exist_ok=True)
    for record in records:
        sweep_results.append_record(os.path.join(path, 'results.jsonl'), record)
    return path


def results_command(capsys, *args) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `tf_cnn_results ARGS...` run in this process."""
    from tf_cnn_benchmarks.tools import results_cli
    status = results_cli.main(['tf_cnn_results'] + list(args))
    out, err = capsys.readouterr()
    return status, out, err
