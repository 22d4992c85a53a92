"""VJP rules of the ops whose result copies elements of an operand to other places: `np.sort` (a
permutation of each line), `np.repeat` (each element several times in a row), `np.pad` (the
borders copy elements near them) and `np.add.reduceat` (segment sums, the gradient of `np.repeat`).

The cotangent of each copy is added back onto the element it copies:

- sort: `gx[perm] = g` with `perm = np.argsort(x, kind='stable')`, the order np.sort keeps equal
  elements in; along an axis of an n-D array the other axes are indexed by `np.arange` columns.
- repeat: one count for all, a new axis of the copies summed away; a count per element known at
  compile time, segment sums `np.add.reduceat(g, starts, axis)` over the elements copied at least
  once (reduceat gives an empty segment a wrong sum, so those elements take zeros instead); counts
  known only at run time, `np.add.at` onto the element each copy came from.
- pad: per padded axis, the middle slice of `g` plus each run of the border (consecutive copies of
  consecutive elements, either way, or of one element) laid back onto the elements it copies; in
  the modes whose border combines elements (linear_ramp, mean, reflect_type='odd'), the border's
  cotangent contracted with the border rows of the axis's Jacobian; in maximum/minimum, summed
  onto the extreme elements near the border.

Where each copy came from is decided at compile time from the op's arguments (graph/vjp_common.py),
but for the sorting permutation and run-time counts.
"""

from __future__ import annotations

import math

import numpy as np

from .literals import OperandRef
from .vjp_arrays import along_axis
from .vjp_common import (argument, argument_node, differentiable, known_rank, none_for_rest, np_dtype, rank,
                         static_shape)


# --- sort: a permutation of each line -------------------------------------------------------------
def sort(b, node, g):
    """Sorted element i of a line came from `perm[i]` of that line: its cotangent goes back there."""
    x = node.operands[0]
    axis = argument(node, 1, "axis", -1)
    if axis is None:
        return none_for_rest(node, b.op("reshape", unpermute(b, b.op("ravel", x), g, 0), b.shape_of(x)))
    return none_for_rest(node, unpermute(b, x, g, axis))


def unpermute(b, x, g, axis: int):
    """`gx[..., perm, ...] = g` into zeros, `perm = np.argsort(x, axis, kind='stable')`: the inverse
    of `np.take_along_axis(x, perm, axis)`. The other axes are indexed by `np.arange` columns,
    which broadcast against `perm`."""
    r = known_rank(x, "the sorted array")
    if r == 0:
        raise NotImplementedError("np.sort of a 0-d array along an axis")
    axis %= r
    shape = static_shape(x, "the sorted array") if r > 1 else None
    perm = b.op("argsort", x, **({"axis": axis} if r > 1 else {}), kind="stable")
    parts = [perm if k == axis else arange_column(b, shape[k], r - 1 - k) for k in range(r)]
    gx = b.op("zeros_like", x)
    b.op("setitem", gx, g, *parts, index=tuple(OperandRef(2 + k) for k in range(r)))
    return gx


def arange_column(b, n: int, trailing: int):
    """`np.arange(n)` with `trailing` axes of length 1 after it, to index one axis of `trailing + 1`."""
    column = b.op("arange", b.const(n))
    return column if trailing == 0 else b.op("reshape", column, b.const((n,) + (1,) * trailing))


# --- repeat: each element copied `count` times in a row --------------------------------------------
def repeat(b, node, g):
    """`np.repeat(x, repeats, axis)`; with axis=None the copies are of the flattened `x`."""
    x = node.operands[0]
    shape = static_shape(x, "the repeated array")
    axis = argument(node, 2, "axis")
    flat = axis is None
    along = 0 if flat else axis % len(shape)
    like = b.op("ravel", x) if flat else x
    line = (math.prod(shape),) if flat else shape
    try:
        counts = np.asarray(argument(node, 1, "repeats"))
    except NotImplementedError:                 # counts known only at run time
        gx = add_back(b, like, g, argument_node(node, 1, "repeats"), line[along], along)
    else:
        if counts.size == 1:
            split = line[:along + 1] + (int(counts.reshape(())),) + line[along + 1:]
            gx = b.op("sum", b.op("reshape", g, b.const(split)), axis=along + 1)
        else:
            gx = segment_sums(b, like, g, counts, along)
    return none_for_rest(node, b.op("reshape", gx, b.const(shape)) if flat else gx)


