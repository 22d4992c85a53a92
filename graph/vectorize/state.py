"""The state of translating one loop: what every module of the vectorizer reads and fills in.

`loop.translate_loop` makes one `LoopState` per loop; the modules (integers, materialize,
elementwise, calls, indexing, reads, writes, branches, carried, legality) are functions taking it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from ..analysis.affine import Affine
from ..analysis.dependence import Access
from ..ir import Graph, Node
from .build import Scratch
from .values import VI, DimKey, PendingWrite


@dataclass(eq=False)
class LoopState:
    """One `for_range` loop being vectorized: its graph, the scratch program built for it, the
    translation of each body value so far, and the facts gathered for the legality checks."""

    # --- the loop ---------------------------------------------------------------------------
    loop: Node                          # the `for_range` node
    graph: Graph                        # the graph that holds it
    body: Graph                         # its body region
    n_carried: int                      # how many loop-carried slots it has
    scratch: Scratch                    # the vectorized program being built
    # Translates one body node (`loop.visit` bound to this state): for the nodes of a branch and the
    # term of a running sum, translated by branches.py and carried.py.
    visit: Optional[Callable[[Node], Optional[VI]]] = field(default=None, repr=False)

    # --- bounds (integers.bounds) -----------------------------------------------------------
    step: int = 0                       # the constant step
    start: Optional[Affine] = None      # first value of the index
    stop: Optional[Affine] = None       # the range's stop
    trip: Optional[int] = None          # iteration count when known at compile time
    trip_aff: Optional[Affine] = None   # iteration count as an affine form

    # --- translation ------------------------------------------------------------------------
    env: dict[int, VI] = field(default_factory=dict)               # body node id -> its translation
    interval_cache: dict = field(default_factory=dict)             # id(affine symbol) -> its range
    affine_nodes: dict = field(default_factory=dict)               # Affine -> scratch node computing it
    dim_keys: dict[tuple, DimKey] = field(default_factory=dict)    # (array id, axis) -> its symbol
    features: set = field(default_factory=set)                     # what the summary names (stencil, ...)
    region_depth: int = 0                                          # how many `if` branches we are inside
    compress: Optional[Node] = None      # inside a masked branch: the elements it runs for
    compress_cache: dict[tuple, Node] = field(default_factory=dict)  # (node id, mask id) -> `v[m]`
    full_values: dict[int, VI] = field(default_factory=dict)  # in masked branches: id -> value over all iterations
    pending: list[PendingWrite] = field(default_factory=list)      # writes inside the current branches
    read_offsets: dict[int, set] = field(default_factory=dict)     # array id -> the shifts it is read at
    segment_spaces: dict[tuple, object] = field(default_factory=dict)  # segments.py: bounds and spaces built

    # --- loop-carried values (carried.py) ---------------------------------------------------
    scans: dict[int, tuple] = field(default_factory=dict)          # slot -> (update node, term node)
    scan_updates: dict[int, int] = field(default_factory=dict)     # update node id -> slot
    scan_cache: dict = field(default_factory=dict)                 # (slot, exclusive) -> prefix VI
    early: list[Access] = field(default_factory=list)              # accesses of terms translated early
    accumulator_writes: dict[int, Node] = field(default_factory=dict)  # setitem id -> getitem of `x[I] op= t`
    accumulator_reads: dict[int, Node] = field(default_factory=dict)   # getitem id -> its setitem
    acc_info: dict[int, dict] = field(default_factory=dict)        # setitem id -> what its read found
    reductions: dict[tuple, Node] = field(default_factory=dict)    # reductions already built, for reuse

    # --- inner loops vectorized under a guard (loop.find_guards) ----------------------------
    guard_leaves: dict[int, list] = field(default_factory=dict)    # guarded `if` id -> its tests
    guard_nodes: set[int] = field(default_factory=set)             # the `any`/`|` nodes of those tests

    # --- legality (legality.py) -------------------------------------------------------------
    accesses: list[Access] = field(default_factory=list)           # every array read and write, in order
    checks: list[tuple[Node, str]] = field(default_factory=list)   # (scratch bool, text): run the loop when true
    unsafe_indices: set[int] = field(default_factory=set)          # gather indices that may be out of range
