"""`math` functions in vectorized loops raise exactly where the loop raises.

`math.log(-1.0)` raises ValueError and `math.exp(1000.0)` OverflowError, where `np.log` and
`np.exp` return NaN/inf with a RuntimeWarning. The vectorizer tests the arguments against the
set each function may raise for (graph/vectorize/values.py, MATH_FUNCS) and runs the original
loop when any is in it. Compared with eager Python: the exception (type and message), what the
loop wrote before it (a partial write to an argument), the result, and the warnings (none).
"""

import math
import os
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import graphjit
from graphjit.graph.vectorize.values import MATH_FUNCS

EDGES = [-math.inf, -1e300, -710.0, -2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.0, 709.5, 710.0, 3.2e306,
         1e300, math.inf, math.nan]
UNARY = sorted(name for name in MATH_FUNCS if name not in ("atan2", "hypot", "copysign"))


def _load_unary_kernels() -> dict:
    """`kernel_<name>(x, out)`: `out[i] = math.<name>(x[i]) * 2.0`, one per function, from a file
    (graphjit compiles functions whose source it can read)."""
    import importlib.util
    import tempfile
    src = "import math\n\n"
    for name in UNARY:
        src += (f"def kernel_{name}(x, out):\n    for i in range(x.shape[0]):\n"
                f"        out[i] = math.{name}(x[i]) * 2.0\n    return out\n\n\n")
    path = os.path.join(tempfile.mkdtemp(prefix="gj_math_"), "math_kernels.py")
    with open(path, "w") as f:
        f.write(src)
    spec = importlib.util.spec_from_file_location("math_kernels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {name: getattr(module, f"kernel_{name}") for name in UNARY}


KERNELS = _load_unary_kernels()


def _make_unary(name):
    return KERNELS[name]


def outcome(fn, *args):
    """(result or exception, arguments after the call, warning categories)."""
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = fn(*args)
        except (ValueError, OverflowError, IndexError, TypeError) as e:
            result = (type(e), str(e))
    return result, args, sorted({w.category.__name__ for w in caught})


def same(a, b):
    raised = [isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], type) for v in (a, b)]
    if any(raised):   # (exception type, message)
        return a == b
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(
            type(x) is type(y) and same(x, y) for x, y in zip(a, b))
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and np.allclose(a, b, rtol=1e-14, atol=0, equal_nan=True)
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-14)
    return a == b


def check(fn, *args, exec_modes=("auto", "no_sink")):
    expected = outcome(fn, *args)
    for mode in exec_modes:
        jitted = graphjit.jit(fn, jit_level="O2", exec_mode=mode)
        got = outcome(jitted, *args)
        assert same(got[0], expected[0]), (mode, got, expected)
        assert same(got[1], expected[1]), (mode, got, expected)
        assert got[2] == expected[2], (mode, got, expected)
    return jitted


def vectorized(jitted, *args) -> bool:
    return "vectorized loop" in str(jitted.graph(*args))


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("edge", EDGES)
def test_unary_raises_where_the_loop_does(name, edge):
    kernel = _make_unary(name)
    x = np.array([0.25, 0.5, 0.75, edge, 0.5, 0.25])
    out = np.full(6, -7.0)
    jitted = check(kernel, x, out, exec_modes=("auto",))
    assert vectorized(jitted, x, out)


@pytest.mark.parametrize("name", UNARY)
def test_unary_through_the_interpreter(name):
    kernel = _make_unary(name)
    for edge in (-1.0, 710.0, math.inf, math.nan, 0.5):
        check(kernel, np.array([0.5, edge, 0.25]), np.zeros(3), exec_modes=("no_sink",))


@pytest.mark.parametrize("name", ["atan2", "hypot", "copysign"])
def test_binary_functions_never_raise(name):
    fn = getattr(math, name)

    def kernel(x, y):
        out = np.empty_like(x)
        for i in range(x.shape[0]):
            out[i] = fn(x[i], y[i])
        return out
    x = np.array(EDGES)
    check(kernel, x, x[::-1].copy())


def test_a_reduction_of_logs_raises_like_the_loop():
    def log_sum(x):
        s = 0.0
        for i in range(x.shape[0]):
            s += math.log(x[i])
        return s
    j = check(log_sum, np.array([1.0, 2.0, 3.0]))
    assert vectorized(j, np.array([1.0, 2.0, 3.0]))
    check(log_sum, np.array([1.0, 0.0, 3.0]))
    check(log_sum, np.array([1.0, math.nan, 3.0]))


def test_a_loop_invariant_call_raises_only_when_the_loop_runs():
    def scaled(x, c):
        out = np.zeros_like(x)
        for i in range(x.shape[0]):
            out[i] = x[i] * math.sqrt(c)
        return out
    for n in (0, 1, 4):
        for c in (4.0, -1.0):
            check(scaled, np.arange(float(n)), c)


