"""Where a cluster task learns its role and its peers: the host flags, TF_CONFIG or Slurm.

    Params --resolve--> Resolution(params with job_name, task_index, ps_hosts, worker_hosts set;
                                   source; description for the header; environment to set)

`--cluster_resolver` picks the source:

  flags      --job_name, --task_index, --ps_hosts, --worker_hosts (no host flags: a local run);
  tf_config  the TF_CONFIG JSON that Kubeflow's TFJob (and most Kubernetes operators for
             TensorFlow) put in every pod, read by TensorFlow's TFConfigClusterResolver;
  slurm      the variables of the srun step (SLURM_PROCID, SLURM_STEP_NUM_TASKS,
             SLURM_STEP_NODELIST, SLURM_STEP_TASKS_PER_NODE), expanded in Slurm's order by
             slurm_nodes.py (TensorFlow's SlurmClusterResolver sorts the nodes as text:
             node10 before node9);
  auto       (default) the host flags when any is given, else TF_CONFIG when set, else Slurm in
             a step of more than one task, else a local run. When host flags win over a
             TF_CONFIG or Slurm step that is also there, or TF_CONFIG over a Slurm step, one
             warning line says which source was taken, why, and how to choose the other; a
             Slurm step it took whose variables do not fit this host (`SlurmStepError`,
             host_names.py) ends its error with the way to a local run (slurm_nodes.auto_slurm_fix).

A resolved cluster becomes the same Params fields the host flags give, so everything after
(params.validate_params' cluster rules, topology.Cluster, server.TaskServer) is one code path.
Resolution runs before the flags are validated and before any server starts; each problem is one
params.ParamsError line (exit status 2). Only the tf_config source imports TensorFlow (its
resolver class), and only once TF_CONFIG has passed this module's own checks
(`parse_tf_config`: the JSON, its shape, the addresses, the task, the host flags against it), so
a malformed TF_CONFIG is refused at once, as any other usage error; TensorFlow's resolver then
reads it as the cluster. The flags, Slurm and local runs stay TensorFlow-free here.

TF_CONFIG task types: `chief` (or its older name `master`) is worker 0, the chief of this project;
`worker` i is worker i + 1 when there is a chief, else worker i; `ps` i is ps i. `evaluator` is
not a cluster member: it runs `--eval` on the checkpoints the chief writes to the shared
--train_dir, every --eval_interval_secs (EVALUATOR_INTERVAL_SECS when 0) until it is stopped
(SIGTERM: exit status 143). Other types are refused.

Slurm: the first --num_ps ranks are the ps tasks, the rest the workers; the ranks lie in blocks
over the nodes in SLURM_STEP_NODELIST's order (Slurm's block distribution, srun's default), and
the tasks of a node listen on consecutive ports from --slurm_port_base in rank order. GPUs: a
ps hides every GPU (CUDA_VISIBLE_DEVICES=''); the workers of a node split the node's
CUDA_VISIBLE_DEVICES evenly in rank order, unless Slurm already bound each task its own
(SLURM_GPUS_PER_TASK GPUs visible).
`Resolution.environment` holds those variables: set them before TensorFlow initialises its GPUs
(the command does). A task that Slurm placed on another node than the resolver expects
(SLURMD_NODENAME, SLURM_LOCALID) is refused: it would wait for peers that listen elsewhere.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re

from .. import cnn_util
from .. import params as params_lib
from ..params import cluster_rules as flag_rules
from ..runtime import runtime_env
from . import slurm_nodes

#: Seconds between evaluations of a TF_CONFIG evaluator when --eval_interval_secs is 0.
EVALUATOR_INTERVAL_SECS = 60
PS_MODES = ('parameter_server', 'distributed_replicated')
ONE_HOST_MODES = ('parameter_server', 'replicated', 'independent')
#: The variables srun sets in each task of a step that the Slurm source reads.
SLURM_STEP_VARIABLES = ('SLURM_PROCID', 'SLURM_STEP_NUM_TASKS', 'SLURM_STEP_NODELIST',
                        'SLURM_STEP_TASKS_PER_NODE')
_ADDRESS = re.compile(r'^([A-Za-z0-9_.\-]+|\[[0-9a-fA-F:]+\]):(\d{1,5})$')
_TF_CONFIG_SHAPE = ('{"cluster": {"chief": ["host:port"], "worker": [...], "ps": [...]}, '
                    '"task": {"type": "worker", "index": 0}}')

ParamsError = params_lib.ParamsError


class SlurmStepError(ParamsError):
    """The Slurm step's variables are malformed, disagree, or place this task elsewhere (not a
    flag's fault): under --cluster_resolver=auto the line ends with slurm_nodes.auto_slurm_fix."""


