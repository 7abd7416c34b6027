"""The error band beside a data-sheet prediction (speed_model/validation_band.py) and the words
on the variables' copies over PCIe (speed_model/from_flags.variable_copy_words).

`--dry_run --gpu_model=A100 --use_fp16` printed `1768.2 images/sec on 1 device(s)` with no word
of the model's error against the published float16 runs (median 17%, up to +129%), an H100's
figure as if it had been checked, and `+ 0.0 ms of communication that does not overlap it`
for a step that copies the variables over PCIe. No graph of the step is built: the per-op
model reads trivial's op profile at 16 x 16."""

from __future__ import annotations

import glob
import json
import os

import pytest

from tf_cnn_benchmarks import benchmark_cnn
from tf_cnn_benchmarks.hardware import gpu_specs, links
from tf_cnn_benchmarks.params import make_params
from tf_cnn_benchmarks.preflight import scaling_plan
from tf_cnn_benchmarks.speed_model import from_flags, scaling_report, step_time
from tf_cnn_benchmarks.speed_model import validation_band as vb

from checkout import REPO

FLOAT16 = ('data-sheet model; against 42 published float16 runs its error was median 17%, '
           '-29%..+129% (+: predicted above the published figure)')
FLOAT32 = ('data-sheet model; against 62 published float32 runs its error was median 8%, '
           '-47%..+36% (+: predicted above the published figure)')
DOC = ': docs/estimate-vs-reality.md; '


def _params(gpu_model, batch_size=1, gpus=1, **flags):
    return make_params(model='trivial', image_size=16, batch_size=batch_size, device='gpu',
                       num_gpus=gpus, gpu_model=gpu_model, dry_run=True, **flags)


def _report(gpu_model, batch_size=1, gpus=1, **flags):
    p = _params(gpu_model, batch_size, gpus, **flags)
    bench = benchmark_cnn.BenchmarkCNN(p, gpus=gpus)
    return scaling_plan.dry_run_report(p, bench, gpu_specs.lookup(gpu_model))


def test_the_table_is_the_newest_committed_validation():
    """BANDS and GPU_ROWS are typed in the package (results/ does not ship); they must be
    what the newest committed validation's rows give."""
    newest = sorted(glob.glob(os.path.join(REPO, 'results', '*gpu-model-validation.json')))[-1]
    assert vb.VALIDATION == os.path.relpath(newest, REPO)
    with open(newest, encoding='utf-8') as f:
        rows = json.load(f)['data']['rows']
    bands, per_gpu = vb.bands_from_rows(rows)
    assert (bands, per_gpu) == (vb.BANDS, vb.GPU_ROWS), (
        'speed_model/validation_band.py differs from %s; paste:\nBANDS = %r\nGPU_ROWS = %r'
        % (vb.VALIDATION, bands, per_gpu))
    # The band's GPUs are the GPU table's names (what a prediction looks them up by).
    assert {g for gpus in per_gpu.values() for g in gpus} <= set(gpu_specs.sorted_names())
    assert os.path.exists(os.path.join(REPO, vb.DOC))


def test_bands_from_rows_leaves_out_suspect_rows():
    rows = [{'gpu': 'K80', 'dtype': 'float32', 'error': e, 'suspect': ''}
            for e in (-0.2, 0.1, 0.3)]
    rows.append({'gpu': 'T4', 'dtype': 'float32', 'error': 20.0, 'suspect': 'broken'})
    bands, per_gpu = vb.bands_from_rows(rows)
    assert bands == {'float32': (3, 0.2, -0.2, 0.3, 1)}
    assert per_gpu == {'float32': {'K80': 3}}


@pytest.mark.parametrize('gpu_model,flags,band,name,rows', [
    ('A100', dict(use_fp16=True), FLOAT16, 'A100 40GB', 5),
    ('V100', {}, FLOAT32, 'V100 16GB', 1)])
def test_a_validated_gpus_figure_says_its_band(gpu_model, flags, band, name, rows):
    lines, data = _report(gpu_model, 64, **flags)
    figure = step_time.images(data['images_per_sec'])
    assert '.' not in figure  # whole images/sec: the band is tens of percent wide
    assert lines[1].strip().startswith('%s images/sec on 1 device(s) (%s%s' % (
        figure, band, DOC))
    found = data['error_band']
    assert found['gpu'] == name and found['gpu_rows'] == rows and found['gpu_validated']
    assert found['rows'] == (42 if flags else 62)
    assert (found['median_abs_error'], found['min_error'], found['max_error']) == (
        (0.1728, -0.2908, 1.2934) if flags else (0.0806, -0.4671, 0.356))
    assert found['validation'] == vb.VALIDATION


