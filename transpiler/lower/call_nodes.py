"""The nodes a call becomes when it is not inlined: a table op, an opaque call, a value computed now, a raise at run time."""

from __future__ import annotations

import builtins
from typing import Optional

import numpy as np

from ...graph import ops as _ops
from ...graph.diagnostics import LoweringError
from ...graph.ir import Node
from ...graph.literals import is_literal
from ..static_pure import NotComputed, budget_of, describe_callable, not_computed, refusal
from ..values import Seq, Static, freeze, is_static, static_value
from .callables import out_by_keyword

# Reductions take `axis` as their second argument (the op table's `reduction` fact).
REDUCTIONS = frozenset(name for name, op in _ops.OPS.items() if op.reduction)


def op_call(state, op_name: str, args: list, kwargs: dict, span, extra: Optional[dict] = None) -> Node:
    """Positional arguments become operands; compile-time keywords become attributes."""
    attrs = dict(extra or {})
    args, kwargs = out_by_keyword(_ops.OPS[op_name].fn, args, kwargs, op_name in REDUCTIONS)
    python_call = op_name == "pycall" or str(attrs.get("fn", "")).startswith("builtins.")
    operands = list(args) if python_call else [numpy_operand(state, a) for a in args]
    if op_name in REDUCTIONS and len(operands) >= 2 and is_static(args[1]):
        attrs["axis"] = freeze(static_value(args[1]))
        operands = operands[:1] + operands[2:]
    if op_name == "astype" and operands and is_static(operands[-1]):
        attrs["dtype"] = np.dtype(static_value(operands.pop())).type
    runtime_kw = []
    for key, value in kwargs.items():
        if is_static(value) and (key == "dtype" or is_literal(freeze(static_value(value)))):
            v = static_value(value)
            attrs[key] = np.dtype(v).type if key == "dtype" and v is not None else freeze(v)
        else:
            runtime_kw.append(key)
            operands.append(value)
    if runtime_kw:
        attrs["kw"] = tuple(runtime_kw)
    return state.emit(op_name, operands, attrs, span)


def numpy_operand(state, value):
    """NumPy accepts tuples wherever it accepts lists; tuples print as literals."""
    if isinstance(value, Seq) and value.kind == "list":
        return Seq(value.items, "tuple")
    if isinstance(value, Static) and isinstance(value.value, list):
        return Static(freeze(value.value), value.path)
    return value


def static_call(state, fn, args, kwargs, span):
    """A pure call on compile-time values, made now; an exception it raises is raised at run time.

    Reading a file from elsewhere (`state.sealed`), only the calls static_pure's tables allow are made.
    """
    try:
        values, keywords = [static_value(a) for a in args], {k: static_value(v) for k, v in kwargs.items()}
        reason = refusal(fn, values, keywords, budget_of(state.root_globals)) if state.sealed else None
        if reason is not None:
            raise not_computed(f"the result of {describe_callable(fn)}(...)", reason, span)
        return Static(fn(*values, **keywords))
    except NotComputed:
        raise
    except Exception as e:  # noqa: BLE001 - eager Python raises it when the call runs
        return raise_later(state, e, span)


def try_static_call(state, fn, args, kwargs):
    """Compute a call on compile-time values now; None when the result is an array, or when a file
    read from elsewhere (`state.sealed`) may not make this call now (it stays a call at run time)."""
    try:
        values, keywords = [static_value(a) for a in args], {k: static_value(v) for k, v in kwargs.items()}
        if state.sealed and refusal(fn, values, keywords, budget_of(state.root_globals)) is not None:
            return None
        result = fn(*values, **keywords)
    except NotComputed:
        raise
    except Exception:
        return None  # raise it at run time, where eager Python raises it
    if isinstance(result, np.ndarray):
        return None
    return Static(result)


def raise_later(state, error: Exception, span):
    """Raise `error` (a builtin exception with literal arguments) where the call runs."""
    cls = type(error)
    if getattr(builtins, cls.__name__, None) is not cls or not all(is_literal(a) for a in error.args):
        raise LoweringError(f"this call fails at compile time: {cls.__name__}: {error}", span) from None
    state.emit("raise", [Static(f"builtins.{cls.__name__}")] + [Static(a) for a in error.args], span=span)
    return Static(None)
