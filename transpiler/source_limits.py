"""The limits on user source, checked before LibCST parses it: size, then Python's own parser, then nesting depth.

LibCST's native parser overflows its stack on input deep enough (a segfault, not an exception),
and its time and memory grow faster than linearly with the depth of a chain (`a + a + ...`,
`x[0][0]...`, `a if b else a if b else ...`). So a file is first parsed by CPython (`ast.parse`,
whose own limits apply: 200 nested brackets, 100 indentation levels, its parser stack), then the
nesting depth of every statement is measured on that tree, each level weighted by what it costs
LibCST (`WEIGHTS`, measured with LibCST 1.9), without recursion. What is over a limit is one
`ResourceLimitError` naming the file and the place; nothing past it is parsed. A large file is
parsed a piece of top-level statements at a time (`parse_pieces`), so Python's tree of the whole
file (about 200 bytes a character) is never held; any error is the one the whole file gives.

- `MAX_SOURCE_CHARS`: a file's length.
- `MAX_NESTING`: the weighted nesting depth of one statement (a 2 400-term sum, a
  1 200-deep `x.a.b...`, an 800-deep chain of conditional expressions).
- `MAX_DEEP_WORK`: the sum of the squared depths of the expressions deeper than `DEEP` (below
  their statement), which bounds the time LibCST spends on a file of many deep expressions.
"""

from __future__ import annotations

import ast
import bisect

from ..graph.spans import SourceSpan
from .deep_stack import ResourceLimitError

MAX_SOURCE_CHARS = 8 << 20    # the 5 MB of 64 000 small functions fits; LibCST takes ~700 bytes a character
MAX_NESTING = 2_500
DEEP = 256
MAX_DEEP_WORK = 64_000_000

# LibCST's cost of one level of each construct, relative to one operand of a binary operation
# (its parser's time and stack grow faster per level for these); every other node is 1.
WEIGHTS = {
    ast.UnaryOp: 2, ast.Attribute: 2, ast.Call: 2, ast.Await: 2, ast.Starred: 2,
    ast.Subscript: 3, ast.IfExp: 3, ast.Lambda: 3,
    ast.ListComp: 2, ast.SetComp: 2, ast.DictComp: 2, ast.GeneratorExp: 2,
}
POWER_WEIGHT = 3   # `a ** b ** c` is right-associative: LibCST re-parses each level

_SHORT = 64                  # characters: a one-line statement this short is not walked
_SHORT_DEPTH = 3 * _SHORT    # the deepest it can be: every level takes a character, and a weight is at most 3


