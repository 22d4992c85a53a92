"""Run a graph node by node (`exec_mode="no_sink"`): the oracle the emitter is tested against.

Each op runs through the op table; a failing node is reported with its op and the user's line.
"""

from __future__ import annotations

import operator
from typing import Any, Callable

from ..graph.callables import resolve_callable
from .fallback_runtime import make_fallback
from ..graph.diagnostics import GraphjitError
from ..graph.ir import Graph, Node
from ..graph.literals import OperandRef
from ..graph.ops import OPS
from ..graph.paths import parse_path

INPLACE = {"add": operator.iadd, "sub": operator.isub, "mul": operator.imul, "truediv": operator.itruediv,
           "floordiv": operator.ifloordiv, "mod": operator.imod, "pow": operator.ipow,
           "matmul": operator.imatmul, "lshift": operator.ilshift, "rshift": operator.irshift,
           "bitand": operator.iand, "bitor": operator.ior, "bitxor": operator.ixor}


def build_index(node: Node, index, env: dict) -> Any:
    def part(p):
        return env[node.operands[p.index].id] if isinstance(p, OperandRef) else p
    items = []
    for item in index:
        if isinstance(item, slice):
            items.append(slice(part(item.start), part(item.stop), part(item.step)))
        else:
            items.append(part(item))
    return tuple(items)


def _key(base, index: tuple):
    """A list takes one index or slice, not a tuple of them."""
    return index[0] if isinstance(base, list) and len(index) == 1 else index


class Interpreter:
    def __init__(self, graph: Graph, roots: Callable[[str, Any], Any], globals_dict: dict = None):
        self.graph = graph
        self.roots = roots
        self.globals = globals_dict if globals_dict is not None else {}

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
                e.add_note(f"graphjit: in graph node `{node.op}` from {node.span}") if hasattr(e, "add_note") \
                    else None
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
        if op == "const":
            return node.value
        if op == "getitem":
            return vals[0][_key(vals[0], build_index(node, node.attrs["index"], env))]
        if op == "setitem":
            vals[0][_key(vals[0], build_index(node, node.attrs["index"], env))] = vals[1]
            return None
        if op == "inplace":
            return INPLACE[node.attrs["op"]](vals[0], vals[1])
        if op == "tuple":
            return tuple(vals)
        if op == "list":
            return list(vals)
        if op == "tuple_get":
            return vals[0][node.attrs["index"]]
        if op == "dim":
            return vals[0].shape[node.attrs["axis"]]
        if op in ("shape", "ndim", "size"):
            return getattr(vals[0], op)
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
        if op == "raise":
            cls = resolve_callable(vals[0]) if isinstance(vals[0], str) else vals[0]
            raise cls(*vals[1:])
        if op == "assert":
            if len(vals) > 1:
                assert vals[0], vals[1]
            else:
                assert vals[0]
            return None
        if op == "setattr":
            setattr(vals[0], node.attrs["name"], vals[1])
            return None
        if op == "load_global":
            return self._scope(node.attrs.get("scope", "globals"))[node.attrs["name"]]
        if op == "store_global":
            self._scope(node.attrs.get("scope", "globals"))[node.attrs["name"]] = vals[0]
            return None
        if op == "getattr":
            return getattr(vals[0], node.attrs["name"])
        if op == "pycall":
            return self._call(vals[0], vals[1:], node.attrs)
        if op == "dict":
            return dict(zip(node.attrs["keys"], vals))
        if op == "format":
            return node.attrs["template"].format(*vals)
        if op == "fallback":
            a = node.attrs
            scope = self._scope(a["scope"])
            return make_fallback(a["code"], a["file"], a["line"], scope)(*vals)
        attrs = node.attrs
        kw = attrs.get("kw", ())
        static = {k: v for k, v in attrs.items() if k not in ("kw", "fn")}
        n_pos = len(vals) - len(kw)
        kwargs = dict(zip(kw, vals[n_pos:]))
        if op == "call":
            return resolve_callable(attrs["fn"])(*vals[:n_pos], **kwargs, **static)
        if op == "astype":
            return vals[0].astype(attrs["dtype"])
        return OPS[op](*vals[:n_pos], **kwargs, **static)

    def _scope(self, scope) -> dict:
        return self.globals if scope == "globals" else self.roots("const", scope)

    def _call(self, fn, vals, attrs):
        kw = attrs.get("kw", ())
        n_pos = len(vals) - len(kw)
        static = {k: v for k, v in attrs.items() if k not in ("kw", "fn")}
        return fn(*vals[:n_pos], **dict(zip(kw, vals[n_pos:])), **static)
