"""Stand-in values that carry exactly the type of a loop value, eagerly and once vectorized.

Inside a loop, `x[i]` is a NumPy scalar (`np.float32`), `i` a Python int and `0.0` a Python
float; NumPy 2 treats Python scalars as *weak* (NEP 50), so `x[i] * 0.5` stays float32 while
the vectorized `x[lo:hi] * np.arange(...)` would not. Running the op on stand-ins of the eager
types and on stand-ins of the vectorized arrays tells whether the dtypes agree:

    >>> eager_probe(ArrayType("float32", ())), vector_probe(1)
    (np.float32(1.0), array([1, 1]))
"""

from __future__ import annotations

import warnings
from typing import Any, Optional

import numpy as np

from ..stand_ins import NUMBER_KINDS, NoStandIn, stand_in
from ..types import ArrayType, ScalarType, Type

PY_SCALARS = (bool, int, float, complex)


class ProbeError(Exception):
    """The type of a value is not known well enough to reason about its dtype."""


def small_shape(shape) -> tuple:
    """A shape of at most 2 along each axis (0 and 1 kept): enough to learn dtypes and ranks."""
    return tuple(2 if d is None else min(int(d), 2) for d in shape)


def eager_probe(t: Type) -> Any:
    """A value of the exact eager type of `t` (NumPy scalar, Python number or small array) holding 1."""
    if isinstance(t, ArrayType) and t.shape is not None:
        try:
            return stand_in(t, 1, shape=small_shape(t.shape))
        except NoStandIn:
            pass
    elif isinstance(t, ScalarType) and t.kind in NUMBER_KINDS:
        return stand_in(t, 1)
    raise ProbeError(f"type {t} is not known")


def probe_of_value(value: Any) -> Any:
    """A number stands for itself; an array by a small one of its dtype and rank holding 1."""
    if type(value) in PY_SCALARS or isinstance(value, (np.generic, str)):
        return value
    if isinstance(value, np.ndarray):
        return stand_in(ArrayType(value.dtype.name, value.shape), 1, shape=small_shape(value.shape), dtype=value.dtype,
                        as_array=True)
    raise ProbeError(f"value {value!r} is not a number or an array")


def dtype_of(probe: Any) -> np.dtype:
    return np.asarray(probe).dtype


def rank_of(probe: Any) -> int:
    return int(np.ndim(probe))


def is_py_scalar(probe: Any) -> bool:
    """A Python bool/int/float/complex (not a NumPy scalar: np.float64 subclasses float)."""
    return type(probe) in PY_SCALARS


def vector_probe(probe: Any, rank_pad: int = 0) -> np.ndarray:
    """The vectorized stand-in of a varying value: a leading loop axis of length 2."""
    arr = np.asarray(probe)
    shape = (2,) + (1,) * rank_pad + arr.shape
    return np.ones(shape, dtype=arr.dtype)


def evaluate(fn, *args, **kwargs) -> Any:
    """Run `fn` on stand-ins with warnings silenced; raise ProbeError when it fails."""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - any failure means "do not vectorize"
        raise ProbeError(f"{getattr(fn, '__name__', fn)} fails on stand-ins: {e}") from None


def same_type(a: Any, b: Any) -> bool:
    """Same Python type and, for NumPy values, same dtype and rank."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (np.ndarray, np.generic)):
        return a.dtype == b.dtype and np.ndim(a) == np.ndim(b)
    return True


def unique_probes(probes) -> list:
    out: list = []
    for p in probes:
        if not any(same_type(p, q) for q in out):
            out.append(p)
    return out


def weak_cast_target(strong: list, weak: Any) -> Optional[np.dtype]:
    """The dtype NumPy converts the weak Python scalar `weak` to next to `strong` dtypes (NEP 50)."""
    if not strong:
        return None
    try:
        return np.result_type(*strong, weak)
    except Exception:  # noqa: BLE001
        return None


def exactly_representable(interval, dtype: np.dtype) -> bool:
    """Is every integer in `interval` representable exactly in `dtype`?"""
    lo, hi = interval
    if lo in (-np.inf, np.inf) or hi in (-np.inf, np.inf):
        return False
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min <= lo and hi <= info.max
    if dtype.kind == "f":
        mant = np.finfo(dtype).nmant + 1
        return max(abs(lo), abs(hi)) <= 2 ** mant
    if dtype.kind == "c":
        return exactly_representable(interval, np.dtype(f"f{dtype.itemsize // 2}"))
    return False