def parse_checked(filename: str, text: str) -> ast.Module:
    """Python's own syntax tree of `text`, once every limit is checked.

    Raises `ResourceLimitError` (too long, too deep) or `SyntaxError` (Python's, with its position).
    """
    if len(text) > MAX_SOURCE_CHARS:
        raise ResourceLimitError(f"the file is {len(text):,} characters long; graphjit reads at most "
                                 f"{MAX_SOURCE_CHARS:,}", SourceSpan(filename, 1, 1))
    try:
        tree = compile(text, filename, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (RecursionError, MemoryError):   # Python's own parser ran out of stack
        raise ResourceLimitError("nested too deeply for Python's parser", SourceSpan(filename, 1, 1),
                                 hint="split the expression or block into smaller ones") from None
    except ValueError as e:                 # null bytes (Python 3.11 says so with a ValueError)
        raise SyntaxError(str(e), (filename, 1, 1, None)) from None
    check_depth(filename, tree)
    return tree


PIECE_CHARS = 1 << 18   # a large file is parsed in pieces of about this many characters


def parse_pieces(filename: str, text: str, lines: list):
    """Python's syntax tree of `text` once every limit is checked, in pieces of top-level statements,
    each with the file's line numbers (None, then the whole file's tree: start again).

    Python's tree of a whole file takes about 200 bytes a character. A piece ends before a line
    that starts a statement at column 0, and is parsed on its own: Python's tokenizer ends a piece
    that parses in the state it starts the next in (no open bracket, string or block), so the pieces
    hold the file's statements. A piece that does not parse is made longer; a file with a syntax
    error, or over a limit, or importing from `__future__` (which can change the grammar), is
    parsed whole by `parse_checked`, as is a small file, so the error is the one it gives.
    """
    if len(text) <= 2 * PIECE_CHARS or len(text) > MAX_SOURCE_CHARS or "__future__" in text:
        yield parse_checked(filename, text)
        return
    cuts, size, previous = [], 0, ""
    for k, line in enumerate(lines):
        if size >= PIECE_CHARS and line[:1] not in _NOT_A_START and not line.startswith(_NOT_FIRST) and \
                not previous.startswith("@") and not previous.rstrip("\r\n").endswith("\\"):
            cuts.append(k)
            size = 0
        size += len(line)
        previous = line
    cuts.append(len(lines))
    start, work, given = 0, 0, False
    while start < len(lines):
        step = 0
        while True:
            end = cuts[min(bisect.bisect_right(cuts, start) + step, len(cuts) - 1)]
            try:
                tree = compile("\n" * start + "".join(lines[start:end]), filename, "exec", ast.PyCF_ONLY_AST,
                               dont_inherit=True)
                work += check_depth(filename, tree, MAX_DEEP_WORK - work)
                break
            except SyntaxError:
                if end == len(lines):
                    tree = None
                    break
                step = 2 * step + 1   # the piece ended inside a statement: a longer one
            except (ResourceLimitError, RecursionError, MemoryError, ValueError):
                tree = None
                break
        if tree is None:   # the whole file's error (or its tree): the one parse_checked gives
            if given:
                yield None
            yield parse_checked(filename, text)
            return
        given = True
        yield tree
        del tree
        start = end


_NOT_A_START = ("", " ", "\t", "\f", "#", "\r", "\n", ")", "]", "}")
_NOT_FIRST = ("else", "elif", "except", "finally")


def check_depth(filename: str, tree: ast.Module, room: int = MAX_DEEP_WORK) -> int:
    """Every statement's weighted nesting depth within `MAX_NESTING`, the deep ones' squares within `MAX_DEEP_WORK`.

    Iterative: a stack of (node, depth of its parent) pairs, so the walk itself cannot overflow.
    """
    work = 0
    statements = [(stmt, 1) for stmt in tree.body]
    while statements:
        stmt, base = statements.pop()
        deepest, where = _deepest(stmt, base, statements)
        if deepest > MAX_NESTING:
            raise ResourceLimitError(f"nested too deeply: {deepest} levels (graphjit reads at most {MAX_NESTING})",
                                     _span(filename, where, stmt),
                                     hint="split the expression or block into smaller ones")
        own = deepest - base    # LibCST's time grows with the length of a chain, wherever it is
        if own > DEEP:
            work += own * own
            if work > room:
                raise ResourceLimitError(f"too much deeply nested code in one file: the squared depths of its "
                                         f"expressions deeper than {DEEP} add up to more than {MAX_DEEP_WORK:,}",
                                         _span(filename, where, stmt),
                                         hint="split the file or its deepest expressions")
    return work


def _deepest(stmt, base: int, statements: list) -> tuple:
    """The greatest weighted depth inside one statement (not its nested statements: those go on `statements`)."""
    deepest, where = base, stmt
    if _short(stmt):   # each level is at least a character: a short statement holds nothing deep
        return base + _SHORT_DEPTH, stmt
    stack = [(stmt, base)]
    while stack:
        node, depth = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt):
                statements.append((child, depth + 1))
                continue
            if isinstance(child, (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)):
                continue
            if isinstance(child, ast.BoolOp):
                weight = len(child.values)   # LibCST nests `a or b or c` as a chain
            elif isinstance(child, ast.BinOp) and isinstance(child.op, ast.Pow):
                weight = POWER_WEIGHT
            else:
                weight = WEIGHTS.get(type(child), 1)
            child_depth = depth + weight
            if child_depth > deepest:
                deepest, where = child_depth, child
            stack.append((child, child_depth))
    return deepest, where


def _short(stmt) -> bool:
    """A simple statement on one line of at most `_SHORT` characters."""
    return not hasattr(stmt, "body") and stmt.end_lineno == stmt.lineno and \
        stmt.end_col_offset - stmt.col_offset <= _SHORT


def _span(filename: str, node, stmt) -> SourceSpan:
    line = getattr(node, "lineno", None) or stmt.lineno
    col = getattr(node, "col_offset", None)
    return SourceSpan(filename, line, (col if col is not None else stmt.col_offset) + 1)
