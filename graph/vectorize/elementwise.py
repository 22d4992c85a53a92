"""Ops applied to every iteration's values at once: uniform ops computed once, elementwise
arithmetic with NumPy's dtype rules checked against the loop's, builtins and conversions."""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

import numpy as np

from ..analysis.affine import Affine
from ..analysis.dependence import ANY, Access
from ..ir import Node
from ..ops import OPS
from ..types import ArrayType
from . import probes as P
from .integers import interval
from .legality import add_check
from .materialize import checked, eager_probes, value_node
from .state import LoopState
from .values import (VI, Bail, Unsafe, ValueKind, int_interval, line_of, op_text,
                     static_attrs)


def uniform(st: LoopState, node: Node, vis: list) -> VI:
    """A value that does not change with the loop index: computed once, in program order."""
    if node.regions:
        raise Bail(f"`{node.op}` with regions is not vectorized")
    if st.region_depth and not safe_op(node, vis):
        raise Bail(f"`{op_text(node)}` inside a branch could fail where the loop never ran it")
    operands = [value_node(st, v) for v in vis]
    note_array_reads(st, node, vis)
    new = st.scratch.op(node.op, operands, dict(node.attrs), node.name)
    try:
        probes = (P.eager_probe(node.type),)
    except P.ProbeError:
        try:
            probes = eager_probes(node, vis)
        except Bail:
            probes = ()
    ident = None
    if OPS[node.op].result == "view" and vis and vis[0].ident is not None:
        ident = vis[0].ident
    elif isinstance(node.type, ArrayType) and node.type.shape != ():
        ident = new
    return VI(ValueKind.UNIFORM, node=new, probes=probes, ident=ident, text=node.name or node.op)


def note_array_reads(st: LoopState, node: Node, vis: list) -> None:
    """An op that takes a whole array reads all of it."""
    for v in vis:
        if v.kind in (ValueKind.UNIFORM, ValueKind.VARYING) and v.ident is not None and not v.is_view:
            st.accesses.append(Access(v.ident, False, st.scratch.tick(), (ANY,), v.text or "array",
                                      line_of(node), extra={"whole": True}))


def affine_op(op: str, vis: list) -> Optional[Affine]:
    if op == "add":
        return vis[0].aff + vis[1].aff
    if op == "sub":
        return vis[0].aff - vis[1].aff
    if op == "neg":
        return -vis[0].aff
    if op == "pos":
        return vis[0].aff
    a, b = vis[0].aff, vis[1].aff
    if a.is_const:
        return b * a.const
    if b.is_const:
        return a * b.const
    return None


def elementwise(st: LoopState, node: Node, vis: list, op: Optional[str] = None, attrs: Optional[dict] = None,
                eager_fn=None) -> VI:
    op = op or node.op
    attrs = dict(node.attrs if attrs is None else attrs)
    if "kw" in attrs:
        raise Bail(f"`{op_text(node)}` with keyword operands is not vectorized")
    if st.region_depth and not safe_op(node, vis, op):
        if not any(v.varying for v in vis):
            raise Bail(f"`{op_text(node)}` inside a branch could fail where the loop never ran it")
        if st.compress is None:
            raise Unsafe(f"`{op_text(node)}` inside a branch could fail where the loop never ran it")
    if (OPS[op].domain == "division" or op == "pow") and len(vis) == 2 and any(v.varying and P.is_py_scalar(v.probe)
                                                              for v in vis):
        d = vis[1]
        ival = d.ival if d.ival is not None else (interval(st, d.aff) if d.kind == ValueKind.AFFINE else None)
        if op == "pow" or P.is_py_scalar(vis[0].probe) and P.is_py_scalar(d.probe) and \
                (ival is None or ival[0] <= 0 <= ival[1]):
            # Python numbers raise ZeroDivisionError where NumPy returns inf: Python floats are
            # divided as NumPy does unless a divisor is zero, and then the loop runs (and raises)
            if op != "truediv" or not d.varying or not all(type(p) is float for v in vis for p in v.probes):
                raise Bail(f"`{op_text(node)}` of Python numbers could raise where NumPy would not")
            add_check(st, st.scratch.op("eq", [value_node(st, d), st.scratch.const(0.0)]), op_text(node))
    eager = eager_probes(node, vis, eager_fn or OPS[op], attrs)
    dtypes = {P.dtype_of(e) for e in eager}
    if len(dtypes) > 1:
        raise Bail(f"the dtype of `{op_text(node)}` depends on which branch was taken")
    want = dtypes.pop()
    if any(P.is_py_scalar(e) and isinstance(e, int) and not isinstance(e, bool) for e in eager):
        ival = int_interval(op, [v.ival for v in vis])
        if ival is None or max(abs(ival[0]), abs(ival[1])) >= 2 ** 62:
            raise Bail(f"`{op_text(node)}` computes Python integers that might not fit in int64")
    else:
        ival = None
    if not any(v.varying for v in vis):   # e.g. two uniform terms of a chained update
        new = st.scratch.op(op, [value_node(st, v) for v in vis], attrs, node.name)
        return VI(ValueKind.UNIFORM, node=new, probes=eager, ival=ival, text=node.name or op_text(node))
    rank = max(P.rank_of(v.probe) for v in vis)
    operands, vprobes = [], []
    for v in vis:
        n = value_node(st, v)
        if v.varying:
            pad = rank - P.rank_of(v.probe)
            n = st.scratch.expand(n, 1, pad)
            vprobes.append(P.vector_probe(v.probe, pad))
        else:
            vprobes.append(v.probe)
        operands.append(n)
    static = static_attrs(attrs)
    got = P.dtype_of(checked(OPS[op], vprobes, static))
    if got != want:
        operands, vprobes = weak_casts(st, vis, operands, vprobes)
        got = P.dtype_of(checked(OPS[op], vprobes, static))
        if got != want:
            raise Bail(f"`{op_text(node)}` would compute in {got} where the loop computes in {want}")
    if OPS[op].inplace_symbol and all(type(e) in (float, complex) for e in eager):
        attrs["quiet"] = True   # Python float arithmetic overflows and makes NaN silently (graph/attrs.py)
    new = st.scratch.op(op, operands, attrs, node.name)
    return VI(ValueKind.VARYING, node=new, probes=eager, ival=ival, text=node.name or op_text(node))


