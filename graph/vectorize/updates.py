"""In-place updates of arrays that do not vary with the loop index (`t op= v` with `t` loop-invariant).

Two kinds are translated; any other stays a loop (the update would run once instead of in every
iteration):

- *A fresh array of the body*: `Tz = np.zeros((n, n)); Tz += z * H` makes a new array in every
  iteration, which nothing else holds. The update is then the value `op(Tz, v)` (same dtype and
  shape as `Tz`, checked), per iteration when `v` varies:

      Tz = np.zeros((n, n)) + (z[:, None, None] * H)       # one (trip, n, n) stack

- *An accumulation into a loop-invariant view*: `acc += v` where `acc = x[I]` is read in the
  body with I fixed in the loop and `v` varies adds every iteration's `v` to the same elements:
  `x[I] += v.sum(axis=0)`. Its read and write are `once` accesses (legality.py): any other
  access of `x` in the loop keeps the loop. Only float and complex values of `x`'s own dtype
  (no rounding per iteration), and not inside a branch.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

import numpy as np

from ..analysis.dependence import Access
from ..ir import Node
from ..ops import OPS
from . import probes as P
from .batched import static_shape
from .materialize import value_node
from .state import LoopState
from .values import VI, Bail, ValueKind, line_of
from .writes import align_to

# in-place ops whose repeated application is a sum of the terms: x += a; x += b == x += (a + b)
SUMMED = {"add": "add", "sub": "sub"}


def is_invariant_update(node: Node, vis: list) -> bool:
    """`t op= v` with `t` a loop-invariant array (not a scalar)."""
    return node.op == "inplace" and vis[0].kind == ValueKind.UNIFORM and P.rank_of(vis[0].probe) > 0


def visit_invariant_update(st: LoopState, node: Node, vis: list) -> VI:
    target, value = vis
    op = node.attrs["op"]
    vi = fresh_update(st, node, target, value, op)
    if vi is not None:
        return vi
    if value.varying and op in SUMMED:
        return accumulate(st, node, target, value, op)
    raise Bail(f"`{target.text} {op}= ...` updates a loop-invariant array in place in every iteration")


def body_fresh_chain(st: LoopState, node: Node) -> bool:
    """Is the target of `node` an array made in the body (or the region of the body `node` is in)
    by an op that allocates (through earlier in-place updates), which no other value uses?"""
    x, g = node, node.graph
    while True:
        t = x.operands[0]
        if t.graph is not g or g.is_output(t) or [u.id for u in g.users(t)] != [x.id]:
            return False
        if t.op != "inplace":
            return OPS[t.op].result == "fresh" and not t.regions
        x = t


def fresh_update(st: LoopState, node: Node, target: VI, value: VI, op: str) -> Optional[VI]:
    if not body_fresh_chain(st, node) or op not in OPS or OPS[op].fn is None:
        return None
    shape, vshape = static_shape(node.operands[0]), static_shape(node.operands[1])
    if shape is None or (P.rank_of(value.probe) and vshape is None):
        return None
    try:
        if np.broadcast_shapes(shape, vshape or ()) != shape:
            return None
    except ValueError:
        return None
    dtype = P.dtype_of(target.probe)
    try:
        got = P.evaluate(OPS[op].fn, target.probe, value.probe)
    except P.ProbeError:
        return None
    if P.dtype_of(got) != dtype or not np.can_cast(P.dtype_of(value.probe), dtype, "same_kind"):
        return None   # `x op= v` keeps x's dtype where `op(x, v)` would not
    if st.region_depth:
        return None
    operand = align_to(st, value, target, node) if value.varying else value_node(st, value)
    new = st.scratch.op(op, [value_node(st, target), operand], {}, node.name)
    kind = ValueKind.VARYING if value.varying else ValueKind.UNIFORM
    ident = None if value.varying else new
    return VI(kind, node=new, probes=(target.probe,), ident=ident, text=node.name or target.text)


def accumulate(st: LoopState, node: Node, target: VI, value: VI, op: str) -> VI:
    label = target.text
    if st.region_depth:
        raise Bail(f"`{label} {op}= ...` accumulates inside a branch")
    if not target.is_view or target.read_at is None:
        raise Bail(f"`{label} {op}= ...` updates a loop-invariant array in place in every iteration")
    src, g = node.operands[0], node.graph
    if src.graph is not g or [u.id for u in g.users(src)] != [node.id] or g.users(node) or g.is_output(node):
        raise Bail(f"`{label}` is used besides accumulating into it")
    dtype = P.dtype_of(target.probe)
    if dtype.kind not in "fc" or P.dtype_of(value.probe) != dtype:
        raise Bail(f"`{label} {op}= ...` would round to {dtype} in every iteration")
    shape, vshape = static_shape(src), static_shape(node.operands[1])
    if shape is None or vshape is None:
        raise Bail(f"the shape of `{label}` is not known")
    try:
        fits = np.broadcast_shapes(shape, vshape) == shape
    except ValueError:
        fits = False
    if not fits:
        raise Bail(f"`{label} {op}= ...` broadcasts to a larger shape: the loop raises")
    ident, pos = target.read_at
    k = next((n for n, a in enumerate(st.accesses) if a.array is ident and a.pos == pos and not a.write), None)
    if k is None:
        raise Bail(f"the read of `{label}` is not known")
    view = value_node(st, target)
    total = sum_over(st, value_node(st, value), 0)
    st.scratch.forget_reads()
    new = st.scratch.op("inplace", [view, total], {"op": SUMMED[op]}, node.name)
    read = st.accesses[k]
    st.accesses[k] = replace(read, extra={**read.extra, "once": True})
    st.accesses.append(Access(ident, True, st.scratch.pos[new.id], read.dims, label, line_of(node),
                              extra={"once": True}))
    st.features.add("reduction")
    return VI(ValueKind.UNIFORM, node=new, probes=(target.probe,), ident=target.ident, is_view=True, text=label)


def sum_over(st: LoopState, node: Node, axis: int) -> Node:
    """`node.sum(axis=axis)`, folded into the contraction that computes `node` when there is one
    (`einsum('iab,ibc->iac', ...).sum(axis=0)` is `einsum('iab,ibc->ac', ...)`), through earlier
    sums over other axes of it."""
    spec = st.scratch.contractions.get(node.id)
    if spec is not None and len(st.scratch.g.users(node)) == 0:
        inputs, output, operands = spec
        return st.scratch.einsum(list(inputs), output[:axis] + output[axis + 1:], list(operands))
    inner = node.attrs.get("axis")
    if node.op == "sum" and set(node.attrs) == {"axis"} and isinstance(inner, int) and inner >= 0 \
            and len(st.scratch.g.users(node)) == 0 and node.operands[0].id in st.scratch.contractions:
        below = axis if axis < inner else axis + 1     # the axis of node's operand
        first = sum_over(st, node.operands[0], max(inner, below))
        return sum_over(st, first, min(inner, below))
    return st.scratch.op("sum", [node], {"axis": axis})
