"""The links a training step's bytes cross, kept as data with their source: PCIe and NVLink
inside a host, Ethernet and InfiniBand between hosts, and hosts as vendors ship them.

Rates are per direction (every link here is full duplex), in GB/s (10^9 bytes/s), at the
standard's or data sheet's signalling rate after line coding: what a link carries at best.
Protocol overheads (TCP/IP and gRPC framing, PCIe packet headers, NCCL's protocol) are not taken
off: a prediction from these rates is an upper bound on throughput, and docs/scaling.md says
how far the measured runs fall short of it. The links named `*_copy` are the exception: what a
copy over that link was measured to reach (CUDA's bandwidth tests, each with its source), the
rate NCCL's ring moves a hop at (speed_model/published_scaling.py plans the published NCCL
rings with them). No rate here was tuned to a published result.

    links.link('pcie3')                  # Link('pcie3', 15.75 GB/s, ...)
    links.network('25')                  # 25 Gbit/s Ethernet: Link('25gbe', 3.125 GB/s, ...)
    links.network('ib_hdr')              # 200 Gbit/s InfiniBand HDR
    links.host_preset('dgx1_p100')       # 8 P100s on NVLink 1, two GPUs per PCIe switch

No TensorFlow: the command's flag checks use it before TensorFlow loads.
"""

from __future__ import annotations

from typing import NamedTuple

from . import gpu_specs
from .suggest import did_you_mean, suggestions

GBIT = 1e9 / 8  # bytes/s in one Gbit/s


class Link(NamedTuple):
    """One kind of link: `name`, `gbytes_per_sec` per direction (10^9 bytes/s; a host memory:
    reads and writes together), `kind` ('pcie', 'nvlink', 'memory', 'network', 'loopback') and
    `source` (where the rate comes from)."""
    name: str
    gbytes_per_sec: float
    kind: str
    source: str

    @property
    def bytes_per_sec(self) -> float:
        return self.gbytes_per_sec * 1e9

    def describe(self) -> str:
        """'PCIe 3.0 x16 (15.75 GB/s)', '25 Gbit/s Ethernet (3.12 GB/s)'."""
        return '%s (%.3g GB/s)' % (LABELS.get(self.name, self.name), self.gbytes_per_sec)


_PCIE = ('PCI-SIG PCI Express Base Specification: %s GT/s per lane, %s line code, 16 lanes, '
         'per direction')
_NVLINK = ('NVIDIA %s whitepaper: %d NVLink %s links of %d GB/s per direction per GPU')
_IEEE = 'IEEE 802.3 %s: MAC data rate %s Gbit/s per direction'
_IBTA = 'InfiniBand Trade Association roadmap: %s 4x link, %d Gbit/s data rate per direction'

