"""NEP 50 scalar types through loops and branches: compiled equals eager in value AND type.

An accumulator that starts as a Python number becomes the NumPy scalar type of what it adds
(`0.0 + np.float32` is np.float32), may stay the Python number (a loop that runs zero times, a
branch not taken) or become a Python number (`0j + np.float64` is a Python complex). The compiler
types these merges as unions (`f32[]|float`, graph/types.py) and ops member by member
(graph/promotion.py). Here the programs run eagerly and compiled at O0/O1/O2, through the emitted
code and the interpreter; results must have the same Python/NumPy type, dtype and value. The programs
are in tests/nep50_programs.py.

Data are small integers stored in the array's dtype, so every float sum is exact whatever order a
vectorized reduction adds in, and results compare exactly. Integer data may overflow a small dtype:
the result wraps exactly as in eager NumPy (a vectorized sum does not repeat NumPy's scalar
overflow RuntimeWarning, as the Numba kernels do not either: docs/numba.md); warnings are not compared.
"""

import copy
import math
import os
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import graphjit
import nep50_programs
from nep50_programs import (acc_loop, acc_scaled, acc_then_loop, branch_merge, bool_any, bool_or, counted,
                            first_iteration_weak, float64_times, mixed_branches, rowwise_normalize_loops,
                            running_max, while_acc)

CONFIGS = [(level, mode) for level in ("O0", "O1", "O2") for mode in ("auto", "no_sink")]


# --- comparison ------------------------------------------------------------------------------

def outcome(fn, args):
    args = copy.deepcopy(args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*args), args
        except Exception as e:  # noqa: BLE001 - the same exception is the expected outcome
            return ("raised", type(e), str(e)), args


