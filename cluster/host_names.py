"""Whether the host names of a cluster resolve, checked once as a task starts.

A name that does not resolve (`--ps_hosts=nosuchhost.invalid:2222`, a Slurm node list of
names this host cannot look up) used to be met only by the wait for the peers: the task
waited the whole --startup_timeout_secs, then said `ps 0 (...) unreachable`. Each distinct
host name of the cluster is now looked up once with `socket.getaddrinfo` before TensorFlow
loads, by the command (preflight/usage.check_usage; not --dry_run or --plan_scaling, nor a
library caller, which may build a cluster task's graph for hosts that are elsewhere), the
task's own name included (its peers dial it by that name), in parallel, so a cluster of many
nodes costs about one lookup's time:

  * the name does not exist (EAI_NONAME, EAI_NODATA, EAI_FAIL): with the host flags or
    Slurm, a usage error naming the names and the flag or variable they came from
    (`check`); a name that resolves but whose task is down is waited for as before;
  * the lookup could not be made (EAI_AGAIN: no name server answered, a temporary failure):
    not judged; the task waits as before;
  * TF_CONFIG: one warning line only. On Kubernetes a peer's name is its pod's service, and
    a headless service's name resolves once its pod is running (kubernetes/kubernetes issue
    117819): a TFJob's tasks start before their peers' names exist, and TensorFlow's gRPC
    looks them up again until --startup_timeout_secs runs out.

IP addresses (`10.0.0.1`, `[::1]`) are not looked up.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import threading
import time

from .. import cnn_util
from ..params import ParamsError
from . import slurm_nodes

#: getaddrinfo's answers that say the name does not exist (not a failure to ask).
NO_SUCH_NAME = {getattr(socket, n) for n in ('EAI_NONAME', 'EAI_NODATA', 'EAI_FAIL')
                if hasattr(socket, n)}
#: How long the start-up waits for the name server (seconds): a name not answered by then is
#: not judged (as a temporary failure), so a slow resolver never holds a run silently.
LOOKUP_WAIT_SECS = 2.0


def _host(address: str) -> str:
    """'host:port' or '[v6]:port' -> host."""
    return address.rpartition(':')[0].strip('[]')


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _lookup(host: str) -> str | None:
    """Why `host` does not exist as a name (getaddrinfo's words), or None: it resolves, or
    the lookup could not be made (a temporary failure is not judged)."""
    try:
        socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except socket.gaierror as e:
        return e.strerror or str(e) if e.errno in NO_SUCH_NAME else None
    except (OSError, UnicodeError) as e:  # a name too long for the resolver (idna)
        return str(e)
    return None


def unresolved(hosts, lookup=_lookup, wait_secs: float = LOOKUP_WAIT_SECS) -> dict[str, str]:
    """{host name: why} for the names among `hosts` that do not resolve, in their order.

    Each name is looked up in a daemon thread of its own, all at once; a name without an
    answer within `wait_secs` (seconds, for all of them) is not judged.

    Args:
      hosts: host names (no ports); IP addresses and repeats are skipped.
      lookup: host -> why it does not resolve, or None (a test seam; default getaddrinfo).
      wait_secs: the longest wait for the answers.
    """
    names = list(dict.fromkeys(h for h in hosts if h and not _is_ip(h)))
    answers: dict[str, str | None] = {}

    def ask(name):
        answers[name] = lookup(name)

    threads = [threading.Thread(target=ask, args=(name,), daemon=True) for name in names]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + wait_secs
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    return {name: answers[name] for name in names if answers.get(name)}


def _origins(p) -> list[tuple[str, list[str]]]:
    """[(where the names came from, their host names)] of a resolved cluster task."""
    if p.cluster_resolver == 'slurm':
        nodelist = os.environ.get('SLURM_STEP_NODELIST', '')
        hosts = [_host(a) for a in list(p.ps_hosts) + list(p.worker_hosts)]
        return [('SLURM_STEP_NODELIST=%s' % nodelist, hosts)]
    if p.cluster_resolver == 'tf_config':
        return [("TF_CONFIG's cluster", [_host(a) for a in list(p.ps_hosts)
                                         + list(p.worker_hosts)])]
    origins = [('--ps_hosts', [_host(a) for a in p.ps_hosts]),
               ('--worker_hosts', [_host(a) for a in p.worker_hosts])]
    if p.controller_host:
        origins.append(('--controller_host', [_host(p.controller_host)]))
    return origins


def _names(found: dict[str, str]) -> str:
    """'node01, node02 (Name or service not known)': the names grouped by their reason."""
    reasons: dict[str, list[str]] = {}
    for name, why in found.items():
        reasons.setdefault(why, []).append(name)
    return '; '.join('%s (%s)' % (', '.join(names), why) for why, names in reasons.items())


def check(p, lookup=_lookup, automatic: bool = False) -> None:
    """Looks up every host name of a cluster task's Params once (module docstring).

    Args:
      p: resolved Params (cluster/resolvers.resolve); a local run (no --job_name) is not
        checked.
      lookup: as `unresolved`.
      automatic: --cluster_resolver=auto chose the source (Resolution.automatic): a Slurm
        cluster's error then says it came from the Slurm variables, and that
        --cluster_resolver=flags runs without one (a local run where a Slurm step's variables
        leaked in: its node names resolve nowhere but in that step).

    Raises:
      ParamsError: with the host flags or Slurm, a name that does not exist, naming it and
        the flag or variable it came from. TF_CONFIG's: one warning line instead.
    """
    if not p.job_name:
        return
    origins = _origins(p)
    found = unresolved([h for _, hosts in origins for h in hosts], lookup)
    if not found:
        return
    if p.cluster_resolver == 'tf_config':
        cnn_util.warn("TF_CONFIG's cluster names host(s) that do not resolve yet: %s; on "
                      "Kubernetes a peer's name resolves once its pod runs, so they are "
                      'waited for up to --startup_timeout_secs=%g; else fix TF_CONFIG'
                      % (_names(found), p.startup_timeout_secs))
        return
    where = [origin for origin, hosts in origins if any(h in found for h in hosts)]
    fix = ('fix the node names, or the name service of this host (DNS, /etc/hosts)'
           if p.cluster_resolver == 'slurm' else
           'fix the name, or give an IP address or a name in DNS or /etc/hosts')
    if automatic and p.cluster_resolver == 'slurm':
        fix = '%s; in a Slurm step, %s' % (slurm_nodes.auto_slurm_fix(), fix)
    raise ParamsError('%s: %s %s not resolve on this host; %s.'
                      % (' and '.join(where), _names(found),
                         'does' if len(found) == 1 else 'do', fix))
