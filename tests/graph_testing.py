"""Helpers for pass tests: graph text in, graph text out, and both graphs run to the same result.

`assert_pass_output(run, before, after)` parses `before`, runs the pass, verifies the graph,
compares its text with `after` (printing the actual text, ready to paste, on failure), and then
runs the graph before and after the pass on seeded inputs, through the interpreter and through
the emitted NumPy code, and checks that results and argument mutations agree.
"""

from __future__ import annotations

import copy
import textwrap

import numpy as np

from graphjit.backends.compile import compile_emitted
from graphjit.backends.emit_numpy import emit_function
from graphjit.backends.interpreter import Interpreter
from graphjit.graph import parse, verify
from graphjit.graph.paths import Roots, parse_path
from graphjit.graph.types import ArrayType, ScalarType, TupleType


def norm(text: str) -> str:
    lines = textwrap.dedent(text).strip("\n").splitlines()
    return "\n".join(line.rstrip() for line in lines) + "\n"


def value_for(t, rng):
    if isinstance(t, ArrayType):
        assert t.is_static, f"test graphs need static argument types, not {t}"
        if t.dtype.startswith(("int", "uint")):
            return rng.integers(1, 5, size=t.shape).astype(t.dtype)
        if t.dtype == "bool":
            return rng.random(t.shape) > 0.5
        return (rng.standard_normal(t.shape) + 0.25).astype(t.dtype)
    if isinstance(t, ScalarType):
        return {"int": 3, "float": 1.5, "bool": True}[t.kind]
    if isinstance(t, TupleType):
        return tuple(value_for(i, rng) for i in t.items)
    return object()


def inputs_for(graph, seed=0):
    rng = np.random.default_rng(seed)
    args = [value_for(a.type, rng) for a in graph.args]
    params = {}
    for p in graph.params:
        path = parse_path(p.attrs["path"])
        assert path.root_kind == "globals" and not path.steps, "test graphs read params as globals['name']"
        params[path.root] = value_for(p.type, rng)
    return args, params


def run_interpreted(graph, args, params):
    return Interpreter(graph, Roots(globals_dict=params))(*args)


def run_emitted(graph, args, params):
    emitted = emit_function(graph)
    return compile_emitted(emitted, params, {})(*args)


def assert_same(actual, expected, what=""):
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected), what
        for a, e in zip(actual, expected):
            assert_same(a, e, what)
        return
    if isinstance(expected, (np.ndarray, np.generic, int, float)):
        np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-6, err_msg=what)
        assert np.asarray(actual).dtype == np.asarray(expected).dtype, what
        assert np.shape(actual) == np.shape(expected), what
        return
    assert actual == expected, what


def run_all_ways(before_graph, after_graph, seed=0):
    """The graph before the pass (interpreted) against the graph after it, interpreted and emitted."""
    with np.errstate(all="ignore"):
        _run_all_ways(before_graph, after_graph, seed)


def _run_all_ways(before_graph, after_graph, seed):
    args, params = inputs_for(before_graph, seed)
    reference_args = copy.deepcopy(args)
    reference_params = copy.deepcopy(params)
    expected = run_interpreted(before_graph, reference_args, reference_params)
    for runner in (run_interpreted, run_emitted):
        these_args, these_params = copy.deepcopy(args), copy.deepcopy(params)
        actual = runner(after_graph, these_args, these_params)
        assert_same(actual, expected, runner.__name__)
        for a, e in zip(these_args, reference_args):
            if isinstance(e, np.ndarray):
                np.testing.assert_array_equal(a, e, err_msg=f"{runner.__name__}: argument mutation differs")
        for k in these_params:
            np.testing.assert_array_equal(these_params[k], reference_params[k],
                                          err_msg=f"{runner.__name__}: parameter mutation differs")


def assert_pass_output(run, before: str, after: str, changed: bool = True, execute: bool = True):
    graph = parse(norm(before))
    original = parse(norm(before))
    verify(graph)
    did = run(graph)
    verify(graph)
    text = str(graph)
    assert norm(text) == norm(after), f"pass output differs; actual:\n{text}"
    assert did is changed, f"pass returned {did}, expected {changed}"
    assert str(parse(text)) == text
    if execute:
        run_all_ways(original, graph)
    return graph


def assert_pass_leaves(run, text: str):
    """The pass must not fire (and must say so)."""
    assert_pass_output(run, text, text, changed=False)
