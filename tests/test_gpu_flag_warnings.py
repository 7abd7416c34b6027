"""The GPU-only flags' warnings (preflight/ineffective_flags.py, params/original_flags.py): on
a CPU run they have no effect; in a plan of a GPU that is not here (--dry_run or
--plan_scaling with --gpu_model) those the speed model reads stay silent and the others say
that they do not change the plan; the dry run's header says whether TF32 is on
(run_header.tf32_line)."""

import pytest

import helpers
from checkout import load

load()
from tf_cnn_benchmarks import benchmark_cnn, make_params, params, run_header  # noqa: E402
from tf_cnn_benchmarks.hardware import gpu_specs  # noqa: E402
from tf_cnn_benchmarks.params import original_flags  # noqa: E402
from tf_cnn_benchmarks.preflight import ineffective_flags, usage  # noqa: E402
from tf_cnn_benchmarks.speed_model import gpu_step, op_profile  # noqa: E402

CPU_TEXT = ('has no effect on the CPU, where this run is because no GPU is visible (it sets '
            'GPU options)')
THREADS = '; use --num_intra_threads/--num_inter_threads for the CPU'
UNREAD = ('neither the speed model nor the memory estimate reads it (it sets an option of a '
          'run on a GPU)')


def warned(visible_gpus=0, **flags):
    return ineffective_flags.messages(make_params(model='trivial', **flags), visible_gpus)


def test_a_gpu_dry_run_does_not_call_the_flags_the_model_reads_cpu_flags(monkeypatch):
    # The user's run: --dry_run --gpu_model=K80 --nowinograd_nonfused printed "no effect on
    # the CPU" while the predicted figure dropped. The command's path: check_with_tensorflow.
    p = make_params(model='trivial', dry_run=True, gpu_model='K80', winograd_nonfused=False,
                    batchnorm_persistent=False, autotune_threshold=3)
    said = []
    monkeypatch.setattr(usage.cnn_util, 'warn', said.append)
    usage.check_with_tensorflow(p, 0)
    assert not [m for m in said if 'on the CPU' in m or m.startswith('--winograd_nonfused')]
    assert said == ['%s does not change the --dry_run plan of the K80: %s' % (name, UNREAD)
                    for name in ('--batchnorm_persistent=false (--nobatchnorm_persistent)',
                                 '--autotune_threshold=3')]


@pytest.mark.parametrize('flags', [dict(dry_run=True, gpu_model='V100'),
                                   dict(plan_scaling=True, gpu_model='V100'),
                                   dict(dry_run=True, gpu_interconnect='dgx1_v100')])
def test_every_unread_gpu_flag_says_it_does_not_change_the_plan(flags):
    unread = dict(gpu_thread_mode='gpu_shared', per_gpu_thread_count=3, allow_growth=False,
                  gpu_memory_frac_for_testing=0.5, use_unified_memory=True,
                  force_gpu_compatible=True, timestamped_allocator=True, gpu_kt_max_interval=2,
                  gpu_kt_max_bytes=2, gpu_kt_max_pending=2, gpu_indices='0',
                  batchnorm_persistent=False, autotune_threshold=2, sync_on_finish=True)
    assert set(unread) | {'winograd_nonfused', 'tf32'} == set(original_flags.GPU_ONLY_FLAGS)
    mode = '--plan_scaling' if 'plan_scaling' in flags else '--dry_run'
    lines = warned(winograd_nonfused=False, **unread, **flags)
    typed = make_params(model='trivial', **unread)
    assert lines == ['%s does not change the %s plan of the V100 16GB: %s' % (
        ineffective_flags.as_set(typed, n), mode, UNREAD)
        for n in original_flags.GPU_ONLY_FLAGS if n in unread]
    assert usage.planned_gpus(make_params(**flags), 0) == 1
    # The same flags without a plan of a GPU: a run on the CPU.
    assert warned(**unread)[0] == '--gpu_thread_mode=gpu_shared ' + CPU_TEXT + THREADS


def test_notf32_on_a_cpu_run_warns_as_the_other_gpu_flags():
    # Before: '--notf32 has no effect' after --tf32=false, a name the user had not typed (and
    # the flag's name before it was tf32). Both forms are named.
    assert warned(tf32=False) == ['--tf32=false (--notf32) ' + CPU_TEXT]
    assert warned(tf32=False, device='cpu') == [
        '--tf32=false (--notf32) has no effect with --device=cpu (it sets GPU options)']
    assert warned(tf32=False, visible_gpus=1) == []  # a GPU run: TF32 off
    assert params.SPEC_BY_NAME['tf32'].default is True  # original_flags' default of it


def test_tf32_is_a_flag_whose_negation_is_notf32():
    # --help showed --[no]notf32, whose negation was --nonotf32; the flag is tf32 (default
    # on): --notf32 is absl's own negation, --tf32 and --tf32=false work too.
    from tf_cnn_benchmarks import flag_parsing
    parse = lambda *a: flag_parsing.parse_flags(['tf_cnn_benchmarks'] + list(a))  # noqa: E731
    assert parse().tf32 is True and parse('--notf32').tf32 is False
    assert parse('--tf32').tf32 is True and parse('--tf32=false').tf32 is False
    assert 'notf32' not in params.SPEC_BY_NAME
    out = helpers.run_command('--help')
    assert '--[no]tf32' in out.stdout and 'nonotf32' not in out.stdout and (
        '--[no]notf32' not in out.stdout)


