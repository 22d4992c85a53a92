"""Every lowered construct: source in, graph text out (golden), and graph result == eager result.

For each program in tests/programs.py, at every jit_level and through both the emitted NumPy
code and the node-by-node interpreter, on seeded inputs (and empty / one-element arrays where the
program allows). Set GRAPHJIT_UPDATE_GOLDEN=1 to rewrite tests/golden/*.txt after a deliberate change.
"""

import copy
import pathlib

import numpy as np
import pytest

import graphjit
from graphjit.graph import parse, verify

from eager_vs_compiled import assert_same, run_both
from golden_files import check_golden
from programs import CASES

GOLDEN = pathlib.Path(__file__).parent / "golden"


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("level", ["O0", "O1", "O2"])
@pytest.mark.parametrize("exec_mode", ["auto", "no_sink"])
def test_compiled_equals_eager(name, level, exec_mode, rng):
    fn, make_args = CASES[name]
    jitted = run_both(fn, make_args(rng), jit_level=level, exec_mode=exec_mode)
    # a second call hits the cache and still agrees
    args = make_args(np.random.default_rng(99))
    assert_same(jitted(*copy.deepcopy(args)), fn(*copy.deepcopy(args)))
    assert jitted.cache_info()["compiles"] == 1


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_graph_text(name, rng):
    fn, make_args = CASES[name]
    graph = graphjit.jit(fn, jit_level="O0").graph(*make_args(rng))
    verify(graph, require_spans=True)
    text = str(graph)
    check_golden(GOLDEN / f"{name}.txt", text, "graph text")


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("level", ["O0", "O1"])
def test_text_round_trip(name, level, rng):
    fn, make_args = CASES[name]
    graph = graphjit.jit(fn, jit_level=level).graph(*make_args(rng))
    again = parse(str(graph))
    verify(again)
    assert str(again) == str(graph)


@pytest.mark.parametrize("n", [0, 1, 7])
def test_edge_sizes(n, rng):
    from programs import arith, for_range_runtime, ufuncs, while_loop
    x, y = rng.random((n, 3)), rng.random((n, 3)) + 0.5
    run_both(arith, (x, y))
    run_both(ufuncs, (x,))
    run_both(for_range_runtime, (x,))
    run_both(while_loop, (x * 10,))
