"""What the flags give `--plan_scaling` (test_scaling_plan.py has the model and the report):
an explicit --num_gpus, the one-device figure and where it comes from, the knobs a figure of
the data sheet or a measured one allows, and the plan's JSON in --benchmark_log_dir.

Every figure here is the model's arithmetic on injected inputs (a given one-device figure, a
stand-in per-op step): nothing is timed on this host.
"""

from __future__ import annotations

import pytest

from tf_cnn_benchmarks.hardware import gpu_specs, links
from tf_cnn_benchmarks.speed_model import from_flags, layer_profile, scaling_report, step_time
from tf_cnn_benchmarks.speed_model import traffic_patterns as patterns

import helpers

V100 = gpu_specs.lookup('V100')
TRIVIAL = ('--plan_scaling', '--model=trivial', '--gpu_model=V100',
           '--single_device_images_per_sec=380')


def _row_shapes(stdout: str) -> list[str]:
    """The 'hosts x GPUs' of each row of a printed plan."""
    return [line.split('  ')[0].strip() for line in stdout.splitlines()
            if line[:1].isdigit() and ' x ' in line.split('  ')[0]]


def test_gpus_per_host_tells_an_explicit_num_gpus_1_from_the_default():
    from tf_cnn_benchmarks import params
    p = params.make_params(plan_scaling=True)
    assert from_flags.gpus_per_host(p, V100) == 8  # not given: a full host of 8
    assert from_flags.gpus_per_host(p, V100, frozenset({'num_gpus'})) == 1
    assert from_flags.gpus_per_host(p._replace(num_gpus=4), V100) == 4
    assert from_flags.gpus_per_host(p, None) == 1  # CPU towers


@pytest.mark.cli
def test_an_explicit_num_gpus_1_plans_hosts_of_one_gpu():
    # --num_gpus=1 printed the rows '1 x 8' and '2 x 8 16' as if it had not been given.
    given = helpers.run_command(*TRIVIAL, '--num_gpus=1')
    assert given.returncode == 0, given.stderr[-2000:]
    assert _row_shapes(given.stdout) == ['1 x 1', '2 x 1', '4 x 1', '8 x 1', '16 x 1',
                                         '32 x 1', '64 x 1', '128 x 1']
    default = helpers.run_command(*TRIVIAL)
    assert default.returncode == 0, default.stderr[-2000:]
    assert _row_shapes(default.stdout)[:5] == ['1 x 1', '1 x 2', '1 x 4', '1 x 8', '2 x 8']


# --- The one-device figure: the one-device row is exactly it.

def _t4_forward(batch=1, mode='parameter_server'):
    """resnet50 forward-only on T4s (PCIe 3.0 each, 10 Gbit/s): the inputs without compute."""
    profile = layer_profile.from_model('resnet50')
    pcie = links.link('pcie3')
    lk = patterns.Links(pcie, 1, pcie, links.link('10gbe'))
    return scaling_report.PlanInputs(profile, batch, lk, None, mode, 8, 'T4',
                                     forward_only=True)


def test_a_figure_above_what_its_own_copies_allow_is_the_one_device_row_and_says_so():
    # --single_device_images_per_sec=1000 for resnet50 forward-only at batch 1 on a T4 with its
    # variables on the CPU: 97.5 MiB over PCIe 3.0 take 6.5 ms, so the row read 154.1 (not
    # 1000) and the source said '1000 images/sec, at or below what its own traffic allows'.
    base = _t4_forward()
    inputs = scaling_report.from_single_device(base, 1000.0, '--single_device_images_per_sec')
    rows = scaling_report.plan_rows(inputs)
    assert rows[0].prediction.images_per_sec == pytest.approx(1000.0, rel=1e-9)
    floor = base.profile.model_bytes / links.link('pcie3').bytes_per_sec  # the copies alone
    factor = floor / (1 / 1000.0)
    assert inputs.links.pcie.gbytes_per_sec == pytest.approx(
        links.link('pcie3').gbytes_per_sec * factor, rel=1e-9)
    assert inputs.links.network == base.links.network  # not crossed by one device: as planned
    assert inputs.compute.secs == 0.0 and inputs.compute.measured
    assert 'at or below' not in inputs.compute.source
    assert inputs.compute.source.startswith(
        '--single_device_images_per_sec: 1000 images/sec on one device, more than its own '
        'copies allow over the planned links (154 at most): those links planned %.3gx as fast'
        % factor)
    (warning,) = inputs.warnings
    assert warning.startswith(
        '--single_device_images_per_sec: 1000 images/sec on one device is more than its own '
        'copies allow over the planned links (at most 154 images/sec, bound by PCIe (host <-> '
        'GPU)); the plan keeps the one-device row at 1000 with no compute left and PCIe 3.0 '
        'x16 at %.3gx (' % factor), warning
    lines = scaling_report.format_report(inputs, rows)
    assert any(x.startswith('1 x 1         1  parameter_server               1000.0  100.0%')
               for x in lines), lines


