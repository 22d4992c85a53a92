"""Lowering calls of Python builtins that need more than running them now: `range`, `len`, `isinstance`, `zip`, `sum`, `sorted`, `dict`, `map`..."""

from __future__ import annotations

import builtins
import operator
import types

import numpy as np

from ...graph.diagnostics import LoweringError
from ...graph.ir import Node
from ...graph.stand_ins import NoStandIn, stand_in
from ...graph.types import ArrayType, TupleType
from ..static_pure import module_attribute
from ..values import RangeVal, Seq, Static, is_static, static_value
from .call_nodes import raise_later
from .control import NeedsStatic
from .expressions import binary, iterate


def dict_call(state, args, kwargs, span):
    """`dict(pairs, **kw)` with run-time values: a compile-time dict of them (keys compile-time)."""
    out = {}
    if len(args) > 1:
        raise LoweringError("dict() takes at most one positional argument", span)
    if args:
        source = args[0]
        if isinstance(source, Static) and isinstance(source.value, dict):
            out.update(source.value)
        else:
            for pair in iterate(state, source, span):
                items = iterate(state, pair, span)
                if len(items) != 2 or not is_static(items[0]):
                    raise NeedsStatic("dict() of run-time values needs compile-time keys", span)
                out[static_value(items[0])] = items[1]
    out.update(kwargs)
    return Static(out)


def keyed_builtin(state, fn, args, kwargs, span):
    """`sorted`/`min`/`max` with a `key` function: keys computed now, so they must be compile-time."""
    items = iterate(state, args[0], span) if len(args) == 1 else list(args)
    key = kwargs["key"]
    keys = [state.call(key, [item], {}, span) for item in items]
    reverse = kwargs.get("reverse", Static(False))
    if not all(is_static(k) for k in keys) or not is_static(reverse) or set(kwargs) - {"key", "reverse"}:
        raise NeedsStatic(f"{fn.__name__}() with a key function needs compile-time keys", span)
    values = [static_value(k) for k in keys]
    order = list(range(len(items)))
    if fn is sorted:
        order = sorted(order, key=values.__getitem__, reverse=bool(static_value(reverse)))
        return Seq([items[k] for k in order], "list")
    if not items:
        return raise_later(state, ValueError(f"{fn.__name__}() iterable argument is empty"), span)
    return items[fn(order, key=values.__getitem__)]


def map_filter(state, fn, args, span):
    """`map(f, xs)` / `filter(f, xs)` over compile-time sequences: unrolled calls."""
    func = args[0]
    seqs = [iterate(state, a, span) for a in args[1:]]
    if fn is map:
        return Seq([state.call(func, list(items), {}, span) for items in zip(*seqs)], "list")
    kept = []
    for item in seqs[0]:
        keep = item if isinstance(func, Static) and func.value is None else state.call(func, [item], {}, span)
        if not is_static(keep):
            raise NeedsStatic("`filter` needs a predicate known at compile time", span)
        if static_value(keep):
            kept.append(item)
    return Seq(kept, "list")


def fold_builtin(state, fn, args, kwargs, span):
    """`sum`/`min`/`max` over a compile-time sequence of run-time values, Python's way."""
    items = args
    if len(args) == 1 and isinstance(args[0], Seq) or fn is sum:
        items = iterate(state, args[0], span) if isinstance(args[0], Seq) else None
    if items is None:  # sum(array): Python iterates the first axis
        return state.op_call("call", args, kwargs, span, extra={"fn": "builtins.sum"})
    if fn is sum:
        acc = args[1] if len(args) > 1 else kwargs.get("start", Static(0))
        for item in items:
            acc = binary(state, "add", operator.add, acc, item, span)
        return acc
    return state.op_call("py_min" if fn is min else "py_max", list(items), kwargs, span)


def range_call(state, args: list, span):
    if all(is_static(a) for a in args):
        return Static(range(*[static_value(a) for a in args]))
    if len(args) == 1:
        return RangeVal(Static(0), args[0], Static(1))
    if len(args) == 2:
        return RangeVal(args[0], args[1], Static(1))
    return RangeVal(*args)


