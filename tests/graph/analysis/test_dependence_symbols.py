"""Run-time symbols in the dependence test (an enclosing loop index `i`, a length `n`) are unknown
integers, the same wherever they appear: `x[i, :i]` and `x[i, i + k]` never meet, whatever `i`."""

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import graphjit
from graphjit.graph.analysis.affine import Affine, Symbol
from graphjit.graph.analysis.dependence import K, Access, Point, Span, conflict

k = Affine.of(K)
i = Affine.of(Symbol("i"))
n = Affine.of(Symbol("n"))


def read(*dims):
    return Access("a", False, 0, tuple(dims))


def write(*dims):
    return Access("a", True, 1, tuple(dims))


def test_a_row_prefix_and_the_rest_of_the_row_never_meet():
    # for j in range(i, n): a[i, j] -= a[i, :i] @ a[:i, j]   (lu's second inner loop)
    assert not conflict(read(Point(i), Span(Affine.constant(0), i)), write(Point(i), Point(k + i)), trip=None)
    assert not conflict(read(Span(Affine.constant(0), i), Point(k + i)), write(Point(i), Point(k + i)), trip=None)


def test_symbols_that_may_be_equal_still_conflict():
    assert conflict(read(Point(i), Span(Affine.constant(0), n)), write(Point(i), Point(k + i)), trip=None)
    assert conflict(read(Point(n)), write(Point(k + i)), trip=None)      # n may be i + k'
    assert conflict(read(Point(i + 1)), write(Point(k)), trip=None)


def lu_rows(a):
    for r in range(a.shape[0]):
        for j in range(r, a.shape[0]):
            a[r, j] -= a[r, :r] @ a[:r, j]
    return a


def test_the_inner_loop_vectorizes_and_equals_eager():
    a = np.random.default_rng(0).random((6, 6))
    jitted = graphjit.jit(lu_rows, jit_level="O2")
    np.testing.assert_allclose(jitted(a.copy()), lu_rows(a.copy()), rtol=1e-12, atol=1e-12)
    assert "vectorized loop" in str(jitted.graph(a.copy()))


AXIS = st.tuples(st.integers(-2, 2), st.integers(-2, 2), st.integers(-3, 3))   # c_k * k + c_i * i + const


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(st.lists(st.tuples(st.booleans(), AXIS, AXIS), min_size=2, max_size=2), st.integers(1, 5))
def test_no_conflict_is_never_wrong(specs, trip):
    """Whenever `conflict` says no, no symbol value, iterations k' < k or span positions make the
    two accesses touch one element (checked by enumeration over small values)."""
    def dim(is_span, a):
        start = k * a[0] + i * a[1] + a[2]
        return Span(start, i + 1, 1) if is_span else Point(start)
    (span_a, a0, a1), (span_b, b0, b1) = specs
    first = read(dim(span_a, a0), dim(False, a1))
    second = write(dim(span_b, b0), dim(False, b1))
    if conflict(first, second, trip):
        return

    def elements(access, kk, sym):
        axes = []
        for d in access.dims:
            if isinstance(d, Point):
                axes.append([d.expr.coef(K) * kk + sum(c * sym for key, c in d.expr.terms if key is not K) + d.expr.const])
            else:
                s = d.start.coef(K) * kk + sum(c * sym for key, c in d.start.terms if key is not K) + d.start.const
                count = sym + 1
                axes.append([s + u * d.step for u in range(max(count, 0))])
        return set(itertools.product(*axes))
    for sym in range(-4, 6):
        for kk in range(trip):
            for k2 in range(kk):
                assert not elements(first, kk, sym) & elements(second, k2, sym), (sym, kk, k2)
