"""Index expressions of array reads and writes in a loop body: affine indices to slices, gathers
and windows (`plan_index`), their bounds and the run-time checks of gathered indices."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..analysis.affine import Affine
from ..analysis.dependence import ANY, K, Point, Span
from ..ir import Node
from ..literals import OperandRef
from ..types import ArrayType
from . import probes as P
from .integers import dim_key, interval
from .legality import add_check
from .nest import SHORT, nest_factor
from .materialize import compressed, const_vi, index_value, lookup, materialize, value_node
from .state import LoopState
from .values import VI, Bail, Unsafe, ValueKind, as_affine, is_int_value


# Cost rule: a gather by indices read from data needs a range test (and an alias test) at every
# run; with fewer iterations than this, running the loop is cheaper.
MIN_DATA_GATHER = 32


def parse_index(st: LoopState, node: Node, vis: list, first: int) -> list:
    parts = []
    for item in node.attrs["index"]:
        if isinstance(item, OperandRef):
            v = vis[item.index]
            if v.carried:
                raise Bail("an index depends on a loop-carried value")
            if v.kind == ValueKind.AFFINE:
                parts.append(("pt", v))
                continue
            probe = v.probe
            kind = P.dtype_of(probe).kind
            if kind in "iu" and P.rank_of(probe) == 0 and not isinstance(probe, bool):
                if v.varying:   # an index read from data: a gather, tested against the axis first
                    check_gather_cost(st, v, node.operands[item.index])
                    parts.append(("data", v))
                    continue
                key_node = v.node
                parts.append(("pt", VI(ValueKind.AFFINE, aff=Affine.of(key_node), probes=v.probes, text=v.text)))
                continue
            if v.varying and kind in "iu" and not isinstance(probe, bool):
                check_gather_cost(st, v, node.operands[item.index])
                parts.append(("data", v))   # an array of indices per iteration: one gather of all rows
                continue
            if v.varying:
                raise Bail(f"the index `{v.text}` is data-dependent")
            if kind == "b":
                raise Bail("a boolean mask index inside the loop")
            parts.append(("fancy", v))
        elif isinstance(item, slice):
            bounds = []
            for p in (item.start, item.stop, item.step):
                if isinstance(p, OperandRef):
                    v = vis[p.index]
                    if v.kind != ValueKind.AFFINE:
                        raise Bail("a slice bound is not an affine integer")
                    bounds.append(v.aff)
                elif p is None or is_int_value(p):
                    bounds.append(None if p is None else Affine.constant(int(p)))
                else:
                    raise Bail(f"slice bound {p!r}")
            if any(b is not None and b.coef(K) for b in bounds):
                parts.append(("win", *window_bounds(bounds)))
            else:
                parts.append(("sl", *bounds))
        elif item is None:
            parts.append(("new",))
        elif item is Ellipsis:
            parts.append(("ell",))
        elif is_int_value(item):
            parts.append(("pt", const_vi(st, int(item))))
        else:
            raise Bail(f"index item {item!r}")
    return parts


def check_gather_cost(st: LoopState, v: VI, index: Node) -> None:
    """Cost rule: the indices read from data by all iterations of the loop (and of the nest
    vectorized with it, nest.py) must pay for their range test."""
    t = index.type
    per_iteration = int(np.prod(t.shape)) if isinstance(t, ArrayType) and t.shape and None not in t.shape else 1
    if st.trip is not None and st.trip * per_iteration * nest_factor(st.loop) < MIN_DATA_GATHER:
        raise Bail(f"the index `{v.text}` is data-dependent and {SHORT}: its test would cost more than the loop")


def window_bounds(bounds: list) -> tuple:
    """`x[i:i + 3]`: a window of fixed length sliding with the loop index."""
    start, stop, step = bounds
    if step is not None and not (step.is_const and step.const == 1):
        raise Bail("a sliding slice with a step")
    if start is None or stop is None or start.coef(K) != stop.coef(K):
        raise Bail("slice bounds depend on the loop index (not a window of fixed length)")
    length = stop - start
    if not length.is_const or length.const < 1:
        raise Bail("a sliding window whose length is not a positive constant")
    return start, length.const


def resolve_base(base: VI, parts: list) -> tuple:
    """Fold `a[i][j]` into `a[i, j]`."""
    while base.parts is not None:
        inner_base, inner_parts = base.parts
        base, parts = inner_base, inner_parts + parts
    return base, parts


def plan_index(st: LoopState, base: VI, parts: list, label: str, write: bool) -> dict:
    """Slices (or arange gathers) for `base[parts]` over all iterations, and its Access dims."""
    if base.kind != ValueKind.UNIFORM:
        raise Bail(f"`{label}` indexes an array that varies with the loop index")
    btype = base_array_type(st, base)
    shape = btype.shape
    rank = len(shape)
    consumed = sum(1 for p in parts if p[0] in ("pt", "sl", "fancy", "data"))
    if consumed > rank:
        raise Bail(f"too many indices for `{label}`")
    expanded = []
    for p in parts:
        if p[0] == "ell":
            expanded += [("sl", None, None, None)] * (rank - consumed)
            consumed = rank
        else:
            expanded.append(p)
    expanded += [("sl", None, None, None)] * (rank - consumed)
    shape = tuple(d if d is not None else symbolic_dim(st, base, k) for k, d in enumerate(shape))
    dims, axis = [], 0
    varying = [k for k, p in enumerate(expanded) if p[0] == "pt" and p[1].varying or p[0] == "data"]
    fancy_u = any(p[0] == "fancy" for p in expanded)
    index_rank = max((P.rank_of(p[1].probe) for p in expanded if p[0] == "data"), default=0)
    if index_rank and (write or len(varying) != 1):
        raise Bail(f"`{label}` mixes an array of indices read per iteration with other loop-dependent indices"
                   if not write else f"`{label} = ...` stores through an array of indices read per iteration")
    for p in expanded:
        if p[0] == "new":
            continue
        if axis >= len(shape):
            raise Bail(f"the index of `{label}` has more axes than the array")
        d = shape[axis]
        if p[0] == "pt":
            dims.append(point_dim(st, p[1].aff, d))
        elif p[0] == "sl":
            dims.append(slice_dim(st, p[1:], d))
        else:
            dims.append(ANY)
        axis += 1
    items, operands = [], []

    def ref(node):
        operands.append(node)
        return OperandRef(len(operands) - 1)

    def literal_or_ref(aff):
        v = index_value(st, aff)
        return v if isinstance(v, int) else ref(v)

    loop_axis, reverse = None, False
    if not varying:
        kind = "uniform"
    elif len(varying) == 1 and not fancy_u and expanded[varying[0]][0] == "pt" and \
            in_bounds(st, expanded[varying[0]][1].aff, shape[_axis_of(expanded, varying[0])]):
        kind = "slice"
    else:
        if st.region_depth and st.compress is None:
            raise Unsafe(f"`{label}` inside a branch needs a gather whose indices may be out of bounds")
        if fancy_u or any(p[0] in ("sl", "new") for k, p in enumerate(expanded)
                          if not (p[0] == "sl" and p[1:] == (None, None, None) and k > max(varying))):
            raise Bail(f"`{label}` mixes the loop index with slices in a way that is not vectorized")
        kind = "gather"
        st.features.add("gather")
    result_dims = 0
    for k, p in enumerate(expanded):
        if p[0] == "pt":
            v = p[1]
            if not v.varying:
                items.append(literal_or_ref(v.aff))
            elif kind == "slice":
                aff = v.aff
                c = aff.coef(K)
                first = aff.subst(K, Affine.constant(0))
                dim = shape[_axis_of(expanded, k)]
                if c > 0:
                    # one past the last index (not first + T*c, which can overshoot the array)
                    stop = first + (st.trip_aff - 1) * c + 1 if st.trip else first + st.trip_aff * c
                    if stop.is_const and isinstance(dim, int) and stop.const - 1 + c >= dim:
                        stop = Affine.constant(dim)   # nothing more to take: x[::2]
                    items.append(make_slice(first, stop, c, dim, literal_or_ref))
                else:
                    last = aff.subst(K, st.trip_aff - 1)
                    items.append(make_slice(last, first + 1, -c, dim, literal_or_ref))
                    reverse = True
                loop_axis = result_dims
                result_dims += 1
            else:
                gather = materialize(st, v.aff)
                if st.compress is not None:   # only the elements the branch runs for
                    gather = compressed(st, gather)
                index_check(st, gather, v.aff, shape[_axis_of(expanded, k)], label)
                items.append(ref(gather))
                if loop_axis is None:
                    loop_axis = 0
        elif p[0] == "sl":
            start, stop, step = p[1:]
            items.append(slice(None if start is None else literal_or_ref(start),
                               None if stop is None else literal_or_ref(stop),
                               None if step is None else literal_or_ref(step)))
            result_dims += 1
        elif p[0] == "new":
            items.append(None)
            result_dims += 1
        elif p[0] == "data":
            gather = value_node(st, p[1])
            if st.compress is not None:   # only the elements the branch runs for
                gather = compressed(st, gather)
            index_check(st, gather, None, shape[_axis_of(expanded, k)], label)
            items.append(ref(gather))
            if loop_axis is None:
                loop_axis = 0
        else:
            items.append(ref(value_node(st, p[1])))
    while len(items) > 1 and isinstance(items[-1], slice) and items[-1] == slice(None):
        items.pop()
    points = sum(1 for p in expanded if p[0] in ("pt", "data"))
    news = sum(1 for p in expanded if p[0] == "new")
    return {"kind": kind, "items": items, "operands": operands, "dims": tuple(dims),
            "loop_axis": loop_axis, "reverse": reverse, "rank": rank, "prank": rank - points + news + index_rank}


def _axis_of(expanded: list, k: int) -> int:
    return sum(1 for p in expanded[:k] if p[0] != "new")


def base_array_type(st: LoopState, base: VI) -> ArrayType:
    t = base.node.type if base.node is not None else None
    outer = st.scratch.outer(base.node) if base.node is not None else None
    if outer is not None:
        t = outer.type
    if not isinstance(t, ArrayType) or t.shape is None:
        raise Bail(f"the shape of `{base.text}` is not known")
    return t


def make_slice(start: Affine, stop: Affine, step: int, dim, literal_or_ref) -> slice:
    s0 = None if start.is_const and start.const == 0 else literal_or_ref(start)
    full = (isinstance(dim, int) and stop.is_const and stop.const == dim) or stop == dim
    s1 = None if full else literal_or_ref(stop)
    return slice(s0, s1, None if step == 1 else step)


def symbolic_dim(st: LoopState, base: VI, axis: int):
    """`x.shape[axis]` of an array of unknown size, as an affine symbol (None if unknown)."""
    outer = base.ident if isinstance(base.ident, Node) and base.ident.graph is not st.scratch.g else None
    return Affine.of(dim_key(st, outer, axis)) if outer is not None else None


def point_dim(st: LoopState, aff: Affine, dim) -> Any:
    lo, hi = interval(st, aff)
    if lo >= 0:
        return Point(aff)
    if dim is not None and hi <= -1:
        return Point(aff + dim)
    return ANY


def slice_dim(st: LoopState, bounds, dim) -> Any:
    start, stop, step = bounds
    stride = 1 if step is None else (step.const if step.is_const else None)
    if stride is None or stride == 0:
        return ANY
    if all(b is None or b.is_const for b in bounds) and isinstance(dim, int):
        sl = slice(*(None if b is None else b.const for b in bounds))
        a, b, c = sl.indices(dim)
        count = len(range(a, b, c))
        return Span(Affine.constant(a), Affine.constant(count), c)
    if stride < 0:
        return ANY
    lo = Affine.constant(0) if start is None else start
    if interval(st, lo)[0] < 0:
        return ANY
    if stop is None:
        count = None if dim is None else (as_affine(dim) - lo) if stride == 1 else None
    else:
        if interval(st, stop)[0] < 0:
            return ANY
        count = stop - lo if stride == 1 else None
    return Span(lo, count, stride)


def index_check(st: LoopState, gather: Node, aff: Affine, dim, label: str) -> None:
    """A gather whose indices may leave [-dim, dim) would raise IndexError before the loop's
    earlier writes happened: test the indices first and run the loop instead (see raise_check)."""
    if dim is None:
        raise Bail(f"`{label}` gathers from an axis of unknown length")
    d = dim if isinstance(dim, Affine) else Affine.constant(dim)
    if aff is None:   # indices read from data: always tested
        return _range_check(st, gather, d, label)
    c = aff.coef(K)
    first, last = aff.subst(K, Affine.constant(0)), aff.subst(K, st.trip_aff - 1)
    lo_idx, hi_idx = (first, last) if c > 0 else (last, first)
    if interval(st, lo_idx + d)[0] >= 0 and interval(st, hi_idx - d)[1] <= -1:
        return   # provably in range (negative indices wrap, as in the loop)
    if st.compress is None and lo_idx.is_const and hi_idx.is_const and d.is_const:
        raise Bail(f"`{label}` goes out of range: the loop raises IndexError")
    _range_check(st, gather, d, label)


def _range_check(st: LoopState, gather: Node, d: Affine, label: str) -> None:
    size = index_value(st, d)
    if isinstance(size, int):
        low = st.scratch.op("lt", [gather, st.scratch.const(-size)])
        high = st.scratch.op("ge", [gather, st.scratch.const(size)])
    else:
        low = st.scratch.op("lt", [gather, st.scratch.op("neg", [size])])
        high = st.scratch.op("ge", [gather, size])
    add_check(st, st.scratch.op("bitor", [low, high]), f"`{label}` (an index out of range)")
    st.unsafe_indices.add(gather.id)   # the gather itself must not run before the test


def in_bounds(st: LoopState, aff: Affine, dim) -> bool:
    """Does a varying index stay in [0, dim) over the whole loop (so that a slice is exact)?"""
    if dim is None:
        return False
    c = aff.coef(K)
    first = aff.subst(K, Affine.constant(0))
    last = aff.subst(K, st.trip_aff - 1)
    lo_idx, hi_idx = (first, last) if c > 0 else (last, first)
    return interval(st, lo_idx)[0] >= 0 and interval(st, hi_idx - (dim - 1))[1] <= 0


def access_label(st: LoopState, node: Node, base: VI) -> str:
    parts = []
    for item in node.attrs.get("index", ()):
        if isinstance(item, OperandRef):
            parts.append(lookup(st, node.operands[item.index]).text or "?")
        elif isinstance(item, slice):
            def b(x):
                if x is None:
                    return ""
                return lookup(st, node.operands[x.index]).text if isinstance(x, OperandRef) else str(x)
            parts.append(f"{b(item.start)}:{b(item.stop)}" + (f":{b(item.step)}" if item.step is not None
                                                              else ""))
        elif item is None:
            parts.append("None")
        elif item is Ellipsis:
            parts.append("...")
        else:
            parts.append(repr(item))
    name = base.text or node.operands[0].name or "array"
    return f"{name}[{', '.join(parts)}]"
