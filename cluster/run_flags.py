"""The run-defining flags every task of a cluster must share, and the line naming a mismatch.

Workers started with another --model (or classes, image size, precision, variable update,
batch) build graphs whose variables do not match the chief's: the run used to fail with
`Could not find variable v/cg/conv4/...` on that worker and `lost the cluster: unreachable
now: ps 0` on the chief. Other steps (--num_batches, --num_epochs, --num_warmup_batches), or
a worker that does not wait for the others (--cross_replica_sync=false, --forward_only),
made the worker that finished first leave the others waiting out --startup_timeout_secs for
a step it never ran, then blame it as unreachable; other devices per worker (--num_gpus) made
each worker's header give another global batch (and its epochs and learning-rate schedule
count with it) without a word; other learning-rate or optimizer flags were ignored on all but
the chief (which applies the updates) without a word; other --worker_hosts or --ps_hosts
made TensorFlow fail with `Shared queue ... has capacity 3 but requested capacity was 2` or
`RecvTensor expects a different device incarnation` (two tasks taking one role).

At start-up every worker writes its values, under its role and address, to a shared table
on every ps task it knows (on every worker without ps: cluster/coordination.py
`Coordination.run_flags_ops`), reads what the others wrote, and judges them the same way
(`judge`): so a mismatch is the same one line on every task, naming the flags and both
values (cluster/flag_check.py, which also reaches a worker whose --ps_hosts point elsewhere).

A ps task builds no graph: other flags there changed nothing it did, and a ps started with
another --variable_update or --model served the chief's variables without a word. It writes
its values into its own table as it starts to serve (`TaskServer.serve`); the workers wait for
every ps task's entry too and compare it with the chief's on the flags that say which
variables it holds and for which cluster (`PS_FLAGS`: not the steps, batch or learning rates,
which a ps never reads). The chief then tells the ps it failed, and the ps, reading its own
table, stops with the line too. Nothing is fed into the table
(its key and value are constants of the graph), so a task whose host lists place it in
another task's role can still write and read it.

With distributed_all_reduce the controller is the chief, and the workers serve its graph
(they build none): like a ps task, each writes its entry into its own table as it starts to
serve; the controller compares them on the flags that matter to the graph it places on them
(`SERVED_FLAGS`: a worker given another --controller_host waited for the controller's done
token at that address and stopped the run after --startup_timeout_secs).

Pure functions on plain values; loads no TensorFlow.
"""

from __future__ import annotations

import hashlib
import json

from ..params import is_set

#: The learning-rate flags (graph/learning_rate.py reads them; the chief's updates use its own).
LEARNING_RATE_FLAGS = ('init_learning_rate', 'piecewise_learning_rate_schedule',
                       'num_epochs_per_decay', 'learning_rate_decay_factor',
                       'num_learning_rate_warmup_epochs', 'minimum_learning_rate',
                       'resnet_base_lr')
#: The hyper-parameter flags of each --optimizer that has some (graph/learning_rate.py
#: make_optimizer reads them); a task sends those of its own optimizer only.
OPTIMIZER_FLAGS = {'momentum': ('momentum',),
                   'rmsprop': ('rmsprop_decay', 'rmsprop_momentum', 'rmsprop_epsilon'),
                   'adam': ('adam_beta1', 'adam_beta2', 'adam_epsilon')}
_HYPER_FLAGS = tuple(name for names in OPTIMIZER_FLAGS.values() for name in names)
#: The flags compared, in the order messages list them.
RUN_DEFINING_FLAGS = ('model', 'num_classes', 'image_size', 'use_fp16', 'use_bf16',
                      'variable_update', 'cross_replica_sync', 'forward_only', 'num_gpus',
                      'batch_size', 'num_batches', 'num_warmup_batches', 'optimizer',
                      *_HYPER_FLAGS, *LEARNING_RATE_FLAGS, 'worker_hosts', 'ps_hosts')
#: How messages name the compared flags.
FLAGS_NAMED = ('--model, --num_classes, --image_size, --use_fp16, --use_bf16, '
               '--variable_update, --cross_replica_sync, --forward_only, --num_gpus, '
               '--batch_size, --num_batches (or --num_epochs), --num_warmup_batches, '
               '--optimizer and its flags, the learning-rate flags, --worker_hosts and '
               '--ps_hosts')
#: The flags a ps task's values are compared on: which variables it holds (their names and
#: shapes: the model, its classes and image size; their layout: --variable_update) and the
#: cluster it serves.
PS_FLAGS = ('model', 'num_classes', 'image_size', 'variable_update', 'worker_hosts', 'ps_hosts')
PS_FLAGS_NAMED = ('--model, --num_classes, --image_size, --variable_update, --worker_hosts '
                  'and --ps_hosts')
