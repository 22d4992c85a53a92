"""Per-element `if`/`elif`/ternaries inside a loop body: `np.where` and masked stores."""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from ..analysis.dependence import Access
from ..ir import Graph, Node
from ..literals import OperandRef
from . import probes as P
from .elementwise import elementwise
from .full_conditions import precompute
from .materialize import compressed, const_vi, lookup, value_node
from .state import LoopState
from .values import VI, Bail, Unsafe, ValueKind, index_literal, shift_refs


def visit_if(st: LoopState, node: Node) -> VI:
    cond = lookup(st, node.operands[0])
    captures = [lookup(st, o) for o in node.operands[1:]]
    then_r, else_r = node.regions
    if cond.kind == ValueKind.CARRIED:
        return or_and_pattern(st, node, cond, captures)
    if cond.kind == ValueKind.COMPARISON:
        return extreme_pattern(st, node, cond, captures)
    if cond.carried:
        raise Bail("a condition depends on a loop-carried value")
    if not cond.varying:
        raise Bail("a loop-invariant `if` that was not unswitched (see graph/passes/unswitch.py)")
    mask = truth(st, cond, node)
    if st.compress is not None:   # inside a masked branch: this `if` is masked too
        full = st.full_values.get(node.operands[0].id)
        if full is not None:      # its test over all iterations (full_conditions.py)
            saved, st.compress = st.compress, None
            try:
                full = value_node(st, truth(st, full, node))
            finally:
                st.compress = saved
        return masked_if(st, node, mask, captures, full)
    st.features.add("where")
    outer_pending = st.pending
    st.pending = []
    n_accesses, n_checks = len(st.accesses), len(st.checks)
    try:
        then_out, then_writes = translate_region(st, then_r, captures)
        else_out, else_writes = translate_region(st, else_r, captures)
    except Unsafe:
        if st.region_depth:
            raise
        del st.accesses[n_accesses:]          # forget the attempt; its nodes are dead
        del st.checks[n_checks:]
        st.pending = outer_pending
        return masked_if(st, node, mask, captures)
    st.pending = outer_pending
    results = [merge(st, node, k, mask, t, e) for k, (t, e) in enumerate(zip(then_out, else_out))]
    merged = merge_writes(mask, then_writes, else_writes)
    if st.region_depth:   # a nested `if`: the enclosing branch decides when these happen
        for w in merged:
            entry = next((p for p in st.pending if p.key == w.key), None)
            if entry is None:
                st.pending.append(w)
            else:
                entry.tree = _replace_old(w.tree, entry.tree)
    else:
        emit_conditional_writes(st, merged)
    return VI(ValueKind.RESULTS, const=results)


def masked_if(st: LoopState, node: Node, mask: VI, captures: list, full: Optional[Node] = None) -> VI:
    """Branches that could fail run only for their elements: `out[s][m] = f(x[s][m])`.

    Nested in a masked branch, `mask` is over that branch's iterations only; `full`, when known, is
    the test over all iterations (full_conditions.py)."""
    then_r, else_r = node.regions
    m = value_node(st, mask)
    outer = st.compress
    full_captures = captures if outer is None else [st.full_values.get(o.id) for o in node.operands[1:]]
    outs, runs_for = [], []
    for region, sel, negate in ((then_r, m, False), (else_r, st.scratch.op("logical_not", [m]), True)):
        bound = [replace(v, node=st.scratch.getitem(value_node(st, v), [OperandRef(1)], [sel], cse=False)
                         if outer is not None else compressed_at(st, value_node(st, v), sel),
                         read_at=None, raw=None, parts=None, is_view=False)
                 if v.kind == ValueKind.VARYING else v for v in captures]
        if outer is None:
            st.compress = sel
        elif not region.nodes:
            st.compress = outer
        elif full is not None:
            st.compress = st.scratch.op("logical_and", [outer, st.scratch.op("logical_not", [full]) if negate
                                                         else full])
        else:
            st.compress = widened(st, outer, sel)
        runs_for.append(st.compress)
        precompute(st, region, full_captures)
        try:
            out, writes = translate_region(st, region, bound)
            # an update's terms are those of the iterations this branch runs for already
            out = [replace(v, among=st.compress) if v.kind == ValueKind.UPDATE and v.among is None else v
                   for v in out]
        finally:
            st.compress = outer
        outs.append(out)
    st.features.add("masked")
    results = []
    for t, e in zip(*outs):
        if t.kind == e.kind == ValueKind.CARRIED and t.j == e.j:
            results.append(t)
        elif t.kind == ValueKind.UPDATE and e.kind == ValueKind.CARRIED and t.j == e.j and t.mask is None:
            results.append(t)
        elif e.kind == ValueKind.UPDATE and t.kind == ValueKind.CARRIED and t.j == e.j and e.mask is None:
            results.append(e)
        elif t.kind == e.kind == ValueKind.UPDATE and t.j == e.j:
            results.append(joined_updates(st, t, e, runs_for, outer))
        elif not t.carried and not e.carried:
            results.append(masked_merge(st, m, t, e))
        else:
            raise Bail("a masked branch that updates a loop-carried value other than by a sum or maximum")
    return VI(ValueKind.RESULTS, const=results)


