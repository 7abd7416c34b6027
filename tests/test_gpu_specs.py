"""The GPU table (hardware/gpu_specs.py): names as users type them, the data sheets' figures."""

import pytest

from checkout import load


@pytest.fixture(scope='module')
def specs():
    import importlib
    load()
    return importlib.import_module('tf_cnn_benchmarks.hardware.gpu_specs')


REQUIRED = ['K80', 'P100', 'V100 16GB', 'V100 32GB', 'T4', 'A10', 'A100 40GB', 'A100 80GB', 'L4',
            'L40S', 'H100 80GB', 'H200', 'GTX 1080', 'RTX 2080 Ti', 'RTX 3090', 'RTX 4090']


# Issue 40 adds the GPUs people have, after the first ones (the table grew: the first names
# and their order are unchanged).
ADDED = ['GTX 1080 Ti', 'Titan Xp', 'P100 SXM2', 'Titan V', 'V100 PCIe 16GB', 'RTX 2080',
         'Titan RTX', 'Quadro RTX 8000', 'RTX 3080', 'RTX A6000', 'A100 PCIe 80GB', 'H100 PCIe',
         'A100 PCIe 40GB', 'V100S PCIe 32GB', 'V100 PCIe 32GB']


def test_the_table_has_every_gpu_the_issue_names(specs):
    assert specs.known_names() == REQUIRED + ADDED


def test_every_gpu_has_the_facts_the_step_model_needs(specs):
    for spec in specs.GPUS:
        assert spec.sm_count > 0 and spec.source and spec.pcie in ('pcie3', 'pcie4', 'pcie5')
        ampere_or_later = spec.compute_capability_tuple >= (8, 0)
        assert (spec.tf32_tflops is not None) == ampere_or_later, spec.name
        assert bool(spec.tensor_cores) == (spec.compute_capability_tuple >= (7, 0)), spec.name
    assert specs.lookup('RTX 3090').p2p is False and specs.lookup('A100').p2p is True
    assert specs.lookup('H100 PCIe').tf32_tflops == 378.0
    assert specs.lookup('A100 PCIe 80GB').bandwidth_gbs == 1935
    assert specs.from_device_name('NVIDIA A100-PCIE-80GB', 79 * 2 ** 30).name == 'A100 PCIe 80GB'


@pytest.mark.parametrize('typed, name', [
    ('a100-80gb', 'A100 80GB'), ('A100 80GB', 'A100 80GB'), ('nvidia a100_80gb', 'A100 80GB'),
    ('a100', 'A100 40GB'), ('V100', 'V100 16GB'), ('v100-32gb', 'V100 32GB'),
    ('Tesla K80', 'K80'), ('rtx2080ti', 'RTX 2080 Ti'), ('GeForce GTX 1080', 'GTX 1080'),
    ('h100', 'H100 80GB'), ('L40s', 'L40S'), ('4090', 'RTX 4090')])
def test_names_are_forgiven_case_and_separators(specs, typed, name):
    assert specs.lookup(typed).name == name


def test_an_unknown_name_lists_the_known_ones_sorted(specs):
    with pytest.raises(specs.UnknownGpuError) as err:
        specs.lookup('Voodoo5')  # like no GPU of the table: no guess
    assert str(err.value) == "unknown GPU model 'Voodoo5'; known: %s" % ', '.join(
        specs.sorted_names())
    names = specs.sorted_names()
    assert sorted(names) == sorted(REQUIRED + ADDED)
    assert names[:3] == ['A10', 'A100 40GB', 'A100 80GB']  # numbers as numbers: A10 first
    assert names.index('L4') < names.index('L40S') and names[-1] == 'V100S PCIe 32GB'
    assert names.index('V100 PCIe 16GB') < names.index('V100 PCIe 32GB')


