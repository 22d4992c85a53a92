"""Which values carry a gradient: floating (and complex) ones, and any value whose type the
compiler does not know (it may be a float array at run time: never drop a gradient on a guess).
Integers, booleans, strings and None carry none. Backward nodes carry the span of the code they
differentiate, marked as such (`backward_span`)."""

from __future__ import annotations

from ..ir import Node
from ..types import ArrayType, ScalarType, TupleType

NO_GRADIENT_KINDS = ("int", "bool", "str", "none")


def has_gradient(node: Node) -> bool:
    t = node.type
    if isinstance(t, ArrayType):
        return t.dtype is None or t.dtype.startswith(("float", "complex"))
    if isinstance(t, ScalarType):
        return t.kind not in NO_GRADIENT_KINDS
    return not isinstance(t, TupleType)


def backward_span(span):
    """Where a backward node comes from: the forward code it differentiates (`# grad of f.py:3`)."""
    return span.of_backward() if span is not None else None
