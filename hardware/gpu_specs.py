"""The GPUs a run can be planned for: memory, peak arithmetic rates, bandwidth, kept as data.

One table, used by `--dry_run --gpu_model=NAME` (memory a graph must fit in) and by the
utilisation figures of a run (model FLOP/s as a fraction of the device's peak). No TensorFlow:
the command checks `--gpu_model` before TensorFlow loads.

The figures are the vendors' data sheets (NVIDIA product briefs and architecture whitepapers),
dense arithmetic (no structured-sparsity doubling), boost clocks:

  * `fp32_tflops`: plain float32 FMA throughput (CUDA cores; TF32 tensor cores are not used by
    TensorFlow's float32 convolutions unless TF32 is enabled, and are not counted here);
  * `fp16_tflops`, `bf16_tflops`: tensor-core rates with float32 accumulation, which is what
    TensorFlow's mixed precision asks cuDNN for (GeForce cards run it at half the rate of
    float16 accumulation; their data sheets give both, and the float32-accumulate one is taken).
    A GPU without tensor cores has its plain float16 rate (P100: 2x float32; GTX 1080: 1/64).
    `bf16_tflops` is None where the GPU has no bfloat16 arithmetic (before Ampere);
  * `memory_bytes`: the memory of one device as TensorFlow sees it (`K80` is one of the board's
    two GK210 GPUs, 12 GiB; vendors' "GB" of GPU memory are GiB);
  * `bandwidth_gbs`: memory bandwidth of one device, GB/s (10^9 bytes/s);
  * `compute_capability`: CUDA compute capability (major.minor).

The facts the per-op step model needs (speed_model/gpu_step.py) are in `COMPUTE_FACTS` below,
one row per GPU with its data sheet named beside it:

  * `sm_count`: streaming multiprocessors (the whitepaper's full-product SM count);
  * `tf32_tflops`: dense TF32 tensor-core rate (None before Ampere, compute capability < 8.0);
  * `tensor_cores`: the tensor-core generation's architecture ('' none, 'volta', 'turing',
    'ampere', 'ada', 'hopper');
  * `pcie`: the host link's PCIe generation ('pcie3', 'pcie4', 'pcie5'), x16: the card's own,
    at which it runs in a faster slot too (a GPU planned on a faster PCIe is refused:
    hardware/links.py `pcie_conflict`);
  * `pcie_source`: the data sheet that states `pcie` (`PCIE_SOURCES`);
  * `p2p`: whether the driver allows peer-to-peer copies between two of these cards over PCIe
    (NVIDIA disables it on GeForce cards; data-center and workstation cards have it);
  * `source`: the data sheet the row's figures come from;
  * `sustained`: the share of its data-sheet arithmetic rates the card sustains under load
    where its vendor states one (`SUSTAINED`: the 250 W A100 PCIe card, 90% of the 400 W
    SXM4 module's), else 1.0.

Names are looked up as users type them and as nvidia-smi and vendors print them: case, spaces,
'-', '_', the words NVIDIA, Tesla, GeForce and Quadro and the memory's kind (HBM3) are ignored,
and the memory size and the form factor (PCIe, SXM2/SXM4/SXM5) may come in either order after
the GPU's own name ('a100-80gb', 'A100 80GB', 'nvidia a100_80gb' are one GPU; 'NVIDIA A100 80GB
PCIe', 'NVIDIA A100-PCIE-80GB' and 'A100 PCIe 80GB' another); a name without its memory ('V100',
'A100') means the smaller model, and one with the GPU's only memory size is that GPU ('NVIDIA
GeForce RTX 3080 10GB'). A form word must be the GPU's own form (`form_of`: SXM_FORM_OF_GPU for
the modules, PCIe for every other card), its generation optional: 'T4 PCIe' is the T4, 'H200
SXM' the H200, 'A100 SXM4' the A100 40GB; 'T4 SXM' and 'V100 SXM4' are no GPU of the table. The
name TensorFlow reports for a visible GPU ('Tesla V100-SXM2-16GB', 'NVIDIA A100-SXM4-80GB') is
matched by `from_device_name`. Not in the table, for want of a vendor data sheet with their
rates, SM count or memory: the H100 NVL, AWS's A10G, the DGX Station's V100 (V100-DGXS).
"""

from __future__ import annotations

import difflib
import re
import shlex
from typing import NamedTuple

from .suggest import SUGGEST_CUTOFF, did_you_mean

GIB = 1 << 30


