"""The four steps of `np.histogram(a, bins=int, ...)` as graph ops: what generated code calls, and their types.

The front end (transpiler/lower/histogram.py) splits a histogram with a number of equal bins into

    span   = hist_range(a, bins, range)        # (first edge, last edge), NumPy's errors included
    edges  = hist_edges(a, span, bins)         # np.linspace over the span, in NumPy's dtype
    index  = hist_index(a, span, edges)        # the bin of each element of a.ravel()
    counts = hist_counts(index, edges[, a, weights])

so that two histograms of the same values with the same bins share the first three (CSE) and differ
only in the counting. Each step gives NumPy 2's own result bit for bit: the same edge values and
types (a Python 0 and 1 for an empty array, the edges moved by 0.5 when they are equal), the bin
of each value corrected by comparing with its neighbouring edges (a value a rounding puts in the
wrong bin is moved back; the last edge belongs to the last bin), values outside an explicit range
dropped, and weighted counts summed in NumPy's blocks of `BLOCK` elements, whose per-block sums
are added in the weights' dtype (so the floating rounding is NumPy's too).

Two differences remain, both about failures: NumPy checks the weights' shape first, here the
counting step checks it, so data with a NaN *and* weights of the wrong shape raise the NaN's
ValueError instead of the shape's; and boolean data warn once per shared span, not per call.
"""

from __future__ import annotations

import math
import operator
import warnings

import numpy as np

from .types import OBJECT, ArrayType

BLOCK = 65536                    # NumPy's block: weighted sums are added block by block, as there
INTP = np.dtype(np.intp).name


def flat_data(a) -> np.ndarray:
    """`a` as the 1-d array NumPy bins: booleans as uint8."""
    values = np.asarray(a)
    if values.dtype == np.bool_:
        values = values.astype(np.uint8)
    return values.ravel()


def histogram_range(a, bins, range_=None):
    """(first edge, last edge) of the histogram, as NumPy makes them, after checking `bins`."""
    values = np.asarray(a)
    if values.dtype == np.bool_:
        warnings.warn(f"Converting input from {values.dtype} to {np.uint8} for compatibility.", RuntimeWarning,
                      stacklevel=2)
    values = flat_data(values)
    try:
        count = operator.index(bins)
    except TypeError as e:
        raise TypeError('`bins` must be an integer, a string, or an array') from e
    if count < 1:
        raise ValueError('`bins` must be positive, when an integer')
    if range_ is not None:
        low, high = range_
        if low > high:
            raise ValueError('max must be larger than min in range parameter.')
        if not (np.isfinite(low) and np.isfinite(high)):
            raise ValueError(f"supplied range of [{low}, {high}] is not finite")
    elif values.size == 0:
        low, high = 0, 1                      # Python ints: weak in the dtype of the edges
    else:
        low, high = values.min(), values.max()
        if not (np.isfinite(low) and np.isfinite(high)):
            raise ValueError(f"autodetected range of [{low}, {high}] is not finite")
    if low == high:                           # one value: a bin of width one around it
        low, high = low - 0.5, high + 0.5
    return low, high


def edge_dtype(low, high, values) -> np.dtype:
    """The dtype of the edges: the promotion of the span and the data, a float."""
    kind = np.result_type(low, high, values)
    return np.result_type(kind, float) if np.issubdtype(kind, np.integer) else kind


def histogram_edges(a, span, bins) -> np.ndarray:
    """The `bins + 1` equally spaced edges over `span`; more bins than the floats between them is an error."""
    low, high = span
    count = operator.index(bins)
    edges = np.linspace(low, high, count + 1, endpoint=True, dtype=edge_dtype(low, high, flat_data(a)))
    if np.any(edges[1:] <= edges[:-1]):
        raise ValueError(f'Too many bins for data range. Cannot create {count} finite-sized bins.')
    return edges


def unsigned_difference(a, b):
    """`a - b` for `a >= b`; between signed integers computed in their unsigned type, which holds it."""
    kind = np.result_type(a, b)
    if kind.kind != "i":
        return np.subtract(a, b, dtype=kind)
    return np.subtract(np.asarray(a, dtype=kind), np.asarray(b, dtype=kind), casting="unsafe",
                       dtype=np.dtype(kind.char.upper()))


def _bins_of(values, low, width, edges, upper) -> np.ndarray:
    """The bin of each value within the span: scaled, truncated, then checked against its edges.

    `upper[k]` is the right edge of bin k, and +inf for the last bin, which keeps the values
    on its right edge: one gather and one comparison where `edges[k + 1]` and a test of `k` take
    four passes (a value below the first edge, never seen, is left alone by both)."""
    count = edges.size - 1
    values = values.astype(edges.dtype, copy=False)
    index = (unsigned_difference(values, low) / width * count).astype(np.intp)
    index[index == count] = count - 1          # the last edge closes the last bin
    index[values < edges.take(index)] -= 1    # rounded up past its left edge
    index[values >= upper.take(index)] += 1   # rounded down below its right edge
    return index


