"""The run plan owns every value a run resolves (run_plan.py, runtime/session_config.settle,
preflight/settled_run.settle): each resolver runs once a run, the towers build what the plan's
graph choices say (passed, never kept in a module), and the header's precision block is short
(run_header.py, graph/graph_choices.py brief and table)."""

import collections
import dataclasses
import json
import os
import re

import pytest

from tf_cnn_benchmarks import params
from tf_cnn_benchmarks import run_header as header
from tf_cnn_benchmarks.graph import graph_choices, precision
from tf_cnn_benchmarks.models import fast_paths, memory_forms
from tf_cnn_benchmarks.params import graph_choice_flag
from tf_cnn_benchmarks.runtime import cpu_tuning, session_config, xla_jit

import helpers

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESNET50 = dict(model='resnet50', image_size=32, batch_size=2, num_batches=1,
                num_warmup_batches=0)


def _counted(monkeypatch, calls, module, name):
    real = getattr(module, name)

    def wrapper(*args, **kwargs):
        calls[name] += 1
        return real(*args, **kwargs)
    monkeypatch.setattr(module, name, wrapper)


def test_a_run_resolves_each_value_once(monkeypatch):
    calls = collections.Counter()
    for module, name in ((graph_choices, 'resolve'), (precision, 'compute_dtypes'),
                         (cpu_tuning, 'thread_counts'), (cpu_tuning, 'check_numa'),
                         (session_config, 'make_session_config'), (xla_jit, 'prepare'),
                         (params, 'check_ranges')):
        _counted(monkeypatch, calls, module, name)
    result = helpers.tiny_run(num_batches=2, num_warmup_batches=1)
    assert result['num_steps'] == 2
    assert dict(calls) == {'resolve': 1, 'compute_dtypes': 1, 'thread_counts': 1,
                           'check_numa': 1, 'make_session_config': 1, 'prepare': 1,
                           'check_ranges': 1}


def test_the_bench_receives_its_plan_settled(monkeypatch):
    # One call settles it all before the header or the graph: nothing is resolved later.
    from tf_cnn_benchmarks.preflight import settled_run
    calls = []
    settle = settled_run.settle
    monkeypatch.setattr(settled_run, 'settle', lambda *a, **k: calls.append(1) or settle(*a, **k))
    bench = helpers.tiny_bench()
    plan = bench.plan
    assert calls == [1] and plan.params is bench.params
    assert plan.session_config is bench.session_config is not None and plan.xla == 'off'
    assert plan.graph_choices is not None and plan.threads == cpu_tuning.thread_counts(plan.params)
    bench.info_lines()
    bench.build_graph()
    assert bench.plan is plan  # the header and the graph changed nothing of it


def test_the_default_device_has_one_definition(monkeypatch):
    # --device unset: the command's check, the resolved params and the dry run's plan all ask
    # params.default_device.
    asked = []
    monkeypatch.setattr(params, 'default_device',
                        lambda p, gpus: asked.append(gpus) or 'cpu')
    from tf_cnn_benchmarks.preflight import planned_step, usage
    p = helpers.tiny_params(device=None)
    usage.check_with_tensorflow(p, 3)
    assert params.resolve_params(p, 0).device == 'cpu'
    assert planned_step.plan_device(p, 0)[0].device == 'cpu'
    assert asked == [3, 0, 0]


def test_a_host_preset_plans_its_gpu_in_the_dry_run_and_the_scaling_plan():
    from tf_cnn_benchmarks.preflight import planned_step
    p = helpers.tiny_params(device=None, num_gpus=8, gpu_interconnect='DGX1_V100 ')
    q, gpus, gpu = planned_step.plan_device(p, 0)
    assert (q.device, q.gpu_model, gpus, gpu.name) == ('gpu', 'V100 16GB', 8, 'V100 16GB')
    q, gpus, gpu = planned_step.plan_device(p._replace(gpu_model='A100'), 0)
    assert (q.gpu_model, gpu.name) == ('A100', 'A100 40GB')  # --gpu_model wins
    assert planned_step.plan_device(p._replace(device='cpu'), 0)[2] is None
    assert planned_step.plan_device(p._replace(gpu_interconnect='nvlink'), 0)[2] is None


