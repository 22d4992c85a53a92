"""Run chains of elementwise operations on big arrays tile by tile, so temporaries stay in cache."""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from ..ir import Graph, Node
from ..literals import Index, OperandRef
from ..types import INT, ArrayType, ScalarType, TupleType

# A chain is tiled when its arrays have at least this many elements; below it the loop's
# per-tile overhead (a few microseconds per operation) costs more than cache misses do.
MIN_ELEMENTS = 1 << 16
# Bytes of one tile of one array: a handful of these (the live temporaries of the chain) should
# fit in a core's L2 cache.
TILE_BYTES = 1 << 18
# Values a chain must keep to itself to be worth tiling. Measured (benchmarks/bench_optimizer.py):
# GELU, 8 internal values, runs 2x faster tiled than with in-place updates alone; a layer norm's
# `d / s * 1.5 + 0.25`, 2 internal values, runs 10-15% slower (the per-tile copy and loop overhead
# cost more than three in-place passes over an array that fits in the last-level cache).
MIN_INTERNAL = 3
# Attribute of the loops this pass makes: the tile height.
TILED = "tile"


def run(graph: Graph) -> bool:
    """Turn each run of consecutive elementwise nodes over one big static shape into a tiled loop.

    Before:
      graph f(%x: f32[2048,2048], %b: f32[2048]) -> f32[2048,2048]
        %0 = mul(%x, 0.5) : f32[2048,2048]
        %1 = tanh(%x) : f32[2048,2048]
        %2 = add(%1, %b) : f32[2048,2048]
        %3 = mul(%0, %2) : f32[2048,2048]
        return %3
    After (every tile's temporaries are small; memory planning then reuses them in place, and
    the destination pass computes %9 in %4):
      graph f(%x: f32[2048,2048], %b: f32[2048]) -> f32[2048,2048]
        %0 = empty((2048, 2048)) {dtype=np.float32} : f32[2048,2048]
        %1 = for_range(0, 2048, 32, %0, %x, %b) {carried=0, tile=32} : tuple()
          body(%i: int, %2: f32[2048,2048], %x.1: f32[2048,2048], %b.1: f32[2048]) {
            %3 = add(%i, 32) : int
            %4 = getitem(%2, %i, %3) {index=[$1:$2]} : f32[32,2048]
            %5 = getitem(%x.1, %i, %3) {index=[$1:$2]} : f32[32,2048]
            %6 = mul(%5, 0.5) : f32[32,2048]
            %7 = tanh(%5) : f32[32,2048]
            %8 = add(%7, %b.1) : f32[32,2048]
            %9 = mul(%6, %8) : f32[32,2048]
            %10 = setitem(%4, %9) {index=[:]} : none
            yield
          }
        return %0

    The result of every node is exactly what it was: elementwise operations compute each element
    on its own, so computing rows [i, i+R) at a time changes nothing but the order of memory
    traffic. A chain is a run of pure elementwise nodes, with no other node between them, whose
    results all have the same static shape S (at least MIN_ELEMENTS elements, rank >= 1);
    operands of shape S (or of the same rank with S's first dimension) are sliced along the first
    axis, operands that broadcast along it (lower rank, first dimension 1, scalars) are passed
    whole. Values of the chain used after it are written, tile by tile, into new arrays
    (`np.empty`, fully overwritten), through a view of the tile typed with its static shape, so that
    graph/passes/destination.py can compute them there. The tile height R divides S[0], so every tile has a static
    shape and the loop runs at least once. Chains with fewer than MIN_INTERNAL values of their
    own (not used after the chain) are left to memory planning alone.
    """
    changed = False
    for node in graph.nodes:
        if node.attrs.get(TILED):
            continue   # a loop this pass made: its tiles are small
        for region in node.regions:
            changed |= run(region)
    start = 0
    while start < len(graph.nodes):
        chain = _chain_from(graph, start)
        if chain is None:
            start += 1
            continue
        _tile(graph, chain)
        changed = True
        start = graph.nodes.index(chain.loop) + 1
    return changed


class _Chain:
    def __init__(self, shape: tuple, rows: int):
        self.shape = shape
        self.rows = rows
        self.members: list[Node] = []
        self.loop: Optional[Node] = None


def _big_shape(node: Node) -> Optional[tuple]:
    t = node.type
    if not (isinstance(t, ArrayType) and t.is_static and len(t.shape) >= 1):
        return None
    return t.shape if math.prod(t.shape) >= MIN_ELEMENTS else None


def _member(node: Node, shape: tuple) -> bool:
    if not (node.is_pure and node.opdef.elementwise and not node.attrs and isinstance(node.type, ArrayType)
            and node.type.shape == shape):
        return False
    return all(_operand_kind(o, shape) is not None for o in node.operands)


def _operand_kind(operand: Node, shape: tuple) -> Optional[str]:
    """'slice' (varies along axis 0), 'whole' (broadcasts along it), or None (cannot tell)."""
    t = operand.type
    if operand.op == "const" or isinstance(t, ScalarType):
        return "whole"
    if not (isinstance(t, ArrayType) and t.is_static):
        return None
    if len(t.shape) < len(shape) or (len(t.shape) == len(shape) and t.shape[0] == 1 and shape[0] != 1):
        return "whole"
    if len(t.shape) == len(shape) and t.shape[0] == shape[0]:
        return "slice"
    return None