def test_a_gpu_without_a_published_run_says_so():
    lines, data = _report('H100', 64, use_fp16=True)
    assert (FLOAT16 + ', and no published run of the H100 80GB to check it against' + DOC
            in lines[1])
    assert data['error_band']['gpu_validated'] is False and data['error_band']['gpu_rows'] == 0
    # A GPU with float32 rows but no float16 one; bfloat16 has no published row at all.
    assert 'and no published float16 run of the K80 to check it' in _report(
        'K80', 64, use_fp16=True)[0][1]
    lines, data = _report('A100', 64, use_bf16=True)
    assert ('against 42 published float16 runs (none bfloat16) its error was median 17%'
            in lines[1])
    assert data['error_band']['dtype'] == 'bfloat16'


def test_the_float32_comparison_says_its_band_and_a_measured_figure_none():
    lines, _ = _report('A100', 64, use_fp16=True)
    (line,) = [x for x in lines if 'in float32 one' in x]
    assert ('images/sec (TF32 tensor cores; data-sheet model, against 62 published float32 '
            'runs: median 8%, -47%..+36%); in float16' in line)
    lines, data = _report('A100', 64, use_fp16=True, single_device_images_per_sec=1500.0)
    assert data['error_band'] is None
    assert not any('data-sheet model' in x for x in lines)


def test_the_scaling_plan_says_the_band_under_its_device_line():
    p = _params('T4', 64)
    bench = benchmark_cnn.BenchmarkCNN(p, gpus=1)
    inputs = from_flags.plan_inputs(p, bench.plan, gpu_specs.lookup('T4'))
    lines = scaling_report.header_lines(inputs)
    assert lines[1].startswith('Device:           T4; compute ')
    assert lines[2] == ('                  (%s, and no published run of the T4 to check it '
                        'against: docs/estimate-vs-reality.md)' % FLOAT32)
    data = scaling_report.plan_data(inputs, [])
    assert data['error_band']['gpu'] == 'T4' and not data['error_band']['gpu_validated']


def test_the_communication_says_what_the_model_assumed_of_the_variables_copies():
    """parameter_server with the variables on the CPU: the model copies them over PCIe and
    plans the copies under the compute layer by layer; the line says so, with their time
    at the link's rate."""
    p = _params('V100', 64)
    lines, data = _report('V100', 64)
    bench = benchmark_cnn.BenchmarkCNN(p, gpus=1)
    model_bytes = from_flags.profile_of(p, bench.plan).model_bytes
    copies = data['variable_copies']
    assert copies['variables_bytes'] == copies['gradients_bytes'] == model_bytes
    assert gpu_specs.lookup('V100').pcie == 'pcie3'
    secs = model_bytes / links.LINKS['pcie3'].bytes_per_sec  # 15.75 GB/s
    assert copies['variables_secs'] == pytest.approx(secs)
    assert lines[0].endswith(
        "of communication that does not overlap it (the variables' %.1f MiB to the GPU and "
        "their gradients' %.1f MiB back over PCIe 3.0 x16 (15.8 GB/s), %.1f ms each way, "
        'assumed to overlap the compute layer by layer: a layer waits only for its own '
        'variables, a gradient leaves as soon as it is made)' % (
            model_bytes / 2 ** 20, model_bytes / 2 ** 20, 1e3 * secs))
    # Forward only: no gradient goes back.
    lines, data = _report('V100', 64, forward_only=True)
    assert data['variable_copies']['gradients_bytes'] == 0
    assert "MiB to the GPU over PCIe 3.0 x16 (15.8 GB/s), " in lines[0]
    assert lines[0].endswith('a layer waits only for its own variables)')


@pytest.mark.parametrize('flags', [dict(local_parameter_device='gpu'),
                                   dict(variable_update='replicated')])
def test_no_copy_words_where_the_variables_are_not_on_the_cpu(flags):
    lines, data = _report('V100', 64, **flags)
    assert data['variable_copies'] is None
    assert lines[0].endswith('of communication that does not overlap it')
