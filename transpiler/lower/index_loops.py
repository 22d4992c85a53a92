"""`for idx in np.ndindex(shape)` and `for i, j in itertools.product(range(n), range(m))`: a nest of run-time range loops.

Unrolled, such a loop is one statement per element (or, past the unrolling budget, a loop over a
table of index tuples whose indices the vectorizer cannot follow). As a nest of `for_range` loops,
one per axis, its body sees plain loop indices and the loop vectorizer treats it like the nested
`range` loops a user could have written. The nest is taken only where it is the same program:
the body has no `break`, `continue` or `return` (they would end one loop of the nest, not the
whole iteration), the loop variables are not read after the loop, and every axis is known; else
the loop is lowered as any loop over a compile-time sequence.
"""

from __future__ import annotations

import itertools
from typing import Optional

import libcst as cst
import numpy as np

from ...graph.diagnostics import LoweringError
from ..cst_queries import has_loop_control, target_names, used_outside
from ..values import RangeVal, Seq, Static, is_static, static_value


def index_nest(state, stmt: cst.For, frame) -> Optional[list]:
    """The ranges of the nest `stmt` iterates over (outermost first), or None when it is not one."""
    call = stmt.iter
    if not isinstance(call, cst.Call) or not call.args or any(a.keyword is not None or a.star for a in call.args):
        return None
    if not isinstance(stmt.target, (cst.Name, cst.Tuple, cst.List)):
        return None
    if isinstance(stmt.target, (cst.Tuple, cst.List)) and \
            any(not isinstance(e, cst.Element) or not isinstance(e.value, cst.Name) for e in stmt.target.elements):
        return None
    try:
        fn = state.lower_expr(call.func, frame)
    except LoweringError:   # lowered again as any other loop, which reports it
        return None
    if not isinstance(fn, Static) or not (fn.value is np.ndindex or fn.value is itertools.product):
        return None
    if has_loop_control(list(stmt.body.body)) or used_outside(stmt, frame, target_names(stmt.target)):
        return None
    args = [state.lower_expr(a.value, frame) for a in call.args]
    ranges = _ndindex_ranges(args) if fn.value is np.ndindex else _product_ranges(args)
    if not ranges:
        return None
    if isinstance(stmt.target, (cst.Tuple, cst.List)) and len(stmt.target.elements) != len(ranges):
        return None   # unpacking fails as it does in Python: lowered as any other loop, which says so
    return ranges


def _ndindex_ranges(args: list) -> Optional[list]:
    """`np.ndindex(n, m)` or `np.ndindex((n, m))` with compile-time non-negative sizes."""
    if len(args) == 1 and isinstance(args[0], Seq):
        dims = list(args[0].items)
    elif len(args) == 1 and is_static(args[0]) and isinstance(static_value(args[0]), tuple):
        dims = [Static(d) for d in static_value(args[0])]
    else:
        dims = args
    sizes = [static_value(d) if is_static(d) else None for d in dims]
    if not sizes or any(type(s) not in (int, np.int64) or s < 0 for s in sizes):
        return None
    return [RangeVal(Static(0), Static(int(s)), Static(1)) for s in sizes]


def _product_ranges(args: list) -> Optional[list]:
    """`itertools.product(range(...), range(...))`: each argument a range."""
    out = []
    for a in args:
        if is_static(a) and isinstance(static_value(a), range):
            r = static_value(a)
            out.append(RangeVal(Static(r.start), Static(r.stop), Static(r.step)))
        elif isinstance(a, RangeVal) and is_static(a.step) and static_value(a.step) != 0:
            out.append(a)
        else:
            return None
    return out
