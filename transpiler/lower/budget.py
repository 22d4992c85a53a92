"""The lowering's side of the compile budget: metering unrolled loops and inlined calls (limits in transpiler/budget.py)."""

from __future__ import annotations

import itertools
from typing import Optional

import numpy as np

from ...graph.diagnostics import UnsupportedSyntaxError
from ..budget import (ItemTable, MAX_GRAPH_NODES, MAX_INLINED_NODES, MAX_INLINE_DEPTH, MAX_TABLE_ITEMS,
                      MAX_UNROLL_ITERATIONS, Meter, OverBudget)
from ..rules import LAX, rule
from ..values import RangeVal, Seq, Static
from .containers import containers_in, restore, snapshot
from .control import NeedsUnroll


def loop_text(lowerer, stmt, frame) -> str:
    """`for pos in np.ndindex(data.shape)`: how messages name a loop."""
    module = frame.parsed.module
    return f"for {module.code_for_node(stmt.target)} in {module.code_for_node(stmt.iter)}"


def budget_error(key: str, message: str, span) -> UnsupportedSyntaxError:
    r = rule(key)
    return UnsupportedSyntaxError(message, span, rule=r)


class BudgetLowering:
    """The Lowerer's side of the budget: metering unrolled loops and inlined calls."""

    # --- loops -----------------------------------------------------------------------------
    def budgeted_loop(self, stmt, items: Optional[list], count, frame, span, runtime: bool = True) -> None:
        """Unroll `stmt` over `items` within the budget; past it, a run-time loop, else the budget error.

        `items` and `count` come from `loop_items`; `runtime` is False when a run-time form was already
        tried (a `range` loop, rows of an array) and needs the items at compile time.
        """
        key = ("loop", span, count)
        reason = None
        if isinstance(count, str) or count > MAX_UNROLL_ITERATIONS:
            reason = (f"`{loop_text(self, stmt, frame)}` runs {count} times: more "
                      f"than the unrolling limit of {MAX_UNROLL_ITERATIONS} iterations")
        elif key in self.budget.over:
            reason = self.budget.over[key]
        else:
            meter = Meter("loop", stmt, self.budget.made, count, name=loop_text(self, stmt, frame))
            state = self.save_lowering_state(frame)
            self.budget.meters.append(meter)
            try:
                self.unrolled_loop(stmt, items, frame)
                return
            except OverBudget as e:
                if e.meter is not meter:
                    raise
                reason = e.reason
                self.restore_lowering_state(state, frame)
                self.budget.made = meter.start  # the nodes it made are gone
            finally:
                self.budget.meters.remove(meter)
            self.budget.found[key] = self.budget.over[key] = reason  # met again (an outer loop unrolled): skip
        self.past_unroll_budget(stmt, items, frame, span, reason, runtime)

    def loop_items(self, iterable, span, runtime: bool = True) -> tuple:
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
                first = list(itertools.islice(obj, limit + 1))
                if len(first) > limit:
                    return None, f"more than {limit}"
                iterable = Static(first)
        items = self.iterate(iterable, span)
        return items, len(items)

    def count_iteration(self, stmt) -> None:
        """After one unrolled iteration of `stmt`: stop when the loop's estimate exceeds the budget."""
        meter = next((m for m in reversed(self.budget.meters) if m.owner is stmt), None)
        if meter is None:
            return
        meter.done += 1
        estimate = meter.start + (self.budget.made - meter.start) * meter.total // meter.done
        if estimate > MAX_GRAPH_NODES:
            raise OverBudget(meter, f"unrolling `{meter.name}` ({meter.total} iterations) would make about "
                                    f"{estimate} graph nodes: more than the compile budget of {MAX_GRAPH_NODES}")

    def past_unroll_budget(self, stmt, items, frame, span, reason: str, runtime: bool) -> None:
        """A loop past the unrolling budget: a run-time loop over a table of its items, else the error."""
        table = ItemTable.of(items) if runtime and items is not None else None
        if table is not None:
            state = self.save_lowering_state(frame)
            try:
                self.range_loop(stmt, RangeVal(Static(0), Static(len(items)), Static(1)), frame, rows_of=table)
                return
            except NeedsUnroll:
                self.restore_lowering_state(state, frame)
                reason += ", and its body needs each item at compile time"
        elif runtime and items is not None:
            reason += ", and its items are not numbers (or tuples of numbers) a run-time loop could go over"
        elif not runtime:
            reason += ", and its body needs each item at compile time"
        outermost = next((m for m in self.budget.meters if m.kind == "loop"), None)
        if outermost is not None and self.level == LAX:
            # one fallback block for the whole nest, not one in each iteration of the loops around it
            raise OverBudget(outermost, f"{reason} (inside `{outermost.name}`)")
        raise budget_error("unroll_budget", reason, span)

    # --- comprehensions (unrolled as loops are) ------------------------------------------------
    def comprehension_meter(self, node, frame) -> Meter:
        clause = node.for_in
        module = frame.parsed.module
        text = f"for {module.code_for_node(clause.target)} in {module.code_for_node(clause.iter)}"
        meter = Meter("comprehension", node, self.budget.made, name=text)
        meter.span = self.span(node, frame)
        return meter

    def count_comprehension(self, meter: Meter, clause, items: list):
        """The items of one clause, stopping with the budget error past the unrolling limits."""
        outer = clause is meter.owner.for_in
        if outer:
            meter.total = len(items)
        for item in items:
            meter.done += 1
            if meter.done > MAX_UNROLL_ITERATIONS:
                raise budget_error("unroll_budget", f"the comprehension `{meter.name}` runs more than "
                                   f"{MAX_UNROLL_ITERATIONS} times: more than the unrolling limit", meter.span)
            yield item
            if outer:
                meter.steps = getattr(meter, "steps", 0) + 1
                estimate = meter.start + (self.budget.made - meter.start) * meter.total // meter.steps
                if estimate > MAX_GRAPH_NODES:
                    raise budget_error("unroll_budget", f"the comprehension `{meter.name}` ({meter.total} items) "
                                       f"would make about {estimate} graph nodes: more than the compile budget "
                                       f"of {MAX_GRAPH_NODES}", meter.span)

    # --- calls -----------------------------------------------------------------------------
    def budgeted_call(self, code, name: str, span, run):
        """Inline a call (`run()` lowers its body) within the inlining depth and node limits."""
        key = ("call", span, name)
        if key in self.budget.over:
            raise budget_error("inline_budget", self.budget.over[key], span)
        if self.depth >= MAX_INLINE_DEPTH:
            target = self.budget.outermost_call(code) or self.budget.outermost_call()
            reason = (f"inlining `{name}` goes deeper than {MAX_INLINE_DEPTH} nested calls (the inlining depth "
                      "limit; recursion without a compile-time base case?)")
            if target is None:
                raise budget_error("inline_budget", reason, span)
            raise OverBudget(target, reason)
        self.budget.made += 1  # a call costs work even when it makes no node (a recursion's base case)
        meter = Meter("call", code, self.budget.made, name=name)
        meter.span, meter.key = span, key
        self.budget.meters.append(meter)
        marks = (len(self.diagnostics), len(self.pending_warnings), self.fallbacks)
        try:
            self.check_inlined_nodes(name)
            result = run()
            self.check_inlined_nodes(name)
            return result
        except OverBudget as e:
            if e.meter is not meter:
                raise
            del self.diagnostics[marks[0]:], self.pending_warnings[marks[1]:]
            self.fallbacks = marks[2]
            self.budget.made = meter.start
            self.budget.found[key] = self.budget.over[key] = e.reason
            raise budget_error("inline_budget", e.reason, span) from None
        finally:
            self.budget.meters.remove(meter)

    def check_inlined_nodes(self, name: str) -> None:
        outermost = self.budget.outermost_call()
        if outermost is not None and self.budget.made - outermost.start > MAX_INLINED_NODES:
            raise OverBudget(outermost, f"inlining `{outermost.name}` makes more than {MAX_INLINED_NODES} graph "
                                        "nodes (the inlining budget)")

    # --- rolling back ------------------------------------------------------------------------
    def save_lowering_state(self, frame) -> tuple:
        return (self.mark(), dict(frame.env), snapshot(containers_in(frame.env)), len(self.diagnostics),
                len(self.pending_warnings), self.fallbacks, self.return_span)

    def restore_lowering_state(self, state: tuple, frame) -> None:
        mark, env, containers, n_diagnostics, n_warnings, fallbacks, return_span = state
        self.rollback(mark)
        frame.env.clear()
        frame.env.update(env)
        restore(containers)
        del self.diagnostics[n_diagnostics:], self.pending_warnings[n_warnings:]
        self.fallbacks = fallbacks
        self.return_span = return_span