LINKS: dict[str, Link] = {link.name: link for link in (
    Link('pcie2', 16 * 5 * 0.8 / 8, 'pcie', _PCIE % ('5', '8b/10b')),
    Link('pcie3', 16 * 8 * 128 / 130 / 8, 'pcie', _PCIE % ('8', '128b/130b')),
    Link('pcie4', 16 * 16 * 128 / 130 / 8, 'pcie', _PCIE % ('16', '128b/130b')),
    Link('pcie5', 16 * 32 * 128 / 130 / 8, 'pcie', _PCIE % ('32', '128b/130b')),
    # Per GPU: the sum over its NVLink links (an all-reduce ring set over them: NCCL's best).
    Link('nvlink1', 4 * 20, 'nvlink', _NVLINK % ('Tesla P100 (2016)', 4, '1.0', 20)),
    Link('nvlink2', 6 * 25, 'nvlink', _NVLINK % ('Tesla V100 (2017)', 6, '2.0', 25)),
    Link('nvlink3', 12 * 25, 'nvlink', _NVLINK % ('A100 Tensor Core GPU (2020)', 12, '3.0',
                                                  25)),
    Link('nvlink4', 18 * 25, 'nvlink', _NVLINK % ('H100 Tensor Core GPU (2022)', 18, '4.0',
                                                  25)),
    # One link of a ring per hop: NCCL 1.x builds a single ring (NVIDIA/nccl#666: v1.3.4's
    # commBuildMaps makes one ring; several rings over all links came with NCCL 2), which is
    # what TensorFlow 1.x's contrib NCCL ran until it moved to NCCL 2.
    Link('nvlink1_link', 20, 'nvlink', 'NVIDIA Tesla P100 whitepaper (2016): one NVLink 1.0 '
         'link, 20 GB/s per direction'),
    Link('nvlink2_link', 25, 'nvlink', 'NVIDIA Tesla V100 whitepaper (2017): one NVLink 2.0 '
         'link, 25 GB/s per direction'),
    # What one copy reaches over a link, measured (the rate a ring's hop moves at: NCCL's
    # rings are chains of copies, one per hop, each as fast as its slowest link).
    Link('nvlink1_link_copy', 18.31, 'nvlink', 'Dell EMC HPC Innovation Lab, "Deep Learning '
         'Performance with P100 and V100 GPUs in the PowerEdge C4130" (2017), Table 3: CUDA\'s '
         'p2pBandwidthLatencyTest between two P100 SXM2 over one NVLink 1.0 link, 18.31 GB/s '
         'one way (91.6% of 20)'),
    Link('nvlink2_copy', 143.71, 'nvlink', 'the same Dell EMC paper, Table 3: '
         'p2pBandwidthLatencyTest from one V100 SXM2 to its three neighbours over its six NVLink '
         '2.0 links, 47.88 + 47.90 + 47.93 = 143.71 GB/s one way (95.8% of 150)'),
    Link('pcie3_copy', 11.69, 'pcie', 'Microway, "NVIDIA Tesla P100 PCI-E 16GB GPU Accelerator '
         'Up Close" (2016): CUDA\'s bandwidthTest --memory=pinned over PCIe 3.0 x16, host to '
         'device 11.69 GB/s, device to host 12.89 GB/s; a byte through host memory crosses '
         'both, at the slower'),
    # Host memory, where GPUs without peer-to-peer exchange their bytes (HOST_MEMORY_OF_GPU).
    Link('ddr4_3200_2ch', 2 * 3200e6 * 8 / 1e9, 'memory', 'JEDEC JESD79-4 DDR4-3200: 3200 '
         'MT/s x 8 bytes per 64-bit channel, 2 channels (a desktop CPU), reads and writes '
         'together'),
    Link('ddr4_3200_8ch', 8 * 3200e6 * 8 / 1e9, 'memory', 'JEDEC JESD79-4 DDR4-3200: 3200 '
         'MT/s x 8 bytes per 64-bit channel, 8 channels (one server CPU), reads and writes '
         'together'),
    Link('ddr4_2933_6ch', 6 * 2933e6 * 8 / 1e9, 'memory', 'JEDEC JESD79-4 DDR4-2933: 2933 '
         'MT/s x 8 bytes per 64-bit channel, 6 channels (one Xeon Gold 6230: Intel\'s product '
         'specification, 6 memory channels of DDR4-2933), reads and writes together'),
    Link('1gbe', 1 * GBIT / 1e9, 'network', _IEEE % ('1000BASE-T', '1')),
    Link('10gbe', 10 * GBIT / 1e9, 'network', _IEEE % ('10GBASE-R', '10')),
    Link('25gbe', 25 * GBIT / 1e9, 'network', _IEEE % ('25GBASE-R (802.3by)', '25')),
    Link('40gbe', 40 * GBIT / 1e9, 'network', _IEEE % ('40GBASE-R (802.3ba)', '40')),
    Link('100gbe', 100 * GBIT / 1e9, 'network', _IEEE % ('100GBASE-R (802.3ba)', '100')),
    Link('ib_edr', 100 * GBIT / 1e9, 'network', _IBTA % ('EDR', 100)),
    Link('ib_hdr', 200 * GBIT / 1e9, 'network', _IBTA % ('HDR', 200)),
    Link('ib_ndr', 400 * GBIT / 1e9, 'network', _IBTA % ('NDR', 400)),
)}

