"""The GPU path without a GPU: placement, kernels, copies per step and memory, from graph builds.

Every configuration the README and tests/test_gpu.py document is built here with `--device=gpu`
on a host without GPUs (only a session needs the device) and checked statically:

  * no op placed on a GPU lacks a GPU kernel for its dtypes (preflight/gpu_kernels.py);
  * the copies one step makes between devices stay within the design's budget
    (preflight/step_traffic.py): none from the host with synthetic data, one batch per device with
    real data, the variables down and the gradients up with parameter_server on the CPU;
  * Grappler's peak memory estimate grows with the batch (preflight/memory_estimate.py).

A representative matrix of models x variable managers x precisions x data is used rather than
the full product (each build is a second or more on 2 cores). Small images keep it fast.
"""

from __future__ import annotations

import json
import os
import re
import time
import types

import pytest
import tensorflow as tf
from test_cli_edges import run_main

from tf_cnn_benchmarks import benchmark_cnn
from tf_cnn_benchmarks.hardware import gpu_specs, host_memory
from tf_cnn_benchmarks.lifecycle import timed_run
from tf_cnn_benchmarks.params import make_params
from tf_cnn_benchmarks.preflight import (
    batch_search,
    dry_run,
    gpu_kernels,
    memory_check,
    memory_estimate,
    step_traffic,
)

import helpers

tf1 = tf.compat.v1
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
K80 = gpu_specs.lookup('K80')

FP16 = dict(use_fp16=True, fp16_enable_auto_loss_scale=True)
BF16 = dict(use_bf16=True)
WORKER = dict(variable_update='distributed_replicated', job_name='worker', task_index=0,
              ps_hosts=['localhost:2222'], worker_hosts=['localhost:2223', 'localhost:2224'])

# (model, image size, GPUs, flags, real data)
MATRIX = [
    ('trivial', 16, 2, dict(variable_update='parameter_server'), False),
    ('trivial', 16, 2, dict(variable_update='parameter_server', local_parameter_device='gpu',
                            **BF16), True),
    ('alexnet', 227, 2, dict(variable_update='parameter_server', local_parameter_device='gpu',
                            **FP16), False),
    ('resnet50', 32, 1, dict(variable_update='parameter_server', staged_vars=True, **BF16),
     False),
    ('resnet50', 32, 2, dict(variable_update='replicated', use_nccl=True, **FP16), False),
    ('inception3', 75, 1, dict(variable_update='parameter_server'), True),
    ('vgg16', 224, 2, dict(variable_update='replicated', all_reduce_spec='xring'), True),
    ('mobilenet', 32, 2, dict(variable_update='replicated', all_reduce_spec='pscpu', **FP16),
     False),
    ('trivial', 16, 2, dict(variable_update='independent', **BF16), True),
    ('resnet50', 32, 2, dict(WORKER), False),
    ('trivial', 16, 1, dict(forward_only=True), True),
]


def _ids(case):
    model, _, gpus, flags, real = case
    what = ','.join('%s=%s' % kv for kv in flags.items() if kv[0] not in (
        'ps_hosts', 'worker_hosts', 'task_index', 'fp16_enable_auto_loss_scale'))
    return '%s-%dgpu-%s-%s' % (model, gpus, what, 'real' if real else 'synthetic')


def gpu_bench(model='trivial', image_size=16, gpus=1, data_dir=None, **flags):
    """A BenchmarkCNN of a GPU run with `gpus` GPUs, built on this GPU-less host."""
    p = make_params(model=model, image_size=image_size, batch_size=2, device='gpu',
                    num_gpus=gpus, data_dir=data_dir, **flags)
    return benchmark_cnn.BenchmarkCNN(p, gpus=gpus)


