"""VJP rules of the products: `@`, `np.dot`, `np.outer`, `np.tensordot`, `np.einsum`, and of the
sliding windows (`np.correlate`, `sliding_window_view`).

The cotangent of one factor is the product of the result's cotangent with the other factors,
contracted over the axes the factor does not have, then laid out in the factor's axis order:
`g @ y.T` for `x @ y`, a `np.tensordot` and a `np.transpose` for `np.tensordot`, an `np.einsum`
whose output subscripts are the factor's own for `np.einsum`.
"""

from __future__ import annotations

import itertools
import math
import string

from .vjp_common import argument, explicit_arguments, known_rank, np_dtype, rank, static_shape, static_value
from .vjp_elementwise import mul


def matmul(b, node, g):
    """`x @ y`: vectors are matrices with their missing axis put back, then taken away again."""
    x, y = node.operands[:2]
    rx, ry = known_rank(x, "the left operand"), known_rank(y, "the right operand")
    if rx == 1 and ry == 1:
        return (b.op("mul", g, y), b.op("mul", g, x))
    if rx == 1:                 # (k,) @ (..., k, n) -> (..., n)
        if ry == 2:
            gx = b.op("matmul", y, g)
        else:
            gx = b.op("squeeze", b.op("matmul", y, b.op("expand_dims", g, b.const(-1))), b.const(-1))
        gy = b.op("mul", b.op("expand_dims", x, b.const(-1)), b.op("expand_dims", g, b.const(-2)))
        return (gx, gy)
    if ry == 1:                 # (..., m, k) @ (k,) -> (..., m)
        gx = b.op("mul", b.op("expand_dims", g, b.const(-1)), y)
        if rx == 2:
            gy = b.op("matmul", g, x)
        else:
            gy = b.op("squeeze", b.op("matmul", b.op("expand_dims", g, b.const(-2)), x), b.const(-2))
        return (gx, gy)
    return (b.op("matmul", g, transpose_last(b, y, ry)), b.op("matmul", transpose_last(b, x, rx), g))


def transpose_last(b, node, r):
    return b.op("T", node) if r == 2 else b.op("swapaxes", node, b.const(-1), b.const(-2))


def dot(b, node, g):
    """`np.dot`: a product by a scalar, `@` for vectors and matrices, else a tensordot over the last
    axis of `x` and the second-to-last of `y`."""
    x, y = node.operands[:2]
    rx, ry = known_rank(x, "the left operand"), known_rank(y, "the right operand")
    if rx == 0 or ry == 0:
        return mul(b, node, g)
    if rx <= 2 and ry <= 2:
        return matmul(b, node, g)
    return contract(b, x, y, g, [rx - 1], [ry - 2 if ry >= 2 else 0])


def outer(b, node, g):
    x, y = node.operands[:2]
    fx = b.op("ravel", x)
    fy = b.op("ravel", y)
    return (b.op("reshape", b.op("matmul", g, fy), b.shape_of(x)),
            b.op("reshape", b.op("matmul", fx, g), b.shape_of(y)))


def tensordot(b, node, g):
    x, y = node.operands[:2]
    rx, ry = known_rank(x, "the left operand"), known_rank(y, "the right operand")
    axes = argument(node, 2, "axes", 2)
    if isinstance(axes, int):
        x_axes, y_axes = list(range(rx - axes, rx)), list(range(axes))
    else:
        x_axes, y_axes = ([a] if isinstance(a, int) else list(a) for a in axes)
    return contract(b, x, y, g, [a % rx for a in x_axes], [a % ry for a in y_axes]) + (None,) * (len(node.operands) - 2)


def contract(b, x, y, g, x_axes: list, y_axes: list) -> tuple:
    """Cotangents of `np.tensordot(x, y, axes=(x_axes, y_axes))`, whose result has the free axes
    of `x` then those of `y`."""
    rx, ry = rank(x), rank(y)
    x_free = [a for a in range(rx) if a not in x_axes]
    y_free = [a for a in range(ry) if a not in y_axes]
    g_of_y = tuple(range(len(x_free), len(x_free) + len(y_free)))
    gx = b.op("tensordot", g, y, axes=(g_of_y, tuple(y_free)))
    # gx has x's free axes, then the contracted ones in y's order
    gx = _in_order(b, gx, x_free + [x_axes[y_axes.index(a)] for a in sorted(y_axes)])
    gy = b.op("tensordot", x, g, axes=(tuple(x_free), tuple(range(len(x_free)))))
    gy = _in_order(b, gy, [y_axes[x_axes.index(a)] for a in sorted(x_axes)] + y_free)
    return (gx, gy)


def _in_order(b, value, axes: list):
    """`value`, whose axis k is axis `axes[k]` of the operand, transposed into the operand's order."""
    order = tuple(sorted(range(len(axes)), key=lambda k: axes[k]))
    return value if order == tuple(range(len(axes))) else b.op("transpose", value, b.const(order))


