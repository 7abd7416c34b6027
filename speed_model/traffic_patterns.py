"""Which links a step's bytes cross, and how many, for each --variable_update at any scale.

The dry run counts the copies of the step it builds (preflight/step_traffic.py): one model of
variables read and one of gradients sent per tower with parameter_server, two models per tower
between the GPUs with replicated, one model each way between a worker and the ps tasks in a
cluster. This module states the same patterns as formulas of the cluster's shape, so that the
step-time model (speed_model/step_time.py) can plan 1 to 1,024 GPUs from one build; tests check
the formulas against the counted copies of built graphs (tests/test_scaling_plan.py).

The patterns follow this project's variable managers (variable_managers/: one_host.py,
distributed.py, allreduce.py), M the model's bytes, g its gradients' bytes, G GPUs per host,
H worker hosts, P ps tasks, s_k the bytes placed on ps k (greedy by size in creation order,
as PsPlacer does):

  * parameter_server, one host: each tower reads M from the parameter device and sends g to it
    (over PCIe from the CPU, or between the GPUs that hold the variables with
    --local_parameter_device=gpu);
  * replicated: the all-reduce of g over the G GPUs, per gradient tensor: the default sums on
    GPU 0 ((G-1) g in and out of GPU 0), psgpu on the least loaded GPU, pscpu on the CPU (g up
    and down each GPU's PCIe link), xring and nccl 2 (G-1) / G g per GPU each way (a ring:
    NCCL's documentation, nccl-tests "Performance": busbw = algbw x 2(n-1)/n). GPUs without
    peer-to-peer (GeForce boards) pass the 2 (G-1) g all GPUs send through host memory, each
    byte written and read once (4 (G-1) g of the host memory's bandwidth), besides each GPU's
    PCIe link. NCCL's all-reduce starts when the backward pass has ended (an `after` block):
    TensorFlow's NCCL manager (tensorflow/core/nccl/nccl_manager.cc) makes NCCL's stream wait
    for everything queued so far on the compute stream of the gradient's GPU
    (`nccl_stream->ThenWaitFor(tensor_stream)`) and queues one collective at a time; the
    executor queues the backward pass's kernels ahead of the GPU, so the wait covers the rest
    of the backward pass (an assumption from that code, in the original's TF 1.x as in 2.x);
    the other algorithms' copies wait only for their own tensor (TensorFlow's copies between
    devices wait on an event of the producing kernel) and overlap layer by layer;
  * parameter_server, cluster: each worker reads M from the ps tasks onto its CPU, copies it to
    its towers, sums their gradients on its CPU and sends g: per worker host M in and g out of
    its network link, per ps k H s_k out and in;
  * distributed_replicated: the same bytes, but the masters are read after the step's update
    (after the barrier of sync mode), so the read overlaps no compute;
  * collective_all_reduce: the towers' sum on the worker's CPU, then one packed ring
    all-reduce of g across the H workers, 2 (H-1) / H g each way per host, then g down to each
    tower;
  * distributed_all_reduce: the spec over all H x G devices (default pscpu/pscpu: each host
    sums on its CPU, worker 0's CPU sums the hosts' totals, (H-1) g in, and sends the total to
    every other GPU, (H-1) G g out);
  * independent: nothing.

A link shared by several transfers (a PCIe uplink behind which two GPUs sit, a host running a
worker and a ps task) carries their sum; the busiest instance of each kind of link is the one
planned. Ps tasks run on the worker hosts when `ps_on_workers` (the original's published EC2
runs did), else on hosts of their own.
"""

from __future__ import annotations

import functools
import heapq
from typing import NamedTuple

from ..variable_managers import allreduce_spec

#: The variable managers this module plans; the cluster ones need hosts of their own.
LOCAL_MODES = ('parameter_server', 'replicated', 'independent')
CLUSTER_MODES = ('parameter_server', 'distributed_replicated', 'collective_all_reduce',
                 'distributed_all_reduce')
