"""Interval masks in a loop (`data[(lo <= key) & (key < hi)]`, graph/vectorize/intervals.py): the
loop sorts the key once and reduces segments of it, equal to eager NumPy at every call.

The elements of a segment are summed in the key's order where the loop sums them in the array's:
float results agree up to rounding (rtol 1e-12 for float64 on these few elements, 1e-5 for
float32: the tolerance note of tests/graph/passes/test_vectorize.py); counts are exact.
"""

import copy
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphjit


def binned_means(data, radius, npt):
    rmax = radius.max()
    res = np.zeros(npt, dtype=np.float64)
    for i in range(npt):
        r1 = rmax * i / npt
        r2 = rmax * (i + 1) / npt
        mask = np.logical_and((r1 <= radius), (radius < r2))
        res[i] = data[mask].mean()
    return res


def binned_sums(data, key, edges):
    out = np.zeros(edges.size - 1, dtype=data.dtype)
    for i in range(edges.size - 1):
        out[i] = np.sum(data[(key > edges[i]) & (edges[i + 1] >= key)])
    return out


def counts_above(key, t):
    out = np.zeros(t.size, dtype=np.int64)
    for i in range(t.size):
        out[i] = len(key[key >= t[i]])
    return out


def sums_below(data, key, t):
    out = np.zeros(t.size, dtype=data.dtype)
    for i in range(t.size):
        out[i] = (data[t[i] > key] * 2.0).sum()
    return out


def mask_also_counted(data, key, t):
    out = np.zeros(t.size)
    for i in range(t.size):
        m = key < t[i]
        out[i] = data[m].sum() + np.sum(m)
    return out


def run(fn, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*copy.deepcopy(args))


def check(fn, args, level="O2", exec_mode="auto", tol=None):
    expected = run(fn, args)
    jitted = graphjit.jit(fn, jit_level=level, exec_mode=exec_mode)
    actual = run(jitted, args)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    if expected.dtype.kind in "fc":
        tol = tol or (1e-5 if expected.dtype == np.float32 else 1e-12)
        np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(actual, expected)
    return jitted


@pytest.fixture
def rng():
    return np.random.default_rng(3)


def test_a_binning_loop_sorts_the_key_once(rng):
    args = (rng.random(200), rng.random(200), 9)
    jitted = check(binned_means, args)
    graph = str(jitted.graph(*args))
    assert "vectorized loop" in graph and "for_range" not in graph
    source = jitted.source(*args)
    assert "np.argsort(radius)" in source and "np.searchsorted(" in source and "np.add.reduceat(" in source


@pytest.mark.parametrize("level", ["O0", "O1", "O2"])
@pytest.mark.parametrize("exec_mode", ["auto", "no_sink"])
def test_equal_to_eager_at_every_level(level, exec_mode, rng):
    check(binned_means, (rng.random(60), rng.random(60), 7), level, exec_mode)   # empty bins: NaN
    check(binned_sums, (rng.random(40), rng.random(40), np.linspace(0, 1, 6)), level, exec_mode)


def test_ties_nan_keys_and_nan_bounds(rng):
    key = np.round(rng.random(50) * 4) / 4            # many keys equal to an edge
    key[[3, 17]] = np.nan
    edges = np.array([-np.inf, 0.0, 0.25, 0.5, np.nan, 0.75, 1.0, np.inf])
    check(binned_sums, (rng.random(50), key, edges))
    check(counts_above, (key, edges))
    check(sums_below, (rng.random(50), key, edges))


def test_float32_keys_with_python_float_bounds(rng):
    key = rng.random(30).astype(np.float32)
    check(binned_means, (rng.random(30).astype(np.float32), key, 5), tol=1e-5)   # float32 means, stored in float64
    check(binned_sums, (rng.random(30).astype(np.float32), key, np.linspace(0, 1, 4).astype(np.float32)))


def test_masks_with_other_uses_stay_as_before(rng):
    args = (rng.random(20), rng.random(20), rng.random(4))
    jitted = check(mask_also_counted, args)
    assert "argsort" not in jitted.source(*args)
    key64 = rng.random(20).astype(np.float32)
    jitted = check(sums_below, (rng.random(20), key64, rng.random(4)))   # compared in float64: not the key's order
    assert "argsort" not in jitted.source(rng.random(20), key64, rng.random(4))


@settings(max_examples=25, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from([0.0, 0.25, 0.5, -0.0, 1.0, np.nan, np.inf, -1.5]), min_size=1, max_size=12),
       st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0, np.nan, -np.inf, np.inf, 0.3]), min_size=2, max_size=6),
       st.integers(0, 2 ** 31))
def test_any_keys_any_edges(keys, edges, seed):
    """For all keys and edges (ties, NaN, infinities, unsorted edges) the loop equals eager NumPy."""
    key, edges = np.array(keys), np.array(edges)
    data = np.random.default_rng(seed).integers(-5, 5, key.size).astype(np.float64)
    check(binned_sums, (data, key, edges))
    check(counts_above, (key, edges))
