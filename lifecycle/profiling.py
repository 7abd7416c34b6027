"""Profiling outputs: --graph_file, --trace_file (Chrome trace) and --tfprof_file.

--graph_file: the run's graph as a GraphDef with each op's output shapes (`_output_shapes`, as
  the original wrote it), in protobuf text format when the file name ends in 'txt' (`g.pbtxt`,
  `g.txt`; case as given, the original's rule), else binary (`graph_as_text`, the rule of
  --partitioned_graph_file_prefix too); written once the session is set up (so it includes the
  checkpoint and summary ops).
--trace_file: a Chrome trace (JSON with "traceEvents"; open in chrome://tracing or Perfetto) of
  one of the run's own steps, run with RunOptions(trace_level=FULL_TRACE) and converted by
  tensorflow.python.client.timeline: the last warm-up step (the one the total block's figures
  trace too), so tracing overhead never touches the reported images/sec, and the run takes
  no extra step (the same global step and checkpoint as without the flag). Without warm-up
  steps (--num_warmup_batches=0) it is timed step 1, and that step's time includes the
  tracing. With fewer than two warm-up steps the traced step is the run's first, which also
  does the one-time set-up (kernels chosen, buffers allocated), so its slowest ops may be the
  set-up's: the `Traced step` line says so, once (`set_up_note`). The files are written
  after the timed loop (phase `after_loop`).
--tfprof_file: a tfprof profile of the same step (tf.compat.v1.profiler.Profiler), in the
  form its name asks for: `.txt` a text report (tfprof's op view: every op type with its time
  and memory, slowest first); `.pbtxt` the ProfileProto in protobuf text format; any other
  name the binary ProfileProto (`serialize_to_string`, for the tfprof tools). The five op
  types that took the most time are printed with their own times, as the text report gives
  them, and their share of the step's op time, read from the ProfileProto (`op_type_times`,
  `slowest_op_types`). tfprof names each node by
  its op type in the graph as built, so a node Grappler fused counts under the op it ends in
  (a convolution with its bias and ReLU under Relu); when some nodes of a type ran as another
  kernel, the line names the kernel each of its nodes ran as, with their counts, from the
  step's StepStats (`kernels_run_as`: 'Relu 1.00 ms (80.8%; ran as 2 _FusedConv2D,
  1 _FusedMatMul)', 'FusedBatchNormV3 2.72 ms (10.1%; ran as 10 _MklNativeFusedBatchNormEx,
  9 _MklNativeFusedBatchNormV3)').
--nouse_chrome_trace_format: --trace_file holds the same step's StepStats protobuf in text
  format (`step_stats_text`) instead of a Chrome trace.
--partitioned_graph_file_prefix=DIR/name.pbtxt: the graphs TensorFlow actually ran in that step,
  one per device after partitioning and Grappler's rewrites, each written to
  `DIR/name_job_localhost_replica_0_task_0_device_CPU_0.pbtxt` (the device of the partition's
  first node, with '/' and ':' turned into '_', inserted before the extension); text format
  when the prefix's file name ends in 'txt', else binary GraphDef (`graph_as_text`,
  `partition_graph_files`).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys

import tensorflow as tf
from google.protobuf import text_format
from tensorflow.core.profiler import tfprof_log_pb2
from tensorflow.python.client import timeline

from .. import cnn_util
from ..input_data import data_errors
from ..runtime import file_systems, traced_session
from . import run_hooks

tf1 = tf.compat.v1


def graph_as_text(path: str) -> bool:
    """Whether a graph file (--graph_file, or a --partitioned_graph_file_prefix) is written in
    protobuf text format: its file name ends in 'txt' ('g.pbtxt', 'g.txt'; not 'g.PBTXT'), the
    original's rule for both; binary GraphDef otherwise."""
    return os.path.basename(path).endswith('txt')


