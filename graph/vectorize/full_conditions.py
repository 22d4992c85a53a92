"""The conditions of `if`s nested in a masked branch, computed over all iterations.

An `elif` inside a masked branch (branches.masked_if) runs for the iterations of the branch around
it that also pass its own test. Computed from the branch's own values, that test is over the
selected iterations only (`x[t] > 0.0`), and widening it to all iterations costs a gather and a
scatter of every selected element. When the test is safe to compute for every iteration (no
operation that could warn or raise, no array the branch wrote before it), it is computed over all
of them instead (`x > 0.0`) and the nested branch runs where `outer & test`: whole-array
operations only, as one writes the masks by hand.
"""

from __future__ import annotations

from typing import Optional

from ..ir import Graph, Node
from .state import LoopState
from .values import VI, Bail, Unsafe, ValueKind


def precompute(st: LoopState, region: Graph, full_captures: list) -> None:
    """Before translating a masked branch: its region arguments' values over all iterations (when
    known), and the condition of each `if` directly in it that is safe to compute for every iteration."""
    for arg, vi in zip(region.args, full_captures):
        if vi is not None:
            st.full_values[arg.id] = vi
    for k, node in enumerate(region.nodes):
        if node.op != "if":
            continue
        if any(not n.is_pure or n.regions for n in region.nodes[:k]):
            return   # a write before the test: reading the test's operands early could see old values
        value = over_all_iterations(st, region, node.operands[0])
        if value is not None:
            st.full_values[node.operands[0].id] = value


def over_all_iterations(st: LoopState, region: Graph, target: Node) -> Optional[VI]:
    """`target` (a value computed in `region`) translated for every iteration, or None."""
    inside = {n.id for n in region.nodes}
    needed: set = set()
    stack = [target]
    while stack:
        n = stack.pop()
        if n.id in needed or n.op == "const":
            continue
        if n.id not in inside:
            if n.op == "arg" and n.id in st.full_values and n.graph is region:
                continue
            return None   # an argument whose value over all iterations is not known
        if not n.is_pure or n.regions:
            return None
        needed.add(n.id)
        stack.extend(n.operands)
    order = [n for n in region.nodes if n.id in needed]
    leaves = [a for a in region.args if a.id in st.full_values]
    saved_env = {n.id: st.env.get(n.id) for n in order + leaves}
    saved_compress, st.compress = st.compress, None
    n_checks = len(st.checks)
    try:
        for a in leaves:
            st.env[a.id] = st.full_values[a.id]
        for n in order:
            vi = st.visit(n)
            if vi is None or vi.kind not in (ValueKind.VARYING, ValueKind.AFFINE, ValueKind.UNIFORM):
                raise Bail("not a value")
            st.env[n.id] = vi
        return st.env[target.id]
    except (Bail, Unsafe):
        del st.checks[n_checks:]
        return None
    finally:
        st.compress = saved_compress
        for key, vi in saved_env.items():
            if vi is None:
                st.env.pop(key, None)
            else:
                st.env[key] = vi
