"""A benchmark campaign in one command: tf_cnn_benchmarks over models, batch sizes, devices,
precisions and variable updates, with a results file, a markdown report, plots and comparisons.

    tf_cnn_sweep --output_dir=runs/a --models=resnet50,alexnet --batch_sizes=16,32 \\
        --num_gpus=1,2 --precisions=fp32,bf16 --repeats=3 -- --num_batches=50
    tf_cnn_sweep --sweep_file=sweep.yaml          # the same axes in a YAML file
    tf_cnn_sweep report runs/a                    # rewrite report.md and the plots
    tf_cnn_sweep compare runs/a runs/b            # B/A per configuration, with the noise
    tf_cnn_sweep compare runs/a runs/b --fail_on_slower=10   # the same as a CI gate

(`python -m tools.sweep ...` from a checkout.) Flags after `--`, and flags this command does not
know, are passed to every run. Each configuration (and each repeat) runs as a fresh
tf_cnn_benchmarks process; the order is repeat 1 of every configuration, then repeat 2, ...
(drift spreads over the configurations, and an early stop leaves a full table). Repeats are
numbered from 1 on screen and in report.md; the results file's `repeat` and the run folders'
`-rN` count from 0 (-r0 is repeat 1). Each run's
record is appended to <output_dir>/results.jsonl as soon as it ends; its logs and results JSON
stay in <output_dir>/runs/<configuration>/. A failed run is recorded and the sweep goes on.
Ctrl-C (or SIGTERM, or SIGHUP) stops the current run, records it as interrupted (unless it had
finished its timed steps: then ok), writes the report and exits 130 (143 for SIGTERM, 129 for
SIGHUP). --run_timeout_secs stops a run (SIGTERM, SIGKILL 10 s later):
one that saved its result is recorded as stopped, with its figures and where it stopped (as
the results database has it), one that saved nothing as failed. Running the same command
again resumes: configurations whose record says ok, failed or stopped are skipped
(--retry_failed reruns the failed and stopped ones). At the end
<output_dir>/report.md and the PNG plots are written and the report is printed.

compare prints B/A per configuration present in both sweeps with each side's noise (± half the
range of its repeats) and a one-sided Mann-Whitney test over the repeats: "slower"/"faster" at
p <= 0.05, "same" otherwise, "?" with the reason when there are too few repeats for the test
(3 per side needed). `compare A B --fail_on_slower=PCT` is a regression gate: exit 1 when a
configuration is slower by the test and by more than PCT percent, 3 when it could not judge a
configuration both ran (named, with its runs per side; --allow_unjudged passes on the judged
ones) (tools/sweep/gate.py); --json prints one JSON object. Runs
that shared the host or stopped before their planned steps are left out of both, with a line
saying how many and why (metrics/clean_runs.py); --include_unclean_runs keeps them.

Sweep file (YAML): the keys models, batch_sizes, num_gpus, precisions, variable_updates
(lists), repeats, output_dir, and flags (passed to every run: a mapping {name: value} or a list
of '--name=value'); flags given on the command line win over the file.

Exit status: 0 when every configuration succeeded, 1 when some failed (or --output_dir is in use
by another sweep, as a held --train_dir of a run), 2 for bad flags (a model name the model
catalog does not know included: checked before any run) or a bad sweep file, 130/143/129 when
interrupted.
"""

from __future__ import annotations

import os
import sys

from absl import flags

from tf_cnn_benchmarks import cnn_util, console
from tf_cnn_benchmarks.hardware import user_dirs

from .. import command_parser
from . import compare, disk, file, publish, report, results
from . import progress as progress_lib
from . import runner as runner_lib
from .reserved import CONFIG_AXES, RESERVED, flag_name, reserved_flag  # noqa: F401

PRECISIONS = tuple(runner_lib.PRECISION_FLAGS)
# The sweep's path flags, whose leading `~` is the home folder (user_dirs.expand_home), as
# it is in the flags for every run (flag_parsing.home_expanded).
HOME_PATH_FLAGS = ('output_dir', 'sweep_file', 'publish_dir')


class SweepError(Exception):
    """Bad flags or sweep file: one `error:` line, exit status 2 (`exit_status`)."""

    exit_status = 2


