"""The compile budget (transpiler/budget.py): unrolling and inlining stop at documented limits.

Each program would make millions of graph nodes if unrolled or inlined in full. Compiled, it must
equal eager Python at every level (LAX, COMPATIBLE, STRICT), every jit_level (O0, O1, O2), through
the generated code and the interpreter; what the budget does instead is checked through the graph:
a run-time loop, a fallback block with one warning (LAX), or a diagnostic with its own code naming
the loop or function, the count and the limit (STRICT, COMPATIBLE). That compiling stays bounded is
checked on the node count lowering makes, never on time.
"""

from __future__ import annotations

import itertools
import sys
import warnings

import numpy as np
import pytest

import graphjit
from graphjit.graph.diagnostics import GraphSyntaxError
from graphjit.transpiler import budget
from graphjit.graph.diagnostics import GraphjitFallbackWarning
from graphjit.transpiler.lower import lower_function

from locations import DOCS

LEVELS = ("LAX", "COMPATIBLE", "STRICT")
JIT_LEVELS = ("O0", "O1", "O2")
MODES = ("auto", "no_sink")


# --- the programs ---------------------------------------------------------------------------------

def ndindex_nest(data):
    """The issue's program: every position weighs every other by its distance (5x4x3x2: 14 400 pairs)."""
    out = np.zeros(data.shape)
    for pos in np.ndindex(data.shape):
        s = 0.0
        for q in np.ndindex(data.shape):
            d = 0
            for a, b in zip(pos, q):
                d += abs(a - b)
            s += data[q] / (1 + d)
        out[pos] = s
    return out


def ndindex_last(data):
    """The loop variable after a run-time loop over a table: the last item, a tuple of Python ints."""
    total = 0.0
    for pos in np.ndindex(data.shape):
        total += data[pos] * pos[0]
    return total, pos


def ndindex_break(data, limit):
    """`break` in a loop past the budget (a flag loop over the table)."""
    count = 0
    for pos in np.ndindex(data.shape):
        if data[pos] > limit:
            break
        count += 1
    return count


def range_sum(x):
    """`range(100_000)` over compile-time ints: a run-time loop, exact Python ints."""
    s = 0
    k = 7
    for i in range(100_000):
        s += i * k
    return x + s, s


STEPS = (1, 2, 3)


def range_static_index(x):
    """`range(100_000)` whose index must be compile-time (a tuple held outside): past the limit."""
    s = 0
    for i in range(100_000):
        s += STEPS[i % 3]
    return x * s


def tuple_of_ints(x):
    """A 33 334-item tuple of ints built at compile time: a run-time loop over a table of them."""
    acc = x * 0.0
    n = 0
    values = tuple(range(0, 100_000, 3))
    for v in values:
        n += v % 5
    return acc + n, n


def nest_static_index(x):
    """A nest whose loops all need their index at compile time: 27 000 iterations, past the node budget."""
    s = x * 0.0
    for i in range(30):
        for j in range(30):
            for k in range(30):
                s = s + STEPS[(i + j + k) % 3] * x[k % 4]
    return s


def comprehension_past_budget(x):
    """A comprehension is unrolled as a loop is: past the limit, the statement runs in Python at LAX."""
    parts = [x[i % 4] * i for i in range(5000)]
    return sum(parts)


def counter_loop(x):
    """An iterator without a length: read only up to the limit, never forever."""
    total = x * 1.0
    for i in itertools.count():
        if i >= 5:
            break
        total = total + i
    return total


def helper(x, n):
    if n == 0:
        return x
    return helper(x + 1.0, n - 1)


def deep_recursion(x):
    """A helper recursing to a compile-time depth of 10 000."""
    y = x * 2.0
    return helper(y, 10_000) + 1.0


def fib(x, n):
    if n < 2:
        return x
    return fib(x, n - 1) + fib(x, n - 2)


def branching_recursion(x):
    """Depth 20, but 20 000 calls: past the inlining node limit, not the depth limit."""
    y = x + 1.0
    return fib(y, 20) * 2.0


