"""Hoist loop-invariant pure computations out of `for_range` and `while` regions."""

from __future__ import annotations

import numbers
from typing import Optional

from ..alias import Aliases, holds_memory
from ..ir import Graph, Node
from ..types import ArrayType

# Ops that, on operands of static type whose result type inferred statically, cannot raise: the
# shape rule has already checked broadcasting, matmul and reshape sizes, and transposition.
_SHAPE_SAFE = {"matmul", "T", "transpose", "reshape", "astype", "copy", "tuple", "tuple_get"}
_VALUE_ERRORS = {"pow", "power", "float_power"}  # int ** -1 raises ValueError whatever the shapes


def run(graph: Graph) -> bool:
    """Move pure nodes whose operands do not change across iterations to before the loop.

    Before:
      graph f(%x: f64[4,3], %w: f64[3,3]) -> f64[3]
        %acc = zeros(3) : f64[3]
        %0 = for_range(0, 4, 1, %acc, %x, %w) {carried=1} : tuple(f64[3])
          body(%i: int, %acc.1: f64[3], %x.1: f64[4,3], %w.1: f64[3,3]) {
            %1 = T(%w.1) : f64[3,3]
            %2 = getitem(%x.1, %i) {index=[$1]} : f64[3]
            %3 = matmul(%2, %1) : f64[3]
            %acc.2 = add(%acc.1, %3) : f64[3]
            yield %acc.2
          }
        %acc.3 = tuple_get(%0) {index=0} : f64[3]
        return %acc.3
    After (the body gets the hoisted value as a new capture; DCE drops the unused %w.1 later):
      graph f(%x: f64[4,3], %w: f64[3,3]) -> f64[3]
        %acc = zeros(3) : f64[3]
        %0 = T(%w) : f64[3,3]
        %1 = for_range(0, 4, 1, %acc, %x, %w, %0) {carried=1} : tuple(f64[3])
          body(%i: int, %acc.1: f64[3], %x.1: f64[4,3], %w.1: f64[3,3], %2: f64[3,3]) {
            %3 = getitem(%x.1, %i) {index=[$1]} : f64[3]
            %4 = matmul(%3, %2) : f64[3]
            %acc.2 = add(%acc.1, %4) : f64[3]
            yield %acc.2
          }
        %acc.3 = tuple_get(%1) {index=0} : f64[3]
        return %acc.3

    Invariant: every operand is a constant, a captured (not loop-carried) value, or already
    hoisted; and nothing in the loop may write the memory those captures share (graph/alias.py:
    `for ...: out[i] = ...; s = out.sum()` keeps the sum in the loop).

    NOTE [zero-trip loops]: hoisting runs the node once even when the loop runs zero times, so it
    must not introduce an exception eager Python would not raise. A node is hoisted from a loop
    only when (a) the loop provably runs at least once (a `for_range` with constant bounds and a
    non-empty range, or a `while` condition region, which always runs), or (b) the node cannot
    raise: an elementwise op, matmul, transpose, reshape, astype or copy on arrays whose types
    are static and whose result type inferred statically (so shapes are compatible), never on
    Python scalars (`1 // n` may divide by zero) and never an integer power (`x ** -1` raises).
    NumPy floating-point problems only warn; a warning may then appear once without a loop
    iteration, which we accept.
    """
    changed = False
    for node in list(graph.nodes):
        for region in node.regions:
            changed |= run(region)   # innermost first: hoisted nodes can then leave the outer loop
        if node.op in ("for_range", "while"):
            changed |= _hoist_from(graph, node)
    return changed


def _hoist_from(graph: Graph, loop: Node) -> bool:
    changed = False
    while True:
        candidate = _find_candidate(graph, loop)
        if candidate is None:
            return changed
        _hoist(graph, loop, *candidate)
        changed = True


def _find_candidate(graph: Graph, loop: Node):
    """(region, node, outer operands) of the first hoistable node, or None."""
    n = loop.attrs.get("carried", 0)
    first_capture = 1 + n if loop.op == "for_range" else n
    operand_of = (lambda k: loop.operands[2 + k]) if loop.op == "for_range" else (lambda k: loop.operands[k])
    aliases = Aliases(graph)
    written = aliases.writes(loop)
    for r_index, region in enumerate(loop.regions):
        runs_once = _runs_at_least_once(loop) or (loop.op == "while" and r_index == 0)
        inner = Aliases(region)
        inner_written = set()
        for other in region.nodes:
            inner_written |= inner.writes(other)
        for node in region.nodes:
            if not node.is_pure or node.op == "const":
                continue
            if holds_memory(node.type) and inner.of(node) & (inner_written | inner.escaping()):
                continue  # the loop writes (or carries on) this very buffer: it must stay fresh
            outer = []
            for o in node.operands:
                if o.op == "const":
                    outer.append(o)
                    continue
                k = _arg_index(region, o)
                if k is None or k < first_capture:
                    break  # defined in the loop, the index, or loop-carried
                value = operand_of(k)
                if holds_memory(o.type) and aliases.of(value) & written:
                    break  # the loop may write what it reads
                outer.append(value)
            else:
                if runs_once or _cannot_raise(node):
                    return region, node, outer
    return None


def _arg_index(region: Graph, value: Node) -> Optional[int]:
    for k, a in enumerate(region.args):
        if a is value:
            return k
    return None


def _runs_at_least_once(loop: Node) -> bool:
    if loop.op != "for_range" or not all(o.op == "const" for o in loop.operands[:3]):
        return False
    start, stop, step = (o.value for o in loop.operands[:3])
    if not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in (start, stop, step)) or not step:
        return False
    return len(range(start, stop, step)) > 0


def _cannot_raise(node: Node) -> bool:
    t = node.type
    if not (isinstance(t, ArrayType) and t.is_static):
        return False
    arrays = [o for o in node.operands if o.op != "const"]
    if not arrays or not all(isinstance(o.type, ArrayType) and o.type.is_static for o in arrays):
        return False
    if node.op in _VALUE_ERRORS and any((o.type.dtype or "").startswith(("int", "uint"))
                                        for o in node.operands if isinstance(o.type, ArrayType)):
        return False
    # and the op table agrees (`Node.may_raise`: a reshape to another size does raise)
    return (node.opdef.elementwise or node.op in _SHAPE_SAFE) and not node.may_raise


def _hoist(graph: Graph, loop: Node, region: Graph, node: Node, outer: list) -> None:
    operands = [graph.add("const", (), {"value": o.value}, o.type, o.span, before=loop) if o.op == "const" else o
                for o in outer]
    hoisted = graph.add(node.op, operands, node.attrs, node.type, node.span, node.name, before=loop)
    captured = None
    for r in loop.regions:
        arg = r.add_arg(node.name, node.type, node.span)
        if r is region:
            captured = arg
    graph.set_operands(loop, list(loop.operands) + [hoisted])
    region.replace_all_uses(node, captured)
    region.erase(node)
