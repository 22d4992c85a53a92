"""Compute elementwise results into temporaries that are dead afterwards (NumPy `out=`, `a op= b`)."""

from __future__ import annotations

from typing import Optional

from ..alias import Aliases
from ..ir import Graph, Node
from ..types import ArrayType


def run(graph: Graph) -> bool:
    """Rewrite elementwise nodes to write into a dead temporary operand instead of allocating.

    Before:
      graph dense(%x: f32[64,784], %w: f32[784,512], %b: f32[512]) -> f32[64,512]
        %t = matmul(%x, %w) : f32[64,512]
        %t.1 = add(%t, %b) : f32[64,512]
        %t.2 = maximum(%t.1, 0) : f32[64,512]
        return %t.2
    After:
      graph dense(%x: f32[64,784], %w: f32[784,512], %b: f32[512]) -> f32[64,512]
        %t = matmul(%x, %w) : f32[64,512]
        %t.1 = inplace(%t, %b) {op='add'} : f32[64,512]
        %t.2 = maximum(%t.1, 0) {out=0} : f32[64,512]
        return %t.2
    which the NumPy backend emits as `t = x @ w; t += b; np.maximum(t, 0, out=t)`.

    A binary operator whose left operand is reusable becomes `inplace` (Python's `t += b`; for
    `+ * & | ^ == !=` the right operand too, by commuting); any other op with an `out=` form in
    the op table (`OpDef.ufunc`) gets `{out=k}`. Operand k is reusable when:
      * it *is* a buffer this graph allocated (`OpDef.result` fresh, or an earlier in-place result on
        one), never an argument, a parameter, a constant, a region argument or a view (a
        `getitem`/`reshape`/`T` result may be the caller's memory);
      * no value sharing that buffer is used after this node, returned, yielded or captured by a
        later region (graph/alias.py);
      * its type is static and equal to the result's: same dtype (no float32 buffer for a float64
        result) and same shape (no broadcasting into it), rank >= 1 (0-d results are NumPy
        scalars, which have no buffer).
    Each region is planned on its own; values from outside a region are never reused in it.
    """
    changed = False
    for node in graph.nodes:
        for region in node.regions:
            changed |= run(region)
    aliases = Aliases(graph)
    start = 0
    while True:
        rewrite = _find(graph, aliases, start)
        if rewrite is None:
            return changed
        start = aliases.position[rewrite[0].id]
        new = _apply(graph, *rewrite)
        _follow(aliases, rewrite[0], new)
        changed = True


def _find(graph: Graph, aliases: Aliases, start: int) -> Optional[tuple]:
    """The first rewrite at or after position `start`.

    Nodes before it were not rewritable and stay so: a rewrite only makes a buffer read later.
    """
    for node in graph.nodes[start:]:
        if not node.is_pure or set(node.attrs) - {"quiet"} or not _plannable(node):
            continue
        for k in _candidates(node):
            if _reusable(aliases, node, node.operands[k]):
                return node, k
    return None


def _follow(aliases: Aliases, old: Node, new: Node) -> None:
    """Update the analysis after `new` replaced `old` (at its position), writing into an operand's buffer.

    What shared `old`'s own buffer now shares the operand's: cheaper than analysing the graph again
    and giving the same answers for every buffer that still exists.
    """
    aliases.position[new.id] = aliases.position.pop(old.id)
    new_roots = aliases._roots_of(new)
    aliases.roots.pop(old.id, None)
    aliases.roots[new.id] = new_roots
    for table in (aliases.roots, aliases._writes):
        for key, roots in table.items():
            if old.id in roots:
                table[key] = roots | new_roots


def _plannable(node: Node) -> bool:
    t = node.type
    if not (isinstance(t, ArrayType) and t.is_static and len(t.shape) >= 1):
        return False
    opdef = node.opdef
    return node.op == "pow" or opdef.ufunc is not None


def _candidates(node: Node) -> list[int]:
    if node.op == "pow":
        return [0]  # `t **= b`: only as an in-place operator (NumPy's fast paths for ** 2, ** 0.5)
    return list(range(len(node.operands)))


def _reusable(aliases: Aliases, node: Node, operand: Node) -> bool:
    if operand.type != node.type:
        return False
    root = aliases.buffer(operand)
    if root is None:
        return False
    return not aliases.read_after(root, aliases.position[node.id], ignore=node)


def _apply(graph: Graph, node: Node, k: int) -> Node:
    opdef = node.opdef
    if opdef.inplace_symbol and (k == 0 or opdef.commutative):
        target, other = node.operands[k], node.operands[1 - k]
        new = graph.add("inplace", [target, other], {"op": node.op, **node.attrs}, node.type, node.span, node.name,
                        before=node)
    else:
        new = graph.add(node.op, node.operands, {"out": k, **node.attrs}, node.type, node.span, node.name, before=node)
    graph.replace_all_uses(node, new)
    graph.erase(node)
    return new
