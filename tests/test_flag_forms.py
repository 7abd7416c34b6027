"""One flag grammar across the tools, where a CI engineer's trial found them differing:
booleans (`--NAME=true`, `--noNAME`) in `tf_cnn_results` and `tf_cnn_sweep compare` as on a
run (tools/command_parser.py), compare's `--fail_on_slower 10` (space form), one tolerance
rule for every --fail_on_slower (params/gate_tolerance.py), `--results_db=` and
`--results_db=false` in tf_cnn_results, TF_CNN_RESULTS_DB=false as `--results_db=false`
(history/store.py), and a leading `~` in a path flag's value (hardware/user_dirs.expand_home).
"""

from __future__ import annotations

import json
import os

import pytest
from test_sweep import _parsed, _records

from tf_cnn_benchmarks import flag_parsing, params
from tf_cnn_benchmarks.history import store
from tf_cnn_benchmarks.tools import launch_cluster
from tf_cnn_benchmarks.tools.sweep import cli as sweep

import results_helpers as rh

_main = rh.results_command


@pytest.fixture
def db(tmp_path):
    path = str(tmp_path / 'results.sqlite')
    rh.fill(path, rh.series([1000, 1010, 990, 1005, 995, 1002]))
    return path


# --- Booleans.

@pytest.mark.parametrize('args, lines', [
    (['list', '--json=true'], 6), (['list', '--json', '--nojson'], 10),
    (['list', '--json=false'], 10), (['list', '--nojson', '--json=1'], 6)])
def test_results_booleans_take_the_forms_a_run_takes(db, capsys, args, lines):
    # Before: --json=true "ignored explicit argument 'true'", --nojson unrecognized (exit 2).
    status, out, err = _main(capsys, *args, '--results_db=%s' % db)
    assert (status, err) == (0, '') and len(out.splitlines()) == lines


def test_the_regressions_gate_flags_take_every_form(db, capsys):
    status, out, _ = _main(capsys, 'regressions', '--fail_on_regression=true',
                           '--include_unclean_runs=false', '--json=t', '--results_db=%s' % db)
    assert status == 0 and json.loads(out)['gate']['verdict'] == 'passed'
    status, out, _ = _main(capsys, 'regressions', '--fail_on_regression',
                           '--nofail_on_regression', '--results_db=%s' % db)
    assert status == 0 and 'gate:' not in out
    status, out, err = _main(capsys, 'regressions', '--json=yes', '--results_db=%s' % db)
    assert status == 2 and err == ('error: --json=yes: a boolean flag takes true or false (also '
                                   '--json, --nojson) (see tf_cnn_results --help)\n')
    assert json.loads(out)['exit_status'] == 2  # the refusal's object: --json was asked for
    status, out, err = _main(capsys, 'list', '--nojson=1', '--results_db=%s' % db)
    assert (status, out) == (2, '') and err.startswith(
        'error: --nojson=1: --nojson takes no value; write --nojson or --json=false')


def _sweeps(tmp_path):
    a = rh.sweep_folder(str(tmp_path / 'a'), _records('trivial', 8, 1, [100.0, 101.0, 99.0]))
    b = rh.sweep_folder(str(tmp_path / 'b'), _records('trivial', 8, 1, [50.0, 51.0, 49.0]))
    return a, b


def test_compare_takes_the_space_form_and_boolean_forms(tmp_path, capsys):
    a, b = _sweeps(tmp_path)
    # Before: 'error: --fail_on_slower=: takes a number (percent)', exit 2.
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--fail_on_slower', '10']) == 1
    assert 'gate: FAILED: 1 of 1 configuration slower than A by more than 10%' in (
        capsys.readouterr().out)
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--fail_on_slower', '60',
                       '--json=true', '--include_unclean_runs=false', '--noallow_unjudged']) == 0
    out = json.loads(capsys.readouterr().out)
    assert out['fail_on_slower_pct'] == 60 and out['exit_status'] == 0
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--json', '--nojson']) == 0
    assert not capsys.readouterr().out.startswith('{')  # the text: --nojson came last
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--fail_on_slower']) == 2
    assert capsys.readouterr().err.startswith(
        'error: --fail_on_slower needs a number (percent) after it or after =, e.g. '
        '--fail_on_slower=5. usage:')
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--fail_on_slower', '--json']) == 2
    assert capsys.readouterr().err.startswith(
        'error: --fail_on_slower needs a number (percent) after it or after =, e.g. '
        '--fail_on_slower=5; the next argument is --json. usage:')
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--json=maybe']) == 2
    assert capsys.readouterr().err.startswith(
        'error: --json=maybe: a boolean flag takes true or false (also --json, --nojson)')


