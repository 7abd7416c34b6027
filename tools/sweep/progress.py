"""The sweep's progress line and its estimate of the time left, per configuration.

One stderr line as each run starts:

    [##########..........] 2/2 resnet50 bs=8 gpus=1 fp32 parameter_server repeat 1/1 |
        elapsed 0:00:06 | ETA 0:02:49 | logs: runs/resnet50-bs8-.../stdout.log

(one line on the screen), naming the run's log, which a user can `tail -f` through a silent
minute.

The estimate. A run's cost is known before it runs (`step_costs`): its model's forward FLOPs
per image (models/model_catalog.py ROWS, for the dataset the flags for every run choose, times
(--image_size / the model's size)^2 when they set one) x its batch size per device x its
devices, per step; every run of a sweep runs the same steps (the flags are shared). A run's
wall time is a fixed part (loading TensorFlow, building the graph, the total block: about 6 s
for the trivial model on a 2-core CPU, 8 s for resnet50) plus its steps' part, its cost times
the seconds per FLOP of this host. Each run that ended `ok` gives both (`Estimate.add`): the
seconds per FLOP of its timed part (its results JSON's `elapsed_secs` over its timed steps'
cost) and its fixed part (its wall time less its warm-up and timed steps at that rate). A run
left is estimated at the median fixed part plus the pooled seconds per FLOP (all timed seconds
over all timed costs) times its cost and steps. A run that failed or stopped gives nothing:
its wall time is no configuration's cost (a run refused in 0.25 s made the old mean say
`ETA 0:00:00`). Before a run ended ok there is no estimate: `ETA unknown`.

Why not the mean run time times the runs left (the old rule): `--models=trivial,resnet50`
said `ETA 0:00:06` before a 58.7-s resnet50 run. Why not a cost ratio without the fixed part:
trivial's 6 s are nearly all start-up, and 900x its FLOPs would have said 1.5 hours. Smaller
models use a CPU less well than larger ones, so an estimate from a small model's runs errs
long for a large one (trivial's runs put resnet50's 58.7 s at about 170 s), and it improves as
the larger runs end.
"""

from __future__ import annotations

import statistics
import sys
import time


def step_costs(configs: list[dict], extra_flags: list[str]) -> list[float | None]:
    """FLOPs of one step of each configuration (forward per image x batch x devices; None for
    a model the catalog has no row of), for the dataset and --image_size of `extra_flags`
    (the flags for every run, parsed as the run parses them; all None when they do not
    parse: the sweep refused those before, preflight/usage.py)."""
    from tf_cnn_benchmarks import flag_parsing, params  # absolute: see cli.unknown_model
    from tf_cnn_benchmarks.models import model_catalog
    from tf_cnn_benchmarks.preflight import usage
    try:
        p = flag_parsing.parse_flags(['tf_cnn_benchmarks'] + list(extra_flags), quiet=True)
    except params.ParamsError:
        return [None] * len(configs)
    dataset = usage.dataset_name(p) or 'imagenet'
    costs = []
    for config in configs:
        row = model_catalog.row(config['model'], dataset)
        if row is None:
            costs.append(None)
            continue
        scale = (p.image_size / row.image_size) ** 2 if p.image_size else 1.0
        costs.append(row.gflops * 1e9 * scale * config['batch_size'] * config['num_gpus'])
    return costs


class Estimate:
    """Seconds the runs left will take, from the runs that ended ok (module docstring)."""

    def __init__(self):
        self._fixed: list[float] = []  # each ok run's wall time less its steps' part
        self._steps: list[int] = []  # each ok run's warm-up and timed steps
        self._timed_secs = 0.0
        self._timed_cost = 0.0

    def add(self, step_cost: float | None, outcome: dict) -> None:
        """Learns from a finished run: `outcome` is runner.run_configuration's ('status',
        'wall_secs', 'result': its results JSON, whose 'elapsed_secs' (the timed part's
        seconds), 'num_steps' and params' 'num_warmup_batches' are read). A run not `ok`, of
        no known cost, or whose results JSON lacks those, is left out."""
        result = outcome.get('result') or {}
        secs, steps = result.get('elapsed_secs'), result.get('num_steps')
        warmup = (result.get('params') or {}).get('num_warmup_batches') or 0
        if (outcome.get('status') != 'ok' or not step_cost or not steps or secs is None
                or secs <= 0):
            return
        rate = secs / (step_cost * steps)
        self._fixed.append(max(0.0, outcome['wall_secs'] - rate * step_cost * (steps + warmup)))
        self._steps.append(steps + warmup)
        self._timed_secs += secs
        self._timed_cost += step_cost * steps

    def seconds(self, step_costs_left: list[float | None]) -> float | None:
        """The estimate for runs of these step costs (a cost of None, a model without a row,
        counts as the mean of the known ones); None before a run ended ok."""
        if not self._fixed:
            return None
        rate = self._timed_secs / self._timed_cost
        fixed, steps = statistics.median(self._fixed), statistics.median(self._steps)
        known = [c for c in step_costs_left if c]
        fill = (sum(known) / len(known)) if known else 0.0
        return sum(fixed + rate * (cost or fill) * steps for cost in step_costs_left)


def clock_text(secs: float) -> str:
    """'0:02:49' (h:mm:ss) of `secs`."""
    secs = int(round(secs))
    return '%d:%02d:%02d' % (secs // 3600, secs // 60 % 60, secs % 60)


class Progress:
    """One stderr line per configuration: bar, i of N, elapsed, the estimated time left and
    the run's log (module docstring).

    Args:
      total: the sweep's runs; already_done: those recorded before this invocation.
      step_costs: `step_costs` of the runs to do, in order (their count is the runs left).
      enabled: print the lines (--progress).
      stream: where (default stderr); clock: seconds (default time.monotonic; tests inject).
    """

    def __init__(self, total: int, already_done: int, step_costs: list[float | None],
                 enabled: bool = True, stream=None, width: int = 20, clock=None):
        self.total, self.position, self.costs = total, already_done, list(step_costs)
        self.enabled, self.width = enabled, width
        self.stream = stream or sys.stderr
        self.clock = clock or time.monotonic
        self.start = self.clock()
        self.estimate = Estimate()

    def begin(self, label: str, log_path: str | None = None) -> None:
        """The line of the run starting now (the first of the step costs left)."""
        self.position += 1
        if not self.enabled:
            return
        elapsed = self.clock() - self.start
        left = self.estimate.seconds(self.costs)
        filled = self.width * (self.position - 1) // max(self.total, 1)
        self.stream.write('[%s%s] %d/%d %s | elapsed %s | ETA %s%s\n' % (
            '#' * filled, '.' * (self.width - filled), self.position, self.total, label,
            clock_text(elapsed), 'unknown' if left is None else clock_text(left),
            ' | logs: %s' % log_path if log_path else ''))
        self.stream.flush()

    def end(self, outcome: dict | None = None) -> None:
        """The run that began last ended with `outcome` (runner.run_configuration's)."""
        cost = self.costs.pop(0) if self.costs else None
        if outcome is not None:
            self.estimate.add(cost, outcome)