def test_a_masked_branch_tests_only_its_elements():
    def clipped_log(x):
        s = 0.0
        for i in range(x.shape[0]):
            if x[i] > -5.0:
                s += math.log(x[i])
        return s
    check(clipped_log, np.array([2.0, -7.0, 3.0]))      # only 2 and 3 reach math.log
    check(clipped_log, np.array([2.0, -1.0, 3.0]))      # -1 does: ValueError


def test_nested_loops_test_the_whole_nest_once():
    def roots(x):
        out = np.zeros_like(x)
        for i in range(x.shape[0]):
            for j in range(x.shape[1]):
                out[i, j] = math.sqrt(x[i, j])
        return out
    x = np.arange(12.0).reshape(3, 4)
    j = check(roots, x)
    source = j.source(x)
    assert "np.sqrt(x)" in source and source.count(".any():") == 2, source
    bad = x.copy()
    bad[2, 1] = -1.0
    check(roots, bad)


def test_a_new_array_the_loop_fills_is_made_only_where_the_loop_runs():
    def distances(p):
        n = p.shape[0]
        d = np.empty((n, n))
        for i in range(n):
            for j in range(n):
                d[i, j] = math.sqrt((p[i, 0] - p[j, 0]) ** 2 + (p[i, 1] - p[j, 1]) ** 2)
        return d
    p = np.random.default_rng(3).random((5, 2))
    j = check(distances, p)
    source = j.source(p)
    assert source.index("np.empty((5, 5))") > source.index(".any():"), source   # only the loop needs it
    check(distances, np.zeros((0, 2)))


def test_partial_writes_to_an_argument_match_the_loop():
    def into(x, out):
        for i in range(x.shape[0]):
            out[i] = math.exp(x[i])
    x = np.array([0.0, 1.0, 800.0, 2.0])
    out = np.zeros(4)
    expected = outcome(into, x, out)
    assert expected[0][0] is OverflowError and expected[1][1][:2].tolist() == [1.0, math.e]
    check(into, x, out)


def test_a_write_before_the_call_keeps_the_loop_when_it_could_see_it():
    def shifted(x):
        for i in range(x.shape[0]):
            x[i] = x[i] - 1.0
            x[i] = math.log(x[i])
    x = np.array([3.0, 2.0, 1.0, 4.0])
    check(shifted, x)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(UNARY),
       st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                          st.floats(-3.0, 3.0), st.floats(700.0, 720.0)), min_size=0, max_size=8))
def test_any_arguments(name, values):
    kernel = _make_unary(name)
    x = np.array(values, dtype=np.float64)
    check(kernel, x, np.zeros(len(values)), exec_modes=("auto",))


def test_exp_in_a_branch_is_computed_everywhere_and_tested_everywhere():
    def soft(x):
        out = np.empty_like(x)
        for i in range(x.shape[0]):
            y = math.exp(x[i]) if x[i] < 5.0 else 0.0
            out[i] = y + 1.0
        return out
    x = np.array([0.0, 1.0, 2.0, 3.0])
    j = check(soft, x)
    assert "np.where" in j.source(x) and vectorized(j, x)
    check(soft, np.array([0.0, 800.0, 2.0]))      # 800 never reaches math.exp: the loop runs, no warning
    check(soft, np.array([0.0, -800.0, 2.0]))


def test_log_with_a_base_is_not_a_ufunc_with_an_out_argument():
    def log_base(x, b, out):
        for i in range(x.shape[0]):
            out[i] = math.log(x[i], b[i])
        return out
    check(log_base, np.array([8.0, 9.0]), np.array([2.0, 3.0]), np.zeros(2))


def test_an_index_out_of_range_raises_after_the_same_writes():
    def shifted(x, out):
        for i in range(x.shape[0]):
            out[i] = x[i + 1] * 2.0
        return out

    def wrapped(x, out):
        for i in range(x.shape[0]):
            out[i] = x[i - 1] * 2.0     # x[-1] at i = 0: Python wraps around, no error
        return out
    x = np.arange(4.0)
    check(shifted, x, np.zeros(4))      # IndexError at i = 3, after out[0..2] were written
    j = check(wrapped, x, np.zeros(4))
    assert "(an index out of range)" not in str(j.graph(x, np.zeros(4)))   # provably in range: no test


def test_a_loop_invariant_call_is_a_python_float():
    def scaled_sum(x, c):
        s = 0.0
        k = 0.0
        for i in range(x.shape[0]):
            k = math.atanh(c)          # the same in every iteration
            s += x[i] * k
        return s, k
    for c in (0.5, 1.0, 2.0, np.float64(0.5), np.float64(1.0), np.float64(-3.0)):   # np.float64: a run-time value
        for n in (0, 3):
            j = check(scaled_sum, np.arange(float(n)), c)
    assert vectorized(j, np.arange(3.0), np.float64(0.5))


