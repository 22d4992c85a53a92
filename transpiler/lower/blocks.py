"""Lowering a block of statements: in order, stopped by `break`/`continue`/`return` flags, a failed statement rolled back."""

from __future__ import annotations

from typing import Any, Optional

import libcst as cst

from ...graph.diagnostics import GraphjitError
from ..cst_queries import contains_return
from ..values import Seq, Static, is_static, static_value
from .branches import branch, decided_if, returning_if
from .containers import containers_in, restore, snapshot
from .control import Return, Stop
from .fallback import recover
from .loops import any_of, clear_flags


def block(state, stmts: list, frame) -> Optional[Any]:
    """Lower statements in order; the returned value if the block returns, else None."""
    try:
        statements(state, stmts, frame)
    except Return as r:
        state.return_span = r.span
        return r.value
    return None


def statements(state, stmts: list, frame) -> None:
    """Lower a block; stops early at `break`/`continue`/`return`/`raise` (see NOTE [loop control])."""
    for k, stmt in enumerate(stmts):
        if _flag_set(frame) and control_pending(state, stmts[k:], frame):  # (no slice per statement)
            return
        mark = state.mark()
        saved = snapshot(containers_in(frame.env))
        try:
            if not frame.loops and isinstance(stmt, cst.If) and frame.parsed.mentions(stmt, "return", "raise") \
                    and contains_return(stmt):
                test = state.lower_expr(stmt.test, frame)
                if not (is_static(test) or isinstance(test, Seq)):
                    # A run-time branch that returns: the rest of the function runs inside both
                    # branches, so every path ends in a return and the `if` yields the result.
                    returning_if(state, stmt, test, stmts[k + 1:], frame)
                    return
                decided_if(state, stmt, test, frame)
            else:
                state.lower_stmt(stmt, frame)
        except Stop:
            return
        except GraphjitError as error:
            restore(saved)  # a failed statement leaves compile-time lists and dicts as they were
            if recover(state, stmt, error, stmts[k + 1:], frame, mark):
                return
    if not frame.loops:
        control_pending(state, [], frame)


# NOTE [loop control]: inside loops, `break`, `continue` and `return` set flags in the frame
# (`$brk<depth>`, `$cont<depth>`, `$ret` with `$rv`) and stop the current block; the rest of
# an enclosing block runs under `if not (flags)`, loops test the flags, and after the
# outermost loop a set `$ret` returns `$rv`. Flags known at compile time cost nothing; run-time
# flags are ordinary carried values of the loop regions.
def control_pending(state, rest: list, frame) -> bool:
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
        go_on = state.emit("not", [any_of(state, flags, span)], span=span)

        def then_fn(f):
            clear_flags(f, depth)  # on this path no flag is set
            statements(state, rest, f)

        branch(state, go_on, then_fn, lambda f: None, frame, span)
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
        result = block(state, list(rest), f)
        return Static(None) if result is None else result

    result = branch(state, ret, then_fn, else_fn, frame, span, result_fns=(None, None))[0]
    raise Return(result)


def _flag_set(frame) -> bool:
    """Whether a `break`/`continue`/`return` flag exists in the frame (what `control_pending` looks at)."""
    env = frame.env
    if "$ret" in env:
        return True
    depth = len(frame.loops)
    return bool(depth) and (f"$brk{depth}" in env or f"$cont{depth}" in env)
