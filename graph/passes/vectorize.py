"""Turn loops over array indices into whole-array NumPy: slices, reductions, `where`, `einsum`."""

from __future__ import annotations

import contextlib
import logging
import os
from typing import Optional

from ..analysis.kernel_plan import NotKernel, plan_kernel
from ..ir import Graph, Node, clone_region
from ..ops import OPS
from ..types import NONE, ArrayType, ScalarType, TupleType
from ..vectorize.build import check_inputs, live_nodes, splice
from ..vectorize.cost import oversized_temporary
from . import dce
from ..vectorize.loop import translate_loop
from ..vectorize.nest import NestTrial, kernels_on, prefer_kernels, stays_for_cost
from ..vectorize.triangular import rectangular_body
from ..vectorize.values import GUARD, Bail, Result

log = logging.getLogger("graphjit.vectorize")
_trial = [0]   # > 0 while vectorizing a copy that may be thrown away: nothing is logged
ATTR = "vectorize"
KEPT = "no: kept as the fallback of its vectorized form"


def run(graph: Graph) -> bool:
    """Vectorize every `for_range` whose iterations are independent, innermost loops first.

    Before:                                                After:
      %0 = for_range(0, 5, 1, %x, %y, %out) {carried=0}      %0 = note() {text='vectorized loop f.py:7-8: ...'}
        body(%i: int, %x.1: f64[5], ...) {                    %1 = mul(2.0, %x) : f64[5]
          %1 = getitem(%x.1, %i) {index=[$1]} : f64[]         %2 = add(%1, %y) : f64[5]
          %2 = mul(2.0, %1) : f64[]                           %3 = setitem(%out, %2) {index=[:]} : none
          %3 = getitem(%y.1, %i) {index=[$1]} : f64[]
          %4 = add(%2, %3) : f64[]
          %5 = setitem(%out.1, %4, %i) {index=[$2]}
          yield
        }
    A loop that stays a loop gets an attribute saying why: `{vectorize='no: carried dependence: ...'}`.
    """
    changed = False
    vectorized = False
    for node in list(graph.nodes):
        if node.graph is not graph:
            continue  # removed while vectorizing an earlier loop
        candidate = node.op == "for_range" and node.attrs.get(ATTR) != KEPT and "scalar" not in node.attrs \
            and "tile" not in node.attrs   # made by the tile pass: already whole-tile operations
        if candidate and vectorize_as_rectangle(graph, node):
            changed = vectorized = True
            continue
        for region in node.regions:
            changed |= run(region)
        if candidate:
            done = vectorize_loop(node)
            if vectorize_as_nest(graph, node):
                done = True
            vectorized |= done and node not in graph.nodes
            changed |= done
        elif node.op == "while":
            changed |= _mark(node, "no: a `while` loop (also a `for` with break/return) is not vectorized")
    if vectorized:
        dce.run(graph)   # a reduction's unused last value would otherwise count as a use below
        changed |= forward_stores(graph)
        changed |= forward_guarded_stores(graph)
    return changed


def run_before_kernels(graph: Graph) -> bool:
    """`run` when the loops that stay loops go on to Numba kernels (graph/passes/kernels.py)."""
    with prefer_kernels():
        return run(graph)


def is_kernel_candidate(loop: Node) -> bool:
    try:
        plan_kernel(loop)
    except NotKernel:
        return False
    return True


def forward_stores(graph: Graph) -> bool:
    """`out = np.empty_like(x); out[:] = expr` -> `out = expr` when expr is a new array of out's type.

    Also `c = np.zeros(...); c[:] = c + expr` -> `c = expr`. The created array is fresh (nothing
    else refers to it) and unused before the store, so the new array can take its place.
    """
    changed = False
    position = {n.id: k for k, n in enumerate(graph.nodes)}
    for store in list(graph.nodes):
        if store.op != "setitem" or store.graph is not graph or len(store.operands) != 2:
            continue
        target, value = store.operands
        index = store.attrs["index"]
        if OPS[target.op].creates != "alloc" or target.graph is not graph:
            continue
        if not all(isinstance(it, slice) and it == slice(None) for it in index):
            continue
        t = target.type
        if not isinstance(t, ArrayType) or not t.is_static:
            continue
        if any(position.get(u.id, 0) < position[store.id] for u in graph.users(target) if u is not store
               and u is not value):
            continue
        if value.op == "add" and target.op in ("zeros", "zeros_like") and target in value.operands \
                and len(graph.users(value)) == 1:
            other = value.operands[1] if value.operands[0] is target else value.operands[0]
            if other is target or not _new_array(graph, other, t, allow_users=1):
                continue
            new = other
        elif _new_array(graph, value, t, allow_users=1) and target not in value.operands:
            new = value
        else:
            continue
        graph.erase(store)
        for user in graph.users(target):
            if user is not value:
                graph.set_operands(user, [new if o is target else o for o in user.operands])
        if graph.is_output(target):
            graph.set_outputs(new if o is target else o for o in graph.outputs)
        new.name = target.name or new.name
        if value is not new and not graph.users(value):
            graph.erase(value)
        if not graph.users(target) and not graph.is_output(target):
            graph.erase(target)
        changed = True
        position = {n.id: k for k, n in enumerate(graph.nodes)}
    return changed


