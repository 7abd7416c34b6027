"""TensorBoard event files read back, trace/graph/tfprof files, the JSON results and the plot."""

import functools
import glob
import json
import os
import re
import sys
import types

import numpy as np
import pytest
import tensorflow as tf

from tf_cnn_benchmarks import params
from tf_cnn_benchmarks.lifecycle import results_log

import helpers

tf1 = tf.compat.v1

SCALARS = {'total_loss', 'learning_rate', 'images_per_sec'}


_run = functools.partial(helpers.tiny_run, num_batches=4, num_warmup_batches=1,
                         init_learning_rate=0.002)


def read_events(folder):
    """{tag: [global steps]} of the summaries in folder's event files, and whether a graph is
    there."""
    tags, graph = {}, False
    for path in sorted(glob.glob(os.path.join(folder, 'events.out.tfevents.*'))):
        for event in tf1.train.summary_iterator(path):
            graph = graph or bool(event.graph_def)
            for value in event.summary.value:
                tags.setdefault(value.tag, []).append(event.step)
    return tags, graph


@pytest.mark.parametrize('verbosity', [1, 2, 3])
def test_event_files_hold_the_tags_of_each_verbosity(tmp_path, verbosity):
    _run(train_dir=str(tmp_path), summary_verbosity=verbosity, save_summaries_steps=2)
    tags, graph = read_events(str(tmp_path))
    assert graph
    # Warm-up step 1, timed steps 1-4 = global steps 2-5: summaries at 2 and 4.
    for tag in SCALARS:
        assert tags[tag] == [2, 4]
    images = {t for t in tags if 'input_images/image/' in t}
    weights = {t for t in tags if '/weights/cg/' in t}
    gradients = {t for t in tags if '/gradients/cg/' in t}
    # The original's levels: 2 adds the histogram of all gradients, 3 the images and the
    # histograms of each variable and gradient (images came at level 2 here: the bug).
    # The original's tag (here: summaries/log_gradients, until a user's trial).
    assert (tags.get('log_gradients_summary/log_gradients') == [2, 4]) == (verbosity >= 2)
    assert not any('summaries/log_gradients' == t for t in tags)
    assert bool(images) == (verbosity >= 3)
    assert len(weights) == len(gradients) == (6 if verbosity >= 3 else 0)
    if verbosity >= 3:
        assert any(t.endswith('gradients/cg/affine0/weights') for t in gradients)



def test_log_gradients_histogram_counts_the_non_zero_gradient_entries():
    from tf_cnn_benchmarks.lifecycle import summaries
    graph = tf.Graph()
    with graph.as_default(), tf1.Session() as sess:
        grads = [tf.constant([[1.0, 0.0], [-np.e, 0.0]]), tf.constant([np.e ** 2], tf.float16)]
        serialized = sess.run(summaries.log_gradients_histogram(grads))
    [value] = tf1.Summary.FromString(serialized).value
    assert value.tag == 'log_gradients_summary/log_gradients'
    # log|g| of the 3 non-zero entries: 0, 1, 2 (float16 e^2 = 7.387: log 1.9998).
    assert value.histo.num == 3 and value.histo.min == 0.0
    assert value.histo.sum == pytest.approx(3.0, abs=1e-3)
    assert value.histo.max == pytest.approx(2.0, abs=1e-3)


def test_forward_only_level_2_writes_the_scalars_only(tmp_path):
    """A forward-only run has no gradients: level 2 adds nothing to level 1 (no input pipeline
    of the summaries' own is built), level 3 the images and the weights' histograms."""
    for verbosity in (2, 3):
        folder = tmp_path / str(verbosity)
        _run(train_dir=str(folder), summary_verbosity=verbosity, save_summaries_steps=2,
             forward_only=True)
        tags, _ = read_events(str(folder))
        assert not any('log_gradients' in t for t in tags)
        assert not any('/gradients/' in t for t in tags)
        assert any('input_images/image/' in t for t in tags) == (verbosity == 3)
        assert sum('/weights/cg/' in t for t in tags) == (6 if verbosity == 3 else 0)