class GpuSpec(NamedTuple):
    """One GPU model (see the module docstring for each field's source and unit)."""
    name: str
    memory_bytes: int
    fp32_tflops: float
    fp16_tflops: float
    bf16_tflops: float | None
    bandwidth_gbs: float
    compute_capability: str
    aliases: tuple[str, ...] = ()
    sm_count: int = 0
    tf32_tflops: float | None = None
    tensor_cores: str = ''
    pcie: str = 'pcie3'
    p2p: bool = True
    source: str = ''
    pcie_source: str = ''
    sustained: float = 1.0

    @property
    def compute_capability_tuple(self) -> tuple[int, int]:
        """'8.6' -> (8, 6)."""
        major, minor = self.compute_capability.split('.')
        return int(major), int(minor)

    def peak_tflops(self, dtype: str) -> float | None:
        """Peak TFLOP/s for 'float32', 'float16' or 'bfloat16' (None: no such arithmetic).

        Raises:
          ValueError: another dtype name.
        """
        try:
            return {'float32': self.fp32_tflops, 'float16': self.fp16_tflops,
                    'bfloat16': self.bf16_tflops}[dtype]
        except KeyError:
            raise ValueError('peak_tflops takes float32, float16 or bfloat16. Received: %r'
                             % (dtype,)) from None


def _gpu(name, memory_gib, fp32, fp16, bf16, bandwidth, cc, *aliases):
    return GpuSpec(name, int(memory_gib * GIB), fp32, fp16, bf16, bandwidth, cc, aliases)


#: name, memory (GiB), fp32, fp16, bf16 (TFLOP/s), bandwidth (GB/s), compute capability, aliases.
_ROWS: tuple[GpuSpec, ...] = (
    _gpu('K80', 12, 4.37, 4.37, None, 240, '3.7', 'GK210'),  # one of two GPUs of a board
    _gpu('P100', 16, 9.3, 18.7, None, 732, '6.0', 'P100 PCIe 16GB', 'P100 16GB', 'P100 PCIe'),
    _gpu('V100 16GB', 16, 15.7, 125.0, None, 900, '7.0', 'V100', 'V100 SXM2 16GB'),
    _gpu('V100 32GB', 32, 15.7, 125.0, None, 900, '7.0', 'V100 SXM2 32GB'),
    _gpu('T4', 16, 8.1, 65.0, None, 320, '7.5'),
    _gpu('A10', 24, 31.2, 125.0, 125.0, 600, '8.6', 'A10 24GB'),
    _gpu('A100 40GB', 40, 19.5, 312.0, 312.0, 1555, '8.0', 'A100', 'A100 SXM4 40GB'),
    _gpu('A100 80GB', 80, 19.5, 312.0, 312.0, 2039, '8.0', 'A100 SXM4 80GB'),
    _gpu('L4', 24, 30.3, 121.0, 121.0, 300, '8.9'),
    _gpu('L40S', 48, 91.6, 362.0, 362.0, 864, '8.9'),
    _gpu('H100 80GB', 80, 67.0, 989.0, 989.0, 3350, '9.0', 'H100', 'H100 SXM', 'H100 SXM5 80GB',
         'H100 80GB HBM3'),
    _gpu('H200', 141, 67.0, 989.0, 989.0, 4800, '9.0', 'H200 141GB'),
    _gpu('GTX 1080', 8, 8.87, 0.139, None, 320, '6.1', '1080'),
    _gpu('RTX 2080 Ti', 11, 13.45, 53.8, None, 616, '7.5', '2080 Ti'),
    _gpu('RTX 3090', 24, 35.6, 71.0, 71.0, 936, '8.6', '3090'),
    _gpu('RTX 4090', 24, 82.6, 165.2, 165.2, 1008, '8.9', '4090'),
    # Added for the per-op step model (issue 40); their compute facts are in COMPUTE_FACTS.
    _gpu('GTX 1080 Ti', 11, 11.34, 0.177, None, 484, '6.1', '1080 Ti'),
    _gpu('Titan Xp', 12, 12.15, 0.190, None, 547.7, '6.1', 'TITAN Xp'),
    _gpu('P100 SXM2', 16, 10.6, 21.2, None, 732, '6.0', 'P100 SXM2 16GB', 'DGX-1 P100'),
    _gpu('Titan V', 12, 14.9, 110.0, None, 652.8, '7.0', 'TITAN V'),
    _gpu('V100 PCIe 16GB', 16, 14.0, 112.0, None, 900, '7.0', 'V100 PCIe'),
    _gpu('RTX 2080', 8, 10.07, 40.3, None, 448, '7.5', '2080'),
    _gpu('Titan RTX', 24, 16.3, 130.5, None, 672, '7.5', 'TITAN RTX'),
    _gpu('Quadro RTX 8000', 48, 16.3, 130.5, None, 672, '7.5', 'RTX 8000'),
    _gpu('RTX 3080', 10, 29.8, 59.5, 59.5, 760, '8.6', '3080'),
    _gpu('RTX A6000', 48, 38.7, 154.8, 154.8, 768, '8.6', 'A6000'),
    _gpu('A100 PCIe 80GB', 80, 19.5, 312.0, 312.0, 1935, '8.0'),
    _gpu('H100 PCIe', 80, 51.2, 756.0, 756.0, 2000, '9.0', 'H100 PCIe 80GB'),
    # The 250 W PCIe card of the A100 40GB (its own row for its sustained clock, below).
    _gpu('A100 PCIe 40GB', 40, 19.5, 312.0, 312.0, 1555, '8.0', 'A100 PCIe'),
    # The V100S: a PCIe card only (no SXM module), its own clocks and HBM2 rate.
    _gpu('V100S PCIe 32GB', 32, 16.4, 130.0, None, 1134, '7.0', 'V100S', 'V100S PCIe'),
    # The V100 PCIe card with 32 GB: the 16 GB card's rates (nvidia-smi: Tesla V100-PCIE-32GB).
    _gpu('V100 PCIe 32GB', 32, 14.0, 112.0, None, 900, '7.0'),
)

