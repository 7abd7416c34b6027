"""Whether the tasks `tf_cnn_cluster` would start fit this host's memory, before any starts.

Every task is a TensorFlow process of its own on this machine. Each maps TensorFlow's shared
libraries (file pages the kernel keeps once for all of them) and allocates its own memory
(anonymous pages: the runtime, its thread pools, the graph, the variables it holds, the step's
tensors). 64 workers of the trivial model asked for more than a 23 GiB host had, and the kernel's
out-of-memory killer ended a ps task minutes into the start-up.

The estimate, bytes, from figures measured on this project's runs (below):

    SHARED_BYTES (once)
    + each task:   TASK_BYTES
    + each worker: WORKER_COPIES x the model's float32 variables + its input batch (float32
                   images: batch x towers x size x size x 3 x 4 bytes)
    + the ps tasks together: PS_COPIES x the variables + PS_COPIES_PER_WORKER x the variables
                   for each worker (the gradients and transfers each worker sends them)

against /proc/meminfo's MemAvailable (hardware/host_memory.py). The model's variables and
image size are the registry's plain-data figures (models/model_catalog.py). The step's other
tensors are left out (their estimate, preflight/memory_estimate.py, needs TensorFlow and the
built graph: seconds before each launch; each task checks its own step before it runs) and
each factor is the smallest measured, so a cluster this check lets through may still not fit,
but one it refuses cannot.

Measured on an Intel Xeon (AMX-BF16) host, 2 cores, TensorFlow 2.21, load average 2-10, on
2026-12-06: `tf_cnn_cluster --num_workers=N -- --model=trivial --batch_size=2
--num_batches=20` with N = 2, 4, 8 (ImageNet-sized synthetic images: 227 px, 4,263,877
variables = 16.3 MiB) and N = 2, 4 with --data_name=cifar10 (32 px, 52,235 variables = 0.2
MiB), sampling each task's /proc/PID/status (the launcher's `started ... (pid N)` lines name
the pids) every 0.2 s; peak RssAnon (the task's own memory) and RssFile (shared libraries):

    cifar10, 2 and 4 workers: every task 236-249 MiB; RssFile 358-369 MiB each
    imagenet, workers (the chief the largest): 335-455 MiB (N=2), 336-390 (N=4), 337-420 (N=8)
    imagenet, ps0: 405 MiB (N=2), 516 (N=4), 740 (N=8): 56 MiB more per worker

TASK_BYTES is the smallest task (236 MiB); WORKER_COPIES 5 (the smallest ImageNet worker, 335
MiB, is 90 MiB = 5.5 x 16.3 MiB above the smallest CIFAR-10 one); PS_COPIES_PER_WORKER 3 (56
MiB a worker = 3.4 x 16.3 MiB) and PS_COPIES 3 (ps0 at N=2 is 405 = 236 + 3.5 x 16.3 + 2 x 56
MiB); SHARED_BYTES the libraries once (360 MiB). The trivial ImageNet model at 64 workers and
one ps: 23.6 GiB by this estimate, about 26.5 GiB by the measured slopes.
"""

from __future__ import annotations

from tf_cnn_benchmarks.hardware import host_memory
from tf_cnn_benchmarks.models import model_catalog

#: A TensorFlow task's own memory (RssAnon) at its peak with almost no variables, bytes
#: (module docstring).
TASK_BYTES = 236 << 20
#: TensorFlow's shared libraries as resident file pages (RssFile), bytes, counted once.
SHARED_BYTES = 360 << 20
#: A worker's memory beyond TASK_BYTES in copies of the model's float32 variables.
WORKER_COPIES = 5
#: The ps tasks' memory beyond TASK_BYTES in copies of the variables, and per worker.
PS_COPIES = 3
PS_COPIES_PER_WORKER = 3


class MemoryProblem(Exception):
    """The tasks do not fit this host's available memory (message: one line with the fix)."""


def _model_figures(p) -> tuple[int, int]:
    """(float32 bytes of the model's variables, float32 bytes of one worker's input batch) of
    Params `p`, from the model table; (0, 0) for a model or dataset the table does not know."""
    dataset = p.data_name if p.data_name in model_catalog.DATASETS else 'imagenet'
    row = model_catalog.row(p.model, dataset)
    if row is None:
        return 0, 0
    size = p.image_size or row.image_size
    batch = p.batch_size or row.batch_size
    return row.parameters * 4, batch * max(1, p.num_gpus) * size * size * 3 * 4


def estimate_bytes(job_counts: dict, worker_params) -> tuple[int, int, int]:
    """The cluster's estimated memory (module docstring).

    Args:
      job_counts: {'ps': n, 'worker': n, 'controller': n} tasks per job.
      worker_params: the workers' Params (model, data_name, image_size, batch_size, num_gpus).

    Returns:
      (total bytes, bytes one more worker adds, bytes of everything but the workers).
    """
    variables, batch = _model_figures(worker_params)
    has_ps = job_counts.get('ps', 0) > 0
    worker = TASK_BYTES + WORKER_COPIES * variables + batch + (
        PS_COPIES_PER_WORKER * variables if has_ps else 0)
    others = (SHARED_BYTES + TASK_BYTES * (job_counts.get('ps', 0) + job_counts.get(
        'controller', 0)) + (PS_COPIES * variables if has_ps else 0))
    return others + worker * job_counts.get('worker', 0), worker, others


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
        '%d tasks need at least about %.1f GiB of memory (%d MiB or more a worker: every task '
        'is a TensorFlow process), more than the %.1f GiB this host has available (MemAvailable); '
        '%s' % (tasks, total / (1 << 30), worker >> 20, available / (1 << 30), fix))
