"""One image file as the JPEG bytes of an ImageNet-format record, and what its conversion changed
(or, read_image, why Pillow cannot read it).

An 8-bit RGB JPEG is stored byte for byte. Anything else is converted to 8-bit RGB and stored
as JPEG (quality 95), and the conversion is named, so that the converter's summary counts every
image whose pixel values changed:

  mode (Pillow)          conversion
  I;16, I;16B, I;16L     16-bit grayscale: scaled to 8 bits, v * 255 / 65535 (rounded)
  I, F                   32-bit integer or float grayscale: scaled from the nominal range its
                         values fit, 0..1 (F only), 0..255, 0..65535, else 0..its maximum
                         (negative values become 0)
  RGB, RGBA, LA of a     Pillow keeps the high byte of each sample (v // 256): said as
  16-bit PNG or TIFF     "16-bit RGB PNG reduced to 8 bits" ("... TIFF ...")
  RGBA, LA, PA, P with   alpha dropped: composed onto white
  transparency
  P, L, 1, CMYK, ...     palette, grayscale, bilevel or colour model converted to RGB
  RGB (not JPEG)         re-encoded as JPEG (lossy)

Pillow hands 16-bit grayscale to RGB by clipping every value above 255 (a 16-bit PNG of mean
127/255 became mean 254, 91% white): the scaling here is what keeps it. Pillow's modes:
https://pillow.readthedocs.io/en/stable/handbook/concepts.html#modes
"""

from __future__ import annotations

import contextlib
import io
from typing import NamedTuple

import numpy as np

JPEG_QUALITY = 95
_PNG_SIGNATURE = b'\x89PNG\r\n\x1a\n'
_ALPHA_MODES = ('RGBA', 'LA', 'PA')
_MODE_NAMES = {'P': 'palette (P) expanded to RGB', 'L': 'grayscale (L) expanded to RGB',
               '1': 'bilevel (1) expanded to RGB', 'CMYK': 'CMYK converted to RGB'}


class Unreadable(NamedTuple):
    """An image file Pillow cannot read (read_image's answer instead of an error).

    Attributes:
      path: the file.
      reason: Pillow's words ('image file is truncated (3 bytes not processed)'), 'not an
        image format Pillow knows', or for an image over the pixel limit its size and the limit.
      pixels: width x height of an image over PixelLimits.error (0 for any other reason).
    """

    path: str
    reason: str
    pixels: int = 0


class PixelLimits(NamedTuple):
    """How many pixels (width x height) an image may have.

    Pillow guards against decompression bombs (a small file that decodes to gigabytes): it
    warns above Image.MAX_IMAGE_PIXELS (89478485 unless changed) with an anonymous
    DecompressionBombWarning and refuses above twice that (178956970) with a
    DecompressionBombError. The converter makes the same checks itself (pixel_check turns
    Pillow's off), so that each one names the file.

    Attributes:
      error: images over this are not read (Unreadable with its pixels); None: no limit.
      warn: images over this are converted and named in a warning; None: no warning.
      flag: whether `error` is --max_image_pixels (not Pillow's limit).
    """

    error: int | None
    warn: int | None
    flag: bool = False


def pixel_limits(max_image_pixels: int | None = None) -> PixelLimits:
    """The limits of a conversion: Pillow's (as set now in PIL.Image.MAX_IMAGE_PIXELS) when
    --max_image_pixels is not given (None); else that flag's, with no warning (0: no limit)."""
    from PIL import Image
    if max_image_pixels is not None:
        return PixelLimits(max_image_pixels or None, None, True)
    pillow = Image.MAX_IMAGE_PIXELS
    return PixelLimits(2 * pillow, pillow) if pillow else PixelLimits(None, None)


@contextlib.contextmanager
def pixel_check():
    """Turns Pillow's own decompression-bomb check off (PIL.Image.MAX_IMAGE_PIXELS = None)
    inside the block, and back to what it was after: read_image checks PixelLimits instead."""
    from PIL import Image
    saved = Image.MAX_IMAGE_PIXELS
    Image.MAX_IMAGE_PIXELS = None
    try:
        yield
    finally:
        Image.MAX_IMAGE_PIXELS = saved


def too_large(width: int, height: int, limits: PixelLimits) -> Unreadable | None:
    """Unreadable('', reason, pixels) for an image over limits.error, else None."""
    pixels = width * height
    if limits.error is None or pixels <= limits.error:
        return None
    whose = '--max_image_pixels' if limits.flag else "Pillow's limit against decompression bombs"
    return Unreadable('', '%dx%d = %d pixels, over %s of %d pixels' % (
        width, height, pixels, whose, limits.error), pixels)


class Encoded(NamedTuple):
    """An image ready for a record.

    Attributes:
      data: JPEG bytes.
      height, width: in pixels.
      conversion: what changed the pixel values ('' for an RGB JPEG stored as it was).
    """

    data: bytes
    height: int
    width: int
    conversion: str


def _bit_depth(image, data: bytes) -> int | None:
    """Bits per sample of a PNG (its IHDR chunk's byte 24) or a TIFF (its BitsPerSample tag,
    258), None for any other file: Pillow opens a 16-bit RGB PNG or TIFF as 8-bit RGB."""
    if data[:8] == _PNG_SIGNATURE and data[12:16] == b'IHDR' and len(data) > 24:
        return data[24]
    if image.format == 'TIFF':
        bits = image.tag_v2.get(258)
        return max(bits) if isinstance(bits, tuple) and bits else bits
    return None