def test_the_dry_run_plans_the_gpu_the_usage_check_decided_without_looking_it_up_again(
        monkeypatch):
    """issue 38's one planned-device rule: check_with_tensorflow decides the GPU the flags
    name once (hardware/gpu_plans.named_gpu) and returns it; the command's dry run plans with
    it (dry_run.run_planned, planned_step.plan_named_device) and asks the GPU table nothing."""
    from tf_cnn_benchmarks.hardware import gpu_plans, gpu_specs
    from tf_cnn_benchmarks.preflight import dry_run, planned_step, usage
    looked_up = []
    real = gpu_specs.lookup
    monkeypatch.setattr(gpu_specs, 'lookup', lambda name: looked_up.append(name) or real(name))
    p = helpers.tiny_params(device=None, num_gpus=8, gpu_interconnect='dgx1_v100',
                            dry_run=True)
    named = usage.check_with_tensorflow(p, 0)
    assert named.name == 'V100 16GB' and looked_up == ['V100']  # decided once
    assert gpu_plans.planned_gpu(p, 0) == named == gpu_plans.named_gpu(p)
    q, gpus, gpu = planned_step.plan_named_device(p, 0, named)
    assert (q.device, q.gpu_model, gpus, gpu) == ('gpu', 'V100 16GB', 8, named)
    assert (q, gpus, gpu) == planned_step.plan_device(p, 0)  # the library's: looked up
    looked_up.clear()
    seen = []

    def planned(make_bench, q, visible, gpu):  # the command's dry run, as cli calls it
        seen.append((q.gpu_interconnect, visible, gpu))
        return 0

    checked = []
    real_check = usage.check_with_tensorflow

    def check(*args, **kwargs):
        looked_up.clear()
        out = real_check(*args, **kwargs)
        checked.append(list(looked_up))
        return out

    monkeypatch.setattr(dry_run, 'run_planned', planned)
    monkeypatch.setattr(usage, 'check_with_tensorflow', check)
    assert helpers.run_command('--model=trivial', '--dry_run', '--num_gpus=8',
                               '--gpu_interconnect=dgx1_v100', '--batch_size=2').returncode == 0
    assert seen == [('dgx1_v100', 0, named)]
    assert checked == [['V100']] and looked_up == ['V100']  # once after TensorFlow loaded
    from tf_cnn_benchmarks.preflight import scaling_plan  # the scaling plan's too
    monkeypatch.setattr(scaling_plan, 'run_planned',
                        lambda make_bench, q, visible, gpu, given: planned(None, q, visible, gpu))
    assert helpers.run_command('--model=trivial', '--plan_scaling', '--num_gpus=8',
                               '--gpu_interconnect=dgx1_v100', '--batch_size=2').returncode == 0
    assert seen[1:] == [('dgx1_v100', 0, named)] and checked[1:] == [['V100']]
    assert looked_up == ['V100']
    # No GPU named: the CPU is planned, and nothing is looked up either.
    assert usage.check_with_tensorflow(p._replace(gpu_interconnect=None), 0) is None


def _forward_op_types(graph) -> collections.Counter:
    return collections.Counter(op.type for op in graph.get_operations()
                               if op.type in ('Conv2D', 'MatMul') and 'gradients' not in op.name)


def test_the_towers_build_the_plans_choices_passed_not_remembered():
    bench = helpers.tiny_bench(**RESNET50, graph_choices='conv1x1_matmul')
    forced = _forward_op_types(bench.build_graph().graph)
    assert bench.plan.graph_choices.mode == frozenset({'conv1x1_matmul'})
    # The same process and model: the plan's choices, not an earlier build's, decide.
    bench.plan = dataclasses.replace(
        bench.plan, graph_choices=graph_choices.Choices(graph_choice_flag.OFF, {}, ''))
    off = _forward_op_types(bench.build_graph().graph)
    assert off['Conv2D'] == 53 and forced['Conv2D'] == 53 - 30  # resnet50's stride-1 1x1s
    assert forced['MatMul'] == off['MatMul'] + 30


def test_no_module_keeps_a_runs_choices():
    # A guard beside the behavioural test above: the builder's options and the graph choices
    # travel as arguments (fast_paths.BuildOptions, RunPlan.graph_choices).
    for path in ('models/fast_paths.py', 'models/convnet_builder.py', 'models/model.py',
                 'graph/graph_choices.py', 'graph/tower.py', 'graph/tower_loop.py'):
        with open(os.path.join(REPO, path)) as f:
            text = f.read()
        assert 'contextvars' not in text and not re.search(r'\b_MEMO\b', text), path
    assert not hasattr(fast_paths, 'graph_choices') and not hasattr(graph_choices, '_MEMO')


