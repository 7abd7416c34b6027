"""`python -m tools.sweep` (a checkout) and `python -m tf_cnn_benchmarks.tools.sweep`: the
`tf_cnn_sweep` command (cli.py)."""

from .cli import run_main

if __name__ == '__main__':
    run_main()