class SweepBusy(SweepError):
    """--output_dir is held by another sweep or a run of one: exit status 1, as a run's held
    --train_dir (runtime/dir_hold.py): the path is good, only in use now."""

    exit_status = 1


def define_flags(fv: flags.FlagValues) -> None:
    def d_list(name, default, text):
        flags.DEFINE_list(name, default, text, flag_values=fv)

    d_list('models', None, 'Models to run, e.g. resnet50,alexnet (required here or in the file).')
    d_list('batch_sizes', None, 'Batch sizes per device, e.g. 16,32 (required here or in the '
                                'file).')
    d_list('num_gpus', ['1'], 'Device counts (towers), e.g. 1,2,4,8; with --device=cpu these are '
                              'logical CPU devices.')
    d_list('precisions', ['fp32'], 'Precisions: fp32, fp16 (--use_fp16), bf16 (--use_bf16).')
    d_list('variable_updates', ['parameter_server'], 'Values of --variable_update.')
    flags.DEFINE_integer('repeats', 3, 'Runs of each configuration (>= 2 gives a noise '
                                       'estimate, >= 3 a compare verdict).', flag_values=fv)
    flags.DEFINE_string('output_dir', None, 'Folder of results.jsonl, runs/, report.md and the '
                                            'plots (required here or in the file).', flag_values=fv)
    flags.DEFINE_string('sweep_file', None, 'YAML file with the axes (see above).', flag_values=fv)
    flags.DEFINE_string('config', None, 'A named configuration (configs/NAME.flags, as '
                        'tf_cnn_benchmarks --config): its model, batch size, GPUs, variable '
                        'update and precision are the axes\' defaults, its other flags go to '
                        'every run.', flag_values=fv)
    flags.DEFINE_boolean('retry_failed', False, 'On resume, also rerun configurations that '
                                                'failed or were stopped at --run_timeout_secs.',
                         flag_values=fv)
    flags.DEFINE_float('run_timeout_secs', 0.0, 'Stop a run after this many seconds (SIGTERM): '
                                                'recorded as stopped, with its figures, when it '
                                                'saved its result, else as failed (0: no '
                                                'limit).', flag_values=fv)
    flags.DEFINE_boolean('progress', True, 'Show the progress lines on stderr.', flag_values=fv)
    flags.DEFINE_string('publish', None, 'After the sweep, also write its records and report as '
                        'the result file <publish_dir>/<date>-<cpu|gpu>-tf<X.Y>-<PUBLISH>.json '
                        'and .md, with the command, the host and the commit.', flag_values=fv)
    flags.DEFINE_string('publish_dir', 'results', 'Folder of --publish\'s result files.',
                        flag_values=fv)


def run_flags_problem(extra_flags: list[str]) -> str | None:
    """An error message when the flags for every run do not parse as the benchmark's flags
    (an unknown flag, a malformed value, a stray word) or an output path they name cannot be
    written, else None: found before the first run instead of in every run's log. Their flag
    rules are checked with each configuration (`invalid_configuration`)."""
    from tf_cnn_benchmarks import flag_parsing, params  # absolute: see unknown_model
    from tf_cnn_benchmarks.preflight import output_paths
    sweep_flags = flags.FlagValues()
    define_flags(sweep_flags)
    for arg in extra_flags:
        name = flag_name(arg) or ''
        base = name[2:] if name.startswith('no') and name[2:] in sweep_flags else name
        if base in sweep_flags and base not in params.SPEC_BY_NAME:
            return ('--%s is a flag of the sweep, not of every run: put it before --. '
                    'Received: %s' % (base, arg))
    try:
        p = flag_parsing.parse_flags(['tf_cnn_benchmarks'] + list(extra_flags))
        output_paths.check_working_folder(p)
        output_paths.check_output_paths(p)
    except params.ParamsError as e:  # a misspelt sweep option first (--modls: --models)
        return (command_parser.misspelt_option(extra_flags, list(sweep_flags), 'tf_cnn_sweep')
                or 'the flags for every run: %s' % e)
    return None


