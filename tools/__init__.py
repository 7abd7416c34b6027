"""The commands beside tf_cnn_benchmarks (console scripts, also `python -m
tf_cnn_benchmarks.tools.<name>`).

`tf_cnn_build_tfrecords` (build_imagenet_tfrecords.py: an image folder as ImageNet-format
TFRecord shards; its input, the class folders, their synsets and the image files left out, in
class_folders.py; each image's JPEG bytes and what its conversion changed, or why it cannot be
read, in image_encoding.py; its count table, warnings and error lines in convert_report.py);
`tf_cnn_cluster` (launch_cluster.py: a local ps/worker cluster;
launch_plan.py: the tasks it starts and their command lines;
cluster_memory.py: whether its tasks fit the host's memory; cluster_checks.py: its checks
before any task starts);
`tf_cnn_results` (results_cli.py, with its arguments in results_parser.py, its text in
results_format.py and config_message.py, its --metric in results_metric.py, its
--recent_runs in recent_runs_flag.py, the one line of a failure no rule foresaw in
results_failure.py, and the paths it writes checked first in
results_outputs.py: the results database over time); command_parser.py (the
argparse parser of tf_cnn_results and tf_cnn_cluster: one-line usage errors, help that meets a
closed reader); `tf_cnn_sweep` (the package sweep/: campaigns of
fresh runs, their report, `compare` and its regression gate, `--publish`; its docstring names its
modules).
"""
