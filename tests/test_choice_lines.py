"""The graph choices' lines (graph/choice_lines.py): --print_graph_choices prints the table
where there is one and the one line (with its note) where there is none; the header and the
results JSON count places of the graph, not distinct shapes; a forced choice that changes
nothing says why, per choice; forced choices of an inference run warn (prec58 items 1, 5, 6).
Nothing here measures this host: forced choices need no probe, and the measured ones are
given."""

import collections
import dataclasses

import pytest

from tf_cnn_benchmarks import params, run_header
from tf_cnn_benchmarks.graph import graph_choices
from tf_cnn_benchmarks.models import fast_paths
from tf_cnn_benchmarks.preflight import ineffective_flags

import helpers

RESNET20 = dict(model='resnet20', data_name='cifar10', image_size=8, batch_size=2,
                num_batches=1)
INDENT = ' ' * 13


def test_print_graph_choices_without_a_table_keeps_the_line_and_its_note():
    # Before: with nothing calibrated `table` was [] and the flag dropped the line: a block
    # of 2 lines, no word of the choices or how to calibrate them.
    bench = helpers.tiny_bench(**RESNET20, print_graph_choices=True)
    note = 'graph choices: none (not calibrated; add --calibrate to this command: up to 16 s)'
    plan = dataclasses.replace(bench.plan, graph_choices=graph_choices.Choices(
        'measured', {}, '', {}, note))
    block = run_header.precision_lines(plan)
    assert block == ['Precision:   float32 compute, float32 variables', INDENT + note]
    plain = dataclasses.replace(plan, params=plan.params._replace(print_graph_choices=False))
    assert run_header.precision_lines(plain) == block


def test_forced_choices_count_places_and_print_their_table():
    # Before: 'relu_xla 3, residual_xla 3' (distinct shapes) where the graph has 10 and 9
    # places, and --print_graph_choices printed that count again, not a table.
    bench = helpers.tiny_bench(**RESNET20, graph_choices='relu_xla,residual_xla',
                               print_graph_choices=True)
    choices = bench.plan.graph_choices
    # resnet20: a ReLU after the stem's batch norm and after each unit's first (1 + 9), 9
    # residual joins; 3 shapes of each (one per stage).
    assert choices.forced_sites == {'relu_xla': 10, 'residual_xla': 9}
    summary = choices.summary()
    assert summary['forced_sites'] == {'relu_xla': 10, 'residual_xla': 9}
    assert summary['forced_shapes'] == {'relu_xla': 3, 'residual_xla': 3}
    assert graph_choices.brief(choices) == [
        'graph choices forced (--graph_choices): relu_xla 10 places, residual_xla 9 places']
    assert run_header.precision_lines(bench.plan)[1:] == [INDENT + x for x in [
        'graph choices forced (--graph_choices), the places each changes:',
        '  relu_xla on 2x8x8x16 (4 places), 2x4x4x32 (3 places), 2x2x2x64 (3 places)',
        '  residual_xla on 2x8x8x16 (3 places), 2x4x4x32 (3 places), 2x2x2x64 (3 places)']]
    # The graph has what the header counts: one cluster's ReLU a place.
    graph = bench.build_graph().graph
    compiled = collections.Counter(op.type for op in graph.get_operations()
                                   if '_XlaCompile' in op.node_def.attr)
    assert compiled['Relu'] == 10 + 9 and compiled['AddV2'] == 9


def test_measured_choices_count_the_places_of_each_shape():
    site = fast_paths.Conv1x1(16, 14, 14, 1024, 256, 1, 'NHWC', 'float32')
    other = site._replace(c_in=256, c_out=1024)
    choices = graph_choices.Choices('measured', {
        (site, 'matmul'): 0.6, (site, 'filter_matmul'): 1.0, (other, 'matmul'): 1.1,
        (other, 'filter_matmul'): 1.0}, 'measured here', places={site: 5, other: 6})
    assert choices.changed() == (5, 11)
    assert graph_choices.brief(choices, width=200) == [
        'graph choices measured here: 5 of 11 places changed (conv1x1_matmul 5); all: '
        '--print_graph_choices']
    table = graph_choices.table(choices, width=200)
    assert '  conv1x1_matmul on 16x14x14x1024->256 0.60x (5 places)' in table
    assert [row['places'] for row in choices.summary()['sites']] == [5, 5, 6, 6]


@pytest.mark.parametrize('forced, flags, reason', [
    # resnet20 (cifar) shortcuts by pooling and padding: no 1x1 convolution at all.
    ('conv1x1_matmul,shortcut_matmul', {},
     'conv1x1_matmul: resnet20 has no 1x1 convolution of stride 1; shortcut_matmul: resnet20 '
     'has no 1x1 convolution of stride 2'),
    ('relu_float32', {}, 'the float32 forms change only bfloat16/float16 graphs'),
    ('relu_xla,relu_float32', dict(use_bf16=True), 'relu_xla, also given, builds its sites'),
    ('relu_xla', dict(model='lenet', data_name='imagenet', image_size=28),
     'lenet has no ReLU after a batch norm'),
], ids=['no-1x1', 'float32-graph', 'taken-by-xla', 'no-batch-norm'])
def test_a_forced_choice_that_changes_nothing_says_why(forced, flags, reason, capsys):
    # Before: every such choice got one reason for all: 'no site: the float32 forms change
    # only bfloat16/float16 graphs, the XLA forms nothing inside --xla_compile'.
    plan = helpers.tiny_bench(**{**RESNET20, **flags}, graph_choices=forced,
                              print_graph_choices=True).plan
    err = capsys.readouterr().err
    names = [n for n in forced.split(',') if not plan.graph_choices.forced_sites[n]]
    assert ('warning: --graph_choices: %s change%s nothing in this run (%s)\n' % (
        ', '.join(names), 's' if len(names) == 1 else '', reason)) in err, err
    rows = ' '.join(graph_choices.table(plan.graph_choices, width=1000))
    assert all('%s on none: ' % n in rows for n in names), rows


def test_forced_choices_of_an_inference_run_warn():
    # Before: `--graph_choices=relu_xla --forward_only` was ignored without a word (inference
    # keeps its graph: graph/graph_choices.py).
    for mode in ('forward_only', 'eval'):
        p = params.make_params(model='resnet20', graph_choices='relu_xla',
                               print_graph_choices=True, **{mode: True})
        messages = ineffective_flags.ignored_flags(p)
        why = ('with --%s (the graph choices change only a training graph: inference keeps '
               'its own)' % mode)
        assert '--graph_choices has no effect %s' % why in messages, messages
        assert '--print_graph_choices has no effect %s' % why in messages
    assert not [m for m in ineffective_flags.ignored_flags(params.make_params(
        model='resnet20', graph_choices='relu_xla')) if 'graph_choices' in m]