#: The cluster form a single-host manager takes beyond one host (the original's published
#: multi-host runs used distributed_replicated where one host used replicated).
CLUSTER_FORM = {'parameter_server': 'parameter_server', 'replicated': 'distributed_replicated',
                'independent': 'independent'}
DEFAULT_DISTRIBUTED_SPEC = 'pscpu/pscpu'
#: Gradient bytes / variable bytes of float32 gradients all-reduced as float16
#: (--compact_gradient_transfer: `gradient_ratio_of`).
COMPACT_RATIO = 0.5


class Links(NamedTuple):
    """The hardware a step's bytes cross (hardware/links.py Links; None: not crossed).

    pcie: host <-> GPU (None for CPU towers); gpus_per_pcie_uplink: GPUs sharing one uplink;
    gpu_link: GPU <-> GPU inside a host; network: each host's link to the others; intra_host:
    between two tasks on one host (None: free); host_memory: the host memory the GPUs'
    bytes to each other pass through when they have no peer-to-peer (GeForce boards:
    hardware/links.py peer_to_peer_over_pcie; None: peer-to-peer, over NVLink or PCIe);
    ring_through_host: a ring all-reduce (nccl, xring) has hops between GPUs without a
    peer-to-peer path, whose bytes go through host memory over the two GPUs' PCIe links (an
    NVLink ring that leaves the NVLink mesh: published_scaling.ring_leaves_nvlink)."""
    pcie: object
    gpus_per_pcie_uplink: int
    gpu_link: object
    network: object
    intra_host: object = None
    host_memory: object = None
    ring_through_host: bool = False


class Topology(NamedTuple):
    """The cluster's shape and its variable manager.

    variable_update: a --variable_update value; all_reduce: the --all_reduce_spec ('' for the
    default; 'nccl' for --use_nccl); local_parameter_device: 'cpu' or 'gpu'; gpus_per_host:
    towers per worker; hosts: worker hosts (each one worker task); num_ps: ps tasks;
    ps_on_workers: ps task k runs on worker host k; gradient_repacking: gradients packed before
    the all-reduce (no overlap with the backward pass); forward_only: no gradients."""
    variable_update: str
    gpus_per_host: int
    hosts: int = 1
    num_ps: int = 0
    ps_on_workers: bool = True
    all_reduce: str = ''
    local_parameter_device: str = 'cpu'
    gradient_repacking: bool = False
    forward_only: bool = False

    @property
    def devices(self) -> int:
        return self.gpus_per_host * self.hosts


class Stage(NamedTuple):
    """Bytes per step on the busiest instance of one kind of link, in one direction.

    resource: 'pcie', 'gpu_link', 'host_memory', 'network', 'ps_link' or 'intra_host'; link:
    its Link."""
    resource: str
    bytes: float
    link: object

    @property
    def secs(self) -> float:
        return self.bytes / self.link.bytes_per_sec if self.bytes else 0.0


class Phases(NamedTuple):
    """A step's traffic by when it can move.

    read: stages of the variables read before the forward pass uses them (layer by layer);
    grad: stages of the gradients sent as the backward pass makes them (layer by layer);
    after: blocks that start when the backward pass ended, one after the other, each a tuple
    of stages moving together (packed all-reduces, distributed_replicated's read of the
    masters); background: bytes that overlap the whole step (input batches)."""
    read: tuple
    grad: tuple
    after: tuple
    background: tuple


class UnplannableError(ValueError):
    """A configuration the step-time model does not plan (the message names it)."""


def shard_loads(layer_bytes, shards: int) -> list[int]:
    """Bytes per shard when each variable, in creation order, goes to the least loaded shard
    (ties: the lowest index): variable_managers/distributed.PsPlacer's and psgpu's placement."""
    return list(_shard_loads(tuple(layer_bytes), max(1, shards)))


@functools.lru_cache(maxsize=256)
def _shard_loads(layer_bytes: tuple, shards: int) -> tuple:
    heap = [(0, k) for k in range(shards)]  # (load, index): the least loaded, lowest index
    for size in layer_bytes:
        load, k = heapq.heappop(heap)
        heapq.heappush(heap, (load + size, k))
    loads = [0] * shards
    for load, k in heap:
        loads[k] = load
    return tuple(loads)