_WP = {
    'kepler': 'NVIDIA Tesla K80 board specification BD-07317 (2 x GK210, 13 SMX each; base '
              'clock 562 MHz, boost 875 MHz: the table\'s 4.37 TFLOP/s per GPU is the boost\'s, '
              '2496 cores x 2 x 875 MHz; at the base clock 2.80)',
    'p100': 'NVIDIA Tesla P100 whitepaper (2016), Table 1; P100 PCIe and SXM2 data sheets',
    'pascal': 'NVIDIA GeForce GTX 1080 whitepaper (2016) and GP102 product pages (1080 Ti, '
              'Titan Xp); float16 at 1/64 of float32 on compute capability 6.1',
    'volta': 'NVIDIA Tesla V100 GPU Architecture whitepaper (2017), Table 1; V100 and Titan V '
             'data sheets',
    'turing': 'NVIDIA Turing GPU Architecture whitepaper (2018), Appendix A tables (GeForce: '
              'float16 tensor rate with float32 accumulation at half the float16-accumulate '
              'rate; Titan RTX, Quadro RTX 8000, T4: full rate)',
    'ampere': 'NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020), Table 1; NVIDIA '
              'Ampere GA102 GPU Architecture whitepaper (2020), Tables 2-3 (dense rates; '
              'GeForce: float16/bfloat16 with float32 accumulation and TF32 at half rate)',
    'ada': 'NVIDIA Ada GPU Architecture whitepaper (2022), Appendix A; L4 and L40S data sheets '
           '(dense rates: the sheets\' sparsity figures halved)',
    'hopper': 'NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022), Table 3; H100 and '
              'H200 data sheets (dense rates)',
}

#: name: (SMs, dense TF32 TFLOP/s or None, tensor-core generation, PCIe, peer-to-peer, source).
COMPUTE_FACTS: dict[str, tuple] = {
    'K80': (13, None, '', 'pcie3', True, _WP['kepler']),
    'P100': (56, None, '', 'pcie3', True, _WP['p100']),
    'P100 SXM2': (56, None, '', 'pcie3', True, _WP['p100']),
    'V100 16GB': (80, None, 'volta', 'pcie3', True, _WP['volta']),
    'V100 32GB': (80, None, 'volta', 'pcie3', True, _WP['volta']),
    'V100 PCIe 16GB': (80, None, 'volta', 'pcie3', True, _WP['volta']),
    'Titan V': (80, None, 'volta', 'pcie3', False, _WP['volta']),
    'T4': (40, None, 'turing', 'pcie3', True, _WP['turing']),
    'GTX 1080': (20, None, '', 'pcie3', False, _WP['pascal']),
    'GTX 1080 Ti': (28, None, '', 'pcie3', False, _WP['pascal']),
    'Titan Xp': (30, None, '', 'pcie3', False, _WP['pascal']),
    'RTX 2080': (46, None, 'turing', 'pcie3', False, _WP['turing']),
    'RTX 2080 Ti': (68, None, 'turing', 'pcie3', False, _WP['turing']),
    'Titan RTX': (72, None, 'turing', 'pcie3', False, _WP['turing']),
    'Quadro RTX 8000': (72, None, 'turing', 'pcie3', True, _WP['turing']),
    'A10': (72, 62.5, 'ampere', 'pcie4', True, _WP['ampere']),
    'RTX 3080': (68, 29.8, 'ampere', 'pcie4', False, _WP['ampere']),
    'RTX 3090': (82, 35.6, 'ampere', 'pcie4', False, _WP['ampere']),
    'RTX A6000': (84, 77.4, 'ampere', 'pcie4', True, _WP['ampere']),
    'A100 40GB': (108, 156.0, 'ampere', 'pcie4', True, _WP['ampere']),
    'A100 80GB': (108, 156.0, 'ampere', 'pcie4', True, _WP['ampere']),
    'A100 PCIe 80GB': (108, 156.0, 'ampere', 'pcie4', True, _WP['ampere']),
    'L4': (58, 60.0, 'ada', 'pcie4', True, _WP['ada']),
    'L40S': (142, 183.0, 'ada', 'pcie4', True, _WP['ada']),
    'RTX 4090': (128, 82.6, 'ada', 'pcie4', False, _WP['ada']),
    'H100 80GB': (132, 494.7, 'hopper', 'pcie5', True, _WP['hopper']),
    'H100 PCIe': (114, 378.0, 'hopper', 'pcie5', True, _WP['hopper']),
    'H200': (132, 494.7, 'hopper', 'pcie5', True, _WP['hopper']),
    'A100 PCIe 40GB': (108, 156.0, 'ampere', 'pcie4', True, _WP['ampere']),
    'V100S PCIe 32GB': (80, None, 'volta', 'pcie3', True,
                        'NVIDIA Tesla V100S data sheet (2019, PCIe form factor only): 16.4 '
                        'TFLOP/s single precision, 130 TFLOP/s tensor, 32 GB HBM2 at 1,134 GB/s, '
                        'PCIe 3.0 x16, 250 W; the GV100 chip of the V100 whitepaper (80 SMs)'),
    'V100 PCIe 32GB': (80, None, 'volta', 'pcie3', True,
                       'NVIDIA V100 Tensor Core GPU data sheet (2020), its V100 PCIe column: '
                       '14 TFLOP/s single precision, 112 TFLOP/s tensor, 32 GB or 16 GB HBM2 at '
                       '900 GB/s, PCIe 32 GB/s, 250 W; the GV100 chip of the V100 whitepaper (80 '
                       'SMs)'),
}

