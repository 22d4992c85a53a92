"""`graphjit.dataset.vision`: image transforms with MindSpore's results (dtypes, layouts), each
vectorized over stacked rows where it can be. Images are HWC (or HW) NumPy arrays."""

from __future__ import annotations

import enum
import numbers

import numpy as np

from .transform_base import Transform
from .vision_datasets import decode_image


class Inter(enum.IntEnum):
    """Interpolation modes of `Resize` (MindSpore's values)."""
    NEAREST = 0
    ANTIALIAS = 1
    LINEAR = 2
    BILINEAR = 2
    CUBIC = 3
    BICUBIC = 3
    AREA = 4
    PILCUBIC = 5


class Border(str, enum.Enum):
    """Padding modes of `Pad` and `RandomCrop`."""
    CONSTANT = "constant"
    EDGE = "edge"
    REFLECT = "reflect"
    SYMMETRIC = "symmetric"


def _image_rank(image: np.ndarray, name: str, batch: int = 0) -> None:
    if image.ndim - batch not in (2, 3):
        raise ValueError(f"{name}: the image must be <H, W> or <H, W, C>, got shape {image.shape[batch:]}")


def _size_pair(size, name: str) -> tuple:
    if isinstance(size, numbers.Integral) and not isinstance(size, bool):
        if size <= 0:
            raise ValueError(f"{name}: size must be positive, got {size}")
        return int(size), int(size)
    if isinstance(size, (list, tuple)) and len(size) == 2 and all(
            isinstance(s, numbers.Integral) and not isinstance(s, bool) and s > 0 for s in size):
        return int(size[0]), int(size[1])
    raise TypeError(f"{name}: size must be a positive int or a (height, width) pair, got {size!r}")


class Rescale(Transform):
    """`image * rescale + shift`, as float32."""
    vectorized = True

    def __init__(self, rescale, shift):
        for name, value in (("rescale", rescale), ("shift", shift)):
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise TypeError(f"Rescale: {name} must be a number, got {value!r}")
        self.rescale, self.shift = float(rescale), float(shift)

    def _row(self, image, rng=None):
        out = image.astype(np.float32)          # a new array: scaled and shifted in place
        out *= np.float32(self.rescale)
        out += np.float32(self.shift)
        return out

    _stacked = _row


class Normalize(Transform):
    """`(image - mean) / std` per channel, as float32; `is_hwc=False` for CHW images."""
    vectorized = True

    def __init__(self, mean, std, is_hwc=True):
        for name, values, low, strict in (("mean", mean, 0.0, False), ("std", std, 0.0, True)):
            if not isinstance(values, (list, tuple)) or not values or not all(
                    isinstance(v, numbers.Real) and not isinstance(v, bool) for v in values):
                raise TypeError(f"Normalize: {name} must be a list or tuple of numbers, got {values!r}")
            for v in values:
                if (v <= low if strict else v < low) or v > 255:
                    raise ValueError(f"Normalize: {name} values must be in {'(' if strict else '['}0, 255], got {v}")
        if len(mean) != len(std):
            raise ValueError(f"Normalize: mean has {len(mean)} values but std has {len(std)}")
        if not isinstance(is_hwc, bool):
            raise TypeError("Normalize: is_hwc must be a bool")
        self.mean, self.std, self.is_hwc = np.float32(mean), np.float32(std), is_hwc

    def _apply(self, image, batch: int):
        _image_rank(image, "Normalize", batch)
        mean, std = self.mean, self.std
        if image.ndim - batch == 3:
            channels = image.shape[-1] if self.is_hwc else image.shape[batch]
            if len(mean) not in (1, channels):
                raise ValueError(f"Normalize: the image has {channels} channels but mean and std have {len(mean)} values")
            if not self.is_hwc:
                mean, std = mean[:, None, None], std[:, None, None]
        elif len(mean) != 1:
            raise ValueError(f"Normalize: an <H, W> image has 1 channel but mean and std have {len(mean)} values")
        out = np.subtract(image, mean, dtype=np.float32)       # a new array: divided in place
        out /= std
        return out

    def _row(self, image, rng=None):
        return self._apply(image, 0)

    def _stacked(self, images, rng=None):
        return self._apply(images, 1)


class HWC2CHW(Transform):
    """<H, W, C> to <C, H, W> (an <H, W> image is left as it is)."""
    vectorized = True

    def _row(self, image, rng=None):
        _image_rank(image, "HWC2CHW")
        return np.ascontiguousarray(image.transpose(2, 0, 1)) if image.ndim == 3 else image

    def _stacked(self, images, rng=None):
        _image_rank(images, "HWC2CHW", 1)
        return np.ascontiguousarray(images.transpose(0, 3, 1, 2)) if images.ndim == 4 else images