def weak_casts(st: LoopState, vis, operands, vprobes):
    """Cast varying Python-scalar operands the way NumPy converts Python scalars (NEP 50)."""
    strong = [P.dtype_of(v.probe) for v in vis if not P.is_py_scalar(v.probe)]
    operands, vprobes = list(operands), list(vprobes)
    for k, v in enumerate(vis):
        if not (v.varying and P.is_py_scalar(v.probe)):
            continue
        target = P.weak_cast_target(strong, v.probe)
        if target is None or target == P.dtype_of(vprobes[k]):
            continue
        if isinstance(v.probe, int) and not isinstance(v.probe, bool):
            ival = v.ival if v.ival is not None else (interval(st, v.aff) if v.kind == ValueKind.AFFINE else None)
            if ival is None or not P.exactly_representable(ival, target):
                continue
        operands[k] = st.scratch.op("astype", [operands[k]], {"dtype": target.type})
        vprobes[k] = vprobes[k].astype(target)
    return operands, vprobes


def safe_op(node: Node, vis: list, op: Optional[str] = None) -> bool:
    """May this op run for iterations whose branch the loop did not take?"""
    op = op or node.op
    if OPS[op].domain == "division":
        d = vis[1] if len(vis) > 1 else None
        return d is not None and d.has_const and isinstance(d.const, (int, float)) and d.const != 0
    if op == "pow":
        e = vis[1]
        return e.has_const and isinstance(e.const, int) and e.const >= 0
    if OPS[op].domain == "domain":
        return False
    if op in ("int",):
        return False
    return True


def visit_builtin(st: LoopState, node: Node, vis: list) -> VI:
    if node.op == "py_abs":
        if len(vis) != 1:
            raise Bail("abs() takes one value")
        return elementwise(st, node, vis, op="abs", eager_fn=abs)
    if len(vis) < 2 or any(P.rank_of(v.probe) for v in vis):
        raise Bail(f"`{op_text(node)}` is not an elementwise max/min of scalars")
    acc = vis[0]
    for v in vis[1:]:
        acc = pairwise_extreme(st, node, acc, v, node.op == "py_max")
    return acc


def pairwise_extreme(st: LoopState, node: Node, a: VI, b: VI, is_max: bool) -> VI:
    """Python `max(a, b)` is `b if b > a else a` (NaN in `b` loses); `min` uses `<`."""
    kinds = {P.dtype_of(p).kind for p in a.probes + b.probes}
    eager = tuple(P.unique_probes(a.probes + b.probes))
    if kinds <= set("iub"):
        vi = elementwise(st, node, [a, b], op="maximum" if is_max else "minimum",
                         eager_fn=max if is_max else min)
        return replace(vi, probes=eager)
    test = elementwise(st, node, [b, a], op="gt" if is_max else "lt", attrs={})
    vi = elementwise(st, node, [test, b, a], op="where", attrs={},
                     eager_fn=lambda c, x, y: x if c else y)
    return replace(vi, probes=eager)


def visit_conversion(st: LoopState, node: Node, vis: list) -> VI:
    (v,) = vis
    kind = P.dtype_of(v.probe).kind
    if node.op == "int" and kind not in "iub":
        raise Bail("int() of a float is not vectorized (NaN and infinity raise in the loop)")
    target = {"float": np.float64, "bool": np.bool_, "int": np.int64}[node.op]
    if P.rank_of(v.probe):
        raise Bail(f"{node.op}() of an array")
    eager = eager_probes(node, vis)
    new = st.scratch.op("astype", [value_node(st, v)], {"dtype": target}, node.name)
    return VI(ValueKind.VARYING, node=new, probes=eager, ival=v.ival, text=node.name or node.op)
