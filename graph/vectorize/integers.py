"""The loop's bounds and the integer analysis of a body: affine forms over enclosing values, their ranges."""

from __future__ import annotations

from functools import partial

import numpy as np

from ..analysis.affine import INF, Affine, range_interval
from ..analysis.dependence import K
from ..ir import Node
from ..types import ArrayType
from .state import LoopState
from .values import SAME_SHAPE_OPS, Bail, DimKey, is_int_type, static_dim


def loop_bounds(st: LoopState) -> None:
    """Fill in `st.step`, `start`, `stop`, `trip` and `trip_aff` from the loop's range, or bail."""
    start, stop, step = st.loop.operands[:3]
    step_a = outer_affine(st, step)
    if not step_a.is_const or step_a.const == 0:
        raise Bail("the loop step is not a compile-time constant")
    st.step = step_a.const
    st.start = outer_affine(st, start)
    st.stop = outer_affine(st, stop)
    if st.start.is_const and st.stop.is_const:
        st.trip = len(range(st.start.const, st.stop.const, st.step))
        st.trip_aff = Affine.constant(st.trip)
        return
    if abs(st.step) != 1:
        raise Bail("the loop bounds are run-time values and the step is not 1 or -1")
    diff = (st.stop - st.start) * st.step
    if diff.interval(partial(key_interval, st))[0] < 0:
        raise Bail("cannot prove the run-time range is not negative")
    st.trip = None
    st.trip_aff = diff


def outer_affine(st: LoopState, g: Node) -> Affine:
    """The affine form of an integer value of an enclosing graph (over its nodes as symbols)."""
    if g.op == "const":
        v = g.value
        if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
            return Affine.constant(int(v))
        raise Bail(f"loop bound {v!r} is not an integer")
    static = static_dim(g)
    if static is not None:
        return Affine.constant(static)
    if g.op == "dim" and g.operands and isinstance(g.operands[0].type, ArrayType):
        key = dim_key(st, g.operands[0], g.attrs["axis"])
        if key.node is None and g.graph is st.graph:
            key.node = g
        return Affine.of(key)
    if g.op in ("add", "sub") and all(is_int_type(o.type) for o in g.operands):
        a, b = (outer_affine(st, o) for o in g.operands)
        return a + b if g.op == "add" else a - b
    if g.op == "neg" and is_int_type(g.operands[0].type):
        return -outer_affine(st, g.operands[0])
    if g.op == "mul" and all(is_int_type(o.type) for o in g.operands):
        a, b = (outer_affine(st, o) for o in g.operands)
        if a.is_const:
            return b * a.const
        if b.is_const:
            return a * b.const
    if not is_int_type(g.type):
        raise Bail(f"`{g.name or g.op}` is not an integer")
    return Affine.of(g)


def key_interval(st: LoopState, key) -> tuple:
    """Range of an affine symbol: the iteration counter, an enclosing loop index, a dim."""
    if key is K:
        return (0, INF if st.trip is None else max(st.trip - 1, 0))
    if isinstance(key, DimKey):
        return (0, INF)
    cached = st.interval_cache.get(id(key))
    if cached is not None:
        return cached
    st.interval_cache[id(key)] = (-INF, INF)   # guards recursion
    out = _symbol_interval(st, key)
    st.interval_cache[id(key)] = out
    return out


def _symbol_interval(st: LoopState, g) -> tuple:
    if not isinstance(g, Node):
        return (-INF, INF)
    if g.graph is st.scratch.g:
        outer = st.scratch.outer(g)
        if outer is None:
            return (-INF, INF)
        g = outer
    if g.op in ("dim", "len", "size"):
        return (0, INF)
    if g.op == "arg" and g.graph is not None and g.graph.parent is not None:
        parent, region = g.graph.parent, g.graph
        k = region.args.index(g)
        if parent.op == "for_range":
            carried = parent.attrs.get("carried", 0)
            if k == 0:
                try:
                    step = outer_affine(st, parent.operands[2])
                    lo = outer_affine(st, parent.operands[0]).interval(partial(key_interval, st))
                    hi = outer_affine(st, parent.operands[1]).interval(partial(key_interval, st))
                except Bail:
                    return (-INF, INF)
                if not step.is_const:
                    return (-INF, INF)
                r = range_interval(lo, hi, step.const)
                return r if r is not None else (-INF, INF)
            if k > carried:
                return key_interval(st, parent.operands[2 + k])
            return (-INF, INF)
        if parent.op == "if":
            return key_interval(st, parent.operands[1 + k])
        return (-INF, INF)
    try:
        a = outer_affine(st, g)
    except Bail:
        return (-INF, INF)
    if a.terms == ((g, 1),) and a.const == 0:
        return (-INF, INF)
    return a.interval(partial(key_interval, st))


def interval(st: LoopState, aff: Affine) -> tuple:
    return aff.interval(partial(key_interval, st))


def dim_key(st: LoopState, array: Node, axis: int) -> "DimKey":
    while array.op in SAME_SHAPE_OPS and array.operands:   # np.empty_like(x) has x's shape
        array = array.operands[0]
    key = st.dim_keys.get((array.id, axis))
    if key is None:
        key = st.dim_keys[(array.id, axis)] = DimKey(array, axis)
    return key