def _sites():
    """resnet50-like sites at batch 16: 1x1 convolutions of stride 1 and 2, ReLU and
    residual sites, each form with a factor."""
    convs = [fast_paths.Conv1x1(16, s, s, c, c * 4, stride, 'NHWC', 'float32')
             for s, c in ((56, 64), (28, 128), (14, 256), (7, 512)) for stride in (1, 2)]
    relus = [memory_forms.Site(kind, 16, s, s, c, 'NHWC', 'float32')
             for kind in ('relu', 'residual') for s, c in ((112, 64), (56, 256), (28, 512),
                                                          (14, 1024), (7, 2048))]
    return convs + relus


def _measured(when='measured 2026-12-03T13:04:22Z, cached'):
    factors = {}
    for i, site in enumerate(_sites()):
        for form in graph_choices.forms_of(site):
            factors[site, form] = 0.80 + 0.07 * (i % 7)
    return graph_choices.Choices(graph_choice_flag.MEASURED, factors, when)


def _precision_block(lines):
    start = next(i for i, x in enumerate(lines) if x.startswith('Precision:'))
    end = next(i for i, x in enumerate(lines) if x.startswith('XLA:'))
    return lines[start:end]


@pytest.mark.parametrize('choices', [
    _measured(), _measured('measured here'),
    graph_choices.Choices(frozenset(graph_choice_flag.CHOICES), {}, ''),
    graph_choices.Choices(frozenset({'conv1x1_matmul'}), {}, '')],
    ids=['measured-cached', 'measured-here', 'all-forced', 'one-forced'])
def test_the_precision_block_fits_three_short_lines(choices):
    bench = helpers.tiny_bench(**RESNET50)
    bench.plan = dataclasses.replace(bench.plan, graph_choices=choices)  # never measured here
    block = _precision_block(bench.info_lines())
    assert 2 <= len(block) <= 3 and all(len(x) <= 100 for x in block), block
    assert block[0] == 'Precision:   float32 compute, float32 variables'
    assert block[1].startswith('             graph choices ')


def test_the_brief_line_counts_what_the_table_lists():
    choices = _measured('measured here')
    built = [s for s in dict.fromkeys(s for s, _ in choices.factors) if choices.decide(s)]
    names = [graph_choices.choice_name(s, choices.decide(s)) for s in built]
    counts = collections.Counter(names)
    # Places (each site here is at one: no Choices.places given).
    head = 'graph choices measured here: %d of %d places changed' % (len(built), len(_sites()))
    detail = ' (%s)' % ', '.join('%s %d' % (n, counts[n]) for n in graph_choice_flag.CHOICES
                                 if n in counts)
    # The counts by choice where they fit, else the hint to the table.
    assert graph_choices.brief(choices) == [head + '; all: --print_graph_choices']
    assert graph_choices.brief(choices, width=len(head + detail)) == [head + detail]
    # A cached run's longer 'when' leaves the counts out, never the line's width.
    [cached] = graph_choices.brief(_measured())
    assert cached == ('graph choices measured 2026-12-03T13:04:22Z, cached: %d of %d places '
                      'changed' % (len(built), len(_sites())))
    table = graph_choices.table(choices)
    assert all(len(x) <= graph_choices.BRIEF_WIDTH for x in table)
    listed = ' '.join(table)
    assert all(s.describe() in listed for s in _sites())


def test_print_graph_choices_puts_the_table_in_the_header_and_the_json_has_it():
    bench = helpers.tiny_bench(**RESNET50, print_graph_choices=True)
    choices = _measured()
    plan = dataclasses.replace(bench.plan, graph_choices=choices)
    block = header.precision_lines(plan)
    assert block[1:] == ['             ' + x for x in graph_choices.table(choices)]
    assert len(block) > 10 and all(len(x) <= 100 for x in block)
    summary = json.loads(json.dumps(plan.summary()))['graph_choices']
    assert summary['mode'] == 'measured' and summary['when'] == choices.when
    assert len(summary['sites']) == len(choices.factors)
    built = sum(1 for row in summary['sites'] if row['built'])
    assert built == sum(1 for s in dict.fromkeys(s for s, _ in choices.factors)
                        if choices.decide(s))
    assert 'session_config' not in plan.summary() and plan.summary()['xla'] == 'off'


def test_a_runs_results_json_records_its_graph_choices(tmp_path):
    result = helpers.tiny_run(num_batches=1, num_warmup_batches=0, graph_choices='relu_xla')
    # 'forced_sites': how many places of the model's graph each forced choice changed, of
    # how many distinct shapes (none in the trivial model: its header says '(no site)').
    assert result['plan']['graph_choices'] == {'mode': ['relu_xla'], 'when': '', 'sites': [],
                                               'forced_sites': {'relu_xla': 0},
                                               'forced_shapes': {'relu_xla': 0}}
