"""The trivial model: one linear layer, for benchmarking the input pipeline and the framework.

Layers (the original benchmark's "trivial" model): flatten the 227x227x3 image, a layer to 1
unit, a ReLU layer of 4096 units, then the classifier. The original's 1-unit layer has a ReLU
(its builder's default), which leaves the unit dead for about half of all inputs and its loss
flat; here it is linear, so the model learns and a diverging rate shows. The network computes almost
nothing, so its images/sec measure everything except the model.

Default learning rate 1e-4, constant whatever the batch (the form of the original's): the
1-unit bottleneck sees all 227*227*3 = 154,587 inputs, so one SGD step moves it by lr x |x|^2
(about 5e4 for inputs uniform in [-1, 1]) times its downstream gradient; at the original's 0.005
this diverges within a dozen steps. At 1e-4 the loss falls steadily from ln(1001) for 100+ steps
(docs/usage-and-flags.md, the models' default schedules).

The CIFAR-10 variant (the original offers `trivial` for both datasets) is the same network on
32x32x3 images (3,072 inputs) with 10 classes. Default learning rate 1e-3, constant (the
original's 0.005, measured on synthetic data: the loss became NaN within 20 steps at batch 4 and
66 at batch 8; at 1e-3 it fell steadily over 1,000 steps at every batch from 1 to 64).
"""

from . import model


class TrivialModel(model.CNNModel):
    """Flatten -> affine(1, linear) -> affine(4096) -> classifier. Input 227x227 (fixed)."""

    def __init__(self):
        super().__init__('trivial', image_size=227, batch_size=32, learning_rate=1e-4,
                         fixed_image_size=False, min_image_size=8)

    def add_inference(self, cnn):
        cnn.flatten()
        cnn.affine(1, activation='linear')
        cnn.affine(4096)


class TrivialCifar10Model(model.CNNModel):
    """TrivialModel's layers on CIFAR-10: input 32x32x3, 10 classes."""

    def __init__(self):
        super().__init__('trivial', image_size=32, batch_size=32, learning_rate=1e-3,
                         fixed_image_size=False, min_image_size=8, dataset='cifar10')

    def add_inference(self, cnn):
        cnn.flatten()
        cnn.affine(1, activation='linear')
        cnn.affine(4096)
