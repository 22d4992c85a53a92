"""One node as a call of an array namespace `xp`, or the reason the namespace cannot run it.

Shared by the emitter (backends/emit_xp.py, arguments are source text) and the interpreter
(backends/xp_interpreter.py, arguments are values), so both run exactly what the backend column
of the op table (graph/backend_ops.py) says.
"""

from __future__ import annotations

from typing import Any

from ..graph.backend_ops import NUMPY_ONLY, SAME, TO_PYTHON, Backend, BackendRefusal, Call, spelling_of
from ..graph.diagnostics import CodegenError
from ..graph.types import ArrayType


def on_array(node) -> bool:
    return any(isinstance(o.type, ArrayType) for o in node.operands)


def refuse(node, backend: Backend, why: str) -> CodegenError:
    """The one-line error: which op, which backend, why (the span gives the user's line)."""
    return CodegenError(f"`{what(node)}` cannot run on {backend.name} arrays: {why}", node.span,
                        hint="call it on NumPy arrays, or write it with the standard's functions "
                             "(docs/array-api.md lists what each backend runs)")


def what(node) -> str:
    if node.op == "call":
        return node.attrs.get("fn", "call").replace("numpy.", "np.")
    opdef = node.opdef
    if opdef.emit == "call":
        return opdef.symbol
    if opdef.emit in ("method", "attr"):
        return f"a.{opdef.symbol}"
    return {"setitem": "a[i] = v", "inplace": "a op= b", "add_at": "np.add.at"}.get(node.op, node.op)


def check_same(node, backend: Backend) -> None:
    """An op written as NumPy writes it: refused only where it would compute a lazy array."""
    if backend.lazy and node.op in TO_PYTHON and on_array(node):
        raise refuse(node, backend, "it turns a lazy array into a Python value (a hidden .compute()); "
                     "graphjit keeps results lazy: compute outside the function")
    if "out" in node.attrs or "out" in node.attrs.get("kw", ()):
        raise refuse(node, backend, "`out=` writes into an existing NumPy buffer")


def check_condition(node, cond, backend: Backend) -> None:
    """A run-time `if`/`while` (`node`) on `cond`: refused when that would compute a lazy array."""
    if backend.lazy and isinstance(cond.type, ArrayType):
        raise refuse(node, backend, "a run-time `if`/`while` on an array value would compute the lazy array: "
                     "write the choice with xp.where, or compute the condition before the call")


def spelling_for(node, backend: Backend):
    """The op's spelling for `backend` (None: NumPy's own spelling works there), or a refusal."""
    if node.op == "call":
        if on_array(node) or str(node.attrs.get("fn", "")).startswith("numpy"):
            raise refuse(node, backend, NUMPY_ONLY["call"])
        return None
    spelling = spelling_of(node.op)
    if spelling is None:
        raise refuse(node, backend, NUMPY_ONLY.get(node.op, "not in the array API standard"))
    check_same(node, backend)
    return None if spelling is SAME else spelling


def spelled_call(spelling, node, args: list, kwargs: dict, backend: Backend, xp: Any) -> Call:
    """The namespace call computing `node` from NumPy-ordered `args` and `kwargs`, or a refusal."""
    try:
        call = spelling.call(node, args, kwargs)
    except BackendRefusal as e:
        raise refuse(node, backend, str(e)) from None
    if not spelling.standard and namespace_attr(xp, call.name) is None:
        raise refuse(node, backend, f"not in the array API standard, and {xp.__name__} has no `{call.name}`")
    return call


def namespace_attr(xp: Any, name: str) -> Any:
    """`xp.linalg.outer` from "linalg.outer", None when missing."""
    obj = xp
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def static_kwargs(node) -> dict:
    """The node's static attributes given as keywords (`axis=0`, `keepdims=True`)."""
    return {k: v for k, v in node.attrs.items() if k not in ("kw", "fn", "out", "index", "op")}
