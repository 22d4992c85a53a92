"""Lowering a call of a gradient function inside compiled code (`grad_fn(x)` where `grad_fn =
graphjit.grad(f)`): `f` is inlined here, and a `gradient` placeholder stands where its backward
pass goes; graph/autodiff/pending.py builds it after the passes that run before differentiation,
so forward and backward are one graph (CSE, DCE and memory planning see both)."""

from __future__ import annotations

from ...graph.autodiff.function import gradient_type, weight_specs
from ...graph.autodiff.pending import PendingGradient
from ...graph.diagnostics import LoweringError
from ...graph.ir import Node
from ...graph.types import TupleType
from ...graph.vjp_common import differentiable
from ..values import Static


def gradient_call(state, spec, args: list, kwargs: dict, span):
    """`spec` is what the gradient function says of itself: (the function, its request, its weights)."""
    fn, request, weights = spec
    if kwargs:
        raise LoweringError("a gradient function takes its arguments by position", span)
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
        inputs[k] = args[k] = state.emit("gradient_boundary", [node], span=span)   # its own, even if passed twice
    cuts = []
    for k, a in enumerate(args):        # what the caller computed is a constant to the function's gradient
        if k not in inputs and isinstance(a, Node) and (differentiable(a) or isinstance(a.type, TupleType)):
            args[k] = state.emit("gradient_boundary", [a], span=span)
            cuts.append(args[k])
    result = state.call(Static(fn), args, {}, span)
    output = state.operand(result, span)
    if weights:     # the weights are found by identity: every array read through a path stays that array
        for key, array in state.param_arrays.items():
            state.guards.identity(state.param_paths[key], array)
    weight_nodes = [[state.scope.local(p) for key, p in state.params.items() if state.param_arrays.get(key) is w]
                    for w in weights]

    positions = [inputs.get(k) for k in range(max(inputs, default=-1) + 1)]
    pending = PendingGradient(request.key(), tuple(p is not None for p in positions),
                              tuple(len(n) for n in weight_nodes), weight_specs(weights), sens is not None, len(cuts))
    return state.scope.graph.add("gradient", pending.operands(output, positions, weight_nodes, sens, cuts),
                                 pending.attrs(), gradient_type(request, positions, weight_nodes, output,
                                                                pending.weight_specs), span)
