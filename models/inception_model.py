"""Inception v3 and Inception v4.

Both use batch normalisation after every convolution (no biases), the original benchmark's:
no trainable scale (gamma), moving averages with decay 0.999, epsilon 0.001 (its builder's
defaults, models/convnet_builder.DEFAULT_BATCH_NORM; the papers give no values). Layer
columns are described as lists of tuples for `ConvNetBuilder.columns`; ('share',) at position
i reuses the previous column's layer i.
"""

from . import model


class Inceptionv3Model(model.CNNModel):
    """Inception v3, registry name 'inception3'.

    Paper: Szegedy, Vanhoucke, Ioffe, Shlens & Wojna 2016, "Rethinking the Inception Architecture
    for Computer Vision" (Table 1; Figures 5, 6 and 7; section 6). Layer shapes follow the
    authors' released model (the paper's Table 1 leaves filter counts to the code), as the
    original benchmark and Keras do: stem conv 3x3/2 32 V, 3x3 32 V, 3x3 64, maxpool 3/2, 1x1 80,
    3x3 192 V, maxpool 3/2; three 35x35 modules (Figure 5), a grid reduction, four 17x17 modules
    with factorised 7x7 convolutions (Figure 6), a grid reduction, two 8x8 modules with split
    1x3/3x1 outputs (Figure 7), a global average pool and the classifier. No auxiliary classifier
    (the original benchmark's default). The last module pools with max, the one before with
    average, as the original benchmark. Batch norm has no trainable scale, as the original
    benchmark's and Keras's InceptionV3: 23,819,401 trainable parameters, the original's count
    and Keras's (1000 classes) plus the 1001st class's 2,049.

    Input: [batch, 299, 299, 3] (NHWC) or [batch, 3, 299, 299] (NCHW) by default, any size >= 75
    (the final 8x8 average pool is a global spatial mean); output logits [batch, num_classes].
    """

    uses_batch_norm = True

    def __init__(self):
        super().__init__('inception3', image_size=299, batch_size=32, learning_rate=0.005,
                         fixed_image_size=False, min_image_size=75)

    def add_inference(self, cnn):
        cnn.conv(32, 3, 3, 2, 2, mode='VALID')     # 149x149x32
        cnn.conv(32, 3, 3, mode='VALID')           # 147x147x32
        cnn.conv(64, 3, 3)                         # 147x147x64
        cnn.mpool(3, 3, 2, 2)                      # 73x73x64
        cnn.conv(80, 1, 1, mode='VALID')           # 73x73x80
        cnn.conv(192, 3, 3, mode='VALID')          # 71x71x192
        cnn.mpool(3, 3, 2, 2)                      # 35x35x192
        for pool_proj in (32, 64, 64):             # 35x35x256, 288, 288
            cnn.columns('mixed_35x35_', [
                [('conv', 64, 1, 1)],
                [('conv', 48, 1, 1), ('conv', 64, 5, 5)],
                [('conv', 64, 1, 1), ('conv', 96, 3, 3), ('conv', 96, 3, 3)],
                [('apool', 3, 3, 1, 1, 'SAME'), ('conv', pool_proj, 1, 1)]])
        cnn.columns('reduce_35x35_', [             # 17x17x768
            [('conv', 384, 3, 3, 2, 2, 'VALID')],
            [('conv', 64, 1, 1), ('conv', 96, 3, 3), ('conv', 96, 3, 3, 2, 2, 'VALID')],
            [('mpool', 3, 3, 2, 2, 'VALID')]])
        for n in (128, 160, 160, 192):             # 17x17x768
            cnn.columns('mixed_17x17_', [
                [('conv', 192, 1, 1)],
                [('conv', n, 1, 1), ('conv', n, 1, 7), ('conv', 192, 7, 1)],
                [('conv', n, 1, 1), ('conv', n, 7, 1), ('conv', n, 1, 7), ('conv', n, 7, 1),
                 ('conv', 192, 1, 7)],
                [('apool', 3, 3, 1, 1, 'SAME'), ('conv', 192, 1, 1)]])
        cnn.columns('reduce_17x17_', [             # 8x8x1280
            [('conv', 192, 1, 1), ('conv', 320, 3, 3, 2, 2, 'VALID')],
            [('conv', 192, 1, 1), ('conv', 192, 1, 7), ('conv', 192, 7, 1),
             ('conv', 192, 3, 3, 2, 2, 'VALID')],
            [('mpool', 3, 3, 2, 2, 'VALID')]])
        for pool in ('apool', 'mpool'):            # 8x8x2048
            cnn.columns('mixed_8x8_', [
                [('conv', 320, 1, 1)],
                [('conv', 384, 1, 1), ('conv', 384, 1, 3)],
                [('share',), ('conv', 384, 3, 1)],
                [('conv', 448, 1, 1), ('conv', 384, 3, 3), ('conv', 384, 1, 3)],
                [('share',), ('share',), ('conv', 384, 3, 1)],
                [(pool, 3, 3, 1, 1, 'SAME'), ('conv', 192, 1, 1)]])
        cnn.spatial_mean()                         # 2048


