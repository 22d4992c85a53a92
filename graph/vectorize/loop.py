"""Translate one `for_range` loop into whole-array operations, or say why it must stay a loop.

`translate_loop` builds the loop's `LoopState` (state.py) and walks the body once, in program
order; `visit` dispatches each body node to the module that translates it and records the
resulting `VI` (values.py), whose `ValueKind` says whether it is uniform, varying, affine in the
iteration counter, or loop-carried:

- integers.py: the loop bounds, affine forms and integer ranges;
- materialize.py: reading operands and making scratch nodes of values;
- elementwise.py, calls.py: arithmetic, builtins, `math` calls, reductions, linear algebra;
- indexing.py, reads.py, writes.py: array reads and writes (slices, `np.arange` gathers,
  windows), recorded as `Access`es;
- branches.py: per-element `if`s; carried.py: loop-carried values (reductions, scans,
  accumulation into array elements);
- legality.py: `graph/analysis/dependence.py` then decides whether running each statement for
  all iterations at once is the same as running the iterations one by one.

Anything not understood raises `Bail` with a one-line reason that ends up on the loop
(`vectorize="no: ..."`).
"""

from __future__ import annotations

from functools import partial
from typing import Optional

from ..ir import Graph, Node
from ..ops import OPS
from .branches import visit_if
from .build import Scratch
from .calls import visit_call, visit_layout, visit_linalg, visit_reduction
from .carried import (accumulator_read, carried_op, check_early_reads, find_accumulators, find_scans,
                      finish_accumulator, finish_carried, scan_update, scan_value)
from .elementwise import affine_op, elementwise, note_array_reads, uniform, visit_builtin, visit_conversion
from .integers import interval, loop_bounds
from .linalg_calls import is_linalg_call, visit_linalg_call
from .legality import add_check, alias_guards, check_checks, check_dependences
from .materialize import bind_args, const_vi, eager_probes, lookup, value_node
from .reads import visit_getitem
from . import segments
from .state import LoopState
from .updates import is_invariant_update, visit_invariant_update
from .values import GUARD, SWV, VI, Bail, Result, ValueKind, op_text, render_op, static_dim
from .writes import visit_inplace, visit_setitem


def translate_loop(loop: Node) -> Result:
    """Vectorize `loop`: the `Result` to splice in, or `Bail` with the reason it stays a loop."""
    st = LoopState(loop=loop, graph=loop.graph, body=loop.regions[0], n_carried=loop.attrs.get("carried", 0),
                   scratch=Scratch(loop.span))
    st.visit = partial(segments.visit, st, partial(visit, st))
    return run(st)


def run(st: LoopState) -> Result:
    loop_bounds(st)
    if st.trip == 0:
        inits = list(st.loop.operands[3:3 + st.n_carried])
        return Result(st.scratch, inits, [], "removed: the range is empty", empty=True)
    bind_args(st)
    find_inner_loops(st, st.body)
    find_accumulators(st)
    find_scans(st)
    find_guards(st)
    for node in st.body.nodes:
        if node.id in st.env or node.id in st.guard_nodes:
            continue  # translated early, as the term of a scan; or a guard's condition
        vi = st.visit(node)
        if vi is not None:
            st.env[node.id] = vi
    segments.check_outputs(st)
    outputs = [finish_carried(st, j, lookup(st, out)) for j, out in enumerate(st.body.outputs)]
    check_early_reads(st)
    check_dependences(st)
    guards = alias_guards(st)
    check_checks(st)
    return Result(st.scratch, outputs, guards, summary(st), checks=st.checks)


def summary(st: LoopState) -> str:
    order = ["elementwise", "stencil", "window", "segmented", "triangle", "reduction", "contraction", "where", "masked", "scan",
             "gather"]
    feats = [f for f in order if f in st.features] or ["elementwise"]
    return ", ".join(feats)


