"""Array reads in a loop body (`x[i]`, `x[i:i + 3]`, `x[idx[i]]`): strided views, gathers and
sliding windows over all iterations."""

from __future__ import annotations

import numpy as np

from ..analysis.affine import Affine
from ..analysis.dependence import K, Access, Point, Span
from ..ir import Node
from ..literals import OperandRef
from ..types import ArrayType
from . import probes as P
from .indexing import access_label, base_array_type, parse_index, plan_index, point_dim, resolve_base, slice_dim
from .integers import interval
from .materialize import compressed, index_value
from .state import LoopState
from .values import SWV, VI, Bail, ValueKind, line_of, shift_refs


def visit_getitem(st: LoopState, node: Node, vis: list) -> VI:
    base, parts = resolve_base(vis[0], parse_index(st, node, vis, 1))
    label = access_label(st, node, base)
    if base.kind == ValueKind.VARYING:
        return getitem_of_varying(st, node, base, parts, label)
    if any(p[0] == "win" for p in parts):
        if st.compress is not None:
            raise Bail(f"a sliding window `{label}` inside a masked branch")
        return window_read(st, node, base, parts, label)
    plan = plan_index(st, base, parts, label, write=False)
    pos = st.scratch.tick()
    ident = base.ident if base.ident is not None else base.node
    st.accesses.append(Access(ident, False, pos, plan["dims"], label, line_of(node)))
    probes = getitem_probes(st, node, base, parts)
    items = shift_refs(plan["items"], 1)
    result = st.scratch.getitem(base.node, items, plan["operands"], node.name)
    point_only = all(p[0] == "pt" for p in parts)
    if plan["kind"] == "uniform":
        vi = VI(ValueKind.UNIFORM, node=result, probes=probes, ident=ident, is_view=True, text=label,
                read_at=(ident, pos))
        if point_only:
            vi.parts = (base, parts)
        return vi
    rank = P.rank_of(probes[0]) if probes else 0
    raw = (result, plan, base)
    if plan["reverse"]:
        rev = [slice(None)] * plan["loop_axis"] + [slice(None, None, -1)]
        result = st.scratch.getitem(result, rev)
    is_view = plan["kind"] == "slice"
    result = st.scratch.moveaxis_to_front(result, plan["loop_axis"], rank + 1)
    if st.compress is not None:
        if is_view:
            result = compressed(st, result)   # a copy of the selected elements
        is_view = False
    st.features.add("elementwise")
    offsets = st.read_offsets.setdefault(id(ident), set())
    offsets.add(tuple(d.expr if isinstance(d, Point) and d.expr.coef(K) else None for d in plan["dims"]))
    if len(offsets) > 1:
        st.features.add("stencil")   # one array read at several shifts of the index
    vi = VI(ValueKind.VARYING, node=result, probes=probes, ident=ident, is_view=is_view, text=label,
            raw=raw if is_view else None, read_at=(ident, pos) if is_view else None)
    if point_only:
        vi.parts = (base, parts)
    return vi


def window_read(st: LoopState, node: Node, base: VI, parts: list, label: str) -> VI:
    """`x[..., i + a:i + a + L, ...]` for all i: a strided view of every window (no copy)."""
    if base.kind != ValueKind.UNIFORM:
        raise Bail(f"`{label}` slides over an array that varies with the loop index")
    if any(p[0] == "new" for p in parts) and not any(p[0] == "ell" for p in parts):
        return with_new_axes(st, node, base, parts, label)
    shape = base_array_type(st, base).shape
    if any(p[0] in ("new", "ell", "fancy", "data") or (p[0] == "pt" and p[1].varying) for p in parts):
        raise Bail(f"`{label}` mixes a sliding window with other loop-dependent indexing")
    if sum(1 for p in parts if p[0] == "win") != 1:
        raise Bail(f"`{label}` slides along more than one axis with the same index")
    parts = parts + [("sl", None, None, None)] * (len(shape) - len(parts))
    d = next(k for k, p in enumerate(parts) if p[0] == "win")
    _, start, length = parts[d]
    dim = shape[d]
    c = start.coef(K)
    first = start.subst(K, Affine.constant(0))
    last_stop = start.subst(K, st.trip_aff - 1) + length
    lo, hi = (first, last_stop) if c > 0 else (start.subst(K, st.trip_aff - 1), first + length)
    if dim is None or interval(st, lo)[0] < 0 or interval(st, hi - dim)[1] > 0:
        raise Bail(f"the sliding window `{label}` may leave the array")
    if c < 0:
        raise Bail(f"the window `{label}` slides backwards")
    dims = []
    for k, p in enumerate(parts):
        if p[0] == "pt":
            dims.append(point_dim(st, p[1].aff, shape[k]))
        elif p[0] == "sl":
            dims.append(slice_dim(st, p[1:], shape[k]))
        else:
            dims.append(Span(start, Affine.constant(length), 1))
    ident = base.ident if base.ident is not None else base.node
    pos = st.scratch.tick()
    st.accesses.append(Access(ident, False, pos, tuple(dims), label, line_of(node)))
    view = sliding_view(st, base.node, length, d, shape)
    items, operands = [], []

    def ref(aff):
        v = index_value(st, aff)
        if isinstance(v, int):
            return v
        operands.append(v)
        return OperandRef(len(operands))
    loop_axis = None
    result_dims = 0
    for k, p in enumerate(parts):
        if p[0] == "pt":
            items.append(ref(p[1].aff))
        elif p[0] == "sl":
            items.append(slice(*(None if b is None else ref(b) for b in p[1:])))
            result_dims += 1
        else:
            stop = first + st.trip_aff * c
            n_windows = dim - length + 1
            items.append(slice(None if first.is_const and first.const == 0 else ref(first),
                               None if stop.is_const and stop.const == n_windows else ref(stop),
                               None if c == 1 else c))
            loop_axis = result_dims
            result_dims += 1
    while len(items) > 1 and items[-1] == slice(None):
        items.pop()
    result = st.scratch.getitem(view, items, operands, node.name)
    probes = getitem_probes(st, node, base, [p for p in parts if p[0] != "win"] + [("sl",)])
    rank = sum(1 for p in parts if p[0] in ("sl", "win"))   # per iteration, including the window axis
    axes = (loop_axis,) + tuple(range(loop_axis)) + (rank,) + tuple(range(loop_axis + 1, rank))
    result = st.scratch.transpose(result, axes)
    st.features.add("window")
    return VI(ValueKind.VARYING, node=result, probes=probes, ident=view, is_view=True, text=label,
              read_at=base.read_at or (ident, pos))


