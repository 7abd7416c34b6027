"""The per-op GPU step model against every published one-GPU run we have, as a results/ file.

    python -m bench.bench_gpu_model

Nothing is measured here and no step runs: bench/published_gpu_runs.py holds the published
figures with their sources; each row is predicted from its GPU's data sheet alone
(speed_model/gpu_step.py through step_time.compute_from_gpu_model, as the dry run does with no
--single_device_images_per_sec), beside the flat estimate it replaced (step_time
.compute_from_peak at ASSUMED_UTILISATION), and the dry run's memory check judges whether the
published batch fits the GPU (a graph build and Grappler's estimate per model, batch and
precision: those runs ran, so every one must fit). The script writes
results/<date>-cpu-tf<X.Y>-gpu-model-validation.json and .md; docs/estimate-vs-reality.md
quotes them, and tests/test_gpu_model.py fails when the committed file is no longer what the
model predicts.
"""

from __future__ import annotations

import statistics
import sys

from . import bench_report, published_gpu_runs
from .preamble import RESULTS, ArgumentParser, start

WHAT = 'gpu_model_validation'


def predict(run) -> dict:
    """One published run's prediction by the per-op model and by the flat estimate."""
    from tf_cnn_benchmarks.hardware import gpu_specs
    from tf_cnn_benchmarks.speed_model import layer_profile, op_profile, step_time
    gpu = gpu_specs.lookup(run.gpu)
    ops = op_profile.from_model(run.model)
    found = step_time.compute_from_gpu_model(gpu, run.dtype, ops, run.batch_size, xla=run.xla,
                                             filter_winograd=run.filter_winograd)
    step = found.step
    flat = step_time.compute_from_peak(gpu, run.dtype,
                                       layer_profile.from_model(run.model).forward_flops,
                                       run.batch_size)
    before = run.batch_size / flat.secs
    return {
        'gpu': run.gpu, 'model': run.model, 'batch_size': run.batch_size, 'dtype': run.dtype,
        'xla': run.xla, 'real_data': run.real_data, 'source': run.source, 'note': run.note,
        'published': run.published, 'predicted': round(step.images_per_sec, 1),
        'error': round(step.images_per_sec / run.published - 1, 4),
        'before': round(before, 1), 'before_error': round(before / run.published - 1, 4),
        'math_path': step.math_path, 'share_of_peak': round(step.share_of_peak, 3),
        'bound_ops': step.describe(), 'kernels': step.kernels,
        'filter_winograd': run.filter_winograd, 'suspect': run.suspect,
        'dry_run_predicted': round(_dry_run_figure(run, gpu, ops, found), 1),
    }


def _dry_run_figure(run, gpu, ops, found) -> float:
    """The images/sec of one GPU the dry run's `Predicted step` line gives for the row's GPU,
    model, batch, precision and XLA (TensorFlow 2.21's algorithms): the row's prediction,
    except where the run's software offered fewer algorithms (`filter_winograd` False: no
    flag of the command reproduces those)."""
    if run.filter_winograd:
        return found.step.images_per_sec
    from tf_cnn_benchmarks.speed_model import step_time
    return step_time.compute_from_gpu_model(gpu, run.dtype, ops, run.batch_size,
                                            xla=run.xla).step.images_per_sec


#: The issue's bound on any one row's |error|.
ROW_TARGET = 0.35


def summary(rows: list[dict], key: str = 'error') -> dict:
    """{'overall': {...}, 'per_gpu': {gpu: {...}}}, each {'rows', 'median', 'max',
    'beyond_35'} of |key| (beyond_35: rows whose |key| exceeds ROW_TARGET). Suspect rows count
    like every other."""
    def stats(errors):
        return {'rows': len(errors), 'median': round(statistics.median(errors), 4),
                'max': round(max(errors), 4),
                'beyond_35': sum(1 for e in errors if e > ROW_TARGET)}
    per_gpu = {}
    for row in rows:
        per_gpu.setdefault(row['gpu'], []).append(abs(row[key]))
    return {'overall': stats([abs(r[key]) for r in rows]),
            'per_gpu': {gpu: stats(errors) for gpu, errors in per_gpu.items()}}


def comparison_rows() -> list[dict]:
    """Every published run's row (predictions only: fast, no graph build of the step)."""
    return [predict(run) for run in published_gpu_runs.RUNS]


def memory_fits(rows: list[dict]) -> None:
    """Adds 'memory_estimate' and 'fits' to each row: the dry run's memory check (the step
    built as the run builds it, Grappler's peak against 90% of the GPU's memory)."""
    from tf_cnn_benchmarks import benchmark_cnn, make_params
    from tf_cnn_benchmarks.hardware import gpu_specs
    from tf_cnn_benchmarks.preflight import dry_run, memory_estimate
    cache = {}
    for row in rows:
        key = (row['model'], row['batch_size'], row['dtype'])
        if key not in cache:
            p = make_params(model=row['model'], batch_size=row['batch_size'], device='gpu',
                            num_gpus=1, gpu_model=row['gpu'], variable_update='replicated',
                            dry_run=True,
                            use_fp16=row['dtype'] == 'float16')
            built = dry_run.build(benchmark_cnn.BenchmarkCNN(p, gpus=1))
            gpu = gpu_specs.lookup(row['gpu'])
            peaks = memory_estimate.estimate_peaks(built.graph, built.fetches, gpu=gpu)
            fits = dry_run.device_fits(peaks, gpu)
            cache[key] = max(v[0] for d, v in fits.items() if memory_estimate.is_gpu(d))
        usable = memory_estimate.device_memory('/GPU:0', gpu_specs.lookup(row['gpu']))
        row['memory_estimate'] = cache[key]
        row['memory_usable'] = usable
        row['fits'] = cache[key] <= usable


