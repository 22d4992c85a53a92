"""What counts as literal data while a file is read without running it (static_pure.py), and how big it is:
the values methods may run on, and the size a value would have, estimated without computing it."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ..graph.value_size import LIMITS, range_length


_BUILTIN_TYPES = frozenset({bool, int, float, complex, str, bytes, tuple, list, dict, set, frozenset, slice,
                            range, type(None), object})


DICT_VIEWS = (type({}.keys()), type({}.values()), type({}.items()))


def size_of(value: Any, depth: int = 0) -> Optional[int]:
    """How many items computing on `value` may touch, or None when it is not literal data.

    Literal data: numbers (integers of at most `int_bits`), strings, None, NumPy scalars and dtypes,
    builtin and NumPy scalar types, ranges, slices, and tuples/lists/dicts/sets of these; arrays of
    numbers of at most `elements` elements. Never calls a method of a class of the file.
    """
    if depth > LIMITS["depth"]:
        return None
    kind = type(value)
    if kind is bool or value is None or value is Ellipsis:
        return 1
    if kind is int:
        return 1 if value.bit_length() <= LIMITS["int_bits"] else None
    if kind in (float, complex):
        return 1
    if kind in (str, bytes):
        return max(1, len(value)) if len(value) <= LIMITS["items"] else None
    if isinstance(value, np.generic):
        return 1 if value.dtype.kind not in "OV" else None
    if kind is np.dtype or isinstance(value, np.dtype):
        return 1 if value.kind not in "OV" else None
    if isinstance(value, type):
        return 1 if value in _BUILTIN_TYPES or issubclass(value, np.generic) else None
    if kind is range:
        n = range_length(value)
        return n if n is not None and n <= LIMITS["items"] else None
    if kind is slice:
        parts = [size_of(p, depth + 1) for p in (value.start, value.stop, value.step)]
        return 1 if None not in parts else None
    if kind is np.ndarray:   # exactly an ndarray: subclasses may run code on every operation
        if value.dtype.kind in "OV" or value.size > LIMITS["elements"]:
            return None
        return max(1, value.size)
    if kind in DICT_VIEWS:   # `d.keys()`: iterating a view runs nothing
        return size_of(tuple(value), depth) if len(value) <= LIMITS["items"] else None
    if kind in (tuple, list, set, frozenset, dict):
        if len(value) > LIMITS["items"]:
            return None
        total = 1
        items = list(value.items()) if kind is dict else value
        for item in items:
            inner = size_of(item, depth + 1) if kind is not dict else _pair_size(item, depth + 1)
            if inner is None:
                return None
            total += inner
            if total > LIMITS["elements"]:
                return None
        return total
    if (getattr(kind, "__module__", "") or "").startswith("graphjit.") and not callable(value):
        return 1   # a value of the compiler's own (a graph node): inert, never calls anything
    return None


def _pair_size(pair, depth: int) -> Optional[int]:
    key, value = size_of(pair[0], depth), size_of(pair[1], depth)
    return None if key is None or value is None else key + value