class ToTensor(Transform):
    """An HWC image (or a PIL image) as CHW `output_type` (float32) divided by 255."""
    vectorized = True

    def __init__(self, output_type=np.float32):
        from .dtypes import to_numpy_dtype
        self.output_type = to_numpy_dtype(output_type, "ToTensor: output_type")

    def _row(self, image, rng=None):
        _image_rank(image, "ToTensor")
        image = image[..., None] if image.ndim == 2 else image
        return (image.transpose(2, 0, 1) / 255.0).astype(self.output_type)

    def _stacked(self, images, rng=None):
        _image_rank(images, "ToTensor", 1)
        images = images[..., None] if images.ndim == 3 else images
        return (images.transpose(0, 3, 1, 2) / 255.0).astype(self.output_type)


def _weights(n_in: int, n_out: int, mode: Inter) -> np.ndarray:
    """(n_out, n_in) resampling matrix along one axis, as OpenCV's resize computes it."""
    scale = n_in / n_out
    matrix = np.zeros((n_out, n_in), dtype=np.float64)
    rows = np.arange(n_out)
    if mode == Inter.NEAREST:
        matrix[rows, np.minimum(np.floor(rows * scale).astype(int), n_in - 1)] = 1.0
        return matrix
    if mode == Inter.AREA:
        if n_out > n_in:
            raise ValueError("Resize: Inter.AREA only shrinks images; use Inter.LINEAR to enlarge")
        for i in range(n_out):
            lo, hi = i * scale, (i + 1) * scale
            for j in range(int(np.floor(lo)), min(int(np.ceil(hi)), n_in)):
                matrix[i, j] = min(hi, j + 1) - max(lo, j)
        return matrix / matrix.sum(axis=1, keepdims=True)
    centre = (rows + 0.5) * scale - 0.5
    if mode == Inter.LINEAR:
        centre = np.clip(centre, 0, None)
        low = np.floor(centre).astype(int)
        frac = centre - low
        np.add.at(matrix, (rows, np.minimum(low, n_in - 1)), 1 - frac)
        np.add.at(matrix, (rows, np.minimum(low + 1, n_in - 1)), frac)
        return matrix
    if mode == Inter.CUBIC:
        a = -0.75
        low = np.floor(centre).astype(int)
        frac = centre - low
        for k in range(-1, 3):
            d = np.abs(frac - k)
            w = np.where(d <= 1, ((a + 2) * d - (a + 3)) * d * d + 1,
                         np.where(d < 2, ((a * d - 5 * a) * d + 8 * a) * d - 4 * a, 0.0))
            np.add.at(matrix, (rows, np.clip(low + k, 0, n_in - 1)), w)
        return matrix
    raise ValueError(f"Resize: interpolation {Inter(mode).name} is not supported by graphjit "
                     "(NEAREST, LINEAR, CUBIC and AREA are)")


class Resize(Transform):
    """Resize to `size` (h, w), or an int: the shorter side to `size`, keeping the aspect ratio.
    The interpolation is OpenCV's (half-pixel centres); uint8 images stay uint8 (rounded)."""
    vectorized = True

    def __init__(self, size, interpolation=Inter.LINEAR):
        if isinstance(size, numbers.Integral) and not isinstance(size, bool):
            if size <= 0:
                raise ValueError(f"Resize: size must be positive, got {size}")
            self.size = int(size)
        else:
            self.size = _size_pair(size, "Resize")
        self.interpolation = Inter(interpolation)
        if self.interpolation in (Inter.ANTIALIAS, Inter.PILCUBIC):
            raise ValueError(f"Resize: interpolation {self.interpolation.name} is not supported by graphjit "
                             "(NEAREST, LINEAR, CUBIC and AREA are)")

    def _target(self, h: int, w: int) -> tuple:
        if isinstance(self.size, tuple):
            return self.size
        if h <= w:
            return self.size, max(1, int(self.size * w / h))
        return max(1, int(self.size * h / w)), self.size

    def _apply(self, image, batch: int):
        _image_rank(image, "Resize", batch)
        h, w = image.shape[batch:batch + 2]
        oh, ow = self._target(h, w)
        wy, wx = _weights(h, oh, self.interpolation), _weights(w, ow, self.interpolation)
        data = image.astype(np.float32)
        moved = np.moveaxis(data, (batch, batch + 1), (-2, -1)) if image.ndim - batch == 3 else data
        out = wy.astype(np.float32) @ moved @ wx.T.astype(np.float32)
        if image.ndim - batch == 3:
            out = np.moveaxis(out, (-2, -1), (batch, batch + 1))
        if image.dtype == np.uint8:
            return np.clip(np.rint(out), 0, 255).astype(np.uint8)
        return out.astype(image.dtype if image.dtype.kind == "f" else np.float32)

    def _row(self, image, rng=None):
        return self._apply(image, 0)

    def _stacked(self, images, rng=None):
        return self._apply(images, 1)


