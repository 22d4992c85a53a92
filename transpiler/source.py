"""Finding a function's source: each file read once, LibCST's tree of it parsed one chunk of top-level statements at a time, nodes mapped to spans.

Positions are resolved once per chunk (LibCST's `PositionProvider` is the costly part) and reused
for every function compiled from it; where the chunks are cut is `source_chunks`.
"""

from __future__ import annotations

import ast
import bisect
import functools
import inspect
import io
import linecache
import tokenize
import os
import re
import threading
from dataclasses import dataclass, field
from typing import Optional

import libcst as cst
from libcst._position import CodeRange
from libcst.metadata import MetadataWrapper, PositionProvider

from ..graph.diagnostics import LoweringError, UnsupportedSyntaxError
from ..graph.spans import SourceSpan
from .cst_queries import clear_caches
from .deep_stack import run_deep
from .source_chunks import Chunker, code_lines, first_indent, first_newline, python_defs
from .source_limits import parse_pieces


@dataclass
class ParsedFile:
    """A source file read once: its lines, where each top-level statement is, and the position of every node parsed.

    LibCST's tree of a whole file takes about 700 bytes a character, so the file is not parsed as one
    module: Python's parser (`source_limits`) says where each top-level statement is, and LibCST
    parses one chunk (the top-level statements sharing lines, with the comments after them) when
    it is asked for, its positions moved to the file's lines. Every chunk is parsed with the file's
    indentation and newline, so a node's code is the code it would have in the whole file's tree.
    A chunk stays until `release` drops it (graphjit check, once a target is checked), unless pinned.
    """

    filename: str
    text: str
    starts: list                      # the first line of each chunk, ascending (the first is line 1)
    heads: list = field(repr=False)   # per chunk: the `ast` node of its one plain `def`, else None
    keep: list = field(repr=False)    # per chunk: whether what is made from it may hold its nodes
    python_defs: dict = field(default_factory=dict, repr=False)   # (name, line of `def`) -> its `ast` node, body dropped
    positions: "Positions" = field(default_factory=lambda: Positions(), repr=False)
    _chunks: dict = field(default_factory=dict, repr=False)       # chunk -> (its module, its positions)
    _pinned: set = field(default_factory=set, repr=False)
    _by_line: dict = field(default_factory=dict, repr=False)      # chunk -> {(name, line): FunctionDef}
    _lines: Optional[list] = field(default=None, repr=False)
    _code_lines: Optional[list] = field(default=None, repr=False)
    _module: Optional[cst.Module] = field(default=None, repr=False)

    def span(self, node: cst.CSTNode) -> Optional[SourceSpan]:
        pos = self.positions.raw(node)
        return SourceSpan(self.filename, pos[0], pos[1] + 1, pos[2], pos[3] + 1) if pos is not None else None

    @property
    def lines(self) -> list:
        """The file's lines with their endings (split once)."""
        if self._lines is None:
            self._lines = self.text.splitlines(True)
        return self._lines

    @property
    def module(self) -> cst.Module:
        """An empty module with the file's indentation and newline: `module.code_for_node(node)` is a node's code."""
        if self._module is None:
            self._module = cst.Module(body=[], default_indent=first_indent(self.text),
                                      default_newline=first_newline(self.text))
        return self._module

    def mentions(self, node: cst.CSTNode, *words: str) -> bool:
        """Whether the source lines of `node` contain one of `words` (a quick test before a full walk)."""
        pos = self.positions.get(node)
        if pos is None:
            return True
        text = "".join(self.lines[pos.start.line - 1:pos.end.line])
        return any(re.search(rf"\b{word}\b", text) for word in words)

    # --- chunks -------------------------------------------------------------------------------
    def chunk_of(self, line: int) -> int:
        """The chunk holding `line` (-1 before the first)."""
        return bisect.bisect_right(self.starts, line) - 1

    def chunk_text(self, chunk: int) -> str:
        if self._code_lines is None:
            self._code_lines = code_lines(self.text)
        lines = self._code_lines
        end = self.starts[chunk + 1] - 1 if chunk + 1 < len(self.starts) else len(lines)
        return "".join(lines[self.starts[chunk] - 1:end])

    def statements(self, chunk: int) -> list:
        """The top-level LibCST statements of `chunk` (parsed now if they are not kept)."""
        module = self.chunk_module(chunk)
        return list(module.body[self._chunks[chunk][2]:])

    def chunk_module(self, chunk: int) -> cst.Module:
        """The module LibCST parses from `chunk` (its first statement may be ours: see `_parse_chunk`)."""
        found = self._chunks.get(chunk)
        if found is None:
            with _PARSING:   # two threads compiling from one file: one tree per chunk
                found = self._chunks.get(chunk)
                if found is None:
                    found = run_deep(self._parse_chunk, chunk, what=f"parsing {self.filename}",
                                     where=SourceSpan(self.filename, self.starts[chunk], 1))
                    self._chunks[chunk] = found
                    dict.update(self.positions, found[1])
        return found[0]

    def _parse_chunk(self, chunk: int) -> tuple:
        """(module, positions, statements of ours): the chunk as it is, unless LibCST takes another
        indentation or newline from it than from the whole file: then after a statement of ours that
        sets them (an `if` block, the first thing LibCST sees). The comments and blank lines LibCST
        puts in the module's header are the first statement's leading lines, as in the whole file."""
        module, skip = self._parse_lines(chunk, ""), 0
        if (module.default_indent, module.default_newline) != (self.module.default_indent,
                                                               self.module.default_newline):
            newline = self.module.default_newline
            module, skip = self._parse_lines(chunk, f"if 1:{newline}{self.module.default_indent}pass{newline}"), 1
        elif chunk and module.header and module.body:   # the whole file's tree has them before the statement
            first = module.body[0].with_changes(leading_lines=[*module.header, *module.body[0].leading_lines])
            module = module.with_changes(header=[], body=[first, *module.body[1:]])
        first_line = self.starts[chunk] - skip * _PREFIX_LINES   # where the module's code would start
        positions = node_positions(module, max(first_line, 1))
        ours = [module] + list(module.body[:skip])
        while ours:
            node = ours.pop()
            dict.pop(positions, id(node), None)
            if node is not module:
                ours.extend(node.children)
        if first_line >= 1:
            return module, positions, skip
        shift = (first_line - 1) * ((1 << (_COL_BITS + _HALF_BITS)) + (1 << _COL_BITS))   # the first chunk, after ours
        moved = Positions()
        dict.update(moved, ((key, packed + shift) for key, packed in dict.items(positions)))
        return module, moved, skip

    def _parse_lines(self, chunk: int, prefix: str) -> cst.Module:
        try:
            return cst.parse_module(prefix + self.chunk_text(chunk))
        except cst.ParserSyntaxError as e:   # valid Python (checked first) that LibCST cannot read
            line = e.raw_line + self.starts[chunk] - 1 - (_PREFIX_LINES if prefix else 0)
            raise PythonSyntaxError(f"graphjit's parser cannot read this: {e.message}",
                                    SourceSpan(self.filename, line, e.raw_column + 1)) from None

    def pin(self, chunk: int) -> None:
        """Keep `chunk` parsed until the file is forgotten (a class's `__init__` is read when it is called)."""
        self._pinned.add(chunk)

    def release(self, chunk: Optional[int] = None) -> None:
        """Drop the parsed chunks not pinned (or only `chunk`): parsed again when asked for."""
        for k in [k for k in self._chunks if k not in self._pinned and (chunk is None or k == chunk)]:
            _module, own, _skip = self._chunks.pop(k)
            for key in own:
                dict.pop(self.positions, key, None)
            self._by_line.pop(k, None)
        clear_caches()

    def def_span(self, head: ast.AST) -> SourceSpan:
        """The span LibCST gives the `def` of `heads[k]`: from `def` (or `async`) to the end of its last statement."""
        return SourceSpan(self.filename, head.lineno, self._column(head.lineno, head.col_offset) + 1,
                          head.end_lineno, self._column(head.end_lineno, head.end_col_offset) + 1)

    def _column(self, line: int, offset: int) -> int:
        """Python's column (UTF-8 bytes) as LibCST counts it (characters)."""
        if self._code_lines is None:
            self._code_lines = code_lines(self.text)
        text = self._code_lines[line - 1]
        return offset if text.isascii() else len(text.encode("utf-8")[:offset].decode("utf-8", "replace"))

    # --- functions ----------------------------------------------------------------------------
    def functions(self, chunk: Optional[int] = None):
        """Every FunctionDef in the file (or in one chunk) with its enclosing class names (outermost first).

        Functions nested anywhere are found: in classes, in other functions, in loops, branches,
        `with` and `try` blocks.
        """
        out = []
        for k in range(len(self.starts)) if chunk is None else [chunk]:
            _walk_functions(self.statements(k), (), out)
        return out

    def function_at(self, name: str, line: int) -> Optional[cst.FunctionDef]:
        """The `def name` whose first line or one of whose decorator lines is `line` (one lookup)."""
        chunk = self.chunk_of(line)
        if chunk < 0:
            return None
        index = self._by_line.get(chunk)
        if index is None or chunk not in self._chunks:
            index = {}
            for node, _classes in self.functions(chunk):
                lines = [self.positions[node].start.line] + [self.positions[d].start.line for d in node.decorators]
                for first in lines:
                    index.setdefault((node.name.value, first), node)
            self._by_line[chunk] = index
        return index.get((name, line))


