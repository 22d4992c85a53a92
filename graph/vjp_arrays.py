"""VJP rules of the ops that move or combine elements: reductions, layout, indexing, creation.

A reduction spreads its cotangent back over the elements it combined (`np.broadcast_to` of the
cotangent with the reduced axes put back). A layout op sends the cotangent through its inverse
(`np.flip` undoes `np.flip`, a slice undoes `np.concatenate`, `np.moveaxis` back undoes
`np.moveaxis`). Rules that need shapes, axes or counts read them from the operand types and the
compile-time arguments (graph/vjp_common.py), never at run time.
"""

from __future__ import annotations

import math

import numpy as np

from .literals import OperandRef
from .types import ArrayType, ScalarType, TupleType
from .vjp_common import argument, known_rank, none_for_rest, np_dtype, rank, static_shape, static_value
from .vjp_elementwise import choose


# --- reductions ---------------------------------------------------------------------------------
def spread(b, node, value):
    """`value` (shaped like the reduction's result) repeated over the elements each result combined."""
    x = node.operands[0]
    return b.op("broadcast_to", keep_reduced_axes(b, node, value), b.shape_of(x))


def keep_reduced_axes(b, node, value):
    """`value` shaped like the reduction's result, with its reduced axes put back as size 1."""
    axis = node.attrs.get("axis")
    if axis is None or node.attrs.get("keepdims"):
        return value
    axes = axis if isinstance(axis, tuple) else (axis,)
    r = known_rank(node.operands[0], "the reduced array")
    return b.op("expand_dims", value, b.const(tuple(sorted(a % r for a in axes))))


def axis_attrs(node, keepdims: bool) -> dict:
    attrs = {"keepdims": keepdims}
    if node.attrs.get("axis") is not None:
        attrs["axis"] = node.attrs["axis"]
    return attrs


def reduced_count(node) -> int:
    """How many elements each result of the reduction combined."""
    shape = static_shape(node.operands[0], "the reduced array")
    axis = node.attrs.get("axis")
    if axis is None:
        return math.prod(shape)
    axes = axis if isinstance(axis, tuple) else (axis,)
    return math.prod(shape[a] for a in axes)


def sum_(b, node, g):
    return (spread(b, node, g),)


def mean(b, node, g):
    x = node.operands[0]
    if isinstance(x.type, ArrayType) and x.type.is_static:
        count = b.const(reduced_count(node))
    else:                                   # read at run time: elements per result
        count = b.op("floordiv", b.op("size", x), b.op("size", node)) if isinstance(node.type, ArrayType) \
            and node.type.rank else b.op("size", x)
    return (b.op("truediv", spread(b, node, g), count),)


def nansum(b, node, g):
    x = node.operands[0]
    return (b.op("where", b.op("isnan", x), b.const(0.0), spread(b, node, g)),)


def nanmean(b, node, g):
    x = node.operands[0]
    missing = b.op("isnan", x)
    counted = b.op("sum", b.op("logical_not", missing), **axis_attrs(node, keepdims=True))
    return (b.op("where", missing, b.const(0.0), b.op("truediv", spread(b, node, g), counted)),)


def prod(b, node, g):
    """Each element's gradient is the product of the others: the product over the element."""
    x = node.operands[0]
    return (b.op("truediv", spread(b, node, b.op("mul", g, node)), x),)


def _centered(b, node):
    x = node.operands[0]
    return b.op("sub", x, b.op("mean", x, **axis_attrs(node, keepdims=True)))


def var(b, node, g):
    """d var = 2 (x - mean) / (N - ddof)."""
    divisor = reduced_count(node) - node.attrs.get("ddof", 0)
    return (b.op("mul", spread(b, node, g), b.op("mul", _centered(b, node), b.const(2.0 / divisor))),)


def std(b, node, g):
    """d std = (x - mean) / ((N - ddof) std)."""
    divisor = reduced_count(node) - node.attrs.get("ddof", 0)
    share = spread(b, node, b.op("truediv", g, b.op("mul", node, b.const(float(divisor)))))
    return (b.op("mul", share, _centered(b, node)),)


