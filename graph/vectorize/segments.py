"""Segments of run-time length in a loop body: `x[p[i]:p[i + 1]]`, as one flat array of them all.

A loop over the rows of a compressed sparse matrix reads, in iteration `i`, a slice whose bounds
are data (`A_val[A_row[i]:A_row[i + 1]]`): every iteration a vector of another length, which
the vectorizer's stacking along a new axis cannot hold. Here such a slice becomes a *segmented*
value: the concatenation of every iteration's vector (`flat`) and the segment each element
belongs to. Elementwise ops on segmented values are ops on the flat arrays, a gather `x[cols]`
by segmented indices gathers the flat indices, and a per-iteration reduction (`vals @ x[cols]`,
`np.sum(v)`, `len(v)`) becomes one segmented reduction, one value per iteration:

    for i in range(n):                                   lo, hi = A_row[:n], A_row[1:n + 1] (clipped as slices clip)
        cols = A_col[A_row[i]:A_row[i + 1]]              length = np.maximum(hi - lo, 0)
        vals = A_val[A_row[i]:A_row[i + 1]]       ->     ends = np.cumsum(length); starts = ends - length
        y[i] = vals @ x[cols]                            flat = np.repeat(lo - starts, length) + np.arange(ends[-1])
                                                         t = A_val[flat] * x[A_col[flat]]
                                                         s = np.zeros(n); s[length > 0] = np.add.reduceat(t, starts[length > 0])
                                                         y[:n] = s

Exactness. A bound is normalized as Python normalizes a slice bound (negative counts from the
end, then clipped to the array), so every segment holds the elements the loop's slice holds, in
the same order. The sums add each segment's elements one after the other (`np.add.reduceat`),
where eager NumPy's `np.sum`/`@` may add them pairwise or in BLAS order: floating-point results
can differ in the last bits (the reassociation tolerance of docs/vectorize.md); integer sums wrap
exactly as the loop's do. An empty segment sums to zero, as an empty dot product or `np.sum`
does. A gather by segmented indices that would raise (an index out of range) sends the call to
the original loop, which raises at the same iteration after the same writes.

The array read through segments is an `ANY` access for the dependence analysis: a loop that also
writes it stays a loop. Anything else done with a segmented value (storing it, a reduction along
an axis, a branch on it) keeps the loop, with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from ..analysis.dependence import ANY, Access
from ..ir import Node
from ..literals import Index, OperandRef
from ..ops import OPS
from ..types import ArrayType
from . import intervals, triangles
from . import probes as P
from .legality import add_check
from .materialize import value_node
from .state import LoopState
from .values import VI, Bail, ValueKind, line_of, op_callable, op_text, static_attrs

# Per-iteration reductions of one segmented vector, by op: the result is the sum of the elements.
SUMS = ("sum",)
PRODUCTS = ("matmul", "dot")
LENGTHS = ("len", "size")


@dataclass(eq=False)
class Space:
    """The segments of one loop: iteration k's vector is `flat[starts[k]:starts[k] + length[k]]`
    of every flat array in this space (all built in the scratch program)."""

    length: Node            # (trip,) int64: elements per iteration
    starts: Node            # (trip,) int64: where each iteration's elements begin in the flat arrays
    source: Node            # (total,) int64: the index of each flat element in the sliced array
    # False: each segment holds its elements in another order than the loop's value (an interval
    # mask: in the order of the key); only order-free reductions (sum, mean, len) may use them.
    ordered: bool = True
    _segment: Optional[Node] = None

    def segment(self, st: LoopState) -> Node:
        """(total,) int64: the iteration each flat element belongs to."""
        if self._segment is None:
            iters = st.scratch.op("arange", [st.scratch.const(0), st.scratch.const(st.trip)])
            self._segment = st.scratch.op("repeat", [iters, self.length])
        return self._segment


@dataclass(eq=False)
class Segmented:
    """A loop value that is a 1-D vector of run-time length in each iteration, held flat."""

    node: Node              # (total,) the elements of every iteration, in iteration order
    space: Space
    probe: np.ndarray       # an eager per-iteration stand-in: a 1-D array of the element dtype
    text: str


def visit(st: LoopState, inner: Callable[[Node], Optional[VI]], node: Node):
    """Translate `node` when it makes or uses a segmented value; otherwise `inner` (loop.visit)."""
    operands = [st.env.get(o.id) for o in node.operands]
    if any(isinstance(v, Segmented) for v in operands):
        return _use(st, node, operands)
    if any(intervals.is_mask_part(v) for v in operands):
        return intervals.use(st, node, operands, _read_interval)
    if node.op == "getitem" and _is_segment_slice(st, node, operands):
        return _read(st, node, operands)
    boxed = triangles.visit(st, inner, node, operands)
    if boxed is not None:
        return None if boxed is triangles.HANDLED else boxed
    if node.op in intervals.COMPARISONS:
        found = intervals.bound(st, node, operands)
        if found is not None:
            return found
    return inner(node)


def check_outputs(st: LoopState) -> None:
    """A segmented value cannot leave the loop (it would be one array per iteration)."""
    for out in st.body.outputs:
        if isinstance(st.env.get(out.id), Segmented):
            raise Bail(f"`{out.name or 'a slice'}` of run-time length is carried out of the loop")
    triangles.check_outputs(st)


# --- making segmented values --------------------------------------------------------------------

def _int_bound(v) -> bool:
    """A per-iteration integer that is data (not an affine form of the index)."""
    if not isinstance(v, VI) or v.kind != ValueKind.VARYING or not v.probes:
        return False
    probe = v.probe
    return P.rank_of(probe) == 0 and not isinstance(probe, (bool, np.bool_)) and P.dtype_of(probe).kind in "iu"


def _is_segment_slice(st: LoopState, node: Node, operands: list) -> bool:
    index = node.attrs.get("index")
    if index is None or len(index) != 1 or not isinstance(index[0], slice):
        return False
    item = index[0]
    refs = [p for p in (item.start, item.stop) if isinstance(p, OperandRef)]
    return any(_int_bound(operands[p.index]) for p in refs)


def _read(st: LoopState, node: Node, operands: list) -> Segmented:
    base = operands[0]
    item = node.attrs["index"][0]
    label = f"{node.operands[0].name or 'array'}[{node.name or '...'}]"
    if st.region_depth or st.compress is not None:
        raise Bail(f"a slice of run-time length `{label}` inside a branch")
    if not isinstance(base, VI) or base.kind != ValueKind.UNIFORM:
        raise Bail("a slice of run-time length of an array that varies with the loop index")
    t = node.operands[0].type
    if not (isinstance(t, ArrayType) and t.shape is not None and len(t.shape) == 1 and t.is_static):
        raise Bail("a slice of run-time length of an array that is not 1-D with a known length")
    if isinstance(item.step, OperandRef) or item.step not in (None, 1):
        raise Bail("a slice of run-time length with a step")
    size = t.shape[0]
    lo = _bound(st, item.start, operands, 0, size)
    hi = _bound(st, item.stop, operands, size, size)
    space = _space(st, lo, hi)
    ident = base.ident if base.ident is not None else base.node
    st.accesses.append(Access(ident, False, st.scratch.tick(), (ANY,), label, line_of(node)))
    flat = st.scratch.getitem(base.node, [OperandRef(1)], [space.source], cse=False)
    st.features.add("segmented")
    return Segmented(flat, space, np.ones(2, dtype=np.dtype(t.dtype)), node.name or label)


def _read_interval(st: LoopState, node: Node, base, interval) -> Segmented:
    """`base[mask]` for an interval mask (intervals.py): the segments of the sorted key, their
    elements gathered from `base` in the key's order."""
    t = node.operands[0].type
    label = f"{node.operands[0].name or 'array'}[{node.operands[1].name or 'mask'}]"
    if not isinstance(base, VI) or base.kind != ValueKind.UNIFORM:
        raise Bail(f"`{label}`: a masked array that varies with the loop index")
    if not (isinstance(t, ArrayType) and t.is_static and t.shape == interval.key_node.type.shape):
        raise Bail(f"`{label}`: the mask and the array have different shapes")
    lo, hi, order = intervals.ends(st, interval)
    key = ("interval", lo.id, hi.id)
    if key not in st.segment_spaces:
        space = _space(st, lo, hi)
        source = st.scratch.getitem(order, [OperandRef(1)], [space.source], cse=False)
        st.segment_spaces[key] = Space(space.length, space.starts, source, ordered=False)
    space = st.segment_spaces[key]
    ident = base.ident if base.ident is not None else base.node
    st.accesses.append(Access(ident, False, st.scratch.tick(), (ANY,), label, line_of(node)))
    flat = st.scratch.getitem(base.node, [OperandRef(1)], [space.source], cse=False)
    st.features.add("segmented")
    return Segmented(flat, space, np.ones(2, dtype=np.dtype(t.dtype)), node.name or label)