def joined_updates(st: LoopState, t: VI, e: VI, runs_for: list, outer) -> VI:
    """Both masked branches update one carried value the same way (`if c: s += f(x) else: s += g(x)`):
    one update whose terms are both branches' terms, of the iterations either branch has terms of
    (`runs_for`: the iterations each branch runs for; `outer`: those of the branch around them)."""
    if t.upd != e.upd or t.mask is not None or e.mask is not None or t.upd not in JOINABLE:
        raise Bail("masked branches update a loop-carried value in different ways")
    if not (t.term.varying and e.term.varying) or len(P.unique_probes(t.term.probes + e.term.probes)) != 1 \
            or P.rank_of(t.term.probe):
        raise Bail("masked branches accumulate values of different types, or arrays, into a loop-carried value")
    pair = st.scratch.op("tuple", [value_node(st, t.term), value_node(st, e.term)])
    terms = st.scratch.op("concatenate", [pair], {"dtype": P.dtype_of(t.term.probe).type})
    if [t.among, e.among] == runs_for:   # every iteration of the branch around adds a term
        among = outer
    else:
        among = st.scratch.op("logical_or", [t.among, e.among])
    return replace(t, term=VI(ValueKind.VARYING, node=terms, probes=t.term.probes, text=t.term.text), among=among)


# updates whose result does not depend on the order of their terms (but for float rounding)
JOINABLE = ("add", "mul", "pymax", "pymin", "maximum", "minimum", "fmax", "fmin")


def compressed_at(st: LoopState, node: Node, sel: Node) -> Node:
    """`v[sel]` for a value over all iterations (cached per mask, as `compressed` does)."""
    saved, st.compress = st.compress, sel
    try:
        return compressed(st, node)
    finally:
        st.compress = saved


def widened(st: LoopState, outer: Node, sel: Node) -> Node:
    """The iterations a branch nested in a masked branch runs for, as a mask over all iterations:
    `w = outer.copy(); w[outer] = sel`, where `sel` is over the iterations of `outer` only."""
    full = st.scratch.op("copy", [outer])
    st.scratch.op("setitem", [full, sel, outer], {"index": index_literal([OperandRef(2)])})
    st.scratch.forget_reads()
    return full


def masked_merge(st: LoopState, m: Node, t: VI, e: VI) -> VI:
    """A value both masked branches yield: `r = np.empty(n); r[m] = t; r[~m] = e`, where `t` was
    computed for the elements of `m` only and `e` for the others."""
    if t.kind == e.kind == ValueKind.UNIFORM and t.node is e.node:
        return t
    probes = P.unique_probes(t.probes + e.probes)
    dtypes = {P.dtype_of(p) for p in probes}
    if len(dtypes) != 1 or any(P.rank_of(p) for p in probes):
        raise Bail("masked branches yield values of different dtypes, or arrays")
    if any(P.is_py_scalar(p) and isinstance(p, int) and not isinstance(p, bool) for p in probes):
        raise Bail("masked branches yield Python integers (which might not fit in int64)")
    dtype = dtypes.pop()
    merged = st.scratch.op("empty_like", [m], {"dtype": dtype.type})
    negated = st.scratch.op("logical_not", [m])
    for vi, sel in ((t, m), (e, negated)):
        value = value_node(st, vi)
        if vi.kind == ValueKind.AFFINE:   # an index expression: materialized for every iteration, then selected
            value = st.scratch.getitem(value, [OperandRef(1)], [sel], cse=False)
        st.scratch.op("setitem", [merged, value, sel], {"index": index_literal([OperandRef(2)])})
    st.scratch.forget_reads()
    st.features.add("masked")
    return VI(ValueKind.VARYING, node=merged, probes=tuple(probes), text="masked value")