@pytest.mark.parametrize('case', MATRIX, ids=[_ids(c) for c in MATRIX])
def test_every_documented_gpu_configuration_has_kernels_and_keeps_its_traffic(case, request):
    model, size, gpus, flags, real = case
    data_dir = request.getfixturevalue('imagenet_dir') if real else None
    bench = gpu_bench(model, size, gpus, data_dir, **flags)
    built = dry_run.build(bench)
    placement = gpu_kernels.check_placement(built.graph)
    assert placement.misplaced == [], placement.misplaced[:5]
    assert any(d.endswith('GPU:%d' % (gpus - 1)) for d in placement.ops_per_device)
    traffic = step_traffic.step_traffic(built.graph, built.fetches)
    allowed = dry_run.traffic_budget(bench.params, gpus, built)
    assert step_traffic.over_budget(traffic, allowed) == []
    if not real:
        assert not any(t.destination.endswith(('GPU:0', 'GPU:1')) and t.source.endswith('CPU:0')
                       and 'input' in t.tensor for t in traffic.transfers)
    else:  # one batch per device from the host
        images = [t for t in traffic.transfers if t.tensor.startswith('input_pipeline')
                  and t.shape and len(t.shape) == 4]
        assert len(images) == gpus
        assert all(t.shape[0] == 2 for t in images)
    if flags.get('variable_update') == 'parameter_server' and 'local_parameter_device' not in flags:
        # Variables down and gradients up, about the model's size per tower.
        if not flags.get('forward_only'):
            assert traffic.totals['GPU->host'] >= 0.9 * gpus * built.model_bytes


def test_synthetic_single_gpu_run_copies_nothing_but_variables_and_gradients():
    built = dry_run.build(gpu_bench('trivial', variable_update='replicated'))
    traffic = step_traffic.step_traffic(built.graph, built.fetches)
    assert traffic.totals == {}  # one GPU, replicated: everything on the GPU


def test_an_op_without_a_gpu_kernel_is_found_and_attributed():
    graph = tf.Graph()
    with graph.as_default(), tf1.device('/gpu:0'):
        tf1.Variable(tf.zeros([3], tf.int32), name='counts')  # no int32 GPU variable kernel
        tf1.Variable(tf.zeros([3], tf.float32), name='ok')
    report = gpu_kernels.check_placement(graph)
    names = {m.name for m in report.misplaced}
    assert 'counts' in names and 'ok' not in names
    found = next(m for m in report.misplaced if m.name == 'counts')
    assert found.op_type == 'VarHandleOp' and 'int32' in found.dtypes


def test_the_origin_of_an_op_is_the_project_function_that_made_it():
    built = dry_run.build(gpu_bench('trivial'))
    conv = next(op for op in built.graph.get_operations() if op.type == 'MatMul')
    # The layer that made it (ConvNetBuilder.affine), not the helper it called (fast_paths).
    assert gpu_kernels.origin(conv).startswith('models/convnet_builder.py:')
    assert gpu_kernels.origin(conv).endswith(' affine')


def test_the_memory_estimate_grows_with_the_batch():
    peaks = []
    for batch in (2, 16):
        bench = benchmark_cnn.BenchmarkCNN(make_params(
            model='resnet50', image_size=32, batch_size=batch, device='gpu'), gpus=1)
        built = dry_run.build(bench)
        peaks.append(memory_estimate.estimate_peaks(built.graph, built.fetches, gpu=K80))
    small, large = (p['/GPU:0'] for p in peaks)
    # Each image adds its activations (resnet50 at 32x32: more than 1 MiB per image).
    assert large.activations - small.activations > 14 * (1 << 20)
    assert small.total > 90 * (1 << 20)  # resnet50's 25.6M float32 gradients and more
    # Four times the memory holds about four times the batch (the variables do not grow).
    assert memory_estimate.batch_that_fits(16, large, 4 * large.total) >= 4 * 16 - 1
    assert memory_check.MemoryVerdict('/GPU:0', large.total, 4 * large.total, 16, 63).fits
    assert not memory_check.MemoryVerdict('/GPU:0', large.total, small.total, 16, 1).fits


