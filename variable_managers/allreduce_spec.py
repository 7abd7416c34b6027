"""The `--all_reduce_spec` mini-language: its grammar and parser (no TensorFlow, so the flag is
checked with the others before TensorFlow loads). allreduce.py runs the parsed spec.

Spec grammar (``--all_reduce_spec``)
------------------------------------
::

    spec   := entry (":" limit ":" entry)*
    entry  := alg ["#" shards]
    alg    := base | base "/" base           (nccl may only be the inner base)
    base   := "pscpu" | "psgpu" | "xring" | "nccl"
    shards := positive integer, default 1: each tensor is cut into this many shards that are
              all-reduced independently (xring: odd shards run the ring in the opposite direction)
    limit  := positive integer number of bytes with an optional k, m or g suffix (x 1024, 1024^2,
              1024^3); limits increase strictly from left to right

In ``A:L:B`` a tensor of fewer than L bytes goes to A, the others to B. Worked examples:

* ``"xring"`` -> ``[AllReduceSpecTuple(alg='xring', shards=1, limit_bytes=None)]``
* ``"xring#2"`` -> ``[('xring', 2, None)]``: two rings of opposite direction, half a tensor each.
* ``"pscpu:32k:xring"`` -> ``[('pscpu', 1, 32768), ('xring', 1, None)]``: tensors < 32 KiB on the
  CPU, the rest by ring.
* ``"nccl:4m:psgpu#4:1g:xring"`` -> ``[('nccl', 1, 4194304), ('psgpu', 4, 1073741824),
  ('xring', 1, None)]``.
* ``"pscpu/xring#2"`` -> ``[('pscpu/xring', 2, None)]``: sum within each group on its CPU, ring
  across the groups, in two shards.
"""

from __future__ import annotations

import re
from typing import NamedTuple

ALGORITHMS = ('pscpu', 'psgpu', 'xring', 'nccl')
_SIZE_RE = re.compile(r'^([0-9]+)([kmg]?)$', re.IGNORECASE)
_SIZE_UNITS = {'': 1, 'k': 1024, 'm': 1024 ** 2, 'g': 1024 ** 3}


class AllReduceSpecTuple(NamedTuple):
    """One entry of a parsed all-reduce spec.

    Attributes:
      alg: 'pscpu', 'psgpu', 'xring', 'nccl' or a hierarchical 'inner/outer' pair of them.
      shards: number of independent shards each tensor is cut into (>= 1).
      limit_bytes: this entry takes tensors of fewer than this many bytes (and not taken by an
        earlier entry); None for the last entry, which takes all the others.
    """

    alg: str
    shards: int
    limit_bytes: int | None



def _parse_size(text: str, spec: str) -> int:
    match = _SIZE_RE.match(text.strip())
    if not match or int(match.group(1)) <= 0:
        raise ValueError('all_reduce_spec %r: size limit %r is not a positive integer number of '
                         'bytes with an optional k/m/g suffix (e.g. 32k).' % (spec, text))
    return int(match.group(1)) * _SIZE_UNITS[match.group(2).lower()]


def _parse_entry(text: str, spec: str) -> tuple[str, int]:
    alg, sep, shards_text = text.strip().partition('#')
    alg = alg.strip()
    shards = 1
    if sep:
        if not shards_text.strip().isdigit() or int(shards_text) < 1:
            raise ValueError('all_reduce_spec %r: shard count %r in %r is not a positive integer.'
                             % (spec, shards_text, text))
        shards = int(shards_text)
    bases = [base.strip() for base in alg.split('/')]
    alg = '/'.join(bases)
    if len(bases) > 2:
        raise ValueError('all_reduce_spec %r: %r has more than two levels; hierarchical forms are '
                         '"inner/outer".' % (spec, alg))
    for base in bases:
        if base not in ALGORITHMS:
            raise ValueError('all_reduce_spec %r: unknown algorithm %r; valid ones are %s (or '
                             '"inner/outer" of them).' % (spec, base, ', '.join(ALGORITHMS)))
    if len(bases) == 2 and bases[1] == 'nccl':
        raise ValueError('all_reduce_spec %r: nccl cannot be the outer (cross-group) algorithm in '
                         '%r; NCCL only reduces within one host.' % (spec, alg))
    return alg, shards


def parse_all_reduce_spec(spec: str) -> list[AllReduceSpecTuple]:
    """Parses an `--all_reduce_spec` string (grammar and examples in the module docstring).

    Args:
      spec: e.g. 'xring', 'pscpu:32k:xring', 'psgpu#4', 'pscpu/xring'.

    Returns:
      The entries in order; only the last has limit_bytes None.

    Raises:
      ValueError: the spec is empty, names an unknown algorithm, has a bad shard count or size,
        misplaces nccl in a hierarchical form, or its limits do not increase strictly. The message
        quotes the spec and the rule broken.
    """
    if not spec or not spec.strip():
        raise ValueError('all_reduce_spec %r is empty; give an algorithm such as "xring".' % spec)
    items = spec.split(':')
    if len(items) % 2 == 0:
        raise ValueError('all_reduce_spec %r: expected "alg[:limit:alg]...", alternating '
                         'algorithms and size limits, starting and ending with an algorithm.'
                         % spec)
    limits = [_parse_size(text, spec) for text in items[1::2]]
    for low, high in zip(limits, limits[1:], strict=False):
        if high <= low:
            raise ValueError('all_reduce_spec %r: size limits must increase strictly from left to '
                             'right (%d bytes then %d bytes).' % (spec, low, high))
    tuples = []
    for i, text in enumerate(items[0::2]):
        alg, shards = _parse_entry(text, spec)
        tuples.append(AllReduceSpecTuple(alg, shards, limits[i] if i < len(limits) else None))
    return tuples
