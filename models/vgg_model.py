"""VGG networks A (vgg11), D (vgg16) and E (vgg19)."""

from . import model

# Convolutions per stage (all 3x3, 'SAME', stride 1) for each configuration of Simonyan &
# Zisserman 2015, Table 1; every stage ends with a 2x2 max pool.
_STAGE_CONVS = {
    11: (1, 1, 2, 2, 2),   # configuration A
    16: (2, 2, 3, 3, 3),   # configuration D
    19: (2, 2, 4, 4, 4),   # configuration E
}
_STAGE_CHANNELS = (64, 128, 256, 512, 512)


class VggModel(model.CNNModel):
    """VGG, registry names 'vgg11', 'vgg16', 'vgg19'.

    Paper: Simonyan & Zisserman 2015, "Very Deep Convolutional Networks for Large-Scale Image
    Recognition" (Table 1, configurations A, D and E; Table 2 gives 133M, 138M and 144M parameters
    for 1000 classes). Follows the paper: five stages of 3x3 convolutions with 64, 128, 256, 512
    and 512 channels, each followed by 2x2 max pooling, then affine 4096 -> dropout 0.5 -> affine
    4096 -> dropout 0.5 -> classifier. No local response normalisation (the paper's A-LRN variant
    is not one of these).

    Args:
      depth: 11, 16 or 19.

    Input: [batch, 224, 224, 3] (NHWC) or [batch, 3, 224, 224] (NCHW), fixed (the first affine
    layer sees 7x7x512 = 25088 features); output logits [batch, num_classes].
    """

    def __init__(self, depth: int):
        if depth not in _STAGE_CONVS:
            raise ValueError('VGG depth must be one of %s. Received: depth=%r'
                             % (sorted(_STAGE_CONVS), depth))
        self.depth = depth
        super().__init__('vgg%d' % depth, image_size=224, batch_size=64, learning_rate=0.005,
                         fixed_image_size=True, min_image_size=224)

    def add_inference(self, cnn):
        for convs, channels in zip(_STAGE_CONVS[self.depth], _STAGE_CHANNELS, strict=True):
            for _ in range(convs):
                cnn.conv(channels, 3, 3)
            cnn.mpool(2, 2)
        cnn.flatten()
        cnn.affine(4096)
        cnn.dropout(0.5)
        cnn.affine(4096)
        cnn.dropout(0.5)
