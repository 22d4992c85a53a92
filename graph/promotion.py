"""Types of ops on unions: NumPy 2's promotion (NEP 50) applied to each member of a merged value.

A loop accumulator `s = 0.0; for ...: s += x[i]` with float32 `x` is a Python float before the
first iteration and an `np.float32` after it: inside the loop its type is the union `f32[]|float`
(graph/types.py). The op table's rules type an op from stand-ins of its operands' types, so NumPy
itself decides what `float + np.float32` gives (a weak Python float: `np.float32`). Here a rule is
applied to every combination of its operands' members and the results are joined:

    add(f32[]|float, f32[])  ->  add(f32[], f32[]) = f32[],  add(float, f32[]) = f32[]  ->  f32[]
    mul(f32[]|float, 2.0)    ->  f32[] and float                                        ->  f32[]|float
"""

from __future__ import annotations

from functools import reduce
from itertools import product
from typing import Callable, Sequence

from .types import Type, UnionType, join, members

MAX_COMBINATIONS = 16    # more member combinations than this: the rule sees the unions (unknown to it)


class _AsMember:
    """An operand seen with one member of its union type; everything else is the node's own."""

    def __init__(self, node, member: Type):
        self._node = node
        self.type = member

    def __getattr__(self, name):
        return getattr(self._node, name)


def infer_by_members(rule: Callable, nodes: Sequence, attrs: dict) -> Type:
    """`rule(nodes, attrs)`, applied member by member where operands have union types."""
    unions = [k for k, n in enumerate(nodes) if isinstance(n.type, UnionType)]
    if not unions:
        return rule(nodes, attrs)
    choices = [members(nodes[k].type) for k in unions]
    count = 1
    for c in choices:
        count *= len(c)
    if count > MAX_COMBINATIONS:
        return rule(nodes, attrs)
    results = []
    for combo in product(*choices):
        seen = list(nodes)
        for k, member in zip(unions, combo):
            seen[k] = _AsMember(nodes[k], member)
        results.append(rule(seen, attrs))
    return reduce(join, results)