@dataclasses.dataclass(frozen=True)
class Resolution:
    """Where this task's cluster came from, and what it is.

    Attributes:
      params: the Params with the cluster fields filled in (job_name, task_index, ps_hosts,
        worker_hosts; an evaluator's: eval=True and no cluster fields) and cluster_resolver the
        source used ('flags', 'tf_config' or 'slurm'; a local run's: 'flags').
      source: the same source name.
      description: the header's text, e.g. 'TF_CONFIG (task worker 0: worker 1 of 2, 1 ps)';
        '' for a local run.
      environment: variables to set before TensorFlow initialises GPUs, {name: value}
        (Slurm: CUDA_VISIBLE_DEVICES); empty otherwise.
      automatic: --cluster_resolver=auto chose the source from the environment (a Slurm step's
        variables, TF_CONFIG), not the user by name: its errors say so
        (slurm_nodes.auto_slurm_fix).
    """

    params: params_lib.Params
    source: str
    description: str = ''
    environment: dict = dataclasses.field(default_factory=dict)
    automatic: bool = False


def host_flags_given(p) -> bool:
    """True when any host flag (--job_name, --task_index, --ps_hosts, --worker_hosts,
    --controller_host) differs from its default."""
    return bool(p.job_name or p.task_index or p.ps_hosts or p.worker_hosts or p.controller_host)


def slurm_step_tasks(environ=None) -> int:
    """Tasks of the Slurm step this process runs in (SLURM_STEP_NUM_TASKS), 0 outside one."""
    environ = os.environ if environ is None else environ
    if 'SLURM_PROCID' not in environ:
        return 0
    try:
        return int(environ.get('SLURM_STEP_NUM_TASKS', '0'))
    except ValueError:
        return 0


def choose_source(p, environ=None) -> str:
    """The source --cluster_resolver names; for 'auto' see the module docstring.

    Returns:
      'flags', 'tf_config' or 'slurm' (a local run is 'flags' without host flags).
    """
    environ = os.environ if environ is None else environ
    if p.cluster_resolver != 'auto':
        return p.cluster_resolver
    if host_flags_given(p):
        return 'flags'
    if environ.get('TF_CONFIG', '').strip():
        return 'tf_config'
    if slurm_step_tasks(environ) > 1:
        return 'slurm'
    return 'flags'


def default_num_ps(variable_update: str) -> int:
    """--num_ps when unset: 1 for the modes that keep variables on a ps, else 0."""
    return 1 if variable_update in PS_MODES else 0


def resolve(p) -> Resolution:
    """Resolves this task's cluster (see the module docstring); reads os.environ.

    Raises:
      params.ParamsError: a value outside its flag's choices or bounds (as validate_params says
        it), a malformed TF_CONFIG, a Slurm step whose variables are malformed,
        a task type this project does not run, host flags that contradict the source, or a
        --variable_update the cluster cannot run (no ps for a ps mode; a ps for
        collective_all_reduce; distributed_all_reduce, whose controller only the host flags
        describe).
    """
    params_lib.check_ranges(p)  # each value against its own spec (choices, lower bounds)
    return resolve_checked(p)


