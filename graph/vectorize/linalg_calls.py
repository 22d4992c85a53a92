"""`np.linalg.inv`, `solve` and `det` of per-iteration matrices: one call on the stack of them.

NumPy's linear algebra broadcasts over leading axes, so the loop axis becomes a batch axis:

    for i in range(n):                      # A: (n, 3, 3), b: (n, 3)
        x[i] = np.linalg.solve(A[i], b[i])
    ->  x[:] = np.linalg.solve(A, b[:, :, None])[:, :, 0]

(a vector right-hand side that varies gets a unit column: a stack of vectors would be read as one
matrix). Rules:

- the matrices have a static square shape and a right-hand side that fits it: the batched call
  cannot raise for shapes where the loop would not;
- cost: matrices up to `MAX_BATCHED_N` rows. Larger ones cost LAPACK far more than the loop's
  own overhead, and a stack of them only adds memory traffic: the loop stays;
- `inv` and `solve` raise `LinAlgError` for a singular matrix, the loop at that iteration after
  the writes of the earlier ones, the batched call before any of them. So they are batched only
  when nobody can see those writes after the exception: every array the loop writes is made by
  the function itself (an op that allocates) and used by nothing but this loop (`private_writes`).
  `det` does not raise.
"""

from __future__ import annotations

import numpy as np

from ..alias import EXTERNAL, Aliases, arg_mapping
from ..ir import Node
from ..ops import OPS
from . import probes as P
from .batched import static_shape
from .materialize import checked, lookup, value_node
from .state import LoopState
from .values import VI, Bail, ValueKind

ARITY = {"numpy.linalg.inv": 1, "numpy.linalg.solve": 2, "numpy.linalg.det": 1}
RAISES_WHEN_SINGULAR = {"numpy.linalg.inv", "numpy.linalg.solve"}

# Cost rule: matrices of more rows than this are batched no more (their factorization dominates).
MAX_BATCHED_N = 32


def is_linalg_call(node: Node) -> bool:
    return node.op == "call" and node.attrs.get("fn") in ARITY and "kw" not in node.attrs


def visit_linalg_call(st: LoopState, node: Node) -> VI:
    fn = str(node.attrs["fn"])
    name = "np.linalg." + fn.rsplit(".", 1)[1]
    vis = [lookup(st, o) for o in node.operands]
    if len(vis) != ARITY[fn]:
        raise Bail(f"`{name}` with {len(vis)} arguments")
    if any(v.carried for v in vis):
        raise Bail(f"the loop-carried value is used by `{name}`")
    if not any(v.varying for v in vis):
        raise Bail(f"`{name}` of values that do not vary with the loop index")
    if st.region_depth:
        raise Bail(f"`{name}` inside a branch")
    shapes = [static_shape(o) for o in node.operands]
    if any(s is None for s in shapes):
        raise Bail(f"`{name}` of matrices whose shapes are not known")
    a = shapes[0]
    if len(a) != 2 or a[0] != a[1] or (len(shapes) == 2 and (len(shapes[1]) not in (1, 2)
                                                              or shapes[1][0] != a[0])):
        raise Bail(f"`{name}` of shapes {', '.join(map(str, shapes))}: not a square system the loop solves")
    if a[0] > MAX_BATCHED_N:
        raise Bail(f"`{name}` of {a[0]}x{a[0]} matrices: their factorization costs more than the loop")
    if fn in RAISES_WHEN_SINGULAR:
        private_writes(st, name)
    function = getattr(np.linalg, fn.rsplit(".", 1)[1])
    eager = [np.eye(2, dtype=P.dtype_of(vis[0].probe))] + [v.probe for v in vis[1:]]
    probe = checked(function, eager, {})
    stacked = [P.vector_probe(e) if v.varying else e for v, e in zip(vis, eager)]
    if len(stacked) == 2 and len(shapes[1]) == 1 and vis[1].varying:
        stacked[1] = stacked[1][..., None]
    got = checked(function, [np.broadcast_to(np.eye(2), s.shape).astype(s.dtype) if k == 0 else s
                             for k, s in enumerate(stacked)], {})
    if P.dtype_of(got) != P.dtype_of(probe):
        raise Bail(f"`{name}` would change dtype")
    operands = [value_node(st, v) for v in vis]
    column = len(shapes) == 2 and len(shapes[1]) == 1 and vis[1].varying
    if column:
        operands[1] = st.scratch.getitem(operands[1], [Ellipsis, None], cse=False)
    new = st.scratch.op("call", operands, {"fn": fn}, node.name)
    if column:
        new = st.scratch.getitem(new, [Ellipsis, 0], cse=False)
    st.features.add("contraction")
    return VI(ValueKind.VARYING, node=new, probes=(probe,), text=node.name or name)


def private_writes(st: LoopState, name: str) -> None:
    """Every array the loop writes is the function's own, made by an op that allocates and used
    by this loop only (returning it does not count: after an exception nothing is returned)."""
    loop, graph, body = st.loop, st.loop.graph, st.body
    if graph.parent is not None:
        raise Bail(f"`{name}` can raise in a nested loop, whose partial writes would show")
    inner = Aliases(body)
    written: set = set()
    for node in body.nodes:
        if is_linalg_call(node):
            continue   # an opaque call as far as the alias analysis knows: these write nothing
        roots = inner.writes(node)
        args = {r[1] for r in roots if isinstance(r, tuple) and r[0] == "arg"}
        if EXTERNAL in roots and not args:
            raise Bail(f"`{name}` can raise LinAlgError after the loop has written to memory others see")
        written |= args
    mapping = arg_mapping(loop, body)
    for k in written:
        if 1 <= k <= st.n_carried:   # a carried array: the same one in every iteration
            others = {r[1] for r in inner.of(body.outputs[k - 1]) if isinstance(r, tuple) and r[0] == "arg"}
            if others - {k}:
                raise Bail(f"`{name}` can raise LinAlgError after the loop has written to an array others see")
        outer = mapping[k] if k < len(mapping) else None
        if outer is None or outer.graph is not graph or OPS[outer.op].result != "fresh" or outer.regions \
                or [u.id for u in graph.users(outer)] != [loop.id]:
            raise Bail(f"`{name}` can raise LinAlgError after the loop has written to an array others see")
