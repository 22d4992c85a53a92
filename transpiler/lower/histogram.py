"""Lowering `np.histogram(a, bins=int, range=..., weights=...)` to the op table's histogram steps.

A histogram with a number of equal bins becomes `hist_range` (the span), `hist_edges`,
`hist_index` (the bin of each element) and `hist_counts` (graph/histogram.py): two histograms of
the same data with the same bins then share the span, the edges and the bins of the elements
(common subexpression elimination), and differ only in what they count. The call's value is the
tuple `(counts, edges)`, so `np.histogram(...)[1]` is the edges node itself.

Forms kept as NumPy's own call (an opaque `call` node): `bins` that is not an integer (a string
estimator, an array of edges), a `range` that is not a pair, `density` other than None/False, and
arguments NumPy would not bind.
"""

from __future__ import annotations

import inspect
from typing import Any, Optional

import numpy as np

from ...graph.ir import Node
from ...graph.types import ScalarType
from ..values import Seq, Static, is_static, static_value

_SIGNATURE = inspect.signature(np.histogram)


def _integer_bins(bins: Any) -> bool:
    """A compile-time integer, or a run-time Python int."""
    if is_static(bins):
        value = static_value(bins)
        return isinstance(value, (int, np.integer))
    return isinstance(bins, Node) and bins.type == ScalarType("int")


def _range_operand(given: Any) -> Any:
    """None, or a pair (compile-time or of run-time values); `False` when not one of those."""
    if is_static(given):
        value = static_value(given)
        if value is None:
            return Static(None)
        if isinstance(value, (tuple, list)) and len(value) == 2 and \
                all(isinstance(v, (int, float, np.integer, np.floating)) for v in value):
            return Static(tuple(value))
        return False
    if isinstance(given, Seq) and len(given.items) == 2:
        return Seq(list(given.items), "tuple")
    return False


def lower_histogram(state, args: list, kwargs: dict, span) -> Optional[Seq]:
    """The histogram's `(counts, edges)` from the four steps, or None for a form kept as a call."""
    try:
        bound = _SIGNATURE.bind(*args, **kwargs)
    except TypeError:
        return None
    given = bound.arguments
    data = given["a"]
    bins = given.get("bins", Static(10))
    density = given.get("density", Static(None))
    weights = given.get("weights", Static(None))
    bounds = _range_operand(given.get("range", Static(None)))
    if bounds is False or not _integer_bins(bins):
        return None
    if not (is_static(density) and static_value(density) in (None, False)):
        return None
    bounded = not (isinstance(bounds, Static) and bounds.value is None)
    data = state.operand(data, span)      # one node for the four steps (a list literal is built once)
    extent = state.emit("hist_range", [data, bins, bounds], {}, span)
    edges = state.emit("hist_edges", [data, extent, bins], {}, span)
    index = state.emit("hist_index", [data, extent, edges], {"bounded": bounded} if bounded else {}, span)
    weighted = not (is_static(weights) and static_value(weights) is None)
    counts = state.emit("hist_counts", [index, edges] + ([data, weights] if weighted else []), {}, span)
    return Seq([counts, edges], "tuple")

