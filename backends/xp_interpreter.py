"""Run a graph node by node on a non-NumPy namespace (`exec_mode="no_sink"` with Dask or array-API inputs).

The interpreter of backends/interpreter.py with each op called as the backend column of the op
table spells it (backends/xp_calls.py, the same decisions the emitter makes: an op the namespace
cannot run, or one that would compute a lazy array, is refused at the same place).
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ..graph.backend_ops import Backend, Lit, Tup, backend_for
from ..graph.evaluate import build_index, evaluate
from ..graph.ir import Graph, Node
from ..graph.ops import OPS
from ..graph.types import ArrayType
from ..graph.paths import Roots
from .interpreter import OBJECT_OPS, Interpreter
from .namespaces import namespace_name
from .xp_origin import check_numpy_operands
from .xp_calls import alias_test, check_condition, flat_gather, namespace_attr, promotion_casts, spelled_call, \
    spelling_for, standard_index, static_kwargs


class NamespaceInterpreter(Interpreter):
    """Runs one graph calling the namespace `xp` (a module) where the NumPy interpreter calls NumPy."""

    def __init__(self, graph: Graph, roots: Roots, globals_dict: dict, xp: Any,
                 device_arg: Optional[str] = None, numpy_values: frozenset = frozenset()):
        super().__init__(graph, roots, globals_dict)
        self.xp = xp
        self.backend: Backend = backend_for(namespace_name(xp))
        self.numpy = numpy_values   # ids of the nodes computed as NumPy computes them (backends/xp_origin.py)
        check_graph(graph, self.backend, numpy_values)   # refused ops fail at compile time, as the emitter's do
        names = [a.name for a in graph.args]
        self.device_index = names.index(device_arg) if device_arg in names else None
        self.device = None

    def __call__(self, *args) -> Any:
        self.device = args[self.device_index].device if self.device_index is not None and self.backend.devices \
            else None
        return super().__call__(*args)

    def eval(self, node: Node, env: dict) -> Any:
        op = node.op
        if op == "const":
            return self.value(node.attrs["value"])
        if op in ("if", "while", "for_range", "note", "arg", "param"):
            return super().eval(node, env)
        if node.id in self.numpy:   # NumPy arrays only: as the NumPy interpreter runs it, constants too
            return super().eval(node, {**env, **{o.id: o.value for o in node.operands if o.op == "const"}})
        spelling = spelling_for(node, self.backend)
        vals = [env[o.id] for o in node.operands]
        for k, dtype in promotion_casts(node).items():   # as NumPy promotes across kinds
            vals[k] = self.xp.astype(vals[k], getattr(self.xp, dtype))
        if op == "call" and node.attrs.get("fn") == "numpy.may_share_memory":
            return vals[0] is vals[1] if alias_test(node, self.backend) == "identity" else True
        if op == "inplace" and not self.backend.inplace_operators and isinstance(node.operands[0].type, ArrayType):
            vals[0][...] = OPS[node.attrs["op"]].fn(vals[0], vals[1])   # the object updated, as NumPy's `+=`
            return vals[0]
        if flat_gather(node, self.backend):
            idx = vals[node.attrs["index"][0].index]
            return vals[0][idx.reshape(-1)].reshape(tuple(idx.shape))
        if op in ("getitem", "setitem"):
            index = build_index(node, standard_index(node, node.attrs["index"]), vals)
            if op == "getitem":
                return vals[0][index]
            vals[0][index] = vals[1]
            return None
        if spelling is None:
            return evaluate(node, vals) if op not in OBJECT_OPS else super().eval(node, env)
        kw = node.attrs.get("kw", ())
        n_pos = len(vals) - len(kw)
        kwargs = dict(zip(kw, vals[n_pos:]))
        kwargs.update({k: Lit(v) for k, v in static_kwargs(node).items()})
        call = spelled_call(spelling, node, vals[:n_pos], kwargs, self.backend, self.xp,
                            None if self.device is None else Lit(self.device))
        fn = namespace_attr(self.xp, call.name)
        return fn(*(self.value(a) for a in call.args), **{k: self.value(v) for k, v in call.kwargs.items()})

    def value(self, item) -> Any:
        """A literal as the namespace takes it: its dtypes, 0-d arrays for NumPy scalars."""
        if isinstance(item, Lit):
            item = item.value
        if isinstance(item, Tup):
            return tuple(self.value(v) for v in item.items)
        if isinstance(item, np.dtype) or (isinstance(item, type) and issubclass(item, np.generic)):
            return getattr(self.xp, np.dtype(item).name)
        if isinstance(item, np.generic):
            return self.xp.asarray(item.item(), dtype=getattr(self.xp, item.dtype.name))
        if isinstance(item, np.ndarray):
            return self.xp.asarray(item)
        return item


def check_graph(graph: Graph, backend: Backend, numpy: frozenset) -> None:
    """Refuse, before running anything, what the namespace cannot run (every region included)."""
    for node in graph.nodes:
        if node.op in ("const", "arg", "param", "note") or node.id in numpy:
            continue
        check_numpy_operands(node, numpy, backend)
        if node.op in ("if", "while"):
            check_condition(node, node.operands[0] if node.op == "if" else node.regions[0].outputs[0], backend)
        elif node.op != "for_range":
            spelling_for(node, backend)
        for region in node.regions:
            check_graph(region, backend, numpy)

