"""Array writes in a loop body (`x[i] = v`, `x[i] += v`): one store of all iterations' values,
masked inside a branch."""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

import numpy as np

from ..analysis.dependence import Access
from ..ir import Node
from ..literals import OperandRef
from . import probes as P
from .elementwise import elementwise
from .indexing import access_label, base_array_type, parse_index, plan_index, resolve_base
from .integers import interval
from .materialize import value_node
from .state import LoopState
from .values import VI, Bail, PendingWrite, ValueKind, index_literal, line_of, op_text, shift_refs


def visit_setitem(st: LoopState, node: Node, vis: list) -> Optional[VI]:
    base, parts = resolve_base(vis[0], parse_index(st, node, vis, 2))
    label = access_label(st, node, base)
    if base.kind == ValueKind.VARYING:
        raise Bail(f"`{label} = ...` writes into a per-iteration array")
    if base.ident is None:
        raise Bail(f"`{label} = ...` writes into a value that is not an array")
    plan = plan_index(st, base, parts, label, write=True)
    if plan["kind"] == "uniform":
        raise Bail(f"`{label} = ...` writes the same element in every iteration")
    if vis[1].written == (id(base.ident), repr(plan["items"]), tuple(o.id for o in plan["operands"])):
        return None  # `x[i] += v` on a view: updated in place already, the store writes it onto itself
    if st.compress is not None:
        return masked_store(st, node, vis[1], base, plan, label)
    value = arrange_value(st, vis[1], base, plan, label)
    items = shift_refs(plan["items"], 2)
    if st.region_depth:
        key = (id(base.ident), repr(plan["items"]), tuple(o.id for o in plan["operands"]))
        entry = next((w for w in st.pending if w.key == key), None)
        if entry is not None:
            entry.tree = ("val", value)   # a later write in the same branch wins
        else:
            st.pending.append(PendingWrite(key, base.node, plan["items"], plan["operands"], plan["dims"],
                                           base.ident, label, line_of(node), plan["loop_axis"] or 0,
                                           plan["prank"], ("val", value), plan["reverse"]))
        return None
    st.scratch.forget_reads()
    pos = st.scratch.tick()
    st.accesses.append(Access(base.ident, True, pos, plan["dims"], label, line_of(node)))
    st.scratch.op("setitem", [base.node, value, *plan["operands"]], {"index": index_literal(items)})
    st.scratch.pos[st.scratch.g.nodes[-1].id] = pos
    return None


def masked_store(st: LoopState, node: Node, v: VI, base: VI, plan: dict, label: str) -> None:
    """`x[s][m] = v` (or `x[idx[m]] = v`) in a masked branch: only the elements it runs for."""
    if plan["prank"] != 0:
        raise Bail(f"`{label} = ...` stores rows in a masked branch")
    value = arrange_value(st, v, base, plan, label)
    st.scratch.forget_reads()
    if plan["kind"] == "gather":
        pos = st.scratch.tick()
        st.scratch.op("setitem", [base.node, value, *plan["operands"]],
                      {"index": index_literal(shift_refs(plan["items"], 2))})
    else:
        view = st.scratch.getitem(base.node, shift_refs(plan["items"], 1), plan["operands"], cse=False)
        mask = st.compress
        if plan["reverse"]:
            mask = st.scratch.getitem(mask, [slice(None, None, -1)], cse=False)
        pos = st.scratch.tick()
        st.scratch.op("setitem", [view, value, mask], {"index": index_literal([OperandRef(2)])})
    st.scratch.pos[st.scratch.g.nodes[-1].id] = pos
    st.accesses.append(Access(base.ident, True, pos, plan["dims"], label, line_of(node)))
    return None


def arrange_value(st: LoopState, v: VI, base: VI, plan: dict, label: str) -> Node:
    """The value laid out like the written slice: loop axis where the slice has it."""
    btype = base_array_type(st, base)
    target = np.dtype(btype.dtype) if btype.dtype else None
    for probe in v.probes or ():
        src = P.dtype_of(probe)
        if target is None or not np.can_cast(src, target, "same_kind"):
            raise Bail(f"`{label} = ...` would cast {src} to {target}")
        if P.is_py_scalar(probe) and isinstance(probe, int) and target.kind in "iu":
            ival = v.ival if v.ival is not None else (interval(st, v.aff) if v.kind == ValueKind.AFFINE else None)
            if ival is None or not P.exactly_representable(ival, target):
                raise Bail(f"`{label} = ...` stores Python integers that might not fit in {target}")
    if not v.probes:
        raise Bail(f"the type of the value stored in `{label}` is not known")
    node = value_node(st, v)
    prank = plan["prank"]
    vrank = P.rank_of(v.probe)
    if vrank > prank:
        raise Bail(f"`{label} = ...` stores an array of higher rank")
    loop_axis = plan["loop_axis"] or 0
    if v.varying:
        node = st.scratch.expand(node, 1, prank - vrank)
        if plan["reverse"]:
            node = st.scratch.getitem(node, [slice(None, None, -1)], cse=False)
        node = st.scratch.moveaxis_from_front(node, loop_axis, prank + 1)
    elif vrank > 0:
        items = [None] * (prank - vrank) + [slice(None)] * vrank
        items.insert(loop_axis, None)
        node = st.scratch.getitem(node, items, cse=False)
    return node


def visit_inplace(st: LoopState, node: Node, vis: list) -> VI:
    target, value = vis
    op = node.attrs["op"]
    if P.rank_of(target.probe) == 0:
        return elementwise(st, node, vis, op=op, attrs={})
    if target.kind == ValueKind.VARYING and target.is_view and target.raw is not None:
        raw, plan, base = target.raw
        st.scratch.forget_reads()
        aligned = arrange_value(st, value, base, plan, target.text)
        new = st.scratch.op("inplace", [raw, aligned], {"op": op}, node.name)
        st.accesses.append(Access(target.ident, True, st.scratch.pos[new.id], plan["dims"], target.text,
                                  line_of(node)))
        return replace(target, written=(id(target.ident), repr(plan["items"]),
                                        tuple(o.id for o in plan["operands"])))
    if target.kind == ValueKind.VARYING and target.is_view:
        raise Bail(f"`{target.text} {op}= ...` updates a view in place")
    if target.kind == ValueKind.VARYING:
        aligned = align_to(st, value, target, node)
        new = st.scratch.op("inplace", [target.node, aligned], {"op": op}, node.name)
        return replace(target, node=new)
    raise Bail(f"`{target.text} {op}= ...` updates a loop-invariant array in place in every iteration")


def align_to(st: LoopState, value: VI, target: VI, node: Node) -> Node:
    n = value_node(st, value)
    trank, vrank = P.rank_of(target.probe), P.rank_of(value.probe)
    if vrank > trank:
        raise Bail(f"`{op_text(node)}` broadcasts to a larger shape")
    if value.varying:
        return st.scratch.expand(n, 1, trank - vrank)
    return n
