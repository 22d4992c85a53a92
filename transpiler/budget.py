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

from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from ..graph.literals import Index, OperandRef
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
    return OperandRef(k)


