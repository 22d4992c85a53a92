"""Slices of run-time length in a loop (`x[p[i]:p[i + 1]]`, graph/vectorize/segments.py): the loop
becomes flat gathers and one segmented sum, equal to eager NumPy at every call.

Sums add each segment's elements in order where NumPy's `@`/`np.sum` may add pairwise: float
results agree up to rounding (the tolerance note of tests/graph/passes/test_vectorize.py: rtol
1e-12 for float64 on these small segments); integer results are exact.
"""

import copy
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphjit


def csr_matvec(rows, cols, vals, x):
    y = np.empty(rows.size - 1, vals.dtype)
    for i in range(rows.size - 1):
        c = cols[rows[i]:rows[i + 1]]
        v = vals[rows[i]:rows[i + 1]]
        y[i] = v @ x[c]
    return y


def row_sums(starts, stops, a):
    out = np.zeros(starts.size)
    for i in range(starts.size):
        out[i] = np.sum(a[starts[i]:stops[i]] * 2.0 + 1.0)
    return out


def row_lengths(p, a):
    out = np.zeros(p.size - 1, dtype=np.int64)
    for i in range(p.size - 1):
        out[i] = len(a[p[i]:p[i + 1]])
    return out


def tail_sums(p, a):
    out = np.zeros(p.size, dtype=a.dtype)
    for i in range(p.size):
        out[i] = a[p[i]:].sum()
    return out


def scaled_by_row(p, a, w):
    out = np.zeros(p.size - 1)
    for i in range(p.size - 1):
        out[i] = np.sum(a[p[i]:p[i + 1]] * w[i])
    return out


def writes_what_it_slices(p, a):
    for i in range(p.size - 1):
        a[i] = np.sum(a[p[i]:p[i + 1]])
    return a


def slice_kept(p, a):
    s = a[0:0]
    for i in range(p.size - 1):
        s = a[p[i]:p[i + 1]]
    return s


def run(fn, args, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*copy.deepcopy(args)), None
        except Exception as e:  # noqa: BLE001 - compiled code must raise the same
            return None, e


def check(fn, args, level="O2", exec_mode="auto"):
    expected, error = run(fn, args)
    jitted = graphjit.jit(fn, jit_level=level, exec_mode=exec_mode)
    if error is not None:
        with pytest.raises(type(error)) as info:
            jitted(*copy.deepcopy(args))
        assert str(info.value) == str(error)
        return jitted
    actual = jitted(*copy.deepcopy(args))
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    if expected.dtype.kind in "fc":
        tol = 1e-5 if expected.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(actual, expected)
    return jitted


def csr(rng, n_rows=5, n_cols=6, row_dtype=np.int64, val_dtype=np.float64):
    counts = rng.integers(0, 4, n_rows)
    rows = np.concatenate([[0], np.cumsum(counts)]).astype(row_dtype)
    cols = rng.integers(0, n_cols, int(rows[-1])).astype(np.uint32)
    vals = (rng.random(int(rows[-1])) * 10).astype(val_dtype)
    return rows, cols, vals, rng.random(n_cols).astype(val_dtype)


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def test_the_loop_becomes_a_segmented_sum(rng):
    args = csr(rng, row_dtype=np.uint32)
    jitted = check(csr_matvec, args)
    graph = str(jitted.graph(*args))
    assert "segmented" in graph and "add_reduceat" in graph and "for_range" in graph   # the loop: the fallback
    source = jitted.source(*args)
    assert "np.add.reduceat(" in source and "np.repeat(" in source and "np.cumsum(" in source


@pytest.mark.parametrize("level", ["O0", "O1", "O2"])
@pytest.mark.parametrize("exec_mode", ["auto", "no_sink"])
def test_equal_to_eager_at_every_level(level, exec_mode, rng):
    for row_dtype in (np.uint32, np.int64, np.int32):
        check(csr_matvec, csr(rng, row_dtype=row_dtype), level, exec_mode)


@pytest.mark.parametrize("val_dtype", [np.float32, np.float64, np.complex128, np.int8, np.int32])
def test_dtypes_of_the_sums_are_the_loops(val_dtype, rng):
    rows, cols, vals, x = csr(rng, val_dtype=val_dtype)
    if val_dtype == np.complex128:
        vals, x = vals * (1 + 2j), x * (2 - 1j)
    check(csr_matvec, (rows, cols, vals, x))   # int8 @ int8 wraps in int8, exactly


def test_empty_rows_and_an_empty_matrix(rng):
    check(csr_matvec, (np.zeros(4, np.int64), np.zeros(0, np.uint32), np.zeros(0), rng.random(3)))
    check(csr_matvec, (np.array([0, 0, 2, 2, 3]), np.array([0, 1, 2], np.uint32), rng.random(3), rng.random(3)))


def test_bounds_are_normalized_as_python_slices(rng):
    a = rng.random(6)
    starts = np.array([-2, 4, 1, -9, 7, 3, 0])     # negative, past the end, after the stop
    stops = np.array([6, 2, -1, 3, 9, 3, -7])
    jitted = check(row_sums, (starts, stops, a))
    assert "segmented" in str(jitted.graph(starts, stops, a))
    check(row_lengths, (np.array([0, 3, 1, 6, 6, -1]), a))
    check(tail_sums, (np.array([0, 3, -2, 9]), np.arange(6, dtype=np.int16)))


def test_a_per_iteration_scalar_spreads_over_its_segment(rng):
    p = np.array([0, 2, 2, 5])
    check(scaled_by_row, (p, rng.random(5), rng.random(3)))


def test_an_index_out_of_range_raises_as_the_loop_does(rng):
    rows, cols, vals, x = csr(rng)
    cols = cols.copy()
    cols[-1] = 17
    jitted = check(csr_matvec, (rows, cols, vals, x))
    assert "could raise" in str(jitted.graph(rows, cols, vals, x))


def test_loops_that_stay_loops_say_why(rng):
    p, a = np.array([0, 2, 3, 5]), rng.random(5)
    jitted = check(writes_what_it_slices, (p, a))
    assert "carried dependence" in str(jitted.graph(p, a))
    jitted = check(slice_kept, (p, a))
    assert "run-time length is carried out of the loop" in str(jitted.graph(p, a))


@settings(max_examples=25, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(st.integers(-9, 12), min_size=1, max_size=8), st.integers(0, 2 ** 31))
def test_any_bounds_any_values(bounds, seed):
    """For all bounds (negative, reversed, past the end) the compiled loop equals eager NumPy."""
    rng = np.random.default_rng(seed)
    p = np.array(bounds, dtype=np.int64)
    a = rng.integers(-50, 50, 8).astype(np.int32)
    check(row_lengths, (p, a))
    expected, _ = run(tail_sums, (p, a))
    actual = graphjit.jit(tail_sums, jit_level="O2")(p, a.copy())
    np.testing.assert_array_equal(actual, expected)
    assert actual.dtype == expected.dtype
    if p.size >= 2:
        check(row_sums, (p[:-1], p[1:], a.astype(np.float64)))
