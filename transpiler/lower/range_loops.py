"""Lowering a `for` loop over a run-time range (or the rows of an array, or a table of items): a `for_range` region, or a `while` region when it may `break`."""

from __future__ import annotations

import operator
from typing import Optional

import libcst as cst

from ...graph.diagnostics import LoweringError
from ...graph.ir import Node
from ...graph.literals import Index, OperandRef
from ...graph.types import ArrayType, TupleType
from ..budget import ItemTable, MAX_UNROLL_ITERATIONS
from ..cst_queries import assigned_names, has_loop_control, target_names, used_outside
from ..rules import LAX
from ..values import MaybeUnbound, RangeVal, Seq, Static, UNBOUND, Undefined, is_static, static_value
from .blocks import statements
from .control import NeedsStatic, NeedsUnroll
from .expressions import binary
from .loops import (any_of, bind_results, carried_names, clear_flags, enter_loop, exit_loop, loop_region,
                    undefine_loop_locals, while_region)


def rows_loop(state, stmt: cst.For, array: Node, frame) -> None:
    """`for row in x` over an array of unknown length: a range loop over `len(x)`."""
    span = state.span(stmt, frame)
    if not isinstance(array.type, ArrayType):
        raise LoweringError(f"iterating over a run-time Python object ({array.type}) needs the Python "
                            "interpreter", span, hint="iterate over an array, or a tuple or list built here")
    length = state.emit("dim", [array], {"axis": 0}, span)
    range_loop(state, stmt, RangeVal(Static(0), length, Static(1)), frame, rows_of=array)


def range_loop(state, stmt: cst.For, rng: RangeVal, frame, rows_of: Optional[Node] = None,
               inner: Optional[tuple] = None) -> None:
    """`inner`: the outermost loop of a nest over index tuples (`for i, j in np.ndindex(n, m)`,
    index_loops.py): the ranges of the loops nested in this one; the innermost binds the target to
    the tuple of the indices."""
    span = state.span(stmt, frame)
    body = list(stmt.body.body)
    control = has_loop_control(body)
    loop_vars = target_names(stmt.target)
    before = {n: frame.env.get(n) for n in loop_vars}
    bound_before = all(v is not None and not isinstance(v, Undefined) for v in before.values())
    trips = _static_trips(rng)
    if trips is None and rows_of is not None and static_rows(rows_of):
        trips = rows_of.type.shape[0]
    runs = trips is not None and trips > 0 and all(_static_trips(r) for r in inner or ())
    # After the loop its variables hold their last values, as in Python: surely bound when the
    # loop runs at least once or they were bound before it. How (only for names used after it):
    # - a loop without break whose body does not rebind them, known to run: the last item, now;
    # - otherwise they are carried by the loop (from their value before it, or a placeholder).
    keep_vars = (bound_before or runs) and bool(used_outside(stmt, frame, loop_vars))
    rebinds = bool(set(loop_vars) & set(assigned_names(body)))
    last_item = keep_vars and not control and runs and not rebinds
    carry = keep_vars and not last_item
    enter_loop(state, frame, span, control, body)
    state.unrollable += 1
    try:
        lax_targets = not keep_vars and state.level == LAX
        if control:
            flag_range_loop(state, stmt, rng, frame, rows_of, carry_target=carry, lax_targets=lax_targets)
        else:
            plain_range_loop(state, stmt, rng, frame, rows_of, runs=runs, lax_targets=lax_targets,
                             carry_target=carry, inner=inner)
    finally:
        state.unrollable -= 1
        exit_loop(state, frame)
    if last_item:
        bind_last_item(state, stmt, rng, trips, rows_of, frame, span)
    elif not keep_vars:
        for n in loop_vars:
            old = frame.env.get(n)
            frame.env[n] = Undefined(n, f"it is the variable of the run-time loop at {span}, which may run "
                                        "zero times", maybe=old.maybe if isinstance(old, Undefined) else None)
    undefine_loop_locals(state, body, frame, span)


def bind_last_item(state, stmt, rng: RangeVal, trips, rows_of, frame, span) -> None:
    """The loop variables after a loop that surely ran, without break: its last item."""
    last = Static(static_value(rng.start) + (trips - 1) * static_value(rng.step))
    bind_loop_target(state, stmt, last, rows_of, frame, span)


def bind_loop_target(state, stmt, index, rows_of, frame, span) -> None:
    if rows_of is None:
        state.assign_target(stmt.target, index, frame)
    elif isinstance(rows_of, ItemTable):  # a compile-time sequence past the unrolling budget
        state.assign_target(stmt.target, rows_of.item(state, index, span), frame)
    else:
        row = state.emit("getitem", [rows_of, index], {"index": Index([_ref(1)])}, span)
        state.assign_target(stmt.target, row, frame)