def test_a_figure_within_the_links_keeps_them_and_takes_the_batch_copy_off_too():
    # A real-data batch's copy (traffic_patterns' background bytes) was left out of the
    # one-device figure's arithmetic: a copy longer than the measured step planned the row
    # below the figure.
    base = _t4_forward(batch=64, mode='replicated')._replace(batch_bytes=64 * 3 * 224 ** 2 * 4)
    inputs = scaling_report.from_single_device(base, 400.0, 'measured')
    one = scaling_report.predict_topology(inputs, scaling_report.topology(inputs, 1, 1))
    assert one.images_per_sec == pytest.approx(400.0, rel=1e-9)
    assert inputs.links == base.links and inputs.warnings == ()
    assert inputs.compute.source == 'measured: 400 images/sec on one device'
    slow = base._replace(batch_bytes=base.batch_bytes * 1000)  # 38 GB a step over PCIe
    fitted = scaling_report.from_single_device(slow, 400.0, 'measured')
    one = scaling_report.predict_topology(fitted, scaling_report.topology(fitted, 1, 1))
    assert one.images_per_sec == pytest.approx(400.0, rel=1e-9) and fitted.warnings


@pytest.mark.cli
def test_the_command_plans_the_one_device_row_at_the_figure_given():
    out = helpers.run_command('--plan_scaling', '--model=trivial', '--gpu_model=T4',
                              '--forward_only', '--single_device_images_per_sec=10000000')
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stderr.startswith('warning: --single_device_images_per_sec: 10000000 images/sec '
                                 'on one device is more than its own copies allow'), out.stderr
    row = next(x for x in out.stdout.splitlines() if x.startswith('1 x 1 '))
    assert row.split()[5] == '10000000.0', row


# --- Knobs: held to a measured figure only, the batch knob never.

def test_knobs_of_a_data_sheet_step_are_not_held_to_its_one_device_row():
    # resnet50 forward-only at batch 1, float16, on T4s: the per-op model's 486.2 images/sec,
    # 154.1 once PCIe carries the variables. The only knob offered was --batch_size=2: the
    # others were cut to perfect scaling of 154.1, a figure of the model's own estimate.
    data_sheet = _t4_forward()._replace(compute=step_time.Compute(1 / 486.2, 'T4 data sheet'))
    rows = scaling_report.plan_rows(data_sheet)
    assert rows[0].prediction.images_per_sec == pytest.approx(154.1, abs=0.05)
    assert rows[0].prediction.bound == 'pcie'
    one, eight = rows[0].knob, rows[3].knob
    assert one.change == '--local_parameter_device=gpu' and not one.capped
    assert one.prediction.images_per_sec == pytest.approx(486.2, rel=1e-9)
    assert eight.change == '--variable_update=replicated --all_reduce_spec=nccl'
    assert eight.prediction.images_per_sec == pytest.approx(8 * 486.2, rel=1e-9)
    lines = scaling_report.format_report(data_sheet, rows)
    assert '  1 x 1: bound by PCIe (host <-> GPU); --local_parameter_device=gpu: 486.2 ' \
           'images/sec (216% more)' in lines, lines
    assert not any('perfect scaling' in x for x in lines)
    # The same step measured: 154.1 is then the whole step, copies included, and a knob of the
    # same batch and bytes predicts at most 154.1 a device.
    measured = scaling_report.from_single_device(_t4_forward(), 154.1, 'measured')
    for row in scaling_report.plan_rows(measured):
        if row.knob is not None and row.knob.keeps_step:
            assert row.knob.prediction.images_per_sec <= \
                154.1 * row.prediction.devices * (1 + 1e-9), row


