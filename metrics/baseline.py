"""--baseline=RESULTS.json: this run against a stored results JSON of the same configuration.

The samples are the per-step images/sec of the stored run (its 'steps') and of this run; the
test and the rule are metrics/significance.py's: the run fails (exit status 1, after its results
are written) when it is slower by the one-sided Mann-Whitney test (p <= 0.05) and its total
images/sec is more than --fail_on_slower percent below the baseline's. A JSON of another
configuration (metrics/configuration.py: model, mode, precision, batch size per device, devices,
workers, --variable_update, device, data, image size, and the count of CPUs the run may use
where the baseline recorded it; the rule of every gate) is refused before the run starts, with
one line naming the parts that differ (a run pinned to 1 CPU against a baseline that had 2 is
not a regression of the code: another configuration of the host, known before the run, so
refused as the others are, not judged after it); any other flag (threads, layout,
XLA, ...) and the environment may differ, and the gate's line names what changed
('--num_intra_threads None -> 1'), as `tf_cnn_results regressions` and `tf_cnn_sweep compare`
do.

Only clean runs are judged (metrics/clean_runs.py: the timed part had the host to itself, every
planned step ran). A baseline that is not clean is refused before the run (exit status 2,
naming why; before TensorFlow loads for a local file: preflight/usage.py check_extras); a run
that is not clean is not judged: exit status 3 (significance.NOT_JUDGED: no verdict is neither
a pass nor a regression), its line saying why. --include_unclean_runs judges both anyway.

A pass needs a test that could have failed the run: the gate passes only when a run whose
every step were --fail_on_slower percent below the baseline's median step would have been
called slower (significance.p_at_slowdown <= 0.05; with --fail_on_slower=0, any slowdown: the
test's smallest p with these counts). A run with fewer steps (against a baseline of few or
widely spread steps) is not judged, exit status 3, its line naming the --num_batches that
would judge it (significance.samples_to_detect); a run the test found slower beyond the
tolerance fails however few its steps.
"""

from __future__ import annotations

import json

from .. import cnn_util
from .. import params as params_lib
from ..hardware import cpu_quota
from ..runtime import file_systems
from . import clean_runs, configuration, host_load, result_rates
from . import significance as regression


class BaselineError(params_lib.ParamsError):
    """The baseline file is unreadable or of another configuration (a usage error: exit 2)."""


class RegressionError(cnn_util.BenchmarkError):
    """The run is slower than its baseline beyond the noise and the tolerance (exit status 1)."""

    exit_status = regression.REGRESSION


class NotJudgedError(cnn_util.BenchmarkError):
    """The gate could not judge this run (not clean, or too few steps for the test to catch a
    slowdown of --fail_on_slower): exit status 3 (significance.NOT_JUDGED), neither a pass
    nor a regression."""

    exit_status = regression.NOT_JUDGED


def load(path: str) -> dict:
    """The stored result.

    Raises:
      BaselineError: missing, not JSON, without 'params' and 'steps', of a newer results
        format than this version reads (configuration.newer_format), or with images/sec
        figures that are no positive numbers or contradict each other (a total above what
        its steps allow: metrics/result_rates.py, the rule `tf_cnn_results ingest` applies).
    """
    try:
        with file_systems.open_file(path, 'r') as f:  # local, or remote (gs://: TensorFlow)
            data = json.load(f)
    except OSError as e:
        raise BaselineError('--baseline=%s: cannot read it (%s); give a results JSON written '
                            'by --benchmark_log_dir' % (path, e.strerror or e)) from None
    except ValueError:
        raise BaselineError('--baseline=%s: not a JSON file; give a results JSON written by '
                            '--benchmark_log_dir' % path) from None
    if not isinstance(data, dict) or not isinstance(data.get('params'), dict) or not data.get(
            'steps'):
        raise BaselineError('--baseline=%s: not a results JSON of a training or forward-only '
                            'run (no params or no steps); give one written by '
                            '--benchmark_log_dir' % path)
    newer = configuration.newer_format(data)  # its fields may mean other things here
    if newer:
        raise BaselineError('--baseline=%s: %s' % (path, newer))
    wrong = result_rates.problem(data)
    if wrong:
        raise BaselineError('--baseline=%s: %s; give a results JSON written by '
                            '--benchmark_log_dir, unedited' % (path, wrong))
    return data


#: What the refusal of a baseline of another allowed-CPU count adds to its list of parts.
CPUS_HINT = (', run on as many allowed CPUs (taskset, numactl and a container\'s cpuset set '
             'them: the run and its baseline must agree)')


