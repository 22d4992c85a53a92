"""Shape and dtype rules used by the op table to type new nodes.

Where all shapes are known the rules are exact NumPy semantics: dtypes are found by applying
the op to one-element stand-ins (so NEP 50 promotion of Python scalars is NumPy's own), and
shapes either by a formula (broadcast, reduce, matmul, reshape, transpose) or by applying the op
to zero-strided stand-ins that cost no memory. Unknown dimensions stay `?`.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Callable, Optional, Sequence

import numpy as np

from .promotion import python_number_result
from .attrs import keyword_attrs
from .stand_ins import stand_in
from .types import (ANY_ARRAY, BOOL, FLOAT, INT, NONE, OBJECT, ArrayType, ScalarType, TupleType, Type, is_number,
                    type_of_value, union)

DUMMY_EVAL_LIMIT = 1 << 16  # elements; larger inputs are not evaluated at compile time


def const_value(node) -> Any:
    """The compile-time value of a `const` operand, or a sentinel when it is run-time."""
    return node.attrs["value"] if node.op == "const" else _RUNTIME


class _Runtime:
    def __repr__(self) -> str:
        return "<run-time>"


_RUNTIME = _Runtime()


def dtype_probe(t: Type) -> Any:
    """A one-element stand-in with the dtype of `t` (Python scalars stay weak, as in NumPy 2)."""
    if isinstance(t, ArrayType):
        if t.dtype is None:
            raise _Unknown
        return np.ones((), dtype=t.dtype)
    if isinstance(t, ScalarType):
        probes = {"int": 1, "float": 1.0, "bool": True, "complex": 1j, "none": None}
        if t.kind not in probes:
            raise _Unknown
        return probes[t.kind]
    raise _Unknown


def shape_probe(t: Type, value: Any = None, limit: Optional[int] = DUMMY_EVAL_LIMIT) -> Any:
    """A zero-strided stand-in with the dtype and shape of `t` (at most `limit` elements, None: any)."""
    if value is not None and value is not _RUNTIME:
        return value
    if isinstance(t, ArrayType):
        if not t.is_static or limit is not None and math.prod(t.shape) > limit:
            raise _Unknown
        base = np.ones(1, dtype=t.dtype)
        view = np.lib.stride_tricks.as_strided(base, t.shape, (0,) * len(t.shape))
        view.flags.writeable = False
        return view
    return dtype_probe(t)


class _Unknown(Exception):
    pass


def broadcast_dims(shapes: Sequence[Optional[tuple]]) -> Optional[tuple]:
    if any(s is None for s in shapes):
        return None
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for k in range(rank):
        dims = [s[len(s) - rank + k] for s in shapes if len(s) - rank + k >= 0]
        known = {d for d in dims if d is not None and d != 1}
        if len(known) > 1:
            return None  # NumPy will raise at run time; let it, with its own message
        if known:
            out.append(known.pop())
        elif any(d is None for d in dims):
            out.append(None)
        else:
            out.append(1)
    return tuple(out)


def result_dtype(fn: Callable, types: Sequence[Type], kwargs: dict) -> Optional[str]:
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            out = fn(*[dtype_probe(t) for t in types], **kwargs)
    except Exception:
        return None
    return np.asarray(out).dtype.name


def _shape(t: Type) -> Optional[tuple]:
    if isinstance(t, ArrayType):
        return t.shape
    if isinstance(t, ScalarType):
        return ()
    return None


def elementwise(fn: Callable) -> Callable:
    def rule(nodes, attrs) -> Type:
        types = [n.type for n in nodes]
        if all(isinstance(t, ScalarType) for t in types):
            return _scalar_result(fn, nodes)
        if all(is_number(t) for t in types) and any(isinstance(t, ScalarType) for t in types):
            exact = python_number_result(fn, types, _kwargs(attrs))
            if exact is not None:
                return exact
        return ArrayType(result_dtype(fn, types, _kwargs(attrs)), broadcast_dims([_shape(t) for t in types]))
    return rule


def _scalar_result(fn: Callable, nodes) -> Type:
    """Python scalars in, Python scalar out (`n * 2`), evaluated on stand-ins of the same kind."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return type_of_value(fn(*[dtype_probe(n.type) for n in nodes]))
    except Exception:
        return OBJECT


def _kwargs(attrs: dict) -> dict:
    return keyword_attrs(attrs)