def histogram_index(a, span, edges, bounded: bool = False) -> np.ndarray:
    """The bin of each element of `a.ravel()`; `len(edges) - 1` (one past the last bin) for the
    elements outside an explicit range (`bounded`), NaN included. Without a range every element
    is within the span its minimum and maximum made."""
    values = flat_data(a)
    low, high = span
    width = unsigned_difference(high, low)
    dropped = edges.size - 1
    upper = edges[1:].copy()
    upper[-1] = np.inf
    index = np.empty(values.size, np.intp)
    for start in range(0, values.size, BLOCK):
        block = values[start:start + BLOCK]
        if bounded:
            inside = block >= low
            inside &= block <= high
            if not inside.all():
                target = index[start:start + BLOCK]
                target[:] = dropped
                target[inside] = _bins_of(block[inside], low, width, edges, upper)
                continue
        index[start:start + BLOCK] = _bins_of(block, low, width, edges, upper)
    return index


def histogram_counts(index, edges, a=None, weights=None) -> np.ndarray:
    """How many elements fall in each bin (an intp count), or the sum of their `weights` in the
    weights' dtype, as NumPy sums them (float64 sums per block, added in the weights' dtype)."""
    count = edges.size - 1
    if weights is None:
        return np.bincount(index, minlength=count + 1)[:count]
    weights = np.asarray(weights)
    if weights.shape != np.shape(a):
        raise ValueError('weights should have the same shape as a.')
    weights = weights.ravel()
    kind = weights.dtype
    if not (np.can_cast(kind, np.double) or np.can_cast(kind, complex)):
        return np.histogram(a, edges, weights=weights.reshape(np.shape(a)))[0]  # NumPy sorts these
    counts = np.zeros(count, kind)
    for start in range(0, index.size, BLOCK):
        part, part_weights = index[start:start + BLOCK], weights[start:start + BLOCK]
        if kind.kind == "c":
            counts.real += np.bincount(part, weights=part_weights.real, minlength=count + 1)[:count]
            counts.imag += np.bincount(part, weights=part_weights.imag, minlength=count + 1)[:count]
        else:
            counts += np.bincount(part, weights=part_weights, minlength=count + 1)[:count].astype(kind)
    return counts


# --- Type rules (the op table's `infer` column) -----------------------------------------------------
def _const(node):
    return node.attrs["value"] if node.op == "const" else None


def _static_dtype(node):
    t = node.type
    return t.dtype if isinstance(t, ArrayType) else None


def range_type(nodes, attrs):
    """A tuple of two scalars whose kinds depend on the run-time path (Python ints for an empty array)."""
    return OBJECT


def _weak_range(span) -> bool:
    """The span is the data's (no `range`) or a `range` of Python numbers: its type is the data's."""
    if span.op != "hist_range" or len(span.operands) != 3:
        return False
    given = span.operands[2]
    if given.op == "const":
        value = given.attrs["value"]
        return value is None or isinstance(value, tuple) and all(type(v) in (int, float) for v in value)
    return given.op == "tuple" and all(o.op == "const" and type(o.attrs["value"]) in (int, float)
                                       for o in given.operands)


def edges_type(nodes, attrs) -> ArrayType:
    """`bins + 1` floats: the data's float dtype (float64 for integers) when the span is the data's
    or given as Python numbers, else not known before the call."""
    bins = _const(nodes[2])
    length = operator.index(bins) + 1 if isinstance(bins, (int, np.integer)) and bins >= 1 else None
    dtype = _static_dtype(nodes[0])
    if dtype is not None and _weak_range(nodes[1]):
        kind = np.dtype(dtype).kind
        dtype = dtype if kind == "f" else "float64" if kind in "biu" else None
    else:
        dtype = None
    return ArrayType(dtype, (length,))


def index_type(nodes, attrs) -> ArrayType:
    """One intp per element of the data."""
    shape = getattr(nodes[0].type, "shape", None)
    size = math.prod(shape) if shape is not None and None not in shape else None
    return ArrayType(INTP, (size,))


def counts_type(nodes, attrs) -> ArrayType:
    """One count per bin: intp, or the weights' dtype."""
    edges = nodes[1].type.shape[0] if isinstance(nodes[1].type, ArrayType) and nodes[1].type.shape else None
    length = edges - 1 if edges is not None else None
    return ArrayType(INTP if len(nodes) == 2 else _static_dtype(nodes[3]), (length,))
