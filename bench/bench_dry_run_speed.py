"""The 8-GPU resnet50 dry run's wall and CPU time, before and after a change, side by side.

    git archive BASE | tar -x -C /tmp/before      # the code before, as a plain folder
    python -m bench.bench_dry_run_speed --before_dir=/tmp/before --repeats=1

Each repeat runs the dry run of `COMMAND` once with the code of --before_dir and once with this
checkout, one after the other (alternating, so that a change of the host's load falls on both),
each a fresh process (TensorFlow's import included). Per run: wall seconds, the process's CPU
seconds (user + system of the waited-for child), the 1-minute load average before and after,
the other processes' CPU over the run (metrics/host_load.py: the host's busy time less this
process's and its children's), the longest time without an output line and the lines. CPU
seconds are the figure a loaded host disturbs least; wall seconds are what a person waits.
Writes results/<date>-cpu-tf<X.Y>-dry-run-speed.json and .md.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import threading
import time

from . import bench_report
from .preamble import REPO, RESULTS, ArgumentParser, start

COMMAND = ['--dry_run', '--gpu_model=v100', '--num_gpus=8', '--model=resnet50',
           '--variable_update=replicated', '--use_nccl']


def _run(source_dir: str) -> dict:
    """One dry run of COMMAND with the code in `source_dir` (its tf_cnn_benchmarks.py)."""
    from tf_cnn_benchmarks.metrics import host_load
    reader = host_load.ProcReader()
    before = reader.sample()
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, os.path.join(source_dir, 'tf_cnn_benchmarks.py')]
                            + COMMAND, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, cwd=source_dir)
    lines, stamps = [], [t0]
    reader_thread = threading.Thread(target=lambda: [
        (lines.append(line.rstrip('\n')), stamps.append(time.monotonic()))
        for line in proc.stdout])
    reader_thread.start()
    status = proc.wait()
    reader_thread.join()
    wall = time.monotonic() - t0
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    after = reader.sample()
    load = host_load.measure(before, after, 2, len(reader.cpus), reader.ticks_per_sec)
    stamps.append(t0 + wall)
    gaps = [b - a for a, b in zip(stamps, stamps[1:])]
    return {'status': status, 'wall_secs': wall,
            'cpu_secs': (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime),
            'load_before': load['load_average_before'], 'load_after': load['load_average_after'],
            'others_cores': load['others_cores'], 'longest_silence_secs': max(gaps),
            'lines': [x for x in lines if x.startswith(('Dry run', 'Graph', 'Peak memory',
                                                        'Searching', 'Largest', 'Predicted'))]}


def markdown(data: dict) -> str:
    rows = [[r['code'], str(r['repeat']), '%.1f' % r['wall_secs'], '%.1f' % r['cpu_secs'],
             '%.1f' % r['longest_silence_secs'], '%.1f-%.1f' % (r['load_before'],
                                                                r['load_after']),
             '%.2f' % (r['others_cores'] or 0), str(r['status'])] for r in data['runs']]
    out = ['`tf_cnn_benchmarks %s`' % ' '.join(COMMAND), '',
           bench_report.markdown_table(['code', 'repeat', 'wall s', 'CPU s',
                                        'longest silence s', 'load average',
                                        'others\' cores', 'status'], 'llrrrrrr', rows), '',
           'after / before: wall %.2f, CPU %.2f (medians).' % (data['wall_ratio'],
                                                               data['cpu_ratio'])]
    for r in data['runs']:
        out += ['', '%s, repeat %d, its progress lines:' % (r['code'], r['repeat']), '']
        out += ['    ' + x for x in r['lines']]
    return '\n'.join(out)


def main(argv=None) -> int:
    parser = ArgumentParser(prog='bench_dry_run_speed', description=__doc__.split('\n')[0])
    parser.add_argument('--before_dir', required=True, help='the code before, a plain folder')
    parser.add_argument('--repeats', type=int, default=1)
    args = parser.parse_args(argv)
    start()
    runs = []
    for repeat in range(args.repeats):
        for code, folder in (('before', args.before_dir), ('after', REPO)):
            found = _run(folder)
            found.update(code=code, repeat=repeat)
            runs.append(found)
            print('%s %d: %.1f s wall, %.1f s CPU' % (code, repeat, found['wall_secs'],
                                                      found['cpu_secs']), flush=True)

    def median(code, key):
        values = sorted(r[key] for r in runs if r['code'] == code)
        return values[len(values) // 2]
    data = {'command': COMMAND, 'runs': runs,
            'wall_ratio': median('after', 'wall_secs') / median('before', 'wall_secs'),
            'cpu_ratio': median('after', 'cpu_secs') / median('before', 'cpu_secs')}
    status = 0 if all(r['status'] == 0 for r in runs) else 1
    return bench_report.finish(RESULTS, 'dry_run_speed', data, markdown(data), status)


if __name__ == '__main__':
    sys.exit(main())
