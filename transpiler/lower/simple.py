"""Lowering simple statements: expression statements, `pass`, `return`, `break`, `continue`, `raise`, `assert`, `global`, nested `def`."""

from __future__ import annotations

import builtins

import libcst as cst

from ...graph.diagnostics import LoweringError, UnsupportedSyntaxError
from ...graph.ir import Node
from ..rules import rule
from ..values import SourceFunc, Static, is_static, static_value
from .control import Return, Stop


class SimpleStatementLowering:
    """One-line statements and nested `def`s."""

    def lower_global(self, stmt: cst.Global, frame) -> None:
        """`global n`: reads and writes of `n` go to the module at call time (COMPATIBLE)."""
        self.require("global", self.span(stmt, frame))
        for item in stmt.names:
            frame.declared_globals.add(item.name.value)

    # --- simple statements -----------------------------------------------------------------
    def lower_pass(self, stmt, frame) -> None:
        pass

    def lower_expression_statement(self, stmt: cst.Expr, frame) -> None:
        if isinstance(stmt.value, (cst.SimpleString, cst.ConcatenatedString)):
            return  # a docstring
        value = self.expr(stmt.value, frame)
        del value  # pure values are dropped by DCE; effects stay in the graph

    def lower_return(self, stmt: cst.Return, frame) -> None:
        value = Static(None) if stmt.value is None else self.expr(stmt.value, frame)
        if frame.loops:
            frame.env["$ret"] = Static(True)
            frame.env["$rv"] = value
            frame.ret_span = self.span(stmt, frame)
            raise Stop
        raise Return(value, self.span(stmt, frame))

    def lower_break(self, stmt, frame) -> None:
        frame.env[f"$brk{len(frame.loops)}"] = Static(True)
        raise Stop

    def lower_continue(self, stmt, frame) -> None:
        frame.env[f"$cont{len(frame.loops)}"] = Static(True)
        raise Stop

    def lower_raise(self, stmt: cst.Raise, frame) -> None:
        """`raise E(args)`: an ordered effect that ends this path (as `return` does)."""
        span = self.span(stmt, frame)
        if stmt.exc is None:
            raise UnsupportedSyntaxError("a bare `raise` (re-raise) needs an `except` block", span,
                                         rule=rule("try"))
        if stmt.cause is not None:
            raise UnsupportedSyntaxError("`raise ... from ...` is not supported in a graph", span, rule=rule("try"))
        exc = stmt.exc
        if isinstance(exc, cst.Call):
            callee = self.expr(exc.func, frame)
            args = [self.expr(a.value, frame) for a in exc.args if a.keyword is None and not a.star]
            if any(a.keyword is not None or a.star for a in exc.args):
                raise UnsupportedSyntaxError("keyword arguments of an exception are not supported", span,
                                             rule=rule("try"))
        else:
            callee, args = self.expr(exc, frame), []
        if not (isinstance(callee, Static) and isinstance(callee.value, type)
                and issubclass(callee.value, BaseException)):
            raise LoweringError("`raise` needs an exception class known at compile time", span)
        self.emit("raise", [self.exception_class(callee)] + list(args), span=span)
        if frame.loops:
            raise Stop
        raise Return(Static(None), span)

    def exception_class(self, callee: Static):
        """Builtin exceptions by name; user exception classes as compile-time objects."""
        cls = callee.value
        if getattr(builtins, cls.__name__, None) is cls:
            return Static(f"builtins.{cls.__name__}")
        return callee

    def lower_assert(self, stmt: cst.Assert, frame) -> None:
        span = self.span(stmt, frame)
        test = self.expr(stmt.test, frame)
        msg = None if stmt.msg is None else self.expr(stmt.msg, frame)
        if is_static(test) and msg is None or is_static(test) and bool(static_value(test)):
            if not static_value(test):
                self.emit("raise", [Static("builtins.AssertionError")], span=span)
            return
        if msg is not None and not (is_static(msg) or isinstance(msg, Node)):
            msg = self.operand(msg, span)
        self.emit("assert", [test] + ([msg] if msg is not None else []), span=span)

    # --- nested functions ------------------------------------------------------------------
    def lower_def(self, stmt: cst.FunctionDef, frame) -> None:
        if stmt.asynchronous is not None:
            raise UnsupportedSyntaxError(rule("async").message, self.span(stmt, frame), rule=rule("async"))
        if stmt.decorators:
            first, last = self.span(stmt.decorators[0], frame), self.span(stmt, frame)
            span = type(first)(first.file, first.line, first.col, last.end_line, last.end_col) if first and last \
                else last
            raise UnsupportedSyntaxError(rule("decorated_def").message, span, rule=rule("decorated_def"))
        frame.env[stmt.name.value] = SourceFunc(stmt, frame, stmt.name.value, self.param_defaults(stmt.params, frame))
