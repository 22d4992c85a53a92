"""Which nodes may raise: dead code elimination keeps an unused pure node that may.

Each op's `domain` in the op table (graph/ops.py) names where it may fail for values its operand
types allow; the rules here decide, from a node's operand types and constants, whether it can:
`a // b` on Python numbers unless `b` is a non-zero constant, `x[i]` unless `i` is a compile-time
int within a static axis, `np.max` of a possibly empty array. `Node.may_raise` asks `may_raise`.
"""

from __future__ import annotations

import math

import numpy as np

from . import shape_rules as R
from .literals import OperandRef, is_literal
from .ops import OPS
from .types import FLOAT, ArrayType


# Dead code elimination removes an unused pure node only when running it cannot raise for any
# value its operands' types allow: eager Python would raise there, so compiled code must too.
def may_raise(node) -> bool:
    """May running `node` raise? False only when its operand types rule every failure out."""
    opdef = OPS[node.op]
    if opdef.emit == "special":
        return node.op == "getitem" and _index_may_raise(node)
    rule = _DOMAIN_RULES.get(opdef.domain)
    if rule is not None and rule(node):
        return True
    return not _typed_statically(node)


def _typed_statically(node) -> bool:
    """Every operand (and the result) has a type whose shape and dtype are known, and the op's
    type rule accepted them: a mismatch (shapes that do not broadcast, a reshape to another size)
    leaves the result's type unknown."""
    return all(_static_type(o) for o in node.operands) and _static_type(node)


def _static_type(node) -> bool:
    if node.op == "const":
        return is_literal(node.attrs["value"])
    t = node.type
    if isinstance(t, ArrayType):
        return t.is_static and all(d >= 0 for d in t.shape)
    return isinstance(t, R.ScalarType) and t.kind in ("int", "float", "bool", "complex")


def _python_scalar(node) -> bool:
    """A Python number (not a NumPy one): its operators raise where NumPy's warn."""
    if node.op == "const":
        value = node.attrs["value"]
        return isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic)
    return not isinstance(node.type, ArrayType)


def _nonzero_const(node) -> bool:
    if node.op != "const":
        return False
    value = node.attrs["value"]
    return isinstance(value, (bool, int, float, np.number)) and value != 0


def _division_may_raise(node) -> bool:
    """`a // 0` on Python numbers raises ZeroDivisionError; NumPy ufuncs warn instead."""
    if node.opdef.emit != "infix" or len(node.operands) != 2:
        return False
    a, b = node.operands
    return _python_scalar(a) and _python_scalar(b) and not _nonzero_const(b)


def _domain_may_raise(node) -> bool:
    """`0 ** -1` and `10.0 ** 400` raise on Python numbers; integer arrays to negative integer
    powers raise ValueError. Other domain errors (`np.log(-1)`) are NaN and a warning."""
    if node.op not in ("pow", "power") or len(node.operands) != 2:
        return False
    base, exponent = node.operands
    if node.op == "pow" and _python_scalar(base) and _python_scalar(exponent):
        return True
    if isinstance(exponent.type, ArrayType) and exponent.type.dtype is not None \
            and exponent.type.dtype.startswith("float"):
        return False
    value = exponent.attrs["value"] if exponent.op == "const" else None
    return not (isinstance(value, (int, float, np.number)) and value >= 0) and not _float_dtype(base)


def _float_dtype(node) -> bool:
    t = node.type
    if node.op == "const":
        return isinstance(node.attrs["value"], (float, np.floating))
    return isinstance(t, ArrayType) and t.dtype is not None and t.dtype.startswith("float") or t == FLOAT


def _convert_may_raise(node) -> bool:
    """`int(nan)`, `float(huge)`, `bool(array)`, `len(scalar)`, `round(inf)`, `.item()` of a
    non-scalar array: safe only on an operand that already is the kind asked for."""
    if len(node.operands) != 1:
        return True
    t = node.operands[0].type
    if node.op in ("int", "bool"):
        return not (isinstance(t, R.ScalarType) and t.kind in ("int", "bool"))
    if node.op == "float":
        return not (isinstance(t, R.ScalarType) and t.kind in ("float", "bool"))
    if node.op == "len":
        return not (isinstance(t, ArrayType) and t.shape is not None and len(t.shape) >= 1)
    if node.op == "item":
        return not (isinstance(t, ArrayType) and t.is_static and math.prod(t.shape) == 1)
    return True


def _identity_may_raise(node) -> bool:
    """`np.max` (and argmax, min, ...) of an empty array raises ValueError."""
    t = node.operands[0].type if node.operands else None
    return not (isinstance(t, ArrayType) and t.is_static and 0 not in t.shape)


def _index_may_raise(node) -> bool:
    """An index raises unless every item is a slice, `None`, `...` or a compile-time int within a
    static axis, and there are no more of them than axes."""
    base = node.operands[0].type
    if not isinstance(base, ArrayType) or base.shape is None:
        return True
    items = list(node.attrs["index"])
    items = [_const_item(node, it) if isinstance(it, OperandRef) else it for it in items]
    if items.count(Ellipsis) > 1:
        return True
    axes = [it for it in items if it is not None and it is not Ellipsis]
    if len(axes) > len(base.shape):
        return True
    if Ellipsis in items:
        cut = items.index(Ellipsis)
        front = [it for it in items[:cut] if it is not None]
        back = [it for it in items[cut + 1:] if it is not None]
        placed = list(zip(front, base.shape)) + list(zip(back, base.shape[len(base.shape) - len(back):]))
    else:
        placed = list(zip(axes, base.shape))
    return any(_item_may_raise(node, item, dim) for item, dim in placed)


_RUNTIME_ITEM = object()


def _const_item(node, ref):
    """An operand that is a compile-time int stands for itself; any other stays a run-time item."""
    operand = node.operands[ref.index]
    if operand.op == "const" and isinstance(operand.attrs["value"], (int, np.integer)) \
            and not isinstance(operand.attrs["value"], bool):
        return int(operand.attrs["value"])
    return _RUNTIME_ITEM if not isinstance(operand.type, R.ScalarType) or operand.type.kind != "int" else ref


def _item_may_raise(node, item, dim) -> bool:
    if isinstance(item, slice):  # slices never raise, with bounds that are ints (or None)
        return any(isinstance(p, OperandRef) and not _int_operand(node, p) for p in (item.start, item.stop, item.step))\
            or item.step == 0
    if isinstance(item, (int, np.integer)) and not isinstance(item, bool):
        return dim is None or not -dim <= item < dim
    return True  # a run-time int, an array or a mask


def _int_operand(node, ref) -> bool:
    t = node.operands[ref.index].type
    return isinstance(t, R.ScalarType) and t.kind in ("int", "bool") or \
        isinstance(t, ArrayType) and t.shape == () and t.dtype is not None and "int" in t.dtype


def _size_may_raise(node) -> bool:
    before, after = node.operands[0].type, node.type
    return not (isinstance(before, ArrayType) and before.is_static and isinstance(after, ArrayType)
                and after.is_static and math.prod(before.shape) == math.prod(after.shape))


_DOMAIN_RULES = {"size": _size_may_raise, "division": _division_may_raise, "domain": _domain_may_raise, "convert": _convert_may_raise,
                 "identity": _identity_may_raise}