def segment_sums(b, like, g, counts, axis: int):
    """`g` summed along `axis` over consecutive segments of the given (compile-time) lengths, one
    per element of `like`: `np.add.reduceat` at the starts of the non-empty segments, zeros for
    the elements of empty ones (reduceat would give them the next element, not zero)."""
    filled = counts > 0
    if not filled.any():
        return b.op("zeros_like", like)
    starts = np.cumsum(counts) - counts
    sums = b.op("add_reduceat", g, b.const(tuple(starts[filled].tolist())), axis=axis)
    if filled.all():
        return sums
    gx = b.op("zeros_like", like)
    filled_at = b.op("asarray", b.const(tuple(np.flatnonzero(filled).tolist())))
    b.op("setitem", gx, sums, filled_at, index=along_axis(axis, OperandRef(2)))
    return gx


def add_back(b, like, g, counts, n: int, axis: int):
    """Counts known only at run time: `np.add.at` onto the element each copy came from,
    `np.repeat(np.arange(n), counts)` (an element repeated zero times gets nothing)."""
    source = b.op("repeat", b.op("arange", b.const(n)), counts)
    gx = b.op("zeros_like", like)
    b.op("add_at", gx, g, source, index=along_axis(axis, OperandRef(2)))
    return gx


def add_reduceat(b, node, g):
    """`np.add.reduceat(a, starts, axis)` with increasing compile-time starts sums consecutive
    segments: each element takes its segment's cotangent (`np.repeat` by the segment lengths);
    the elements before the first start take none."""
    a = node.operands[0]
    shape = static_shape(a, "the summed array")
    axis = argument(node, 2, "axis", 0) % len(shape)
    starts = [int(s) for s in np.ravel(argument(node, 1, "indices"))]
    if not starts or starts[0] < 0 or starts[-1] >= shape[axis] or any(s >= t for s, t in zip(starts, starts[1:])):
        raise NotImplementedError("np.add.reduceat with indices that are not increasing and in range")
    lengths = np.diff(starts + [shape[axis]])
    ga = b.op("repeat", g, b.const(tuple(lengths.tolist())), axis=axis)
    if starts[0]:
        ga = b.op("pad", ga, b.const(tuple((starts[0], 0) if k == axis else (0, 0) for k in range(len(shape)))))
    return none_for_rest(node, ga)


# --- pad: the borders copy elements near them ------------------------------------------------------
COPYING = ("edge", "reflect", "symmetric", "wrap")
LINEAR = ("linear_ramp", "mean")               # each border element a fixed combination of x's elements
EXTREMES = {"maximum": "max", "minimum": "min"}  # each border element the extreme of elements near it
JACOBIAN_LIMIT = 1 << 20                      # elements of the per-axis Jacobian a linear mode builds
LITERAL_LIMIT = 1 << 12                       # elements of its border rows written into the gradient