def invalid_configuration(axes: dict, extra_flags: list[str]) -> str | None:
    """An error message when a configuration's run flags break a flag rule (usage.check_usage,
    the command's check less the cluster's fields and the output paths, which the sweep checks
    once) or its model does not run on the dataset the flags for every run choose
    (usage.check_model: the run's own check, no TensorFlow; resnet20 without
    --data_name=cifar10), else None: "the flags for every run: ..." when every configuration
    breaks it the same way, else "the run --model=...: ..." for the first one (--staged_vars
    with --variable_updates=parameter_server,replicated, say)."""
    from tf_cnn_benchmarks import flag_parsing, params
    from tf_cnn_benchmarks.models import model_catalog
    from tf_cnn_benchmarks.preflight import usage
    problems = []
    for config in configurations(axes, 1):
        args = runner_lib.command_for(config, [], '')[:-1]  # without --benchmark_log_dir
        p = flag_parsing.parse_flags(['tf_cnn_benchmarks'] + args + list(extra_flags),
                                     quiet=True)  # warned once: run_flags_problem
        if p.cluster_resolver in ('tf_config', 'slurm') or (p.cluster_resolver == 'auto' and (
                'TF_CONFIG' in os.environ or 'SLURM_JOB_ID' in os.environ)):
            return None  # a resolver fills the cluster's fields in each run first
        try:
            checked = usage.check_usage(p, resolve=False, paths=False, model=False).params
            usage.check_model(checked, usage.dataset_name(checked))
            problems.append(None)
        except (params.ParamsError, model_catalog.UnknownModelError) as e:
            problems.append((' '.join(args), str(e)))
    failed = [problem for problem in problems if problem]
    if not failed:
        return None
    if len(failed) == len(problems) and len({text for _, text in failed}) == 1:
        return 'the flags for every run: %s' % failed[0][1]
    return 'the run %s: %s' % failed[0]


def unknown_model(models: list[str]) -> str | None:
    """An error message naming the first of `models` that is no model of any dataset, with the
    catalog's "did you mean" and the valid names (and the other unknown ones), else None.

    Uses models/model_catalog.py (no TensorFlow). Whether a model suits the run's dataset (the
    flags for every run choose the data) is checked with each configuration
    (`invalid_configuration`).
    """
    # Absolute: `python -m tools.sweep` in a checkout makes `tools` a top-level package, where
    # `from ..models` fails; `tf_cnn_benchmarks` is then the checkout's entry script, which loads
    # the checkout as the package.
    from tf_cnn_benchmarks.models import model_catalog
    known = {name for name, _ in model_catalog.list_models()}
    unknown = [m for m in models if m not in known]
    if not unknown:
        return None
    try:
        model_catalog.check_model(unknown[0], 'imagenet')
    except model_catalog.UnknownModelError as e:
        text = '--models: %s' % e
    others = [m for m in dict.fromkeys(unknown[1:]) if m != unknown[0]]
    return text + (' (also unknown: %s)' % ', '.join(others) if others else '')


def _positive_ints(name: str, values: list[str]) -> list[int]:
    try:
        ints = [int(v) for v in values]
    except ValueError:
        ints = []
    if not ints or any(i < 1 for i in ints):
        raise SweepError('--%s must be a comma-separated list of positive integers. Received: '
                         '%s=%s' % (name, name, ','.join(values)))
    return ints


def config_plan(name: str) -> tuple[dict, list[str]]:
    """({sweep axis: [value]}, other flags) of configuration `name` (params/configs.py):
    --model=resnet50 becomes {'models': ['resnet50']}, --use_bf16 {'precisions': ['bf16']}.

    Raises:
      SweepError: an unknown configuration.
    """
    from tf_cnn_benchmarks import params  # absolute: see unknown_model
    from tf_cnn_benchmarks.params import configs
    try:
        lines = configs.read_flags(name)
    except params.ParamsError as e:
        raise SweepError(str(e)) from None
    axes, rest = {}, []
    for arg in lines:
        name_, _, value = arg.lstrip('-').partition('=')
        if name_ in CONFIG_AXES:
            axes[CONFIG_AXES[name_]] = [value]
        elif name_ in ('use_bf16', 'use_fp16'):
            if value.lower() not in ('false', '0'):
                axes['precisions'] = [name_[4:]]
        elif name_ in ('nouse_bf16', 'nouse_fp16'):
            pass
        else:
            rest.append(arg)
    return axes, rest


