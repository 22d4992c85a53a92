"""Creation ops (`ops.ones`, `ops.zeros`, `ops.full`, `ops.arange`, ...): new Tensors, with MindSpore's
signatures and default dtypes (float32 for shapes and Python floats, int64 for Python ints).

Plain NumPy wrapped in `Tensor(...)`, so eager calls and calls inlined into a graph by `jit` both
give Tensors (the graph's `tensor` op, graph/tensor_boundary.py).
"""

import numpy as np

from graphjit.tensor import Tensor

__all__ = ["ones", "zeros", "ones_like", "zeros_like", "full", "full_like", "fill", "arange"]


def ones(shape, dtype=None):
    """A Tensor of ones: `ops.ones(shape, dtype=None)` (float32 by default)."""
    return Tensor(np.ones(shape, dtype=np.float32 if dtype is None else dtype))


def zeros(size, dtype=None):
    """A Tensor of zeros: `ops.zeros(size, dtype=None)` (float32 by default)."""
    return Tensor(np.zeros(size, dtype=np.float32 if dtype is None else dtype))


def ones_like(input, *, dtype=None):
    """Ones of `input`'s shape and (unless `dtype`) dtype."""
    return Tensor(np.ones_like(input, dtype=dtype))


def zeros_like(input, *, dtype=None):
    """Zeros of `input`'s shape and (unless `dtype`) dtype."""
    return Tensor(np.zeros_like(input, dtype=dtype))


def full(size, fill_value, *, dtype=None):
    """`size` filled with `fill_value`; dtype from `dtype`, else the value's (a Python float: float32)."""
    if dtype is None and type(fill_value) is float:
        dtype = np.float32
    return Tensor(np.full(size, fill_value, dtype=dtype))


def full_like(input, fill_value, *, dtype=None):
    """`input`'s shape filled with `fill_value`, in `input`'s dtype unless `dtype`."""
    return Tensor(np.full_like(input, fill_value, dtype=dtype))


def fill(type, shape, value):
    """`ops.fill(type, shape, value)`: `shape` filled with `value`, of dtype `type`."""
    return Tensor(np.full(shape, value, dtype=type))


def arange(start=0, end=None, step=1, *, dtype=None):
    """`[start, end)` by `step` (`arange(n)`: `[0, n)`); int64 when all three are ints, float32 when one
    is a Python float, else NumPy's type for the given Tensors."""
    if end is None:
        start, end = 0, start
    if dtype is None:
        if type(start) is float or type(end) is float or type(step) is float:
            dtype = np.float32
        elif type(start) is int and type(end) is int and type(step) is int:
            dtype = np.int64
    return Tensor(np.arange(start, end, step, dtype=dtype))
