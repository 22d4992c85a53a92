"""Keep the memory of big temporaries between calls: compute them into a workspace of the compiled
function (`np.add(a, b, out=_w[0])`) instead of a new array each call.

A NumPy temporary of a few hundred KiB or more is handed to the operating system when it is freed
(glibc's allocator maps big blocks, and trims its heap when the free space at its top grows), so
the next call pays for fresh pages again: a page fault and zeroing per 4 KiB. On NPBench's `hdiff`
(2 MB temporaries) that is two thirds of eager NumPy's time. A compiled function knows the shape and
dtype of each temporary and when it dies, so it can keep one set of buffers and reuse them, as a
graph compiler's buffer assignment does.
"""

from __future__ import annotations

import numpy as np

from ..alias import Aliases, holds_memory, value_roots
from ..ir import Graph, Node
from ..ops import OPS, REGION_OPS
from ..types import ArrayType
from .destination import CALL_OF_UFUNC

# Smaller temporaries come from the allocator's heap, which keeps them: nothing to gain.
MIN_BYTES = 64 * 1024
# A function keeps at most this much memory between calls; the biggest temporaries beyond it
# allocate as before.
MAX_WORKSPACE_BYTES = 256 * 1024 * 1024

# Ops that may read a workspace buffer without keeping a reference to it after they return: they
# compute a new value (`fresh`), a view of it (then the view's uses are checked in turn), a value
# of no memory, or write into it. Anything else (a Python call, a container, `setattr`, a global)
# could keep it alive past the call, when the next call overwrites it.
_READS_ONLY = frozenset({"getitem", "setitem", "inplace", "add_at", "shape", "dim", "ndim", "size",
                         "tuple_get", "refresh", "stop_gradient", "scratch"}) | REGION_OPS


def run(graph: Graph) -> bool:
    """Compute big temporaries into workspace buffers.

    Before:
      graph f(%x: f64[256,256], %y: f64[256,256]) -> f64
        %t = add(%x, %y) : f64[256,256]
        %s = sum(%t) : f64
        return %s
    After:
      graph f(%x: f64[256,256], %y: f64[256,256]) -> f64
        %0 = scratch() {buffer=0, slot=0} : f64[256,256]
        %t = np_add(%x, %y, %0) {kw=('out',)} : f64[256,256]
        %s = sum(%t) : f64
        return %s
    which the NumPy backend emits as `t = np.add(x, y, out=_w[0])`, `_w` being the function's
    workspace (backends/emit_numpy.py): taken from a pool when the call starts, given back before
    it returns, made anew when the pool is empty (the first call, recursion, threads).

    A node computes into the workspace when:
      * it is a pure elementwise ufunc node without attributes (in the function's graph or in a
        loop's or branch's body, where nothing it computes outlives the iteration), whose
        result is a buffer of its own (`OpDef.result` fresh) of static type, rank >= 1 and at least
        MIN_BYTES; the `out=` buffer has exactly that type, so the call computes the same bits;
      * nothing its graph returns (or yields) may share that buffer, and every use of it or of a view of it,
        in loops and branches too, only reads or writes it (`_READS_ONLY`, or an op whose result is
        a new array or a view): no Python call, container or attribute can keep it past the call.
    Values never alive at once share a buffer (`buffer`; each type of value a view of it, `slot`),
    so the workspace holds what the function needs at its peak, not the sum of its temporaries; it
    is at most MAX_WORKSPACE_BYTES, counted as the sum of the temporaries (the first ones in program
    order get buffers).
    """
    if graph.parent is not None:
        return False
    changed = False
    total = sum(n.type.nbytes for n in graph.all_nodes() if n.op == "scratch")
    for g in _graphs(graph):
        aliases = Aliases(g)
        escaping = aliases.escaping()
        for node in list(g.nodes):
            if _candidate(aliases, node) and node.id not in escaping and _only_read(graph, node) \
                    and total + node.type.nbytes <= MAX_WORKSPACE_BYTES:
                total += node.type.nbytes
                _rewrite(g, node)
                changed = True
    return _assign_slots(graph) or changed


