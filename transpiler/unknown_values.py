"""How the static reader (static_module.py) explains a value it could not compute without running the
file: where it comes from, what stopped the evaluator, and the calls and source text it names."""

from __future__ import annotations

import libcst as cst

from ..graph.diagnostics import GraphjitError


def unknown_origin(error: GraphjitError) -> str:
    """Where a value the evaluator could not compute comes from, for `Unresolved.why`."""
    message = (getattr(error, "message", None) or str(error)).split("\n")[0]
    if "without running the file: " in message:
        message = message.split("without running the file: ", 1)[1]
    return f"comes from code graphjit does not compute: {message}"


def unknown_detail(error: GraphjitError) -> str:
    """What stopped the evaluator, in a few words: "`os` is imported from `os`, which graphjit does not
    import", "an element it would make is too big"."""
    message = (getattr(error, "message", None) or str(error)).split("\n")[0]
    head, sep, rest = message.partition(" without running the module: it ")
    if sep and head.startswith("cannot know "):
        return f"{head[len('cannot know '):]} {rest}"
    head, sep, rest = message.partition(" without running the file: ")
    return rest if sep else message


def calls_in(expr) -> list:
    """The calls in an expression, outermost first."""
    found = []

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node) -> None:
            found.append(node)

    expr.visit(Calls())
    return found


def source_of(node) -> str:
    return cst.Module(body=[]).code_for_node(node)
