"""Matrix products of per-iteration stacks of matrices: one batched `@` for all iterations.

`np.matmul` broadcasts over leading (batch) axes, so a product whose operands vary with the loop
index becomes one product with the loop axis as an extra batch axis in front. When the
per-iteration operands have different numbers of batch axes, the varying one gets unit axes after
its loop axis, so that batch axes keep lining up from the right as they do in every iteration:

    for a in range(n):                          #   per iteration: (2, 3, 3) @ (3, 3)
        r[a] = G[idx[a]] @ H[a]
    ->  r[:] = G[idx] @ H                        #   (n, 2, 3, 3) @ (n, 1, 3, 3)... aligned: (n, 2, 3, 3)

Products of a vector (rank 1) or of two plain matrices are contractions (calls.visit_linalg).
The per-iteration shapes must be known and compatible, so that the batched product cannot raise
where the loop would not.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..ir import Node
from ..types import ArrayType
from . import probes as P
from .materialize import checked, eager_probes, value_node
from .state import LoopState
from .values import VI, Bail, ValueKind, op_text


def static_shape(node: Node) -> Optional[tuple]:
    """The static shape of an array value (None when any length is not known)."""
    t = node.type
    if not isinstance(t, ArrayType) or t.shape is None or any(d is None for d in t.shape):
        return None
    return tuple(int(d) for d in t.shape)


def compatible(a: tuple, b: tuple) -> bool:
    """Does `a @ b` (both of rank >= 2) have matching core and broadcastable batch axes?"""
    if a[-1] != b[-2]:
        return False
    try:
        np.broadcast_shapes(a[:-2], b[:-2])
    except ValueError:
        return False
    return True


def is_stacked_product(node: Node, vis: list) -> bool:
    """A `matmul` of two operands of rank >= 2, at least one of them a stack (rank > 2)."""
    if node.op != "matmul" or len(vis) != 2 or node.attrs:
        return False
    ranks = [P.rank_of(v.probe) for v in vis]
    return min(ranks) >= 2 and max(ranks) > 2


def stacked_matmul(st: LoopState, node: Node, vis: list) -> VI:
    shapes = [static_shape(o) for o in node.operands]
    if any(s is None for s in shapes):
        raise Bail(f"`{op_text(node)}` of operands whose shapes are not known")
    if not compatible(*shapes):
        raise Bail(f"`{op_text(node)}` of operands whose shapes do not match: the loop raises")
    batch = max(len(s) - 2 for s in shapes)
    nodes, vprobes = [], []
    for v, shape in zip(vis, shapes):
        n = value_node(st, v)
        if v.varying:
            n = st.scratch.expand(n, 1, batch - (len(shape) - 2))
            probe = P.vector_probe(v.probe)
            vprobes.append(probe.reshape(probe.shape[:1] + (1,) * (batch - (len(shape) - 2)) + probe.shape[1:]))
        else:
            vprobes.append(v.probe)
        nodes.append(n)
    eager = eager_probes(node, vis)
    got = checked(np.matmul, vprobes, {})
    if P.dtype_of(got) != P.dtype_of(eager[0]) or P.rank_of(got) != P.rank_of(eager[0]) + 1:
        raise Bail(f"`{op_text(node)}` would change dtype")
    st.features.add("contraction")
    new = st.scratch.op("matmul", nodes, {}, node.name)
    return VI(ValueKind.VARYING, node=new, probes=eager, text=node.name or node.op)
