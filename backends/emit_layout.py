"""The emitter's statement layout: which graph values are spelled inline inside one expression, and
where each value is last used (so a name can be reused: `x = x @ w`), and which node patterns read
best, and run faster, as Python's own statement forms (`A[i] += v`, `for x in a:`).
backends/emit_numpy.py asks these questions of each graph and region it writes."""

from __future__ import annotations

import re
from typing import Optional

from ..graph.attrs import is_quiet
from ..graph.ir import Graph, Node
from ..graph.literals import Index, OperandRef
from ..graph.ops import REGION_OPS
from ..graph.types import ArrayType


def use_counts(g: Graph) -> dict:
    counts: dict[int, int] = {}
    for node in list(g.nodes):
        for o in node.operands:
            counts[o.id] = counts.get(o.id, 0) + 1
    for o in g.outputs:
        counts[o.id] = counts.get(o.id, 0) + 1
    return counts


def inlinable(g: Graph, uses: dict) -> set:
    """Pure single-use values whose only user comes later with no effect in between."""
    position = {n.id: k for k, n in enumerate(g.nodes)}
    # effects, and unused nodes kept because they may raise: nothing moves past them
    # (a workspace buffer, `_w[0]`, is neither: graph/passes/scratch.py keeps it from being merged or moved)
    effects = [k for k, n in enumerate(g.nodes)
               if not n.is_pure and n.op != "scratch" or not uses.get(n.id) and n.may_raise]
    out = set()
    for k, node in enumerate(g.nodes):
        if not node.is_pure and node.op != "scratch" or node.op in ("const", "tuple_get") or uses.get(node.id) != 1 or is_quiet(node.attrs):
            continue   # a quiet node is a statement of its own, in its errstate block
        users = g.users(node)
        if g.is_output(node):
            if users:
                continue
            end = len(g.nodes)
        else:
            if len(users) != 1:
                continue
            user = users[0]
            if user.op in REGION_OPS and not (user.op == "if" and user.operands[0] is node):
                continue  # region operands are named; an `if` condition may stay inline
            if is_quiet(user.attrs):
                continue  # nothing else runs in a quiet node's errstate block
            if user.out_operand is node and node.op != "scratch":
                continue  # `out=` needs the buffer by name (`_w[0]` is one)
            if not same_statement(node, user):
                continue  # one statement per source statement
            end = position[user.id]
        if any(k < e < end for e in effects):
            continue
        out.add(node.id)
    return out


def last_uses(g: Graph, inline: set) -> dict:
    """Position of each node's last use, counting an inlined value as used where it is spelled.

    Also maps ("pos", id) to each node's own position, for comparing against.
    """
    position = {n.id: k for k, n in enumerate(g.nodes)}
    known: dict = {}   # node id -> its effective position (a chain of inlined values is walked once)

    def effective(node: Node) -> int:
        chain = []
        while node.id in inline and node.id not in known:
            chain.append(node.id)
            users = g.users(node)
            if not users:
                where = len(g.nodes)
                break
            node = users[0]
        else:
            where = known[node.id] if node.id in known else position.get(node.id, len(g.nodes))
        for k in chain:
            known[k] = where
        return where

    out: dict = {}
    for node in g.nodes:
        out[("pos", node.id)] = position[node.id]
        where = effective(node)
        for o in node.operands:
            out[o.id] = max(out.get(o.id, -1), where)
    for o in g.outputs:
        out[o.id] = len(g.nodes) + 1
    return out


def same_statement(a: Node, b: Node) -> bool:
    if a.span is None or b.span is None:
        return True
    return (a.span.file, a.span.line) == (b.span.file, b.span.line)


def used_after(node: Node, value: Node) -> bool:
    """Is `value` read after `node` in `node`'s graph (or returned from it)?"""
    g = node.graph
    seen = False
    for n in g.nodes:
        if n is node:
            seen = True
            continue
        if seen and any(o is value for o in n.operands):
            return True
    return g.is_output(value)


