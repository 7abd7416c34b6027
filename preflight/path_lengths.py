"""The longest paths a run will write, against the system's limits (before TensorFlow loads).

A --train_dir whose folder can be made may still be too deep for the files written into it:
the kernel refuses a path of PATH_MAX bytes or more (4096 with its terminating NUL on Linux)
and a name longer than the file system's NAME_MAX (255 on ext4, xfs, btrfs), and TensorFlow
writes each checkpoint file under a longer temporary name first. Such a run used to train and
then lose everything at its save; `check_path_lengths` refuses it up front instead, naming
the longest path, its length and the limit.

What each folder and file flag makes (the longest form of each; measured under strace with
TensorFlow 2.21 and read from the code that writes the rest):

  --train_dir (training)   model.ckpt-<S>.data-00000-of-00001.tempstate<20 digits>: the
                           checkpoint's data file while it is written (S: the global step of the
                           last save, `last_step_bound`; the suffix: a random uint64);
                           checkpoint.tmp<32 hex>: its state file being replaced
  --train_dir, --eval_dir  events.out.tfevents.<10 digits>.<host name>: TensorBoard summaries
  (with summaries)         (--summary_verbosity >= 1); <train_dir>/eval/ the same for the
                           evaluations of a run without --eval_dir
  held folders             tf_cnn_benchmarks.hold (runtime/dir_hold.py)
  --benchmark_log_dir      tf_cnn_benchmarks_<model>_<YYYYmmddTHHMMSS.ffffff>Z.json
  file flags               <file>.tmp while written (--graph_file: .tmp<32 hex>, TensorFlow's
                           atomic write; --plot_file: the file itself);
                           --partitioned_graph_file_prefix: each device's name inserted
                           before the extension (lifecycle/profiling.py)

The paths the flags give are measured too, before anything is looked up
(`check_given_paths`): the kernel answers ENAMETOOLONG to a path over PATH_MAX, so an
existing folder that deep reads as missing (os.path.exists is False) and was reported as
"does not exist".

Paths are measured as given (relative ones as the kernel receives them); remote paths
(runtime/file_systems.py) have limits of their own and are not measured here.
"""

from __future__ import annotations

import os
import re
import socket

from .. import params as params_lib
from .. import run_plan
from ..params import Params, ParamsError
from ..runtime import dir_hold, file_systems

TEMP_DIGITS = '0' * 20  # TensorFlow's temporary names end in a random uint64: up to 20 digits
HEX32 = 'f' * 32
INT64_MAX = 2 ** 63 - 1
_STEP = re.compile(r'-(\d+)"?\s*$')


def restored_step_bound(p: Params) -> int:
    """The largest global step a training run may restore: the steps named in --train_dir's
    `checkpoint` state file (read as text: 'model_checkpoint_path: "model.ckpt-300"'), and
    the step at the end of --checkpoint_path's name; 0 when neither names one."""
    steps = [0]
    if p.checkpoint_path:
        found = _STEP.search(p.checkpoint_path)
        steps.append(int(found.group(1)) if found else 0)
    state = os.path.join(p.train_dir or '', 'checkpoint')
    if p.train_dir and not file_systems.is_remote(p.train_dir) and os.path.isfile(state):
        try:
            with open(state, encoding='utf-8', errors='replace') as f:
                for line in f:
                    found = _STEP.search(line)
                    if found:
                        steps.append(int(found.group(1)))
        except OSError:
            pass
    return max(steps)


def last_step_bound(p: Params) -> int:
    """A global step no save of this run passes: the restored step (`restored_step_bound`),
    then the warm-up and timed steps (--num_warmup_batches, at most 10 by default;
    --num_batches, 100 by default) and the traced step after them, times the workers (an
    asynchronous cluster's global step counts every worker's updates). With --num_epochs the
    steps depend on the data counted later: the int64 bound (19 digits)."""
    if p.num_epochs is not None:
        return INT64_MAX
    warmup = 10 if p.num_warmup_batches is None else p.num_warmup_batches
    steps = warmup + (p.num_batches or 100) + 1
    return restored_step_bound(p) + steps * max(1, len(p.worker_hosts))


def _events_name(host: str) -> str:
    return 'events.out.tfevents.%s.%s' % ('0' * 10, host)


def _partition_suffix(p: Params) -> str:
    """The longest device name lifecycle/profiling.py inserts into a partition graph's file
    name."""
    job = p.job_name or 'localhost'
    last = max(p.num_gpus - 1, 0)
    return '_job_%s_replica_0_task_%d_device_GPU_%d' % (job, p.task_index, last)