LABELS = {
    'pcie2': 'PCIe 2.0 x16', 'pcie3': 'PCIe 3.0 x16', 'pcie4': 'PCIe 4.0 x16',
    'pcie5': 'PCIe 5.0 x16', 'nvlink1': 'NVLink 1.0 (4 links)', 'nvlink2': 'NVLink 2.0 (6 links)',
    'nvlink3': 'NVLink 3.0 (12 links)', 'nvlink4': 'NVLink 4.0 (18 links)',
    'nvlink1_link': 'one NVLink 1.0 link (a single ring)',
    'nvlink2_link': 'one NVLink 2.0 link (a single ring)',
    'nvlink1_link_copy': 'one NVLink 1.0 link, a copy measured',
    'nvlink2_copy': 'NVLink 2.0 (6 links), copies measured',
    'ddr4_2933_6ch': 'host memory, 6 channels of DDR4-2933',
    'pcie3_copy': 'PCIe 3.0 x16, a copy to and from pinned host memory measured',
    'ddr4_3200_2ch': 'host memory, 2 channels of DDR4-3200',
    'ddr4_3200_8ch': 'host memory, 8 channels of DDR4-3200',
    '1gbe': '1 Gbit/s Ethernet', '10gbe': '10 Gbit/s Ethernet', '25gbe': '25 Gbit/s Ethernet',
    '40gbe': '40 Gbit/s Ethernet', '100gbe': '100 Gbit/s Ethernet',
    'ib_edr': '100 Gbit/s InfiniBand EDR', 'ib_hdr': '200 Gbit/s InfiniBand HDR',
    'ib_ndr': '400 Gbit/s InfiniBand NDR', 'loopback': 'loopback (measured)',
}
#: --interconnect_gbps numbers that name an Ethernet preset.
ETHERNET_GBPS = {1: '1gbe', 10: '10gbe', 25: '25gbe', 40: '40gbe', 100: '100gbe'}
#: The network planned when --interconnect_gbps is not given.
DEFAULT_NETWORK = '10gbe'
#: The NVLink generation of each SXM module of the GPU table, by gpu_specs name (NVIDIA's P100,
#: V100, A100 and H100 whitepapers; the table's LINKS entries give the links per GPU): what
#: --gpu_interconnect=nvlink plans, and the default GPU-to-GPU link of these GPUs (an SXM module
#: sits on an NVLink board: DGX and HGX baseboards, EC2 p3 and p4; it has no PCIe card edge).
#: The table's 'V100 16GB', 'V100 32GB', 'A100 40GB', 'A100 80GB', 'H100 80GB' and 'H200' are
#: the SXM modules' rows (their PCIe cards are rows of their own: 'V100 PCIe 16GB', 'A100 PCIe
#: 40GB', ...); 'P100' is the PCIe card and 'P100 SXM2' the module. GPUs not named here have
#: no NVLink between boards of the kind the project plans (PCIe cards; an NVLink bridge between
#: two cards of NVLINK_BRIDGE_OF_GPU is given by hand as its generation, --gpu_interconnect=
#: nvlink2, nvlink3 or nvlink4).
NVLINK_OF_GPU = {
    'P100 SXM2': 'nvlink1', 'V100 16GB': 'nvlink2', 'V100 32GB': 'nvlink2',
    'A100 40GB': 'nvlink3', 'A100 80GB': 'nvlink3', 'H100 80GB': 'nvlink4', 'H200': 'nvlink4',
}
#: PCIe cards of the GPU table two of which an NVLink bridge can join, by gpu_specs name: the
#: bridge's NVLink generation (NVIDIA's Turing whitepaper: NVLink 2.0 on TU102 and TU104 boards;
#: its GA102 whitepaper: NVLink 3.0 on the RTX 3090 and RTX A6000; the A100 PCIe and H100 PCIe
#: product briefs: an NVLink bridge of their SXM module's generation). A bridge carries fewer
#: links than the SXM module's count LINKS gives per GPU: its plan is an upper bound. Every
#: other PCIe card of the table (K80, P100, V100 PCIe, V100S, Titan V, T4, A10, L4, L40S, GTX
#: 1080 and 1080 Ti, Titan Xp, RTX 3080, RTX 4090) has no NVLink: any NVLink link is refused
#: for it (`nvlink_conflict`).
NVLINK_BRIDGE_OF_GPU = {
    'RTX 2080': 'nvlink2', 'RTX 2080 Ti': 'nvlink2', 'Titan RTX': 'nvlink2',
    'Quadro RTX 8000': 'nvlink2', 'RTX 3090': 'nvlink3', 'RTX A6000': 'nvlink3',
    'A100 PCIe 40GB': 'nvlink3', 'A100 PCIe 80GB': 'nvlink3', 'H100 PCIe': 'nvlink4',
}
#: The module form of each NVLINK_OF_GPU entry, for the plan's words (kept with the GPU table,
#: whose names it reads: hardware/gpu_specs.py).
SXM_FORM_OF_GPU = gpu_specs.SXM_FORM_OF_GPU
#: The host memory a GPU without peer-to-peer (hardware/gpu_specs.py GpuSpec.p2p False:
#: GeForce and Titan boards, to which NVIDIA's driver gives none; NCCL then moves a ring's bytes
#: through host memory, its SHM transport: NCCL user guide, NCCL_P2P_DISABLE and
#: NCCL_SHM_DISABLE) plans its GPU-to-GPU bytes through: such boards sit in desktops and
#: workstations (two memory channels planned).
DEFAULT_HOST_MEMORY_NO_P2P = 'ddr4_3200_2ch'


def peer_to_peer_over_pcie(gpu) -> bool:
    """Whether two boards of `gpu` (a gpu_specs.GpuSpec or its table name) copy to each other
    over PCIe without host memory: the GPU table's `p2p` (True for a name not in the table)."""
    if isinstance(gpu, str):
        try:
            gpu = gpu_specs.lookup(gpu)
        except gpu_specs.UnknownGpuError:
            return True
    return bool(getattr(gpu, 'p2p', True))


#: GPUs behind one PCIe x16 uplink, by gpu_specs name (NVIDIA Tesla K80 board brief: two GK210
#: GPUs behind one on-board PCIe switch); others: one.
GPUS_PER_UPLINK_OF_GPU = {'K80': 2}


class UnknownLinkError(ValueError):
    """A link or host preset name that is not in the table (the message lists the known ones)."""