@pytest.mark.parametrize('typed, guess', [
    # letter O for zero: the V100 first, as the known: list names it (it said 'V100, V100S',
    # an alias and an alias of another GPU, neither in the list)
    # (the V100S, the P100 came second and third: the V100 32GB and PCIe cards are the V100's)
    ('V1OO', 'did you mean V100 16GB, V100 32GB or V100 PCIe 16GB? '),
    ('k8O', 'did you mean K80? '),
    ('rtx 309', 'did you mean RTX 3090, RTX 4090 or RTX 3080? '),
    # It said 'H200, RTX 2080 or RTX 2080 Ti': the alias '2080' is a number, B200 is not.
    ('B200', 'did you mean H200? '),
    # A variant the table lacks: the GPU it begins with (it added 'or GTX 1080 Ti', by the
    # alias '1080 Ti'); the DGX Station's V100 32GB: the V100s of 32 GB first.
    ('NVIDIA H100 NVL', 'did you mean H100 80GB or H100 PCIe? '),
    ('Tesla V100-DGXS-32GB', 'did you mean V100 32GB, V100 PCIe 32GB or V100 16GB? '),
    ('NVIDIA A10G', 'did you mean A10, A100 40GB or A100 80GB? ')])
def test_a_misspelt_name_gets_the_closest_ones_first(specs, typed, guess):
    with pytest.raises(specs.UnknownGpuError) as err:
        specs.lookup(typed)
    assert str(err.value) == "unknown GPU model %r; %sknown: %s" % (
        typed, guess, ', '.join(specs.sorted_names()))


