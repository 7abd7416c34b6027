"""`python -m tf_cnn_benchmarks`: the `tf_cnn_benchmarks` command (cli.py).

A folder named `tf_cnn_benchmarks` in the working folder (a --train_dir of that name) is found
before an editable install and taken for the package, without its `__init__`; the command's
modules still come from the install, and `--version` reads the version from the distribution's
metadata then (console.version_line).
"""

if __name__ == '__main__':
    from . import console

    console.tf_cnn_benchmarks()