def resolve_checked(p) -> Resolution:
    """`resolve` of Params whose values were checked against their own specs already
    (params.check_ranges: the usage check runs it with the other rules of the params layer,
    before the cluster's resolution).

    Raises:
      params.ParamsError: as `resolve`, but for a value outside its flag's choices or bounds.
    """
    source = choose_source(p)
    if source == 'flags':
        if not host_flags_given(p):  # a local run: no cluster
            return Resolution(p._replace(cluster_resolver=source), source)
        if p.cluster_resolver == 'auto':
            _warn_ignored()
        return _from_flags(p._replace(cluster_resolver=source))
    if source == 'tf_config' and p.cluster_resolver == 'auto':
        _warn_tf_config_over_slurm()
    automatic = p.cluster_resolver == 'auto'
    p = p._replace(cluster_resolver=source)
    with cnn_util.captured_fd_stderr(os.environ.get('TF_CPP_MIN_LOG_LEVEL') == '3'):
        if source == 'tf_config':
            return dataclasses.replace(_from_tf_config(p), automatic=automatic)
        try:
            return dataclasses.replace(_from_slurm(p), automatic=automatic)
        except SlurmStepError as e:
            if not automatic:
                raise
            raise SlurmStepError('%s; %s.' % (str(e).rstrip('.'),
                                                  slurm_nodes.auto_slurm_fix())) from None


def apply_environment(resolution: Resolution, environ=None) -> None:
    """Sets `resolution.environment` (before TensorFlow initialises its GPUs)."""
    (os.environ if environ is None else environ).update(resolution.environment)


def describe_role(job: str, index: int, num_ps: int, num_workers: int) -> str:
    """'worker 1 of 2, 1 ps' / 'ps 0 of 1, 2 workers' / 'controller, 2 workers'."""
    if job == 'worker':
        return 'worker %d of %d, %d ps' % (index, num_workers, num_ps)
    if job == 'ps':
        return 'ps %d of %d, %d worker%s' % (index, num_ps, num_workers,
                                             '' if num_workers == 1 else 's')
    return '%s, %d worker%s' % (job, num_workers, '' if num_workers == 1 else 's')


# --- The host flags.
def _warn_ignored() -> None:
    """auto chose the host flags (given) although TF_CONFIG or a Slurm step is there too: say
    so."""
    other = ('TF_CONFIG' if os.environ.get('TF_CONFIG', '').strip() else
             'the Slurm step' if slurm_step_tasks() > 1 else None)
    if other is not None:
        cnn_util.warn('the host flags define the cluster and %s is ignored (drop the host flags '
                      'to use it, or give --cluster_resolver=flags to silence this)' % other)


def _warn_tf_config_over_slurm() -> None:
    """auto chose TF_CONFIG although this task runs in a Slurm step too: say which it took,
    why, and how to choose the other."""
    tasks = slurm_step_tasks()
    if tasks > 1:
        cnn_util.warn('TF_CONFIG and a Slurm step (%d tasks) both describe a cluster; '
                      '--cluster_resolver=auto took TF_CONFIG, which it prefers to Slurm (give '
                      '--cluster_resolver=slurm to use the Slurm step, or '
                      '--cluster_resolver=tf_config to silence this)' % tasks)


def _from_flags(p) -> Resolution:
    if p.num_ps is not None and p.job_name and p.num_ps != len(p.ps_hosts):
        raise ParamsError('--num_ps=%d contradicts --ps_hosts, which lists %d ps task(s); drop '
                          '--num_ps (it counts the ps tasks of a Slurm step).'
                          % (p.num_ps, len(p.ps_hosts)))
    if not p.job_name:
        return Resolution(p, 'flags')
    role = describe_role(p.job_name, p.task_index, len(p.ps_hosts), len(p.worker_hosts))
    return Resolution(p, 'flags', 'flags (%s)' % role)