def pad(b, node, g):
    """`np.pad(x, pad_width, mode)`: the middle of `g` is `x`'s own. In the copying modes each
    border element adds its cotangent onto the element it copies; in the other linear modes
    (linear_ramp, mean, reflect_type='odd') the border's cotangent goes back through the border
    rows of the axis's Jacobian; in maximum/minimum to the extreme elements. NumPy pads one axis
    after the other (the later axes pad the earlier ones' borders too), so the borders fold back
    one axis at a time, the last first."""
    x = node.operands[0]
    shape = static_shape(x, "the padded array")
    mode = argument(node, 2, "mode", "constant")
    widths = pad_widths(argument(node, 1, "pad_width"), len(shape))
    if mode == "constant":
        return pad_constant(b, node, g, shape, widths)
    if mode not in COPYING + LINEAR + tuple(EXTREMES):
        raise NotImplementedError(f"np.pad with mode={mode!r} (the modes with a gradient: 'constant', "
                                  f"{', '.join(repr(m) for m in COPYING + LINEAR + tuple(EXTREMES))})"
                                  if isinstance(mode, str) else "np.pad with a function as its mode")
    options = {}
    if mode in ("reflect", "symmetric"):
        options["reflect_type"] = argument(node, None, "reflect_type", "even")
    stat_length = argument(node, None, "stat_length") if mode in ("mean",) + tuple(EXTREMES) else None
    for axis in reversed(range(len(shape))):
        (before, after), n = widths[axis], shape[axis]
        if not (before or after):
            continue
        if mode in EXTREMES:
            g = fold_extreme(b, x, g, axis, widths, mode, stat_length)
        elif mode in COPYING and options.get("reflect_type", "even") == "even":
            source = np.pad(np.arange(n), (before, after), mode=mode)     # where each element came from
            g = fold_border(b, g, axis, len(shape), source, before, n)
        else:
            if stat_length is not None:
                options["stat_length"] = (pad_widths(stat_length, len(shape))[axis],) * 2
            jacobian = border_jacobian(n, before, after, mode, options).astype(float_dtype(x))
            g = fold_linear(b, g, axis, len(shape), jacobian, before, n)
    return none_for_rest(node, g)


def fold_extreme(b, x, g, axis: int, widths: list, mode: str, stat_length):
    """Modes maximum/minimum: each border element along `axis` is the extreme of the first (last)
    `stat_length` elements of the array padded along the earlier axes only (recomputed here);
    the border's summed cotangent goes to the elements equal to that extreme, shared among ties."""
    r, n = len(widths), static_shape(x)[axis]
    before, after = widths[axis]
    earlier = tuple(tuple(w) if k < axis else (0, 0) for k, w in enumerate(widths))
    attrs = {"mode": mode} if stat_length is None else {"mode": mode, "stat_length": stat_length}
    y = b.op("pad", x, b.const(earlier), **attrs) if any(map(any, earlier)) else x
    first, last = (n, n) if stat_length is None else (min(s, n) for s in pad_widths(stat_length, r)[axis])
    total = b.op("getitem", g, index=along_axis(axis, slice(before, before + n)))
    for (start, stop), (low, high) in (((0, before), (0, first)), ((before + n, before + n + after), (n - last, n))):
        if start == stop:
            continue
        border = b.op("sum", b.op("getitem", g, index=along_axis(axis, slice(start, stop))), axis=axis, keepdims=True)
        window = y if (low, high) == (0, n) else b.op("getitem", y, index=along_axis(axis, slice(low, high)))
        hit = b.op("eq", window, b.op(EXTREMES[mode], window, axis=axis, keepdims=True))
        count = b.op("sum", hit, axis=axis, keepdims=True, dtype=np_dtype(float_dtype(x)))
        share = b.op("where", hit, b.op("truediv", border, count), b.const(0.0))
        if (low, high) != (0, n):
            share = b.op("pad", share, b.const(tuple((low, n - high) if k == axis else (0, 0) for k in range(r))))
        total = b.op("add", total, share)
    return total


def pad_widths(pad_width, r: int) -> list:
    """`[before, after]` per axis, from any form np.pad takes (an int, a pair, a pair per axis)."""
    return np.broadcast_to(np.asarray(pad_width, dtype=int), (r, 2)).tolist()


def pad_constant(b, node, g, shape, widths):
    """The middle of `g` goes to `x`; a scalar `constant_values` that carries a gradient takes the rest."""
    middle = b.op("getitem", g, index=tuple(slice(before, before + n) for (before, _), n in zip(widths, shape)))
    out = list(none_for_rest(node, middle))
    value = argument_node(node, None, "constant_values")
    if value is not None and value.op != "const" and differentiable(value):
        if rank(value) != 0:
            raise NotImplementedError("np.pad with `constant_values` per axis that carry a gradient")
        out[node.operands.index(value)] = b.op("sub", b.op("sum", g), b.op("sum", middle))
    return tuple(out)