def _graphs(graph: Graph):
    """`graph`, then the regions of its nodes, depth first."""
    yield graph
    for node in list(graph.nodes):
        for region in node.regions:
            yield from _graphs(region)


def _candidate(aliases: Aliases, node: Node) -> bool:
    t = node.type
    if not (isinstance(t, ArrayType) and t.is_static and len(t.shape) >= 1 and t.nbytes >= MIN_BYTES):
        return False
    if set(node.attrs) - {"quiet"} or not node.is_pure or node.regions or node.opdef.result != "fresh":
        return False
    if not node.opdef.elementwise or node.opdef.ufunc not in CALL_OF_UFUNC:
        return False
    return aliases.buffer(node) == node.id


def _only_read(graph: Graph, root: Node) -> bool:
    """Does every use of `root`'s buffer, anywhere in the nest of regions, leave no reference behind?"""
    for user in graph.all_nodes():
        for operand in user.operands:
            if not holds_memory(operand.type) or root not in value_roots(operand):
                continue
            opdef = OPS[user.op]
            if user.op in _READS_ONLY:
                if user.op in ("setitem", "inplace", "add_at") and operand is not user.operands[0] \
                        and not _holds_numbers(user.operands[0].type):
                    return False   # `lst[0] = t` and `objects[0] = t` keep t; `a[0] = t` copies it
                continue
            if opdef.effect or opdef.result not in ("fresh", "view", "views_any"):
                return False
    return True


def _holds_numbers(t) -> bool:
    """An array of numbers: writing a value into it copies the value (an object array keeps it)."""
    return isinstance(t, ArrayType) and t.dtype is not None and np.dtype(t.dtype).kind in "biufc"


def _rewrite(graph: Graph, node: Node) -> None:
    buffer = graph.add("scratch", [], {"buffer": -1, "slot": -1}, node.type, node.span, before=node)
    attrs = {"kw": ("out",), **node.attrs}
    new = graph.add(CALL_OF_UFUNC[node.opdef.ufunc], list(node.operands) + [buffer], attrs, node.type,
                    node.span, node.name, before=node)
    graph.replace_all_uses(node, new)
    graph.erase(node)


def _assign_slots(graph: Graph) -> bool:
    """Give each `scratch` node a `buffer` (bytes of the workspace) and a `slot` (the workspace's
    typed view of that buffer it computes into). Within one graph (the function's, or a loop's or
    branch's body), values never alive at once share a buffer whatever their types, best fit in
    program order, as eager NumPy's freed temporaries hand their blocks on: the workspace is the
    graph's peak, and what a call touches stays as few blocks as eager code touches. Graphs do not
    share buffers. Returns whether any attribute changed."""
    changed = False
    buffers_before = 0
    views: dict[tuple, int] = {}                       # (buffer, type) -> slot
    for g in _graphs(graph):
        aliases = Aliases(g)
        buffers: list[list[int]] = []                  # [bytes, last position at which it is used]
        for node in [n for n in g.nodes if n.op == "scratch"]:
            start, end, size = aliases.position[node.id], _last_use(aliases, node), node.type.nbytes
            free = [k for k, (_, last) in enumerate(buffers) if last < start]
            fitting = [k for k in free if buffers[k][0] >= size]
            if fitting:
                b = min(fitting, key=lambda k: buffers[k][0])
            elif free:
                b = max(free, key=lambda k: buffers[k][0])
            else:
                b = len(buffers)
                buffers.append([0, 0])
            buffers[b] = [max(buffers[b][0], size), end]
            slot = views.setdefault((buffers_before + b, node.type), len(views))
            if node.attrs.get("buffer") != buffers_before + b or node.attrs.get("slot") != slot:
                node.attrs["buffer"] = buffers_before + b
                node.attrs["slot"] = slot
                changed = True
        buffers_before += len(buffers)
    return changed


def _last_use(aliases: Aliases, node: Node) -> int:
    """The last position at which a value sharing `node`'s buffer is used."""
    g = aliases.graph
    last = aliases.position[node.id]
    for holder in aliases.holders(node.id):
        for user in g.users(holder):
            last = max(last, aliases.position.get(user.id, last))
    return last