def nested_def_recursion(x):
    def down(v, n):
        if n == 0:
            return v
        return down(v * 1.0001, n - 1)

    z = x - 1.0
    return down(z, 5_000)


# --- helpers --------------------------------------------------------------------------------------

def jit_at(fn, level="LAX", jit_level="O1", exec_mode="auto"):
    return graphjit.jit(fn, jit_config=graphjit.JitConfig(jit_syntax_level=level, jit_level=jit_level,
                                                          exec_mode=exec_mode))


def same(actual, expected):
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected)
        for a, e in zip(actual, expected):
            same(a, e)
        return
    if isinstance(expected, np.ndarray):
        assert isinstance(actual, np.ndarray) and actual.dtype == expected.dtype and actual.shape == expected.shape
        np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=0)
        return
    assert type(actual) is type(expected), f"{type(actual).__name__} != {type(expected).__name__}"
    assert actual == expected or np.isclose(actual, expected, rtol=1e-12, atol=0)


def run(fn, args, **config):
    """Compiled result and the GraphjitFallbackWarnings compiling and running it gave."""
    jitted = jit_at(fn, **config)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = jitted(*args)
    return result, [w for w in caught if issubclass(w.category, GraphjitFallbackWarning)], jitted


def nodes(graph) -> int:
    """Every node of a graph and of its regions."""
    return sum(1 + sum(nodes(r) for r in n.regions) for n in graph.nodes)


def lowered_nodes(fn, args, level="LAX") -> int:
    return nodes(lower_function(fn, args, {}, level=level).graph)


def ops(graph) -> set:
    out = set()
    for n in graph.nodes:
        out.add(n.op)
        for r in n.regions:
            out |= ops(r)
    return out


def diagnostics(fn, args, level):
    with pytest.raises(GraphSyntaxError) as info:
        jit_at(fn, level)(*args)
    return info.value.diagnostics