def extreme(b, node, g):
    """max/min (and nanmax/nanmin): the elements equal to the extreme share the gradient (as
    autograd does)."""
    x = node.operands[0]
    return (_share_among(b, node, b.op("eq", x, keep_reduced_axes(b, node, node)), keep_reduced_axes(b, node, g)),)


def _share_among(b, node, hit, g):
    dtype = getattr(node.operands[0].type, "dtype", None)
    count = {"dtype": np_dtype(dtype)} if dtype and dtype.startswith("float") else {}   # float32 stays float32
    hits = b.op("sum", hit, **axis_attrs(node, keepdims=True), **count)
    return b.op("where", hit, b.op("truediv", g, hits), b.const(0.0))


def median(b, node, g):
    """The median is the mean of the middle element(s): the largest element not above it and the
    smallest not below it (the same one for an odd count) take half the gradient each."""
    x = node.operands[0]
    m = keep_reduced_axes(b, node, node)
    half = b.op("mul", keep_reduced_axes(b, node, g), b.const(0.5))
    attrs = axis_attrs(node, keepdims=True)
    below = b.op("max", b.op("where", b.op("le", x, m), x, b.const(-math.inf)), **attrs)
    above = b.op("min", b.op("where", b.op("ge", x, m), x, b.const(math.inf)), **attrs)
    return (b.op("add", _share_among(b, node, b.op("eq", x, below), half),
                 _share_among(b, node, b.op("eq", x, above), half)),)


def _reverse_cumsum(b, value, axis):
    attrs = {} if axis is None else {"axis": axis}
    return b.op("flip", b.op("cumsum", b.op("flip", value, **attrs), **attrs), **attrs)


def cumsum(b, node, g):
    """Element k feeds every partial sum from k on: a cumulative sum from the end."""
    x = node.operands[0]
    axis = argument(node, 1, "axis")
    gx = _reverse_cumsum(b, g, axis)
    return none_for_rest(node, gx if axis is not None else b.op("reshape", gx, b.shape_of(x)))


def cumprod(b, node, g):
    """As autograd: the cumulative sum from the end of `g * result`, over the element (no zeros)."""
    x = node.operands[0]
    axis = argument(node, 1, "axis")
    gx = _reverse_cumsum(b, b.op("mul", g, node), axis)
    if axis is None:
        gx = b.op("reshape", gx, b.shape_of(x))
    return none_for_rest(node, b.op("truediv", gx, x))


# --- layout -------------------------------------------------------------------------------------
def reshape_back(b, node, g):
    """Ops that only change the shape: the cotangent is reshaped to the operand's shape."""
    return none_for_rest(node, b.op("reshape", g, b.shape_of(node.operands[0])))


def transpose(b, node, g):
    axes = argument(node, 1, "axes")
    if axes is None:
        return none_for_rest(node, _matrix_transposed(b, g) if rank(node.operands[0]) == 2 else b.op("transpose", g))
    inverse = tuple(sorted(range(len(axes)), key=lambda k: axes[k]))
    return none_for_rest(node, b.op("transpose", g, b.const(inverse)))


def _matrix_transposed(b, g):
    """`g.T`; when the cotangent is a product of two matrices (`a @ c`, the weight gradient of
    `x @ w.T`), `c.T @ a.T`: the same values laid out in C order like the weight itself, so an
    optimizer's elementwise update (`w -= lr * g`) does not stride through a transposed view."""
    if g.op == "matmul" and len(g.operands) == 2 and not g.attrs and all(rank(o) == 2 for o in g.operands):
        a, c = g.operands
        return b.op("matmul", b.op("T", c), b.op("T", a))
    return b.op("T", g)


def same_op(b, node, g):
    """Ops that are their own adjoint given the same arguments (flip, swapaxes, triu, tril)."""
    return none_for_rest(node, b.op(node.op, g, *node.operands[1:], **node.attrs))


