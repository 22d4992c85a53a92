"""Errors raised by every stage, and how they are rendered for the user.

Each stage raises its own subclass of `GraphjitError` carrying a message and, where there is
one, the `SourceSpan` of the user's code; `render` turns it into the text the user sees.
"""

from __future__ import annotations

import linecache
from dataclasses import dataclass, field
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
    """The front end met a construct it does not compile (at the chosen syntax level).

    `rule` is the syntax-table row (code, level, hint) when the construct has one.
    """

    def __init__(self, message: str, span: Optional[SourceSpan] = None, hint: str = "", rule=None):
        super().__init__(message, span, hint or (rule.hint if rule is not None else ""))
        self.rule = rule

    @property
    def code(self) -> str:
        return self.rule.code if self.rule is not None else "GJ000"


class LoweringError(GraphjitError):
    """The front end could not turn a supported construct into graph nodes (types, names...)."""


class UnknownValueError(LoweringError):
    """A value that exists only when the file runs (`graphjit check` reads files without running them)."""


class UndefinedNameError(LoweringError):
    """A name bound nowhere: wrong whatever the function is called with (`graphjit check` says so)."""


class GraphParseError(GraphjitError):
    """Graph text that does not follow the documented form."""


class VerifyError(GraphjitError):
    """A graph that breaks an invariant (a pass or the front end has a bug)."""


class PassError(GraphjitError):
    """An optimization pass failed; the message names it."""


class CodegenError(GraphjitError):
    """The backend could not emit or compile code for a graph."""


@dataclass(frozen=True)
class Diagnostic:
    """One problem found in the user's code, as every output format reports it."""

    code: str                 # GJ301
    severity: str             # error | warning
    message: str
    span: Optional[SourceSpan]
    function: str = ""        # the enclosing (possibly inlined) function
    hint: str = ""
    level: str = ""           # the syntax level it was checked at
    cause: str = field(default="", compare=False, repr=False)   # the error class it came from, if any

    @classmethod
    def from_error(cls, error: GraphjitError, function: str = "", level: str = "",
                   severity: str = "error") -> "Diagnostic":
        code = getattr(error, "code", "") or next(
            (c for kind, c in _CODE_BY_KIND.items() if any(k.__name__ == kind for k in type(error).__mro__)), "GJ000")
        return cls(code, severity, error.message, error.span, function, error.hint, level, type(error).__name__)

    def render(self, color: bool = False) -> str:
        """The text form: header, location, source with carets, function, hint."""
        red, yellow, blue, bold, reset = ("\033[31m", "\033[33m", "\033[34m", "\033[1m", "\033[0m") if color \
            else ("", "", "", "", "")
        tint = red if self.severity == "error" else yellow
        level = f" (level: {self.level.lower()})" if self.level else ""
        lines = [f"{bold}{tint}{self.severity}[{self.code}]{reset}{bold}{level}: {self.message}{reset}"]
        if self.span is not None:
            lines.append(f"  {blue}-->{reset} {self.span}")
            lines.extend(source_excerpt(self.span))
        if self.function:
            lines.append(f"  {blue}={reset} in function `{self.function}`")
        if self.hint:
            lines.append(f"  {blue}={reset} hint: {self.hint}")
        return "\n".join(lines)

    def gcc(self) -> str:
        where = f"{self.span.file}:{self.span.line}:{self.span.col}" if self.span else "<unknown>"
        return f"{where}: {self.severity}: [{self.code}] {self.message}"


_CODE_BY_KIND = {"LoweringError": "GJ001", "GraphjitError": "GJ000"}


class GraphSyntaxError(SyntaxError):
    """Compiling at a syntax level found constructs that level does not accept: all of them listed.

    `.diagnostics` holds the `Diagnostic` objects.
    """

    def __init__(self, diagnostics: list):
        self.diagnostics = list(diagnostics)
        first = self.diagnostics[0] if self.diagnostics else None
        count = len(self.diagnostics)
        head = f"{count} problem{'s' if count != 1 else ''} found by graphjit"
        text = head + ":\n\n" + "\n\n".join(d.render() for d in self.diagnostics)
        if first is not None and first.span is not None:
            super().__init__(text, (first.span.file, first.span.line, first.span.col, None))
        else:
            super().__init__(text)

    def __str__(self) -> str:
        return self.msg


def source_excerpt(span: SourceSpan) -> list[str]:
    """The user's source line with a caret underline, as in STYLE.md."""
    text = linecache.getline(span.file, span.line).rstrip("\n")
    if not text:
        return []
    last = span.end_line if span.end_line and span.end_line >= span.line else span.line
    shown = list(range(span.line, min(last, span.line + 2) + 1))
    gutter = " " * len(str(shown[-1]))
    out = [f"{gutter} |"]
    for number in shown:
        line = linecache.getline(span.file, number).rstrip("\n")
        start = span.col if number == span.line else len(line) - len(line.lstrip()) + 1
        end = span.end_col if number == last and span.end_col else len(line) + 1
        if end <= start:
            end = len(line) + 1
        line, start, end = _window(line, start, end)
        out.append(f"{str(number).rjust(len(gutter))} | {line}")
        out.append(f"{gutter} | {' ' * (start - 1)}{'^' * max(1, end - start)}")
    if last > shown[-1]:
        out.append(f"{gutter} | ...")
    return out


EXCERPT_WIDTH = 160   # characters of a source line shown (a generated or hostile line may be megabytes)


def _window(line: str, start: int, end: int) -> tuple:
    """`line` cut to `EXCERPT_WIDTH` characters around column `start` (1-based), `...` where it was cut,
    with the caret's columns moved to match."""
    if len(line) <= EXCERPT_WIDTH:
        return line, start, end
    first = max(0, min(start - 1 - EXCERPT_WIDTH // 4, len(line) - EXCERPT_WIDTH))
    shown = line[first:first + EXCERPT_WIDTH]
    prefix = "..." if first > 0 else ""
    suffix = "..." if first + EXCERPT_WIDTH < len(line) else ""
    start, end = start - first + len(prefix), min(end, first + EXCERPT_WIDTH + 1) - first + len(prefix)
    return prefix + shown + suffix, start, end


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


class GraphjitFallbackWarning(GraphjitWarning):
    """A statement runs in the Python interpreter (LAX fallback block) rather than in the graph."""


def user_stacklevel() -> int:
    """The `stacklevel` for `warnings.warn` that names the first caller outside graphjit.

    graphjit's own files and its generated dispatchers are skipped, so a warning points at the
    user's file and line, however deep inside graphjit it was raised.
    """
    import os
    import sys
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    not_ours = tuple(package + part + os.sep for part in ("tests", "samples", "benchmarks"))
    frame, level = sys._getframe(1), 1
    while frame is not None:
        name = frame.f_code.co_filename
        path = os.path.abspath(name)
        ours = (path.startswith(package) and not path.startswith(not_ours)) or name.startswith("<graphjit")
        if not ours:
            return level
        frame, level = frame.f_back, level + 1
    return 1