def visit(st: LoopState, node: Node) -> Optional[VI]:
    op = node.op
    if op == "note":
        return None
    if op == "const":
        return const_vi(st, node.value)
    if op in ("for_range", "while"):
        line = node.span.line if node.span else "?"
        raise Bail(f"it contains a loop that stays a loop (line {line})")
    if op == "call":
        if is_linalg_call(node):
            return visit_linalg_call(st, node)
        return visit_call(st, node)
    if OPS[op].effect or (not node.is_pure and op not in ("setitem", "inplace", "if")):
        raise Bail(f"`{op_text(node)}` is an effect that must run in order")
    if op == "if":
        if GUARD in node.attrs and node.id in st.guard_leaves:
            return visit_guarded_if(st, node)
        return visit_if(st, node)
    if op == "tuple_get":
        src = node.operands[0]
        results = st.env.get(src.id)
        if isinstance(results, VI) and results.kind == ValueKind.RESULTS:
            return results.const[node.attrs["index"]]
        vi = lookup(st, src)
        if vi.kind == ValueKind.UNIFORM:
            return uniform(st, node, [vi])
        raise Bail("a tuple value varies with the loop index")
    if node.id in st.scan_updates:
        return scan_update(st, node)
    vis = [scan_value(st, lookup(st, o)) for o in node.operands]
    if op == "setitem" and node.id in st.accumulator_writes and node.id in st.acc_info:
        return finish_accumulator(st, node, vis)
    if any(v.carried for v in vis):
        return carried_op(st, node, vis)
    if op == "getitem":
        if node.id in st.accumulator_reads:
            vi = accumulator_read(st, node, vis)
            if vi is not None:
                return vi
        return visit_getitem(st, node, vis)
    if op == "setitem":
        return visit_setitem(st, node, vis)
    if op == "inplace":
        if is_invariant_update(node, vis):
            return visit_invariant_update(st, node, vis)
        return visit_inplace(st, node, vis)
    if op == SWV:
        if any(v.varying for v in vis) or len(vis) != 1:
            raise Bail("a sliding window of a value that varies with the loop index")
        note_array_reads(st, node, vis)
        new = st.scratch.op(SWV, [value_node(st, vis[0])], dict(node.attrs), node.name, type=node.type)
        return VI(ValueKind.UNIFORM, node=new, probes=(), ident=new, is_view=True, text=node.name or "window")
    if op in ("dim", "len", "size") and static_dim(node) is not None:
        return const_vi(st, static_dim(node))
    if op in ("add", "sub", "neg", "pos", "mul") and all(v.kind == ValueKind.AFFINE for v in vis):
        aff = affine_op(op, vis)
        if aff is not None:
            return VI(ValueKind.AFFINE, aff=aff, probes=eager_probes(node, vis), ival=interval(st, aff),
                      text=render_op(op, vis))
    if not any(v.varying for v in vis):
        return uniform(st, node, vis)
    if op in ("py_abs", "py_max", "py_min"):
        return visit_builtin(st, node, vis)
    if op in ("float", "bool", "int"):
        return visit_conversion(st, node, vis)
    if OPS[op].reduction == "batched":
        return visit_reduction(st, node, vis)
    if op in ("dot", "matmul", "einsum"):
        return visit_linalg(st, node, vis)
    if op in ("copy", "astype", "T", "transpose"):
        return visit_layout(st, node, vis)
    if OPS[op].elementwise:
        return elementwise(st, node, vis)
    raise Bail(f"`{op_text(node)}` is not vectorized")


def find_inner_loops(st: LoopState, g: Graph) -> None:
    for node in g.nodes:
        if node.op in ("for_range", "while"):
            line = node.span.line if node.span else "?"
            raise Bail(f"it contains a loop that stays a loop (line {line})")
        regions = node.regions
        if node.op == "if" and GUARD in node.attrs and g is st.body:
            regions = regions[1:]   # the kept loop of a vectorized inner loop: see visit_guarded_if
        for region in regions:
            find_inner_loops(st, region)


def find_guards(st: LoopState) -> None:
    """The conditions of inner loops vectorized under a guard (`if <guard>: loop else: vectorized`).

    Their `any`/`|` nodes are not translated: `visit_guarded_if` tests the guard's operands for
    all iterations of this loop at once, as checks of this loop.
    """
    for node in st.body.nodes:
        if node.op != "if" or GUARD not in node.attrs:
            continue
        leaves: list = []
        chain: list = []
        stack = [node.operands[0]]
        while stack:
            n = stack.pop()
            only_guard = n.graph is st.body and all(u is node or u.id in {c.id for c in chain} or
                                                    u.op == "bitor" for u in st.body.users(n))
            if n.op == "bitor" and only_guard:
                chain.append(n)
                stack.extend(n.operands)
            elif (n.op == "any" and len(n.operands) == 1 and not n.attrs or n.op == "call"
                  and n.attrs.get("fn") == "numpy.may_share_memory") and only_guard:
                chain.append(n)
                leaves.append(n)
            else:
                leaves.append(n)
        st.guard_leaves[node.id] = leaves
        st.guard_nodes.update(n.id for n in chain)


def visit_guarded_if(st: LoopState, node: Node) -> VI:
    """An inner loop vectorized earlier: translate its vectorized branch, and test its guard
    (`any(x[i, :] <= 0)` per iteration i) for all iterations as one check of this loop."""
    if st.region_depth:
        raise Bail("an inner loop vectorized under a guard inside a branch")
    for leaf in st.guard_leaves[node.id]:
        if leaf.op == "call":   # may_share_memory: this loop's own alias analysis tests the arrays
            continue
        vi = lookup(st, leaf.operands[0] if leaf.op == "any" and leaf.id in st.guard_nodes else leaf)
        if vi.carried:
            raise Bail("an inner loop's guard depends on a loop-carried value")
        add_check(st, value_node(st, vi), str(node.attrs[GUARD]))
    else_r = node.regions[1]
    for arg, operand in zip(else_r.args, node.operands[1:]):
        st.env[arg.id] = lookup(st, operand)
    for n in else_r.nodes:
        vi = visit(st, n)
        if vi is not None:
            st.env[n.id] = vi
    return VI(ValueKind.RESULTS, const=[lookup(st, o) for o in else_r.outputs])
