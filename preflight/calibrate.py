"""--calibrate: measure this host for the given flags, store the quiet figures, report, exit.

What a run would otherwise measure in passing (or not at all on a first run), measured on
purpose and all at once, after one line saying what is calibrated (`summary_line`: model,
batch, dtype, threads, record), each announced with its expected duration before it starts
(hardware/calibration.py; the graph choices in the unit their report counts: factors, one
per form of a site):

  * the CPU peak of every precision the step computes in (metrics/utilisation.py
    step_precision: float32; a reduced dtype with its units; both for a mixed step);
  * the reduced-precision kernel factors (--use_bf16/--use_fp16: hardware/kernel_speed.py);
  * the graph choices of the model at this batch, dtype and threads (training with the
    default --graph_choices=measured: graph/graph_choices.py; about a minute for resnet50).

Each is kept in the calibration record only when the host was quiet while it ran (other
processes at most a quarter of its cores); the report says, per figure, what was stored and
what was not and why. Exit status 0 when every figure was stored, 3 when the host was busy
for one or more of them (run again when it is quiet), 2 when the record is off
(TF_CNN_CALIBRATION=off) or the run is not on a CPU.
"""

from __future__ import annotations

from .. import cnn_util
from .. import params as params_lib
from ..graph import graph_choices, precision
from ..hardware import calibration, kernel_speed
from ..metrics import utilisation
from ..models import model_catalog
from ..runtime import cpu_tuning
from . import usage

BUSY_STATUS = 3


def _value_text(m: calibration.Measurement) -> str:
    """'229.0 GFLOP/s (matmul)', 'conv 0.90x, conv_gradients 1.10x, ...' or '36 factors
    0.62x-1.35x, 3 below 0.90x' (the graph choices': their range and how many are below
    graph_choices.FASTER_FACTOR, stored or not)."""
    value = m.value
    if isinstance(value, dict) and 'flops_per_sec' in value:
        return '%.1f GFLOP/s (%s)' % (float(value['flops_per_sec']) / 1e9,
                                      value.get('kernel', '?'))
    if isinstance(value, dict) and m.kind == kernel_speed.CHOICE_KIND:
        factors = [float(v[0] if isinstance(v, (tuple, list)) else v) for v in value.values()]
        if not factors:
            return '0 factors'
        return '%d factors %.2fx-%.2fx, %d below %.2fx' % (
            len(factors), min(factors), max(factors),
            sum(f < graph_choices.FASTER_FACTOR for f in factors), graph_choices.FASTER_FACTOR)
    if isinstance(value, dict):
        return ', '.join('%s %.2fx' % (k, float(v)) for k, v in sorted(value.items()))
    return '%.3g' % float(value)


def report_line(m: calibration.Measurement) -> str:
    """One line of the report, e.g. 'calibration: stored CPU peak|float32|2 threads: 229.0
    GFLOP/s (matmul); spread 2%, others 0.05 of 2 cores, 3.1 s' or 'calibration: NOT stored
    (other processes used 1.90 of 2 cores, more than 25%): ...' (the graph choices': 'spread
    up to 12%', the largest of their factors')."""
    what = '|'.join(m.key.split('|')[2:]) or m.kind
    state = ('stored' if m.quiet else 'NOT stored (other processes used %.2f of %s, '
             'more than %.0f%%)' % (m.others_cores or 0.0, cnn_util.counted(m.cores, 'core'),
                                    100 * calibration.QUIET_LIMIT))
    return 'calibration: %s %s: %s; spread %s%.0f%%, %s, %.1f s' % (
        state, what, _value_text(m), 'up to ' if m.kind == kernel_speed.CHOICE_KIND else '',
        100 * m.spread, m.load_text(), m.measure_secs)