def reduction(fn: Callable) -> Callable:
    def rule(nodes, attrs) -> Type:
        t = nodes[0].type
        dtype = None
        if isinstance(t, (ArrayType, ScalarType)):
            try:
                with warnings.catch_warnings(), np.errstate(all="ignore"):
                    warnings.simplefilter("ignore")
                    probe = np.ones((1,), dtype=t.dtype) if isinstance(t, ArrayType) and t.dtype else None
                    if probe is not None:
                        dtype = np.asarray(fn(probe, **{k: v for k, v in _kwargs(attrs).items()
                                                        if k not in ("axis", "keepdims")})).dtype.name
            except Exception:
                dtype = None
        shape = _shape(t)
        axis, keepdims = attrs.get("axis"), attrs.get("keepdims", False)
        if len(nodes) > 1:  # axis given at run time
            return ArrayType(dtype, None)
        if shape is None:
            return ArrayType(dtype, None if keepdims or axis is not None else ())
        if axis is None:
            return ArrayType(dtype, (1,) * len(shape) if keepdims else ())
        axes = {a % len(shape) for a in (axis if isinstance(axis, tuple) else (axis,))} if shape else set()
        out = tuple((1 if keepdims else None) if k in axes else d for k, d in enumerate(shape))
        return ArrayType(dtype, tuple(d for k, d in enumerate(out) if keepdims or k not in axes))
    return rule


def matmul(nodes, attrs) -> Type:
    a, b = (_shape(n.type) for n in nodes)
    dtypes = [n.type.dtype for n in nodes if isinstance(n.type, ArrayType)]
    dtype = np.result_type(*dtypes).name if len(dtypes) == 2 and None not in dtypes else None
    if a is None or b is None or len(a) == 0 or len(b) == 0:
        return ArrayType(dtype, None)
    if len(b) == 1:
        return ArrayType(dtype, a[:-1])
    if len(a) == 1:
        return ArrayType(dtype, b[:-2] + b[-1:])
    batch = broadcast_dims([a[:-2], b[:-2]])
    return ArrayType(dtype, None if batch is None else batch + (a[-2], b[-1]))


def reshape(nodes, attrs) -> Type:
    t = nodes[0].type
    dtype = t.dtype if isinstance(t, ArrayType) else None
    target = const_value(nodes[1]) if len(nodes) > 1 else _RUNTIME
    if target is _RUNTIME:
        if nodes[1].op == "tuple":  # (n, -1) with n known only at run time
            dims = [const_value(n) for n in nodes[1].operands]
            dims = [d if isinstance(d, int) else None for d in dims]
            return ArrayType(dtype, _fill_minus_one(dims, t))
        return ArrayType(dtype, None)
    dims = [target] if isinstance(target, int) else list(target)
    return ArrayType(dtype, _fill_minus_one(dims, t))


def _fill_minus_one(dims: list, t: Type) -> tuple:
    if -1 in dims and isinstance(t, ArrayType) and t.is_static and None not in dims:
        known = math.prod(d for d in dims if d != -1)
        dims[dims.index(-1)] = math.prod(t.shape) // known if known else 0
    return tuple(None if d == -1 else d for d in dims)


def transpose(nodes, attrs) -> Type:
    """`x.T`, `np.transpose(x)`, `np.transpose(x, axes)`: axes as an attribute or a second operand."""
    t = nodes[0].type
    if not isinstance(t, ArrayType):
        return ANY_ARRAY
    axes = attrs.get("axes")
    if len(nodes) > 1:
        axes = const_value(nodes[1])
        if axes is _RUNTIME and nodes[1].op == "tuple":  # (1, 0) built from constants
            axes = tuple(const_value(n) for n in nodes[1].operands)
        if axes is _RUNTIME or not isinstance(axes, tuple) or any(a is _RUNTIME for a in axes):
            return ArrayType(t.dtype, None if t.shape is None else (None,) * len(t.shape))
    if t.shape is None:
        return t
    if axes is None:
        return ArrayType(t.dtype, t.shape[::-1])
    return ArrayType(t.dtype, tuple(t.shape[a] for a in axes))


def astype(nodes, attrs) -> Type:
    t = nodes[0].type
    return ArrayType(np.dtype(attrs["dtype"]).name, t.shape if isinstance(t, ArrayType) else ())