def write_graph(graph, path: str) -> str:
    """Writes `graph` to `path` as a GraphDef with its ops' output shapes (`_output_shapes`
    attrs), text or binary by `graph_as_text` (local or remote: TensorFlow writes it, through
    a temporary file renamed over the file: a local symbolic link's target is written, not the
    link replaced, file_systems.write_target). Returns the path."""
    directory, name = os.path.split(path if file_systems.is_remote(path) else
                                    file_systems.write_target(path))
    file_systems.makedirs(directory)
    as_text = graph_as_text(path)
    tf.io.write_graph(graph.as_graph_def(add_shapes=True), directory, name, as_text=as_text)
    cnn_util.log_fn('Graph written to %s (%s GraphDef with shapes)' % (
        path, 'text' if as_text else 'binary'))
    return path


def stage_if_empty(sess, pipeline) -> None:
    """Puts one batch into each staging area that is empty (a run that completed leaves them
    empty), so one more step can run without blocking."""
    if pipeline.step_ops and pipeline.size_ops and min(sess.run(pipeline.size_ops)) == 0:
        with data_errors.data_errors():
            sess.run(pipeline.step_ops)


def traced_step(sess, fetches, pipeline=None, partition_graphs=False):
    """Runs `fetches` once with a full trace (staging a batch first if needed); returns the
    RunMetadata (with the partition graphs too when `partition_graphs`)."""
    if pipeline is not None:
        stage_if_empty(sess, pipeline)
    options = traced_session.trace_options(partition_graphs=partition_graphs)
    metadata = tf1.RunMetadata()
    with data_errors.data_errors():
        sess.run(fetches, options=options, run_metadata=metadata)
    return metadata


def write_chrome_trace(metadata, path: str) -> str:
    """Writes the step stats of `metadata` as Chrome trace JSON."""
    trace = timeline.Timeline(metadata.step_stats).generate_chrome_trace_format(show_memory=True)
    _write(path, trace.encode('utf-8'))
    cnn_util.log_fn('Chrome trace written to %s' % path)
    return path


def tfprof_format(path: str) -> str:
    """'text' for a name ending in .txt, 'pbtxt' for .pbtxt, else 'binary' (module docstring)."""
    lower = path.lower()
    return 'text' if lower.endswith('.txt') else 'pbtxt' if lower.endswith('.pbtxt') else 'binary'


def write_tfprof(graph, metadata, path: str, step: int = 0, top: int = 5,
                 note: str = '') -> str:
    """Writes a tfprof profile of one traced step in the format of `path` (`tfprof_format`)
    and prints the `top` slowest op types (`op_type_times`, `slowest_op_types`), then `note`
    (`set_up_note`) on the same line.

    Args:
      graph: the tf.Graph the step ran.
      metadata: the step's RunMetadata (a FULL_TRACE run's).
      path: the --tfprof_file.
      step: the step id the profile files the trace under.
      top: how many op types the line names.
      note: the end of the line.

    Raises:
      cnn_util.BenchmarkError: the file cannot be written (`_write`).
    """
    with _without_tfprof_noise():  # its FLOPs line: the run prints no FLOPs from tfprof
        profiler = tf1.profiler.Profiler(graph)
    profiler.add_step(step, metadata)
    kind = tfprof_format(path)
    serialized = profiler.serialize_to_string()
    proto = tfprof_log_pb2.ProfileProto.FromString(serialized)
    if kind == 'text':
        builder = tf1.profiler.ProfileOptionBuilder
        # Every op type that ran, as the line counts them: the op view shows at most
        # max_depth rows, and time_and_memory() leaves out the types that requested no memory
        # (ops that ran in place, such as an AddV2 that reused its input).
        options = (builder(builder.time_and_memory()).with_max_depth(1 << 30)
                   .with_min_memory(min_bytes=0).order_by('micros'))
        if not file_systems.is_remote(path):
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with _without_tfprof_noise():  # the report is the file; its returned proto is unused
            profiler.profile_operations(options.with_file_output(path + '.tmp').build())
        file_systems.replace(path + '.tmp', path)
    elif kind == 'pbtxt':
        _write(path, text_format.MessageToString(proto).encode('utf-8'))
    else:
        _write(path, serialized)
    in_graph = {op.name for op in graph.get_operations()}
    made = {name: op for name, op in trace_op_types(metadata.step_stats).items()
            if name not in in_graph}  # the runtime's nodes: their tfprof type is their name
    times = op_type_times(proto, step, made)
    total = max(sum(times.values()), 1)
    ran = kernels_run_as(graph, metadata.step_stats)
    cnn_util.log_fn('tfprof profile (%s) written to %s; slowest ops: %s%s' % (
        kind, path, ', '.join(
            '%s %.2f ms (%.1f%%%s)' % (name, micros / 1000.0, 100.0 * micros / total,
                                       ran_as_text(ran.get(name, {})))
            for name, micros in slowest_op_types(times, top)),
        (FUSED_NOTE if ran else '') + note))
    return path


