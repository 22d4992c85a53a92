"""Slices whose length moves with the loop index (`x[:, i:n]`, graph/vectorize/triangles.py): read
over their box, stored with `np.where(valid, new, old)`, the dependence analysis seeing the exact
triangle; equal to eager NumPy (the products sum in BLAS order: rtol 1e-12 for float64, the
tolerance note of tests/graph/passes/test_vectorize.py)."""

import copy

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphjit


def covariance(m, float_n, data):
    cov = np.zeros((m, m), dtype=data.dtype)
    for i in range(m):
        cov[i:m, i] = cov[i, i:m] = data[:, i] @ data[:, i:m] / (float_n - 1.0)
    return cov


def correlation(m, data):
    corr = np.eye(m, dtype=data.dtype)
    for i in range(m - 1):
        corr[i + 1:m, i] = corr[i, i + 1:m] = data[:, i] @ data[:, i + 1:m]
    return corr


def lower_rows(a):
    out = np.zeros_like(a)
    for i in range(a.shape[0]):
        out[i, :i + 1] = a[i, :i + 1] * 2.0 + a[:i + 1, i]
    return out


def fill_upper(a, v):
    for i in range(a.shape[0]):
        a[i, i:] = v
    return a


def row_sums_of_triangle(a):
    out = np.zeros(a.shape[0])
    for i in range(a.shape[0]):
        out[i] = np.sum(a[i, i:])
    return out


def shifted_triangle(a):
    for i in range(1, a.shape[0]):
        a[i, i:] = a[i - 1, i:] + 1.0
    return a


def divides_by_triangle(a):
    out = np.zeros_like(a)
    for i in range(a.shape[0]):
        out[i, i:] = 1.0 / a[i, i:]
    return out


def check(fn, args, level="O2", exec_mode="auto"):
    expected = fn(*copy.deepcopy(args))
    jitted = graphjit.jit(fn, jit_level=level, exec_mode=exec_mode)
    compiled_args = copy.deepcopy(args)
    actual = jitted(*compiled_args)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    tol = 1e-5 if expected.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)
    for a, e in zip(compiled_args, args):
        if isinstance(e, np.ndarray):
            assert a.shape == e.shape
    return jitted


def vectorized(jitted, args) -> bool:
    return "for_range" not in str(jitted.graph(*args))


@pytest.mark.parametrize("level", ["O0", "O1", "O2"])
@pytest.mark.parametrize("exec_mode", ["auto", "no_sink"])
def test_covariance_and_correlation_equal_eager(level, exec_mode):
    rng = np.random.default_rng(1)
    for dtype in (np.float64, np.float32):
        data = rng.random((7, 5)).astype(dtype)
        check(covariance, (5, 7.0, data), level, exec_mode)
        check(correlation, (5, data), level, exec_mode)


def test_both_triangles_of_one_array_vectorize():
    data = np.random.default_rng(2).random((7, 5))
    for fn, args in ((covariance, (5, 7.0, data)), (correlation, (5, data))):
        jitted = check(fn, args)
        assert vectorized(jitted, args)
        text = str(jitted.graph(*args))
        assert "triangle" in text and "where" in text


@pytest.mark.parametrize("fn", [lower_rows, fill_upper])
def test_moving_ends_and_scalar_stores(fn):
    a = np.random.default_rng(3).random((6, 6))
    args = (a,) if fn is lower_rows else (a, 7.0)
    jitted = check(fn, args)
    assert vectorized(jitted, args)


@pytest.mark.parametrize("fn,reason", [
    (row_sums_of_triangle, "of a slice whose length moves"),       # a reduction along the box
    (shifted_triangle, "carried dependence"),                      # row i reads row i - 1's triangle
    (divides_by_triangle, "of a slice whose length moves"),        # 1 / a outside the triangle could warn
])
def test_loops_that_stay_loops_say_why(fn, reason):
    a = np.random.default_rng(4).random((5, 5)) + 0.5
    jitted = check(fn, (a,))
    assert reason in str(jitted.graph(a))


@settings(max_examples=20, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.integers(1, 7), st.integers(1, 6), st.integers(0, 2 ** 31))
def test_any_shape(m, n, seed):
    data = np.random.default_rng(seed).standard_normal((n, m))
    check(covariance, (m, float(n) + 1.0, data))
    check(correlation, (m, data))
    check(lower_rows, (np.random.default_rng(seed).random((m, m)),))
