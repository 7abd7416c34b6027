"""Shared test helpers: tiny in-process runs (the trivial model, small images, no warm-up).

    tiny_params(batch_size=2)           # Params with the tiny defaults, overridden (the trivial
                                        # model on synthetic data: TINY_CLASSES classes)
    tiny_bench(num_gpus=2, ...)         # a BenchmarkCNN of them (no GPU asked)
    tiny_run(num_batches=5, ...)        # its run() result dict
    tiny_run_and_graph(...)             # that dict and the tf.Graph the run built
    tiny_losses(**RESNET20, ...)        # its losses as a float array
    stub_plan(device='cpu', ...)        # a run plan's attributes, without building one
    count_trainable_parameters(graph)   # the sizes of a graph's trainable variables, summed
    preprocess_imagenet(record, ...)    # one Example through the ImageNet preprocessing
    wait_for(predicate, 180, proc)      # polls until true, the time is up or proc exits
    read_checkpoint_values(path)        # {checkpoint name: value} of a checkpoint
    run_once(tmp_path_factory, name, produce)  # a JSON result made once per test session
    shared_run(tmp_path_factory, 'name', **flags)  # a run's losses and graph, once a session
    serve_shared_op_profiles(monkeypatch, tmp_path_factory)  # every model's op profile, once
    run_command('--model=trivial', ...)  # the command's exit status and output, in process
    free_port(span=3, taken=(...))      # a free TCP port for a task process, this worker's own

A test file that needs other defaults binds them once:
`_run = functools.partial(helpers.tiny_run, image_size=32)`. The `tiny_run` fixture of
conftest.py is `tiny_run` itself.
"""

from __future__ import annotations

import collections
import contextlib
import fcntl
import io
import json
import os
import subprocess
import time
import types

import numpy as np
import tensorflow as tf

from tf_cnn_benchmarks import benchmark_cnn, params

TINY = dict(model='trivial', batch_size=4, image_size=16, num_batches=3, num_warmup_batches=0,
            display_every=100)
#: The classes of a tiny run of the trivial model on synthetic ImageNet data, unless the test
#: gives --num_classes: at ImageNet's 1001 its classifier (4096 x 1001, 16.4 MB) was most of
#: such a run's CPU time (initialised, updated each step, saved in each checkpoint).
TINY_CLASSES = 10


def tiny_params(**overrides) -> params.Params:
    """Params of a tiny run: TINY updated with `overrides`; the trivial model on synthetic
    data (no --data_dir, no --data_name) has TINY_CLASSES classes unless `overrides` names
    num_classes (None: the dataset's, ImageNet's 1001)."""
    flags = {**TINY, **overrides}
    if (flags['model'] == 'trivial' and 'num_classes' not in overrides
            and not flags.get('data_dir') and not flags.get('data_name')):
        flags['num_classes'] = TINY_CLASSES
    return params.make_params(**flags)


def tiny_bench(hooks=(), **overrides) -> benchmark_cnn.BenchmarkCNN:
    """A BenchmarkCNN of tiny_params(**overrides), on the CPU whatever GPUs are visible, with
    the extra run hooks `hooks`."""
    return benchmark_cnn.BenchmarkCNN(tiny_params(**overrides), gpus=0, hooks=hooks)


def tiny_run(**overrides) -> dict:
    """The result of tiny_bench(**overrides).run()."""
    return tiny_bench(**overrides).run()


def tiny_run_and_graph(**overrides) -> tuple[dict, tf.Graph]:
    """The result of tiny_run(**overrides) and the graph of its step, as the run built it (for
    a test that asserts on both, without building the graph a second time)."""
    from tf_cnn_benchmarks.lifecycle import run_hooks

    class GraphOfTheRun(run_hooks.RunHook):
        def begin(self, ctx):
            self.graph = ctx.info.graph

    hook = GraphOfTheRun()
    return tiny_bench(hooks=[hook], **overrides).run(), hook.graph


def tiny_losses(**overrides) -> np.ndarray:
    """The timed steps' losses of tiny_run(**overrides), as a float array.

    A file binds its model once: `_losses = functools.partial(helpers.tiny_losses, **RESNET20)`."""
    return np.array(tiny_run(**overrides)['losses'])