_PREFIX_LINES = 2
_PARSING = threading.RLock()


def _walk_functions(body, classes: tuple, out: list) -> None:
    for stmt in body:
        if isinstance(stmt, cst.FunctionDef):
            out.append((stmt, classes))
            _walk_functions(_nested(stmt), classes + (None,), out)
        elif isinstance(stmt, cst.ClassDef):
            _walk_functions(_nested(stmt), classes + (stmt.name.value,), out)
        elif not isinstance(stmt, cst.SimpleStatementLine):
            _walk_functions(_nested(stmt), classes, out)


def _nested(stmt) -> list:
    """The statements directly inside a compound statement, all its blocks in source order."""
    out = []
    for block_name in ("body", "handlers", "orelse", "finalbody", "cases"):
        block = getattr(stmt, block_name, None)
        if block is None:
            continue
        if isinstance(block, cst.BaseSuite):
            out.extend(block.body if isinstance(block, cst.IndentedBlock) else [])
        elif isinstance(block, (list, tuple)):
            for part in block:   # except handlers, match cases
                out.extend(_nested(part))
        elif isinstance(block, (cst.If, cst.Else)):   # elif chains and else blocks
            out.extend(_nested(block) if isinstance(block, cst.Else) else [block])
        elif hasattr(block, "body"):
            out.extend(_nested(block))
    return out


