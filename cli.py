"""The `tf_cnn_benchmarks` command: flags -> Params -> cluster -> validate -> BenchmarkCNN.run().

Started as the console command, `python -m tf_cnn_benchmarks.tf_cnn_benchmarks`, or `python
tf_cnn_benchmarks.py` in a checkout (the entry script). Known errors become one line `error:
...` on stderr: exit status 2 for usage errors (bad flags, unusable output paths), 1 for missing
or bad data and runtime errors (cluster, non-finite loss, a --train_dir held by another run:
runtime/dir_hold.py), never a traceback; the --baseline gate exits 1 when the run is slower
and 3 when it could not judge it (metrics/baseline.py). A run stopped by SIGINT exits 130
after its clean stop (143 for SIGTERM, 129 for SIGHUP: lifecycle/signals.py), as does one these
reach after its timed steps (complete; `main` returns 130, the console command then ends by
SIGINT itself, so a shell loop stops: console.end_interrupted); one of these
signals before the run's own handlers (TensorFlow loading, the graph's building) ends the
command with `error: interrupted by SIGTERM` and the same status; a cluster worker stopped
because its chief was (cluster/coordination.py) exits 0. Usage errors (an unknown --model
included) are found, and --help, --version and --list_models answered, before TensorFlow
loads. When the reader of the output goes away (`tf_cnn_benchmarks --help | head -1`), the
command stops quietly with exit status 141, as a Unix tool killed by SIGPIPE does.
The TF_CONFIG cluster resolver (cluster/resolvers.py) loads TensorFlow once TF_CONFIG has
passed its own checks, so a malformed TF_CONFIG is a usage error before TensorFlow loads too.
"""

import html
import io
import os
import re
import sys

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
from .runtime import runtime_env  # noqa: E402

runtime_env.apply()  # oneDNN kernels, BFC allocator: before TensorFlow loads

from absl import flags

from . import cnn_util, console, flag_parsing, params
from .params import absl_flags, flagfile_lines
from .preflight import usage
from .runtime import dir_hold

FLAGS = flags.FLAGS

USAGE = """usage: tf_cnn_benchmarks [--flag=value ...]   (or --flagfile=FILE)
       tf_cnn_benchmarks --list_models | --version | --help

Trains a CNN on synthetic data (no --data_dir) or ImageNet/CIFAR-10 files and reports images/sec.
Example: tf_cnn_benchmarks --model=resnet50 --batch_size=32 --num_batches=100
Manual: the docs/*.md files that messages name are in %s
""" % os.path.join(os.path.dirname(os.path.abspath(__file__)), 'docs')

SIGPIPE_STATUS = console.SIGPIPE_STATUS  # 141: a tool whose reader went away


def _fail(message: str, status: int) -> int:
    print('error: %s' % cnn_util.shown_name(message), file=sys.stderr, flush=True)
    return status


def parse_args(argv: list[str]) -> tuple[params.Params, flagfile_lines.FlagOrigins]:
    """Parses argv (argv[0] is the program) into validated-later Params, and where each flag
    given got its value (its `locate` names the flagfile lines of a rule's error).

    Raises:
      params.ParamsError: an unknown flag, a malformed value, or a stray positional argument.
    """
    if 'model' not in FLAGS:
        params.define_flags(FLAGS)
    wanted, argv = flag_parsing.help_request(argv)  # --help=false, --nohelp: no help
    if wanted == 'version':
        raise SystemExit(console.print_version())
    if wanted in ('help', 'helpfull'):
        print(USAGE)
        print(FLAGS.module_help(params))
        print('\n' + absl_flags.HELP_TEXT)
        if wanted == 'helpfull':  # absl's own flags' help, as absl's --helpfull lists them
            for module in absl_flags.help_modules():
                print(FLAGS.module_help(module))
        raise SystemExit(0)
    if wanted == 'xml':  # --helpxml, as absl's: every flag as XML, with this usage text
        out = io.StringIO()
        FLAGS.write_help_in_xml_format(out)
        print(re.sub(r'<usage>.*?</usage>', lambda _: '<usage>%s</usage>' % html.escape(
            USAGE.strip(), quote=False), out.getvalue(), count=1, flags=re.S), end='')
        raise SystemExit(0)
    return flag_parsing.parse_flags_located(argv, FLAGS)


