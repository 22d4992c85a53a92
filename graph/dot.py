"""Graphviz DOT for a graph (`graphjit transpile --emit dot`): one box per node, regions as clusters."""

from __future__ import annotations

from .ir import Graph, Node
from .literals import format_literal, is_literal


def to_dot(graph: Graph) -> str:
    """`dot -Tsvg` input: values are boxes labelled `op : type`, edges go from operand to user."""
    lines = [f"digraph {_quote(graph.name)} {{", "  node [shape=box, fontname=monospace, fontsize=10];",
             "  edge [fontsize=8];"]
    counter = [0]
    _body(graph, lines, "  ", counter)
    lines.append("}")
    return "\n".join(lines) + "\n"


def _id(node: Node) -> str:
    return f"n{node.id}"


def _body(graph: Graph, lines: list, indent: str, counter: list) -> None:
    for a in graph.args:
        lines.append(f"{indent}{_id(a)} [label={_quote(f'arg {a.name}: {a.type}')}, shape=ellipse];")
    for p in graph.params:
        lines.append(f"{indent}{_id(p)} [label={_quote(f'param {p.name}: {p.type}')}, shape=ellipse];")
    for node in graph.nodes:
        if node.op == "const":
            continue
        consts = [format_literal(o.value) if is_literal(o.value) else f"<{type(o.value).__name__}>"
                  for o in node.operands if o.op == "const"]
        attrs = ", ".join(f"{k}={format_literal(v)}" for k, v in node.attrs.items() if is_literal(v))
        label = f"{node.name + ' = ' if node.name else ''}{node.op}" + (f"({', '.join(consts)})" if consts else "") \
            + (f" {{{attrs}}}" if attrs else "") + f"\n: {node.type}" + (f"\n{node.span.short()}" if node.span else "")
        style = "" if node.is_pure else ", style=bold"
        lines.append(f"{indent}{_id(node)} [label={_quote(label)}{style}];")
        for k, o in enumerate(node.operands):
            if o.op != "const":
                lines.append(f"{indent}{_id(o)} -> {_id(node)} [label={k}];")
        for region in node.regions:
            counter[0] += 1
            lines.append(f"{indent}subgraph cluster_{counter[0]} {{")
            lines.append(f"{indent}  label={_quote(region.label)}; style=dashed;")
            _body(region, lines, indent + "  ", counter)
            for k, out in enumerate(region.outputs):
                if out.op != "const":
                    lines.append(f"{indent}  {_id(out)} -> {_id(node)} [label={_quote(f'yield {k}')}, style=dotted];")
            lines.append(f"{indent}}}")
    for k, out in enumerate(graph.outputs if graph.parent is None else ()):
        if out.op != "const":
            lines.append(f"{indent}{_id(out)} -> ret [label={k}];")
    if graph.parent is None:
        lines.append(f"{indent}ret [label=\"return\", shape=ellipse];")


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