# What TensorFlow's profiler writes to sys.stderr that is no news to a user of this run:
# Profiler() counts the ops whose FLOPs it cannot compute (the run prints no FLOPs from
# tfprof); profile_operations() cannot parse the op view it returns once its rows, nested one
# per op type, are deeper than the protobuf parser's limit (the report file is whole).
_TFPROF_NOISE = re.compile(r'\d+ ops no flops stats due to incomplete shapes\.$'
                           r'|Cannot parse returned proto: ')


@contextlib.contextmanager
def _without_tfprof_noise():
    """Holds back TensorFlow's profiler lines of `_TFPROF_NOISE` written to sys.stderr inside
    the block; every other line written there is passed on, in order, at its end."""
    caught = io.StringIO()
    try:
        with contextlib.redirect_stderr(caught):
            yield
    finally:
        kept = [line for line in caught.getvalue().splitlines(keepends=True)
                if not _TFPROF_NOISE.match(line)]
        if kept:
            sys.stderr.write(''.join(kept))


#: After the slowest ops when some ran as other kernels (`kernels_run_as`).
FUSED_NOTE = ('; op types as built: a node Grappler fused counts under the op it ends in '
              '(a convolution or matmul fused with its bias and ReLU under Relu)')

# A StepStats node's timeline_label: '[allocator ...] NAME = KERNEL(inputs)'.
_LABEL = re.compile(r'^(?:\[[^\]]*\] )?(?P<name>\S+) = (?P<kernel>[\w.]+)\(')


def kernels_run_as(graph, step_stats) -> dict[str, dict[str, int]]:
    """The kernels the nodes of an op type ran as in one traced step, for each op type (as
    built in `graph`, the type tfprof counts them under) some of whose nodes ran as another
    kernel: {'Relu': {'_FusedConv2D': 2, '_FusedMatMul': 1}}, {'FusedBatchNormV3':
    {'_MklNativeFusedBatchNormEx': 10, '_MklNativeFusedBatchNormV3': 9}} (every node of the
    type counted once, under the kernel it ran as). Grappler's remapper gives a fused node the
    name of the op it ends in (`conv0/Relu` runs as `_FusedConv2D`, the convolution, bias and
    ReLU in one); a kernel that is the same op under oneDNN's name (`_MklNativeMaxPool` for
    MaxPool) is not another kernel.

    Args:
      graph: the tf.Graph the step ran.
      step_stats: the step's StepStats (RunMetadata.step_stats of a FULL_TRACE run), whose
        timeline labels name the kernel each node ran as.
    """
    ops = {op.name: op.type for op in graph.get_operations()}
    kernels: dict[str, str] = {}  # node name -> its kernel, each node once
    for device in step_stats.dev_stats:
        for node in device.node_stats:
            match = _LABEL.match(node.timeline_label)
            if match and match['name'] in ops:
                kernels.setdefault(match['name'], match['kernel'])
    out: dict[str, dict[str, int]] = {}
    for name, kernel in kernels.items():
        counts = out.setdefault(ops[name], {})
        counts[kernel] = counts.get(kernel, 0) + 1
    return {built: counts for built, counts in out.items()
            if any(re.sub('^_Mkl(Native)?', '', k) != built for k in counts)}