def merge_writes(mask: VI, then_w: list, else_w: list) -> list:
    by_key = {w.key: w for w in else_w}
    out = []
    for w in then_w:
        other = by_key.pop(w.key, None)
        out.append(replace(w, tree=("sel", mask, w.tree, other.tree if other is not None else ("old",))))
    for w in else_w:
        if w.key in by_key:
            out.append(replace(w, tree=("sel", mask, ("old",), w.tree)))
    return out


def truth(st: LoopState, cond: VI, node: Node) -> VI:
    if P.rank_of(cond.probe):
        raise Bail("an `if` on an array")
    if P.dtype_of(cond.probe).kind == "b":
        return cond
    zero = const_vi(st, 0)
    return elementwise(st, node, [cond, zero], op="ne", attrs={})


def translate_region(st: LoopState, region: Graph, captures: list) -> tuple:
    for arg, vi in zip(region.args, captures):
        st.env[arg.id] = vi
    st.region_depth += 1
    reads_before = len(st.accesses)
    try:
        for n in region.nodes:
            vi = st.visit(n)
            if vi is not None:
                st.env[n.id] = vi
        outs = [lookup(st, o) for o in region.outputs]
    finally:
        st.region_depth -= 1
    writes = st.pending
    st.pending = []
    read_ids = {id(a.array) for a in st.accesses[reads_before:] if not a.write}
    for w in writes:
        if id(w.ident) in read_ids:
            raise Bail(f"a branch reads `{w.label.split('[')[0]}` and writes it")
    return outs, writes


def merge(st: LoopState, node: Node, k: int, mask: VI, t: VI, e: VI) -> VI:
    if t.carried or e.carried:
        return merge_carried(st, node, mask, t, e)
    if t.kind == e.kind == ValueKind.UNIFORM and t.node is e.node:
        return t
    if t.kind == e.kind == ValueKind.AFFINE and t.aff == e.aff:
        return t
    vi = elementwise(st, node, [mask, t, e], op="where", attrs={}, eager_fn=lambda c, x, y: x)
    probes = P.unique_probes(t.probes + e.probes)
    return replace(vi, probes=tuple(probes), text=node.name or "where")


def merge_carried(st: LoopState, node: Node, mask: VI, t: VI, e: VI) -> VI:
    def same_c(a, b):
        return a.kind == ValueKind.CARRIED and b.kind == ValueKind.CARRIED and a.j == b.j
    if same_c(t, e):
        return t
    if t.kind == ValueKind.UPDATE and e.kind == ValueKind.CARRIED and t.j == e.j:
        return masked(t, mask, False, node)
    if e.kind == ValueKind.UPDATE and t.kind == ValueKind.CARRIED and t.j == e.j:
        return masked(e, mask, True, node)
    if e.kind == ValueKind.CARRIED and t.has_const and isinstance(t.const, bool):
        return VI(ValueKind.UPDATE, j=e.j, upd="set_true" if t.const else "set_false", mask=mask, probes=(t.const,),
                  text=e.text)
    if t.kind == ValueKind.CARRIED and e.has_const and isinstance(e.const, bool):
        return VI(ValueKind.UPDATE, j=t.j, upd="set_true" if e.const else "set_false", mask=mask, mask_neg=True,
                  probes=(e.const,), text=t.text)
    raise Bail(f"the loop-carried value `{(t if t.carried else e).text}` is updated in a way that is "
               "not a reduction")


def masked(upd: VI, mask: VI, negate: bool, node: Node) -> VI:
    if upd.mask is not None:
        raise Bail("a conditional update inside a conditional update")
    if upd.upd not in ("add", "sub", "mul", "pymax", "pymin", "maximum", "minimum", "fmax", "fmin"):
        raise Bail(f"a conditional `{upd.upd}` update")
    return replace(upd, mask=mask, mask_neg=negate)


def translate_branches(st: LoopState, node: Node, captures: list, what: str) -> tuple:
    """Both branches' yielded values, for the patterns of a loop-carried test (no array writes)."""
    then_out, then_writes = translate_region(st, node.regions[0], captures)
    else_out, else_writes = translate_region(st, node.regions[1], captures)
    if then_writes or else_writes:
        raise Bail(f"{what} with array writes")
    return then_out, else_out


def or_and_pattern(st: LoopState, node: Node, cond: VI, captures: list) -> VI:
    """`c = c or t` / `c = c and t` lower to `if c: c else: t` / `if c: t else: c`."""
    st.features.add("reduction")
    then_out, else_out = translate_branches(st, node, captures, "a short-circuit test")
    results = []
    for t, e in zip(then_out, else_out):
        if t.kind == ValueKind.CARRIED and t.j == cond.j and not e.carried:
            results.append(VI(ValueKind.UPDATE, j=cond.j, upd="or", term=e, probes=e.probes, text=cond.text))
        elif e.kind == ValueKind.CARRIED and e.j == cond.j and not t.carried:
            results.append(VI(ValueKind.UPDATE, j=cond.j, upd="and", term=t, probes=t.probes, text=cond.text))
        else:
            raise Bail(f"the loop-carried value `{cond.text}` is tested in a way that is not any()/all()")
    return VI(ValueKind.RESULTS, const=results)


