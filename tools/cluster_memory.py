"""Whether the tasks `tf_cnn_cluster` would start fit this host's memory, before any starts.

Every task is a TensorFlow process of its own on this machine. Each maps TensorFlow's shared
libraries (file pages the kernel keeps once for all of them) and allocates its own memory
(anonymous pages: the runtime, its thread pools, the graph, the variables it holds, the step's
tensors). 64 workers of the trivial model asked for more than a 23 GiB host had, and the kernel's
out-of-memory killer ended a ps task minutes into the start-up; 20 resnet50 workers at batch 8
were let through by an estimate without the step's activations, and two were killed in the
warm-up.

The estimate, bytes, from figures measured on this project's runs (below):

    SHARED_BYTES (once)
    + each task:   TASK_BYTES
    + each worker: WORKER_EXTRA_BYTES + WORKER_COPIES x the model's float32 variables (the
                   variables, their gradients, the optimizer's work) + its input batch (float32
                   images: batch x towers x size x size x 3 x 4 bytes) + ACTIVATION_FACTOR x the
                   forward pass's float32 outputs per image (ACTIVATION_KIB) x the images
    + the chief:   CHIEF_EXTRA_BYTES
    + the ps tasks together: PS_COPIES x the variables, and for each worker PS_BYTES_PER_WORKER
                   + PS_COPIES_PER_WORKER x the variables (the gradients each worker sends)

against /proc/meminfo's MemAvailable (hardware/host_memory.py). The model's variables and
image size are the registry's plain-data figures (models/model_catalog.py); its forward outputs
per image are ACTIVATION_KIB (generated from speed_model/op_profile.py's ops at the model's
default image size: `python -m tf_cnn_benchmarks.tools.cluster_memory` prints it, `--write`
rewrites it here, `--check` exits 1 naming the rows that are stale; tests/test_cluster_memory.py
checks it), scaled by the square of --image_size over the default. A model of the catalog
without its row is refused (`MemoryProblem`, naming the command), never estimated without
its activations.
Each factor is the largest measured (below), so the --num_workers the refusal advises fits the
measured models (resnet50 is overestimated by about a third: its step keeps 0.60 of its forward
outputs, inception3's 0.86); float16 activations are counted as float32.

Measured on an Intel Xeon (AMX-BF16) host, 2 cores, TensorFlow 2.21, sampling each task's
/proc/PID/status (the launcher's `started ... (pid N)` lines name the pids) every 0.2 s; peak
RssAnon (the task's own memory) and RssFile (shared libraries). On 2026-12-06, load average
2-10: `tf_cnn_cluster --num_workers=N -- --model=trivial --batch_size=2 --num_batches=20` with
N = 2, 4, 8 (ImageNet-sized synthetic images: 227 px, 4,263,877 variables = 16.3 MiB) and
N = 2, 4 with --data_name=cifar10 (32 px, 52,235 variables = 0.2 MiB):

    cifar10, 2 and 4 workers: every task 236-249 MiB; RssFile 358-369 MiB each
    imagenet, workers (the chief the largest): 335-455 MiB (N=2), 336-390 (N=4), 337-420 (N=8)
    imagenet, ps0: 405 MiB (N=2), 516 (N=4), 740 (N=8): 56 MiB more per worker

On 2026-12-07, load average 2-7: `tf_cnn_cluster --num_workers=N -- --model=M --batch_size=B
--num_batches=10 --num_warmup_batches=2` (parameter_server, one ps), RssAnon of the other
worker / the chief / ps0, MiB:

    resnet50    (97.5 MiB variables, 137.9 MiB forward outputs an image)
                N=2 B=2: 960 / 1032 / 788;  N=2 B=8: 1460 / 1554 / 766;  N=3 B=2: 879 / 1019 / 860
    mobilenet_v1 (16.1 MiB, 57.7 MiB)    N=2 B=2: 506 / 554 / 366;   N=2 B=8: 745 / 791 / 386
    inception3  (90.9 MiB, 122.4 MiB)    N=2 B=1: 962 / 1081 / 788;  N=2 B=4: 1276 / 1361 / 705

Per image, a worker grows by 0.60 (resnet50), 0.69 (mobilenet_v1), 0.86 (inception3) of the
forward outputs: ACTIVATION_FACTOR 0.9. At batch 0 the other worker is TASK_BYTES + 5.7 to 6.1
copies of the variables (WORKER_COPIES 6) + up to 93 MiB (mobilenet_v1; inception3 75, resnet50
and trivial none: WORKER_EXTRA_BYTES 100 MiB); the chief is 48 to 120 MiB above the other worker
(CHIEF_EXTRA_BYTES 120 MiB). ps0 grows by 56 MiB a worker for the trivial model (3.4 copies)
and 72 MiB for resnet50 (0.74 copies): PS_BYTES_PER_WORKER 60 MiB + PS_COPIES_PER_WORKER 1;
PS_COPIES 3 (ps0 is at most TASK_BYTES + 3 copies + 2 x (60 MiB + 1 copy) at N=2).
TASK_BYTES is the smallest task (236 MiB); SHARED_BYTES the libraries once (360 MiB).
resnet50 at batch 8 by this estimate: 2.03 GiB a worker with its ps share (measured 1.43 to
1.52 GiB and 72 MiB of ps0's), 5.0 GiB for N=2 (measured 4.0 GiB with the libraries); the
trivial ImageNet model at 64 workers and one ps: 32.7 GiB.
"""