def build_plan(fv: flags.FlagValues, extra_flags: list[str]) -> dict:
    """Merges the flags and the sweep file into {'axes', 'repeats', 'output_dir',
    'extra_flags'}; flags given on the command line win.

    Raises:
      SweepError: a missing or invalid axis (an unknown model included), a reserved flag
        among the flags for every run, or a relative path where the working folder no longer
        exists (cnn_util.working_folder_problem).
    """
    for name in HOME_PATH_FLAGS:  # `--output_dir=~/runs`: the shell leaves `~` after '='
        if isinstance(fv[name].value, str):
            fv[name].value = user_dirs.expand_home(fv[name].value)
    given = [('--sweep_file', fv.sweep_file), ('--output_dir', fv.output_dir)]
    if fv.publish:
        given.append(('--publish_dir', fv.publish_dir))
    gone = cnn_util.working_folder_problem(given)
    if gone:
        raise SweepError(gone)
    try:
        file_values = file.read_sweep_file(fv.sweep_file) if fv.sweep_file else {}
    except file.SweepFileError as e:
        raise SweepError(str(e)) from None

    config = fv.config if fv['config'].present else file_values.get('config')
    config_axes, config_flags = config_plan(config) if config else ({}, [])

    def pick(name):
        if fv[name].present:
            return fv[name].value
        if name in file_values:
            value = file_values[name]
            return (user_dirs.expand_home(value) if name in HOME_PATH_FLAGS
                    and isinstance(value, str) else value)
        return config_axes.get(name, fv[name].value)

    extra = config_flags + file_values.get('flags', []) + list(extra_flags)
    problem = reserved_flag(extra) or run_flags_problem(extra)
    if problem:
        raise SweepError(problem)
    for name in ('models', 'batch_sizes', 'output_dir'):
        if not pick(name):
            raise SweepError('--%s is required (on the command line or in --sweep_file)' % name)
    gone = cnn_util.working_folder_problem([("the sweep file's output_dir", pick('output_dir'))])
    if gone:
        raise SweepError(gone)
    problem = unknown_model(list(pick('models')))
    if problem:
        raise SweepError(problem)
    precisions = pick('precisions')
    for p in precisions:
        if p not in PRECISIONS:
            raise SweepError('--precisions takes %s. Received: %r' % (', '.join(PRECISIONS), p))
    from tf_cnn_benchmarks import params  # absolute: see unknown_model
    from tf_cnn_benchmarks.params import gate_tolerance, original_flags
    for update in pick('variable_updates'):
        if update == 'horovod':
            raise SweepError('--variable_updates: %s' % original_flags.HOROVOD_MESSAGE)
        if update not in params.VARIABLE_UPDATES:
            raise SweepError('--variable_updates takes %s. Received: %r' % (
                ', '.join(params.VARIABLE_UPDATES), update))
    try:
        repeats = int(str(pick('repeats')))
    except ValueError:
        repeats = 0
    if repeats < 1:
        raise SweepError('--repeats must be a positive integer. Received: repeats=%s'
                         % pick('repeats'))
    axes = {'model': list(pick('models')),
            'batch_size': _positive_ints('batch_sizes', pick('batch_sizes')),
            'num_gpus': _positive_ints('num_gpus', pick('num_gpus')),
            'precision': list(precisions), 'variable_update': list(pick('variable_updates'))}
    for values, flag in zip(axes.values(), ('models', 'batch_sizes', 'num_gpus', 'precisions',
                                            'variable_updates')):  # in the order of `axes`
        twice = next((v for i, v in enumerate(values) if v in values[:i]), None)
        if twice is not None:  # one run folder and one result key for both: a run was lost
            raise SweepError('--%s lists %s twice; give each value once (--repeats=N runs '
                             'each configuration N times)' % (flag, twice))
    problem = gate_tolerance.not_finite(fv.run_timeout_secs, 'seconds, 0: no limit',
                                        example='600')
    if problem:  # nan and inf met no rule: inf timed nothing out, nan stopped runs at once
        raise SweepError('--run_timeout_secs=%r: %s' % (fv.run_timeout_secs, problem))
    if not (fv.run_timeout_secs >= 0):
        raise SweepError('--run_timeout_secs must be >= 0. Received: %g' % fv.run_timeout_secs)
    # The run whose results JSON has the longest path: its folder under runs/ too long?
    longest = max(configurations(axes, repeats),
                  key=lambda c: len(run_dir_name(c)) + len(c['model']))
    problem = invalid_configuration(axes, extra) or disk.run_path_problem(
        pick('output_dir'), runner_lib.command_for(longest, extra, os.path.join(
            pick('output_dir'), 'runs', run_dir_name(longest))))
    if problem:
        raise SweepError(problem)
    return {'axes': axes, 'repeats': repeats, 'output_dir': pick('output_dir'),
            'extra_flags': extra}