def fold_border(b, g, axis: int, r: int, source, before: int, n: int):
    """`g`, padded along `axis` by copies of the elements `source` names, folded back to length n:
    the middle slice plus each run of the border laid back onto the elements it copies."""
    total = b.op("getitem", g, index=along_axis(axis, slice(before, before + n)))
    for start, stop, step in border_runs(source, before, n):
        if step < 0:                                # copies of the elements in reverse
            piece = b.op("getitem", g, index=along_axis(axis, slice(stop - 1, start - 1 if start else None, -1)))
        else:
            piece = b.op("getitem", g, index=along_axis(axis, slice(start, stop)))
        if step == 0:                               # copies of one element (mode 'edge')
            piece = b.op("sum", piece, axis=axis, keepdims=True)
        low, length = int(min(source[start], source[stop - 1])), 1 if step == 0 else stop - start
        if length != n:
            piece = b.op("pad", piece, b.const(tuple((low, n - low - length) if k == axis else (0, 0)
                                                     for k in range(r))))
        total = b.op("add", total, piece)
    return total


def float_dtype(x) -> str:
    """The dtype of a float `x` (float32 stays float32), else float64."""
    dtype = getattr(x.type, "dtype", None)
    return dtype if dtype and dtype.startswith("float") else "float64"


def border_jacobian(n: int, before: int, after: int, mode: str, options: dict):
    """Row k: how padded element k along one axis depends on the n elements of that axis (`np.pad`
    of the identity matrix; a mode's constants, `end_values`, do not enter it)."""
    if n * (n + before + after) > JACOBIAN_LIMIT:
        raise NotImplementedError(f"np.pad with mode={mode!r} along an axis of {n} elements (its gradient "
                                  f"is built from the {n + before + after} x {n} Jacobian)")
    return np.pad(np.eye(n), ((before, after), (0, 0)), mode=mode, **options)


def fold_linear(b, g, axis: int, r: int, jacobian, before: int, n: int):
    """`g`, padded along `axis` by combinations of elements (the rows of `jacobian`), folded back:
    the middle slice plus each border's cotangent contracted with its rows of the Jacobian, cut to
    the columns (elements) they combine and laid back there."""
    total = b.op("getitem", g, index=along_axis(axis, slice(before, before + n)))
    for start, stop in ((0, before), (before + n, len(jacobian))):
        rows = jacobian[start:stop]
        used = np.flatnonzero(np.any(rows != 0, axis=0))
        if not used.size:
            continue
        low, high = int(used[0]), int(used[-1]) + 1
        if (stop - start) * (high - low) > LITERAL_LIMIT:
            raise NotImplementedError(f"np.pad whose border combines {high - low} elements of an axis (its "
                                      f"gradient would spell out a {stop - start} x {high - low} matrix)")
        weights = b.const(tuple(tuple(row) for row in rows[:, low:high].tolist()))
        if rows.dtype != np.float64:
            weights = b.op("asarray", weights, dtype=rows.dtype.type)
        piece = b.op("getitem", g, index=along_axis(axis, slice(start, stop)))
        back = b.op("tensordot", piece, weights, axes=(axis, 0))
        if axis != r - 1:
            back = b.op("moveaxis", back, b.const(-1), b.const(axis))
        if high - low != n:
            back = b.op("pad", back, b.const(tuple((low, n - high) if k == axis else (0, 0) for k in range(r))))
        total = b.op("add", total, back)
    return total


def border_runs(source, before: int, n: int) -> list:
    """`(start, stop, step)` of the runs of the border positions (before and after the middle)
    whose sources step by `step` (1, -1, or 0: one element copied again and again)."""
    runs = []
    for low, high in ((0, before), (before + n, len(source))):
        start = low
        while start < high:
            step = int(source[start + 1] - source[start]) if start + 1 < high else 1
            step = step if abs(step) <= 1 else 1
            stop = start + 1
            while stop < high and source[stop] - source[stop - 1] == step:
                stop += 1
            runs.append((start, stop, step))
            start = stop
    return runs
