"""Merge identical pure expressions when no write between them can tell them apart."""

from __future__ import annotations

import bisect
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
    merged: list[Node] = []  # erased after the scan, so the analysis' positions stay valid
    for node in list(graph.nodes):
        if not node.is_pure or node.op == "const":
            continue
        key = _key(node)
        if key is None:
            continue
        for earlier in seen.get(key, ()):
            if aliases is None:
                aliases = Aliases(graph)
                writers = _Writers(aliases)
            if _can_merge(aliases, writers, earlier, node):
                graph.replace_all_uses(node, earlier)
                merged.append(node)
                if holds_memory(earlier.type):
                    _share(aliases, node, earlier)
                changed = True
                break
        else:
            seen.setdefault(key, []).append(node)
    for node in merged:
        graph.erase(node)
    return changed


def _share(aliases: Aliases, old: Node, new: Node) -> None:
    """The users of `old` now use `new`: what shared `old`'s memory may share `new`'s.

    Cheaper than analysing the graph again, and as exact for this pass: `_can_merge` checked that
    nothing writes either result's memory after `new`, so the writes the analysis knows stay right.
    """
    old_roots, new_roots = aliases.of(old), aliases.of(new)
    if old_roots <= new_roots:
        return
    for key, roots in aliases.roots.items():
        if roots & old_roots:
            aliases.roots[key] = roots | new_roots


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


class _Writers:
    """For each root of memory, the positions of the nodes that may write it: `writes_between` by bisection."""

    def __init__(self, aliases: Aliases):
        self.by_root: dict = {}
        for node in aliases.graph.nodes:
            for root in aliases.writes(node):
                self.by_root.setdefault(root, []).append(aliases.position[node.id])

    def between(self, start: int, end: int) -> frozenset:
        """The roots written by the nodes at positions start < p < end."""
        return frozenset(root for root, positions in self.by_root.items()
                         if bisect.bisect_right(positions, start) < bisect.bisect_left(positions, end))


def _can_merge(aliases: Aliases, writers: _Writers, first: Node, second: Node) -> bool:
    position = aliases.position
    p1, p2 = position[first.id], position[second.id]
    read = aliases.of_all(first.operands)
    if read & writers.between(p1, p2):
        return False
    if not holds_memory(first.type):
        return True
    results = aliases.of(first) | aliases.of(second)
    if results & writers.between(p1, len(aliases.graph.nodes)):
        return False
    escaping = aliases.escaping()
    if (aliases.of(first) & escaping) and (aliases.of(second) & escaping):
        return False
    return True
