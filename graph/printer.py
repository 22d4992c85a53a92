"""The graph's text form (documented in docs/graph-text.md); `parse` reads it back.

    graph f(%x: f32[3], %n: int) -> f32[3]
      param %w: f32[3] = self.w
      %y = mul(%x, 2.0) : f32[3]  # f.py:3:9
      return %y

Values print as `%name` (the user's variable name, `.N` added when taken) or `%N`; constants
print inline where they are used; region nodes are followed by their regions in braces.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from .literals import format_literal

if TYPE_CHECKING:  # annotations only: ir prints graphs through this module
    from .ir import Graph, Node


class _Names:
    def __init__(self) -> None:
        self.names: dict[int, str] = {}
        self.taken: set[str] = set()
        self.counter = 0
        self.next_suffix: dict[str, int] = {}   # base -> the first `.k` not yet tried (keeps define linear)

    def define(self, node: Node) -> str:
        if node.name:
            base = _clean(node.name)
            name, k = base, self.next_suffix.get(base, 1)
            if name in self.taken:
                name = f"{base}.{k}"
                while name in self.taken:
                    k += 1
                    name = f"{base}.{k}"
                self.next_suffix[base] = k + 1
        else:
            while str(self.counter) in self.taken:
                self.counter += 1
            name = str(self.counter)
            self.counter += 1
        self.taken.add(name)
        self.names[node.id] = name
        return "%" + name

    def use(self, node: Node) -> str:
        if node.op == "const":
            return format_literal(node.value) if _printable(node.value) else f"<{type(node.value).__name__}>"
        if node.id not in self.names:
            return f"%<undefined {node.op}#{node.id}>"
        return "%" + self.names[node.id]


def _printable(value) -> bool:
    from .literals import is_literal
    return is_literal(value)


def _clean(name: str) -> str:
    out = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name)
    return out if out and not out[0].isdigit() else "v" + out


def print_graph(graph: Graph, with_spans: bool = True) -> str:
    names = _Names()
    header_args = ", ".join(f"{names.define(a)}: {a.type}" for a in graph.args)
    out_type = graph.outputs[0].type if len(graph.outputs) == 1 else None
    lines = [f"graph {graph.name}({header_args})" + (f" -> {out_type}" if out_type is not None else "")]
    for p in graph.params:
        lines.append(f"  param {names.define(p)}: {p.type} = {p.attrs['path']}")
    _print_body(graph, names, lines, "  ", with_spans)
    lines.append("  return " + ", ".join(names.use(o) for o in graph.outputs))
    return "\n".join(lines) + "\n"


def _print_body(graph: Graph, names: _Names, lines: list[str], indent: str, with_spans: bool) -> None:
    for node in graph.nodes:
        if node.op == "const":
            continue
        operands = ", ".join(names.use(o) for o in node.operands)
        attrs = ""
        if node.attrs:
            attrs = " {" + ", ".join(f"{k}={format_literal(v)}" for k, v in node.attrs.items()) + "}"
        text = f"{indent}{names.define(node)} = {node.op}({operands}){attrs} : {node.type}"
        lines.append(text + _span_comment(node, with_spans))
        for region in node.regions:
            args = ", ".join(f"{names.define(a)}: {a.type}" for a in region.args)
            lines.append(f"{indent}  {region.label}({args}) {{")
            _print_body(region, names, lines, indent + "    ", with_spans)
            lines.append(f"{indent}    yield " + ", ".join(names.use(o) for o in region.outputs))
            lines.append(f"{indent}  }}")


def _span_comment(node: Node, with_spans: bool) -> str:
    if not with_spans or node.span is None:
        return ""
    return f"  # {node.span.short()}"


def span_text(node: Node) -> Optional[str]:
    return node.span.short() if node.span else None
