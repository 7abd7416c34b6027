"""A reduced-precision CPU run under ONEDNN_MAX_CPU_ISA: refused before TensorFlow loads where
the cap leaves oneDNN without the kernels TensorFlow sends the dtype to (hardware/machine.py
isa_cap_problem, preflight/usage.check_isa_cap), and oneDNN's own error made one line with the
fix (cli.onednn_hint). The CPU's flags are injected: no expectation depends on this host."""

import pytest
import tensorflow as tf

from tf_cnn_benchmarks import cli, params
from tf_cnn_benchmarks.hardware import machine
from tf_cnn_benchmarks.preflight import usage

from helpers import run_command

AMX_FP16 = {'avx2', 'avx512f', 'avx512_bf16', 'avx512_fp16', 'amx_tile', 'amx_bf16'}
AVX512_BF16 = {'avx2', 'avx512f', 'avx512_bf16'}
AVX2_ONLY = {'avx2', 'fma'}


@pytest.mark.parametrize('fp16, bf16, flags, cap, refused', [
    (True, False, AMX_FP16, 'AVX512_CORE', True),
    (True, False, AMX_FP16, 'AVX512_CORE_BF16', True),
    (True, False, AMX_FP16, 'AVX2', True),
    (True, False, AMX_FP16, 'avx512_core_fp16', False),  # keeps avx512_fp16
    (True, False, AMX_FP16, 'AVX512_CORE_AMX', False),
    (True, False, AVX512_BF16, 'AVX512_CORE', False),  # no fp16 units: TensorFlow's kernels
    (False, True, AMX_FP16, 'AVX2', True),
    (False, True, AMX_FP16, 'AVX512_CORE', False),  # oneDNN emulates bfloat16 there
    (False, True, AVX2_ONLY, 'AVX2', False),
    (False, False, AMX_FP16, 'AVX2', False),  # float32
    (True, False, AMX_FP16, 'DEFAULT', False),
    (True, False, AMX_FP16, '', False),
])
def test_isa_cap_problem(fp16, bf16, flags, cap, refused):
    problem = machine.isa_cap_problem(fp16, bf16, flags, {'ONEDNN_MAX_CPU_ISA': cap})
    assert (problem is not None) == refused
    if refused:
        flag = '--use_fp16' if fp16 else '--use_bf16'
        assert problem.startswith('ONEDNN_MAX_CPU_ISA=%s with %s: ' % (cap, flag))
        assert 'unset ONEDNN_MAX_CPU_ISA' in problem and 'drop %s' % flag in problem
        assert ('AVX512_CORE_FP16 or above' if fp16 else 'AVX512_CORE or above') in problem


def test_older_variable_named():
    problem = machine.isa_cap_problem(True, False, AMX_FP16, {'DNNL_MAX_CPU_ISA': 'avx2'})
    assert problem.startswith('DNNL_MAX_CPU_ISA=avx2 with --use_fp16')


def test_check_isa_cap_refuses_but_not_a_dry_run():
    env = {'ONEDNN_MAX_CPU_ISA': 'AVX512_CORE'}
    p = params.make_params(use_fp16=True, device='cpu')
    with pytest.raises(params.ParamsError, match='ONEDNN_MAX_CPU_ISA=AVX512_CORE with --use_fp16'):
        usage.check_isa_cap(p, AMX_FP16, env)
    usage.check_isa_cap(p._replace(dry_run=True), AMX_FP16, env)  # runs no step


def test_command_refuses_before_tensorflow_runs(monkeypatch):
    flags = ' '.join(sorted(AMX_FP16))
    real = machine._cpuinfo_field
    monkeypatch.setattr(machine, '_cpuinfo_field',
                        lambda name: flags if name == 'flags' else real(name))
    monkeypatch.setenv('ONEDNN_MAX_CPU_ISA', 'AVX512_CORE')
    result = run_command('--model=trivial', '--device=cpu', '--batch_size=2', '--num_batches=1',
                         '--noresults_db', '--use_fp16')
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith('error:')]
    assert len(errors) == 1 and 'ONEDNN_MAX_CPU_ISA=AVX512_CORE with --use_fp16' in errors[0]
    assert 'images/sec' not in result.stdout


def test_onednn_error_gets_the_fix():
    error = tf.errors.AbortedError(None, None, 'Operation received an exception:Status: 3, '
                                   'message: could not create a primitive descriptor for the '
                                   'convolution forward propagation primitive.')
    assert cli.onednn_hint(error, {'ONEDNN_MAX_CPU_ISA': 'AVX2'}) == (
        '; oneDNN has no kernel for this op under ONEDNN_MAX_CPU_ISA=AVX2: unset it or run in '
        'float32')
    assert cli.onednn_hint(error, {}) == ''
    assert cli.onednn_hint(tf.errors.AbortedError(None, None, 'other'),
                           {'ONEDNN_MAX_CPU_ISA': 'AVX2'}) == ''