from __future__ import annotations

import os
import sys

from tf_cnn_benchmarks import cnn_util
from tf_cnn_benchmarks.hardware import host_memory
from tf_cnn_benchmarks.models import model_catalog

from . import command_parser

COMMAND = 'python -m tf_cnn_benchmarks.tools.cluster_memory'

#: A TensorFlow task's own memory (RssAnon) at its peak with almost no variables, bytes
#: (module docstring).
TASK_BYTES = 236 << 20
#: TensorFlow's shared libraries as resident file pages (RssFile), bytes, counted once.
SHARED_BYTES = 360 << 20
#: A worker's memory beyond TASK_BYTES: bytes that do not grow with the model's variables or
#: the batch, copies of the model's float32 variables, and the fraction of its forward float32
#: outputs a step keeps per image.
WORKER_EXTRA_BYTES = 100 << 20
WORKER_COPIES = 6
ACTIVATION_FACTOR = 0.9
#: The chief worker's memory beyond another worker's, bytes.
CHIEF_EXTRA_BYTES = 120 << 20
#: The ps tasks' memory beyond TASK_BYTES in copies of the variables; per worker, bytes and
#: copies of the variables.
PS_COPIES = 3
PS_BYTES_PER_WORKER = 60 << 20
PS_COPIES_PER_WORKER = 1

#: KiB of float32 outputs of a model's forward ops per image at its default image size
#: (speed_model/op_profile.py's ops; generated: module docstring), by (model, dataset).
ACTIVATION_KIB = {
    ('alexnet', 'cifar10'): 1175,
    ('alexnet', 'imagenet'): 6386,
    ('densenet100_k12', 'cifar10'): 169537,
    ('densenet100_k24', 'cifar10'): 330678,
    ('densenet121', 'imagenet'): 191193,
    ('densenet40_k12', 'cifar10'): 28144,
    ('googlenet', 'imagenet'): 48182,
    ('inception3', 'imagenet'): 125354,
    ('inception4', 'imagenet'): 223458,
    ('lenet', 'imagenet'): 492,
    ('mobilenet', 'imagenet'): 76882,
    ('mobilenet_v1', 'imagenet'): 59106,
    ('mobilenet_v2', 'imagenet'): 76882,
    ('overfeat', 'imagenet'): 10250,
    ('resnet101', 'imagenet'): 214472,
    ('resnet101_v1.5', 'imagenet'): 223740,
    ('resnet101_v2', 'imagenet'): 213156,
    ('resnet110', 'cifar10'): 14490,
    ('resnet110_v2', 'cifar10'): 14490,
    ('resnet152', 'imagenet'): 305024,
    ('resnet152_v1.5', 'imagenet'): 314292,
    ('resnet152_v2', 'imagenet'): 303708,
    ('resnet20', 'cifar10'): 2730,
    ('resnet20_v2', 'cifar10'): 2730,
    ('resnet32', 'cifar10'): 4298,
    ('resnet32_v2', 'cifar10'): 4298,
    ('resnet44', 'cifar10'): 5866,
    ('resnet44_v2', 'cifar10'): 5866,
    ('resnet50', 'imagenet'): 141168,
    ('resnet50_v1.5', 'imagenet'): 150436,
    ('resnet50_v2', 'imagenet'): 139852,
    ('resnet56', 'cifar10'): 7434,
    ('resnet56_v2', 'cifar10'): 7434,
    ('trivial', 'cifar10'): 49,
    ('trivial', 'imagenet'): 56,
    ('vgg11', 'imagenet'): 93106,
    ('vgg16', 'imagenet'): 164842,
    ('vgg19', 'imagenet'): 180130,
}


