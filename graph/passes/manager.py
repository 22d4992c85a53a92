"""The pass pipeline of each `jit_level`, and the manager that runs it to a fixed point.

The manager names the failing pass in errors, verifies the graph after each pass when
`GRAPHJIT_VERIFY=1` (the tests set it), records the time each pass took, and can hand the graph
to a `dump` callback before the pipeline and after every pass that changed it (`GRAPHJIT_DUMP`,
`graphjit transpile --dump-passes`). docs/passes.md is generated from PIPELINES
(`describe_pipelines`), and a test keeps the two in step.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from ..diagnostics import GraphjitError, PassError
from ..backend_ops import NUMPY_ONLY_PASSES
from ..ir import Graph
from ..verifier import verify
from . import cse, dce, dead_branches, destination, fold_constants, kernels, licm, memory_plan, scalarize, scratch, \
    share_mean, simplify, tile, unswitch, vectorize

Pass = tuple[Callable[[Graph], bool], str]

PIPELINES: dict[str, list[Pass]] = {
    # O0: translation only. The graph runs as the front end built it.
    "O0": [],
    # O1, the default: clean-up that never changes what the program computes.
    "O1": [
        (fold_constants.run, "fold constant expressions"),       # first: exposes x * 1, if True, shapes
        (simplify.run, "apply algebraic identities"),            # after folding: sees the constants
        (dead_branches.run, "inline branches decided at compile time"),  # conditions folded above
        (cse.run, "merge identical pure expressions"),           # after simplify: x**2 -> x*x may now match
        (licm.run, "hoist loop-invariant code"),                 # after CSE: one copy of each to hoist
        (dce.run, "remove unused nodes"),                        # last: everything above leaves dead nodes
    ],
    # O2: O1, then loop vectorization, tiling of big elementwise chains and memory planning.
    "O2": [
        (fold_constants.run, "fold constant expressions"),
        (simplify.run, "apply algebraic identities"),
        (dead_branches.run, "inline branches decided at compile time"),
        (cse.run, "merge identical pure expressions"),
        (licm.run, "hoist loop-invariant code"),
        (dce.run, "remove unused nodes"),
        (share_mean.run, "give np.std/np.var the mean np.mean computes"),  # CSE merges the two next round
        # loop vectorization: after the O1 passes have simplified loop bodies, before tiling and
        # memory planning (which would hide the slices it produces behind in-place effects)
        (unswitch.run, "hoist loop-invariant branches out of loops"),   # before vectorize: one loop per case
        (vectorize.run, "turn independent loops into array operations"),
        (kernels.run, "send the loops that stay loops to Numba kernels"),  # after vectorize: its leftovers
        (scalarize.run, "run the loops that stay loops on Python floats"),  # the loops not sent to Numba
        (tile.run, "run big elementwise chains tile by tile"),   # after the vectorizer: it makes chains
        (memory_plan.run, "reuse dead temporaries in place"),    # last: in-place nodes are effects, which
                                                                 # fence CSE and LICM; per tile, it reuses
                                                                 # the tile's temporaries
        (destination.run, "compute values in the views they are copied into"),  # after memory planning:
                                                                 # its in-place chains then follow
        (scratch.run, "keep big temporaries' buffers between calls"),  # once, at the end (FINAL)
    ],
}

MAX_ROUNDS = 8
# Passes run once, after the others have converged: they fix what the code allocates, which a later
# round's vectorizer or tiler must not see half-done (a `scratch` buffer in a loop body is an ordered
# allocation the vectorizer would refuse to batch).
FINAL = frozenset({"scratch"})


def pipeline_for(level: str, kernels_on: bool, numpy: bool = True) -> list[Pass]:
    """The level's passes; without the Numba kernel pass when kernels are off (compiler.py decides:
    `JitConfig(numba=False)`, `GRAPHJIT_NUMBA=0`, Numba not installed, or the interpreter); without
    the NumPy-only optimizations (graph/backend_ops.py `NUMPY_ONLY_PASSES`) for another namespace."""
    passes = [p for p in PIPELINES[level] if (kernels_on or p[0] is not kernels.run) and
              (numpy or p[0].__module__.rsplit(".", 1)[-1] not in NUMPY_ONLY_PASSES)]
    if kernels_on:   # the vectorizer leaves to Numba the short nests it compiles whole
        passes = [(vectorize.run_before_kernels if run is vectorize.run else run, text) for run, text in passes]
    return passes


def before_differentiation(level: str) -> list[Pass]:
    """The passes run before a graph is differentiated (graphjit.grad): at O2, the level's passes up
    to loop vectorization, so that a vectorizable loop is differentiated in its whole-array form
    (`out[:] = np.sin(x) * w`, not a loop writing `out[i]` that the backward pass would replay)."""
    passes = PIPELINES[level]
    names = [run.__module__.rsplit(".", 1)[-1] for run, _ in passes]
    return passes[:names.index("vectorize") + 1] if "vectorize" in names else []


@dataclass
class PassReport:
    timings: dict = field(default_factory=dict)   # description -> seconds
    changes: dict = field(default_factory=dict)   # description -> rounds in which it changed the graph
    rounds: int = 0
    converged: bool = True


def run_pipeline(graph: Graph, level: str = "O1", dump: Optional[Callable[[str, Graph], None]] = None,
                 pipeline: Optional[list[Pass]] = None) -> PassReport:
    """Run the level's passes until none changes the graph (at most MAX_ROUNDS rounds), then the
    FINAL ones once. By default
    without the Numba kernel pass: only code emitted by backends/emit_numba.py calls kernels.

    `dump(name, graph)` is called with "input" first, then with each pass's name (`fold-constants`) after
    every run of it that changed the graph.
    """
    passes = pipeline_for(level, False) if pipeline is None else pipeline   # kernels: only for generated code
                                                                             # that calls them (compiler.py)
    check = os.environ.get("GRAPHJIT_VERIFY", "") not in ("", "0")
    report = PassReport()
    if dump is not None:
        dump("input", graph)
    if not passes:
        return report
    final = [p for p in passes if pass_name(p[0]) in FINAL]
    passes = [p for p in passes if p not in final]
    for _ in range(MAX_ROUNDS):
        report.rounds += 1
        if not _run_once(graph, passes, report, check, dump):
            break
    else:
        report.converged = False
    _run_once(graph, final, report, check, dump)
    return report


def _run_once(graph: Graph, passes: list[Pass], report: "PassReport", check: bool,
              dump: Optional[Callable[[str, Graph], None]]) -> bool:
    """Run each pass once, in order; did any change the graph?"""
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
            report.changes[description] = report.changes.get(description, 0) + 1
            if check:
                verify(graph, description)
            if dump is not None:
                dump(pass_name(run), graph)
    return changed_any


class DirectoryDump:
    """A `dump` callback writing `000-input.txt`, `001-fold-constants.txt`, ... into a new directory.

    One directory per compiled graph under `root` (`root/f`, `root/f-2` for the next
    specialization of `f`), so dumps of several functions or signatures never overwrite each
    other. `write(suffix, text)` adds another numbered file (the emitted source, a report).
    """

    def __init__(self, root: str, name: str):
        base = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in name) or "graph"
        os.makedirs(root, exist_ok=True)
        k = 1
        while True:
            path = os.path.join(root, base if k == 1 else f"{base}-{k}")
            try:
                os.mkdir(path)
                break
            except FileExistsError:
                k += 1
        self.directory = path
        self.count = 0

    def __call__(self, label: str, graph: Graph) -> None:
        self.write(f"{label}.txt", str(graph))

    def write(self, suffix: str, text: str) -> str:
        path = os.path.join(self.directory, f"{self.count:03d}-{suffix}")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        self.count += 1
        return path


def format_report(report: PassReport, level: str) -> str:
    """Per-pass time and how often each pass changed the graph, one line per pass."""
    lines = [f"jit_level {level}: {report.rounds} round(s)" + ("" if report.converged else
                                                              f", stopped at the cap of {MAX_ROUNDS}")]
    for description, seconds in report.timings.items():
        lines.append(f"  {seconds * 1e3:8.3f} ms  changed in {report.changes.get(description, 0)} round(s)  "
                     f"{description}")
    return "\n".join(lines) + "\n"


def dump_directory_from_env(name: str) -> Optional[DirectoryDump]:
    """`GRAPHJIT_DUMP=DIR`: a DirectoryDump for graph `name`, or None when the variable is unset."""
    root = os.environ.get("GRAPHJIT_DUMP", "")
    return DirectoryDump(root, name) if root else None


def pass_name(run: Callable) -> str:
    """`fold-constants`: the pass's module name, as used in dump file names."""
    return run.__module__.rsplit(".", 1)[-1].replace("_", "-")


def describe_pipelines() -> str:
    """The pipeline of every level as Markdown (the generated part of docs/passes.md)."""
    lines = []
    for level, passes in PIPELINES.items():
        lines.append(f"### {level}")
        lines.append("")
        if not passes:
            lines.append("Translation only: no passes.")
        for k, (run, description) in enumerate(passes, 1):
            lines.append(f"{k}. `{pass_name(run)}` ({run.__module__.rsplit('.', 1)[-1]}.py): {description}")
        lines.append("")
    return "\n".join(lines)