def einsum(b, node, g):
    """Each factor's cotangent is the einsum of `g` with the other factors, whose output is the
    factor's subscripts. `...` is spelled out in letters of its own first; a subscript repeated in
    a factor (a diagonal) is renamed and tied to the first by an `np.eye` factor; a subscript only
    the factor has is broadcast back. Size-1 axes broadcast against longer ones come back long:
    the transform sums them back."""
    spec, at = einsum_operands(node)
    factors = [node.operands[p] for p in at]
    subscripts, output = spelled_out(spec, [known_rank(f, "an einsum operand") for f in factors])
    out = [None] * len(node.operands)
    for k, (mine, factor) in enumerate(zip(subscripts, factors)):
        distinct, ties = untied(mine, set(spec) | set(output) | set("".join(subscripts)))
        others = [s for j, s in enumerate(subscripts) if j != k] + [pair for pair, _ in ties]
        seen = set(output).union(*others)
        kept = "".join(c for c in distinct if c in seen)
        shape = static_shape(factor, "an einsum operand") if ties else None
        eyes = [b.op("eye", b.const(shape[mine.index(pair[0])]), **same_dtype(factor)) for pair, _ in ties]
        gk = b.op("einsum", b.const(",".join([output] + others) + "->" + kept), g,
                  *[f for j, f in enumerate(factors) if j != k], *eyes)
        if kept != distinct:
            missing = tuple(i for i, c in enumerate(distinct) if c not in seen)
            gk = b.op("broadcast_to", b.op("expand_dims", gk, b.const(missing)),
                      _spread_shape(b, distinct, missing, subscripts, factors, factor))
        out[at[k]] = gk
    return tuple(out)


def einsum_operands(node) -> tuple:
    """The subscripts as one string and the position of each factor among the operands, from
    `np.einsum('ij,jk->ik', a, b)` or the interleaved `np.einsum(a, [0, 1], b, [1, 2], [0, 2])`."""
    operands = node.operands[:explicit_arguments(node)]
    first = operands[0]
    if first.op == "const" and isinstance(first.value, str):
        return first.value, list(range(1, len(operands)))
    positions = list(range(0, len(operands) - 1, 2))
    labels = [static_value(operands[p + 1], "the einsum subscripts") for p in positions]
    if len(operands) % 2:
        labels.append(static_value(operands[-1], "the einsum output subscripts"))
    letters = string.ascii_uppercase + string.ascii_lowercase        # NumPy's own: 0 is 'A', 26 is 'a'
    words = ["".join("..." if label is Ellipsis else letters[label] for label in word) for word in labels]
    return ",".join(words[:len(positions)]) + "".join("->" + w for w in words[len(positions):]), positions


def spelled_out(spec: str, ranks: list) -> tuple:
    """The subscripts of each operand and of the output with `...` replaced by letters of its own
    (aligned to the right, as its axes broadcast), and the output written out when implicit."""
    spec = spec.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    subscripts = inputs.split(",")
    widths = [r - len(s.replace("...", "")) for s, r in zip(subscripts, ranks) if "..." in s]
    free = [c for c in string.ascii_letters if c not in spec]
    ellipsis = "".join(free[:max(widths, default=0)])
    if not arrow:
        letters = "".join(s.replace("...", "") for s in subscripts)
        output = ("..." if widths else "") + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    subscripts = [s.replace("...", ellipsis[len(ellipsis) - (r - len(s) + 3):] if "..." in s else "")
                  for s, r in zip(subscripts, ranks)]
    return subscripts, output.replace("...", ellipsis)


def untied(mine: str, taken: set) -> tuple:
    """`mine` with each repeat of a subscript renamed to an unused letter, and the `(pair, letter)`
    ties (`"ij"`: j is a renamed i) the cotangent's `np.eye` factors make."""
    free = (c for c in string.ascii_letters if c not in taken)
    distinct, ties = "", []
    for c in mine:
        if c in distinct:
            renamed = next(free)
            ties.append((c + renamed, renamed))
            c = renamed
        distinct += c
    return distinct, ties


def same_dtype(factor) -> dict:
    """`dtype=` keeping a float32 factor's cotangent float32 (np.eye makes float64)."""
    dtype = getattr(factor.type, "dtype", None)
    return {"dtype": np_dtype(dtype)} if dtype and dtype.startswith("float") and dtype != "float64" else {}


def _spread_shape(b, distinct, missing, subscripts, factors, factor):
    """The shape the cotangent takes with the subscripts only `factor` has put back: the length
    of each subscript in the einsum (not a broadcast 1), or the factor's shape when not known."""
    try:
        shapes = [static_shape(f) for f in factors]
    except NotImplementedError:
        return b.shape_of(factor)
    lengths: dict = {}
    for s, shape in zip(subscripts, shapes):
        for c, n in zip(s, shape):
            lengths[c] = max(lengths.get(c, 1), n)
    own = static_shape(factor)
    return b.const(tuple(own[i] if i in missing else lengths.get(c, own[i]) for i, c in enumerate(distinct)))