def summary_line(q, path: str) -> str:
    """'calibration: resnet50, batch 16 per device, float32, 2 intra-op threads; record
    /home/u/.cache/tf_cnn_benchmarks/calibration.json' ('1 intra-op thread', '2 intra-op
    threads on 1 CPU' where the process may run on fewer CPUs: calibration.on_cpus, as the
    figures' keys say it): what is calibrated, from the resolved
    flags `q` (params.resolve_params) as the run plan takes them (run_plan.make_plan: the
    batch, else the model's default; precision.compute_dtypes; cpu_tuning.thread_counts), so it
    is printed before the bench is built: building it measures the graph choices (a minute
    for resnet50), and the line came after that measurement."""
    row = model_catalog.row(q.model, usage.dataset_name(q) or 'imagenet')
    batch = q.batch_size or (row.batch_size if row is not None else 0)
    intra = cpu_tuning.thread_counts(q)[0]
    threads = (cnn_util.counted(intra, 'intra-op thread') + calibration.on_cpus(intra) if intra
               else 'default intra-op threads')  # '2 intra-op threads on 1 CPU': the peak's
    return ('calibration: %s, batch %s per device, %s, %s; record %s'
            % (q.model, batch or "the model's default", precision.compute_dtypes(q)[0].name,
               threads, path))


def run(make_bench, p, visible_gpus: int) -> int:
    """Measures, stores and reports the host's figures for the flags `p` (--calibrate set).

    Args:
      make_bench: (Params, gpus) -> benchmark_cnn.BenchmarkCNN (the command's constructor).
      p: the run's Params.
      visible_gpus: GPUs TensorFlow sees.

    Returns:
      the exit status (module docstring).
    """
    path = calibration.record_path()
    if path is None:
        cnn_util.log_fn('error: --calibrate with %s=off: there is no record to store into '
                        '(unset it, or set it to a file)' % calibration.ENV)
        return 2
    problem = calibration.record_problem(path)
    if problem is not None:
        cnn_util.log_fn('error: --calibrate: the record %s %s' % (path, problem))
        return 2
    q = params_lib.resolve_params(p, visible_gpus)  # the device and batch the plan will have
    if q.device != 'cpu':
        cnn_util.log_fn('error: --calibrate measures a CPU; a GPU run takes its peak from the '
                        'data-sheet table (add --device=cpu to calibrate this host\'s CPU)')
        return 2
    cnn_util.log_fn(summary_line(q, path))  # before the first measurement
    mark = len(calibration.JOURNAL)  # the graph choices are measured as the step's plan is made
    # Every figure it reports measured again, no back-off; a busy one's line says to rerun it.
    with kernel_speed.refreshing(), calibration.calibrating():
        bench = make_bench(p, visible_gpus)
        plan = bench.plan
        lines = bench.precision_lines()  # the kernel factors and the graph choices
        peak = utilisation.cpu_device_peak(plan, refresh=True)
    made = calibration.journal_since(mark)
    for m in made:
        cnn_util.log_fn(report_line(m))
    for line in lines:  # the precision block, its lines after the first indented as the header's
        cnn_util.log_fn(line.rstrip())
    unkept = getattr(plan.graph_choices, 'unkept', None)
    shown = p.print_graph_choices and not plan.graph_choices.factors  # its table is the block's
    if unkept is not None and not shown:  # what the busy measurement found, not stored
        for line in graph_choices.table(unkept):
            cnn_util.log_fn(line)
    if peak.get('peak_flops_per_sec'):
        cnn_util.log_fn('calibration: the utilisation line will divide by %.1f GFLOP/s (%s)' % (
            peak['peak_flops_per_sec'] / 1e9, peak['peak_source']))
    else:
        cnn_util.log_fn('calibration: there will be no utilisation line: %s'
                        % peak['peak_source'])
    busy = [m for m in made if not m.quiet]
    if busy:
        cnn_util.log_fn('calibration: %d of %d figures not stored: the host was busy; run '
                        '`%s` again when it is quiet' % (len(busy), len(made),
                                                         'tf_cnn_benchmarks --calibrate'))
        return BUSY_STATUS
    return 0