def with_new_axes(st: LoopState, node: Node, base: VI, parts: list, label: str) -> VI:
    """`x[:, i:i + 3, None]`: the windows without the new axes, then the new axes inserted."""
    vi = window_read(st, node, base, [p for p in parts if p[0] != "new"], label)
    items = [slice(None)]   # the loop axis
    items += [None if p[0] == "new" else slice(None) for p in parts if p[0] in ("new", "sl", "win")]
    probes = getitem_probes(st, node, base, parts)
    return VI(ValueKind.VARYING, node=st.scratch.getitem(vi.node, items, cse=False), probes=probes, ident=vi.ident,
              is_view=True, text=label, read_at=vi.read_at)


def sliding_view(st: LoopState, array: Node, length: int, axis: int, shape: tuple) -> Node:
    """`sliding_window_view(x, L, axis=d)`; a view of a view merges into one call."""
    windows, axes = (length,), (axis,)
    if array.op == SWV:
        inner = array
        w, a = inner.attrs["window_shape"], inner.attrs["axis"]
        windows = (w if isinstance(w, tuple) else (w,)) + windows
        axes = (a if isinstance(a, tuple) else (a,)) + axes
        array = inner.operands[0]
    t = _array_type_of(st, array)
    new_shape = list(t.shape)
    for w, a in zip(windows, axes):
        new_shape[a] = new_shape[a] - w + 1
    new_shape += list(windows)
    attrs = {"window_shape": windows if len(windows) > 1 else windows[0],
             "axis": axes if len(axes) > 1 else axes[0]}
    return st.scratch.op(SWV, [array], attrs, type=ArrayType(t.dtype, tuple(new_shape)))


def _array_type_of(st: LoopState, node: Node) -> ArrayType:
    outer = st.scratch.outer(node)
    t = outer.type if outer is not None else node.type
    if not isinstance(t, ArrayType) or t.shape is None or None in t.shape:
        raise Bail("a sliding window over an array of unknown shape")
    return t


def getitem_of_varying(st: LoopState, node: Node, base: VI, parts: list, label: str) -> VI:
    if any(p[0] != "sl" and not (p[0] == "pt" and not p[1].varying) and p[0] != "new" for p in parts):
        raise Bail(f"`{label}` indexes a per-iteration array with the loop index")
    if any(p[0] == "ell" for p in parts):
        raise Bail(f"`{label}` uses `...` on a per-iteration array")
    items, operands = [slice(None)], []
    for p in parts:
        if p[0] == "pt":
            v = index_value(st, p[1].aff)
            if isinstance(v, int):
                items.append(v)
            else:
                operands.append(v)
                items.append(OperandRef(len(operands) - 1))
        elif p[0] == "new":
            items.append(None)
        else:
            bounds = []
            for b in p[1:]:
                if b is None:
                    bounds.append(None)
                else:
                    v = index_value(st, b)
                    if isinstance(v, int):
                        bounds.append(v)
                    else:
                        operands.append(v)
                        bounds.append(OperandRef(len(operands) - 1))
            items.append(slice(*bounds))
    probes = getitem_probes(st, node, base, parts)
    result = st.scratch.getitem(base.node, shift_refs(items, 1), operands, node.name, cse=False)
    vi = VI(ValueKind.VARYING, node=result, probes=probes, text=label)
    if base.is_view:
        vi.ident, vi.is_view, vi.read_at = base.ident, True, base.read_at
    return vi


def getitem_probes(st: LoopState, node: Node, base: VI, parts: list) -> tuple:
    try:
        return (P.eager_probe(node.type),)
    except P.ProbeError:
        pass
    t = base_array_type(st, base) if base.kind == ValueKind.UNIFORM else None
    if t is None or t.dtype is None or any(p[0] == "data" and P.rank_of(p[1].probe) for p in parts):
        return ()
    rank = len(t.shape) - sum(1 for p in parts if p[0] in ("pt", "data")) + sum(1 for p in parts if p[0] == "new")
    if rank == 0:
        return (np.dtype(t.dtype).type(1),)
    return (np.ones((2,) * rank, dtype=t.dtype),)
