"""The dry run's batch search on the CPU against one reading of the host's memory
(preflight/dry_run.py, memory_estimate.HostMemory).

Under an address-space limit (`prlimit --as`) what a run may use is the limit less what the
process maps, and the dry run maps more with every graph it builds. It read the host again at
every batch it tried: resnet50 with real data under a 4 GB limit was found to fit 2 per device
(the next time: none), where the run itself works with 6 and its own memory check refuses 7.
The measurements are injected here: each build maps 300 MiB, the step's estimate is linear in
the batch.
"""

from __future__ import annotations

import pytest
import tensorflow as tf

from tf_cnn_benchmarks import benchmark_cnn
from tf_cnn_benchmarks.params import make_params
from tf_cnn_benchmarks.preflight import dry_run, memory_estimate, planned_step

MIB = 1 << 20
GIB = 1 << 30
LIMIT_LEFT = 2 * GIB  # the address-space limit less what the process maps after its build
VARIABLES = 100 * MIB
PER_IMAGE = 130 * MIB  # usable after the build: 0.9 x (2 GiB - 1 GiB) = 921.6 MiB: fits 6


def _make_bench(q, gpus):
    return benchmark_cnn.BenchmarkCNN(q, gpus=gpus)


@pytest.fixture
def growing_process(monkeypatch):
    """Each graph build of the search maps 300 MiB more (its builds' batches are listed)."""
    mapped, tried = [0], []
    monkeypatch.setattr(memory_estimate, 'host_available_bytes',
                        lambda: (LIMIT_LEFT - mapped[0], 'RLIMIT_AS'))

    def build_step(make_bench, p, gpus, *, batch_size=None, **changes):
        mapped[0] += 300 * MIB
        tried.append(batch_size)
        graph = tf.Graph()
        graph.batch = batch_size
        return planned_step.StepAt(None, planned_step.Built(graph, [], 0, 0))

    def estimate_peaks(graph, fetches, gpu=None, host_memory=None):
        batch = getattr(graph, 'batch', 64)  # the run's own step: batch 64
        activations = batch * PER_IMAGE
        return {'/CPU:0': memory_estimate.DevicePeak(activations, VARIABLES,
                                                     activations + VARIABLES)}
    monkeypatch.setattr(dry_run, 'build_step', build_step)
    monkeypatch.setattr(memory_estimate, 'estimate_peaks', estimate_peaks)
    monkeypatch.setattr(dry_run, 'MAX_SEARCH_SECS', 3600.0)  # its builds, not 60 s of a host
    return tried


def test_every_batch_tried_is_checked_against_the_memory_read_after_the_build(
        growing_process, capsys):
    p = make_params(model='trivial', image_size=16, batch_size=64, device='cpu', dry_run=True)
    with pytest.raises(dry_run.DryRunFailed) as e:
        dry_run.run(_make_bench, p, 0)
    out = capsys.readouterr().out
    usable = int((LIMIT_LEFT - GIB) * 0.9)
    assert '  host       8.22 GiB of 921.6 MiB usable (90% of 2.00 GiB available (RLIMIT_AS) ' \
        'less 1.00 GiB): DOES NOT FIT' in out, out
    assert (VARIABLES + 6 * PER_IMAGE <= usable < VARIABLES + 7 * PER_IMAGE)
    (line,) = [x for x in out.splitlines() if x.startswith('Largest batch per device')]
    assert line.startswith('Largest batch per device that fits host: 6 (7 does not) ('), line
    assert 6 in growing_process and 7 in growing_process
    assert str(e.value).endswith('; a batch that fits: --batch_size=6')


def test_a_reading_is_one_figure_and_its_words(monkeypatch):
    host = memory_estimate.HostMemory(2 * GIB, 'RLIMIT_AS')
    assert host.usable == int(0.9 * GIB) and host.overhead == GIB
    assert host.words() == '90% of 2.00 GiB available (RLIMIT_AS) less 1.00 GiB'
    monkeypatch.setattr(memory_estimate, 'host_available_bytes', lambda: (1, 'RLIMIT_AS'))
    assert memory_estimate.device_memory('/CPU:0', host=host) == host.usable
    assert memory_estimate.device_memory('/CPU:0') == 0  # read now: nothing left
    peaks = {'/CPU:0': memory_estimate.DevicePeak(1, 2, 3),
             '/job:ps/task:0/CPU:0': memory_estimate.DevicePeak(0, 5, 5)}
    fits = dry_run.device_fits(peaks, None, host)
    assert fits == {'host': (3, host.usable), '/job:ps/task:0': (5, host.usable)}
