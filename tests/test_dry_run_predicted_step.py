"""What the dry run's predicted step says beside its figure (speed_model/from_flags.py): a
reduced precision against float32 on the same GPU, and the fix of a step bound by copying the
variables held on the CPU. No graph of the step is built: the per-op model reads the model's
op profile (a placeholder build of trivial at 16 x 16 here)."""

from __future__ import annotations

import pytest

from tf_cnn_benchmarks import benchmark_cnn
from tf_cnn_benchmarks.hardware import gpu_specs
from tf_cnn_benchmarks.params import make_params
from tf_cnn_benchmarks.preflight import scaling_plan


def _report(gpu_model, batch_size=1, gpus=1, **flags):
    p = make_params(model='trivial', image_size=16, batch_size=batch_size, device='gpu',
                    num_gpus=gpus, gpu_model=gpu_model, dry_run=True, **flags)
    bench = benchmark_cnn.BenchmarkCNN(p, gpus=gpus)
    return scaling_plan.dry_run_report(p, bench, gpu_specs.lookup(gpu_model))


# One GPU of each generation whose tensor cores the dtype lacks (float16 data with float32
# math before Volta, bfloat16 before Ampere), and one with them.
EMULATED = [('K80', 'use_fp16'), ('GTX 1080 Ti', 'use_fp16'), ('P100', 'use_bf16'),
            ('V100', 'use_bf16'), ('T4', 'use_bf16')]


CASTS = ("below compute capability 8.0 TensorFlow casts each convolution's operands to float32 "
         "and its result back: float32 math and bytes in the convolutions, plus the casts; half "
         "the bytes in the other ops")


@pytest.mark.parametrize('gpu_model,flag', EMULATED, ids=['%s-%s' % c for c in EMULATED])
def test_the_dry_run_compares_a_reduced_precision_step_with_float32(gpu_model, flag):
    """The K80's float16 warned 'expect it slower than float32' and was predicted 89.9 against
    76.4 images/sec. The model's path: the float32 rate with half the bytes; the dtype's casts
    of the float32 variables each step. trivial's step at batch 1 is mostly those casts
    (slower: a warning), at batch 4096 mostly its product and its activations (faster: none)."""
    dtype = 'float16' if flag == 'use_fp16' else 'bfloat16'
    name = gpu_specs.lookup(gpu_model).name
    lines, data = _report(gpu_model, 1, **{flag: True})
    one = data['one_gpu']['images_per_sec']
    assert data['float32_images_per_sec'] > one
    (line,) = [x for x in lines if 'in float32 one' in x]
    assert line.strip().startswith("in float32 one %s's step: " % name)
    why = (CASTS if dtype == 'bfloat16' else
           '%s data with float32 math: the float32 rate, half the bytes' % dtype)
    assert 'in %s %.2fx that (%s)' % (dtype, one / data['float32_images_per_sec'], why) in line
    (warning,) = data['warnings']
    assert warning.startswith('--%s: the model predicts one %s slower in %s than in float32 '
                              'at batch 1 (' % (flag, name, dtype))
    assert warning.endswith('cost more than the halved bytes save); float32 is the faster '
                            'choice here')
    lines, data = _report(gpu_model, 4096, **{flag: True})
    assert data['one_gpu']['images_per_sec'] > data['float32_images_per_sec']
    assert data['warnings'] == []
    assert any('in float32 one %s' % name in x for x in lines)


def test_float32_and_a_measured_figure_get_no_comparison():
    lines, data = _report('V100', 1)
    assert data['float32_images_per_sec'] is None and data['warnings'] == []
    assert not any('in float32 one' in x for x in lines)
    lines, data = _report('K80', 1, use_fp16=True, single_device_images_per_sec=100.0)
    assert data['one_gpu'] is None and data['float32_images_per_sec'] is None
    assert data['warnings'] == []


def test_tensor_cores_are_compared_too():
    # The V100's float16 tensor cores: trivial's batch-1 step is its casts there as well.
    lines, data = _report('V100', 1, use_fp16=True)
    assert data['one_gpu']['math_path'] == 'float16 tensor cores'
    (warning,) = data['warnings']
    assert 'cost more than the halved bytes and the tensor cores save' in warning
    (line,) = [x for x in lines if 'in float32 one' in x]
    assert line.endswith('x that')  # no emulation to explain