def test_scalar_values_are_the_run_s(tmp_path):
    result = _run(train_dir=str(tmp_path), summary_verbosity=1, save_summaries_steps=1,
                  num_warmup_batches=0)
    values = {}
    for path in glob.glob(str(tmp_path / 'events.out.tfevents.*')):
        for event in tf1.train.summary_iterator(path):
            for value in event.summary.value:
                values.setdefault(value.tag, {})[event.step] = value.simple_value
    assert [values['total_loss'][s] for s in (1, 2, 3, 4)] == pytest.approx(result['losses'])
    assert values['learning_rate'][1] == pytest.approx(0.002)


def test_the_rate_at_a_global_step_is_the_one_its_update_used(tmp_path):
    """A user's finding (nu_optim57 4): the summary at global step N gave the rate of the
    update from N to N + 1, not of the one that reached N (the original fetched it with its
    update). 10 examples an epoch-period of decay at 4 images a step: the updates from global
    steps 0-5 use 0.004, 0.004, 0.002, 0.002, 0.002, 0.001 (a decay once an update's images
    pass 10, then 20)."""
    _run(train_dir=str(tmp_path), summary_verbosity=1, save_summaries_steps=1,
         num_warmup_batches=0, num_batches=6, data_name='cifar10', image_size=8,
         init_learning_rate=0.004, num_epochs_per_decay=10 / 50000,
         learning_rate_decay_factor=0.5)
    rates = {}
    for path in glob.glob(str(tmp_path / 'events.out.tfevents.*')):
        for event in tf1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.tag == 'learning_rate':
                    rates[event.step] = value.simple_value
    assert [rates[n] for n in range(1, 7)] == pytest.approx(
        [0.004, 0.004, 0.002, 0.002, 0.002, 0.001])


def test_eval_accuracy_goes_to_the_eval_folder(tmp_path, capsys):
    _run(train_dir=str(tmp_path), summary_verbosity=1, eval_during_training_every_n_steps=5,
         num_eval_batches=1)
    out = capsys.readouterr().out
    assert 'TensorBoard summaries of the evaluations in %s\n' % (tmp_path / 'eval') in out
    tags, _ = read_events(str(tmp_path / 'eval'))
    # The original's tags (here: eval/top_1 and eval/top_5, until a user's trial), and the rate.
    assert (tags['eval/Accuracy@1'] == tags['eval/Accuracy@5'] == tags['eval/images_per_sec']
            == [5])
    assert sorted(tags) == ['eval/Accuracy@1', 'eval/Accuracy@5', 'eval/images_per_sec']


def test_an_eval_run_says_where_its_summaries_went(tmp_path, capsys):
    # Before: training said `TensorBoard summaries in DIR`, an --eval run with --eval_dir
    # nothing.
    _run(train_dir=str(tmp_path / 'train'))
    eval_dir = tmp_path / 'ed'
    helpers.tiny_run(train_dir=str(tmp_path / 'train'), eval=True, num_eval_batches=1,
                     eval_dir=str(eval_dir))
    assert 'TensorBoard summaries in %s\n' % eval_dir in capsys.readouterr().out
    assert sorted(read_events(str(eval_dir))[0]) == [
        'eval/Accuracy@1', 'eval/Accuracy@5', 'eval/images_per_sec']


def test_trace_graph_tfprof_json_and_plot_files(tmp_path):
    from tensorflow.core.profiler import tfprof_log_pb2
    pytest.importorskip('matplotlib', reason='--plot_file needs matplotlib (the test extra)')
    files = dict(trace_file=str(tmp_path / 'trace.json'), graph_file=str(tmp_path / 'g.pbtxt'),
                 tfprof_file=str(tmp_path / 'profile'), plot_file=str(tmp_path / 'plot.png'),
                 benchmark_log_dir=str(tmp_path / 'log'))
    result = _run(train_dir=str(tmp_path / 'train'), **files)
    with open(files['trace_file']) as f:
        trace = json.load(f)
    names = {e.get('name', '') for e in trace['traceEvents']}
    # Op types (MatMul or its oneDNN rewrite) and node names of the training step.
    assert any('MatMul' in n for n in names) and len(trace['traceEvents']) > 20
    assert any('SparseSoftmaxCrossEntropyWithLogits' in n for n in names)
    graph_def = tf1.GraphDef()
    from google.protobuf import text_format
    with open(files['graph_file']) as f:
        text_format.Parse(f.read(), graph_def)
    assert any(n.name == 'train_op' for n in graph_def.node)
    profile = tfprof_log_pb2.ProfileProto()
    with open(files['tfprof_file'], 'rb') as f:
        profile.ParseFromString(f.read())
    assert len(profile.nodes) > 10 and list(profile.steps) == [0]
    with open(files['plot_file'], 'rb') as f:
        assert f.read(8) == b'\x89PNG\r\n\x1a\n'
    # The traced step is the run's warm-up step: no extra step (1 + 4).
    assert result['global_step'] == 5 and result['checkpoint_path'].endswith('model.ckpt-5')
    assert result['trace_file'] == files['trace_file'] and result['plot_file']


