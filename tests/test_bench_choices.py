"""bench/bench_choices.py: the per-op-type table of a traced step and the usage errors."""

import pytest

import checkout

bench_choices = checkout.load_bench('bench_choices')


def test_kernel_names_fold_into_op_types():
    kind = bench_choices.kernel_type
    assert kind('a/b = _MklNativeConv2DBackpropFilter(x, y)') == 'Conv2DBackpropFilter'
    assert kind('bn = _MklNativeFusedBatchNormEx(x)') == 'FusedBatchNormEx'
    assert kind('r = _MklRelu(x)') == 'Relu'
    assert kind('g = ReluGrad(a, b)') == 'ReluGrad'
    assert kind('c = _FusedConv2D(x)') == 'FusedConv2D'


def test_the_groups_sum_a_traced_steps_ops():
    per_type = {'Conv2D': 10.0, 'Conv2DBackpropInput': 5.0, 'ReluGrad': 2.0, 'AddN': 1.0,
                'FusedBatchNormEx': 3.0, 'Cast': 0.5, 'L2Loss': 0.25}
    rows = bench_choices.grouped(per_type)
    assert rows['Conv2D + Conv2DBackpropInput'] == 15.0
    assert rows['ReluGrad'] == 2.0 and rows['AddN'] == 1.0 and rows['AddV2'] == 0.0
    assert rows['batch norm and its gradient'] == 3.0
    assert rows['other ops'] == 0.25 and rows['all ops'] == 21.75


def test_ratios_are_per_round_float32_time_over_bfloat16_time():
    rounds = [{('fp32', 'off'): 2.0, ('bf16', 'off'): 1.0},
              {('fp32', 'off'): 3.0, ('bf16', 'off'): 2.0}]
    assert bench_choices._ratios(rounds, ['off']) == {'off': [2.0, 1.5]}


@pytest.mark.parametrize('argv, text', [
    (['--rounds=0'], '--batch_size, --rounds and --steps must be >= 1'),
    (['--choices=fast', '--model=trivial', '--batch_size=2', '--steps=1', '--rounds=1'],
     "--graph_choices takes measured, off or a comma-separated list"),
])
def test_bad_arguments_are_one_usage_line(argv, text, capsys):
    with pytest.raises(SystemExit) as e:
        bench_choices.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert text in err and err.count('\n') == 1
