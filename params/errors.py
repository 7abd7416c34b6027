"""The usage error of the parameters, raised by every check of a flag or a combination, and
the one way a parser's message becomes the usage error of its flag (`flag_error`)."""

from __future__ import annotations

import re

from ..cnn_util import ShownMessage


class ParamsError(ShownMessage, ValueError):
    """A parameter value or combination of parameters is invalid (usage error, exit status 2);
    a path's undecodable bytes read as '\\xff' in its message (cnn_util.shown_name)."""


def flag_error(flag: str, error) -> ParamsError:
    """The usage error of `--flag` made from a parser's message, naming the flag once, first.

    A message that starts with the flag already ('--interconnect_gbps must be > 0. ...',
    '--gpu_interconnect=nvlink: ...') is kept as it is; one that starts with its bare name
    ("all_reduce_spec 'x': ...") gets the dashes; any other gets '--flag: ' before it
    ("--gpu_model: unknown GPU model 'V1OO'; ..."). Prefixing every message instead gave
    '--interconnect_gbps: --interconnect_gbps must be > 0'.

    Args:
      flag: the flag's name, with or without its leading dashes.
      error: the parser's exception (its str is the message) or the message.
    """
    name = flag.lstrip('-')
    text = str(error)
    named = re.match(r'(--)?%s(?![A-Za-z0-9_])' % re.escape(name), text)
    if named:
        return ParamsError(text if named.group(1) else '--' + text)
    return ParamsError('--%s: %s' % (name, text))
