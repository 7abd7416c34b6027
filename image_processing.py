"""Per-image graph ops: parse an ImageNet Example, decode, crop, distort, resize, normalise.

Every function here works on ONE image, so the pipelines in `preprocessing.py` can process the
images of a batch independently and in parallel. Outputs are float32 [size, size, 3] (HWC) in
[-1, 1]: a pixel value p in 0..255 becomes p / 127.5 - 1.

Real images are messy; all of these decode to 3-channel RGB of the requested size:
  - PNG (or GIF, BMP) bytes stored in the JPEG field: detected by magic bytes and decoded by
    `decode_image` instead of the fused JPEG decoder;
  - CMYK, grayscale and progressive JPEGs: libjpeg converts them to RGB (channels=3);
  - images smaller than the crop: resized up; extreme aspect ratios: when no crop of the allowed
    aspect range fits, the sampler falls back to the whole image;
  - missing bounding-box keys, boxes outside [0, 1], inverted or of zero area: boxes are
    clipped, ordered, and dropped when empty; with no box left the whole image is the object.
"""

from __future__ import annotations

import tensorflow as tf

tf1 = tf.compat.v1

RESIZE_METHODS = {
    'bilinear': tf.image.ResizeMethod.BILINEAR,
    'nearest': tf.image.ResizeMethod.NEAREST_NEIGHBOR,
    'bicubic': tf.image.ResizeMethod.BICUBIC,
    'area': tf.image.ResizeMethod.AREA,
}
ROUND_ROBIN = ('bilinear', 'nearest', 'bicubic', 'area')

# The crop of eval (and of training without distortions): the central 87.5% of each side.
CENTRAL_FRACTION = 0.875
# Random crops for training, as in Inception/ResNet training: the crop covers 5-100% of the
# image area with a width/height ratio in [3/4, 4/3], and at least 10% of some object box.
AREA_RANGE = (0.05, 1.0)
ASPECT_RATIO_RANGE = (0.75, 1.33)
MIN_OBJECT_COVERED = 0.1
MAX_ATTEMPTS = 100