def ran_as_text(kernels: dict[str, int]) -> str:
    """'; ran as 2 _FusedConv2D, 1 _FusedMatMul' for an op type's `kernels_run_as` entry
    (the most nodes first, then by name), '' for none."""
    return ('; ran as ' + ', '.join('%d %s' % (n, k) for k, n in sorted(
        kernels.items(), key=lambda item: (-item[1], item[0]))) if kernels else '')


def trace_op_types(step_stats) -> dict[str, str]:
    """{node name: kernel type} of the nodes a StepStats traced, from their timeline labels
    ('cluster_0_1/xla_run = _XlaRun(...)', '[mklcpu 0.2MB 0.2MB] MatMul = _MklMatMul(...)': the
    kernel's name, as the runtime ran it): the types of nodes the runtime made that the graph
    lacks (XLA's launch ops, _retval_*), which tfprof names after the node."""
    types = {}
    for device in step_stats.dev_stats:
        for node in device.node_stats:
            match = _LABEL.match(node.timeline_label)
            if match and match['name'] == node.node_name:
                types[node.node_name] = match['kernel']
    return types



def op_type_times(profile, step: int = 0, trace_types: dict | None = None) -> dict[str, int]:
    """The execution time of each op type in `step` of a tfprof ProfileProto, in
    microseconds: its nodes' CPU and accelerator times summed, as tfprof's op view counts an
    op type's own time (the text report's "total execution time"; a node tfprof made for a
    StepStats name the graph lacks, such as `_retval_loss_0_0`, is its own op type there too).

    Read from the profile itself rather than from the op view (`Profiler.profile_operations`),
    whose rows come back nested one level per op type, a chain deeper than the protobuf
    parser's limit once a run has about 100 op types (two resnet20 towers: 122): the parser
    then gave up part-way and said so on stderr.

    Args:
      profile: a tfprof_log_pb2.ProfileProto (Profiler.serialize_to_string, parsed).
      step: the step id the trace was added under (Profiler.add_step).
      trace_types: {node name: type} of the nodes the runtime made, which the graph lacks
        (`trace_op_types` of the step's StepStats less the graph's names): such a node, which
        tfprof names after itself, counts as its traced type ('_XlaRun', not
        'cluster_0_1/xla_run'); None: as tfprof names it.

    Returns:
      {op type: microseconds}, op types with no time in `step` left out.
    """
    times: dict[str, int] = {}
    for node in profile.nodes.values():
        if step not in node.execs:
            continue
        run = node.execs[step]
        micros = sum(int(pair.int64_values[1]) for execs in (run.accelerator_execs,
                                                             run.cpu_execs)
                     for exec_time in execs.values() for pair in exec_time.times)
        if micros:
            op = node.op
            if trace_types and op == node.name:
                op = trace_types.get(op, op)
            times[op] = times.get(op, 0) + micros
    return times


def slowest_op_types(times: dict[str, int], top: int = 5) -> list[tuple[str, int]]:
    """The `top` op types of `op_type_times` that took the most time: [(op type,
    microseconds)], slowest first, ties by name (the text report's order)."""
    return sorted(times.items(), key=lambda item: (-item[1], item[0]))[:top]


def _write(path: str, data: bytes) -> None:
    """Writes `data` to `path` under a temporary name, then renames it (atomic; a symbolic
    link's target, in the target's folder: file_systems.write_target); a remote `path` in one
    piece (runtime/file_systems.py).

    Raises:
      cnn_util.BenchmarkError: the file cannot be written (a full disk, ...); nothing is left
        behind.
    """
    if file_systems.is_remote(path):
        try:
            file_systems.write_remote(path, data)
        except OSError as e:
            write_failed(path, e)
        return
    target = file_systems.write_target(path)
    tmp = target + '.tmp'
    try:
        os.makedirs(os.path.dirname(target), exist_ok=True)  # as the original
        with open(tmp, 'wb') as f:
            f.write(data)
        os.replace(tmp, target)
    except OSError as e:
        write_failed(path, e, tmp)


