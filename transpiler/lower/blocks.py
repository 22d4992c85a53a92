"""Lowering a block of statements: order, loop-control flags, rollback of a failed statement."""

from __future__ import annotations

from typing import Any, Optional

import libcst as cst

from ...graph.diagnostics import GraphjitError, UnsupportedSyntaxError
from ..cst_queries import contains_return
from ..rules import BY_KEY, STATEMENT_RULES
from ..values import Seq, Static, is_static, static_value
from .containers import containers_in, restore, snapshot
from .control import Return, Stop


class BlockLowering:
    """Runs statements in order, stops a block at break/continue/return, dispatches each statement."""

    # --- blocks ----------------------------------------------------------------------------
    def block(self, stmts: list, frame) -> Optional[Any]:
        """Lower statements in order; the returned value if the block returns, else None."""
        try:
            self.statements(stmts, frame)
        except Return as r:
            self.return_span = r.span
            return r.value
        return None

    def statements(self, stmts: list, frame) -> None:
        """Lower a block; stops early at `break`/`continue`/`return`/`raise` (see NOTE [loop control])."""
        for k, stmt in enumerate(stmts):
            if _flag_set(frame) and self.control_pending(stmts[k:], frame):  # (no slice per statement)
                return
            mark = self.mark()
            saved = snapshot(containers_in(frame.env))
            try:
                if not frame.loops and isinstance(stmt, cst.If) and frame.parsed.mentions(stmt, "return", "raise") \
                        and contains_return(stmt):
                    test = self.expr(stmt.test, frame)
                    if not (is_static(test) or isinstance(test, Seq)):
                        # A run-time branch that returns: the rest of the function runs inside both
                        # branches, so every path ends in a return and the `if` yields the result.
                        self.returning_if(stmt, test, stmts[k + 1:], frame)
                        return
                    self.decided_if(stmt, test, frame)
                else:
                    self.statement(stmt, frame)
            except Stop:
                return
            except GraphjitError as error:
                restore(saved)  # a failed statement leaves compile-time lists and dicts as they were
                if self.recover(stmt, error, stmts[k + 1:], frame, mark):
                    return
        if not frame.loops:
            self.control_pending([], frame)

    # NOTE [loop control]: inside loops, `break`, `continue` and `return` set flags in the frame
    # (`$brk<depth>`, `$cont<depth>`, `$ret` with `$rv`) and stop the current block; the rest of
    # an enclosing block runs under `if not (flags)`, loops test the flags, and after the
    # outermost loop a set `$ret` returns `$rv`. Flags known at compile time cost nothing; run-time
    # flags are ordinary carried values of the loop regions.
    def control_pending(self, rest: list, frame) -> bool:
        """Handle flags set by earlier statements; True when the rest of the block was consumed."""
        env = frame.env
        if frame.loops:
            depth = len(frame.loops)
            flags = [env.get(f"$brk{depth}"), env.get(f"$cont{depth}"), env.get("$ret")]
            flags = [f for f in flags if f is not None and not (is_static(f) and not static_value(f))]
            if not flags:
                return False
            if any(is_static(f) for f in flags):
                return True  # a flag surely set: the rest of this block is dead
            if not rest:
                return True
            span = frame.loops[-1]
            go_on = self.emit("not", [self.any_of(flags, span)], span=span)

            def then_fn(f):
                self.clear_flags(f, depth)  # on this path no flag is set
                self.statements(rest, f)

            self.branch(go_on, then_fn, lambda f: None, frame, span)
            return True
        ret = env.get("$ret")
        if ret is None or (is_static(ret) and not static_value(ret)):
            return False
        value = env.get("$rv", Static(None))
        if is_static(ret):
            raise Return(value)
        span = frame.ret_span

        def then_fn(f):
            return f.env.get("$rv", Static(None))

        def else_fn(f):
            f.env["$ret"] = Static(False)
            result = self.block(list(rest), f)
            return Static(None) if result is None else result

        result = self.branch(ret, then_fn, else_fn, frame, span, result_fns=(None, None))[0]
        raise Return(result)

    @staticmethod
    def clear_flags(frame, depth: int) -> None:
        for name in (f"$brk{depth}", f"$cont{depth}", "$ret"):
            if name in frame.env:
                frame.env[name] = Static(False)

    def any_of(self, flags: list, span):
        acc = flags[0]
        for f in flags[1:]:
            acc = self.emit("bitor", [acc, f], span=span)
        return acc

    def mark(self) -> tuple:
        return (self.scope, len(self.scope.graph.nodes))

    def rollback(self, mark: tuple) -> None:
        """Drop the nodes a failed statement added (its region graphs were never attached)."""
        scope, count = mark
        self.scope = scope
        graph = scope.graph
        for node in reversed(graph.nodes[count:]):
            graph.nodes.remove(node)
            graph._edges.remove_node(node)

    def statement(self, stmt, frame) -> None:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self.statement(small, frame)
            return
        lower = self.statement_lowering.get(type(stmt))
        if lower is None:
            self.unsupported_node(stmt, frame, STATEMENT_RULES)
        lower(self, stmt, frame)

    def unsupported_node(self, node, frame, table: dict):
        key = table.get(type(node).__name__)
        r = BY_KEY.get(key) if key else None
        message = r.message if r else f"{statement_name(node)} is not supported in a graph"
        raise UnsupportedSyntaxError(message, self.span(node, frame), rule=r)


def _flag_set(frame) -> bool:
    """Whether a `break`/`continue`/`return` flag exists in the frame (what `control_pending` looks at)."""
    env = frame.env
    if "$ret" in env:
        return True
    depth = len(frame.loops)
    return bool(depth) and (f"$brk{depth}" in env or f"$cont{depth}" in env)


def statement_name(stmt) -> str:
    names = {"Try": "`try`", "TryStar": "`try`", "With": "`with`", "Del": "`del`", "Global": "`global`",
             "Nonlocal": "`nonlocal`", "ClassDef": "a class definition", "Import": "`import`",
             "ImportFrom": "`import`", "Raise": "`raise`", "Assert": "`assert`", "Match": "`match`",
             "Break": "`break`", "Continue": "`continue`"}
    return names.get(type(stmt).__name__, f"`{type(stmt).__name__}` statement")