def _bound(st: LoopState, item, operands: list, default: int, size: int) -> Node:
    """A slice bound for every iteration, as Python's slice normalizes it against `size`:
    int64, negative counted from the end, then clipped to [0, size]."""
    if item is None:
        return st.scratch.const(default)
    if not isinstance(item, OperandRef):
        return st.scratch.const(min(max(item + size if item < 0 else item, 0), size))
    v = operands[item.index]
    if not isinstance(v, VI) or v.kind not in (ValueKind.VARYING, ValueKind.AFFINE, ValueKind.UNIFORM):
        raise Bail("a slice bound depends on a loop-carried value")
    dtype = P.dtype_of(v.probe)
    if dtype.kind not in "iu" or dtype == np.uint64 or P.rank_of(v.probe):
        raise Bail(f"the slice bound `{v.text}` is not an integer that fits int64")
    s = st.scratch
    b = value_node(st, v)
    key = ("bound", b.id, size)
    if key not in st.segment_spaces:
        st.segment_spaces[key] = _normalized(st, b, v, dtype, size)
    return st.segment_spaces[key]


def _normalized(st: LoopState, b: Node, v: VI, dtype: np.dtype, size: int) -> Node:
    s = st.scratch
    if not isinstance(v.probe, int):
        b = s.op("astype", [b], {"dtype": np.int64})
    upper = s.op("minimum", [b, s.const(size)])
    if dtype.kind == "u":
        return upper
    wrapped = s.op("maximum", [s.op("add", [b, s.const(size)]), s.const(0)])
    return s.op("where", [s.op("lt", [b, s.const(0)]), wrapped, upper])