def test_the_batch_search_brackets_the_largest_batch_that_fits():
    calls = []

    def probe(batch):
        calls.append(batch)
        return batch <= 100
    # A first guess from a ratio that overestimates the cost per image (fixed costs).
    lo, hi, builds = batch_search.search_batch(probe, 10, 0.12, time.monotonic() + 60)
    assert lo <= 100 < hi and hi - lo <= max(1, lo // 32) and builds == len(calls) <= 8
    calls.clear()
    lo, hi, builds = batch_search.search_batch(probe, 400, 30.0, time.monotonic() + 60)
    assert lo <= 100 < hi and builds == len(calls) <= batch_search.MAX_BUILDS
    lo, hi, _ = batch_search.search_batch(probe, 2, 0.01, time.monotonic() + 60, limit=32)
    assert (lo, hi) == (32, None) and max(calls) <= 400


def test_the_batch_search_aims_at_the_line_through_the_probed_ratios():
    # resnet50's shape on a V100: about 1.5 GiB that does not grow, 0.0673 GiB an image, 14.4
    # GiB usable: the largest batch that fits is 191; the run's 64 uses 5.81 GiB.
    def ratio(batch):
        return (1.5 + 0.0673 * batch) / 14.4
    calls = []

    def probe(batch):
        calls.append(batch)
        return ratio(batch)
    lo, hi, builds = batch_search.search_batch(probe, 64, ratio(64) * 1.15,
                                               time.monotonic() + 60)
    assert lo == 191 and hi - lo <= 191 // 32 and builds == len(calls) <= 4, calls
    # A probe that answers only fits / does not fit needs more builds (bisection).
    flags = batch_search.search_batch(lambda b: ratio(b) <= 1, 64, ratio(64) * 1.15,
                                      time.monotonic() + 60)
    assert flags[0] <= 191 < flags[1] and flags[2] > builds


def test_a_search_stopped_by_its_budget_says_its_bracket_is_not_narrowed(monkeypatch):
    """inception3 on an RTX 3090 printed '458 (768 does not) (2 graph builds, 49 s)': each build
    took about 25 s on a loaded host, so a third would not have finished within the search's
    60 s, and a bracket of 458-768 was printed as if within the promised 1/32. The clock is
    injected: each build advances it 24.5 s."""
    clock = [0.0]
    monkeypatch.setattr(batch_search.time, 'monotonic', lambda: clock[0])

    def probe(batch):
        clock[0] += 24.5
        return batch <= 500
    lo, hi, builds = batch_search.search_batch(probe, 48, 0.1, 60.0, limit=768)
    assert (lo, hi, builds) == (480, 768, 2) and not batch_search.narrowed(lo, hi)
    stopped = batch_search.why_stopped(builds, batch_search.MAX_BUILDS, 60.0)
    assert stopped == 'its 60 s ran out after 2 graph builds'
    assert dry_run._found_words(lo, hi, 768, 48, stopped) == (
        '480 (768 does not; not narrowed to 1/32 of it: its 60 s ran out after 2 graph builds)')
    # Out of builds: two allowed, time to spare.
    clock[0] = 0.0
    lo, hi, builds = batch_search.search_batch(probe, 48, 0.1, 1e9, limit=768, max_builds=2)
    stopped = batch_search.why_stopped(builds, 2, 60.0)
    assert stopped == 'its 2 graph builds ran out'
    assert dry_run._found_words(lo, hi, 768, 48, stopped).endswith(
        '; not narrowed to 1/32 of it: its 2 graph builds ran out)')
    # A bracket within 1/32 (the search's own end) says nothing more; nor a search that found
    # nothing down to a batch of 1.
    assert dry_run._found_words(185, 190, 1024, 64, stopped) == '185 (190 does not)'
    assert dry_run._found_words(None, 1, 1024, 64, stopped) == 'none (not even 1)'
    assert dry_run._found_words(None, 6, 1024, 64, stopped) == (
        'none (not even 6; its 2 graph builds ran out before one fit)')
    assert dry_run._found_words(96, None, 1024, 64, stopped) == (
        '96 or more (its 2 graph builds ran out before a batch failed)')
    assert dry_run._found_words(1024, None, 1024, 64, stopped) == (
        "1024 or more (16 x the run's batch of 64, where the search stops)")


def test_devices_are_reported_in_natural_order(capsys):
    """'Ops per device' listed /GPU:10 and /GPU:11 before /GPU:2 with 12 GPUs (string order)."""
    assert sorted(['/GPU:10', 'host', '/GPU:2', '/job:ps/task:0', '/CPU:0'],
                  key=gpu_kernels.device_order) == [
        '/CPU:0', '/GPU:2', '/GPU:10', '/job:ps/task:0', 'host']
    assert sorted(['/job:worker/task:10/GPU:0', '/job:worker/task:2/GPU:1'],
                  key=gpu_kernels.device_order) == [
        '/job:worker/task:2/GPU:1', '/job:worker/task:10/GPU:0']
    bench = gpu_bench(gpus=12, variable_update='replicated')
    lines, _, _ = dry_run.report_lines(bench, dry_run.build(bench), gpu_specs.lookup('V100'),
                                       True)
    gpus = ['/GPU:%d' % i for i in range(12)]
    (per_device,) = [x for x in capsys.readouterr().out.splitlines()
                     if x.startswith('Ops per device:')]
    assert [kv.split()[0] for kv in per_device.split(':', 1)[1].split(', ')] == ['/CPU:0'] + gpus
    assert [x.split()[0] for x in lines if x.startswith('  /GPU:')] == gpus


def test_host_memory_counts_the_address_space_limit(monkeypatch):
    monkeypatch.setattr(host_memory.resource, 'getrlimit', lambda _: (6 << 30, 6 << 30))
    monkeypatch.setattr(host_memory, '_mapped_bytes', lambda: 2 << 30)
    monkeypatch.setattr(host_memory, '_meminfo_available', lambda: 20 << 30)
    assert memory_estimate.host_available_bytes() == (4 << 30, 'RLIMIT_AS')


def _small_step():
    """A graph of one resource variable [5, 2] (40 bytes) and a matmul of a [4, 5] batch."""
    graph = tf.Graph()
    with graph.as_default():
        v = tf1.get_variable('v', [5, 2], use_resource=True)
        loss = tf.reduce_sum(tf.matmul(tf.ones([4, 5]), v))
    return graph, [loss]


def test_a_cpu_step_that_fits_all_its_tensors_at_once_is_not_estimated(monkeypatch):
    graph, fetches = _small_step()
    bound = memory_estimate.all_tensors_bound(graph)
    peak = memory_estimate.group_devices(memory_estimate.estimate_peaks(graph, fetches)).host
    assert bound.variables == peak.variables == 40
    assert peak.activations <= bound.activations and bound.total == bound.activations + 40
    plan = types.SimpleNamespace(params=types.SimpleNamespace(device='cpu'),
                                 per_device_batch_size=4, devices=('/cpu:0',))
    monkeypatch.setattr(memory_estimate, 'estimate_peaks', lambda *a, **k: 1 / 0)
    found = memory_check.verdict(plan, graph, fetches)  # Grappler is not asked
    assert found.fits and found.estimate == bound.total
    # Where the bound does not fit the host, Grappler's estimate decides, as before.
    monkeypatch.setattr(memory_estimate, 'host_available_bytes',
                        lambda: ((256 << 20) + bound.total // 2, 'MemAvailable'))
    with pytest.raises(ZeroDivisionError):
        memory_check.verdict(plan, graph, fetches)


def test_a_step_larger_than_grapplers_virtual_device_is_still_refused_before_it_runs(
        monkeypatch):
    # --batch_size=100000000 ended in TensorFlow's allocation error: Grappler refused the step
    # ("Graph requires ... bytes ... but device only has 17592186044416 available"), and that
    # ResourceExhaustedError left the memory check as if the run had run out of memory.
    graph = tf.Graph()
    with graph.as_default():
        step = tf.random.uniform([1 << 43]) * 2.0  # 32 TiB of float32, twice
    peaks = memory_estimate.estimate_peaks(graph, [step], host_memory=1 << 30)
    assert peaks['/CPU:0'].activations >= 1 << 45  # Grappler's stated figure: over 16 TiB
    plan = types.SimpleNamespace(params=types.SimpleNamespace(device='cpu'),
                                 per_device_batch_size=4, devices=('/cpu:0',))
    monkeypatch.setattr(memory_estimate, 'host_memory', lambda: 8 << 30)
    with pytest.raises(memory_check.OutOfMemoryError, match=r'^not enough memory for this run: '
                       r'the estimated peak is \d+\.\d\d GiB on host, which has 8\.00 GiB; '
                       r'not even one image per device fits \(check with --dry_run\)$'):
        memory_check.check_before_run(plan, graph, [step])


def test_a_graph_without_known_tensor_sizes_has_no_bound():
    graph = tf.Graph()
    with graph.as_default():
        x = tf1.placeholder(tf.float32, [None, 3])  # a batch of any size
        tf.reduce_sum(x)
    assert memory_estimate.all_tensors_bound(graph) is None
    graph = tf.Graph()
    with graph.as_default():
        tf.while_loop(lambda i: i < 10, lambda i: i + 1, [tf.constant(0)])
    assert memory_estimate.all_tensors_bound(graph) is None


def test_a_run_that_would_not_fit_stops_before_its_first_step(monkeypatch):
    monkeypatch.setattr(memory_estimate, 'host_available_bytes', lambda: (4 << 30, 'MemAvailable'))
    # The advice's search is given its builds, not its 30 s (ADVICE_SECS): one slow build on a
    # loaded host ends it without a batch that fits (the test below).
    monkeypatch.setattr(memory_check, 'ADVICE_SECS', 3600.0)
    bench = benchmark_cnn.BenchmarkCNN(make_params(
        model='vgg16', batch_size=64, num_batches=1, num_warmup_batches=0),
        gpus=0)
    steps = []
    monkeypatch.setattr(timed_run, 'timed_loop', lambda *a: steps.append(1))
    with pytest.raises(memory_check.OutOfMemoryError) as e:
        bench.run()
    assert steps == []
    message = str(e.value)
    assert 'estimated peak' in message and message.endswith(' should fit (check with --dry_run)')
    fits = int(message.split('--batch_size=')[1].split()[0])
    assert 1 <= fits < 64


@pytest.mark.cli
def test_dry_run_reports_and_exits_0_for_a_run_that_fits():
    out = helpers.run_command('--dry_run', '--gpu_model=V100', '--model=trivial',
                              '--num_gpus=2', '--variable_update=replicated', '--image_size=32')
    assert out.returncode == 0, out.stderr
    for text in ('planned for V100 16GB', 'Ops on a GPU without a GPU kernel: none',
                 'GPU->GPU', '/GPU:1', 'fits', 'Largest batch per device that fits'):
        assert text in out.stdout, text
    # The search says it started (it may build graphs for up to a minute before its result).
    lines = out.stdout.splitlines()
    searching = lines.index('Searching for the largest batch per device that fits /GPU:0 '
                            '(graph builds, at most 60 s) ...')
    assert lines[searching + 1].startswith('Largest batch per device that fits /GPU:0: ')
    # trivial's step is far below the V100's memory: the search stops at its limit, 16 x the
    # run's batch, in one build, and says so (it said '512 or more (1 graph builds, 0 s)').
    assert lines[searching + 1].startswith(
        "Largest batch per device that fits /GPU:0: 512 or more (16 x the run's batch of 32, "
        'where the search stops) (1 graph build of one tower, ')


def _planning_page_row(start: str) -> list[str]:
    """The cells of docs/planning-a-gpu-run.md's estimate table row that starts with `start`."""
    with open(os.path.join(REPO, 'docs', 'planning-a-gpu-run.md'), encoding='utf-8') as f:
        rows = [line for line in f if line.startswith(start)]
    assert len(rows) == 1, start
    return [cell.strip() for cell in rows[0].strip().strip('|').split('|')]


@pytest.mark.cli
def test_the_planning_pages_k80_resnet50_batch_256_row_is_what_the_command_prints(
        monkeypatch):
    # The page said the largest batch was 137; the command printed 138 (140 does not). (The
    # page's table was typed; this row is checked: the command's estimate and its search.)
    # The search's builds are counted, not timed (dry_run.MAX_SEARCH_SECS): at load 14 its 60 s
    # ended after 2 resnet50 builds, at '70 (140 does not)'.
    monkeypatch.setattr(dry_run, 'MAX_SEARCH_SECS', 3600.0)
    cells = _planning_page_row('| K80 12 GB | resnet50, 256 |')
    estimate, largest = cells[3].split(' (')[0], int(cells[5])
    out = helpers.run_command('--dry_run', '--gpu_model=K80', '--model=resnet50',
                              '--batch_size=256')
    assert out.returncode == 1, out.stderr  # it does not fit, as the run found
    assert re.search(r'/GPU:0 +%s of 10\.80 GiB usable' % re.escape(estimate), out.stdout), \
        out.stdout
    assert 'Largest batch per device that fits /GPU:0: %d (' % largest in out.stdout, out.stdout
    assert '--batch_size=%d' % largest in out.stderr


@pytest.mark.cli
def test_dry_run_of_a_run_that_does_not_fit_is_one_error_line_and_status_1(monkeypatch):
    monkeypatch.setattr(dry_run, 'MAX_SEARCH_SECS', 3600.0)  # the batch named is its search's
    out = helpers.run_command('--dry_run', '--gpu_model=GTX 1080', '--model=vgg16',
                              '--batch_size=512')
    assert out.returncode == 1
    errors = [line for line in out.stderr.splitlines() if line.startswith('error:')]
    assert len(errors) == 1 and 'DOES NOT FIT' in out.stdout
    assert '/GPU:0 needs about' in errors[0] and '--batch_size=' in errors[0]


@pytest.mark.cli
def test_an_unknown_gpu_model_is_a_usage_error_before_tensorflow_loads():
    # The command's main in a fresh process, which says whether TensorFlow was loaded (the
    # test timed the process under 5 s instead: a loaded host's start-up can pass that).
    status, _, err, loaded = run_main('--dry_run', '--gpu_model=Voodoo5')
    assert status == 2 and not loaded
    assert err.startswith('error: --gpu_model: unknown GPU model')
    assert 'A100 80GB' in err and err.count('--gpu_model') == 1


def test_a_planned_gpu_model_gives_the_precision_line_its_compute_capability():
    # No GPU is visible here: the V100's 7.0 says float16 is native; bfloat16 runs with float32
    # math there, as the speed model runs it.
    fp16 = '\n'.join(gpu_bench(use_fp16=True, gpu_model='V100').info_lines())
    assert 'Precision:   float16 compute (--gpu_model=V100 16GB), float32 variables' in fp16
    assert 'GPU compute capability 7.0 >= 7.0: native float16' in fp16
    bf16 = '\n'.join(gpu_bench(use_bf16=True, gpu_model='v100').info_lines())
    assert 'Precision:   bfloat16 compute (--gpu_model=V100 16GB), float32 variables' in bf16
    assert 'GPU compute capability 7.0 < 8.0' in bf16
    assert 'no bfloat16 tensor cores: float32 math, convolutions cast to float32 and back' in bf16


def test_a_gpu_plan_holds_one_intra_op_thread_and_the_header_prints_it():
    # The original's rule for --num_intra_threads unset on a GPU; the session reads the plan,
    # and the inter-op pool keeps this project's default.
    from tf_cnn_benchmarks.runtime import cpu_tuning
    bench = gpu_bench(gpu_model='V100')
    inter = cpu_tuning.default_thread_counts()[1]
    assert bench.plan.threads == (1, inter)
    config = bench.session_config
    assert (config.intra_op_parallelism_threads, config.inter_op_parallelism_threads) == (
        1, inter)
    [line] = [x for x in bench.info_lines() if x.startswith('Threads:')]
    assert line.startswith("Threads:     intra-op 1 (a GPU run's default, as the original's), "
                           'inter-op %d (' % inter)


def test_gpu_model_without_dry_run_warns_and_gpu_flags_warn_on_a_cpu_only_host(monkeypatch):
    from tf_cnn_benchmarks.preflight import ineffective_flags, usage
    given = make_params(model='trivial', gpu_model='V100', winograd_nonfused=False)
    assert ('--gpu_model has no effect without --dry_run or --plan_scaling (a run uses the '
            'GPUs it sees; --gpu_model plans a GPU that is not here: add --dry_run or '
            '--plan_scaling)') in (
                ineffective_flags.ignored_flags(given))
    warned = []
    monkeypatch.setattr(usage.cnn_util, 'warn', warned.append)
    benchmark_cnn.BenchmarkCNN(given, gpus=0)  # no GPU visible: the run is on the CPU
    assert ('--winograd_nonfused=false (--nowinograd_nonfused) has no effect on the CPU, '
            'where this run is because no GPU is visible (it sets GPU options)') in warned


def test_a_full_disk_is_not_called_out_of_memory():
    error = tf.errors.ResourceExhaustedError(
        None, None, '/tmp/full/td/model.ckpt-7.data-00000-of-00001.tempstate; No space left on '
        'device')
    message = memory_check.exhausted_message(error, None)
    assert message.startswith('no space left on device while writing an output (/tmp/full/td/')
    assert 'batch' not in message


def test_an_output_that_cannot_be_written_is_one_error_and_leaves_nothing(tmp_path, monkeypatch):
    from tf_cnn_benchmarks import cnn_util
    from tf_cnn_benchmarks.lifecycle import profiling, results_log

    def full(*args):
        raise OSError(28, 'No space left on device')
    monkeypatch.setattr(os, 'replace', full)
    with pytest.raises(cnn_util.BenchmarkError, match=r'^cannot write .*t\.json: No space left'):
        profiling._write(str(tmp_path / 't.json'), b'{}')
    with pytest.raises(cnn_util.BenchmarkError, match=r'^cannot write .*\.json: No space left'):
        results_log.write_json({'model': 'trivial'}, str(tmp_path))
    assert os.listdir(tmp_path) == []  # no temporary file left behind


V100 = gpu_specs.lookup('V100')
PS_WORKER = dict(variable_update='parameter_server', job_name='worker', task_index=0,
                 ps_hosts=['localhost:2222'], worker_hosts=['localhost:2223'])


def _make_bench(q, gpus):
    return benchmark_cnn.BenchmarkCNN(q, gpus=gpus)


def test_a_cluster_workers_gpus_are_checked_against_the_planned_gpu_and_its_ps_alone(
        monkeypatch):
    # Issue 33.1: a worker's '/job:worker/task:0/GPU:0' was summed into "host".
    # The host's available memory is read once per device: held still (it moves under load).
    monkeypatch.setattr(memory_estimate, 'host_memory', lambda: 16 << 30)
    bench = gpu_bench('resnet20', 32, 2, data_name='cifar10', **PS_WORKER)
    built = dry_run.build(bench)
    peaks = memory_estimate.estimate_peaks(built.graph, built.fetches, gpu=V100)
    fits = dry_run.device_fits(peaks, V100)
    assert sorted(fits) == ['/job:ps/task:0', '/job:worker/task:0/GPU:0',
                            '/job:worker/task:0/GPU:1', 'host']
    usable = int(V100.memory_bytes * memory_estimate.USABLE_GPU_FRACTION)
    assert fits['/job:worker/task:0/GPU:0'][1] == fits['/job:worker/task:0/GPU:1'][1] == usable
    host_memory = memory_estimate.device_memory('/CPU:0')
    assert fits['/job:ps/task:0'][1] == fits['host'][1] == host_memory
    # The ps holds the variables (and their momentum-free sgd state): at least one model.
    assert fits['/job:ps/task:0'][0] >= built.model_bytes
    found = memory_check.verdict(bench.plan, built.graph, built.fetches, gpu=V100)
    assert found.device.startswith('/job:worker/task:0/GPU:') and found.memory == usable


def test_a_cluster_workers_dry_run_that_does_not_fit_its_gpu_fails(capsys, monkeypatch):
    # resnet20 at batch 10000 needs about 16 GiB per GPU: more than a V100's 14.4 usable.
    monkeypatch.setattr(dry_run, 'MAX_SEARCH_SECS', 3600.0)  # its builds, not 60 s of a host
    p = make_params(model='resnet20', data_name='cifar10', batch_size=10000, dry_run=True,
                    gpu_model='V100', **PS_WORKER)
    with pytest.raises(dry_run.DryRunFailed) as e:
        dry_run.run(_make_bench, p, 0)
    out = capsys.readouterr().out
    assert '/job:worker/task:0/GPU:0' in out and 'DOES NOT FIT' in out
    assert 'usable (90% of 16.00 GiB)' in out
    assert str(e.value).startswith('the run would not work as built: /job:worker/task:0/GPU:0 '
                                   'needs about ')
    fits = int(str(e.value).split('--batch_size=')[1])
    assert 5000 < fits < 10000


def test_a_ps_tasks_dry_run_checks_the_variables_it_holds(capsys, monkeypatch):
    p = make_params(model='resnet20', data_name='cifar10', batch_size=8, dry_run=True,
                    **dict(PS_WORKER, job_name='ps'))
    assert dry_run.run(_make_bench, p, 0) == 0
    out = capsys.readouterr().out
    assert "ps 0 serves variables: planned from worker 0's step" in out
    assert '/job:ps/task:0' in out and ': fits' in out
    monkeypatch.setattr(memory_estimate, 'host_available_bytes', lambda: (1 << 20, 'RLIMIT_AS'))
    with pytest.raises(dry_run.DryRunFailed, match=r'/job:ps/task:0 needs about .* add ps '):
        dry_run.run(_make_bench, p, 0)


def test_the_memory_checks_advice_uses_the_same_search_within_three_builds():
    calls = []

    def estimate_at(batch):  # a fixed 1000 bytes (variables, gradients) + 10 bytes an image
        calls.append(batch)
        return 1000 + 10 * batch
    found = memory_check.MemoryVerdict('/GPU:0', estimate_at(200), 2000, 200, 66)
    calls.clear()
    advised = memory_check.batch_advice(found, estimate_at)
    # Largest that fits: 100. Guess 200 / 1.5 = 133 (no), halve to 66 (yes), then the line
    # through the two probed ratios crosses 1 at 100 (it fits).
    assert calls == [133, 66, 100] and advised.batch_that_fits == 100
    assert advised._replace(batch_that_fits=66, smallest_over=0) == found
    assert advised.smallest_over == 133


def test_a_search_that_runs_out_of_time_says_what_it_found_not_to_fit(monkeypatch):
    # A first build slower than the search's time (a loaded host) found no batch to fit, and
    # the advice said 'not even one image per device fits' of a run that fits at 100.
    def estimate_at(batch):  # as above; each build takes 40 s of a fake clock
        now[0] += 40.0
        return 1000 + 10 * batch
    now = [0.0]
    monkeypatch.setattr(batch_search.time, 'monotonic', lambda: now[0])
    found = memory_check.MemoryVerdict('/GPU:0', estimate_at(200), 2000, 200, 66)
    now[0] = 0.0
    advised = memory_check.batch_advice(found, estimate_at)
    assert now[0] == 40.0 and (advised.batch_that_fits, advised.smallest_over) == (0, 133)
    assert advised.advice() == (
        'the estimated peak is 2.9 KiB on /GPU:0, which has 2.0 KiB; no batch was found to fit '
        'before the search stopped (--batch_size=133 does not); a smaller one may: --dry_run '
        'searches longer')
    # Only a search that found batch 1 not to fit says so.
    assert advised._replace(smallest_over=1).advice().endswith(
        '; not even one image per device fits')


def test_a_dry_run_with_benchmark_log_dir_writes_its_prediction_as_json(
        tmp_path, monkeypatch, capsys):
    # Issue 40.1: the JSON says which ops bound the step and what share of the peak it reaches.
    monkeypatch.setattr(dry_run, 'largest_batch', lambda *args: dry_run.LargestBatch(96))
    p = make_params(model='trivial', image_size=16, batch_size=8, dry_run=True, num_gpus=1,
                    gpu_model='V100', variable_update='replicated',
                    benchmark_log_dir=str(tmp_path))
    assert dry_run.run(_make_bench, p, 0) == 0
    written = sorted(os.listdir(tmp_path))
    assert len(written) == 1 and written[0].startswith('dry_run_trivial_'), written
    assert 'Results written to %s' % os.path.join(str(tmp_path), written[0]) in (
        capsys.readouterr().out)
    with open(os.path.join(str(tmp_path), written[0])) as f:
        data = json.load(f)
    assert (data['model'], data['dry_run'], data['gpu'], data['batch_size']) == (
        'trivial', True, 'V100 16GB', 8)
    assert data['works'] is True and data['problems'] == [] and data['largest_batch'] == 96
    assert data['memory']['/GPU:0']['usable'] == int(
        V100.memory_bytes * memory_estimate.USABLE_GPU_FRACTION)
    step = data['predicted_step']
    assert step['planned'] is True and step['devices'] == 1 and step['batch_size'] == 8
    assert step['images_per_sec'] == pytest.approx(8 / step['step_secs'])
    one = step['one_gpu']
    assert one['math_path'] == 'float32 CUDA cores' and one['peak_tflops'] == 15.7
    assert 0 < one['share_of_peak'] < 1
    kinds = [op['kind'] for op in one['bound_ops']]
    assert kinds and ('matmul' in kinds or 'conv' in kinds), kinds
    assert sum(op['share'] for op in one['bound_ops']) == pytest.approx(1.0)
    assert {op['bound'] for op in one['bound_ops']} <= {'math', 'memory', 'launch'}