_SHEET_GEN3 = 'PCIe Gen3 x16 (32 GB/s both directions together)'
#: Where each GPU's PCIe generation (COMPUTE_FACTS' PCIe column) is stated: its data sheet's or
#: specification page's system interface (bus support). An SXM module reaches its host over
#: PCIe too (the generation of the same data sheet's PCIe figure).
PCIE_SOURCES: dict[str, str] = {
    'K80': 'NVIDIA Tesla K80 board specification BD-07317: PCI Express 3.0 x16',
    'P100': 'NVIDIA Tesla P100 PCIe data sheet (2016): ' + _SHEET_GEN3,
    'P100 SXM2': 'NVIDIA Tesla P100 data sheet (2016): the SXM2 module\'s host interface, '
                 + _SHEET_GEN3,
    'V100 16GB': 'NVIDIA Tesla V100 data sheet (2017): NVLink 300 GB/s, ' + _SHEET_GEN3,
    'V100 32GB': 'NVIDIA Tesla V100 data sheet (2018): NVLink 300 GB/s, ' + _SHEET_GEN3,
    'V100 PCIe 16GB': 'NVIDIA Tesla V100 data sheet (2017), PCIe form: ' + _SHEET_GEN3,
    'V100S PCIe 32GB': 'NVIDIA Tesla V100S data sheet (2019): ' + _SHEET_GEN3,
    'V100 PCIe 32GB': 'NVIDIA V100 Tensor Core GPU data sheet (2020), PCIe form: ' + _SHEET_GEN3,
    'Titan V': 'NVIDIA TITAN V specifications (2017): bus support PCI Express 3.0',
    'T4': 'NVIDIA T4 data sheet (2019): system interface x16 PCIe Gen3',
    'GTX 1080': 'NVIDIA GeForce GTX 1080 specifications (2016): bus support PCIe 3.0',
    'GTX 1080 Ti': 'NVIDIA GeForce GTX 1080 Ti specifications (2017): bus support PCIe 3.0',
    'Titan Xp': 'NVIDIA TITAN Xp specifications (2017): bus support PCIe 3.0',
    'RTX 2080': 'NVIDIA GeForce RTX 2080 specifications (2018): bus support PCIe 3.0',
    'RTX 2080 Ti': 'NVIDIA GeForce RTX 2080 Ti specifications (2018): bus support PCIe 3.0',
    'Titan RTX': 'NVIDIA TITAN RTX specifications (2018): bus support PCIe 3.0',
    'Quadro RTX 8000': 'NVIDIA Quadro RTX 8000 data sheet (2018): graphics bus PCI Express 3.0 '
                       'x16',
    'A10': 'NVIDIA A10 data sheet (2021): PCIe Gen4 64 GB/s',
    'RTX 3080': 'NVIDIA GeForce RTX 3080 specifications (2020): bus support PCIe 4.0',
    'RTX 3090': 'NVIDIA GeForce RTX 3090 specifications (2020): bus support PCIe 4.0',
    'RTX A6000': 'NVIDIA RTX A6000 data sheet (2020): graphics bus PCI Express Gen 4 x16',
    'A100 40GB': 'NVIDIA A100 data sheet (2020): SXM4 and PCIe forms, PCIe Gen4 64 GB/s',
    'A100 80GB': 'NVIDIA A100 80GB data sheet (2021): SXM4 and PCIe forms, PCIe Gen4 64 GB/s',
    'A100 PCIe 40GB': 'NVIDIA A100 data sheet (2020): PCIe form, PCIe Gen4 64 GB/s',
    'A100 PCIe 80GB': 'NVIDIA A100 80GB data sheet (2021): PCIe form, PCIe Gen4 64 GB/s',
    'L4': 'NVIDIA L4 data sheet (2023): interconnect PCIe Gen4 x16 64 GB/s',
    'L40S': 'NVIDIA L40S data sheet (2023): interconnect PCIe Gen4 x16 64 GB/s',
    'RTX 4090': 'NVIDIA GeForce RTX 4090 specifications (2022): bus support PCIe 4.0',
    'H100 80GB': 'NVIDIA H100 data sheet (2022): SXM and PCIe forms, PCIe Gen5 128 GB/s',
    'H100 PCIe': 'NVIDIA H100 data sheet (2022): PCIe form, PCIe Gen5 128 GB/s',
    'H200': 'NVIDIA H200 data sheet (2024): PCIe Gen5 128 GB/s',
}