def activation_table() -> dict:
    """ACTIVATION_KIB measured from the registered models (loads TensorFlow; seconds): the sum
    of every forward op's output elements per image x 4 bytes, rounded up to KiB."""
    from tf_cnn_benchmarks.speed_model import op_profile
    table = {}
    for row in model_catalog.ROWS:
        profile = op_profile.from_model(row[0], row[1])
        table[(row[0], row[1])] = -(-sum(op.out_elems for op in profile.ops) * 4 // 1024)
    return table


class MemoryProblem(Exception):
    """The tasks do not fit this host's available memory (message: one line with the fix)."""


def _model_figures(p) -> tuple[int, int, int]:
    """(float32 bytes of the model's variables, float32 bytes of one worker's input batch,
    bytes of the forward outputs a worker's step keeps: ACTIVATION_FACTOR x ACTIVATION_KIB x
    the images of its towers, scaled by (image size / default size)^2) of Params `p`, from the
    model tables; zeros for a model or dataset they do not know.

    Raises:
      MemoryProblem: a model of model_catalog.ROWS without its ACTIVATION_KIB row (a table
        not regenerated after a model was added), naming the command that regenerates it.
    """
    dataset = p.data_name if p.data_name in model_catalog.DATASETS else 'imagenet'
    row = model_catalog.row(p.model, dataset)
    if row is None or row.parameters is None:
        return 0, 0, 0
    if (row.name, row.dataset) not in ACTIVATION_KIB:
        raise MemoryProblem(
            'the memory check has no activation figure for --model=%s on %s: '
            'tools/cluster_memory.py ACTIVATION_KIB is stale; regenerate it: %s --write'
            % (row.name, row.dataset, COMMAND))
    size = p.image_size or row.image_size
    images = (p.batch_size or row.batch_size) * max(1, p.num_gpus)
    per_image = ACTIVATION_KIB[(row.name, row.dataset)] * 1024 * (
        size * size / (row.image_size * row.image_size))
    return (row.parameters * 4, images * size * size * 3 * 4,
            int(ACTIVATION_FACTOR * per_image * images))


def estimate_bytes(job_counts: dict, worker_params) -> tuple[int, int, int]:
    """The cluster's estimated memory (module docstring).

    Args:
      job_counts: {'ps': n, 'worker': n, 'controller': n} tasks per job.
      worker_params: the workers' Params (model, data_name, image_size, batch_size, num_gpus).

    Returns:
      (total bytes, bytes one more worker adds (its ps share included), bytes of everything
      but the workers (the chief's extra included)).
    """
    variables, batch, activations = _model_figures(worker_params)
    has_ps = job_counts.get('ps', 0) > 0
    workers = job_counts.get('worker', 0)
    worker = (TASK_BYTES + WORKER_EXTRA_BYTES + WORKER_COPIES * variables + batch + activations
              + (PS_BYTES_PER_WORKER + PS_COPIES_PER_WORKER * variables if has_ps else 0))
    others = (SHARED_BYTES + TASK_BYTES * (job_counts.get('ps', 0) + job_counts.get(
        'controller', 0)) + (PS_COPIES * variables if has_ps else 0)
        + (CHIEF_EXTRA_BYTES if workers else 0))
    return others + worker * workers, worker, others


def check_fits(job_counts: dict, worker_params, available: int | None = None) -> None:
    """Refuses tasks whose estimate exceeds the host's available memory.

    Args:
      job_counts, worker_params: as `estimate_bytes`.
      available: bytes the host has available (default: MemAvailable; None where unknown:
        nothing is checked).

    Raises:
      MemoryProblem: naming the tasks, their estimate, the host's memory and the largest
        --num_workers that fits.
    """
    if available is None:
        available = host_memory.meminfo_available_bytes()
        if available is None:
            return
    total, worker, others = estimate_bytes(job_counts, worker_params)
    if total <= available:
        return
    tasks = sum(job_counts.values())
    fits = max(0, (available - others) // worker)
    fix = ('give --num_workers=%d at most, or free memory' % fits if fits >= 1 else
           'free memory, or run the tasks on several hosts (docs/clusters.md)')
    raise MemoryProblem(
        '%d tasks need about %.1f GiB of memory (%d MiB a worker: every task '
        'is a TensorFlow process), more than the %.1f GiB this host has available (MemAvailable); '
        '%s' % (tasks, total / (1 << 30), worker >> 20, available / (1 << 30), fix))


class _UsageError(Exception):
    """A bad argument of the generator's command line (message: argparse's, one line)."""


class _Parser(command_parser.CommandParser):
    usage_error = _UsageError


def table_source(table: dict) -> str:
    """ACTIVATION_KIB's lines for a measured `table`, sorted by (model, dataset)."""
    return '\n'.join('    %r: %d,' % item for item in sorted(table.items()))


def stale_keys(table: dict) -> str:
    """What differs between ACTIVATION_KIB and a measured `table`, as a phrase ('missing:
    tinynet/cifar10; changed: ...; not in the catalog: ...'); '' when nothing."""
    def name(key):
        return '%s/%s' % key
    parts = [('missing', set(table) - set(ACTIVATION_KIB)),
             ('changed', {k for k in set(table) & set(ACTIVATION_KIB)
                          if table[k] != ACTIVATION_KIB[k]}),
             ('not in the catalog', set(ACTIVATION_KIB) - set(table))]
    return '; '.join('%s: %s' % (what, ', '.join(name(k) for k in sorted(keys)))
                     for what, keys in parts if keys)


#: The file whose ACTIVATION_KIB `--check` and `--write` compare and rewrite.
SOURCE_PATH = os.path.abspath(__file__)


def main(argv: list[str]) -> int:
    """`python -m tf_cnn_benchmarks.tools.cluster_memory [--check | --write]`: measures
    ACTIVATION_KIB's rows now (loads TensorFlow, its start-up lines kept off stderr, and builds
    every model: seconds) and prints them, rewrites them in this file (`--write`), or exits 1
    with one `error:` line naming the stale rows and the command when they differ from this
    file's (`--check`). --help prints the usage (exit 0); any argument else is one error line
    (exit 2).

    Args:
      argv: the arguments without the program name.

    Returns:
      The exit status.
    """
    parser = _Parser(prog=COMMAND,
                    description='Print the ACTIVATION_KIB table of tools/cluster_memory.py '
                    'measured from the registered models (each model\'s forward outputs per '
                    'image, KiB); loads TensorFlow and builds every model.')
    cnn_util.add_check_and_write(parser, 'ACTIVATION_KIB in tools/cluster_memory.py')
    try:
        args = parser.parse_args(argv)
    except _UsageError as e:
        print('error: %s' % e, file=sys.stderr)
        return 2
    from tf_cnn_benchmarks.runtime import runtime_env
    runtime_env.import_tensorflow()
    table = activation_table()
    body = table_source(table)
    if not (args.check or args.write):
        print(body)
        return 0
    return cnn_util.check_or_write_table(
        SOURCE_PATH, 'tools/cluster_memory.py ACTIVATION_KIB', 'ACTIVATION_KIB = {', '}', body,
        write=args.write, what=stale_keys(table) or 'their order or format', count=len(table),
        command=COMMAND)


if __name__ == '__main__':  # python -m tf_cnn_benchmarks.tools.cluster_memory
    sys.exit(main(sys.argv[1:]))
