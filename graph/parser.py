"""Read graph text (the form `printer` writes) back into a `Graph`.

Only ops from the op table are built and only literals are read (see `literals`), so parsing a
file never runs code from it, and no name in it is resolved or imported (a `call` node's function is
checked by whoever runs the graph: `callables`). Sizes are bounded before anything is built (lines,
line length, nodes, nesting of regions: `loadable`). Every error names the line it is on.
"""

from __future__ import annotations

import re
from typing import Optional


from . import loadable
from . import ops as _ops
from .callables import check_callable_name
from .diagnostics import GraphjitError, GraphParseError
from .ir import Graph, Node
from .literals import parse_literal
from .spans import SourceSpan
from .types import split_top_level, parse_type

_SPAN_RE = re.compile(r"\s+# (grad of )?(.+):(\d+):(\d+)$")
_NAME_RE = re.compile(r"^%([A-Za-z_][\w]*(?:\.\d+)?|\d+)$")


def parse(text: str, filename: str = "<graph>", positions: Optional[dict] = None) -> Graph:
    """Parse one graph; `parse(str(g))` prints exactly as `g` does. `positions`, if given, receives
    the line number of each node (by node id)."""
    lines = text.count("\n") + 1
    if lines > loadable.MAX_LINES:
        raise GraphParseError(f"graph text of {lines} lines (at most {loadable.MAX_LINES})", SourceSpan(filename, 1, 1))
    numbered = []
    for k, ln in enumerate(text.splitlines()):
        if len(ln) > loadable.MAX_LINE_CHARS:
            raise GraphParseError(f"line of {len(ln)} characters (at most {loadable.MAX_LINE_CHARS})",
                                  SourceSpan(filename, k + 1, 1))
        if ln.strip() and not ln.strip().startswith("//"):
            numbered.append((k + 1, ln))
    if not numbered:
        raise GraphParseError("empty graph text", SourceSpan(filename, 1, 1))
    parser = _Parser([ln for _, ln in numbered], filename, [n for n, _ in numbered])
    parser.positions = positions
    try:
        return parser.graph()
    except (RecursionError, MemoryError) as e:  # a backstop: the limits above should come first
        raise parser.error(f"graph text too deep or too big ({type(e).__name__})") from None


