"""Results that last: every run in one database, its history per configuration, and the runs
where it got slower.

The database (store.py: the SQLite file, writes and queries; schema.py: its schema and
migrations; store_paths.py: where it is, from --results_db, TF_CNN_RESULTS_DB or the default folder;
disk_errors.py: what SQLite's errors of a full disk or failing storage mean; intact.py:
damage no query would read, looked for at each opening; write_wait.py: the write lock
taken, and a wait for it said; upgrades.py: what a migrated or newer schema says), what
it keeps of a run (records.py: a row from a result dict or a sweep record, the configuration
and content keys), a run's flags as its user gave them (run_flags.py: recorded, or derived
from the resolved ones), loading sweep folders and run JSONs (ingest.py), the change-point search
over each configuration's series (regressions.py; tarone.py: the level its tests are held to;
series_metric.py: the figure followed, images/sec or a latency; step_notes.py: what changed
around a step, the host load included, and why no number of runs judges one), the history
plot (plots.py), the static page (page.py), and the committed result files of the bench
scripts and `tf_cnn_sweep --publish` (result_files.py:
`results/<date>-<cpu|gpu>-tf<X.Y>-<what>.json` with provenance).

Below the lifecycle, whose hook records each run (lifecycle/results_db.py), and above the
figures (metrics/significance.py: the test the search shares with `tf_cnn_sweep compare`);
`tf_cnn_results` (tools/results_cli.py) is its command. No TensorFlow.
"""
