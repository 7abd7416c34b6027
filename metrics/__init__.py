"""Every figure a run reports and every gate on it, for the command and the sweep alike:
FLOP/s, peak and utilisation, input wait, memory (utilisation.py), latency (latency.py), where
a step's time goes (step_breakdown.py), what else used the CPUs while a run was timed
(host_load.py; a cluster's other tasks on this host, counted apart: cluster_tasks.py), whether
the process was stopped or paused while it was timed (stall.py), which runs a verdict may use
(clean_runs.py: the timed part had the host to itself, was not stopped or paused and ran its
planned steps; every gate and history command applies it), the --baseline
gate (baseline.py; the one rule for a results JSON's images/sec figures, which the gate and
`tf_cnn_results ingest` trust: result_rates.py), the statistical test the regression gates
share and their exit statuses (significance.py), and what a configuration is and what changed
between two runs, the one rule of the three gates (configuration.py).

Pure computations on what a run measured (host_load.py also takes its /proc samples, through
readers a test replaces; stall.py also has the SIGCONT watch of the timed part);
lifecycle/figure_hooks.py reports them in a run.
"""
