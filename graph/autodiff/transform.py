"""The reverse walk: cotangents flow from the outputs back to the inputs, one op rule at a time.

`differentiate(graph, wrt, output)` walks the nodes between the inputs `wrt` and `output` in reverse
program order. Each op's VJP rule (graph/derivatives.py) sends the cotangent of its result to its
operands; what a value receives from several uses is added up, and what broadcasting widened is
summed back to the value's shape. The backward nodes go into the same graph after the forward
ones, so CSE, DCE and memory planning see both passes: a gradient nothing returns costs nothing.

    %y = mul(%x, %w) : f64[3]           forward
    %s = sum(%y) : f64[]
    %0 = ones_like(%s)                  backward: d s / d s
    %1 = broadcast_to(%0, (3,))         d s / d y
    %2 = mul(%1, %w)                    d s / d x

Integer and boolean values carry no gradient. An op without a rule on a path from `wrt` to the
output is an error naming the op and the user's line (`NotDifferentiableError`, GJ501): a
gradient is never silently zero.
"""

from __future__ import annotations

from typing import Optional, Sequence

from ..vjp_common import Backward, differentiable
from ..diagnostics import GraphjitError
from ..ir import Graph, Node
from ..ops import OPS
from ..types import ArrayType, ScalarType, TupleType
from . import inplace, regions
from .fill import ones_like, zeros_like
from .backward_spans import backward_span


class NotDifferentiableError(GraphjitError):
    """The gradient asked for flows through an op graphjit cannot differentiate."""

    code = "GJ501"


def differentiate(graph: Graph, wrt: Sequence[Node], output: Node, seed: Optional[Node] = None) -> list:
    """Append the backward pass of `output` to `graph`; return the gradient of each node of `wrt`
    (zeros shaped like it when `output` does not depend on it). `seed` is the cotangent of
    `output` (MindSpore's `sens`); by default ones shaped like `output`, so the gradient of a
    non-scalar or tuple output is the gradient of the sum of its elements."""
    b = Backward(graph)
    return backward(graph, wrt, [(output, seed if seed is not None else ones_like(b, output))])


def backward(graph: Graph, wrt: Sequence[Node], seeds: list, scratch: frozenset = frozenset()) -> list:
    """The gradients of `wrt` given the cotangent of each `(output, cotangent)` in `seeds`; the
    backward nodes are appended to `graph` (a function body or a region). A gradient flows through
    no `stop_gradient` and no `gradient_boundary` (what the code around an inlined function passed
    in is a constant to that function's gradient). `scratch`: arguments of a replayed loop body
    that stand in for arrays the loop writes (regions.py), which the body may write in place."""
    b = Backward(graph)
    relevant = between(graph, wrt, [out for out, _ in seeds])
    check_path(graph, relevant)
    writes = inplace.prepare(graph, relevant, NotDifferentiableError, scratch)
    relevant = between(graph, wrt, [out for out, _ in seeds])   # with the copies and ops `prepare` made
    rewritten = inplace.rewritten_later(graph, relevant, writes)
    cotangents = Cotangents(b)
    for out, seed in seeds:
        cotangents.add(out, seed)
    inputs = {w.id for w in wrt}
    kept = {}                          # the gradients of inner values asked for (the walk goes on past them)
    for node in reversed(graph.nodes):
        if node.id not in relevant or not any(o.id in relevant for o in node.operands):
            continue                   # not on a path, or a source (an input, `np.zeros` a write fills)
        b.span = backward_span(node.span)
        if node.id in writes:
            writes[node.id].flow(b, node, cotangents)
            continue
        g = cotangents.pop(node)
        after = {w.id: cotangents.peek(w) for w in inplace.outer_writes(node)} if node.regions else {}
        if g is None and any(a is not None for a in after.values()):
            g = {}                     # its regions write an array the gradient flows back into
        if g is None:
            continue
        if node.id in inputs:
            kept[node.id] = g
        rule = (lambda b, n, g: regions.RULES[n.op](b, n, g, backward, NotDifferentiableError, after)) \
            if node.op in regions.RULES else rule_of(node)
        first_new = len(graph.nodes)
        cotangents_of_operands = rule(b, node, g)
        if node.id in rewritten:
            inplace.own_value_in_time(graph, node, first_new)
        for operand, cot in zip(node.operands, cotangents_of_operands):
            if cot is not None and operand.id in relevant:
                if operand.id in after:    # written in the regions: the cotangent before them replaces it
                    cotangents.replace(operand, cot)
                else:
                    cotangents.add(operand, cot)
    grads = []
    for w in wrt:
        b.span = backward_span(w.span)
        g = kept[w.id] if w.id in kept else cotangents.pop(w)
        grads.append(g if g is not None else zeros_like(b, w))
    return grads


class Cotangents:
    """The cotangent each value has received so far, summed over its uses. A tuple's cotangent is
    kept per item (`tuple_get` fills one item), so only the items used get one."""

    def __init__(self, b: Backward):
        self.b = b
        self.total: dict[int, Node] = {}
        self.items: dict[int, dict] = {}

    def add(self, node: Node, cot) -> None:
        if isinstance(node.type, TupleType) or node.op in regions.RULES:
            parts = cot if isinstance(cot, dict) else {k: self.b.op("tuple_get", cot, index=k)
                                                       for k in range(len(node.type.items))}
            mine = self.items.setdefault(node.id, {})
            for k, part in parts.items():
                if part is not None:
                    mine[k] = part if k not in mine else self.b.op("add", mine[k], part)
            return
        if not differentiable(node):
            return
        cot = sum_to(self.b, cot, node)
        self.total[node.id] = cot if node.id not in self.total else self.b.op("add", self.total[node.id], cot)

    def pop(self, node: Node):
        if node.id in self.items:
            return self.items.pop(node.id)
        return self.total.pop(node.id, None)

    def peek(self, node: Node):
        return self.total.get(node.id)

    def replace(self, node: Node, cot: Optional[Node]) -> None:
        """Set the cotangent `node` has so far (an in-place write masks what later uses sent)."""
        if cot is None:
            self.total.pop(node.id, None)
        else:
            self.total[node.id] = cot


