"""The model of speed: one device's step time, the traffic of every variable manager, and how a
step scales over devices and hosts, compared with the original's published scaling.

A model's variables and the FLOPs of their layers (layer_profile.py), its forward ops with their
shapes (op_profile.py) and one GPU's step from its data sheet, a roofline per op (gpu_step.py),
its error against published runs beside each figure (validation_band.py), with the
convolution algorithms autotuning chooses among (conv_algorithms.py) and bfloat16 convolutions
below compute capability 8.0 in float32 between casts (bf16_casts.py), the bytes each
variable manager moves over which links at any scale (traffic_patterns.py), compute plus the
communication that does not overlap it (step_time.py), the plan's rows, knobs, figure and
JSON, and the compute whose one-device row is a measured figure (scaling_report.py), the
model's inputs from a run's flags (from_flags.py), the original's published results against
it (published_scaling.py), one host's published 1 to 8 GPU rows with the all-reduce over
NVLink, PCIe and host memory side by side (one_host_scaling.py), and Lambda's published 1 to
8 GPU series on hosts placed from their logs (lambda_scaling.py).

Nothing here builds a step, reads the results database or prints a plan: preflight/
scaling_plan.py drives --plan_scaling and the dry run's predicted step.
"""
