"""`graphjit.dataset.transforms`: general transforms (`TypeCast`, `OneHot`, `Compose`, `Fill`,
`Duplicate`, `Concatenate`, `PadEnd`, `RandomApply`, `RandomChoice`), vectorized where they can be."""

from __future__ import annotations

import numbers

import numpy as np

from .dtypes import to_numpy_dtype
from .transform_base import Transform, flatten_operations, as_input


class TypeCast(Transform):
    """The data as `data_type` (graphjit/MindSpore or NumPy dtypes: `ms.int32`, `np.int32`)."""
    vectorized = True

    def __init__(self, data_type):
        self.data_type = to_numpy_dtype(data_type, "TypeCast: data_type")

    def _row(self, data, rng=None):
        return data.astype(self.data_type)

    _stacked = _row


class OneHot(Transform):
    """Integer labels as one-hot vectors of `num_classes` (the label's dtype; float32 with
    `smoothing_rate`, which gives `(1 - rate) * onehot + rate / num_classes`)."""
    vectorized = True

    def __init__(self, num_classes, smoothing_rate=0.0):
        if isinstance(num_classes, bool) or not isinstance(num_classes, numbers.Integral) or num_classes <= 0:
            raise ValueError(f"OneHot: num_classes must be a positive int, got {num_classes!r}")
        if isinstance(smoothing_rate, bool) or not isinstance(smoothing_rate, numbers.Real) or \
                not 0 <= smoothing_rate <= 1:
            raise ValueError(f"OneHot: smoothing_rate must be in [0, 1], got {smoothing_rate!r}")
        self.num_classes, self.smoothing_rate = int(num_classes), float(smoothing_rate)

    def _apply(self, labels, batch: int):
        if labels.dtype.kind not in "iu":
            raise ValueError(f"OneHot: labels must be integers, got {labels.dtype}")
        if labels.ndim - batch > 1:
            raise ValueError(f"OneHot: a label must be a scalar or 1-D, got shape {labels.shape[batch:]}")
        bad = (labels < 0) | (labels >= self.num_classes)
        if bad.any():
            raise ValueError(f"OneHot: label {labels[bad].flat[0]} is not in [0, {self.num_classes})")
        out = (labels[..., None] == np.arange(self.num_classes)).astype(labels.dtype)
        if self.smoothing_rate:
            return ((1 - self.smoothing_rate) * out + self.smoothing_rate / self.num_classes).astype(np.float32)
        return out

    def _row(self, labels, rng=None):
        return self._apply(labels, 0)

    def _stacked(self, labels, rng=None):
        return self._apply(labels, 1)


class Compose(Transform):
    """Several transforms applied in order as one (inside `map`, its transforms run one by one)."""

    def __init__(self, transforms):
        if not isinstance(transforms, (list, tuple)) or not transforms:
            raise TypeError("Compose: transforms must be a non-empty list of transforms or callables")
        self.transforms = flatten_operations(list(transforms))
        self.random = any(getattr(t, "random", False) for t in self.transforms)

    def _row(self, *arrays, rng=None):
        values = arrays
        for op in self.transforms:
            out = op._row(*values, rng=rng) if isinstance(op, Transform) else op(*values)
            values = out if isinstance(out, tuple) else (np.asarray(out),)
        return values if len(values) > 1 else values[0]

    def __call__(self, *arrays):
        values = tuple(as_input(a) for a in arrays)
        for op in self.transforms:
            out = op(*values)
            values = out if isinstance(out, tuple) else (np.asarray(out),)
        return values if len(values) > 1 else values[0]


class Fill(Transform):
    """An array of the input's shape and dtype, every element `fill_value`."""
    vectorized = True

    def __init__(self, fill_value):
        if not isinstance(fill_value, (numbers.Number, str, bytes, np.generic)):
            raise TypeError(f"Fill: fill_value must be a number or a string, got {fill_value!r}")
        self.fill_value = fill_value

    def _row(self, data, rng=None):
        return np.full(data.shape, self.fill_value, dtype=data.dtype)

    _stacked = _row


class Duplicate(Transform):
    """The input and a copy of it: two columns (give two `output_columns`)."""
    vectorized = True

    def _row(self, data, rng=None):
        return data, data.copy()

    _stacked = _row


class Concatenate(Transform):
    """1-D inputs joined end to end, with optional `prepend` and `append` arrays."""

    def __init__(self, axis=0, prepend=None, append=None):
        if axis not in (0, -1):
            raise ValueError("Concatenate: only axis 0 (or -1) of 1-D data is supported")
        self.prepend = None if prepend is None else np.asarray(prepend)
        self.append = None if append is None else np.asarray(append)

    def _row(self, *arrays, rng=None):
        parts = [p for p in (self.prepend, *arrays, self.append) if p is not None]
        for p in parts:
            if p.ndim != 1:
                raise ValueError(f"Concatenate: inputs must be 1-D, got shape {p.shape}")
        return np.concatenate(parts)


class PadEnd(Transform):
    """Pad (or cut) the data at its end to `pad_shape` with `pad_value` (0 or '')."""

    def __init__(self, pad_shape, pad_value=None):
        if not isinstance(pad_shape, (list, tuple)) or not all(isinstance(s, int) and s >= 0 for s in pad_shape):
            raise TypeError("PadEnd: pad_shape must be a list of non-negative ints")
        self.pad_shape, self.pad_value = tuple(pad_shape), pad_value

    def _row(self, data, rng=None):
        if data.ndim != len(self.pad_shape):
            raise ValueError(f"PadEnd: pad_shape {list(self.pad_shape)} has {len(self.pad_shape)} dims, "
                             f"the data {data.ndim}")
        value = self.pad_value if self.pad_value is not None else ("" if data.dtype.kind == "U" else 0)
        out = np.full(self.pad_shape, value, dtype=data.dtype)
        index = tuple(slice(0, min(a, b)) for a, b in zip(data.shape, self.pad_shape))
        out[index] = data[index]
        return out


class RandomApply(Transform):
    """All of `transforms` in order with probability `prob`, else the input unchanged."""
    random = True

    def __init__(self, transforms, prob=0.5):
        self.transforms = Compose(transforms)
        if isinstance(prob, bool) or not isinstance(prob, numbers.Real) or not 0 <= prob <= 1:
            raise ValueError(f"RandomApply: prob must be in [0, 1], got {prob!r}")
        self.prob = float(prob)

    def _row(self, *arrays, rng=None):
        if rng.random() < self.prob:
            return self.transforms._row(*arrays, rng=rng)
        return arrays if len(arrays) > 1 else arrays[0]


class RandomChoice(Transform):
    """One of `transforms`, chosen at random for each row."""
    random = True

    def __init__(self, transforms):
        if not isinstance(transforms, (list, tuple)) or not transforms:
            raise TypeError("RandomChoice: transforms must be a non-empty list")
        self.transforms = flatten_operations(list(transforms))

    def _row(self, *arrays, rng=None):
        op = self.transforms[int(rng.integers(len(self.transforms)))]
        return op._row(*arrays, rng=rng) if isinstance(op, Transform) else op(*arrays)


__all__ = ["TypeCast", "OneHot", "Compose", "Fill", "Duplicate", "Concatenate", "PadEnd", "RandomApply",
           "RandomChoice"]