def stub_plan(device='cpu', devices=('/cpu:0',), workers=1, dtype=tf.float32, training=True,
              model='trivial', image_size=16, intra=2, **params):
    """A stand-in of run_plan.RunPlan for the hooks' and figures' tests: the attributes they
    read, with `params` a namespace of the few flags they read (`**params` adds others).
    `intra` is --num_intra_threads and the plan's intra-op threads."""
    p = types.SimpleNamespace(device=device, refresh_peak=False, data_dir=None,
                              num_intra_threads=intra, num_inter_threads=1, **params)
    return types.SimpleNamespace(params=p, devices=devices, num_workers=workers,
                                 num_warmup_batches=2,
                                 compute_dtype=dtype, training=training, model=model,
                                 dataset='imagenet', image_size=image_size, num_classes=1001,
                                 cluster_role='', images_per_step=4 * len(devices),
                                 global_batch_size=4 * len(devices), threads=(intra, 1))


def count_trainable_parameters(graph) -> int:
    """Sum of the sizes of the trainable variables of `graph` (all must have static shapes)."""
    with graph.as_default():
        variables = tf.compat.v1.trainable_variables()
    return int(sum(np.prod(v.shape.as_list(), dtype=np.int64) for v in variables))


def preprocess_imagenet(serialized: tf.Tensor, **kwargs) -> tuple[tf.Tensor, tf.Tensor]:
    """One serialized Example -> (image float32 [size, size, 3] in [-1, 1], label int32 scalar)
    through input_data/image_processing.preprocess_imagenet_batch (its keyword arguments)."""
    from tf_cnn_benchmarks.input_data import image_processing
    images, labels = image_processing.preprocess_imagenet_batch(serialized[tf.newaxis], 1,
                                                                **kwargs)
    return images[0], labels[0]


def wait_for(predicate, timeout_secs: float, proc, poll_secs: float = 0.05) -> bool:
    """Polls `predicate()` every `poll_secs` until it is true (True), `timeout_secs` have
    passed or the process `proc` (subprocess.Popen) has exited (False)."""
    deadline = time.monotonic() + timeout_secs
    while time.monotonic() < deadline and proc.poll() is None:
        if predicate():
            return True
        time.sleep(poll_secs)
    return False


def traced_step(build, size: int = 256):
    """(graph, RunMetadata) of one FULL_TRACE run of `build(x)`, x a [size, size] float32
    placeholder fed 1/size, without Grappler (its fusions would vary the op types): the
    profiles of the tfprof tests."""
    graph = tf.Graph()
    config = tf.compat.v1.ConfigProto()
    config.graph_options.rewrite_options.disable_meta_optimizer = True
    with graph.as_default(), tf.compat.v1.Session(config=config) as sess:
        x = tf.compat.v1.placeholder(tf.float32, [size, size])
        out = build(x)
        metadata = tf.compat.v1.RunMetadata()
        sess.run(out, {x: np.ones([size, size], np.float32) / size},
                 options=tf.compat.v1.RunOptions(
                     trace_level=tf.compat.v1.RunOptions.FULL_TRACE),
                 run_metadata=metadata)
    return graph, metadata


def header_value(lines: list[str], label: str) -> str:
    """The value of the header's `label` line ('Eval', 'Input', ...) in a run's `lines`, its
    continuation lines (indented, before the next label) joined by single spaces; a note line
    such as 'Accuracy @ 5 is 1 by definition ...' is not part of it.

    Raises:
      StopIteration: no such line."""
    start = next(i for i, line in enumerate(lines) if line.startswith(label + ':'))
    words = lines[start][len(label) + 1:].split()
    for line in lines[start + 1:]:
        if not line.startswith(' ' * 13) or line.strip().startswith('Accuracy @ 5 is 1'):
            break
        words += line.split()
    return ' '.join(words)


def read_checkpoint_values(path: str) -> dict[str, np.ndarray]:
    """{checkpoint name: value} of every tensor in the checkpoint at `path`."""
    reader = tf.compat.v1.train.NewCheckpointReader(path)
    return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()}


def pipeline_of(pipeline_class):
    """A BenchmarkCNN `pipeline_factory` making `pipeline_class` (an InputPipeline of a test)
    in the run plan's shapes: per-device batch, image size, classes, data format, dtype."""
    def factory(plan, dataset, *, train):
        del dataset, train
        return pipeline_class(batch_size=plan.per_device_batch_size, image_size=plan.image_size,
                              num_classes=plan.num_classes, data_format=plan.data_format,
                              dtype=plan.compute_dtype)
    return factory


