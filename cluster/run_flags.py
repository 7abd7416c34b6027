"""The run-defining flags every task of a cluster must share, and the line naming a mismatch.

Workers started with another --model (or classes, image size, precision, variable update,
batch) build graphs whose variables do not match the chief's: the run used to fail with
`Could not find variable v/cg/conv4/...` on that worker and `lost the cluster: unreachable
now: ps 0` on the chief. At start-up the chief sends its values to every worker and each
worker answers with its own (cluster/server.py `TaskServer.check_run_flags`, through queues of
cluster/coordination.py), so a mismatch is one line on both, naming the flag and both values.

Pure functions on plain values; loads no TensorFlow.
"""

from __future__ import annotations

import json

#: The flags compared, in the order messages list them.
RUN_DEFINING_FLAGS = ('model', 'num_classes', 'image_size', 'use_fp16', 'use_bf16',
                      'variable_update', 'batch_size')


def _text(value) -> str:
    if isinstance(value, bool):
        return 'true' if value else 'false'
    return str(value)


def run_flag_values(plan) -> dict[str, str]:
    """{flag: value as written on a command line} of a run, resolved (a default --batch_size
    or --image_size as the model's, --num_classes as the dataset's or labels.txt's).

    Args:
      plan: the task's run_plan.RunPlan.
    """
    p = plan.params
    values = {'model': plan.model, 'num_classes': plan.num_classes,
              'image_size': plan.image_size, 'use_fp16': p.use_fp16, 'use_bf16': p.use_bf16,
              'variable_update': p.variable_update, 'batch_size': plan.per_device_batch_size}
    return {name: _text(values[name]) for name in RUN_DEFINING_FLAGS}


def encode(values: dict[str, str]) -> bytes:
    """The values as sent between tasks (UTF-8 JSON, keys sorted)."""
    return json.dumps(values, sort_keys=True).encode('utf-8')


def decode(data: bytes) -> dict[str, str]:
    """The inverse of `encode`."""
    return json.loads(data.decode('utf-8'))


def differences(theirs: dict[str, str], chiefs: dict[str, str]) -> list[tuple[str, str, str]]:
    """[(flag, the task's value, the chief's value)] of the flags that differ, in
    RUN_DEFINING_FLAGS order (a flag one side does not send counts as '?')."""
    return [(name, theirs.get(name, '?'), chiefs.get(name, '?')) for name in RUN_DEFINING_FLAGS
            if theirs.get(name, '?') != chiefs.get(name, '?')]


def mismatch_line(task: str, chief: str, diffs: list[tuple[str, str, str]]) -> str:
    """'worker 1 (h:p) was started with --model=a, the chief, worker 0 (h:q), with
    --model=b: ...' for the differences of `differences`.

    Args:
      task: the mismatching task, described ('worker 1 (localhost:2223)').
      chief: the chief, described.
      diffs: non-empty, from `differences`.
    """
    flags = lambda side: ' and '.join('--%s=%s' % (d[0], d[side]) for d in diffs)  # noqa: E731
    return ('%s was started with %s, the chief, %s, with %s: every task of a cluster takes the '
            'same %s; start it with the chief\'s'
            % (task, flags(1), chief, flags(2), ', '.join('--' + n for n in RUN_DEFINING_FLAGS)))
