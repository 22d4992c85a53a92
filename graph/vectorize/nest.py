"""Loop nests vectorized as a whole, for the cost rules of short loops.

A cost rule keeps a short loop a loop when its vectorized form needs a run-time test
(`MIN_DATA_GATHER`, indexing.py): for two iterations, the test costs more than the loop. Inside
a nest whose enclosing loops vectorize too, the test runs once for all iterations of the nest:

    for i in range(8):                 # vectorized together: the test of idx[a, b] runs
        for a in range(6):             # once for 8 * 6 * 2 = 96 iterations
            for b in range(2):
                s[i] += x[idx[a, b]]

The vectorize pass (graph/passes/vectorize.py) tries such a nest on a copy when its outer loop
stays a loop only because an inner loop was too short (`SHORT`), and keeps the copy only if the
outer loop vectorizes. While it does, `nest_factor` gives a loop the product of the trip counts
of the loops around it up to the copied one.

When the loops that stay loops go to Numba (`prefer_kernels`), a nest Numba can compile whole is
left to it: a kernel runs short loops over small matrices several times faster than the batched
NumPy calls (NPBench scattering_self_energies at S: 11x eager against 5.5x).
"""

from __future__ import annotations

from ..ir import Graph, Node

# the phrase of a cost rule's reason that a whole nest may overcome
SHORT = "the loop is short"

_roots: list = []   # the loops whose copies are being vectorized as whole nests, outermost first
_kernels_on: list = []   # non-empty while the loops that stay loops will go to Numba (prefer_kernels)


def static_trip(loop: Node) -> int:
    """The trip count of a `for_range` with constant bounds (1 when not known)."""
    bounds = loop.operands[:3]
    if any(b.op != "const" or not isinstance(b.value, int) or isinstance(b.value, bool) for b in bounds):
        return 1
    start, stop, step = (int(b.value) for b in bounds)
    return len(range(start, stop, step)) if step else 1


def nest_factor(loop: Node) -> int:
    """How many times the loops around `loop` (up to the nest being vectorized) run it."""
    if not _roots:
        return 1
    factor, g = 1, loop.graph
    while g is not None and g.parent is not None:
        parent = g.parent
        if parent.op == "for_range":
            factor *= max(static_trip(parent), 1)
        if parent is _roots[0]:
            return factor
        g = parent.graph
    return 1   # not inside the nest being tried


def stays_for_cost(loop: Node, attr: str, kept: str) -> bool:
    """Did `loop` stay a loop because a loop inside it is too short to pay for its tests? (Loops
    marked `kept`, the fallbacks of vectorized ones, are not looked into.)"""
    if _roots or "contains a loop that stays a loop" not in str(loop.attrs.get(attr, "")):
        return False
    return any_short(loop.regions, attr, kept)


def any_short(regions: list[Graph], attr: str, kept: str) -> bool:
    for region in regions:
        for node in region.nodes:
            reason = str(node.attrs.get(attr, "")) if node.op == "for_range" else ""
            if reason == kept:
                continue
            if SHORT in reason or any_short(node.regions, attr, kept):
                return True
    return False


class prefer_kernels:
    """`with prefer_kernels():` the loops that stay loops will be Numba kernels (see `kernels_on`)."""

    def __enter__(self):
        _kernels_on.append(True)
        return self

    def __exit__(self, *exc):
        _kernels_on.pop()
        return False


def kernels_on() -> bool:
    return bool(_kernels_on)


class NestTrial:
    """`with NestTrial(loop):` the cost rules weigh loops inside `loop` by the whole nest."""

    def __init__(self, loop: Node):
        self.loop = loop

    def __enter__(self):
        _roots.append(self.loop)
        return self

    def __exit__(self, *exc):
        _roots.pop()
        return False