def run_once(tmp_path_factory, name: str, produce):
    """Returns produce(directory), computed once per test session: under pytest-xdist the
    workers share the parent of their temporary directories; the first caller runs `produce`
    holding a file lock and stores its (JSON) result there, the others read it.

    For what several tests assert on, wherever pytest-xdist runs them: a cluster's processes
    (test_distributed.py), a run several tests assert on (shared_run)."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get('PYTEST_XDIST_WORKER'):
        base = base.parent
    result_path = base / (name + '.json')
    with open(base / (name + '.lock'), 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not result_path.exists():
            directory = base / name
            directory.mkdir(exist_ok=True)
            try:
                result = produce(directory)
            except BaseException as e:  # the other workers report it too, without a rerun
                result_path.write_text(json.dumps({'failed': '%s: %s' % (name, e)}))
                raise
            result_path.write_text(json.dumps(result))
    result = json.loads(result_path.read_text())
    if 'failed' in result:
        raise AssertionError(result['failed'])
    return result


def shared_run(tmp_path_factory, name: str, saved: bool = False, **flags) -> dict:
    """tiny_run(**flags) once per test session, whichever pytest-xdist worker asks first
    (run_once, under `name` and the flags), for the tests that assert on the same run.

    Returns:
      {'losses': the timed steps' losses, 'op_types': Counter of op types and 'compiled':
      Counter of the types of the ops marked for XLA (_XlaCompile), of the step's graph as the
      run built it, 'variables': {name: shape} of its global variables}; with `saved`, the
      run has a train_dir: 'train_dir' and the 'checkpoint_path' saved after its last step.
    """
    key = '%s%s_%s' % (name, '_saved' if saved else '', '_'.join(
        '%s=%s' % item for item in sorted(flags.items())))

    def produce(directory):
        train_dir = str(directory / 'train') if saved else None
        result, graph = tiny_run_and_graph(**flags, train_dir=train_dir)
        ops = graph.get_operations()
        with graph.as_default():
            variables = {v.name: v.shape.as_list() for v in tf.compat.v1.global_variables()}
        compiled = [op.type for op in ops if '_XlaCompile' in op.node_def.attr]
        return {'losses': result['losses'], 'variables': variables, 'train_dir': train_dir,
                'op_types': dict(collections.Counter(op.type for op in ops)),
                'compiled': dict(collections.Counter(compiled)),
                'checkpoint_path': result.get('checkpoint_path')}
    found = run_once(tmp_path_factory, key, produce)
    return dict(found, op_types=collections.Counter(found['op_types']),
                compiled=collections.Counter(found['compiled']))


def _shared_op_profiles(tmp_path_factory) -> dict:
    """{(model, dataset): speed_model/op_profile.from_model(model, dataset)} of every catalog
    model at its own image size and classes, built once per test session (run_once; JSON,
    rebuilt into the same OpProfile tuples)."""
    from tf_cnn_benchmarks.models import model_catalog
    from tf_cnn_benchmarks.speed_model import op_profile

    def produce(directory):
        del directory
        return [[row.name, row.dataset, list(op_profile.from_model(row.name, row.dataset))]
                for row in model_catalog.rows()]

    def op(values):
        fields = dict(zip(op_profile.Op._fields, values, strict=True))
        for key in ('gemm', 'dgrad', 'wgrad'):
            fields[key] = None if fields[key] is None else tuple(fields[key])
        return op_profile.Op(**fields)

    return {(name, dataset): op_profile.OpProfile(model, tuple(map(op, ops)), tuple(elems),
                                                  source)
            for name, dataset, (model, ops, elems, source) in run_once(
                tmp_path_factory, 'op_profiles', produce)}


def serve_shared_op_profiles(monkeypatch, tmp_path_factory) -> None:
    """op_profile.from_model answers a catalog model at its own image size and classes from
    one build per test session (_shared_op_profiles: a placeholder build of every model takes
    15-25 CPU seconds, and two test files read them all); any other call builds as before."""
    from tf_cnn_benchmarks.models import model_config
    from tf_cnn_benchmarks.speed_model import op_profile
    profiles = _shared_op_profiles(tmp_path_factory)
    real = op_profile.from_model

    def from_model(model_name, dataset='imagenet', image_size=None, num_classes=None):
        found = profiles.get((model_name, dataset))
        if found is not None:
            model = model_config.get_model(model_name, dataset)
            if image_size in (None, model.image_size) and num_classes in (
                    None, model.default_num_classes()):
                return found
        return real(model_name, dataset, image_size, num_classes)

    monkeypatch.setattr(op_profile, 'from_model', from_model)


def measurement(value, *, measured_now: bool = False, utc: str = '2026-01-01T00:00:00Z',
                kind: str = 'injected', others_cores: float | None = 0.1, cores: int = 2,
                spread: float = 0.02, key: str = 'k'):
    """An injected hardware/calibration.Measurement (a quiet one unless others_cores is above
    a quarter of `cores`): tests hand these to the seams instead of measuring this host."""
    from tf_cnn_benchmarks.hardware import calibration
    fraction = None if others_cores is None else others_cores / cores
    return calibration.Measurement(kind, key, value, spread, utc, 0.1, others_cores, fraction,
                                   cores, fraction is None or fraction <= 0.25, measured_now)


class FakeMeter:
    """A metrics/host_load.Meter stand-in: other processes used `others_cores` of `cores`."""

    def __init__(self, others_cores: float = 0.0, cores: int = 2):
        self.cores, self.others = cores, others_cores

    def start(self):
        pass

    def stop(self):
        return {'others_cores': self.others, 'others_fraction': self.others / self.cores,
                'steal_fraction': 0.0}


#: free_port hands each pytest-xdist worker the ports of its own blocks of this many.
PORT_BLOCK = 8


def free_port(span: int = 1, taken=()) -> int:
    """A TCP port p free on this host now, with p .. p + span - 1 free too (consecutive ports:
    a Slurm node's tasks) and none of them in `taken`, for a task process to bind later.

    A port picked (portpicker: the OS's bind to port 0) is free again until the task binds it,
    seconds later once TensorFlow has loaded; meanwhile the other pytest-xdist worker's pick
    could be the same port, and the second task to bind it fails ('Could not start gRPC
    server'). So each worker takes ports only from its own blocks of PORT_BLOCK (block number
    modulo the number of workers); within a worker portpicker never hands a port out twice.

    Raises:
      AssertionError: no such port after many picks.
    """
    import portpicker
    name = os.environ.get('PYTEST_XDIST_WORKER', '')
    index = int(name[2:]) if name.startswith('gw') and name[2:].isdigit() else 0
    workers = max(1, int(os.environ.get('PYTEST_XDIST_WORKER_COUNT') or 1))
    for _ in range(1000):
        base = portpicker.pick_unused_port()
        ports = range(base, base + span)
        if (base // PORT_BLOCK % workers == index % workers
                and (base + span - 1) // PORT_BLOCK == base // PORT_BLOCK
                and not set(ports) & set(taken)
                and all(portpicker.is_port_free(port) for port in ports[1:])):
            return base
    raise AssertionError('no %d free consecutive port(s) of this worker' % span)


def run_command(*args: str) -> subprocess.CompletedProcess:
    """The `tf_cnn_benchmarks` command with `args` (cli.main) in this process, as
    test_cli.run_cli runs it in a subprocess: a CompletedProcess of its exit status and of what
    it printed to sys.stdout and sys.stderr.

    For the tests of a run's output lines and exit status: it saves a Python and TensorFlow
    start-up per run. Not for what only a process of its own shows: signals, how it exits, its
    environment when TensorFlow loads, the file descriptors' output (TensorFlow's C++ lines).
    absl's flags are reset and the environment variables the command sets (cpu_tuning's KMP_*,
    OMP_NUM_THREADS) restored afterwards."""
    from absl import flags

    from tf_cnn_benchmarks import cli
    out, err, environ = io.StringIO(), io.StringIO(), dict(os.environ)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = cli.main(['tf_cnn_benchmarks', *args])
            except SystemExit as e:  # --help, --version
                status = e.code
    finally:
        flags.FLAGS.unparse_flags()
        for name in set(os.environ) - set(environ):
            del os.environ[name]
        os.environ.update({k: v for k, v in environ.items() if os.environ.get(k) != v})
    return subprocess.CompletedProcess(list(args), status, out.getvalue(), err.getvalue())


def dataset_block(lines: list[str]) -> tuple[str, str, list[str]]:
    """The header's `Dataset:` block of `lines` (a run's output lines) as (value, folder, the
    count lines stripped): the folder is on the 'inferred from the files in' line when it fits
    there, on its own line when not (run_header.dataset_lines), so a test reads it whatever the
    length of its tmp path; folder '' for synthetic data."""
    at = next(i for i, line in enumerate(lines) if line.startswith('Dataset:     '))
    end = next((i for i in range(at + 1, len(lines)) if lines[i][:1] != ' '), len(lines))
    rest = [line.strip() for line in lines[at + 1:end]]
    folder = ''
    for how in ('inferred from the files in', 'files in'):
        if rest and rest[0] == how:
            folder, rest = rest[1], rest[2:]
            break
        if rest and rest[0].startswith(how + ' '):
            folder, rest = rest[0][len(how) + 1:], rest[1:]
            break
    return lines[at][len('Dataset:     '):], folder, rest