def write_failed(path: str, error: OSError, tmp: str | None = None):
    """Removes `tmp` (if any) and raises the one-line error of an output that cannot be written.

    Raises:
      cnn_util.BenchmarkError: always, naming the file and the reason.
    """
    if tmp and os.path.exists(tmp):
        os.remove(tmp)
    raise cnn_util.BenchmarkError('cannot write %s: %s' % (
        path, error.strerror or error)) from None


def traced_call(num_warmup: int) -> int:
    """The step the profiling outputs trace (1-based over warm-up and timed steps): the last
    warm-up step, or timed step 1 of a run without warm-up."""
    return num_warmup if num_warmup > 0 else 1


def set_up_note(num_warmup: int) -> str:
    """'' with two warm-up steps or more; else what the traced step (the run's first) holds
    besides a step, after a '; ' for the end of the `Traced step:` line, the one line that
    says it (the tfprof line after it names the slowest ops without it): '; it is the run's
    first, one-time set-up included (1 warm-up step): its slowest ops may be the set-up's;
    give --num_warmup_batches=2 or more to profile a settled step'."""
    if num_warmup >= 2:
        return ''
    return ("; it is the run's first, one-time set-up included (%s): its slowest "
            "ops may be the set-up's; give --num_warmup_batches=2 or more to profile a settled "
            "step" % ('1 warm-up step' if num_warmup == 1 else 'no warm-up step'))


def traced_step_name(num_warmup: int) -> str:
    """'warm-up step 5' or 'timed step 1': the step `traced_call` picks, as the lines say it."""
    return 'warm-up step %d' % num_warmup if num_warmup > 0 else 'timed step 1'


class ProfilingHook(run_hooks.RunHook):
    """Writes --graph_file at begin; --trace_file, --tfprof_file and the partition graphs of
    the step `traced_call` picks, traced in the loop (RunHook.wants_trace: one of the run's
    steps, never an extra one), after the timed loop (phase `after_loop`).

    Args:
      p: Params (graph_file, trace_file, tfprof_file, partitioned_graph_file_prefix,
        use_chrome_trace_format, num_warmup_batches: resolved, as RunPlan.params has it).
    """

    output = 'the profiling files'  # after_loop names those that failed
    output_flag = None

    def __init__(self, p):
        self.p = p
        self._ctx = None
        self._trace = None
        self._call = traced_call(p.num_warmup_batches)
        self.wants_partition_graphs = bool(p.partitioned_graph_file_prefix)

    def _traces(self) -> bool:
        p = self.p
        return bool(p.trace_file or p.tfprof_file or p.partitioned_graph_file_prefix)

    def begin(self, ctx):
        self._ctx = ctx
        if self.p.graph_file:
            write_graph(ctx.info.graph, self.p.graph_file)

    def wants_trace(self, call: int) -> bool:
        return call == self._call and self._traces()

    def traced(self, call, wall_secs, trace):
        self._trace = trace

    def after_loop(self, result):
        p = self.p
        if self.p.graph_file:
            result['graph_file'] = p.graph_file
        prefix = p.partitioned_graph_file_prefix
        if not self._traces():
            return
        metadata = self._trace
        if metadata is None:  # a signal ended the run before that step
            cnn_util.warn('no trace written: the run stopped before %s, the traced step'
                          % traced_step_name(p.num_warmup_batches))
            return
        note = set_up_note(p.num_warmup_batches)
        cnn_util.log_fn('Traced step: %s of this run%s%s' % (
            traced_step_name(p.num_warmup_batches),
            '' if p.num_warmup_batches else ' (its time includes the tracing)', note))
        writers = []
        if p.trace_file:
            writers.append(('the trace', '--trace_file', 'trace_file',
                            lambda: self._write_trace(metadata)))
        if prefix:
            writers.append(('the partition graphs', '--partitioned_graph_file_prefix',
                            'partition_graph_files',
                            lambda: self._write_partition_graphs(metadata, prefix)))
        if p.tfprof_file:
            writers.append(('the tfprof profile', '--tfprof_file', 'tfprof_file',
                            lambda: write_tfprof(self._ctx.info.graph, metadata,
                                                 p.tfprof_file)))
        failed = []
        for output, flag, key, write in writers:  # each written whatever the others do
            try:
                result[key] = write()
            except (cnn_util.BenchmarkError, OSError, tf.errors.OpError) as e:
                failed.append((output, flag, e))
        if failed:
            self.output = ' and '.join(output for output, _, _ in failed)
            self.output_flag = ', '.join(flag for _, flag, _ in failed)
            raise cnn_util.BenchmarkError('; '.join(_failure_text(e, flag)
                                                    for _, flag, e in failed))

    def _write_trace(self, metadata) -> str:
        p = self.p
        if p.use_chrome_trace_format:
            return write_chrome_trace(metadata, p.trace_file)
        _write(p.trace_file, step_stats_text(metadata))  # --nouse_chrome_trace_format
        cnn_util.log_fn('StepStats (protobuf text) written to %s' % p.trace_file)
        return p.trace_file

    @staticmethod
    def _write_partition_graphs(metadata, prefix: str) -> list[str]:
        files = partition_graph_files(metadata, prefix)
        for path, data in files:
            _write(path, data)
        cnn_util.log_fn('Partition graphs written: %s' % ', '.join(f for f, _ in files))
        return [f for f, _ in files]

    def written(self, result):
        shown = [('the graph', 'graph_file'), ('the trace', 'trace_file'),
                 ('the tfprof profile', 'tfprof_file')]
        lines = ['%s %s' % (what, result[key]) for what, key in shown if result.get(key)]
        if result.get('partition_graph_files'):
            lines.append('the partition graphs %s' % ', '.join(result['partition_graph_files']))
        return lines