def forward_guarded_stores(graph: Graph) -> bool:
    """`forward_stores` across the `if` of a guarded loop: the vectorized branch yields its new array.

    Before:                                          After:
      %out = empty_like(%x)                            %out = empty_like(%x)
      %0 = if(%bad, %x, %out) {guard='math.log'}       %0 = if(%bad, %x, %out) {guard='math.log'}
        then(%x.1, %out.1) { <loop on %out.1> }          then(%x.1, %out.1) { <loop on %out.1>; yield %out.1 }
        else(%x.2, %out.2) {                             else(%x.2, %out.2) { %1 = log(%x.2); yield %1 }
          %1 = log(%x.2)                               %out.3 = tuple_get(%0) {index=0}
          %2 = setitem(%out.2, %1) {index=[:]} }       ... uses of %out after the `if` read %out.3
    """
    changed = False
    for node in list(graph.nodes):
        if node.op != "if" or GUARD not in node.attrs or node.graph is not graph:
            continue
        then_g, else_g = node.regions
        for k, target in enumerate(node.operands[1:]):
            t = target.type
            if OPS[target.op].creates != "alloc" or target.graph is not graph or not isinstance(t, ArrayType) \
                    or not t.is_static or sum(o is target for o in node.operands) != 1:
                continue
            position = {n.id: p for p, n in enumerate(graph.nodes)}
            if any(position[u.id] < position[node.id] for u in graph.users(target) if u is not node):
                continue
            arg = else_g.args[k]
            stores = else_g.users(arg)
            if len(stores) != 1 or else_g.is_output(arg):
                continue
            store = stores[0]
            if store.op != "setitem" or len(store.operands) != 2 or store.operands[0] is not arg \
                    or not all(isinstance(it, slice) and it == slice(None) for it in store.attrs["index"]):
                continue
            value = store.operands[1]
            if value is arg or not _new_array(else_g, value, t, allow_users=1):
                continue
            else_g.erase(store)
            else_g.set_outputs([*else_g.outputs, value])
            then_g.set_outputs([*then_g.outputs, then_g.args[k]])
            index = len(node.type.items)
            node.type = TupleType((*node.type.items, t))
            after = graph.nodes[graph.nodes.index(node) + 1] if graph.nodes[-1] is not node else None
            result = graph.add("tuple_get", [node], {"index": index}, t, node.span, target.name, before=after)
            for user in graph.users(target):
                if user is not node:
                    graph.set_operands(user, [result if o is target else o for o in user.operands])
            if graph.is_output(target):
                graph.set_outputs(result if o is target else o for o in graph.outputs)
            _sink_into_fallback(graph, node, k, target)
            changed = True
    if changed:
        dce.run(graph)   # drops the captures _sink_into_fallback left unused
    return changed


def _sink_into_fallback(graph: Graph, node: Node, k: int, target: Node) -> None:
    """Create the array the loop fills inside the branch that runs the loop, when nothing else
    uses it: the vectorized branch does not pay for allocating it (a big fresh array costs a page
    fault per 4 KiB the first time it is written, and an unused one can make the allocator return
    memory to the system that the next call must fault in again)."""
    if graph.users(target) != [node] or graph.is_output(target):
        return
    then_g, else_g = node.regions
    operands = []
    first = then_g.nodes[0] if then_g.nodes else None
    for o in target.operands:
        if o.op == "const":
            operands.append(then_g.add("const", (), {"value": o.value}, o.type, o.span, before=first))
            continue
        j = next((j for j, c in enumerate(node.operands[1:]) if c is o), None)
        if j is None:
            graph.set_operands(node, [*node.operands, o])
            for region in (then_g, else_g):
                region.add_arg(o.name or "v", o.type, o.span)
            j = len(node.operands) - 2
        operands.append(then_g.args[j])
    clone = then_g.add(target.op, operands, dict(target.attrs), target.type, target.span, target.name, before=first)
    then_g.replace_all_uses(then_g.args[k], clone)


def _new_array(graph: Graph, node: Node, t: ArrayType, allow_users: int) -> bool:
    if node.graph is not graph or node.type != t or len(graph.users(node)) > allow_users or graph.is_output(node):
        return False
    return OPS[node.op].result == "fresh"  # a new array no other value refers to


