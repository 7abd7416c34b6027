"""The local cluster launcher's checks before any task starts (tools/launch_cluster.py): its own
flags' values, --host (and the free ports picked on it), --log_dir, every task's flags as the
command would check them before TensorFlow loads, and the tasks against the host's available
memory (tools/cluster_memory.py).

Each refusal is a `LaunchError`: one `error:` line and the exit status the launcher returns
(2 for bad launcher or task flags, as the command's usage errors; 1 for a --data_dir that
holds no dataset, as `tf_cnn_benchmarks` exits on it). Nothing here starts a task; only
`check_log_dir` (the last check) makes a folder.
"""

from __future__ import annotations

import os
import socket
import tempfile

from tf_cnn_benchmarks.params import gate_tolerance

LOOPBACK = '127.0.0.1'
# Host names that portpicker's free ports are on (it picks on the loopback interface).
_PORTPICKER_HOSTS = (LOOPBACK, 'localhost')


class LaunchError(Exception):
    """A launch refused before any task starts (its message: one line naming the problem and
    the fix).

    Attributes:
      status: the launcher's exit status: 2 (usage: bad launcher flags, task flags the
        command refuses, tasks that cannot fit the memory), 1 (the tasks' data: a --data_dir
        without a dataset, as `tf_cnn_benchmarks` exits).
    """

    def __init__(self, message: str, status: int = 2):
        super().__init__(message)
        self.status = status


def check_launcher_values(opts) -> None:
    """The launcher's own flag values argparse does not check.

    Args:
      opts: the launcher's parsed flags (timeout_secs, kill_grace_secs in seconds; python).

    Raises:
      LaunchError: a number of seconds that is negative or no finite number (nan, inf), or
        a --python that is not an executable file.
    """
    for name in ('timeout_secs', 'kill_grace_secs'):
        value = getattr(opts, name)
        problem = gate_tolerance.not_finite(
            value, 'seconds, 0: no limit' if name == 'timeout_secs' else 'seconds',
            example='600' if name == 'timeout_secs' else '5')
        if problem:  # inf met the rule below: a launch that never timed out
            raise LaunchError('--%s=%r: %s' % (name, value, problem))
        if not value >= 0:
            raise LaunchError('--%s must be >= 0. Received: %s=%g' % (name, name, value))
    if not (os.path.isfile(opts.python) and os.access(opts.python, os.X_OK)):
        raise LaunchError('--python %s is not an executable file; give a Python interpreter '
                          'path' % opts.python)


def _bind_any_port(host: str) -> int:
    """Binds a TCP socket to port 0 of `host`'s first address; returns the port it got.

    Raises:
      socket.gaierror: `host` does not resolve.
      OSError: the address is not this machine's (EADDRNOTAVAIL), or cannot be bound.
    """
    family, kind, proto, _, address = socket.getaddrinfo(
        host, 0, type=socket.SOCK_STREAM)[0]
    with socket.socket(family, kind, proto) as sock:
        sock.bind(address)
        return sock.getsockname()[1]


def local_addresses(limit: int = 4) -> list[str]:
    """Up to `limit` addresses of this machine a task can listen on: loopback (LOOPBACK)
    first, then those its host name resolves to (for the advice of `check_host`)."""
    found = [LOOPBACK]
    try:
        infos = socket.getaddrinfo(socket.gethostname(), None, type=socket.SOCK_STREAM)
    except OSError:
        infos = []
    for info in infos:
        address = info[4][0]
        if address in found or len(found) >= limit:
            continue
        try:
            _bind_any_port(address)
        except OSError:
            continue
        found.append(address)
    return found


def check_host(host: str) -> None:
    """Refuses a --host the tasks cannot listen on: the launcher starts every task on this
    machine, so --host must name one of its addresses.

    Raises:
      LaunchError: an empty --host, one that does not resolve, or an address that is not
        this machine's; the message names this machine's addresses to give instead.
    """
    others = local_addresses()[1:]
    where = ('give an address of this machine: %s (loopback, the default)%s; for tasks on '
             'several machines, start each on its own machine (docs/clusters.md)'
             % (LOOPBACK, ''.join(', ' + address for address in others)))
    if not host.strip():
        raise LaunchError('--host is empty; %s' % where)
    try:
        _bind_any_port(host)
    except socket.gaierror as e:
        raise LaunchError('--host %s does not resolve (%s); %s' % (
            host, e.strerror or e, where)) from None
    except OSError as e:
        raise LaunchError('--host %s is not an address of this machine (%s); %s' % (
            host, e.strerror or e, where)) from None


def free_port(host: str) -> int:
    """A TCP port free on `host` right now (portpicker's on loopback when installed).

    Raises:
      LaunchError: as `check_host`, for a host no port can be bound on.
    """
    try:
        import portpicker
    except ImportError:
        portpicker = None
    if portpicker is not None and host in _PORTPICKER_HOSTS:
        return portpicker.pick_unused_port()
    try:
        return _bind_any_port(host)
    except OSError:
        check_host(host)  # says what is wrong with it
        raise


