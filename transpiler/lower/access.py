"""Lowering attributes and subscripts: reads of `x.name` and `x[key]`, and the index of a subscript."""

from __future__ import annotations

from types import ModuleType

import libcst as cst
import numpy as np

from ...graph.diagnostics import LoweringError
from ...graph.ir import Node
from ...graph.literals import Index, OperandRef
from ...graph.types import OBJECT, ArrayType, TupleType
from ..static_pure import NotComputed, module_attribute
from ..values import ListIndex, MethodVal, Seq, SeqMethod, Static, describe_value, is_static, static_value
from .control import NeedsStatic
from .operators import OPERATOR_OPS

SEQ_METHODS = {"append", "extend", "insert", "pop", "index", "count", "reverse", "copy", "clear", "remove", "sort"}


def lower_attribute(state, node: cst.Attribute, frame):
    return state.attribute(state.lower_expr(node.value, frame), node.attr.value, state.span(node, frame))


def attribute(state, value, name: str, span):
    if isinstance(value, Node):
        value = _array_object(state, value, name)
    if isinstance(value, Static) and isinstance(value.value, np.ndarray) and _array_has(value.value, name):
        value = state.latest_version(state.array_value(value, span))  # a weight: read at run time, then `.T`
    # else a Python attribute of the array object itself (a Parameter's `name`, `requires_grad`), or
    # one it lacks: folded (or an AttributeError) like any object's attribute, and guarded
    if isinstance(value, Static):
        if name in state.mutated_attrs and not isinstance(getattr(type(value.value), name, None), property):
            # this compile writes `<obj>.name`: a compile-time read would go stale
            return state.emit("getattr", [state.object_operand(value, span)], {"name": name}, span, name=name)
        try:
            result = module_attribute(value.value, name) if state.sealed and isinstance(value.value, ModuleType) \
                else getattr(value.value, name)
        except AttributeError as e:
            raise LoweringError(str(e), span) from None
        path = value.path.attr(name) if value.path else None
        state.guards.read(path, result, value.value)
        return state.reached(state.runtime_container(Static(result, path)), span)
    if isinstance(value, Seq) and name in SEQ_METHODS:
        return SeqMethod(value, name)
    if isinstance(value, Node):
        return array_attribute(state, value, name, span)
    raise LoweringError(f"{describe_value(value)} has no attribute `{name}`", span)


def _array_object(state, value: Node, name: str):
    """The array object behind `value` when `value` was read through a path and `name` is not an
    array attribute (a Parameter's own `requires_grad`, or one the object lacks), else `value`."""
    key = state.path_of.get(value.id)
    obj = state.param_arrays.get(key) if key is not None else None
    if obj is not None and not _array_has(obj, name):
        return Static(obj, state.param_paths[key])
    return value


def _array_has(obj: np.ndarray, name: str) -> bool:
    """`obj.name` is an array attribute or method (read from the run-time array), not one of the
    object's own Python attributes and not missing."""
    return name not in getattr(obj, "__dict__", ()) and hasattr(obj, name)


def array_attribute(state, value: Node, name: str, span):
    t = value.type
    if name == "shape":
        if isinstance(t, ArrayType) and t.shape is not None:
            return Seq([Static(d) if d is not None else state.emit("dim", [value], {"axis": k}, span)
                        for k, d in enumerate(t.shape)], "tuple")
        return state.emit("shape", [value], span=span)
    if name == "ndim":
        if isinstance(t, ArrayType) and t.shape is not None:
            return Static(len(t.shape))
        return state.emit("ndim", [value], span=span)
    if name == "size":
        if isinstance(t, ArrayType) and t.is_static:
            return Static(int(np.prod(t.shape)))
        return state.emit("size", [value], span=span)
    if name == "dtype":
        if isinstance(t, ArrayType) and t.dtype is not None:
            return Static(np.dtype(t.dtype))
        raise LoweringError("the dtype of this value is not known at compile time", span)
    if name == "T":
        return state.emit("T", [value], span=span)
    if isinstance(t, ArrayType) and hasattr(np.ndarray, name) and not callable(getattr(np.ndarray, name)):
        if name in ("itemsize", "nbytes") and t.is_static:
            return Static(getattr(np.empty(t.shape, t.dtype), name))
        return state.emit("getattr", [value], {"name": name}, span, name=name)  # x.real, x.strides...
    if t == OBJECT and value.op in OPERATOR_OPS and not hasattr(np.ndarray, name):
        raise LoweringError(f"`.{name}` of a Python object made at run time (an operator's result on objects such as "
                            "a CSRTensor): graphjit compiles attributes of arrays and of objects passed in", span)
    return MethodVal(value, name)