def _space(st: LoopState, lo: Node, hi: Node) -> Space:
    """The segments [lo, hi) (one space per pair of bounds: slices with equal bounds share it)."""
    cache = st.segment_spaces
    key = (lo.id, hi.id)
    if key not in cache:
        if st.trip is None:
            raise Bail("slices of run-time length in a loop whose trip count is known only at run time")
        s = st.scratch
        per_iteration, flat = ArrayType("int64", (st.trip,)), ArrayType("int64", (None,))
        length = s.op("maximum", [s.op("sub", [hi, lo]), s.const(0)], type=per_iteration)
        ends = s.op("cumsum", [length], type=per_iteration)
        starts = s.op("sub", [ends, length], type=per_iteration)
        total = s.getitem(ends, [-1], cse=False)
        offsets = s.op("repeat", [s.op("sub", [lo, starts], type=per_iteration), length], type=flat)
        source = s.op("add", [offsets, s.op("arange", [total], type=flat)], type=flat)
        cache[key] = Space(length, starts, source)
    return cache[key]


# --- using segmented values ---------------------------------------------------------------------

def _use(st: LoopState, node: Node, operands: list):
    op = node.op
    segs = [v for v in operands if isinstance(v, Segmented)]
    space = segs[0].space
    if any(v.space is not space for v in segs):
        raise Bail(f"`{op_text(node)}` combines slices of run-time length with different bounds")
    if op == "getitem":
        return _gather(st, node, operands)
    if op in LENGTHS and len(operands) == 1:
        return VI(ValueKind.VARYING, node=space.length, probes=(1,), text=f"len({segs[0].text})")
    if op in PRODUCTS and len(operands) == 2 and len(segs) == 2 and not node.attrs:
        eager = _eager(node, operands)
        product = st.scratch.op("mul", [segs[0].node, segs[1].node])
        return _segment_sum(st, node, product, space, eager)
    if op in SUMS and len(operands) == 1 and not static_attrs(node.attrs):
        return _segment_sum(st, node, segs[0].node, space, _eager(node, operands))
    if op == "mean" and len(operands) == 1 and not static_attrs(node.attrs):
        return _segment_mean(st, node, segs[0], space)
    if OPS[op].elementwise and not node.attrs and all(_elementwise_operand(v) for v in operands):
        return _elementwise(st, node, operands, space)
    raise Bail(f"`{op_text(node)}` of a slice of run-time length is not vectorized")


def _eager(node: Node, operands: list):
    """The per-iteration result, computed on eager stand-ins."""
    try:
        return P.evaluate(op_callable(node), *[v.probe for v in operands], **static_attrs(node.attrs))
    except P.ProbeError as e:
        raise Bail(str(e)) from None


def _elementwise_operand(v) -> bool:
    if isinstance(v, Segmented):
        return True
    return isinstance(v, VI) and v.kind in (ValueKind.UNIFORM, ValueKind.VARYING, ValueKind.AFFINE) \
        and bool(v.probes) and P.rank_of(v.probe) == 0


