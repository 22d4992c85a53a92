"""Which values of a namespace variant are NumPy arrays, and the writes that would compute a lazy array.

A variant compiled for Dask or array-API inputs (backends/emit_xp.py, backends/xp_interpreter.py)
still reads NumPy arrays: a layer's weights, globals, NumPy arguments. Eager code computes on them
with NumPy (`np.reshape(weight, shape)` is a NumPy array) and they meet the foreign input only at
an operation with it (`x - that`, where the foreign library's own rule makes the result its own).
The variant does the same: a node whose array operands are all NumPy (`numpy_nodes`) is computed as
the NumPy emitter and interpreter compute it, never by the namespace (which may not take NumPy
arrays: `dask.array.reshape` of a NumPy array fails).

A write of a foreign array into a NumPy array (`self.moving_mean[...] = m * mean`) or an index of
a NumPy array by one would convert it with `np.asarray`: on Dask a hidden `.compute()`.
`check_numpy_operands` refuses it at compile time, at the user's line.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from ..graph.backend_ops import Backend
from ..graph.ops import REGION_OPS
from ..graph.paths import Roots, parse_path
from ..graph.types import ScalarType, TupleType
from .xp_calls import refuse


def numpy_sources(graph, roots: Roots, numpy_args: Iterable[str]) -> set:
    """Ids of the arguments (by name in `numpy_args`) and parameters (weights, globals read through a
    path; their class is guarded per call) that hold NumPy arrays."""
    names = set(numpy_args)
    found = {a.id for a in graph.args if a.name in names}
    for p in graph.params:
        try:
            value = parse_path(p.attrs["path"]).resolve(roots)
        except Exception:   # a root known only at call time: not known to be NumPy
            continue
        if isinstance(value, np.ndarray):
            found.add(p.id)
    return found


def numpy_nodes(graph, sources: set) -> frozenset:
    """Ids of the nodes (of `graph` and its regions) whose value is a NumPy array in the variant: the
    sources, and every op with at least one such operand and no other operand that may be a
    foreign array (constants and numbers are NumPy values). Region results and region arguments
    are not known to be NumPy."""
    known = set(sources)
    visit(graph, known)
    return frozenset(known)


def visit(graph, known: set) -> None:
    """Add to `known` the nodes of `graph` (regions first) computed from NumPy values alone."""
    for node in graph.nodes:
        for region in node.regions:
            visit(region, known)
        if node.op in REGION_OPS or node.op in ("const", "arg", "param") or node.id in known:
            continue
        if any(o.id in known for o in node.operands) and not any(maybe_foreign(o, known) for o in node.operands):
            known.add(node.id)


def maybe_foreign(operand, known) -> bool:
    """The operand may hold a foreign array: not a constant, not known to be NumPy, not a number."""
    t = operand.type
    numbers = isinstance(t, ScalarType) or (isinstance(t, TupleType) and all(isinstance(i, ScalarType)
                                                                           for i in t.items))
    return operand.op != "const" and operand.id not in known and not numbers


def check_numpy_operands(node, numpy: frozenset, backend: Backend) -> None:
    """Refuse a write into (or an index of) a NumPy array with a foreign array: NumPy would convert
    the foreign array (a hidden `.compute()` on a lazy one)."""
    if node.op not in ("setitem", "inplace", "getitem") or node.id in numpy or not node.operands:
        return
    target = node.operands[0]
    if target.id not in numpy:
        return
    foreign = [o for o in node.operands[1:] if maybe_foreign(o, numpy)]
    if foreign:
        name = target.attrs["path"] if target.op == "param" else (target.name or "a NumPy array")
        action = "indexes the NumPy array" if node.op == "getitem" else "writes a non-NumPy value into the " \
                                                                          "NumPy array"
        raise refuse(node, backend, f"it {action} `{name}` (a weight, global or NumPy argument): NumPy "
                     f"would convert the {backend.name} array with np.asarray, a hidden .compute(); "
                     "keep the state in an array of the same library, or update it outside the function")

