"""Value types of graph nodes and their text form (`f32[64,784]`, `float`, `tuple(...)`).

Arrays carry a dtype and a shape whose entries may be unknown (`?`); the rank itself may be
unknown (`f32[*]`), and so may the dtype (`?[*]` is any array). Python scalars produced by the
graph (`x.shape[0]`, `float(x.sum())`) are `int`, `float`, `bool`; `object` is anything else.

Where control flow merges a Python number and a NumPy scalar (`s = 0.0` before a loop that makes it
an `np.float32`), the value is one of them at run time: a union `f32[]|float`. NumPy 2 treats the
Python number as weak (NEP 50), so an op often gives one type for every member (`s + x[i]` is
`f32[]`); op types are inferred member by member (`infer_by_members`, graph/promotion.py).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np

from .array_like import is_foreign_array, known_shape, numpy_dtype

# dtype name -> its short form in graph text (`float32` -> `f32`)
SHORT_DTYPE_NAMES = {
    "float16": "f16", "float32": "f32", "float64": "f64",
    "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "bool": "bool", "complex64": "c64", "complex128": "c128",
}
_LONG = {v: k for k, v in SHORT_DTYPE_NAMES.items()}

Dim = Optional[int]


class Type:
    """Base of all value types."""


@dataclass(frozen=True)
class ArrayType(Type):
    dtype: Optional[str] = None            # numpy dtype name, None = unknown
    shape: Optional[Tuple[Dim, ...]] = None  # None = unknown rank

    @property
    def rank(self) -> Optional[int]:
        return None if self.shape is None else len(self.shape)

    @property
    def is_static(self) -> bool:
        return self.dtype is not None and self.shape is not None and None not in self.shape

    @property
    def nbytes(self) -> int:
        """Bytes of an array of this (static) type."""
        return math.prod(self.shape) * np.dtype(self.dtype).itemsize

    def __str__(self) -> str:
        d = SHORT_DTYPE_NAMES.get(self.dtype, self.dtype) if self.dtype else "?"
        if self.shape is None:
            return f"{d}[*]"
        return f"{d}[{','.join('?' if s is None else str(s) for s in self.shape)}]"


@dataclass(frozen=True)
class ScalarType(Type):
    kind: str  # "int" | "float" | "bool" | "complex" | "str" | "none"

    def __str__(self) -> str:
        return self.kind


@dataclass(frozen=True)
class TupleType(Type):
    items: Tuple[Type, ...]

    def __str__(self) -> str:
        return f"tuple({', '.join(map(str, self.items))})"


@dataclass(frozen=True)
class ObjectType(Type):
    def __str__(self) -> str:
        return "object"


@dataclass(frozen=True)
class UnionType(Type):
    """A number that is one of a few scalar types, depending on the path taken to it: a Python
    number (weak under NEP 50) or a NumPy scalar (`f32[]`). Members are in text order, no duplicates."""

    members: Tuple[Type, ...]

    def __str__(self) -> str:
        return "|".join(map(str, self.members))


MAX_UNION_MEMBERS = 4      # a wider merge is `object`
NUMBER_KINDS = ("bool", "int", "float", "complex")

ANY_ARRAY = ArrayType()
OBJECT = ObjectType()
INT, FLOAT, BOOL, NONE = ScalarType("int"), ScalarType("float"), ScalarType("bool"), ScalarType("none")
_SCALARS = {t.kind: t for t in (INT, FLOAT, BOOL, NONE, ScalarType("complex"), ScalarType("str"))}


def array_type(dtype, shape) -> ArrayType:
    return ArrayType(np.dtype(dtype).name, tuple(None if s is None else int(s) for s in shape))


def type_of_value(value) -> Type:
    """The graph type of a concrete run-time value."""
    if isinstance(value, np.ndarray):
        return array_type(value.dtype, value.shape)
    if isinstance(value, np.generic):
        return ArrayType(value.dtype.name, ())
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return INT
    if isinstance(value, float):
        return FLOAT
    if isinstance(value, complex):
        return _SCALARS["complex"]
    if isinstance(value, str):
        return _SCALARS["str"]
    if value is None:
        return NONE
    if isinstance(value, tuple):
        return TupleType(tuple(type_of_value(v) for v in value))
    if is_foreign_array(value):   # a Dask, CuPy, array-API array: typed as the NumPy array it stands for
        return ArrayType(numpy_dtype(value.dtype).name, known_shape(value.shape))
    return OBJECT


def members(t: Type) -> Tuple[Type, ...]:
    """The types a value of type `t` may have: a union's members, else `t` itself."""
    return t.members if isinstance(t, UnionType) else (t,)


