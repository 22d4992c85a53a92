"""Lowering a call of a gradient function inside compiled code (`grad_fn(x)` where `grad_fn =
graphjit.grad(f)`): `f` is inlined here and its backward pass appended, so forward and backward
are one graph (CSE, DCE and memory planning see both)."""

from __future__ import annotations

from ...graph.autodiff.function import gradient_of
from ...graph.diagnostics import LoweringError
from ...graph.ir import Node
from ...graph.vjp_common import differentiable
from ..values import Static


def gradient_call(state, spec, args: list, kwargs: dict, span):
    """`spec` is what the gradient function says of itself: (the function, its request, its weights)."""
    fn, request, weights = spec
    if kwargs:
        raise LoweringError("a gradient function takes its arguments by position", span)
    graph = state.scope.graph
    start = len(graph.nodes)
    args = list(args)
    inputs = {}
    sens = None
    if request.sens:
        sens, args = state.operand(args[-1], span), args[:-1]
    for k in request.positions or ():
        if k >= len(args):
            raise LoweringError(f"grad_position {k} is out of range: the call passes {len(args)} argument(s)", span)
        node = state.operand(args[k], span)
        if not isinstance(node, Node) or not differentiable(node):
            raise LoweringError(f"argument {k} of the gradient function is not a floating-point array", span)
        if any(i != k and isinstance(a, Node) and state.operand(a, span) is node for i, a in enumerate(args)):
            node = state.emit("asarray", [node], span=span)   # the same array passed twice: only this one
        inputs[k] = args[k] = node
    result = state.call(Static(fn), args, {}, span)
    output = state.operand(result, span)
    first = graph.nodes[start] if len(graph.nodes) > start else None
    if weights:     # the weights are found by identity: every array read through a path stays that array
        for key, array in state.param_arrays.items():
            state.guards.identity(state.param_paths[key], array)
    weight_nodes = [[state.scope.local(p) for key, p in state.params.items() if state.param_arrays.get(key) is w]
                    for w in weights]

    positions = [inputs.get(k) for k in range(max(inputs, default=-1) + 1)]
    return gradient_of(graph, request, positions, weight_nodes, output, sens, weights, first)