def _pad_hw(image, top, bottom, left, right, fill, mode, batch=0):
    pads = [(0, 0)] * image.ndim
    pads[batch], pads[batch + 1] = (top, bottom), (left, right)
    if mode == Border.CONSTANT:
        return np.pad(image, pads, mode="constant", constant_values=fill)
    return np.pad(image, pads, mode=Border(mode).value)


class CenterCrop(Transform):
    """The central `size` (h, w) region (the image is zero-padded first if it is smaller)."""
    vectorized = True

    def __init__(self, size):
        self.size = _size_pair(size, "CenterCrop")

    def _apply(self, image, batch):
        _image_rank(image, "CenterCrop", batch)
        h, w = image.shape[batch:batch + 2]
        ch, cw = self.size
        if ch > h or cw > w:
            ph, pw = max(ch - h, 0), max(cw - w, 0)
            image = _pad_hw(image, ph // 2, ph - ph // 2, pw // 2, pw - pw // 2, 0, Border.CONSTANT, batch)
            h, w = image.shape[batch:batch + 2]
        top, left = int(round((h - ch) / 2.0)), int(round((w - cw) / 2.0))
        index = (slice(None),) * batch + (slice(top, top + ch), slice(left, left + cw))
        return np.ascontiguousarray(image[index])

    def _row(self, image, rng=None):
        return self._apply(image, 0)

    def _stacked(self, images, rng=None):
        return self._apply(images, 1)


def _padding(padding, name: str) -> tuple:
    """(top, bottom, left, right) from MindSpore's padding: an int, (left/right, top/bottom) or
    (left, top, right, bottom)."""
    if padding is None:
        return 0, 0, 0, 0
    if isinstance(padding, numbers.Integral) and not isinstance(padding, bool):
        return (int(padding),) * 4
    if isinstance(padding, (list, tuple)) and len(padding) == 2:
        return int(padding[1]), int(padding[1]), int(padding[0]), int(padding[0])
    if isinstance(padding, (list, tuple)) and len(padding) == 4:
        left, top, right, bottom = (int(p) for p in padding)
        return top, bottom, left, right
    raise TypeError(f"{name}: padding must be an int or a sequence of 2 or 4 ints, got {padding!r}")


class Pad(Transform):
    """Pad the image's borders (`padding`: int, (left/right, top/bottom) or (left, top, right,
    bottom)) with `fill_value` or by `padding_mode`."""
    vectorized = True

    def __init__(self, padding, fill_value=0, padding_mode=Border.CONSTANT):
        self.padding, self.fill_value, self.padding_mode = _padding(padding, "Pad"), fill_value, Border(padding_mode)

    def _row(self, image, rng=None):
        _image_rank(image, "Pad")
        return _pad_hw(image, *self.padding, self.fill_value, self.padding_mode)

    def _stacked(self, images, rng=None):
        _image_rank(images, "Pad", 1)
        return _pad_hw(images, *self.padding, self.fill_value, self.padding_mode, batch=1)


class RandomCrop(Transform):
    """A `size` region at a random place (after optional `padding`; `pad_if_needed` pads an image
    smaller than `size`)."""
    random = True

    def __init__(self, size, padding=None, pad_if_needed=False, fill_value=0, padding_mode=Border.CONSTANT):
        self.size = _size_pair(size, "RandomCrop")
        self.padding = _padding(padding, "RandomCrop")
        self.pad_if_needed, self.fill_value, self.padding_mode = pad_if_needed, fill_value, Border(padding_mode)

    def _row(self, image, rng=None):
        _image_rank(image, "RandomCrop")
        image = _pad_hw(image, *self.padding, self.fill_value, self.padding_mode) if any(self.padding) else image
        h, w = image.shape[:2]
        ch, cw = self.size
        if self.pad_if_needed and (h < ch or w < cw):
            ph, pw = max(ch - h, 0), max(cw - w, 0)
            image = _pad_hw(image, ph, ph, pw, pw, self.fill_value, self.padding_mode)
            h, w = image.shape[:2]
        if h < ch or w < cw:
            raise ValueError(f"RandomCrop: the crop size {self.size} is larger than the image {(h, w)}")
        top, left = int(rng.integers(0, h - ch + 1)), int(rng.integers(0, w - cw + 1))
        return np.ascontiguousarray(image[top:top + ch, left:left + cw])


class RandomResizedCrop(Transform):
    """A crop of random area (`scale` of the image) and aspect ratio (`ratio`), resized to `size`;
    after `max_attempts` draws that do not fit, the central crop of the nearest ratio (torchvision's
    and MindSpore's rule)."""
    random = True

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3. / 4., 4. / 3.), interpolation=Inter.BILINEAR,
                 max_attempts=10):
        self.size = _size_pair(size, "RandomResizedCrop")
        for name, pair in (("scale", scale), ("ratio", ratio)):
            if not isinstance(pair, (list, tuple)) or len(pair) != 2 or not 0 <= pair[0] <= pair[1] or pair[1] <= 0:
                raise ValueError(f"RandomResizedCrop: {name} must be (min, max) with 0 <= min <= max, got {pair!r}")
        if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts <= 0:
            raise ValueError(f"RandomResizedCrop: max_attempts must be a positive int, got {max_attempts!r}")
        self.scale, self.ratio, self.max_attempts = tuple(scale), tuple(ratio), max_attempts
        self.resize = Resize(self.size, interpolation)

    def _window(self, h: int, w: int, rng) -> tuple:
        area = h * w
        log_ratio = np.log(self.ratio)
        for _ in range(self.max_attempts):
            target = area * rng.uniform(*self.scale)
            aspect = np.exp(rng.uniform(*log_ratio))
            cw, ch = int(round(np.sqrt(target * aspect))), int(round(np.sqrt(target / aspect)))
            if 0 < cw <= w and 0 < ch <= h:
                return int(rng.integers(0, h - ch + 1)), int(rng.integers(0, w - cw + 1)), ch, cw
        aspect = w / h
        if aspect < self.ratio[0]:
            cw, ch = w, int(round(w / self.ratio[0]))
        elif aspect > self.ratio[1]:
            ch, cw = h, int(round(h * self.ratio[1]))
        else:
            ch, cw = h, w
        return (h - ch) // 2, (w - cw) // 2, ch, cw

    def _row(self, image, rng=None):
        _image_rank(image, "RandomResizedCrop")
        top, left, ch, cw = self._window(image.shape[0], image.shape[1], rng)
        return self.resize._row(image[top:top + ch, left:left + cw])