@pytest.mark.parametrize('warmup, traced', [(2, 'warm-up step 2'), (1, 'warm-up step 1'),
                                            (0, 'timed step 1')])
def test_the_traced_step_is_one_of_the_runs_steps(tmp_path, capsys, warmup, traced):
    """--trace_file (and --tfprof_file) trace the last warm-up step, or timed step 1 without
    warm-up: the run saves the checkpoint of the same global step, with the same weights, as
    the run without them (the trace was an extra step that trained the model once more)."""
    run = dict(num_batches=3, num_warmup_batches=warmup, tf_random_seed=3)
    plain = _run(train_dir=str(tmp_path / 'plain'), **run)
    capsys.readouterr()
    traced_run = _run(train_dir=str(tmp_path / 'traced'), trace_file=str(tmp_path / 't.json'),
                      tfprof_file=str(tmp_path / 'p.txt'), **run)
    out = capsys.readouterr().out
    assert traced_run['global_step'] == plain['global_step'] == warmup + 3
    assert os.path.basename(traced_run['checkpoint_path']) == 'model.ckpt-%d' % (warmup + 3)
    assert 'Traced step: %s of this run' % traced in out
    # The run's first step also sets up (a user's trial: one 64x10 matmul at two thirds of the
    # profile): the traced step's line says so, as nothing did, and once (the profile's line
    # after it said it again).
    note = ("it is the run's first, one-time set-up included (%s): its slowest "
            "ops may be the set-up's; give --num_warmup_batches=2 or more to profile a settled "
            "step" % {1: '1 warm-up step', 0: 'no warm-up step'}.get(warmup))
    [traced_line] = [line for line in out.splitlines() if line.startswith('Traced step')]
    assert traced_line.endswith('; ' + note) == (warmup < 2)
    assert out.count('one-time set-up included') == (warmup < 2)
    with open(tmp_path / 't.json') as f:
        assert any('MatMul' in e.get('name', '') for e in json.load(f)['traceEvents'])
    assert (tmp_path / 'p.txt').stat().st_size > 0
    weights = [helpers.read_checkpoint_values(r['checkpoint_path']) for r in (plain, traced_run)]
    assert sorted(weights[0]) == sorted(weights[1])
    for name, value in weights[0].items():
        np.testing.assert_allclose(weights[1][name], value, rtol=1e-6, err_msg=name)


def test_a_run_stopped_before_the_traced_step_writes_no_trace(tmp_path, capsys):
    from tf_cnn_benchmarks.lifecycle import profiling
    p = params.make_params(trace_file=str(tmp_path / 't.json'), num_warmup_batches=3)
    hook = profiling.ProfilingHook(p)
    assert [c for c in range(1, 6) if hook.wants_trace(c)] == [3]  # the last warm-up step
    assert not profiling.ProfilingHook(p._replace(trace_file=None)).wants_trace(3)
    hook.begin(None)
    result = {'global_step': 2}
    hook.after_loop(result)  # a signal ended the warm-up after step 2
    assert result == {'global_step': 2} and not (tmp_path / 't.json').exists()
    assert capsys.readouterr().err == ('warning: no trace written: the run stopped before '
                                       'warm-up step 3, the traced step\n')