def broadcast_to(b, node, g):
    return (g, None)      # the transform sums it back to the operand's shape


def identity(b, node, g):
    return none_for_rest(node, g)


def as_array(b, node, g):
    """`np.asarray(x)` / `np.array(x)` of an array or number; a Python list of values has no
    cotangent to receive."""
    x = node.operands[0]
    if not isinstance(x.type, (ArrayType, ScalarType)):
        raise NotImplementedError("an array built from a Python list: use np.stack of the arrays instead")
    return identity(b, node, g)


def astype(b, node, g):
    dtype = getattr(node.operands[0].type, "dtype", None)
    return (b.op("astype", g, dtype=np_dtype(dtype)) if dtype and dtype != getattr(node.type, "dtype", None)
            else g,)


def to_float(b, node, g):
    """`float(a)` of a 0-d array: the cotangent goes back as a 0-d array."""
    return (b.op("asarray", g) if isinstance(node.operands[0].type, ArrayType) else g,)


def item(b, node, g):
    """`a.item()` of a one-element array: the number goes back into that element."""
    return (b.op("broadcast_to", g, b.shape_of(node.operands[0])),)


def roll(b, node, g):
    shift, axis = argument(node, 1, "shift"), argument(node, 2, "axis")
    back = tuple(-s for s in shift) if isinstance(shift, (tuple, list)) else -shift
    return none_for_rest(node, b.op("roll", g, b.const(back), **({} if axis is None else {"axis": axis})))


def moveaxis(b, node, g):
    source, destination = argument(node, 1, "source"), argument(node, 2, "destination")
    return none_for_rest(node, b.op("moveaxis", g, b.const(destination), b.const(source)))


def along_axis(axis: int, item) -> tuple:
    """An index reading `item` along `axis` (every element of the axes before it)."""
    return (slice(None),) * axis + (item,)


def _pieces(b, g, sizes, axis):
    """`g` cut along `axis` into consecutive pieces of the given sizes."""
    out, start = [], 0
    for size in sizes:
        out.append(b.op("getitem", g, index=along_axis(axis, slice(start, start + size))))
        start += size
    return out


def _items(node):
    t = node.operands[0].type
    if not isinstance(t, TupleType):
        raise NotImplementedError("the arrays joined must be a tuple or list written in the call")
    return node.operands[0].operands if node.operands[0].op == "tuple" else None, t.items


def _item_shape(t):
    if isinstance(t, ScalarType):
        return ()
    if isinstance(t, ArrayType) and t.is_static:
        return tuple(t.shape)
    raise NotImplementedError("the shapes of the arrays joined must be known at compile time")


def _joined(b, node, pieces):
    """The tuple operand's cotangent: one piece per item, reshaped to the item's shape if it differs."""
    _, types = _items(node)
    out = {}
    for k, (piece, t) in enumerate(zip(pieces, types)):
        shape = _item_shape(t)
        out[k] = piece if getattr(piece.type, "shape", None) == shape else b.op("reshape", piece, b.const(shape))
    return none_for_rest(node, out)


def concatenate(b, node, g):
    _, types = _items(node)
    shapes = [_item_shape(t) for t in types]
    axis = argument(node, 1, "axis", 0)
    if axis is None:
        flat = _pieces(b, g, [math.prod(s) for s in shapes], 0)
        return _joined(b, node, flat)
    axis %= len(shapes[0])
    return _joined(b, node, _pieces(b, g, [s[axis] for s in shapes], axis))


def stack(b, node, g):
    _, types = _items(node)
    shapes = [_item_shape(t) for t in types]
    axis = argument(node, 1, "axis", 0) % (len(shapes[0]) + 1)
    pieces = [b.op("getitem", g, index=along_axis(axis, k)) for k in range(len(shapes))]
    return _joined(b, node, pieces)


