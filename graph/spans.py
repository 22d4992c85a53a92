"""Source positions: where in the user's file a graph node or a diagnostic comes from."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class SourceSpan:
    """A 1-based line, 1-based column range in a source file.

    LibCST reports 1-based lines and 0-based columns; `from_code_range` converts once, here.
    """

    file: str
    line: int
    col: int
    end_line: int = 0
    end_col: int = 0
    backward: bool = False      # a node of the backward pass computing the gradient of this code

    @classmethod
    def from_code_range(cls, file: str, code_range, line_offset: int = 0) -> "SourceSpan":
        start, end = code_range.start, code_range.end
        return cls(file, start.line + line_offset, start.column + 1,
                   end.line + line_offset, end.column + 1)

    @property
    def short_file(self) -> str:
        return os.path.basename(self.file)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"

    def short(self) -> str:
        """`model.py:17:9`: the form printed in graph text and generated code (`grad of model.py:17:9`
        for the backward pass of that code)."""
        return f"{'grad of ' if self.backward else ''}{self.short_file}:{self.line}:{self.col}"

    def of_backward(self) -> "SourceSpan":
        """The same place, for the nodes computing its gradient."""
        return SourceSpan(self.file, self.line, self.col, self.end_line, self.end_col, True)


def source_place(span: SourceSpan) -> str:
    """`file.py:12:5`: a node's place in the user's source for an exported file (ONNX, MindIR), the file's
    name without its folder, which is the exporter's own business and would leak into a file sent to others."""
    return f"{os.path.basename(span.file)}:{span.line}:{span.col}"
