"""The compile budget: how much work unrolling and inlining may do before lowering stops them.

Lowering unrolls loops over compile-time sequences (tuples, lists, `np.ndindex`, `zip` and
`enumerate` of those, a `range` whose index must be a compile-time value) and inlines every Python
function it calls. Both multiply: a loop nest over `np.ndindex` of a 5x4x3x2 array, or a helper
recursing to a compile-time depth of 10 000, would make millions of graph nodes and compile for
hours. These limits keep every compile bounded (docs/syntax.md, "Compile budget"):

- `MAX_UNROLL_ITERATIONS`: a loop over a compile-time sequence unrolls at most this many times.
- `MAX_GRAPH_NODES`: an unrolled loop may bring the compile to at most this many graph nodes
  (operations and constants made so far plus the loop's estimate: the nodes of the iterations
  made so far, scaled to all of them). Checked after every unrolled iteration.
- `MAX_INLINE_DEPTH`: calls inlined inside each other (recursion with a compile-time base case).
- `MAX_INLINED_NODES`: the nodes one call of the function being compiled may make, counting every
  call it inlines in turn (recursion that branches, `fib(n - 1) + fib(n - 2)`).

Past a limit, results still equal eager Python:
- a loop stays a run-time loop where it can: a `range` loop is a `for_range` loop, and a sequence
  of Python numbers (or of equal-length tuples of numbers: `np.ndindex`, `zip` of ranges) becomes a
  run-time loop over a table of its items (a constant array per tuple position, each item turned
  back into the Python number it was);
- otherwise (its body needs the item at compile time, or the items are objects) it is the
  `unroll_budget` row of the rule table (transpiler/rules.py): at LAX the loop is a fallback block
  run by Python (one warning); at STRICT and COMPATIBLE a diagnostic naming the loop, the count and
  the limit;
- a call past an inlining limit is the `inline_budget` row: at LAX the outermost call of the chain
  (for recursion: its first call) runs in Python as a fallback block; at STRICT and COMPATIBLE a
  diagnostic naming the function and the limit.

A loop or call found over budget is remembered, so lowering the function again (see
`lower_function`) takes the cheaper form at once.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from ..graph.diagnostics import UnsupportedSyntaxError
from ..graph.literals import Index
from .rules import LAX, rule
from .values import Seq, Static, is_static, static_value

MAX_UNROLL_ITERATIONS = 1024
MAX_GRAPH_NODES = 2000
MAX_INLINE_DEPTH = 64
MAX_INLINED_NODES = 2000
MAX_TABLE_ITEMS = 100_000   # a run-time loop over a table of items holds at most this many


class OverBudget(Exception):
    """Internal: unwinds lowering to the loop or call whose meter went over its limit.

    Not a GraphjitError, so no statement in between turns it into a fallback block or a diagnostic.
    """

    def __init__(self, meter: "Meter", reason: str):
        super().__init__(reason)
        self.meter = meter
        self.reason = reason


@dataclass(eq=False)  # meters are compared by identity (two nested calls may start at one count)
class Meter:
    """One loop being unrolled, or one call being inlined, and the nodes made when it started."""

    kind: str                 # "loop" | "call"
    owner: Any                # the `for` statement, or the function's code object
    start: int                # nodes made before it started
    total: int = 0            # a loop's iteration count
    done: int = 0             # iterations unrolled so far
    name: str = ""            # how messages name it


@dataclass
class CompileBudget:
    """What one lowering has spent, and the loops and calls found over budget."""

    made: int = 0                                   # graph nodes made (operations and constants)
    meters: list = field(default_factory=list)
    over: dict = field(default_factory=dict)        # loops and calls over budget -> why (kept across attempts)
    found: dict = field(default_factory=dict)       # those this lowering found

    def outermost_call(self, code=None) -> Optional[Meter]:
        """The outermost call being inlined (of the function `code`, when given)."""
        return next((m for m in self.meters if m.kind == "call" and (code is None or m.owner is code)), None)


class ItemTable:
    """The items of a compile-time sequence as constant arrays, one per tuple position, for a run-time loop.

    `item(lowerer, i)` is item `i` as the loop body sees it: a Python number (or a tuple of them),
    converted back from the array element with `int`/`float`/`bool`, exactly the value unrolling gave.
    """

    def __init__(self, items: list, columns: list, kinds: list, is_tuple: bool):
        self.items = items            # the original items (Static), for a compile-time index
        self.columns = columns        # one array per position
        self.kinds = kinds            # "int" | "float" | "bool" per position
        self.is_tuple = is_tuple
        self.nodes: list = []

    @staticmethod
    def of(items: list) -> Optional["ItemTable"]:
        """A table of these items, or None when they are not all numbers or equal-length tuples of numbers."""
        if not items or not all(isinstance(i, Static) for i in items):
            return None
        values = [i.value for i in items]
        is_tuple = isinstance(values[0], tuple)
        rows = values if is_tuple else [(v,) for v in values]
        width = len(rows[0])
        if width == 0 or any(not isinstance(r, tuple) or len(r) != width for r in rows):
            return None
        columns, kinds = [], []
        for k in range(width):
            column = [r[k] for r in rows]
            kind = _kind_of(column)
            if kind is None:
                return None
            columns.append(np.array(column, dtype={"int": np.int64, "float": np.float64, "bool": np.bool_}[kind]))
            kinds.append(kind)
        return ItemTable(items, columns, kinds, is_tuple)

    def item(self, lowerer, index, span):
        if is_static(index):
            return self.items[static_value(index)]
        if not self.nodes:  # read through `_k[i]`, rebuilt from its values where the disk cache loads the code
            self.nodes = [lowerer.array_value(lowerer.const_object(c, (ItemColumn, [c.tolist(), c.dtype.str], {})),
                                              span) for c in self.columns]
        parts = [lowerer.emit(kind, [lowerer.emit("getitem", [node, index], {"index": Index([_ref(1)])}, span)],
                              span=span)
                 for node, kind in zip(self.nodes, self.kinds)]
        return Seq(parts, "tuple") if self.is_tuple else parts[0]


class ItemColumn:
    """`ItemColumn(values, dtype)` is `np.array(values, dtype)`: how another process rebuilds a table column."""

    def __new__(cls, values, dtype):
        return np.array(values, dtype=dtype)


def _kind_of(column: list) -> Optional[str]:
    """The one Python number type of a column ("int", "float", "bool"), or None."""
    types = {type(v) for v in column}
    if types == {bool}:
        return "bool"
    if types == {float}:
        return "float"
    if types == {int} and all(-2 ** 63 <= v < 2 ** 63 for v in column):
        return "int"
    return None


def _ref(k):
    from ..graph.literals import OperandRef
    return OperandRef(k)


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
        from .statements import _NeedsUnroll
        from .values import RangeVal
        table = ItemTable.of(items) if runtime and items is not None else None
        if table is not None:
            state = self.save_lowering_state(frame)
            try:
                self.range_loop(stmt, RangeVal(Static(0), Static(len(items)), Static(1)), frame, rows_of=table)
                return
            except _NeedsUnroll:
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
        from .statements import _containers, _save
        return (self.mark(), dict(frame.env), _save(_containers(frame.env)), len(self.diagnostics),
                len(self.pending_warnings), self.fallbacks, self.return_span)

    def restore_lowering_state(self, state: tuple, frame) -> None:
        from .statements import _restore
        mark, env, containers, n_diagnostics, n_warnings, fallbacks, return_span = state
        self.rollback(mark)
        frame.env.clear()
        frame.env.update(env)
        _restore(containers)
        del self.diagnostics[n_diagnostics:], self.pending_warnings[n_warnings:]
        self.fallbacks = fallbacks
        self.return_span = return_span