def run_cpus() -> int | float:
    """The CPUs this process may run on (metrics/host_load.py allowed_cpus: what its results
    JSON records as host_load's 'cpus_allowed'), no more than a container's CPU quota
    (hardware/cpu_quota.cpus_figure), this run's part CPUS_FIELD
    (configuration.cpus_of reads a result's the same way)."""
    quota = cpu_quota.host_quota()
    return cpu_quota.cpus_figure(len(host_load.allowed_cpus()),
                                 quota.cpus if quota is not None else None)


def _norm(value):
    return list(value) if isinstance(value, (list, tuple)) else value


#: Parameters renamed since a results JSON may have been written: old name -> (today's name,
#: today's value of the old one). --notf32 was a flag of its own; it is absl's negation of
#: --tf32 now (params/__init__.py), so a baseline's notf32=False is tf32=True.
RENAMED_PARAMS = {'notf32': ('tf32', lambda value: not value)}


def _renamed(stored: dict) -> dict:
    """A baseline's params with those of an old name (RENAMED_PARAMS) under today's."""
    stored = dict(stored)
    for old, (new, value_of) in RENAMED_PARAMS.items():
        if old in stored and new not in stored:
            stored[new] = value_of(stored.pop(old))
    return stored


def _stored_params(stored: dict) -> dict:
    """A baseline result's params by today's names: its flags of an old name (`_renamed`), and
    a renamed model's name in a result of format 1 as the network it ran ('mobilenet' ->
    'mobilenet_v1': metrics/configuration.py stored_model)."""
    params = _renamed(stored['params'])
    if 'model' in params:
        params['model'] = configuration.stored_model(params['model'],
                                                     configuration.format_of(stored))
    return params


def changed_flags(stored: dict, params: dict) -> list[str]:
    """'--num_intra_threads None -> 1' for each flag of this run (`params`) that differs from
    the baseline's (`stored`), the flags that name or place a run left out
    (metrics/configuration.py changed_flags); a baseline's flag of an old name is compared as
    today's."""
    return configuration.changed_flags(_renamed(stored), {k: _norm(v) for k, v in params.items()})


def check_config(stored: dict, path: str, params, this_config: dict | None = None) -> dict:
    """Refuses a loaded baseline (`load`) of another configuration (metrics/configuration.py).

    Args:
      stored: the loaded results JSON.
      path: --baseline (for the messages).
      params: the run's resolved Params.
      this_config: the run's configuration (configuration.of_result of its plan's values:
        devices, workers, dataset; and its allowed CPUs, 'cpus_allowed'), or the parts of it
        known so far (before TensorFlow loads: preflight/usage.py known_configuration): only
        the parts it has are compared (the allowed CPUs only where the baseline recorded
        them too); default: configuration.of_params of `params`.

    Returns:
      The stored result, with 'results_file' set to `path`.

    Raises:
      BaselineError: a configuration that differs (one line naming its parts), or a baseline
        that is not clean (metrics/clean_runs.py) without --include_unclean_runs.
    """
    mine = this_config or configuration.of_params(params._asdict())
    theirs = configuration.of_stored_result(dict(stored, params=_renamed(stored['params'])))
    diff = configuration.differences(theirs, mine, 'in the baseline', 'here', [
        name for name in configuration.CONFIG_FIELDS if name in mine])
    cpus = configuration.cpus_differ(theirs, mine)
    if cpus:
        diff += configuration.differences(theirs, mine, 'in the baseline', 'here',
                                          [configuration.CPUS_FIELD])
    if diff:
        raise BaselineError('--baseline=%s is a run of another configuration (%s); give a '
                            'results JSON of the same model, mode, precision, batch size, '
                            'devices, workers, --variable_update, device, data and image size%s '
                            '(other flags may differ: the baseline line names them)'
                            % (path, '; '.join(diff), CPUS_HINT if cpus else ''))
    why = clean_runs.of_result(stored).why()
    if why and not getattr(params, 'include_unclean_runs', False):
        raise BaselineError('--baseline=%s is not a clean run (%s); give the results JSON of a '
                            'run on a quiet host that ran all its steps (with a timed part long '
                            'enough to measure its host load), or %s to judge against it anyway'
                            % (path, why, clean_runs.INCLUDE_FLAG))
    stored['results_file'] = path
    return stored


def step_rates(result: dict) -> list[float]:
    """The per-step images/sec of a result ('steps' records)."""
    return [float(s['images_per_sec']) for s in result.get('steps') or []
            if s.get('images_per_sec')]


def what_changed(stored: dict, params: dict, environment: dict | None) -> list[str]:
    """What changed since the baseline (metrics/configuration.py changes): its environment
    (when the baseline recorded one), then its flags ('--num_intra_threads None -> 1').

    Args:
      stored: the baseline's result dict.
      params: this run's resolved flag values {name: value}.
      environment: this run's environment (hardware/machine.py environment()), or None.
    """
    theirs = stored.get('environment')
    if not isinstance(theirs, dict) or not isinstance(environment, dict):
        theirs = environment = {}
    return configuration.changes(theirs, environment, _stored_params(stored),
                                 {k: _norm(v) for k, v in params.items()})


