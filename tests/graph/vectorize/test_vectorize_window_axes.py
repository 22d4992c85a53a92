"""Sliding windows read with new axes (`x[:, i:i + k, None]`, graph/vectorize/reads.py
`with_new_axes`): the windows as one strided view, the new axes inserted after; equal to eager
NumPy (float sums in another order: rtol 1e-12 for float64, 1e-5 for float32, the tolerance note
of tests/graph/passes/test_vectorize.py)."""

import copy

import numpy as np
import pytest

import graphjit


def conv_nhwc(x, w):
    k = w.shape[0]
    h, wd = x.shape[1] - k + 1, x.shape[2] - k + 1
    out = np.empty((x.shape[0], h, wd, w.shape[3]), dtype=x.dtype)
    for i in range(h):
        for j in range(wd):
            out[:, i, j, :] = np.sum(x[:, i:i + k, j:j + k, :, np.newaxis] * w[np.newaxis, :, :, :], axis=(1, 2, 3))
    return out


def windows_with_leading_axis(x):
    out = np.zeros((x.shape[0] - 2, 1, 3))
    for i in range(x.shape[0] - 2):
        out[i] = x[None, i:i + 3, 0] * 2.0
    return out


def middle_axis(x):
    out = np.zeros((x.shape[0], x.shape[1] - 1))
    for j in range(x.shape[1] - 1):
        out[:, j] = np.sum(x[:, None, j:j + 2] * np.ones((1, 3, 1)), axis=(1, 2))
    return out


def check(fn, args, level="O2", exec_mode="auto"):
    expected = fn(*copy.deepcopy(args))
    jitted = graphjit.jit(fn, jit_level=level, exec_mode=exec_mode)
    actual = jitted(*copy.deepcopy(args))
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    tol = 1e-5 if expected.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)
    return jitted


@pytest.mark.parametrize("level", ["O0", "O1", "O2"])
@pytest.mark.parametrize("exec_mode", ["auto", "no_sink"])
def test_convolution_with_new_axes_equals_eager(level, exec_mode):
    rng = np.random.default_rng(5)
    for dtype in (np.float32, np.float64):
        x, w = rng.random((2, 6, 5, 3)).astype(dtype), rng.random((2, 2, 3, 4)).astype(dtype)
        check(conv_nhwc, (x, w), level, exec_mode)


def test_both_loops_of_the_convolution_vectorize():
    rng = np.random.default_rng(6)
    args = (rng.random((2, 6, 5, 3)), rng.random((3, 3, 3, 4)))
    jitted = check(conv_nhwc, args)
    graph = str(jitted.graph(*args))
    assert "for_range" not in graph and graph.count("vectorized loop") == 1
    assert "sliding_window_view" in jitted.source(*args)


@pytest.mark.parametrize("fn", [windows_with_leading_axis, middle_axis])
def test_new_axes_anywhere_in_the_index(fn):
    x = np.random.default_rng(8).random((6, 5))
    jitted = check(fn, (x,))
    assert "vectorized loop" in str(jitted.graph(x))
