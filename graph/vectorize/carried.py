"""Loop-carried values: reductions, running sums (scans) and accumulation into array elements."""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

import numpy as np

from ..analysis.affine import Affine
from ..analysis.dependence import K, Access
from ..ir import Node
from ..literals import Index, OperandRef
from ..ops import OPS
from ..types import ArrayType
from . import probes as P
from .elementwise import elementwise
from .indexing import access_label, base_array_type, parse_index, plan_index, resolve_base
from .materialize import checked, eager_probes, lookup, materialize, probes_of_outer, value_node
from .reads import getitem_probes
from .state import LoopState
from .values import (IDENTITY, NO_LITERAL, SELF, VI, Bail, ValueKind, extreme_identity,
                     index_literal, is_identity, line_of, op_text, shift_refs)


# `x[I] = op(x[I], t)` with these ops (either operand order) accumulates into the element x[I].
ACCUMULATING_OPS = {"add", "mul", "inplace", "sub", "py_max", "py_min", "maximum", "minimum", "fmax", "fmin"}


def carried_op(st: LoopState, node: Node, vis: list) -> VI:
    op = node.op
    inplace = op == "inplace"
    if inplace:
        op = node.attrs["op"]
    idx = [k for k, v in enumerate(vis) if v.carried]
    if len(vis) != 2 or len(idx) != 1:
        raise Bail(f"the loop-carried value `{vis[idx[0]].text}` is used by `{op_text(node)}`")
    ci = idx[0]
    c, t = vis[ci], vis[1 - ci]
    if op in ("gt", "lt", "ge", "le") and c.kind == ValueKind.CARRIED:
        rel = op if ci == 1 else {"gt": "lt", "lt": "gt", "ge": "le", "le": "ge"}[op]
        return VI(ValueKind.COMPARISON, j=c.j, upd=rel, term=t, probes=eager_probes(node, vis), text=c.text)
    kinds = {
        "add": "add", "mul": "mul", "maximum": "maximum", "minimum": "minimum", "fmax": "fmax",
        "fmin": "fmin", "bitor": "or", "bitand": "and", "logical_or": "or", "logical_and": "and",
    }
    if op == "sub" and ci == 0:
        kind = "sub"
    elif op in ("py_max", "py_min"):
        kind = ("pymax" if op == "py_max" else "pymin") + ("" if ci == 0 else "_r")
    elif op in kinds:
        kind = kinds[op]
    else:
        raise Bail(f"the loop-carried value `{c.text}` is used by `{op_text(node)}`, which is not a "
                   "reduction")
    if c.kind == ValueKind.UPDATE:
        if c.upd != kind or kind not in ("add", "mul") or c.mask is not None:
            raise Bail(f"carried dependence: `{c.text}` is updated by `{c.upd}` and then by `{kind}`, "
                       "which together are not a reduction")
        combined = elementwise(st, node, [c.term, t], op=kind, attrs={})
        return replace(c, term=combined)
    if c.kind != ValueKind.CARRIED:
        raise Bail(f"the loop-carried value `{c.text}` is used by `{op_text(node)}`")
    if t.carried:
        raise Bail("two loop-carried values depend on each other")
    return VI(ValueKind.UPDATE, j=c.j, upd=kind, term=t, inplace=inplace, probes=(), text=c.text)


def find_scans(st: LoopState) -> None:
    """Carried sums whose running value is used in the body: prefix sums (np.cumsum)."""
    for j in range(st.n_carried):
        c, y = st.body.args[1 + j], st.body.outputs[j]
        if y.graph is not st.body or not (y.op == "add" or (y.op == "inplace" and y.attrs["op"] == "add")):
            continue
        if c not in y.operands or y.operands.count(c) != 1:
            continue
        t = y.operands[1] if y.operands[0] is c else y.operands[0]
        if y.op == "inplace" and y.operands[0] is not c:
            continue
        uses_c = [u for u in st.body.users(c) if u is not y]
        uses_y = st.body.users(y)
        if not uses_c and not uses_y:
            continue  # a plain reduction
        st.scans[j] = (y, t)
        st.scan_updates[y.id] = j


def scan_value(st: LoopState, vi: VI) -> VI:
    """Inside a scan, the carried value before the update is the exclusive prefix."""
    if vi.kind != ValueKind.CARRIED or vi.j not in st.scans:
        return vi
    return prefix(st, vi.j, exclusive=True)


def scan_update(st: LoopState, node: Node) -> VI:
    if st.compress is not None:
        raise Bail("a running sum inside a masked branch")
    return prefix(st, st.scan_updates[node.id], exclusive=False)