def is_number(t: Type) -> bool:
    """A Python number or a NumPy scalar of known dtype (what a union may hold)."""
    if isinstance(t, ScalarType):
        return t.kind in NUMBER_KINDS
    return isinstance(t, ArrayType) and t.shape == () and t.dtype in SHORT_DTYPE_NAMES


def union(types) -> Type:
    """The union of number types (one type stays itself); `object` when there are too many or
    one is not a number."""
    out: dict = {}
    for t in types:
        for m in members(t):
            if not is_number(m):
                return OBJECT
            out[str(m)] = m
    if len(out) > MAX_UNION_MEMBERS:
        return OBJECT
    if len(out) == 1:
        return next(iter(out.values()))
    return UnionType(tuple(out[k] for k in sorted(out)))


def join(a: Type, b: Type) -> Type:
    """The least general type covering both (used where control flow merges)."""
    if a == b:
        return a
    if all(is_number(m) for m in members(a) + members(b)):
        return union([a, b])
    if isinstance(a, ArrayType) and isinstance(b, ArrayType):
        dtype = a.dtype if a.dtype == b.dtype else None
        if a.shape is None or b.shape is None or len(a.shape) != len(b.shape):
            return ArrayType(dtype, None)
        return ArrayType(dtype, tuple(x if x == y else None for x, y in zip(a.shape, b.shape)))
    if isinstance(a, TupleType) and isinstance(b, TupleType) and len(a.items) == len(b.items):
        return TupleType(tuple(join(x, y) for x, y in zip(a.items, b.items)))
    return OBJECT


_ARRAY_RE = re.compile(r"^([a-z0-9?]+)\[([^\]]*)\]$")


def _numpy_dtype_name(name: str) -> Optional[str]:
    """A dtype printed by its NumPy name (`object`, `str`): that name, if NumPy has it."""
    try:
        return name if np.dtype(name).name == name else None
    except TypeError:
        return None


def parse_type(text: str) -> Type:
    """Inverse of `str(type)`; raises ValueError on text that is not a type."""
    text = text.strip()
    parts = _split_union(text)
    if len(parts) > 1:
        return UnionType(tuple(parse_type(p) for p in parts))
    if text == "object":
        return OBJECT
    if text in _SCALARS:
        return _SCALARS[text]
    if text.startswith("tuple(") and text.endswith(")"):
        inner = text[len("tuple("):-1]
        return TupleType(tuple(parse_type(p) for p in split_top_level(inner)) if inner.strip() else ())
    m = _ARRAY_RE.match(text)
    if not m:
        raise ValueError(f"not a type: {text!r}")
    d, dims = m.groups()
    dtype = None if d == "?" else _LONG.get(d) or _numpy_dtype_name(d)
    if d != "?" and dtype is None:
        raise ValueError(f"unknown dtype {d!r} in type {text!r}")
    if dims == "*":
        return ArrayType(dtype, None)
    shape = tuple(None if s.strip() == "?" else int(s) for s in dims.split(",")) if dims.strip() else ()
    return ArrayType(dtype, shape)


def _split_union(text: str) -> list[str]:
    """`f32[]|float` -> its members (`|` outside brackets and parentheses)."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "|" and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return parts + [cur]


def split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside brackets, parentheses or string literals."""
    parts, depth, cur, quote, escaped = [], 0, "", None, False
    for ch in text:
        if quote:
            escaped = ch == "\\" and not escaped
            if ch == quote and not escaped:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0 and not quote:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p.strip() for p in parts]