def test_tfprof_file_format_follows_its_name(tmp_path):
    from google.protobuf import text_format
    from tensorflow.core.profiler import tfprof_log_pb2

    from tf_cnn_benchmarks.lifecycle import profiling
    assert [profiling.tfprof_format(n) for n in ('p.txt', 'P.TXT', 'p.pbtxt', 'p', 'p.pb')] == [
        'text', 'text', 'pbtxt', 'binary', 'binary']
    _run(num_batches=1, tfprof_file=str(tmp_path / 'profile.txt'))
    report = (tmp_path / 'profile.txt').read_text()
    assert 'node name | requested bytes | total execution time' in report
    assert '\nMatMul ' in report or '_MklMatMul' in report
    graph = tf.Graph()
    with graph.as_default(), tf1.Session() as sess:
        out = tf.reduce_sum(tf.matmul(tf.ones([4, 4]), tf.ones([4, 4])))
        metadata = tf1.RunMetadata()
        sess.run(out, options=tf1.RunOptions(trace_level=tf1.RunOptions.FULL_TRACE),
                 run_metadata=metadata)
    profiling.write_tfprof(graph, metadata, str(tmp_path / 'profile.pbtxt'), step=7)
    proto = text_format.Parse((tmp_path / 'profile.pbtxt').read_text(),
                              tfprof_log_pb2.ProfileProto())
    assert list(proto.steps) == [7] and len(proto.nodes) >= 4



def test_tfprof_line_names_the_kernels_fused_nodes_ran_as(tmp_path, capsys):
    """tfprof counts a node under its op type as built: a convolution Grappler fused with its
    bias and ReLU is 'Relu' (a lenet forward-only run: 'Relu 1.00 ms (80.8%)', no Conv2D).
    The line names the kernels from the step's StepStats (injected here: the fusion and its
    kernel names depend on the CPU and oneDNN)."""
    from tensorflow.core.framework import step_stats_pb2

    from tf_cnn_benchmarks.lifecycle import profiling
    graph = tf.Graph()
    with graph.as_default():
        x = tf1.placeholder(tf.float32, [4, 4], name='x')
        relu = tf.nn.relu(tf.matmul(x, x, name='mm'), name='r')
        tf.nn.max_pool2d(tf.reshape(relu, [1, 4, 4, 1]), 2, 2, 'VALID', name='pool')
    stats = step_stats_pb2.StepStats()
    device = stats.dev_stats.add(device='/cpu:0')
    for label in ('[cpu 0.4MB 0.4MB] r = _MklNativeFusedConv2D(x, w, b)',
                  'pool = _MklNativeMaxPool(r)',  # the same op under oneDNN's name
                  'mm = MatMul(x, x)', 'gone = _FusedMatMul(x)'):  # as built; not in graph
        device.node_stats.add(node_name=label.split(' = ')[0].split()[-1],
                              timeline_label=label)
    assert profiling.kernels_run_as(graph, stats) == {'Relu': {'_MklNativeFusedConv2D': 1}}
    assert profiling.ran_as_text({'_FusedMatMul': 1, '_FusedConv2D': 2}) == (
        '; ran as 2 _FusedConv2D, 1 _FusedMatMul')
    # A real traced step: Grappler's remapper fuses MatMul, BiasAdd and Relu into one node
    # named after the Relu (_FusedMatMul; _MklNativeFusedMatMul with oneDNN).
    with graph.as_default():
        w, bias = tf1.get_variable('w', [4, 4]), tf1.get_variable('bias', [4])
        fused = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w), bias), name='fused')
    with graph.as_default(), tf1.Session() as sess:
        sess.run(tf1.global_variables_initializer())
        metadata = tf1.RunMetadata()
        sess.run(fused, {x: np.ones([4, 4], np.float32)},
                 options=tf1.RunOptions(trace_level=tf1.RunOptions.FULL_TRACE),
                 run_metadata=metadata)
    capsys.readouterr()
    profiling.write_tfprof(graph, metadata, str(tmp_path / 'p.txt'))
    out = capsys.readouterr().out
    assert re.search(r'slowest ops: .*Relu [0-9.]+ ms \([0-9.]+%; ran as 1 '
                     r'_(MklNative)?FusedMatMul\)', out), out
    assert out.rstrip().endswith(profiling.FUSED_NOTE)


def _file_micros(text: str) -> float:
    """A time of tfprof's text report ('24.60ms', '55us', '1.20sec') in microseconds."""
    for unit, scale in (('us', 1.0), ('ms', 1e3), ('sec', 1e6)):
        if text.endswith(unit):
            return float(text[:-len(unit)]) * scale
    raise ValueError(text)