def prefix(st: LoopState, j: int, exclusive: bool) -> VI:
    key = (j, exclusive)
    if key in st.scan_cache:
        return st.scan_cache[key]
    y, t_node = st.scans[j]
    if (j, False) not in st.scan_cache:
        if (j, "pending") in st.scan_cache:  # the term reads the running value itself: a recurrence
            raise Bail(f"the running sum `{st.body.args[1 + j].name}` depends on itself")
        st.scan_cache[(j, "pending")] = None
        ensure(st, t_node)
        t = lookup(st, t_node)
        init = st.loop.operands[3 + j]
        probes = probes_of_outer(init)
        if not probes or t.carried or not t.varying or P.rank_of(t.probe) != 0 or len(t.probes) != 1:
            raise Bail(f"the running sum `{st.body.args[1 + j].name}` is not a prefix sum of scalars")
        p1 = checked(lambda a, b: a + b, [probes[0], t.probe], {})
        if not P.same_type(checked(lambda a, b: a + b, [p1, t.probe], {}), p1) or P.is_py_scalar(p1):
            raise Bail(f"the running sum `{st.body.args[1 + j].name}` changes type")
        acc = P.dtype_of(p1)
        attrs = {} if P.dtype_of(checked(np.cumsum, [P.vector_probe(t.probe)], {})) == acc \
            else {"dtype": acc.type}
        length = st.trip_aff.const if st.trip_aff.is_const else None
        total = st.scratch.op("cumsum", [value_node(st, t)], attrs, st.body.args[1 + j].name,
                              type=ArrayType(acc.name, (length,)))
        if not (init.op == "const" and is_identity(init.value, 0)):
            total = st.scratch.op("add", [st.scratch.ext(init), total], {}, st.body.args[1 + j].name)
        st.features.add("scan")
        st.scan_cache[(j, False)] = VI(ValueKind.VARYING, node=total, probes=(p1,), text=st.body.args[1 + j].name)
    incl = st.scan_cache[(j, False)]
    if not exclusive:
        return incl
    init = st.loop.operands[3 + j]
    head = st.scratch.op("list", [st.scratch.ext(init) if init.op != "const" else st.scratch.const(init.value)])
    body = st.scratch.getitem(incl.node, [slice(None, -1)], cse=False)
    pair = st.scratch.op("tuple", [head, body])
    node = st.scratch.op("concatenate", [pair], {"dtype": P.dtype_of(incl.probe).type})
    probes = tuple(P.unique_probes(probes_of_outer(init) + incl.probes))
    vi = VI(ValueKind.VARYING, node=node, probes=probes, text=incl.text)
    st.scan_cache[key] = vi
    return vi


def ensure(st: LoopState, node: Node) -> None:
    """Translate a pure body value ahead of its place (a scan term needed by an earlier use)."""
    if node.id in st.env or node.graph is not st.body or node.op == "const":
        return
    if not node.is_pure or node.regions:
        raise Bail("the term of a running sum is computed by an effect")
    for o in node.operands:
        ensure(st, o)
    before = len(st.accesses)
    vi = st.visit(node)
    st.early.extend(st.accesses[before:])
    if vi is not None:
        st.env[node.id] = vi


def check_early_reads(st: LoopState) -> None:
    written = {id(a.array) for a in st.accesses if a.write}
    for a in st.early:
        if id(a.array) in written:
            raise Bail(f"the term of a running sum reads `{a.label}`, which the loop writes")


def find_accumulators(st: LoopState) -> None:
    """`x[I] op= t` with I fixed in the loop: a reduction into one element (or row) of x."""
    for s in st.body.nodes:
        if s.op != "setitem":
            continue
        v = s.operands[1]
        if v.op not in ACCUMULATING_OPS or v.graph is not st.body or len(v.operands) != 2:
            continue
        for r in v.operands if v.op not in ("sub", "inplace") else v.operands[:1]:
            if r.op == "getitem" and r.graph is st.body and r.operands[0] is s.operands[0]:
                break
        else:
            continue
        if r.attrs["index"] != s.attrs["index"] and \
                repr(shift_refs(list(r.attrs["index"]), 1)) != repr(list(s.attrs["index"])):
            continue
        if list(r.operands[1:]) != list(s.operands[2:]):
            continue
        if len(st.body.users(r)) != 1:
            continue
        st.accumulator_writes[s.id] = r
        st.accumulator_reads[r.id] = s


