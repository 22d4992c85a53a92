"""Hand `np.std`/`np.var` the mean that a `np.mean` of the same data over the same axes computes.

`np.std(x, axis)` starts by computing `np.mean(x, axis, keepdims=True)`, the very values (same sum,
same division) a `np.mean(x, axis)` next to it computes (batch normalization, standardization).
NumPy takes that mean as an argument (`np.std(x, axis, mean=m)`, shaped as with `keepdims=True`):
this pass gives the std/var node a copy of the user's mean node, just before it, which CSE then
merges with the user's when nothing writes `x` between the two, so the mean is computed once.

Only float32/float64 data: for float16 `np.mean` sums in float32 and `np.std` in float16, for
integers and complex numbers the two agree too, but graphjit keeps to the dtypes checked here.
"""

from __future__ import annotations

from ..ir import Graph, Node
from ..types import ArrayType, type_of_value

_DTYPES = ("float32", "float64")


def run(graph: Graph) -> bool:
    """`std(x) {axis}` after a `mean(x) {axis}` becomes `std(x, mean(x) {axis, keepdims=True})`.

    Before:
      %m = mean(%x) {axis=0} : f64[4]
      %s = std(%x) {axis=0} : f64[4]
    After (CSE then merges %0 with %m):
      %m = mean(%x) {axis=0} : f64[4]
      %0 = mean(%x) {axis=0} : f64[4]
      %1 = expand_dims(%0, 0) : f64[1,4]
      %s = std(%x, %1) {axis=0, kw=('mean',)} : f64[4]
    """
    changed = False
    means: dict = {}
    for node in list(graph.nodes):
        for region in node.regions:
            changed |= run(region)
        if node.op == "mean" and _plain(node, {"axis", "keepdims"}):
            means.setdefault((node.operands[0].id, _axis(node)), node)
        elif node.op in ("std", "var") and _plain(node, {"axis", "keepdims", "ddof"}) and _float_data(node):
            earlier = means.get((node.operands[0].id, _axis(node)))
            if earlier is not None and _share(graph, node, earlier):
                changed = True
    return changed


def _plain(node: Node, allowed: set) -> bool:
    """One operand, no run-time keyword, only the attributes listed."""
    return len(node.operands) == 1 and set(node.attrs) <= allowed


def _axis(node: Node):
    return node.attrs.get("axis")


def _float_data(node: Node) -> bool:
    t = node.operands[0].type
    return isinstance(t, ArrayType) and t.dtype in _DTYPES and t.shape is not None


def _share(graph: Graph, node: Node, earlier: Node) -> bool:
    """Give `node` a copy of `earlier`, shaped as with keepdims, as its `mean=`."""
    axis = _axis(node)
    data = node.operands[0]
    mean = graph.add("mean", [data], dict(earlier.attrs), type=earlier.type, span=node.span, before=node)
    if not earlier.attrs.get("keepdims"):
        if axis is None:
            graph.erase(mean)
            return False
        where = graph.add("const", (), {"value": axis}, type_of_value(axis), node.span, before=node)
        mean = graph.add("expand_dims", [mean, where], {}, span=node.span, before=node)
    attrs = dict(node.attrs, kw=("mean",))
    new = graph.add(node.op, [data, mean], attrs, type=node.type, span=node.span, name=node.name, before=node)
    graph.replace_all_uses(node, new)
    graph.erase(node)
    return True