def test_tfprof_prints_the_five_slowest_op_types_with_the_file_s_times(tmp_path, capsys):
    """The printed op types are the report's first five rows, each with its own time as the
    report gives it (the op view's rows form a chain whose total_exec_micros add up the rows
    below: the line named one op, the slowest, with the time of all of them)."""
    from tf_cnn_benchmarks.lifecycle import profiling
    def build(x):
        y = tf.nn.relu(tf.matmul(x, x))
        z = tf.sigmoid(y) + tf.tanh(y) + tf.exp(-y) + tf.sqrt(tf.square(y) + 1.0)
        return tf.reduce_sum(tf.transpose(z)) + tf.reduce_max(z)
    graph, metadata = helpers.traced_step(build)
    capsys.readouterr()
    profiling.write_tfprof(graph, metadata, str(tmp_path / 'p.txt'))
    line = capsys.readouterr().out.strip()
    report = (tmp_path / 'p.txt').read_text().split('node name | requested bytes')[1]
    # A row: 'MatMul   36.86KB (100.00%, 99.87%),   1.21ms (100.00%, 63.20%),   ...'.
    rows = [r.split(None, 1) for r in report.splitlines()[1:] if r.strip()]
    file_rows = [(name, _file_micros(columns.split('),')[1].split()[0]))
                 for name, columns in rows]
    assert len(file_rows) >= 8  # MatMul, Relu, Sigmoid, Tanh, Exp, Neg, Sqrt, Square, ...
    printed = line.split('slowest ops: ')[1].split(', ')
    assert len(printed) == 5
    total = sum(micros for _, micros in file_rows)
    for (name, micros), text in zip(file_rows[:5], printed):
        shown_name, ms, unit, share = text.split()
        assert shown_name == name and unit == 'ms'
        assert float(ms) * 1000 == pytest.approx(micros, abs=10)  # both rounded to 10 us
        assert float(share.strip('(%)')) == pytest.approx(100 * micros / total, abs=0.2)
    assert float(printed[0].split()[1]) * 1000 < total  # one op type, not all of them

def test_binary_graph_file(tmp_path):
    _run(num_batches=1, graph_file=str(tmp_path / 'graph.pb'))
    graph_def = tf1.GraphDef()
    with open(tmp_path / 'graph.pb', 'rb') as f:
        graph_def.ParseFromString(f.read())
    assert any(n.name == 'train_op' for n in graph_def.node)



def test_graph_file_of_an_eval_run_is_the_eval_graph(tmp_path, capsys):
    """--eval --graph_file writes the graph the evaluation runs (it wrote nothing, silently)."""
    _run(train_dir=str(tmp_path / 'train'), num_batches=1)
    capsys.readouterr()
    path = str(tmp_path / 'eval.pbtxt')
    result = _run(train_dir=str(tmp_path / 'train'), eval=True, num_batches=1, graph_file=path)
    assert 'Graph written to %s' % path in capsys.readouterr().out
    assert result['graph_file'] == path and result['eval']['global_step'] == 2
    from google.protobuf import text_format
    graph_def = text_format.Parse(open(path).read(), tf1.GraphDef())
    ops = {n.op for n in graph_def.node}
    assert 'InTopKV2' in ops and 'MatMul' in ops  # the scoring, the model's forward pass
    assert not any(n.name == 'train_op' for n in graph_def.node)
    assert not ops & {'ApplyGradientDescent', 'ResourceApplyGradientDescent'}

def test_json_results_are_what_run_returns(tmp_path):
    result = _run(benchmark_log_dir=str(tmp_path), num_batches=3)
    [path] = glob.glob(str(tmp_path / 'tf_cnn_benchmarks_trivial_*.json'))
    assert result['results_file'] == path
    umask = os.umask(0)
    os.umask(umask)
    assert os.stat(path).st_mode & 0o777 == 0o666 & ~umask  # not mkstemp's private 0600
    with open(path) as f:
        logged = json.load(f)
    assert logged == json.loads(json.dumps(result))
    env = logged['environment']
    assert env['tf_version'] == tf.__version__ and env['cpu_cores'] >= 1
    assert isinstance(env['cpu_model'], str) and env['gpus'] == []
    assert logged['params']['model'] == 'trivial' and logged['params']['batch_size'] == 4
    assert logged['mode'] == 'training' and logged['num_steps'] == 3
    assert [s['step'] for s in logged['steps']] == [1, 2, 3]
    for step, loss, seconds in zip(logged['steps'], result['losses'], result['step_times']):
        assert step['loss'] == loss and step['step_time_secs'] == seconds
        assert step['images_per_sec'] == pytest.approx(4 / seconds)
    for key in ('images_per_sec', 'global_batch_size', 'restored_step', 'checkpoint_path',
                'eval', 'stopped_by_signal', 'global_step'):
        assert key in logged


