"""Gradients asked for inside compiled code, built after the passes that run before differentiation.

A jitted function that calls a gradient function (`loss, grads = grad_fn(x)`) gets the called
function inlined (transpiler/lower/gradient_calls.py) and, where its gradient goes, a `gradient`
placeholder typed like the result. The values the gradient is taken with respect to, and the
call's other arguments, pass through `gradient_boundary` nodes: an effect no pass folds, merges
or moves, through which no gradient flows (what the caller computed is a constant to the
function's gradient).

`prepare` runs the passes before differentiation (at O2: up to loop vectorization, so a
loop that fills an array is differentiated in its whole-array form, as `graphjit.grad` does at
the top level), then replaces each placeholder by its gradient, built where the placeholder stood,
and drops its boundaries. A placeholder inside a run-time loop or branch skips those passes: loop-
invariant code motion would move the function's code out of the region, out of the gradient's sight.

    %b = gradient_boundary(%x)                       before
    %y = mul(%b, %b)
    %g = gradient(%y, %b) {request=((0,), True, None, ...), positions=(True,), ...}
    ...
    %y = mul(%x, %x)                                 after
    %1 = mul(%ones, %x)  ...  %g = add(%1, %2)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..ir import Graph, Node
from ..passes.manager import before_differentiation, run_pipeline
from .function import gradient_of
from .request import GradRequest


@dataclass(frozen=True)
class PendingGradient:
    """What a `gradient` placeholder stands for, kept in its attributes as graph-text literals. Its
    operands are the output, then the input of each position (`None` positions are left out), the
    nodes reading each weight, the sensitivity, and the boundaries of the call's other arguments."""

    request: tuple              # GradRequest.key()
    positions: tuple            # for each argument position: whether the operands hold its input
    weight_counts: tuple        # how many operands read each weight
    weight_specs: tuple         # (shape, dtype) of each weight, for the zeros of one nobody reads
    has_sens: bool
    cuts: int = 0               # boundaries of the other arguments (dropped once the gradient is built)

    def attrs(self) -> dict:
        return dict(vars(self))

    @classmethod
    def of(cls, node: Node) -> "PendingGradient":
        return cls(**node.attrs)

    def operands(self, output: Node, inputs: Sequence, weights: Sequence[Sequence[Node]], sens, cuts) -> list:
        return [output, *(i for i in inputs if i is not None), *(n for nodes in weights for n in nodes),
                *([sens] if sens is not None else []), *cuts]

    def unpack(self, operands: Sequence[Node]) -> tuple:
        """(output, inputs by position, weight nodes per weight, sensitivity) from a placeholder's operands."""
        rest = list(operands[1:])
        inputs = [rest.pop(0) if present else None for present in self.positions]
        weights = []
        for count in self.weight_counts:
            weights.append(rest[:count])
            rest = rest[count:]
        return operands[0], inputs, weights, (rest[0] if self.has_sens else None)

    def boundaries(self, operands: Sequence[Node]) -> list:
        """The boundary nodes of this call: its inputs' and its other arguments'."""
        _, inputs, _, _ = self.unpack(operands)
        return [i for i in inputs if i is not None] + list(operands[len(operands) - self.cuts:] if self.cuts else [])


def has_pending(graph: Graph) -> bool:
    return any(n.op == "gradient" for n in graph.all_nodes())


def prepare(graph: Graph, level: str, differentiated: bool = False, dump=None) -> None:
    """Run the passes before differentiation when the graph asks for gradients inside, or is itself
    differentiated next (`differentiated`: `graphjit.grad` at the top level), unless a placeholder
    sits in a region; then build every gradient in program order: one computed inside another
    function's gradient is built first, so the outer one differentiates through it. `dump(graph)`
    sees the graph once they are built (`GRAPHJIT_DUMP`: after_gradients.txt)."""
    pending = has_pending(graph)
    nested = any(n.op == "gradient" for node in graph.nodes for region in node.regions for n in region.all_nodes())
    if (pending or differentiated) and not nested:
        prefix = before_differentiation(level)
        if prefix:
            run_pipeline(graph, level, pipeline=prefix)
    if pending:
        _build_in(graph)
        if dump is not None:
            dump(graph)


def _build_in(graph: Graph) -> None:
    k = 0
    while k < len(graph.nodes):
        node = graph.nodes[k]
        for region in node.regions:
            _build_in(region)
        if node.op == "gradient":
            k = _build(graph, k)
        k += 1


def _build(graph: Graph, k: int) -> int:
    """Build the gradient of placeholder `graph.nodes[k]` as if the code after it were not there
    yet (as when the call is lowered), then drop its boundaries: a gradient of this gradient flows
    through them. Return the index of the node that now holds the result."""
    node = graph.nodes[k]
    pending = PendingGradient.of(node)
    output, inputs, weights, sens = pending.unpack(node.operands)
    after = graph.nodes[k + 1:]
    del graph.nodes[k:]
    result = gradient_of(graph, GradRequest(*pending.request), inputs, weights, output, sens, pending.weight_specs)
    graph.nodes.extend(after)
    graph.replace_all_uses(node, result)
    graph.nodes.append(node)            # erase() expects it in the list
    boundaries = pending.boundaries(node.operands)
    graph.erase(node)
    for boundary in boundaries:
        graph.replace_all_uses(boundary, boundary.operands[0])
        graph.erase(boundary)
    return graph.nodes.index(result)
