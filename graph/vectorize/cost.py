"""Cost rule of the vectorizer: the whole-array form must not build a temporary far larger than the
arrays the loop itself reads and writes.

A loop that reduces a broadcast product per iteration (`out[:, i, j, :] = np.sum(x[:, i:i+K, j:j+K,
:, None] * w, axis=(1, 2, 3))`, a convolution) touches a few KiB per iteration, in cache; its
vectorized form makes the product for every iteration at once (a 39 MiB float32 temporary for a
520 KiB output: lenet at NPBench preset M ran at 0.53x eager), which is memory traffic the loop
never had. graph/passes/vectorize.py asks `oversized_temporary` before splicing a translation in;
with a reason, the loop stays a loop (an inner loop's own, smaller, vectorized form still runs).
"""

from __future__ import annotations

from typing import Optional

from ..ir import Node
from ..types import ArrayType
from .build import live_nodes
from .values import Result

MAX_BLOWUP = 16            # a temporary may be this many times the largest array the loop touches ...
MIN_BYTES = 4 << 20        # ... or up to this size whatever the loop touches


def oversized_temporary(loop: Node, result: Result) -> Optional[str]:
    """Why `result` (the translation of `loop`) costs more than the loop, or None. Only static types
    are judged: an array of unknown shape among the loop's operands leaves the translation alone."""
    touched = [o.type for o in loop.operands if isinstance(o.type, ArrayType)]
    if any(not t.is_static for t in touched):
        return None
    largest = max((t.nbytes for t in touched), default=0)
    roots = [o for o in result.outputs if o.graph is result.scratch.g]
    keep = live_nodes(result.scratch, roots)
    for node in result.scratch.g.nodes:
        t = node.type
        if node.id not in keep or not isinstance(t, ArrayType) or not t.is_static or node.opdef.result == "view":
            continue
        size = t.nbytes
        if size > MIN_BYTES and size > MAX_BLOWUP * largest:
            return (f"its vectorized form builds a {size / (1 << 20):.0f} MiB temporary "
                    f"(`{node.op}`, {t}), over {MAX_BLOWUP}x the largest array the loop touches")
    return None