class _RandomFlip(Transform):
    vectorized = True
    random = True
    axis = 1

    def __init__(self, prob=0.5):
        if isinstance(prob, bool) or not isinstance(prob, numbers.Real) or not 0 <= prob <= 1:
            raise ValueError(f"{type(self).__name__}: prob must be in [0, 1], got {prob!r}")
        self.prob = float(prob)

    def _row(self, image, rng=None):
        _image_rank(image, type(self).__name__)
        return np.flip(image, self.axis).copy() if rng.random() < self.prob else image

    def _stacked(self, images, rng=None):
        _image_rank(images, type(self).__name__, 1)
        flip = rng.random(len(images)) < self.prob
        out = images.copy()
        out[flip] = np.flip(images[flip], self.axis + 1)
        return out


class RandomHorizontalFlip(_RandomFlip):
    """Flip left-right with probability `prob`."""
    axis = 1


class RandomVerticalFlip(_RandomFlip):
    """Flip upside-down with probability `prob`."""
    axis = 0


class HorizontalFlip(Transform):
    """Flip left-right."""
    vectorized = True

    def _row(self, image, rng=None):
        _image_rank(image, "HorizontalFlip")
        return np.flip(image, 1).copy()

    def _stacked(self, images, rng=None):
        return np.flip(images, 2).copy()


class VerticalFlip(Transform):
    """Flip upside-down."""
    vectorized = True

    def _row(self, image, rng=None):
        _image_rank(image, "VerticalFlip")
        return np.flip(image, 0).copy()

    def _stacked(self, images, rng=None):
        return np.flip(images, 1).copy()


class Decode(Transform):
    """Encoded image bytes (uint8, 1-D) to an RGB <H, W, 3> uint8 image (Pillow: the `vision` extra)."""

    def __init__(self, to_pil=False):
        if to_pil:
            raise ValueError("Decode: to_pil=True is not supported by graphjit; images are NumPy arrays")

    def _row(self, data, rng=None):
        if data.ndim != 1 or data.dtype != np.uint8:
            raise ValueError(f"Decode: expects the encoded bytes as a 1-D uint8 array, got {data.dtype} {data.shape}")
        return decode_image(data, "Decode")


__all__ = ["Inter", "Border", "Rescale", "Normalize", "HWC2CHW", "ToTensor", "Resize", "CenterCrop", "Pad",
           "RandomCrop", "RandomResizedCrop", "RandomHorizontalFlip", "RandomVerticalFlip", "HorizontalFlip", "VerticalFlip", "Decode"]
