"""The training lifecycle around the graph: the timed loop (training_loop.py), run hooks and their
phases (run_hooks.py), which hooks a run has (wiring.py), checkpoints, evaluation, summaries,
profiles, the step breakdown, signals, results logs, frozen graphs and the traced session.
"""