def test_a_write_to_another_array_before_the_call_still_vectorizes():
    def two_outputs(x, y, z):
        for i in range(x.shape[0]):
            y[i] = 2.0 * x[i]
            z[i] = math.log(x[i])
        return y, z
    x = np.array([1.0, 2.0, 3.0])
    j = check(two_outputs, x, np.zeros(3), np.zeros(3))
    assert vectorized(j, x, np.zeros(3), np.zeros(3))
    check(two_outputs, np.array([1.0, -2.0, 3.0]), np.zeros(3), np.zeros(3))   # y[0] written, then ValueError
    for values in ([1.0, 2.0, 3.0], [0.25, 0.5, 4.0]):   # y is x: the alias guard runs the loop
        results = []
        for fn in (two_outputs, graphjit.jit(two_outputs, jit_level="O2")):
            x = np.array(values)
            try:
                fn(x, x, np.zeros(3))
                results.append(("ok", x.tolist()))
            except ValueError as e:
                results.append((str(e), x.tolist()))
        assert results[0] == results[1]


def test_a_gather_a_test_needs_is_not_run_before_the_test():
    def guarded_root(x, y, t):
        for i in range(x.shape[0]):
            if x[i] > t:
                y[i] = math.sqrt(x[i + 1])     # out of range at the last i: after y[:9] were written
            else:
                y[i] = -1.0
        return y
    check(guarded_root, np.arange(1.0, 11.0), np.zeros(10), 5.0)
    check(guarded_root, np.arange(1.0, 11.0)[::-1].copy(), np.zeros(10), 5.0)


@pytest.mark.parametrize("c", [np.float32(2.0), np.float16(2.0), np.float32(100.0), 10 ** 400, 3])
def test_a_loop_invariant_call_converts_its_argument_to_float_first(c):
    def exp_added(x, c):
        for i in range(x.shape[0]):
            x[i] = math.exp(c) + x[i]
        return x

    def root(x, c):
        r = 0.0
        for i in range(x.shape[0]):
            r = math.sqrt(c)
        return r
    for fn in (exp_added, root):
        for n in (0, 4):
            check(fn, np.ones(n), c)


def test_a_band_with_a_wide_box_is_not_made_a_rectangle():
    def band(x, n):
        s = 0.0
        for i in range(n):
            for j in range(1000 * i, 1000 * i + 2):
                s += x[j]
        return s
    x = np.arange(6003.0)
    j = check(band, x, 6)
    assert "for i in range(" in j.source(x, 6)   # the outer loop stays: its box would be 500x the work


# --- Python float arithmetic is silent: overflow gives inf, inf - inf gives NaN, no warning ----------
# `math.fabs(x[i])` is a Python float, and so is what it is combined with; NumPy's whole-array form of
# the same arithmetic warns (RuntimeWarning: overflow/invalid value). The vectorizer marks that
# arithmetic `quiet` (graph/attrs.py) and it runs in np.errstate; NumPy scalar arithmetic (x[i] * c)
# warns in eager Python and keeps warning compiled.

def doubled(x, out):
    for i in range(x.shape[0]):
        out[i] = math.fabs(x[i]) * 2.0
    return out


def minus_inf(x, out):
    for i in range(x.shape[0]):
        out[i] = math.fabs(x[i]) - math.inf
    return out


def big_sum(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += math.fabs(x[i]) * 1e300
    return s


def mixed(x, out):
    for i in range(x.shape[0]):
        out[i] = x[i] * 1e300 + math.fabs(x[i]) * 1e300   # NumPy scalar * float warns; Python floats do not
    return out


QUIET_KERNELS = {"doubled": doubled, "minus_inf": minus_inf, "mixed": mixed}
HUGE = [0.5, 1.7e308, -1.7e308, math.inf, -math.inf, 1e9, 2.0, math.nan, 0.0, 3.0]


@pytest.mark.parametrize("name", sorted(QUIET_KERNELS))
def test_python_float_arithmetic_warns_as_eager_does(name):
    x = np.array(HUGE * 4)
    jitted = check(QUIET_KERNELS[name], x, np.zeros(len(x)))
    assert vectorized(jitted, x, np.zeros(len(x)))
    source = jitted.source(x, np.zeros(len(x)))
    assert "with np.errstate(over='ignore', invalid='ignore'):" in source, source
    if name == "mixed":
        assert outcome(QUIET_KERNELS[name], x, np.zeros(len(x)))[2] == ["RuntimeWarning"]


def test_a_python_float_sum_overflows_silently():
    x = np.array([1e8] * 40 + [2.0])
    jitted = check(big_sum, x)
    assert vectorized(jitted, x) and outcome(big_sum, x)[2] == []
    assert "t = t.sum()" in jitted.source(x).split("with np.errstate(over='ignore', invalid='ignore'):")[1]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(sorted(QUIET_KERNELS) + ["big_sum"]),
       st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(HUGE)),
                min_size=0, max_size=40))
def test_warnings_equal_eager_for_any_values(name, values):
    x = np.array(values, dtype=np.float64)
    if name == "big_sum":
        check(big_sum, x)
    else:
        check(QUIET_KERNELS[name], x, np.zeros(len(values)))
