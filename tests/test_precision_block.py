"""graph/precision_block.py through run_header.precision_lines: the header's precision block is
at most three lines of at most 100 characters in every case, and keeps its facts (the CPU
flags, the kernel factors and their date, what runs in float32, the loss scale, the GPU's
compute capability, TF32). CPU flags, kernel factors and GPUs are injected: nothing depends on
this host."""

import dataclasses

import pytest

from tf_cnn_benchmarks import benchmark_cnn, run_header
from tf_cnn_benchmarks.graph import graph_choices, precision, precision_block
from tf_cnn_benchmarks.hardware import kernel_speed
from tf_cnn_benchmarks.models import fast_paths
from tf_cnn_benchmarks.params import graph_choice_flag, make_params

import helpers

BF16, FP16 = {'avx512_bf16', 'amx_bf16'}, {'avx512_fp16', 'amx_fp16'}
FAST = {'conv': 0.6, 'conv_gradients': 0.9, 'matmul': 0.9, 'matmul_gradients': 1.1}
SLOW_GRADIENTS = {'conv': 1.02, 'conv_gradients': 3.1, 'matmul': 1.02, 'matmul_gradients': 2.7}
FAR_SLOWER = {'conv': 1.2, 'conv_gradients': 1.0, 'matmul': 145.0, 'matmul_gradients': 140.0}
AUTO = dict(fp16_enable_auto_loss_scale=True)
DATE = '2026-01-01'  # helpers.measurement's


@pytest.fixture(autouse=True)
def _imagenet_classes(monkeypatch):
    """This file's tiny runs keep ImageNet's 1001 classes (not helpers.TINY_CLASSES): the
    precision a run's kernels take follows its largest matmul, the trivial model's 4096 x 1001
    classifier."""
    monkeypatch.setattr(helpers, 'TINY_CLASSES', None)

# (id, flags, CPU flags, kernel factors or None, ONEDNN_MAX_CPU_ISA, facts in the block: a
# factor's leading digits, which the terser form, one decimal, keeps).
CPU_CASES = [
    ('float32', {}, set(), None, None, ['float32 compute, float32 variables']),
    ('bf16-native', dict(use_bf16=True), BF16, FAST, None,
     ['bfloat16 compute on avx512_bf16/amx_bf16, float32 variables', DATE,
      'conv ', '0.6', '0.9', 'matmul ', '1.1']),
    # The trivial model has no convolution: only its matmul gradients run in float32.
    ('bf16-slow-gradients', dict(use_bf16=True), BF16, SLOW_GRADIENTS, None,
     ['on avx512_bf16/amx_bf16', 'float32 variables and matmul gradients', DATE,
      'conv ', '1.0', '3.1', 'matmul ', '2.7']),
    ('fp16-far-slower', dict(use_fp16=True), FP16, FAR_SLOWER, None,
     ['on avx512_fp16/amx_fp16', 'float32 variables and matmul gradients', 'loss scale 128',
      DATE, 'conv ', '1.2', '1.0', 'matmul ', '145x', '140x']),
    ('fp16-auto-loss-scale', dict(use_fp16=True, **AUTO), FP16, FAR_SLOWER, None,
     ['on avx512_fp16/amx_fp16', 'float32 variables and matmul gradients',
      'auto loss scale 128', DATE, 'conv ', '1.2', '1.0', 'matmul ', '145x', '140x']),
    ('fp16-unmeasured', dict(use_fp16=True), FP16, None, None,
     ['float16 compute on avx512_fp16/amx_fp16, float32 variables and matmul gradients',
      'float16 kernels unmeasured here (', 'loss scale 128']),
    ('bf16-unmeasured', dict(use_bf16=True), {'avx512_bf16'}, None, None,
     ['bfloat16 compute on avx512_bf16, float32 variables',
      'native bfloat16, kernels unmeasured here']),
    ('bf16-emulated', dict(use_bf16=True), {'avx2'}, FAST, None,
     ['bfloat16 compute, float32 variables and gradients', 'emulated: no avx512_bf16/amx_bf16',
      DATE, 'conv ', '0.6', 'matmul ', '0.9']),
    ('fp16-emulated-isa', dict(use_fp16=True), set(), FAST, 'AVX512_CORE',
     # The trivial model has no batch norm and no pooling: neither is named (prec58 item 7).
     ['float16 compute, float32 variables and gradients',
      'loss scale 128', 'emulated: no avx512_fp16/amx_fp16', DATE, 'conv ', '0.6',
      'matmul ', '0.9']),
    ('bf16-forward-only', dict(use_bf16=True, forward_only=True), BF16, SLOW_GRADIENTS, None,
     ['bfloat16 compute on avx512_bf16/amx_bf16, float32 variables',
      DATE, 'vs float32', 'conv 1.02x, matmul 1.02x']),
    ('fp16-eval-emulated', dict(use_fp16=True, eval=True), set(), FAST, None,
     ['float16 compute, float32 variables',
      'emulated: no avx512_fp16/amx_fp16', DATE, 'vs float32', 'conv 0.60x, matmul 0.90x']),
]