def _elementwise(st: LoopState, node: Node, operands: list, space: Space) -> Segmented:
    """An elementwise op: per-iteration scalars are spread over their segment's elements. The
    dtype must be the loop's: a Python scalar is weak next to an array (NEP 50), an array of them
    is not, so the flat form is compared with the eager one on stand-ins."""
    eager = _eager(node, operands)
    flat_args, flat_probes = [], []
    for v in operands:
        if isinstance(v, Segmented):
            flat_args.append(v.node)
            flat_probes.append(v.probe)
        elif v.varying:
            flat_args.append(st.scratch.getitem(value_node(st, v), [OperandRef(1)], [space.segment(st)], cse=False))
            flat_probes.append(P.vector_probe(v.probe))
        else:
            flat_args.append(value_node(st, v))
            flat_probes.append(v.probe)
    try:
        flat = P.evaluate(op_callable(node), *flat_probes)
    except P.ProbeError as e:
        raise Bail(str(e)) from None
    if P.dtype_of(flat) != P.dtype_of(eager) or P.rank_of(eager) != 1:
        raise Bail(f"`{op_text(node)}` on a slice of run-time length would change its dtype once vectorized")
    new = st.scratch.op(node.op, flat_args, {}, node.name)
    return Segmented(new, space, np.ones(2, dtype=P.dtype_of(eager)), node.name or op_text(node))


def _gather(st: LoopState, node: Node, operands: list) -> Segmented:
    """`x[v]`: a uniform 1-D array indexed by segmented integers. An index out of range runs the loop."""
    index = node.attrs["index"]
    base, idx = operands[0], operands[1] if len(operands) == 2 else None
    if not (len(index) == 1 and isinstance(index[0], OperandRef) and isinstance(idx, Segmented)
            and isinstance(base, VI) and base.kind == ValueKind.UNIFORM):
        raise Bail(f"`{node.name or 'a value'}` indexes with a slice of run-time length other than `x[v]`")
    t = node.operands[0].type
    dtype = idx.probe.dtype
    if not (isinstance(t, ArrayType) and t.shape is not None and len(t.shape) == 1 and t.is_static) \
            or dtype.kind not in "iu":
        raise Bail("a gather by a slice of run-time length from an array that is not 1-D with a known length")
    s = st.scratch
    size = t.shape[0]
    out = s.op("ge", [idx.node, s.const(size)])
    if dtype.kind == "i":
        out = s.op("bitor", [out, s.op("lt", [idx.node, s.const(-size)])])
    label = f"{node.operands[0].name or 'array'}[{idx.text}]"
    add_check(st, out, label)
    ident = base.ident if base.ident is not None else base.node
    st.accesses.append(Access(ident, False, s.tick(), (ANY,), label, line_of(node)))
    flat = s.getitem(base.node, [OperandRef(1)], [idx.node], node.name, cse=False)
    return Segmented(flat, idx.space, np.ones(2, dtype=np.dtype(t.dtype)), label)


def _segment_sum(st: LoopState, node: Node, flat: Node, space: Space, eager) -> VI:
    """One sum per iteration of its segment's elements, in the dtype the loop's reduction has;
    zero for an empty segment."""
    dtype = P.dtype_of(eager)
    if P.rank_of(eager) != 0 or dtype.kind not in "iufc":
        raise Bail(f"`{op_text(node)}` of a slice of run-time length has no vectorized form for {dtype}")
    s = st.scratch
    nonempty = s.op("gt", [space.length, s.const(0)])
    starts = s.getitem(space.starts, [OperandRef(1)], [nonempty], cse=False)
    summed = np.add.reduceat(np.ones(1, dtype=np.dtype(flat.type.dtype)), [0]).dtype   # small ints widen
    sums = s.op("add_reduceat", [flat, starts], type=ArrayType(summed.name, (None,)))
    if summed != dtype:
        sums = s.op("astype", [sums], {"dtype": dtype.type})
    out = s.op("zeros", [s.const(st.trip)], {"dtype": dtype.type})
    s.op("setitem", [out, sums, nonempty], {"index": Index([OperandRef(2)])})
    st.features.add("reduction")
    return VI(ValueKind.VARYING, node=out, probes=(eager,), text=node.name or op_text(node))




def _segment_mean(st: LoopState, node: Node, v: Segmented, space: Space) -> VI:
    """The sum over the length, in the mean's dtype (NaN, with NumPy's warning, for an empty
    segment, as `np.mean` of nothing). Float and complex elements only: NumPy sums integers
    into float64 for a mean."""
    eager = _eager(node, [v])
    if v.probe.dtype.kind not in "fc" or P.dtype_of(eager) != v.probe.dtype:
        raise Bail(f"the mean of a slice of run-time length of {v.probe.dtype}")
    sums = _segment_sum(st, node, v.node, space, v.probe.sum())
    mean = st.scratch.op("truediv", [sums.node, space.length])
    if mean.type.dtype != v.probe.dtype.name:
        mean = st.scratch.op("astype", [mean], {"dtype": v.probe.dtype.type})
    return VI(ValueKind.VARYING, node=mean, probes=(eager,), text=node.name or "mean")
