"""Dtype arguments (`TypeCast(ms.int32)`, `column_types=[...]`) as NumPy dtypes."""

from __future__ import annotations

import numpy as np


def to_numpy_dtype(dtype, what: str = "data_type") -> np.dtype:
    """A NumPy dtype from a NumPy dtype or scalar type, graphjit's dtypes (`graphjit.float32`), a
    dtype object that names its NumPy dtype, or a dtype name ("float32")."""
    for candidate in (dtype, getattr(dtype, "np_dtype", None), getattr(dtype, "numpy_dtype", None)):
        if candidate is None:
            continue
        try:
            return np.dtype(candidate)
        except TypeError:
            continue
    name = getattr(dtype, "name", None) or str(dtype)
    try:
        return np.dtype(name.lower().replace("bool_", "bool"))
    except TypeError:
        raise TypeError(f"{what}: {dtype!r} is not a dtype (give graphjit.int32, numpy.int32, 'int32', ...)") from None
