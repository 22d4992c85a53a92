"""Emit a graph as code calling the array namespace of its inputs (`xp`) instead of NumPy.

The variant a jitted function compiles for Dask, CuPy or array-API arrays (backends/namespaces.py
recognises them). It is the NumPy emitter with each op spelled as the backend column of the op
table says (graph/backend_ops.py, through backends/xp_calls.py), the namespace imported by name
above the function, and NumPy scalars and dtypes written as the namespace's:

    import array_api_compat.dask.array as xp


    def f(x, y):
        # model.py:5  return np.tanh(x) * 2.0 + y.sum(axis=0)
        return xp.tanh(x) * 2.0 + xp.sum(y, axis=0)

An op the namespace cannot run, or one that would compute a lazy array (`float(x)`, an `if` on an
array value), is a `CodegenError` naming the op, the backend and the user's line.
"""

from __future__ import annotations

import warnings
from typing import Any, Optional

import numpy as np

from ..graph.backend_ops import Backend, Lit, Tup, backend_for
from ..graph.diagnostics import GraphjitWarning
from ..graph.ir import Graph, Node
from ..graph.literals import is_literal
from ..graph.ops import OPS, PREC_ATOM, PREC_CMP, REGION_OPS
from ..graph.types import ArrayType
from .emit_numpy import Emitted, Emitter
from .namespaces import namespace_name
from .xp_origin import check_numpy_operands
from .xp_calls import alias_test, check_condition, flat_gather, promotion_casts, spelled_call, spelling_for, \
    standard_index, static_kwargs

XP = "xp"