def test_perfect_scaling_is_said_of_a_cut_knob_only():
    # A --batch_size=128 knob read '4072.4 images/sec (53% more; perfect scaling of the
    # one-device figure)': its figure happened to equal 16 x the one-device row, uncut.
    inputs = scaling_report.from_single_device(_t4_forward(batch=8), 300.0, 'measured')
    rows = scaling_report.plan_rows(inputs)
    row = rows[1]  # 1 x 2
    per_device = rows[0].prediction.images_per_sec
    equal = scaling_report.at_most(row.prediction._replace(images_per_sec=1e9),
                                   row.prediction.devices * per_device)
    for capped in (False, True):
        knob = scaling_report.Knob('--batch_size=16 (if it fits: --dry_run)', equal,
                                   capped=capped)
        line = next(x for x in scaling_report.format_report(
            inputs, [rows[0], row._replace(knob=knob)]) if x.startswith('  1 x 2: '))
        assert line.endswith('%.1f images/sec (%.0f%% more%s)' % (
            2 * per_device, 100 * (2 * per_device / row.prediction.images_per_sec - 1),
            '; perfect scaling of the one-device figure' if capped else '')), line


def test_the_batch_knob_plans_the_per_op_models_step_at_its_batch(monkeypatch):
    # The knob scaled the data sheet's step linearly with the batch: --batch_size=128 for
    # 2 x 8 read 4072.4 images/sec where planning --batch_size=128 gave 4137.4.
    from tf_cnn_benchmarks import benchmark_cnn, params
    from tf_cnn_benchmarks.preflight import scaling_plan
    monkeypatch.setattr(scaling_plan, 'find_single_device_run', lambda q, device: None)

    def planned(batch):
        p = params.make_params(model='trivial', image_size=32, batch_size=batch, device='gpu',
                               gpu_model='V100', plan_scaling=True, plan_num_ps=1,
                               variable_update='distributed_replicated')
        # The run plan's batch and image size (a cluster mode's BenchmarkCNN needs a cluster).
        bench = benchmark_cnn.BenchmarkCNN(scaling_plan.buildable(p)._replace(
            variable_update='parameter_server'), gpus=1)
        return scaling_plan.plan_inputs(p, bench, V100)
    small, large = planned(16), planned(32)
    assert small.compute.step is not None and not small.compute.measured  # the data sheet
    assert large.compute.secs < 2 * small.compute.secs  # not linear in the batch
    topo = scaling_report.topology(small, 2, 8)
    knob = next(k for k in scaling_report.knobs(small, topo, scaling_report.predict_topology(
        small, topo)) if k.change.startswith('--batch_size=32'))
    direct = scaling_report.predict_topology(large, scaling_report.topology(large, 2, 8))
    assert knob.prediction.compute_secs == pytest.approx(large.compute.secs, rel=1e-12)
    assert knob.prediction.images_per_sec == pytest.approx(direct.images_per_sec, rel=1e-12)


def test_a_compute_bound_row_with_exposed_communication_says_how_much():
    # 'bound: compute' beside 5.4 ms exposed (AlexNet, NCCL on a DGX-1's NVLink) read as a
    # contradiction: compute-bound means under 5% of the step exposed.
    inputs = scaling_report.from_single_device(_t4_forward(batch=64, mode='replicated')._replace(
        forward_only=False, all_reduce='nccl', gpus_per_host=8), 400.0, 'measured')
    rows = scaling_report.plan_rows(inputs, with_knobs=False)
    exposed = [r for r in rows if r.prediction.bound == 'compute'
               and r.prediction.exposed_secs >= 0.005 * r.prediction.step_secs]
    assert exposed, [(r.prediction.bound, r.prediction.exposed_secs) for r in rows]
    lines = scaling_report.format_report(inputs, rows)
    for row in exposed:
        share = row.prediction.exposed_secs / row.prediction.step_secs
        line = next(x for x in lines if x.startswith('%-9s %5d ' % (
            '%d x %d' % (row.hosts, row.gpus_per_host), row.prediction.devices)))
        assert line.endswith('compute (%.0f%% of the step exposed, under 5%%)' % (100 * share))
    first = next(x for x in lines if x.startswith('1 x 1 '))
    assert first.endswith('  compute'), first  # nothing exposed: the word alone
    one_ps = scaling_report.header_lines(inputs._replace(num_ps=1))
    assert 'Parameter servers: 1 ps task on hosts of their own' in one_ps  # was '1 ps tasks'


