"""Where LibCST's tree of a file is cut: the chunks of top-level statements, the file's own indentation and newline.

`source.ParsedFile` parses a file one chunk at a time (LibCST's tree of a whole file takes about
700 bytes a character); what is here is read from Python's own tree of the file, which
`source_limits` made first, and from the file's lines.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from typing import Optional


def code_lines(text: str) -> list:
    """The lines of `text` as Python counts them (ended by \\n, \\r\\n or \\r only), with their endings."""
    return io.StringIO(text, newline="").readlines()


def first_newline(text: str) -> str:
    """The newline LibCST takes as a file's own: its first."""
    found = re.search(r"\r\n?|\n", text)
    return found.group() if found else "\n"


def first_indent(text: str) -> str:
    """The indentation LibCST takes as a file's own: its first indented block's (Python's tokenizer finds it)."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.INDENT:
                return token.string
    except (tokenize.TokenError, SyntaxError):
        pass
    return "    "


class Chunker:
    """The chunks of a file, from its top-level statements in order (one piece of Python's tree at a time).

    A chunk starts with the blank lines and comments before its statement that LibCST's tree of the
    whole file puts in the statement's leading lines: all but a comment indented as far as the last
    block of the statement before, which is in that block's footer (and stays in the chunk before).
    `starts`: the first line of each chunk; `heads`: its one plain `def`, else None; `keep`: whether
    what is made from it may hold its nodes (see `source.ParsedFile`).
    """

    def __init__(self, lines: list) -> None:
        self.lines = lines
        self.starts: list = []
        self.heads: list = []
        self.keep: list = []
        self.last_end, self.footer = 0, None   # the footer's indentation of the statement before

    def add(self, statements: list) -> None:
        lines, starts, heads, keep = self.lines, self.starts, self.heads, self.keep
        for stmt in statements:
            first = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", ())])
            while first - 1 > self.last_end and _leads(lines[first - 2], self.footer):
                first -= 1
            self.footer = _footer_indent(stmt, lines)
            plain_def = isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
            if starts and first <= self.last_end:    # shares a line with the chunk before
                heads[-1], keep[-1] = None, True
            else:
                starts.append(first if starts else 1)
                heads.append(stmt if plain_def else None)
                keep.append(not plain_def or _holds_lambda(stmt))
            self.last_end = max(self.last_end, stmt.end_lineno)


def _leads(line: str, footer: Optional[int]) -> bool:
    """Whether a line between two top-level statements is in the second one's leading lines."""
    stripped = line.lstrip()
    return not stripped.strip() or footer is None or len(line) - len(stripped) < footer


def _footer_indent(stmt, lines: list) -> Optional[int]:
    """The indentation of the last block of a top-level statement (None: it ends with no indented block)."""
    node = stmt
    while True:
        for name in ("finalbody", "orelse", "handlers", "cases", "body"):
            block = getattr(node, name, None)
            if isinstance(block, list) and block:
                break
        else:
            return None
        if name in ("handlers", "cases"):
            block = block[-1].body
        first = block[0]
        if first.lineno == node.lineno if name == "body" else False:
            return None   # `if x: y` on one line
        text = lines[first.lineno - 1]
        indent = len(text) - len(text.lstrip())
        if indent:
            return indent
        node = first      # `elif`: Python's tree holds it as an `if` in the `else` block


def _holds_lambda(stmt) -> bool:
    """A `def` whose defaults or decorators hold a lambda (its value may hold the lambda's nodes)."""
    parts = list(stmt.args.defaults) + [d for d in stmt.args.kw_defaults if d is not None] + list(stmt.decorator_list)
    return any(isinstance(node, ast.Lambda) for part in parts for node in ast.walk(part))




def python_defs(tree) -> dict:
    """(name, line of `def`) -> the `ast` node of every `def` in `tree`, with its body and decorators dropped.

    What `static_module` makes a function's signature from, without parsing the file a second time
    and without keeping the rest of Python's tree.
    """
    index = {}
    pending = list(tree.body)
    while pending:   # statements only: a `def` is never inside an expression
        item = pending.pop()
        for block in ("body", "orelse", "handlers", "finalbody", "cases"):
            inner = getattr(item, block, None)
            if isinstance(inner, list):
                pending.extend(inner)
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            item.body = []
            index[(item.name, item.lineno)] = item
    return index