# --- Checks shared by TF_CONFIG and Slurm.
def _check_addresses(where: str, job: str, addresses) -> None:
    for address in addresses:
        match = _ADDRESS.match(address) if isinstance(address, str) else None
        if not match or not 1 <= int(match.group(2)) <= 65535:
            raise ParamsError('%s: the %s addresses must be host:port with a port in 1..65535. '
                              'Received: %r' % (where, job, address))


def _contradiction(p, job: str, index: int, ps, workers) -> str | None:
    """The first host flag that differs from the resolved cluster, as '--flag=value', or None."""
    compare_task = bool(p.job_name) or p.task_index != 0
    if p.job_name and p.job_name != job:
        return '--job_name=%s' % p.job_name
    if compare_task and p.task_index != index:
        return '--task_index=%d' % p.task_index
    if p.ps_hosts and list(p.ps_hosts) != list(ps):
        return '--ps_hosts=%s' % ','.join(p.ps_hosts)
    if p.worker_hosts and list(p.worker_hosts) != list(workers):
        return '--worker_hosts=%s' % ','.join(p.worker_hosts)
    if p.controller_host:
        return '--controller_host=%s' % p.controller_host
    return None


def _cluster_params(p, name: str, job: str, index: int, ps: list, workers: list, origin: str):
    """The Params of a resolved cluster task, after the checks against the flags.

    Args:
      name: 'TF_CONFIG' or 'Slurm'; origin: how the source names this task, e.g. 'task worker 0'.
    """
    flag = _contradiction(p, job, index, ps, workers)
    if flag:
        raise ParamsError(
            '%s contradicts %s: its %s is %s %d here (ps %s; workers %s); drop the host flags '
            '(%s gives them) or give --cluster_resolver=flags to ignore %s.' % (
                flag, name, origin, job, index, ','.join(ps) or 'none', ','.join(workers), name,
                name))
    if p.num_ps is not None and p.num_ps != len(ps):
        raise ParamsError('--num_ps=%d contradicts %s, which has %d ps task(s); drop --num_ps.'
                          % (p.num_ps, name, len(ps)))
    mode = p.variable_update
    if mode == 'distributed_all_reduce':
        raise ParamsError('--variable_update=distributed_all_reduce needs a controller task, which '
                          '%s does not describe; use collective_all_reduce, or the host flags '
                          'with --controller_host.' % name)
    if mode in PS_MODES and not ps:
        raise ParamsError('--variable_update=%s needs a ps task, and %s has none; add ps tasks '
                          '(%s) or use --variable_update=collective_all_reduce.' % (
                              mode, name, 'a PS replica' if name == 'TF_CONFIG' else '--num_ps'))
    if mode == 'collective_all_reduce' and ps:  # no task would ever use them: a wait
        raise ParamsError('--variable_update=collective_all_reduce has no ps task (its workers '
                          'all-reduce among themselves), and %s has %d (%s); %s, or use '
                          'parameter_server or distributed_replicated.' % (
                              name, len(ps), ','.join(ps), 'drop the PS replica'
                              if name == 'TF_CONFIG' else 'drop --num_ps'))
    return p._replace(job_name=job, task_index=index, ps_hosts=list(ps),
                      worker_hosts=list(workers))


def _evaluator_params(p, name: str):
    """An evaluator's Params: --eval of --train_dir's checkpoints, outside the cluster."""
    if p.job_name or p.ps_hosts or p.worker_hosts or p.controller_host:
        raise ParamsError('%s makes this task the evaluator, which is not a cluster member; drop '
                          'the host flags.' % name)
    if not p.train_dir and not p.checkpoint_path:
        raise ParamsError('the %s evaluator evaluates the checkpoints of --train_dir, shared with '
                          'the chief; give --train_dir.' % name)
    mode = p.variable_update if p.variable_update in ONE_HOST_MODES else 'parameter_server'
    return p._replace(eval=True, job_name='', task_index=0, variable_update=mode,
                      all_reduce_spec=p.all_reduce_spec if mode == 'replicated' else None,
                      eval_interval_secs=p.eval_interval_secs or EVALUATOR_INTERVAL_SECS)


