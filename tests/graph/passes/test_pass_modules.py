"""Every pass module documents itself: a one-line summary, a `run`, and a before/after printout
in `run`'s docstring that is the pass's real output (parsed, run, and executed both ways through
tests/graph_testing.py).
"""

import importlib
import re

import pytest

from graphjit.graph import parse

from graph_testing import norm, run_all_ways


# --- every pass documents itself with a before/after printout that is real output -----------------

PASSES = ["fold_constants", "simplify", "cse", "dce", "dead_branches", "licm", "tile", "memory_plan"]


def _docstring_graphs(doc: str) -> list[str]:
    """The `graph ...` blocks of a docstring, in order (side-by-side columns are split)."""
    blocks, current = [], None
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped.startswith("graph "):
            current = [stripped]
            blocks.append(current)
        elif current is not None and stripped and not stripped.endswith(":") and \
                not stripped.startswith(("Before", "After", "which", "A ", "Only", "Kept", "Not", "The", "Invariant",
                                         "NOTE")):
            current.append(line)
        else:
            current = None
    return ["\n".join(block) for block in blocks]


@pytest.mark.parametrize("name", PASSES)
def test_docstring_example_is_real_output(name):
    module = importlib.import_module(f"graphjit.graph.passes.{name}")
    doc = module.run.__doc__
    assert "Before" in doc and "After" in doc, f"{name}.run needs a before/after printout"
    blocks = _docstring_graphs(doc)
    assert len(blocks) == 2, f"{name}: expected a before and an after graph, found {len(blocks)}"
    before, after = (norm(_reindent(b)) for b in blocks)
    graph = parse(before)
    assert module.run(graph) is True
    assert norm(str(graph)) == after, f"{name} docstring 'After' differs; actual:\n{graph}"
    run_all_ways(parse(before), graph)


def _reindent(block: str) -> str:
    lines = block.splitlines()
    header, body = lines[0], lines[1:]
    indent = min((len(b) - len(b.lstrip()) for b in body if b.strip()), default=0)
    return "\n".join([header] + ["  " + b[indent:] for b in body])


def test_every_pass_module_has_a_run_and_a_one_line_summary():
    for name in PASSES + ["manager"]:
        module = importlib.import_module(f"graphjit.graph.passes.{name}")
        assert module.__doc__ and module.__doc__.strip(), name
        if name != "manager":
            assert callable(module.run)
            assert re.match(r"^[A-Z].*\.$", module.__doc__.strip().splitlines()[0]), name