def same_as_first(nodes, attrs) -> Type:
    return nodes[0].type


def after_metadata_write(t: Type, name: str, value) -> Type:
    """The type of an array after `a.<name> = value` (`shape`, `dtype`, `strides`) or `a.resize(value)`.

    Worked out on a stand-in when the old type and `value` are known (`value` is None when it is
    not); otherwise what stays known: the dtype after a new shape, nothing after a new dtype.
    """
    if not isinstance(t, ArrayType):
        return ANY_ARRAY
    if name == "strides":
        return t
    if t.is_static and value is not None:
        probe = np.empty(t.shape, t.dtype)
        try:
            if name == "resize":
                probe.resize(value, refcheck=False)
            else:
                setattr(probe, name, value)
            return ArrayType(probe.dtype.name, probe.shape)
        except Exception:
            pass  # it raises at run time too, where eager Python raises it
    if name in ("shape", "resize") and value is not None:
        dims = value if isinstance(value, tuple) else (value,)
        if all(isinstance(d, int) and d >= 0 for d in dims):
            return ArrayType(t.dtype, tuple(dims))
    return ArrayType(t.dtype if name in ("shape", "resize") else None, None)


def by_evaluation(fn: Callable, limit: Optional[int] = DUMMY_EVAL_LIMIT) -> Callable:
    """Apply `fn` to stand-ins (shapes known, at most `limit` elements); otherwise an unknown array. An
    op returning a view of its zero-strided stand-in allocates nothing: it takes `limit=None`. A
    run-time integer operand may be a size or a count (`np.arange(n)`, `np.repeat(a, counts)`):
    `fn` is applied again with zeros in its place, and the axes whose length changed are unknown."""
    def rule(nodes, attrs) -> Type:
        try:
            probes = [_probe(n, limit) for n in nodes]
        except _Unknown:
            return ANY_ARRAY
        out = _evaluate(fn, probes, attrs)
        if out is _FAILED:
            return ANY_ARRAY
        t = type_of_value(out) if not isinstance(out, (list, tuple)) else type_of_value(tuple(out))
        counts = [k for k, n in enumerate(nodes) if _runtime_integer(n)]
        if counts and isinstance(t, ArrayType) and t.shape is not None:
            other = _evaluate(fn, [np.zeros_like(p) if k in counts else p for k, p in enumerate(probes)], attrs)
            if not isinstance(other, np.ndarray) or other.ndim != len(t.shape):
                return ArrayType(t.dtype, None)
            t = ArrayType(t.dtype, tuple(d if d == e else None for d, e in zip(t.shape, other.shape)))
        return t
    return rule


_FAILED = object()


def _evaluate(fn: Callable, probes: list, attrs: dict) -> Any:
    """`fn` applied to the probes, keyword operands (attr `kw` names the last ones) by keyword;
    `_FAILED` when it raises."""
    kw = attrs.get("kw", ())
    positional = len(probes) - len(kw)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return fn(*probes[:positional], **dict(zip(kw, probes[positional:])), **_kwargs(attrs))
    except Exception:
        return _FAILED


def _runtime_integer(node) -> bool:
    """An integer known only at run time (a number or an array of them)."""
    t = node.type
    if node.op == "const":
        return False
    if isinstance(t, ScalarType):
        return t.kind == "int"
    return isinstance(t, ArrayType) and t.dtype is not None and t.dtype.startswith(("int", "uint"))


def _probe(node, limit: Optional[int] = DUMMY_EVAL_LIMIT) -> Any:
    """A stand-in for an operand. A tuple of arrays built in the graph (`np.concatenate((a, b))`)
    is probed item by item; a tuple of compile-time numbers (`window_shape=(5, 5)`) is its value (a
    tuple holding a run-time number stays unknown: that number could be a size)."""
    if node.op == "tuple" and node.operands and all(isinstance(o.type, ArrayType) for o in node.operands):
        return tuple(shape_probe(o.type, limit=limit) for o in node.operands)
    if node.op == "tuple":
        return _constant_tuple(node)
    return shape_probe(node.type, const_value(node), limit)


