"""Lowering `for` loops: which form a loop takes (a run-time range loop, rows of an array, unrolled items)."""

from __future__ import annotations

import libcst as cst

from ...graph.diagnostics import LoweringError, UnsupportedSyntaxError
from ...graph.ir import Node
from ...graph.types import ArrayType
from ..rules import rule
from ..values import RangeVal, Static
from .budget import restore_lowering_state, save_lowering_state
from .control import ContainerChanged, NeedsUnroll
from .index_loops import index_nest
from .range_loops import range_loop, rows_loop, static_rows
from .unroll import budgeted_loop, loop_items


def lower_for(state, stmt: cst.For, frame) -> None:
    """A run-time range loop where it can be one (a range, rows of an array), else the items unrolled."""
    span = state.span(stmt, frame)
    if stmt.orelse is not None:
        raise UnsupportedSyntaxError("`for ... else` is not supported in a graph", span, rule=rule("for_else"))
    if isinstance(stmt.iter, cst.Call) and index_loop(state, stmt, frame):
        return
    iterable = state.lower_expr(stmt.iter, frame)
    tried_runtime = False  # a run-time loop was tried and needs its items at compile time
    if isinstance(iterable, Static) and isinstance(iterable.value, range):
        r = iterable.value
        try:
            return range_loop(state, stmt, RangeVal(Static(r.start), Static(r.stop), Static(r.step)), frame)
        except NeedsUnroll:
            tried_runtime = True
    if isinstance(iterable, RangeVal):
        try:
            return range_loop(state, stmt, iterable, frame)
        except NeedsUnroll as e:
            raise _cannot_unroll(e.args[0], span) from None
    if isinstance(iterable, Node) and not _small_static_rows(iterable):
        try:
            return rows_loop(state, stmt, iterable, frame)
        except NeedsUnroll as e:
            if not static_rows(iterable):
                raise _cannot_unroll(e.args[0], span) from None
            tried_runtime = True
    items, count = loop_items(state, iterable, span, runtime=not tried_runtime)
    budgeted_loop(state, stmt, items, count, frame, span, runtime=not tried_runtime)  # unroll.py


def index_loop(state, stmt: cst.For, frame) -> bool:
    """A loop over np.ndindex or itertools.product of ranges as a nest of range loops (index_loops.py)."""
    saved, fallbacks = save_lowering_state(state, frame), state.fallbacks
    nest = index_nest(state, stmt, frame)
    if nest is not None:
        try:
            range_loop(state, stmt, nest[0], frame, inner=tuple(nest[1:]))
            if state.fallbacks == fallbacks:
                return True
        except NeedsUnroll:
            pass
        # the body needs the indices at compile time (a list indexed by them): unrolled instead
    restore_lowering_state(state, saved, frame)   # what lowering the call made is made again
    return False


def _cannot_unroll(error, span) -> LoweringError:
    """The loop needs unrolling (its index used at compile time, a list growing) but its length is run-time."""
    if isinstance(error, ContainerChanged):
        return error
    if getattr(error, "instead", None) is not None:
        return error.instead
    return LoweringError(f"this loop's index is used where a compile-time value is needed ({error.message}), "
                         "but its bounds are known only at run time", span)


def _small_static_rows(node: Node) -> bool:
    t = node.type
    return isinstance(t, ArrayType) and bool(t.shape) and t.shape[0] is not None and t.shape[0] <= 0
