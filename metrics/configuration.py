"""What a configuration is: the one rule of the three regression gates.

A configuration is what makes two runs comparable at all (docs/results-database.md, "What is a
configuration"): CONFIG_FIELDS, i.e. model, mode (training, forward-only, evaluation),
precision (fp32, fp16, bf16), batch size per device, devices, workers, --variable_update,
device (cpu, gpu), data (synthetic, imagenet, cifar10) and image size; and where the runs
recorded it, the count of CPUs the run was allowed (CPUS_FIELD: its host load's
`cpus_allowed`, the affinity mask of taskset or a container's cpuset): a run pinned to 1 CPU
and one on every CPU are two configurations of the host, while a record without the count (an
old one) stays comparable with the others without it. The gates hold it fixed:

  tf_cnn_results regressions   a series is the runs of one configuration on one host
  tf_cnn_sweep compare         configurations are matched between the sides; a gate between
                               sweeps of other configurations (--device, the data, the mode,
                               the image size set for every run) is refused
  --baseline                   a baseline of another configuration is refused (exit status 2)

Every other flag (threads, data layout, XLA, ...) and the environment (TensorFlow version,
oneDNN, CPU) may change between the runs compared: each gate names what changed (`changes`:
'--num_intra_threads 0 -> 1', 'tf_version 2.21.0 -> 2.22.0'), never refuses it; a change of
the host's settings is what a regression finder must show. NAMING_FLAGS never count: they
only name or place a run (--label, --results_db, the output folders and files) or set a gate
(--baseline, --fail_on_slower, --include_unclean_runs), and a --config's name (its flags are
in the values it set).

A model name that changed its network is read by the results format of the record that
stored it (`stored_model`): every results JSON and sweep record this code writes says its
format (FORMAT_KEY 'format': RESULTS_FORMAT, 2); one without it is format 1, written before
'mobilenet' took the original's meaning (MobileNet v2), when it was this project's MobileNet
v1: a format-1 record of 'mobilenet' reads as 'mobilenet_v1', so it is never one
configuration with a run of today's. The results database's rows of before (schema 4 and
older: only the code of format 1 wrote them) are migrated the same way (history/store.py). A
run's own configuration is today's name (`of_params`, `of_result`).

No TensorFlow: plain dicts of flag values in, text out (a quota's CPU figure is
hardware/cpu_quota.py's rule).
"""

from __future__ import annotations

from .. import package_info
from ..hardware import cpu_quota

CONFIG_FIELDS = ('model', 'mode', 'precision', 'batch_size', 'num_devices', 'num_workers',
                 'variable_update', 'device', 'data', 'image_size')
ENVIRONMENT_FIELDS = ('tf_version', 'tf_cnn_benchmarks_version', 'python_version', 'platform',
                      'cpu_model', 'cpu_flags', 'cpu_cores', 'gpus', 'onednn', 'hostname')
#: Environment fields a run of older code did not record: compared where both sides have them
#: (a run of 0.2.0 after one that kept no version is no change).
LATER_ENVIRONMENT_FIELDS = ('tf_cnn_benchmarks_version',)
#: The allowed-CPU count's part: not a column of the results database (history/records.py puts
#: it in the configuration key where a run recorded it), compared where both sides have it.
CPUS_FIELD = 'cpus_allowed'
# Flags that say where a run wrote or what it is called, not how it ran, and the gates' own.
NAMING_FLAGS = ('benchmark_log_dir', 'train_dir', 'eval_dir', 'results_db', 'label',
                'plot_file', 'trace_file', 'graph_file', 'tfprof_file',
                'partitioned_graph_file_prefix', 'benchmark_test_id', 'checkpoint_path',
                'config', 'baseline', 'fail_on_slower', 'include_unclean_runs')


#: The results format this code writes: the value of FORMAT_KEY in every results JSON
#: (lifecycle/results_log.py) and sweep record (tools/sweep/results.py). 1 (no key): written
#: before the renames of RENAMED_MODELS; 2: 'mobilenet' is MobileNet v2.
RESULTS_FORMAT = 2
FORMAT_KEY = 'format'
#: Model names whose network changed at format 2: name -> today's name of the network it
#: meant in a format-1 record.
RENAMED_MODELS = {'mobilenet': 'mobilenet_v1'}