def configurations(axes: dict, repeats: int) -> list[dict]:
    """Every run: repeat-major, then model, precision, variable_update, num_gpus, batch_size."""
    runs = []
    for repeat in range(repeats):
        for model in axes['model']:
            for precision in axes['precision']:
                for update in axes['variable_update']:
                    for gpus in axes['num_gpus']:
                        for batch in axes['batch_size']:
                            runs.append({'model': model, 'batch_size': batch, 'num_gpus': gpus,
                                         'precision': precision, 'variable_update': update,
                                         'repeat': repeat})
    return runs


def run_dir_name(config: dict) -> str:
    """'trivial-bs16-gpus2-fp32-parameter_server-r0' (a folder name under runs/; -rN is the
    0-based config['repeat'] of the results file, so -r0 holds repeat 1)."""
    return '%s-bs%d-gpus%d-%s-%s-r%d' % (
        config['model'], config['batch_size'], config['num_gpus'], config['precision'],
        config['variable_update'], config['repeat'])


def _prepare_output(output_dir: str) -> None:
    """Creates output_dir and its runs/ folder, missing parents included (`--output_dir=runs/a`
    on a fresh checkout); raises SweepError naming the path when something else is in the way."""
    if os.path.exists(output_dir) and not os.path.isdir(output_dir):
        raise SweepError('--output_dir %s is not a directory; choose another path' % output_dir)
    existed = os.path.isdir(output_dir)
    try:
        os.makedirs(os.path.join(output_dir, 'runs'), exist_ok=True)
    except OSError as e:
        raise SweepError('--output_dir %s cannot be %s: %s; choose another path (a folder this '
                         'user can write, made when missing)' % (
                             output_dir, 'written' if existed else 'created', e.strerror)) \
            from None


def _lock(output_dir: str):
    """Holds <output_dir>/.lock (flock) so that two sweeps never share a folder (or the CPU)."""
    import fcntl
    handle = open(os.path.join(output_dir, '.lock'), 'w')
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise SweepBusy('another tf_cnn_sweep is running in --output_dir %s (or a run of one '
                         'that was killed: each run holds the folder too); wait for it or '
                         'choose another folder' % output_dir) from None
    return handle


def _load_previous(output_dir: str, extra_flags: list[str]) -> list[dict]:
    path = results.results_path(output_dir)
    records, bad = results.load_records(path)
    if bad:
        print('warning: skipped %s of %s' % (cnn_util.counted(bad, 'unreadable line'), path),
              file=sys.stderr)
    for record in records:
        if record.get('extra_flags', []) != extra_flags:
            raise SweepError(
                '--output_dir %s holds runs made with other flags for every run (%s, now %s); '
                'use another --output_dir' % (output_dir, ' '.join(record.get('extra_flags', []))
                                              or 'none', ' '.join(extra_flags) or 'none'))
    return records