def extreme_pattern(st: LoopState, node: Node, cond: VI, captures: list) -> VI:
    """`if t > m: m = t` (or `m = t if t > m else m`): a running maximum (minimum for `<`)."""
    then_out, else_out = translate_branches(st, node, captures, "a running maximum")
    results = []
    for t, e in zip(then_out, else_out):
        if e.kind == ValueKind.CARRIED and e.j == cond.j and not t.carried and equivalent(t, cond.term):
            kind = "pymax" if cond.upd in ("gt", "ge") else "pymin"
            results.append(VI(ValueKind.UPDATE, j=cond.j, upd=kind, term=t, probes=t.probes, text=e.text))
        elif t.kind == ValueKind.CARRIED and e.kind == ValueKind.CARRIED and t.j == e.j:
            results.append(t)
        elif e.kind == ValueKind.CARRIED and e.j != cond.j and not t.carried and cond.upd in ("gt", "lt"):
            # `if x[i] > best: best = x[i]; k = i`: k takes its value where the best one is
            results.append(VI(ValueKind.UPDATE, j=e.j, upd="argbest", term=t, probes=t.probes, text=e.text,
                              mask=cond))
        else:
            raise Bail("a running maximum/minimum that also updates other values in another way")
    if any(r.upd == "argbest" for r in results if r.kind == ValueKind.UPDATE) and \
            not any(r.kind == ValueKind.UPDATE and r.j == cond.j and r.upd in ("pymax", "pymin") for r in results):
        raise Bail("values picked at a running maximum that the loop does not keep")
    return VI(ValueKind.RESULTS, const=results)


def equivalent(a: VI, b: VI) -> bool:
    if a.kind != b.kind:
        return False
    if a.kind == ValueKind.AFFINE:
        return a.aff == b.aff
    if a.kind in (ValueKind.UNIFORM, ValueKind.VARYING):
        return _same_node(a.node, b.node, 6)
    return False


def emit_conditional_writes(st: LoopState, writes: list) -> None:
    """One `x[...] = np.where(c, new, x[...])` (nested for elif chains) per written location."""
    for w in writes:
        old = []

        def build(tree):
            if tree[0] == "val":
                return tree[1]
            if tree[0] == "old":
                if not old:
                    node = st.scratch.getitem(w.base, shift_refs(w.items, 1), w.operands, cse=False)
                    st.accesses.append(Access(w.ident, False, st.scratch.pos[node.id], w.dims, w.label, w.line))
                    old.append(node)
                return old[0]
            _, mask, a, b = tree
            na, nb = build(a), build(b)
            if na is nb:
                return na
            m = st.scratch.expand(value_node(st, mask), 1, w.prank)
            if w.reverse:   # the slice runs backwards relative to the iterations
                m = st.scratch.getitem(m, [slice(None, None, -1)], cse=False)
            m = st.scratch.moveaxis_from_front(m, w.loop_axis, w.prank + 1)
            return st.scratch.op("where", [m, na, nb])
        new_value = build(w.tree)
        st.scratch.forget_reads()
        pos = st.scratch.tick()
        st.accesses.append(Access(w.ident, True, pos, w.dims, w.label, w.line))
        st.scratch.op("setitem", [w.base, new_value, *w.operands], {"index": index_literal(shift_refs(w.items, 2))})
        st.scratch.pos[st.scratch.g.nodes[-1].id] = pos


def _same_node(a: Node, b: Node, depth: int) -> bool:
    if a is b:
        return True
    if depth <= 0 or a.op != b.op or a.op in ("arg", "setitem", "inplace") or repr(a.attrs) != repr(b.attrs):
        return False
    if a.op == "const":
        return type(a.value) is type(b.value) and repr(a.value) == repr(b.value)
    return len(a.operands) == len(b.operands) and all(_same_node(x, y, depth - 1)
                                                      for x, y in zip(a.operands, b.operands))


def _replace_old(tree: tuple, old: tuple) -> tuple:
    if tree[0] == "old":
        return old
    if tree[0] == "sel":
        return ("sel", tree[1], _replace_old(tree[2], old), _replace_old(tree[3], old))
    return tree