@pytest.mark.parametrize('gpu_model,flag', [('K80', 'use_fp16'), ('V100', 'use_bf16')])
def test_the_header_does_not_call_the_float32_math_path_slower(gpu_model, flag, capsys):
    # It warned 'no native float16 (--gpu_model=K80); expect it slower than float32' above a
    # prediction of 89.9 images/sec against float32's 76.4.
    p = make_params(model='trivial', image_size=16, batch_size=1, device='gpu', num_gpus=1,
                    gpu_model=gpu_model, dry_run=True, **{flag: True})
    lines = benchmark_cnn.BenchmarkCNN(p, gpus=1).info_lines()
    assert 'warning' not in capsys.readouterr().err
    traffic = ('convolutions cast to float32 and back' if flag == 'use_bf16'
               else 'half the memory traffic')
    assert any('tensor cores: float32 math, %s' % traffic in x for x in lines)


def test_a_step_bound_by_copying_the_variables_held_on_the_cpu_names_the_fix():
    """resnet50 forward-only at batch 1 on a V100 was predicted at 6.5 ms 'bound by PCIe (host
    <-> GPU)' without a word on why: parameter_server keeps the variables on the CPU by
    default here (the original's default is the GPU), and --local_parameter_device=gpu gave
    2.4 ms. trivial's 3 MiB of variables against its tiny step does the same."""
    lines, data = _report('V100', 1)
    assert data['bound'] == 'PCIe (host <-> GPU)'
    alt = data['local_parameter_device_gpu']
    assert alt['step_secs'] < data['step_secs'] and alt['bound'] == 'compute'
    (line,) = [x for x in lines if '--local_parameter_device' in x]
    assert line.strip() == (
        "the variables are held on the CPU (--local_parameter_device=cpu, this project's "
        'default): each step copies them to the GPU and the gradients back over PCIe; '
        '--local_parameter_device=gpu keeps them on the GPU: %.1f ms, %.1f images/sec, bound '
        'by compute' % (1e3 * alt['step_secs'], alt['images_per_sec']))
    assert lines.index(line) == 2  # under the line that names the bound
    # Its own prediction: what the dry run of that flag prints.
    on_gpu = _report('V100', 1, local_parameter_device='gpu')[1]
    assert on_gpu['step_secs'] == pytest.approx(alt['step_secs'])
    assert on_gpu['local_parameter_device_gpu'] is None
    # Without a backward pass no gradient goes back.
    lines, data = _report('V100', 1, forward_only=True)
    (line,) = [x for x in lines if '--local_parameter_device' in x]
    assert 'each step copies them to the GPU over PCIe; ' in line


@pytest.mark.parametrize('flags', [dict(local_parameter_device='gpu'),
                                   dict(variable_update='replicated')])
def test_no_fix_is_named_where_the_variables_are_not_copied_from_the_cpu(flags):
    lines, data = _report('V100', 1, **flags)
    assert data['local_parameter_device_gpu'] is None
    assert not any('--local_parameter_device' in x for x in lines)


def test_the_gpu_link_is_named_only_where_a_host_has_several_gpus():
    """A one-GPU dry run (--gpu_model=V100 --num_gpus=1) printed 'GPU <-> GPU NVLink 2.0 (6
    links) (150 GB/s): the default for the V100 16GB, ...': no byte crosses it with one GPU.
    The JSON says the same as the lines: its 'gpu_link' is None with one GPU."""
    lines, data = _report('V100', 8)
    assert data['planned'] is True and data['devices'] == 1
    assert not [x for x in lines if 'GPU <-> GPU' in x], lines
    assert data['gpu_link'] is None
    lines, data = _report('V100', 8, gpus=2, variable_update='replicated')
    (line,) = [x for x in lines if x.strip().startswith('GPU <-> GPU')]
    assert data['gpu_link'] == {'link': 'NVLink 2.0 (6 links) (150 GB/s)', 'through': None,
                                'origin': line.split(': ', 1)[1]}
    assert line.strip() == 'GPU <-> GPU NVLink 2.0 (6 links) (150 GB/s): %s' % (
        data['gpu_link']['origin'])
    # Independent towers share nothing: no line named the link no byte crosses.
    lines, data = _report('V100', 8, gpus=2, variable_update='independent')
    assert data['gpu_link'] is None and data['devices'] == 2
    assert not [x for x in lines if 'GPU <-> GPU' in x], lines
    # Without peer-to-peer (a GeForce card), the line and the JSON name the host memory.
    lines, data = _report('RTX 3090', 8, gpus=2, variable_update='replicated')
    (line,) = [x for x in lines if x.strip().startswith('GPU <-> GPU')]
    assert data['gpu_link']['through'] and (
        '; no peer-to-peer: through %s: ' % data['gpu_link']['through']) in line