# --- TF_CONFIG.
def _tf_config_error(problem: str) -> ParamsError:
    return ParamsError('TF_CONFIG %s; it must look like %s.' % (problem, _TF_CONFIG_SHAPE))


def _json_kind(value) -> str:
    """'a list', 'a string', ... for a JSON value in a message."""
    kinds = ((dict, 'an object'), (list, 'a list'), (str, 'a string'), (bool, 'true or false'),
             (int, 'a number'), (float, 'a number'))
    return next((name for kind, name in kinds if isinstance(value, kind)), 'null')


def parse_tf_config(text: str) -> tuple[dict, str | None, int | None]:
    """TF_CONFIG's JSON read and checked without TensorFlow: (cluster {job: [address]}, task
    type, task index), as TensorFlow's TFConfigClusterResolver reads them (no "cluster": {};
    no "task" or no "type"/"index" in it: None). Run before TensorFlow loads, so that a
    malformed TF_CONFIG is refused at once (`read_tf_config` then loads the resolver).

    Raises:
      params.ParamsError: not JSON, not a JSON object, a "cluster" that is not an object of
        lists of host:port addresses (one listed by index included), a "task" that is not an
        object, a task type that is not a string, an index that is not a whole number >= 0
        (a string of digits, "index": "0", is read as a number: TensorFlow's resolver reads
        the index with int()).
    """
    try:
        config = json.loads(text)
    except ValueError as e:
        raise _tf_config_error('is not valid JSON (%s)' % e) from None
    if not isinstance(config, dict):
        raise _tf_config_error('is %s, not a JSON object' % _json_kind(config))
    cluster = config.get('cluster', {})
    if not isinstance(cluster, dict):
        raise _tf_config_error('has a "cluster" that is %s; give an object of job names to '
                               'lists of addresses' % _json_kind(cluster))
    for job, tasks in cluster.items():
        if isinstance(tasks, dict):
            raise _tf_config_error('lists the %s tasks by index (%s); give a list of addresses'
                                   % (job, json.dumps(tasks)))
        if not isinstance(tasks, list):
            raise _tf_config_error('gives the %s tasks as %s; give a list of addresses'
                                   % (job, _json_kind(tasks)))
        _check_addresses('TF_CONFIG', job, tasks)
    task = config.get('task', {})
    if not isinstance(task, dict):
        raise _tf_config_error('has a "task" that is %s, not an object' % _json_kind(task))
    task_type, index = task.get('type'), task.get('index')
    if task_type is not None and not isinstance(task_type, str):
        raise _tf_config_error('has a task "type" that is %s (%s); give a string such as '
                               '"worker"' % (_json_kind(task_type), json.dumps(task_type)))
    if index is not None:
        whole = (isinstance(index, int) and not isinstance(index, bool)
                 or isinstance(index, str) and index.isdigit())
        if not whole or int(index) < 0:
            raise _tf_config_error('has a task "index" of %s; give a whole number >= 0'
                                   % json.dumps(index))
        index = int(index)
    return cluster, task_type, index


def _tf_config_text() -> str:
    text = os.environ.get('TF_CONFIG', '')
    if not text.strip():
        raise ParamsError('--cluster_resolver=tf_config, but TF_CONFIG is not set; set it (a '
                          'TFJob does) or use the host flags.')
    return text


