"""Mark the loops that stay loops and may run as Numba kernels (O2, with Numba installed).

The vectorizer leaves loops with carried dependences as loops (`vectorize='no: ...'`). This pass
asks graph/analysis/kernel_plan.py whether each such loop — the outermost one that qualifies — can
be compiled by Numba with eager Python's results, and records the answer on the loop:
`numba='kernel'`, or `numba='no: <reason>'` (then its inner loops are tried). The backend
(backends/emit_numba.py) writes each marked loop as a kernel and its call; the scalarize pass
leaves marked loops alone. `GRAPHJIT_LOG=vectorize` logs every decision.

    Before:                                             After:
      %0 = for_range(1, 8, 1, %x, %b) {carried=0,         %0 = for_range(1, 8, 1, %x, %b) {carried=0,
             vectorize='no: carried dependence ...'}             vectorize='no: ...', numba='kernel'}

compiler.py leaves the pass out of the pipeline when Numba is off (`JitConfig(numba=False)`,
`GRAPHJIT_NUMBA=0`) or not installed.
"""

from __future__ import annotations

import logging

from ..analysis.kernel_plan import NotKernel, plan_kernel
from ..ir import Graph, Node

ATTR = "numba"
KERNEL = "kernel"
log = logging.getLogger("graphjit.vectorize")


def run(graph: Graph) -> bool:
    """Mark every outermost loop that stays a loop with `numba='kernel'` or the reason it is not one."""
    changed = False
    for node in list(graph.nodes):
        if node.op == "for_range" and "tile" not in node.attrs:
            changed |= _decide(node)
        elif node.op == "if":
            for region in node.regions:
                changed |= run(region)
    return changed


def is_kernel(loop: Node) -> bool:
    return loop.attrs.get(ATTR) == KERNEL


def _decide(loop: Node) -> bool:
    if ATTR in loop.attrs:
        return False
    if not str(loop.attrs.get("vectorize", "no:")).startswith("no:") or "scalar" in loop.attrs:
        return False
    try:
        plan_kernel(loop)
    except NotKernel as e:
        loop.attrs[ATTR] = f"no: {e}"
        _log(loop, f"stays a Python loop, not a Numba kernel: {e}")
        run(loop.regions[0])
        return True
    loop.attrs[ATTR] = KERNEL
    _log(loop, "goes to Numba (a nopython kernel)")
    return True


def _log(loop: Node, text: str) -> None:
    if log.isEnabledFor(logging.INFO):
        log.info("loop at %s: %s", loop.span.short() if loop.span else "?", text)
