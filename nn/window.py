"""Sliding windows for the convolution and pooling layers: MindSpore's argument checks, padding amounts
and the windows view.

The checks run in the layers' `__init__` (plain Python, one clear error per mistake). `axis_padding` and
`windows` are plain NumPy called from the layers' `construct` methods: the compiler inlines them like user
code, and on compile-time shapes their integer arithmetic folds away.
"""

from __future__ import annotations

import numpy as np

PAD_MODES = ("same", "valid", "pad")


def pair(value, name: str, layer: str) -> tuple:
    """An int or a tuple of one or two positive ints, as (height, width)."""
    items = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    if len(items) == 1:
        items = items * 2
    if len(items) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in items):
        raise ValueError(f"{layer}: {name} must be a positive int or a tuple of two positive ints, got {value!r}")
    return items


def pad_mode(value, layer: str) -> str:
    mode = value.lower() if isinstance(value, str) else value
    if mode not in PAD_MODES:
        raise ValueError(f"{layer}: pad_mode must be one of 'same', 'valid', 'pad', got {value!r}")
    return mode


def explicit_padding(padding, mode: str, sides: tuple, layer: str) -> tuple:
    """(top, bottom, left, right) from `padding`: an int, or a tuple whose length is in `sides` (4:
    top, bottom, left, right; 2: top and bottom, left and right; 1: all four). Non-zero only in 'pad'."""
    items = tuple(padding) if isinstance(padding, (tuple, list)) else (padding,)
    if len(items) not in (1,) + sides or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0
                                                  for v in items):
        forms = " or ".join(f"a tuple of {n}" for n in sides)
        raise ValueError(f"{layer}: padding must be a non-negative int or {forms} non-negative ints, got {padding!r}")
    four = items * 4 if len(items) == 1 else (items[0], items[0], items[1], items[1]) if len(items) == 2 else items
    if mode != "pad" and any(four):
        raise ValueError(f"{layer}: padding must be 0 when pad_mode is {mode!r}; use pad_mode='pad'")
    return four


def data_format(value, layer: str) -> str:
    if value != "NCHW":
        raise ValueError(f"{layer}: only data_format='NCHW' is supported, got {value!r}")
    return value


def axis_padding(n: int, kernel: int, stride: int, dilation: int, mode: str, before: int, after: int,
                 ceil_mode: bool = False) -> tuple:
    """(before, after, output length) along one axis of length `n`. 'same': the output has ceil(n / stride)
    elements, the padding split evenly with the odd one after; 'valid': none; 'pad': `before`/`after`.
    `ceil_mode` rounds the output length up, adding padding after as needed (a window must still start
    inside the input or the padding before it)."""
    span = (kernel - 1) * dilation + 1
    if mode == "same":
        out = -(-n // stride)
        total = max((out - 1) * stride + span - n, 0)
        return total // 2, total - total // 2, out
    if mode == "valid":
        before, after = 0, 0
    room = n + before + after - span
    out = (-(-room // stride) if ceil_mode else room // stride) + 1
    if ceil_mode and (out - 1) * stride >= n + before:
        out -= 1
    return before, max(after, (out - 1) * stride + span - n - before), out


def windows(x, kernel: tuple, stride: tuple, dilation: tuple):
    """The windows of a (padded) NCHW array as a view of shape (N, C, OH, OW, kh, kw)."""
    span = ((kernel[0] - 1) * dilation[0] + 1, (kernel[1] - 1) * dilation[1] + 1)
    win = np.lib.stride_tricks.sliding_window_view(x, span, axis=(2, 3))
    if stride != (1, 1) or dilation != (1, 1):
        win = win[:, :, ::stride[0], ::stride[1], ::dilation[0], ::dilation[1]]
    return win