def check_log_dir(log_dir: str | None, roles: list[str]) -> None:
    """Makes --log_dir (with its parents) and checks that each task's <role>.log can be
    written there, before any task starts.

    Args:
      log_dir: the folder, or None (no logs).
      roles: the tasks' roles ('ps0', 'worker1', 'controller').

    Raises:
      LaunchError: the path is a file, the folder cannot be made or written (or, relative,
        has no working folder: cnn_util.working_folder_problem), or a task's log path is a
        folder.
    """
    if not log_dir:
        return
    from tf_cnn_benchmarks import cnn_util  # absolute: see check_task_flags
    gone = cnn_util.working_folder_problem([('--log_dir', log_dir)])
    if gone:
        raise LaunchError(gone)
    if os.path.exists(log_dir) and not os.path.isdir(log_dir):
        raise LaunchError('--log_dir %s is not a directory; choose another path' % log_dir)
    try:
        os.makedirs(log_dir, exist_ok=True)
    except OSError as e:
        raise LaunchError('--log_dir %s cannot be made (%s); choose another path' % (
            log_dir, e.strerror or e)) from None
    if not os.access(log_dir, os.W_OK | os.X_OK):
        raise LaunchError('--log_dir %s cannot be written (permission denied); choose another '
                          'path' % log_dir)
    try:  # for real: root passes os.access on read-only and special file systems (/sys)
        tempfile.TemporaryFile(dir=log_dir).close()
    except OSError as e:
        raise LaunchError('--log_dir %s cannot be written (cannot create a file there: %s); '
                          'choose another path' % (log_dir, e.strerror or e)) from None
    for role in roles:
        path = os.path.join(log_dir, role + '.log')
        if os.path.isdir(path):
            raise LaunchError('--log_dir %s: %s is a folder, and task %s writes its log there; '
                              'move it or choose another path' % (log_dir, path, role))
        if os.path.exists(path):
            try:
                open(path, 'a').close()  # appends nothing: the launcher rewrites it
            except OSError as e:
                raise LaunchError('--log_dir %s: task %s\'s log %s cannot be written (%s); move '
                                  'it or choose another path' % (log_dir, role, path,
                                                                 e.strerror or e)) from None


def check_task_flags(tasks: list[dict]) -> dict:
    """Checks each task's flags as its command would before TensorFlow loads (flag parsing,
    every flag rule, output paths, --model, a local --data_dir: preflight/usage.check_usage
    with the cluster's fields as the launcher set them), so that a bad flag is one error line
    of the launcher instead of one per task after they all started.

    Args:
      tasks: tools/launch_plan.plan_tasks entries (their 'job' and 'args').

    Returns:
      {job: the Params of its first task}.

    Raises:
      LaunchError: the command's error line: a usage error (status 2), or a --data_dir that
        is missing, empty, a file, holds no dataset's files or not the shards of the subset
        the tasks read (`_check_subset_files`; cnn_util.DataError, status 1).
    """
    # Absolute: `python -m tools.launch_cluster` in a checkout makes `tools` a top-level
    # package (as for the sweep, tools/sweep/cli.py).
    from tf_cnn_benchmarks import cnn_util, flag_parsing, params
    from tf_cnn_benchmarks.models import model_catalog
    from tf_cnn_benchmarks.preflight import usage
    checked = {}
    for task in tasks:
        if task['job'] in checked:  # the tasks of one job differ in --task_index only
            continue
        try:
            p = flag_parsing.parse_flags(['tf_cnn_benchmarks'] + task['args'], quiet=True)
            usage.check_usage(p, resolve=False)
            if task['job'] != 'ps':  # the ps reads no data
                _check_subset_files(p)
        except (params.ParamsError, model_catalog.UnknownModelError) as e:
            raise LaunchError(str(e)) from None
        except cnn_util.BenchmarkError as e:  # the data: the command exits 1 on it
            raise LaunchError(str(e), status=1) from None
        checked[task['job']] = p
    return checked


def _check_subset_files(p) -> None:
    """The shards (or CIFAR-10 batch files) of the subset a worker reads in a local
    --data_dir, listed and numbered as the run lists them (dataset_info.Dataset.subset_files,
    `default_subset`; no file is read): a folder of validation shards alone for a training
    run fails here with the command's line, not in every task after they all started.

    Raises:
      cnn_util.DataError: no file of the subset, or shards that do not number 0..N-1.
    """
    from tf_cnn_benchmarks.input_data import dataset_info
    from tf_cnn_benchmarks.runtime import file_systems
    if not p.data_dir or p.data_name == 'synthetic' or file_systems.is_remote(p.data_dir):
        return
    dataset_info.get_dataset(p).subset_files(dataset_info.default_subset(p))


def check_memory(tasks: list[dict], job_params: dict, available: int | None = None) -> None:
    """Refuses tasks that cannot fit this host's available memory together
    (tools/cluster_memory.py), before any starts.

    Args:
      tasks: the plan_tasks entries; job_params: check_task_flags' result;
      available: the host's available bytes (default: MemAvailable).

    Raises:
      LaunchError: the estimate, the host's memory and the largest --num_workers that fits.
    """
    from tf_cnn_benchmarks.tools import cluster_memory
    counts: dict[str, int] = {}
    for task in tasks:
        counts[task['job']] = counts.get(task['job'], 0) + 1
    try:
        cluster_memory.check_fits(counts, job_params['worker'], available)
    except cluster_memory.MemoryProblem as e:
        raise LaunchError(str(e)) from None
