"""Cotangents that hold one value everywhere: the seed of an output (ones) and the gradient of an
input the output does not depend on (zeros), shaped like the value they stand for."""

from __future__ import annotations

import numpy as np

from ..ir import Node
from ..types import ArrayType, ScalarType, TupleType


def ones_like(b, node: Node):
    """The all-ones sensitivity: a tuple gets one per item (MindSpore's default `sens`)."""
    t = node.type
    if isinstance(t, ArrayType) and t.rank == 0 and t.dtype is not None:
        return b.const(np.dtype(t.dtype).type(1))   # a scalar loss: no need to compute it for its dtype
    if isinstance(t, ArrayType):
        return b.op("ones_like", node)        # its dtype: a float32 loss gets float32 gradients
    if isinstance(node.type, TupleType):
        return {k: ones_like(b, b.op("tuple_get", node, index=k)) for k in range(len(node.type.items))}
    return b.const(1.0)


def zeros_like(b, node: Node) -> Node:
    """A zero gradient: a zero array shaped like an array, 0.0 for a Python number."""
    if isinstance(node.type, ScalarType):
        return b.const(0.0)
    return b.op("zeros_like", node)
