"""GoogLeNet (Inception v1)."""

from . import model

# Inception modules of Szegedy et al. 2014, Table 1: (#1x1, #3x3 reduce, #3x3, #5x5 reduce, #5x5,
# pool proj). A None entry is a 3x3/2 max pool between stages.
_MODULES = (
    ('3a', (64, 96, 128, 16, 32, 32)),       # -> 28x28x256
    ('3b', (128, 128, 192, 32, 96, 64)),     # -> 28x28x480
    None,                                    # -> 14x14x480
    ('4a', (192, 96, 208, 16, 48, 64)),      # -> 14x14x512
    ('4b', (160, 112, 224, 24, 64, 64)),     # -> 14x14x512
    ('4c', (128, 128, 256, 24, 64, 64)),     # -> 14x14x512
    ('4d', (112, 144, 288, 32, 64, 64)),     # -> 14x14x528
    ('4e', (256, 160, 320, 32, 128, 128)),   # -> 14x14x832
    None,                                    # -> 7x7x832
    ('5a', (256, 160, 320, 32, 128, 128)),   # -> 7x7x832
    ('5b', (384, 192, 384, 48, 128, 128)),   # -> 7x7x1024
)


class GooglenetModel(model.CNNModel):
    """GoogLeNet, registry name 'googlenet'.

    Paper: Szegedy, Liu, Jia, Sermanet, Reed, Anguelov, Erhan, Vanhoucke & Rabinovich 2015, "Going
    Deeper with Convolutions" (Table 1; section 5). Follows Table 1 for every layer and the 40%
    dropout before the classifier. Deviations, as in the original benchmark: no local response
    normalisation after the first two convolutions (parameter-free; keeps images/sec comparable
    with the original) and no auxiliary classifiers (the paper discards them at inference). The 7x7
    average pool is a global spatial mean, identical at 224x224 and usable at smaller sizes.

    Input: [batch, 224, 224, 3] (NHWC) or [batch, 3, 224, 224] (NCHW) by default, any size >= 32;
    output logits [batch, num_classes].
    """

    def __init__(self):
        super().__init__('googlenet', image_size=224, batch_size=32, learning_rate=0.005,
                         fixed_image_size=False, min_image_size=32)

    def add_inference(self, cnn):
        cnn.conv(64, 7, 7, 2, 2)                 # 112x112x64
        cnn.mpool(3, 3, 2, 2, mode='SAME')       # 56x56x64
        cnn.conv(64, 1, 1)
        cnn.conv(192, 3, 3)                      # 56x56x192
        cnn.mpool(3, 3, 2, 2, mode='SAME')       # 28x28x192
        for module in _MODULES:
            if module is None:
                cnn.mpool(3, 3, 2, 2, mode='SAME')
                continue
            name, (n1, r3, n3, r5, n5, proj) = module
            cnn.columns('inception_' + name, [
                [('conv', n1, 1, 1)],
                [('conv', r3, 1, 1), ('conv', n3, 3, 3)],
                [('conv', r5, 1, 1), ('conv', n5, 5, 5)],
                [('mpool', 3, 3, 1, 1, 'SAME'), ('conv', proj, 1, 1)],
            ])
        cnn.spatial_mean()                       # 1024
        cnn.dropout(0.6)
