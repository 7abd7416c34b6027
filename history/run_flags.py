"""The flags that define a recorded run as its user gave them, for `tf_cnn_results show`: a
line that, pasted after `tf_cnn_benchmarks`, runs the same configuration again.

A run records the flags it was given at another value than the default (the result's
'given_flags', the row's given_flags_json: lifecycle/results_log.py). A row recorded before
they were kept has only its resolved flags (params_json), in which the run filled in what it
worked out: `derive` takes back what it can tell was worked out (the values the rules of
params.resolve_params and run_plan.make_plan give: --num_batches from --num_epochs, the
device, layout and warm-up of the device, the model's batch and image size) and every flag at
its default. Either way the cluster task's own flags (params/cluster_rules.py TASK_FLAGS: its
role, its peers' ports, where they came from) are left out: `cluster_task` says which task of
which cluster the run was.

Plain dicts in, plain data out; no TensorFlow.
"""

from __future__ import annotations

import json
from typing import NamedTuple

from .. import params as params_lib
from ..metrics import configuration
from ..models import model_catalog
from ..params import cluster_rules

# params.resolve_params: --num_batches when neither it nor --num_epochs is given; the
# warm-up steps of a device when --num_warmup_batches is not.
DEFAULT_NUM_BATCHES = 100
DEFAULT_WARMUP = {'gpu': 10, 'cpu': 5}


class RunFlags(NamedTuple):
    """A recorded run's flags.

    Attributes:
      flags: {flag: value} as the user gave them, without the cluster task's flags.
      derived: True when they were derived from the resolved flags (a row recorded before
        the given ones were kept), False when recorded.
    """
    flags: dict
    derived: bool


def given_values(p) -> dict:
    """{name: value} of the flags of Params `p` that differ from their defaults
    (params.is_set), lists as lists: the run as its user gave it, when `p` is the Params as
    parsed (before the cluster's fields and the machine's defaults are filled in; the
    results' 'given_flags', preflight/settled_run.py)."""
    return {name: (list(value) if isinstance(value, (list, tuple)) else value)
            for name, value in p._asdict().items()
            if name in params_lib.SPEC_BY_NAME and params_lib.is_set(p, name)}


def _loads(text) -> dict | None:
    try:
        value = json.loads(text) if text else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _at_default(name: str, value) -> bool:
    default = params_lib.SPEC_BY_NAME[name].default
    if isinstance(default, (list, tuple)):
        return list(value or []) == list(default)
    return value == default


def derive(params: dict, environment: dict, data: str | None = None) -> dict:
    """The flags a run was most likely given, from its resolved ones (module docstring).

    Args:
      params: the row's resolved flags, {name: value}.
      environment: the row's environment (its 'gpus': [] none, None unknown).
      data: the row's dataset ('synthetic', 'imagenet', 'cifar10'), for the model's sizes.

    Returns:
      {flag: value} of today's flags only, at other values than their defaults, without the
      values the run worked out.
    """
    out = {name: value for name, value in params.items()
           if name in params_lib.SPEC_BY_NAME and value is not None
           and not _at_default(name, value)}
    device = params.get('device')
    gpus = environment.get('gpus')
    if gpus is not None and device == ('gpu' if gpus else 'cpu'):
        out.pop('device', None)
    if params.get('data_format') == ('NCHW' if device == 'gpu' else 'NHWC'):
        out.pop('data_format', None)
    if params.get('num_warmup_batches') == DEFAULT_WARMUP.get(device):
        out.pop('num_warmup_batches', None)
    if params.get('num_epochs') is not None or params.get('num_batches') == DEFAULT_NUM_BATCHES:
        out.pop('num_batches', None)
    row = model_catalog.row(str(params.get('model')), data or 'imagenet')
    if row is not None and params.get('batch_size') == row.batch_size:
        out.pop('batch_size', None)
    if row is not None and params.get('image_size') == row.image_size:
        out.pop('image_size', None)
    return out


def run_flags(row: dict) -> RunFlags:
    """A database row's flags as given (recorded, else `derive`d), without the cluster
    task's flags."""
    given = _loads(row.get('given_flags_json'))
    derived = given is None
    if derived:
        given = derive(_loads(row.get('params_json')) or {},
                       _loads(row.get('environment_json')) or {}, row.get('data'))
    flags = {name: value for name, value in given.items()
             if name in params_lib.SPEC_BY_NAME and name not in cluster_rules.TASK_FLAGS}
    if flags.get('model') in configuration.RENAMED_MODELS and row.get('model'):
        flags['model'] = row['model']  # the network it ran, by today's name
    return RunFlags(flags, derived)


def cluster_task(row: dict) -> str | None:
    """Which task of which cluster a row's run was, with the command that runs such a
    cluster on one host: "worker 0 of a cluster of 2 workers and 1 ps: ..."; None for a
    run on one host."""
    params = _loads(row.get('params_json')) or {}
    job = params.get('job_name')
    if not job:
        return None
    workers = len(params.get('worker_hosts') or []) or row.get('num_workers') or 1
    ps = len(params.get('ps_hosts') or [])
    parts = ['%d worker%s' % (workers, '' if workers == 1 else 's')]
    if ps:
        parts.append('%d ps' % ps)
    if params.get('controller_host'):
        parts.append('a controller')
    launcher = 'tf_cnn_cluster --num_workers=%d%s -- FLAGS' % (
        workers, ' --num_ps=%d' % ps if ps else '')
    return ('%s %d of a cluster of %s: the flags are each task\'s, without the cluster\'s '
            'roles and hosts; `%s` runs such a cluster on this host'
            % (job, params.get('task_index') or 0, ' and '.join(parts), launcher))
