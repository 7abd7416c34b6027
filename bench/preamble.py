"""The start every bench script shares: where the checkout and the results are, and the
runtime environment TensorFlow must see before it loads.

Run the scripts as modules from the checkout's top folder, e.g. `python -m bench.bench_core`:
`import tf_cnn_benchmarks` then finds the checkout's entry script, which loads the checkout as
the package, and nothing is added to the module search path.
"""

import argparse
import os

HERE = os.path.dirname(os.path.abspath(__file__))  # bench/
REPO = os.path.dirname(HERE)  # the checkout
RESULTS = os.path.join(REPO, 'results')  # committed data: bench/bench_report.py


def start() -> None:
    """Sets the runtime environment (oneDNN kernels, BFC allocator, quiet C++ log) before
    TensorFlow loads."""
    os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
    from tf_cnn_benchmarks.runtime import runtime_env
    runtime_env.apply()


def start_tensorflow():
    """`start`, then imports TensorFlow with its start-up lines kept off stderr; returns it."""
    os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
    from tf_cnn_benchmarks.runtime import runtime_env
    return runtime_env.import_tensorflow()


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser whose errors are one line, `<script>: error: <what>; see --help`,
    exit 2 (argparse prints its whole usage block first)."""

    def error(self, message):
        self.exit(2, '%s: error: %s; see --help\n' % (self.prog, message))