def finish_accumulator(st: LoopState, node: Node, vis: list) -> None:
    upd = vis[1]
    if upd.kind != ValueKind.UPDATE or upd.j != ("acc", node.id):
        raise Bail("an element is updated in a way that is not a reduction")
    info = st.acc_info[node.id]
    result = build_reduction(st, upd, info["init"], (info["probe"],) if info["probe"] is not None else (),
                             None, node)
    base, plan = info["base"], info["plan"]
    btype = base_array_type(st, base)
    if P.dtype_of(result[1]) != np.dtype(btype.dtype):
        raise Bail(f"`{info['label']} += ...` would round to {btype.dtype} in every iteration")
    st.scratch.forget_reads()
    pos = st.scratch.tick()
    st.accesses.append(Access(base.ident, True, pos, plan["dims"], info["label"], line_of(node),
                              extra={"once": True}))
    st.scratch.op("setitem", [base.node, result[0], *plan["operands"]],
                  {"index": index_literal(shift_refs(plan["items"], 2))})
    st.scratch.pos[st.scratch.g.nodes[-1].id] = pos
    st.features.add("reduction")
    return None


def accumulator_read(st: LoopState, node: Node, vis: list) -> VI:
    s = st.accumulator_reads[node.id]
    base, parts = resolve_base(vis[0], parse_index(st, node, vis, 1))
    label = access_label(st, node, base)
    if base.kind != ValueKind.UNIFORM or base.ident is None:
        raise Bail(f"`{label} += ...` accumulates into a value that is not a loop-invariant array")
    plan = plan_index(st, base, parts, label, write=False)
    if plan["kind"] != "uniform":
        return None
    init = st.scratch.getitem(base.node, shift_refs(plan["items"], 1), plan["operands"], node.name, cse=False)
    pos = st.scratch.pos[init.id]
    st.accesses.append(Access(base.ident, False, pos, plan["dims"], label, line_of(node), extra={"once": True}))
    probes = getitem_probes(st, node, base, parts)
    st.acc_info[s.id] = {"init": init, "probe": probes[0] if probes else None, "base": base, "plan": plan,
                         "label": label}
    return VI(ValueKind.CARRIED, j=("acc", s.id), probes=probes, text=label)


def finish_carried(st: LoopState, j: int, vi: VI) -> Node:
    init = st.loop.operands[3 + j]
    if j in st.scans:
        if st.trip is None:
            raise Bail("the last value of a running sum over a run-time range")
        return st.scratch.getitem(prefix(st, j, False).node, [-1], cse=False)
    if vi.kind == ValueKind.CARRIED and vi.j == j:
        return init
    if vi.kind == ValueKind.UPDATE and vi.j == j and vi.upd == "argbest":
        st.features.add("reduction")
        return arg_best(st, vi, init)
    if vi.kind == ValueKind.UPDATE and vi.j == j:
        probes = probes_of_outer(init) or chained_init_probes(st, init, st.loop, j)
        node, _ = build_reduction(st, vi, st.scratch.ext(init), probes, init, None)
        st.features.add("reduction")
        return node
    if vi.carried:
        raise Bail(f"the loop-carried value `{st.body.args[1 + j].name}` is replaced by another carried "
                   "value")
    if st.trip is None or st.trip < 1:
        raise Bail("the last value of a run-time range")
    if vi.kind == ValueKind.AFFINE:
        return materialize(st, vi.aff.subst(K, Affine.constant(st.trip - 1)))
    if vi.kind == ValueKind.UNIFORM:
        return vi.node
    kinds = P.unique_probes(vi.probes)
    if len({P.is_py_scalar(p) for p in kinds}) > 1 or len({P.dtype_of(p) for p in kinds}) > 1:
        raise Bail(f"the type of the last `{st.body.args[1 + j].name}` depends on the branch its "
                   "iteration took")
    last = st.scratch.getitem(vi.node, [-1], cse=False)
    probe = vi.probe
    if P.is_py_scalar(probe):
        last = st.scratch.op({bool: "bool", int: "int", float: "float"}.get(type(probe), "float"), [last])
    return last