class NamespaceEmitter(Emitter):
    """The NumPy emitter writing calls of the namespace `xp` (a module) instead of `np`."""

    iterates_arrays = False   # the standard has no array iteration: `for i in range(n): b = data[i]`

    def __init__(self, graph: Graph, xp: Any, consts: Optional[list] = None, with_comments: bool = True,
                 device_arg: Optional[str] = None, numpy_values: frozenset = frozenset()):
        super().__init__(graph, consts, with_comments)
        self.numpy = numpy_values   # ids of the nodes computed as NumPy computes them (backends/xp_origin.py)
        self.device_arg = next((a for a in graph.args if a.name == device_arg), None)
        self.xp = xp
        self.backend: Backend = backend_for(namespace_name(xp))
        self.names.used.add(XP)
        self.loops_warned = False

    def function(self, name: str) -> Emitted:
        self.preamble.append(f"import {namespace_name(self.xp)} as {XP}")
        return super().function(name)

    def quiet_block(self, node: Node, indent: str) -> str:
        """np.errstate governs NumPy's own computations only (a Dask graph runs later, elsewhere)."""
        return super().quiet_block(node, indent) if node.id in self.numpy else indent

    # --- ops ----------------------------------------------------------------------------
    def expression(self, node: Node) -> tuple[str, int]:
        if node.op in REGION_OPS or node.op in ("const", "arg", "param", "note"):
            return super().expression(node)
        if node.id in self.numpy:
            return self.as_numpy(node)
        check_numpy_operands(node, self.numpy, self.backend)
        spelling = spelling_for(node, self.backend)
        casts = promotion_casts(node)
        saved = {o.id: self.expr_of(o) for k, o in enumerate(node.operands) if k in casts}
        for k, dtype in casts.items():   # operands cast as NumPy promotes them, for this node only
            self.expr[node.operands[k].id] = (f"{XP}.astype({saved[node.operands[k].id][0]}, {XP}.{dtype})", PREC_ATOM)
        try:
            return self.spelled(node, spelling)
        finally:
            self.expr.update(saved)

    def as_numpy(self, node: Node) -> tuple[str, int]:
        """A node on NumPy arrays only, written as the NumPy emitter writes it (constants too)."""
        consts = [o for o in node.operands if o.op == "const"]
        saved = {o.id: self.expr_of(o) for o in consts}
        for o in consts:
            self.expr[o.id] = Emitter.literal(self, o.value)
        try:
            return Emitter.expression(self, node)
        finally:
            self.expr.update(saved)

    def spelled(self, node: Node, spelling) -> tuple[str, int]:
        if node.op == "call" and node.attrs.get("fn") == "numpy.may_share_memory":
            if alias_test(node, self.backend) == "identity":
                return (f"{self.wrap(node.operands[0], PREC_CMP + 1)} is {self.wrap(node.operands[1], PREC_CMP + 1)}",
                        PREC_CMP)
            return ("True", PREC_ATOM)
        if flat_gather(node, self.backend):
            idx = node.operands[node.attrs["index"][0].index]
            shape = self.text(Lit(idx.type.shape)) if None not in idx.type.shape else f"{self.atom(idx)}.shape"
            return (f"{self.atom(node.operands[0])}[{self.atom(idx)}.reshape(-1)].reshape({shape})", PREC_ATOM)
        if spelling is None:
            return super().expression(node)
        ops = node.operands
        kw = node.attrs.get("kw", ())
        n_pos = len(ops) - len(kw)
        args = [self.value(o) for o in ops[:n_pos]]
        kwargs = {k: self.value(o) for k, o in zip(kw, ops[n_pos:])}
        kwargs.update({k: Lit(v) for k, v in static_kwargs(node).items()})
        device = f"{self.value(self.device_arg)}.device" if self.device_arg is not None else None
        call = spelled_call(spelling, node, args, kwargs, self.backend, self.xp, device)
        parts = [self.text(a) for a in call.args] + [f"{k}={self.text(v)}" for k, v in call.kwargs.items()]
        return (f"{XP}.{call.name}({', '.join(parts)})", PREC_ATOM)

    def inplace(self, node: Node, indent: str, uses: dict) -> None:
        """`a op= b`; where the namespace has no in-place operators, `a[...] = a op b`: the array object
        is updated, so every name bound to it sees the new value, as with NumPy."""
        target, value = node.operands
        if self.backend.inplace_operators or not isinstance(target.type, ArrayType) or node.id in self.numpy:
            return super().inplace(node, indent, uses)
        opdef = OPS[node.attrs["op"]]
        current = self.value(target)
        if not current.isidentifier():
            current = self.names.fresh(target.name or "t")
            self.lines.append(f"{indent}{current} = {self.value(target)}")
        self.lines.append(f"{indent}{current}[...] = {current} {opdef.symbol} {self.wrap(value, opdef.prec + 1)}")
        self.expr[node.id] = (current, PREC_ATOM)
        if self.holders.get(current) is target:
            self.holders[current] = node

    def index(self, node: Node, index) -> str:
        return super().index(node, standard_index(node, index))

    def text(self, item) -> str:
        if isinstance(item, Lit):
            return self.literal(item.value)[0]
        if isinstance(item, Tup):
            items = [self.text(v) for v in item.items]
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        return item

    def literal(self, value) -> tuple[str, int]:
        if isinstance(value, np.generic) and is_literal(value):
            return (f"{XP}.asarray({self.literal(value.item())[0]}, dtype={XP}.{value.dtype.name})", PREC_ATOM)
        if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
            return (f"{XP}.{np.dtype(value).name}", PREC_ATOM)
        if isinstance(value, np.ndarray):   # an array built at compile time: the namespace's copy of it
            text, _ = super().literal(value)
            return (f"{XP}.asarray({text})", PREC_ATOM)
        return super().literal(value)

    # --- statements the namespace may not run -------------------------------------------
    def region_if(self, node: Node, indent: str, uses: dict) -> None:
        check_condition(node, node.operands[0], self.backend)
        super().region_if(node, indent, uses)

    def region_while(self, node: Node, indent: str, uses: dict) -> None:
        check_condition(node, node.regions[0].outputs[0], self.backend)
        super().region_while(node, indent, uses)

    def region_for_range(self, node: Node, indent: str, uses: dict) -> None:
        if self.backend.lazy and not self.loops_warned and indexes_by(node.regions[0]):
            self.loops_warned = True
            text = (f"graphjit: this loop stays a Python loop over {self.backend.name} arrays, one task per "
                    "iteration (jit_level='O2' turns the loops it can into whole-array code)")
            if node.span is not None:
                warnings.warn_explicit(text, GraphjitWarning, node.span.file, node.span.line)
            else:
                warnings.warn(text, GraphjitWarning, stacklevel=2)
        super().region_for_range(node, indent, uses)


def indexes_by(body: Graph) -> bool:
    """The loop body reads or writes an array at its index (`x[i]`): per element or per row."""
    index = body.args[0]
    return any(n.op in ("getitem", "setitem") and index in n.operands for n in body.nodes)


def emit_function(graph: Graph, xp: Any, name: Optional[str] = None, consts: Optional[list] = None,
                  with_comments: bool = True, device_arg: Optional[str] = None,
                  numpy_values: frozenset = frozenset()) -> Emitted:
    """The source of one function computing `graph` with the namespace `xp`; new arrays go on the
    device of argument `device_arg`; the nodes `numpy_values` are computed with NumPy."""
    return NamespaceEmitter(graph, xp, consts, with_comments, device_arg, numpy_values).function(name or graph.name)
