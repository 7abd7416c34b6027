"""The hooks that report a run's figures (the computations are metrics/'s).

    FiguresHook         the total block after `total images/sec`: compute images/sec and
                        input wait, model FLOP/s and utilisation, peak memory, latency, the
                        --baseline gate (metrics/utilisation.py says how each is measured)
    HostLoadHook        the total block's last line: what else used the CPUs during the
                        timed part (metrics/host_load.py), a warning when that was a lot;
                        a warning when the process was stopped or paused in it
                        (metrics/stall.py)
    StepBreakdownHook   --print_step_breakdown: sampled steps traced, one line each
    eval_block          an --eval evaluation's total block: `total images/sec` between the
                        original's dashed lines, with the same figures and its host load

FiguresHook and StepBreakdownHook get their traces from the loop (RunHook.wants_trace /
traced): no timed step is traced for the total block (its traced step is the last warm-up
step). HostLoadHook samples /proc in the before_timed and after_timed phases, and watches
for SIGCONT between them.
"""

from __future__ import annotations

from typing import Callable

from .. import cnn_util
from ..hardware import cpu_quota, machine
from ..metrics import baseline as baseline_lib
from ..metrics import clean_runs, cluster_tasks, step_breakdown, utilisation
from ..metrics import host_load as host_load_lib
from ..metrics import latency as latency_lib
from ..metrics import stall as stall_lib
from . import run_hooks, training_loop


class FiguresHook(run_hooks.RunHook):
    """The figures that explain a training or forward-only run's images/sec (the total block).

    It traces the last warm-up step (never a timed one; nothing without warm-up steps), prints
    its lines after `total images/sec`, adds result['utilisation'], ['input'], ['memory'],
    ['latency_ms'] and ['baseline'] (None without --baseline; results_log.py lists their
    fields), and
    `raise_if_slower` applies the --baseline gate once the results are written.

    Args:
      plan: the run_plan.RunPlan.
      is_local: device name -> True for this task's devices (step_breakdown.breakdown).
      stored_baseline: the --baseline result, its configuration already checked
        (metrics/baseline.py check_config), or None.
      host_load: (loop) -> this run's host load (HostLoadHook.judged: metrics/host_load.py's
        dict with its 'stall', None when not measured), read by the --baseline gate to leave
        an unclean run unjudged (metrics/clean_runs.py), and by the CPU peak, not measured
        after a timed part too busy to keep it (metrics/utilisation.py cpu_device_peak);
        default: not measured.
      gpu_names, cpu_peak_fn: test seams (see metrics/utilisation.py device_peak).
    """

    def __init__(self, plan, *, is_local=None, stored_baseline=None, host_load=None,
                 gpu_names=None, cpu_peak_fn=None):
        self.plan = plan
        self.host_load = host_load or (lambda loop: None)
        self.is_local = is_local or (lambda device: True)
        self.stored_baseline = stored_baseline
        self.gpu_names = gpu_names
        self.cpu_peak_fn = cpu_peak_fn
        self.step_stats = None
        self._wall_secs = None
        self.keys: dict = {}

    def wants_trace(self, call: int) -> bool:
        return call == self.plan.num_warmup_batches

    def traced(self, call, wall_secs, trace):
        # Its breakdown waits for the total block: no work between the warm-up and the timed
        # steps.
        self.step_stats, self._wall_secs = trace.step_stats, wall_secs

    def total_lines(self, loop) -> list[str]:
        plan, rate = self.plan, loop.images_per_sec
        lines = []
        parts = (step_breakdown.breakdown(self.step_stats, self._wall_secs, self.is_local)
                 if self.step_stats is not None else None)
        inp = utilisation.input_figures(parts, rate)
        real_or_cluster = bool(plan.params.data_dir) or plan.num_workers > 1 or bool(
            plan.cluster_role)
        how = 'traced warm-up step' if parts else utilisation.NO_WARMUP_TRACE
        lines.append(utilisation.format_input(inp, rate, real_or_cluster, how,
                                              utilisation.input_shares_cpu(plan.params)))
        util = utilisation.utilisation_figures(plan, rate, plan.training, lines,
                                               gpu_names=self.gpu_names,
                                               cpu_peak_fn=self.cpu_peak_fn,
                                               timed_load=self.host_load(loop))
        gpus = len(plan.devices) if plan.params.device == 'gpu' else 0
        mem = utilisation.memory_figures(self.step_stats, gpus)
        lines.append(utilisation.format_memory(mem))
        lat = None
        if not plan.training:
            # Without warm-up steps the first timed step sets up the session: left out, as an
            # evaluation's first batch is (the total line keeps it, as the original's does).
            sets_up = not plan.num_warmup_batches
            lat = latency_lib.latency_ms(loop.step_times, plan.images_per_step,
                                         first_sets_up=sets_up)
            if lat:
                lines.append(latency_lib.format_latency(lat))
            elif sets_up and loop.step_times:
                lines.append(latency_lib.set_up_only_line(
                    plan.images_per_step, '--num_warmup_batches=1 or --num_batches=2'))
        # Without a traced warm-up step every input figure is null: the method says why.
        inp['method'] = (utilisation.INPUT_METHOD if parts else
                         'not measured: %s' % utilisation.NO_WARMUP_TRACE)
        self.keys = {'utilisation': util, 'input': inp, 'memory': mem, 'latency_ms': lat,
                     'baseline': None}  # null without --baseline
        if self.stored_baseline is not None:
            rates = [plan.images_per_step / t for t in loop.step_times if t > 0]
            changes = baseline_lib.what_changed(self.stored_baseline, plan.params._asdict(),
                                                machine.environment())
            c = baseline_lib.compare(self.stored_baseline, rates, rate,
                                     plan.params.fail_on_slower, self._run_state(loop),
                                     plan.params.include_unclean_runs, changes)
            self.keys['baseline'] = c
            lines.append(baseline_lib.format_line(c))
        return lines

    def _run_state(self, loop) -> clean_runs.RunState:
        """This run's clean_runs.RunState: its host load, its timed steps against the plan's
        (unknown with --stop_at_top_1_accuracy, which may end a run early as planned)."""
        planned = (None if self.plan.params.stop_at_top_1_accuracy is not None
                   else self.plan.num_batches)
        return clean_runs.state(self.host_load(loop), loop.num_steps, planned)

    def end(self, result):
        result.update(self.keys)


