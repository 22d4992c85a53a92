"""The pass pipeline of each `jit_level`, and the manager that runs it to a fixed point.

The manager names the failing pass in errors, verifies the graph after each pass when
`GRAPHJIT_VERIFY=1` (the tests set it), and records the time each pass took.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from ..diagnostics import GraphjitError, PassError
from ..ir import Graph
from ..verifier import verify
from . import dce, scalarize, vectorize

Pass = tuple[Callable[[Graph], bool], str]

PIPELINES: dict[str, list[Pass]] = {
    "O0": [],  # translation only
    "O1": [
        (dce.run, "remove unused nodes"),
    ],
    "O2": [
        (dce.run, "remove unused nodes"),
        # the O2 slot for loop vectorization: after the O1 passes have simplified loop bodies,
        # before elementwise fusion (which would hide the slices it produces)
        (vectorize.run, "turn independent loops into array operations"),
        (scalarize.run, "run the loops that stay loops on Python floats"),  # after vectorize: only its leftovers
    ],
}

MAX_ROUNDS = 8


@dataclass
class PassReport:
    timings: dict = field(default_factory=dict)   # description -> seconds
    rounds: int = 0


def run_pipeline(graph: Graph, level: str = "O1", dump: Optional[Callable[[str, Graph], None]] = None,
                 pipeline: Optional[list[Pass]] = None) -> PassReport:
    """Run the level's passes until none changes the graph (at most MAX_ROUNDS rounds)."""
    passes = PIPELINES[level] if pipeline is None else pipeline
    check = os.environ.get("GRAPHJIT_VERIFY", "") not in ("", "0")
    report = PassReport()
    if dump is not None:
        dump("input", graph)
    for _ in range(MAX_ROUNDS if passes else 0):
        report.rounds += 1
        changed_any = False
        for run, description in passes:
            start = time.perf_counter()
            try:
                changed = run(graph)
            except GraphjitError as e:
                raise e.add_context(f"in pass '{description}'")
            except Exception as e:
                raise PassError(f"pass '{description}' failed: {type(e).__name__}: {e}", graph.span) from e
            report.timings[description] = report.timings.get(description, 0.0) + time.perf_counter() - start
            if changed:
                changed_any = True
                if check:
                    verify(graph, description)
                if dump is not None:
                    dump(description, graph)
        if not changed_any:
            break
    return report