def vectorize_as_rectangle(graph: Graph, loop: Node) -> bool:
    """Vectorize a triangular nest through its rectangular copy (graph/vectorize/triangular.py);
    the original loop stays when the copy's outer loop does not vectorize."""
    body = rectangular_body(loop)
    if body is None:
        return False
    return vectorize_copy(graph, loop, body)


def vectorize_as_nest(graph: Graph, loop: Node) -> bool:
    """A loop that stays a loop because a loop inside it is short: vectorize a copy of the whole
    nest, the cost rules weighing each inner loop by the nest (graph/vectorize/nest.py)."""
    if loop not in graph.nodes or not stays_for_cost(loop, ATTR, KEPT):
        return False
    if kernels_on() and is_kernel_candidate(loop):
        return False   # Numba compiles the nest whole, faster than batched calls (nest.py)
    return vectorize_copy(graph, loop, clone_region(loop.regions[0]), as_nest=True)


def vectorize_copy(graph: Graph, loop: Node, body: Graph, as_nest: bool = False) -> bool:
    """Vectorize `loop` with `body` (a copy) instead of its own; keep the copy only if it vectorizes."""
    trial = graph.add("for_range", list(loop.operands), dict(loop.attrs), loop.type, loop.span, loop.name,
                      regions=[body], before=loop)
    graph.replace_all_uses(loop, trial)
    graph.erase(loop)
    _trial[0] += 1
    try:
        with NestTrial(trial) if as_nest else contextlib.nullcontext():
            run(body)
            vectorize_loop(trial)
    finally:
        _trial[0] -= 1
    if all(n is not trial for n in graph.nodes):
        note = next((n for n in graph.nodes if n.op == "note" and n.span == loop.span), None)
        _log(loop, str(note.attrs["text"]) if note is not None else "vectorized")
        for node in graph.nodes:   # a guarded result falls back on the loop as the user wrote it
            if node.op == "if" and GUARD in node.attrs:
                for kept in node.regions[0].nodes:
                    if kept.op == "for_range" and kept.regions[0] is body:
                        kept.regions = [loop.regions[0]]
                        loop.regions[0].parent = kept
        return True
    graph.add_node(loop, before=trial)
    graph.replace_all_uses(trial, loop)
    graph.erase(trial)
    return False


def vectorize_loop(loop: Node) -> bool:
    try:
        result = translate_loop(loop)
    except Bail as e:
        return _mark(loop, f"no: {e}")
    except Exception as e:  # noqa: BLE001 - a bug here must not stop compilation: keep the loop
        if os.environ.get("GRAPHJIT_VERIFY", "") not in ("", "0"):
            raise
        return _mark(loop, f"no: internal error in the vectorizer ({type(e).__name__}: {e})")
    if result.empty:
        _replace_loop(loop, list(result.outputs), _note_text(loop, result))
        return True
    too_costly = oversized_temporary(loop, result)
    if too_costly:
        return _mark(loop, f"no: {too_costly}")
    if result.guards or result.checks:
        _apply_guarded(loop, result)
    else:
        _apply(loop, result)
    return True


def _mark(loop: Node, text: str) -> bool:
    if loop.attrs.get(ATTR) == text:
        return False
    loop.attrs[ATTR] = text
    _log(loop, text)
    return True


def _log(loop: Node, text: str) -> None:
    """`GRAPHJIT_LOG=vectorize` (the `graphjit.vectorize` logger, see log.py)."""
    if _trial[0] or not log.isEnabledFor(logging.INFO):
        return
    where = loop.span.short() if loop.span else "?"
    log.info("loop at %s: %s", where, text)


def _note_text(loop: Node, result: Result) -> str:
    span = loop.span
    if span is None:
        where = "?"
    else:
        end = span.end_line if span.end_line and span.end_line > span.line else span.line
        where = f"{span.short_file}:{span.line}" + (f"-{end}" if end != span.line else "")
    if result.empty:
        return f"loop {where} removed: its range is empty"
    text = f"vectorized loop {where}: {result.summary}"
    reasons = _guard_reasons(result)
    if reasons:
        text += f" (the loop runs instead when {' or '.join(reasons)})"
    return text


def _guard_reasons(result: Result) -> list:
    reasons = []
    if result.guards:
        names = ", ".join(f"{a.name or 'array'}/{b.name or 'array'}" for a, b in result.guards)
        reasons.append(f"{names} share memory")
    if result.checks:
        reasons.append(f"{_raising(result)} could raise")
    return reasons


def _raising(result: Result) -> str:
    """The `math` functions whose arguments the guard tests: 'math.log, math.exp'."""
    return ", ".join(dict.fromkeys(fn for _, fn in result.checks))


