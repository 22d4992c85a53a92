"""Stand-in values: a value of the run-time Python type (and dtype, and rank) a graph type denotes.

Compile-time code runs NumPy on stand-ins to learn what an operation would give without the real
data: the shape rule of an index (graph/shape_rules.py), the vectorizer's eager and vectorized dtype
probes (graph/vectorize/probes.py), `isinstance` and `hasattr` of run-time values (the front end).

    >>> stand_in(ArrayType("float32", ())), stand_in(ArrayType("int64", (2, 3)), 1, shape=(1, 1))
    (np.float32(0.0), array([[1]]))
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .types import ArrayType, ScalarType, TupleType, Type

NUMBER_KINDS = {"int": int, "float": float, "bool": bool, "complex": complex}


class NoStandIn(Exception):
    """The type does not say enough to build a value of it."""


def stand_in(t: Type, fill: Any = 0, *, shape: Optional[tuple] = None, dtype: Any = None,
             as_array: bool = False) -> Any:
    """A value of graph type `t` holding `fill`.

    An array holds `fill` in every element and has `dtype` and `shape` (by default the type's own,
    which must then be known). A 0-d array type stands for the NumPy scalar an element read `x[i]`
    gives, unless `as_array`. A Python number is `fill` converted to its kind; a string is `""`,
    `None` is None, and a tuple type is `()` (only its class is known without its items).
    Raises NoStandIn for any other type.
    """
    if isinstance(t, ArrayType):
        dtype = t.dtype if dtype is None else dtype
        shape = t.shape if shape is None else shape
        if dtype is None or shape is None or None in shape:
            raise NoStandIn(f"type {t} is not known")
        if shape == () and not as_array:
            return np.dtype(dtype).type(fill)
        return np.full(shape, fill, dtype=dtype)
    if isinstance(t, TupleType):
        return ()
    if isinstance(t, ScalarType):
        if t.kind in NUMBER_KINDS:
            return NUMBER_KINDS[t.kind](fill)
        if t.kind == "str":
            return ""
        if t.kind == "none":
            return None
    raise NoStandIn(f"type {t} is not known")