def hstack(b, node, g):
    _, types = _items(node)
    shapes = [_item_shape(t) or (1,) for t in types]
    axis = 0 if len(shapes[0]) == 1 else 1
    return _joined(b, node, _pieces(b, g, [s[axis] for s in shapes], axis))


def vstack(b, node, g):
    _, types = _items(node)
    shapes = [_item_shape(t) for t in types]
    rows = [s[0] if len(s) >= 2 else 1 for s in shapes]
    return _joined(b, node, _pieces(b, g, rows, 0))


def flip(b, node, g):
    return same_op(b, node, g)


def tile(b, node, g):
    """The copies of `x` become axes of their own (`(r0, x0, r1, x1, ...)`), then are summed away."""
    x = node.operands[0]
    shape = static_shape(x, "the tiled array")
    reps = argument(node, 1, "reps")
    reps = tuple(reps) if isinstance(reps, (tuple, list)) else (reps,)
    axes = max(len(shape), len(reps))
    shape_n = (1,) * (axes - len(shape)) + shape
    reps_n = (1,) * (axes - len(reps)) + reps
    split = tuple(d for pair in zip(reps_n, shape_n) for d in pair)
    summed = b.op("sum", b.op("reshape", g, b.const(split)), axis=tuple(range(0, 2 * axes, 2)))
    return none_for_rest(node, b.op("reshape", summed, b.const(shape)))


def diag(b, node, g):
    """1-D `v` -> a matrix with `v` on diagonal k: its cotangent is that diagonal of `g`. A matrix
    -> its diagonal k: the cotangent is `g` laid on diagonal k of a zero matrix, `np.eye(m, n, k)`
    times `g` padded to a column (k >= 0) or a row (k < 0)."""
    x = node.operands[0]
    shape = static_shape(x, "the array")
    k = argument(node, 1, "k", 0)
    if len(shape) == 1:
        return none_for_rest(node, b.op("diag", g, b.const(k)))
    m, n = shape
    length = static_shape(node, "the diagonal")[0]
    mask = b.op("eye", b.const(m), b.const(n), b.const(k))
    laid = g if length == (m if k >= 0 else n) else b.op("pad", g, b.const((0, (m if k >= 0 else n) - length)))
    if k >= 0:
        laid = b.op("expand_dims", laid, b.const(-1))
    return none_for_rest(node, b.op("mul", mask, laid))


def diff(b, node, g):
    """`x[1:] - x[:-1]` along the axis, n times: each step sends `g` back as `g[k-1] - g[k]`."""
    if any(name in node.attrs for name in ("prepend", "append")) or "prepend" in node.attrs.get("kw", ()) \
            or "append" in node.attrs.get("kw", ()):
        raise NotImplementedError("np.diff with `prepend` or `append`")
    r = known_rank(node.operands[0])
    times, axis = argument(node, 1, "n", 1), argument(node, 2, "axis", -1) % r
    for _ in range(times):
        before = tuple((1, 0) if a == axis else (0, 0) for a in range(r))
        after = tuple((0, 1) if a == axis else (0, 0) for a in range(r))
        g = b.op("sub", b.op("pad", g, b.const(before)), b.op("pad", g, b.const(after)))
    return none_for_rest(node, g)


def triu(b, node, g):
    return same_op(b, node, g)


def take(b, node, g):
    """`np.take(x, idx, axis)`: see `gather`."""
    x, idx = node.operands[:2]
    return none_for_rest(node, gather(b, x, idx, argument(node, 2, "axis"), g))