#: The SXM module form of the table's GPUs that are modules, by name (NVIDIA's P100, V100, A100
#: and H100 whitepapers and data sheets; the H200's data sheet: its SXM form); every other GPU of
#: the table is a PCIe card (its data sheet's form factor: PCIE_SOURCES). A form word typed with a
#: GPU's name ('A100 SXM4', 'T4 PCIe') must be its form (`lookup`); hardware/links.py plans an
#: SXM module on its NVLink board.
SXM_FORM_OF_GPU = {
    'P100 SXM2': 'SXM2', 'V100 16GB': 'SXM2', 'V100 32GB': 'SXM2', 'A100 40GB': 'SXM4',
    'A100 80GB': 'SXM4', 'H100 80GB': 'SXM5', 'H200': 'SXM5',
}

#: Share of its data-sheet arithmetic rates a card sustains under load where its vendor states
#: one (the SM clock a power limit holds it to; its memory keeps its own clock, so its bandwidth
#: is the data sheet's): name -> (share, source). A GPU not named here is taken at its data
#: sheet's (boost-clock) rates; among them the 300 W A100 PCIe 80GB, for which no vendor
#: figure was found.
SUSTAINED: dict[str, tuple[float, str]] = {
    'A100 PCIe 40GB': (0.90, 'NVIDIA\'s A100 PCIe specifications (June 2020, quoted by '
                       'AnandTech, "NVIDIA Announces PCIe A100 Accelerator: 250 Watt Ampere In '
                       'A Standard Form Factor", and Hardware Times, "NVIDIA Launches PCIe '
                       'Variant of the A100"): the same peak rates as the 400 W SXM4 module, '
                       'and 90% of its relative performance at the 250 W TDP'),
}


def _with_facts(spec: GpuSpec) -> GpuSpec:
    sms, tf32, cores, pcie, p2p, source = COMPUTE_FACTS[spec.name]
    sustained, why = SUSTAINED.get(spec.name, (1.0, ''))
    return spec._replace(sm_count=sms, tf32_tflops=tf32, tensor_cores=cores, pcie=pcie,
                         p2p=p2p, source=source + ('; sustained: ' + why if why else ''),
                         sustained=sustained, pcie_source=PCIE_SOURCES[spec.name])


#: The table: the rows above with their compute facts.
GPUS: tuple[GpuSpec, ...] = tuple(_with_facts(spec) for spec in _ROWS)


class UnknownGpuError(ValueError):
    """A GPU name that is not in the table; the message lists the known names."""


#: Words vendors and drivers put into a GPU's name that tell no GPU of the table from another:
#: the brands before it, and the memory's kind after it ('NVIDIA H100 80GB HBM3').
_IGNORED_WORD = re.compile(r'nvidia|tesla|geforce|quadro|hbm\d?e?')

#: The words of a name that may come in any order after the GPU's own name: its memory
#: ('80GB') and its form factor ('PCIe', 'SXM4': any SXM generation is the 'sxm' of its chip).
_QUALIFIER = re.compile(r'\d+gb|pcie|sxm\d?')