def read_tf_config() -> tuple[dict, str | None, int | None]:
    """TF_CONFIG through TensorFlow's TFConfigClusterResolver: (cluster {job: [address]},
    task type, task index), after `parse_tf_config`'s checks (before TensorFlow loads).

    Raises:
      params.ParamsError: TF_CONFIG is unset, not JSON, or its cluster is not a dict of lists
        of addresses (`parse_tf_config`), or TensorFlow's resolver refuses it.
    """
    parse_tf_config(_tf_config_text())  # every problem of the JSON before TensorFlow loads
    runtime_env.import_tensorflow()  # quietly, its environment set, without Keras
    from tensorflow.python.distribute.cluster_resolver import tfconfig_cluster_resolver

    resolver = tfconfig_cluster_resolver.TFConfigClusterResolver()
    try:
        spec = resolver.cluster_spec().as_dict()
        task_type, task_id = resolver.task_type, resolver.task_id
    except (ValueError, TypeError, KeyError, AttributeError) as e:
        raise _tf_config_error('is malformed (%s)' % e) from None
    for job, tasks in spec.items():
        if not isinstance(tasks, list):
            raise _tf_config_error('lists the %s tasks by index (%r); give a list of addresses'
                                   % (job, tasks))
        _check_addresses('TF_CONFIG', job, tasks)
    return spec, task_type, task_id


def tf_config_cluster(spec: dict, task_type: str | None, task_id: int | None):
    """Maps TF_CONFIG's cluster and task onto this project's jobs (module docstring).

    Returns:
      (job, index, ps addresses, worker addresses); job 'evaluator' for the evaluator.

    Raises:
      params.ParamsError: no task, an unknown task type or job, an index out of range, two
        chiefs.
    """
    if task_type is None or task_id is None:
        raise _tf_config_error('has no "task" with a "type" and an "index"')
    known = ('chief', 'master', 'worker', 'ps', 'evaluator')
    for job in spec:
        if job not in known:
            raise _tf_config_error('has a %r job, which tf_cnn_benchmarks does not run (it runs '
                                   'chief, worker, ps and evaluator)' % job)
    if task_type not in known:
        raise ParamsError('TF_CONFIG task type %r is not run by tf_cnn_benchmarks: use chief, '
                          'worker, ps or evaluator (TFJob replicas Chief, Worker, PS, Evaluator).'
                          % task_type)
    if task_type == 'evaluator':
        return 'evaluator', task_id, [], []
    chiefs = spec.get('chief', []) + spec.get('master', [])
    if len(chiefs) > 1:
        raise _tf_config_error('has %d chief/master tasks (%s); give one' % (
            len(chiefs), ','.join(chiefs)))
    tasks = spec.get(task_type, [])
    if not 0 <= task_id < len(tasks):
        raise ParamsError('TF_CONFIG task %s %d is not in its cluster, which has %d %s task(s); '
                          'fix "task" or "cluster".' % (task_type, task_id, len(tasks), task_type))
    workers = chiefs + spec.get('worker', [])
    seen: dict[str, str] = {}  # address key -> 'worker 0 (localhost:5000)'
    for job in ('chief', 'master', 'worker', 'ps'):
        for index, address in enumerate(spec.get(job, [])):
            key = flag_rules.address_key(str(address))
            task = '%s %d (%s)' % (job, index, address)
            if key in seen:
                raise ParamsError('TF_CONFIG gives %s and %s the same address; every task needs '
                                  'its own host:port.' % (seen[key], task))
            seen[key] = task
    if task_type == 'ps':
        return 'ps', task_id, spec.get('ps', []), workers
    if task_type == 'worker':
        return 'worker', task_id + len(chiefs), spec.get('ps', []), workers
    return 'worker', 0, spec.get('ps', []), workers


def _from_tf_config(p) -> Resolution:
    """TF_CONFIG's task: every check runs on this module's own reading first (no TensorFlow
    loaded: a usage error comes at once), then on TensorFlow's resolver's, which is used."""
    _tf_config_task(p, *parse_tf_config(_tf_config_text()))
    return _tf_config_task(p, *read_tf_config())