class Inceptionv4Model(model.CNNModel):
    """Inception v4, registry name 'inception4'.

    Paper: Szegedy, Ioffe, Vanhoucke & Alemi 2017, "Inception-v4, Inception-ResNet and the Impact
    of Residual Connections on Learning" (Figures 3-9; Table 1 for Reduction-A: k=192, l=224,
    m=256, n=384). Follows the figures exactly: stem (Figure 3), 4 x Inception-A (Figure 4),
    Reduction-A (Figure 7), 7 x Inception-B (Figure 5), Reduction-B (Figure 8), 3 x Inception-C
    (Figure 6), global average pool, dropout (keep 0.8), classifier (Figure 9). Convolutions
    without 'V' in the figures are 'SAME'. Batch norm has no trainable scale, as the original
    benchmark's: 42,649,769 trainable parameters, the original's count.

    Input: [batch, 299, 299, 3] (NHWC) or [batch, 3, 299, 299] (NCHW) by default, any size >= 75;
    output logits [batch, num_classes].
    """

    uses_batch_norm = True

    def __init__(self):
        super().__init__('inception4', image_size=299, batch_size=32, learning_rate=0.005,
                         fixed_image_size=False, min_image_size=75)

    def add_inference(self, cnn):
        # Stem, Figure 3.
        cnn.conv(32, 3, 3, 2, 2, mode='VALID')     # 149x149x32
        cnn.conv(32, 3, 3, mode='VALID')           # 147x147x32
        cnn.conv(64, 3, 3)                         # 147x147x64
        cnn.columns('stem_a', [                    # 73x73x160
            [('mpool', 3, 3, 2, 2, 'VALID')],
            [('conv', 96, 3, 3, 2, 2, 'VALID')]])
        cnn.columns('stem_b', [                    # 71x71x192
            [('conv', 64, 1, 1), ('conv', 96, 3, 3, 1, 1, 'VALID')],
            [('conv', 64, 1, 1), ('conv', 64, 7, 1), ('conv', 64, 1, 7),
             ('conv', 96, 3, 3, 1, 1, 'VALID')]])
        cnn.columns('stem_c', [                    # 35x35x384
            [('conv', 192, 3, 3, 2, 2, 'VALID')],
            [('mpool', 3, 3, 2, 2, 'VALID')]])
        for _ in range(4):                         # Inception-A, Figure 4: 35x35x384
            cnn.columns('inception_a', [
                [('apool', 3, 3, 1, 1, 'SAME'), ('conv', 96, 1, 1)],
                [('conv', 96, 1, 1)],
                [('conv', 64, 1, 1), ('conv', 96, 3, 3)],
                [('conv', 64, 1, 1), ('conv', 96, 3, 3), ('conv', 96, 3, 3)]])
        cnn.columns('reduction_a', [               # Figure 7: 17x17x1024
            [('mpool', 3, 3, 2, 2, 'VALID')],
            [('conv', 384, 3, 3, 2, 2, 'VALID')],
            [('conv', 192, 1, 1), ('conv', 224, 3, 3), ('conv', 256, 3, 3, 2, 2, 'VALID')]])
        for _ in range(7):                         # Inception-B, Figure 5: 17x17x1024
            cnn.columns('inception_b', [
                [('apool', 3, 3, 1, 1, 'SAME'), ('conv', 128, 1, 1)],
                [('conv', 384, 1, 1)],
                [('conv', 192, 1, 1), ('conv', 224, 1, 7), ('conv', 256, 7, 1)],
                [('conv', 192, 1, 1), ('conv', 192, 1, 7), ('conv', 224, 7, 1),
                 ('conv', 224, 1, 7), ('conv', 256, 7, 1)]])
        cnn.columns('reduction_b', [               # Figure 8: 8x8x1536
            [('mpool', 3, 3, 2, 2, 'VALID')],
            [('conv', 192, 1, 1), ('conv', 192, 3, 3, 2, 2, 'VALID')],
            [('conv', 256, 1, 1), ('conv', 256, 1, 7), ('conv', 320, 7, 1),
             ('conv', 320, 3, 3, 2, 2, 'VALID')]])
        for _ in range(3):                         # Inception-C, Figure 6: 8x8x1536
            cnn.columns('inception_c', [
                [('apool', 3, 3, 1, 1, 'SAME'), ('conv', 256, 1, 1)],
                [('conv', 256, 1, 1)],
                [('conv', 384, 1, 1), ('conv', 256, 1, 3)],
                [('share',), ('conv', 256, 3, 1)],
                [('conv', 384, 1, 1), ('conv', 448, 1, 3), ('conv', 512, 3, 1),
                 ('conv', 256, 3, 1)],
                [('share',), ('share',), ('share',), ('conv', 256, 1, 3)]])
        cnn.spatial_mean()                         # 1536
        cnn.dropout(0.8)