def _pct(x: float) -> str:
    return '%+.0f%%' % (100 * x)


#: The mark of a row predicted with the algorithms of the run's TensorFlow 1.1, not 2.21's.
TF11_MARK = ' (TF 1.1)'


def tf11_notes(rows: list[dict]) -> list[str]:
    """The note under the table on the rows predicted as TensorFlow 1.1 ran, each with the
    command whose figure differs and that figure (the JSON's `dry_run_predicted`)."""
    old = [r for r in rows if not r.get('filter_winograd', True)]
    if not old:
        return []
    out = ['Rows marked "%s": predicted as the published run\'s TensorFlow 1.1 ran, without '
           'the filter gradient\'s non-fused Winograd (TensorFlow built with cuDNN 5.1 offered '
           'it only from 1.5 on). No flag of the command reproduces those figures: the dry run '
           'predicts TensorFlow 2.21, which offers it; the data-sheet figure of its `Predicted '
           'step` line, for the same GPU, model and batch:' % TF11_MARK.strip(), '']
    for r in old:
        out.append('* %s %s batch %d: %.0f (here %.0f): `tf_cnn_benchmarks --dry_run '
                   '--gpu_model="%s" --model=%s --batch_size=%d%s%s`' % (
                       r['gpu'], r['model'], r['batch_size'], r['dry_run_predicted'],
                       r['predicted'], r['gpu'], r['model'], r['batch_size'],
                       ' --use_fp16' if r['dtype'] == 'float16' else '',
                       ' --xla_compile' if r['xla'] else ''))
    return out + ['']


def markdown(data: dict) -> str:
    """The rows and the per-GPU and overall errors as tables."""
    rows = [[r['gpu'], r['model'], str(r['batch_size']), r['dtype'], 'XLA' if r['xla'] else '',
             '%.0f' % r['before'], _pct(r['before_error']),
             '%.0f%s' % (r['predicted'], '' if r.get('filter_winograd', True) else TF11_MARK),
             '%.0f%s' % (r['published'], ' (suspect)' if r.get('suspect') else ''),
             _pct(r['error']),
             ('yes' if r['fits'] else 'NO') if 'fits' in r else '?', r['bound_ops'],
             r['source'].split(':')[0].split(',')[0]]
            for r in data['rows']]
    out = ['## One GPU from its data sheet against published runs', '',
           bench_report.markdown_table(
               ['GPU', 'model', 'batch', 'precision', 'XLA', 'before', 'error', 'predicted',
                'published', 'error', 'fits', 'bound by (share of the step)', 'source'],
               'llrllrrrrrlll', rows), '']
    out += tf11_notes(data['rows'])
    suspect = [r for r in data['rows'] if r.get('suspect')]
    if suspect:
        out += ['Suspect published figures (kept in the table and in the statistics):', '']
        out += ['* %s %s batch %d %s, %.0f images/sec: %s' % (
            r['gpu'], r['model'], r['batch_size'], r['dtype'], r['published'], r['suspect'])
            for r in suspect] + ['']
    per = [[gpu, str(s['rows']), '%.0f%%' % (100 * data['before']['per_gpu'][gpu]['median']),
            '%.0f%%' % (100 * data['before']['per_gpu'][gpu]['max']),
            '%.0f%%' % (100 * s['median']), '%.0f%%' % (100 * s['max']),
            str(s.get('beyond_35', ''))]
           for gpu, s in data['after']['per_gpu'].items()]
    o, b = data['after']['overall'], data['before']['overall']
    per.append(['all', str(o['rows']), '%.0f%%' % (100 * b['median']),
                '%.0f%%' % (100 * b['max']), '%.0f%%' % (100 * o['median']),
                '%.0f%%' % (100 * o['max']), str(o.get('beyond_35', ''))])
    out += ['## Absolute errors per GPU (before: the flat 50%-of-peak estimate)', '',
            bench_report.markdown_table(['GPU', 'rows', 'before median', 'before max',
                                         'median', 'max', 'beyond 35%'], 'lrrrrrr', per)]
    return '\n'.join(out)


def validation_data(with_memory: bool = True) -> dict:
    """The comparison as plain data (what this script writes)."""
    rows = comparison_rows()
    if with_memory:
        memory_fits(rows)
    return {'rows': rows, 'after': summary(rows), 'before': summary(rows, 'before_error')}


def main(argv=None) -> int:
    parser = ArgumentParser(prog='bench_gpu_model', description=__doc__.split('\n')[0])
    parser.parse_args(argv)
    start()
    data = validation_data()
    return bench_report.finish(RESULTS, WHAT, data, markdown(data))


if __name__ == '__main__':
    sys.exit(main())
