"""Boolean masks that select an interval of a key, `x[(lo <= key) & (key < hi)]`, as segments.

Binning loops select, in iteration `i`, the elements whose key falls between two bounds that
move with `i`, then reduce them (a histogram's sums, an azimuthal mean):

    for i in range(n):                                   order = np.argsort(key)
        r1 = rmax * i / n                                k = key[order]
        r2 = rmax * (i + 1) / n                   ->     lo = np.searchsorted(k, r1)              # first k >= r1
        m = np.logical_and(r1 <= key, key < r2)          hi = np.searchsorted(k, r2)              # first k >= r2
        res[i] = data[m].mean()                          the segments k[lo:hi] of data[order], as segments.py

In the sorted key, the elements of such a mask are one slice, whose bounds `np.searchsorted`
finds; the elements then come in the order of the key, not of the array, so a value made this
way may only be reduced by a sum (or mean, or length), whose order changes the float result in
the last bits only (the reassociation tolerance of docs/vectorize.md). Comparisons keep their
exact meaning: `lo <= key` finds the first key not below `lo` (`side='left'`), `lo < key` the
first above it (`side='right'`), `key < hi` and `key <= hi` likewise; NaN keys sort last and
are in no interval, a NaN bound selects nothing, as every comparison with NaN is false. The key
must be a float array compared in its own dtype (a Python float bound is cast to it as NumPy
casts it for the comparison).

A comparison becomes a bound only when nothing but an `&`/`np.logical_and` of two bounds and a
mask index uses it; otherwise the vectorizer translates it as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..analysis.dependence import ANY, Access
from ..ir import Node
from ..literals import OperandRef
from ..types import ArrayType
from . import probes as P
from .materialize import value_node
from .state import LoopState
from .values import VI, Bail, ValueKind, line_of

# comparison op -> (the key's side, `lower` when it bounds the key from below, `strict`)
COMPARISONS = {"le": "<=", "lt": "<", "ge": ">=", "gt": ">", "less_equal": "<=", "less": "<",
               "greater_equal": ">=", "greater": ">"}
FLIP = {"<=": ">=", "<": ">", ">=": "<=", ">": "<"}
AND_OPS = ("logical_and", "bitand")


@dataclass(eq=False)
class Bound:
    """`key <rel> value` for every iteration: one side of an interval of `key`."""

    key: VI                 # the uniform 1-D float array compared
    key_node: Node          # its body node (the identity two bounds must share)
    value: VI               # the per-iteration scalar it is compared with
    rel: str                # the relation with the key on the left: `key >= value`, ...

    @property
    def lower(self) -> bool:
        return self.rel in (">=", ">")


@dataclass(eq=False)
class Interval:
    """`lower & upper` on one key; either side may be missing."""

    lower: Optional[Bound]
    upper: Optional[Bound]

    @property
    def key(self) -> VI:
        return (self.lower or self.upper).key

    @property
    def key_node(self) -> Node:
        return (self.lower or self.upper).key_node


def is_mask_part(v) -> bool:
    return isinstance(v, (Bound, Interval))


def _only_masks(st: LoopState, node: Node, depth: int = 0) -> bool:
    """Is `node` used only as (part of an `&` of two comparisons that is) a mask index?"""
    users = st.body.users(node)
    if not users or st.body.is_output(node) or depth > 1:
        return False
    for u in users:
        if u.op == "getitem" and len(u.operands) == 2 and u.operands[1] is node and u.operands[0] is not node \
                and list(u.attrs.get("index", ())) == [OperandRef(1)]:
            continue
        if u.op in AND_OPS and len(u.operands) == 2 and set(u.attrs) <= {"out"} and _only_masks(st, u, depth + 1):
            continue
        return False
    return True


def bound(st: LoopState, node: Node, operands: list) -> Optional[Bound]:
    """`node` as a bound of an interval mask, or None when it is not one (or has other uses)."""
    rel = COMPARISONS.get(node.op)
    if rel is None or len(operands) != 2 or node.attrs or st.region_depth or st.compress is not None:
        return None
    for k, (key, value) in enumerate((operands, operands[::-1])):
        if _is_key(st, node.operands[k], key) and _is_bound_value(value):
            break
    else:
        return None
    if not _only_masks(st, node):
        return None
    kdtype = np.dtype(node.operands[k].type.dtype)
    try:
        common = np.result_type(np.ones(1, kdtype), value.probe)
    except TypeError:
        return None
    if common != kdtype:
        return None      # compared in another dtype than the key's: not the sorted key's order
    return Bound(key, node.operands[k], value, rel if k == 0 else FLIP[rel])


def _is_key(st: LoopState, node: Node, v) -> bool:
    t = node.type
    return isinstance(v, VI) and v.kind == ValueKind.UNIFORM and isinstance(t, ArrayType) and t.is_static \
        and t.shape is not None and len(t.shape) == 1 and np.dtype(t.dtype).kind == "f"


def _is_bound_value(v) -> bool:
    if not isinstance(v, VI) or v.kind not in (ValueKind.UNIFORM, ValueKind.VARYING, ValueKind.AFFINE) \
            or not v.probes:
        return False
    probe = v.probe
    return P.rank_of(probe) == 0 and P.dtype_of(probe).kind in "iuf" and not isinstance(probe, (bool, np.bool_))


def use(st: LoopState, node: Node, operands: list, read):
    """An op on bounds: `&` of a lower and an upper bound of one key, or the mask index itself.
    `read(st, node, base, space)` makes the segmented value of `base[mask]`."""
    if node.op in AND_OPS and len(operands) == 2 and all(isinstance(v, Bound) for v in operands):
        a, b = operands
        if a.key_node is not b.key_node or a.lower == b.lower:
            raise Bail("an `&` of two comparisons that is not an interval of one array")
        return Interval(a if a.lower else b, b if a.lower else a)
    mask = operands[1] if len(operands) == 2 else None
    if node.op == "getitem" and is_mask_part(mask) and not is_mask_part(operands[0]):
        interval = mask if isinstance(mask, Interval) else Interval(*((mask, None) if mask.lower else (None, mask)))
        return read(st, node, operands[0], interval)
    raise Bail("a comparison used other than as an interval mask")


def ends(st: LoopState, interval: Interval) -> tuple:
    """(lo, hi, order): the interval's ends in the sorted key, per iteration, and the sort."""
    lower, upper = interval.lower, interval.upper
    if not any(b is not None and b.value.varying for b in (lower, upper)):
        raise Bail("an interval mask that does not move with the loop index")
    s = st.scratch
    key = interval.key
    cache = st.segment_spaces
    sort_key = ("sorted", id(key.node))
    if sort_key not in cache:
        t = interval.key_node.type
        order = s.op("argsort", [key.node], type=ArrayType("int64", t.shape))
        cache[sort_key] = (order, s.getitem(key.node, [OperandRef(1)], [order], cse=False))
        st.accesses.append(Access(key.ident if key.ident is not None else key.node, False, s.tick(), (ANY,),
                                  interval.key_node.name or "key", line_of(interval.key_node)))
    order, sorted_key = cache[sort_key]
    kdtype = np.dtype(interval.key_node.type.dtype)

    def search(b: Bound, side: str) -> Node:
        v = value_node(st, b.value)
        if P.dtype_of(b.value.probe) != kdtype or b.value.kind == ValueKind.AFFINE:
            v = s.op("astype", [v], {"dtype": kdtype.type})
        return s.op("searchsorted", [sorted_key, v], {"side": side}, type=ArrayType("int64", _shape(v)))

    lo = search(lower, "left" if lower.rel == ">=" else "right") if lower else s.const(0)
    if upper is None:   # NaN keys sort last and pass no comparison
        hi = s.op("searchsorted", [sorted_key, s.const(float("nan"))], type=ArrayType("int64", ()))
    else:
        hi = search(upper, "left" if upper.rel == "<" else "right")
        value = value_node(st, upper.value)
        if P.dtype_of(upper.value.probe).kind == "f":   # `key < nan` selects nothing
            hi = s.op("where", [s.op("isnan", [value]), s.const(0), hi], type=hi.type)
    return lo, hi, order


def _shape(node: Node) -> tuple:
    t = node.type
    if isinstance(t, ArrayType) and t.shape is not None:
        return t.shape
    raise Bail("internal: the shape of an interval bound is not known")
