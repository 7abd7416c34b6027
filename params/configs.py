"""Named configurations: the flagfiles under `configs/` (`--config=NAME`).

A configuration is an absl flagfile, one `--name=value` a line and `#` comments, shipped with
the package (configs/NAME.flags). `--config=NAME` reads it as if `--flagfile=` of that file came
first on the command line, so a flag given on the command line wins over the configuration's:

    tf_cnn_benchmarks --config=resnet50_8gpu_replicated_nccl --dry_run --gpu_model=V100
    tf_cnn_benchmarks --config=resnet50_cpu --batch_size=32

The README's commands, the dry-run tests and `tf_cnn_sweep --config=NAME` read the same files.
"""

from __future__ import annotations

import os

from .. import params

CONFIG_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                          'configs')
SUFFIX = '.flags'


def names() -> list[str]:
    """The shipped configurations' names, sorted."""
    try:
        files = os.listdir(CONFIG_DIR)
    except OSError:
        return []
    return sorted(f[:-len(SUFFIX)] for f in files if f.endswith(SUFFIX))


def path_of(name: str) -> str:
    """The flagfile of configuration `name`: a name from `names()`, that name with its file's
    `.flags` suffix (what `ls configs/` shows: `resnet50_cpu.flags`), or a path to a flagfile.

    Raises:
      params.ParamsError: an empty name, no such configuration or file (the message lists the
        known ones).
    """
    known = '; known: %s (files in %s)' % (', '.join(names()) or 'none', CONFIG_DIR)
    if not name:
        raise params.ParamsError('--config= names no configuration (an unset variable in a '
                                 "script?): give a configuration's name, or drop --config%s"
                                 % known)
    if os.path.isfile(name) and (os.sep in name or name.endswith(SUFFIX)):
        return name
    if os.sep in name:
        shipped = os.path.basename(name)
        shipped = shipped[:-len(SUFFIX)] if shipped.endswith(SUFFIX) else None
        if shipped in names():  # configs/NAME.flags of the docs, given outside the checkout
            raise params.ParamsError('--config=%s: no such file in %s; give the configuration\'s '
                                     'name, --config=%s, which is found from any folder'
                                     % (name, os.getcwd(), shipped))
        raise params.ParamsError('--config=%s: no such file; give a configuration\'s name%s'
                                 % (name, known))
    base = name[:-len(SUFFIX)] if name.endswith(SUFFIX) else name
    path = os.path.join(CONFIG_DIR, base + SUFFIX)
    if not base or not os.path.isfile(path):
        raise params.ParamsError('--config=%s: unknown configuration%s' % (name, known))
    return path


def read_flags(name: str) -> list[str]:
    """The flags of configuration `name`, in file order: ['--model=resnet50', ...].

    Raises:
      params.ParamsError: no such configuration.
    """
    with open(path_of(name), encoding='utf-8') as f:
        lines = [line.strip() for line in f]
    return [line for line in lines if line and not line.startswith(('#', '//'))]


def _given(argv: list[str]) -> list[str]:
    """The --config values in argv[1:]: `--config=NAME` and `--config NAME` (absl takes both)."""
    out = []
    for i, arg in enumerate(argv[1:], start=1):
        for prefix in ('--config=', '-config='):
            if arg.startswith(prefix):
                out.append(arg[len(prefix):])
        if arg in ('--config', '-config') and i + 1 < len(argv):
            out.append(argv[i + 1])
    return out


def expanded(argv: list[str], name: str) -> bool:
    """True when argv begins with configuration `name`'s flagfile (`expand` put it there)."""
    return len(argv) > 1 and argv[1] == '--flagfile=' + path_of(name)


def expand(argv: list[str], name: str | None = None) -> list[str]:
    """argv with the configuration read first: `--flagfile=<its file>` goes right after
    argv[0], so that every flag given on the command line wins over the configuration's.
    The configuration is `name` when given (a --config read from a --flagfile), else the
    --config of argv (`--config=NAME` or `--config NAME`), which stays in argv (the run
    records which configuration it came from).

    Raises:
      params.ParamsError: an unknown configuration, or more than one --config.
    """
    given = [name] if name is not None else _given(argv)
    if not given:
        return list(argv)
    if len(given) > 1:
        raise params.ParamsError('--config given %d times (%s); give one configuration and '
                                 'add flags after it' % (len(given), ', '.join(given)))
    return [argv[0], '--flagfile=' + path_of(given[0])] + list(argv[1:])
