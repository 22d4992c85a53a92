"""Run loops that stay loops on Python floats: `x.tolist()` before, one write-back after."""

from __future__ import annotations

import os

from ..alias import EXTERNAL, value_roots
from ..ir import Graph, Node
from ..literals import Index, OperandRef
from ..types import FLOAT, INT, NONE, OBJECT, ArrayType
from .kernels import is_kernel
from .vectorize import ATTR

MARK = "scalar"
# Scalar ops whose result is bit-identical on Python floats and on np.float64 (and that raise
# nothing either way): + - * unary -, abs, min, max, comparisons, float().
SAFE_OPS = {"add", "sub", "mul", "neg", "pos", "py_abs", "py_max", "py_min", "lt", "le", "gt", "ge", "eq", "ne",
            "not", "float", "abs", "absolute", "fabs"}
MATH_CALLS = {"math.exp", "math.log1p", "math.expm1", "math.sin", "math.cos", "math.tanh", "math.atan", "math.fabs",
              "math.sinh", "math.cosh", "math.atan2", "math.hypot"}
MIN_TRIP_FRACTION = 0.5   # converting an array costs O(len): the loop must visit a good part of it


def run(graph: Graph) -> bool:
    """Give loops that the vectorizer kept (`vectorize='no: ...'`) Python-float copies of their arrays.

    Indexing a NumPy array yields an np.float64 whose arithmetic is slower than a Python float's,
    with the same IEEE results for the ops allowed here. Only 1-D float64 arrays, indices that
    stay in bounds, arrays the loop writes that are fresh (nothing else sees them before the
    write-back) and carried values nothing reads after the loop.

    Before:                                         After:
      %0 = for_range(1, 8, 1, %x, %b) {...}           %xl = tolist(%x)  %bl = tolist(%b)
        body(%i, %x.1, %b.1) {                         %0 = for_range(1, 8, 1, %xl, %bl) {..., scalar=...}
          x.1[i] = 0.9 * x.1[i - 1] + b.1[i]           %1 = setitem(%x, %xl) {index=[:]}
    """
    changed = False
    for node in list(graph.nodes):
        for region in node.regions:
            changed |= run(region)
        if node.op == "for_range" and str(node.attrs.get(ATTR, "")).startswith("no:") and MARK not in node.attrs \
                and not is_kernel(node) \
                and node.graph is graph:
            changed |= _scalarize(node)
    return changed


def _scalarize(loop: Node) -> bool:
    reads: list = []
    try:
        plan = _plan(loop, reads)
    except _No:
        return False
    g = loop.graph
    body = loop.regions[0]
    n = loop.attrs.get("carried", 0)
    lists = {}
    for arg, outer in plan:
        lst = g.add("tolist", [outer], {}, OBJECT, loop.span, (outer.name or "a") + "_l", before=loop)
        lists[arg.id] = lst
        arg.type = OBJECT
    operands = list(loop.operands)
    for k, arg in enumerate(body.args[1 + n:]):
        if arg.id in lists:
            operands[3 + n + k] = lists[arg.id]
    g.set_operands(loop, operands)
    for node in reads:
        node.type = FLOAT   # an element of a list of Python floats
    after = _next(g, loop)
    for arg, outer in plan:
        if _writes(body, arg):
            g.add("setitem", [outer, lists[arg.id]], {"index": Index([slice(None)])}, NONE, loop.span,
                  before=after)
    loop.attrs[MARK] = "python floats (tolist)"
    names = ", ".join(f"{o.name or 'array'}.tolist()" for _, o in plan)
    g.add("note", [], {"text": f"the loop runs on Python floats: {names}"}, NONE, loop.span,
          before=lists[plan[0][0].id])
    return True


class _No(Exception):
    pass