def written_paths(p: Params, host: str | None = None) -> list[tuple[str, str]]:
    """(flag, path) of the longest file of each kind the run writes on a local disk (module
    docstring); [] for runs that write nothing (--dry_run, --plan_scaling)."""
    if p.dry_run or p.plan_scaling or p.list_models:
        return []
    host = host if host is not None else socket.gethostname()
    events = _events_name(host)
    out = [('--eval_dir' if p.eval_dir and folder == p.eval_dir else '--train_dir',
            os.path.join(folder, dir_hold.HOLD_FILE)) for _, folder in dir_hold.held_dirs(p)]
    if p.train_dir and not p.eval and not p.forward_only:
        step = last_step_bound(p)
        out.append(('--train_dir', os.path.join(p.train_dir, 'model.ckpt-%d.data-00000-of-00001'
                                                '.tempstate%s' % (step, TEMP_DIGITS))))
        out.append(('--train_dir', os.path.join(p.train_dir, 'checkpoint.tmp' + HEX32)))
    if p.train_dir and p.summary_verbosity >= 1:
        out.append(('--train_dir', os.path.join(p.train_dir, events)))
        if not p.eval_dir and run_plan.evaluates(p):
            out.append(('--train_dir', os.path.join(p.train_dir, 'eval', events)))
    if p.eval_dir:
        out.append(('--eval_dir', os.path.join(p.eval_dir, events)))
    if p.benchmark_log_dir:
        out.append(('--benchmark_log_dir', os.path.join(
            p.benchmark_log_dir, 'tf_cnn_benchmarks_%s_%sZ.json' % (p.model, '0' * 22))))
    for name in ('trace_file', 'tfprof_file'):
        if getattr(p, name):
            out.append(('--' + name, getattr(p, name) + '.tmp'))
    if p.plot_file:
        out.append(('--plot_file', p.plot_file))
    if p.graph_file:
        out.append(('--graph_file', p.graph_file + '.tmp' + HEX32))
    if p.partitioned_graph_file_prefix:
        folder, name = os.path.split(p.partitioned_graph_file_prefix)
        base, dot, ext = name.rpartition('.')
        base, ext = (base, dot + ext) if dot else (name, '')
        out.append(('--partitioned_graph_file_prefix', os.path.join(
            folder, base + _partition_suffix(p) + ext + '.tmp')))
    return [(flag, path) for flag, path in out if not file_systems.is_remote(path)]


def _limits(path: str) -> tuple[int, int]:
    """(NAME_MAX, PATH_MAX) of the file system of the nearest existing folder of `path`."""
    folder = os.path.dirname(os.path.abspath(path))
    while not os.path.isdir(folder):
        folder = os.path.dirname(folder)
    limits = []
    for name, default in (('PC_NAME_MAX', 255), ('PC_PATH_MAX', 4096)):
        try:
            limits.append(os.pathconf(folder, name) or default)
        except (OSError, ValueError):
            limits.append(default)
    return limits[0], limits[1]


def length_problem(path: str, name_max: int, path_max: int) -> str | None:
    """Why `path` cannot be made under these limits (bytes, PATH_MAX counting the terminating
    NUL as the kernel does), or None."""
    encoded = os.fsencode(path)
    if len(encoded) >= path_max:
        return ('a path of %d bytes, over this system\'s limit of %d (PATH_MAX %d with the '
                'terminating NUL)' % (len(encoded), path_max - 1, path_max))
    for part in encoded.split(b'/'):
        if len(part) > name_max:
            return ('a name of %d bytes (%s), over this file system\'s limit of %d per name '
                    '(NAME_MAX)' % (len(part), os.fsdecode(part)[:60] + '...', name_max))
    return None


def path_problem(path: str) -> str | None:
    """`length_problem` of `path` under the limits of the file system it would be on, or None
    (a remote path: None)."""
    if file_systems.is_remote(path):
        return None
    return length_problem(path, *_limits(path))


def check_path_lengths(p: Params, host: str | None = None) -> None:
    """Refuses a run whose longest file of some kind would exceed the system's limits.

    Raises:
      ParamsError: naming the flag, the file the run would write, its length and the limit.
    """
    for flag, path in written_paths(p, host):
        problem = length_problem(path, *_limits(path))
        if problem:
            value = getattr(p, flag[2:])
            name = os.path.relpath(path, value) if path.startswith(value + os.sep) else path
            raise ParamsError('%s=%s cannot be used: the run would write %s there, %s; '
                              'choose a shorter %s' % (flag, value, name, problem, flag))


def check_given_paths(p: Params, names: tuple = params_lib.PATH_FLAGS + ('results_db',)
                      ) -> None:
    """Refuses a path flag of `names` (default params.PATH_FLAGS and --results_db) whose own
    local path exceeds the system's limits (`length_problem`), before any check looks it up:
    over PATH_MAX even an existing file reads as missing.

    Raises:
      ParamsError: naming the flag, the path's length (or its over-long name) and the limit.
    """
    for name in names:
        path = getattr(p, name)
        if not isinstance(path, str) or not path or file_systems.is_remote(path):
            continue
        problem = length_problem(path, *_limits(path))
        if problem:
            raise ParamsError('--%s=%s cannot be used: %s; choose a shorter --%s'
                              % (name, path, problem, name))