def arg_best(st: LoopState, vi: VI, init: Node) -> Node:
    """`k` of `if t > m: m = t; k = w`: w where t first reaches its maximum, if above m's start.

    Strict `>` (`<`) keeps the first of equal maxima; NaN terms never win, as in the loop.
    """
    cmp = vi.mask                       # the CMP value: term t against the running best m
    t, w = cmp.term, vi.term
    if not t.varying or P.rank_of(t.probe) or P.rank_of(w.probe) or len(w.probes) != 1:
        raise Bail("an argmax over arrays")
    m0 = st.loop.operands[3 + cmp.j]
    k_probes = probes_of_outer(init)
    if not k_probes or not all(P.same_type(p, w.probe) or (P.is_py_scalar(p) and type(p) is type(w.probe))
                               for p in k_probes):
        raise Bail(f"`{vi.text}` would change type where the maximum is found")
    dt = P.dtype_of(t.probe)
    is_max = cmp.upd == "gt"
    red = ("nanmax" if is_max else "nanmin") if dt.kind in "fc" else ("max" if is_max else "min")
    terms = value_node(st, t)
    best = reduced(st, red, terms)
    where_best = st.scratch.op("argmax", [st.scratch.op("eq", [terms, best])])
    if w.kind == ValueKind.AFFINE:       # the index itself (or an affine function of it): no gather needed
        c, rest = w.aff.coef(K), w.aff.without(K)
        pick = where_best if c == 1 else st.scratch.op("mul", [where_best, st.scratch.const(c)])
        if not rest.is_const or rest.const:
            pick = st.scratch.op("add", [pick, materialize(st, rest)])
    elif w.varying:
        pick = st.scratch.getitem(value_node(st, w), [OperandRef(1)], [where_best], cse=False)
    else:
        pick = value_node(st, w)
    better = st.scratch.op("gt" if is_max else "lt", [best, st.scratch.ext(m0)])
    chosen = st.scratch.op("where", [better, pick, st.scratch.ext(init)])
    probe = w.probe
    if P.is_py_scalar(probe):
        return st.scratch.op({bool: "bool", int: "int", float: "float"}[type(probe)], [chosen])
    return st.scratch.op("getitem", [chosen], {"index": Index(())})   # the NumPy scalar in a 0-d array


def reduced(st: LoopState, op: str, terms: Node, attrs: Optional[dict] = None) -> Node:
    """`np.<op>(terms)`, built once (a running maximum and its argmax share it)."""
    key = (op, terms.id, repr(attrs or {}))
    node = st.reductions.get(key)
    if node is None:
        node = st.reductions[key] = st.scratch.op(op, [terms], attrs or {})
    return node


def chained_init_probes(st: LoopState, init: Node, loop: Node, j: int) -> tuple:
    """Types of an init that is an enclosing loop's carried value fed by this loop's own result.

    `for i: for j: t += a[i, j]`: the inner loop starts from `t`, which is the outer init or
    the inner loop's previous result; the stand-in SELF stands for the latter.
    """
    g = init.graph
    parent = g.parent if g is not None else None
    if init.op != "arg" or parent is None or parent.op != "for_range" or loop.graph is not g:
        return ()
    k = g.args.index(init)
    if not 1 <= k <= parent.attrs.get("carried", 0):
        return ()
    out = g.outputs[k - 1]
    if out.op != "tuple_get" or out.operands[0] is not loop or out.attrs["index"] != j:
        return ()
    outer_init = parent.operands[3 + k - 1]
    base = probes_of_outer(outer_init) or chained_init_probes(st, outer_init, parent, k - 1)
    return base + (SELF,) if base else ()