def raise_if_slower(result: dict) -> None:
    """--baseline: raises metrics.baseline.RegressionError when the run failed its gate,
    NotJudgedError when the gate could not judge it (after its results were written)."""
    baseline_lib.raise_if_failed(result)


class HostLoadHook(run_hooks.RunHook):
    """What else used the CPUs while the run was timed (metrics/host_load.py says how).

    Samples /proc in `begin`, `before_timed` and `after_timed`. Over the warm-up (begin to
    before_timed) it checks whether the host is already busy as the run starts: one `warning:`
    line before the first timed step when other processes used more than
    host_load.OTHERS_LIMIT of the run's cores (warmup_lines), so that a user can stop and rerun
    early; a warm-up too short to measure, or none, is judged over the set-up instead (from
    the hook's making, before the graph is built: one-host runs), and only when that too is too
    short by the host's load average, never for a run pinned to fewer CPUs than the host has
    (warmup_lines, start_lines).
    Its total-block line is 'Host load: other processes used 1.42 of 2 cores (71%), load
    average 3.1 before, 3.4 after, steal 0.0%', with one `warning:` line on stderr when
    the host was too busy for the figure to be representative (host_load_lines); `end` adds
    result['host_load'] (host_load.measure lists its fields; None when the timed part did not
    run) with 'warmup' (the warm-up's dict, or None: not measured, or no warm-up steps) and
    'stall' (metrics/stall.py judge: None, or how long the process was stopped or paused
    during the timed steps, which makes the run unclean). For that it installs a SIGCONT
    handler from `before_timed` to `after_timed` (`abort` too puts the previous one back) and
    reads the timed steps' times once the loop is done (`judged`); when it fired, one
    `warning:` line before the Host load line says what happened and what the figure
    includes (whatever TF_CNN_BUSY_HOST_WARNING says: a stop is not a busy host).

    A cluster task counts the cluster's other tasks on this host apart (begin finds their
    processes: metrics/cluster_tasks.py).

    Args:
      plan: the run_plan.RunPlan (the share is of every CPU the run may use, its intra-op
        threads named when fewer: host_load.Meter's `whole_process`; a cluster task's
        params its task addresses).
      reader: a host_load.ProcReader (a test feeds a fake /proc); default the real one.
      warn: where the warnings go (host_load_lines).
      find_cluster: () -> (pids, tasks): the cluster's other processes on this host and its
        other task addresses here (a test's seam); default cluster_processes(plan).
      quota: the container's CPU quota (hardware/cpu_quota.py Quota, or None: none); default
        read from the cgroup files. Under one the share is of min(allowed CPUs, the quota's
        whole CPUs), and the throttling over the timed part is in result['host_load']
        ['cpu_quota'] and on the line (cpu_quota.apply, line_clause).
      cgroup_read: path -> text for the quota's cpu.stat (a test's fake files).
    """

    def __init__(self, plan, *, reader=None, warn=None, find_cluster=None, quota=False,
                 cgroup_read=None):
        self.quota = cpu_quota.host_quota() if quota is False else quota
        self._cgroup_read = cgroup_read or cpu_quota.read_file
        self._throttling = None
        self.meter = host_load_lib.Meter(plan.threads[0], reader, whole_process=True,
                                         cpu_limit=self.quota and self.quota.whole_cpus)
        self.warn = warn
        self.load = None
        self.continued = stall_lib.ContinueWatch()
        self._judged = False
        self.warmup = None
        self._params = plan.params
        self._warmup_steps = plan.num_warmup_batches
        self._find_cluster = find_cluster or (lambda: cluster_processes(plan.params))
        # From the hook's making (before the graph is built) to the timed part: the interval a
        # run whose warm-up is too short (or absent) has for its allowed CPUs' busy time. A
        # cluster task's other tasks set up on this host meanwhile: not for a cluster task.
        self._setup = None
        if not getattr(plan.params, 'job_name', None):  # (a test's plan may have no flags)
            self._setup = host_load_lib.Meter(plan.threads[0], self.meter.reader,
                                              whole_process=True,
                                              cpu_limit=self.meter.cpu_limit)
            self._setup.start()

    def begin(self, ctx):
        if self._params.job_name:
            pids, tasks = self._find_cluster()
            if tasks:
                self.meter.watch_cluster(pids, tasks)
        self.meter.start()

    def before_timed(self):
        warm = self.meter.restart(host_load_lib.WARM_UP)
        if warm is None:  # no begin (a test's hook): the timed part only
            self.meter.start()
        setup = self._setup.stop() if self._setup is not None else None
        self._setup = None
        if self._warmup_steps:
            self.warmup, lines = warm, warmup_lines(warm, setup=setup)
        else:  # no warm-up steps: no interval before the timed part to measure the others over
            self.warmup, lines = None, start_lines(warm, setup)
        for text in lines:
            _warn(text, self.warn)
        self._throttling = cpu_quota.throttling(self.quota, self._cgroup_read)
        self.continued.start()

    def after_timed(self):
        self.continued.stop()
        self.load = self.meter.stop()
        if self.load is not None:
            self.load['warmup'] = warmup_subset(self.warmup)
            cpu_quota.apply(self.load, self.quota, self._throttling,
                            cpu_quota.throttling(self.quota, self._cgroup_read))

    def abort(self):
        self.continued.stop()

    def judged(self, loop) -> dict | None:
        """self.load with its 'stall' judged from `loop` (training_loop.LoopResult: its step
        times, figure and wall seconds; metrics/stall.py judge), once; None when not
        measured."""
        if self.load is not None and not self._judged:
            self._judged = True
            self.load['stall'] = None if loop.nothing_timed else stall_lib.judge(
                loop.step_times, self.continued.count, first_sets_up=not self._warmup_steps,
                host_busy=clean_runs.state(self.load).busy,
                images_per_sec=loop.images_per_sec, elapsed_secs=loop.elapsed_secs)
        return self.load

    def total_lines(self, loop) -> list[str]:
        load = self.judged(loop)
        text = stall_lib.reason((load or {}).get('stall'))
        if text:
            if self.warn is not None:
                self.warn(text)
            else:
                cnn_util.warn(text)
        return host_load_lines(load, self.warn)

    def end(self, result):
        result['host_load'] = self.load


