"""--baseline=RESULTS.json: this run against a stored results JSON of the same configuration.

The samples are the per-step images/sec of the stored run (its 'steps') and of this run; the
test and the rule are metrics/significance.py's: the run fails (exit status 1, after its results
are written) when it is slower by the one-sided Mann-Whitney test (p <= 0.05) and its total
images/sec is more than --fail_on_slower percent below the baseline's. A JSON of another
configuration is refused before the run starts, with one line naming the parameters that
differ; the parameters below never count (outputs, reporting, run length).

Only clean runs are judged (metrics/clean_runs.py: the timed part had the host to itself, every
planned step ran). A baseline that is not clean is refused before the run (exit status 2,
naming why); a run that is not clean is not judged and fails the gate (exit status 1: a gate
that judged nothing does not pass), its line saying why. --include_unclean_runs judges both
anyway.
"""

from __future__ import annotations

import json

from .. import cnn_util
from .. import params as params_lib
from ..runtime import file_systems
from . import clean_runs
from . import significance as regression

#: Parameters that may differ between a run and its baseline.
IGNORED_PARAMS = frozenset((
    'baseline', 'fail_on_slower', 'refresh_peak', 'benchmark_log_dir', 'plot_file',
    'train_dir', 'trace_file', 'graph_file', 'tfprof_file', 'display_every', 'num_batches',
    'num_epochs', 'num_warmup_batches', 'print_step_breakdown', 'save_model_secs',
    'save_model_steps', 'max_ckpts_to_keep', 'summary_verbosity', 'save_summaries_steps',
    'flagfile', 'list_models', 'version', 'print_graph_choices', 'include_unclean_runs'))


class BaselineError(params_lib.ParamsError):
    """The baseline file is unreadable or of another configuration (a usage error: exit 2)."""


class RegressionError(cnn_util.BenchmarkError):
    """The run is slower than its baseline beyond the noise and the tolerance."""


