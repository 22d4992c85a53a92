"""Slices with one end moving with the loop index (`x[:, i:n]`), as a masked box of fixed width.

A loop over the rows of a triangle reads and writes slices whose length changes with `i`:

    for i in range(n):                                        t = data.T @ data / (m - 1.0)      # every row, full width
        t = data[:, i] @ data[:, i:n] / (m - 1.0)      ->     p = np.arange(0, n)
        cov[i:n, i] = t                                       cov[:, :] = np.where((p >= i)..., t, cov[...]).T
        cov[i, i:n] = t                                       cov[:, :] = np.where((p >= i)..., t, cov)

Each such slice is read over its *box*, the union of its ranges over the loop (here `0:n`), so
that every iteration has a value of the same shape; position `p` of the box is valid in
iteration `k` when `lo(k) <= p < hi(k)`, the slice's ends. Values computed from boxes keep the
box along the same axis: elementwise ops with scalars or other boxes of the same slice, and
matrix products in which the boxed axis is not the one summed over. A store into a moving slice
writes only the valid positions: `np.where(valid, new, old)` over the box, which leaves the
others as they are; the dependence analysis sees the exact triangle (`Span` with a moving start
or length), so two stores into the upper and lower triangle of one array do not conflict.

Positions outside the valid range hold values the loop never computes, so no op that could
fault or warn there is allowed on a box (a division only by values that are not boxes, no
`log`/`sqrt`/`**`), and a box is never reduced along its axis, branched on, or carried out
of the loop: those keep the loop, with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from ..analysis.affine import Affine
from ..analysis.dependence import K, Span
from ..ir import Node
from ..literals import Index, OperandRef
from ..ops import OPS
from ..types import OBJECT, ArrayType
from . import probes as P
from .materialize import materialize, value_node
from .state import LoopState
from .values import VI, Bail, ValueKind, op_text

PRODUCTS = ("matmul", "dot")


@dataclass(eq=False)
class Boxed:
    """A per-iteration value of a moving slice's varying length, held over the slice's box."""

    vi: VI                  # the value over the whole box (UNIFORM or VARYING)
    axis: int               # the box's axis in the per-iteration value, counted from the end (-1: last)
    lo: Affine              # the slice's ends, array indices: valid where lo(k) <= p < hi(k)
    hi: Affine
    start: int              # the array index of box position 0
    width: int

    def same_box(self, other: "Boxed") -> bool:
        return (self.lo, self.hi, self.start, self.width) == (other.lo, other.hi, other.start, other.width)

    @property
    def text(self) -> str:
        return self.vi.text


HANDLED = object()   # what `visit` returns for a store it translated


def visit(st: LoopState, inner: Callable[[Node], Optional[VI]], node: Node, operands: list):
    """The translation of `node` when it reads, computes with or stores a moving slice (`HANDLED` for
    a store); None when it does none of these."""
    boxed = [v for v in operands if isinstance(v, Boxed)]
    if node.op in ("getitem", "setitem"):
        found = _moving_slice(st, node, operands)
        if found is not None:
            if node.op == "getitem":
                if boxed:
                    raise Bail("a moving slice of a moving slice")
                return _read(st, inner, node, operands, *found)
            _store(st, inner, node, operands, *found)
            return HANDLED
    if not boxed:
        return None
    if any(not b.same_box(boxed[0]) for b in boxed):
        raise Bail(f"`{op_text(node)}` combines moving slices with different ends")
    if node.op in PRODUCTS and len(operands) == 2 and not node.attrs:
        return _product(st, inner, node, operands)
    if OPS[node.op].elementwise and not node.attrs and _safe_elementwise(node, operands):
        box = boxed[0]
        if any(not isinstance(v, Boxed) and v.probes and P.rank_of(v.probe) >= -box.axis for v in operands):
            raise Bail(f"`{op_text(node)}` mixes a moving slice with an array along its axis")
        return _boxed(box, _delegate(st, inner, node, operands), box.axis)
    raise Bail(f"`{op_text(node)}` of a slice whose length moves with the loop index is not vectorized")


def check_outputs(st: LoopState) -> None:
    for out in st.body.outputs:
        if isinstance(st.env.get(out.id), Boxed):
            raise Bail("a slice whose length moves with the loop index is carried out of the loop")


# --- recognizing moving slices ------------------------------------------------------------------

def _moving_slice(st: LoopState, node: Node, operands: list) -> Optional[tuple]:
    """(position in the index, array axis, lo, hi) of the one slice whose ends move with the index at
    different rates (a window, whose ends move together, is the vectorizer's own)."""
    index = list(node.attrs.get("index", ()))
    t = node.operands[0].type
    if not (isinstance(t, ArrayType) and t.is_static):
        return None
    found, axis = None, 0
    for pos, item in enumerate(index):
        if item is Ellipsis or axis >= len(t.shape):
            return None
        if isinstance(item, slice):
            ends = [Affine.constant(default) if b is None else _affine(operands, b)
                    for b, default in ((item.start, 0), (item.stop, t.shape[axis]))]
            if None not in ends and item.step is None and ends[0].coef(K) != ends[1].coef(K):
                if found is not None:
                    raise Bail("two slices whose length moves with the loop index in one index")
                found = (pos, axis, *ends)
        if item is not None:
            axis += 1
    return found


def _affine(operands: list, bound) -> Optional[Affine]:
    if isinstance(bound, OperandRef):
        v = operands[bound.index]
        return v.aff if isinstance(v, VI) and v.kind == ValueKind.AFFINE else None
    return Affine.constant(int(bound)) if isinstance(bound, int) else None


def _box(st: LoopState, node: Node, axis: int, lo: Affine, hi: Affine) -> tuple:
    """(start, stop): the union of the slice's ranges, which must stay inside the axis (a negative or
    clipped end would mean another slice than the box's positions)."""
    t = node.operands[0].type
    if st.trip is None:
        raise Bail("a slice whose length moves with the loop index, in a loop whose trip count is known only "
                   "at run time")
    if not (isinstance(t, ArrayType) and t.is_static and axis < len(t.shape)):
        raise Bail("a slice whose length moves with the loop index, over an axis of unknown length")
    ends = [a.subst(K, Affine.constant(k)) for a in (lo, hi) for k in (0, st.trip - 1)]
    if not all(e.is_const for e in ends):
        raise Bail("a slice whose length moves with the loop index by a run-time amount")
    values = [e.const for e in ends]
    if min(values) < 0 or max(values) > t.shape[axis]:
        raise Bail("a slice whose length moves with the loop index leaves the array")
    start, stop = min(values[:2]), max(values[2:])
    if stop <= start:
        raise Bail("a slice whose length moves with the loop index is always empty")
    return start, stop


def _detached(node: Node, pos: int, start: int, stop: int, operands=None) -> Node:
    """A copy of `node` (not in any graph) whose moving slice is the box."""
    index = list(node.attrs["index"])
    index[pos] = slice(start, stop)
    attrs = dict(node.attrs)
    attrs["index"] = Index(index)
    return Node(node.op, operands or node.operands, attrs, node.type, node.span, node.name)


def _axis_from_end(node: Node, pos: int) -> int:
    """Where the slice at `pos` of the index lands in the result, counted from the end."""
    index = list(node.attrs["index"])
    t = node.operands[0].type
    consumed = sum(1 for it in index if it is not None)
    after = sum(1 for it in index[pos + 1:] if isinstance(it, slice) or it is None)
    return -(after + len(t.shape) - consumed + 1)


# --- reads, products, stores --------------------------------------------------------------------

def _read(st: LoopState, inner, node: Node, operands: list, pos: int, axis: int, lo: Affine, hi: Affine) -> Boxed:
    start, stop = _box(st, node, axis, lo, hi)
    vi = inner(_detached(node, pos, start, stop))
    st.features.add("triangle")
    return Boxed(vi, _axis_from_end(node, pos), lo, hi, start, stop - start)


def _delegate(st: LoopState, inner, node: Node, operands: list) -> VI:
    """Translate `node` with each box standing for its whole-box value."""
    saved = {}
    for o, v in zip(node.operands, operands):
        if isinstance(v, Boxed):
            saved[o.id] = v
            st.env[o.id] = v.vi
    try:
        return inner(node)
    finally:
        st.env.update(saved)


def _boxed(box: Boxed, vi: VI, axis: int) -> Boxed:
    return Boxed(vi, axis, box.lo, box.hi, box.start, box.width)


def _safe_elementwise(node: Node, operands: list) -> bool:
    """No fault or warning from the positions outside the slice: a box may only be divided, not be
    the divisor, nor the argument of an op with a domain."""
    domain = OPS[node.op].domain
    if not domain:
        return True
    return domain == "division" and not any(isinstance(v, Boxed) for v in operands[1:])


def _product(st: LoopState, inner, node: Node, operands: list) -> Boxed:
    """`v @ box` (the box along the columns) or `box @ v` (along the rows): the box's axis is not summed."""
    a, b = operands
    ranks = [P.rank_of(v.vi.probe if isinstance(v, Boxed) else v.probe) for v in (a, b)]
    if isinstance(b, Boxed) and not isinstance(a, Boxed) and b.axis == -1 and ranks[1] == 2 and ranks[0] <= 2:
        return _boxed(b, _delegate(st, inner, node, operands), -1)
    if isinstance(a, Boxed) and not isinstance(b, Boxed) and a.axis == -2 and ranks[0] == 2 and ranks[1] <= 2:
        return _boxed(a, _delegate(st, inner, node, operands), -1 if ranks[1] == 1 else -2)
    raise Bail(f"`{op_text(node)}` sums over a slice whose length moves with the loop index")


def _store(st: LoopState, inner, node: Node, operands: list, pos: int, axis: int, lo: Affine, hi: Affine) -> None:
    """`x[..., lo:hi, ...] = v`: `np.where(valid, v, old)` stored over the box; the dependence analysis
    sees only the slice's own elements."""
    start, stop = _box(st, node, axis, lo, hi)
    value = operands[1]
    box = Boxed(value.vi if isinstance(value, Boxed) else value, _axis_from_end(node, pos), lo, hi, start,
                stop - start)
    if isinstance(value, Boxed):
        if not value.same_box(box) or value.axis != box.axis:
            raise Bail("a value stored into a moving slice that is not computed over the same slice")
    elif not (isinstance(value, VI) and value.probes and P.rank_of(value.probe) < -box.axis):
        raise Bail("a value stored into a moving slice that is not computed over it")
    first = len(st.accesses)
    read = Node("getitem", [node.operands[0], *node.operands[2:]], {}, OBJECT, node.span, node.name)
    read.attrs["index"] = Index(_shifted(list(node.attrs["index"]), -1))
    old = inner(_detached(read, pos, start, stop))
    if not old.varying:
        raise Bail("a store into a moving slice that does not move with the loop index")
    s = st.scratch
    positions = s.op("arange", [s.const(start), s.const(stop)])
    tests = []   # an end that is the box's own holds everywhere
    if not (lo.is_const and lo.const <= start):
        tests.append(s.op("ge", [positions, _per_iteration(st, lo)]))
    if not (hi.is_const and hi.const >= stop):
        tests.append(s.op("lt", [positions, _per_iteration(st, hi)]))
    valid = tests[0] if len(tests) == 1 else s.op("bitand", tests)
    trailing = -box.axis - 1
    leading = P.rank_of(old.probe) - 1 - trailing
    if leading or trailing:
        valid = s.getitem(valid, [slice(None)] + [None] * leading + [slice(None)] + [None] * trailing, cse=False)
    merged = s.op("where", [valid, value_node(st, box.vi), value_node(st, old)])
    placeholder = Node("const", (), {"value": None}, node.operands[1].type, node.span, "merged")
    st.env[placeholder.id] = VI(ValueKind.VARYING, node=merged, probes=old.probes, text=box.text)
    ops = [node.operands[0], placeholder, *node.operands[2:]]
    inner(_detached(node, pos, start, stop, ops))
    del st.env[placeholder.id]
    exact = Span(lo, hi - lo, 1)
    for k in range(first, len(st.accesses)):
        access = st.accesses[k]
        if access.array is old.ident and len(access.dims) > axis:
            access.dims = access.dims[:axis] + (exact,) + access.dims[axis + 1:]
    st.features.add("triangle")
    return None


def _per_iteration(st: LoopState, aff: Affine) -> Node:
    """The end for every iteration as a column `(n, 1)` (a scalar when it does not move)."""
    node = materialize(st, aff)
    if aff.coef(K):
        node = st.scratch.getitem(node, [slice(None), None], cse=False)
    return node


def _shifted(items: list, by: int) -> list:
    def shift(x):
        return OperandRef(x.index + by) if isinstance(x, OperandRef) else x
    return [slice(shift(it.start), shift(it.stop), shift(it.step)) if isinstance(it, slice) else shift(it)
            for it in items]

