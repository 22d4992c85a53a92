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
from .static_pure import (SKIPPED_EFFECTS, NotComputed, budget_of, building_library_objects, describe_callable,
                          is_library_class, is_library_function, is_library_method, module_attribute, not_computed,
                          refusal)
from .values import Static, is_static, static_value


@dataclass
class Unresolved:
    """A module-level name whose value exists only when the file runs; `why` says where it comes from."""

    name: str
    span: Optional[SourceSpan]
    why: str                   # "comes from a call to os.system", "is imported from `helpers`"...
    detail: str = ""           # what stopped the static view there: "`os` is imported from `os`, which ..."
    __graphjit_unresolved__ = True

    def error(self, use_span=None) -> LoweringError:
        detail = f": {self.detail}" if self.detail else ""
        return UnknownValueError(f"cannot know `{self.name}` without running the module: it {self.why} ({self.span})"
                                 f"{detail}", use_span or self.span, hint="graphjit reads the file without running "
                                 "it: pass example inputs with --input, or build the value from literals and NumPy")


class NotStatic(NeedsStatic):
    """Static interpretation of `__init__` met something only running the file could compute."""


def refused_call(fn, reason: str, span) -> NotComputed:
    """The error of a call the static view does not make (`os.system(...)`, `np.save(...)`)."""
    return not_computed(f"the result of {describe_callable(fn)}(...)", f"graphjit does not call "
                        f"{describe_callable(fn)} while it reads a file: {reason}", span)


def _skipped(fn) -> bool:
    try:
        return fn in SKIPPED_EFFECTS
    except TypeError:   # unhashable
        return False


def may_instantiate(cls) -> bool:
    """Classes built for real while a file is read: the file's own (their methods never run), graphjit's
    library classes, and the builtin and NumPy scalar types of the pure tables."""
    return getattr(cls, "__graphjit_static_class__", False) or is_library_class(cls)


