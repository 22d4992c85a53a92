"""Arrays that are not NumPy's: recognise them, name their array namespace, read their dtype and shape.

A jitted function called with Dask, CuPy or any array-API arrays (`array_api_strict` in the tests)
compiles a variant whose code calls the namespace of those arrays (backends/emit_xp.py). This module
is the one place that decides what such an argument is:

    is_foreign_array(x)     a non-NumPy array: `__array_namespace__`, or a type array_api_compat knows
                            (graph/array_like.py, with the dtype and shape the analysis types it with)
    namespace_of(arrays)    their namespace (`array_api_compat.array_namespace`), one for all of them
    array_key(x)            what the caches key it by: class, dtype, shape (Dask's unknown dims None)

NumPy arguments never get here (the dispatcher tests `x.__class__ is np.ndarray` first), and nothing
here imports Dask or array_api_compat until such an argument is seen.
"""

from __future__ import annotations

from typing import Any, Optional

from ..graph.array_like import is_foreign_array, known_shape, numpy_dtype

__all__ = ["is_foreign_array", "known_shape", "numpy_dtype", "namespace_of", "namespace_name", "array_key",
           "foreign_arrays", "call_namespace"]


def namespace_of(arrays: list) -> Any:
    """The one namespace of `arrays` (a module); a clear one-line error when they disagree."""
    try:
        from array_api_compat import array_namespace
    except ImportError:
        raise ImportError("graphjit needs array-api-compat for non-NumPy arrays: "
                          "pip install 'graphjit[dask]' (or array-api-compat)") from None
    try:
        return array_namespace(*arrays)
    except TypeError as e:
        kinds = sorted({f"{type(a).__module__}.{type(a).__qualname__}" for a in arrays})
        raise TypeError(f"the array arguments belong to different libraries ({', '.join(kinds)}): "
                        f"convert them to one before the call ({e})") from None


def namespace_name(xp: Any) -> str:
    """The module name generated code imports as `xp` (`array_api_compat.dask.array`)."""
    return xp.__name__


def array_key(value: Any) -> tuple:
    """What the cache keys for a foreign array: its class, dtype name and shape (unknown dims None)."""
    return ("xp", type(value), numpy_dtype(value.dtype).name, known_shape(value.shape))


def foreign_arrays(args) -> list:
    """The foreign arrays among `args`, inside tuples and lists too."""
    out = []
    for a in args:
        if isinstance(a, (tuple, list)):
            out += foreign_arrays(a)
        elif is_foreign_array(a):
            out.append(a)
    return out


def call_namespace(args) -> Optional[Any]:
    """The namespace of a call's foreign arrays, None when it has none (NumPy)."""
    arrays = foreign_arrays(args)
    return namespace_of(arrays) if arrays else None