#: The flags a worker of distributed_all_reduce, which serves the controller's graph, is
#: compared with the controller on: the mode, the devices the controller places towers on
#: (--num_gpus) and the cluster (a worker given another --controller_host waited for the
#: controller's done token at that address and stopped the run after --startup_timeout_secs).
SERVED_FLAGS = ('variable_update', 'num_gpus', 'worker_hosts', 'controller_host')
SERVED_FLAGS_NAMED = '--variable_update, --num_gpus, --worker_hosts and --controller_host'


def _text(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, (list, tuple)):
        return ','.join(value)
    return str(value)


#: How a line names a value the run derived from something else than its flag (the flag not
#: given): 'image size 28 (lenet's default)', not '--image_size=28'.
DERIVED_WORDS = {'num_classes': 'classes', 'image_size': 'image size',
                 'batch_size': 'batch size', 'num_warmup_batches': 'warm-up steps'}


def run_flag_values(plan, given=None) -> dict[str, str | None]:
    """{flag: value as written on a command line, or None for a flag not given} of a run,
    resolved (a default --batch_size or --image_size as the model's, --num_classes as the
    dataset's or labels.txt's, --num_batches as the timed steps, from --num_epochs when given:
    '5 (from --num_epochs=0.01)').

    With `given`, a value the run derived from elsewhere, its flag not given, says where it
    came from after it (`_origins`: "28 (lenet's default)"), so that a mismatch line does not
    name a flag nobody typed (`mismatch_line`); the values compare without it.

    Args:
      plan: the task's run_plan.RunPlan.
      given: the task's Params as given, before the machine's and the model's defaults
        (BenchmarkCNN.given_params), or None: no origins.
    """
    p = plan.params
    steps = str(plan.num_batches)
    if p.num_epochs is not None:
        steps += ' (from --num_epochs=%g)' % p.num_epochs
    values = {'model': plan.model, 'num_classes': plan.num_classes,
              'image_size': plan.image_size, 'use_fp16': p.use_fp16, 'use_bf16': p.use_bf16,
              'variable_update': p.variable_update,
              'cross_replica_sync': p.cross_replica_sync, 'forward_only': p.forward_only,
              'num_gpus': p.num_gpus, 'batch_size': plan.per_device_batch_size,
              'num_batches': steps, 'num_warmup_batches': plan.num_warmup_batches,
              'optimizer': p.optimizer, 'worker_hosts': p.worker_hosts, 'ps_hosts': p.ps_hosts,
              'controller_host': p.controller_host}
    own = OPTIMIZER_FLAGS.get(p.optimizer, ())
    values.update({name: getattr(p, name) if name in own else None for name in _HYPER_FLAGS})
    values.update({name: getattr(p, name) for name in LEARNING_RATE_FLAGS})
    texts = {name: _text(values[name]) for name in (*RUN_DEFINING_FLAGS, 'controller_host')}
    if given is not None:
        for name, origin in _origins(plan, given).items():
            if texts[name] is not None:
                texts[name] = '%s (%s)' % (texts[name], origin)
    return texts


def _origins(plan, given) -> dict[str, str]:
    """{flag: where its value came from} of the flags of DERIVED_WORDS that `given` does not
    set (params.is_set: at the table's default, which for these means "derive it"): the
    model's image and batch size, the dataset's classes, the device's warm-up. The other flags'
    values are their own, typed or at the table's default (a --num_batches from --num_epochs
    says so already)."""
    derived = {'num_classes': "the dataset's", 'image_size': "%s's default" % plan.model,
               'batch_size': "%s's default" % plan.model,
               'num_warmup_batches': 'the default on the %s' % plan.params.device.upper()}
    return {name: origin for name, origin in derived.items() if not is_set(given, name)}


def encode(values: dict) -> bytes:
    """The values as sent between tasks (UTF-8 JSON, keys sorted)."""
    return json.dumps(values, sort_keys=True).encode('utf-8')


def decode(data: bytes) -> dict:
    """The inverse of `encode`."""
    return json.loads(data.decode('utf-8'))


def _bare(value) -> str | None:
    """'5 (from --num_epochs=0.01)' -> '5', "28 (lenet's default)" -> '28': values agree
    whichever flag or default gave them."""
    return value.split(' (', 1)[0] if isinstance(value, str) else value