def _failure_text(error: BaseException, flag: str) -> str:
    """'cannot write /t.json: No space left on device' for a profiling file that failed."""
    if isinstance(error, cnn_util.BenchmarkError):
        return str(error)
    if isinstance(error, OSError):
        return 'cannot write %s: %s' % (error.filename or flag, error.strerror or error)
    return 'cannot write %s: %s' % (flag, cnn_util.error_summary(error))


def step_stats_text(metadata) -> bytes:
    """`metadata.step_stats` (a tf RunMetadata's StepStats) in protobuf text format."""
    return text_format.MessageToString(metadata.step_stats).encode('utf-8')


def partition_graph_paths(prefix: str, devices) -> list[str]:
    """The file of each partition of --partitioned_graph_file_prefix (module docstring), for
    `devices` in order.

    Args:
      prefix: --partitioned_graph_file_prefix, e.g. 'out/graph.pbtxt'.
      devices: each partition's device, e.g. '/job:localhost/replica:0/task:0/device:CPU:0'.
    """
    folder, name = os.path.split(prefix)
    base, dot, ext = name.rpartition('.')
    if not dot:
        base, ext = name, ''
    return [os.path.join(folder, '%s%s%s' % (base, d.replace('/', '_').replace(':', '_'),
                                             dot + ext)) for d in devices]


def partition_graph_files(metadata, prefix: str) -> list[tuple[str, bytes]]:
    """(path, contents) of each GraphDef of `metadata.partition_graphs`, text or binary as the
    prefix says (module docstring)."""
    graphs = list(metadata.partition_graphs)
    devices = [g.node[0].device if g.node else 'empty%d' % i for i, g in enumerate(graphs)]
    as_text = graph_as_text(prefix)
    return [(path, text_format.MessageToString(graph).encode('utf-8') if as_text
             else graph.SerializeToString())
            for graph, path in zip(graphs, partition_graph_paths(prefix, devices))]