_FILES: dict[tuple, ParsedFile] = {}
_BY_LINES: dict[str, tuple] = {}   # filename -> (linecache's list of lines, its ParsedFile)


def forget_file(filename: str) -> None:
    """Drop what was parsed of `filename` (graphjit check, once the file is checked: a syntax tree
    takes about 700 bytes per character of source)."""
    for key in [k for k in _FILES if k[0] == filename]:
        del _FILES[key]
    _BY_LINES.pop(filename, None)
    clear_caches()


def parse_file(filename: str, text: Optional[str] = None) -> ParsedFile:
    """Parse (once per file content) and resolve positions."""
    if text is None:
        linecache.checkcache(filename)  # a file edited (and its module reloaded) since it was read
        lines = linecache.getlines(filename)
        known = _BY_LINES.get(filename)
        if known is not None and known[0] is lines:   # the same lines as last time: no join, no hash
            return known[1]
        parsed = parse_file(filename, "".join(lines))
        _BY_LINES[filename] = (lines, parsed)
        return parsed
    key = (filename, hash(text))
    cached = _FILES.get(key)
    if cached is not None:
        return cached
    where = SourceSpan(filename, 1, 1)
    parsed = run_deep(_parse_checked, filename, text, where=where, what=f"parsing {filename}")
    _FILES[key] = parsed
    return parsed


def _parse_checked(filename: str, text: str) -> ParsedFile:
    """Python's parser and the limits of `source_limits` (on a deep stack: see `run_deep`), a piece of the file at a
    time; LibCST later, a chunk at a time."""
    lines = code_lines(text)
    chunker, defs = Chunker(lines), {}
    try:
        for tree in parse_pieces(filename, text, lines):
            if tree is None:   # the file is read again, whole
                chunker, defs = Chunker(lines), {}
                continue
            chunker.add(tree.body)
            defs.update(python_defs(tree))
            del tree   # Python's tree is about 200 bytes a character: keep only the `def` headers
    except SyntaxError as e:
        raise PythonSyntaxError(f"Python syntax error: {e.msg}", SourceSpan(filename, e.lineno or 1, e.offset or 1)) \
            from None
    return ParsedFile(filename, text, chunker.starts, chunker.heads, chunker.keep, defs)


_COL_BITS, _HALF_BITS = 25, 50    # room for 2**25 columns: more than MAX_SOURCE_CHARS


def _pack(line: int, col: int, end_line: int, end_col: int) -> int:
    return (((line << _COL_BITS) | col) << _HALF_BITS) | (end_line << _COL_BITS) | end_col


def _unpack(packed: int) -> tuple:
    start, end = packed >> _HALF_BITS, packed & ((1 << _HALF_BITS) - 1)
    mask = (1 << _COL_BITS) - 1
    return start >> _COL_BITS, start & mask, end >> _COL_BITS, end & mask


