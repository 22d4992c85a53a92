"""Dtype ops (`ops.cast`, `ops.dtype`): MindSpore's signatures, plain NumPy inlined into graphs by `jit`.
Dtypes are NumPy's (dtype.py), so `ops.cast(x, mstype.float16)` is `x.astype(np.float16)`.
"""

import numpy as np

from graphjit.tensor import Tensor

__all__ = ["cast", "dtype"]


def cast(input, dtype):
    """`input` (a Tensor or a number) as a new Tensor of `dtype` (a Tensor stays a Tensor, an array an array)."""
    if isinstance(input, np.ndarray):
        return input.astype(dtype)
    return Tensor(input, dtype)


def dtype(input):
    """The dtype of `input`'s elements (MindSpore's `ops.dtype`)."""
    return input.dtype