def padded(nodes, attrs) -> Type:
    """`np.pad(a, pad_width, ...)`: each axis grows by its widths whatever its length, so the widths are
    found by padding a one-element stand-in of the same rank (no array of `a`'s size is built)."""
    t = nodes[0].type
    if not isinstance(t, ArrayType) or not t.is_static:
        return ANY_ARRAY
    one = ArrayType(t.dtype, (1,) * len(t.shape))
    grown = by_evaluation(np.pad)([_Typed(one)] + list(nodes[1:]), attrs)
    if not isinstance(grown, ArrayType) or not grown.is_static:
        return ANY_ARRAY
    return ArrayType(grown.dtype, tuple(n + g - 1 for n, g in zip(t.shape, grown.shape)))


class _Typed:
    """A stand-in operand with only a type (not a graph node)."""

    op = "typed"

    def __init__(self, t: Type):
        self.type = t
        self.attrs: dict = {}


def _constant_tuple(node) -> tuple:
    """The value of a tuple built of constants (nested tuples too), else `_Unknown`."""
    items = []
    for o in node.operands:
        if o.op == "tuple":
            items.append(_constant_tuple(o))
        elif o.op == "const":
            items.append(o.attrs["value"])
        else:
            raise _Unknown
    return tuple(items)


def fixed(t: Type) -> Callable:
    return lambda nodes, attrs: t


def creation(nodes, attrs) -> Type:
    """np.zeros(shape, dtype=...) and friends: shape from the first operand, dtype given by keyword or as
    the second operand (`np.zeros((n, n), np.int32)`)."""
    shape = const_value(nodes[0]) if nodes else _RUNTIME
    given = attrs.get("dtype", const_value(nodes[1]) if len(nodes) > 1 else np.float64)
    if given is _RUNTIME:   # `x.dtype` (a `np.dtype('float64')` call by now), or not known
        source = nodes[1]
        known = source.op == "call" and source.attrs.get("fn") == "numpy.dtype" and len(source.operands) == 1
        given = const_value(source.operands[0]) if known else None
        given = None if given is _RUNTIME else given
    dtype = None if given is None else np.dtype(given).name
    if shape is _RUNTIME:
        if nodes and nodes[0].op == "tuple":
            dims = tuple(v if isinstance(v, int) else None for v in map(const_value, nodes[0].operands))
            return ArrayType(dtype, dims)
        return ArrayType(dtype, (None,) if nodes and nodes[0].type == INT else None)
    return ArrayType(dtype, (shape,) if isinstance(shape, int) else tuple(shape))


def like(nodes, attrs) -> Type:
    """`np.ones_like(a, dtype=None)`: `a`'s shape, and `a`'s dtype unless `dtype` is given (None keeps
    it: `np.dtype(None)` would be float64)."""
    t = nodes[0].type
    if not isinstance(t, ArrayType):
        return ANY_ARRAY
    dtype = np.dtype(attrs["dtype"]).name if attrs.get("dtype") is not None else t.dtype
    return ArrayType(dtype, t.shape)


def getitem(nodes, attrs) -> Type:
    """Apply the index to a zero-strided stand-in: exact NumPy indexing rules, no memory."""
    base = nodes[0].type
    index = attrs["index"]
    if isinstance(base, TupleType):
        item = index[0] if len(index) == 1 else None
        if isinstance(item, int):
            return base.items[item]
        return OBJECT
    if not isinstance(base, ArrayType) or base.shape is None:
        return ArrayType(getattr(base, "dtype", None), None)
    dims = [d if d is not None else 2 for d in base.shape]
    unknown_axes = [k for k, d in enumerate(base.shape) if d is None]
    try:
        probe = np.lib.stride_tricks.as_strided(np.ones(1, dtype=base.dtype or "f8"), dims, (0,) * len(dims))
        key = tuple(_index_probe(item, nodes) for item in index)
        out = probe[key]
    except _Unknown:
        return ArrayType(base.dtype, None)
    except Exception:
        return ArrayType(base.dtype, None)
    shape = np.shape(out)
    if unknown_axes or any(not _is_const_int_index(item, nodes) and not _sized_by_type(item, nodes) for item in index):
        # a slice of an unknown axis, or bounds known only at run time, leaves that size unknown
        return ArrayType(base.dtype, _mark_unknown(shape, base.shape, index, nodes))
    return ArrayType(base.dtype, shape)


def _is_const_int_index(item, nodes) -> bool:
    from .literals import OperandRef
    if isinstance(item, slice):
        return all(not isinstance(p, OperandRef) for p in (item.start, item.stop, item.step))
    if isinstance(item, OperandRef):
        return False
    return True


