"""Triangular loop nests as masked rectangles, so the vectorizer can take the whole nest.

The vectorizer needs the inner range to be the same for every outer iteration. A triangular
nest (`for i in range(n): for j in range(i + 1, n): ...`) gets a rectangular copy: the inner loop
runs over the bounding box of its ranges, its body under `if lo(i) <= j < hi(i)`. The vectorizer
turns that `if` into a mask (`np.where(j > i, ..., 0)` for a sum over the upper triangle), doing
the work of the whole box. The pass keeps the copy only when the outer loop then vectorizes.

    for i in range(4):                      for i in range(4):
        for j in range(i + 1, 4):     ->        for j in range(1, 4):
            s += a[i, j]                            if i + 1 <= j < 4:
                                                        s += a[i, j]
"""

from __future__ import annotations

from typing import Optional

from ..ir import Graph, Node, clone_region
from ..types import BOOL, INT, TupleType

_BOUND_OPS = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
              "floordiv": lambda a, b: a // b if b else None, "neg": lambda a: -a}
MAX_OUTER = 1 << 24     # outer iterations a nest may have
EXACT_OUTER = 4096      # up to this many, the bounds are evaluated at every outer index
MAX_BLOWUP = 4          # the rectangle may do this many times the nest's own iterations


def rectangular_body(loop: Node) -> Optional[Graph]:
    """A copy of `loop`'s body in which every inner loop whose range moves with the loop index
    runs over its bounding box, its body under `if lo <= j < hi`; None when there is none, or
    when a bound is not an integer expression of the index and constants."""
    start, stop, step = loop.operands[:3]
    if not all(o.op == "const" and type(o.value) is int for o in (start, stop, step)) or step.value == 0:
        return None
    outer = range(start.value, stop.value, step.value)
    if not 0 < len(outer) <= MAX_OUTER:
        return None
    body = loop.regions[0]
    index = body.args[0]
    moving = [k for k, n in enumerate(body.nodes) if n.op == "for_range" and _depends_on(n.operands[:2], index)]
    if not moving:
        return None
    copy = clone_region(body)
    for inner in [copy.nodes[k] for k in moving]:   # positions move as loops are replaced
        box = _box(inner, copy.args[0], outer)
        if box is None:
            return None
        _rectangularize(copy, inner, box)
    return copy


def _depends_on(values, index: Node) -> bool:
    stack, seen = list(values), set()
    while stack:
        n = stack.pop()
        if n is index:
            return True
        if n.id in seen or n.graph is not index.graph:
            continue
        seen.add(n.id)
        stack.extend(n.operands)
    return False


def _value(node: Node, index: Node, i: int) -> Optional[int]:
    """The integer `node` holds when the loop index is `i` (constants and + - * // only)."""
    if node is index:
        return i
    if node.op == "const":
        return node.value if type(node.value) is int else None
    fn = _BOUND_OPS.get(node.op)
    if fn is None or node.graph is not index.graph:
        return None
    args = [_value(o, index, i) for o in node.operands]
    return None if any(a is None for a in args) else fn(*args)


def _affine(node: Node, index: Node) -> bool:
    """An integer `a * i + b` of the index (so its extremes over a range are at the range's ends)."""
    if node is index or node.op == "const":
        return True
    if node.op in ("add", "sub", "neg"):
        return all(_affine(o, index) for o in node.operands)
    if node.op == "mul":
        return all(_affine(o, index) for o in node.operands) and \
            any(not _depends_on([o], index) for o in node.operands)
    return False


def _box(inner: Node, index: Node, outer: range) -> Optional[tuple]:
    start, stop, step = inner.operands[:3]
    if step.op != "const" or step.value != 1:
        return None
    if len(outer) > EXACT_OUTER:   # many outer iterations: affine bounds only, from the two ends
        if not (_affine(start, index) and _affine(stop, index)):
            return None
        ends = (outer[0], outer[-1])
        lows, highs = [_value(start, index, i) for i in ends], [_value(stop, index, i) for i in ends]
        if None in lows or None in highs or max(highs) <= min(lows):
            return None
        widths = [max(0, h - l) for l, h in zip(lows, highs)]
        return _if_small(min(lows), max(highs), len(outer) * (widths[0] + widths[1]) / 2, len(outer))
    lows, highs = [], []
    for i in outer:
        lo, hi = _value(start, index, i), _value(stop, index, i)
        if lo is None or hi is None:
            return None
        if hi > lo:
            lows.append(lo)
            highs.append(hi)
    if not lows:
        return None    # the inner loop never runs: nothing to gain
    return _if_small(min(lows), max(highs), sum(h - l for l, h in zip(lows, highs)), len(outer))


def _if_small(lo: int, hi: int, work: float, rows: int) -> Optional[tuple]:
    """The box, unless it is much more work than the nest itself (a band `range(k * i, k * i + 2)`
    has a box `k` times wider than its rows)."""
    return (lo, hi) if rows * (hi - lo) <= MAX_BLOWUP * work + 1024 else None


def _rectangularize(body: Graph, inner: Node, box: tuple) -> None:
    old = inner.regions[0]
    n = inner.attrs.get("carried", 0)
    carried_types = tuple(inner.type.items)
    new = Graph(old.name, label=old.label)
    new.span = old.span
    args = [new.add_arg(a.name, a.type, a.span) for a in old.args]
    lo, hi = new.add_arg("lo", INT, inner.span), new.add_arg("hi", INT, inner.span)
    j = args[0]
    tests = []   # a bound that is the box's own needs no test
    if not (inner.operands[0].op == "const" and inner.operands[0].value == box[0]):
        tests.append(new.add("ge", [j, lo], {}, BOOL, inner.span))
    if not (inner.operands[1].op == "const" and inner.operands[1].value == box[1]):
        tests.append(new.add("lt", [j, hi], {}, BOOL, inner.span))
    inside = tests[0] if len(tests) == 1 else new.add("bitand", tests, {}, BOOL, inner.span)
    then_g = clone_region(old)
    then_g.label = "then"
    else_g = Graph(old.name, label="else")
    else_args = [else_g.add_arg(a.name, a.type, a.span) for a in old.args]
    else_g.set_outputs(else_args[1:1 + n])
    branch = new.add("if", [inside, *args], {}, TupleType(carried_types), inner.span, regions=[then_g, else_g])
    new.set_outputs([new.add("tuple_get", [branch], {"index": k}, t, inner.span) for k, t in enumerate(carried_types)])
    bounds = [body.add("const", (), {"value": v}, INT, inner.span, before=inner) for v in (box[0], box[1], 1)]
    operands = [*bounds, *inner.operands[3:], inner.operands[0], inner.operands[1]]
    rect = body.add("for_range", operands, dict(inner.attrs), inner.type, inner.span, inner.name, regions=[new],
                    before=inner)
    body.replace_all_uses(inner, rect)
    body.erase(inner)