def _parts(name: str) -> tuple[str, frozenset[str]]:
    """'NVIDIA A100 80GB PCIe' -> ('a100', {'80gb', 'pcie'}): the GPU's own name without
    vendor words and separators, and its qualifiers as a set (their order does not matter:
    nvidia-smi prints 'NVIDIA A100-PCIE-40GB' and 'NVIDIA A100 80GB PCIe')."""
    text = re.sub(r'\bpci[\s_\-]*e(?:xpress)?\b', 'pcie', name.lower())
    text = re.sub(r'\b(\d+)\s*gb\b', r'\1gb', text)  # '80 GB' -> '80gb'
    core, qualifiers = [], set()
    for word in re.split(r'[\s_\-]+', text):
        if _QUALIFIER.fullmatch(word):
            qualifiers.add('sxm' if word.startswith('sxm') else word)
        elif word and not _IGNORED_WORD.fullmatch(word):
            core.append(word)
    return ''.join(core), frozenset(qualifiers)


def _key(name: str) -> str:
    """'NVIDIA Tesla V100-SXM2-16GB' and 'V100 16GB SXM2' -> 'v100 16gb sxm'."""
    core, qualifiers = _parts(name)
    return ' '.join([core] + sorted(qualifiers))


def _flat(name: str) -> str:
    """'a100pcie80gb', 'A100 PCIe 80GB' -> 'a100pcie80gb': a name typed without separators,
    whose qualifiers cannot be told apart (looked up when `_key` finds nothing)."""
    text = re.sub(r'\b(%s)\b' % _IGNORED_WORD.pattern, ' ', name.lower())
    return re.sub(r'[\s_\-]+', '', text)


def _keys(spec: GpuSpec) -> list[tuple[str, str]]:
    """(alias, key) of each name of `spec`: its name and aliases, and each of those without
    a memory size with the GPU's own added ('RTX 3080' also as 'RTX 3080 10GB', as a driver
    may print it)."""
    memory = '%dgb' % round(spec.memory_bytes / GIB)
    keys = []
    for alias in (spec.name,) + spec.aliases:
        core, qualifiers = _parts(alias)
        keys.append((alias, _key(alias)))
        if not any(q.endswith('gb') for q in qualifiers):
            keys.append((alias, ' '.join([core] + sorted(qualifiers | {memory}))))
    return keys


def _index() -> tuple[dict[str, GpuSpec], dict[str, GpuSpec]]:
    index, flat = {}, {}
    for spec in GPUS:
        for alias, key in _keys(spec):
            for table, found in ((index, key), (flat, _flat(alias))):
                if table.get(found, spec) is not spec:
                    raise AssertionError('GPU alias %r names two GPUs' % alias)
                table[found] = spec
    return index, flat


_INDEX, _FLAT_INDEX = _index()


def known_names() -> list[str]:
    """The table's GPU names, in table order."""
    return [spec.name for spec in GPUS]


def _natural(name: str) -> list:
    """'RTX 2080 Ti' -> ['rtx ', 2080, ' ti']: numbers compare as numbers (L4 before L40S,
    A10 before A100)."""
    return [int(part) if part.isdigit() else part
            for part in re.split(r'(\d+)', name.lower()) if part]


def sorted_names() -> list[str]:
    """The table's GPU names in alphabetical order, numbers as numbers: the list a message
    names ('known: A10, A100 40GB, ...')."""
    return sorted(known_names(), key=_natural)


# Characters a name typed by hand may have for a digit ('V1OO' for 'V100').
_LOOKALIKES = str.maketrans({'o': '0', 'i': '1', 'l': '1'})



def _likeness(typed: tuple[str, frozenset[str]], alias: str) -> tuple[bool, float, int, float]:
    """How alike a typed name's parts (`_parts`) and a table alias are, to rank suggestions:
    first whether the typed name begins with the alias's own name ('H100 NVL', 'V100-DGXS':
    a variant of that GPU the table lacks), then its own name's likeness (difflib's ratio of
    the two, O, I and l read as 0, 1 and 1), then the qualifiers both have ('80gb', 'pcie'),
    then the whole looked-up forms' ratio."""
    core, qualifiers = _parts(alias)
    mine, theirs = typed[0].translate(_LOOKALIKES), core.translate(_LOOKALIKES)
    ratio = difflib.SequenceMatcher(None, mine, theirs).ratio()
    whole = difflib.SequenceMatcher(
        None, ' '.join([typed[0]] + sorted(typed[1])).translate(_LOOKALIKES),
        _key(alias).translate(_LOOKALIKES)).ratio()
    begins = len(theirs) >= 3 and mine.startswith(theirs)
    return begins, ratio, len(typed[1] & qualifiers), whole


def _comparable(typed_core: str, alias: str) -> bool:
    """Whether a typed name is compared with `alias`: an alias that is a bare number ('2080',
    '1080 Ti': shorthand for a GeForce card) only with a typed name that begins with a digit
    too (B200 is nothing like the 2080)."""
    return not _parts(alias)[0][:1].isdigit() or typed_core[:1].isdigit()


