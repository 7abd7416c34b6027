"""AlexNet for ImageNet (one-tower variant) and the CIFAR-10 tutorial network named 'alexnet'."""

from . import model


class AlexnetModel(model.CNNModel):
    """AlexNet, one-tower variant, registry name 'alexnet' (ImageNet).

    Papers: Krizhevsky, Sutskever & Hinton 2012, "ImageNet Classification with Deep Convolutional
    Neural Networks" (section 3.5, Figure 2), as modified in Krizhevsky 2014, "One weird trick for
    parallelizing convolutional neural networks" (footnote 1, page 5: one column with 64, 192,
    384, 384 and 256 filters). Deviations from the 2012 paper, following the original benchmark:
    one tower instead of two (no grouped convolutions in layers 2, 4 and 5), the 2014 filter
    counts, and no local response normalisation (parameter-free; dropping it keeps images/sec
    comparable with the original benchmark). The input is 227x227 (224 + 3), the size at which
    the 'VALID' 11x11 stride-4 first convolution tiles the image exactly: (227 - 11) / 4 + 1 = 55.
    (torchvision's AlexNet has 256 filters in layer 4, from cuda-convnet2's one-GPU config; we
    follow the paper's 384 as the original benchmark does.)

    Layers: conv 11x11x64 /4 VALID -> maxpool 3/2 -> conv 5x5x192 -> maxpool 3/2 -> conv 3x3x384
    -> conv 3x3x384 -> conv 3x3x256 -> maxpool 3/2 -> flatten (6x6x256 = 9216) -> affine 4096 ->
    dropout 0.5 -> affine 4096 -> dropout 0.5 -> classifier.

    Input: [batch, 227, 227, 3] (NHWC) or [batch, 3, 227, 227] (NCHW), fixed; output logits
    [batch, num_classes].
    """

    def __init__(self):
        super().__init__('alexnet', image_size=224 + 3, batch_size=512, learning_rate=0.005,
                         fixed_image_size=True, min_image_size=227)

    def add_inference(self, cnn):
        cnn.conv(64, 11, 11, 4, 4, 'VALID')
        cnn.mpool(3, 3, 2, 2)
        cnn.conv(192, 5, 5)
        cnn.mpool(3, 3, 2, 2)
        cnn.conv(384, 3, 3)
        cnn.conv(384, 3, 3)
        cnn.conv(256, 3, 3)
        cnn.mpool(3, 3, 2, 2)
        cnn.flatten()
        cnn.affine(4096)
        cnn.dropout(0.5)
        cnn.affine(4096)
        cnn.dropout(0.5)


class AlexnetCifar10Model(model.CNNModel):
    """The TensorFlow CIFAR-10 tutorial network, registry name 'alexnet' (CIFAR-10).

    Paper: Krizhevsky 2009, "Learning Multiple Layers of Features from Tiny Images" (the layer
    shapes follow TensorFlow's CIFAR-10 tutorial model, which the original benchmark names
    'alexnet' for CIFAR-10; the tutorial uses 24x24 crops, here the full 32x32 image).

    Layers: conv 5x5x64 -> maxpool 3/2 SAME -> LRN -> conv 5x5x64 (bias 0.1) -> LRN -> maxpool 3/2
    SAME -> flatten (8x8x64 = 4096) -> affine 384 -> affine 192 -> classifier. The tutorial's
    initialisation is kept: conv kernels stddev 0.05, hidden affine kernels stddev 0.04, biases 0.1.

    Input: [batch, 32, 32, 3] (NHWC) or [batch, 3, 32, 32] (NCHW), fixed; output logits
    [batch, 10].
    """

    def __init__(self):
        super().__init__('alexnet', image_size=32, batch_size=128, learning_rate=0.1,
                         fixed_image_size=True, min_image_size=32, dataset='cifar10')

    def default_schedule(self, batch_size, base_lr=None, examples_per_epoch=None):
        """The original benchmark's CIFAR-10 AlexNet schedule, not scaled with the batch: 0.1,
        x0.1 every 100 epochs (staircase), 100 epochs being 100 x examples // batch steps, the
        run's examples per epoch (default, and the original's: 50,000)."""
        del base_lr
        return model.DefaultSchedule(rates=(self.default_learning_rate,),
                                     decay=(0.1, 100 * (examples_per_epoch or 50000) // batch_size,
                                            100))

    def add_inference(self, cnn):
        lrn = dict(depth_radius=4, bias=1.0, alpha=0.001 / 9.0, beta=0.75)
        cnn.conv(64, 5, 5, stddev=5e-2)
        cnn.mpool(3, 3, 2, 2, mode='SAME')
        cnn.lrn(**lrn)
        cnn.conv(64, 5, 5, stddev=5e-2, bias=0.1)
        cnn.lrn(**lrn)
        cnn.mpool(3, 3, 2, 2, mode='SAME')
        cnn.flatten()
        cnn.affine(384, stddev=0.04, bias=0.1)
        cnn.affine(192, stddev=0.04, bias=0.1)
