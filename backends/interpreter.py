"""Run a graph node by node (`exec_mode="no_sink"`): the oracle the emitter is tested against.

Each op runs through the op table; a failing node is reported with its op and the user's line.
"""

from __future__ import annotations

import linecache
from typing import Any, Callable

from ..graph.diagnostics import GraphjitError
from ..graph.evaluate import evaluate
from ..graph.ir import Graph, Node
from ..graph.paths import parse_path


def _note(error: Exception, node: Node) -> None:
    """Name the failing node (op, value name, the user's file:line and source) on the exception."""
    if not hasattr(error, "add_note"):
        return
    where = f" at {node.span}" if node.span else ""
    if any(n.startswith("graphjit: in graph node") for n in getattr(error, "__notes__", ())):
        error.add_note(f"graphjit:   inside `{node.op}`{where}")
        return
    name = f" (%{node.name})" if node.name else ""
    error.add_note(f"graphjit: in graph node `{node.op}`{name}{where}")
    if node.span is not None:
        text = linecache.getline(node.span.file, node.span.line).strip()
        if text:
            error.add_note(f"    {node.span.line} | {text}")


class Interpreter:
    def __init__(self, graph: Graph, roots: Callable[[str, Any], Any]):
        self.graph = graph
        self.roots = roots

    def __call__(self, *args) -> Any:
        env: dict[int, Any] = {}
        for a, v in zip(self.graph.args, args):
            env[a.id] = v
        for p in self.graph.params:
            env[p.id] = parse_path(p.attrs["path"]).resolve(self._root(args))
        return self.run(self.graph, env)[0]

    def _root(self, args):
        by_name = {a.name: v for a, v in zip(self.graph.args, args)}

        def root(kind, name):
            if kind == "arg":
                return by_name[name]
            return self.roots(kind, name)
        return root

    def run(self, g: Graph, env: dict) -> tuple:
        for node in g.nodes:
            try:
                env[node.id] = self.eval(node, env)
            except GraphjitError:
                raise
            except Exception as e:
                _note(e, node)
                raise
        return tuple(env[o.id] for o in g.outputs)

    def region(self, region: Graph, values: list, env: dict) -> tuple:
        inner = dict(env)
        for a, v in zip(region.args, values):
            inner[a.id] = v
        return self.run(region, inner)

    def eval(self, node: Node, env: dict) -> Any:
        op = node.op
        vals = [env[o.id] for o in node.operands]
        if op == "if":
            region = node.regions[0] if vals[0] else node.regions[1]
            return self.region(region, vals[1:], env)
        if op == "for_range":
            n = node.attrs.get("carried", 0)
            carried = tuple(vals[3:3 + n])
            captures = vals[3 + n:]
            for i in range(vals[0], vals[1], vals[2]):
                carried = self.region(node.regions[0], [i, *carried, *captures], env)
            return carried
        if op == "while":
            n = node.attrs.get("carried", 0)
            carried, captures = tuple(vals[:n]), vals[n:]
            cond, body = node.regions
            while self.region(cond, [*carried, *captures], env)[0]:
                carried = self.region(body, [*carried, *captures], env)
            return carried
        return evaluate(node, vals)