def suggestions(name: str, count: int = 3) -> list[str]:
    """The table's names closest to the unknown `name`, best first, one per GPU, each as the
    `known:` list of the message names it (the table name: 'V100 16GB', not its alias 'V100';
    'RTX 2080', not '2080'); [] when none is close.

    A GPU is ranked by its closest name or alias (`_likeness`): a GPU the typed name begins
    with first ('H100 NVL': the H100s), then the GPU's own name ('P100 PCIe' is the P100 before
    any other PCIe card), then the memory and form factor in common ('A100 PCIe 48GB': the A100
    PCIe cards before the A100 SXM4 modules); a GPU whose own name's ratio is below
    `SUGGEST_CUTOFF` is not suggested unless the typed name begins with it, nor one only a bare
    number of whose names is like a typed name that begins with a letter (`_comparable`).

    Args:
      name: the name as typed; count: the most names returned.
    """
    typed = _parts(name)
    ranked = []
    for order, spec in enumerate(GPUS):
        names = [alias for alias in (spec.name,) + spec.aliases if _comparable(typed[0], alias)]
        if not names:
            continue
        best = max(_likeness(typed, alias) for alias in names)
        if best[0] or best[1] >= SUGGEST_CUTOFF:
            ranked.append((best, -order, spec.name))
    return [found for _, _, found in sorted(ranked, reverse=True)[:count]]


def form_of(spec: GpuSpec) -> str:
    """The form factor of a GPU of the table: its SXM generation ('SXM4': SXM_FORM_OF_GPU) for
    a module, else 'PCIe'."""
    return SXM_FORM_OF_GPU.get(spec.name, 'PCIe')


def _typed_forms(name: str) -> set[str]:
    """The form words of a typed name as form_of spells them: 'PCIe', 'SXM4', or 'SXM' (any
    generation)."""
    text = re.sub(r'\bpci[\s_\-]*e(?:xpress)?\b', 'pcie', name.lower())
    words = re.split(r'[\s_\-]+', text)
    return ({'PCIe'} if 'pcie' in words else set()) | {
        word.upper() for word in words if re.fullmatch(r'sxm\d?', word)}


def _family(core: str) -> list[GpuSpec]:
    """The table's GPUs with a name or alias whose own name is `core` ('v100': the V100 16GB,
    V100 32GB and the V100 PCIe cards), in the order of `sorted_names`."""
    return sorted((spec for spec in GPUS
                   if any(_parts(alias)[0] == core for alias in (spec.name,) + spec.aliases)),
                  key=lambda spec: _natural(spec.name))


def _form_fits(spec: GpuSpec, forms: set[str]) -> bool:
    """Whether every typed form word (`_typed_forms`) is `spec`'s form."""
    return all(f == form_of(spec) or (f == 'SXM' and form_of(spec).startswith('SXM'))
               for f in forms)


def _exact(name: str) -> GpuSpec | None:
    """The GPU a name or alias of the table names, whose form a form word typed is ('A100
    SXM2 40GB' is none: the A100 40GB is an SXM4 module)."""
    spec = _INDEX.get(_key(name)) or _FLAT_INDEX.get(_flat(name))
    return spec if spec is not None and _form_fits(spec, _typed_forms(name)) else None


def _by_form(name: str) -> GpuSpec | None:
    """The GPU a name with a form word names when no name of the table has that word: the GPU
    of that name (and memory, if typed) whose form it is ('T4 PCIe': the T4, a PCIe card; 'H200
    SXM': the H200, an SXM5 module; 'A100 SXM4': of the A100 40GB and 80GB modules the smaller,
    as 'A100' alone), or None (no such form of that GPU: 'T4 SXM', 'V100 SXM4')."""
    forms = _typed_forms(name)
    if not forms:
        return None
    core, qualifiers = _parts(name)
    memory = {q for q in qualifiers if q.endswith('gb')}
    found = [spec for spec in _family(core)
             if _form_fits(spec, forms) and memory <= {'%dgb' % round(spec.memory_bytes / GIB)}]
    return min(found, key=lambda spec: spec.memory_bytes) if found else None


def _as_in_the_table(name: str) -> str:
    """'that GPU is in the table as T4 (PCIe); ' for a name whose GPU the table has but not in
    the memory or form typed ('T4 SXM', 'P100 PCIe 12GB'); '' otherwise."""
    family = _family(_parts(name)[0])
    if not family:
        return ''
    rows = ['%s (%s)' % (spec.name, form_of(spec)) for spec in family]
    return 'that GPU is in the table as %s; ' % (
        rows[0] if len(rows) == 1 else '%s and %s' % (', '.join(rows[:-1]), rows[-1]))