def warmup_subset(warm: dict | None) -> dict | None:
    """The keys of the warm-up's host load kept in result['host_load']['warmup'] (None: not
    measured)."""
    if warm is None:
        return None
    return {k: warm.get(k) for k in ('wall_secs', 'load_average_before', 'others_fraction',
                                     'cluster_fraction', 'outside_fraction', 'error')}


def cluster_processes(p) -> tuple[set, int]:
    """(pids, tasks) of a cluster task's Params `p`: the processes of the cluster's other
    tasks on this host (metrics/cluster_tasks.py find: the tf_cnn_cluster launcher's
    descendants, the owners of the local task ports) and how many other task addresses of
    the cluster are on this host."""
    own = {'ps': p.ps_hosts, 'worker': p.worker_hosts,
           'controller': [p.controller_host] if p.controller_host else []}
    others = [a for job, hosts in own.items() for i, a in enumerate(hosts)
              if (job, i) != (p.job_name, p.task_index)]
    ports = cluster_tasks.local_ports(others)
    tasks = len([a for a in others if cluster_tasks.local_ports([a])])
    if not tasks:
        return set(), 0
    return cluster_tasks.find(ports, cluster_tasks.launcher_pid()), tasks


SET_UP_SPAN = ('set-up and warm-up', 'set-up')  # HostLoadHook's interval from its making