# --- One tolerance rule: compare and a run's --baseline.

@pytest.mark.parametrize('value', ['100', '150', '-1'])
def test_fail_on_slower_has_one_rule_for_compare_and_a_run(tmp_path, capsys, value):
    # Before: compare refused 100 ("the gate could never fail"), a run took 100 and 150.
    a, b = _sweeps(tmp_path)
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--fail_on_slower=' + value]) == 2
    said = capsys.readouterr().err.split('. usage:')[0]
    expected = ('error: --fail_on_slower=%s: must be >= 0 and below 100 (percent slower '
                'allowed; a run cannot be 100%% slower, so the gate could never fail)' % value)
    assert said == expected
    p = flag_parsing.parse_flags(['tf_cnn_benchmarks', '--fail_on_slower=' + value])
    with pytest.raises(params.ParamsError) as raised:
        params.validate_params(p)
    assert 'error: %s' % raised.value == expected
    params.validate_params(flag_parsing.parse_flags(['x', '--fail_on_slower=99.5']))


# --- No number flag of the tools takes nan or an infinity (params/gate_tolerance.not_finite).

@pytest.mark.parametrize('text, shown', [('nan', 'nan'), ('inf', 'inf'), ('-inf', '-inf'),
                                         ('1e400', '1e400 (read as inf)')])
def test_a_number_flag_of_the_tools_takes_a_finite_number(tmp_path, db, capsys, text, shown):
    # Before: --min_change=nan and =inf said 'must be >= 0 and below 100' (nan fails every
    # comparison, so the range rule caught it for the wrong reason); compare's
    # --fail_on_slower=nan the same; the sweep's --run_timeout_secs=inf and the launcher's
    # --timeout_secs=inf and --kill_grace_secs=inf were taken (a limit that never came).
    for command in ('regressions', 'history', 'html'):
        args = [command] + ([str(tmp_path / 'site')] if command == 'html' else [])
        status, out, err = _main(capsys, *args, '--min_change=' + text, '--results_db=' + db)
        assert (status, out) == (2, '') and err == (
            'error: argument --min_change: takes a finite number (percent, >= 0 and below '
            '100), e.g. 5; %s is none (see tf_cnn_results %s --help)\n' % (shown, command))
    a, b = _sweeps(tmp_path)
    assert sweep.main(['tf_cnn_sweep', 'compare', a, b, '--fail_on_slower=' + text]) == 2
    assert capsys.readouterr().err.split('. usage:')[0] == (
        'error: --fail_on_slower=%s: takes a finite number (percent slower allowed, >= 0 and '
        'below 100), e.g. 5; %s is none' % (text, shown))
    value = '%r' % float(text)
    output = str(tmp_path / 'sweep')
    assert sweep.main(['tf_cnn_sweep', '--output_dir=' + output, '--models=trivial',
                       '--batch_sizes=8', '--run_timeout_secs=' + text]) == 2
    assert capsys.readouterr().err == (
        'error: --run_timeout_secs=%s: takes a finite number (seconds, 0: no limit), e.g. '
        '600; %s is none\n' % (value, value))
    assert not os.path.exists(output)  # refused before any run
    for flag, what, example in (('timeout_secs', 'seconds, 0: no limit', '600'),
                                ('kill_grace_secs', 'seconds', '5')):
        assert launch_cluster.main(['--%s=%s' % (flag, text), '--', '--model=trivial']) == 2
        assert capsys.readouterr().err == (
            'error: --%s=%s: takes a finite number (%s), e.g. %s; %s is none\n'
            % (flag, value, what, example, value))


