"""Lowering method calls: of arrays (table ops), of run-time Python objects, of compile-time lists and dicts."""

from __future__ import annotations

import numpy as np

from ...graph import ops as _ops
from ...graph.diagnostics import LoweringError, UnsupportedSyntaxError
from ...graph.ir import Node
from ...graph.types import ArrayType
from ..values import MethodVal, Seq, Static, freeze, is_static, static_value
from .builtin_calls import keyed_builtin
from .call_nodes import numpy_operand, raise_later
from .callables import MUTATING_METHODS
from .control import NeedsStatic
from .expressions import iterate


def dict_method(state, fn, args, span):
    """Methods of a dict built by the compiled code (its values may be run-time): compile time."""
    d, name = fn.__self__, fn.__name__
    keys = [static_value(a) if is_static(a) else None for a in args[:1]]
    wrap = (lambda v: v if isinstance(v, (Node, Static, Seq)) else Static(v))
    if name == "get":
        return wrap(d.get(keys[0], args[1] if len(args) > 1 else Static(None)))
    if name in ("keys", "values", "items"):
        if name == "keys":
            return Seq([Static(k) for k in d], "list")
        if name == "values":
            return Seq([wrap(v) for v in d.values()], "list")
        return Seq([Seq([Static(k), wrap(v)], "tuple") for k, v in d.items()], "list")
    if name == "update":
        other = args[0]
        d.update(other.value if isinstance(other, Static) else {})
        return Static(None)
    if name == "pop":
        return wrap(d.pop(keys[0], *(args[1:2])))
    if name == "setdefault":
        return wrap(d.setdefault(keys[0], args[1] if len(args) > 1 else Static(None)))
    if name == "copy":
        return Static(dict(d))
    if name == "clear":
        d.clear()
        return Static(None)
    if name == "popitem":
        if not d:
            return raise_later(state, KeyError("popitem(): dictionary is empty"), span)
        key, value = d.popitem()
        return Seq([Static(key), wrap(value)], "tuple")
    raise UnsupportedSyntaxError(f"dict.{name}() is not supported in a graph", span)


def seq_method(state, method, args, kwargs, span):
    """List methods on a compile-time list of values: computed now, as the loop would."""
    seq, name = method.seq, method.name
    items = seq.items
    if name == "append":
        items.append(args[0])
    elif name == "extend":
        items.extend(iterate(state, args[0], span))
    elif name == "insert":
        items.insert(static_value(args[0]), args[1])
    elif name == "pop":
        return items.pop(static_value(args[0]) if args else -1)
    elif name == "reverse":
        items.reverse()
    elif name == "sort":
        ordered = keyed_builtin(state, sorted, [seq], dict(kwargs, key=kwargs.get("key", Static(None))), span) \
            if kwargs.get("key") is not None and not is_static(kwargs["key"]) else None
        if ordered is None:
            if not all(is_static(i) for i in items) or not all(is_static(v) for v in kwargs.values()):
                raise NeedsStatic("list.sort() needs compile-time items (or a key giving compile-time keys)",
                                  span)
            order = sorted(range(len(items)), key=[static_value(i) for i in items].__getitem__,
                           reverse=bool(static_value(kwargs.get("reverse", Static(False)))))
            ordered = Seq([items[k] for k in order], "list")
        items[:] = ordered.items
    elif name == "clear":
        items.clear()
    elif name == "copy":
        return Seq(list(items), seq.kind)
    elif name in ("index", "count", "remove"):
        if not all(is_static(i) for i in items) or not is_static(args[0]):
            raise LoweringError(f"list.{name}() needs compile-time items", span)
        values = [static_value(i) for i in items]
        if name == "remove":
            del items[values.index(static_value(args[0]))]
        else:
            return Static(getattr(values, name)(static_value(args[0])))
    return Static(None)


def array_method(state, method: MethodVal, args: list, kwargs: dict, span) -> Node:
    name = method.name
    op_name = _ops.METHOD_OPS.get(name)
    if op_name is None and not isinstance(method.obj.type, ArrayType) and not _from_numpy(method.obj):
        return object_method(state, method, args, kwargs, span)
    if name == "sort" and isinstance(method.obj.type, ArrayType):
        # `a.sort(axis)` sorts in place: `a[...] = np.sort(a, axis)`, a write every pass (and autodiff) sees
        ordered = state.op_call("sort", [method.obj] + list(args), kwargs, span)
        state.emit("setitem", [method.obj, ordered], {"index": (Ellipsis,)}, span)
        return Static(None)
    if op_name is None:
        if isinstance(method.obj.type, ArrayType) and not callable(getattr(np.ndarray, name, None)):
            raise LoweringError(f"arrays have no method `.{name}()`", span)
        # another method of an array (or of an object NumPy made, e.g. a Generator): an ordered call
        state.require("call_numpy", span)
        bound = state.emit("getattr", [method.obj], {"name": name}, span)
        return state.op_call("pycall", [bound] + list(args), kwargs, span)
    # keywords (`order="F"`) go through the generic call below, never dropped
    if name == "reshape" and not kwargs:
        shape = args[0] if len(args) == 1 else Seq(list(args), "tuple")
        return state.emit("reshape", [method.obj, numpy_operand(state, shape)], span=span)
    if name == "transpose" and not kwargs:
        axes = args[0] if len(args) == 1 else Seq(list(args), "tuple") if args else None
        attrs = {"axes": freeze(static_value(axes))} if axes is not None else {}
        return state.emit("transpose", [method.obj], attrs, span)
    if name == "astype":
        return state.emit("astype", [method.obj], {"dtype": np.dtype(static_value(args[0])).type}, span)
    return state.op_call(op_name, [method.obj] + list(args), kwargs, span)


def object_method(state, method: MethodVal, args: list, kwargs: dict, span) -> Node:
    """A method of a run-time Python object (a container read at call time): an ordered opaque call."""
    obj = state.param_objects.get(method.obj.id)
    if isinstance(obj, (list, dict, set)):
        if method.name in MUTATING_METHODS:
            state.note_container_write(obj)
        state.require("mutate_object", span, f"`{type(obj).__name__}.{method.name}` on a container held outside "
                                            "the function")
    else:
        state.require("call_opaque", span, f"calling `.{method.name}()` of a run-time Python object needs the "
                                          "Python interpreter")
    bound = state.emit("getattr", [method.obj], {"name": method.name}, span)
    return state.op_call("pycall", [bound] + list(args), kwargs, span)


def _from_numpy(node) -> bool:
    """Is this run-time object something a NumPy function returned (a Generator, say)?"""
    return node.op == "call" and str(node.attrs.get("fn", "")).startswith("numpy.")