def link(name: str) -> Link:
    """The link named `name` ('pcie3', 'nvlink2', '25gbe', 'ib_hdr').

    Raises:
      UnknownLinkError: no such link.
    """
    try:
        return LINKS[name.strip().lower()]
    except KeyError:
        raise UnknownLinkError('unknown link %r; known: %s' % (name, ', '.join(LINKS))) from None


def network_names() -> list[str]:
    """The network names --interconnect_gbps takes: the network links' and 'loopback'."""
    return [n for n, x in LINKS.items() if x.kind == 'network'] + ['loopback']


def network_choices() -> str:
    """What --interconnect_gbps takes, in words (exactly what `network` and the flag's check
    accept: a rate, a network link's name, or 'loopback')."""
    return ('give a rate in Gbit/s (a number > 0; %s are Ethernet) or a network: %s (this '
            'host\'s, measured now)' % (', '.join(str(n) for n in ETHERNET_GBPS),
                                       ', '.join(network_names())))


def network(value: str | float) -> Link:
    """The network of --interconnect_gbps: a preset name ('25gbe', 'ib_hdr', '100gbe') or a
    rate in Gbit/s ('25': the Ethernet preset of that rate; '56': a link of 56 Gbit/s).
    ('loopback' is measured: speed_model/from_flags.py, hardware/loopback.py.)

    Raises:
      UnknownLinkError: a name that is no network preset (the message names the closest ones
        and every value the flag takes: `network_choices`), or a rate that is not > 0.
    """
    text = str(value).strip().lower()
    try:
        gbps = float(text)
    except ValueError:
        found = LINKS.get(text)
        if found is None or found.kind != 'network':
            raise UnknownLinkError('%s %r; %s%s' % (
                'unknown network' if found is None else 'no network link:', value,
                did_you_mean(suggestions(text, network_names())), network_choices())) from None
        return found
    if not gbps > 0:
        raise UnknownLinkError('--interconnect_gbps must be > 0. Received: %r' % (value,))
    if gbps in ETHERNET_GBPS:
        return LINKS[ETHERNET_GBPS[int(gbps)]]
    return Link('%g Gbit/s' % gbps, gbps * GBIT / 1e9, 'network', 'given: --interconnect_gbps')


def measured_link(name: str, bytes_per_sec: float, how: str) -> Link:
    """A link whose rate was measured on this machine (hardware/loopback.py)."""
    return Link(name, bytes_per_sec / 1e9, 'loopback', how)


class HostPreset(NamedTuple):
    """A host as sold: its GPU (hardware/gpu_specs.py name), GPUs (the most it holds, stated
    by its source: a --num_gpus above it is refused), GPU-to-GPU link, host-to-GPU link, GPUs
    behind one PCIe uplink to the CPUs, network, the source of the figures, and the host memory
    its GPUs' bytes to each other pass through when they have no peer-to-peer ('': they have
    it)."""
    name: str
    gpu: str
    gpus: int
    gpu_link: str
    pcie: str
    gpus_per_pcie_uplink: int
    network: str
    source: str
    host_memory: str = ''