def _tf_config_task(p, spec: dict, task_type: str | None, task_id: int | None) -> Resolution:
    job, index, ps, workers = tf_config_cluster(spec, task_type, task_id)
    origin = 'task %s %d' % (task_type, task_id)
    if job == 'evaluator':
        q = _evaluator_params(p, 'TF_CONFIG')
        return Resolution(q, 'tf_config', 'TF_CONFIG (%s: --eval of %s every %d s, outside the '
                          'cluster)' % (origin, q.train_dir or q.checkpoint_path,
                                        q.eval_interval_secs))
    q = _cluster_params(p, 'TF_CONFIG', job, index, ps, workers, origin)
    role = describe_role(job, index, len(ps), len(workers))
    return Resolution(q, 'tf_config', 'TF_CONFIG (%s: %s)' % (origin, role))


# --- Slurm.
def _slurm_int(name: str) -> int:
    value = os.environ.get(name)
    try:
        return int(value)
    except (TypeError, ValueError):
        raise SlurmStepError('--cluster_resolver=slurm needs %s (a number) in the environment; '
                          'received %r. Start the tasks with srun inside an allocation.'
                          % (name, value)) from None


def read_slurm_step(p) -> tuple[dict, str, int]:
    """The step's cluster in Slurm's block order: ({job: [address]}, job, index). The first
    --num_ps ranks are ps tasks, the rest workers; the nodes are taken in the order of
    SLURM_STEP_NODELIST (slurm_nodes.py), not sorted as text.

    Raises:
      params.ParamsError: not in a Slurm step (naming the SLURM_STEP_VARIABLES missing), too
        few tasks for the ps, a port base out of
        range, or Slurm variables that are malformed or disagree with each other.
    """
    missing = [n for n in SLURM_STEP_VARIABLES if not os.environ.get(n, '').strip()]
    if missing:
        raise ParamsError('--cluster_resolver=slurm, but %s %s not set: this process is no task '
                          'of a Slurm step; start the tasks with srun inside an allocation '
                          '(sbatch, salloc), or drop --cluster_resolver=slurm.'
                          % (', '.join(missing), 'is' if len(missing) == 1 else 'are'))
    rank, tasks = _slurm_int('SLURM_PROCID'), _slurm_int('SLURM_STEP_NUM_TASKS')
    num_ps = default_num_ps(p.variable_update) if p.num_ps is None else p.num_ps
    if num_ps >= tasks:
        raise ParamsError('the Slurm step has %d task(s) and --num_ps=%d leaves no worker; start '
                          'more tasks (srun --ntasks) or lower --num_ps.' % (tasks, num_ps))
    if not 1 <= p.slurm_port_base <= 65535 - tasks:
        raise ParamsError('--slurm_port_base must leave room for %d ports below 65536. Received: '
                          'slurm_port_base=%d' % (tasks, p.slurm_port_base))
    nodelist = os.environ['SLURM_STEP_NODELIST'].strip()
    per_node = os.environ['SLURM_STEP_TASKS_PER_NODE'].strip()
    try:
        addresses = slurm_nodes.block_addresses(nodelist, per_node, p.slurm_port_base)
    except slurm_nodes.HostlistError as e:
        fix = slurm_nodes.malformed_fix(nodelist, per_node,
                                        os.environ.get('SLURM_JOB_NODELIST', ''))
        raise SlurmStepError('Slurm: SLURM_STEP_NODELIST=%s, SLURM_STEP_TASKS_PER_NODE=%s: %s '
                          '(rank %d of %d); %s'
                          % (nodelist, per_node, e, rank, tasks, fix)) from None
    if len(addresses) != tasks or not 0 <= rank < tasks:
        raise SlurmStepError('Slurm: SLURM_STEP_TASKS_PER_NODE=%s makes %d task(s), '
                          'SLURM_STEP_NUM_TASKS says %d and SLURM_PROCID %d; run inside one '
                          'srun step' % (per_node, len(addresses), tasks, rank))
    spec = {'worker': addresses[num_ps:]}
    if num_ps:
        spec['ps'] = addresses[:num_ps]
    job, index = ('ps', rank) if rank < num_ps else ('worker', rank - num_ps)
    _check_addresses('Slurm', job, spec[job])
    _check_placement(spec[job][index], spec, rank)
    return spec, job, index


