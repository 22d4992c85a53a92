"""Reductions and selection (`ops.sum`, `ops.mean`, `ops.max`, `ops.min`, `ops.argmax`, `ops.argmin`,
`ops.where`), with MindSpore 2.x's signatures and results: `ops.max(x, axis)` gives (values, indices).
Plain NumPy inlined into graphs by `jit`; on Tensors they give Tensors, 0-d for a full reduction.
"""

import numpy as np

__all__ = ["sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "where"]


def sum(input, dim=None, keepdim=False, *, dtype=None):
    """The sum over `dim` (an int or tuple; None: all), keeping reduced dimensions with `keepdim`."""
    if isinstance(dim, list):
        dim = tuple(dim)
    return np.sum(input, axis=dim, keepdims=keepdim, dtype=dtype)


def mean(input, axis=None, keep_dims=False):
    """The mean over `axis` (an int or tuple; None: all), keeping reduced dimensions with `keep_dims`."""
    if isinstance(axis, list):
        axis = tuple(axis)
    return np.mean(input, axis=axis, keepdims=keep_dims)


def prod(input, axis=None, keep_dims=False):
    """The product over `axis` (None: all)."""
    if isinstance(axis, list):
        axis = tuple(axis)
    return np.prod(input, axis=axis, keepdims=keep_dims)


def max(input, axis=None, keepdims=False):
    """(values, indices): the largest values over `axis` and where they are (the first, on ties);
    with `axis=None`, the largest element and its index in the flattened input (`keepdims` ignored)."""
    if axis is None:
        return np.max(input), np.argmax(input)
    return np.max(input, axis=axis, keepdims=keepdims), np.argmax(input, axis=axis, keepdims=keepdims)


def min(input, axis=None, keepdims=False):
    """(values, indices): the smallest values over `axis` and where they are (the first, on ties);
    with `axis=None`, the smallest element and its index in the flattened input (`keepdims` ignored)."""
    if axis is None:
        return np.min(input), np.argmin(input)
    return np.min(input, axis=axis, keepdims=keepdims), np.argmin(input, axis=axis, keepdims=keepdims)


def amax(input, axis=None, keepdims=False):
    """The largest values over `axis` (None: all), without indices."""
    return np.max(input, axis=axis, keepdims=keepdims)


def amin(input, axis=None, keepdims=False):
    """The smallest values over `axis` (None: all), without indices."""
    return np.min(input, axis=axis, keepdims=keepdims)


def argmax(input, dim=None, keepdim=False):
    """Where the largest values over `dim` are (None: the index in the flattened input, `keepdim`
    ignored)."""
    if dim is None:
        return np.argmax(input)
    return np.argmax(input, axis=dim, keepdims=keepdim)


def argmin(input, dim=None, keepdim=False):
    """Where the smallest values over `dim` are (None: the index in the flattened input, `keepdim`
    ignored)."""
    if dim is None:
        return np.argmin(input)
    return np.argmin(input, axis=dim, keepdims=keepdim)


def where(condition, input, other):
    """`input` where `condition` holds, else `other` (broadcast together)."""
    return np.where(condition, input, other)
