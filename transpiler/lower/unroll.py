"""Unrolling a `for` loop over a compile-time sequence, within the compile budget (past it: a run-time loop over a table of its items)."""

from __future__ import annotations

import itertools
from typing import Optional

import libcst as cst
import numpy as np

from ...graph.diagnostics import LoweringError
from ..budget import ItemTable, MAX_GRAPH_NODES, MAX_TABLE_ITEMS, MAX_UNROLL_ITERATIONS, Meter, OverBudget
from ..cst_queries import has_loop_control
from ..rules import LAX
from ..values import RangeVal, Seq, Static, is_static, static_value
from .blocks import statements
from .branches import branch
from .budget import budget_error, loop_text, restore_lowering_state, save_lowering_state
from .control import NeedsUnroll
from .expressions import iterate
from .loops import any_of, clear_flags, enter_loop, exit_loop
from .range_loops import range_loop


def budgeted_loop(state, stmt, items: Optional[list], count, frame, span, runtime: bool = True) -> None:
    """Unroll `stmt` over `items` within the budget; past it, a run-time loop, else the budget error.

    `items` and `count` come from `loop_items`; `runtime` is False when a run-time form was already
    tried (a `range` loop, rows of an array) and needs the items at compile time.
    """
    key = ("loop", span, count)
    reason = None
    if isinstance(count, str) or count > MAX_UNROLL_ITERATIONS:
        reason = (f"`{loop_text(stmt, frame)}` runs {count} times: more "
                  f"than the unrolling limit of {MAX_UNROLL_ITERATIONS} iterations")
    elif key in state.budget.over:
        reason = state.budget.over[key]
    else:
        meter = Meter("loop", stmt, state.budget.made, count, name=loop_text(stmt, frame))
        saved = save_lowering_state(state, frame)
        state.budget.meters.append(meter)
        try:
            unrolled_loop(state, stmt, items, frame)
            return
        except OverBudget as e:
            if e.meter is not meter:
                raise
            reason = e.reason
            restore_lowering_state(state, saved, frame)
            state.budget.made = meter.start  # the nodes it made are gone
        finally:
            state.budget.meters.remove(meter)
        state.budget.found[key] = state.budget.over[key] = reason  # met again (an outer loop unrolled): skip
    past_unroll_budget(state, stmt, items, frame, span, reason, runtime)


def loop_items(state, iterable, span, runtime: bool = True) -> tuple:
    """(items, count) of a compile-time sequence (count a text when not known).

    Items are None when the loop cannot be unrolled and need not know them: more than
    MAX_UNROLL_ITERATIONS, and no run-time form (`runtime` False, or more than MAX_TABLE_ITEMS).
    An iterator without a length (`np.ndindex`, `itertools.count()`) is read only that far.
    """
    limit = MAX_TABLE_ITEMS if runtime else MAX_UNROLL_ITERATIONS
    if isinstance(iterable, Seq):
        return list(iterable.items), len(iterable.items)
    if isinstance(iterable, Static) and not isinstance(iterable.value, (list, tuple, dict, str, bytes, np.ndarray)):
        obj = iterable.value
        if hasattr(obj, "__len__") and hasattr(obj, "__getitem__"):
            count = len(obj)
            if count > MAX_UNROLL_ITERATIONS and count > limit:
                return None, count
        elif hasattr(obj, "__next__"):
            if iterable.from_outside:     # an iterator from outside: reading it here would use it up
                raise LoweringError(f"cannot iterate over a `{type(obj).__name__}` from outside the function at "
                                    "compile time: reading it would use it up, and the next call's may differ",
                                    span, hint="pass a list or tuple instead")
            first = list(itertools.islice(obj, limit + 1))
            if len(first) > limit:
                return None, f"more than {limit}"
            iterable = Static(first)
    items = iterate(state, iterable, span)
    return items, len(items)


def unrolled_loop(state, stmt: cst.For, items: list, frame) -> None:
    span = state.span(stmt, frame)
    body = list(stmt.body.body)
    control = has_loop_control(body)
    enter_loop(state, frame, span, control, body)
    try:
        unroll_items(state, stmt, items, frame, control)
    finally:
        exit_loop(state, frame)


def unroll_items(state, stmt, items: list, frame, control: bool) -> None:
    depth = len(frame.loops)
    for k, item in enumerate(items):
        if control:
            flags = [frame.env.get(f"$brk{depth}"), frame.env.get("$ret")]
            flags = [f for f in flags if f is not None and not (is_static(f) and not static_value(f))]
            if any(is_static(f) for f in flags):
                return
            if flags:  # run the remaining iterations only while no flag is set
                span = frame.loops[-1]
                go_on = state.emit("not", [any_of(state, flags, span)], span=span)
                rest = items[k:]

                def then_fn(f):
                    clear_flags(f, depth)
                    unroll_items(state, stmt, rest, f, control)

                branch(state, go_on, then_fn, lambda f: None, frame, span)
                return
            frame.env[f"$cont{depth}"] = Static(False)
        state.assign_target(stmt.target, item, frame)
        statements(state, list(stmt.body.body), frame)
        count_iteration(state, stmt)  # stops unrolling past the compile budget (transpiler/budget.py)


def count_iteration(state, stmt) -> None:
    """After one unrolled iteration of `stmt`: stop when the loop's estimate exceeds the budget."""
    meter = next((m for m in reversed(state.budget.meters) if m.owner is stmt), None)
    if meter is None:
        return
    meter.done += 1
    estimate = meter.start + (state.budget.made - meter.start) * meter.total // meter.done
    if estimate > MAX_GRAPH_NODES:
        raise OverBudget(meter, f"unrolling `{meter.name}` ({meter.total} iterations) would make about "
                                f"{estimate} graph nodes: more than the compile budget of {MAX_GRAPH_NODES}")


def past_unroll_budget(state, stmt, items, frame, span, reason: str, runtime: bool) -> None:
    """A loop past the unrolling budget: a run-time loop over a table of its items, else the error."""
    table = ItemTable.of(items) if runtime and items is not None else None
    if table is not None:
        saved = save_lowering_state(state, frame)
        try:
            range_loop(state, stmt, RangeVal(Static(0), Static(len(items)), Static(1)), frame, rows_of=table)
            return
        except NeedsUnroll:
            restore_lowering_state(state, saved, frame)
            reason += ", and its body needs each item at compile time"
    elif runtime and items is not None:
        reason += ", and its items are not numbers (or tuples of numbers) a run-time loop could go over"
    elif not runtime:
        reason += ", and its body needs each item at compile time"
    outermost = next((m for m in state.budget.meters if m.kind == "loop"), None)
    if outermost is not None and state.level == LAX:
        # one fallback block for the whole nest, not one in each iteration of the loops around it
        raise OverBudget(outermost, f"{reason} (inside `{outermost.name}`)")
    raise budget_error("unroll_budget", reason, span)