def test_an_age_before_year_1_is_a_usage_error(db, capsys):
    # Before: OverflowError's traceback from datetime.timedelta.
    status, out, err = _main(capsys, 'list', '--since=99999999999w', '--results_db=' + db)
    assert (status, out) == (2, '') and err == (
        'error: --since=99999999999w: an age reaching back before year 1; give a smaller one '
        '(12h, 7d, 2w) or a date\n')


# --- The results database's path.

@pytest.mark.parametrize('value, said', [
    ('', "error: --results_db= names no file (an unset shell variable?); give "
         '--results_db=PATH, or leave the flag out for the default database ('),
    ('false', 'error: --results_db=false names no database (on a run it records nothing); '
              'give --results_db=PATH (./false for a file of that name)\n')])
def test_a_results_db_that_names_no_file_is_a_usage_error(db, capsys, value, said):
    # Before: `--results_db=` exit 4, 'error: no results database at  (runs record there ...'.
    for command in (['list'], ['regressions', '--fail_on_regression']):
        status, out, err = _main(capsys, *command, '--results_db=' + value)
        assert (status, out) == (2, '') and err.startswith(said) and err.count('\n') == 1


def test_the_variable_reads_false_as_the_flag_does(db, capsys, monkeypatch, tmp_path):
    # Before: TF_CNN_RESULTS_DB=false made a database named 'false' in the working folder.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv('TF_CNN_RESULTS_DB', 'False')
    assert store.resolve_path(None) is None and store.run_path(None) is None
    assert store.resolve_path('/x/r.sqlite') == '/x/r.sqlite'  # the flag wins
    status, out, err = _main(capsys, 'list')
    assert (status, out) == (2, '') and err == (
        'error: $TF_CNN_RESULTS_DB=False turns the results database off (runs record nothing), '
        'so there is none to read; give --results_db=PATH, or unset TF_CNN_RESULTS_DB for the '
        'default one\n')
    status, out, _ = _main(capsys, 'list', '--results_db=%s' % db)
    assert status == 0 and out.splitlines()[-1] == '6 runs, 1 configuration.'
    monkeypatch.setenv('TF_CNN_RESULTS_DB', 'true')  # the default place, as --results_db=true
    assert store.resolve_path(None) == os.path.join(store.data_folder(), 'results.sqlite')
    assert not os.path.exists(tmp_path / 'false') and not os.path.exists(tmp_path / 'true')


# --- `~` in a path flag's value (the shell leaves it after '=').

def test_a_leading_tilde_is_the_home_folder_in_every_tools_path_flags(db, capsys, tmp_path,
                                                                       monkeypatch):
    # Before: --results_db=~/y.sqlite made a folder './~' (TF_CNN_RESULTS_DB='~/x' expanded).
    home = tmp_path / 'home'
    home.mkdir()
    os.rename(db, home / 'r.sqlite')
    monkeypatch.setenv('HOME', str(home))
    monkeypatch.chdir(tmp_path)
    status, out, _ = _main(capsys, 'list', '--results_db=~/r.sqlite')
    assert status == 0 and out.splitlines()[-1] == '6 runs, 1 configuration.'
    status, out, _ = _main(capsys, 'history', '--results_db=~/r.sqlite', '--png=~/h.png')
    assert status == 0 and (home / 'h.png').exists()
    p = flag_parsing.parse_flags(['tf_cnn_benchmarks', '--results_db=~/r.sqlite',
                                  '--train_dir=~/t', '--benchmark_log_dir=logs',
                                  '--data_dir=gs://b/~x'])
    assert (p.results_db, p.train_dir) == (str(home / 'r.sqlite'), str(home / 't'))
    assert (p.benchmark_log_dir, p.data_dir) == ('logs', 'gs://b/~x')
    assert store.resolve_path('~/r.sqlite') == str(home / 'r.sqlite')
    plan = sweep.build_plan(_parsed(['--models=trivial', '--batch_sizes=8',
                                     '--output_dir=~/runs']), ['--device=cpu'])
    assert plan['output_dir'] == str(home / 'runs')
    opts, _ = launch_cluster.parse_args(['--log_dir=~/logs', '--', '--model=trivial'])
    assert opts.log_dir == str(home / 'logs')
    assert not os.path.exists(tmp_path / '~')