def rule_of(node: Node):
    """The VJP rule of `node`: structural for tuples, regions.py for `if`/loops, else the op's."""
    if node.op == "tuple":
        return lambda b, n, g: tuple(g.get(k) for k in range(len(n.operands)))
    if node.op == "tuple_get":
        return lambda b, n, g: ({n.attrs["index"]: g},)
    if node.op == "replayed":         # a loop's replayed read: the recorded value, the read's gradient
        return lambda b, n, g: (g, None)
    if node.op in CUT:
        return lambda b, n, g: (None,)
    rule = vjp_of(node)
    if rule is None:
        raise not_differentiable(node)
    return lambda b, n, g: apply(rule, b, n, g)


def vjp_of(node: Node):
    """The op's rule; `a op= b` on a number is `a op b` (on an array, inplace.py flows it)."""
    if node.op == "inplace" and not inplace.is_write(node):
        return OPS[node.attrs["op"]].vjp
    return node.opdef.vjp


def apply(rule, b, node, g):
    try:
        return rule(b, node, g)
    except NotImplementedError as e:
        raise not_differentiable(node, str(e)) from None


def not_differentiable(node: Node, why: str = "") -> NotDifferentiableError:
    what = node.opdef.doc.split(":")[0] if node.opdef.doc else f"`{node.op}`"
    why = why or node.opdef.no_grad or "it has no derivative rule"
    return NotDifferentiableError(f"cannot differentiate through {what}: {why}", node.span,
                                  hint="compute this value from arrays that need no gradient, or wrap it in "
                                       "`ops.stop_gradient`")


def check_path(graph: Graph, relevant: set) -> None:
    """Fail before building anything if a node the gradient flows through has no rule."""
    for node in graph.nodes:
        if node.id in relevant and any(o.id in relevant for o in node.operands) and node.op not in ("tuple", "tuple_get", "replayed", *CUT) and node.op not in regions.RULES \
                and vjp_of(node) is None and not inplace.is_write(node):
            raise not_differentiable(node)


def between(graph: Graph, wrt: Sequence[Node], outputs: Sequence[Node]) -> set:
    """Ids of the nodes on some path from a node of `wrt` to one of `outputs` (program order is
    topological; a node writing a value in place counts as a use that changes it)."""
    reached = {w.id for w in wrt}
    for node in graph.nodes:
        if any(o.id in reached for o in node.operands) and carries(node):
            reached.add(node.id)
            reached.update(_written(node))
    needed = {o.id for o in outputs}
    for node in reversed(graph.nodes):
        if node.id in needed or any(w in needed for w in _written(node)):
            needed.add(node.id)
            needed.update(o.id for o in node.operands)
    return reached & needed


def _written(node: Node) -> set:
    """Ids of what `node` writes in place: each value and the array it is a view of (a write through
    `v = z[1:]` changes `z`; `y.fill(0)` writes `y` through its bound method)."""
    written = set()
    for w in writes_of(node):
        written.update((w.id, inplace.buffer_of(w).id))
    return written


def writes_of(node: Node) -> tuple:
    """What `node` writes in place, including what the code in its regions writes of its operands."""
    return node.writes + tuple(inplace.outer_writes(node)) if node.regions else node.writes


# Ops no gradient flows through: `ops.stop_gradient`, and the boundary between a gradient
# function's arguments and the caller's code (graph/autodiff/pending.py).
CUT = ("stop_gradient", "gradient_boundary")


def carries(node: Node) -> bool:
    """Can a gradient flow through `node`'s result? Not through integers and booleans (a
    comparison, an index); through an `object` value it may, so it is followed."""
    if node.op in CUT:
        return False
    return differentiable(node) or bool(node.writes) or isinstance(node.type, TupleType) or node.op in regions.RULES


def sum_to(b: Backward, cot: Node, like: Node) -> Node:
    """`cot` summed over the axes broadcasting added or stretched, so it has `like`'s shape."""
    target, have = like.type, cot.type
    if isinstance(target, ScalarType) or isinstance(have, ScalarType) and isinstance(target, ArrayType) \
            and target.rank == 0:
        return b.op("sum", cot) if isinstance(have, ArrayType) and have.rank != 0 else cot
    if not (isinstance(target, ArrayType) and isinstance(have, ArrayType)) or target.shape is None \
            or have.shape is None or None in target.shape or None in have.shape:
        return b.op("sum_to", cot, like)
    if target.shape == have.shape:
        return cot
    lead = len(have.shape) - len(target.shape)
    if lead > 0:
        cot = b.op("sum", cot, axis=tuple(range(lead)))
    stretched = tuple(k for k, (t, h) in enumerate(zip(target.shape, have.shape[lead:])) if t == 1 and h != 1)
    if stretched:
        cot = b.op("sum", cot, axis=stretched, keepdims=True)
    return cot