def load(path: str) -> dict:
    """The stored result.

    Raises:
      BaselineError: missing, not JSON, or without 'params' and 'steps'.
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
    return data


def _norm(value):
    return list(value) if isinstance(value, (list, tuple)) else value


#: Parameters renamed since a results JSON may have been written: old name -> (today's name,
#: today's value of the old one). --notf32 was a flag of its own; it is absl's negation of
#: --tf32 now (params/__init__.py), so a baseline's notf32=False is tf32=True.
RENAMED_PARAMS = {'notf32': ('tf32', lambda value: not value)}


def differing_params(stored: dict, params: dict) -> list[str]:
    """'name: A in the baseline, B here' for each parameter that differs (IGNORED_PARAMS
    excepted), in `params` order; a parameter missing on one side counts as differing. A
    baseline's parameter of an old name (RENAMED_PARAMS) is compared as today's."""
    stored = dict(stored)
    for old, (new, value_of) in RENAMED_PARAMS.items():
        if old in stored and new not in stored:
            stored[new] = value_of(stored.pop(old))
    out = []
    for name in list(params) + [n for n in stored if n not in params]:
        if name in IGNORED_PARAMS:
            continue
        a, b = _norm(stored.get(name, '(absent)')), _norm(params.get(name, '(absent)'))
        if a != b:
            out.append('%s: %r in the baseline, %r here' % (name, a, b))
    return out


def check_config(stored: dict, path: str, params) -> dict:
    """Refuses a loaded baseline (`load`) of another configuration.

    Args:
      stored: the loaded results JSON.
      path: --baseline (for the messages).
      params: the run's resolved Params.

    Returns:
      The stored result, with 'results_file' set to `path`.

    Raises:
      BaselineError: a configuration that differs (one line naming the parameters), or a
        baseline that is not clean (metrics/clean_runs.py) without --include_unclean_runs.
    """
    diff = differing_params(stored['params'], {k: _norm(v) for k, v in params._asdict().items()})
    if diff:
        raise BaselineError('--baseline=%s is a run of another configuration (%s); give a '
                            'results JSON of the same flags' % (path, '; '.join(diff)))
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


def compare(stored: dict, rates: list[float], images_per_sec: float,
            fail_pct: float, this_run: clean_runs.RunState | None = None,
            include_unclean: bool = False) -> dict:
    """This run (B) against the stored one (A).

    Args:
      stored: the baseline's result dict.
      rates: this run's per-step images/sec.
      images_per_sec: this run's total.
      fail_pct: --fail_on_slower.
      this_run: this run's clean_runs.RunState (None: clean).
      include_unclean: --include_unclean_runs: judge this run even when it is not clean.

    Returns:
      {'file', 'baseline_images_per_sec', 'images_per_sec', 'ratio', 'p_slower', 'p_faster',
       'verdict', 'reason', 'fail_on_slower_pct', 'failed', 'num_steps': [A's, B's],
       'left_out' (why this run was not judged: it is not clean; None when judged)}, and for a
      run left out 'remedy' (what makes it judgeable: a quiet host, or a timed part long enough
      to measure its host load). A run left out has verdict '?' and failed True.
    """
    a = step_rates(stored)
    a_total = float(stored.get('images_per_sec') or 0.0)
    ratio = images_per_sec / a_total if a_total else float('inf')
    why = this_run.why() if this_run is not None and not include_unclean else ''
    if why:
        return {'file': stored.get('results_file'), 'baseline_images_per_sec': a_total,
                'images_per_sec': images_per_sec, 'ratio': ratio, 'p_slower': None,
                'p_faster': None, 'verdict': '?', 'reason': 'this run is not clean: ' + why,
                'fail_on_slower_pct': fail_pct, 'failed': True,
                'num_steps': [len(a), len(rates)], 'left_out': why,
                'remedy': _remedy(this_run)}
    j = regression.judge(a, rates or [0.0], fail_pct, ratio=ratio)
    return {'file': stored.get('results_file'), 'baseline_images_per_sec': a_total,
            'images_per_sec': images_per_sec, 'ratio': j.ratio, 'p_slower': j.p_slower,
            'p_faster': j.p_faster, 'verdict': j.verdict, 'reason': j.reason,
            'fail_on_slower_pct': fail_pct, 'failed': j.failed, 'num_steps': [len(a),
                                                                             len(rates)],
            'left_out': None}


def _remedy(state: clean_runs.RunState) -> str:
    """What makes a run that was not clean judgeable: a quiet host, or (its load not
    measured) a timed part long enough to measure it."""
    if state.unmeasured and not (state.busy or state.steal):
        return 'rerun with a longer timed part (a larger --num_batches)'
    return 'rerun on a quiet host'


def format_line(c: dict) -> str:
    """'baseline: 4.25 images/sec, this run 3.61 (-15.1%, Mann-Whitney p=1.2e-05 over 20 and
    20 steps): slower, more than the 5% allowed: FAILED'."""
    change = (c['ratio'] - 1.0) * 100
    if c.get('left_out'):
        return ('baseline: %.2f images/sec, this run %.2f (%+.1f%%): not judged, this run is '
                'not clean (%s): FAILED (%s, or %s)' % (
                    c['baseline_images_per_sec'], c['images_per_sec'], change, c['left_out'],
                    c.get('remedy') or 'rerun on a quiet host', clean_runs.INCLUDE_FLAG))
    if c['verdict'] == '?':
        test = c['reason']
    else:
        test = 'Mann-Whitney p=%.2g over %d and %d steps' % (
            c['p_slower'] if c['ratio'] <= 1 else c['p_faster'], *c['num_steps'])
    tail = c['verdict']
    if c['failed']:
        tail += ', more than the %g%% allowed: FAILED' % c['fail_on_slower_pct']
    elif c['verdict'] == 'slower':
        tail += ', within the %g%% allowed' % c['fail_on_slower_pct']
    return 'baseline: %.2f images/sec, this run %.2f (%+.1f%%, %s): %s' % (
        c['baseline_images_per_sec'], c['images_per_sec'], change, test, tail)


def raise_if_failed(result: dict) -> None:
    """Raises RegressionError when result['baseline'] says the gate failed (slower, or this
    run left out unjudged)."""
    c = result.get('baseline')
    if c and c.get('left_out'):
        raise RegressionError('the --baseline gate could not judge this run: it is not clean '
                              '(%s); %s, or give %s to judge it anyway'
                              % (c['left_out'], c.get('remedy') or 'rerun on a quiet host',
                                 clean_runs.INCLUDE_FLAG))
    if c and c.get('failed'):
        raise RegressionError('slower than the baseline %s: %.2f images/sec against %.2f '
                              '(%+.1f%%, more than --fail_on_slower=%g%% and beyond the noise)'
                              % (c.get('file') or '', c['images_per_sec'],
                                 c['baseline_images_per_sec'], (c['ratio'] - 1) * 100,
                                 c['fail_on_slower_pct']))
