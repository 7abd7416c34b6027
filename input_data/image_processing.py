"""Image graph ops: parse ImageNet Examples, decode, crop, distort, resize, normalise.

The work is split by what must be done per image. Per image, as independent op chains that run
in parallel (the performance guide's stage 2): read the JPEG header, sample a crop window, decode
only that window (fused decode-and-crop), flip, resize; one concat assembles the batch (cheaper
than `parallel_stack`'s per-image updates on the CPU, and the batch is staged for the next step
either way). Everything else (parsing, box clean-up, window arithmetic, the flip coins, colour
distortion, normalisation) is one set of ops over the whole batch. This keeps the graph small:
about a dozen ops per image, so a 256-image batch builds in seconds instead of a minute.

Outputs are float32 [n, size, size, 3] (NHWC) in [-1, 1]: a pixel value p in 0..255 becomes
p / 127.5 - 1.

Real images are messy; all of these decode to 3-channel RGB of the requested size:
  - PNG (or GIF, BMP) bytes stored in the JPEG field: when a batch holds any non-JPEG, those
    images are decoded and re-encoded as JPEG (quality 100) first, so the fused JPEG decoder can
    read every image; batches of JPEGs skip this step;
  - CMYK, grayscale and progressive JPEGs: libjpeg converts them to RGB (channels=3);
  - images smaller than the crop: resized up; extreme aspect ratios: when no crop of the allowed
    aspect range fits, the sampler falls back to the whole image;
  - missing bounding-box keys, boxes outside [0, 1], inverted, non-finite or of zero area: boxes
    are clipped and ordered, bad ones replaced, and an image without a usable box gets the
    whole-image box.
"""

from __future__ import annotations

import tensorflow as tf

from ..params import RESIZE_METHODS  # --resize_method's values
from . import record_schema

tf1 = tf.compat.v1

ROUND_ROBIN = tuple(m for m in RESIZE_METHODS if m != 'round_robin')  # cycled per image

# The crop of eval (and of training without distortions): the central 87.5% of each side.
CENTRAL_FRACTION = 0.875
# Random crops for training, as in Inception/ResNet training: the crop covers 5-100% of the
# image area with a width/height ratio in [3/4, 4/3], and at least 10% of some object box.
AREA_RANGE = (0.05, 1.0)
ASPECT_RATIO_RANGE = (0.75, 1.33)
MIN_OBJECT_COVERED = 0.1
MAX_ATTEMPTS = 100


