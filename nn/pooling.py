"""Pooling layers (`MaxPool2d`, `AvgPool2d`): whole-array NumPy construct methods, compiled like user code.

Max pooling finds the first largest element of each window with one comparison per kernel offset over
the whole output (ties go to the first offset in row-major order, as `np.argmax` picks), then gathers
those elements from the input by flat index: the gradient goes to that one element per window
(`np.add.at`, so overlapping windows add up). Average pooling is the windows view summed.
"""

from __future__ import annotations

import numpy as np

from . import window as W
from .cell import Cell

__all__ = ["MaxPool2d", "AvgPool2d"]


class _Pool2d(Cell):
    """Arguments and padding shared by the pooling layers (MindSpore's defaults: kernel_size=1,
    stride=1, pad_mode='valid')."""

    def __init__(self, layer: str, kernel_size, stride, pad_mode, padding, dilation, ceil_mode, data_format):
        super().__init__()
        self.kernel_size = W.pair(kernel_size, "kernel_size", layer)
        self.stride = W.pair(stride, "stride", layer)
        self.dilation = W.pair(dilation, "dilation", layer)
        self.pad_mode = W.pad_mode(pad_mode, layer)
        self.padding = W.explicit_padding(padding, self.pad_mode, (2,), layer)
        self.ceil_mode = bool(ceil_mode)
        self.data_format = W.data_format(data_format, layer)
        self.offsets = tuple((i, j) for i in range(self.kernel_size[0]) for j in range(self.kernel_size[1]))
        self.return_indices = False

    def construct(self, x):
        if x.ndim != 3:
            return self.pool(x)
        if self.return_indices:                 # (C, H, W): pooled as a batch of one
            out, index = self.pool(x[None])
            return out[0], index[0]
        return self.pool(x[None])[0]

    def pads(self, h: int, w: int) -> tuple:
        """((top, bottom, OH), (left, right, OW)) for an input of height h and width w."""
        return (W.axis_padding(h, self.kernel_size[0], self.stride[0], self.dilation[0], self.pad_mode,
                               self.padding[0], self.padding[1], self.ceil_mode),
                W.axis_padding(w, self.kernel_size[1], self.stride[1], self.dilation[1], self.pad_mode,
                               self.padding[2], self.padding[3], self.ceil_mode))

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}, "
                f"padding={self.padding}, ceil_mode={self.ceil_mode}")


class MaxPool2d(_Pool2d):
    """The largest element of each window, NCHW (or CHW). Padding (pad_mode 'same' and 'pad', and
    `ceil_mode`) never wins: it is -inf. `return_indices=True` also returns, for each output, the flat
    index (row * W + column) of its element in its input plane. The gradient goes to that element; when
    a window holds its largest value several times, to the first in row-major order (as `np.argmax`);
    a NaN counts as the largest (the output is NaN, as `np.max` gives)."""

    def __init__(self, kernel_size=1, stride=1, pad_mode: str = "valid", padding=0, dilation=1,
                 return_indices: bool = False, ceil_mode: bool = False, data_format: str = "NCHW"):
        super().__init__("MaxPool2d", kernel_size, stride, pad_mode, padding, dilation, ceil_mode, data_format)
        self.return_indices = return_indices

    def pool(self, x):
        n, c, h, w = x.shape
        (top, bottom, oh), (left, right, ow) = self.pads(h, w)
        if top or bottom or left or right:
            # -inf around x: x + 0 inside, so the gradient still reaches x through the padding
            edge = np.pad(np.zeros((h, w), dtype=x.dtype), ((top, bottom), (left, right)), constant_values=-np.inf)
            x = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right))) + edge
        hp, wp = h + top + bottom, w + left + right
        win = W.windows(x, self.kernel_size, self.stride, self.dilation)
        dh, dw = self.dilation
        # the flat offset (within x's plane) of each window's first largest element
        best = win[:, :, :, :, 0, 0]
        first = np.zeros((n, c, oh, ow), np.intp)
        for i, j in self.offsets[1:]:
            candidate = win[:, :, :, :, i, j]
            # larger, or NaN where the best so far is a number: a NaN wins and stays, as in np.argmax
            larger = ~(candidate <= best) & (best == best)
            first = np.where(larger, i * dh * wp + j * dw, first)
            best = np.maximum(best, candidate)
        start = (np.arange(oh) * (self.stride[0] * wp)).reshape(oh, 1) + np.arange(ow) * self.stride[1]
        plane = first + start
        # gathered from x with channels first: a convolution's output is laid out so (no copy), and so
        # is the gradient then, as the convolution's backward pass reads it
        planes = (np.arange(n) * (hp * wp)).reshape(n, 1, 1, 1) + (np.arange(c) * (n * hp * wp)).reshape(c, 1, 1)
        out = x.transpose(1, 0, 2, 3).reshape(c * n * hp * wp)[plane + planes]
        if self.return_indices:
            return out, (plane // wp - top) * w + plane % wp - left
        return out


class AvgPool2d(_Pool2d):
    """The mean of each window, NCHW (or CHW). pad_mode 'same' averages the input elements only;
    'pad' counts the zero padding too unless `count_include_pad=False`; `divisor_override` replaces
    the count. Elements `ceil_mode` adds past the padding are never counted."""

    def __init__(self, kernel_size=1, stride=1, pad_mode: str = "valid", padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override=None, data_format: str = "NCHW"):
        super().__init__("AvgPool2d", kernel_size, stride, pad_mode, padding, 1, ceil_mode, data_format)
        if divisor_override is not None and (not isinstance(divisor_override, int) or divisor_override <= 0):
            raise ValueError(f"AvgPool2d: divisor_override must be a positive int or None, got {divisor_override!r}")
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def pool(self, x):
        n, c, h, w = x.shape
        (top, bottom, oh), (left, right, ow) = self.pads(h, w)
        if top or bottom or left or right:
            x = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
        total = W.windows(x, self.kernel_size, self.stride, self.dilation).sum(axis=(4, 5))
        if self.divisor_override is not None:
            return total / self.divisor_override
        kh, kw = self.kernel_size
        if not (top or bottom or left or right):
            return total / (kh * kw)
        # how many taps of each window count, row by row and column by column
        included = self.pad_mode == "pad" and self.count_include_pad
        lo_h, hi_h = (-top, h + self.padding[1]) if included else (0, h)
        lo_w, hi_w = (-left, w + self.padding[3]) if included else (0, w)
        rows = (np.arange(oh) * self.stride[0]).reshape(oh, 1) + np.arange(kh) - top
        cols = (np.arange(ow) * self.stride[1]).reshape(ow, 1) + np.arange(kw) - left
        count_h = ((rows >= lo_h) & (rows < hi_h)).sum(axis=1)
        count_w = ((cols >= lo_w) & (cols < hi_w)).sum(axis=1)
        return total / (count_h.reshape(oh, 1) * count_w).astype(x.dtype)
