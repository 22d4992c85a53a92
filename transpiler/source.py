"""Finding a function's source: parse each file once with LibCST and map nodes to spans.

Positions are resolved once per file (LibCST's `PositionProvider` is the costly part) and
reused for every function compiled from that file.
"""

from __future__ import annotations

import inspect
import linecache
import os
from dataclasses import dataclass, field
from typing import Optional

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from ..graph.diagnostics import LoweringError, UnsupportedSyntaxError
from ..graph.spans import SourceSpan


@dataclass
class ParsedFile:
    filename: str
    text: str
    module: cst.Module
    positions: dict = field(repr=False)

    def span(self, node: cst.CSTNode) -> Optional[SourceSpan]:
        pos = self.positions.get(node)
        return SourceSpan.from_code_range(self.filename, pos) if pos is not None else None

    def functions(self):
        """Every FunctionDef in the file with its enclosing class names (outermost first)."""
        out = []

        def walk(body, classes):
            for stmt in body:
                if isinstance(stmt, cst.FunctionDef):
                    out.append((stmt, classes))
                    walk(_block(stmt), classes + (None,))
                elif isinstance(stmt, cst.ClassDef):
                    walk(_block(stmt), classes + (stmt.name.value,))
                elif isinstance(stmt, (cst.If, cst.With, cst.Try)):
                    walk(_block(stmt), classes)

        walk(self.module.body, ())
        return out


def _block(stmt) -> list:
    body = getattr(stmt, "body", None)
    return list(body.body) if isinstance(body, cst.IndentedBlock) else []


_FILES: dict[tuple, ParsedFile] = {}


def parse_file(filename: str, text: Optional[str] = None) -> ParsedFile:
    """Parse (once per file content) and resolve positions."""
    if text is None:
        linecache.checkcache(filename)  # a file edited (and its module reloaded) since it was read
        lines = linecache.getlines(filename)
        text = "".join(lines)
    key = (filename, hash(text))
    cached = _FILES.get(key)
    if cached is not None:
        return cached
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as e:
        raise python_syntax_error(filename, text, e) from None
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    parsed = ParsedFile(filename, text, wrapper.module, dict(wrapper.resolve(PositionProvider)))
    _FILES[key] = parsed
    return parsed


class PythonSyntaxError(UnsupportedSyntaxError):
    """The file is not valid Python at all."""


def python_syntax_error(filename: str, text: str, cst_error) -> PythonSyntaxError:
    """Python's own wording and position where it has them (clearer than the parser's)."""
    try:
        compile(text, filename, "exec")
    except SyntaxError as e:
        return PythonSyntaxError(f"Python syntax error: {e.msg}", SourceSpan(filename, e.lineno or 1, e.offset or 1))
    return PythonSyntaxError(f"Python syntax error: {cst_error.message}",
                             SourceSpan(filename, cst_error.raw_line, cst_error.raw_column + 1))


def function_source(fn) -> tuple[ParsedFile, cst.FunctionDef]:
    """The parsed file and the FunctionDef node of a Python function."""
    code = getattr(fn, "__code__", None)
    if code is None:
        raise LoweringError(f"cannot compile {fn!r}: it is not a Python function")
    filename = code.co_filename
    if code.co_name == "<lambda>":
        raise UnsupportedSyntaxError(f"cannot compile lambda at {filename}:{code.co_firstlineno} on its own",
                                     SourceSpan(filename, code.co_firstlineno, 1),
                                     hint="define the function with `def`")
    if not os.path.exists(filename) and not linecache.getlines(filename):
        raise LoweringError(f"the source of {fn.__qualname__} is not available (defined in {filename})",
                            hint="graphjit compiles functions defined in files")
    parsed = parse_file(filename)
    line = code.co_firstlineno
    for node, _classes in parsed.functions():
        if node.name.value != code.co_name:
            continue
        first = parsed.positions[node].start.line
        deco_lines = [parsed.positions[d].start.line for d in node.decorators]
        if line == first or line in deco_lines:
            return parsed, node
    raise LoweringError(f"could not find the source of {fn.__qualname__} in {filename}:{line}",
                        SourceSpan(filename, line, 1),
                        hint="was the file edited after it was imported? reload it")


def unwrap(fn):
    """The plain function behind a jitted function or a `functools.wraps` chain."""
    seen = set()
    while id(fn) not in seen:
        seen.add(id(fn))
        inner = getattr(fn, "__graphjit_fn__", None) or getattr(fn, "__wrapped__", None)
        if inner is None:
            break
        fn = inner
    return fn


def signature_of(fn) -> inspect.Signature:
    return inspect.signature(fn)
