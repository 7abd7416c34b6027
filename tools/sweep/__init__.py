"""`tf_cnn_sweep`: benchmark campaigns of fresh tf_cnn_benchmarks runs, their report and their
comparison (console script; `python -m tools.sweep` from a checkout, `python -m
tf_cnn_benchmarks.tools.sweep` installed: __main__.py).

The command and its flags (cli.py: the plan of configurations, the checks before any run, the
`report` and `compare` subcommands); the run flags the sweep sets itself, and the sweep flag
to give instead (reserved.py); the sweep file (file.py: YAML axes and flags); one run as a
fresh process and its record (runner.py); the progress line, its estimate of the time left
per configuration and the run's log it names (progress.py); the results file and its
statistics (results.py); the markdown report and plots (report.py) with the figures behind
the images/sec (figures.py) and
each run's host load (host_load.py); `compare A B` (compare.py) with its statistics and
regression gate (gate.py: `--fail_on_slower`); `--publish` as a results/ file (publish.py);
the output folder's disk: a run that failed for lack of space, the error line of a file the
sweep cannot write (disk.py).
"""

from .cli import main, run_main  # noqa: F401  (the console script: tools.sweep:run_main)