def _plan(loop: Node, reads: list) -> list:
    """(body arg, outer array) pairs to convert; raises _No when the loop does not qualify."""
    if os.environ.get("GRAPHJIT_NO_SCALARIZE"):
        raise _No
    g, body = loop.graph, loop.regions[0]
    n = loop.attrs.get("carried", 0)
    start, stop, step = loop.operands[:3]
    if not all(o.op == "const" and isinstance(o.value, int) for o in (start, stop, step)):
        raise _No
    trip = range(start.value, stop.value, step.value)
    if len(trip) == 0:
        raise _No
    for k in range(n):
        init_t = body.args[1 + k].type
        result_used = any(u.op == "tuple_get" and u.attrs["index"] == k and (g.users(u) or g.is_output(u))
                          for u in g.users(loop))
        if result_used and init_t != INT:
            raise _No   # after the loop it would be a Python float where eager Python had np.float64
    captures = list(zip(body.args[1 + n:], loop.operands[3 + n:]))
    arrays = {}
    for arg, outer in captures:
        t = outer.type
        if isinstance(t, ArrayType) and t.shape is not None and t.shape != ():
            if not (t.dtype == "float64" and len(t.shape) == 1 and t.is_static):
                if _used(body, arg):
                    raise _No
                continue
            arrays[arg.id] = (arg, outer)
    if not arrays:
        raise _No
    index_args = {body.args[0].id}
    _check(body, arrays, index_args, trip, body.args[0], reads)
    plan = [arrays[k] for k in arrays if _used(body, arrays[k][0])]
    if not plan:
        raise _No
    for arg, outer in plan:
        if outer.type.shape[0] * MIN_TRIP_FRACTION > len(trip):
            raise _No
    written = [(a, o) for a, o in plan if _writes(body, a)]
    for a, o in written:
        ra = value_roots(o)
        if any(isinstance(r, tuple) and r[0] == EXTERNAL for r in ra):
            raise _No   # the caller could see the array before the write-back
        for b, p in plan:
            if p is not o and value_roots(p) & ra:
                raise _No
    return plan


def _check(g: Graph, arrays: dict, index_args: set, trip: range, index: Node, reads: list) -> None:
    for node in g.nodes:
        op = node.op
        if op in ("const", "note"):
            continue
        if op in ("getitem", "setitem"):
            base = node.operands[0]
            if base.id not in arrays:
                raise _No
            items = node.attrs["index"]
            first = 1 if op == "getitem" else 2
            if len(items) != 1 or not isinstance(items[0], OperandRef) or items[0].index != first:
                raise _No
            if len(node.operands) != first + 1:
                raise _No
            idx = node.operands[first]
            if not _in_bounds(idx, index, trip, arrays[base.id][1].type.shape[0]):
                raise _No
            if op == "setitem" and node.operands[1].id in arrays:
                raise _No
            if op == "getitem":
                reads.append(node)
            continue
        if any(o.id in arrays for o in node.operands) and op != "if":
            raise _No   # an array used other than element by element
        if op == "if":
            if any(o.id in arrays for o in node.operands[:1]):
                raise _No
            inner = dict(arrays)
            for region in node.regions:
                for arg, outer in zip(region.args, node.operands[1:]):
                    if outer.id in arrays:
                        inner[arg.id] = (arg, arrays[outer.id][1])
                _check(region, inner, index_args, trip, _index_in(region, node, index), reads)
            continue
        if op == "tuple_get":
            continue
        if op == "call":
            if node.attrs.get("fn") not in MATH_CALLS or "kw" in node.attrs:
                raise _No
            continue
        if op in SAFE_OPS:
            continue
        if op in ("truediv",) and node.operands[1].op == "const" and \
                isinstance(node.operands[1].value, (int, float)) and node.operands[1].value != 0:
            continue
        raise _No


def _index_in(region: Graph, node: Node, index: Node):
    for arg, outer in zip(region.args, node.operands[1:]):
        if outer is index:
            return arg
    return None


def _in_bounds(idx: Node, index, trip: range, length: int) -> bool:
    """idx is `i + c` (or `i`, or a constant) and stays in [0, length) over the loop."""
    offset = 0
    while idx is not index:
        if idx.op == "const" and isinstance(idx.value, int):
            return 0 <= idx.value < length
        if idx.op in ("add", "sub") and idx.operands[1].op == "const" and isinstance(idx.operands[1].value, int):
            offset += idx.operands[1].value if idx.op == "add" else -idx.operands[1].value
            idx = idx.operands[0]
            continue
        return False
    lo, hi = min(trip[0], trip[-1]) + offset, max(trip[0], trip[-1]) + offset
    return 0 <= lo and hi < length


def _used(g: Graph, arg: Node) -> bool:
    return bool(g.users(arg))


def _writes(g: Graph, arg: Node) -> bool:
    for node in g.nodes:
        if node.op == "setitem" and node.operands[0] is arg:
            return True
        if node.op == "if":
            for region in node.regions:
                for a, outer in zip(region.args, node.operands[1:]):
                    if outer is arg and _writes(region, a):
                        return True
    return False


def _next(g: Graph, node: Node):
    k = g.nodes.index(node)
    return g.nodes[k + 1] if k + 1 < len(g.nodes) else None


