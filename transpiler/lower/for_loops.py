"""Lowering `for` loops: unrolled over compile-time sequences, `for_range` regions over run-time ranges and rows."""

from __future__ import annotations

import operator
from typing import Optional

import libcst as cst

from ...graph.diagnostics import LoweringError, UnsupportedSyntaxError
from ...graph.ir import Node
from ...graph.literals import Index, OperandRef
from ...graph.types import ArrayType, TupleType
from ..budget import ItemTable, MAX_UNROLL_ITERATIONS
from ..cst_queries import assigned_names, has_loop_control, target_names, used_outside
from ..rules import LAX, rule
from ..values import MaybeUnbound, RangeVal, Static, UNBOUND, Undefined, is_static, static_value
from .control import ContainerChanged, NeedsStatic, NeedsUnroll


class ForLowering:
    """`for` over ranges, array rows and compile-time sequences."""

    # --- for -------------------------------------------------------------------------------
    def lower_for(self, stmt: cst.For, frame) -> None:
        span = self.span(stmt, frame)
        if stmt.orelse is not None:
            raise UnsupportedSyntaxError("`for ... else` is not supported in a graph", span, rule=rule("for_else"))
        iterable = self.expr(stmt.iter, frame)
        tried_runtime = False  # a run-time loop was tried and needs its items at compile time
        if isinstance(iterable, Static) and isinstance(iterable.value, range):
            r = iterable.value
            try:
                return self.range_loop(stmt, RangeVal(Static(r.start), Static(r.stop), Static(r.step)), frame)
            except NeedsUnroll:
                tried_runtime = True
        if isinstance(iterable, RangeVal):
            try:
                return self.range_loop(stmt, iterable, frame)
            except NeedsUnroll as e:
                raise _cannot_unroll(e.args[0], span) from None
        if isinstance(iterable, Node) and not _small_static_rows(iterable):
            try:
                return self.rows_loop(stmt, iterable, frame)
            except NeedsUnroll as e:
                if not _static_rows(iterable):
                    raise _cannot_unroll(e.args[0], span) from None
                tried_runtime = True
        items, count = self.loop_items(iterable, span, runtime=not tried_runtime)
        self.budgeted_loop(stmt, items, count, frame, span, runtime=not tried_runtime)  # transpiler/budget.py

    def unrolled_loop(self, stmt: cst.For, items: list, frame) -> None:
        span = self.span(stmt, frame)
        body = list(stmt.body.body)
        control = has_loop_control(body)
        self.enter_loop(frame, span, control, body)
        try:
            self.unroll_items(stmt, items, frame, control)
        finally:
            self.exit_loop(frame)

    def unroll_items(self, stmt, items: list, frame, control: bool) -> None:
        depth = len(frame.loops)
        for k, item in enumerate(items):
            if control:
                flags = [frame.env.get(f"$brk{depth}"), frame.env.get("$ret")]
                flags = [f for f in flags if f is not None and not (is_static(f) and not static_value(f))]
                if any(is_static(f) for f in flags):
                    return
                if flags:  # run the remaining iterations only while no flag is set
                    span = frame.loops[-1]
                    go_on = self.emit("not", [self.any_of(flags, span)], span=span)
                    rest = items[k:]

                    def then_fn(f):
                        self.clear_flags(f, depth)
                        self.unroll_items(stmt, rest, f, control)

                    self.branch(go_on, then_fn, lambda f: None, frame, span)
                    return
                frame.env[f"$cont{depth}"] = Static(False)
            self.assign_target(stmt.target, item, frame)
            self.statements(list(stmt.body.body), frame)
            self.count_iteration(stmt)  # stops unrolling past the compile budget (transpiler/budget.py)

    def rows_loop(self, stmt: cst.For, array: Node, frame) -> None:
        """`for row in x` over an array of unknown length: a range loop over `len(x)`."""
        span = self.span(stmt, frame)
        if not isinstance(array.type, ArrayType):
            raise LoweringError(f"iterating over a run-time Python object ({array.type}) needs the Python "
                                "interpreter", span, hint="iterate over an array, or a tuple or list built here")
        length = self.emit("dim", [array], {"axis": 0}, span)
        self.range_loop(stmt, RangeVal(Static(0), length, Static(1)), frame, rows_of=array)

    def range_loop(self, stmt: cst.For, rng: RangeVal, frame, rows_of: Optional[Node] = None) -> None:
        span = self.span(stmt, frame)
        body = list(stmt.body.body)
        control = has_loop_control(body)
        loop_vars = target_names(stmt.target)
        before = {n: frame.env.get(n) for n in loop_vars}
        bound_before = all(v is not None and not isinstance(v, Undefined) for v in before.values())
        trips = _static_trips(rng)
        if trips is None and rows_of is not None and _static_rows(rows_of):
            trips = rows_of.type.shape[0]
        runs = trips is not None and trips > 0
        # After the loop its variables hold their last values, as in Python: surely bound when the
        # loop runs at least once or they were bound before it. How (only for names used after it):
        # - a loop without break whose body does not rebind them, known to run: the last item, now;
        # - otherwise they are carried by the loop (from their value before it, or a placeholder).
        keep_vars = (bound_before or runs) and bool(used_outside(stmt, frame, loop_vars))
        rebinds = bool(set(loop_vars) & set(assigned_names(body)))
        last_item = keep_vars and not control and runs and not rebinds
        carry = keep_vars and not last_item
        self.enter_loop(frame, span, control, body)
        self.unrollable += 1
        try:
            lax_targets = not keep_vars and self.level == LAX
            if control:
                self.flag_range_loop(stmt, rng, frame, rows_of, carry_target=carry, lax_targets=lax_targets)
            else:
                self.plain_range_loop(stmt, rng, frame, rows_of, runs=runs, lax_targets=lax_targets,
                                      carry_target=carry)
        finally:
            self.unrollable -= 1
            self.exit_loop(frame)
        if last_item:
            self.bind_last_item(stmt, rng, trips, rows_of, frame, span)
        elif not keep_vars:
            for n in loop_vars:
                old = frame.env.get(n)
                frame.env[n] = Undefined(n, f"it is the variable of the run-time loop at {span}, which may run "
                                            "zero times", maybe=old.maybe if isinstance(old, Undefined) else None)
        self.undefine_loop_locals(body, frame, span)

    def bind_last_item(self, stmt, rng: RangeVal, trips, rows_of, frame, span) -> None:
        """The loop variables after a loop that surely ran, without break: its last item."""
        last = Static(static_value(rng.start) + (trips - 1) * static_value(rng.step))
        self.bind_loop_target(stmt, last, rows_of, frame, span)

    def bind_loop_target(self, stmt, index, rows_of, frame, span) -> None:
        if rows_of is None:
            self.assign_target(stmt.target, index, frame)
        elif isinstance(rows_of, ItemTable):  # a compile-time sequence past the unrolling budget
            self.assign_target(stmt.target, rows_of.item(self, index, span), frame)
        else:
            row = self.emit("getitem", [rows_of, index], {"index": Index([_ref(1)])}, span)
            self.assign_target(stmt.target, row, frame)

    def plain_range_loop(self, stmt, rng: RangeVal, frame, rows_of, runs: bool = False,
                         lax_targets: bool = False, carry_target: bool = False) -> None:
        """`runs`: the loop surely runs: names first assigned in its body are bound after it (carried).
        `carry_target`: the loop variables are carried too (their last values after the loop)."""
        span = self.span(stmt, frame)
        body = list(stmt.body.body)
        targets = target_names(stmt.target)
        placeholders = [n for n in assigned_names(body) if n not in targets and not n.startswith("$")
                        and (n not in frame.env or isinstance(frame.env[n], Undefined))] if runs else []
        placeholders = used_outside(stmt, frame, placeholders) if placeholders else []
        if carry_target:
            placeholders += [n for n in targets if n not in frame.env or isinstance(frame.env[n], Undefined)]
        for n in placeholders:  # UNBOUND until the body assigns it: reading it before raises UnboundLocalError
            frame.env[n] = MaybeUnbound(Static(UNBOUND))
        carried = self.carried_names(body, frame, exclude=() if carry_target else targets, stmt=stmt,
                                     maybe_extra=targets if lax_targets else (),
                                     extra=targets if carry_target else ())
        index_name = stmt.target.value if rows_of is None and isinstance(stmt.target, cst.Name) else "i"

        def body_fn(f, index):
            self.bind_loop_target(stmt, index, rows_of, f, span)
            self.statements(body, f)

        try:
            outs, types, group, g, unsure = self.loop_region(frame, span, carried, body_fn, index_name,
                                                             exclude=() if carry_target else targets,
                                                             placeholders=placeholders)
        finally:
            for n in placeholders:
                if n not in carried:
                    frame.env.pop(n, None)
        bounds = [self.operand(b, span) for b in (rng.start, rng.stop, rng.step)]
        init_nodes = [self.maybe_operand(frame.env[n], span) for n in carried]
        node = self.scope.graph.add("for_range", bounds + init_nodes + [self.scope.local(v) for v in group.outer],
                                    {"carried": len(carried)}, TupleType(tuple(types)), span, regions=[g])
        self.bind_results(node, carried, types, frame, span, unsure)

    def flag_range_loop(self, stmt, rng: RangeVal, frame, rows_of, carry_target: bool = False,
                        lax_targets: bool = False) -> None:
        """A range loop that may `break`/`return`: a `while` over the index that tests the flags.

        With `carry_target` the loop variables are carried too (their values after a `break`).
        """
        span = self.span(stmt, frame)
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
                in_range = self.binary("lt" if static_value(step) > 0 else "gt",
                                       operator.lt if static_value(step) > 0 else operator.gt, i, rng.stop, span)
            else:
                up = self.emit("bitand", [self.emit("gt", [step, Static(0)], span=span),
                                          self.emit("lt", [i, rng.stop], span=span)], span=span)
                down = self.emit("bitand", [self.emit("lt", [step, Static(0)], span=span),
                                            self.emit("gt", [i, rng.stop], span=span)], span=span)
                in_range = self.emit("bitor", [up, down], span=span)
            flags = [f.env[n] for n in (f"$brk{depth}", "$ret") if n in f.env]
            return self.emit("bitand", [self.emit("not", [self.any_of(flags, span)], span=span), in_range],
                             span=span)

        def body_fn(f):
            self.clear_flags(f, depth)  # the loop test guarantees no flag is set here
            i = f.env[index_var]
            self.bind_loop_target(stmt, i, rows_of, f, span)
            self.statements(body, f)
            f.env[index_var] = self.binary("add", operator.add, i, step, span)

        try:
            self.while_region(frame, span, body, cond_fn, body_fn, extra=[index_var] + targets,
                              exclude=target_names(stmt.target), stmt=stmt,
                              maybe_extra=target_names(stmt.target) if lax_targets else ())
        except NeedsStatic as e:
            raise NeedsUnroll(e) from None  # a compile-time range unrolls instead
        frame.env.pop(index_var, None)


def _static_trips(rng: RangeVal):
    """How many times a range loop runs, when its bounds are compile-time."""
    if all(is_static(b) for b in (rng.start, rng.stop, rng.step)):
        try:
            return len(range(static_value(rng.start), static_value(rng.stop), static_value(rng.step)))
        except (TypeError, ValueError):
            return None
    return None


def _cannot_unroll(error, span) -> LoweringError:
    """The loop needs unrolling (its index used at compile time, a list growing) but its length is run-time."""
    if isinstance(error, ContainerChanged):
        return error
    if getattr(error, "instead", None) is not None:
        return error.instead
    return LoweringError(f"this loop's index is used where a compile-time value is needed ({error.message}), "
                         "but its bounds are known only at run time", span)


def _static_rows(node) -> bool:
    t = node.type
    return isinstance(t, ArrayType) and bool(t.shape) and t.shape[0] is not None and t.shape[0] <= MAX_UNROLL_ITERATIONS


def _ref(k):
    return OperandRef(k)


def _small_static_rows(node: Node) -> bool:
    t = node.type
    return isinstance(t, ArrayType) and bool(t.shape) and t.shape[0] is not None and t.shape[0] <= 0
