"""graph/passes/share_mean.py: `np.std`/`np.var` take the mean a `np.mean` of the same data over the same
axes computes (`mean=`), which CSE then computes once; the results equal NumPy's bit for bit."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import graphjit
from graphjit.graph.passes import share_mean

from graph_testing import assert_pass_leaves, assert_pass_output

CONFIGS = [(level, mode) for level in ("O0", "O1", "O2") for mode in ("auto", "no_sink")]


def batchnorm(x, eps=1e-5):
    mean = np.mean(x, axis=0, keepdims=True)
    std = np.std(x, axis=0, keepdims=True)
    return (x - mean) / np.sqrt(std + eps)


def standardize(data):
    mean = np.mean(data, axis=0)
    stddev = np.std(data, axis=0)
    return mean, stddev, np.var(data, axis=0, ddof=1), (data - mean) / stddev


def over_axes(x):
    return np.mean(x, axis=(1, 2)), np.std(x, axis=(1, 2)), np.var(x, axis=(1, 2), keepdims=True), \
        np.mean(x, axis=-1, keepdims=True), np.std(x, axis=-1)


def written_between(x):
    mean = np.mean(x, axis=0)
    x[0] = 7.0
    return mean, np.std(x, axis=0)


def whole(x):
    return np.mean(x), np.std(x), np.var(x, keepdims=True)


def integers(x):
    return np.mean(x, axis=0), np.std(x, axis=0)


def identical(actual, expected):
    if isinstance(expected, tuple):
        return all(identical(a, e) for a, e in zip(actual, expected)) and len(actual) == len(expected)
    return np.asarray(actual).dtype == np.asarray(expected).dtype and np.shape(actual) == np.shape(expected) \
        and np.array_equal(actual, expected, equal_nan=True)


def check(fn, x, level="O2", mode="auto"):
    expected = fn(x.copy())
    assert identical(graphjit.jit(fn, jit_level=level, exec_mode=mode)(x.copy()), expected)


def test_std_takes_the_mean_of_the_same_axes():
    assert_pass_output(share_mean.run, """
        graph f(%x: f64[5,4]) -> tuple(f64[4], f64[4])
          %0 = mean(%x) {axis=0} : f64[4]
          %1 = std(%x) {axis=0} : f64[4]
          %2 = tuple(%0, %1) : tuple(f64[4], f64[4])
          return %2
    """, """
        graph f(%x: f64[5,4]) -> tuple(f64[4], f64[4])
          %0 = mean(%x) {axis=0} : f64[4]
          %1 = mean(%x) {axis=0} : f64[4]
          %2 = expand_dims(%1, 0) : f64[1,4]
          %3 = std(%x, %2) {axis=0, kw=('mean',)} : f64[4]
          %4 = tuple(%0, %3) : tuple(f64[4], f64[4])
          return %4
    """)


def test_other_axes_and_dtypes_are_left_alone():
    assert_pass_leaves(share_mean.run, """
        graph f(%x: f64[5,4], %y: f16[5,4]) -> tuple(f64[4], f64[5], f16[1,4], f16[1,4])
          %0 = mean(%x) {axis=0} : f64[4]
          %1 = var(%x) {axis=1} : f64[5]
          %2 = mean(%y) {axis=0, keepdims=True} : f16[1,4]
          %3 = std(%y) {axis=0, keepdims=True} : f16[1,4]
          %4 = tuple(%0, %1, %2, %3) : tuple(f64[4], f64[5], f16[1,4], f16[1,4])
          return %4
    """)


def test_batchnorm_computes_its_mean_once():
    x = np.random.default_rng(0).random((6, 3, 3, 4)).astype(np.float32)
    graph = str(graphjit.jit(batchnorm, jit_level="O2").graph(x))
    assert graph.count("= mean(") == 1
    assert "std(%x, %mean) {axis=0, keepdims=True, kw=('mean',)} : f32[1,3,3,4]" in graph


def test_a_mean_without_keepdims_is_expanded():
    graph = str(graphjit.jit(standardize, jit_level="O2").graph(np.ones((5, 4))))
    assert graph.count("= mean(") == 1 and "expand_dims(%mean, 0) : f64[1,4]" in graph
    assert "kw=('mean',)" in graph and "var(%data, " in graph


def test_not_shared_when_nothing_matches():
    graph = str(graphjit.jit(whole, jit_level="O2").graph(np.ones((5, 4))))
    assert "kw=" not in graph                      # a mean over every axis without keepdims: a scalar
    graph = str(graphjit.jit(integers, jit_level="O2").graph(np.ones((5, 4), dtype=np.int64)))
    assert "kw=" not in graph
    graph = str(graphjit.jit(batchnorm, jit_level="O1").graph(np.ones((5, 4))))
    assert "kw=" not in graph                      # an O2 pass


def test_a_write_between_keeps_two_means():
    graph = str(graphjit.jit(written_between, jit_level="O2").graph(np.ones((5, 4))))
    assert graph.count("= mean(") == 2
    check(written_between, np.arange(20.0).reshape(5, 4))


@pytest.mark.parametrize("level,mode", CONFIGS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_equal_to_numpy(level, mode, dtype):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((7, 3, 4, 5)) * 1e3 + 1e5).astype(dtype)
    check(batchnorm, x, level, mode)
    check(over_axes, x, level, mode)
    check(standardize, x[:, 0, 0, :], level, mode)
    check(standardize, x[:, 0, 0, 0], level, mode)           # 1-d: a 0-d mean against a scalar
    check(whole, x, level, mode)
    check(integers, (x[:, :, 0, 0] * 10).astype(np.int64), level, mode)


@settings(max_examples=30, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from([0.1, 0.2, 0.3, 1e8, -1e-8, 3.0, np.inf, np.nan, 1 / 3]), min_size=2, max_size=12),
       st.sampled_from(["float32", "float64"]))
def test_any_values(values, dtype):
    x = np.array(values * 3, dtype=dtype).reshape(3, -1)
    with np.errstate(all="ignore"):
        check(standardize, x.T.copy())
        check(batchnorm, x)


def normalized_loss(x):
    y = batchnorm(x)
    m, s, v, z = standardize(x[:, 0, 0, :])
    return (y * y * np.arange(y.shape[-1])).sum() + (m * s).sum() + v.sum() + (z * z * z).sum()


def test_gradient_through_a_shared_mean():
    """The std's derivative in its `mean=` is zero at the mean itself: the gradient is unchanged."""
    x = np.random.default_rng(2).random((5, 2, 2, 3))
    grad = graphjit.grad(graphjit.jit(normalized_loss, jit_level="O2"))(x)
    numeric = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += 1e-6
        down[i] -= 1e-6
        numeric[i] = (normalized_loss(up) - normalized_loss(down)) / 2e-6
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-6)