HOSTS: dict[str, HostPreset] = {h.name: h for h in (
    HostPreset('dgx1_p100', 'P100 SXM2', 8, 'nvlink1', 'pcie3', 2, 'ib_edr',
               'NVIDIA DGX-1 system architecture whitepaper (2017): 8 Tesla P100 SXM2 in a '
               'hybrid cube-mesh of NVLink 1.0, four PCIe switches with two GPUs each, four '
               '100 Gbit/s InfiniBand EDR ports'),
    HostPreset('dgx1_v100', 'V100', 8, 'nvlink2', 'pcie3', 2, 'ib_edr',
               'NVIDIA DGX-1 with Tesla V100 system architecture whitepaper (2017): 8 Tesla V100 '
               'SXM2 in the hybrid cube-mesh of NVLink 2.0, four 100 Gbit/s InfiniBand EDR '
               'ports'),
    HostPreset('ec2_p2.8xlarge', 'K80', 8, 'pcie3', 'pcie3', 2, '10gbe',
               'Amazon EC2 P2 instance page: 8 K80 GPUs (4 boards of two GK210 behind one '
               'PCIe switch each), 10 Gbit/s network'),
    HostPreset('gce_k80x8', 'K80', 8, 'pcie3', 'pcie3', 2, '10gbe',
               'Google Compute Engine n1-standard-32 with 8 K80 GPUs (4 boards of two GK210 '
               'behind one PCIe switch each: NVIDIA Tesla K80 board brief); the network is '
               'not planned for one host (10 Gbit/s given)'),
    HostPreset('ec2_p2.16xlarge', 'K80', 16, 'pcie3', 'pcie3', 2, '25gbe',
               'Amazon EC2 P2 instance page: 16 K80 GPUs, 25 Gbit/s network'),
    HostPreset('ec2_p3.16xlarge', 'V100', 8, 'nvlink2', 'pcie3', 2, '25gbe',
               'Amazon EC2 P3 instance page: 8 V100 SXM2 on NVLink, 25 Gbit/s network'),
    HostPreset('dgx_a100', 'A100 40GB', 8, 'nvlink3', 'pcie4', 2, 'ib_hdr',
               'NVIDIA DGX A100 user guide: 8 A100 SXM4 on NVLink 3.0 / NVSwitch, eight '
               '200 Gbit/s InfiniBand HDR ports for the cluster'),
    HostPreset('dgx_h100', 'H100 80GB', 8, 'nvlink4', 'pcie5', 1, 'ib_ndr',
               'NVIDIA DGX H100 user guide: 8 H100 SXM5 on NVLink 4.0 / NVSwitch, 400 Gbit/s '
               'InfiniBand NDR per GPU'),
    HostPreset('hgx2_v100', 'V100 32GB', 16, 'nvlink2_copy', 'pcie3', 2, 'ib_edr',
               'NVIDIA HGX-2 / DGX-2 (2018): 16 V100 SXM3 32GB, every GPU\'s six NVLink 2.0 '
               'links to the NVSwitches (any two GPUs at the full six links); the GPU link at '
               'a measured copy\'s rate (nvlink2_copy)'),
    # Lambda's benchmark hosts, as their logs show them (lambdal/lambda-tensorflow-benchmark,
    # logs/<host>.logs: TensorFlow's peer-to-peer matrix and each GPU's PCI bus id; the
    # folder names and metadata files name the CPU and the GPUs).
    HostPreset('lambda_epyc7502x8', 'A100 PCIe 40GB', 8, 'pcie4', 'pcie4', 1, '10gbe',
               'Lambda\'s 8-GPU AMD EPYC 7502 host (logs 7502-A100-PCIE-40GB and 7502-RTX_A6000_'
               'XLA_TF1_15): the eight GPUs on PCI buses 01, 25, 41, 61, 81, a1, c1 and e1, each '
               'behind a root port of its own, PCIe 4.0 x16 (A100 PCIe and RTX A6000 data '
               'sheets), peer-to-peer between every pair (TensorFlow\'s device interconnect '
               'matrix: all Y); no measured copy rate of PCIe 4.0 was found: the line rate'),
    HostPreset('lambda_gold6230x8', 'Quadro RTX 8000', 8, 'pcie3_copy', 'pcie3_copy', 4,
               '10gbe', 'Lambda\'s 8-GPU Xeon Gold 6230 host (logs Gold_6230-Quadro_RTX_8000_*): '
               'the GPUs on PCI buses 1a, 1c, 1d, 1e and 3d, 3f, 40, 41 (two PCIe switches of '
               'four GPUs, read from the consecutive bus numbers), peer-to-peer between every '
               'pair (all Y), PCIe 3.0 x16 at a measured copy\'s rate (pcie3_copy)'),
    HostPreset('lambda_gold6230x8_geforce', 'RTX 2080 Ti', 8, 'pcie3_copy', 'pcie3_copy', 4,
               '10gbe', 'the same host with 8 GeForce RTX 2080 Ti (logs Gold_6230-GeForce_RTX_'
               '2080_Ti_*, without NVLink bridges): the same bus numbers, no peer-to-peer between '
               'any pair (all N): NCCL passes the ring through host memory, one Xeon Gold 6230\'s '
               'six DDR4-2933 channels', host_memory='ddr4_2933_6ch'),
)}


#: Other names a host preset's source gives the host, by preset: suggested for it when typed
#: (--gpu_interconnect=dgx2: "did you mean hgx2_v100?"), not taken as it: NVIDIA's DGX-2H,
#: also a DGX-2, runs its V100s at 450 W, faster than the preset's.
HOST_ALSO = {'hgx2_v100': ('dgx2', 'hgx2')}


def host_preset(name: str) -> HostPreset:
    """The host preset named `name`.

    Raises:
      UnknownLinkError: no such preset (the message lists them).
    """
    try:
        return HOSTS[name.strip().lower()]
    except KeyError:
        raise UnknownLinkError('unknown host %r; known: %s' % (name, ', '.join(HOSTS))) from None


def preset_of(value: str | None) -> HostPreset | None:
    """The host preset a --gpu_interconnect value names, or None (a link, a number, none)."""
    return HOSTS.get(value.strip().lower()) if value else None


def _gpu_link_groups() -> tuple[list[str], list[str], list[str]]:
    """The links of LINKS --gpu_interconnect takes, as `gpu_link_choices` groups them: the PCIe
    generations, the NVLink generations, and one link or a measured copy (a name with '_':
    'nvlink1_link', 'nvlink1_link_copy', 'pcie3_copy'; the links table of docs/scaling.md)."""
    ours = [(n, x.kind) for n, x in LINKS.items() if x.kind in ('pcie', 'nvlink')]
    return ([n for n, kind in ours if kind == 'pcie' and '_' not in n],
            [n for n, kind in ours if kind == 'nvlink' and '_' not in n],
            [n for n, _ in ours if '_' in n])


