"""Compute a value in the view it is copied into (`np.clip(x, 2, 10, out=d)` for `d[:] = np.clip(x, 2, 10)`)."""

from __future__ import annotations

from typing import Optional

from ..alias import Aliases, holds_memory, may_alias
from ..ir import Graph, Node
from ..ops import OPS
from ..types import ArrayType

# The op that spells each ufunc as a NumPy call taking `out=` (`mul` is `a * b`: `np.multiply`).
CALL_OF_UFUNC = {}
for _name, _opdef in OPS.items():
    if _opdef.emit == "call" and _opdef.elementwise and _opdef.ufunc is not None:
        CALL_OF_UFUNC.setdefault(_opdef.ufunc, _name)


def run(graph: Graph) -> bool:
    """Turn `d[:] = v`, where `v` is a buffer this graph made, into computing `v` in `d` itself.

    Before (a tile of graph/passes/tile.py after memory planning):
      body(%i: int, %out: i64[64,8], %x: i64[64,8]) {
        %0 = add(%i, 16) : int
        %d = getitem(%out, %i, %0) {index=[$1:$2]} : i64[16,8]
        %1 = getitem(%x, %i, %0) {index=[$1:$2]} : i64[16,8]
        %2 = clip(%1, 2, 10) : i64[16,8]
        %3 = inplace(%2, 4) {op='mul'} : i64[16,8]
        %4 = setitem(%d, %3) {index=[:]} : none
        yield
      }
    After (`np.clip(x[i:i + 16], 2, 10, out=d); d *= 4`: no temporary, no copy):
      body(%i: int, %out: i64[64,8], %x: i64[64,8]) {
        %0 = add(%i, 16) : int
        %d = getitem(%out, %i, %0) {index=[$1:$2]} : i64[16,8]
        %1 = getitem(%x, %i, %0) {index=[$1:$2]} : i64[16,8]
        %2 = clip(%1, 2, 10, %d) {kw=('out',)} : i64[16,8]
        %3 = inplace(%2, 4) {op='mul'} : i64[16,8]
        yield
      }

    The copy `setitem(d, v) {index=[:]}` goes, and the node that made v's buffer (its root: v is
    that node's result or an in-place update of it, graph/alias.py `buffer`) computes into `d`
    through its ufunc's `out=`, when:
      * d and v have the same static array type (the copy neither casts nor broadcasts), and d is
        defined before the root;
      * the root is a pure elementwise ufunc node without attributes (memory planning's `{out=k}`
        and keyword forms are left alone);
      * nothing reads v's buffer after the copy;
      * from the root up to the copy, no node has regions, writes anything but buffers this graph
        made that are not d's, or reads anything that may share memory with d (graph/alias.py
        `may_alias`, traced through region arguments): d then holds, at the copy, exactly what the
        copy would have written, and nobody could see it earlier.
    """
    changed = False
    for node in graph.nodes:
        for region in node.regions:
            changed |= run(region)
    while True:
        found = _find(graph, Aliases(graph))
        if found is None:
            return changed
        _apply(graph, *found)
        changed = True


def _full_copy(node: Node) -> bool:
    if node.op != "setitem" or len(node.operands) != 2 or list(node.attrs.get("index", ())) != [slice(None)]:
        return False
    view, value = node.operands
    t = view.type
    return isinstance(t, ArrayType) and t.is_static and t.rank >= 1 and value.type == t


def _find(graph: Graph, aliases: Aliases) -> Optional[tuple]:
    for copy in graph.nodes:
        if not _full_copy(copy):
            continue
        view, value = copy.operands
        root_id = aliases.buffer(value)
        root = next((n for n in graph.nodes if n.id == root_id), None) if root_id is not None else None
        if root is None or root.attrs or not root.is_pure or root.opdef.ufunc not in CALL_OF_UFUNC \
                or root.type != view.type:
            continue
        start, end = aliases.position[root.id], aliases.position[copy.id]
        if aliases.position.get(view.id, start) >= start:
            continue
        if aliases.read_after(root_id, end, ignore=copy):
            continue
        if all(_leaves_view_alone(aliases, n, view) for n in graph.nodes[start:end]):
            return root, copy
    return None


def _leaves_view_alone(aliases: Aliases, node: Node, view: Node) -> bool:
    """Neither reads nor writes memory that may be the view's (writes only buffers this graph made)."""
    if node.regions:
        return False
    written = aliases.writes(node)
    if not all(isinstance(root, int) for root in written) or written & aliases.of(view):
        return False
    return not any(holds_memory(o.type) and may_alias(o, view) for o in node.operands)


def _apply(graph: Graph, root: Node, copy: Node) -> None:
    view = copy.operands[0]
    op = CALL_OF_UFUNC[root.opdef.ufunc]
    new = graph.add(op, list(root.operands) + [view], {"kw": ("out",)}, root.type, root.span, root.name, before=root)
    graph.replace_all_uses(root, new)
    graph.erase(root)
    graph.erase(copy)
