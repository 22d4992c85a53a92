"""Which arrays a value may share memory with: its roots, found through views and regions.

A root is a node that owns fresh memory (`np.zeros`, an arithmetic result, `copy`) or an
external array the graph cannot see the origin of (an argument, a weight, an opaque result).
Two values may alias unless every root of both is fresh and no root is shared:

    %a = zeros(...)            roots {%a}            fresh
    %v = getitem(%a) [1:]      roots {%a}            a view of %a
    %x (argument)              roots {%x}            external: may alias any other external
    %m = multiply(%a, %a, %a)  roots {%a}            the ufunc's `out` operand (ops.py `writes`)
"""

from __future__ import annotations

from typing import Optional

from ..ir import Graph, Node
from ..ops import OPS

# Ops whose result is a new array that nothing else references (never one the op table marks
# `views_any`, like einsum: `np.einsum("ii->i", a)` is a view of `a`).
FRESH_OPS = frozenset({
    "zeros", "ones", "empty", "zeros_like", "ones_like", "empty_like", "full", "full_like", "arange",
    "linspace", "eye", "array", "copy", "copy_flat", "astype", "matmul", "dot", "outer", "tensordot",
    "concatenate", "stack", "hstack", "vstack", "tile", "repeat", "cumsum", "cumprod", "diff", "sort",
    "argsort", "pad", "triu", "tril", "take", "correlate",
})
# Ops whose result may be a view of operand 0.
VIEW_OPS = frozenset({
    "getitem", "reshape", "T", "transpose", "ravel", "squeeze", "expand_dims", "swapaxes", "moveaxis", "flip",
    "broadcast_to", "diag", "atleast_1d", "atleast_2d", "asarray", "ascontiguousarray", "inplace",
    "sliding_window_view", "refresh",
    "getattr",  # a bound method (`a.fill`) holds its array: calling it may write the array
})

EXTERNAL = "external"


def roots(node: Node, _seen: Optional[set] = None) -> frozenset:
    """The root nodes `node` may be (a view of); contains EXTERNAL-marked entries as (EXTERNAL, node)."""
    seen = _seen if _seen is not None else set()
    if node.id in seen:
        return frozenset()
    seen.add(node.id)
    op = node.op
    if op in ("arg", "param"):
        g = node.graph
        parent = g.parent if g is not None else None
        if op == "arg" and parent is not None:
            return _region_arg_roots(node, parent, seen)
        return frozenset({(EXTERNAL, node)})
    out = node.out_operand
    if out is not None:  # `np.multiply(z, z, z)`, `np.sum(a, out=b)`: the result is the `out` array
        return roots(out, seen)
    if op in FRESH_OPS:
        return frozenset({node})
    if op in VIEW_OPS:
        return roots(node.operands[0], seen)
    if OPS[op].views_any:  # a view of any operand, or a new array
        out = frozenset({node})
        for operand in node.operands:
            out |= roots(operand, seen)
        return out
    if op == "tuple_get" and node.operands[0].op in ("if", "for_range", "while"):
        region_node = node.operands[0]
        k = node.attrs["index"]
        out = frozenset()
        for region in region_node.regions:
            if region.label in ("cond",):
                continue
            if k < len(region.outputs):
                out |= roots(region.outputs[k], seen)
        out |= _carried_init_roots(region_node, k, seen)
        return out
    if OPS[op].elementwise and op not in ("where", "clip"):
        return frozenset({node})      # ufuncs and operators return new arrays (or scalars)
    if op in ("sum", "mean", "max", "min", "prod", "any", "all", "std", "var", "nansum", "nanmax", "nanmin",
              "where", "clip"):
        return frozenset({node})
    if op == "const":
        return frozenset({(EXTERNAL, node)})
    return frozenset({(EXTERNAL, node)})


def _carried_init_roots(region_node: Node, k: int, seen: set) -> frozenset:
    n = region_node.attrs.get("carried", 0)
    if region_node.op == "for_range" and k < n:
        return roots(region_node.operands[3 + k], seen)
    if region_node.op == "while" and k < n:
        return roots(region_node.operands[k], seen)
    return frozenset()


def _region_arg_roots(arg: Node, parent: Node, seen: set) -> frozenset:
    region: Graph = arg.graph
    k = region.args.index(arg)
    if parent.op == "if":
        return roots(parent.operands[1 + k], seen)
    if parent.op == "for_range":
        n = parent.attrs.get("carried", 0)
        if k == 0:
            return frozenset({(EXTERNAL, arg)})     # the loop index: not an array
        if k <= n:
            out = roots(parent.operands[3 + k - 1], seen)
            return out | roots(region.outputs[k - 1], seen)
        return roots(parent.operands[3 + k - 1], seen)
    if parent.op == "while":
        n = parent.attrs.get("carried", 0)
        if k < n:
            body = parent.regions[1]
            return roots(parent.operands[k], seen) | roots(body.outputs[k], seen)
        return roots(parent.operands[k], seen)
    return frozenset({(EXTERNAL, arg)})


def may_alias(a: Node, b: Node) -> bool:
    """May `a` and `b` (distinct values) share memory?"""
    ra, rb = roots(a), roots(b)
    if ra & rb:
        return True
    external_a = any(isinstance(r, tuple) for r in ra)
    external_b = any(isinstance(r, tuple) for r in rb)
    return external_a and external_b