#: The names nvidia-smi (its table, `-L`, `-q`'s Product Name; NVML's name, which TensorFlow
#: and PyTorch report too) prints for each GPU of the table, and the names vendors and cloud
#: catalogues print. Collected from public output, among them: 'Tesla K80'
#: (NVIDIA/nvidia-docker#809), 'Tesla P100-PCIE-16GB' (NVIDIA/nvidia-docker#1316),
#: 'Tesla V100-SXM2-16GB' (NVIDIA/nvidia-docker#914), 'Tesla V100-SXM2-32GB'
#: (NVIDIA/nvidia-docker#1076), 'Tesla V100-PCIE-16GB' (NVIDIA/nvidia-docker#1285),
#: 'A100-SXM-80GB' (a 450 driver's table, keyu-tian/SparK#8), 'NVIDIA A100-SXM4-80GB'
#: (influxdata/telegraf#5812), 'NVIDIA A100-SXM4-40GB' (bottlerocket-os/bottlerocket-core-kit
#: #834), 'NVIDIA A100-PCIE-40GB' (zzc0721/torch-performance-test-data#108), 'NVIDIA H100 80GB
#: HBM3' (NVIDIA/nccl#1264), 'NVIDIA H100 PCIe' (zzc0721/torch-performance-test-data#95),
#: 'GeForce GTX 1080' (NVIDIA/nvidia-docker#954), 'GeForce GTX 1080 Ti'
#: (NVIDIA/nvidia-docker#756), 'NVIDIA RTX A6000' (exo-explore/exo#315), 'NVIDIA A100 80GB
#: PCIe' (RunPod's GPU type ids, which are the NVML names), 'NVIDIA GeForce RTX 3080 10GB'
#: (zzc0721/torch-performance-test-data#114).
NVIDIA_SMI_NAMES = {
    'K80': ['Tesla K80'],
    'P100': ['Tesla P100-PCIE-16GB', 'P100 PCIe', 'NVIDIA Tesla P100 PCIe 16GB'],
    'P100 SXM2': ['Tesla P100-SXM2-16GB'],
    'V100 16GB': ['Tesla V100-SXM2-16GB', 'V100 SXM2 16GB', 'V100 16GB SXM2'],
    'V100 32GB': ['Tesla V100-SXM2-32GB'],
    'V100 PCIe 16GB': ['Tesla V100-PCIE-16GB', 'NVIDIA Tesla V100 PCIe 16GB'],
    'V100 PCIe 32GB': ['Tesla V100-PCIE-32GB', 'V100 PCIe 32GB', 'V100 32GB PCIe'],
    'V100S PCIe 32GB': ['Tesla V100S-PCIE-32GB'],
    'T4': ['Tesla T4', 'NVIDIA T4 16GB'],
    'A10': ['NVIDIA A10'],
    'A100 40GB': ['NVIDIA A100-SXM4-40GB', 'A100-SXM4-40GB', 'NVIDIA A100 40GB SXM4'],
    'A100 80GB': ['NVIDIA A100-SXM4-80GB', 'A100-SXM-80GB', 'NVIDIA A100 80GB SXM'],
    'A100 PCIe 40GB': ['NVIDIA A100-PCIE-40GB', 'NVIDIA A100 40GB PCIe', 'A100 40GB PCIe'],
    'A100 PCIe 80GB': ['NVIDIA A100 80GB PCIe', 'A100 80GB PCIe', 'NVIDIA A100-PCIE-80GB'],
    'L4': ['NVIDIA L4'],
    'L40S': ['NVIDIA L40S', 'NVIDIA L40S 48GB'],
    'H100 80GB': ['NVIDIA H100 80GB HBM3', 'NVIDIA H100 SXM5 80GB', 'H100 SXM5'],
    'H100 PCIe': ['NVIDIA H100 PCIe', 'NVIDIA H100 80GB PCIe'],
    'H200': ['NVIDIA H200', 'NVIDIA H200 141GB HBM3e'],
    'GTX 1080': ['GeForce GTX 1080', 'NVIDIA GeForce GTX 1080'],
    'GTX 1080 Ti': ['GeForce GTX 1080 Ti', 'NVIDIA GeForce GTX 1080 Ti'],
    'Titan Xp': ['TITAN Xp', 'NVIDIA TITAN Xp'],
    'Titan V': ['TITAN V', 'NVIDIA TITAN V'],
    'RTX 2080': ['GeForce RTX 2080', 'NVIDIA GeForce RTX 2080'],
    'RTX 2080 Ti': ['GeForce RTX 2080 Ti', 'NVIDIA GeForce RTX 2080 Ti'],
    'Titan RTX': ['TITAN RTX', 'NVIDIA TITAN RTX'],
    'Quadro RTX 8000': ['Quadro RTX 8000', 'NVIDIA Quadro RTX 8000'],
    'RTX 3080': ['NVIDIA GeForce RTX 3080', 'NVIDIA GeForce RTX 3080 10GB'],
    'RTX 3090': ['GeForce RTX 3090', 'NVIDIA GeForce RTX 3090'],
    'RTX A6000': ['NVIDIA RTX A6000'],
    'RTX 4090': ['NVIDIA GeForce RTX 4090'],
}


def test_the_names_nvidia_smi_and_vendors_print_name_their_gpu(specs):
    # 'NVIDIA A100 80GB PCIe' was refused (its memory before its form factor: 'did you mean
    # A100 PCIe 40GB, A100 80GB or V100 PCIe 16GB?'), as were 'A100 80GB PCIe', 'NVIDIA A100
    # 40GB PCIe' and 'P100 PCIe'.
    assert set(NVIDIA_SMI_NAMES) == set(specs.known_names())  # every GPU of the table
    wrong = {(printed, specs.lookup(printed).name) for name, printed_names
             in NVIDIA_SMI_NAMES.items() for printed in printed_names
             if specs.lookup(printed).name != name}
    assert not wrong
    # TensorFlow reports the same names for a visible GPU.
    assert all(specs.from_device_name(printed).name == name
               for name, printed_names in NVIDIA_SMI_NAMES.items() for printed in printed_names)


@pytest.mark.parametrize('typed, first', [
    ('P100 PCIe 12GB', 'P100'),  # the P100's 12 GB card: the P100, not another PCIe card
    ('Tesla V100-PCIE-24GB', 'V100 PCIe 32GB'),  # not in the table: the V100 PCIe cards first
    ('A100 PCIe 48GB', 'A100 PCIe 80GB'),  # the A100 PCIe cards before the SXM4 modules
    ('H100 PCIe 94GB', 'H100 PCIe')])
