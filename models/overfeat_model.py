"""OverFeat, the "fast" model."""

from . import model


class OverfeatModel(model.CNNModel):
    """OverFeat fast model, registry name 'overfeat'.

    Paper: Sermanet, Eigen, Zhang, Mathieu, Fergus & LeCun 2014, "OverFeat: Integrated
    Recognition, Localization and Detection using Convolutional Networks" (Table 1, fast model).
    Follows the table exactly: 231x231 input; no response normalisation; dropout on the two hidden
    fully connected layers (section 3.1).

    Layers: conv 11x11x96 /4 VALID -> maxpool 2/2 -> conv 5x5x256 VALID -> maxpool 2/2 -> conv
    3x3x512 -> conv 3x3x1024 -> conv 3x3x1024 -> maxpool 2/2 -> flatten (6x6x1024 = 36864) ->
    affine 3072 -> dropout -> affine 4096 -> dropout -> classifier.

    Input: [batch, 231, 231, 3] (NHWC) or [batch, 3, 231, 231] (NCHW), fixed; output logits
    [batch, num_classes].
    """

    def __init__(self):
        super().__init__('overfeat', image_size=231, batch_size=32, learning_rate=0.005,
                         fixed_image_size=True, min_image_size=231)

    def add_inference(self, cnn):
        cnn.conv(96, 11, 11, 4, 4, mode='VALID')
        cnn.mpool(2, 2)
        cnn.conv(256, 5, 5, mode='VALID')
        cnn.mpool(2, 2)
        cnn.conv(512, 3, 3)
        cnn.conv(1024, 3, 3)
        cnn.conv(1024, 3, 3)
        cnn.mpool(2, 2)
        cnn.flatten()
        cnn.affine(3072)
        cnn.dropout(0.5)
        cnn.affine(4096)
        cnn.dropout(0.5)