class Positions(dict):
    """Node -> `CodeRange`, kept as one packed int (line, column, end line, end column) under the node's id.

    A large file has millions of nodes and few are asked for: each `CodeRange` is made when asked,
    and an int is a fifth of the memory of a tuple of four. The module holding the nodes outlives
    this map (a `ParsedFile` holds both), so ids stay unique.
    """

    def raw(self, node) -> Optional[tuple]:
        """(line, column, end line, end column), or None."""
        found = dict.get(self, id(node))
        return None if found is None else _unpack(found)

    def get(self, node, default=None):
        found = self.raw(node)
        return default if found is None else CodeRange((found[0], found[1]), (found[2], found[3]))

    def __getitem__(self, node):
        found = self.raw(node)
        if found is None:
            raise KeyError(node)
        return CodeRange((found[0], found[1]), (found[2], found[3]))

    def __contains__(self, node) -> bool:
        return dict.__contains__(self, id(node))


def node_positions(module: cst.Module, first_line: int = 1) -> Positions:
    """Every node's `CodeRange`, as LibCST's `PositionProvider` gives it, computed in one codegen pass.

    LibCST computes positions by generating the file's code; its syntactic-position hook is a
    generator-based context manager entered for most nodes, and it keeps every token and a
    `CodeRange` per node. `_fast_positions` replaces that hook with a plain object, keeps no tokens,
    records packed ints (see `Positions`) and skips the newline split for tokens without a newline
    (most of `graphjit check`'s time on large files). Should LibCST's internals differ, its own
    provider is used. `first_line`: the line the module's code starts on.
    """
    try:
        return _fast_positions(module, first_line)
    except Exception:   # another LibCST version: the documented way
        wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        out = Positions()
        shift = first_line - 1
        for node, where in wrapper.resolve(PositionProvider).items():
            dict.__setitem__(out, id(node), _pack(where.start.line + shift, where.start.column,
                                                  where.end.line + shift, where.end.column))
        return out


def _fast_positions(module: cst.Module, first_line: int) -> Positions:
    Recorder, FastState = _fast_classes()
    recorder = Recorder()
    state = FastState(default_indent=module.default_indent, default_newline=module.default_newline,
                      provider=recorder)
    state.line = first_line
    module._codegen(state)
    return recorder._computed


@functools.lru_cache(maxsize=None)
def _fast_classes() -> tuple:
    """The classes of `_fast_positions`, made once (a file has a chunk for each top-level statement)."""
    from libcst.metadata.position_provider import PositionProvidingCodegenState

    class Recorder:
        def __init__(self) -> None:
            self._computed = Positions()

    class Syntactic:
        __slots__ = ("state", "node", "start_node", "end_node", "start")

        def __init__(self, state, node, start_node, end_node) -> None:
            self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node

        def __enter__(self) -> None:
            self.start = (self.state.line, self.state.column)

        def __exit__(self, *exc) -> bool:
            state, computed = self.state, self.state.provider._computed
            start = computed.raw(self.start_node)[:2] if self.start_node is not None else self.start
            end = computed.raw(self.end_node)[2:] if self.end_node is not None else (state.line, state.column)
            dict.__setitem__(computed, id(self.node), _pack(*start, *end))
            return False

    class FastState(PositionProvidingCodegenState):
        def record_syntactic_position(self, node, *, start_node=None, end_node=None):
            return Syntactic(self, node, start_node, end_node)

        def before_codegen(self, node) -> None:
            self._stack.append((self.line, self.column))

        def after_codegen(self, node) -> None:
            start = self._stack.pop()
            computed = self.provider._computed
            key = id(node)
            if not dict.__contains__(computed, key):   # a syntactic position, recorded already, wins
                dict.__setitem__(computed, key, _pack(start[0], start[1], self.line, self.column))

        def add_token(self, value: str) -> None:
            if not self.tokens:     # the module only asks whether there was any token
                self.tokens.append(value)
            self._update_position(value)

        def add_indent_tokens(self) -> None:
            for token in self.indent_tokens:
                self.add_token(token)

        def _update_position(self, value: str) -> None:
            if "\n" in value or "\r" in value:
                PositionProvidingCodegenState._update_position(self, value)
            else:
                self.column += len(value)

    return Recorder, FastState


def read_text(path: str) -> str:
    """A source file's text, decoded as Python does: a PEP 263 coding comment, a BOM, else UTF-8.

    Raises OSError (cannot read) or UnicodeDecodeError / SyntaxError (an unknown or wrong encoding).
    """
    with open(path, "rb") as f:
        data = f.read()
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    text = data.decode(encoding)
    return text[1:] if text.startswith("\ufeff") else text


class PythonSyntaxError(UnsupportedSyntaxError):
    """The file is not valid Python at all."""


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
    node = parsed.function_at(code.co_name, line)
    if node is not None:
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
