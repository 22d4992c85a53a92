"""Run one (non-region) graph node on concrete operand values.

Shared by the interpreter (`exec_mode="no_sink"`) and constant folding, so that a folded value is
exactly what the node would have computed at run time.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .callables import resolve_callable
from .attrs import QUIET_ERRSTATE, is_quiet, keyword_attrs
from .literals import OperandRef
from .ops import OPS

def build_index(node, index, vals: Sequence[Any]) -> tuple:
    """The Python index `node.attrs['index']` denotes, `$k` taken from operand values."""
    def part(p):
        return vals[p.index] if isinstance(p, OperandRef) else p
    items = []
    for item in index:
        if isinstance(item, slice):
            items.append(slice(part(item.start), part(item.stop), part(item.step)))
        else:
            items.append(part(item))
    return items[0] if len(items) == 1 else tuple(items)  # `d['k']` on a dict is not `d[('k',)]`


def evaluate(node, vals: Sequence[Any]) -> Any:
    """The value of `node` given its operands' values (region ops are the interpreter's job)."""
    if is_quiet(node.attrs):
        with np.errstate(**QUIET_ERRSTATE):
            return value_of(node, vals)
    return value_of(node, vals)


def value_of(node, vals: Sequence[Any]) -> Any:
    op = node.op
    attrs = node.attrs
    if op == "const":
        return attrs["value"]
    if op == "getitem":
        return vals[0][build_index(node, attrs["index"], vals)]
    if op == "setitem":
        vals[0][build_index(node, attrs["index"], vals)] = vals[1]
        return None
    if op == "add_at":
        np.add.at(vals[0], build_index(node, attrs["index"], vals), vals[1])
        return None
    if op == "scratch":   # the generated code reuses a buffer between calls; here a new one
        return np.empty(node.type.shape, node.type.dtype)
    if op == "stop_gradient":
        return vals[0]
    if op == "inplace":
        return OPS[attrs["op"]].inplace_fn(vals[0], vals[1])
    if op == "tuple":
        return tuple(vals)
    if op == "list":
        return list(vals)
    if op == "dict":
        return dict(zip(attrs["keys"], vals))
    if op == "format":
        return attrs["template"].format(*vals)
    if op == "isinstance":
        return isinstance(vals[0], tuple(resolve_callable(c) for c in attrs["classes"]))
    if op == "tuple_get":
        return vals[0][attrs["index"]]
    if op == "refresh":
        return vals[0]
    if op == "dim":
        return vals[0].shape[attrs["axis"]]
    if op in ("shape", "ndim", "size"):
        return getattr(vals[0], op)
    kw = attrs.get("kw", ())
    static = keyword_attrs(attrs)
    n_pos = len(vals) - len(kw)
    kwargs = dict(zip(kw, vals[n_pos:]))
    if op == "call":
        return resolve_callable(attrs["fn"])(*vals[:n_pos], **kwargs, **static)
    if "out" in attrs:  # memory planning: compute into operand k's buffer
        target = vals[attrs["out"]]
        OPS[op].ufunc(*vals[:n_pos], **kwargs, **static, out=target)
        return target
    if op == "astype":
        return vals[0].astype(attrs["dtype"])
    return OPS[op](*vals[:n_pos], **kwargs, **static)
