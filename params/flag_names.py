"""The flag an unknown name most likely meant: the "did you mean" of the command's unknown
`--flag` (flag_parsing.py, beside absl's own suggestions) and of `make_params`' unknown keyword
(`unknown_names`), one rule for both.

No TensorFlow: the command's flag checks use it before TensorFlow loads.
"""

from __future__ import annotations

from absl.flags import _helpers as absl_helpers

#: Flags other tools (Keras, tf.estimator scripts, timm) name differently: the name users type
#: first -> this command's (and the original's) flag.
OTHER_NAMES = {
    'learning_rate': 'init_learning_rate', 'lr': 'init_learning_rate',
    'base_learning_rate': 'init_learning_rate', 'base_lr': 'init_learning_rate',
    'epochs': 'num_epochs', 'steps': 'num_batches', 'num_steps': 'num_batches',
    'train_steps': 'num_batches', 'warmup_steps': 'num_warmup_batches',
    'gpus': 'num_gpus', 'num_devices': 'num_gpus', 'arch': 'model', 'network': 'model',
    'data': 'data_dir', 'dataset': 'data_name', 'optimiser': 'optimizer',
    'fp16': 'use_fp16', 'bf16': 'use_bf16',
    # The results JSON's folder (its key is 'results_file'; the file is named by the time).
    'result_file': 'benchmark_log_dir', 'results_file': 'benchmark_log_dir',
    'result_dir': 'benchmark_log_dir', 'results_dir': 'benchmark_log_dir',
    'results_json': 'benchmark_log_dir', 'json_file': 'benchmark_log_dir',
}


def suggest_flag(name: str, known: list[str]) -> str | None:
    """The flag an unknown `--name` most likely meant, or None (absl's suggestions then).

    In order: another tool's name for one of ours (OTHER_NAMES; `--learning_rate` ->
    init_learning_rate, where absl's edit distance picks learning_rate_decay_factor); the only
    flag `name` begins; of several, the shortest whose first words are `name` (`--batch` ->
    batch_size before batch_group_size), else the shortest it begins; else, for a name of
    several words, the shortest flag those words abbreviate (`abbreviates`: `--fuse_decay` ->
    fused_weight_decay, where absl's edit distance over prefixes picks fuse_decode_and_crop).

    Args:
      name: the unknown flag's name, without dashes (a leading 'no' of a boolean kept).
      known: the names of the defined flags.
    """
    key = name.lower()
    if OTHER_NAMES.get(key) in known:
        return OTHER_NAMES[key]
    started = sorted((k for k in known if k.startswith(key)), key=lambda k: (len(k), k))
    words = [k for k in started if k.startswith(key + '_')]
    short = sorted((k for k in known if abbreviates(key, k)), key=lambda k: (len(k), k))
    return (words or started or short or [None])[0]


def abbreviates(name: str, flag: str) -> bool:
    """Whether `name`, of two words or more (split at '_'), abbreviates `flag` word by word:
    its first word begins the flag's first, and each next word begins a later word of the
    flag, in order (words of the flag may be left out): 'fuse_decay' abbreviates
    'fused_weight_decay' (fuse- fused, decay- decay), not 'fuse_decode_and_crop';
    'eval_every_n_steps' abbreviates 'eval_during_training_every_n_steps'.

    Args:
      name: the unknown name, lower case, without dashes; flag: a defined flag's name.
    """
    parts, words = name.split('_'), flag.split('_')
    if len(parts) < 2 or not all(parts) or not words[0].startswith(parts[0]):
        return False
    rest = iter(words[1:])
    return all(any(word.startswith(part) for word in rest) for part in parts[1:])


def meant_flags(name: str, known: list[str]) -> list[str]:
    """What the command's unknown-flag line suggests for `--name`: `suggest_flag`'s flag where it
    finds one, else absl's suggestions (its edit distance over the flags' prefixes, the
    'Did you mean: a, b ?' of absl's own message), else []: ['model'] for 'modle'.

    Args:
      name: the unknown name, without dashes; known: the names of the defined flags.
    """
    meant = suggest_flag(name, known)
    return [meant] if meant else list(absl_helpers.get_flag_suggestions(name, known))


def unknown_names(unknown: list[str], known: list[str]) -> str:
    """'modle (did you mean model?), bogus': the unknown names of a `make_params` call, each
    with the flags `meant_flags` suggests for it.

    Args:
      unknown: the unknown keywords, in their order; known: the parameter names.
    """
    def one(name: str) -> str:
        meant = meant_flags(name, known)
        return '%s (did you mean %s?)' % (name, ' or '.join(meant)) if meant else name
    return ', '.join(one(name) for name in unknown)
