"""Errors raised by every stage, and how they are rendered for the user.

Each stage raises its own subclass of `GraphjitError` carrying a message and, where there is
one, the `SourceSpan` of the user's code; `render` turns it into the text the user sees.
"""

from __future__ import annotations

import linecache
from typing import Optional

from .spans import SourceSpan


class GraphjitError(Exception):
    """Base of every error graphjit raises about the user's program."""

    kind = "error"

    def __init__(self, message: str, span: Optional[SourceSpan] = None, hint: str = ""):
        super().__init__(message)
        self.message = message
        self.span = span
        self.hint = hint
        self.context: list[str] = []

    def add_context(self, note: str) -> "GraphjitError":
        self.context.append(note)
        return self

    def one_line(self) -> str:
        """`file:line:col: Kind: message` — for logs and the CLI's short form."""
        where = f"{self.span}: " if self.span else ""
        return f"{where}{type(self).__name__}: {self.message}"

    def __str__(self) -> str:
        return render(self)


class UnsupportedSyntaxError(GraphjitError):
    """The front end met a construct it does not compile."""


class LoweringError(GraphjitError):
    """The front end could not turn a supported construct into graph nodes (types, names...)."""


class GraphParseError(GraphjitError):
    """Graph text that does not follow the documented form."""


class VerifyError(GraphjitError):
    """A graph that breaks an invariant (a pass or the front end has a bug)."""


class PassError(GraphjitError):
    """An optimization pass failed; the message names it."""


class CodegenError(GraphjitError):
    """The backend could not emit or compile code for a graph."""


def source_excerpt(span: SourceSpan) -> list[str]:
    """The user's source line with a caret underline, as in STYLE.md."""
    text = linecache.getline(span.file, span.line).rstrip("\n")
    if not text:
        return []
    gutter = " " * len(str(span.line))
    end_col = span.end_col if span.end_line == span.line and span.end_col > span.col else len(text) + 1
    width = max(1, end_col - span.col)
    return [
        f"{gutter} |",
        f"{span.line} | {text}",
        f"{gutter} | {' ' * (span.col - 1)}{'^' * width}",
    ]


def render(error: GraphjitError) -> str:
    lines = [f"graphjit: {type(error).__name__}: {error.message}"]
    if error.span is not None:
        lines.append(f"  --> {error.span}")
        lines.extend(source_excerpt(error.span))
    for note in error.context:
        lines.append(f"  note: {note}")
    if error.hint:
        lines.append(f"  hint: {error.hint}")
    return "\n".join(lines)


class GraphjitWarning(UserWarning):
    """Something the user should know that does not stop compilation: repeated recompiles, a
    cache directory that cannot be written, a corrupt cache entry."""
