"""Convolution layers (`Conv2d`): whole-array NumPy construct methods, compiled like user code.

A convolution is one matrix product per group: the windows of the padded input (a view) are copied
into columns (im2col), one column per output pixel of every image, and multiplied by the weight
reshaped to a matrix (one large product is much faster than one per image). Its gradient comes from the
ops' own rules: the products' for the weight, the windows view's for the input (one in-place add per
kernel offset, graph/vjp_linalg.py).
"""

from __future__ import annotations

import math

import numpy as np

from . import init
from . import window as W
from .cell import Cell

__all__ = ["Conv2d"]


class Conv2d(Cell):
    """2-D convolution (cross-correlation) of NCHW input, MindSpore's `nn.Conv2d` with its defaults:
    `pad_mode='same'`, `has_bias=False`, weight of shape (C_out, C_in / group, kH, kW) initialized by
    HeUniform, bias by Uniform(1 / sqrt(fan_in)). `padding` (pad_mode 'pad' only) is an int or a tuple
    (top, bottom, left, right); `stride` and `dilation` an int or a tuple (height, width)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, pad_mode: str = "same",
                 padding=0, dilation=1, group: int = 1, has_bias: bool = False, weight_init=None, bias_init=None,
                 data_format: str = "NCHW", dtype=np.float32):
        super().__init__()
        for name, value in (("in_channels", in_channels), ("out_channels", out_channels), ("group", group)):
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"Conv2d: {name} must be a positive int, got {value!r}")
        if in_channels % group or out_channels % group:
            raise ValueError(f"Conv2d: in_channels ({in_channels}) and out_channels ({out_channels}) must both be "
                             f"divisible by group ({group})")
        self.in_channels, self.out_channels, self.group = in_channels, out_channels, group
        self.kernel_size = W.pair(kernel_size, "kernel_size", "Conv2d")
        self.stride = W.pair(stride, "stride", "Conv2d")
        self.dilation = W.pair(dilation, "dilation", "Conv2d")
        self.pad_mode = W.pad_mode(pad_mode, "Conv2d")
        self.padding = W.explicit_padding(padding, self.pad_mode, (4,), "Conv2d")
        self.data_format = W.data_format(data_format, "Conv2d")
        self.has_bias = has_bias
        fan_in = in_channels // group * math.prod(self.kernel_size)
        shape = (out_channels, in_channels // group) + self.kernel_size
        self.weight = init.initialize(weight_init, shape, fan_in, dtype, "weight")
        if has_bias:
            if bias_init is None:
                self.bias = init.uniform((out_channels,), 1.0 / math.sqrt(fan_in), dtype, "bias")
            else:
                self.bias = init.initialize(bias_init, (out_channels,), fan_in, dtype, "bias")

    def construct(self, x):
        if x.ndim != 4 or x.shape[1] != self.in_channels:
            raise ValueError(f"Conv2d: the input must have shape (N, {self.in_channels}, H, W), got {x.shape}")
        n, c, h, w = x.shape
        kh, kw = self.kernel_size
        top, bottom, oh = W.axis_padding(h, kh, self.stride[0], self.dilation[0], self.pad_mode,
                                         self.padding[0], self.padding[1])
        left, right, ow = W.axis_padding(w, kw, self.stride[1], self.dilation[1], self.pad_mode,
                                         self.padding[2], self.padding[3])
        if top or bottom or left or right:
            x = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
        win = W.windows(x, self.kernel_size, self.stride, self.dilation)
        g = self.group
        # im2col: columns (C * kH * kW, N * OH * OW), then one matrix product (one per group)
        if g == 1:
            cols = win.transpose(1, 4, 5, 0, 2, 3).reshape(c * kh * kw, n * oh * ow)
            out = self.weight.reshape(self.out_channels, c * kh * kw) @ cols
        else:
            cols = win.transpose(1, 4, 5, 0, 2, 3).reshape(g, c // g * kh * kw, n * oh * ow)
            out = self.weight.reshape(g, self.out_channels // g, c // g * kh * kw) @ cols
        out = out.reshape(self.out_channels, n, oh, ow).transpose(1, 0, 2, 3)
        if self.has_bias:
            out = out + self.bias.reshape(self.out_channels, 1, 1)
        return out

    def extra_repr(self) -> str:
        return (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}, "
                f"padding={self.padding}, dilation={self.dilation}, group={self.group}, has_bias={self.has_bias}, "
                f"format={self.data_format}")
