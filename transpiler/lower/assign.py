"""Lowering assignment: `=`, annotated and augmented assignment, unpacking, item and attribute stores."""

from __future__ import annotations

import libcst as cst
import numpy as np

from ...graph import ops as _ops
from ...graph.diagnostics import LoweringError, UnsupportedSyntaxError
from ...graph.ir import Node
from ...graph.literals import Index, OperandRef
from ...graph.shape_rules import after_metadata_write
from ...graph.types import ArrayType, TupleType
from ..values import ListIndex, Seq, Static, is_static, static_value
from .access import index_of, subscript, subscript_item
from .bind import assign_name
from .call_nodes import raise_later
from .control import NeedsStatic, Return, Stop
from .expressions import binary, iterate
from .operators import BINARY

# `a += b` is the op whose in-place form is `+=` (the op table's `inplace_symbol`).
AUG_BY_SYMBOL = {op.inplace_symbol: name for name, op in _ops.OPS.items() if op.inplace_symbol}
_EMPTY_MODULE = cst.Module([])          # renders an operator node as its text (`+=`)


def lower_assign(state, stmt: cst.Assign, frame) -> None:
    value = state.lower_expr(stmt.value, frame)
    for target in stmt.targets:
        state.assign_target(target.target, value, frame)


def lower_annotated_assign(state, stmt: cst.AnnAssign, frame) -> None:
    if stmt.value is not None:
        state.assign_target(stmt.target, state.lower_expr(stmt.value, frame), frame)


def lower_augmented_assign(state, stmt: cst.AugAssign, frame) -> None:
    op = AUG_BY_SYMBOL[_EMPTY_MODULE.code_for_node(stmt.operator).strip()]
    span = state.span(stmt, frame)
    target = stmt.target
    if isinstance(target, cst.Name):
        current = state.lookup(target.value, frame, span)
        assign_name(state, target.value, augmented(state, op, current, state.lower_expr(stmt.value, frame), span), frame)
    elif isinstance(target, cst.Subscript):
        base = state.lower_expr(target.value, frame)
        key = subscript_key(state, target, frame)
        current = subscript(state, base, key, span)
        updated = augmented(state, op, current, state.lower_expr(stmt.value, frame), span)
        store_item(state, base, key, updated, span)
    elif isinstance(target, cst.Attribute):
        state.require("setattr", span)
        obj = state.lower_expr(target.value, frame)
        current = state.attribute(obj, target.attr.value, span)
        updated = augmented(state, op, current, state.lower_expr(stmt.value, frame), span)
        state.emit("setattr", [state.object_operand(obj, span), updated], {"name": target.attr.value}, span)
    else:
        raise UnsupportedSyntaxError("this augmented assignment target is not supported", span)


def augmented(state, op: str, current, value, span):
    """`x op= v`: in place on arrays (as Python does: aliases see it), a new value otherwise."""
    fn = next(f for (name, f) in BINARY.values() if name == op)
    if is_static(current) and is_static(value):
        return binary(state, op, fn, current, value, span)
    if isinstance(current, Seq):
        return binary(state, op, fn, current, value, span)
    return state.emit("inplace", [current, value], {"op": op}, span)


def assign_target(state, target, value, frame) -> None:
    span = state.span(target, frame)
    if isinstance(target, cst.Name):
        assign_name(state, target.value, value, frame)
    elif isinstance(target, (cst.Tuple, cst.List)):
        unpack(state, target, value, frame, span)
    elif isinstance(target, cst.Subscript):
        base = state.lower_expr(target.value, frame)
        store_item(state, base, subscript_key(state, target, frame), value, span)
    elif isinstance(target, cst.Attribute):
        state.require("setattr", span)
        obj = state.lower_expr(target.value, frame)
        state.emit("setattr", [state.object_operand(obj, span), value], {"name": target.attr.value}, span)
        refresh_array(state, obj, target.attr.value, value, frame, span)
    else:
        raise UnsupportedSyntaxError(f"assignment to {type(target).__name__} is not supported", span)


def refresh_array(state, obj, name: str, value, frame, span) -> None:
    """After `a.shape = s` (`dtype`, `strides`, `a.resize(s)`), names bound to `a` see its new type.

    The write changes the array object itself, so every name bound to it is rebound to a
    `refresh` of it: reads after the write (`a.shape`, `np.zeros(a.shape)`) are never folded
    from the type it had before.
    """
    if isinstance(obj, Static) and isinstance(obj.value, np.ndarray) and name in _ops.RETYPING:
        obj = state.latest_version(state.array_value(obj, span))  # `d["a"].shape = s`: read at call time
    if not isinstance(obj, Node) or name not in _ops.RETYPING or not isinstance(obj.type, ArrayType):
        return
    path = state.path_of.get(obj.id)
    if path is not None and state.scope.graph is not state.graph:
        # reads of this path outside this region cannot see the refresh made here: lower again
        state.retyped_paths.setdefault(path, set()).add(name)
    known = static_value(value) if value is not None and is_static(value) else None
    if isinstance(known, list):
        known = tuple(known)
    new_type = after_metadata_write(obj.type, name, known)
    refreshed = state.emit("refresh", [obj], span=span, name=obj.name, type=new_type)
    if path is not None:
        state.path_of[refreshed.id] = path
    state.refreshed[obj.id] = refreshed  # other paths to it (a caller's name, a container item)
    for key, bound in list(frame.env.items()):
        if bound is obj:
            frame.env[key] = refreshed