def _host(address: str) -> str:
    return address.rpartition(':')[0]


def _check_placement(address: str, spec: dict, rank: int) -> None:
    """Refuses a task that Slurm started elsewhere than the resolver's address says."""
    node = os.environ.get('SLURMD_NODENAME')
    if node and node != _host(address):
        raise SlurmStepError(
            'Slurm started rank %d on node %s, but block distribution over SLURM_STEP_NODELIST '
            'gives it %s; start the step with srun --distribution=block (the default).'
            % (rank, node, address))
    local = os.environ.get('SLURM_LOCALID')
    on_node = sorted((a for tasks in spec.values() for a in tasks if _host(a) == _host(address)),
                     key=lambda a: int(a.rpartition(':')[2]))
    if local is not None and local.isdigit() and on_node.index(address) != int(local):
        raise SlurmStepError(
            'Slurm rank %d is task %s of its node (SLURM_LOCALID), but block distribution gives '
            'it %s, the port of task %d; start the step with srun --distribution=block (the '
            'default).' % (rank, local, address, on_node.index(address)))


def slurm_gpu_environment(spec: dict, job: str, index: int, environ=None) -> tuple[dict, str]:
    """This task's CUDA_VISIBLE_DEVICES under Slurm (see the module docstring).

    Returns:
      ({'CUDA_VISIBLE_DEVICES': ids} or {} to keep it, a note for the header such as
      'GPUs 2,3', 'no GPU' or '').

    Raises:
      params.ParamsError: the node has fewer GPUs than worker tasks.
    """
    environ = os.environ if environ is None else environ
    if job == 'ps':
        return {'CUDA_VISIBLE_DEVICES': ''}, 'no GPU'
    visible = environ.get('CUDA_VISIBLE_DEVICES', '').strip()
    if not visible:
        return {}, ''
    ids = [g.strip() for g in visible.split(',') if g.strip()]
    per_task = environ.get('SLURM_GPUS_PER_TASK', '')
    if per_task.isdigit() and int(per_task) == len(ids):  # Slurm bound this task its GPUs
        return {}, 'GPUs %s' % ','.join(ids)
    address = spec[job][index]
    node_workers = [a for a in spec['worker'] if _host(a) == _host(address)]
    share = len(ids) // len(node_workers)
    if not share:
        raise ParamsError(
            'Slurm gave node %s %d GPU(s) (CUDA_VISIBLE_DEVICES=%s) for %d worker tasks; '
            'request more GPUs or start fewer tasks per node.'
            % (_host(address), len(ids), visible, len(node_workers)))
    k = node_workers.index(address)
    mine = ids[k * share:(k + 1) * share]
    return {'CUDA_VISIBLE_DEVICES': ','.join(mine)}, 'GPUs %s' % ','.join(mine)


def _from_slurm(p) -> Resolution:
    spec, job, index = read_slurm_step(p)
    ps, workers = spec.get('ps', []), spec['worker']
    rank, tasks = int(os.environ['SLURM_PROCID']), int(os.environ['SLURM_STEP_NUM_TASKS'])
    q = _cluster_params(p, 'Slurm', job, index, ps, workers, 'rank %d' % rank)
    environment, gpus = slurm_gpu_environment(spec, job, index)
    extra = '; '.join(x for x in (spec[job][index], gpus) if x)
    description = 'Slurm (rank %d of %d: %s; %s)' % (
        rank, tasks, describe_role(job, index, len(ps), len(workers)), extra)
    return Resolution(q, 'slurm', description, environment)