def run_sweep(plan: dict, retry_failed: bool = False, timeout_secs: float = 0.0,
              progress: bool = True, runner=None) -> int:
    """Runs the configurations not done yet; writes the report; returns the exit status.

    Args:
      plan: from `build_plan`.
      retry_failed: also rerun the configurations recorded as failed or stopped.
      timeout_secs: per-run wall-time limit in seconds (0: none).
      progress: print the progress lines on stderr.
      runner: (args, run_dir, interrupts, timeout_secs) -> outcome; default
        runner_lib.run_configuration (tests pass a fake).

    Raises:
      SweepError: the output folder is unusable, in use, or holds runs with other flags.
      OSError: the results file or a run's folder cannot be written (`disk.write_error`).
    """
    out_dir = plan['output_dir']
    _prepare_output(out_dir)
    with _lock(out_dir) as lock:
        records = _load_previous(out_dir, plan['extra_flags'])
        runs = configurations(plan['axes'], plan['repeats'])
        planned = {results.config_key(c) for c in runs}
        done = results.done_keys(records, retry_failed)
        todo = [c for c in runs if results.config_key(c) not in done]
        line = results.resume_line(out_dir, records, planned, done, len(todo), retry_failed)
        if line:
            print(line, file=sys.stderr)
        bar = progress_lib.Progress(len(runs), len(runs) - len(todo),
                                    progress_lib.step_costs(todo, plan['extra_flags']),
                                    enabled=progress)
        interrupted, full = _run_all(plan, todo, bar, runner or runner_lib.run_configuration,
                                     timeout_secs, lock.fileno())
        records, _ = results.load_records(results.results_path(out_dir))
        try:
            print(report.write_report(out_dir, records, for_screen=True))
            not_saved = None
        except report.NotSaved as e:  # a full disk: the report on the screen all the same
            print(e.text)
            not_saved = disk.write_error(e, out_dir)
    if interrupted is not None:
        if not_saved:
            print('warning: %s' % not_saved, file=sys.stderr)
        print('sweep: interrupted; rerun the same command to resume', file=sys.stderr)
        return 128 + interrupted
    failed = [r for r in records if r['key'] in planned and r['status'] != 'ok']
    problem = (disk.full_disk_line(*full) if full else not_saved
               or (results.not_done_line(failed, len(runs), out_dir) if failed else None))
    if problem:
        print('error: %s' % problem, file=sys.stderr)
    return 1 if problem else 0


def _run_all(plan: dict, todo: list[dict], bar, runner, timeout_secs: float,
             lock_fd: int) -> tuple[int | None, tuple | None]:
    """Runs `todo` in order, appending each record; returns (the signal that stopped it, if
    any; (label, error) of a run that failed for lack of space, where it stopped, if any).
    Each run inherits `lock_fd`, the output folder's lock (runner.py says why)."""
    out_dir, extra = plan['output_dir'], plan['extra_flags']
    results_file = results.results_path(out_dir)
    environment = runner_lib.local_environment()
    with runner_lib.Interrupts() as interrupts:
        interrupts.hold_fds = (lock_fd,)
        for config in todo:
            if interrupts.signum is not None:
                break
            label = '%s repeat %d/%d' % (
                results.describe(tuple(config[a] for a in results.AXES)),
                config['repeat'] + 1, plan['repeats'])
            rel_dir = os.path.join('runs', run_dir_name(config))
            bar.begin(label, os.path.join(out_dir, rel_dir, 'stdout.log'))
            args = runner_lib.command_for(config, extra, os.path.join(out_dir, rel_dir))
            outcome = runner(args, os.path.join(out_dir, rel_dir), interrupts, timeout_secs)
            record = runner_lib.make_record(config, extra, args, outcome, rel_dir, environment)
            results.append_record(results_file, record)
            bar.end(outcome)
            _say_outcome(label, record)
            if record['no_space']:  # every run after it would fail the same way
                return interrupts.signum, (label, record['error'])
        return interrupts.signum, None


def _say_outcome(label: str, record: dict) -> None:
    if record['status'] == 'ok':
        print('%s: %.2f images/sec' % (label, record['images_per_sec']), flush=True)
    elif record['status'] == 'stopped':  # timed out after saving its result
        print('%s: stopped (exit status %s): %s; %.2f images/sec over those steps'
              % (label, record['exit_status'], report.short(record['error']),
                 record['images_per_sec'] or 0.0), file=sys.stderr, flush=True)
    else:
        print('%s: %s (exit status %s): %s' % (label, record['status'], record['exit_status'],
                                               report.short(record['error'])),
              file=sys.stderr, flush=True)


