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


def cpu_input_pipeline(p, batch_size: int, image_size: int):
    """The training input pipeline of Params `p` alone (no model), made in the current graph
    with the run's seed: preprocessing.make_input_pipeline for batches of `batch_size` float32
    NHWC images of image_size x image_size and int32 labels. Returns the pipeline (its
    `build(['/cpu:0'])` gives the host's batch)."""
    import tensorflow as tf

    from tf_cnn_benchmarks import preprocessing
    from tf_cnn_benchmarks.input_data import dataset_info
    dataset = dataset_info.get_dataset(p)
    tf.compat.v1.set_random_seed(p.tf_random_seed)
    return preprocessing.make_input_pipeline(
        p, dataset, batch_size=batch_size, image_size=image_size,
        num_classes=dataset.num_classes, data_format='NHWC', dtype=tf.float32, train=True)


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
