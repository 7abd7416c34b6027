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
    with pytest.raises(params.ParamsError, match=r"^--interconnect_gbps: unknown network "
                                                 r"'11gbe'; did you mean 1gbe, 10gbe or 100gbe\? "
                                                 r'give a rate in Gbit/s'):
        links.check_plan_flags(params.make_params(plan_scaling=True, interconnect_gbps='11gbe'))
    # The flag named once: the rate's own message names it (not '--interconnect_gbps:
    # --interconnect_gbps must be > 0').
    with pytest.raises(params.ParamsError, match=r"^--interconnect_gbps must be > 0\. "
                                                 r"Received: '0'$"):
        links.check_plan_flags(params.make_params(plan_scaling=True, interconnect_gbps='0'))
    with pytest.raises(params.ParamsError, match=r"^--gpu_interconnect: no GPU link: '25gbe'; "
                                                 r'give a PCIe generation \(pcie2, .*dgx1_p100'):
        links.check_plan_flags(params.make_params(plan_scaling=True, gpu_interconnect='25gbe'))
    links.check_plan_flags(params.make_params(plan_scaling=True, gpu_interconnect='dgx1_p100',
                                              interconnect_gbps='loopback'))


# It said 'name the generation (nvlink1 to nvlink4)', which a K80 cannot have either.
_NO_NVLINK = ('--gpu_interconnect=nvlink: the K80 has no NVLink (neither an SXM module nor a '
              'card with an NVLink bridge); plan it on its PCIe (--gpu_interconnect=pcie3, or '
              'drop --gpu_interconnect)')


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


def _plan_flags_error(gpu: str, interconnect: str) -> str | None:
    """links.check_plan_flags' error for a plan of `gpu` on `interconnect`, or None."""
    try:
        links.check_plan_flags(params.make_params(plan_scaling=True, gpu_model=gpu,
                                                  gpu_interconnect=interconnect))
    except params.ParamsError as e:
        return str(e)
    return None


@pytest.mark.parametrize('gpu, value, refused', [
    # A T4 on NVLink 3.0 was planned when the generation was named; 'nvlink' was refused.
    ('T4', 'nvlink3', "--gpu_interconnect=nvlink3: the T4 has no NVLink (neither an SXM module "
                      "nor a card with an NVLink bridge); plan it on its PCIe "
                      "(--gpu_interconnect=pcie3, or drop --gpu_interconnect)"),
    ('K80', 'nvlink1_link', '--gpu_interconnect=nvlink1_link: the K80 has no NVLink'),
    ('GTX 1080', 'nvlink2', '--gpu_interconnect=nvlink2: the GTX 1080 has no NVLink'),
    ('A100', 'nvlink1', "--gpu_interconnect=nvlink1: the A100 40GB's NVLink is NVLink 3.0, not "
                        "NVLink 1.0; give --gpu_interconnect=nvlink3 (or nvlink)"),
    ('V100', 'nvlink4', "--gpu_interconnect=nvlink4: the V100 16GB's NVLink is NVLink 2.0"),
    ('RTX 3090', 'nvlink2', "--gpu_interconnect=nvlink2: the RTX 3090's NVLink is NVLink 3.0, "
                            "not NVLink 2.0; give --gpu_interconnect=nvlink3"),
    ('RTX 3090', 'nvlink', "--gpu_interconnect=nvlink: the RTX 3090's NVLink is a bridge "
                           "between two cards, not an SXM board; give its generation "
                           "(--gpu_interconnect=nvlink3)"),
    ('A100', 'nvlink3', None), ('V100', 'nvlink2_copy', None), ('P100 SXM2', 'nvlink1_link', None),
    ('RTX 2080 Ti', 'nvlink2', None),  # an NVLink bridge of its generation
    ('T4', 'pcie3', None)])
def test_an_nvlink_generation_the_gpu_model_has_not_is_a_usage_error(gpu, value, refused):
    error = _plan_flags_error(gpu, value)
    assert error == refused if refused is None else error.startswith(refused), error
    assert 'name the generation' not in (error or '')


