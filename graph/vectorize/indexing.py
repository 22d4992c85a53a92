"""Array reads and writes inside a loop body: affine indices to slices, gathers and windows."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional

import numpy as np

from ..analysis.affine import Affine
from ..analysis.dependence import ANY, K, Access, Point, Span
from ..ir import Node
from ..literals import OperandRef
from ..types import ArrayType
from . import probes as P
from .values import (ValueKind, SAME_SHAPE_OPS, SWV, Bail, DimKey, Unsafe, VI, PendingWrite, as_affine, index_literal, is_int_value,
                     line_of, op_text, shift_refs)


class IndexingMixin:
    # ------------------------------------------------------------------------------------------
    # array reads and writes
    # ------------------------------------------------------------------------------------------
    def parse_index(self, node: Node, vis: list, first: int) -> list:
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
                    if v.varying:
                        raise Bail(f"the index `{v.text}` is data-dependent")
                    key_node = v.node
                    parts.append(("pt", VI(ValueKind.AFFINE, aff=Affine.of(key_node), probes=v.probes, text=v.text)))
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
                    parts.append(("win", *self.window_bounds(bounds)))
                else:
                    parts.append(("sl", *bounds))
            elif item is None:
                parts.append(("new",))
            elif item is Ellipsis:
                parts.append(("ell",))
            elif is_int_value(item):
                parts.append(("pt", self.const_vi(int(item))))
            else:
                raise Bail(f"index item {item!r}")
        return parts

    def window_bounds(self, bounds: list) -> tuple:
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

    def resolve_base(self, base: VI, parts: list) -> tuple:
        """Fold `a[i][j]` into `a[i, j]`."""
        while base.parts is not None:
            inner_base, inner_parts = base.parts
            base, parts = inner_base, inner_parts + parts
        return base, parts

    def plan_index(self, base: VI, parts: list, label: str, write: bool) -> dict:
        """Slices (or arange gathers) for `base[parts]` over all iterations, and its Access dims."""
        if base.kind != ValueKind.UNIFORM:
            raise Bail(f"`{label}` indexes an array that varies with the loop index")
        btype = self._array_type(base)
        shape = btype.shape
        rank = len(shape)
        consumed = sum(1 for p in parts if p[0] in ("pt", "sl", "fancy"))
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
        shape = tuple(d if d is not None else self.symbolic_dim(base, k) for k, d in enumerate(shape))
        dims, axis = [], 0
        varying = [k for k, p in enumerate(expanded) if p[0] == "pt" and p[1].varying]
        fancy_u = any(p[0] == "fancy" for p in expanded)
        for p in expanded:
            if p[0] == "new":
                continue
            if axis >= len(shape):
                raise Bail(f"the index of `{label}` has more axes than the array")
            d = shape[axis]
            if p[0] == "pt":
                dims.append(self.point_dim(p[1].aff, d))
            elif p[0] == "sl":
                dims.append(self.slice_dim(p[1:], d))
            else:
                dims.append(ANY)
            axis += 1
        items, operands = [], []

        def ref(node):
            operands.append(node)
            return OperandRef(len(operands) - 1)

        def literal_or_ref(aff):
            v = self.index_value(aff)
            return v if isinstance(v, int) else ref(v)

        loop_axis, reverse = None, False
        if not varying:
            kind = "uniform"
        elif len(varying) == 1 and not fancy_u and self.in_bounds(expanded[varying[0]][1].aff,
                                                                    shape[self._axis_of(expanded, varying[0])]):
            kind = "slice"
        else:
            if self.region_depth and self.compress is None:
                raise Unsafe(f"`{label}` inside a branch needs a gather whose indices may be out of bounds")
            if fancy_u or any(p[0] in ("sl", "new") for k, p in enumerate(expanded)
                              if not (p[0] == "sl" and p[1:] == (None, None, None) and k > max(varying))):
                raise Bail(f"`{label}` mixes the loop index with slices in a way that is not vectorized")
            kind = "gather"
            self.features.add("gather")
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
                    dim = shape[self._axis_of(expanded, k)]
                    if c > 0:
                        # one past the last index (not first + T*c, which can overshoot the array)
                        stop = first + (self.trip_aff - 1) * c + 1 if self.trip else first + self.trip_aff * c
                        if stop.is_const and isinstance(dim, int) and stop.const - 1 + c >= dim:
                            stop = Affine.constant(dim)   # nothing more to take: x[::2]
                        items.append(self.make_slice(first, stop, c, dim, literal_or_ref))
                    else:
                        last = aff.subst(K, self.trip_aff - 1)
                        items.append(self.make_slice(last, first + 1, -c, dim, literal_or_ref))
                        reverse = True
                    loop_axis = result_dims
                    result_dims += 1
                else:
                    gather = self.materialize(v.aff)
                    if self.compress is not None:   # only the elements the branch runs for
                        gather = self.compressed(gather)
                    self.index_check(gather, v.aff, shape[self._axis_of(expanded, k)], label)
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
            else:
                items.append(ref(self.value(p[1])))
        while len(items) > 1 and isinstance(items[-1], slice) and items[-1] == slice(None):
            items.pop()
        points = sum(1 for p in expanded if p[0] == "pt")
        news = sum(1 for p in expanded if p[0] == "new")
        return {"kind": kind, "items": items, "operands": operands, "dims": tuple(dims),
                "loop_axis": loop_axis, "reverse": reverse, "rank": rank, "prank": rank - points + news}

    def _axis_of(self, expanded: list, k: int) -> int:
        return sum(1 for p in expanded[:k] if p[0] != "new")

    def _array_type(self, base: VI) -> ArrayType:
        t = base.node.type if base.node is not None else None
        outer = self.s.outer(base.node) if base.node is not None else None
        if outer is not None:
            t = outer.type
        if not isinstance(t, ArrayType) or t.shape is None:
            raise Bail(f"the shape of `{base.text}` is not known")
        return t

    def make_slice(self, start: Affine, stop: Affine, step: int, dim, literal_or_ref) -> slice:
        s0 = None if start.is_const and start.const == 0 else literal_or_ref(start)
        full = (isinstance(dim, int) and stop.is_const and stop.const == dim) or stop == dim
        s1 = None if full else literal_or_ref(stop)
        return slice(s0, s1, None if step == 1 else step)

    def symbolic_dim(self, base: VI, axis: int):
        """`x.shape[axis]` of an array of unknown size, as an affine symbol (None if unknown)."""
        outer = base.ident if isinstance(base.ident, Node) and base.ident.graph is not self.s.g else None
        return Affine.of(self.dim_key(outer, axis)) if outer is not None else None

    def dim_key(self, array: Node, axis: int) -> "DimKey":
        while array.op in SAME_SHAPE_OPS and array.operands:   # np.empty_like(x) has x's shape
            array = array.operands[0]
        key = self.dim_keys.get((array.id, axis))
        if key is None:
            key = self.dim_keys[(array.id, axis)] = DimKey(array, axis)
        return key

    def point_dim(self, aff: Affine, dim) -> Any:
        lo, hi = self.interval(aff)
        if lo >= 0:
            return Point(aff)
        if dim is not None and hi <= -1:
            return Point(aff + dim)
        return ANY

    def slice_dim(self, bounds, dim) -> Any:
        start, stop, step = bounds
        st = 1 if step is None else (step.const if step.is_const else None)
        if st is None or st == 0:
            return ANY
        if all(b is None or b.is_const for b in bounds) and isinstance(dim, int):
            sl = slice(*(None if b is None else b.const for b in bounds))
            a, b, c = sl.indices(dim)
            count = len(range(a, b, c))
            return Span(Affine.constant(a), Affine.constant(count), c)
        if st < 0:
            return ANY
        lo = Affine.constant(0) if start is None else start
        if self.interval(lo)[0] < 0:
            return ANY
        if stop is None:
            count = None if dim is None else (as_affine(dim) - lo) if st == 1 else None
        else:
            if self.interval(stop)[0] < 0:
                return ANY
            count = stop - lo if st == 1 else None
        return Span(lo, count, st)

    def index_check(self, gather: Node, aff: Affine, dim, label: str) -> None:
        """A gather whose indices may leave [-dim, dim) would raise IndexError before the loop's
        earlier writes happened: test the indices first and run the loop instead (see raise_check)."""
        if dim is None:
            raise Bail(f"`{label}` gathers from an axis of unknown length")
        d = dim if isinstance(dim, Affine) else Affine.constant(dim)
        c = aff.coef(K)
        first, last = aff.subst(K, Affine.constant(0)), aff.subst(K, self.trip_aff - 1)
        lo_idx, hi_idx = (first, last) if c > 0 else (last, first)
        if self.interval(lo_idx + d)[0] >= 0 and self.interval(hi_idx - d)[1] <= -1:
            return   # provably in range (negative indices wrap, as in the loop)
        if self.compress is None and lo_idx.is_const and hi_idx.is_const and d.is_const:
            raise Bail(f"`{label}` goes out of range: the loop raises IndexError")
        size = self.index_value(d)
        if isinstance(size, int):
            low = self.s.op("lt", [gather, self.s.const(-size)])
            high = self.s.op("ge", [gather, self.s.const(size)])
        else:
            low = self.s.op("lt", [gather, self.s.op("neg", [size])])
            high = self.s.op("ge", [gather, size])
        self.add_check(self.s.op("bitor", [low, high]), f"`{label}` (an index out of range)")
        self.unsafe_indices.add(gather.id)   # the gather itself must not run before the test

    def in_bounds(self, aff: Affine, dim) -> bool:
        """Does a varying index stay in [0, dim) over the whole loop (so that a slice is exact)?"""
        if dim is None:
            return False
        c = aff.coef(K)
        first = aff.subst(K, Affine.constant(0))
        last = aff.subst(K, self.trip_aff - 1)
        lo_idx, hi_idx = (first, last) if c > 0 else (last, first)
        return self.interval(lo_idx)[0] >= 0 and self.interval(hi_idx - (dim - 1))[1] <= 0

    def visit_getitem(self, node: Node, vis: list) -> VI:
        base, parts = self.resolve_base(vis[0], self.parse_index(node, vis, 1))
        label = self.label(node, base)
        if base.kind == ValueKind.VARYING:
            return self.getitem_of_varying(node, base, parts, label)
        if any(p[0] == "win" for p in parts):
            if self.compress is not None:
                raise Bail(f"a sliding window `{label}` inside a masked branch")
            return self.window_read(node, base, parts, label)
        plan = self.plan_index(base, parts, label, write=False)
        pos = self.s.tick()
        ident = base.ident if base.ident is not None else base.node
        self.accesses.append(Access(ident, False, pos, plan["dims"], label, line_of(node)))
        probes = self.getitem_probes(node, base, parts)
        items = shift_refs(plan["items"], 1)
        result = self.s.getitem(base.node, items, plan["operands"], node.name)
        point_only = all(p[0] == "pt" for p in parts)
        if plan["kind"] == "uniform":
            vi = VI(ValueKind.UNIFORM, node=result, probes=probes, ident=ident, is_view=True, text=label, read_at=(ident, pos))
            if point_only:
                vi.parts = (base, parts)
            return vi
        rank = P.rank_of(probes[0]) if probes else 0
        raw = (result, plan, base)
        if plan["reverse"]:
            rev = [slice(None)] * plan["loop_axis"] + [slice(None, None, -1)]
            result = self.s.getitem(result, rev)
        is_view = plan["kind"] == "slice"
        result = self.s.moveaxis_to_front(result, plan["loop_axis"], rank + 1)
        if self.compress is not None:
            if is_view:
                result = self.compressed(result)   # a copy of the selected elements
            is_view = False
        self.features.add("elementwise")
        offsets = self.read_offsets.setdefault(id(ident), set())
        offsets.add(tuple(d.expr if isinstance(d, Point) and d.expr.coef(K) else None for d in plan["dims"]))
        if len(offsets) > 1:
            self.features.add("stencil")   # one array read at several shifts of the index
        vi = VI(ValueKind.VARYING, node=result, probes=probes, ident=ident, is_view=is_view, text=label,
                raw=raw if is_view else None, read_at=(ident, pos) if is_view else None)
        if point_only:
            vi.parts = (base, parts)
        return vi

    def window_read(self, node: Node, base: VI, parts: list, label: str) -> VI:
        """`x[..., i + a:i + a + L, ...]` for all i: a strided view of every window (no copy)."""
        if base.kind != ValueKind.UNIFORM:
            raise Bail(f"`{label}` slides over an array that varies with the loop index")
        shape = self._array_type(base).shape
        if any(p[0] in ("new", "ell", "fancy") or (p[0] == "pt" and p[1].varying) for p in parts):
            raise Bail(f"`{label}` mixes a sliding window with other loop-dependent indexing")
        if sum(1 for p in parts if p[0] == "win") != 1:
            raise Bail(f"`{label}` slides along more than one axis with the same index")
        parts = parts + [("sl", None, None, None)] * (len(shape) - len(parts))
        d = next(k for k, p in enumerate(parts) if p[0] == "win")
        _, start, length = parts[d]
        dim = shape[d]
        c = start.coef(K)
        first = start.subst(K, Affine.constant(0))
        last_stop = start.subst(K, self.trip_aff - 1) + length
        lo, hi = (first, last_stop) if c > 0 else (start.subst(K, self.trip_aff - 1), first + length)
        if dim is None or self.interval(lo)[0] < 0 or self.interval(hi - dim)[1] > 0:
            raise Bail(f"the sliding window `{label}` may leave the array")
        if c < 0:
            raise Bail(f"the window `{label}` slides backwards")
        dims = []
        for k, p in enumerate(parts):
            if p[0] == "pt":
                dims.append(self.point_dim(p[1].aff, shape[k]))
            elif p[0] == "sl":
                dims.append(self.slice_dim(p[1:], shape[k]))
            else:
                dims.append(Span(start, Affine.constant(length), 1))
        ident = base.ident if base.ident is not None else base.node
        pos = self.s.tick()
        self.accesses.append(Access(ident, False, pos, tuple(dims), label, line_of(node)))
        view = self.sliding_view(base.node, length, d, shape)
        items, operands = [], []

        def ref(aff):
            v = self.index_value(aff)
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
                stop = first + self.trip_aff * c
                n_windows = dim - length + 1
                items.append(slice(None if first.is_const and first.const == 0 else ref(first),
                                   None if stop.is_const and stop.const == n_windows else ref(stop),
                                   None if c == 1 else c))
                loop_axis = result_dims
                result_dims += 1
        while len(items) > 1 and items[-1] == slice(None):
            items.pop()
        result = self.s.getitem(view, items, operands, node.name)
        probes = self.getitem_probes(node, base, [p for p in parts if p[0] != "win"] + [("sl",)])
        rank = P.rank_of(probes[0])            # per iteration, including the window axis
        axes = (loop_axis,) + tuple(range(loop_axis)) + (rank,) + tuple(range(loop_axis + 1, rank))
        result = self.s.transpose(result, axes)
        self.features.add("window")
        return VI(ValueKind.VARYING, node=result, probes=probes, ident=view, is_view=True, text=label,
                  read_at=base.read_at or (ident, pos))

    def sliding_view(self, array: Node, length: int, axis: int, shape: tuple) -> Node:
        """`sliding_window_view(x, L, axis=d)`; a view of a view merges into one call."""
        windows, axes = (length,), (axis,)
        if array.op == SWV:
            inner = array
            w, a = inner.attrs["window_shape"], inner.attrs["axis"]
            windows = (w if isinstance(w, tuple) else (w,)) + windows
            axes = (a if isinstance(a, tuple) else (a,)) + axes
            array = inner.operands[0]
        t = self._array_type_of(array)
        new_shape = list(t.shape)
        for w, a in zip(windows, axes):
            new_shape[a] = new_shape[a] - w + 1
        new_shape += list(windows)
        attrs = {"window_shape": windows if len(windows) > 1 else windows[0],
                 "axis": axes if len(axes) > 1 else axes[0]}
        return self.s.op(SWV, [array], attrs, type=ArrayType(t.dtype, tuple(new_shape)))

    def _array_type_of(self, node: Node) -> ArrayType:
        outer = self.s.outer(node)
        t = outer.type if outer is not None else node.type
        if not isinstance(t, ArrayType) or t.shape is None or None in t.shape:
            raise Bail("a sliding window over an array of unknown shape")
        return t

    def getitem_of_varying(self, node: Node, base: VI, parts: list, label: str) -> VI:
        if any(p[0] != "sl" and not (p[0] == "pt" and not p[1].varying) and p[0] != "new" for p in parts):
            raise Bail(f"`{label}` indexes a per-iteration array with the loop index")
        if any(p[0] == "ell" for p in parts):
            raise Bail(f"`{label}` uses `...` on a per-iteration array")
        items, operands = [slice(None)], []
        for p in parts:
            if p[0] == "pt":
                v = self.index_value(p[1].aff)
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
                        v = self.index_value(b)
                        if isinstance(v, int):
                            bounds.append(v)
                        else:
                            operands.append(v)
                            bounds.append(OperandRef(len(operands) - 1))
                items.append(slice(*bounds))
        probes = self.getitem_probes(node, base, parts)
        result = self.s.getitem(base.node, shift_refs(items, 1), operands, node.name, cse=False)
        vi = VI(ValueKind.VARYING, node=result, probes=probes, text=label)
        if base.is_view:
            vi.ident, vi.is_view, vi.read_at = base.ident, True, base.read_at
        return vi

    def getitem_probes(self, node: Node, base: VI, parts: list) -> tuple:
        try:
            return (P.eager_probe(node.type),)
        except P.ProbeError:
            pass
        t = self._array_type(base) if base.kind == ValueKind.UNIFORM else None
        if t is None or t.dtype is None:
            return ()
        rank = len(t.shape) - sum(1 for p in parts if p[0] == "pt") + sum(1 for p in parts if p[0] == "new")
        if rank == 0:
            return (np.dtype(t.dtype).type(1),)
        return (np.ones((2,) * rank, dtype=t.dtype),)

    def label(self, node: Node, base: VI) -> str:
        parts = []
        for item in node.attrs.get("index", ()):
            if isinstance(item, OperandRef):
                parts.append(self.lookup(node.operands[item.index]).text or "?")
            elif isinstance(item, slice):
                def b(x):
                    if x is None:
                        return ""
                    return self.lookup(node.operands[x.index]).text if isinstance(x, OperandRef) else str(x)
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

    def visit_setitem(self, node: Node, vis: list) -> Optional[VI]:
        if node.id in self.accumulator_writes and node.id in self.acc_info:
            return self.finish_accumulator(node, vis)
        base, parts = self.resolve_base(vis[0], self.parse_index(node, vis, 2))
        label = self.label(node, base)
        if base.kind == ValueKind.VARYING:
            raise Bail(f"`{label} = ...` writes into a per-iteration array")
        if base.ident is None:
            raise Bail(f"`{label} = ...` writes into a value that is not an array")
        plan = self.plan_index(base, parts, label, write=True)
        if plan["kind"] == "uniform":
            raise Bail(f"`{label} = ...` writes the same element in every iteration")
        if vis[1].written == (id(base.ident), repr(plan["items"]), tuple(o.id for o in plan["operands"])):
            return None  # `x[i] += v` on a view: updated in place already, the store writes it onto itself
        if self.compress is not None:
            return self.masked_store(node, vis[1], base, plan, label)
        value = self.arrange_value(vis[1], base, plan, label)
        items = shift_refs(plan["items"], 2)
        if self.region_depth:
            key = (id(base.ident), repr(plan["items"]), tuple(o.id for o in plan["operands"]))
            entry = next((w for w in self.pending if w.key == key), None)
            if entry is not None:
                entry.tree = ("val", value)   # a later write in the same branch wins
            else:
                self.pending.append(PendingWrite(key, base.node, plan["items"], plan["operands"], plan["dims"],
                                                  base.ident, label, line_of(node), plan["loop_axis"] or 0,
                                                  plan["prank"], ("val", value), plan["reverse"]))
            return None
        self.s.forget_reads()
        pos = self.s.tick()
        self.accesses.append(Access(base.ident, True, pos, plan["dims"], label, line_of(node)))
        self.s.op("setitem", [base.node, value, *plan["operands"]], {"index": index_literal(items)})
        self.s.pos[self.s.g.nodes[-1].id] = pos
        return None

    def masked_store(self, node: Node, v: VI, base: VI, plan: dict, label: str) -> None:
        """`x[s][m] = v` (or `x[idx[m]] = v`) in a masked branch: only the elements it runs for."""
        if plan["prank"] != 0:
            raise Bail(f"`{label} = ...` stores rows in a masked branch")
        value = self.arrange_value(v, base, plan, label)
        self.s.forget_reads()
        if plan["kind"] == "gather":
            pos = self.s.tick()
            self.s.op("setitem", [base.node, value, *plan["operands"]],
                      {"index": index_literal(shift_refs(plan["items"], 2))})
        else:
            view = self.s.getitem(base.node, shift_refs(plan["items"], 1), plan["operands"], cse=False)
            mask = self.compress
            if plan["reverse"]:
                mask = self.s.getitem(mask, [slice(None, None, -1)], cse=False)
            pos = self.s.tick()
            self.s.op("setitem", [view, value, mask], {"index": index_literal([OperandRef(2)])})
        self.s.pos[self.s.g.nodes[-1].id] = pos
        self.accesses.append(Access(base.ident, True, pos, plan["dims"], label, line_of(node)))
        return None

    def arrange_value(self, v: VI, base: VI, plan: dict, label: str) -> Node:
        """The value laid out like the written slice: loop axis where the slice has it."""
        btype = self._array_type(base)
        target = np.dtype(btype.dtype) if btype.dtype else None
        for probe in v.probes or ():
            src = P.dtype_of(probe)
            if target is None or not np.can_cast(src, target, "same_kind"):
                raise Bail(f"`{label} = ...` would cast {src} to {target}")
            if P.is_py_scalar(probe) and isinstance(probe, int) and target.kind in "iu":
                ival = v.ival if v.ival is not None else (self.interval(v.aff) if v.kind == ValueKind.AFFINE else None)
                if ival is None or not P.exactly_representable(ival, target):
                    raise Bail(f"`{label} = ...` stores Python integers that might not fit in {target}")
        if not v.probes:
            raise Bail(f"the type of the value stored in `{label}` is not known")
        node = self.value(v)
        prank = plan["prank"]
        vrank = P.rank_of(v.probe)
        if vrank > prank:
            raise Bail(f"`{label} = ...` stores an array of higher rank")
        loop_axis = plan["loop_axis"] or 0
        if v.varying:
            node = self.s.expand(node, 1, prank - vrank)
            if plan["reverse"]:
                node = self.s.getitem(node, [slice(None, None, -1)], cse=False)
            node = self.s.moveaxis_from_front(node, loop_axis, prank + 1)
        elif vrank > 0:
            items = [None] * (prank - vrank) + [slice(None)] * vrank
            items.insert(loop_axis, None)
            node = self.s.getitem(node, items, cse=False)
        return node

    def visit_inplace(self, node: Node, vis: list) -> VI:
        target, value = vis
        op = node.attrs["op"]
        if P.rank_of(target.probe) == 0:
            return self.elementwise(node, vis, op=op, attrs={})
        if target.kind == ValueKind.VARYING and target.is_view and target.raw is not None:
            raw, plan, base = target.raw
            self.s.forget_reads()
            aligned = self.arrange_value(value, base, plan, target.text)
            new = self.s.op("inplace", [raw, aligned], {"op": op}, node.name)
            self.accesses.append(Access(target.ident, True, self.s.pos[new.id], plan["dims"], target.text,
                                        line_of(node)))
            return replace(target, written=(id(target.ident), repr(plan["items"]),
                                            tuple(o.id for o in plan["operands"])))
        if target.kind == ValueKind.VARYING and target.is_view:
            raise Bail(f"`{target.text} {op}= ...` updates a view in place")
        if target.kind == ValueKind.VARYING:
            aligned = self.align_to(value, target, node)
            new = self.s.op("inplace", [target.node, aligned], {"op": op}, node.name)
            return replace(target, node=new)
        raise Bail(f"`{target.text} {op}= ...` updates a loop-invariant array in place in every iteration")

    def align_to(self, value: VI, target: VI, node: Node) -> Node:
        n = self.value(value)
        trank, vrank = P.rank_of(target.probe), P.rank_of(value.probe)
        if vrank > trank:
            raise Bail(f"`{op_text(node)}` broadcasts to a larger shape")
        if value.varying:
            return self.s.expand(n, 1, trank - vrank)
        return n