def test_a_near_name_suggests_the_same_gpu_first_then_its_memory_and_form(specs, typed, first):
    close = specs.suggestions(typed)
    assert close[0] == first, close
    family = typed.replace('Tesla ', '').split('-')[0].split()[0]
    assert all(name.startswith(family) for name in close[:2]), close
    if typed.startswith('A100'):
        assert set(close[:2]) == {'A100 PCIe 40GB', 'A100 PCIe 80GB'}
    if 'V100' in typed:
        assert set(close[:2]) == {'V100 PCIe 16GB', 'V100 PCIe 32GB'}


@pytest.mark.parametrize('typed', ['', '   '])
def test_an_empty_name_is_said_to_be_empty(specs, typed):
    with pytest.raises(specs.UnknownGpuError) as err:
        specs.lookup(typed)
    assert str(err.value) == (
        'the GPU model name is empty; give one of the known names '
        '(docs/planning-a-gpu-run.md describes them): ' + ', '.join(specs.sorted_names()))


@pytest.mark.parametrize('typed', ['V1OO', 'v100s', 'A1OO', 'rtx 309', 'B200', 'h10', '2O80'])
def test_every_suggested_name_is_in_the_known_list(specs, typed):
    close = specs.suggestions(typed)
    assert close and set(close) <= set(specs.sorted_names()), close


def test_the_v100s_is_its_own_pcie_card_not_the_v100_32gb_sxm2(specs):
    # The V100S was an alias of the V100 32GB (an SXM2 module, planned on NVLink 2.0); it is a
    # PCIe card only, with its own rates (NVIDIA's V100S data sheet).
    from tf_cnn_benchmarks.hardware import links
    v100s = specs.lookup('V100S')
    assert v100s.name == 'V100S PCIe 32GB' and specs.lookup('v100s-pcie') is v100s
    assert (v100s.fp32_tflops, v100s.fp16_tflops, v100s.bandwidth_gbs) == (16.4, 130.0, 1134)
    assert v100s.memory_bytes == 32 * 2 ** 30 and v100s.compute_capability == '7.0'
    assert 'V100S data sheet' in v100s.source and v100s.pcie == 'pcie3'
    assert links.own_gpu_link(v100s) == 'pcie3' and v100s.name not in links.NVLINK_OF_GPU
    assert specs.from_device_name('Tesla V100S-PCIE-32GB', int(31.7 * 2 ** 30)) is v100s


def test_data_sheet_figures(specs):
    a100 = specs.lookup('A100 80GB')
    assert a100.memory_bytes == 80 * 2 ** 30
    assert (a100.fp32_tflops, a100.peak_tflops('bfloat16'), a100.bandwidth_gbs) == (
        19.5, 312.0, 2039)
    v100 = specs.lookup('V100')
    assert v100.peak_tflops('float16') == 125.0 and v100.peak_tflops('bfloat16') is None
    assert specs.lookup('K80').memory_bytes == 12 * 2 ** 30  # one GK210, as TensorFlow sees it
    with pytest.raises(ValueError, match="float32, float16 or bfloat16. Received: 'int8'"):
        v100.peak_tflops('int8')


@pytest.mark.parametrize('reported, memory_gib, name', [
    ('Tesla V100-SXM2-16GB', None, 'V100 16GB'), ('NVIDIA A100-SXM4-80GB', None, 'A100 80GB'),
    # The PCIe card of 32 GB, not the SXM2 module of the V100 32GB (the card's row was missing).
    ('Tesla V100-PCIE-32GB', 31.1, 'V100 PCIe 32GB'),
    ('NVIDIA A100-PCIE-40GB', 39.4, 'A100 PCIe 40GB'),
    ('A100-PCIE-40GB', None, 'A100 PCIe 40GB'), ('A100-SXM4-40GB', 39.4, 'A100 40GB'),
    ('NVIDIA GeForce RTX 3090', 23.7, 'RTX 3090'), ('Tesla T4', 14.7, 'T4'),
    ('NVIDIA H100 80GB HBM3', 79.1, 'H100 80GB')])
