"""How far the data-sheet model of one GPU (gpu_step.py) was from published runs: the error
band a prediction without a measured one-GPU figure prints beside its images/sec.

    band = validation_band.band_for('A100 40GB', 'float16')
    band.clause()   # 'against 42 published float16 runs its error was median 17%, ...'
    band.as_dict()  # the dry run's and the plan's JSON

Source: the committed validation, VALIDATION (written by `python -m bench.bench_gpu_model`,
shown in docs/estimate-vs-reality.md). Its rows carry the dtype the published run trained in,
and these bands group them so: 'float32' (full float32, or TF32 where the GPU has it and
TensorFlow's default left it on, as in the validation's Ampere rows) and 'float16'. No
published run trained in bfloat16: a bfloat16 prediction gets the float16 band and says that
none of its rows was bfloat16. Rows whose published figure the validation marks suspect (a
broken run: its `suspect` field) are left out of the bands and counted in
`suspect_left_out`; error = predicted / published - 1, the median is of |error|.

The figures are typed here because results/ does not ship with the package (setup.py's
package_data); tests/test_validation_band.py recomputes BANDS and GPU_ROWS from the newest
committed results/*gpu-model-validation.json with `bands_from_rows` and fails when they
differ, printing the table to paste.
"""

from __future__ import annotations

import statistics
from typing import NamedTuple

#: The committed validation these figures come from, and the page that shows it.
VALIDATION = 'results/2026-12-06-cpu-tf2.21-gpu-model-validation.json'
DOC = 'docs/estimate-vs-reality.md'

#: {rows' dtype: (rows, median |error|, lowest error, highest error, suspect rows left out)}.
BANDS = {
    'float32': (62, 0.0806, -0.4671, 0.356, 0),
    'float16': (42, 0.1728, -0.2908, 1.2934, 1),
}

#: {rows' dtype: {GPU (hardware/gpu_specs.py's name): rows of that GPU in the band}}.
GPU_ROWS = {
    'float32': {'A100 40GB': 1, 'A100 PCIe 40GB': 5, 'GTX 1080 Ti': 5, 'K80': 4,
                'P100 SXM2': 5, 'Quadro RTX 8000': 5, 'RTX 2080': 3, 'RTX 2080 Ti': 5,
                'RTX 3080': 5, 'RTX 3090': 5, 'RTX A6000': 5, 'Titan RTX': 3, 'Titan V': 3,
                'Titan Xp': 3, 'V100 16GB': 1, 'V100 32GB': 4},
    'float16': {'A100 40GB': 5, 'A100 PCIe 40GB': 5, 'GTX 1080 Ti': 5, 'Quadro RTX 8000': 5,
                'RTX 2080 Ti': 5, 'RTX 3080': 5, 'RTX 3090': 5, 'RTX A6000': 5,
                'V100 16GB': 1, 'V100 32GB': 1},
}


def rows_dtype(dtype: str) -> str:
    """The validation rows' dtype that stands for a run's compute dtype: 'float16' for
    'float16' and 'bfloat16', else 'float32'."""
    return 'float16' if dtype in ('float16', 'bfloat16') else 'float32'


def bands_from_rows(rows: list[dict]) -> tuple[dict, dict]:
    """(BANDS, GPU_ROWS) recomputed from the validation's rows (its JSON's data.rows: each
    {'gpu', 'dtype', 'error', 'suspect', ...}); errors and medians rounded to 4 places, as
    the validation rounds its errors."""
    bands, per_gpu = {}, {}
    for dtype in sorted({r['dtype'] for r in rows}):
        kept = [r for r in rows if r['dtype'] == dtype and not r['suspect']]
        errors = [r['error'] for r in kept]
        bands[dtype] = (len(kept), round(statistics.median(abs(e) for e in errors), 4),
                        min(errors), max(errors), sum(1 for r in rows
                                                      if r['dtype'] == dtype and r['suspect']))
        counts = {}
        for r in kept:
            counts[r['gpu']] = counts.get(r['gpu'], 0) + 1
        per_gpu[dtype] = dict(sorted(counts.items()))
    return bands, per_gpu


class Band(NamedTuple):
    """The error band of one data-sheet prediction.

    dtype: the run's compute dtype; rows_dtype: the validation rows' dtype it is judged by;
    rows, median (|error|), low, high (errors, fractions: -0.29 is 29% too slow): of those
    rows; suspect_left_out: rows left out; gpu: the GPU predicted (gpu_specs name);
    gpu_rows: its own rows in the band (0: no published run of it in that dtype)."""
    dtype: str
    rows_dtype: str
    rows: int
    median: float
    low: float
    high: float
    suspect_left_out: int
    gpu: str
    gpu_rows: int

    def clause(self) -> str:
        """'against 42 published float16 runs its error was median 17%, -29%..+129% (+:
        predicted above the published figure)' (error = predicted / published - 1), then
        ', and no published run of the H100 80GB to check it against' (or 'no published
        float16 run of the K80') where the GPU has no row of its own, then ': <DOC>'."""
        out = ('against %d published %s runs%s its error was median %.0f%%, %+.0f%%..%+.0f%% '
               '(+: predicted above the published figure)' % (
            self.rows, self.rows_dtype, ' (none bfloat16)' if self.dtype == 'bfloat16' else '',
            100 * self.median, 100 * self.low, 100 * self.high))
        if not self.gpu_rows:
            seen = any(self.gpu in gpus for gpus in GPU_ROWS.values())
            out += ', and no published %srun of the %s to check it against' % (
                self.rows_dtype + ' ' if seen else '', self.gpu)
        return out + ': ' + DOC

    def short(self) -> str:
        """'62 published float32 runs: median 8%, -47%..+36%' (a second figure's band)."""
        return '%d published %s runs: median %.0f%%, %+.0f%%..%+.0f%%%s' % (
            self.rows, self.rows_dtype, 100 * self.median, 100 * self.low, 100 * self.high,
            '' if self.gpu_rows else ', none of the %s' % self.gpu)

    def as_dict(self) -> dict:
        """The band as plain data: {'dtype', 'rows_dtype', 'rows', 'median_abs_error',
        'min_error', 'max_error' (fractions), 'suspect_rows_left_out', 'gpu', 'gpu_rows',
        'gpu_validated' (gpu_rows > 0), 'validation' (VALIDATION), 'doc' (DOC)}."""
        return {'dtype': self.dtype, 'rows_dtype': self.rows_dtype, 'rows': self.rows,
                'median_abs_error': self.median, 'min_error': self.low,
                'max_error': self.high, 'suspect_rows_left_out': self.suspect_left_out,
                'gpu': self.gpu, 'gpu_rows': self.gpu_rows,
                'gpu_validated': self.gpu_rows > 0, 'validation': VALIDATION, 'doc': DOC}


def band_for(gpu: str, dtype: str) -> Band:
    """The Band of a data-sheet prediction of `gpu` (a hardware/gpu_specs name, e.g. 'A100
    40GB') training in `dtype` ('float32', 'float16' or 'bfloat16')."""
    key = rows_dtype(dtype)
    rows, median, low, high, suspect = BANDS[key]
    return Band(dtype, key, rows, median, low, high, suspect, gpu,
                GPU_ROWS[key].get(gpu, 0))