def parse_batch(records: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """Parses serialized ImageNet-format `tf.train.Example`s.

    Args:
      records: string [n].

    Returns:
      (encoded, labels, boxes): image bytes string [n]; labels int32 [n]
      (`image/class/label`, -1 where missing); boxes float32 [n, m, 4] (ymin, xmin, ymax, xmax)
      after `sanitize_boxes`, m >= 1.
    """
    parsed = tf.io.parse_example(records, record_schema.features())  # the pipelines' schema
    coords = [parsed[k] for k in record_schema.BOX_KEYS]
    width = tf.reduce_max(tf.stack([c.dense_shape[1] for c in coords]))
    n = tf.shape(records, out_type=tf.int64)[0]
    # Missing entries (absent keys, keys of unequal length) become NaN and are dropped.
    dense = [tf.sparse.to_dense(tf.SparseTensor(c.indices, c.values, tf.stack([n, width])),
                                default_value=float('nan')) for c in coords]
    boxes = sanitize_boxes(tf.stack(dense, axis=2))
    labels = tf.cast(parsed['image/class/label'], tf.int32)
    return parsed['image/encoded'], labels, boxes


def sanitize_boxes(boxes: tf.Tensor) -> tf.Tensor:
    """Makes every image's boxes usable by the crop sampler.

    Boxes are clipped to [0, 1] and their corners ordered; boxes with a non-finite coordinate or
    zero area are replaced by the image's first good box; a final slot holds the first good box,
    or the whole image [0, 0, 1, 1] when the image has none.

    Args:
      boxes: float32 [n, m, 4] (ymin, xmin, ymax, xmax), m >= 0, NaN for missing.

    Returns:
      float32 [n, m + 2, 4], every box with 0 <= ymin < ymax <= 1 and 0 <= xmin < xmax <= 1.
    """
    # One extra missing (NaN) slot keeps the box axis non-empty for argmax.
    nan_slot = tf.fill(tf.stack([tf.shape(boxes)[0], 1, 4]), float('nan'))
    boxes = tf.concat([boxes, nan_slot], axis=1)
    finite = tf.reduce_all(tf.math.is_finite(boxes), axis=2)
    b = tf.clip_by_value(tf.where(tf.math.is_finite(boxes), boxes, 0.0), 0.0, 1.0)
    low = tf.minimum(b[..., :2], b[..., 2:])
    high = tf.maximum(b[..., :2], b[..., 2:])
    b = tf.concat([low, high], axis=2)
    valid = finite & tf.reduce_all(high - low > 1e-6, axis=2)
    first = tf.argmax(tf.cast(valid, tf.int32), axis=1, output_type=tf.int32)
    first_box = tf.gather(b, first, batch_dims=1)
    fallback = tf.where(tf.reduce_any(valid, axis=1)[:, None], first_box,
                        tf.constant([[0.0, 0.0, 1.0, 1.0]]))
    b = tf.where(valid[..., None], b, fallback[:, None, :])
    return tf.concat([b, fallback[:, None, :]], axis=1)


def ensure_jpeg(encoded: tf.Tensor) -> tf.Tensor:
    """Re-encodes the non-JPEG images of a batch as JPEG (quality 100); JPEGs pass unchanged.

    Args:
      encoded: string [n], image file bytes of any format TF decodes (JPEG, PNG, GIF, BMP).

    Returns:
      string [n] of JPEG bytes. Undecodable bytes raise InvalidArgumentError at run time.
    """
    def fix_one(contents):
        return tf.cond(tf.io.is_jpeg(contents), lambda: contents, lambda: tf.io.encode_jpeg(
            tf.io.decode_image(contents, channels=3, expand_animations=False), quality=100))

    def fix_all():
        return tf.map_fn(fix_one, encoded, fn_output_signature=tf.string,
                         parallel_iterations=16)

    fixed = tf.cond(tf.reduce_all(tf.io.is_jpeg(encoded)), lambda: encoded, fix_all)
    fixed.set_shape(encoded.shape)
    return fixed


def central_windows(shapes: tf.Tensor) -> tf.Tensor:
    """int32 [n, 4] (offset_y, offset_x, height, width) of the central CENTRAL_FRACTION of each
    side, for image shapes int32 [n, >= 2] (height, width, ...)."""
    hw = shapes[:, :2]
    size = tf.maximum(tf.cast(tf.round(tf.cast(hw, tf.float32) * CENTRAL_FRACTION), tf.int32), 1)
    return tf.concat([(hw - size) // 2, size], axis=1)


def random_windows(shapes: list[tf.Tensor], boxes: tf.Tensor) -> tf.Tensor:
    """Samples one crop window per image around its boxes (one sampler op per image).

    Args:
      shapes: n int32 [3] tensors (height, width, channels).
      boxes: float32 [n, m, 4] from `sanitize_boxes`.

    Returns:
      int32 [n, 4] (offset_y, offset_x, height, width).
    """
    per_image = tf.unstack(boxes[:, tf.newaxis], num=len(shapes))
    begins, sizes = [], []
    min_covered = tf.constant(MIN_OBJECT_COVERED)
    for shape, image_boxes in zip(shapes, per_image, strict=True):
        seed, seed2 = tf1.random.get_seed(None)  # derived from --tf_random_seed
        begin, size, _ = tf.raw_ops.SampleDistortedBoundingBoxV2(
            image_size=shape, bounding_boxes=image_boxes, min_object_covered=min_covered,
            seed=seed or 0, seed2=seed2 or 0, aspect_ratio_range=ASPECT_RATIO_RANGE,
            area_range=AREA_RANGE, max_attempts=MAX_ATTEMPTS, use_image_if_no_bounding_boxes=True)
        begins.append(begin)
        sizes.append(size)
    return tf.concat([tf.stack(begins)[:, :2], tf.stack(sizes)[:, :2]], axis=1)


def _resize_one(image, size_const, method: str):
    """uint8 [h, w, 3] -> float32 [1, s, s, 3] in [0, 255].

    The interpolating methods get the image cast to float32 first: the same values bit for bit
    (their kernels compute in float32 either way), but the float32 kernels are faster for
    bilinear, bicubic and area resizes (docs/performance-notes.md, "Measurements once in the code").
    """
    if method != 'nearest':
        image = tf.cast(image, tf.float32)
    image = tf.expand_dims(image, 0)
    if method == 'bilinear':
        return tf.raw_ops.ResizeBilinear(images=image, size=size_const, half_pixel_centers=True)
    if method == 'bicubic':  # overshoots: clip
        return tf.clip_by_value(tf.raw_ops.ResizeBicubic(
            images=image, size=size_const, half_pixel_centers=True), 0.0, 255.0)
    if method == 'area':
        return tf.raw_ops.ResizeArea(images=image, size=size_const)
    if method == 'nearest':
        return tf.cast(tf.raw_ops.ResizeNearestNeighbor(images=image, size=size_const,
                                                        half_pixel_centers=True), tf.float32)
    raise ValueError('resize method must be one of %s. Received: %r' % (RESIZE_METHODS, method))


def resize_method_for(name: str, index: int) -> str:
    """The resize method of image number `index` of a batch: `name`, or for 'round_robin'
    ROUND_ROBIN[index % 4]."""
    return ROUND_ROBIN[index % len(ROUND_ROBIN)] if name == 'round_robin' else name


def decode_crop_resize(records: tf.Tensor, num: int, *, image_size: int, random_crop: bool,
                       flip: bool, resize_method: str = 'bilinear',
                       fuse_decode_and_crop: bool = True) -> tuple[tf.Tensor, tf.Tensor]:
    """Parses `num` Examples; per image decodes the crop window, resizes, flips, normalises.

    Per image the chain is: JPEG header -> window -> decode (the window only when fused) ->
    resize (and random left-right flip); the chains are independent and one concat
    assembles the batch, which is then normalised (p / 127.5 - 1) in one pass.

    Args:
      records: string [num], serialized Examples.
      num: the static batch size.
      image_size: output height and width in pixels.
      random_crop: a random window around the boxes (training distortions), else the central
        87.5% of each side.
      flip: flip each image left-right with probability 1/2.
      resize_method: one of RESIZE_METHODS.
      fuse_decode_and_crop: decode only the window (`decode_and_crop_jpeg`).

    Returns:
      images float32 [num, image_size, image_size, 3] in [-1, 1]; labels int32 [num].
    """
    encoded, labels, boxes = parse_batch(records)
    images = tf.unstack(ensure_jpeg(encoded), num=num)
    shapes = [tf.image.extract_jpeg_shape(e) for e in images]
    windows = random_windows(shapes, boxes) if random_crop else central_windows(tf.stack(shapes))
    if fuse_decode_and_crop:
        decoded = [tf.io.decode_and_crop_jpeg(e, w, channels=3)
                   for e, w in zip(images, tf.unstack(windows, num=num), strict=True)]
    else:
        begins = tf.unstack(tf.pad(windows[:, :2], [[0, 0], [0, 1]]), num=num)
        sizes = tf.unstack(tf.pad(windows[:, 2:], [[0, 0], [0, 1]], constant_values=3), num=num)
        decoded = [tf.slice(tf.io.decode_jpeg(e, channels=3), b, s)
                   for e, b, s in zip(images, begins, sizes, strict=True)]
        for image in decoded:
            image.set_shape([None, None, 3])  # the slice loses the static channel count
    if flip:
        # Flip the uint8 crop before resizing: fewer bytes than the float output. A cond per
        # image with a constant axis: the images that keep their orientation are not touched,
        # and a reverse along a constant axis is cheaper than along a run-time axis list
        # (measured: 32 images resized with flips, 9.1 CPU-ms this way, 12.2 with
        # tf.reverse(image, axes) and axes [1] or []).
        coins = tf.unstack(tf1.random_uniform([num]) < 0.5, num=num)
        decoded = [tf.cond(coin, lambda im=image: tf.reverse(im, [1]), lambda im=image: im)
                   for image, coin in zip(decoded, coins, strict=True)]
    size_const = tf.constant([image_size, image_size], tf.int32)
    resized = [_resize_one(image, size_const, resize_method_for(resize_method, i))
               for i, image in enumerate(decoded)]
    # One concat copies the resized images into the batch: 2.9 CPU-ms less per batch of 32
    # than parallel_stack's per-image updates (bench: pipeline of 32 227x227 images, 19.5 ->
    # 16.6 CPU-ms). The batch is staged for the next step either way, so assembling it at
    # once delays nothing.
    stacked = tf.concat(resized, axis=0) if num > 1 else resized[0]
    # Normalise once for the batch: two memory-bound passes beat 2 * num small ops.
    stacked = stacked * (1.0 / 127.5) - 1.0
    return tf.reshape(stacked, [num, image_size, image_size, 3]), labels


def distort_color(images: tf.Tensor) -> tf.Tensor:
    """Random brightness, saturation, hue and contrast, drawn per image.

    Args:
      images: float32 [n, h, w, 3] in [-1, 1].

    Returns:
      float32 [n, h, w, 3] in [-1, 1].
    """
    n = tf.shape(images)[0]
    x = (images + 1.0) * 0.5 + tf1.random_uniform([n, 1, 1, 1], -32.0 / 255.0, 32.0 / 255.0)
    hsv = tf.image.rgb_to_hsv(tf.clip_by_value(x, 0.0, 1.0))
    hue = tf.math.floormod(hsv[..., 0] + tf1.random_uniform([n, 1, 1], -0.2, 0.2), 1.0)
    saturation = tf.clip_by_value(hsv[..., 1] * tf1.random_uniform([n, 1, 1], 0.5, 1.5), 0, 1)
    x = tf.image.hsv_to_rgb(tf.stack([hue, saturation, hsv[..., 2]], axis=-1))
    mean = tf.reduce_mean(x, axis=[1, 2], keepdims=True)
    x = (x - mean) * tf1.random_uniform([n, 1, 1, 1], 0.5, 1.5) + mean
    return tf.clip_by_value(x, 0.0, 1.0) * 2.0 - 1.0


def preprocess_imagenet_batch(records: tf.Tensor, num: int, *, image_size: int, train: bool,
                              distortions: bool = True, color: bool = False,
                              resize_method: str = 'bilinear',
                              fuse_decode_and_crop: bool = True) -> tuple[tf.Tensor, tf.Tensor]:
    """Serialized Examples -> a batch of model-ready images and their labels.

    Training with distortions: a random crop sampled around the boxes (AREA_RANGE,
    ASPECT_RATIO_RANGE, the whole image as the box when there is none), a random left-right
    flip, optional colour distortion. Training without distortions: the central crop and a
    random flip. Eval: the central crop (87.5% of each side), no randomness. Then resize.

    Args:
      records: string [num].
      num: static batch size.
      image_size: output height and width in pixels.
      train: training (random) or eval (deterministic) processing.
      distortions: random crop (training only).
      color: random colour distortion (training only).
      resize_method: one of RESIZE_METHODS.
      fuse_decode_and_crop: decode only the crop window of each JPEG.

    Returns:
      images float32 [num, image_size, image_size, 3] in [-1, 1]; labels int32 [num] as stored.
    """
    images, labels = decode_crop_resize(
        records, num, image_size=image_size, random_crop=train and distortions, flip=train,
        resize_method=resize_method, fuse_decode_and_crop=fuse_decode_and_crop)
    if train and color:
        images = distort_color(images)
    return images, labels


def random_crop_padded(images: tf.Tensor, pad: int) -> tf.Tensor:
    """Pads each image of [n, h, w, c] by `pad` zeros per side and takes a random h x w crop
    per image (the standard CIFAR-10 augmentation)."""
    shape = images.shape.as_list()
    n, h, w = tf.shape(images)[0], shape[1], shape[2]
    padded = tf.pad(images, [[0, 0], [pad, pad], [pad, pad], [0, 0]])
    offsets = tf1.random_uniform([n, 2], 0, 2 * pad + 1, dtype=tf.int32)
    rows = offsets[:, :1] + tf.range(h)[tf.newaxis]
    cols = offsets[:, 1:] + tf.range(w)[tf.newaxis]
    cropped = tf.gather(padded, rows, axis=1, batch_dims=1)
    return tf.gather(cropped, cols, axis=2, batch_dims=1)


def preprocess_cifar10_batch(images: tf.Tensor, *, image_size: int, train: bool,
                             distortions: bool = True, color: bool = False,
                             resize_method: str = 'bilinear') -> tf.Tensor:
    """CIFAR-10 images -> float32 [n, image_size, image_size, 3] in [-1, 1].

    Training with distortions: pad 4 pixels per side and take a random 32x32 crop, random flip.
    Training without distortions: random flip only. Eval: the images as stored. Images are
    resized when image_size is not 32 (round_robin uses bilinear here).

    Args:
      images: uint8 [n, 32, 32, 3].
      image_size, train, distortions, color, resize_method: as in `preprocess_imagenet_batch`.
    """
    images = tf.cast(images, tf.float32)
    if train and distortions:
        images = random_crop_padded(images, 4)
    if image_size != 32:
        method = 'bilinear' if resize_method == 'round_robin' else resize_method
        images = tf.clip_by_value(tf.image.resize(images, [image_size, image_size], method),
                                  0.0, 255.0)
    if train:
        images = tf.image.random_flip_left_right(images)
    images = images * (1.0 / 127.5) - 1.0
    if train and color:
        images = distort_color(images)
    images.set_shape([None, image_size, image_size, 3])
    return images
