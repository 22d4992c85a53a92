"""Indices read from data in a loop (`x[idx[i]]`, graph/vectorize/indexing.py, part "data"): one
gather for all iterations, its indices tested against the axis first (an index out of range runs
the loop, which raises at the same iteration after the same writes); loops too short to pay for
the test stay loops (cost rule MIN_DATA_GATHER)."""

import copy

import numpy as np
import pytest

import graphjit
from graphjit.graph.vectorize.indexing import MIN_DATA_GATHER

N = MIN_DATA_GATHER + 8


def gather(x, idx):
    out = np.empty(idx.size)
    for i in range(idx.size):
        out[i] = x[idx[i]] * 2.0
    return out


def gather_rows(m, idx):
    out = np.zeros((idx.size, m.shape[1]))
    for i in range(idx.size):
        out[i] = m[idx[i]] + m[idx[i], 0]
    return out


def gather_and_write(x, idx):
    for i in range(idx.size):
        x[i] = x[idx[i]] + 1.0
    return x


def check(fn, args, level="O2", exec_mode="auto"):
    try:
        expected, error = fn(*copy.deepcopy(args)), None
    except IndexError as e:
        expected, error = None, e
    jitted = graphjit.jit(fn, jit_level=level, exec_mode=exec_mode)
    if error is not None:
        with pytest.raises(IndexError) as info:
            jitted(*copy.deepcopy(args))
        assert str(info.value) == str(error)
        return jitted
    np.testing.assert_array_equal(jitted(*copy.deepcopy(args)), expected)
    return jitted


@pytest.mark.parametrize("level", ["O0", "O1", "O2"])
@pytest.mark.parametrize("exec_mode", ["auto", "no_sink"])
def test_gathers_equal_eager(level, exec_mode):
    rng = np.random.default_rng(2)
    x, m = rng.random(10), rng.random((10, 3))
    for dtype in (np.int64, np.uint32, np.int16):
        idx = rng.integers(0, 10, N).astype(dtype)
        check(gather, (x, idx), level, exec_mode)
        check(gather_rows, (m, idx), level, exec_mode)
    check(gather, (x, rng.integers(-10, 10, N)), level, exec_mode)      # negative indices wrap


def test_the_loop_becomes_one_gather_behind_a_range_test():
    rng = np.random.default_rng(3)
    args = (rng.random(10), rng.integers(0, 10, N))
    jitted = check(gather, args)
    graph = str(jitted.graph(*args))
    assert "vectorized loop" in graph and "an index out of range" in graph


def test_an_index_out_of_range_raises_as_the_loop_does():
    idx = np.arange(N) % 10
    idx[N // 2] = 12
    check(gather, (np.ones(10), idx))
    idx[N // 2] = -11
    check(gather_rows, (np.ones((10, 2)), idx))


def test_loops_that_stay_loops():
    rng = np.random.default_rng(4)
    x, idx = rng.random(N), rng.integers(0, N, N)
    jitted = check(gather_and_write, (x, idx))
    assert "carried dependence" in str(jitted.graph(x, idx))
    short = rng.integers(0, 10, 4)
    jitted = check(gather, (x, short))
    assert "the loop is short" in str(jitted.graph(x, short))
