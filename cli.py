"""The `tf_cnn_benchmarks` command: flags -> Params -> validate -> BenchmarkCNN(params).run().

Started as the console command, `python -m tf_cnn_benchmarks.tf_cnn_benchmarks`, or `python
tf_cnn_benchmarks.py` in a checkout (the entry script). Known errors become one line `error:
...` on stderr: exit status 2 for usage errors (bad flags), 1 for runtime errors (data, cluster,
non-finite loss), never a traceback. Usage errors are found before TensorFlow loads.
"""

import os
import sys

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
from .speed import runtime_env  # noqa: E402

runtime_env.apply()  # oneDNN kernels, BFC allocator: before TensorFlow loads

from absl import flags

from . import params

FLAGS = flags.FLAGS

USAGE = """usage: tf_cnn_benchmarks [--flag=value ...]   (or --flagfile=FILE)

Trains a CNN on synthetic data (no --data_dir) or ImageNet/CIFAR-10 files and reports images/sec.
Example: tf_cnn_benchmarks --model=resnet50 --batch_size=32 --num_batches=100
"""


def _fail(message: str, status: int) -> int:
    print('error: %s' % message, file=sys.stderr, flush=True)
    return status


def parse_args(argv: list[str]) -> params.Params:
    """Parses argv (argv[0] is the program) into validated-later Params.

    Raises:
      params.ParamsError: an unknown flag, a malformed value, or a stray positional argument.
    """
    params.define_flags(FLAGS)
    if any(a in ('-h', '--help', '-help', '--helpfull', '--helpshort') for a in argv[1:]):
        print(USAGE)
        print(FLAGS.module_help(params))
        raise SystemExit(0)
    try:
        rest = FLAGS(argv, known_only=False)
    except flags.Error as e:
        message = str(e).splitlines()[0]
        if message.startswith('ERROR:'):  # absl's own prefix ('ERROR:: Unable to open ...')
            message = message.split(':', 1)[1].lstrip(': ')
        raise params.ParamsError(message + ' (see --help)') from None
    if len(rest) > 1:
        raise params.ParamsError(
            'unexpected positional argument %r; flags take the form --name=value (booleans: '
            '--name, --noname or --name=false)' % rest[1])
    return params.make_params_from_flags(FLAGS)


def main(argv: list[str], hooks=()) -> int:
    """Runs the command; returns the exit status.

    Args:
      argv: the program name, then the flags.
      hooks: extra lifecycle.run_hooks.RunHook objects for the run (test seams).
    """
    try:
        p = parse_args(argv)
        params.validate_params(p)  # before importing TensorFlow: usage errors stay fast
        params.check_output_paths(p)  # not after a long run
    except params.ParamsError as e:
        return _fail(str(e), 2)
    # KMP_*/OMP_NUM_THREADS and XLA's CPU flag are read when TensorFlow loads: set them first.
    from .speed import cpu_tuning
    cpu_tuning.configure_environment(p)
    # TensorFlow is imported only after the flags parsed: --help and usage errors stay fast.
    try:
        return _run(p, hooks)
    except KeyboardInterrupt:  # Ctrl-C while TensorFlow is still importing
        return _fail('interrupted', 130)


def _run(p: params.Params, hooks) -> int:
    from . import cnn_util
    with cnn_util.captured_fd_stderr(os.environ.get('TF_CPP_MIN_LOG_LEVEL') == '3'):
        tf = runtime_env.import_tensorflow()
        tf.get_logger().setLevel('ERROR')
        tf.compat.v1.disable_eager_execution()
        from . import benchmark_cnn
        from .models import model_config
        gpus = benchmark_cnn.num_visible_gpus()
    try:
        if p.list_models:
            from .models import model_table
            print(model_table.format_model_table(model_table.model_rows()))
            return 0
        bench = benchmark_cnn.BenchmarkCNN(p, gpus=gpus, hooks=hooks)
        bench.print_info()
        bench.run()
    except (params.ParamsError, model_config.UnknownModelError) as e:
        return _fail(str(e), 2)
    except cnn_util.BenchmarkError as e:
        return _fail(str(e), 1)
    except tf.errors.OpError as e:
        return _fail('TensorFlow: %s' % cnn_util.error_summary(e), 1)
    except KeyboardInterrupt:
        return _fail('interrupted', 130)
    return 0


def run_main() -> None:
    """Console entry point of the `tf_cnn_benchmarks` command."""
    sys.exit(main(sys.argv))