def gather(b, x, idx, axis, g):
    """The cotangent of `x` in `np.take(x, idx, axis)`. An index may repeat, so the cotangent is
    gathered back through a one-hot table `hit[..., j] = idx[...] == j` (a tensordot adds the
    repeats up)."""
    shape = static_shape(x, "the array")
    n = math.prod(shape) if axis is None else shape[axis % len(shape)]
    at = 0 if axis is None else axis % len(shape)
    idx_rank = known_rank(idx, "the indices")
    if idx.op == "const" or idx.op == "tuple":      # wrapped into range at compile time
        wrapped = b.const(_nested_tuple(np.mod(np.asarray(static_value(idx, "the indices")), n).tolist()))
    else:
        wrapped = b.op("np_mod", idx if isinstance(idx.type, ArrayType) else b.op("asarray", idx), b.const(n))
    hit = b.op("astype", b.op("eq", b.op("expand_dims", wrapped, b.const(-1)), b.op("arange", b.const(n))),
               dtype=np_dtype("float64"))
    axes = (tuple(range(at, at + idx_rank)), tuple(range(idx_rank)))
    gathered = b.op("tensordot", g, hit, axes=axes)
    if axis is None:
        return b.op("reshape", gathered, b.const(shape))
    return b.op("moveaxis", gathered, b.const(-1), b.const(at))


def _nested_tuple(value):
    return tuple(_nested_tuple(v) for v in value) if isinstance(value, list) else value


def sum_to(b, node, g):
    """`_sum_to(x, like)` summed broadcast axes away: its cotangent is broadcast back to x's shape."""
    return (b.op("broadcast_to", g, b.shape_of(node.operands[0])), None)


def getitem(b, node, g):
    """The cotangent lands where the index read: `z = np.zeros_like(x); z[index] = g` for basic
    indices (ints, slices, None, ...), which never name an element twice; `np.add.at(z, index, g)`
    for an index by arrays (a gather, a mask), where repeated elements add up."""
    x = node.operands[0]
    index = node.attrs["index"]
    gathers = any(not isinstance(o.type, ScalarType) for o in node.operands[1:])
    zero = b.op("zeros_like", x)
    b.op("add_at" if gathers else "setitem", zero, g, *node.operands[1:], index=shift_refs(index, 1))
    return none_for_rest(node, zero)


def shift_refs(index, by: int):
    """The index with each `$k` renumbered `$(k + by)` (its operands moved `by` places right)."""
    def moved(p):
        return OperandRef(p.index + by) if isinstance(p, OperandRef) else p
    items = [slice(moved(i.start), moved(i.stop), moved(i.step)) if isinstance(i, slice) else moved(i) for i in index]
    return type(index)(items)


# --- Python's min/max and creation --------------------------------------------------------------
def python_extreme(relation: str):
    """Python's `max(a, b, ...)` / `min(a, b, ...)`: the first operand equal to the result takes
    the gradient. `max(v)` of one 1-D array is `np.max(v)`."""
    def rule(b, node, g):
        operands = node.operands
        if len(operands) == 1:
            return extreme(b, node, g)
        if len(operands) == 2:
            return choose(b, operands[0], operands[1], g, relation)
        zero, taken, out = b.const(0.0), None, []
        for x in operands:
            hit = b.op("eq", x, node)
            if taken is not None:
                hit = b.op("logical_and", hit, b.op("logical_not", taken))
            out.append(b.op("where", hit, g, zero))
            taken = hit if taken is None else b.op("logical_or", taken, hit)
        return tuple(out)
    rule.__name__ = f"python_{'max' if relation == 'ge' else 'min'}"
    return rule


def constant(b, node, g):
    """The result depends on the operands' shapes (or is a fixed grid), not on their values."""
    return (None,) * len(node.operands)


def full(b, node, g):
    """`np.full(shape, v)` / `np.full_like(a, v)`: every element is `v`."""
    return none_for_rest(node, None, g)


def linspace(b, node, g):
    """`start + (stop - start) * t` for the grid `t = np.linspace(0.0, 1.0, num)`."""
    start, stop = node.operands[:2]
    if node.attrs.get("retstep") or (rank(start) or 0) > 0 or (rank(stop) or 0) > 0:
        raise NotImplementedError("np.linspace of arrays or with `retstep`")
    t = b.op("linspace", b.const(0.0), b.const(1.0), *node.operands[2:], **node.attrs)
    g_stop = b.op("sum", b.op("mul", g, t))
    return none_for_rest(node, b.op("sub", b.op("sum", g), g_stop), g_stop)