def differences(theirs: dict, chiefs: dict, names=RUN_DEFINING_FLAGS
                ) -> list[tuple[str, object, object]]:
    """[(flag, the task's value, the chief's value)] of the flags `names` (a worker's:
    RUN_DEFINING_FLAGS; a ps task's: PS_FLAGS) that differ, in their order (a flag one side
    does not send counts as '?'). Of two tasks with other optimizers only --optimizer is
    named, not the hyper-parameters each sends of its own."""
    other_optimizer = ('optimizer' in names and
                       theirs.get('optimizer', '?') != chiefs.get('optimizer', '?'))
    diffs = []
    for name in names:
        if other_optimizer and name in _HYPER_FLAGS:
            continue
        mine, chief = theirs.get(name, '?'), chiefs.get(name, '?')
        if _bare(mine) != _bare(chief):
            diffs.append((name, mine, chief))
    return diffs


def _flag(name: str, value) -> str:
    """A value as a mismatch line names it: '--batch_size=4' (given), "image size 28 (lenet's
    default)" (DERIVED_WORDS, not given), 'no --init_learning_rate' (None)."""
    if value is None:
        return 'no --%s' % name
    if name == 'ps_hosts' and value == '':
        return 'no --ps_hosts'
    bare, _, origin = str(value).partition(' (')
    if origin and name in DERIVED_WORDS and not origin.startswith('from --'):
        return '%s %s (%s' % (DERIVED_WORDS[name], bare, origin)
    return '--%s=%s' % (name, value)


def mismatch_line(task: str, chief: str, diffs: list[tuple[str, object, object]]) -> str:
    """'worker 1 (h:p) was started with --model=a, the chief, worker 0 (h:q), with
    --model=b: every worker of a cluster takes the same --model, ...' for the differences of
    `differences`; a ps task's names PS_FLAGS ('a ps task takes the chief's --model, ...'),
    a worker of distributed_all_reduce's SERVED_FLAGS: each line names the flags its task was
    compared on, no other.

    Args:
      task: the mismatching task, described ('worker 1 (localhost:2223)', 'ps 0 (...)').
      chief: the chief, described.
      diffs: non-empty, from `differences`.
    """
    flags = lambda side: ' and '.join(_flag(d[0], d[side]) for d in diffs)  # noqa: E731
    if chief.startswith('controller '):  # distributed_all_reduce: the controller is the chief
        return ('%s was started with %s, and %s with %s: a worker of distributed_all_reduce takes '
                'the controller\'s %s; start it with the controller\'s'
                % (task, flags(1), chief, flags(2), SERVED_FLAGS_NAMED))
    # A worker's rule names the workers: every task prints the line, a ps task's log too,
    # and a ps task is compared on PS_FLAGS only ('every task of a cluster takes the same
    # --batch_size ...' said otherwise there).
    rule = ('a ps task takes the chief\'s %s' % PS_FLAGS_NAMED if task.startswith('ps ')
            else 'every worker of a cluster takes the same %s' % FLAGS_NAMED)
    return ('%s was started with %s, the chief, %s, with %s: %s; start it with the chief\'s'
            % (task, flags(1), chief, flags(2), rule))


def entry_key(job: str, index: int, address: str) -> str:
    """The table key of a task's entry: 'worker 1 localhost:2223' (its role as its own host
    flags give it, and its own address)."""
    return '%s %d %s' % (job, index, address)


def entry_id(key: str) -> int:
    """The table's int64 key of an entry_key (the first 8 bytes of its SHA-256)."""
    return int.from_bytes(hashlib.sha256(key.encode('utf-8')).digest()[:8], 'big', signed=True)


def encode_entry(key: str, values: dict, seen: bool = False) -> bytes:
    """A task's table value: its entry_key, its run_flag_values and whether it has seen a
    mismatch (it rewrites its entry so: the chief waits for that before it tells the ps tasks
    to stop, so that no task loses the table before it could read it), `encode`d."""
    return encode({'task': key, 'flags': values, 'seen': seen})


def decode_entries(data) -> tuple[dict[str, dict], set[str]]:
    """({entry_key: run_flag_values}, {entry_keys of the tasks that saw a mismatch}) of the
    table values `data` (encode_entry's)."""
    entries = [decode(d) for d in data]
    return ({e['task']: e['flags'] for e in entries},
            {e['task'] for e in entries if e.get('seen')})


def _describe(key: str) -> str:
    job, index, address = key.split(' ', 2)
    return '%s %s (%s)' % (job, index, address)


def _index(key: str) -> int:
    return int(key.split(' ')[1])


