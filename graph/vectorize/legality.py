"""Whether the vectorized statements may replace the loop: carried dependences between array
accesses, views read after their array is written, arrays that may share memory (alias guards) and
the run-time checks that send a call to the original loop."""

from __future__ import annotations

from ..alias import may_alias
from ..analysis.dependence import Access, conflict
from ..ir import Node
from ..ops import OPS
from ..types import ArrayType
from .build import check_inputs
from .state import LoopState
from .values import VI, Bail


def _memory_root(node: Node) -> Node:
    """The array whose memory `node` reads (through views and in-place updates)."""
    while OPS[node.op].result == "view" and node.operands:
        node = node.operands[0]
    return node


def add_check(st: LoopState, test: Node, text: str) -> None:
    """Run the loop instead of the vectorized code when `test` (any element of it) is true."""
    if isinstance(test.type, ArrayType) and test.type.shape != ():
        test = st.scratch.op("any", [test])
    st.checks.append((test, text))


def check_checks(st: LoopState) -> None:
    """The tests of `raise_check` run before all the vectorized statements: what they read must
    not be memory the vectorized statements write before them (`x[i] = x[i] - 1` then
    `math.log(x[i])`), nor an array they fill in. Another array that may share memory with a
    written one is covered by the alias guard, which runs the loop when they overlap."""
    if not st.checks:
        return
    effects = [n for n in st.scratch.g.nodes if not n.is_pure]
    for node in check_inputs(st.scratch, [c for c, _ in st.checks]):
        if node.op == "getitem" and any(o.id in st.unsafe_indices for o in node.operands[1:]):
            raise Bail("a test of the loop needs a gather whose indices may be out of range")
        read = {id(_memory_root(o)) for o in node.operands if isinstance(o.type, ArrayType)}
        filled = any(not u.is_pure and u.operands[0] is node for u in st.scratch.g.users(node))
        written_before = any(st.scratch.pos[e.id] < st.scratch.pos.get(node.id, 0) and e.operands
                             and id(_memory_root(e.operands[0])) in read for e in effects)
        if filled or written_before:
            fn = next(text for _, text in st.checks)
            raise Bail(f"`{fn}` could raise after the loop has written to what it reads")


def check_dependences(st: LoopState) -> None:
    per_array: dict[int, list] = {}
    for a in st.accesses:
        per_array.setdefault(id(a.array), []).append(a)
    for group in per_array.values():
        writes = [a for a in group if a.write]
        if not writes:
            continue
        once = [a for a in group if a.extra.get("once")]
        if once and len(once) != len(group):
            other = next(a for a in group if not a.extra.get("once"))
            raise Bail(f"`{once[0].label}` is accumulated into while `{other.label}` is also accessed")
        if once:
            continue
        for w in writes:
            for a in group:
                if a is w:
                    if conflict(w, w, st.trip):
                        raise Bail(f"`{w.label} = ...` writes some element in more than one iteration")
                    continue
                if a.write and a.pos < w.pos:
                    continue  # the pair is tested from the other side
                first, second = (a, w) if a.pos < w.pos else (w, a)
                if conflict(first, second, st.trip):
                    raise Bail(dependence_reason(first, second))


def dependence_reason(first: Access, second: Access) -> str:
    w, r = (first, second) if first.write else (second, first)
    if r.write:
        return f"carried dependence: `{w.label}` and `{r.label}` write the same element in different iterations"
    return f"carried dependence: `{r.label}` reads what `{w.label}` writes in another iteration"


def check_fresh(st: LoopState, vi: VI) -> None:
    """A slice read is a view: used after its array is written again, it would show the new data."""
    ident, pos = vi.read_at
    for a in st.accesses:
        if a.write and a.array is ident and a.pos > pos:
            raise Bail(f"a value read from `{vi.text}` is used after `{a.label}` is written")


def alias_guards(st: LoopState) -> list:
    """Pairs of distinct arrays, one written, that must not overlap for the vectorized code."""
    written = []
    for a in st.accesses:
        if a.write and all(a.array is not w for w in written):
            written.append(a.array)
    everything = []
    for a in st.accesses:
        if all(a.array is not x for x in everything):
            everything.append(a.array)
    guards = []
    for w in written:
        for x in everything:
            if x is w:
                continue
            if not isinstance(w, Node) or not isinstance(x, Node):
                continue
            if w.graph is st.scratch.g or x.graph is st.scratch.g:
                continue  # arrays created in the loop body are fresh
            if may_alias(w, x):
                if not any({id(w), id(x)} == {id(a), id(b)} for a, b in guards):
                    guards.append((w, x))
    return guards