def _stages(links: Links, **bytes_by_resource) -> tuple:
    """Stages of the nonzero bytes ({resource: bytes}); the link of each resource from links."""
    out = []
    for resource, size in bytes_by_resource.items():
        if not size:
            continue
        link = {'pcie': links.pcie, 'gpu_link': links.gpu_link or links.pcie,
                'network': links.network, 'ps_link': links.network,
                'intra_host': links.intra_host, 'host_memory': links.host_memory}[resource]
        if link is None:
            continue  # not crossed (CPU towers: no PCIe; tasks of one host: free)
        out.append(Stage(resource, float(size), link))
    return tuple(out)


def _uplink(links: Links, topo: Topology) -> int:
    """GPUs whose host traffic shares one PCIe uplink."""
    return max(1, min(links.gpus_per_pcie_uplink, topo.gpus_per_host))


def _through_host_memory(links: Links, gpus: int, size: float) -> dict:
    """{'host_memory': bytes} when GPUs without peer-to-peer move `size` to each other in all
    (the sum of what every GPU sends): each byte is written to host memory by its sender and
    read from it by its receiver, 2 x size of the host memory's bandwidth; {} with
    peer-to-peer."""
    if links.host_memory is None or gpus <= 1 or not size:
        return {}
    return {'host_memory': 2 * size}


def _intra_host_all_reduce(alg: str, g: float, gpus: int, layer_bytes, links: Links,
                           topo: Topology) -> dict:
    """{resource: bytes} of one host's all-reduce of g over `gpus` GPUs with `alg`.

    Every algorithm between the GPUs (rings, the default's sum on GPU 0, psgpu's shards) has
    the GPUs send 2 (n - 1) g in all; without peer-to-peer that passes through host memory."""
    if gpus <= 1:
        return {}
    n = gpus
    if alg == 'pscpu':
        return {'pcie': _uplink(links, topo) * g}
    if alg in ('xring', 'nccl'):
        out = {'gpu_link': 2 * (n - 1) / n * g}
        if links.ring_through_host:  # every hop carries the ring's bytes: so do those via PCIe
            out['pcie'] = 2 * (n - 1) / n * g
    elif alg == 'psgpu':
        scale = g / max(1, sum(layer_bytes))
        busiest = max(shard_loads(layer_bytes, n)) * scale
        out = {'gpu_link': (n - 2) * busiest + g}
    else:
        out = {'gpu_link': (n - 1) * g}  # default: sum on GPU 0, copied back
    out.update(_through_host_memory(links, n, 2 * (n - 1) * g))
    return out


