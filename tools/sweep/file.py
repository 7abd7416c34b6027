"""The sweep file of `tf_cnn_sweep --sweep_file=FILE`: the axes and flags as YAML (PyYAML).

    models: [resnet50, alexnet]        # lists, or a single value
    batch_sizes: [32, 64]              # per device
    num_gpus: [1, 2, 4, 8]
    precisions: [fp32, fp16]           # fp32, fp16, bf16
    variable_updates: [replicated]
    repeats: 3
    output_dir: runs/a100
    flags: {num_batches: 100, device: gpu}   # for every run; or ['--num_batches=100', ...]
    config: resnet50_8gpu_replicated_nccl    # optional: configs/NAME.flags gives the defaults

Booleans in `flags` become true/false, lists comma-separated values. The negated name of a
boolean or path-or-off flag is read as what it means: `noresults_db: true` is `--results_db=false`
(no results database), `nodistortions: false` is `--distortions=true`; it takes true or false.
"""

from __future__ import annotations

FILE_KEYS = ('models', 'batch_sizes', 'num_gpus', 'precisions', 'variable_updates', 'repeats',
             'output_dir', 'flags', 'config')


class SweepFileError(ValueError):
    """The file cannot be read or holds an unknown key or a malformed value."""


def _negated(name: str) -> str | None:
    """The flag `name` negates ('results_db' for 'noresults_db'): a boolean or path-or-off
    flag of tf_cnn_benchmarks whose name follows 'no', when `name` is no flag itself; else
    None."""
    from tf_cnn_benchmarks import params  # absolute: see cli.unknown_model
    specs = params.SPEC_BY_NAME
    base = name[2:] if name.startswith('no') else ''
    if name in specs or base not in specs:
        return None
    return base if specs[base].kind in ('boolean', 'path_or_off') else None


def _file_flags(value, path: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, dict):
        out = []
        for name, v in value.items():
            base = _negated(str(name))
            if base is not None:
                if not isinstance(v, bool):
                    raise SweepFileError(
                        '--sweep_file %s: flags: %s takes true or false (%s: true is %s: '
                        'false). Received: %s: %r' % (path, name, name, base, name, v))
                name, v = base, not v
            if isinstance(v, bool):
                v = 'true' if v else 'false'
            elif isinstance(v, (list, tuple)):
                v = ','.join(str(x) for x in v)
            out.append('--%s=%s' % (name, v))
        return out
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise SweepFileError('--sweep_file %s: flags must be a mapping {name: value} or a list of '
                         '"--name=value". Received: %r' % (path, value))


def read_sweep_file(path: str) -> dict:
    """Reads a YAML sweep file; returns {key: value} with list axes as lists of strings.

    Raises:
      SweepFileError: unreadable file, invalid YAML, an unknown key or a malformed value.
    """
    try:
        import yaml
    except ImportError:
        raise SweepFileError('--sweep_file needs PyYAML: pip install pyyaml') from None
    try:
        with open(path, encoding='utf-8') as f:
            data = yaml.safe_load(f)
    except OSError as e:
        raise SweepFileError('cannot read --sweep_file %s: %s' % (path, e.strerror)) from None
    except yaml.YAMLError as e:
        raise SweepFileError('--sweep_file %s is not valid YAML: %s' % (
            path, ' '.join(str(e).split()))) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise SweepFileError('--sweep_file %s must hold a mapping of keys (%s)' % (
            path, ', '.join(FILE_KEYS)))
    unknown = sorted(set(data) - set(FILE_KEYS))
    if unknown:
        raise SweepFileError('--sweep_file %s: unknown key %r; valid keys: %s' % (
            path, unknown[0], ', '.join(FILE_KEYS)))
    out = {}
    for key, value in data.items():
        if key == 'flags':
            out[key] = _file_flags(value, path)
        elif key in ('repeats', 'output_dir', 'config'):
            out[key] = str(value)
        else:
            values = value if isinstance(value, list) else [value]
            out[key] = [str(v) for v in values]
    return out