def _nominal_top(values: np.ndarray, floats: bool) -> tuple[float, str]:
    """(the value that becomes 255, its range as text) for 32-bit grayscale."""
    top = float(values.max()) if values.size else 0.0
    ladder = ([1.0] if floats else []) + [255.0, 65535.0]
    for nominal in ladder:
        if top <= nominal:
            return nominal, '0..%g' % nominal
    return top, '0..%g (its maximum)' % top


def scale_to_8_bits(image) -> tuple[object, str]:
    """A high-bit-depth grayscale Pillow image (I;16*, I, F) as mode L, and the conversion.

    Returns:
      (an 8-bit grayscale image, e.g. '16-bit grayscale (I;16) scaled to 8 bits').
    """
    from PIL import Image
    values = np.asarray(image).astype(np.float64)  # I;16B: big-endian uint16, read as such
    if image.mode.startswith('I;16'):
        top, what = 65535.0, '16-bit grayscale (%s) scaled to 8 bits' % image.mode
    else:
        top, span = _nominal_top(values, image.mode == 'F')
        kind = 'float' if image.mode == 'F' else 'integer'
        what = '32-bit %s grayscale (%s) scaled to 8 bits from %s' % (kind, image.mode, span)
    scaled = np.clip(np.rint(values * (255.0 / top)), 0, 255) if top > 0 else values * 0
    return Image.fromarray(scaled.astype(np.uint8), 'L'), what


def _drop_alpha(image):
    """RGBA (or any mode with alpha) composed onto white, as RGB."""
    from PIL import Image
    rgba = image.convert('RGBA')
    background = Image.new('RGB', rgba.size, (255, 255, 255))
    background.paste(rgba, mask=rgba.split()[3])
    return background


def to_rgb(image, data: bytes) -> tuple[object, str]:
    """Any Pillow image as 8-bit RGB, and what the conversion changed (see the module
    docstring); `data` is the file's bytes (a 16-bit PNG is told by its header, a 16-bit TIFF
    by its BitsPerSample tag)."""
    mode, notes = image.mode, []
    depth = _bit_depth(image, data)
    if mode.startswith('I') or mode == 'F':
        image, note = scale_to_8_bits(image)
        notes.append(note)
    elif depth == 16:
        notes.append('16-bit %s %s reduced to 8 bits' % (mode, image.format))
    transparent = mode == 'P' and 'transparency' in image.info
    if mode in _ALPHA_MODES or transparent:
        image = _drop_alpha(image)
        notes.append('%s: alpha dropped onto white' % ('palette with transparency (P)'
                                                       if transparent else mode))
    elif mode in _MODE_NAMES:
        notes.append(_MODE_NAMES[mode])
    elif mode not in ('RGB', 'L') and not notes:
        notes.append('%s converted to RGB' % mode)
    if not notes:
        notes.append('%s %s re-encoded as JPEG' % (mode, image.format or 'image'))
    return image.convert('RGB'), '; '.join(notes)


def encode_image(path: str, limits: PixelLimits | None = None) -> Encoded | Unreadable:
    """Reads one image file: the file itself for an 8-bit RGB JPEG, else a conversion.

    Args:
      limits: an image over limits.error is not decoded: Unreadable with its pixels (its
        size is in the file's header); None: no limit here (Pillow's own check applies).

    Raises:
      PIL.UnidentifiedImageError: not an image format Pillow knows.
      OSError, ValueError, SyntaxError: Pillow cannot read the file.
    """
    from PIL import Image
    with open(path, 'rb') as f:
        data = f.read()
    with Image.open(io.BytesIO(data)) as image:
        width, height = image.size
        over = too_large(width, height, limits) if limits else None
        if over:
            return over._replace(path=path)
        image.load()
        if image.format == 'JPEG' and image.mode == 'RGB':
            return Encoded(data, height, width, '')
        rgb, conversion = to_rgb(image, data)
        out = io.BytesIO()
        rgb.save(out, 'JPEG', quality=JPEG_QUALITY)
        return Encoded(out.getvalue(), height, width, conversion)


def read_image(path: str, limits: PixelLimits | None = None) -> Encoded | Unreadable:
    """encode_image's answer, or Unreadable with the reason when the file cannot be read: the
    converter reads every image once, while it writes, and names all the unreadable ones at
    the end instead of stopping at the first."""
    from PIL import Image, UnidentifiedImageError
    try:
        return encode_image(path, limits)
    except UnidentifiedImageError:
        return Unreadable(path, 'not an image format Pillow knows')
    except Image.DecompressionBombError as e:  # Pillow's own check (not inside pixel_check)
        return Unreadable(path, str(e))
    except (OSError, ValueError, SyntaxError) as e:
        # An OSError of the file itself names it: its strerror alone ('Permission denied').
        named = isinstance(e, OSError) and e.filename and e.strerror
        return Unreadable(path, e.strerror if named else str(e) or type(e).__name__)


def summary_line(conversions: dict[str, int], total: int) -> str:
    """The converter's line on pixel values, e.g. 'pixel values changed: 3 of 10 images,
    converted to 8-bit RGB JPEG (quality 95): 2 RGBA: alpha dropped onto white, 1 16-bit
    grayscale (I;16) scaled to 8 bits'."""
    changed = sum(conversions.values())
    if not changed:
        return ('pixel values changed: none (every image is an 8-bit RGB JPEG, stored byte for '
                'byte)')
    kinds = sorted(conversions.items(), key=lambda kv: (-kv[1], kv[0]))
    return ('pixel values changed: %d of %d images, converted to 8-bit RGB JPEG (quality %d): '
            '%s' % (changed, total, JPEG_QUALITY,
                    ', '.join('%d %s' % (n, kind) for kind, n in kinds)))