def introspection(state, fn, args, span):
    target = args[0] if args else None
    if fn is len and isinstance(target, Seq):
        return Static(len(target.items))
    if fn is len and isinstance(target, Node):
        t = target.type
        if isinstance(t, ArrayType) and t.shape and t.shape[0] is not None:
            return Static(t.shape[0])
        if isinstance(t, TupleType):
            return Static(len(t.items))
        return state.emit("len", [target], span=span)
    if fn is isinstance and isinstance(target, (Node, Seq)) and is_static(args[1]):
        classes = static_value(args[1])
        if isinstance(target, Seq):
            return Static(isinstance((), classes) if target.kind == "tuple" else isinstance([], classes))
        probes = _probes_for(target.type)
        subclasses = [c for c in (classes if isinstance(classes, tuple) else (classes,))
                      if isinstance(c, type) and issubclass(c, np.ndarray) and c is not np.ndarray]
        if subclasses and isinstance(target.type, ArrayType):
            # graph types do not hold an array's class (graphjit.Tensor, Parameter): never guess
            raise LoweringError(f"isinstance() of an array against {subclasses[0].__name__} is not known at "
                                "compile time", span, hint="test it outside the jitted function")
        answers = {isinstance(p, classes) for p in probes}
        if len(answers) == 1:
            return Static(answers.pop())
        # the type does not decide it (a NumPy scalar or a 0-d array, an object): ask at run time
        names = _class_names(classes)
        if names is None:
            raise LoweringError("isinstance() of this run-time value needs NumPy or builtin classes", span)
        return state.emit("isinstance", [target], {"classes": names}, span)
    if fn is type and len(args) == 1 and isinstance(target, Node):
        if isinstance(target.type, ArrayType) and target.type.shape:
            # graph types do not hold an array's class (a graphjit.Tensor, a Parameter): ask at run time
            return state.op_call("call", [target], {}, span, extra={"fn": "builtins.type"})
        kinds = {type(p) for p in _probes_for(target.type)}
        if len(kinds) == 1:
            return Static(kinds.pop())
        raise LoweringError("type() of this run-time value is not known at compile time", span,
                            hint="use isinstance()")
    if fn is len and isinstance(target, Static):
        state.guards.length(target.path, target.value)
        return None  # computed as any pure builtin
    if fn in (builtins.getattr, hasattr) and len(args) >= 2 and is_static(args[1]):
        if fn is hasattr:
            if isinstance(target, Static):
                result = has_attribute(state, target.value, static_value(args[1]))
                state.guards.has(target.path, static_value(args[1]), result, target.value)
                return Static(result)
            probe = _probe_for(target.type) if isinstance(target, Node) else None
            if isinstance(probe, np.ndarray):  # every array has the same attributes
                return Static(hasattr(probe, static_value(args[1])))
            return None
        try:
            return state.attribute(target, static_value(args[1]), span)
        except LoweringError:
            if len(args) == 3:
                if isinstance(target, Static):
                    state.guards.has(target.path, static_value(args[1]), False, target.value)
                return args[2]
            raise
    return None


def has_attribute(state, obj, name) -> bool:
    """`hasattr(obj, name)`; of a module, without running its `__getattr__` when a file is read."""
    if state.sealed and isinstance(obj, types.ModuleType):
        try:
            module_attribute(obj, name)
        except AttributeError:
            return False
        return True
    return hasattr(obj, name)


def static_iterator(state, fn, args, kwargs, span):
    if fn is zip:
        seqs = [iterate(state, a, span) for a in args]
        return Seq([Seq(list(items), "tuple") for items in zip(*seqs)], "list")
    if fn is enumerate:
        start = args[1] if len(args) > 1 else kwargs.get("start", Static(0))
        if not is_static(start):
            raise NeedsStatic("enumerate() needs a compile-time start", span)
        start = static_value(start)
        return Seq([Seq([Static(start + k), v], "tuple") for k, v in enumerate(iterate(state, args[0], span))],
                   "list")
    return Seq(list(reversed(iterate(state, args[0], span))), "list")


def _probes_for(t) -> list:
    """Values of every Python type a run-time value of graph type `t` may have; [object()] if unknown."""
    if isinstance(t, ArrayType):
        if t.shape is not None and len(t.shape) > 0:
            return [stand_in(t, shape=(0,) * len(t.shape), dtype="float64")]
        dtypes = [t.dtype] if t.dtype is not None else ["float64", "int64", "bool"]
        # a 0-d result may be a 0-d array or a NumPy scalar
        return [stand_in(t, shape=(), dtype="float64", as_array=True)] + [stand_in(t, shape=(), dtype=d) for d in dtypes]
    probe = _probe_for(t)
    return [probe] if probe is not None or getattr(t, "kind", "") == "none" else [object(), np.empty(0), 0.0]


def _class_names(classes):
    """Qualified names of NumPy and builtin classes (what an `isinstance` node may name), else None."""
    out = []
    for cls in classes if isinstance(classes, tuple) else (classes,):
        name = getattr(cls, "__name__", "")
        if getattr(builtins, name, None) is cls:
            out.append(f"builtins.{name}")
        elif getattr(np, name, None) is cls:
            out.append(f"numpy.{name}")
        else:
            return None
    return tuple(out)


def _probe_for(t):
    """A value of the Python type a run-time value of graph type `t` has (an array for any array)."""
    try:
        return stand_in(t, shape=(0,), dtype="float64") if isinstance(t, ArrayType) else stand_in(t)
    except NoStandIn:
        return None