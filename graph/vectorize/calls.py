"""`math` functions (with the checks for arguments they raise on), and reductions, contractions and
layout changes of per-iteration arrays."""

from __future__ import annotations

import numpy as np

from ..ir import Node
from ..ops import OPS
from . import probes as P
from .batched import is_stacked_product, stacked_matmul
from .elementwise import elementwise
from .legality import add_check
from .materialize import checked, eager_probes, lookup, value_node
from .state import LoopState
from .values import MATH_FUNCS, VI, Bail, Unsafe, ValueKind, op_text, static_attrs


def visit_call(st: LoopState, node: Node) -> VI:
    fn = str(node.attrs.get("fn", ""))
    module, _, name = fn.rpartition(".")
    vis = [lookup(st, o) for o in node.operands]
    if module == "builtins" and name == "print":
        raise Bail("`print` is an effect that must run in order")
    if module != "math" or name not in MATH_FUNCS or "kw" in node.attrs:
        raise Bail(f"`{fn or 'call'}` is an opaque call")
    if any(v.carried for v in vis):
        raise Bail(f"the loop-carried value is used by `{fn}`")
    spec = MATH_FUNCS[name]
    if len(vis) != spec.arity:
        raise Bail(f"`{fn}` with {len(vis)} arguments")
    ufunc = spec.ufunc
    if st.region_depth and spec.raises_when and not spec.overflow_only:
        if not any(v.varying for v in vis):
            raise Bail(f"`{fn}` inside a branch could fail where the loop never ran it")
        if st.compress is None:
            raise Unsafe(f"`{fn}` inside a branch could fail where the loop never ran it")
    if any(P.rank_of(v.probe) for v in vis):
        raise Bail(f"`{fn}` of an array")
    # `math` functions return a Python float; a stand-in argument may be outside the function's
    # domain (atanh(1.0)), so the stand-in result is not computed
    if not any(v.varying for v in vis):   # computed once: a Python float, as `math` gives
        for v in vis:
            if P.is_py_scalar(v.probe) and type(v.probe) is int:
                ival = (v.const, v.const) if v.has_const else v.ival
                if ival is None or max(abs(ival[0]), abs(ival[1])) > 2 ** 53:
                    raise Bail(f"`{fn}` of a Python integer that might not convert to float")
        # math converts its arguments to float first (np.float32(100) -> 100.0, whose exp is finite)
        floats = [st.scratch.op("float", [value_node(st, v)]) for v in vis]
        value = st.scratch.op(ufunc, floats, {})
        vi = VI(ValueKind.UNIFORM, node=st.scratch.op("float", [value], {}, node.name), probes=(0.75,),
                text=node.name or fn)
        if spec.raises_when:
            raise_check(st, value.operands[0], spec.raises_when, fn)
        return vi
    else:
        cast = []
        for v in vis:
            n = value_node(st, v)
            if P.dtype_of(v.probe) != np.float64 and v.varying:
                n = st.scratch.op("astype", [n], {"dtype": np.float64})
            cast.append(VI(v.kind if v.kind != ValueKind.AFFINE else ValueKind.VARYING, node=n, probes=(float(1),),
                           ival=v.ival, text=v.text) if v.varying else v)
        st.features.add("elementwise")
        vi = elementwise(st, node, cast, op=ufunc, attrs={}, eager_fn=lambda *args: 0.75)
    if spec.raises_when:
        raise_check(st, vi.node.operands[0], spec.raises_when, fn)
    return vi


def raise_check(st: LoopState, arg: Node, raises_when: tuple, fn: str) -> None:
    """`math.log(x[i])` raises where `np.log(x)` returns NaN: test the arguments first (MathFn)."""
    negated = False
    while arg.op == "neg" and arg.graph is st.scratch.g:   # exp(-y): test y < -709, not -y > 709
        arg, negated = arg.operands[0], not negated
    if raises_when[0] == "isinf":
        test = st.scratch.op("isinf", [arg])
    else:
        op, bound, of_abs = raises_when
        if negated and not of_abs:
            op, bound = {"gt": "lt", "lt": "gt", "ge": "le", "le": "ge"}[op], -bound
        value = st.scratch.op("abs", [arg]) if of_abs else arg
        test = st.scratch.op(op, [value, st.scratch.const(bound)])
    add_check(st, test, fn)