def test_plot_without_matplotlib_fails_before_training(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, 'matplotlib', None)  # import matplotlib -> ImportError
    with pytest.raises(params.ParamsError, match='--plot_file needs matplotlib, which is '
                       'not installed: pip install matplotlib'):
        _run(plot_file='/nonexistent/plot.png')
    assert 'Generating training model' not in capsys.readouterr().out


def test_step_records_without_losses():
    records = results_log.step_records([0.5, 0.25], [None, None], 8)
    # mean_images_per_sec: the step line's mean so far, 8 x 2 / 0.75 after step 2.
    assert records == [{'step': 1, 'step_time_secs': 0.5, 'images_per_sec': 16.0,
                        'mean_images_per_sec': 16.0, 'loss': None, 'top_1_accuracy': None,
                        'top_5_accuracy': None},
                       {'step': 2, 'step_time_secs': 0.25, 'images_per_sec': 32.0,
                        'mean_images_per_sec': pytest.approx(16 / 0.75), 'loss': None,
                        'top_1_accuracy': None, 'top_5_accuracy': None}]


def test_a_partial_evaluations_scalars_are_kept_apart(tmp_path):
    """An evaluation a signal stopped after some of its batches wrote its accuracy under the
    original's tags, a point on the curve like a whole evaluation's."""
    from tf_cnn_benchmarks.lifecycle import summaries
    writer = summaries.EvalSummaryWriter(params.make_params(eval_dir=str(tmp_path)))
    whole = {'top_1': 0.5, 'top_5': 0.9, 'images_per_sec': 100.0, 'global_step': 4}
    writer.write(whole)
    writer.write(dict(whole, top_1=0.25, global_step=8, partial=True))
    writer.close()
    tags, _ = read_events(str(tmp_path))
    assert tags['eval/Accuracy@1'] == tags['eval/images_per_sec'] == [4]
    assert tags['eval/Accuracy@1_partial'] == tags['eval/Accuracy@5_partial'] == [8]



def test_a_summary_interval_past_the_runs_last_step_warns_once_before_the_run(tmp_path, capsys):
    # Before: --save_summaries_steps=50 in a 4-step run wrote no scalar, warned of nothing,
    # and still ended `TensorBoard summaries in DIR`.
    train_dir = str(tmp_path / 'train')
    _run(train_dir=train_dir, summary_verbosity=1, save_summaries_steps=50)
    warnings = [line for line in capsys.readouterr().err.splitlines()
                if '--save_summaries_steps' in line]
    assert warnings == [
        'warning: --save_summaries_steps=50 writes no summary in this run: its last global '
        'step is 5, before the next multiple of 50 (50), so %s gets the graph only; give '
        '--save_summaries_steps=5 or less, or more steps (--num_batches)' % train_dir]
    tags, graph = read_events(train_dir)
    assert graph and 'images_per_sec' not in tags
    # An interval the run reaches: summaries, no warning.
    _run(train_dir=str(tmp_path / 'other'), summary_verbosity=1, save_summaries_steps=5)
    assert '--save_summaries_steps' not in capsys.readouterr().err
    assert read_events(str(tmp_path / 'other'))[0]['images_per_sec'] == [5]


def test_the_summary_interval_warning_counts_a_resumed_or_forward_only_runs_steps():
    from tf_cnn_benchmarks.lifecycle import summaries

    def plan(**kw):
        base = dict(training=True, asynchronous=False, num_warmup_batches=1, num_batches=4,
                    params=params.make_params(save_summaries_steps=10, train_dir='/t'))
        base.update(kw)
        return types.SimpleNamespace(**base)
    assert summaries.no_summary_warning(plan(), 5) is None  # global steps 6..10 reach 10
    assert 'its last global step is 19, before the next multiple of 10 (20)' in (
        summaries.no_summary_warning(plan(), 14))
    forward = summaries.no_summary_warning(plan(training=False), 14)  # counts timed steps
    assert 'its last timed step is 4, before the next multiple of 10 (10)' in forward
    assert '--save_summaries_steps=4 or less' in forward
    assert summaries.no_summary_warning(plan(asynchronous=True), 14) is None