def unpack(state, target, value, frame, span) -> None:
    elements = list(target.elements)
    if isinstance(value, Node) and isinstance(value.type, TupleType):
        items = [state.emit("tuple_get", [value], {"index": k}, span) for k in range(len(value.type.items))]
    else:
        items = iterate(state, value, span)
    stars = [k for k, el in enumerate(elements) if isinstance(el, cst.StarredElement)]
    if len(items) < len(elements) - len(stars) or not stars and len(items) != len(elements):
        # Python raises ValueError when the statement runs: so does the compiled code
        raise_later(state, _unpack_error(len(items), len(elements), bool(stars)), span)
        if frame.loops:  # the rest of this path is dead, as after `raise`
            raise Stop
        raise Return(Static(None), span)
    if stars:
        s = stars[0]
        n_after = len(elements) - s - 1
        middle = items[s:len(items) - n_after]
        items = items[:s] + [Seq(middle, "list")] + items[len(items) - n_after:]
    for el, item in zip(elements, items):
        state.assign_target(el.value, item, frame)


def subscript_key(state, target: cst.Subscript, frame):
    items = [subscript_item(state, el.slice, frame) for el in target.slice]
    return items[0] if len(items) == 1 else Seq(items, "tuple")


def store_item(state, base, key, value, span) -> None:
    """`x[key] = value`: an ordered in-place write, exactly as eager Python does it.

    Lists and dicts built by the compiled code change at compile time; containers held outside
    the function (globals, attributes) are written at each call (COMPATIBLE).
    """
    if isinstance(base, Seq) or isinstance(base, Static) and base.path is None \
            and isinstance(base.value, (list, dict)):
        store_static_item(state, base, key, value, span)
        return
    if isinstance(base, Node) and base.id in state.param_objects and not isinstance(base.type, ArrayType):
        state.note_container_write(state.param_objects.get(base.id))
        state.require("mutate_object", span, "assigning an item of a container held outside the function")
    if isinstance(base, Static) and not hasattr(base.value, "shape"):
        state.note_container_write(base.value)
        if not hasattr(type(base.value), "__setitem__"):
            raise_later(state, TypeError(f"'{type(base.value).__name__}' object does not support item "
                                       "assignment"), span)
            return
        state.require("mutate_object", span, "assigning an item of a container held outside the function")
        base = state.object_operand(base, span)
    elif not isinstance(base, (Node, Static)):
        raise UnsupportedSyntaxError("item assignment is supported on arrays, lists and dicts only", span)
    index, operands = index_of(state, key, span)
    operands = [state.emit("list", o.items, span=span) if isinstance(o, ListIndex) else o for o in operands]
    state.emit("setitem", [base, value] + operands, {"index": Index(_shift(index))}, span)


def store_static_item(state, base, key, value, span) -> None:
    """`xs[k] = v` on a list (dict) of compile-time structure: the structure changes now."""
    if not is_static(key) or isinstance(key, tuple):
        raise NeedsStatic("assigning an item of a list or dict built here needs a compile-time key", span)
    k = static_value(key)
    if isinstance(base, Seq):
        if base.kind == "tuple":
            raise_later(state, TypeError("'tuple' object does not support item assignment"), span)
            return
        try:
            if isinstance(k, slice):
                base.items[k] = iterate(state, value, span)
            else:
                base.items[k] = value
        except (IndexError, TypeError, ValueError) as e:
            raise_later(state, e, span)
        return
    if isinstance(base.value, list) and not is_static(value):
        raise LoweringError("this list holds compile-time values only; build it with [...] to store "
                            "run-time values in it", span)
    base.value[k] = static_value(value) if isinstance(base.value, list) else value


def _unpack_error(n_items: int, n_targets: int, starred: bool) -> ValueError:
    """The ValueError this Python raises unpacking `n_items` values into `n_targets` targets."""
    names = [f"_{k}" for k in range(n_targets)]
    if starred:
        names[-1] = "*" + names[-1]
    scope: dict = {}
    exec(f"def f(t):\n    {', '.join(names)}, = t\n", scope)  # noqa: S102 - a fixed two-line function
    try:
        scope["f"]((None,) * n_items)
    except ValueError as e:
        return e
    return ValueError(f"cannot unpack {n_items} values into {n_targets} targets")


def _shift(index):
    """setitem's operands are (array, value, *index parts): index refs move up by one."""
    out = []
    for item in index:
        if isinstance(item, OperandRef):
            out.append(OperandRef(item.index + 1))
        elif isinstance(item, slice):
            out.append(slice(*(OperandRef(p.index + 1) if isinstance(p, OperandRef) else p
                               for p in (item.start, item.stop, item.step))))
        else:
            out.append(item)
    return out
