"""Replace pure computations on compile-time values (and on static shapes) by their results."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ..alias import Aliases, arg_mapping, carried_count
from ..evaluate import evaluate
from ..ir import Graph, Node, literal_const
from ..literals import is_literal
from ..types import ArrayType, type_of_value
from ..value_size import operands_too_big, too_big

# Largest array (in elements) folding will build as an intermediate value. Array results are never
# kept as constants (only literals are: numbers, tuples, NumPy scalars, dtypes), so a big array is
# never baked into a graph; this limit also keeps folding from allocating one.
FOLD_LIMIT = 4096
_SHAPE_OPS = ("dim", "shape", "ndim", "size")


def run(graph: Graph) -> bool:
    """Fold nodes whose operands are all constants, and shape queries on static shapes.

    Before:
      graph f(%x: f32[4,3]) -> f32[4,3]
        %0 = dim(%x) {axis=0} : int
        %1 = mul(%0, 2) : int
        %2 = sqrt(2.0) : f64[]
        %3 = float(%2) : float
        %4 = mul(%x, %3) : f32[4,3]
        %5 = add(%4, %1) : f32[4,3]
        return %5
    After (nodes left without users go to DCE):
      graph f(%x: f32[4,3]) -> f32[4,3]
        %0 = dim(%x) {axis=0} : int
        %1 = mul(4, 2) : int
        %2 = sqrt(2.0) : f64[]
        %3 = float(np.float64(1.4142135623730951)) : float
        %4 = mul(%x, 1.4142135623730951) : f32[4,3]
        %5 = add(%4, 8) : f32[4,3]
        return %5

    Only literal results become constants; a result that warns or raises at compile time is
    left for run time, so the user sees the same warning or exception as eagerly.
    """
    return _fold(graph, {})


def _fold(graph: Graph, known: dict) -> bool:
    changed = False
    written = None   # memory some node of this graph may write (an array value there is not constant)
    for node in list(graph.nodes):
        if node.regions:
            changed |= _propagate_into_regions(node)
            for region in node.regions:
                changed |= _fold(region, {})
        if node.op == "const":
            known[node.id] = node.value
            continue
        value = _value(node, known)
        if value is _UNKNOWN or isinstance(value, (list, dict)):
            continue    # a list or dict is made anew at each call: code may fill it (a loop's tape)
        if isinstance(value, np.ndarray):
            # an array is mutable: its value is known only if nothing may write its memory
            if written is None:
                aliases = Aliases(graph)
                written = (aliases, aliases.all_writes())
            if written[0].of(node) & written[1]:
                continue
        known[node.id] = value
        if not graph.users(node) and not graph.is_output(node):
            continue  # dead: DCE's business
        if is_literal(value) and not isinstance(value, np.ndarray):
            replacement = graph.add("const", (), {"value": value}, type_of_value(value), node.span, before=node)
            graph.replace_all_uses(node, replacement)
            known[replacement.id] = value
            changed = True
    return changed


def _propagate_into_regions(node: Node) -> bool:
    """A region argument that receives a literal constant (and is not loop-carried) becomes it."""
    changed = False
    for region in node.regions:
        mapping = arg_mapping(node, region)
        n = carried_count(node)
        for k, (arg, outer) in enumerate(zip(region.args, mapping)):
            if outer is None or not literal_const(outer) or not region.users(arg):
                continue
            if (node.op == "for_range" and 1 <= k <= n) or (node.op == "while" and k < n):
                continue
            const = region.add("const", (), {"value": outer.value}, outer.type, outer.span,
                               before=region.nodes[0] if region.nodes else None)
            region.replace_all_uses(arg, const)
            changed = True
    return changed


class _Unknown:
    pass


_UNKNOWN = _Unknown()


def _value(node: Node, known: dict) -> Any:
    if node.op in _SHAPE_OPS:
        folded = _shape_query(node)
        if folded is not _UNKNOWN:
            return folded
    if not node.is_pure or not node.opdef.foldable or node.regions:
        return _UNKNOWN
    if any(o.id not in known for o in node.operands):
        return _UNKNOWN
    if not _small_enough(node):
        return _UNKNOWN
    values = [known[o.id] for o in node.operands]
    if operands_too_big(values) or len(values) == 2 and too_big(node.opdef.fn, *values):
        return _UNKNOWN   # `10**10**10`, `"a" * 10**12`: left for run time, as eager Python computes it
    try:
        with warnings.catch_warnings(), np.errstate(all="raise"):
            warnings.simplefilter("error")
            value = evaluate(node, [known[o.id] for o in node.operands])
    except Exception:
        return _UNKNOWN
    if isinstance(value, np.ndarray) and value.size > FOLD_LIMIT:
        return _UNKNOWN
    return value


def _small_enough(node: Node) -> bool:
    """The result's size is known from its type and within FOLD_LIMIT (or it is not an array)."""
    t = node.type
    if isinstance(t, ArrayType):
        return t.shape is not None and None not in t.shape and math.prod(t.shape) <= FOLD_LIMIT
    return True


def _shape_query(node: Node) -> Any:
    t = node.operands[0].type
    if not isinstance(t, ArrayType) or t.shape is None:
        return _UNKNOWN
    if node.op == "ndim":
        return len(t.shape)
    if node.op == "dim":
        axis = node.attrs["axis"]
        if not isinstance(axis, int) or not -len(t.shape) <= axis < len(t.shape):
            return _UNKNOWN
        return t.shape[axis] if t.shape[axis] is not None else _UNKNOWN
    if None in t.shape:
        return _UNKNOWN
    return tuple(t.shape) if node.op == "shape" else math.prod(t.shape)