def _choices():
    """Measured graph choices of one 1x1 convolution: the block's third line."""
    site = fast_paths.Conv1x1(16, 56, 56, 64, 256, 1, 'NHWC', 'float32')
    return graph_choices.Choices(graph_choice_flag.MEASURED, {
        (site, form): 0.8 for form in graph_choices.forms_of(site)}, 'measured here')


def _block(lines):
    """The precision block of `lines` (the header) or of precision_lines' own lines."""
    first = next(i for i, x in enumerate(lines) if x.startswith('Precision:'))
    return lines[first:first + 1] + [x for x in lines[first + 1:first + 4]
                                     if x.startswith(' ' * precision_block.INDENT)][:3]


def _fits(block):
    assert 1 <= len(block) <= precision_block.MAX_LINES, block
    assert all(len(x) <= precision_block.WIDTH for x in block), [len(x) for x in block]


@pytest.mark.parametrize('with_choices', [False, True], ids=['alone', 'with-graph-choices'])
@pytest.mark.parametrize('case', CPU_CASES, ids=[c[0] for c in CPU_CASES])
def test_a_cpu_block_fits_three_lines_of_100_and_keeps_its_facts(case, with_choices,
                                                                 monkeypatch, capsys):
    _, flags, cpu_flags, measured, isa, facts = case
    monkeypatch.setattr(precision, 'cpu_flags', lambda path='/proc/cpuinfo': set(cpu_flags))
    monkeypatch.setattr(kernel_speed, 'probe', lambda dtype, threads=(0, 0), **kw: (
        helpers.measurement(measured) if measured is not None else None))
    for name in ('ONEDNN_MAX_CPU_ISA', 'DNNL_MAX_CPU_ISA'):
        monkeypatch.delenv(name, raising=False)
    if isa:
        monkeypatch.setenv('ONEDNN_MAX_CPU_ISA', isa)
    plan = helpers.tiny_bench(**flags).plan
    plan = dataclasses.replace(plan, graph_choices=_choices() if with_choices else None)
    block = run_header.precision_lines(plan)
    _fits(block)
    text = ' '.join(block)
    for fact in facts:
        assert fact in text, (fact, block)
    if with_choices:
        assert block[-1].startswith('             graph choices measured here: 1 of 1 places')
    err = capsys.readouterr().err
    if isa:  # the block may leave it out; the warning says it
        assert 'ONEDNN_MAX_CPU_ISA=%s' % isa in err
        assert with_choices or 'under ONEDNN_MAX_CPU_ISA=%s' % isa in text
    backward = not (flags.get('forward_only') or flags.get('eval'))
    if measured is not None and not with_choices and backward:
        # Room for every fact: both factors of each kind in full, the doubling period.
        assert 'time vs float32 on %s: conv fwd ' % DATE in text and ', grad ' in text
        assert not flags.get('fp16_enable_auto_loss_scale') or (
            'auto loss scale 128 (x2 per 1000 finite steps)' in text)
    if not backward:
        assert 'gradients' not in text and 'loss scale' not in text and 'fwd' not in text


# (id, flags, --gpu_model, facts in the block).
GPU_CASES = [
    ('float32-tf32-on', {}, 'A100', [
        'float32 compute (--gpu_model=A100 40GB), float32 variables',
        'TF32 on: float32 convolutions and matrix products on TF32 tensor cores',
        "compute capability 8.0 >= 8.0: TensorFlow's default, --notf32 turns it off"]),
    ('float32-tf32-off', dict(tf32=False), 'A100', [
        'TF32 off (--notf32)',
        'float32 convolutions and matrix products in full float32 on the CUDA cores']),
    ('float32-turing', {}, 'Quadro RTX 8000', [  # 7.5: no TF32
        'float32 compute (--gpu_model=Quadro RTX 8000), float32 variables']),
    ('fp16-pascal', dict(use_fp16=True, **AUTO), 'GTX 1080 Ti', [
        'float16 compute (--gpu_model=GTX 1080 Ti), float32 variables',
        'auto loss scale 128 (x2 per 1000 finite steps)', 'GPU compute capability 6.1 < 7.0',
        'no float16 tensor cores: float32 math, half the memory traffic']),
    ('fp16-volta', dict(use_fp16=True, **AUTO), 'V100', [
        'auto loss scale 128 (x2 per 1000 finite steps)',
        'GPU compute capability 7.0 >= 7.0: native float16']),
    ('fp16-ampere', dict(use_fp16=True), 'A100 PCIe 80GB', [
        'float16 compute (--gpu_model=A100 PCIe 80GB), float32 variables', 'loss scale 128',
        'GPU compute capability 8.0 >= 7.0: native float16']),
    ('bf16-volta', dict(use_bf16=True), 'V100', [
        'GPU compute capability 7.0 < 8.0',
        'no bfloat16 tensor cores: float32 math, convolutions cast to float32 and back']),
]


