"""Turn loops over array indices into whole-array NumPy: slices, reductions, `where`, `einsum`."""

from __future__ import annotations

import linecache
import logging
import os
from typing import Optional

from ..ir import Graph, Node
from ..types import NONE, ScalarType, TupleType
from ..vectorize.build import live_nodes, splice
from ..vectorize.loop import Bail, LoopVectorizer, Result

log = logging.getLogger("graphjit")
ATTR = "vectorize"
KEPT = "no: kept for arrays that share memory"


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
    for node in list(graph.nodes):
        if node.graph is not graph:
            continue  # removed while vectorizing an earlier loop
        for region in node.regions:
            changed |= run(region)
        if node.op == "for_range" and node.attrs.get(ATTR) != KEPT:
            changed |= vectorize_loop(node)
        elif node.op == "while":
            changed |= _mark(node, "no: a `while` loop (also a `for` with break/return) is not vectorized")
    return changed


def vectorize_loop(loop: Node) -> bool:
    try:
        result = LoopVectorizer(loop).run()
    except Bail as e:
        return _mark(loop, f"no: {e}")
    except Exception as e:  # noqa: BLE001 - a bug here must not stop compilation: keep the loop
        if os.environ.get("GRAPHJIT_VERIFY", "") not in ("", "0"):
            raise
        return _mark(loop, f"no: internal error in the vectorizer ({type(e).__name__}: {e})")
    if result.empty:
        _replace_loop(loop, list(result.outputs), _note_text(loop, result))
        return True
    if result.guards:
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
    if "vectorize" not in os.environ.get("GRAPHJIT_LOG", ""):
        return
    if not log.handlers and not logging.getLogger().handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("graphjit: %(message)s"))
        log.addHandler(handler)
    if log.level == logging.NOTSET or log.level > logging.INFO:
        log.setLevel(logging.INFO)
    where = loop.span.short() if loop.span else "?"
    log.info("vectorize: loop at %s: %s", where, text)


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
    if result.guards:
        names = ", ".join(f"{a.name or 'array'}/{b.name or 'array'}" for a, b in result.guards)
        text += f" (the loop runs instead when {names} share memory)"
    return text


def _source_line(loop: Node) -> str:
    if loop.span is None:
        return ""
    return linecache.getline(loop.span.file, loop.span.line).strip()


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
    """`if np.may_share_memory(a, b): <the loop> else: <vectorized>`."""
    g = loop.graph
    span = loop.span
    text = _note_text(loop, result)
    g.add("note", [], {"text": text}, NONE, span, before=loop)
    cond = None
    for a, b in result.guards:
        test = g.add("call", [a, b], {"fn": "numpy.may_share_memory"}, ScalarType("bool"), span, before=loop)
        cond = test if cond is None else g.add("bitor", [cond, test], None, ScalarType("bool"), span, before=loop)
    scratch = result.scratch
    keep = live_nodes(scratch, [o for o in result.outputs if o.graph is scratch.g])
    needed: list[Node] = []

    def need(node: Node) -> None:
        if node.op != "const" and all(node is not n for n in needed):
            needed.append(node)

    for o in loop.operands:
        need(o)
    for arg in scratch.g.args:
        need(scratch.ext_of[arg.id])
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
    built = splice(scratch, else_g, None, mapping, keep)
    else_outs = [built[o.id] if o.graph is scratch.g else inside(else_g, else_map, o) for o in result.outputs]
    else_g.set_outputs(else_outs)
    node = g.add("if", [cond, *needed], {}, TupleType(tuple(loop.type.items)), span,
                 regions=[then_g, else_g], before=loop)
    g.replace_all_uses(loop, node)
    g.erase(loop)
    _log(loop, text)