def _gb(spec: GpuSpec) -> int:
    return round(spec.memory_bytes / GIB)


def _other_memory(name: str) -> str:
    """For a name whose GPU the table has in a form typed but not with the memory typed
    ('Tesla P100-PCIE-12GB': only the 16 GB P100s), the rest of `lookup`'s message: the sizes
    the table has, each row's form and memory, and the nearest row of the form typed to plan
    (the largest memory not above the card's, else the smallest: a step that fits the row then
    fits the card), with what its memory means for the plan; '' for any other name."""
    core, qualifiers = _parts(name)
    memory = [int(q[:-2]) for q in qualifiers if q.endswith('gb')]
    family = _family(core)
    if len(memory) != 1 or not family or any(_gb(spec) == memory[0] for spec in family):
        return ''
    typed, forms = memory[0], _typed_forms(name)
    fitting = [spec for spec in GPUS if spec in family and _form_fits(spec, forms)]
    if not fitting:
        return ''
    below = [spec for spec in fitting if _gb(spec) <= typed]
    use = max(below, key=_gb) if below else min(fitting, key=_gb)
    shown = min((a for spec in family for a in (spec.name,) + spec.aliases
                 if _parts(a) == (core, frozenset())), key=len, default=family[0].name)
    sizes = sorted({_gb(spec) for spec in family})
    side = ('less than the card\'s %dGB: a step that fits the plan fits the card' % typed
            if _gb(use) < typed else 'more than the card\'s %dGB: check the dry run\'s peak '
            'memory per device against %dGB yourself' % (typed, typed))
    return ('the table has the %s with %s only (%s), not %dGB: plan the nearest, '
            '--gpu_model=%s (%s, %dGB, %s; no flag sets a planned GPU\'s memory)' % (
                shown, ' and '.join('%dGB' % gb for gb in sizes),
                '; '.join('%s: %s, %dGB' % (spec.name, form_of(spec), _gb(spec))
                          for spec in family),
                typed, shlex.quote(use.name), form_of(use), _gb(use), side))


def lookup(name: str) -> GpuSpec:
    """The GPU named `name` as a user types it (see the module docstring).

    A form word must be the GPU's form (`form_of`); where no name of the table has it, the GPU
    of that form is found by its name and memory (`_by_form`: 'T4 PCIe', 'H200 SXM', 'A100
    SXM4').

    Raises:
      UnknownGpuError: no GPU of the table has that name; the message names the table's
        memory sizes of that GPU, and the nearest row to plan, where it has the GPU but not
        with the memory typed ('P100 PCIe 12GB': `_other_memory`), the forms and memories of
        that GPU where it has the GPU but not in the form typed ('T4 SXM': 'that GPU is in the
        table as T4 (PCIe)'), else the closest names ('did you mean V100?': `suggestions`),
        then every known one (`sorted_names`); an empty name is said to be empty, with the
        known ones and the page describing them.
    """
    if not name.strip():
        raise UnknownGpuError('the GPU model name is empty; give one of the known names '
                              '(docs/planning-a-gpu-run.md describes them): %s'
                              % ', '.join(sorted_names()))
    spec = _exact(name) or _by_form(name)
    if spec is None and _other_memory(name):
        raise UnknownGpuError('unknown GPU model %r; %s' % (name, _other_memory(name)))
    if spec is None:
        raise UnknownGpuError('unknown GPU model %r; %sknown: %s'
                              % (name, _as_in_the_table(name) or did_you_mean(suggestions(name)),
                                 ', '.join(sorted_names())))
    return spec


def from_device_name(device_name: str, memory_bytes: int | None = None) -> GpuSpec | None:
    """The table's GPU for the name TensorFlow or nvidia-smi reports, or None.

    A name `lookup` takes is that GPU ('Tesla V100-PCIE-32GB': the V100 PCIe 32GB); else the
    longest table name found inside the reported name wins ('A100-SXM4-80GB' is the A100 80GB,
    not the A100); with `memory_bytes` (the device's memory, which TensorFlow reports a little
    below the data sheet's), the model of that family nearest in memory wins ('Tesla
    V100-DGXS-32GB' with 31 GiB: the V100 32GB).
    """
    exact = _exact(device_name) or _by_form(device_name)
    if exact is not None:
        return exact
    key = _flat(device_name)
    found = sorted(((len(alias), spec) for alias, spec in _FLAT_INDEX.items() if alias in key),
                   key=lambda item: -item[0])
    if not found:
        return None
    best = found[0][1]
    if not memory_bytes:
        return best
    # The same GPU in several memory sizes ('V100-DGXS-32GB' names only the family 'V100').
    family = [spec for spec in GPUS if spec.name.split()[0] == best.name.split()[0]]
    return min(family, key=lambda spec: abs(spec.memory_bytes - memory_bytes))
