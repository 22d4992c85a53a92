"""Lowering `while` loops: a `while` region with a condition graph and a body graph."""

from __future__ import annotations

import libcst as cst

from ...graph.diagnostics import UnsupportedSyntaxError
from ..cst_queries import has_loop_control
from ..rules import rule
from ..values import Static


class WhileLowering:
    """`while` loops (with `break`/`continue`/`return` as flags the condition tests)."""

    # --- while -----------------------------------------------------------------------------
    def lower_while(self, stmt: cst.While, frame) -> None:
        span = self.span(stmt, frame)
        if stmt.orelse is not None:
            raise UnsupportedSyntaxError("`while ... else` is not supported in a graph", span,
                                         rule=rule("while_else"))
        body = list(stmt.body.body)
        control = has_loop_control(body)
        self.enter_loop(frame, span, control, body)
        depth = len(frame.loops)
        try:
            def cond_fn(f):
                if not control:
                    return self.expr(stmt.test, f)
                flags = [f.env[n] for n in (f"$brk{depth}", "$ret") if n in f.env]
                # short-circuit: the test is not evaluated again once a flag is set
                return self.ternary(self.any_of(flags, span), lambda g: Static(False),
                                    lambda g: self.expr(stmt.test, g), f, span)

            def body_fn(f):
                if control:
                    self.clear_flags(f, depth)  # the loop test guarantees no flag is set here
                self.statements(body, f)

            self.while_region(frame, span, body, cond_fn, body_fn, stmt=stmt)
        finally:
            self.exit_loop(frame)
        self.undefine_loop_locals(body, frame, span)