@pytest.mark.parametrize('gpu, value, refused', [
    # Planned at the slot's rate: PCIe 4.0 (31.5 GB/s) for a PCIe 3.0 card that runs at 15.75.
    ('V100S', 'pcie4', "--gpu_interconnect=pcie4: the V100S PCIe 32GB's host interface is PCIe "
                       "3.0 (its data sheet), and a PCIe 4.0 slot runs it at PCIe 3.0; give "
                       "--gpu_interconnect=pcie3 (or drop --gpu_interconnect)"),
    ('T4', 'pcie5', "--gpu_interconnect=pcie5: the T4's host interface is PCIe 3.0 (its data "
                    "sheet), and a PCIe 5.0 slot runs it at PCIe 3.0; give "
                    "--gpu_interconnect=pcie3 (or drop --gpu_interconnect)"),
    # An SXM module: dropping the flag plans its NVLink, so only the PCIe value is named.
    ('V100', 'pcie4', "--gpu_interconnect=pcie4: the V100 16GB's host interface is PCIe 3.0 "
                      "(its data sheet), and a PCIe 4.0 slot runs it at PCIe 3.0; give "
                      "--gpu_interconnect=pcie3"),
    ('A100', 'pcie5', "--gpu_interconnect=pcie5: the A100 40GB's host interface is PCIe 4.0"),
    ('A100', 'pcie4', None), ('H100 PCIe', 'pcie5', None),
    ('T4', 'pcie2', None),        # a slower slot: the card runs at the slot's generation
    ('T4', 'pcie3_copy', None)])
def test_a_pcie_generation_above_the_gpu_models_own_is_a_usage_error(gpu, value, refused):
    error = _plan_flags_error(gpu, value)
    assert error == refused if refused is None else error.startswith(refused), error


def test_every_gpus_pcie_generation_is_its_data_sheets():
    # The generation the refusals name is the table's, and its source says the same.
    words = {'pcie3': ('Gen3', '3.0'), 'pcie4': ('Gen4', '4.0', 'Gen 4'), 'pcie5': ('Gen5',)}
    for spec in gpu_specs.GPUS:
        assert any(w in spec.pcie_source for w in words[spec.pcie]), (spec.name, spec.pcie)
        assert links.pcie_conflict(spec.pcie, spec.name) is None
        assert links.own_gpu_link(spec) in (spec.pcie, links.NVLINK_OF_GPU.get(spec.name))


@pytest.mark.cli
def test_nvlink_for_a_k80_stops_the_command_before_tensorflow_loads():
    # It exited 1 after TensorFlow loaded (the plan's error); now a usage error, one line.
    out = helpers.run_command('--model=resnet50', '--plan_scaling', '--gpu_model=K80',
                              '--gpu_interconnect=nvlink')
    assert (out.returncode, out.stdout) == (2, ''), out.stdout + out.stderr
    assert out.stderr == 'error: %s\n' % _NO_NVLINK


@pytest.mark.cli
def test_pcie4_for_a_v100s_stops_the_command_before_tensorflow_loads():
    # It planned the PCIe 3.0 card on PCIe 4.0 (31.5 GB/s) without a word.
    out = helpers.run_command('--model=resnet50', '--dry_run', '--gpu_model=V100S',
                              '--num_gpus=2', '--gpu_interconnect=pcie4')
    assert (out.returncode, out.stdout) == (2, ''), out.stdout + out.stderr
    assert out.stderr == 'error: %s\n' % _plan_flags_error('V100S', 'pcie4')
    assert 'give --gpu_interconnect=pcie3' in out.stderr