def parse_example(serialized: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """Parses one serialized ImageNet-format `tf.train.Example`.

    Args:
      serialized: string scalar.

    Returns:
      (encoded, label, boxes): encoded image bytes (string scalar); label int32 scalar
      (`image/class/label`, -1 when the key is missing); boxes float32 [1, n, 4] as (ymin, xmin,
      ymax, xmax) fractions of the image, n >= 0 (the bbox keys may be absent).
    """
    features = {
        'image/encoded': tf.io.FixedLenFeature([], tf.string, default_value=''),
        'image/class/label': tf.io.FixedLenFeature([], tf.int64, default_value=-1),
    }
    for key in ('ymin', 'xmin', 'ymax', 'xmax'):
        features['image/object/bbox/' + key] = tf.io.VarLenFeature(tf.float32)
    parsed = tf.io.parse_single_example(serialized, features)
    coords = [tf.sparse.to_dense(parsed['image/object/bbox/' + k])
              for k in ('ymin', 'xmin', 'ymax', 'xmax')]
    # Keys of unequal length are a broken record; keep the common prefix.
    n = tf.reduce_min([tf.size(c) for c in coords])
    boxes = tf.stack([c[:n] for c in coords], axis=1)
    return (parsed['image/encoded'], tf.cast(parsed['image/class/label'], tf.int32),
            boxes[tf.newaxis])


def sanitize_boxes(boxes: tf.Tensor) -> tf.Tensor:
    """Clips boxes to [0, 1], orders each pair of corners and drops boxes of zero area.

    Args:
      boxes: float32 [1, n, 4] (ymin, xmin, ymax, xmax).

    Returns:
      float32 [1, m, 4], m <= n, every box with 0 <= ymin < ymax <= 1 and 0 <= xmin < xmax <= 1.
    """
    b = tf.clip_by_value(tf.where(tf.math.is_finite(boxes), boxes, 0.0)[0], 0.0, 1.0)
    ymin, xmin = tf.minimum(b[:, 0], b[:, 2]), tf.minimum(b[:, 1], b[:, 3])
    ymax, xmax = tf.maximum(b[:, 0], b[:, 2]), tf.maximum(b[:, 1], b[:, 3])
    b = tf.stack([ymin, xmin, ymax, xmax], axis=1)
    keep = (ymax - ymin > 1e-6) & (xmax - xmin > 1e-6)
    return tf.boolean_mask(b, keep)[tf.newaxis]


def _central_window(shape: tf.Tensor) -> tf.Tensor:
    """[offset_y, offset_x, height, width] int32 of the central CENTRAL_FRACTION of each side."""
    size = tf.maximum(tf.cast(tf.round(tf.cast(shape, tf.float32) * CENTRAL_FRACTION),
                              tf.int32), 1)
    offset = (shape - size) // 2
    return tf.concat([offset, size], axis=0)


def _random_window(boxes: tf.Tensor):
    """Returns window_fn(shape) sampling a crop around `boxes` ([1, n, 4], may be empty)."""
    def window(shape):
        # The raw op, so the op seed derives from the graph seed (--tf_random_seed).
        seed, seed2 = tf1.random.get_seed(None)
        begin, size, _ = tf.raw_ops.SampleDistortedBoundingBoxV2(
            image_size=tf.concat([shape, [3]], axis=0), bounding_boxes=boxes,
            min_object_covered=MIN_OBJECT_COVERED, seed=seed or 0, seed2=seed2 or 0,
            aspect_ratio_range=ASPECT_RATIO_RANGE, area_range=AREA_RANGE,
            max_attempts=MAX_ATTEMPTS, use_image_if_no_bounding_boxes=True)
        return tf.concat([begin[:2], size[:2]], axis=0)
    return window


def _crop(image, window):
    return tf.slice(image, tf.concat([window[:2], [0]], 0), tf.concat([window[2:], [3]], 0))


def decode_window(encoded: tf.Tensor, window_fn, fuse_decode_and_crop: bool = True) -> tf.Tensor:
    """Decodes the crop window of an image of any format TF reads (JPEG, PNG, GIF, BMP).

    Args:
      encoded: string scalar, the image file bytes.
      window_fn: shape -> window: maps int32 [height, width] of the full image to int32
        [offset_y, offset_x, crop_height, crop_width].
      fuse_decode_and_crop: for JPEGs, decode only the window (`decode_and_crop_jpeg`).

    Returns:
      uint8 [crop_height, crop_width, 3] RGB.
    """
    def jpeg():
        window = window_fn(tf.image.extract_jpeg_shape(encoded)[:2])
        if fuse_decode_and_crop:
            return tf.io.decode_and_crop_jpeg(encoded, window, channels=3)
        return _crop(tf.io.decode_jpeg(encoded, channels=3), window)

    def other():
        image = tf.io.decode_image(encoded, channels=3, expand_animations=False)
        image.set_shape([None, None, 3])
        return _crop(image, window_fn(tf.shape(image)[:2]))

    image = tf.cond(tf.io.is_jpeg(encoded), jpeg, other)
    image.set_shape([None, None, 3])
    return image


def resize(image: tf.Tensor, size: int, method) -> tf.Tensor:
    """Resizes to [size, size, 3] float32 in [0, 255].

    Args:
      image: uint8 or float [h, w, 3] in [0, 255].
      size: output height and width in pixels.
      method: a name of RESIZE_METHODS, or an int32 scalar tensor indexing ROUND_ROBIN.
    """
    image = tf.cast(image, tf.float32)
    if isinstance(method, str):
        out = tf.image.resize(image, [size, size], method=RESIZE_METHODS[method])
    else:
        branches = [lambda m=m: tf.image.resize(image, [size, size], method=RESIZE_METHODS[m])
                    for m in ROUND_ROBIN]
        out = tf.switch_case(method, branches)
    out = tf.clip_by_value(out, 0.0, 255.0)  # bicubic overshoots
    out.set_shape([size, size, 3])
    return out


def distort_color(image: tf.Tensor) -> tf.Tensor:
    """Random brightness, saturation, hue and contrast.

    Args:
      image: float32 [h, w, 3] in [0, 255].

    Returns:
      float32 [h, w, 3] in [0, 255].
    """
    x = image / 255.0
    x = tf.image.random_brightness(x, max_delta=32.0 / 255.0)
    x = tf.image.random_saturation(x, lower=0.5, upper=1.5)
    x = tf.image.random_hue(x, max_delta=0.2)
    x = tf.image.random_contrast(x, lower=0.5, upper=1.5)
    return tf.clip_by_value(x, 0.0, 1.0) * 255.0


def normalize(image: tf.Tensor) -> tf.Tensor:
    """Maps [0, 255] to [-1, 1] (p / 127.5 - 1), float32."""
    return tf.clip_by_value(tf.cast(image, tf.float32) / 127.5 - 1.0, -1.0, 1.0)


def resize_method_for(name: str, index) -> str | tf.Tensor:
    """The resize method of image number `index`: `name`, or for 'round_robin' the method
    ROUND_ROBIN[index % 4] (a string for a Python int, an int32 tensor for a tensor index)."""
    if name != 'round_robin':
        return name
    if isinstance(index, int):
        return ROUND_ROBIN[index % len(ROUND_ROBIN)]
    return tf.cast(index % len(ROUND_ROBIN), tf.int32)


def preprocess_imagenet(serialized: tf.Tensor, *, image_size: int, train: bool,
                        distortions: bool = True, color: bool = False,
                        resize_method: str = 'bilinear', fuse_decode_and_crop: bool = True,
                        index=0) -> tuple[tf.Tensor, tf.Tensor]:
    """One ImageNet Example -> (image, label).

    Training with distortions: a random crop sampled around the boxes (AREA_RANGE,
    ASPECT_RATIO_RANGE, whole image without boxes), a random left-right flip, optional colour
    distortion. Training without distortions: the central crop and a random flip. Eval: the
    central crop (87.5% of each side), no randomness. Then resize to image_size.

    Args:
      serialized: string scalar, a serialized tf.train.Example.
      image_size: output height and width in pixels.
      train: training (random) or eval (deterministic) processing.
      distortions: random crop (training only).
      color: random colour distortion (training only).
      resize_method: 'bilinear', 'nearest', 'bicubic', 'area' or 'round_robin'.
      fuse_decode_and_crop: decode only the crop window of JPEGs.
      index: the image's position (int or int tensor), picks the round-robin method.

    Returns:
      image float32 [image_size, image_size, 3] in [-1, 1]; label int32 scalar as stored.
    """
    encoded, label, boxes = parse_example(serialized)
    if train and distortions:
        window_fn = _random_window(sanitize_boxes(boxes))
    else:
        window_fn = _central_window
    image = decode_window(encoded, window_fn, fuse_decode_and_crop)
    if train:
        image = tf.image.random_flip_left_right(image)
    image = resize(image, image_size, resize_method_for(resize_method, index))
    if train and color:
        image = distort_color(image)
    return normalize(image), label


def preprocess_cifar10(image: tf.Tensor, *, image_size: int, train: bool,
                       distortions: bool = True, color: bool = False,
                       resize_method: str = 'bilinear', index=0) -> tf.Tensor:
    """One CIFAR-10 image -> float32 [image_size, image_size, 3] in [-1, 1].

    Training with distortions: pad 4 pixels on each side, take a random 32x32 crop, random flip.
    Training without distortions: random flip only. Eval: the image as stored. Then resize when
    image_size is not 32.

    Args:
      image: uint8 [32, 32, 3].
      image_size: output height and width in pixels.
      train, distortions, color, resize_method, index: as in `preprocess_imagenet`.
    """
    image = tf.cast(image, tf.float32)
    if train and distortions:
        image = tf.image.resize_with_crop_or_pad(image, 40, 40)
        image = tf.image.random_crop(image, [32, 32, 3])
    if train:
        image = tf.image.random_flip_left_right(image)
    if image_size != 32:
        image = resize(image, image_size, resize_method_for(resize_method, index))
    if train and color:
        image = distort_color(image)
    image.set_shape([image_size, image_size, 3])
    return normalize(image)
