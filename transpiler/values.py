"""What an expression lowers to: a run-time `Node`, or a compile-time value of some kind.

Compile-time values (`Static`) remember the access path they were reached by, so that an
array found inside them (a weight) becomes a graph parameter read through that path at every
call instead of a baked-in constant.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Union

import libcst as cst

from ..graph.ir import Node
from ..graph.paths import Path
from ..graph.types import ArrayType, TupleType


@dataclass
class Static:
    """A compile-time Python value, and how to reach it again at run time (if known)."""

    value: Any
    path: Optional[Path] = None

    def __repr__(self) -> str:
        return f"Static({self.value!r})"

    @property
    def from_outside(self) -> bool:
        """Read from the caller's world (an argument, a global, a closure, an attribute of one), not
        made by the function's own compile-time code (a `const`): it may change between calls."""
        return self.path is not None and self.path.root_kind != "const"


@dataclass
class Seq:
    """A tuple or list known at compile time whose items may be run-time values."""

    items: list
    kind: str = "tuple"  # tuple | list


@dataclass
class RangeVal:
    """`range(start, stop, step)` with at least one bound known only at run time."""

    start: Any
    stop: Any
    step: Any


@dataclass
class MethodVal:
    """A method of a run-time array, waiting for its call: `x.sum` in `x.sum(axis=1)`."""

    obj: Node
    name: str


@dataclass
class SourceFunc:
    """A `def` or `lambda` inside the compiled code: inlined at each call, closing over `frame`."""

    node: Union[cst.FunctionDef, cst.Lambda]
    frame: Any
    name: str
    defaults: dict = field(default_factory=dict)


@dataclass
class Undefined:
    """A name that is unbound on some path (assigned in one branch only, or a run-time loop)."""

    name: str
    reason: str
    poisoned: bool = False   # its defining statement already produced a diagnostic
    unbound: bool = False    # surely unbound at run time (deleted): reading it raises UnboundLocalError
    maybe: Any = None        # LAX: a run-time value that is the value, or UNBOUND where the name is unbound


@dataclass
class MaybeUnbound:
    """A name first assigned in a loop body, read where the body may not have assigned it yet.

    `value` is the run-time value (a `Node`), or the loop's placeholder `UNBOUND` where the name is
    still unbound: `for i in range(n): for j in range(i + 1, n): ...` leaves `j` unbound when the
    inner loop never ran. Reading the name tests the value and raises UnboundLocalError as Python
    does. `vtype`: the type of the value where it is bound (None: not known yet, on a loop's first
    typing pass).
    """

    value: Any
    vtype: Any = None
    free: bool = False   # read by a nested function: NameError ("free variable") where unbound


# LAX: the run-time stand-in for "this name is unbound here" (a fallback block reading it deletes it)
UNBOUND = "\x00graphjit:unbound\x00"


Value = Union[Node, Static, Seq, RangeVal, MethodVal, SourceFunc]


def is_static(value: Any) -> bool:
    if isinstance(value, Static):
        return True
    if isinstance(value, Seq):
        return all(is_static(v) for v in value.items)
    return False


def static_value(value: Any) -> Any:
    """The Python value of a fully compile-time value (`is_static` must hold)."""
    if isinstance(value, Static):
        return value.value
    if isinstance(value, Seq):
        items = [static_value(v) for v in value.items]
        return tuple(items) if value.kind == "tuple" else items
    raise TypeError(value)


def describe_value(value: Any) -> str:
    """What a lowered value is, in the user's words (never the front end's class names)."""
    if isinstance(value, Static):
        return f"a compile-time {type(value.value).__name__}"
    if isinstance(value, Seq):
        return f"a {value.kind} of {len(value.items)} items"
    if isinstance(value, Node):
        if value.op == "shape" and value.operands:
            return f"`{_user_name(value.operands[0])}.shape`, whose rank is not known at compile time"
        if isinstance(value.type, ArrayType):
            return f"an array whose length is not known at compile time" if not value.type.shape or \
                value.type.shape[0] is None else "an array"
        if isinstance(value.type, TupleType):
            return "a tuple made at run time"
        return f"a run-time {value.type} value"
    if isinstance(value, RangeVal):
        return "a range"
    if isinstance(value, (MethodVal, SourceFunc)):
        return "a function"
    return "a value"


def _user_name(node: Node) -> str:
    return node.name or "the array"


class SeqMethod:
    """`xs.append` on a compile-time list of values, waiting for its call."""

    def __init__(self, seq, name):
        self.seq = seq
        self.name = name


class ListIndex:
    """A list used as an index: becomes a `list` node."""

    def __init__(self, items):
        self.items = items


def freeze(value):
    """A compile-time value with its lists made tuples (what a literal attribute can hold)."""
    return tuple(freeze(v) for v in value) if isinstance(value, list) else value