# --- sliding windows ------------------------------------------------------------------------------
def correlate(b, node, g):
    """`np.correlate(a, v, mode)` is the 'valid' correlation of `a` padded by the mode: `v`'s
    cotangent correlates that padded `a` with `g`; `a`'s is the full convolution of `g` with `v`
    (a correlation with `v` reversed), cut back to `a`."""
    a, v = node.operands[:2]
    (la,), (lv,) = static_shape(a, "the signal"), static_shape(v, "the filter")
    mode = argument(node, 2, "mode", "valid")
    if la < lv or mode not in ("valid", "same", "full"):
        raise NotImplementedError("np.correlate of a signal shorter than its filter")
    before, after = {"valid": (0, 0), "same": (lv // 2, lv - 1 - lv // 2), "full": (lv - 1, lv - 1)}[mode]
    padded = a if before == after == 0 else b.op("pad", a, b.const((before, after)))
    gv = b.op("correlate", padded, g)
    spread = b.op("pad", g, b.const((lv - 1, lv - 1))) if lv > 1 else g
    ga = b.op("correlate", spread, b.op("flip", v))
    if before or after:
        ga = b.op("getitem", ga, index=(slice(before, before + la),))
    return (ga, gv) + (None,) * (len(node.operands) - 2)


# A window with at most this many offsets scatters offset by offset; a larger one axis by axis.
UNROLLED_OFFSETS = 64


def sliding_window_view(b, node, g):
    """Windows `out[..., i, ..., j] = x[..., i + j, ...]` along the window axes: element m of `x`
    gets every `g` entry whose window start plus offset is m. Up to 64 offsets, one in-place add
    per offset scatters the cotangent into zeros (`z[..., j:j + n, ...] += g[..., j]`, whole-array
    slices); a larger window is undone one axis at a time by `anti_diagonals`."""
    x = node.operands[0]
    shape = static_shape(x, "the array")
    window, axes = _windows(node, len(shape))
    dtype = getattr(x.type, "dtype", None)
    if math.prod(window) > UNROLLED_OFFSETS:
        for a, w in reversed(list(zip(axes, window))):
            g = anti_diagonals(b, g, a, w, shape[a])
        return (g,) + (None,) * (len(node.operands) - 1)
    zero = b.op("zeros", b.const(shape), dtype=np_dtype(dtype)) if dtype else b.op("zeros_like", x)
    for offset in itertools.product(*(range(w) for w in window)):
        index = [slice(None)] * len(shape)
        for a, j, w in zip(axes, offset, window):
            index[a] = slice(j, j + shape[a] - w + 1)
        target = b.op("getitem", zero, index=tuple(index))
        b.op("inplace", target, b.op("getitem", g, index=(Ellipsis,) + offset), op="add")
    return (zero,) + (None,) * (len(node.operands) - 1)


def _windows(node, r: int) -> tuple:
    """(window sizes, their axes) of a `sliding_window_view` node, axes counted from 0."""
    window, axis = argument(node, 1, "window_shape"), argument(node, 2, "axis")
    window = tuple(window) if isinstance(window, (tuple, list)) else (window,)
    axes = tuple(range(r)) if axis is None else tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    axes = tuple(a % r for a in axes)
    if len(axes) != len(window) or len(set(axes)) != len(axes) \
            or not all(isinstance(w, int) and w > 0 for w in window):
        raise NotImplementedError("np.lib.stride_tricks.sliding_window_view with a repeated axis or a window "
                                  "not matching its axes")
    return window, axes


def anti_diagonals(b, g, axis: int, window: int, n: int):
    """Undo the last window axis of `g` (offsets along `axis`, whose length in `x` is `n`): entry
    (i, j) goes to element i + j. Each row i of the (rows, window) pairs is shifted right by i
    (padding every row by `rows` zeros and reading the flat buffer with rows one shorter), then
    the rows are added."""
    rows = n - window + 1
    pairs = b.op("moveaxis", g, b.const(axis), b.const(-2))         # (..., rows, window)
    lead = static_shape(pairs, "the windows")[:-2]
    padded = b.op("pad", pairs, b.const(((0, 0),) * len(lead) + ((0, 0), (0, rows))))
    flat = b.op("reshape", padded, b.const(lead + (rows * (window + rows),)))
    shifted = b.op("reshape", b.op("getitem", flat, index=(Ellipsis, slice(None, -rows))), b.const(lead + (rows, n)))
    return b.op("moveaxis", b.op("sum", shifted, axis=-2), b.const(-1), b.const(axis))