def test_visible_gpu_names_match(specs, reported, memory_gib, name):
    memory = int(memory_gib * 2 ** 30) if memory_gib else None
    assert specs.from_device_name(reported, memory).name == name


def test_a_sustained_rate_only_where_the_vendor_states_one(specs):
    # The 250 W A100 PCIe card: the SXM4's peaks, 90% of its performance (NVIDIA's A100 PCIe
    # specifications); every other GPU at its data sheet's rates.
    pcie, sxm4 = specs.lookup('A100 PCIe'), specs.lookup('A100 40GB')
    assert (pcie.fp16_tflops, pcie.tf32_tflops, pcie.bandwidth_gbs) == (
        sxm4.fp16_tflops, sxm4.tf32_tflops, sxm4.bandwidth_gbs)
    assert (pcie.sustained, sxm4.sustained) == (0.90, 1.0) and '250 W' in pcie.source
    assert {s.name for s in specs.GPUS if s.sustained != 1.0} == {'A100 PCIe 40GB'}


@pytest.mark.parametrize('typed, name', [
    # They were refused while 'H100 SXM', 'A100 PCIe' and 'V100 PCIe' resolved.
    ('A100 SXM4', 'A100 40GB'), ('A100 SXM', 'A100 40GB'), ('V100 SXM2', 'V100 16GB'),
    ('H200 SXM', 'H200'), ('L40S PCIe', 'L40S'), ('T4 PCIe', 'T4'), ('RTX 4090 PCIe', 'RTX 4090'),
    ('K80 PCIe', 'K80'), ('A100 SXM4 80GB', 'A100 80GB'), ('NVIDIA H200 SXM 141GB', 'H200'),
    ('H100 SXM', 'H100 80GB'), ('A100 PCIe', 'A100 PCIe 40GB'), ('V100 PCIe', 'V100 PCIe 16GB')])
def test_a_form_word_names_the_gpu_of_that_form(specs, typed, name):
    assert specs.lookup(typed).name == name


@pytest.mark.parametrize('typed, rows', [
    ('T4 SXM', 'T4 (PCIe)'), ('H200 PCIe', 'H200 (SXM5)'),
    # A generation the module is not: the A100 is SXM4 ('A100 SXM2 40GB' was the A100 40GB).
    ('A100 SXM2 40GB', 'A100 40GB (SXM4), A100 80GB (SXM4), A100 PCIe 40GB (PCIe) and A100 '
                       'PCIe 80GB (PCIe)'),
    ('V100 SXM4', 'V100 16GB (SXM2), V100 32GB (SXM2), V100 PCIe 16GB (PCIe) and V100 PCIe '
                  '32GB (PCIe)'),
    ('T4 SXM 32GB', 'T4 (PCIe)')])  # a form it has not: said so, whatever the memory
def test_a_form_or_memory_the_gpu_has_not_names_those_it_has(specs, typed, rows):
    with pytest.raises(specs.UnknownGpuError) as err:
        specs.lookup(typed)
    assert str(err.value) == "unknown GPU model %r; that GPU is in the table as %s; known: %s" % (
        typed, rows, ', '.join(specs.sorted_names()))


_NO_MEMORY_FLAG = 'no flag sets a planned GPU\'s memory)'
_BELOW = 'a step that fits the plan fits the card; ' + _NO_MEMORY_FLAG