def plain_range_loop(state, stmt, rng: RangeVal, frame, rows_of, runs: bool = False,
                     lax_targets: bool = False, carry_target: bool = False, inner: Optional[tuple] = None,
                     outer_indices: tuple = ()) -> None:
    """`runs`: the loop surely runs: names first assigned in its body are bound after it (carried).
    `carry_target`: the loop variables are carried too (their last values after the loop).
    `inner`: the ranges of the loops nested in this one; `outer_indices`: the indices of those around it."""
    span = state.span(stmt, frame)
    body = list(stmt.body.body)
    targets = target_names(stmt.target)
    placeholders = [n for n in assigned_names(body) if n not in targets and not n.startswith("$")
                    and (n not in frame.env or isinstance(frame.env[n], Undefined))] if runs else []
    placeholders = used_outside(stmt, frame, placeholders) if placeholders else []
    if carry_target:
        placeholders += [n for n in targets if n not in frame.env or isinstance(frame.env[n], Undefined)]
    for n in placeholders:  # UNBOUND until the body assigns it: reading it before raises UnboundLocalError
        frame.env[n] = MaybeUnbound(Static(UNBOUND))
    carried = carried_names(state, body, frame, exclude=() if carry_target else targets, stmt=stmt,
                                 maybe_extra=targets if lax_targets else (),
                                 extra=targets if carry_target else ())
    index_name = stmt.target.value if rows_of is None and isinstance(stmt.target, cst.Name) else "i"
    if inner is not None:
        index_name = nest_index_name(stmt.target, len(outer_indices))

    def body_fn(f, index):
        if inner:
            enter_loop(state, f, span, False, body)
            try:
                plain_range_loop(state, stmt, inner[0], f, None, runs=runs, lax_targets=lax_targets,
                                 inner=inner[1:], outer_indices=(*outer_indices, index))
            finally:
                exit_loop(state, f)
            return
        if inner is not None:
            state.assign_target(stmt.target, Seq([*outer_indices, index], "tuple"), f)
        else:
            bind_loop_target(state, stmt, index, rows_of, f, span)
        statements(state, body, f)

    try:
        outs, types, group, g, unsure = loop_region(state, frame, span, carried, body_fn, index_name,
                                                         exclude=() if carry_target else targets,
                                                         placeholders=placeholders, runs=runs)
    finally:
        for n in placeholders:
            if n not in carried:
                frame.env.pop(n, None)
    bounds = [state.operand(b, span) for b in (rng.start, rng.stop, rng.step)]
    init_nodes = [state.maybe_operand(frame.env[n], span) for n in carried]
    node = state.scope.graph.add("for_range", bounds + init_nodes + [state.scope.local(v) for v in group.outer],
                                {"carried": len(carried)}, TupleType(tuple(types)), span, regions=[g])
    bind_results(state, node, carried, types, frame, span, unsure)


def flag_range_loop(state, stmt, rng: RangeVal, frame, rows_of, carry_target: bool = False,
                    lax_targets: bool = False) -> None:
    """A range loop that may `break`/`return`: a `while` over the index that tests the flags.

    With `carry_target` the loop variables are carried too (their values after a `break`).
    """
    span = state.span(stmt, frame)
    depth = len(frame.loops)
    body = list(stmt.body.body)
    index_var = f"$i{depth}"
    frame.env[index_var] = rng.start
    targets = target_names(stmt.target) if carry_target else []
    for n in targets:
        if frame.env.get(n) is None or isinstance(frame.env[n], Undefined):
            frame.env[n] = Static(None)  # bound on the first iteration, which surely runs
    step = rng.step

    def cond_fn(f):
        i = f.env[index_var]
        if is_static(step):
            in_range = binary(state, "lt" if static_value(step) > 0 else "gt",
                                   operator.lt if static_value(step) > 0 else operator.gt, i, rng.stop, span)
        else:
            up = state.emit("bitand", [state.emit("gt", [step, Static(0)], span=span),
                                      state.emit("lt", [i, rng.stop], span=span)], span=span)
            down = state.emit("bitand", [state.emit("lt", [step, Static(0)], span=span),
                                        state.emit("gt", [i, rng.stop], span=span)], span=span)
            in_range = state.emit("bitor", [up, down], span=span)
        flags = [f.env[n] for n in (f"$brk{depth}", "$ret") if n in f.env]
        return state.emit("bitand", [state.emit("not", [any_of(state, flags, span)], span=span), in_range],
                         span=span)

    def body_fn(f):
        clear_flags(f, depth)  # the loop test guarantees no flag is set here
        i = f.env[index_var]
        bind_loop_target(state, stmt, i, rows_of, f, span)
        statements(state, body, f)
        f.env[index_var] = binary(state, "add", operator.add, i, step, span)

    try:
        while_region(state, frame, span, body, cond_fn, body_fn, extra=[index_var] + targets,
                          exclude=target_names(stmt.target), stmt=stmt,
                          maybe_extra=target_names(stmt.target) if lax_targets else ())
    except NeedsStatic as e:
        raise NeedsUnroll(e) from None  # a compile-time range unrolls instead
    frame.env.pop(index_var, None)


def nest_index_name(target, level: int) -> str:
    """The name of the index of one loop of a nest over a tuple target: `j` of `i, j`, else `idx1`."""
    if isinstance(target, (cst.Tuple, cst.List)) and level < len(target.elements) and \
            isinstance(target.elements[level].value, cst.Name):
        return target.elements[level].value.value
    return f"{target.value if isinstance(target, cst.Name) else 'i'}{level}"


def _static_trips(rng: RangeVal):
    """How many times a range loop runs, when its bounds are compile-time."""
    if all(is_static(b) for b in (rng.start, rng.stop, rng.step)):
        try:
            return len(range(static_value(rng.start), static_value(rng.stop), static_value(rng.step)))
        except (TypeError, ValueError):
            return None
    return None


def static_rows(node) -> bool:
    t = node.type
    return isinstance(t, ArrayType) and bool(t.shape) and t.shape[0] is not None and t.shape[0] <= MAX_UNROLL_ITERATIONS


def _ref(k):
    return OperandRef(k)