def test_notf32_is_silent_where_the_plan_reads_it_and_says_why_elsewhere():
    # The plan's messages name a GPU-only flag as it was set, both forms of a boolean set false
    # (they said '--tf32 does not change ...' of a run given --notf32).
    assert warned(dry_run=True, gpu_model='A100', tf32=False) == []
    assert warned(dry_run=True, gpu_model='K80', tf32=False) == [
        '--tf32=false (--notf32) does not change the --dry_run plan of the K80: compute '
        'capability 3.7 < 8.0 has no TF32']
    assert warned(dry_run=True, gpu_model='A100', tf32=False, use_fp16=True) == [
        '--tf32=false (--notf32) does not change the --dry_run plan of the A100 40GB: float16 '
        'compute does not use TF32 (a float32 math mode)']
    assert warned(plan_scaling=True, gpu_model='A100', tf32=False,
                  single_device_images_per_sec=900.0) == [
        '--tf32=false (--notf32) does not change the --plan_scaling plan of the A100 40GB: the '
        'compute is --single_device_images_per_sec=900, not the speed model\'s']


@pytest.fixture(scope='module')
def resnet20():
    return op_profile.from_model('resnet20', 'cifar10', 32, 10)  # 3x3 stride-1 convolutions


# (GPU, dtype, TF32, whether --nowinograd_nonfused changes resnet20's predicted step): float32
# has a CUDA-core path everywhere (the K80's; the RTX 3090's TF32 rate is its float32 rate, so
# Winograd on its CUDA cores wins; the A100 without TF32), float16 on Pascal is float32 math on
# CUDA cores; float16 and bfloat16 on tensor cores (V100, A100) never take Winograd. The model
# reads the flag wherever a CUDA-core path is offered: silent there, also where this model and
# batch do not pick Winograd (the A100 with TF32); never a warning where the prediction moves.
@pytest.mark.parametrize('gpu, dtype, tf32, changes', [
    ('K80', 'float32', True, True), ('RTX 3090', 'float32', True, True),
    ('A100', 'float32', False, True), ('P100', 'float16', True, True),
    ('A100', 'float32', True, False), ('V100', 'float16', True, False),
    ('A100', 'bfloat16', True, False)])
def test_winograd_warns_only_where_it_leaves_the_prediction_unchanged(resnet20, gpu, dtype,
                                                                      tf32, changes):
    spec = gpu_specs.lookup(gpu)
    on, off = (gpu_step.predict_step(resnet20, spec, dtype, batch_size=32, tf32=tf32,
                                     winograd=w).seconds for w in (True, False))
    assert (off != on) == changes, (on, off)
    flags = dict(use_fp16=dtype == 'float16', use_bf16=dtype == 'bfloat16', tf32=tf32)
    said = [m for m in warned(dry_run=True, gpu_model=gpu, winograd_nonfused=False, **flags)
            if m.startswith('--winograd_nonfused')]
    assert said == [] or not changes
    if dtype != 'float32' and not changes:  # tensor cores only: said, with the reason
        assert said == ['--winograd_nonfused=false (--nowinograd_nonfused) does not change the '
                        '--dry_run plan of the %s: its '
                        '%s convolutions run on tensor cores, where cuDNN\'s non-fused Winograd '
                        'is not among the algorithms' % (spec.name, dtype)]


def test_gpu_model_without_a_plan_names_both_flags_that_plan():
    assert warned(gpu_model='V100') == [
        '--gpu_model has no effect without --dry_run or --plan_scaling (a run uses the GPUs it '
        'sees; --gpu_model plans a GPU that is not here: add --dry_run or --plan_scaling)']
    assert warned(plan_scaling=True, gpu_model='V100') == []


def test_the_header_says_whether_tf32_is_on_where_a_planned_gpu_has_it():
    def lines(gpu_model, **flags):  # the precision block
        p = make_params(model='trivial', image_size=16, batch_size=2, device='gpu',
                        dry_run=True, gpu_model=gpu_model, **flags)
        got = benchmark_cnn.BenchmarkCNN(p, gpus=1).info_lines()
        first = next(i for i, x in enumerate(got) if x.startswith('Precision:'))
        return [x for x in got[first:first + 3] if x.startswith(('Precision:', ' '))]
    assert lines('A100', tf32=False)[:2] == [
        'Precision:   float32 compute (--gpu_model=A100 40GB), float32 variables; TF32 off '
        '(--notf32)',
        '             float32 convolutions and matrix products in full float32 on the CUDA cores']
    assert lines('A100')[:3] == [
        'Precision:   float32 compute (--gpu_model=A100 40GB), float32 variables',
        '             TF32 on: float32 convolutions and matrix products on TF32 tensor cores',
        '             compute capability 8.0 >= 8.0: TensorFlow\'s default, --notf32 turns it '
        'off']
    assert not [line for line in lines('V100', tf32=False) if 'TF32' in line]  # 7.0: none


def test_tf32_line_follows_the_flag_the_environment_and_the_device():
    gpu = make_params(model='trivial', device='gpu')
    assert run_header.tf32_line(gpu, [(8, 6)], {}).startswith('TF32 on: ')
    assert run_header.tf32_line(gpu, [(8, 0)], {'NVIDIA_TF32_OVERRIDE': '0'}).startswith(
        'TF32 off (NVIDIA_TF32_OVERRIDE=0); ')
    assert run_header.tf32_line(gpu._replace(tf32=False), [(9, 0)], {}).startswith(
        'TF32 off (--notf32); ')
    assert run_header.tf32_line(gpu, [(8, 0), (7, 5)], {}) is None  # not every GPU has it
    assert run_header.tf32_line(gpu._replace(device='cpu'), [(8, 0)], {}) is None
