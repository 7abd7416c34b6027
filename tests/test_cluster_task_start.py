"""What a cluster task says as it starts, from a user's findings with tasks started from shell
scripts:

* docs/clusters.md said the launcher binds to loopback; TensorFlow's server listens on every
  interface whatever address the cluster names (`*:PORT` in `ss -ltn`), and nothing in
  TensorFlow 2.21 chooses another address: each task now says so in one `note:` line (a
  `warning:` line in a cluster with other addresses).
"""

from __future__ import annotations

import os
import signal

import pytest
from test_distributed import Proc, cluster_args, finish_all, last_line

from tf_cnn_benchmarks.cluster import topology

from helpers import free_port


def _listening_addresses(port: int) -> set[str]:
    """The local addresses (hex, as /proc/net/tcp and tcp6 write them) of the sockets that
    listen on `port` on this host."""
    found = set()
    for table in ('/proc/net/tcp', '/proc/net/tcp6'):
        if not os.path.exists(table):
            continue
        with open(table) as f:
            for line in f.read().splitlines()[1:]:
                fields = line.split()
                address, hex_port = fields[1].split(':')
                if fields[3] == '0A' and int(hex_port, 16) == port:  # 0A: LISTEN
                    found.add(address)
    return found


@pytest.mark.cluster
@pytest.mark.skipif(not os.path.exists('/proc/net/tcp'), reason='reads Linux /proc/net/tcp')
def test_a_ps_task_says_that_its_port_is_open_on_every_interface(tmp_path):
    """One ps task of distributed_replicated for 2 workers of 2 CPU towers, given 127.0.0.1,
    serves until SIGTERM: its socket listens on the wildcard address (all zeros), not on
    127.0.0.1 (0100007F), and the task says so."""
    port = free_port()
    ps, workers = ['127.0.0.1:%d' % port], ['127.0.0.1:%d' % free_port() for _ in range(2)]
    proc = Proc('ps0', cluster_args('ps', 0, ps, workers, mode='distributed_replicated',
                                    timeout=120, extra=['--device=cpu', '--num_gpus=2']),
                tmp_path)
    try:
        proc.wait_for(r'^Serving ps 0', timeout=120)
        listening = _listening_addresses(port)
    finally:
        proc.proc.send_signal(signal.SIGTERM)
        result = finish_all([proc])[0]
    assert listening and all(set(address) == {'0'} for address in listening), listening
    notes = [line for line in result['log'].splitlines() if line.startswith('note: ')]
    assert notes == [
        "note: ps 0 (127.0.0.1:%d) listens on port %d of every interface of this host, not "
        "only loopback: TensorFlow's gRPC server binds all addresses (IPv4 and IPv6) whatever "
        "host the cluster names, and has no authentication (whoever reaches the port can run "
        "graph ops, read and write files); on a shared network, firewall the port"
        % (port, port)], result['log'][-3000:]
    assert result['code'] == 143 and last_line(result).startswith('Stopped by SIGTERM'), (
        result['log'][-3000:])


def test_a_cluster_with_other_addresses_says_it_in_its_warning_instead():
    note = topology.exposure_line(['localhost:1', '127.0.0.1:2'], 'ps 0 (localhost:1)',
                                  'localhost:1')
    assert note[0] == 'note' and note[1].startswith(
        'ps 0 (localhost:1) listens on port 1 of every interface of this host, not only '
        'loopback: ')
    kind, text = topology.exposure_line(['10.0.0.1:2222', 'localhost:1'], 'ps 0 (10.0.0.1:2222)',
                                        '10.0.0.1:2222')
    assert kind == 'warning' and '\n' not in text
    assert 'listen on every interface of their host, whatever address the cluster names' in text
