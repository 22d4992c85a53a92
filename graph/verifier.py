"""`verify(graph)`: the invariants every graph keeps between stages and after every pass."""

from __future__ import annotations

from typing import Optional

from . import ops as _ops
from .diagnostics import VerifyError
from .ir import Graph, Node
from .types import Type


def verify(graph: Graph, pass_name: Optional[str] = None, require_spans: bool = False) -> None:
    """Raise `VerifyError` naming the broken invariants (and the pass that broke them).

    `require_spans` also demands a source span on every computing node, as the front end gives.
    """
    problems: list[str] = []
    _check(graph, set(), problems, require_spans)
    if problems:
        where = f" after pass '{pass_name}'" if pass_name else ""
        raise VerifyError(f"graph {graph.name} is malformed{where}: " + "; ".join(problems[:5]))


def _check(graph: Graph, outer: set, problems: list[str], require_spans: bool) -> None:
    defined: set[int] = set()
    for node in graph.args + graph.params:
        defined.add(node.id)
        if node.graph is not graph:
            problems.append(f"{node!r} is not owned by its graph")
    for node in graph.nodes:
        if node.op not in _ops.OPS:
            problems.append(f"unknown op {node.op!r}")
            continue
        opdef = node.opdef
        if opdef.arity is not None and opdef.emit != "call" and len(node.operands) != opdef.arity:
            problems.append(f"{node!r} has {len(node.operands)} operands, op {node.op} takes {opdef.arity}")
        for operand in node.operands:
            if operand.id not in defined:
                problems.append(f"{node!r} uses {operand!r} before its definition (or from another region)")
        if not isinstance(node.type, Type):
            problems.append(f"{node!r} has no type")
        if "out" in node.attrs:
            k = node.attrs["out"]
            if not isinstance(k, int) or not 0 <= k < len(node.operands) or opdef.ufunc is None:
                problems.append(f"{node!r}: `out={k!r}` needs an operand index and an op with an out= form")
            elif node.operands[k].type != node.type:
                problems.append(f"{node!r}: `out={k}` operand has type {node.operands[k].type}, result {node.type}")
        if node.graph is not graph:
            problems.append(f"{node!r} is not owned by its graph")
        if require_spans and node.span is None and node.op != "const":
            problems.append(f"{node!r} has no source span")
        _check_regions(node, problems)
        for region in node.regions:
            _check(region, defined, problems, require_spans)
        defined.add(node.id)
    for out in graph.outputs:
        if out.id not in defined:
            problems.append(f"output {out!r} is not defined in graph {graph.name}")
    if not graph.is_dag():
        problems.append("def-use edges form a cycle")


def _check_regions(node: Node, problems: list[str]) -> None:
    expected = {"if": ("then", "else"), "for_range": ("body",), "while": ("cond", "body")}.get(node.op, ())
    labels = tuple(r.label for r in node.regions)
    if labels != expected:
        problems.append(f"{node!r} has regions {labels}, expected {expected}")
        return
    if node.op == "if":
        captures = len(node.operands) - 1
        outs = {len(r.outputs) for r in node.regions}
        if len(outs) != 1:
            problems.append(f"{node!r}: branches yield different numbers of values")
        for r in node.regions:
            if len(r.args) != captures:
                problems.append(f"{node!r}: region {r.label} takes {len(r.args)} args, node passes {captures}")
    elif node.op == "for_range":
        n = node.attrs.get("carried", 0)
        body = node.regions[0]
        if len(body.args) != len(node.operands) - 2:
            problems.append(f"{node!r}: body takes {len(body.args)} args, expected {len(node.operands) - 2}")
        if len(body.outputs) != n:
            problems.append(f"{node!r}: body yields {len(body.outputs)} values, carried={n}")
    elif node.op == "while":
        n = node.attrs.get("carried", 0)
        cond, body = node.regions
        if len(cond.outputs) != 1:
            problems.append(f"{node!r}: cond must yield one value")
        if len(body.outputs) != n:
            problems.append(f"{node!r}: body yields {len(body.outputs)} values, carried={n}")
