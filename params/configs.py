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

from tf_cnn_benchmarks import params

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
    """The flagfile of configuration `name` (a name from `names()`, or a path to a flagfile).

    Raises:
      params.ParamsError: no such configuration (the message lists the known ones).
    """
    if os.sep in name or name.endswith(SUFFIX):
        if os.path.isfile(name):
            return name
        raise params.ParamsError('--config=%s: no such file' % name)
    path = os.path.join(CONFIG_DIR, name + SUFFIX)
    if not os.path.isfile(path):
        raise params.ParamsError('--config=%s: unknown configuration; known: %s (files in %s)'
                                 % (name, ', '.join(names()) or 'none', CONFIG_DIR))
    return path


def read_flags(name: str) -> list[str]:
    """The flags of configuration `name`, in file order: ['--model=resnet50', ...].

    Raises:
      params.ParamsError: no such configuration.
    """
    with open(path_of(name), encoding='utf-8') as f:
        lines = [line.strip() for line in f]
    return [line for line in lines if line and not line.startswith(('#', '//'))]


def _config_value(arg: str) -> str | None:
    for prefix in ('--config=', '-config='):
        if arg.startswith(prefix):
            return arg[len(prefix):]
    return None


def expand(argv: list[str]) -> list[str]:
    """argv with each `--config=NAME` read first: `--flagfile=<its file>` goes right after
    argv[0], so that every flag given on the command line wins over the configuration's.
    `--config` stays in argv (the run records which configuration it came from).

    Raises:
      params.ParamsError: an unknown configuration, or more than one --config.
    """
    given = [v for v in (_config_value(a) for a in argv[1:]) if v is not None]
    if not given:
        return list(argv)
    if len(given) > 1:
        raise params.ParamsError('--config given %d times (%s); give one configuration and '
                                 'add flags after it' % (len(given), ', '.join(given)))
    return [argv[0], '--flagfile=' + path_of(given[0])] + list(argv[1:])