def _replicated(topo, links, layer_bytes, g) -> Phases:
    alg = topo.all_reduce
    outer = ''
    if '/' in alg:
        alg, _, outer = alg.partition('/')
    if outer:  # two groups: the halves of the GPUs
        half = max(1, topo.gpus_per_host // 2)
        inner = _intra_host_all_reduce(alg, g, half, layer_bytes, links, topo)
        across = _intra_host_all_reduce(outer, g, 2 if topo.gpus_per_host > 1 else 1,
                                        layer_bytes, links, topo)
        total = {k: inner.get(k, 0) + across.get(k, 0) + (g if k == 'gpu_link' else 0)
                 for k in sorted(set(inner) | set(across))}
    else:
        total = _intra_host_all_reduce(alg, g, topo.gpus_per_host, layer_bytes, links, topo)
    stages = _stages(links, **total)
    if topo.gradient_repacking or alg == 'nccl':
        return Phases((), (), (stages,) if stages else (), ())
    return Phases((), stages, (), ())


def _local_parameter_server(topo, links, layer_bytes, m, g) -> Phases:
    n = topo.gpus_per_host
    if topo.local_parameter_device == 'gpu':
        if n <= 1:
            return Phases((), (), (), ())
        loads = shard_loads(layer_bytes, n)
        # Reads: GPU k serves (n-1) s_k and reads m - s_k; gradients the other way round.
        busiest = max(max((n - 1) * s, m - s) for s in loads)
        scale = g / max(1.0, m)
        return Phases(_stages(links, gpu_link=busiest,
                              **_through_host_memory(links, n, (n - 1) * m)),
                      _stages(links, gpu_link=busiest * scale,
                              **_through_host_memory(links, n, (n - 1) * g)), (), ())
    up = _uplink(links, topo)
    return Phases(_stages(links, pcie=up * m), _stages(links, pcie=up * g), (), ())


def _ps_network(topo, layer_bytes, size: float) -> dict:
    """{resource: bytes} of `size` (M or g) between every worker and the ps tasks, one
    direction, on the busiest worker link and the busiest ps link."""
    h, p = topo.hosts, max(1, topo.num_ps)
    m = max(1, sum(layer_bytes))
    shares = [s * size / m for s in shard_loads(layer_bytes, p)]
    if not topo.ps_on_workers:
        return {'network': size, 'ps_link': h * max(shares)}
    # ps k on host k: what stays on the host is no network traffic.
    worker_side = max([size - s for s in shares] + ([size] if h > p else []))
    ps_side = max((h - 1) * s for s in shares)
    local = max(shares)  # the share a host sends to its own ps task
    return {'network': worker_side, 'ps_link': ps_side, 'intra_host': local}


def _cluster_ps(topo, links, layer_bytes, m, g, after_read: bool) -> Phases:
    up = _uplink(links, topo)
    read = _ps_network(topo, layer_bytes, m)
    read['pcie'] = up * m
    grad = _ps_network(topo, layer_bytes, g)
    grad['pcie'] = up * g
    read_stages, grad_stages = _stages(links, **read), _stages(links, **grad)
    if after_read:  # distributed_replicated: the masters are read after the update
        return Phases((), grad_stages, (read_stages,) if read_stages else (), ())
    return Phases(read_stages, grad_stages, (), ())


def _collective(topo, links, g) -> Phases:
    up = _uplink(links, topo)
    h = topo.hosts
    ring = _stages(links, network=2 * (h - 1) / h * g if h > 1 else 0)
    down = _stages(links, pcie=up * g if topo.gpus_per_host > 1 or links.pcie else 0)
    return Phases((), _stages(links, pcie=up * g), tuple(b for b in (ring, down) if b), ())


def _distributed_all_reduce(topo, links, layer_bytes, g) -> Phases:
    spec = topo.all_reduce or DEFAULT_DISTRIBUTED_SPEC
    inner, _, outer = spec.partition('/')
    h, n_gpu = topo.hosts, topo.gpus_per_host
    up = _uplink(links, topo)
    total: dict = {}
    if not outer:  # one algorithm over all H x G devices
        n = h * n_gpu
        if inner in ('xring', 'nccl'):
            share = 2 * (n - 1) / n * g if n > 1 else 0
            total = {'gpu_link': share, 'network': share if h > 1 else 0,
                     'pcie': share if h > 1 else 0}
        elif inner == 'pscpu':  # every device to worker 0's CPU and back
            total = {'pcie': up * g, 'network': (h - 1) * n_gpu * g}
        else:  # psgpu over all devices: the busiest device's host link
            busiest = max(shard_loads(layer_bytes, n)) * g / max(1, sum(layer_bytes))
            total = {'gpu_link': (n - 2) * busiest + g, 'network': (n - 1) * busiest + g,
                     'pcie': (n - 1) * busiest + g}
        stages = _stages(links, **total)
    else:
        within = _intra_host_all_reduce(inner, g, n_gpu, layer_bytes, links, topo)
        if inner in ('pscpu',):
            within = {'pcie': up * g}
        if outer == 'pscpu':  # totals to worker 0's CPU, then to every device of the others
            across = {'network': (h - 1) * n_gpu * g if h > 1 else 0,
                      'pcie': up * g}
        elif outer in ('xring', 'nccl'):
            across = {'network': 2 * (h - 1) / h * g if h > 1 else 0}
        else:
            across = {'network': (h - 1) * g}
        total = {k: max(within.get(k, 0), across.get(k, 0))
                 for k in sorted(set(within) | set(across))}
        stages = _stages(links, **total)
    if topo.gradient_repacking:
        return Phases((), (), (stages,) if stages else (), ())
    return Phases((), stages, (), ())


def gradient_ratio_of(topo: Topology, compact: bool) -> float:
    """Gradient bytes / variable bytes of what a step of `topo` moves: COMPACT_RATIO where
    `compact` (a --use_fp16 run's float32 gradients with --compact_gradient_transfer, the
    original's default: from_flags.compacts_gradients) and `topo` is one host's replicated
    all-reduce over more than one GPU, the only manager that casts them to float16 for the
    transfer (variable_managers/grad_transfer.py, as the original's local replicated manager);
    else 1.0 (every other manager moves the float32 gradients; float16 variables' gradients are
    float16 already, and their profile counts 2 bytes a value)."""
    if (compact and topo.variable_update == 'replicated' and topo.hosts == 1
            and topo.devices > 1 and not topo.forward_only):
        return COMPACT_RATIO
    return 1.0


def phases(topo: Topology, links: Links, layer_bytes, *, gradient_ratio: float = 1.0,
           batch_bytes: int = 0) -> Phases:
    """The traffic of one step of `topo` over `links`.

    Args:
      topo: the cluster's shape and variable manager.
      links: the hardware.
      layer_bytes: each trainable variable's bytes, in creation order (speed_model/
        layer_profile.py).
      gradient_ratio: gradient bytes / variable bytes (1 for float32 gradients of float32
        variables; `gradient_ratio_of(topo, compact)` for a run's flags).
      batch_bytes: one tower's input batch copied from the host per step (real data), bytes.

    Returns:
      Phases (see its docstring).

    Raises:
      UnplannableError: a manager this module does not know, a cluster manager on no ps where
        it needs one, or an all-reduce spec it cannot read.
    """
    m = float(sum(layer_bytes))
    g = 0.0 if topo.forward_only else m * gradient_ratio
    mode = topo.variable_update
    if topo.all_reduce:
        try:
            allreduce_spec.parse_all_reduce_spec(topo.all_reduce)
        except ValueError as e:
            raise UnplannableError(str(e)) from None
    if mode in ('parameter_server', 'distributed_replicated') and topo.hosts > 1 \
            and topo.num_ps < 1:
        raise UnplannableError('--variable_update=%s across hosts needs a ps task' % mode)
    if mode == 'independent':
        out = Phases((), (), (), ())
    elif mode == 'replicated':
        out = _replicated(topo, links, layer_bytes, g)
    elif mode == 'parameter_server' and topo.hosts == 1 and topo.num_ps == 0:
        out = _local_parameter_server(topo, links, layer_bytes, m, g)
    elif mode in ('parameter_server', 'distributed_replicated'):
        out = _cluster_ps(topo._replace(num_ps=max(1, topo.num_ps)), links, layer_bytes, m, g,
                          after_read=mode == 'distributed_replicated')
    elif mode == 'collective_all_reduce':
        out = _collective(topo, links, g)
    elif mode == 'distributed_all_reduce':
        out = _distributed_all_reduce(topo, links, layer_bytes, g)
    else:
        raise UnplannableError('no traffic pattern for --variable_update=%r; planned: %s' % (
            mode, ', '.join(sorted(set(LOCAL_MODES) | set(CLUSTER_MODES)))))
    if batch_bytes and links.pcie is not None:
        out = out._replace(background=_stages(links, pcie=_uplink(links, topo) * batch_bytes))
    if topo.forward_only:  # no gradients: only the variables' reads remain
        out = out._replace(grad=(), after=())
    return out


def expected_counts(topo: Topology, model_bytes: float, gradient_bytes: float) -> dict | None:
    """{direction: bytes} the dry run counts (preflight/step_traffic.py) in the graph of one task
    of `topo` with GPU towers: a single-host run, a cluster's worker 0, or the controller of
    distributed_all_reduce; directions with no bytes are left out; None where no pattern of
    copies is modelled for that shape (`uncounted_reason` says why).

    The dry run counts a copy between two tasks as host->host whether or not they share a host,
    and an NCCL all-reduce as the ring's bytes every GPU sends (2 (n-1) / n g each, 2 (n-1) g
    in all: preflight/step_traffic.py). A forward-only step has no gradients: its copies are
    the variables' reads (none after an update that does not happen: distributed_replicated).
    A two-level spec on one host of two GPUs ('pscpu/pscpu': groups of one GPU) moves the
    bytes of its outer level between the two, as the plan does (`_replicated`).
    """
    n, m = topo.gpus_per_host, model_bytes
    g = 0.0 if topo.forward_only else gradient_bytes
    if topo.forward_only and topo.variable_update in (
            'replicated', 'independent', 'distributed_replicated', 'collective_all_reduce',
            'distributed_all_reduce'):
        return {}
    found = _expected(topo, n, m, g)
    return None if found is None else {way: size for way, size in found.items() if size}


def _level_counts(alg: str, gpus: int, g: float) -> dict:
    """The counted bytes of one all-reduce of g over `gpus` GPUs by `alg`: pscpu through the
    host, any other between the GPUs."""
    if gpus <= 1:
        return {}
    if alg.split('#')[0] == 'pscpu':
        return {'host->GPU': gpus * g, 'GPU->host': gpus * g}
    return {'GPU->GPU': 2 * (gpus - 1) * g}


def _expected(topo: Topology, n: int, m: float, g: float) -> dict | None:
    mode, alg = topo.variable_update, topo.all_reduce
    if ':' in alg:
        return None
    if mode == 'replicated' and topo.hosts == 1 and '/' in alg:
        return _level_counts(alg.partition('/')[2], 2, g) if n == 2 else None
    if mode == 'replicated' and alg == 'nccl' and topo.hosts == 1:
        return {'GPU->GPU': 2 * (n - 1) * g} if n > 1 else {}
    if alg == 'nccl' or ('/' in alg and alg != DEFAULT_DISTRIBUTED_SPEC):
        return None
    if mode == 'independent':
        return {}
    if mode == 'parameter_server' and topo.hosts == 1 and topo.num_ps == 0:
        if topo.local_parameter_device == 'gpu':
            return {'GPU->GPU': (n - 1) * (m + g)} if n > 1 else {}
        return {'host->GPU': n * m, 'GPU->host': n * g}
    if mode == 'replicated':
        return _level_counts(alg, n, g)
    if mode in ('parameter_server', 'distributed_replicated'):
        return {'host->GPU': n * m, 'GPU->host': n * g, 'host->host': m + g}
    if mode == 'collective_all_reduce':
        return {'host->GPU': n * g, 'GPU->host': n * g}
    if mode == 'distributed_all_reduce' and alg in ('', DEFAULT_DISTRIBUTED_SPEC) \
            and topo.hosts > 1:
        devices = n * topo.hosts
        return {'host->GPU': devices * g, 'GPU->host': devices * g,
                'host->host': (topo.hosts - 1) * g}
    return None


def uncounted_reason(topo: Topology) -> str:
    """Why `expected_counts` models no copies for `topo` (where it returns None), in words."""
    alg = topo.all_reduce
    if ':' in alg:
        return ('--all_reduce_spec=%s sends tensors of different sizes different ways; its '
                'copies are not modelled one by one' % alg)
    if '/' in alg:
        return ('the two-level --all_reduce_spec=%s over %d GPUs per host is not modelled copy '
                'by copy' % (alg, topo.gpus_per_host))
    if alg == 'nccl':
        return ('NCCL\'s all-reduce in a %s task is not modelled copy by copy'
                % topo.variable_update)
    return 'no pattern of copies is modelled for --variable_update=%s in that shape' % (
        topo.variable_update)