def main(argv: list[str], hooks=()) -> int:
    """Runs the command; returns the exit status.

    Args:
      argv: the program name, then the flags.
      hooks: extra lifecycle.run_hooks.RunHook objects for the run (test seams).
    """
    from .models import model_catalog  # plain data: no TensorFlow
    try:
        p, origins = parse_args(argv)
    except params.ParamsError as e:  # a parse error names its flagfile line itself
        return _fail(str(e), 2)
    for line in absl_flags.no_effect_lines(FLAGS):  # --alsologtostderr, --v=1, ...
        cnn_util.warn(line)
    try:
        # Before TensorFlow loads, so usage errors stay fast: the environment the flags ask
        # for, the cluster's fields, every flag rule, output paths, the model.
        checked = usage.prepare(p, given_flags())
        if absl_flags.only_check_args(FLAGS):  # absl's: the checks, then exit; nothing run
            cnn_util.log_fn('--only_check_args: the flags pass the checks made before '
                            'TensorFlow loads; nothing was run')
            return 0
        if p.list_models:
            print(model_catalog.format_model_table(model_catalog.rows()))
            print('%s; %s' % (model_catalog.count_text(), model_catalog.TABLE_LEGEND))
            return 0
        # Missing folders above the output paths, made as the original made them; said.
        for line in dir_hold.make_parent_folders(checked.folders):
            cnn_util.log_fn(line)
    except (params.ParamsError, model_catalog.UnknownModelError) as e:
        # A rule broken by flags of one flagfile names its lines (flagfile_lines.FlagOrigins).
        return _fail(origins.locate(str(e)), 2)
    except cnn_util.DataError as e:  # a missing, empty or foreign local --data_dir
        return _fail(str(e), 1)
    from .lifecycle import signals  # no TensorFlow
    # SIGTERM and SIGHUP before the run's own handlers end it as Ctrl-C does: one line.
    with signals.CommandSignals():
        # A --train_dir or --eval_dir held by another run stops this one before anything loads.
        holds = dir_hold.hold_run_dirs(checked.params, argv)
        try:
            holds.__enter__()
        except cnn_util.BenchmarkError as e:
            return _fail(str(e), 1)
        # TensorFlow is imported only after the flags parsed: --help and usage errors stay fast.
        try:
            return _run(checked, hooks, origins)
        except KeyboardInterrupt:  # Ctrl-C while TensorFlow is still importing
            return _fail('interrupted', 130)
        except signals.Interrupted as e:
            return _fail('interrupted by %s' % e, 128 + e.signum)
        finally:
            holds.__exit__(None, None, None)


def given_flags() -> frozenset:
    """The names of the parameter flags the last parse found on the command line (or in a
    --flagfile, --config), also those given at their default value."""
    return frozenset(name for name in params.SPEC_BY_NAME if FLAGS[name].present)


def _run(checked: usage.CheckedRun, hooks, origins: flagfile_lines.FlagOrigins) -> int:
    # The first line within a second: TensorFlow's import takes about 2 s on an idle host
    # (a minute on a loaded one), and the header comes after it (issue 39.1).
    cnn_util.log_fn('Loading TensorFlow %s' % ('to calibrate this host' if checked.params.calibrate
                                              else 'for the run'))
    with cnn_util.captured_fd_stderr(os.environ.get('TF_CPP_MIN_LOG_LEVEL') == '3'):
        tf = runtime_env.import_tensorflow()
        tf.get_logger().setLevel('ERROR')
        tf.compat.v1.disable_eager_execution()
        from . import benchmark_cnn
        from .models import model_config
        gpus = benchmark_cnn.num_visible_gpus()
    bench = None
    try:
        named = usage.check_with_tensorflow(checked.params, gpus, given_flags())  # a plan's GPU
        if checked.params.calibrate:
            from .preflight import calibrate
            return calibrate.run(benchmark_cnn.bench_factory(checked.resolution, hooks),
                                 checked.params, gpus)
        if checked.params.plan_scaling:
            from .preflight import scaling_plan
            return scaling_plan.run_planned(
                benchmark_cnn.bench_factory(checked.resolution, hooks), checked.params, gpus,
                named, given=given_flags())
        if checked.params.dry_run:
            from .preflight import dry_run
            return dry_run.run_planned(benchmark_cnn.bench_factory(checked.resolution, hooks),
                                       checked.params, gpus, named)
        from .hardware import kernel_speed
        with kernel_speed.refreshing(checked.params.refresh_peak):  # the build's probe too
            bench = benchmark_cnn.BenchmarkCNN(checked.params, gpus=gpus, hooks=hooks,
                                               checked=checked)
            bench.print_info()
        result = bench.run()
    except (params.ParamsError, model_config.UnknownModelError) as e:
        return _fail(origins.locate(str(e)), 2)
    except cnn_util.BenchmarkError as e:  # the --baseline gate's have their own (1 or 3)
        return _fail(str(e), getattr(e, 'exit_status', 1))
    except tf.errors.ResourceExhaustedError as e:
        from .preflight import memory_check
        return _fail(memory_check.exhausted_message(e, getattr(bench, 'memory', None)), 1)
    except tf.errors.OpError as e:
        return _fail('TensorFlow: %s%s' % (cnn_util.error_summary(e), onednn_hint(e)), 1)
    except KeyboardInterrupt:
        return _fail('interrupted', 130)
    from .lifecycle import signals
    return signals.exit_status(result) or 0  # 130: stopped by Ctrl-C after saving


def onednn_hint(error, environ=None) -> str:
    """What to do about oneDNN's 'could not create a primitive descriptor' under
    ONEDNN_MAX_CPU_ISA (a kernel the cap leaves oneDNN without; hardware/machine.py
    isa_cap_problem refuses the known cases before TensorFlow loads), appended to the error's
    one line: '; oneDNN has no kernel for this op under ONEDNN_MAX_CPU_ISA=AVX2: unset it or
    run in float32'; '' for any other error or without a cap."""
    from .hardware import machine
    environ = os.environ if environ is None else environ
    limit = machine.onednn_isa_limit(environ)
    if not limit or 'could not create a primitive descriptor' not in str(error):
        return ''
    return ('; oneDNN has no kernel for this op under ONEDNN_MAX_CPU_ISA=%s: unset it or run '
            'in float32' % limit)


def run_main() -> None:
    """Console entry point of the `tf_cnn_benchmarks` command."""
    # --help and --version raise SystemExit; a closed reader ends it with 141 (console.finish).
    console.finish(lambda: main(sys.argv), runtime_env.exit_process)


if __name__ == '__main__':  # python -m tf_cnn_benchmarks.cli
    from . import console

    console.tf_cnn_benchmarks()
