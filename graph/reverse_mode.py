"""Reverse-mode automatic differentiation: a graph → graph transform that appends the backward pass.

`differentiate(graph, wrt, output)` walks the nodes between the inputs `wrt` and `output` in reverse
program order. Each op's VJP rule (the op table's `vjp` column, graph/derivatives.py) sends the
cotangent of its result to its operands. What a value receives from several uses is added up,
and what broadcasting widened is summed back to the value's shape. The backward nodes go into the
same graph after the forward ones, so CSE, DCE and memory planning see both passes: a gradient
nothing returns costs nothing.

    %y = mul(%x, %w) : f64[3]           forward
    %s = sum(%y) : f64[]
    %0 = broadcast_to(1.0, (3,))        backward: d s / d y
    %1 = mul(%0, %w)                    d s / d x

Integer and boolean values carry no gradient. An op without a rule on a path from `wrt` to
`output` is an error naming the op and the user's line (`NotDifferentiableError`, GJ501).
"""

from __future__ import annotations

from typing import Optional, Sequence

from . import derivatives as D
from .diagnostics import GraphjitError
from .ir import Graph, Node
from .types import ArrayType, ScalarType, TupleType


class NotDifferentiableError(GraphjitError):
    """The gradient asked for flows through an op graphjit cannot differentiate."""

    code = "GJ501"


def differentiate(graph: Graph, wrt: Sequence[Node], output: Node, seed: Optional[Node] = None) -> list:
    """Append the backward pass of `output` to `graph`; return the gradient of each node of `wrt`
    (a zero array shaped like it when `output` does not depend on it). `seed` is the cotangent of
    `output` (MindSpore's `sens`); by default ones shaped like `output`."""
    b = D.Backward(graph)
    relevant = _between(graph, wrt, output)
    wanted = {w.id for w in wrt}
    cotangents = Cotangents(b)
    cotangents.add(output, seed if seed is not None else _ones_like(b, output))
    for node in reversed(graph.nodes):
        if node.id not in relevant:
            continue
        g = cotangents.pop(node)
        if g is None:
            continue
        if node.id in wanted:           # a gradient asked for (not an argument): keep it for the end
            cotangents.add(node, g)
        b.span = node.span
        for operand, cot in zip(node.operands, _rule_of(node)(b, node, g)):
            if cot is not None and operand.id in relevant:
                cotangents.add(operand, cot)
    grads = []
    for w in wrt:
        b.span = w.span
        g = cotangents.pop(w)
        grads.append(g if g is not None else _zeros_like(b, w))
    return grads


class Cotangents:
    """The cotangent each value has received so far, summed over its uses. A tuple's cotangent is
    kept per item (`tuple_get` fills one item), so only the items used get one."""

    def __init__(self, b: D.Backward):
        self.b = b
        self.total: dict[int, Node] = {}
        self.items: dict[int, dict] = {}

    def add(self, node: Node, cot) -> None:
        if isinstance(node.type, TupleType):
            parts = cot if isinstance(cot, dict) else {k: _item(self.b, cot, k) for k in range(len(node.type.items))}
            mine = self.items.setdefault(node.id, {})
            for k, part in parts.items():
                mine[k] = part if k not in mine else self.b.op("add", mine[k], part)
            return
        if not D.differentiable(node):
            if _type_unknown(node):     # a float hidden behind an unknown type: never a silent zero
                origin = _origin(node)
                raise _not_differentiable(origin, D.WHY_NOT.get(origin.op, "the type of its result is not known"))
            return
        cot = sum_to(self.b, cot, node)
        self.total[node.id] = cot if node.id not in self.total else self.b.op("add", self.total[node.id], cot)

    def pop(self, node: Node):
        if node.id in self.items:
            return self.items.pop(node.id)
        return self.total.pop(node.id, None)


def _type_unknown(node: Node) -> bool:
    t = node.type
    return not isinstance(t, (ArrayType, ScalarType, TupleType)) or isinstance(t, ArrayType) and t.dtype is None


def _origin(node: Node) -> Node:
    """Where an unknown type comes from: the first operand of unknown type, followed back."""
    for o in node.operands:
        if o.op != "const" and _type_unknown(o):
            return _origin(o)
    return node


def _item(b, cot, k):
    return b.op("tuple_get", cot, index=k)


def _rule_of(node: Node):
    if node.op == "tuple":
        return lambda b, n, g: tuple(g.get(k) for k in range(len(n.operands)))
    if node.op == "tuple_get":
        return lambda b, n, g: ({n.attrs["index"]: g},)
    rule = D.RULES.get(node.op)
    if rule is None or node.regions:
        raise _not_differentiable(node, D.WHY_NOT.get(node.op, "it has no derivative rule"))
    return lambda b, n, g: _apply(rule, b, n, g)


def _apply(rule, b, node, g):
    try:
        return rule(b, node, g)
    except NotImplementedError as e:
        raise _not_differentiable(node, str(e)) from None


def _not_differentiable(node: Node, why: str) -> NotDifferentiableError:
    what = node.opdef.doc.split(":")[0] if node.opdef.doc else f"`{node.op}`"
    return NotDifferentiableError(f"cannot differentiate through {what}: {why}", node.span,
                                  hint="compute this value from arrays that need no gradient, or wrap it in "
                                       "`ops.stop_gradient`")


def _between(graph: Graph, wrt: Sequence[Node], output: Node) -> set:
    """Ids of the nodes on some path from a node of `wrt` to `output` (program order is topological)."""
    reached = {w.id for w in wrt}
    for node in graph.nodes:
        if any(o.id in reached for o in node.operands):
            reached.add(node.id)
    needed = {output.id}
    for node in reversed(graph.nodes):
        if node.id in needed:
            needed.update(o.id for o in node.operands)
    return reached & needed


def sum_to(b: D.Backward, cot: Node, like: Node) -> Node:
    """`cot` summed over the axes broadcasting added or stretched, so it has `like`'s shape."""
    target, have = like.type, cot.type
    if isinstance(target, ScalarType):
        return b.op("sum", cot) if isinstance(have, ArrayType) and have.rank != 0 else cot
    if not (isinstance(target, ArrayType) and isinstance(have, ArrayType)) or target.shape is None \
            or have.shape is None:
        raise NotDifferentiableError(f"the shape of `{like.name or like.op}` must be known to send its "
                                     f"gradient back", like.span)
    if target.shape == have.shape:
        return cot
    lead = len(have.shape) - len(target.shape)
    if lead > 0:
        cot = b.op("sum", cot, axis=tuple(range(lead)))
    stretched = tuple(k for k, (t, h) in enumerate(zip(target.shape, have.shape[lead:])) if t == 1 and h != 1)
    if stretched:
        cot = b.op("sum", cot, axis=stretched, keepdims=True)
    return cot


def _ones_like(b, node: Node) -> Node:
    if isinstance(node.type, ArrayType):
        return b.op("ones_like", node)
    if isinstance(node.type, TupleType):
        return {k: _ones_like(b, b.op("tuple_get", node, index=k)) for k in range(len(node.type.items))}
    return b.const(1.0)


def _zeros_like(b, node: Node) -> Node:
    if isinstance(node.type, ArrayType):
        return b.op("zeros_like", node)
    return b.const(0.0)