def compare(stored: dict, rates: list[float], images_per_sec: float,
            fail_pct: float, this_run: clean_runs.RunState | None = None,
            include_unclean: bool = False, changes: list[str] = ()) -> dict:
    """This run (B) against the stored one (A).

    Args:
      stored: the baseline's result dict.
      rates: this run's per-step images/sec.
      images_per_sec: this run's total.
      fail_pct: --fail_on_slower.
      this_run: this run's clean_runs.RunState (None: clean).
      include_unclean: --include_unclean_runs: judge this run even when it is not clean.
      changes: what changed since the baseline (`what_changed`).

    Returns:
      {'file', 'baseline_images_per_sec', 'images_per_sec', 'ratio', 'p_slower', 'p_faster',
       'verdict', 'reason', 'fail_on_slower_pct', 'failed' (slower beyond the tolerance: the
       gate failed, exit status 1), 'judged' (False: this run left out, or too few steps for
       the test to catch a slowdown of fail_pct: exit status 3), 'num_steps': [A's, B's],
       'p_at_threshold' (significance.p_at_slowdown of B's steps at fail_pct, computed for a
       verdict that did not fail; else None), 'steps_needed' (for a run with too few steps for
       that: the --num_batches that would judge it, significance.samples_to_detect; None when
       none would or when judged), 'left_out' (why this run was not judged: it is not clean;
       None when judged), 'changes'}, and for a run left out 'remedy'
      (what makes it judgeable: a quiet host, or a timed part long enough to measure its host
      load). A run left out has verdict '?'.
    """
    a = step_rates(stored)
    a_total = float(stored.get('images_per_sec') or 0.0)
    ratio = images_per_sec / a_total if a_total else float('inf')
    why = this_run.why() if this_run is not None and not include_unclean else ''
    if why:
        return {'file': stored.get('results_file'), 'baseline_images_per_sec': a_total,
                'images_per_sec': images_per_sec, 'ratio': ratio, 'p_slower': None,
                'p_faster': None, 'verdict': '?', 'reason': 'this run is not clean: ' + why,
                'fail_on_slower_pct': fail_pct, 'failed': False, 'judged': False,
                'num_steps': [len(a), len(rates)], 'left_out': why, 'changes': list(changes),
                'remedy': _remedy(this_run), 'p_at_threshold': None, 'steps_needed': None}
    j = regression.judge(a, rates or [0.0], fail_pct, ratio=ratio)
    c = {'file': stored.get('results_file'), 'baseline_images_per_sec': a_total,
         'images_per_sec': images_per_sec, 'ratio': j.ratio, 'p_slower': j.p_slower,
         'p_faster': j.p_faster, 'verdict': j.verdict, 'reason': j.reason,
         'fail_on_slower_pct': fail_pct, 'failed': j.failed, 'judged': j.verdict != '?',
         'num_steps': [len(a), len(rates)], 'left_out': None, 'changes': list(changes),
         'p_at_threshold': None, 'steps_needed': None}
    if j.verdict != '?' and not j.failed and rates:
        # A pass needs a test that could have caught a slowdown of the gate's own size.
        c['p_at_threshold'] = regression.p_at_slowdown(a, len(rates), fail_pct)
        if c['p_at_threshold'] > regression.ALPHA:
            c['steps_needed'] = regression.samples_to_detect(a, len(rates), fail_pct)
            c['judged'] = False
            c['reason'] = _undetectable(c)
    return c


def _slowdown(fail_pct: float) -> str:
    """'a 5% slowdown', or 'any slowdown' for --fail_on_slower=0."""
    return 'a %g%% slowdown' % fail_pct if fail_pct else 'any slowdown'


def _undetectable(c: dict) -> str:
    """Why a run the test could not have caught slower by --fail_on_slower is not judged, and
    what would let it judge (`compare`'s 'reason'), e.g. 'with 2 steps here against 40 in the
    baseline the test could not have caught a 5% slowdown (--fail_on_slower): every step 5%
    below the baseline's median step would give p=0.3, above 0.05; --num_batches=32 gives it
    its steps'."""
    n_a, n_b = c['num_steps']
    pct = c['fail_on_slower_pct']
    where = ('every step %g%% below the baseline\'s median step' % pct if pct
             else 'every step below the baseline\'s slowest')
    if c['steps_needed'] is None:
        fix = ('no --num_batches here can against the baseline\'s %d steps (too few, or spread '
               'wider than %g%%): record a longer baseline on a quiet host, or give a larger '
               '--fail_on_slower' % (n_a, pct))
    else:
        fix = '--num_batches=%d gives it its steps' % c['steps_needed']
    return ('with %s here against %d in the baseline the test could not have caught %s '
            '(--fail_on_slower): %s would give p=%.2g, above %g; %s' % (
                cnn_util.counted(n_b, 'step'), n_a, _slowdown(pct), where, c['p_at_threshold'],
                regression.ALPHA, fix))