def gpu_link_names() -> list[str]:
    """Every value --gpu_interconnect takes (any case), in `gpu_link_choices`' order: the one
    list `check_plan_flags` accepts, --help and docs/scaling.md's flag table name."""
    pcie, nvlink, rates = _gpu_link_groups()
    return pcie + nvlink + ['nvlink'] + rates + list(HOSTS)


def gpu_link_choices() -> str:
    """What --gpu_interconnect takes in words, grouped as docs/scaling.md lists it: the PCIe and
    NVLink generations, 'nvlink' (the GPU's own), one link or a measured copy, the hosts."""
    pcie, nvlink, rates = _gpu_link_groups()
    return ('a PCIe generation (%s), an NVLink generation (%s; nvlink: the GPU\'s own), one link '
            'or a measured copy (%s), or a host: %s' % (
                ', '.join(pcie), ', '.join(nvlink), ', '.join(rates), ', '.join(HOSTS)))


def gpu_link_suggestions(name: str) -> list[str]:
    """The --gpu_interconnect values closest to the unknown `name` (`suggestions` over
    `gpu_link_names`, a host also by HOST_ALSO's names)."""
    return suggestions(name, gpu_link_names(), also=HOST_ALSO)


def gpu_link_name(value: str, gpu_name: str | None) -> str:
    """The link --gpu_interconnect names: 'nvlink' is the NVLink generation of `gpu_name`'s SXM
    form (NVLINK_OF_GPU), any other value itself.

    Raises:
      UnknownLinkError: 'nvlink' for a GPU without an SXM form (or no GPU named): for a GPU with
        no NVLink, naming its PCIe link; for a card with an NVLink bridge, naming the bridge's
        generation; else naming the NVLink GPUs and generations.
    """
    if value.strip().lower() != 'nvlink':
        return value
    found = NVLINK_OF_GPU.get(gpu_name or '')
    if found is not None:
        return found
    if gpu_name in NVLINK_BRIDGE_OF_GPU:
        raise UnknownLinkError('--gpu_interconnect=nvlink: the %s\'s NVLink is a bridge between '
                               'two cards, not an SXM board; give its generation '
                               '(--gpu_interconnect=%s)'
                               % (gpu_name, NVLINK_BRIDGE_OF_GPU[gpu_name]))
    if gpu_name:
        raise UnknownLinkError(_no_nvlink('nvlink', gpu_name))
    raise UnknownLinkError('--gpu_interconnect=nvlink: no GPU named (NVLink GPUs: %s); name '
                           'one (--gpu_model) or the generation (nvlink1 to nvlink4)'
                           % ', '.join(NVLINK_OF_GPU))


def _no_nvlink(value: str, gpu_name: str) -> str:
    """The refusal of an NVLink link for a GPU that has none, naming its PCIe link."""
    pcie = gpu_specs.lookup(gpu_name).pcie
    return ('--gpu_interconnect=%s: the %s has no NVLink (neither an SXM module nor a card with '
            'an NVLink bridge); plan it on its PCIe (--gpu_interconnect=%s, or drop '
            '--gpu_interconnect)' % (value, gpu_name, pcie))


def nvlink_conflict(value: str, gpu_name: str) -> str | None:
    """Why the NVLink link `value` (a --gpu_interconnect value: 'nvlink2', 'nvlink1_link',
    'nvlink2_copy', ...) cannot join GPUs of the table's `gpu_name`, or None when it can (or
    `value` is no NVLink link): the GPU has no NVLink (not in NVLINK_OF_GPU nor
    NVLINK_BRIDGE_OF_GPU), or its NVLink is another generation (nvlink1 for an A100)."""
    found = LINKS.get(value.strip().lower())
    if found is None or found.kind != 'nvlink':
        return None
    generation = found.name.split('_')[0]
    own = NVLINK_OF_GPU.get(gpu_name) or NVLINK_BRIDGE_OF_GPU.get(gpu_name)
    if own is None:
        return _no_nvlink(value, gpu_name)
    if generation != own:
        return ('--gpu_interconnect=%s: the %s\'s NVLink is %s, not %s; give '
                '--gpu_interconnect=%s%s' % (
                    value, gpu_name, LABELS[own].split(' (')[0], LABELS[generation].split(' (')[0],
                    own, ' (or nvlink)' if gpu_name in NVLINK_OF_GPU else ''))
    return None


def pcie_generation(name: str) -> int:
    """The PCIe generation of the PCIe link `name` ('pcie4' -> 4, 'pcie3_copy' -> 3)."""
    return int(name.split('_')[0][len('pcie'):])


