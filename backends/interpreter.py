"""Run a graph node by node (`exec_mode="no_sink"`): the oracle the emitter is tested against.

Each op runs through the op table; a failing node is reported with its op and the user's line.
"""

from __future__ import annotations

import linecache
from typing import Any

from ..graph.callables import resolve_exception
from ..graph.attrs import keyword_attrs
from ..graph.diagnostics import GraphjitError
from ..graph.evaluate import evaluate
from ..graph.ir import Graph, Node
from ..graph.paths import Roots, parse_path
from .fallback_runtime import make_fallback


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


def _key(base, index: tuple):
    """A list takes one index or slice, not a tuple of them."""
    return index[0] if isinstance(base, list) and len(index) == 1 else index


class Interpreter:
    """Runs one graph; its parameters are read through `roots` (with this call's arguments) per call."""

    def __init__(self, graph: Graph, roots: Roots, globals_dict: dict = None):
        self.graph = graph
        self.roots = roots
        self.globals = globals_dict if globals_dict is not None else {}

    def __call__(self, *args) -> Any:
        env: dict[int, Any] = {}
        for a, v in zip(self.graph.args, args):
            env[a.id] = v
        for p in self.graph.params:
            env[p.id] = parse_path(p.attrs["path"]).resolve(
                self.roots.with_args({a.name: v for a, v in zip(self.graph.args, args)}))
        return self.run(self.graph, env)[0]

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
        if op == "note":
            return None
        if op in OBJECT_OPS:
            return getattr(self, "op_" + op)(node, vals)
        return evaluate(node, vals)

    # --- Python-object effects (COMPATIBLE) and fallback blocks (LAX) ------------------------
    def op_raise(self, node, vals):
        """`raise E(args)`: E is a builtin exception named by a string, or a compile-time class."""
        cls = resolve_exception(vals[0]) if isinstance(vals[0], str) else vals[0]
        raise cls(*vals[1:])

    def op_assert(self, node, vals):
        if len(vals) > 1:
            assert vals[0], vals[1]
        else:
            assert vals[0]

    def op_setattr(self, node, vals):
        setattr(vals[0], node.attrs["name"], vals[1])

    def op_load_global(self, node, vals):
        return self._scope(node.attrs.get("scope", "globals"))[node.attrs["name"]]

    def op_store_global(self, node, vals):
        self._scope(node.attrs.get("scope", "globals"))[node.attrs["name"]] = vals[0]

    def op_getattr(self, node, vals):
        return getattr(vals[0], node.attrs["name"])

    def op_pycall(self, node, vals):
        attrs = node.attrs
        kw = attrs.get("kw", ())
        n_pos = len(vals) - 1 - len(kw)
        static = keyword_attrs(attrs)
        return vals[0](*vals[1:1 + n_pos], **dict(zip(kw, vals[1 + n_pos:])), **static)

    def op_fallback(self, node, vals):
        a = node.attrs
        return make_fallback(a["code"], a["file"], a["line"], self._scope(a["scope"]))(*vals)

    def _scope(self, scope) -> dict:
        return self.globals if scope == "globals" else self.roots("const", scope)


OBJECT_OPS = {"raise", "assert", "setattr", "load_global", "store_global", "getattr", "pycall", "fallback"}
