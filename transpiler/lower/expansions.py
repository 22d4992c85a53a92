"""NumPy functions the front end lowers to op-table nodes itself, because their arguments decide the
form: `np.histogram` with a number of bins becomes its four steps (histogram.py), and
`np.reshape(a, shape)` on an array becomes the `reshape` node `a.reshape(shape)` makes, so that its
result is typed (a view, its shape known when `shape` is) rather than an opaque call's object.

Each expansion returns the value, or None to keep NumPy's own call (an opaque `call` node).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ...graph.ir import Node
from ...graph.types import ArrayType
from .call_nodes import numpy_operand
from .histogram import lower_histogram


def lower_reshape(state, args: list, kwargs: dict, span) -> Optional[Node]:
    """`np.reshape(a, shape)`, positional, on an array: `a.reshape(shape)`. Keywords (`order`,
    `copy`, `newshape`) and non-array `a` (a list, a scalar) keep NumPy's call."""
    if kwargs or len(args) != 2 or not (isinstance(args[0], Node) and isinstance(args[0].type, ArrayType)):
        return None
    return state.emit("reshape", [args[0], numpy_operand(state, args[1])], span=span)


EXPANSIONS = {id(np.histogram): lower_histogram, id(np.reshape): lower_reshape}