def exit_status(c: dict | None) -> int:
    """The gate's exit status (significance.PASSED, REGRESSION or NOT_JUDGED) of a `compare`
    result; PASSED without one (no --baseline)."""
    if not c:
        return regression.PASSED
    if c.get('failed'):
        return regression.REGRESSION
    if c.get('left_out') or c.get('judged') is False:
        return regression.NOT_JUDGED
    return regression.PASSED


def _remedy(state: clean_runs.RunState) -> str:
    """What makes a run that was not clean judgeable: a quiet host, (its load not
    measured) a timed part long enough to measure it, or (stopped or paused) a run left to
    run."""
    if state.unmeasured and not (state.busy or state.steal):
        return 'rerun with a longer timed part (a larger --num_batches)'
    if state.stalled and not (state.busy or state.steal):
        return 'rerun without stopping or pausing it'
    return 'rerun on a quiet host'


def format_line(c: dict) -> str:
    """'baseline: 4.25 images/sec, this run 3.61 (-15.1%, Mann-Whitney p=1.2e-05 over 20 and
    20 steps): slower, more than the 5% allowed: FAILED', then '; what changed: ...' when
    something did."""
    change = (c['ratio'] - 1.0) * 100
    changed = ('; what changed: %s' % '; '.join(c['changes'])) if c.get('changes') else ''
    if c.get('left_out'):
        return ('baseline: %.2f images/sec, this run %.2f (%+.1f%%): not judged, this run is '
                'not clean (%s): NOT JUDGED (%s, or %s)%s' % (
                    c['baseline_images_per_sec'], c['images_per_sec'], change, c['left_out'],
                    c.get('remedy') or 'rerun on a quiet host', clean_runs.INCLUDE_FLAG,
                    changed))
    if c['verdict'] == '?':
        return ('baseline: %.2f images/sec, this run %.2f (%+.1f%%, %s): NOT JUDGED (a larger '
                '--num_batches gives the test its steps)%s' % (
                    c['baseline_images_per_sec'], c['images_per_sec'], change, c['reason'],
                    changed))
    test = 'Mann-Whitney p=%.2g over %d and %d steps' % (
        c['p_slower'] if c['ratio'] <= 1 else c['p_faster'], *c['num_steps'])
    if c.get('judged') is False:  # the test could not have caught a slowdown of the gate's
        return ('baseline: %.2f images/sec, this run %.2f (%+.1f%%, %s): %s, but NOT JUDGED: '
                '%s%s' % (c['baseline_images_per_sec'], c['images_per_sec'], change, test,
                            c['verdict'], c['reason'], changed))
    tail = c['verdict']
    if c['failed']:
        tail += ', more than the %g%% allowed: FAILED' % c['fail_on_slower_pct']
    elif c['verdict'] == 'slower':
        tail += ', within the %g%% allowed' % c['fail_on_slower_pct']
    return 'baseline: %.2f images/sec, this run %.2f (%+.1f%%, %s): %s%s' % (
        c['baseline_images_per_sec'], c['images_per_sec'], change, test, tail, changed)


def raise_if_failed(result: dict) -> None:
    """Raises RegressionError when result['baseline'] says the run is slower beyond the
    tolerance (exit status 1), NotJudgedError when the gate could not judge it (this run not
    clean, or too few steps for the test to catch a slowdown of --fail_on_slower: exit status
    3)."""
    c = result.get('baseline')
    status = exit_status(c)
    if status == regression.NOT_JUDGED and c.get('left_out'):
        raise NotJudgedError('the --baseline gate could not judge this run: it is not clean '
                             '(%s); %s, or give %s to judge it anyway'
                             % (c['left_out'], c.get('remedy') or 'rerun on a quiet host',
                                clean_runs.INCLUDE_FLAG))
    if status == regression.NOT_JUDGED and c.get('verdict') != '?':
        raise NotJudgedError('the --baseline gate could not judge this run: %s' % c['reason'])
    if status == regression.NOT_JUDGED:
        raise NotJudgedError('the --baseline gate could not judge this run: %s; a larger '
                             '--num_batches (here or in the baseline) gives the test its steps'
                             % c['reason'])
    if status == regression.REGRESSION:
        raise RegressionError('slower than the baseline %s: %.2f images/sec against %.2f '
                              '(%+.1f%%, more than --fail_on_slower=%g%% and beyond the noise)'
                              % (c.get('file') or '', c['images_per_sec'],
                                 c['baseline_images_per_sec'], (c['ratio'] - 1) * 100,
                                 c['fail_on_slower_pct']))