@pytest.mark.cli
def test_the_plan_is_written_as_json_to_the_benchmark_log_dir(tmp_path):
    # --plan_scaling --benchmark_log_dir=D wrote nothing and said nothing.
    import json
    out = helpers.run_command(*TRIVIAL, '--benchmark_log_dir=%s' % tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    (path,) = tmp_path.iterdir()
    assert path.name.startswith('scaling_plan_trivial_') and path.suffix == '.json'
    assert out.stdout.splitlines()[-1] == 'Results written to %s' % path
    data = json.loads(path.read_text())
    assert data['plan_scaling'] is True and data['model'] == 'trivial'
    assert data['compute_measured'] is True and data['device'] == 'V100 16GB'
    rows = data['rows']
    assert [(r['hosts'], r['devices']) for r in rows] == [
        (1, 1), (1, 2), (1, 4), (1, 8), (2, 16), (4, 32), (8, 64), (16, 128), (32, 256),
        (64, 512), (128, 1024)]
    assert rows[0]['images_per_sec'] == pytest.approx(380.0, rel=1e-9)
    printed = [x for x in out.stdout.splitlines() if x.startswith('128 x 8 ')]
    assert printed and ' %.1f ' % rows[-1]['images_per_sec'] in printed[0]
    assert rows[-1]['knob']['change'] in out.stdout


# --- A float16 run's gradients in the all-reduce (--compact_gradient_transfer).

def _fp16_inputs(**flags):
    """The PlanInputs of resnet50 on 8 V100s, --use_fp16, replicated NCCL, plus `flags`."""
    from tf_cnn_benchmarks import params
    p = params.make_params(plan_scaling=True, model='resnet50', use_fp16=True,
                           variable_update='replicated', all_reduce_spec='nccl', num_gpus=8,
                           **flags)
    lk = patterns.Links(links.link('pcie3'), 1, links.link('nvlink2'), links.link('10gbe'))
    return p, scaling_report.PlanInputs(
        layer_profile.from_model('resnet50'), 64, lk, step_time.Compute(0.1, 'given'),
        'replicated', 8, 'V100', all_reduce='nccl',
        compact_gradients=from_flags.compacts_gradients(p))


def test_a_float16_replicated_plan_all_reduces_half_the_bytes_only_where_the_run_compacts():
    # The plan all-reduced float32-sized gradients whatever --compact_gradient_transfer said,
    # though the run (variable_managers/grad_transfer.py, as the original) casts them to float16.
    p, compact = _fp16_inputs()
    _, full = _fp16_inputs(compact_gradient_transfer=False)
    assert from_flags.compacts_gradients(p) and not full.compact_gradients
    eight = scaling_report.topology(compact, 1, 8)
    moved = scaling_report.predict_topology(compact, eight).busy['gpu_link']
    assert moved == pytest.approx(0.5 * scaling_report.predict_topology(full, eight)
                                  .busy['gpu_link'], rel=1e-9)
    # Only one host's replicated all-reduce casts: not across hosts (distributed_replicated),
    # not parameter_server's copies, not one GPU.
    for topo in (scaling_report.topology(compact, 2, 8),
                 scaling_report.topology(compact, 1, 8, mode='parameter_server'),
                 scaling_report.topology(compact, 1, 1)):
        assert scaling_report.gradient_ratio(compact, topo) == 1.0, topo
    assert scaling_report.gradient_ratio(compact, eight) == 0.5
    # Float16 variables: their gradients are float16 already (the profile's 2 bytes a value).
    assert not from_flags.compacts_gradients(p._replace(fp16_vars=True))
    assert not from_flags.compacts_gradients(p._replace(use_fp16=False))
    words = '\n'.join(scaling_report.header_lines(compact))
    assert ('the all-reduce between one host\'s GPUs moves them as float16: 48.8 MiB per '
            'device (--compact_gradient_transfer; float32 across hosts)') in words
    assert 'as float16' not in '\n'.join(scaling_report.header_lines(full))


@pytest.mark.cli
@pytest.mark.parametrize('flag,compact', [('--compact_gradient_transfer', True),
                                       ('--nocompact_gradient_transfer', False)])
def test_the_plans_pattern_bytes_follow_compact_gradient_transfer(flag, compact):
    # The counted copies of the built step (float16 in the all-reduce) and the pattern's bytes
    # (float32) differed: 'the count and the pattern differ (GPU->GPU)'.
    done = helpers.run_command(*TRIVIAL, '--use_fp16', '--variable_update=replicated',
                               '--num_gpus=2', flag)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    counted = next(i for i, line in enumerate(lines) if line.startswith('Counted copies:'))
    count = float(lines[counted].split('GPU->GPU ')[1].split()[0])
    pattern = float(lines[counted + 1].split('GPU->GPU ')[1].split()[0])
    assert count == pytest.approx(pattern, rel=0.05)
    assert 'the count and the pattern differ' not in done.stdout
    assert ('moves them as float16' in done.stdout) == compact