@pytest.mark.parametrize('typed, has, nearest', [
    # 'that GPU is in the table as P100 (PCIe) and P100 SXM2 (SXM2)': not which memory it has,
    # nor which row to plan instead.
    ('Tesla P100-PCIE-12GB', 'P100 with 16GB only (P100: PCIe, 16GB; P100 SXM2: SXM2, 16GB), '
     'not 12GB', "P100 (PCIe, 16GB, more than the card's 12GB: check the dry run's peak memory "
     "per device against 12GB yourself; " + _NO_MEMORY_FLAG),
    ('P100 SXM2 12GB', 'P100 with 16GB only (P100: PCIe, 16GB; P100 SXM2: SXM2, 16GB), not '
     '12GB', "'P100 SXM2' (SXM2, 16GB, more than the card's 12GB: check the dry run's peak "
     "memory per device against 12GB yourself; " + _NO_MEMORY_FLAG),
    ('A100 PCIe 48GB', 'A100 with 40GB and 80GB only (A100 40GB: SXM4, 40GB; A100 80GB: SXM4, '
     '80GB; A100 PCIe 40GB: PCIe, 40GB; A100 PCIe 80GB: PCIe, 80GB), not 48GB',
     "'A100 PCIe 40GB' (PCIe, 40GB, less than the card's 48GB: " + _BELOW),
    ('V100 24GB', 'V100 with 16GB and 32GB only (V100 16GB: SXM2, 16GB; V100 32GB: SXM2, 32GB; '
     'V100 PCIe 16GB: PCIe, 16GB; V100 PCIe 32GB: PCIe, 32GB), not 24GB',
     "'V100 16GB' (SXM2, 16GB, less than the card's 24GB: " + _BELOW),
    ('NVIDIA H100 94GB', 'H100 with 80GB only (H100 80GB: SXM5, 80GB; H100 PCIe: PCIe, 80GB), '
     'not 94GB', "'H100 80GB' (SXM5, 80GB, less than the card's 94GB: " + _BELOW),
    ('RTX 3080 12GB', 'RTX 3080 with 10GB only (RTX 3080: PCIe, 10GB), not 12GB',
     "'RTX 3080' (PCIe, 10GB, less than the card's 12GB: " + _BELOW)])
def test_a_memory_the_gpu_has_not_names_the_sizes_it_has_and_the_row_to_plan(specs, typed, has,
                                                                               nearest):
    with pytest.raises(specs.UnknownGpuError) as err:
        specs.lookup(typed)
    assert str(err.value) == ('unknown GPU model %r; the table has the %s: plan the nearest, '
                              '--gpu_model=%s' % (typed, has, nearest))
    suggested = nearest.split(' (')[0].strip("'")
    assert specs.lookup(suggested).name == suggested  # the row named is one to give
    assert specs.lookup('A100 80GB').memory_bytes == 80 * 2 ** 30  # a size the table has


def test_the_v100_pcie_32gb_is_the_16gb_cards_rates_with_32gb(specs):
    card, small = specs.lookup('V100 PCIe 32GB'), specs.lookup('V100 PCIe 16GB')
    assert card.memory_bytes == 32 * 2 ** 30
    assert card._replace(name='', memory_bytes=0, aliases=(), source='', pcie_source='') == \
        small._replace(name='', memory_bytes=0, aliases=(), source='', pcie_source='')
    assert 'V100 Tensor Core GPU data sheet' in card.source and specs.form_of(card) == 'PCIe'


def test_an_unlisted_visible_gpu_is_none(specs):
    assert specs.from_device_name('NVIDIA B200') is None


def test_the_planning_page_lists_every_gpu_of_the_table_by_its_name(specs):
    # Its list left out the A100 PCIe 40GB (added to the table later), in shorthand
    # ('V100 16GB/32GB and PCIe') no test could read.
    import os
    import re

    from checkout import REPO
    with open(os.path.join(REPO, 'docs', 'planning-a-gpu-run.md')) as f:
        text = ' '.join(f.read().split())
    listed = re.search(r'named as the table names them \(([^;]+);', text)
    assert listed, 'docs/planning-a-gpu-run.md: the list of the GPU table moved'
    names = [name.strip() for name in listed.group(1).split(',')]
    assert sorted(names) == sorted(specs.known_names())