def warmup_lines(warm: dict | None, span: tuple[str, str] = ('warm-up steps', 'warm-up'),
                 figure: str = "the timed part's images/sec", setup: dict | None = None
                 ) -> list[str]:
    """The warning (without 'warning: ') when the host is already busy as the run starts:
    over the warm-up (`span`: how the interval measured is named, in full and short: an
    --eval run's is the set-up before its first batch; `figure`: what may not be
    representative), other processes (not the cluster's) used more than
    host_load.OTHERS_LIMIT of the run's cores, or steal passed STEAL_LIMIT (the timed part's
    rule, on the CPUs the run may use); when the warm-up was too short to measure, the same
    rule over `setup` (the meter's dict from before the graph was built: SET_UP_SPAN), and
    when that too was not measured (or None), the host's load average (`_load_average_lines`).
    [] otherwise."""
    if warm is None:
        return []
    if warm['representative'] is False:
        return _busy_lines(warm, span[0], figure)
    if warm['representative'] is not None:
        return []
    if setup is not None and setup['representative'] is not None:
        return _busy_lines(setup, SET_UP_SPAN[0], figure) if not setup['representative'] else []
    return _load_average_lines(warm, 'the %s was too short to measure the other processes'
                               % span[1])


def _busy_lines(load: dict, span: str, figure: str) -> list[str]:
    """'the host is busy as the run starts: other processes used 0.75 of the run's 1 core
    (75%, more than 25%) over the 3.2 s of set-up and warm-up (the host's load average 2.7);
    ...' for a measured dict that is not representative."""
    return ['the host is busy as the run starts: %s over the %.1f s of %s (the host\'s load '
            'average %s); %s may not be representative: stop it (Ctrl-C) and rerun when the '
            'host is quiet' % ('; '.join(load['reasons']), load['wall_secs'], span,
                               _fmt(load['load_average_before'], '%.1f'), figure)]


def start_lines(warm: dict | None, setup: dict | None = None) -> list[str]:
    """The warning (without 'warning: ') of a run without warm-up steps
    (--num_warmup_batches=0): other processes' share of the run's CPUs over `setup` (the
    meter's dict from before the graph was built to the timed part's start) when measured,
    as `warmup_lines` judges a warm-up; else the host's load average (`_load_average_lines`:
    `warm`, the meter's dict up to the timed part's start, read for its load average and
    CPUs only). [] otherwise."""
    if setup is not None and setup['representative'] is not None:
        return [] if setup['representative'] else _busy_lines(
            setup, SET_UP_SPAN[0], "the timed part's images/sec")
    return _load_average_lines(warm, 'with --num_warmup_batches=0 no warm-up step ran to '
                                     'measure the other processes over')


def _load_average_lines(warm: dict | None, why: str) -> list[str]:
    """'the host may be busy as the run starts: the host's load average 4.9 on its 2 CPUs
    (it counts this run's own threads too; `why`); ...' when `warm`'s load average before
    passes the host's CPUs plus the run's cores, else []. The load average is the whole
    host's: a run that may use fewer CPUs than the host has (taskset, a cpuset) gets no line
    from it, since the load may be on CPUs the run does not use (its timed part's host load
    counts its own CPUs)."""
    load = None if warm is None else warm.get('load_average_before')
    host = warm.get('host_cpus') or warm['cpus_allowed'] if warm is not None else None
    if load is None or warm['cpus_allowed'] < host or load <= host + warm['cores']:
        return []
    return ['the host may be busy as the run starts: the host\'s load average %.1f on its %d '
            'CPU%s (it counts this run\'s own threads too; %s); if the timed part\'s host load '
            'says so, stop it (Ctrl-C) and rerun when the host is quiet' % (
                load, host, '' if host == 1 else 's', why)]