@pytest.mark.parametrize('case', GPU_CASES, ids=[c[0] for c in GPU_CASES])
def test_a_planned_gpu_block_fits_three_lines_of_100_and_keeps_its_facts(case, monkeypatch):
    _, flags, gpu_model, facts = case
    monkeypatch.setattr(precision, 'gpu_compute_capabilities', lambda: [])  # none visible
    p = make_params(model='trivial', image_size=16, batch_size=2, device='gpu', dry_run=True,
                    gpu_model=gpu_model, **flags)
    block = _block(benchmark_cnn.BenchmarkCNN(p, gpus=1).info_lines())
    _fits(block)
    text = ' '.join(block)
    for fact in facts:
        assert fact in text, (fact, block)
    assert ('TF32' in text) == case[0].startswith('float32-tf32')


def test_eight_gpus_name_their_compute_capability_once():
    p = make_params(model='trivial', device='gpu', use_fp16=True)
    lines = precision_block.block(p, *precision.compute_dtypes(p), capabilities=[(7, 0)] * 8)
    assert lines[-1].endswith('GPU compute capability 7.0 >= 7.0: native float16'), lines
    text = run_header.tf32_line(p._replace(use_fp16=False), [(8, 0), (8, 0)], {})
    assert 'compute capability 8.0 >= 8.0' in text


def test_packing_puts_what_fits_on_a_line_and_terser_forms_only_when_needed():
    assert precision_block.pack(['a' * 80, 'b' * 5, 'c' * 90]) == [
        'Precision:   ' + 'a' * 80 + '; ' + 'b' * 5, ' ' * 13 + 'c' * 90]
    p = make_params(model='trivial', use_fp16=True, **AUTO)
    wide = precision_block.block(p, *precision.compute_dtypes(p), flags=FP16,
                                 measured=FAR_SLOWER, date=DATE)
    assert 'x2 per 1000 finite steps' in ' '.join(wide) and len(wide) <= 3
    tight = precision_block.block(p, *precision.compute_dtypes(p), room=2, flags=FP16,
                                  measured=FAR_SLOWER, date=DATE)
    assert len(tight) == 2 and 'x2 per' not in ' '.join(tight)


BUSY_FACTORS = {'conv': 0.7, 'conv_gradients': 0.6, 'matmul': 0.8, 'matmul_gradients': 0.9}


def test_a_probe_on_a_busy_host_is_said_measured_not_kept(monkeypatch):
    # Before: 'native bfloat16, kernels unmeasured here' right after the warning
    # 'reduced-precision kernel factors measured now: not kept, other processes used 0.96 of
    # 2 cores' (and in --calibrate's report after the factors it printed).
    monkeypatch.setattr(kernel_speed, 'probe', lambda dtype, threads=(0, 0), **kw: None)
    monkeypatch.setattr(kernel_speed, '_BUSY', {})
    for flags, cpu, unmeasured, busy in (
            (dict(use_bf16=True), {'avx512_bf16'}, 'native bfloat16, kernels unmeasured here',
             'native bfloat16, kernels measured, not kept (busy host)'),
            (dict(use_fp16=True), set(), 'emulated: no avx512_fp16/amx_fp16',
             'emulated: no avx512_fp16/amx_fp16; kernels measured, not kept (busy host)')):
        monkeypatch.setattr(precision, 'cpu_flags', lambda path='/proc/cpuinfo', c=cpu: set(c))
        plan = dataclasses.replace(helpers.tiny_bench(**flags).plan, graph_choices=None)
        kernel_speed._BUSY.clear()  # no busy probe in this process
        block = run_header.precision_lines(plan)
        assert unmeasured in ' '.join(block) and 'not kept' not in ' '.join(block), block
        kernel_speed._BUSY[plan.compute_dtype.name] = dict(BUSY_FACTORS)
        block = run_header.precision_lines(plan)
        _fits(block)
        assert busy in ' '.join(x.strip() for x in block), block


@pytest.mark.parametrize('model, parts', [
    ('lenet', ('pooling',)),  # no batch norm: its block said 'batch norm, pooling'
    ('resnet20', ('batch norm', 'pooling')),
    ('trivial', ()),
])
def test_an_emulated_float16_block_names_only_what_the_model_computes_in_float32(
        model, parts, monkeypatch):
    monkeypatch.setattr(precision, 'cpu_flags', lambda path='/proc/cpuinfo': set())
    monkeypatch.setattr(kernel_speed, 'probe', lambda dtype, threads=(0, 0), **kw: None)
    data = {'resnet20': dict(data_name='cifar10', image_size=None),
            'lenet': dict(image_size=28)}.get(model, {})
    plan = helpers.tiny_bench(model=model, use_fp16=True, **data).plan
    assert precision.norm_and_pool_parts(plan) == parts
    block = run_header.precision_lines(dataclasses.replace(plan, graph_choices=None))
    kept = 'float16 compute, float32 %s' % precision_block._and(
        ['variables', 'gradients', *parts])
    assert block[0].startswith('Precision:   ' + kept + ';'), block
