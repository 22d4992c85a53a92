"""Arrays of other libraries than NumPy (Dask, CuPy, array-API arrays) as the graph's types see them.

`is_foreign_array` recognises one without importing its library; `numpy_dtype` and `known_shape`
give the NumPy dtype and the shape (Dask's unknown `nan` dimensions as None) the analysis types it
with (graph/types.py `type_of_value`). Which namespace such arrays compile for is the back end's
business (backends/namespaces.py).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

# Modules of array types that array_api_compat wraps though they lack `__array_namespace__`
# (Dask's Array, PyTorch's Tensor); a type from another module needs `__array_namespace__`.
COMPAT_MODULES = ("dask.array", "torch", "cupy", "jax", "sparse", "ndonnx")


def is_foreign_array(value: Any) -> bool:
    """True for an array of another library than NumPy (cheap: no import)."""
    if isinstance(value, (np.ndarray, np.generic)):
        return False
    t = type(value)
    if getattr(t, "__array_namespace__", None) is not None:
        return True
    module = t.__module__ or ""
    return module.startswith(COMPAT_MODULES) and hasattr(value, "shape") and hasattr(value, "dtype")


def numpy_dtype(dtype: Any) -> np.dtype:
    """The NumPy dtype of a library's dtype (Dask and CuPy use NumPy's; array_api_strict's
    `array_api_strict.float64` is named after it)."""
    try:
        return np.dtype(dtype)
    except TypeError:
        return np.dtype(str(dtype).rsplit(".", 1)[-1])


def known_shape(shape: tuple) -> tuple:
    """A shape with Dask's unknown dimensions (`nan`) as None."""
    return tuple(None if d is None or (isinstance(d, float) and math.isnan(d)) else int(d) for d in shape)
