"""The known names closest to an unknown one, for the "did you mean" of a usage error: the
values of --gpu_interconnect and --interconnect_gbps (hardware/links.py); the GPU table ranks
its names its own way (hardware/gpu_specs.py `suggestions`) and words them with `did_you_mean`.

No TensorFlow: the command's flag checks use it before TensorFlow loads.
"""

from __future__ import annotations

import difflib

#: How alike a typed name and a known one must be to be suggested (difflib's ratio; the cutoff
#: of the unknown --model and --gpu_model messages, models/model_catalog.py).
SUGGEST_CUTOFF = 0.6


def _plain(name: str) -> str:
    """'EC2_p2.8xlarge', 'dgx-2' -> 'ec2p28xlarge', 'dgx2': a name as it is compared."""
    return ''.join(c for c in name.lower() if c.isalnum())


def suggestions(name: str, choices, also: dict | None = None, count: int = 3) -> list[str]:
    """The `choices` closest to the unknown `name`, best first; [] when none is close.

    A choice is compared by its own name and the other names `also` gives it ({choice: names}:
    a host's names in its source), case, '-', '_' and '.' ignored: first those the typed name
    begins ('dgx1': dgx1_p100 and dgx1_v100), then by difflib's ratio, at least SUGGEST_CUTOFF;
    ties in the order of `choices`.

    Args:
      name: as typed; choices: the values the flag takes; count: the most returned.
    """
    typed = _plain(name)
    ranked = []
    for order, choice in enumerate(choices):
        known = [_plain(n) for n in (choice,) + tuple((also or {}).get(choice, ()))]
        ratio = max(difflib.SequenceMatcher(None, typed, k).ratio() for k in known)
        begins = len(typed) >= 3 and any(k.startswith(typed) for k in known)
        if begins or ratio >= SUGGEST_CUTOFF:
            ranked.append((not begins, -ratio, order, choice))
    return [choice for *_, choice in sorted(ranked)[:count]]


def did_you_mean(found: list[str]) -> str:
    """'did you mean a, b or c? ' for the suggestions `found`; '' for none."""
    if not found:
        return ''
    return 'did you mean %s? ' % (found[0] if len(found) == 1 else '%s or %s' % (
        ', '.join(found[:-1]), found[-1]))
