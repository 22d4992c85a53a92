"""Lowering simple statements: expression statements, `pass`, `return`, `break`, `continue`, `raise`, `assert`, `global`, nested `def`."""

from __future__ import annotations

import builtins

import libcst as cst

from ...graph.diagnostics import LoweringError, UnsupportedSyntaxError
from ...graph.ir import Node
from ..rules import rule
from ..values import SourceFunc, Static, is_static, static_value
from .control import Return, Stop
from .expressions import param_defaults


def lower_expression_statement(state, stmt: cst.Expr, frame) -> None:
    if isinstance(stmt.value, (cst.SimpleString, cst.ConcatenatedString)):
        return  # a docstring
    value = state.lower_expr(stmt.value, frame)
    del value  # pure values are dropped by DCE; effects stay in the graph


def lower_pass(state, stmt, frame) -> None:
    pass


def lower_return(state, stmt: cst.Return, frame) -> None:
    value = Static(None) if stmt.value is None else state.lower_expr(stmt.value, frame)
    if frame.loops:
        frame.env["$ret"] = Static(True)
        frame.env["$rv"] = value
        frame.ret_span = state.span(stmt, frame)
        raise Stop
    raise Return(value, state.span(stmt, frame))


def lower_break(state, stmt, frame) -> None:
    frame.env[f"$brk{len(frame.loops)}"] = Static(True)
    raise Stop


def lower_continue(state, stmt, frame) -> None:
    frame.env[f"$cont{len(frame.loops)}"] = Static(True)
    raise Stop


def lower_raise(state, stmt: cst.Raise, frame) -> None:
    """`raise E(args)`: an ordered effect that ends this path (as `return` does)."""
    span = state.span(stmt, frame)
    if stmt.exc is None:
        raise UnsupportedSyntaxError("a bare `raise` (re-raise) needs an `except` block", span,
                                     rule=rule("try"))
    if stmt.cause is not None:
        raise UnsupportedSyntaxError("`raise ... from ...` is not supported in a graph", span, rule=rule("try"))
    exc = stmt.exc
    if isinstance(exc, cst.Call):
        callee = state.lower_expr(exc.func, frame)
        args = [state.lower_expr(a.value, frame) for a in exc.args if a.keyword is None and not a.star]
        if any(a.keyword is not None or a.star for a in exc.args):
            raise UnsupportedSyntaxError("keyword arguments of an exception are not supported", span,
                                         rule=rule("try"))
    else:
        callee, args = state.lower_expr(exc, frame), []
    if not (isinstance(callee, Static) and isinstance(callee.value, type)
            and issubclass(callee.value, BaseException)):
        raise LoweringError("`raise` needs an exception class known at compile time", span)
    state.emit("raise", [exception_class(state, callee)] + list(args), span=span)
    if frame.loops:
        raise Stop
    raise Return(Static(None), span)


def exception_class(state, callee: Static):
    """Builtin exceptions by name; user exception classes as compile-time objects."""
    cls = callee.value
    if getattr(builtins, cls.__name__, None) is cls:
        return Static(f"builtins.{cls.__name__}")
    return callee


def lower_assert(state, stmt: cst.Assert, frame) -> None:
    span = state.span(stmt, frame)
    test = state.lower_expr(stmt.test, frame)
    msg = None if stmt.msg is None else state.lower_expr(stmt.msg, frame)
    if is_static(test) and msg is None or is_static(test) and bool(static_value(test)):
        if not static_value(test):
            state.emit("raise", [Static("builtins.AssertionError")], span=span)
        return
    if msg is not None and not (is_static(msg) or isinstance(msg, Node)):
        msg = state.operand(msg, span)
    state.emit("assert", [test] + ([msg] if msg is not None else []), span=span)


def lower_global(state, stmt: cst.Global, frame) -> None:
    """`global n`: reads and writes of `n` go to the module at call time (COMPATIBLE)."""
    state.require("global", state.span(stmt, frame))
    for item in stmt.names:
        frame.declared_globals.add(item.name.value)


def lower_def(state, stmt: cst.FunctionDef, frame) -> None:
    if stmt.asynchronous is not None:
        raise UnsupportedSyntaxError(rule("async").message, state.span(stmt, frame), rule=rule("async"))
    if stmt.decorators:
        first, last = state.span(stmt.decorators[0], frame), state.span(stmt, frame)
        span = type(first)(first.file, first.line, first.col, last.end_line, last.end_col) if first and last \
            else last
        raise UnsupportedSyntaxError(rule("decorated_def").message, span, rule=rule("decorated_def"))
    frame.env[stmt.name.value] = SourceFunc(stmt, frame, stmt.name.value, param_defaults(state, stmt.params, frame))
