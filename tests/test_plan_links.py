"""The links the step-time model and the scaling plan plan on (hardware/links.py): their
rates from the standards, and the planning flags' rules (--interconnect_gbps,
--gpu_interconnect, --gpu_model with NVLink, the plan flags' mixes), refused before TensorFlow
loads."""

from __future__ import annotations

import pytest

from tf_cnn_benchmarks import params
from tf_cnn_benchmarks.hardware import gpu_specs, links

import helpers


def test_link_rates_come_from_the_standards():
    assert links.link('pcie3').gbytes_per_sec == pytest.approx(15.754, abs=1e-3)  # 8 GT/s x 16
    assert links.link('pcie4').gbytes_per_sec == pytest.approx(31.508, abs=1e-3)
    assert links.link('nvlink2').gbytes_per_sec == 150  # 6 links x 25 GB/s
    assert links.network('25').name == '25gbe'
    assert links.network('25gbe').gbytes_per_sec == 3.125
    assert links.network('ib_hdr').gbytes_per_sec == 25.0  # 200 Gbit/s
    assert links.network('56').gbytes_per_sec == 7.0
    assert all(link.source for link in links.LINKS.values())
    assert all(h.source and gpu_specs.lookup(h.gpu) for h in links.HOSTS.values())


def test_unknown_links_are_one_usage_line_naming_the_flag():
    with pytest.raises(params.ParamsError, match=r"^--interconnect_gbps: unknown link '11gbe'; "
                                                 r'known: pcie2, pcie3'):
        links.check_plan_flags(params.make_params(plan_scaling=True, interconnect_gbps='11gbe'))
    # The flag named once: the rate's own message names it (not '--interconnect_gbps:
    # --interconnect_gbps must be > 0').
    with pytest.raises(params.ParamsError, match=r"^--interconnect_gbps must be > 0\. "
                                                 r"Received: '0'$"):
        links.check_plan_flags(params.make_params(plan_scaling=True, interconnect_gbps='0'))
    with pytest.raises(params.ParamsError, match=r"^--gpu_interconnect: '25gbe' is no GPU "
                                                 r'link; known: pcie2, .*dgx1_p100'):
        links.check_plan_flags(params.make_params(plan_scaling=True, gpu_interconnect='25gbe'))
    links.check_plan_flags(params.make_params(plan_scaling=True, gpu_interconnect='dgx1_p100',
                                              interconnect_gbps='loopback'))


_NO_NVLINK = ('--gpu_interconnect=nvlink: K80 has no NVLink form in the table (NVLink GPUs: '
              'P100, V100 16GB, V100 32GB, A100 40GB, A100 80GB, H100 80GB, H200); name the '
              'generation (nvlink1 to nvlink4)')


def test_nvlink_for_a_gpu_model_without_it_is_a_usage_error_of_the_flags():
    # The plan's own rule (links.gpu_link_name), applied before TensorFlow loads; a GPU with
    # NVLink, or nvlink without --gpu_model (its GPU is found later), passes.
    with pytest.raises(params.ParamsError) as e:
        links.check_plan_flags(params.make_params(plan_scaling=True, gpu_model='k80',
                                                  gpu_interconnect='NVLink'))
    assert str(e.value) == _NO_NVLINK
    links.check_plan_flags(params.make_params(plan_scaling=True, gpu_model='V100',
                                              gpu_interconnect='nvlink'))
    links.check_plan_flags(params.make_params(plan_scaling=True, gpu_interconnect='nvlink'))


@pytest.mark.cli
def test_nvlink_for_a_k80_stops_the_command_before_tensorflow_loads():
    # It exited 1 after TensorFlow loaded (the plan's error); now a usage error, one line.
    out = helpers.run_command('--model=resnet50', '--plan_scaling', '--gpu_model=K80',
                              '--gpu_interconnect=nvlink')
    assert (out.returncode, out.stdout) == (2, ''), out.stdout + out.stderr
    assert out.stderr == 'error: %s\n' % _NO_NVLINK


@pytest.mark.parametrize('flags,message', [
    (dict(interconnect_gbps='25'), '--interconnect_gbps feeds the step-time model of '
                                   '--plan_scaling and --dry_run'),
    (dict(plan_scaling_png='x.png'), '--plan_scaling_png needs --plan_scaling.'),
    (dict(plan_num_ps=4), '--plan_num_ps needs --plan_scaling.'),
    (dict(plan_scaling=True, dry_run=True), '--plan_scaling excludes --dry_run'),
    (dict(dry_run=True, single_device_images_per_sec=0.0),
     '--single_device_images_per_sec must be > 0'),
    (dict(dry_run=True, single_device_images_per_sec=-380.0),  # said '>= 0' before
     '--single_device_images_per_sec must be > 0 (images/sec of one device). Received: '
     'single_device_images_per_sec=-380'),
])
def test_the_planning_flags_rules(flags, message):
    with pytest.raises(params.ParamsError) as e:
        params.validate_params(params.make_params(**flags))
    assert str(e.value).startswith(message)
