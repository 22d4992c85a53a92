"""Evaluating a user's module-level code and Cell `__init__`s without running the file: lowering restricted to compile-time values."""

from __future__ import annotations

import dataclasses
import types
from dataclasses import dataclass
from typing import Optional

import libcst as cst

from ..graph.callables import resolve_callable
from ..graph.diagnostics import GraphjitError, LoweringError, UnknownValueError
from ..graph.ir import Graph
from ..graph.ops import OPS
from ..graph.spans import SourceSpan
from .lower import LoweringState
from .lower.control import NeedsStatic
from .lower.dispatch import CONSTRUCTS, STATEMENTS
from .values import Static, is_static, static_value
@dataclass
class Unresolved:
    """A module-level name whose value exists only when the file runs."""

    name: str
    span: Optional[SourceSpan]
    why: str
    __graphjit_unresolved__ = True

    def error(self, use_span=None) -> LoweringError:
        return UnknownValueError(f"`{self.name}` is {self.why} at {self.span}; graphjit transpile does not run the "
                             "file", use_span or self.span, hint="pass example inputs with --input, or build the "
                             "value inside the function from constants")


class NotStatic(NeedsStatic):
    """Static interpretation of `__init__` met something only running the file could compute."""


class StaticEvaluator(LoweringState):
    """The lowering machinery restricted to compile-time values: anything run-time is an error."""

    def __init__(self, module, cls=None):
        """`module`: the StaticModule whose namespace names resolve in; `cls`: the Cell class of an `__init__`."""
        super().__init__(None, Graph("<static>"), STATIC_CONSTRUCTS)
        self.module = module
        self.cls = cls
        self.root_globals = module.namespace

    def emit(self, op, operands=(), attrs=None, span=None, name="", regions=(), type=None):
        raise NotStatic("this needs values that exist only when the file runs", span)

    def lookup(self, name, frame, span):
        value = super().lookup(name, frame, span)
        if isinstance(value, Static) and isinstance(value.value, Unresolved):
            raise value.value.error(span)
        return value

    def attribute(self, value, name, span):
        if isinstance(value, Static):
            try:
                return Static(getattr(value.value, name))
            except AttributeError as e:
                raise LoweringError(str(e), span) from None
        return super().attribute(value, name, span)

    def op_call(self, op_name, args, kwargs, span, extra=None):
        """NumPy on constants runs for real here (an `__init__` making its weights)."""
        if not (all(is_static(a) for a in args) and all(is_static(v) for v in kwargs.values())):
            raise NotStatic("this call needs values that exist only when the file runs", span)
        fn = resolve_callable(extra["fn"]) if extra else OPS[op_name]
        try:
            return Static(fn(*[static_value(a) for a in args], **{k: static_value(v) for k, v in kwargs.items()}))
        except Exception as e:
            raise LoweringError(f"{type(e).__name__}: {e}", span) from None

    def call(self, callee, args, kwargs, span):
        if isinstance(callee, Static):
            fn = callee.value
            if fn is super:
                obj = self.first_arg
                return Static(super(self.cls, obj))
            real = isinstance(fn, (types.BuiltinMethodType, types.MethodWrapperType)) or (
                isinstance(fn, types.MethodType) and (getattr(fn.__func__, "__qualname__", "").endswith(
                    "__init__") or fn.__func__.__module__.startswith("graphjit")))
            if real:
                if not (all(is_static(a) for a in args) and all(is_static(v) for v in kwargs.values())):
                    raise NotStatic("this call needs values that exist only when the file runs", span)
                try:
                    return Static(fn(*[static_value(a) for a in args],
                                     **{k: static_value(v) for k, v in kwargs.items()}))
                except GraphjitError:
                    raise
                except Exception as e:
                    raise LoweringError(f"{type(e).__name__}: {e}", span) from None
        return super().call(callee, args, kwargs, span)

    @property
    def first_arg(self):
        return self._self_obj

    def bind_params(self, params, frame, args, kwargs, fn, span):
        self._self_obj = args[0].value if args else None
        super().bind_params(params, frame, args, kwargs, fn, span)

    def assign_target(self, target, value, frame):
        if isinstance(target, cst.Attribute):
            obj = self.lower_expr(target.value, frame)
            if not isinstance(obj, Static):
                raise NotStatic("attribute assignment on a run-time value", self.span(target, frame))
            if not is_static(value):
                raise NotStatic("this value exists only when the file runs", self.span(target, frame))
            setattr(obj.value, target.attr.value, static_value(value))
            return
        super().assign_target(target, value, frame)


def _evaluate_expression_statement(state: StaticEvaluator, stmt, frame) -> None:
    """An expression statement of `__init__`, evaluated for its effect (a docstring is skipped)."""
    if isinstance(stmt.value, (cst.SimpleString, cst.ConcatenatedString)):
        return
    state.lower_expr(stmt.value, frame)


# the lowering's constructs, but an expression statement is evaluated now (it cannot be a graph effect)
STATIC_CONSTRUCTS = dataclasses.replace(CONSTRUCTS, statements={**STATEMENTS, cst.Expr: _evaluate_expression_statement})
