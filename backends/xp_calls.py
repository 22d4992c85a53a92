"""One node as a call of an array namespace `xp`, or the reason the namespace cannot run it.

Shared by the emitter (backends/emit_xp.py, arguments are source text) and the interpreter
(backends/xp_interpreter.py, arguments are values), so both run exactly what the backend column
of the op table (graph/backend_ops.py) says.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..graph.attrs import keyword_attrs
from ..graph.backend_ops import NUMPY_ONLY, SAME, TO_PYTHON, Backend, BackendRefusal, Call, spelling_of
from ..graph.diagnostics import CodegenError
from ..graph.literals import OperandRef
from ..graph.types import ArrayType
from ..graph.vectorize.values import MATH_FUNCS


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
        calls = guarded_math_calls(node)
        if calls:   # the vectorizer's guard, not the user's `if`: name what the user wrote
            raise refuse(calls[0], backend, "it raises for some arguments where NumPy returns inf or nan, and the "
                         "vectorized loop would test them first (a run-time `if` computing the lazy array): "
                         f"write `np.{numpy_name(calls[0])}`")
        raise refuse(node, backend, "a run-time `if`/`while` on an array value would compute the lazy array: "
                     "write the choice with np.where, or compute the condition before the call")


def guarded_math_calls(node) -> list:
    """The `math.*` calls of a loop the vectorizer guarded (`if <an argument could raise>: <the loop>
    else: <whole-array code>`, an `if` at the loop's own span); [] for any other `if`."""
    if node.op != "if" or not node.regions:
        return []
    loops = [n for n in node.regions[0].nodes if n.op == "for_range" and n.span == node.span]
    return [n for loop in loops for n in walk(loop) if n.op == "call" and
            str(n.attrs.get("fn", "")).startswith("math.") and numpy_name(n) is not None]


def walk(node):
    for region in node.regions:
        for n in region.nodes:
            yield n
            yield from walk(n)


def numpy_name(call) -> str:
    """`exp` for `math.exp`, `arcsin` for `math.asin` (the ufunc the vectorizer maps it onto)."""
    spec = MATH_FUNCS.get(call.attrs["fn"].split(".", 1)[1])
    return None if spec is None else spec.ufunc


# ops whose result is their operand itself (not a view of part of it)
SAME_OBJECT = frozenset({"inplace", "refresh", "asarray", "array", "ascontiguousarray", "stop_gradient", "getattr",
                         "as_ndarray", "arg", "param"})


def check_write(node, backend: Backend) -> None:
    """A write (`a[i] = v`, `a op= b`) a backend without views or masked values cannot do as NumPy does."""
    target = node.operands[0]
    if not isinstance(target.type, ArrayType):
        return
    if not backend.views and target.opdef.result == "view" and target.op not in SAME_OBJECT \
            and not stored_back(node):
        raise refuse(node, backend, f"{backend.name} arrays have no views: writing into a part of an array "
                     "(`x[0][1] = v`, `x.T[0] = v`) would not change the array: write `x[0, 1] = v`")
    if node.op == "setitem" and not backend.mask_values:
        masks = any(isinstance(o.type, ArrayType) and o.type.dtype == "bool" for o in node.operands[2:])
        value = node.operands[1].type
        if masks and isinstance(value, ArrayType) and (value.shape is None or None in value.shape):
            raise refuse(node, backend, f"{backend.name} cannot assign a value of unknown size through a "
                         "boolean mask (`a[m] = b[m]`): write `a = np.where(m, b, a)`")


def stored_back(node) -> bool:
    """`x[i] += v`: the updated part is written back into the array at the same index."""
    if node.op != "inplace" or node.operands[0].op != "getitem":
        return False
    part = node.operands[0]
    return any(u.op == "setitem" and u.operands[0] is part.operands[0] and u.operands[1] is node and
               u.attrs.get("index") == part.attrs.get("index") and u.operands[2:] == part.operands[1:]
               for u in node.graph.users(node))


def alias_test(node, backend: Backend) -> str:
    """`np.may_share_memory(a, b)` (the vectorizer's guard) on a backend: "identity" when only the same
    array object shares memory (no views), "unknown" otherwise (the guard is then always true)."""
    return "identity" if not backend.views else "unknown"


def spelling_for(node, backend: Backend):
    """The op's spelling for `backend` (None: NumPy's own spelling works there), or a refusal."""
    if node.op == "call":
        if node.attrs.get("fn") == "numpy.may_share_memory":
            return None   # the caller spells it (alias_test)
        if on_array(node) and str(node.attrs.get("fn", "")).startswith("math.") and numpy_name(node):
            raise refuse(node, backend, f"`math` functions take Python numbers: write `np.{numpy_name(node)}`")
        if on_array(node) or str(node.attrs.get("fn", "")).startswith("numpy"):
            raise refuse(node, backend, NUMPY_ONLY["call"])
        return None
    spelling = spelling_of(node.op)
    if spelling is None:
        raise refuse(node, backend, NUMPY_ONLY.get(node.op, "not in the array API standard"))
    check_same(node, backend)
    if node.op in ("setitem", "inplace"):
        check_write(node, backend)
    return None if spelling is SAME else spelling


def spelled_call(spelling, node, args: list, kwargs: dict, backend: Backend, xp: Any, device: Any = None) -> Call:
    """The namespace call computing `node` from NumPy-ordered `args` and `kwargs`, or a refusal.
    `device` (the inputs' device, as the caller spells it): where a new array goes (`xp.zeros`;
    the `_like` functions follow their operand)."""
    try:
        call = spelling.call(node, args, kwargs)
    except BackendRefusal as e:
        raise refuse(node, backend, str(e)) from None
    if device is not None and backend.devices and node.opdef.creates and not call.name.endswith("_like") \
            and "device" not in call.kwargs:
        call = Call(call.name, call.args, {**call.kwargs, "device": device})
    if not spelling.standard and namespace_attr(xp, call.name) is None:
        raise refuse(node, backend, f"not in the array API standard, and {xp.__name__} has no `{call.name}`")
    return call


def flat_gather(node, backend: Backend) -> bool:
    """`v[idx]`, a 1-d `v` gathered by an integer array `idx` of more than one dimension, on a backend
    that gathers by one-dimensional indexes only: written `v[idx.reshape(-1)].reshape(idx.shape)` (methods:
    `idx` may be a NumPy array)."""
    if not backend.flat_gathers or node.op != "getitem":
        return False
    index = node.attrs.get("index", ())
    if len(index) != 1 or not isinstance(index[0], OperandRef):
        return False
    base, idx = node.operands[0].type, node.operands[index[0].index].type
    return isinstance(base, ArrayType) and base.rank == 1 and isinstance(idx, ArrayType) and \
        idx.dtype is not None and np.dtype(idx.dtype).kind in "iu" and idx.rank is not None and idx.rank > 1


def standard_index(node, index):
    """The index with a trailing `...` when it names fewer axes than the array has: NumPy reads
    `x[0]` on a matrix as `x[0, ...]`, the standard asks for the `...` (array_api_strict enforces it)."""
    base = node.operands[0].type
    if not isinstance(base, ArrayType) or base.rank is None or any(item is Ellipsis for item in index):
        return index
    named = 0
    for item in index:
        t = node.operands[item.index].type if isinstance(item, OperandRef) else None
        if isinstance(t, ArrayType) and t.dtype == "bool":   # a mask names as many axes as it has
            if t.rank is None:
                return index
            named += t.rank
        elif item is not None:
            named += 1
    return index if named >= base.rank else type(index)(tuple(index) + (Ellipsis,))


def promotion_casts(node) -> dict:
    """{operand position: dtype name} for the array operands an elementwise op must cast first: NumPy
    promotes across kinds (`float64 * int64`), the standard only within one (`float32 + float64`)."""
    opdef = node.opdef
    if not opdef.elementwise or len(node.operands) < 2:
        return {}
    first = 1 if node.op in ("where", "select") else 0
    typed = {k: o.type.dtype for k, o in enumerate(node.operands) if k >= first and
             isinstance(o.type, ArrayType) and o.type.dtype is not None}
    if len(typed) < 2:
        return {}
    common = np.result_type(*typed.values())
    return {k: common.name for k, d in typed.items() if np.dtype(d).kind != common.kind}


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
    return keyword_attrs(node.attrs)
