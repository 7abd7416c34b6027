"""CNN architectures and their registry.

The registry: name -> model (model_config.py), the same names and figures as plain data for
the command before TensorFlow loads (model_catalog.py), and their measurement that regenerates
it (model_table.py); the base class (model.py), the layer builder that honours data format and
dtype (convnet_builder.py) and its graph choices made for the kernels' speed (fast_paths.py:
1x1 convolutions as MatMuls; memory_forms.py: ReLUs and residual adds as XLA clusters or in
float32); FLOPs and parameters counted from a built graph (flops.py). One file per family: alexnet
(alexnet_model.py), densenet (densenet_model.py), googlenet (googlenet_model.py), inception3
and inception4 (inception_model.py), lenet (lenet_model.py), mobilenet (v2, also named
mobilenet_v2) and mobilenet_v1 (mobilenet_model.py), overfeat (overfeat_model.py), resnets
(resnet_model.py), trivial (trivial_model.py), vgg (vgg_model.py).
"""
