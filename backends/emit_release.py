"""Which of the function's own array names to `del` as a top-level loop starts.

SSA gives each loop-carried value a name of its own (`r = Z` before `while ...: r = r[I]`), and the
emitter names tuple parts and temporaries (`t = ...; Xi = t[0]`), so a name the user's code would
have rebound inside the loop keeps its first array alive for the whole loop. Eager NumPy frees it at
the first rebinding; the compiled loop then runs with that much more memory held, and its own
allocations miss the blocks the allocator would have reused (mandelbrot2 at NPBench preset M: twice
eager's page faults and 0.9x eager, 1.0x once the names are released). backends/emit_numpy.py asks
`reusable_inits` which carried values can keep their initial value's name, and
`release_before_loop` for the `del` of the other dead names after writing a loop's initial values.
"""

from __future__ import annotations

from ..graph.ir import Graph, Node
from ..graph.types import ArrayType


def reusable_inits(emitter, loop: Node, inits: list, captures: list, indent: str) -> dict:
    """{k: initial value} for carried values k of `loop` whose initial value's own name is dead once
    the loop starts (`dead_before_loop`): the loop can carry that name (`acc = ...` before
    `for i in ...: acc = acc + x[i]`), as the user's code did, instead of copying it into a new one."""
    if not emitter.free_temporaries:
        return {}
    dead = set(dead_before_loop(emitter.graph, loop, captures, [], emitter.expr, emitter.last_use,
                                emitter.lines, indent))
    out, taken = {}, set()
    for k, init in enumerate(inits):
        name = emitter.expr.get(init.id, ("",))[0]
        if name in dead and name not in taken:
            out[k] = init
            taken.add(name)
    return out


def release_before_loop(emitter, loop: Node, captures: list, targets: list, indent: str) -> list[str]:
    """The `del` line (none or one) for `dead_before_loop` names, from an emitter that frees temporaries."""
    if not emitter.free_temporaries:
        return []
    dead = dead_before_loop(emitter.graph, loop, captures, targets, emitter.expr, emitter.last_use,
                            emitter.lines, indent)
    return [f"{indent}del {', '.join(dead)}"] if dead else []


def dead_before_loop(g: Graph, loop: Node, captures: list, targets: list, expr: dict, last_use: dict,
                     lines: list, indent: str) -> list[str]:
    """Names bound by a top-level assignment of the function body `g` that hold an array (rank >= 1)
    no statement reads after `loop` begins: every value ever spelled by that name is last used at or
    before `loop` (as a loop's initial value, copied into the loop's own name) and is not one of the
    values the loop body reads (`captures`) nor one the function returns; never the loop's own
    names (`targets`)."""
    here = last_use.get(("pos", loop.id))
    if loop.graph is not g or here is None:
        return []
    assigned = _assigned_names(lines, indent)
    never = {expr[a.id][0] for a in (*g.args, *g.params) if a.id in expr} | \
        {expr[c.id][0] for c in captures if c.id in expr} | set(targets)
    holders: dict[str, list[Node]] = {}
    for node in g.nodes:
        text = expr.get(node.id, ("",))[0]
        if text in assigned and node is not loop:
            holders.setdefault(text, []).append(node)
    dead = []
    for name, nodes in holders.items():
        latest = nodes[-1]
        if name in never or not isinstance(latest.type, ArrayType) or latest.type.rank == 0:
            continue
        if all(last_use.get(n.id, -1) <= here and not g.is_output(n) for n in nodes):
            dead.append(name)
    return dead


def _assigned_names(lines: list, indent: str) -> set:
    """Names bound now by a plain `name = ...` statement at `indent` (not in a nested block) and not
    deleted by a later `del` at `indent` (an earlier loop's release)."""
    names = set()
    for line in lines:
        if line.startswith(indent) and not line[len(indent):len(indent) + 1].isspace():
            statement = line[len(indent):]
            if statement.startswith("del "):
                names.difference_update(statement[4:].split(", "))
                continue
            target, sep, _ = statement.partition(" = ")
            if sep and target.isidentifier():
                names.add(target)
    return names