@pytest.fixture(autouse=True)
def _deep_python_recursion():
    """Eager Python itself needs a recursion limit above 10 000 to run `deep_recursion`."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 25_000))
    yield
    sys.setrecursionlimit(old)


@pytest.fixture(scope="module")
def data():
    return np.random.default_rng(7).random((5, 4, 3, 2))


# --- np.ndindex nests -----------------------------------------------------------------------------

@pytest.mark.parametrize("exec_mode", MODES)
@pytest.mark.parametrize("jit_level", JIT_LEVELS)
def test_ndindex_nest_equals_eager(data, jit_level, exec_mode):
    result, fallbacks, jitted = run(ndindex_nest, (data,), jit_level=jit_level, exec_mode=exec_mode)
    same(result, ndindex_nest(data))
    assert not fallbacks  # both loops run over tables of their items: nothing is left to Python
    if exec_mode == "auto":  # a second call (the interpreter is slow on 14 400 iterations)
        same(jitted(data * 2.0), ndindex_nest(data * 2.0))


@pytest.mark.parametrize("level", LEVELS)
def test_ndindex_nest_at_every_level(data, level):
    result, fallbacks, jitted = run(ndindex_nest, (data,), level=level)
    same(result, ndindex_nest(data))
    assert not fallbacks
    assert "for_range" in ops(jitted.graph(data))


def test_ndindex_nest_stays_within_the_node_budget(data):
    count = lowered_nodes(ndindex_nest, (data,))
    assert count < budget.MAX_GRAPH_NODES
    small = data[:2, :1, :1, :2]  # 4 positions: a nest of range loops too (transpiler/lower/index_loops.py)
    assert "for_range" in ops(lower_function(ndindex_nest, (small,), {}).graph)
    same(jit_at(ndindex_nest)(small), ndindex_nest(small))


@pytest.mark.parametrize("exec_mode", MODES)
@pytest.mark.parametrize("jit_level", JIT_LEVELS)
def test_loop_variable_after_a_table_loop(data, jit_level, exec_mode):
    result, fallbacks, _ = run(ndindex_last, (data,), jit_level=jit_level, exec_mode=exec_mode)
    expected = ndindex_last(data)
    same(result, expected)
    assert all(type(p) is int for p in result[1])
    assert not fallbacks


@pytest.mark.parametrize("exec_mode", MODES)
@pytest.mark.parametrize("level", LEVELS)
def test_break_in_a_loop_past_the_budget(data, level, exec_mode):
    big = np.random.default_rng(3).random((12, 10, 10))
    for limit in (0.99, 2.0):  # breaks early; never breaks
        result, fallbacks, _ = run(ndindex_break, (big, limit), level=level, exec_mode=exec_mode)
        assert result == ndindex_break(big, limit) and type(result) is int
        assert not fallbacks


# --- range(100_000) over compile-time ints --------------------------------------------------------

@pytest.mark.parametrize("exec_mode", MODES)
@pytest.mark.parametrize("jit_level", JIT_LEVELS)
def test_range_over_compile_time_ints_is_a_runtime_loop(jit_level, exec_mode):
    x = np.arange(3.0)
    result, fallbacks, jitted = run(range_sum, (x,), jit_level=jit_level, exec_mode=exec_mode)
    same(result, range_sum(x))
    assert type(result[1]) is int and not fallbacks
    assert lowered_nodes(range_sum, (x,)) < 50


@pytest.mark.parametrize("exec_mode", MODES)
@pytest.mark.parametrize("jit_level", JIT_LEVELS)
def test_range_needing_compile_time_index_falls_back_at_lax(jit_level, exec_mode):
    x = np.arange(3.0)
    result, fallbacks, _ = run(range_static_index, (x,), jit_level=jit_level, exec_mode=exec_mode)
    same(result, range_static_index(x))
    assert len(fallbacks) == 1 and "[GJ313]" in str(fallbacks[0].message)
    assert lowered_nodes(range_static_index, (x,)) < 50


@pytest.mark.parametrize("level", ("COMPATIBLE", "STRICT"))
def test_range_needing_compile_time_index_is_a_diagnostic(level):
    found = diagnostics(range_static_index, (np.arange(3.0),), level)
    assert [d.code for d in found] == ["GJ313"]
    d = found[0]
    assert "for i in range(100_000)" in d.message and "100000" in d.message
    assert str(budget.MAX_UNROLL_ITERATIONS) in d.message
    assert d.span.line == range_static_index.__code__.co_firstlineno + 3 and d.level == level


@pytest.mark.parametrize("exec_mode", MODES)
@pytest.mark.parametrize("level", LEVELS)
def test_long_tuple_of_ints_is_a_runtime_loop(level, exec_mode):
    x = np.arange(3.0)
    result, fallbacks, _ = run(tuple_of_ints, (x,), level=level, exec_mode=exec_mode)
    same(result, tuple_of_ints(x))
    assert not fallbacks
    assert lowered_nodes(tuple_of_ints, (x,), level) < 50


@pytest.mark.parametrize("exec_mode", MODES)
@pytest.mark.parametrize("jit_level", JIT_LEVELS)
def test_nest_past_the_budget_is_one_fallback_block(jit_level, exec_mode):
    x = np.arange(4.0)
    result, fallbacks, _ = run(nest_static_index, (x,), jit_level=jit_level, exec_mode=exec_mode)
    same(result, nest_static_index(x))
    assert len(fallbacks) == 1 and "[GJ313]" in str(fallbacks[0].message)  # the whole nest, not 30 blocks
    assert lowered_nodes(nest_static_index, (x,)) < 50


def test_nest_past_the_budget_is_a_diagnostic():
    found = diagnostics(nest_static_index, (np.arange(4.0),), "STRICT")
    assert {d.code for d in found} == {"GJ313"}
    assert any("graph nodes" in d.message and str(budget.MAX_GRAPH_NODES) in d.message for d in found)


@pytest.mark.parametrize("exec_mode", MODES)
@pytest.mark.parametrize("jit_level", JIT_LEVELS)
def test_comprehension_past_the_budget(jit_level, exec_mode):
    x = np.arange(4.0)
    result, fallbacks, _ = run(comprehension_past_budget, (x,), jit_level=jit_level, exec_mode=exec_mode)
    same(result, comprehension_past_budget(x))
    assert len(fallbacks) == 1 and "[GJ313]" in str(fallbacks[0].message)
    found = diagnostics(comprehension_past_budget, (x,), "COMPATIBLE")
    assert [d.code for d in found] == ["GJ313"] and "comprehension `for i in range(5000)`" in found[0].message


def test_iterator_without_length_is_read_up_to_the_limit():
    x = np.arange(3.0)
    result, fallbacks, _ = run(counter_loop, (x,))
    same(result, counter_loop(x))
    assert len(fallbacks) == 1 and "more than" in str(fallbacks[0].message)
    found = diagnostics(counter_loop, (x,), "STRICT")
    assert [d.code for d in found] == ["GJ313"] and "itertools.count()" in found[0].message


# --- deep helper recursion ------------------------------------------------------------------------

@pytest.mark.parametrize("exec_mode", MODES)
@pytest.mark.parametrize("jit_level", JIT_LEVELS)
@pytest.mark.parametrize("fn", [deep_recursion, branching_recursion, nested_def_recursion])
def test_recursion_past_the_inlining_budget_runs_in_python_at_lax(fn, jit_level, exec_mode):
    x = np.arange(4.0)
    result, fallbacks, _ = run(fn, (x,), jit_level=jit_level, exec_mode=exec_mode)
    same(result, fn(x))
    assert len(fallbacks) == 1 and "[GJ340]" in str(fallbacks[0].message)


@pytest.mark.parametrize("fn", [deep_recursion, branching_recursion, nested_def_recursion])
def test_recursion_stays_within_the_node_budget(fn):
    count = lowered_nodes(fn, (np.arange(4.0),))
    assert count < 50  # the outermost call runs in Python: nothing of the recursion is left in the graph


@pytest.mark.parametrize("level", ("COMPATIBLE", "STRICT"))
def test_deep_recursion_is_a_diagnostic(level):
    found = diagnostics(deep_recursion, (np.arange(4.0),), level)
    assert [d.code for d in found] == ["GJ340"]
    assert "`helper`" in found[0].message and str(budget.MAX_INLINE_DEPTH) in found[0].message
    assert found[0].span.line == deep_recursion.__code__.co_firstlineno + 3


@pytest.mark.parametrize("level", ("COMPATIBLE", "STRICT"))
def test_branching_recursion_is_a_diagnostic(level):
    found = diagnostics(branching_recursion, (np.arange(4.0),), level)
    assert [d.code for d in found] == ["GJ340"]
    assert "`fib`" in found[0].message and str(budget.MAX_INLINED_NODES) in found[0].message


def test_recursion_within_the_budget_is_still_inlined():
    x = np.arange(4.0)

    def shallow(v):
        return helper(v, 10)

    result, fallbacks, jitted = run(shallow, (x,), level="STRICT")
    same(result, shallow(x))
    assert not fallbacks and "fallback" not in ops(jitted.graph(x))


# --- the limits are in one place ----------------------------------------------------------------

def test_limits_are_documented():
    text = (DOCS / "syntax.md").read_text()
    for name in ("MAX_UNROLL_ITERATIONS", "MAX_GRAPH_NODES", "MAX_INLINE_DEPTH", "MAX_INLINED_NODES"):
        assert name in budget.__doc__ and name in text
        assert f"{getattr(budget, name):,}".replace(",", " ") in text or str(getattr(budget, name)) in text


def test_a_table_loop_is_stored_on_disk_and_loaded(data):
    """The table's columns are rebuilt from their values by the process that loads the entry."""
    first = graphjit.jit(ndindex_last)
    expected = ndindex_last(data)
    same(first(data), expected)
    assert first.cache_info()["disk_writes"] == 1
    second = graphjit.jit(ndindex_last)  # a new function object: its first call finds the entry on disk
    same(second(data), expected)
    assert second.cache_info()["disk_loads"] == 1 and second.cache_info()["compiles"] == 0
