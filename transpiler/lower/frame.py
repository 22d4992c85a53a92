"""The frame of one function being lowered: its names, its globals and closure, the loops around."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ...graph.spans import SourceSpan
from ..source import ParsedFile


@dataclass
class Frame:
    """One activation of a function being inlined: its names and where they resolve."""

    parsed: ParsedFile
    qualname: str
    env: dict
    globals: dict
    closure: dict                 # free variable name -> cell
    loops: list = field(default_factory=list)   # spans of the enclosing loops (see NOTE [loop control])
    ret_span: Optional[SourceSpan] = None
    declared_globals: set = field(default_factory=set)   # names of `global` statements

    def fork(self) -> "Frame":
        """A copy for one branch or loop body: its own names, the same function."""
        return Frame(self.parsed, self.qualname, dict(self.env), self.globals, self.closure, list(self.loops),
                     self.ret_span, self.declared_globals)


def closure_of(fn) -> dict:
    code = getattr(fn, "__code__", None)
    cells = getattr(fn, "__closure__", None) or ()
    return dict(zip(code.co_freevars, cells)) if code is not None else {}