def _print_help(fv: flags.FlagValues) -> None:
    print(__doc__)
    print('flags:')
    for name in sorted(fv):
        flag = fv[name]
        print('  --%s: %s (default: %s)' % (name, flag.help, flag.default_as_str))
    print('  --version: %s' % console.VERSION_HELP)
    print('\n`tf_cnn_sweep compare --help` and `tf_cnn_sweep report --help` describe the '
          'subcommands.')


def _report_main(argv: list[str]) -> int:
    usage = 'usage: tf_cnn_sweep report OUTPUT_DIR'
    if argv and argv[0] in ('-h', '--help'):
        print('%s\n\nRewrites OUTPUT_DIR/report.md and the plots from OUTPUT_DIR/results.jsonl '
              'and prints the report.' % usage)
        return 0
    flag = next((a for a in argv if a.startswith('-')), None)
    if flag is not None:  # it took a flag for a second folder
        print('error: report takes no flags (%s): give only the sweep\'s output directory. %s'
              % (flag, usage), file=sys.stderr)
        return 2
    if len(argv) != 1:
        print('error: report takes one sweep output directory. Received %d argument(s). %s'
              % (len(argv), usage), file=sys.stderr)
        return 2
    gone = cnn_util.working_folder_problem([('the sweep', argv[0])])
    if gone:
        print('error: %s' % gone, file=sys.stderr)
        return 2
    path = results.results_path(argv[0])
    if not os.path.isfile(path):
        print('error: no results file at %s' % path, file=sys.stderr)
        return 2
    records, _ = results.load_records(path)
    print(report.write_report(os.path.dirname(path) or '.', records, for_screen=True))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Command-line entry (argv[0] is the program); returns the exit status."""
    argv = list(sys.argv if argv is None else argv)
    version = console.answer_version(argv[1:])
    if version is not None:
        return version
    if len(argv) > 1 and argv[1] == 'compare':
        return compare.main(argv[2:])
    if len(argv) > 1 and argv[1] == 'report':
        return _report_main(argv[2:])
    fv = flags.FlagValues()
    define_flags(fv)
    command = list(argv)  # as given, for --publish
    if '--' in argv:
        cut = argv.index('--')
        argv, extra = argv[:cut], argv[cut + 1:]
    else:
        extra = []
    if any(a in ('-h', '--help', '-help', '--helpfull', '--helpshort') for a in argv[1:]):
        _print_help(fv)
        return 0
    from tf_cnn_benchmarks import flag_parsing  # absolute: see unknown_model
    try:
        rest = fv(argv, known_only=True)
        plan = build_plan(fv, rest[1:] + extra)
    except SweepError as e:
        print('error: %s' % e, file=sys.stderr)
        return 2
    except flags.Error as e:
        print('error: %s' % flag_parsing.describe_flag_error(e), file=sys.stderr)
        return 2
    except ValueError as e:  # absl: "--noprogress=true does not take an argument"
        print('error: %s' % flag_parsing.describe_value_error(e), file=sys.stderr)
        return 2
    problem = publish.what_problem(fv.publish)
    if problem:
        print('error: %s' % problem, file=sys.stderr)
        return 2
    load_before = os.getloadavg()[0]
    try:
        status = run_sweep(plan, fv.retry_failed, fv.run_timeout_secs, fv.progress)
        if fv.publish and status in (0, 1):
            stem = publish.publish(plan['output_dir'], fv.publish, fv.publish_dir,
                                         command, load_before)
            print('published %s.json and %s.md' % (stem, stem))
        return status
    except SweepError as e:
        print('error: %s' % e, file=sys.stderr)
        return e.exit_status
    except BrokenPipeError:  # the reader of stdout went away: console.finish, exit 141
        raise
    except OSError as e:  # the results file or a run folder cannot be written
        print('error: %s' % disk.write_error(e, plan['output_dir']), file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C outside a run (the handlers cover the runs)
        print('error: interrupted; rerun the same command to resume', file=sys.stderr)
        return 130


def run_main() -> None:
    """Console entry point of `tf_cnn_sweep`."""
    console.finish(main)


if __name__ == '__main__':
    run_main()
