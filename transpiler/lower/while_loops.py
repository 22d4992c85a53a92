"""Lowering `while` loops: a `while` region with a condition graph and a body graph."""

from __future__ import annotations

import libcst as cst

from ...graph.diagnostics import UnsupportedSyntaxError
from ..cst_queries import has_loop_control
from ..rules import rule
from ..values import Static
from .blocks import statements
from .branches import ternary
from .loops import any_of, clear_flags, enter_loop, exit_loop, undefine_loop_locals, while_region


def lower_while(state, stmt: cst.While, frame) -> None:
    span = state.span(stmt, frame)
    if stmt.orelse is not None:
        raise UnsupportedSyntaxError("`while ... else` is not supported in a graph", span,
                                     rule=rule("while_else"))
    body = list(stmt.body.body)
    control = has_loop_control(body)
    enter_loop(state, frame, span, control, body)
    depth = len(frame.loops)
    try:
        def cond_fn(f):
            if not control:
                return state.lower_expr(stmt.test, f)
            flags = [f.env[n] for n in (f"$brk{depth}", "$ret") if n in f.env]
            # short-circuit: the test is not evaluated again once a flag is set
            return ternary(state, any_of(state, flags, span), lambda g: Static(False),
                                lambda g: state.lower_expr(stmt.test, g), f, span)

        def body_fn(f):
            if control:
                clear_flags(f, depth)  # the loop test guarantees no flag is set here
            statements(state, body, f)

        while_region(state, frame, span, body, cond_fn, body_fn, stmt=stmt)
    finally:
        exit_loop(state, frame)
    undefine_loop_locals(state, body, frame, span)