def same(a, b) -> bool:
    """Same type (Python vs NumPy scalar, dtype, shape) and the same value (NaN equals NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(b, (np.ndarray, np.generic)):
        return a.dtype == b.dtype and np.shape(a) == np.shape(b) and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    if isinstance(b, (float, complex)):
        return a == b or (a != a and b != b)
    return a == b


def check(fn, *args, configs=CONFIGS):
    expected = outcome(fn, args)
    for level, mode in configs:
        got = outcome(graphjit.jit(fn, jit_level=level, exec_mode=mode), args)
        assert same(got, expected), (fn.__name__, level, mode, got, expected)


def small_ints(dtype, n, rng, wide=False):
    """n small integers (or, `wide`, integers that overflow int8 sums) stored as `dtype`."""
    dt = np.dtype(dtype)
    lo, hi = (-100, 100) if wide else (-3, 4)
    if dt.kind in "ub":
        lo = 0
    values = rng.integers(lo, hi, n)
    return values.astype(dt) if dt.kind != "b" else (values % 2).astype(bool)


DTYPES = ["float16", "float32", "float64", "int8", "int32", "int64", "uint8", "bool", "complex64", "complex128"]
INITS = [0, 1, 0.0, 0.5, 0j, False, True, np.float16(0), np.float32(0), np.float64(0), np.int8(0), np.int32(0),
         np.int64(0), np.uint8(0), np.bool_(False), np.complex64(0)]


# --- fixed cases, every configuration ------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "int32", "bool", "complex64"])
@pytest.mark.parametrize("init", [0, 0.0, 0j, False, np.float32(0), np.int32(0)], ids=repr)
def test_accumulators(dtype, init, rng):
    for n in (0, 1, 4):
        x = small_ints(dtype, n, rng)
        check(acc_loop, x, init)
        check(acc_scaled, x, init)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "complex128"])
def test_a_value_computed_by_a_loop_is_typed_after_it(dtype, rng):
    for n in (0, 3):
        check(acc_then_loop, small_ints(dtype, n, rng), small_ints("float32", 3, rng), 0.0)
        check(acc_then_loop, small_ints(dtype, n, rng), small_ints("int8", 3, rng), 0)
        check(while_acc, small_ints(dtype, n, rng), 0.0)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "int64", "complex64"])
@pytest.mark.parametrize("c", [1, -1])
def test_branch_merges(dtype, c, rng):
    x = small_ints(dtype, 4, rng)
    check(branch_merge, x, 0.5, c)
    check(branch_merge, x, 2, c)
    check(mixed_branches, x, c)


def test_python_int_accumulator_of_int32_elements_wraps_like_numpy(rng):
    big = np.full(4, 2 ** 30, np.int32)
    check(acc_loop, big, 0)
    assert type(acc_loop(big, 0)) is np.int32
    check(acc_loop, small_ints("int8", 7, rng, wide=True), 0)
    check(acc_loop, np.full(3, 2 ** 40), np.int8(0))          # int8 + int64 elements: int64


def test_python_int_out_of_range_of_the_elements_raises_like_numpy():
    check(acc_loop, np.ones(3, np.int8), 1000)               # NEP 50: OverflowError for int8 + 1000


def test_float64_scalar_times_elements(rng):
    for dtype in ("float16", "float32", "int32"):
        check(float64_times, small_ints(dtype, 5, rng), 3)
        check(float64_times, small_ints(dtype, 5, rng), 0.5)


def test_bool_accumulators(rng):
    for x in (small_ints("float32", 5, rng), np.zeros(4), np.zeros(0)):
        check(bool_any, x)
        check(bool_or, x)
        check(counted, x)


def test_running_maximum(rng):
    for dtype in ("float32", "int8", "float64"):
        for init in (-math.inf, 0, np.float32(-5)):
            check(running_max, small_ints(dtype, 4, rng), init)


def test_complex_accumulator_of_float64_is_a_python_complex(rng):
    x = small_ints("float64", 4, rng)
    assert type(acc_loop(x, 0j)) is complex
    check(acc_loop, x, 0j)


def test_first_iteration_with_the_python_float(rng):
    for xd, yd in (("float32", "float16"), ("float64", "float32"), ("float16", "float16")):
        check(first_iteration_weak, small_ints(xd, 3, rng), small_ints(yd, 4, rng))


def test_rowwise_normalize_matches(rng):
    for dtype in ("float32", "float64"):
        x = rng.random((3, 5)).astype(dtype)
        for level, mode in CONFIGS:
            got = graphjit.jit(rowwise_normalize_loops, jit_level=level, exec_mode=mode)(x)
            want = rowwise_normalize_loops(x)
            assert got.dtype == want.dtype
            np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == "float32" else 1e-12)


# --- which loops vectorize -------------------------------------------------------------------------

def loops_left(fn, *args) -> list:
    """What the O2 graph says about each loop it keeps (`vectorize='no: ...'`), and whether any is left."""
    graph = str(graphjit.jit(fn, jit_level="O2").graph(*args))
    return [line.strip() for line in graph.splitlines() if "for_range(" in line or "while(" in line]


def test_every_loop_of_the_rowwise_nest_vectorizes(rng):
    for dtype in ("float32", "float64"):
        x = rng.random((4, 6)).astype(dtype)
        assert loops_left(rowwise_normalize_loops, x) == []
        assert "x.sum(axis=1)" in graphjit.jit(rowwise_normalize_loops, jit_level="O2").source(x)


def test_loops_after_an_accumulation_vectorize(rng):
    x, y = small_ints("float32", 5, rng), small_ints("float32", 3, rng)
    assert loops_left(acc_then_loop, x, y, 0.0) == []
    assert loops_left(branch_merge, x, 0.5, 1) == []


# --- property: random dtype pairs and accumulator kinds ----------------------------------------

PROGRAMS = [("acc_loop", lambda x, y, init, c: (x, init)), ("acc_scaled", lambda x, y, init, c: (x, init)),
            ("acc_then_loop", lambda x, y, init, c: (x, y, init)), ("while_acc", lambda x, y, init, c: (x, init)),
            ("branch_merge", lambda x, y, init, c: (x, init, c)), ("running_max", lambda x, y, init, c: (x, init))]


@settings(max_examples=int(os.environ.get("GRAPHJIT_HYPOTHESIS_EXAMPLES", "40")), deadline=None, derandomize=True,
          database=None)
@given(program=st.sampled_from(PROGRAMS), x_dtype=st.sampled_from(DTYPES), y_dtype=st.sampled_from(DTYPES),
       init=st.sampled_from(INITS), n=st.integers(0, 3), wide=st.booleans(), c=st.sampled_from([1, -1]),
       seed=st.integers(0, 2 ** 16), config=st.sampled_from(CONFIGS))
def test_compiled_equals_eager_for_dtype_pairs_and_inits(program, x_dtype, y_dtype, init, n, wide, c, seed,
                                                         config):
    name, make = program
    rng = np.random.default_rng(seed)
    x = small_ints(x_dtype, n if name != "branch_merge" else n + 1, rng, wide)
    y = small_ints(y_dtype, 3, rng)
    check(getattr(nep50_programs, name), *make(x, y, init, c), configs=[config, ("O2", "auto")])