def _rows(shape: tuple, itemsize: int) -> Optional[int]:
    """The tile height: a divisor of shape[0] near TILE_BYTES per tile, with at least two tiles."""
    row_bytes = max(1, math.prod(shape[1:]) * itemsize)
    want = max(1, TILE_BYTES // row_bytes)
    for rows in range(min(want, shape[0] // 2), 0, -1):
        if shape[0] % rows == 0:
            fits = rows * row_bytes <= 4 * TILE_BYTES   # a tile of a few rows must still be small
            return rows if fits and (rows * 2 >= want or rows >= 8) else None
    return None


def _chain_from(graph: Graph, start: int) -> Optional[_Chain]:
    first = graph.nodes[start]
    shape = _big_shape(first)
    if shape is None or not _member(first, shape):
        return None
    chain = None
    for node in graph.nodes[start:]:
        if node.op == "const":
            continue
        if not _member(node, shape):
            break
        if chain is None:
            chain = _Chain(shape, 0)
        chain.members.append(node)
    if chain is None or len(chain.members) < 2:
        return None
    rows = _rows(shape, max(np.dtype(m.type.dtype).itemsize for m in chain.members))
    if rows is None:
        return None
    chain.rows = rows
    member_ids = {m.id for m in chain.members}
    internal = [m for m in chain.members
                if not graph.is_output(m) and all(u.id in member_ids for u in graph.users(m))]
    if len(internal) < MIN_INTERNAL:
        return None  # (nearly) every value leaves the chain: little would stay in cache
    return chain


def _dead_inputs(graph: Graph, members: list) -> list:
    """Sliced inputs of the chain that are buffers this graph made and nobody reads after it."""
    from ..alias import Aliases
    aliases = Aliases(graph)
    member_ids = {m.id for m in members}
    last = aliases.position[members[-1].id]
    out = []
    for m in members:
        for o in m.operands:
            if o.id in member_ids or o in out or _operand_kind(o, members[0].type.shape) != "slice":
                continue
            root = aliases.buffer(o)
            if root is not None and aliases.position.get(o.id, -1) < aliases.position[members[0].id] \
                    and not aliases.read_after(root, last):
                out.append(o)
    return out


def _tile(graph: Graph, chain: _Chain) -> None:
    members = chain.members
    member_ids = {m.id for m in members}
    anchor = members[0]
    span = anchor.span
    shape, rows = chain.shape, chain.rows
    tile_shape = (rows,) + tuple(shape[1:])
    escaping = [m for m in members
                if graph.is_output(m) or any(u.id not in member_ids for u in graph.users(m))]

    # outer graph: an array per value used after the chain; a dead temporary the chain reads is
    # reused when the value is computed after every read of it (tiles are disjoint rows)
    buffers = {}
    reusable = _dead_inputs(graph, members)
    for m in escaping:
        position = members.index(m)
        for o in reusable:
            if o.type == m.type and all(members.index(u) <= position for u in graph.users(o) if u.id in member_ids):
                buffers[m.id] = o
                reusable.remove(o)
                break
        if m.id in buffers:
            continue
        shape_const = graph.add("const", (), {"value": tuple(shape)}, TupleType(tuple(INT for _ in shape)), span,
                                before=anchor)
        buffers[m.id] = graph.add("empty", [shape_const], {"dtype": np.dtype(m.type.dtype).type}, m.type, span,
                                  m.name, before=anchor)

    # the loop body
    body = Graph(f"{graph.name}.body", label="body")
    index = body.add_arg("i", INT, span)
    captures: list[Node] = []
    captured: dict[int, Node] = {}

    def capture(outer: Node) -> Node:
        if outer.id not in captured:
            captures.append(outer)
            captured[outer.id] = body.add_arg(outer.name, outer.type, outer.span)
        return captured[outer.id]

    end = body.add("add", [index, body.const(rows, span)], {}, INT, span)
    slices: dict[int, Node] = {}
    clones: dict[int, Node] = {}

    def operand(o: Node) -> Node:
        if o.id in clones:
            return clones[o.id]
        if o.op == "const":
            return body.const(o.value, o.span)
        if _operand_kind(o, shape) == "whole":
            return capture(o)
        return tile_of(o)

    def tile_of(o: Node) -> Node:
        """Rows [i, i + rows) of `o`, typed with their static shape."""
        if o.id not in slices:
            t = o.type
            slices[o.id] = body.add("getitem", [capture(o), index, end],
                                    {"index": Index([slice(OperandRef(1), OperandRef(2), None)])},
                                    ArrayType(t.dtype, (rows,) + tuple(t.shape[1:])), span)
        return slices[o.id]

    # each value used after the chain is stored into its tile of its array, a view typed with the
    # tile's static shape (graph/passes/destination.py then computes the value in it)
    views = {m.id: tile_of(buffers[m.id]) for m in escaping}
    for m in members:
        op = "select" if m.op == "where" else m.op   # branch-free on big tiles (graph/blend.py)
        clone = body.add(op, [operand(o) for o in m.operands], dict(m.attrs),
                         ArrayType(m.type.dtype, tile_shape), m.span, m.name)
        clones[m.id] = clone
        if m.id in views:
            body.add("setitem", [views[m.id], clone], {"index": Index([slice(None)])}, None, m.span)
    body.set_outputs([])
    bounds = [graph.add("const", (), {"value": v}, INT, span, before=anchor) for v in (0, shape[0], rows)]
    loop = graph.add("for_range", bounds + captures, {"carried": 0, TILED: rows}, TupleType(()), span,
                     regions=[body], before=anchor)
    chain.loop = loop
    for m in escaping:
        graph.replace_all_uses(m, buffers[m.id])
    for m in reversed(members):
        graph.erase(m)