def lower_subscript(state, node: cst.Subscript, frame):
    base = state.lower_expr(node.value, frame)
    span = state.span(node, frame)
    items = [subscript_item(state, el.slice, frame) for el in node.slice]
    key = items[0] if len(items) == 1 else Seq(items, "tuple")
    return subscript(state, base, key, span)


def subscript_item(state, item, frame):
    if isinstance(item, cst.Index):
        return state.lower_expr(item.value, frame)
    parts = [None if p is None else state.lower_expr(p, frame) for p in (item.lower, item.upper, item.step)]
    if all(p is None or is_static(p) for p in parts):
        return Static(slice(*(None if p is None else static_value(p) for p in parts)))
    return ("slice", parts)


def subscript(state, base, key, span):
    if isinstance(base, Static) and isinstance(base.value, dict) and is_static(key):
        try:
            value = base.value[static_value(key)]
        except KeyError as e:
            raise LoweringError(f"KeyError: {e}", span) from None
        if isinstance(value, (Node, Seq)):
            return value
        if isinstance(value, Static):
            return state.reached(value, span)
        path = base.path.item(static_value(key)) if base.path and _pathable(static_value(key)) else None
        state.guards.read(path, value, base.value)
        return state.reached(Static(value, path), span)
    if isinstance(base, Static) and _static_key(key):
        k = _key_value(key)
        try:
            item = base.value[k]
        except NotComputed:   # `__getitem__`/`__class_getitem__` of a file read without running it
            raise
        except Exception as e:
            raise LoweringError(f"{type(e).__name__}: {e}", span) from None
        path = base.path.item(k) if base.path and _pathable(k) else None
        if path is None and base.path is not None and isinstance(k, slice):
            state.guards.length(base.path, base.value)  # a slice depends on the length
        state.guards.read(path, item, base.value)
        return state.reached(Static(item, path), span)
    if isinstance(base, Seq):
        if not _static_key(key):
            raise LoweringError("a tuple or list of compile-time structure needs a compile-time index",
                                span, hint="index an array instead (np.stack the items first)")
        k = _key_value(key)
        if isinstance(k, slice):
            return Seq(base.items[k], base.kind)
        try:
            return base.items[k]
        except (IndexError, TypeError) as e:
            raise LoweringError(f"{type(e).__name__}: {e}", span) from None
    if isinstance(base, Node) and isinstance(base.type, TupleType) and _static_key(key):
        k = _key_value(key)
        if isinstance(k, int):
            return state.emit("tuple_get", [base], {"index": k % len(base.type.items)}, span)
    if isinstance(base, Static) and not hasattr(base.value, "shape"):
        raise NeedsStatic(f"indexing a compile-time {type(base.value).__name__} needs a compile-time index",
                          span)
    if isinstance(base, (Node, Static)):
        index, operands = index_of(state, key, span)
        operands = [state.emit("list", o.items, span=span) if isinstance(o, ListIndex) else o for o in operands]
        return state.emit("getitem", [base] + operands, {"index": index}, span)
    raise LoweringError(f"cannot index {describe_value(base)}", span)


def index_of(state, key, span) -> tuple:
    """An `Index` attribute with `$k` for run-time parts, and the operands they refer to."""
    items = key.items if isinstance(key, Seq) and key.kind == "tuple" else [key]
    operands: list = []
    out = []

    def ref(value):
        operands.append(value)
        return OperandRef(len(operands))  # operand 0 is the indexed value

    for item in items:
        if isinstance(item, tuple) and item and item[0] == "slice":
            out.append(slice(*(None if p is None else (static_value(p) if is_static(p) else ref(p))
                               for p in item[1])))
        elif isinstance(item, Static) and (item.value is None or item.value is Ellipsis
                                           or isinstance(item.value, (int, slice, np.integer))):
            v = item.value
            out.append(int(v) if isinstance(v, np.integer) else v)
        elif isinstance(item, Static) and isinstance(item.value, bool):
            out.append(item.value)
        elif isinstance(item, Seq) and item.kind == "list" or isinstance(item, Static) and isinstance(
                item.value, list):
            # a list index selects along one axis (a tuple would index several axes)
            items = item.items if isinstance(item, Seq) else [Static(v) for v in item.value]
            out.append(ref(ListIndex(items)))
        else:
            out.append(ref(item))
    return Index(out), operands


def _static_key(key) -> bool:
    return is_static(key) and not (isinstance(key, tuple) and key and key[0] == "slice")


def _key_value(key):
    return static_value(key)


def _pathable(key) -> bool:
    return isinstance(key, (int, str)) and not isinstance(key, bool)
