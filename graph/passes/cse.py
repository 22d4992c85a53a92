"""Merge identical pure expressions when no write between them can tell them apart."""

from __future__ import annotations

from typing import Any, Optional

from ..alias import Aliases, holds_memory
from ..ir import Graph, Node
from ..literals import format_literal, is_literal


def run(graph: Graph) -> bool:
    """Replace a pure node by an earlier identical one (same op, operands, attributes, type).

    Before:
      graph f(%x: f64[3]) -> f64[3]
        %0 = exp(%x) : f64[3]
        %1 = exp(%x) : f64[3]
        %2 = add(%0, %1) : f64[3]
        return %2
    After:
      graph f(%x: f64[3]) -> f64[3]
        %0 = exp(%x) : f64[3]
        %1 = add(%0, %0) : f64[3]
        return %1

    Not merged (alias analysis, graph/alias.py):
      * when a node between the two may write memory the first one read (`x[0] = 1.0` between
        two `x.sum()`), or an impure call may have;
      * when anything may later write the memory of either result (`b = x * 2; b += 1` must
        not change `a = x * 2`);
      * when both results reach the caller: `return x * 2, x * 2` returns two arrays.
    Opaque `call`s and region nodes are never merged. Each region is handled on its own.
    """
    changed = False
    for node in graph.nodes:
        for region in node.regions:
            changed |= run(region)
    aliases: Optional[Aliases] = None
    seen: dict[Any, list[Node]] = {}
    for node in list(graph.nodes):
        if not node.is_pure or node.op == "const":
            continue
        key = _key(node)
        if key is None:
            continue
        for earlier in seen.get(key, ()):
            aliases = aliases or Aliases(graph)
            if _can_merge(aliases, earlier, node):
                graph.replace_all_uses(node, earlier)
                graph.erase(node)
                aliases = None
                changed = True
                break
        else:
            seen.setdefault(key, []).append(node)
    return changed


def _key(node: Node) -> Optional[tuple]:
    operands = []
    for o in node.operands:
        if o.op == "const":
            if not is_literal(o.value):
                return None
            operands.append(("const", type(o.value).__name__, format_literal(o.value)))
        else:
            operands.append(o.id)
    try:
        attrs = tuple(sorted((k, type(v).__name__, format_literal(v) if is_literal(v) else repr(v))
                             for k, v in node.attrs.items()))
    except Exception:
        return None
    return (node.op, tuple(operands), attrs, str(node.type))


def _can_merge(aliases: Aliases, first: Node, second: Node) -> bool:
    position = aliases.position
    p1, p2 = position[first.id], position[second.id]
    read = aliases.of_all(first.operands)
    if read & aliases.writes_between(p1, p2):
        return False
    if not holds_memory(first.type):
        return True
    results = aliases.of(first) | aliases.of(second)
    if results & aliases.writes_after(p1):
        return False
    escaping = aliases.escaping()
    if (aliases.of(first) & escaping) and (aliases.of(second) & escaping):
        return False
    return True
