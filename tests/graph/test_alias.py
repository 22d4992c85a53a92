"""The alias analysis (graph/alias.py) sees a write through a view the op table marks `views_any`.

`np.einsum("ii->i", a)` is a writeable view of `a`'s diagonal. Graph level: both ways to ask the
one analysis (`Aliases` for the O1 passes, `may_alias` for the vectorizer) find that a write to the
einsum's result writes `a`. End to end: compiled code at O0/O1/O2, through the generated code and
the interpreter, returns and mutates exactly what eager NumPy does.
"""

import copy

import numpy as np
import pytest

import graphjit
from graphjit import JitConfig
from graphjit.graph.alias import EXTERNAL, Aliases, may_alias, value_roots
from graphjit.graph.ops import OPS
from graphjit.graph.parser import parse

DIAGONAL_WRITE = """
graph f(%x: f64[3,3]) -> f64[3,3]
  %a = copy(%x) : f64[3,3]
  %d = {op}('ii->i', %a) : f64[3]
  %w = setitem(%d, 1.0) {{index=[0]}} : none
  return %a
"""


def _node(graph, name):
    return next(n for n in graph.nodes if n.name == name)


def test_a_write_through_an_einsum_view_writes_its_operand():
    graph = parse(DIAGONAL_WRITE.format(op="einsum"))
    a, d, w = (_node(graph, n) for n in ("a", "d", "w"))
    aliases = Aliases(graph)
    assert a.id in aliases.writes(w)
    assert aliases.read_after(a.id, aliases.position[w.id] - 1)
    assert may_alias(d, a)
    assert a in value_roots(d)


def test_a_write_through_an_einsum_view_of_an_argument_writes_the_callers_memory():
    graph = parse("""
graph f(%x: f64[3,3]) -> none
  %d = einsum('ii->i', %x) : f64[3]
  %w = setitem(%d, 1.0) {index=[0]} : none
  return None
""")
    assert EXTERNAL in Aliases(graph).writes(_node(graph, "w"))
    assert any(isinstance(r, tuple) and r[0] == EXTERNAL for r in value_roots(_node(graph, "d")))


def test_a_fresh_result_is_not_its_operand():
    """The contrast: `np.dot` always allocates, so writing its result leaves `a` alone."""
    assert OPS["dot"].result == "fresh" and OPS["einsum"].result == "views_any"
    graph = parse(DIAGONAL_WRITE.format(op="dot").replace("'ii->i', %a", "%a, %a").replace(": f64[3]\n", ": f64[3,3]\n"))
    a, d, w = (_node(graph, n) for n in ("a", "d", "w"))
    assert a.id not in Aliases(graph).writes(w)
    assert not may_alias(d, a)


# --- eager vs compiled ----------------------------------------------------------------------------
def einsum_write_between_reads(x):
    a = x.copy()
    before = a[1, 1]
    d = np.einsum("ii->i", a)
    d[1] = 7.0
    return before, a[1, 1], a


def einsum_inplace_unused_view(x):
    a = np.zeros((x.shape[0], x.shape[0]))
    d = np.einsum("ii->i", a)
    d += x[0]
    return a


def einsum_write_in_loop(x):
    a = x.copy()
    d = np.einsum("ii->i", a)
    s = 0.0
    for i in range(3):
        s += a[0, 0]
        d[0] = d[0] + 1.0
    return s, a


def einsum_view_outlives_its_base(x):
    a = x * 2.0
    d = np.einsum("ii->i", a)
    b = a + 1.0
    return b, d


def einsum_write_to_argument(x):
    d = np.einsum("ii->i", x)
    d *= 3.0
    return x.sum()


CASES = [einsum_write_between_reads, einsum_inplace_unused_view, einsum_write_in_loop,
         einsum_view_outlives_its_base, einsum_write_to_argument]


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("exec_mode", ["auto", "no_sink"])
@pytest.mark.parametrize("jit_level", ["O0", "O1", "O2"])
def test_compiled_matches_eager(fn, jit_level, exec_mode):
    x = np.arange(9.0).reshape(3, 3)
    eager_x, compiled_x = x.copy(), x.copy()
    expected = fn(eager_x)
    compiled = graphjit.jit(fn, jit_config=JitConfig(jit_level=jit_level, exec_mode=exec_mode))
    actual = compiled(compiled_x)
    np.testing.assert_equal(copy.deepcopy(actual), expected)
    np.testing.assert_array_equal(compiled_x, eager_x)
