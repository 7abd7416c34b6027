"""graph/precision_block.block over every combination of what the block says: it fits its
room (three lines, two beside the graph choices' line) of at most 100 characters by its terser
forms (LEVELS), never by the '...' of its safety net (`squeeze`). Flags, factors, the busy
probe's factors and GPUs are injected: nothing depends on this host (issue 38 item 5; the
trial's fourth line: automatic loss scale, kernels unmeasured, a model with graph choices)."""

import itertools

import pytest
import tensorflow as tf

from tf_cnn_benchmarks.graph import precision, precision_block
from tf_cnn_benchmarks.hardware import kernel_speed
from tf_cnn_benchmarks.params import make_params

UNITS = {'bf16': {'avx512_bf16', 'amx_bf16'}, 'fp16': {'avx512_fp16', 'amx_fp16'}}
BIG = {'conv': 581.2, 'conv_gradients': 250.6, 'matmul': 580.4, 'matmul_gradients': 998.6}
SMALL = {'conv': 0.42, 'conv_gradients': 0.42, 'matmul': 0.95, 'matmul_gradients': 0.74}
# (id, Params keywords): every loss-scale form, the longest values.
PRECISIONS = [
    ('bf16', dict(use_bf16=True)),
    ('fp16', dict(use_fp16=True)),
    ('fp16-vars', dict(use_fp16=True, fp16_vars=True)),
    ('fp16-auto-2**24', dict(use_fp16=True, fp16_loss_scale=2.0 ** 24,
                             fp16_enable_auto_loss_scale=True,
                             fp16_inc_loss_scale_every_n=1000000)),
    ('fp16-vars-auto-tiny', dict(use_fp16=True, fp16_vars=True, fp16_loss_scale=2.0 ** -9,
                                 fp16_enable_auto_loss_scale=True)),
    ('fp16-forward-only', dict(use_fp16=True, forward_only=True)),
]
CPU_STATES = ['units', 'no units', 'no units, AVX512_CORE_BF16 cap']
MEASURED = [None, SMALL, BIG]
BUSY = [{}, BIG]


@pytest.mark.parametrize('room', [2, 3])
@pytest.mark.parametrize('busy', BUSY, ids=['quiet', 'busy'])
@pytest.mark.parametrize('measured', MEASURED, ids=['unmeasured', 'small', 'big'])
@pytest.mark.parametrize('cpu', CPU_STATES)
@pytest.mark.parametrize('flags', [f for _, f in PRECISIONS], ids=[i for i, _ in PRECISIONS])
def test_cpu_block_fits_its_room_by_terser_forms(flags, cpu, measured, busy, room,
                                                 monkeypatch):
    p = make_params(model='resnet50', device='cpu', **flags)
    dtype, variable_dtype = precision.compute_dtypes(p)
    cpu_flags = UNITS['fp16' if p.use_fp16 else 'bf16'] if cpu == 'units' else set()
    environ = {'ONEDNN_MAX_CPU_ISA': 'AVX512_CORE_BF16'} if 'cap' in cpu else {}
    monkeypatch.setattr(kernel_speed, '_BUSY', {dtype.name: dict(busy)})
    monkeypatch.setattr(precision, 'cpu_flags', lambda path='/proc/cpuinfo': set(cpu_flags))
    lines = precision_block.block(p, dtype, variable_dtype, room=room, flags=cpu_flags,
                                  measured=measured, date='2026-12-07', environ=environ)
    assert 1 <= len(lines) <= room, lines
    assert all(len(line) <= precision_block.WIDTH for line in lines), lines
    assert not lines[-1].endswith('...'), lines  # the terser forms fit, not the safety net
    text = ' '.join(lines)
    assert text.startswith('Precision:   %s compute' % dtype.name)
    if p.use_fp16 and not p.forward_only:  # the scale, exact
        assert precision.scale_text(precision.initial_loss_scale(p)) in text
    assert (measured is None) == ('vs float32' not in text), lines


@pytest.mark.parametrize('room', [2, 3])
@pytest.mark.parametrize('gpu, precision_flags', list(itertools.product(
    [[(6, 1)], [(7, 0)] * 8, [(8, 0)], [(7, 5), (8, 6)]], [p for _, p in PRECISIONS])))
def test_gpu_block_fits_its_room(gpu, precision_flags, room):
    p = make_params(model='resnet50', device='gpu', **precision_flags)
    lines = precision_block.block(p, *precision.compute_dtypes(p), room=room, capabilities=gpu,
                                  planned=' (--gpu_model=V100S PCIe 32GB)')
    assert 1 <= len(lines) <= room and all(len(x) <= precision_block.WIDTH for x in lines)
    assert not lines[-1].endswith('...'), lines


def test_the_trials_fourth_line_is_gone():
    """Automatic loss scale at 2**24, float16 kernels unmeasured, graph choices: 2 lines."""
    p = make_params(model='resnet20', device='cpu', use_fp16=True, fp16_loss_scale=2.0 ** 24,
                    fp16_enable_auto_loss_scale=True, fp16_inc_loss_scale_every_n=1)
    lines = precision_block.block(p, tf.float16, tf.float32, room=2,
                                  flags={'avx512_fp16'}, measured=None)
    assert lines == [
        'Precision:   float16 compute on avx512_fp16, float32 variables and conv/matmul '
        'gradients',
        '             auto loss scale 16777216; float16 kernels unmeasured here']


def test_squeeze_is_a_hard_bound():
    lines = ['Precision:   ' + 'a' * 120, ' ' * 13 + 'b' * 50, ' ' * 13 + 'c' * 50]
    cut = precision_block.squeeze(lines, 2)
    assert len(cut) == 2 and all(len(x) <= 100 for x in cut)
    assert cut[0].endswith('...') and cut[1].endswith(' ...')
    assert precision_block.squeeze(lines[1:], 3) == lines[1:]