def build_reduction(st: LoopState, upd: VI, init: Node, init_probes: tuple, init_outer: Optional[Node],
                    node: Optional[Node]) -> tuple:
    """The combined value of a reduction: e.g. `s0 + np.sum(terms)`; returns (node, probe)."""
    kind = upd.upd
    literal = init_outer.value if init_outer is not None and init_outer.op == "const" else NO_LITERAL
    if kind in ("set_true", "set_false"):
        if not init_probes:
            raise Bail(f"the type of `{upd.text}` before the loop is not known")
        m = value_node(st, upd.mask)
        if upd.mask_neg:
            m = st.scratch.op("logical_not", [m])
        anyv = st.scratch.op("any", [m])
        if kind == "set_true":
            node_ = anyv if literal is False else st.scratch.op("bitor", [init, anyv])
        else:
            none = st.scratch.op("logical_not", [anyv])
            node_ = none if literal is True else st.scratch.op("bitand", [init, none])
        if all(type(p) is bool for p in init_probes if p is not SELF):
            node_ = st.scratch.op("bool", [node_])   # the loop stores the Python constant True/False
            return node_, True
        return node_, np.bool_(True)
    t = upd.term
    if t is None or (not t.varying and (upd.mask is None or not upd.mask.varying)):
        raise Bail(f"the value accumulated into `{upd.text}` does not depend on the loop index")
    if not init_probes:
        raise Bail(f"the type of `{upd.text}` before the loop is not known")
    self_results = any(p is SELF for p in init_probes)
    inits = [p for p in init_probes if p is not SELF]
    init_probe = inits[0]
    if any(isinstance(p, np.ndarray) != isinstance(init_probe, np.ndarray) for p in inits):
        raise Bail(f"`{upd.text}` is an array in some iterations and a scalar in others")
    tprobe = t.probe
    if len(t.probes) > 1:
        raise Bail(f"the type of the value accumulated into `{upd.text}` varies")
    rank = P.rank_of(tprobe)
    terms = value_node(st, t)
    if kind in ("add", "sub", "mul"):
        fn = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b}[kind]
        if upd.inplace and isinstance(init_probe, np.ndarray):
            fn = lambda a, b, inplace=OPS[kind].inplace_fn: inplace(a.copy(), b)  # noqa: E731
        p1 = checked(fn, [init_probe, tprobe], {})
        if self_results:
            inits.append(p1)
        for p in inits + [p1]:
            if not P.same_type(checked(fn, [p, tprobe], {}), p1):
                raise Bail(f"the type of `{upd.text}` changes from one iteration to the next")
        acc = P.dtype_of(p1)
        if type(p1) is complex:   # `0j + x[i]`: NumPy's complex sum would not be a Python complex
            raise Bail(f"`{upd.text}` is a Python complex")
        if acc.kind not in "biufc":
            raise Bail(f"`{upd.text}` accumulates {acc}")
        if P.is_py_scalar(p1) and isinstance(p1, int) and not isinstance(p1, bool):
            ival = t.ival
            bound = st.trip if st.trip is not None else None
            if ival is None or bound is None or max(abs(ival[0]), abs(ival[1])) * max(bound, 1) >= 2 ** 62:
                raise Bail(f"`{upd.text}` sums Python integers that might not fit in int64")
        selected = upd.among   # an update in a masked branch: its terms are those of these iterations
        if upd.mask is not None:
            m = value_node(st, upd.mask)
            if upd.mask_neg:
                m = st.scratch.op("logical_not", [m])
            selected = m
            m = st.scratch.expand(m, 1, rank)
            if not t.varying and kind == "add" and t.has_const and t.const == 1 and rank == 0 \
                    and type(p1) is int:
                count = st.scratch.op("count_nonzero", [m])     # a count of the iterations that add 1
                result = count if is_identity(literal, 0) else st.scratch.op("add", [init, count])
                return st.scratch.op("int", [result]), p1
            else:
                terms = st.scratch.op("where", [m, terms, st.scratch.const(IDENTITY[kind])])
        red_op = "prod" if kind == "mul" else "sum"
        attrs = {} if rank == 0 else {"axis": 0}
        natural = P.dtype_of(checked(OPS[red_op], [P.vector_probe(tprobe)], attrs))
        if natural != acc:
            attrs["dtype"] = acc.type
        total = None
        if red_op == "sum" and "dtype" not in attrs:
            total = sum_of_products(st, terms, acc, rank) or st.scratch.contract_leading(terms)
        quiet = {"quiet": True} if type(p1) in (float, complex) else {}   # Python floats never warn
        if total is None:
            total = st.scratch.op(red_op, [terms], {**attrs, **quiet})
        tot_probe = acc.type(1) if rank == 0 else np.ones((2,) * rank, dtype=acc)
        identity = IDENTITY[kind]
        if is_identity(literal, identity) and kind != "sub" and \
                P.same_type(checked(fn, [literal, tot_probe], {}), tot_probe):
            result = total
        elif upd.inplace and isinstance(init_probe, np.ndarray):
            result = st.scratch.op("inplace", [init, total], {"op": kind})
        else:
            result = st.scratch.op(kind, [init, total], dict(quiet))
        finals = [checked(fn, [p, tot_probe], {}) for p in inits]
        if P.is_py_scalar(p1):
            result = st.scratch.op({bool: "bool", int: "int", float: "float", complex: "complex"}[type(p1)],
                                   [result]) if type(p1) is not complex else result
            finals = [p1]
        for final in finals:
            if not P.same_type(final, p1):
                raise Bail(f"the vectorized `{upd.text}` would have type {type(final).__name__}")
        if (selected is not None or st.trip is None) and any(not P.same_type(p, p1) for p in inits):
            # `s = 0.0; if c: s += x[i]`: s stays a Python float until an element is added
            if rank:
                raise Bail(f"the type of `{upd.text}` depends on whether any element is added")
            if selected is not None:
                added = st.scratch.op("any", [selected])
            else:
                added = st.scratch.op("gt", [materialize(st, st.trip_aff), st.scratch.const(0)])
            result = st.scratch.choose(added, result, init)
        return result, p1
    if rank != 0 and kind in ("pymax", "pymin", "pymax_r", "pymin_r"):
        raise Bail("max()/min() of arrays")
    dt = P.dtype_of(tprobe)
    is_float = dt.kind in "fc"
    if kind.endswith("_r") and is_float:
        raise Bail("`max(t, m)` on floats keeps a NaN only until the next element; write `max(m, t)`")
    base_kind = kind[:-2] if kind.endswith("_r") else kind
    is_max = base_kind in ("pymax", "maximum", "fmax")
    if upd.mask is not None:
        m = value_node(st, upd.mask)
        if upd.mask_neg:
            m = st.scratch.op("logical_not", [m])
        fill = extreme_identity(dt, is_max)
        if fill is None:
            raise Bail(f"a conditional max/min of {dt}")
        terms = st.scratch.op("where", [st.scratch.expand(m, 1, rank), terms, st.scratch.const(fill)])
    if kind in ("or", "and"):
        if dt.kind != "b" or not isinstance(init_probe, (bool, np.bool_)):
            raise Bail(f"`{upd.text} or/and ...` on non-boolean values")
        total = st.scratch.op("any" if kind == "or" else "all", [terms])
        if literal is (kind == "and"):
            return total, np.bool_(True)
        return st.scratch.op("bitor" if kind == "or" else "bitand", [init, total]), np.bool_(True)
    attrs = {} if rank == 0 else {"axis": 0}
    if base_kind in ("pymax", "pymin", "fmax", "fmin"):
        red = ("nanmax" if is_float else "max") if is_max else ("nanmin" if is_float else "min")
    else:
        red = "max" if is_max else "min"
    maybe_none = st.trip is None or upd.among is not None   # a run-time range, or a masked branch's terms
    if maybe_none:    # there may be no term: no ValueError, and the loop's init
        fill = extreme_identity(dt, is_max)
        if fill is None:
            raise Bail(f"a max/min of {dt} over a range that may be empty")
        attrs["initial"] = fill
    total = reduced(st, red, terms, attrs)
    if base_kind in ("pymax", "pymin") and P.is_py_scalar(tprobe) and type(tprobe) in (int, float):
        total = st.scratch.op(type(tprobe).__name__, [total])   # max(m, math.sqrt(x[i])) is a Python float
    if base_kind in ("pymax", "pymin"):
        py = "py_max" if is_max else "py_min"
        pair = [total, init] if kind.endswith("_r") else [init, total]
        result, probe = st.scratch.op(py, pair), tprobe
    else:
        ufunc = {"maximum": "maximum", "minimum": "minimum", "fmax": "fmax", "fmin": "fmin"}[base_kind]
        result = st.scratch.op(ufunc, [init, total])
        probe = checked(OPS[ufunc], [init_probe, tprobe], {})
    if maybe_none:    # no term: the value before the loop, as it was
        ran = st.scratch.op("any", [upd.among]) if upd.among is not None else \
            st.scratch.op("gt", [materialize(st, st.trip_aff), st.scratch.const(0)])
        result = st.scratch.choose(ran, result, init)
    return result, probe


def sum_of_products(st: LoopState, terms: Node, acc: np.dtype, rank: int) -> Optional[Node]:
    """sum(a * b) over the loop axis as a dot product / einsum when it is a plain product."""
    if terms.op != "mul" or st.scratch.g.users(terms):
        return None
    a, b = terms.operands
    ta, tb = a.type, b.type
    if not (isinstance(ta, ArrayType) and isinstance(tb, ArrayType)) or ta.shape is None or tb.shape is None:
        return None
    if ta.dtype != acc.name or tb.dtype != acc.name or acc.kind not in "fc":
        return None
    if len(ta.shape) != rank + 1 or len(tb.shape) != rank + 1 or \
            any(x is not None and y is not None and x != y for x, y in zip(ta.shape, tb.shape)):
        return None
    sub = "i" + "abcdefgh"[:rank]
    st.features.add("contraction")
    node = st.scratch.einsum([sub, sub], sub[1:], [a, b])
    st.scratch.g.erase(terms)
    return node