def pcie_conflict(value: str, gpu_name: str) -> str | None:
    """Why the PCIe link `value` (a --gpu_interconnect value: 'pcie4', 'pcie3_copy', ...) cannot
    be planned for GPUs of the table's `gpu_name`, or None when it can (or `value` is no PCIe
    link): its generation is above the GPU's own (gpu_specs `pcie`, from its data sheet,
    `pcie_source`). A card in a faster slot runs at its own generation, so the plan would
    count bytes at a rate the card never reaches; a slower slot is what the card runs at, and
    is planned as given."""
    found = LINKS.get(value.strip().lower())
    if found is None or found.kind != 'pcie':
        return None
    gpu = gpu_specs.lookup(gpu_name)
    if pcie_generation(found.name) <= pcie_generation(gpu.pcie):
        return None
    own, slot = (LABELS[name].split(' x16')[0] for name in (gpu.pcie, found.name.split('_')[0]))
    return ('--gpu_interconnect=%s: the %s\'s host interface is %s (its data sheet), and a %s '
            'slot runs it at %s; give --gpu_interconnect=%s%s' % (
                value, gpu.name, own, slot, own, gpu.pcie,
                '' if gpu.name in NVLINK_OF_GPU else ' (or drop --gpu_interconnect)'))


def gpu_link_conflict(value: str, gpu_name: str) -> str | None:
    """Why the GPU-to-GPU link `value` (a --gpu_interconnect value other than a host preset)
    cannot join GPUs of the table's `gpu_name`, or None: an NVLink it has not
    (`nvlink_conflict`), a PCIe generation above its own (`pcie_conflict`)."""
    return nvlink_conflict(value, gpu_name) or pcie_conflict(value, gpu_name)


def own_gpu_link(gpu) -> str:
    """The link name a GpuSpec's boards talk over by default: an SXM module's NVLink
    (NVLINK_OF_GPU), else its PCIe generation (gpu_specs `pcie`)."""
    return NVLINK_OF_GPU.get(gpu.name) or gpu.pcie


def default_gpu_link_origin(gpu) -> str:
    """Words for where the GPU-to-GPU link planned without --gpu_interconnect comes from (the
    dry run and the plan print them beside the link)."""
    form = SXM_FORM_OF_GPU.get(gpu.name)
    if form:
        return ('the default for the %s, an %s module on an NVLink board (--gpu_interconnect=%s '
                'for PCIe)' % (gpu.name, form, getattr(gpu, 'pcie', None) or 'pcie3'))
    if not peer_to_peer_over_pcie(gpu):
        bridge = NVLINK_BRIDGE_OF_GPU.get(gpu.name)
        return ('the default for the %s, a PCIe card without peer-to-peer%s' % (
            gpu.name, ' (an NVLink bridge: --gpu_interconnect=%s)' % bridge if bridge else ''))
    return 'the default for the %s, a PCIe card: peer-to-peer over its PCIe' % gpu.name


def preset_conflict(preset: HostPreset, gpu) -> str | None:
    """Why the GPU `gpu` (a gpu_specs.GpuSpec) cannot be planned on the host preset `preset`,
    in words naming the host's own GPU and the fix, or None when it can: the preset's own GPU,
    or one with the same NVLink (none, or the same generation: NVLINK_OF_GPU) and the same
    peer-to-peer over PCIe as the preset's GPUs, and a PCIe generation no lower than the host's
    (a host is sold with its GPUs' boards: a T4 card has no NVLink to plug into a DGX-1's, an
    SXM module no PCIe slot; a PCIe 3.0 card in a PCIe 4.0 host runs at PCIe 3.0)."""
    own = gpu_specs.lookup(preset.gpu)
    if gpu.name == own.name:
        return None
    theirs, mine = NVLINK_OF_GPU.get(own.name), NVLINK_OF_GPU.get(gpu.name)
    if theirs and not mine:
        why = 'the %s has no NVLink' % gpu.name
    elif mine and not theirs:
        why = 'the %s is an %s module, made for NVLink boards, not for PCIe slots' % (
            gpu.name, SXM_FORM_OF_GPU[gpu.name])
    elif mine != theirs:
        why = 'the %s\'s NVLink is %s' % (gpu.name, LABELS[mine])
    elif peer_to_peer_over_pcie(gpu) and preset.host_memory:
        why = ('the %s has peer-to-peer over PCIe, the host\'s GPUs none (their bytes go '
               'through host memory)' % gpu.name)
    elif not peer_to_peer_over_pcie(gpu) and not preset.host_memory:
        why = 'the %s has no peer-to-peer over PCIe, the host\'s GPUs have it' % gpu.name
    elif _preset_pcie(preset) > pcie_generation(gpu.pcie):
        why = 'the %s\'s host interface is %s (its data sheet), the host\'s %s' % (
            gpu.name, LABELS[gpu.pcie].split(' x16')[0],
            LABELS['pcie%d' % _preset_pcie(preset)].split(' x16')[0])
    else:
        return None
    host_link = LABELS.get(theirs or preset.gpu_link, preset.gpu_link).split(',')[0]
    own_link = own_gpu_link(gpu)
    return ('--gpu_interconnect=%s is a host of %d %s on %s: %s. Drop --gpu_model to plan the '
            'host\'s %s, or drop --gpu_interconnect to plan the %s on its own link (%s)' % (
                preset.name, preset.gpus, own.name, host_link, why, own.name, gpu.name,
                LABELS.get(own_link, own_link)))