class StaticEvaluator(LoweringState):
    """The lowering machinery restricted to compile-time values: anything run-time is an error.

    Sealed: only the calls `static_pure` allows are made; everything else is a `NotComputed` error.
    """

    def __init__(self, module, cls=None):
        """`module`: the StaticModule whose namespace names resolve in; `cls`: the Cell class of an `__init__`."""
        super().__init__(None, Graph("<static>"), STATIC_CONSTRUCTS)
        self.module = module
        self.cls = cls
        self.root_globals = module.namespace
        self.sealed = True
        self.static_only = True   # everything must be computed now: a refusal is an error, never a node
        self.failure = None   # the error of the statement that failed last (what a fallback would hide)

    def emit(self, op, operands=(), attrs=None, span=None, name="", regions=(), type=None):
        if op == "fallback" and self.failure is not None:   # a statement failed: its own error says why
            raise self.failure
        raise NotStatic("this needs values that exist only when the file runs", span)

    def reached(self, value, span):
        """Arrays found here stay the objects they are (a module's weights given to a Cell's `__init__`)."""
        return value

    def lookup(self, name, frame, span):
        value = super().lookup(name, frame, span)
        if isinstance(value, Static) and isinstance(value.value, Unresolved):
            raise value.value.error(span)
        return value

    def attribute(self, value, name, span):
        if isinstance(value, Static):
            obj = value.value
            try:
                if isinstance(obj, types.ModuleType):
                    return Static(module_attribute(obj, name))
                return Static(getattr(obj, name))
            except AttributeError as e:
                raise LoweringError(str(e), span) from None
        return super().attribute(value, name, span)

    def op_call(self, op_name, args, kwargs, span, extra=None):
        """NumPy on constants runs here (an `__init__` making its weights), when the pure tables allow it."""
        if not (all(is_static(a) for a in args) and all(is_static(v) for v in kwargs.values())):
            raise NotStatic("this call needs values that exist only when the file runs", span)
        fn = resolve_callable(extra["fn"]) if extra else OPS[op_name].fn
        values = [static_value(a) for a in args]
        keywords = {k: static_value(v) for k, v in kwargs.items()}
        reason = refusal(fn, values, keywords, budget_of(self.root_globals)) if fn is not None else \
            "it is not a function graphjit knows"
        if reason is not None and not (is_library_function(fn) or is_library_class(fn)):
            raise refused_call(fn, reason, span)
        try:
            return Static(fn(*values, **keywords))
        except GraphjitError:
            raise
        except Exception as e:
            if isinstance(e.__cause__, GraphjitError):
                raise e.__cause__ from None
            raise LoweringError(f"{type(e).__name__}: {e}", span) from None

    def call(self, callee, args, kwargs, span):
        if isinstance(callee, Static):
            fn = callee.value
            if _skipped(fn):
                return Static(None)
            if fn is super:
                obj = self.first_arg
                return Static(super(self.cls, obj))
            real = isinstance(fn, (types.BuiltinMethodType, types.MethodWrapperType)) or (
                isinstance(fn, types.MethodType) and (getattr(fn.__func__, "__qualname__", "").endswith(
                    "__init__") or fn.__func__.__module__.startswith("graphjit")))
            if real:
                if not (all(is_static(a) for a in args) and all(is_static(v) for v in kwargs.values())):
                    raise NotStatic("this call needs values that exist only when the file runs", span)
                values = [static_value(a) for a in args]
                keywords = {k: static_value(v) for k, v in kwargs.items()}
                if not self.may_run(fn, values, keywords, budget_of(self.root_globals)):
                    raise refused_call(fn, refusal(fn, values, keywords) or "it is not graphjit's", span)
                try:
                    with building_library_objects(span, budget_of(self.root_globals)):
                        return Static(fn(*values, **keywords))
                except GraphjitError:
                    raise
                except Exception as e:
                    raise LoweringError(f"{type(e).__name__}: {e}", span) from None
        return super().call(callee, args, kwargs, span)

    @staticmethod
    def may_run(fn, values, keywords, budget=None) -> bool:
        """A builtin or method call `__init__` may make: a pure one, graphjit's library's own methods, or
        an `__init__` of a class that may be built (`super().__init__()`)."""
        if is_library_method(fn) or refusal(fn, values, keywords, budget) is None:
            return True
        owner = getattr(fn, "__self__", None)
        name = getattr(getattr(fn, "__func__", None), "__name__", "")
        return name == "__init__" and isinstance(fn, types.MethodType) and may_instantiate(type(owner))

    @property
    def first_arg(self):
        return self._self_obj

    def bind_params(self, params, frame, args, kwargs, fn, span):
        self._self_obj = args[0].value if args and isinstance(args[0], Static) else None
        super().bind_params(params, frame, args, kwargs, fn, span)

    def assign_target(self, target, value, frame):
        if isinstance(target, cst.Attribute):
            obj = self.lower_expr(target.value, frame)
            if not isinstance(obj, Static):
                raise NotStatic("attribute assignment on a run-time value", self.span(target, frame))
            if not is_static(value):
                raise NotStatic("this value exists only when the file runs", self.span(target, frame))
            if isinstance(obj.value, (type, types.ModuleType, types.FunctionType)) or \
                    not may_instantiate(type(obj.value)):
                # a module's, a class's or a library object's state outlives the check: never changed
                raise not_computed(f"`{cst.Module(body=[]).code_for_node(target)}`", "graphjit changes only "
                                   "attributes of objects of the file's own classes while it reads a file",
                                   self.span(target, frame))
            try:
                setattr(obj.value, target.attr.value, static_value(value))
            except (AttributeError, TypeError, ValueError) as e:   # graphjit's own classes refuse it (a Cell
                # before super().__init__()): so would the file when it runs
                raise not_computed(f"`{cst.Module(body=[]).code_for_node(target)}`",
                                   f"it raises {type(e).__name__} when the file runs: {e}", self.span(target, frame)) from None
            return
        super().assign_target(target, value, frame)


def _evaluate_expression_statement(state: StaticEvaluator, stmt, frame) -> None:
    """An expression statement of `__init__`, evaluated for its effect (a docstring is skipped)."""
    if isinstance(stmt.value, (cst.SimpleString, cst.ConcatenatedString)):
        return
    state.lower_expr(stmt.value, frame)


def _keeping_failure(lower):
    """A statement's lowering that remembers its error on the evaluator (not hidden by a fallback)."""
    def run(state, stmt, frame):
        try:
            return lower(state, stmt, frame)
        except GraphjitError as e:
            state.failure = e   # the statement a fallback would now replace: its own error says why
            raise
    return run


# the lowering's constructs, but an expression statement is evaluated now (it cannot be a graph effect)
STATIC_CONSTRUCTS = dataclasses.replace(CONSTRUCTS, statements={
    cls: _keeping_failure(fn) for cls, fn in {**STATEMENTS, cst.Expr: _evaluate_expression_statement}.items()})