@pytest.mark.parametrize('flags,message', [
    (dict(interconnect_gbps='25'), '--interconnect_gbps feeds the step-time model of '
                                   '--plan_scaling and --dry_run'),
    (dict(plan_scaling_png='x.png'), '--plan_scaling_png needs --plan_scaling.'),
    (dict(plan_num_ps=4), '--plan_num_ps needs --plan_scaling.'),
    # It said the plan runs 'without building its step', but it builds a two-tower step.
    (dict(plan_scaling=True, dry_run=True), '--plan_scaling excludes --dry_run: each prints a '
     'report of its own (the plan: 1 to 1,024 GPUs; the dry run: this run\'s step checked); '
     'run them one after the other.'),
    (dict(plan_scaling=True, eval=True), '--plan_scaling excludes --eval: it plans no '
     'evaluation; run them one after the other.'),
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


def test_the_planning_flags_help_names_both_modes_that_read_them():
    # --help for --gpu_model named --dry_run only.
    for name in ('gpu_model', 'single_device_images_per_sec', 'interconnect_gbps',
                 'gpu_interconnect'):
        text = params.SPEC_BY_NAME[name].help
        assert '--dry_run' in text and '--plan_scaling' in text, (name, text)


def test_an_unknown_gpu_link_lists_what_a_user_may_type_grouped():
    # It listed every internal link (ddr4_3200_2ch, 1gbe, ...) and left out 'nvlink' and the
    # host presets docs/scaling.md documents; then it left out the one-link and measured-copy
    # links the flag takes (docs/scaling.md runs nvlink1_link_copy).
    with pytest.raises(params.ParamsError) as e:
        links.check_plan_flags(params.make_params(plan_scaling=True, gpu_interconnect='nvlink9'))
    assert str(e.value) == (
        "--gpu_interconnect: unknown GPU link 'nvlink9'; did you mean nvlink, nvlink1 or "
        "nvlink2? give a PCIe generation (pcie2, pcie3, "
        "pcie4, pcie5), an NVLink generation (nvlink1, nvlink2, nvlink3, nvlink4; nvlink: the "
        "GPU's own), one link or a measured copy (nvlink1_link, nvlink2_link, "
        "nvlink1_link_copy, nvlink2_copy, pcie3_copy), or a host: " + ', '.join(links.HOSTS))
    for internal in ('ddr4_3200_2ch', '1gbe'):
        assert internal not in str(e.value)
    # Every link the flag takes is in the list, and no other one (a network, host memory).
    for name, link in links.LINKS.items():
        assert (name in links.gpu_link_names()) == (link.kind in ('pcie', 'nvlink')), name
        if link.kind not in ('pcie', 'nvlink'):
            with pytest.raises(params.ParamsError, match="no GPU link: '%s'" % name):
                links.check_plan_flags(params.make_params(plan_scaling=True,
                                                          gpu_interconnect=name))


_T4_ON_DGX1 = ("--gpu_interconnect=dgx1_v100 is a host of 8 V100 16GB on NVLink 2.0 (6 links): "
               "the T4 has no NVLink. Drop --gpu_model to plan the host's V100 16GB, or drop "
               "--gpu_interconnect to plan the T4 on its own link (PCIe 3.0 x16)")


@pytest.mark.parametrize('gpu, host, refused', [
    ('T4', 'dgx1_v100', 'the T4 has no NVLink'),
    ('K80', 'dgx_a100', 'the K80 has no NVLink'),
    # A T4 was planned on the host's PCIe 4.0 links.
    ('T4', 'lambda_epyc7502x8', "the T4's host interface is PCIe 3.0 (its data sheet), the "
                                "host's PCIe 4.0. Drop --gpu_model"),
    ('A100 PCIe 80GB', 'lambda_epyc7502x8', None),  # PCIe 4.0 too
    ('P100', 'dgx1_p100', 'the P100 has no NVLink'),  # the table's P100 is the PCIe card
    ('A100', 'dgx1_v100', "the A100 40GB's NVLink is NVLink 3.0 (12 links)"),
    ('V100', 'ec2_p2.8xlarge', 'the V100 16GB is an SXM2 module, made for NVLink boards'),
    ('RTX 2080 Ti', 'lambda_gold6230x8', 'the RTX 2080 Ti has no peer-to-peer over PCIe'),
    ('Quadro RTX 8000', 'lambda_gold6230x8_geforce', 'has peer-to-peer over PCIe, the host'),
    ('V100 32GB', 'dgx1_v100', None),           # the same NVLink 2.0 board
    ('P100 SXM2', 'dgx1_p100', None),           # the host's own GPU
    ('T4', 'ec2_p2.8xlarge', None),             # a PCIe card with peer-to-peer
])
def test_a_host_preset_refuses_a_gpu_model_its_boards_cannot_hold(gpu, host, refused):
    error = _plan_flags_error(gpu, host)
    if refused is None:
        assert error is None
        return
    assert refused in error and error.startswith('--gpu_interconnect=%s is a host of ' % host)


def test_every_presets_own_gpu_has_the_presets_links():
    for preset in links.HOSTS.values():
        own = gpu_specs.lookup(preset.gpu)
        assert links.preset_conflict(preset, own) is None
        nvlink = links.NVLINK_OF_GPU.get(own.name)
        assert (links.link(preset.gpu_link).kind == 'nvlink') == bool(nvlink), preset.name
        assert links.peer_to_peer_over_pcie(own) == (not preset.host_memory), preset.name


@pytest.mark.cli
def test_a_t4_on_a_dgx1_stops_the_command_before_tensorflow_loads():
    # It planned the T4s on NVLink 2.0 (150 GB/s).
    out = helpers.run_command('--model=vgg16', '--plan_scaling', '--gpu_model=T4',
                              '--gpu_interconnect=dgx1_v100', '--variable_update=replicated',
                              '--use_nccl')
    assert (out.returncode, out.stdout) == (2, ''), out.stdout + out.stderr
    assert out.stderr == 'error: %s\n' % _T4_ON_DGX1


#: The GPUs each host preset holds, as its source states them (the number checked against the
#: source's text below; hgx2_v100 said 8, its source 16).
PRESET_GPUS = {'dgx1_p100': 8, 'dgx1_v100': 8, 'ec2_p2.8xlarge': 8, 'gce_k80x8': 8,
               'ec2_p2.16xlarge': 16, 'ec2_p3.16xlarge': 8, 'dgx_a100': 8, 'dgx_h100': 8,
               'hgx2_v100': 16, 'lambda_epyc7502x8': 8, 'lambda_gold6230x8': 8,
               'lambda_gold6230x8_geforce': 8}


def test_every_host_preset_knows_its_gpus_from_its_source():
    import re
    assert {name: h.gpus for name, h in links.HOSTS.items()} == PRESET_GPUS
    for preset in links.HOSTS.values():
        assert re.search(r'\b%d\b' % preset.gpus, preset.source), preset.name


@pytest.mark.parametrize('host', sorted(PRESET_GPUS))
def test_more_gpus_than_a_host_preset_holds_is_a_usage_error(host):
    # --num_gpus=16 on a dgx1_v100 (8 on NVLink) planned 16 GPUs on the host's NVLink.
    gpus = PRESET_GPUS[host]
    flags = dict(plan_scaling=True, gpu_interconnect=host)
    links.check_plan_flags(params.make_params(num_gpus=gpus, **flags))
    links.check_plan_flags(params.make_params(num_gpus=gpus + 1, device='cpu', **flags))
    with pytest.raises(params.ParamsError) as e:
        links.check_plan_flags(params.make_params(num_gpus=gpus + 1, **flags))
    own = gpu_specs.lookup(links.HOSTS[host].gpu).name
    assert str(e.value) == (
        '--num_gpus=%d is more GPUs than the host --gpu_interconnect=%s holds (%d %s); give '
        '--num_gpus=%d or fewer, and plan more GPUs as more hosts (--plan_scaling\'s rows plan '
        '2 to 128 hosts of --num_gpus GPUs; a cluster\'s --dry_run, its --worker_hosts)'
        % (gpus + 1, host, gpus, own, gpus))


@pytest.mark.cli
@pytest.mark.parametrize('host, gpus', [('dgx1_v100', 16), ('ec2_p2.8xlarge', 12)])
def test_16_gpus_on_a_dgx1_stops_the_command_before_tensorflow_loads(host, gpus):
    out = helpers.run_command('--model=resnet50', '--plan_scaling', '--gpu_interconnect=' + host,
                              '--num_gpus=%d' % gpus, '--single_device_images_per_sec=380')
    assert (out.returncode, out.stdout) == (2, ''), out.stdout + out.stderr
    assert out.stderr.startswith('error: --num_gpus=%d is more GPUs than the host '
                                 '--gpu_interconnect=%s holds (8 ' % (gpus, host))
    assert out.stderr.count('\n') == 1


_NETWORKS = ("give a rate in Gbit/s (a number > 0; 1, 10, 25, 40, 100 are Ethernet) or a "
             "network: 1gbe, 10gbe, 25gbe, 40gbe, 100gbe, ib_edr, ib_hdr, ib_ndr, loopback (this "
             "host's, measured now)")


@pytest.mark.parametrize('value, refused', [
    # It listed pcie3, nvlink1_link_copy, ddr4_3200_2ch (each then refused as 'no network
    # link') and left out loopback, which is documented and accepted.
    ('abc', "--interconnect_gbps: unknown network 'abc'; " + _NETWORKS),
    ('pcie3', "--interconnect_gbps: no network link: 'pcie3'; " + _NETWORKS),
    ('25gb', "--interconnect_gbps: unknown network '25gb'; did you mean 25gbe? " + _NETWORKS)])
def test_an_unknown_network_lists_exactly_the_values_the_flag_takes(value, refused):
    with pytest.raises(params.ParamsError) as e:
        links.check_plan_flags(params.make_params(plan_scaling=True, interconnect_gbps=value))
    assert str(e.value) == refused
    # Every name listed is taken; every other link's name is refused.
    for name in links.network_names():
        links.check_plan_flags(params.make_params(plan_scaling=True, interconnect_gbps=name))
    for name, link in links.LINKS.items():
        if link.kind != 'network':
            assert name not in links.network_names()
            with pytest.raises(params.ParamsError, match='no network link'):
                links.check_plan_flags(
                    params.make_params(plan_scaling=True, interconnect_gbps=name))


@pytest.mark.parametrize('typed, guess', [
    ('dgx2', 'did you mean hgx2_v100? '),  # the HGX-2's source names it the DGX-2
    ('dgx1', 'did you mean dgx1_p100, dgx1_v100 or hgx2_v100? '),  # those it begins first
    ('DGX-A100', None),  # a preset's name with another separator: suggested first
    ('p3.16xlarge', 'did you mean ec2_p3.16xlarge, ec2_p2.16xlarge or ec2_p2.8xlarge? '),
    ('pcie6', 'did you mean pcie2, pcie3 or pcie4? ')])
def test_an_unknown_gpu_link_suggests_the_closest_values(typed, guess):
    error = _plan_flags_error(None, typed)
    if guess is None:
        assert 'did you mean dgx_a100' in error, error
        return
    assert error.startswith("--gpu_interconnect: unknown GPU link %r; %sgive a PCIe "
                            "generation" % (typed, guess)), error
