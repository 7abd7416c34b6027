"""The tf_cnn_benchmarks flags the sweep sets itself for each run (RESERVED), and the error
that names the sweep flag to give instead, with the value given (`reserved_flag`); the run
flags that make a run measure no images/sec (NO_RATE), which a sweep therefore refuses too;
the configuration flags that give a sweep axis its default (CONFIG_AXES).
"""

from __future__ import annotations

# tf_cnn_benchmarks flags the sweep sets itself, with the sweep flag to use instead.
RESERVED = {'model': '--models', 'batch_size': '--batch_sizes', 'num_gpus': '--num_gpus',
            'variable_update': '--variable_updates', 'use_fp16': '--precisions',
            'use_bf16': '--precisions', 'benchmark_log_dir': '--output_dir',
            'config': '--config before -- (its model, batch and precision become the axes)'}
# tf_cnn_benchmarks flags that turn a run into something that trains nothing and measures no
# images/sec (and writes no results JSON a sweep could read), with what the run does instead:
# a sweep of them would call every run failed.
NO_RATE = {'dry_run': 'a dry run builds the graph and runs no step',
           'plan_scaling': 'it prints a predicted scaling plan and runs no step',
           'calibrate': 'it measures this host for the calibration record and trains nothing',
           'list_models': 'it prints the model table and runs nothing',
           'only_check_args': 'it checks the flags and runs nothing'}
# A configuration's flags (configs/NAME.flags) that give a sweep axis its default.
CONFIG_AXES = {'model': 'models', 'batch_size': 'batch_sizes', 'num_gpus': 'num_gpus',
               'variable_update': 'variable_updates'}


def flag_name(arg: str) -> str | None:
    """The flag name of `arg` without dashes or value ('num_gpus' of '--num_gpus=2'), None
    for a word that is no flag."""
    if not arg.startswith('-'):
        return None
    name = arg.lstrip('-').split('=', 1)[0]
    return name


def reserved_flag(extra_flags: list[str]) -> str | None:
    """An error message when the flags for every run set a flag the sweep sets, else None: the
    sweep flag to give instead, with the value given ('--num_gpus is set by the sweep for each
    run; use the sweep's own --num_gpus=2 before -- instead (a comma-separated list: one run
    per value). Received: --num_gpus=2'); or when they turn on a flag of NO_RATE (its
    `--noNAME` and `--NAME=false` forms are no measurement's end and pass)."""
    for arg in extra_flags:
        name = flag_name(arg)
        if name is None:
            continue
        if name in NO_RATE and arg.partition('=')[2].lower() not in ('false', 'f', '0'):
            return ('--%s cannot be a flag of a sweep\'s runs: a sweep measures each run\'s '
                    'images/sec, and %s; run tf_cnn_benchmarks --%s with the same flags by '
                    'itself. Received: %s' % (name, NO_RATE[name], name, arg))
        base = name[2:] if name.startswith('no') and name[2:] in RESERVED else name
        if base not in RESERVED:
            continue
        instead, value, tail = RESERVED[base], arg.partition('=')[2], ''
        if base in ('use_fp16', 'use_bf16'):
            off = name != base or value.lower() in ('false', 'f', '0')
            instead = '--precisions=%s' % ('fp32' if off else base[4:])
        elif base in CONFIG_AXES:
            instead += '=%s' % (value or '...')
            tail = ' (a comma-separated list: one run per value)'
        if base != 'config':
            own = ' own' if instead.split('=')[0] == '--' + base else ''
            instead = 'the sweep\'s%s %s before --' % (own, instead)
        return ('--%s is set by the sweep for each run; use %s instead%s. Received: %s'
                % (base, instead, tail, arg))
    return None