def augmented_store(node: Node, uses: dict) -> Optional[Node]:
    """The `setitem` that writes `node`, an `inplace` on an element or slice read just before, back
    where it was read, or None. The emitter then writes the three as Python's own augmented
    subscript (`A[i, j] += v`: read, update, store, exactly what eager Python does) instead of a
    temporary (`t = A[i, j]; t += v; A[i, j] = t`), one store and load fewer in a Python loop."""
    target = node.operands[0]
    g = node.graph
    if target.op != "getitem" or target.graph is not g or uses.get(target.id) != 1 or set(target.attrs) != {"index"} \
            or uses.get(node.id) != 1 or g.is_output(node):
        return None
    after = g.nodes[g.nodes.index(node) + 1:]
    store = next((n for n in after if n.op != "const"), None)
    if store is None or store.op != "setitem" or set(store.attrs) != {"index"} \
            or store.operands[0] is not target.operands[0] or store.operands[1] is not node \
            or len(store.operands) != len(target.operands) + 1 \
            or any(a is not b for a, b in zip(store.operands[2:], target.operands[1:])):
        return None
    return store if _shifted(target.attrs["index"]) == tuple(store.attrs["index"]) else None


def _shifted(index) -> tuple:
    """A getitem's index as the setitem of the same place spells it (its operands start one later)."""
    def shift(item):
        if isinstance(item, OperandRef):
            return OperandRef(item.index + 1)
        if isinstance(item, slice):
            return slice(shift(item.start), shift(item.stop), shift(item.step))
        return item
    return tuple(shift(item) for item in index)


def element_iteration(loop: Node) -> Optional[Node]:
    """The `getitem(a, i)` that a `for i in range(len(a))` loop starts its body with, when `i` is used
    by nothing else: the emitter writes `for x in a:` (NumPy's iterator, cheaper per element than
    `a[i]`; it reads row i when iteration i starts, which is where that getitem reads it)."""
    n = loop.attrs.get("carried", 0)
    start, stop, step = loop.operands[:3]
    body = loop.regions[0]
    index = body.args[0]
    if not all(o.op == "const" and type(o.value) is int for o in (start, stop, step)) \
            or (start.value, step.value) != (0, 1):
        return None
    first = next((x for x in body.nodes if x.op != "const"), None)
    users = body.users(index)
    if first is None or first.op != "getitem" or users != [first] or body.is_output(index) \
            or len(first.operands) != 2 or first.operands[1] is not index \
            or first.attrs != {"index": Index([OperandRef(1)])}:
        return None
    array = first.operands[0]
    outer = {a.id: o for a, o in zip(body.args[1 + n:], loop.operands[3 + n:])}.get(array.id)
    t = outer.type if outer is not None else None
    if not (isinstance(t, ArrayType) and t.is_static and len(t.shape) >= 1 and t.shape[0] == stop.value):
        return None
    return first


def results_into_carried(node: Node, carried: list) -> dict:
    """{k: carried arg} for results k of `node` (an `if` in a loop body whose carried values are
    `carried`, in yield order) that the body yields unchanged in the place of a carried value it
    no longer reads: the branches can assign the loop's own variable (`crc = crc >> 1`) instead of
    a new name copied into it at the end of every iteration."""
    g = node.graph
    later = g.nodes[g.nodes.index(node) + 1:]
    out = {}
    for user in g.users(node):
        if user.op != "tuple_get" or len(g.users(user)) or [o is user for o in g.outputs].count(True) != 1:
            continue
        p = next(p for p, o in enumerate(g.outputs) if o is user)
        if p >= len(carried):
            continue
        arg = carried[p]
        if any(arg is o for o in g.outputs) or any(arg is o for n in later for o in n.operands):
            continue
        out[user.attrs["index"]] = arg
    return out


def assign_one_by_one(pairs: list) -> bool:
    """May the (target name, value text) pairs of a loop's or branch's yield be assigned one by one
    (`r = r[I]` then `c = c[I]`) instead of as one tuple (`r, c = r[I], c[I]`)? Yes when no value
    mentions a name assigned before it. One by one, each old array is freed before the next new one
    is made, as in the user's code (`Z = Z[I]; C = C[I]`): NumPy's allocator then hands the freed,
    cache-warm block to the next array (mandelbrot2 ran 10-20% slower with the tuple)."""
    assigned = set()
    for target, value in pairs:
        if assigned & set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", value)):
            return False
        assigned.add(target)
    return len(pairs) > 1
