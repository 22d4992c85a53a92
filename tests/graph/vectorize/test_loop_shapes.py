"""Real loop shapes (tests/shape_programs.py) vectorize at O2 and compute what eager Python computes.

For each kernel: the same result (value up to the rounding of reordered float sums, see the
tolerance note in tests/graph/passes/test_vectorize.py; exact dtype and Python/NumPy scalar type)
and the same argument mutation, eager and compiled at O0/O1/O2, through the emitted NumPy and the
interpreter, on sizes 0, 1, 2 and 7 and on inputs holding NaN; no warning the eager loop does not
give (a branch's np.log runs only on the elements that take the branch); the `vectorize` log and
the generated code say each loop was vectorized. Hypothesis draws shapes (empty ones included) and
values (NaN, infinities, values outside the ufuncs' domains) for the branchy kernels.
"""

import copy
import logging
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import graphjit
import shape_programs as S

LEVELS = ["O0", "O1", "O2"]
MODES = ["auto", "no_sink"]


def _r(rng, *shape):
    return rng.standard_normal(shape) * 2.0


def _with_nan(a):
    a = np.array(a, dtype=float)
    if a.size:
        a.flat[a.size // 2] = np.nan
    return a


# name -> make_args(rng, n); every kernel vectorizes completely at O2
CASES = {
    "relu_dense": lambda r, n: (_r(r, n, 3), _r(r, 3), _r(r, n)),
    "clamp_dot": lambda r, n: (_r(r, n, 4), _r(r, 4), -0.5, 0.5),
    "piecewise_log": lambda r, n: (_r(r, n),),
    "piecewise_math": lambda r, n: (_r(r, n),),
    "softplus": lambda r, n: (_r(r, n) * 400.0,),
    "branch_value": lambda r, n: (_r(r, n),),
    "log_sqrt_sum": lambda r, n: (_r(r, n),),
    "log_max": lambda r, n: (_r(r, n),),
    "ndindex_blend": lambda r, n: (_r(r, n, 3, 2), _r(r, n, 3, 2), 0.25),
    "ndindex_threshold": lambda r, n: (_r(r, n, n + 1), 0.5),
    "ndindex_grid": lambda r, n: (n, 3),
    "product_scale": lambda r, n: (_r(r, n, 4), _r(r, n), _r(r, 4)),
    "center_rows": lambda r, n: (_r(r, n, 5),),
    "standardize_rows": lambda r, n: (_r(r, n, 5),),
    "layer_norm": lambda r, n: (_r(r, n, 5), _r(r, 5), _r(r, 5), 1e-5),
    "softmax_rows": lambda r, n: (_r(r, n, 5),),
}


def same(actual, expected):
    """Same value (NaN where NaN), dtype, shape, and Python or NumPy scalar type."""
    if isinstance(expected, BaseException):
        assert type(actual) is type(expected), f"expected {type(expected).__name__}, got {actual!r}"
        return
    if not isinstance(expected, np.ndarray):
        assert type(actual) is type(expected), f"type {type(actual).__name__} != {type(expected).__name__}"
    a, e = np.asarray(actual), np.asarray(expected)
    assert a.dtype == e.dtype and a.shape == e.shape, (a.dtype, a.shape, e.dtype, e.shape)
    np.testing.assert_allclose(a, e, rtol=1e-12, atol=1e-12, equal_nan=True)


def outcome(fn, args):
    """(result or exception, the arguments after the call, the RuntimeWarnings it gave)."""
    args = copy.deepcopy(args)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = fn(*args)
        except Exception as e:  # noqa: BLE001 - the compiled code must raise the same
            result = e
    # NumPy says "in scalar divide" of NumPy scalars and "in divide" of arrays: the same warning
    return result, args, sorted({str(w.message).replace("scalar ", "") for w in caught
                                 if issubclass(w.category, RuntimeWarning)})


_JITTED: dict = {}


def jitted(fn, **options):
    """One jit object per kernel and options: hypothesis examples of one shape compile once."""
    key = (fn, tuple(sorted(options.items())))
    if key not in _JITTED:
        _JITTED[key] = graphjit.jit(fn, **options)
    return _JITTED[key]


def check(fn, args, **options):
    expected, eager_args, eager_warnings = outcome(fn, args)
    actual, compiled_args, compiled_warnings = outcome(jitted(fn, **options), args)
    same(actual, expected)
    for a, e in zip(compiled_args, eager_args):
        if isinstance(e, np.ndarray):
            same(a, e)
    assert compiled_warnings == eager_warnings


@pytest.mark.parametrize("nan", [False, True])
@pytest.mark.parametrize("n", [0, 1, 2, 7])
@pytest.mark.parametrize("name", sorted(CASES))
def test_o2_matches_eager(name, n, nan, rng):
    args = CASES[name](rng, n)
    if nan:
        args = tuple(_with_nan(a) if isinstance(a, np.ndarray) else a for a in args)
    for mode in MODES:
        check(getattr(S, name), args, jit_level="O2", exec_mode=mode)


@pytest.mark.parametrize("level", ["O0", "O1"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_lower_levels_match_eager(name, level, rng):
    for mode in MODES:
        check(getattr(S, name), CASES[name](rng, 7), jit_level=level, exec_mode=mode)


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_loop_is_vectorized(name, rng, caplog):
    fn = getattr(S, name)
    args = CASES[name](rng, 7)
    with caplog.at_level(logging.INFO, logger="graphjit.vectorize"):
        graph = str(graphjit.jit(fn, jit_level="O2").graph(*args))
    lines = [r.getMessage() for r in caplog.records if r.name == "graphjit.vectorize"]
    assert lines and not [ln for ln in lines if ": no: " in ln], lines
    loops = [ln for ln in graph.splitlines() if "= for_range(" in ln or "= while(" in ln]
    # a loop left is only the fallback of a vectorized form guarded by a test (math.log could raise)
    assert all("kept as the fallback of its vectorized form" in ln for ln in loops), graph


# What the generated code looks like: whole-array NumPy, and branches masked where they could warn.
SOURCES = {
    "relu_dense": ["W @ x", "np.where("],
    "piecewise_log": ["np.log(x[t])", "np.sqrt(x[", "np.exp(x["],
    "log_sqrt_sum": ["np.concatenate((", ".sum()", "if t.any():"],
    "ndindex_blend": ["out = 0.25 * a", "out += 0.75 * b"],
    "ndindex_grid": ["np.arange("],
    "center_rows": ["a.sum(axis=1)", "a - mean[:, None]"],
    "layer_norm": ["x.sum(axis=1)", "inv_1 = 1.0 / "],
}


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_generated_code(name, rng):
    args = CASES[name](rng, 7)
    source = graphjit.jit(getattr(S, name), jit_level="O2").source(*args)
    for fragment in SOURCES[name]:
        assert fragment in source, source


def test_an_ndindex_loop_is_a_nest_of_range_loops(rng):
    """Before the vectorizer (O1): one `for_range` per axis, whose indices the body reads; at O2 none."""
    a = _r(rng, 4, 3, 2)
    assert str(graphjit.jit(S.ndindex_blend, jit_level="O1").graph(a, a, 0.5)).count("= for_range(0, ") == 3
    assert "for " not in graphjit.jit(S.ndindex_blend, jit_level="O2").source(a, a, 0.5).split("np.ndindex")[1]


def test_a_branch_that_would_warn_is_masked(rng):
    """np.log of the negative elements the `else` branch takes is never computed: no warning."""
    x = np.array([-3.0, -0.5, 0.0, 0.25, 2.0, np.nan, np.inf, -np.inf])
    check(S.piecewise_log, (x,), jit_level="O2")
    check(S.softplus, (np.array([-800.0, -30.0, 0.0, 30.0, 800.0]),), jit_level="O2")


def test_math_branches_raise_as_eager():
    """math.log(0.0) is not reached by the branches; math.sqrt of a NaN element is (NaN, as eager)."""
    for x in (np.array([0.5, 2.0, -1.0]), np.array([np.nan, 1.5])):
        for mode in MODES:
            check(S.piecewise_math, (x,), jit_level="O2", exec_mode=mode)


def test_standardize_zero_variance_divides_as_eager():
    """A constant row: math.sqrt(0.0) is 0.0, and the NumPy float divided by it warns in both."""
    check(S.standardize_rows, (np.ones((2, 3)),), jit_level="O2")
    check(S.layer_norm, (np.ones((2, 3)), np.ones(3), np.zeros(3), 0.0), jit_level="O2")


def test_a_sum_with_no_term_keeps_the_python_float():
    """`s = 0.0`; no element takes a branch that adds: s stays the Python float, as eagerly."""
    check(S.log_sqrt_sum, (np.array([-1.0, -2.0, np.nan]),), jit_level="O2")
    check(S.log_max, (np.array([-1.0, -2.0]),), jit_level="O2")


def test_ndindex_loops_that_are_not_nests_stay_as_they_were(rng):
    """`break`, the index read after the loop, a list indexed by the index: unrolled or a table loop."""
    def first_big(a):
        c = 0
        for idx in np.ndindex(a.shape):
            if a[idx] > 1.0:
                break
            c += 1
        return c

    def last_index(a):
        for idx in np.ndindex(a.shape):
            a[idx] += 1.0
        return idx

    def weighted(a):
        w = [1.0, 2.0, 3.0]
        out = np.zeros_like(a)
        for i, j in np.ndindex(a.shape):
            out[i, j] = a[i, j] * w[j]
        return out

    a = _r(rng, 4, 3)
    for fn in (first_big, last_index, weighted):
        for level in LEVELS:
            with warnings.catch_warnings():
                warnings.simplefilter("error", graphjit.GraphjitFallbackWarning)
                check(fn, (a,), jit_level=level)


finite_or_not = st.floats(allow_nan=True, allow_infinity=True, width=64, min_value=None, max_value=None)
vectors = hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=1, min_side=0, max_side=6),
                     elements=st.one_of(st.floats(-50, 50), finite_or_not))
matrices = hnp.arrays(np.float64, hnp.array_shapes(min_dims=2, max_dims=2, min_side=0, max_side=4),
                      elements=st.floats(-50, 50))


HYPOTHESIS = settings(max_examples=25, deadline=None, derandomize=True, database=None)


@HYPOTHESIS
@given(x=vectors)
def test_branchy_kernels_on_any_values(x):
    for fn in (S.piecewise_log, S.piecewise_math, S.branch_value, S.log_sqrt_sum, S.log_max, S.softplus):
        check(fn, (x,), jit_level="O2")


@HYPOTHESIS
@given(a=matrices)
def test_row_nests_and_index_loops_on_any_shape(a):
    for fn, args in ((S.center_rows, (a,)), (S.softmax_rows, (a,)), (S.ndindex_threshold, (a, 0.0)),
                     (S.product_scale, (a, np.ones(a.shape[0]), np.arange(a.shape[1], dtype=float))),
                     (S.relu_dense, (a, np.ones(a.shape[1]), np.zeros(a.shape[0])))):
        check(fn, args, jit_level="O2")