def format_of(record: dict) -> int:
    """The results format of a stored results JSON or sweep record: its FORMAT_KEY, 1 when it
    has none (or one that is not a positive whole number)."""
    value = record.get(FORMAT_KEY) if isinstance(record, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 1


def newer_format(record: dict) -> str | None:
    """Why a results JSON or sweep record of a newer results format than RESULTS_FORMAT
    cannot be read as a run ('results format 99, newer than this tf_cnn_benchmarks (0.3.0)
    knows (2): ...', with the fix: upgrade), else None. A format changes what fields mean (the
    model 'mobilenet' did at format 2), so a newer one's are not guessed at."""
    found = format_of(record)
    if found <= RESULTS_FORMAT:
        return None
    return ('results format %d, newer than this tf_cnn_benchmarks (%s) knows (%d): its fields '
            'may mean other things here; upgrade tf_cnn_benchmarks (the version that wrote '
            'it) to read it' % (found, package_info.VERSION, RESULTS_FORMAT))


def stored_model(name, record_format: int) -> str:
    """The model a stored record of `name` ran, by today's names: `name`, except a renamed
    one (RENAMED_MODELS) in a record of format 1, which is its old network's today's name
    ('mobilenet' -> 'mobilenet_v1').

    Args:
      name: the record's model name.
      record_format: the record's results format (`format_of`).
    """
    return RENAMED_MODELS.get(name, name) if record_format < 2 else name


def precision_of(params: dict) -> str:
    """'fp16', 'bf16' or 'fp32' from --use_fp16/--use_bf16 (the sweep's names)."""
    return 'fp16' if params.get('use_fp16') else 'bf16' if params.get('use_bf16') else 'fp32'


def mode_of(params: dict) -> str:
    """'evaluation', 'forward-only' or 'training' (run_plan.run_mode's words)."""
    return ('evaluation' if params.get('eval') else 'forward-only' if params.get('forward_only')
            else 'training')


def data_of(params: dict, plan: dict | None = None) -> str:
    """The dataset: the run plan's name when known, else 'synthetic' without --data_dir, else
    --data_name ('imagenet' when unset)."""
    if plan and plan.get('dataset'):
        return str(plan['dataset'])
    if not params.get('data_dir') or params.get('data_name') == 'synthetic':
        return 'synthetic'
    return params.get('data_name') or 'imagenet'


def of_params(params: dict, plan: dict | None = None) -> dict:
    """The configuration {CONFIG_FIELDS} of a run's flag values (one worker; the devices are
    --num_gpus)."""
    return {'model': params.get('model'), 'mode': mode_of(params),
            'precision': precision_of(params), 'batch_size': params.get('batch_size'),
            'num_devices': params.get('num_gpus'), 'num_workers': 1,
            'variable_update': params.get('variable_update'), 'device': params.get('device'),
            'data': data_of(params, plan), 'image_size': params.get('image_size')}


def of_result(result: dict) -> dict:
    """The configuration of a result dict (a run's, or its results JSON:
    lifecycle/results_log.py): its params, with the per-device batch, devices, workers and
    image size the run resolved where it recorded them."""
    plan = result.get('plan') if isinstance(result.get('plan'), dict) else None
    params = dict(result.get('params') or {})
    params['model'] = result.get('model') or params.get('model')
    config = of_params(params, plan)
    config['num_devices'] = result.get('num_devices') or config['num_devices']
    config['num_workers'] = result.get('num_workers') or 1
    config['batch_size'] = result.get('per_device_batch_size') or config['batch_size']
    config['image_size'] = result.get('image_size') or config['image_size']
    config[CPUS_FIELD] = cpus_of(result.get('host_load'))
    return config


def of_stored_result(result: dict) -> dict:
    """`of_result` of a result stored before (a --baseline, an ingested JSON): a renamed model
    as the network it ran (`stored_model` by its format)."""
    config = of_result(result)
    config['model'] = stored_model(config['model'], format_of(result))
    return config


def cpus_of(host_load) -> int | float | None:
    """The CPUs a run was allowed, from its host load (metrics/host_load.py measure's dict, or
    a sweep record's subset: 'cpus_allowed'), no more than the container's CPU quota it
    recorded ('cpu_quota'), as hardware/cpu_quota.cpus_figure gives them; None where it is
    not recorded."""
    value = host_load.get(CPUS_FIELD) if isinstance(host_load, dict) else None
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        return None
    quota = host_load.get('cpu_quota')
    cpus = quota.get('cpus') if isinstance(quota, dict) else None
    if isinstance(cpus, (int, float)) and not isinstance(cpus, bool) and cpus > 0:
        return cpu_quota.cpus_figure(value, cpus)
    return value


def cpus_differ(a: dict, b: dict) -> bool:
    """True when both configurations recorded their allowed-CPU count and the counts differ
    (a configuration without it is comparable with any)."""
    return None not in (a.get(CPUS_FIELD), b.get(CPUS_FIELD)) and a[CPUS_FIELD] != b[CPUS_FIELD]


def differences(a: dict, b: dict, a_where: str = 'in A', b_where: str = 'in B',
                fields=CONFIG_FIELDS) -> list[str]:
    """'batch_size: 8 in A, 16 in B' for each part of two configurations that differs (in
    `fields` order; `a_where`, `b_where`: 'in the baseline', 'here')."""
    return ['%s: %r %s, %r %s' % (name, a.get(name), a_where, b.get(name), b_where)
            for name in fields if a.get(name) != b.get(name)]


def show(value) -> str:
    """A value as `changes` writes it: a list comma-joined ('[]' when empty), else str."""
    if isinstance(value, (list, tuple)):
        return ','.join(str(v) for v in value) or '[]'
    return str(value)


def _norm(value):
    return list(value) if isinstance(value, tuple) else value


def changed_flags(before: dict, after: dict) -> list[str]:
    """'--num_intra_threads 0 -> 1' for each flag whose value differs between two runs'
    {flag: value} (NAMING_FLAGS left out; a flag missing on one side is None there), by
    name."""
    return ['--%s %s -> %s' % (name, show(before.get(name)), show(after.get(name)))
            for name in sorted(set(before) | set(after))
            if name not in NAMING_FLAGS and _norm(before.get(name)) != _norm(after.get(name))]


def changes(env_before: dict, env_after: dict, flags_before: dict, flags_after: dict
            ) -> list[str]:
    """What changed between two runs: their environments (ENVIRONMENT_FIELDS but the host
    name: 'tf_version 2.20.0 -> 2.21.0', 'tf_cnn_benchmarks_version 0.2.0 -> 0.3.0'; a field
    of LATER_ENVIRONMENT_FIELDS only where both runs recorded it), then their flags
    (`changed_flags`)."""
    env = ['%s %s -> %s' % (name, show(env_before.get(name)), show(env_after.get(name)))
           for name in ENVIRONMENT_FIELDS
           if name != 'hostname' and env_before.get(name) != env_after.get(name)
           and not (name in LATER_ENVIRONMENT_FIELDS
                    and None in (env_before.get(name), env_after.get(name)))]
    return env + changed_flags(flags_before, flags_after)