class _Parser:
    def __init__(self, lines: list[str], filename: str, numbers: list[int]):
        self.lines = lines
        self.numbers = numbers
        self.pos = 0
        self.filename = filename
        self.values: dict[str, Node] = {}
        self.nodes = 0
        self.depth = 0
        self.positions: Optional[dict] = None

    def error(self, message: str) -> GraphParseError:
        at = min(self.pos, len(self.lines) - 1)
        line = self.lines[at].strip()
        shown = line if len(line) <= 160 else line[:120] + " ... " + line[-30:]
        return GraphParseError(f"{message[:300]}: {shown!r}", SourceSpan(self.filename, self.numbers[at], 1))

    def graph(self) -> Graph:
        header = self.lines[0].strip()
        m = re.match(r"^graph\s+([^\s(]+)\(", header)
        close = _matching(header, m.end() - 1) if m else -1
        rest = header[close + 1:].strip() if close >= 0 else ""
        if not m or close < 0 or (rest and not rest.startswith("->")):
            raise self.error("expected `graph NAME(ARGS) -> TYPE`")
        graph = Graph(m.group(1))
        arg_text = header[m.end():close]
        for item in split_top_level(arg_text) if arg_text.strip() else []:
            name, _, type_text = item.partition(":")
            node = graph.add_arg(self._hint(name.strip()), self._type(type_text))
            self._define(name.strip(), node)
        self.pos = 1
        while self.pos < len(self.lines) and self.lines[self.pos].strip().startswith("param "):
            pm = re.match(r"^param\s+(%\S+):\s*(.+?)\s*=\s*(.+)$", self.lines[self.pos].strip())
            if not pm:
                raise self.error("expected `param %name: TYPE = PATH`")
            node = graph.add_param(pm.group(3), self._type(pm.group(2)), self._hint(pm.group(1)))
            self._define(pm.group(1), node)
            self.pos += 1
        outputs = self._body(graph, "return")
        graph.set_outputs(outputs)
        if self.pos != len(self.lines):
            raise self.error("text after `return`")
        return graph

    def _body(self, graph: Graph, terminator: str) -> list[Node]:
        while self.pos < len(self.lines):
            line = self.lines[self.pos].strip()
            if line.startswith(terminator + " ") or line == terminator:
                self.pos += 1
                rest = line[len(terminator):].strip()
                return [self._operand(graph, t) for t in split_top_level(rest)] if rest else []
            self._node(graph, line)
        raise self.error(f"missing `{terminator}`")

    def _node(self, graph: Graph, line: str) -> None:
        line_number = self.numbers[self.pos]
        span = None
        cut = line.rfind("  # ")  # the span comment is the last one: attributes may hold "  # " too
        sm = _SPAN_RE.match(line[cut:]) if cut >= 0 else None
        if sm:
            span = SourceSpan(sm.group(2), int(sm.group(3)), int(sm.group(4)), backward=bool(sm.group(1)))
            line = line[:cut]
        self.nodes += 1
        if self.nodes > loadable.MAX_NODES:
            raise self.error(f"more than {loadable.MAX_NODES} nodes")
        m = re.match(r"^(%\S+)\s*=\s*([A-Za-z_]\w*)\(", line)
        if not m:
            raise self.error("expected `%name = op(operands) : TYPE`")
        op = m.group(2)
        if op not in _ops.OPS or op in ("arg", "param", "const"):
            raise self.error(f"unknown op `{op}`")
        close = _matching(line, m.end() - 1)
        if close < 0:
            raise self.error("unbalanced parentheses")
        operand_text = line[m.end():close]
        rest = line[close + 1:].strip()
        attrs = {}
        if rest.startswith("{"):
            end = _matching(rest, 0)
            if end < 0:
                raise self.error("unbalanced braces")
            for item in split_top_level(rest[1:end]):
                key, eq, value = item.partition("=")
                if not eq:
                    raise self.error(f"attribute without `=`: {item!r}")
                try:
                    attrs[key.strip()] = parse_literal(value)
                except ValueError as e:
                    raise self.error(str(e)) from None
            rest = rest[end + 1:].strip()
        if not rest.startswith(":"):
            raise self.error("expected `: TYPE`")
        node_type = self._type(rest[1:])
        operands = [self._operand(graph, t) for t in split_top_level(operand_text)] if operand_text.strip() else []
        if op == "call":
            try:
                check_callable_name(attrs.get("fn"))   # the name only: nothing is imported here
            except GraphjitError as e:
                raise self.error(e.message) from None
        self.pos += 1
        regions = []
        while self.pos < len(self.lines):
            rm = re.match(r"^([a-z]+)\((.*)\)\s*\{$", self.lines[self.pos].strip())
            if not rm:
                break
            if self.depth >= loadable.MAX_REGION_DEPTH:
                raise self.error(f"regions nested more than {loadable.MAX_REGION_DEPTH} deep")
            region = Graph(f"{graph.name}.{rm.group(1)}", label=rm.group(1))
            for item in split_top_level(rm.group(2)) if rm.group(2).strip() else []:
                name, _, type_text = item.partition(":")
                self._define(name.strip(), region.add_arg(self._hint(name.strip()), self._type(type_text)))
            self.pos += 1
            self.depth += 1
            region.set_outputs(self._body(region, "yield"))
            self.depth -= 1
            if self.pos >= len(self.lines) or self.lines[self.pos].strip() != "}":
                raise self.error("expected `}` closing the region")
            self.pos += 1
            regions.append(region)
        node = graph.add(op, operands, attrs, node_type, span, self._hint(m.group(1)), regions)
        if self.positions is not None:
            self.positions[node.id] = line_number
        self._define(m.group(1), node)

    def _operand(self, graph: Graph, text: str) -> Node:
        text = text.strip()
        if text.startswith("%"):
            if text not in self.values:
                raise self.error(f"use of undefined value {text}")
            return self.values[text]
        try:
            return graph.const(parse_literal(text))
        except ValueError as e:
            raise self.error(str(e)) from None

    def _define(self, name: str, node: Node) -> None:
        if not _NAME_RE.match(name):
            raise self.error(f"bad value name {name!r}")
        if name in self.values:
            raise self.error(f"{name} is defined twice")
        self.values[name] = node

    def _hint(self, name: str) -> str:
        bare = name.lstrip("%").split(".")[0]
        return "" if bare.isdigit() else bare

    def _type(self, text: str):
        try:
            return parse_type(text)
        except ValueError as e:
            raise self.error(str(e)) from None


def _matching(text: str, open_pos: int) -> int:
    """Index of the bracket closing the one at `open_pos`, skipping string literals."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack, quote, k = [], None, open_pos
    while k < len(text):
        ch = text[k]
        if quote:
            if ch == "\\":
                k += 1
            elif ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch in pairs:
            stack.append(pairs[ch])
        elif stack and ch == stack[-1]:
            stack.pop()
            if not stack:
                return k
        k += 1
    return -1