def judge(entries: dict[str, dict], num_workers: int, num_ps: int = 0, final: bool = False
          ) -> tuple[str, str | None]:
    """What the entries written so far say: ('wait', None) until every worker 0..num_workers-1
    and every ps task 0..num_ps-1 wrote one, ('ok', None) when they agree, ('mismatch', line)
    as soon as a worker differs from the chief (RUN_DEFINING_FLAGS) or a ps task does
    (PS_FLAGS).

    A ps task that differs from the chief in its host lists only is judged once every worker
    wrote (or `final`): until then the difference may be a worker's, whose host lists give it
    another task's role, and that worker's entry names the cause (two tasks taking the
    chief's role) where the ps task's would only say that the lists differ.

    Every task judges the same entries the same way, so all print the same line.

    Args:
      entries: {entry_key: run_flag_values} of the tasks that wrote theirs.
      num_workers: the workers this task's --worker_hosts list.
      num_ps: the ps tasks its --ps_hosts list (a ps task judging its own table: 0, it holds
        no other ps task's entry).
      final: the wait is over (--startup_timeout_secs): a deferred difference is said.
    """
    controllers = sorted(key for key in entries if key.startswith('controller '))
    if controllers:  # distributed_all_reduce: the workers serve the controller's graph
        return _judge_served(entries, controllers[0], num_workers)
    by_index: dict[int, list[str]] = {}
    ps = {_index(key) for key in entries if key.startswith('ps ')}
    for key in entries:
        if key.startswith('worker '):
            by_index.setdefault(_index(key), []).append(key)
    chiefs = sorted(by_index.get(0, []))
    if len(chiefs) > 1:
        hosts = [d for d in differences(entries[chiefs[1]], entries[chiefs[0]])
                 if d[0] in ('worker_hosts', 'ps_hosts')] or [('worker_hosts', '?', '?')]
        sides = ['%s with %s' % (key.split(' ', 2)[2], ' and '.join(_flag(d[0], d[side])
                                                                      for d in hosts))
                 for side, key in ((2, chiefs[0]), (1, chiefs[1]))]
        return 'mismatch', (
            'two tasks take the role of worker 0, the chief: %s, and %s: every task of a '
            'cluster takes the same %s, in the same order; start them all with one list'
            % (sides[0], sides[1], ' and '.join('--' + d[0] for d in hosts)))
    every_worker = all(i in by_index for i in range(num_workers))
    if chiefs:
        chief = chiefs[0]
        found = [(key, diffs)
                 for key in sorted(entries, key=lambda k: (k.startswith('ps '), _index(k), k))
                 if key != chief and (diffs := differences(
                     entries[key], entries[chief],
                     PS_FLAGS if key.startswith('ps ') else RUN_DEFINING_FLAGS))]
        if not (every_worker or final):  # host lists a later worker's entry may explain
            found = [(key, diffs) for key, diffs in found
                     if not (key.startswith('ps ') and
                             {d[0] for d in diffs} <= {'worker_hosts', 'ps_hosts'})]
        if found:
            return 'mismatch', '; '.join(mismatch_line(_describe(key), _describe(chief), diffs)
                                         for key, diffs in found)
    if every_worker and all(k in ps for k in range(num_ps)):
        return 'ok', None
    return 'wait', None


def _judge_served(entries: dict[str, dict], controller: str, num_workers: int
                  ) -> tuple[str, str | None]:
    """`judge` of distributed_all_reduce: every worker (written into its own table as it
    starts to serve) compared with the controller on SERVED_FLAGS."""
    workers = sorted((key for key in entries if key.startswith('worker ')), key=_index)
    found = [(key, diffs) for key in workers if (diffs := differences(
        entries[key], entries[controller], SERVED_FLAGS))]
    if found:
        return 'mismatch', '; '.join(mismatch_line(_describe(key), _describe(controller), diffs)
                                     for key, diffs in found)
    if not missing_workers(entries, num_workers):
        return 'ok', None
    return 'wait', None


def missing_workers(entries: dict[str, dict], num_workers: int) -> list[int]:
    """The worker indices below num_workers that wrote no entry."""
    seen = {_index(key) for key in entries if key.startswith('worker ')}
    return [i for i in range(num_workers) if i not in seen]


def missing_ps(entries: dict[str, dict], num_ps: int) -> list[int]:
    """The ps task indices below num_ps that wrote no entry."""
    seen = {_index(key) for key in entries if key.startswith('ps ')}
    return [k for k in range(num_ps) if k not in seen]


def worker_entries(keys) -> set[str]:
    """The workers' entry keys among `keys` (a ps task's entry needs no 'seen': it reads its
    own table, which stays while it serves)."""
    return {key for key in keys if key.startswith('worker ')}
