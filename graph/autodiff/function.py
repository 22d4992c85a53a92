"""The gradient of a whole function: which inputs, which output, and what the caller gets back.

`GradRequest` says what `graphjit.grad`, `value_and_grad` and `ops.GradOperation` asked for
(MindSpore's `grad_position`, `weights`, `has_aux`, `return_ids`, `sens_param`); `gradient_of`
builds it at the end of a graph whose return value is the function's output, so the graph
returns what MindSpore's function returns:

    grad(f)(x)                               dx
    grad(f, (0, 1))(x, y)                    (dx, dy)
    grad(f, None, weights)(x)                (dw1, dw2)
    grad(f, 0, weights)(x)                   (dx, (dw1, dw2))
    grad(f, has_aux=True)(x)                 (dx, (aux1, ...))
    value_and_grad(f, ...)(x)                (f(x), <the above, without the aux outputs>)
    return_ids=True                          each gradient as (position or weight name, gradient)
"""

from __future__ import annotations

from typing import Optional, Sequence

from ..vjp_common import Backward
from ..ir import Graph, Node
from ..types import TupleType, Type
from .fill import ones_like
from .backward_spans import backward_span
from .request import GradRequest
from .transform import NotDifferentiableError, backward


def gradient_of(graph: Graph, request: GradRequest, inputs: Sequence[Node], weights: Sequence[Sequence[Node]],
                output: Node, sens: Optional[Node] = None, weight_specs: Sequence = ()) -> Node:
    """Append the backward pass of `output` and return the node holding what the caller gets.

    `inputs[k]` is argument k's value; `weights[k]` the nodes that read weight k (none when the
    function does not use it: its gradient is zeros of `weight_specs[k]`, a (shape, dtype) pair).
    """
    b = Backward(graph)
    b.span = backward_span(output.span)
    primary, aux = _split_output(b, request, output)
    seed = sens if sens is not None else ones_like(b, primary)
    wanted = [inputs[k] for k in request.positions or ()]
    for nodes in weights:
        wanted.extend(nodes)
    unique = list({n.id: n for n in wanted}.values())
    grads = dict(zip((n.id for n in unique), backward(graph, unique, [(primary, seed)]))) if unique else {}
    for k, nodes in enumerate(weights):
        if not nodes:
            _check_unread(graph, output, request.weight_names[k])
    return _assemble(b, request, inputs, weights, grads, output, aux, weight_specs)


def gradient_type(request: GradRequest, inputs: Sequence[Node], weights: Sequence[Sequence[Node]], output: Node,
                  weight_specs: Sequence = ()) -> Type:
    """The type of what `gradient_of` returns, known before it is built (each gradient typed as
    the value it is taken with respect to): a gradient asked for inside compiled code is a
    placeholder of this type until it is built (pending.py)."""
    scratch = Graph("gradient type")
    b = Backward(scratch)
    stand_ins = {n.id: scratch.add_arg(n.name, n.type) for n in [*(i for i in inputs if i is not None), output,
                                                                 *(n for nodes in weights for n in nodes)]}
    out = stand_ins[output.id]
    _, aux = _split_output(b, request, out)
    grads = {n.id: n for n in stand_ins.values()}   # each gradient typed as its value
    same = [None if i is None else stand_ins[i.id] for i in inputs]
    return _assemble(b, request, same, [[stand_ins[n.id] for n in nodes] for nodes in weights], grads, out, aux,
                     weight_specs).type


def weight_specs(arrays: Sequence) -> tuple:
    """(shape, dtype) of each weight: what the zero gradient of a weight nobody reads is made of."""
    return tuple((tuple(a.shape), a.dtype.type) for a in arrays)


def _assemble(b, request: GradRequest, inputs, weights, grads: dict, output: Node, aux, weight_specs) -> Node:
    """What the caller gets, from the gradient of each input and weight node (`grads`, by id)."""
    result = []
    if request.positions is not None:
        parts = [_with_id(b, request, k, grads[inputs[k].id]) for k in request.positions]
        result.append(parts[0] if request.position_is_int else _tuple(b, parts))
    if request.weight_names is not None:
        parts = []
        for k, nodes in enumerate(weights):
            total = None
            for n in nodes:
                total = grads[n.id] if total is None else b.op("add", total, grads[n.id])
            if total is None:
                shape, dtype = weight_specs[k]
                total = b.op("zeros", b.const(shape), dtype=dtype)
            parts.append(_with_id(b, request, request.weight_names[k], total))
        result.append(parts[0] if request.weights_is_single else _tuple(b, parts))
    gradient = result[0] if len(result) == 1 else _tuple(b, result)
    if aux is not None and not request.with_value:      # value_and_grad's value holds the aux outputs
        gradient = _tuple(b, [gradient, aux])
    return _tuple(b, [output, gradient]) if request.with_value else gradient


OPAQUE = ("pycall", "call", "fallback")


def _check_unread(graph: Graph, output: Node, name: str) -> None:
    """A weight no node reads has a zero gradient, unless Python code the graph cannot see into
    computes the output: it might read the weight, and a zero would be silently wrong. (What the
    caller passed in, behind a `gradient_boundary`, is a constant to the gradient.)"""
    needed = {output.id}
    for node in reversed(graph.nodes):
        if node.id in needed and node.op != "gradient_boundary":
            if node.op in OPAQUE:
                raise NotDifferentiableError(f"cannot tell whether the weight `{name}` is used: the output depends on "
                                             f"code graphjit cannot see into", node.span)
            needed.update(o.id for o in node.operands)


def _split_output(b, request: GradRequest, output: Node):
    """With `has_aux`, the first output is differentiated and the rest returned as they are."""
    if not request.has_aux:
        return output, None
    if not isinstance(output.type, TupleType) or len(output.type.items) < 2:
        raise NotDifferentiableError("`has_aux=True` needs a function that returns a tuple of two or more values "
                                     "(the value to differentiate first)", output.span)
    items = [b.op("tuple_get", output, index=k) for k in range(len(output.type.items))]
    return items[0], _tuple(b, items[1:])


def _with_id(b, request: GradRequest, ident, gradient: Node) -> Node:
    return _tuple(b, [b.const(ident), gradient]) if request.return_ids else gradient


def _tuple(b, items: list) -> Node:
    return b.graph.add("tuple", items, {}, TupleType(tuple(i.type for i in items)), b.span)