def _fmt(value, pattern: str) -> str:
    return '?' if value is None else pattern % value


def warn_line(text: str, warn=None) -> None:
    """`text` (without 'warning: ') to `warn` when given, else one `warning:` line on stderr
    unless TF_CNN_BUSY_HOST_WARNING=0 (host_load.warning_enabled)."""
    _warn(text, warn)


def _warn(text: str, warn) -> None:
    if warn is not None:
        warn(text)
    elif host_load_lib.warning_enabled():
        cnn_util.warn(text)


def eval_block(plan, evaluation: dict, log: Callable[[str], None] = cnn_util.log_fn) -> dict:
    """Prints an --eval evaluation's total block, the original's dashed `total images/sec`
    block with the figures that explain it (utilisation.eval_figures) and its host load, as a
    training run's total block has them:

        ----------------------------------------------------------------
        total images/sec: 327.17
        compute images/sec: not measured (an evaluation has no warm-up step to trace)
        model FLOP/s: ...
        Host load: ...
        ----------------------------------------------------------------

    Args:
      plan: the run's run_plan.RunPlan.
      evaluation: eval_runner.Evaluator.evaluate's dict (images_per_sec, batch_times,
        host_load).
      log: where the lines go.

    Returns:
      The result's keys of its figures: 'utilisation', 'input', 'memory', 'latency_ms'.
    """
    log(training_loop.DASHES)
    log('total images/sec: %.2f' % evaluation['images_per_sec'])
    keys = utilisation.eval_figures(plan, evaluation, log=log)
    for line in host_load_lines(evaluation.get('host_load')):
        log(line)
    log(training_loop.DASHES)
    return keys


def host_load_lines(load: dict | None, warn: Callable[[str], None] | None = None) -> list[str]:
    """The 'Host load: ...' line of a host_load.measure dict ([] for None), after its
    warning: to `warn` (text without 'warning: ') when given, else one `warning:` line on
    stderr unless TF_CNN_BUSY_HOST_WARNING=0 (host_load.warning_enabled)."""
    if load is None:
        return []
    if load['warning']:
        _warn(load['warning'], warn)
    return [host_load_lib.format_line(load) + cpu_quota.line_clause(load)]


class StepBreakdownHook(run_hooks.RunHook):
    """--print_step_breakdown: traces timed step 1 and every --display_every-th timed step,
    prints one 'Step breakdown' line per traced step and their mean at the end, and adds
    result['step_breakdown'] = {'steps': [per traced step: step, wall_ms, input_ms,
    compute_ms, sync_ms, overhead_ms, transfer_bytes], 'mean': the same averaged,
    'method': one line}.

    Args:
      is_local: device name -> True for the devices whose ops count as this task's.
    """

    KEYS = ('wall_ms', 'input_ms', 'compute_ms', 'sync_ms', 'overhead_ms', 'transfer_bytes')

    def __init__(self, plan, is_local: Callable[[str], bool]):
        self.is_local = is_local
        self.records: list[dict] = []
        self._warmup = plan.num_warmup_batches
        self._every = plan.params.display_every

    def wants_trace(self, call: int) -> bool:
        step = call - self._warmup
        return step == 1 or (step > 0 and step % self._every == 0)

    def traced(self, call, wall_secs, trace):
        parts = step_breakdown.breakdown(trace.step_stats, wall_secs, self.is_local)
        parts['step'] = call - self._warmup
        self.records.append(parts)
        cnn_util.log_fn(step_breakdown.format_breakdown('step %d (traced)' % parts['step'], parts))

    def end(self, result):
        mean = {}
        if self.records:
            mean = {k: sum(r[k] for r in self.records) / len(self.records) for k in self.KEYS}
            cnn_util.log_fn(step_breakdown.format_breakdown(
                'mean of %d traced steps' % len(self.records), mean))
        result['step_breakdown'] = {
            'steps': list(self.records), 'mean': mean,
            'method': 'FULL_TRACE of timed step 1 and every --display_every-th; compute and '
                      'input: unions of this task\'s op intervals; sync: rest of the traced '
                      'span; overhead: wall - span (see step_breakdown.py)'}