def visit_reduction(st: LoopState, node: Node, vis: list) -> VI:
    if len(vis) != 1 or "kw" in node.attrs:
        raise Bail(f"`{op_text(node)}` with run-time arguments is not vectorized")
    (v,) = vis
    rank = P.rank_of(v.probe)
    attrs = dict(node.attrs)
    axis = attrs.get("axis")
    if axis is None:
        new_axis = tuple(range(1, rank + 1))
    else:
        axes = axis if isinstance(axis, tuple) else (axis,)
        new_axis = tuple(a + 1 if a >= 0 else a for a in axes)
    attrs["axis"] = new_axis if len(new_axis) != 1 else new_axis[0]
    eager = eager_probes(node, vis)
    got = checked(OPS[node.op], [P.vector_probe(v.probe)], static_attrs(attrs))
    if P.dtype_of(got) != P.dtype_of(eager[0]):
        raise Bail(f"`{op_text(node)}` would change dtype")
    new = st.scratch.op(node.op, [value_node(st, v)], attrs, node.name)
    return VI(ValueKind.VARYING, node=new, probes=eager, text=node.name or node.op)


def visit_linalg(st: LoopState, node: Node, vis: list) -> VI:
    if node.op == "einsum":
        spec_vi, arrays = vis[0], vis[1:]
        spec = spec_vi.const if spec_vi.has_const else None
        if not isinstance(spec, str) or "->" not in spec or "." in spec or "kw" in node.attrs:
            raise Bail("einsum without an explicit '->' output")
        ins, out = spec.replace(" ", "").split("->")
        inputs = ins.split(",")
        if node.attrs and set(node.attrs) - {"optimize"}:
            raise Bail("einsum with options")
    elif is_stacked_product(node, vis):
        return stacked_matmul(st, node, vis)
    else:
        arrays = vis
        if len(arrays) != 2:
            raise Bail(f"`{node.op}` with {len(arrays)} operands")
        ra, rb = (P.rank_of(v.probe) for v in arrays)
        table = {(1, 1): ("a", "a", ""), (2, 1): ("ba", "a", "b"), (1, 2): ("a", "ab", "b"),
                 (2, 2): ("ab", "bc", "ac")}
        if (ra, rb) not in table:
            raise Bail(f"`{node.op}` of rank {ra} and {rb} operands is not vectorized")
        sa, sb, out = table[(ra, rb)]
        inputs = [sa, sb]
    used = set("".join(inputs) + out)
    new_letter = next(ch for ch in "ijklmnopqrstuvwxyzabcdefgh" if ch not in used)
    nodes, vprobes = [], []
    for k, v in enumerate(arrays):
        nodes.append(value_node(st, v))
        if v.varying:
            inputs[k] = new_letter + inputs[k]
            vprobes.append(P.vector_probe(v.probe))
        else:
            vprobes.append(v.probe)
    out = new_letter + out
    eager = eager_probes(node, vis)
    got = checked(np.einsum, [",".join(inputs) + "->" + out, *vprobes], {})
    if P.dtype_of(got) != P.dtype_of(eager[0]):
        raise Bail(f"`{node.op}` would change dtype")
    st.features.add("contraction")
    new = st.scratch.einsum(inputs, out, nodes, node.name)
    return VI(ValueKind.VARYING, node=new, probes=eager, text=node.name or node.op)


def visit_layout(st: LoopState, node: Node, vis: list) -> VI:
    v = vis[0]
    rank = P.rank_of(v.probe)
    eager = eager_probes(node, vis)
    if node.op == "copy":
        new = st.scratch.op("copy", [value_node(st, v)], {}, node.name)
    elif node.op == "astype":
        new = st.scratch.op("astype", [value_node(st, v)], dict(node.attrs), node.name)
    elif node.op == "T" or (node.op == "transpose" and node.attrs.get("axes") is None and len(vis) == 1):
        new = st.scratch.transpose(value_node(st, v), (0,) + tuple(range(rank, 0, -1)))
    elif node.op == "transpose" and len(vis) == 1:
        new = st.scratch.transpose(value_node(st, v), (0,) + tuple(a + 1 for a in node.attrs["axes"]))
    else:
        raise Bail(f"`{op_text(node)}` is not vectorized")
    out = VI(ValueKind.VARYING, node=new, probes=eager, text=node.name or node.op)
    if node.op in ("T", "transpose") and v.is_view:
        out.ident, out.is_view, out.read_at = v.ident, True, v.read_at
    return out