def _sized_by_type(item, nodes) -> bool:
    """An index operand whose type alone fixes the result's shape: an integer, or an integer array of
    known shape (a gather takes the index's shape, whatever its values)."""
    from .literals import OperandRef
    if not isinstance(item, OperandRef):
        return False
    t = nodes[item.index].type
    return t == INT or isinstance(t, ArrayType) and t.is_static and "int" in (t.dtype or "")


def _index_probe(item, nodes):
    from .literals import OperandRef
    if isinstance(item, OperandRef):
        t = nodes[item.index].type
        if t in (INT,) or (isinstance(t, ArrayType) and t.shape == () and t.dtype and "int" in t.dtype):
            return 0
        if t == BOOL:
            return True
        if isinstance(t, ArrayType) and t.dtype == "bool":
            raise _Unknown  # a mask: the result size depends on the values
        if isinstance(t, ArrayType) and t.is_static:
            return stand_in(t)
        raise _Unknown
    if isinstance(item, slice):
        parts = [(0 if isinstance(p, OperandRef) else p) for p in (item.start, item.stop, item.step)]
        if isinstance(item.step, OperandRef):
            parts[2] = 1
        if isinstance(item.stop, OperandRef):
            parts[1] = None
        return slice(*parts)
    return item


def _mark_unknown(shape, base_shape, index, nodes) -> tuple:
    """Conservatively: axes sliced with run-time bounds or taken from unknown input axes are `?`."""
    from .literals import OperandRef
    out, axis, k = [], 0, 0
    items = list(index)
    n_explicit = sum(1 for it in items if it is not None and it is not Ellipsis)
    expanded = []
    for it in items:
        if it is Ellipsis:
            expanded.extend([slice(None)] * (len(base_shape) - n_explicit))
        else:
            expanded.append(it)
    expanded.extend([slice(None)] * (len(base_shape) - sum(1 for it in expanded if it is not None)))
    for it in expanded:
        if it is None:
            out.append(1)
        elif isinstance(it, slice):
            dynamic = any(isinstance(p, OperandRef) for p in (it.start, it.stop, it.step))
            out.append(None if dynamic or base_shape[axis] is None else shape[len(out)])
            axis += 1
        elif isinstance(it, OperandRef) and isinstance(nodes[it.index].type, ArrayType) and \
                nodes[it.index].type.shape != ():
            return tuple(None for _ in shape)  # advanced indexing: keep the rank only
        else:
            axis += 1
    return tuple(out) if len(out) == len(shape) else tuple(None for _ in shape)


def element(nodes, attrs) -> Type:
    """`a.item()`: the Python number of `a`'s kind."""
    t = nodes[0].type
    kinds = {"f": "float", "i": "int", "u": "int", "b": "bool", "c": "complex"}
    if isinstance(t, ArrayType) and t.dtype is not None and np.dtype(t.dtype).kind in kinds:
        return ScalarType(kinds[np.dtype(t.dtype).kind])
    return OBJECT


def python_extreme(fn: Callable) -> Callable:
    """Python's `max(a, b, ...)` is elementwise on arrays; on numbers it is one of them, whichever is
    largest (`max(0.0, x[i])`: `f32[]|float`); `max(v)` of one 1-D array is an element."""
    by_element = elementwise(fn)

    def rule(nodes, attrs) -> Type:
        if len(nodes) != 1:
            if all(is_number(n.type) for n in nodes):
                return union(n.type for n in nodes)
            return by_element(nodes, attrs)
        t = nodes[0].type
        return ArrayType(t.dtype, ()) if isinstance(t, ArrayType) and t.rank == 1 else OBJECT
    return rule


def scalar_of(kind: ScalarType) -> Callable:
    return lambda nodes, attrs: kind


def tuple_rule(nodes, attrs) -> Type:
    return TupleType(tuple(n.type for n in nodes))


def tuple_get(nodes, attrs) -> Type:
    t = nodes[0].type
    return t.items[attrs["index"]] if isinstance(t, TupleType) else OBJECT


__all__ = ["elementwise", "reduction", "matmul", "reshape", "transpose", "astype", "same_as_first",
           "by_evaluation", "fixed", "creation", "like", "getitem", "scalar_of", "tuple_rule", "tuple_get",
           "broadcast_dims", "const_value", "INT", "FLOAT", "BOOL", "NONE", "OBJECT"]