def _preset_pcie(preset: HostPreset) -> int:
    """The highest PCIe generation a host preset plans (its uplink, its GPU link if PCIe)."""
    names = [preset.pcie] + ([preset.gpu_link] if link(preset.gpu_link).kind == 'pcie' else [])
    return max(pcie_generation(name) for name in names)


def check_plan_flags(p) -> None:
    """--interconnect_gbps and --gpu_interconnect name known links (before TensorFlow loads);
    an NVLink --gpu_interconnect with a --gpu_model that has no NVLink (a K80, a T4: 'nvlink'
    by the plan's own rule, `gpu_link_name`, and any generation, `nvlink_conflict`) or another
    generation (nvlink1 for an A100) is refused here, so is a PCIe generation above the
    --gpu_model's own (pcie4 for a T4: `pcie_conflict`), and so is a host preset with a
    --gpu_model its boards cannot hold (`preset_conflict`).

    Raises:
      params.ParamsError: an unknown name or a rate not > 0, naming the flag and what it takes;
        an NVLink link for a --gpu_model without it or of another generation, or a PCIe
        generation above its own, naming the link to give;
        a host preset whose links the --gpu_model cannot have, naming the host's GPU.
    """
    from ..params import flag_error
    _check_link_of_gpu_model(p)
    try:
        if p.interconnect_gbps is not None and p.interconnect_gbps.strip().lower() != 'loopback':
            network(p.interconnect_gbps)
    except UnknownLinkError as e:
        raise flag_error('interconnect_gbps', e) from None
    value = p.gpu_interconnect
    if value is not None and value.strip().lower() not in gpu_link_names():
        raise flag_error('gpu_interconnect', '%s %r; %sgive %s' % (
            'no GPU link:' if value.strip().lower() in LINKS else 'unknown GPU link', value,
            did_you_mean(gpu_link_suggestions(value)), gpu_link_choices()))
    preset = preset_of(p.gpu_interconnect)
    if preset is not None:
        _check_gpus_of_preset(p, preset)
    if preset is not None and p.gpu_model is not None:
        try:
            conflict = preset_conflict(preset, gpu_specs.lookup(p.gpu_model))
        except gpu_specs.UnknownGpuError:
            return  # preflight's check_gpu_model's error
        if conflict:
            from ..params import ParamsError
            raise ParamsError(conflict)


def _check_gpus_of_preset(p, preset: HostPreset) -> None:
    """--num_gpus no more than the GPUs the host preset holds (`HostPreset.gpus`, from its
    source): more GPUs are more hosts, which the plan's multi-host rows and a cluster's
    --worker_hosts plan. CPU towers (--device=cpu) are not the host's GPUs.

    Raises:
      params.ParamsError: --num_gpus above the host's GPUs, naming its count and the fix.
    """
    if p.device == 'cpu' or p.num_gpus <= preset.gpus:
        return
    from ..params import ParamsError
    raise ParamsError(
        '--num_gpus=%d is more GPUs than the host --gpu_interconnect=%s holds (%d %s); give '
        '--num_gpus=%d or fewer, and plan more GPUs as more hosts (--plan_scaling\'s rows plan '
        '2 to 128 hosts of --num_gpus GPUs; a cluster\'s --dry_run, its --worker_hosts)'
        % (p.num_gpus, preset.name, preset.gpus, gpu_specs.lookup(preset.gpu).name,
           preset.gpus))


def _check_link_of_gpu_model(p) -> None:
    """A --gpu_interconnect link against the GPU --gpu_model names, as the plan resolves it
    (speed_model/from_flags.py calls `gpu_link_name` with the same GPU): 'nvlink' needs an SXM
    module's NVLink (`gpu_link_name`), a generation needs the GPU's own (`nvlink_conflict`), a
    PCIe generation no higher than its own (`pcie_conflict`).
    Without --gpu_model the GPU is found later (a host preset, the machine's GPU); an unknown
    --gpu_model is preflight's check_gpu_model's error.

    Raises:
      params.ParamsError: the GPU has no NVLink, or another generation, or a lower PCIe
        generation (the message names the flag and the link to give).
    """
    if p.gpu_interconnect is None or p.gpu_model is None:
        return
    from ..params import ParamsError
    try:
        gpu = gpu_specs.lookup(p.gpu_model)
    except gpu_specs.UnknownGpuError:
        return
    try:
        gpu_link_name(p.gpu_interconnect, gpu.name)
    except UnknownLinkError as e:
        raise ParamsError(str(e)) from None
    conflict = gpu_link_conflict(p.gpu_interconnect, gpu.name)
    if conflict:
        raise ParamsError(conflict)
