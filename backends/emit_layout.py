"""The emitter's statement layout: which graph values are spelled inline inside one expression, and
where each value is last used (so a name can be reused: `x = x @ w`). backends/emit_numpy.py
asks these questions of each graph and region it writes."""

from __future__ import annotations

from ..graph.ir import Graph, Node
from ..graph.ops import REGION_OPS


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
    effects = [k for k, n in enumerate(g.nodes) if not n.is_pure or not uses.get(n.id) and n.may_raise]
    out = set()
    for k, node in enumerate(g.nodes):
        if not node.is_pure or node.op in ("const", "tuple_get") or uses.get(node.id) != 1:
            continue
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
            if user.out_operand is node:
                continue  # `out=` needs the buffer by name
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

    def effective(node: Node) -> int:
        while node.id in inline:
            users = g.users(node)
            if not users:
                return len(g.nodes)
            node = users[0]
        return position.get(node.id, len(g.nodes))

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
