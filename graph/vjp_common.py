"""What every VJP rule uses: the backward builder and the facts rules read off operands.

A rule (graph/vjp_elementwise.py, graph/vjp_arrays.py) builds its backward nodes with a `Backward`
and asks this module about its operands: their rank, their static shape, whether they carry a
gradient, and the compile-time value of an argument given positionally, by keyword or as an
attribute. A rule that needs a fact the graph does not know raises NotImplementedError with a
sentence the user reads (the transform turns it into a GJ501 diagnostic at the user's line).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

import numpy as np

from .types import ArrayType, ScalarType, TupleType

if TYPE_CHECKING:  # annotations only: the op table imports the rules
    from .ir import Node


class Backward:
    """Builds backward nodes into a graph, each tagged with the span of the forward node it undoes."""

    def __init__(self, graph):
        self.graph = graph
        self.span = None

    def op(self, name: str, *operands: Node, **attrs) -> Node:
        return self.graph.add(name, operands, attrs, span=self.span)

    def const(self, value) -> Node:
        return self.graph.const(value, self.span)

    def shape_of(self, node: Node) -> Node:
        """The shape of `node` as a compile-time tuple when its type knows it, else read at run time."""
        t = node.type
        if isinstance(t, ArrayType) and t.shape is not None and None not in t.shape:
            return self.const(tuple(t.shape))
        return self.op("shape", node)


Rule = Callable[[Backward, "Node", "Node"], tuple]


def rank(node: Node) -> Optional[int]:
    """The number of axes of `node`'s value (0 for a scalar), or None when its type does not say."""
    t = node.type
    if isinstance(t, ArrayType):
        return t.rank
    if isinstance(t, ScalarType):
        return 0
    if node.op == "const":
        return np.ndim(node.value)
    return None


def known_rank(node: Node, what: str = "the operand") -> int:
    r = rank(node)
    if r is None:
        raise NotImplementedError(f"the number of axes of {what} must be known")
    return r


def static_shape(node: Node, what: str = "the operand") -> tuple:
    """The shape of `node` when its type knows every axis (a scalar's is `()`)."""
    t = node.type
    if isinstance(t, ScalarType):
        return ()
    if isinstance(t, ArrayType) and t.is_static:
        return tuple(t.shape)
    if node.op == "const":
        return np.shape(node.value)
    raise NotImplementedError(f"the shape of {what} must be known at compile time")


def differentiable(node: Node) -> bool:
    """Does a gradient flow through this value? Floating and complex values carry one, and so does a
    value whose type the compiler does not know (it may be a float array at run time: a gradient
    is never dropped on a guess); integers, booleans, strings, None and tuples carry none (a tuple's
    items are followed one by one)."""
    t = node.type
    if isinstance(t, ArrayType):
        return t.dtype is None or t.dtype.startswith(("float", "complex"))
    if isinstance(t, ScalarType):
        return t.kind not in ("int", "bool", "str", "none")
    return not isinstance(t, TupleType)


def static_value(node: Node, what: str = "this argument") -> Any:
    """The compile-time value of `node`: a constant, or a tuple or list built of constants."""
    if node.op == "const":
        return node.value
    if node.op in ("tuple", "list"):
        items = [static_value(o, what) for o in node.operands]
        return tuple(items) if node.op == "tuple" else items
    raise NotImplementedError(f"{what} must be known at compile time")


def argument(node: Node, position: Optional[int], name: str, default: Any = None) -> Any:
    """The compile-time value of the op's argument `name`: given as operand `position`, as a
    keyword operand (attr `kw` names the trailing operands) or as an attribute."""
    operand = argument_node(node, position, name)
    return node.attrs.get(name, default) if operand is None else static_value(operand, f"`{name}`")


def argument_node(node: Node, position: Optional[int], name: str) -> Optional[Node]:
    """The operand holding the op's argument `name` (given as operand `position`, None for a
    keyword-only argument, or as a keyword operand), or None when it is an attribute or not given."""
    kw = node.attrs.get("kw", ())
    positional = len(node.operands) - len(kw)
    if name in kw:
        return node.operands[positional + list(kw).index(name)]
    return node.operands[position] if position is not None and position < positional else None


def explicit_arguments(node: Node) -> int:
    """How many operands are positional (the rest are keyword operands named by attr `kw`)."""
    return len(node.operands) - len(node.attrs.get("kw", ()))


def none_for_rest(node: Node, *cotangents) -> tuple:
    """`cotangents` for the first operands, None (no gradient) for the others."""
    return tuple(cotangents) + (None,) * (len(node.operands) - len(cotangents))


def np_dtype(name: str):
    return getattr(np, name)
