"""The commands beside tf_cnn_benchmarks (console scripts, also `python -m
tf_cnn_benchmarks.tools.<name>`).

`tf_cnn_build_tfrecords` (build_imagenet_tfrecords.py: an image folder as ImageNet-format
TFRecord shards; each image's JPEG bytes and what its conversion changed in
image_encoding.py); `tf_cnn_cluster` (launch_cluster.py: a local ps/worker cluster);
`tf_cnn_results` (results_cli.py, with its text in results_format.py: the results database over
time); `tf_cnn_sweep` (sweep.py: campaigns of fresh runs; its sweep file in sweep_file.py, runs
in sweep_runner.py, results file and statistics in sweep_results.py, report in sweep_report.py
with the figures of sweep_figures.py and the host load of sweep_host_load.py, `compare` in
sweep_compare.py with its regression gate in sweep_gate.py, `--publish` in sweep_publish.py).
"""
