"""Types of ops on unions: NumPy 2's promotion (NEP 50) applied to each member of a merged value.

A loop accumulator `s = 0.0; for ...: s += x[i]` with float32 `x` is a Python float before the
first iteration and an `np.float32` after it: inside the loop its type is the union `f32[]|float`
(graph/types.py). The op table's rules type an op from stand-ins of its operands' types, so NumPy
itself decides what `float + np.float32` gives (a weak Python float: `np.float32`). Here a rule is
applied to every combination of its operands' members and the results are joined:

    add(f32[]|float, f32[])  ->  add(f32[], f32[]) = f32[],  add(float, f32[]) = f32[]  ->  f32[]
    mul(f32[]|float, 2.0)    ->  f32[] and float                                        ->  f32[]|float

Stand-ins for `f32[]` are NumPy scalars (as an element read gives), so Python's own operator dispatch
decides too: `complex + np.float64` is a Python `complex` (`python_number_result`).
"""

from __future__ import annotations

import warnings
from functools import reduce
from itertools import product
from typing import Callable, Optional, Sequence

import numpy as np

from .stand_ins import stand_in
from .types import Type, UnionType, join, members, type_of_value

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


def python_number_result(fn: Callable, types: Sequence[Type], kwargs: dict) -> Optional[Type]:
    """The type of `fn` on a Python number and NumPy scalars when Python's operator dispatch makes it a
    Python number (`0j + np.float64(x)` is a Python complex: np.float64 subclasses float), else None."""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            out = fn(*[stand_in(t, 1) for t in types], **kwargs)
    except Exception:
        return None
    return type_of_value(out) if type(out) in (bool, int, float, complex) else None