def _apply(loop: Node, result: Result) -> None:
    g = loop.graph
    text = _note_text(loop, result)
    g.add("note", [], {"text": text}, NONE, loop.span, before=loop)
    roots = [o for o in result.outputs if o.graph is result.scratch.g]
    keep = live_nodes(result.scratch, roots)
    mapping = {arg.id: result.scratch.ext_of[arg.id] for arg in result.scratch.g.args}
    built = splice(result.scratch, g, loop, mapping, keep)
    outputs = [built[o.id] if o.graph is result.scratch.g else o for o in result.outputs]
    _replace_loop(loop, outputs, None)
    _log(loop, text)


def _replace_loop(loop: Node, outputs: list, note: Optional[str]) -> None:
    g = loop.graph
    if note is not None:
        g.add("note", [], {"text": note}, NONE, loop.span, before=loop)
        _log(loop, note)
    for user in g.users(loop):
        if user.op != "tuple_get":
            raise Bail("internal: a loop result used other than through tuple_get")
        new = outputs[user.attrs["index"]]
        if not new.name and new.op not in ("const", "arg", "param"):
            new.name = user.name
        g.replace_all_uses(user, new)
        g.erase(user)
    if g.is_output(loop):
        raise Bail("internal: a loop node returned directly")
    g.erase(loop)


def _apply_guarded(loop: Node, result: Result) -> None:
    """`if <guard>: <the loop> else: <vectorized>`.

    The guard is true when arrays the loop reads and writes share memory (`np.may_share_memory`)
    or when an argument of a `math` function is one it may raise for (`result.checks`, computed
    from the vectorized arguments before the `if`, so the vectorized branch reuses them).
    """
    g = loop.graph
    span = loop.span
    text = _note_text(loop, result)
    g.add("note", [], {"text": text}, NONE, span, before=loop)
    scratch = result.scratch
    arg_map = {arg.id: scratch.ext_of[arg.id] for arg in scratch.g.args}
    prefix = check_inputs(scratch, [c for c, _ in result.checks])
    prefix_ids = {n.id for n in prefix}
    built_prefix = splice(scratch, g, loop, arg_map, prefix_ids)
    cond = None
    for check, _ in result.checks:
        test = built_prefix[check.id]
        cond = test if cond is None else g.add("bitor", [cond, test], None, ScalarType("bool"), span, before=loop)
    for a, b in result.guards:
        test = g.add("call", [a, b], {"fn": "numpy.may_share_memory"}, ScalarType("bool"), span, before=loop)
        cond = test if cond is None else g.add("bitor", [cond, test], None, ScalarType("bool"), span, before=loop)
    keep = live_nodes(scratch, [o for o in result.outputs if o.graph is scratch.g]) - prefix_ids
    needed: list[Node] = []

    def need(node: Node) -> None:
        if node.op != "const" and all(node is not n for n in needed):
            needed.append(node)

    for o in loop.operands:
        need(o)
    for arg in scratch.g.args:
        need(scratch.ext_of[arg.id])
    used_prefix = [n for n in prefix if any(u.id in keep for u in scratch.g.users(n))
                   or any(o is n for o in result.outputs)]
    for n in used_prefix:
        need(built_prefix[n.id])
    for o in result.outputs:
        if o.graph is not scratch.g:
            need(o)
    then_g = Graph(f"{g.name}.then", label="then")
    else_g = Graph(f"{g.name}.else", label="else")
    then_map = {n.id: then_g.add_arg(n.name or "v", n.type) for n in needed}
    else_map = {n.id: else_g.add_arg(n.name or "v", n.type) for n in needed}

    def inside(region: Graph, table: dict, node: Node) -> Node:
        if node.op == "const":
            return region.const(node.value, node.span)
        return table[node.id]

    # then: the original loop, unchanged
    moved = then_g.add("for_range", [inside(then_g, then_map, o) for o in loop.operands], dict(loop.attrs),
                       loop.type, span, regions=list(loop.regions))
    moved.attrs[ATTR] = KEPT
    n = loop.attrs.get("carried", 0)
    then_outs = [then_g.add("tuple_get", [moved], {"index": k}, loop.type.items[k], span) for k in range(n)]
    then_g.set_outputs(then_outs)
    # else: the vectorized statements
    mapping = {arg.id: inside(else_g, else_map, scratch.ext_of[arg.id]) for arg in scratch.g.args}
    for p in used_prefix:
        mapping[p.id] = inside(else_g, else_map, built_prefix[p.id])
    built = splice(scratch, else_g, None, mapping, keep)
    else_outs = [built[o.id] if o.graph is scratch.g else inside(else_g, else_map, o) for o in result.outputs]
    else_g.set_outputs(else_outs)
    node = g.add("if", [cond, *needed], {GUARD: _raising(result) or "shared memory"}, TupleType(tuple(loop.type.items)), span,
                 regions=[then_g, else_g], before=loop)
    g.replace_all_uses(loop, node)
    g.erase(loop)
    _log(loop, text)
