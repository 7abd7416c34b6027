"""The package's own facts for messages and records: its version (`VERSION`, which every
results JSON's environment and published result file records) and the pip command that
installs it or one of setup.py's extras (`install_hint`), in the form for an installed package
and for a checkout. No imports: the lowest layer, read before TensorFlow loads."""

from __future__ import annotations

#: The version of tf_cnn_benchmarks (setup.py's version; `tf_cnn_benchmarks.__version__`).
VERSION = '0.3.1'
#: The distribution's name on an index (setup.py's name).
DISTRIBUTION = 'tf_cnn_benchmarks'


def install_hint(extra: str | None = None) -> str:
    """The pip command that installs the package, or its `extra` of setup.py, both ways.

    Args:
      extra: an extra of setup.py ('gpu', 'plot', 'mlperf', 'test', 'docs'), or None.

    Returns:
      "pip install 'tf_cnn_benchmarks[gpu]' (in a checkout: pip install -e '.[gpu]')", or
      "pip install tf_cnn_benchmarks (in a checkout: pip install -e .)" without an extra: a
      user of an installed package and one of a checkout each find their command.
    """
    if extra is None:
        return 'pip install %s (in a checkout: pip install -e .)' % DISTRIBUTION
    return "pip install '%s[%s]' (in a checkout: pip install -e '.[%s]')" % (
        DISTRIBUTION, extra, extra)
