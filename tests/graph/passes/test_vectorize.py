"""Loop vectorization (O2): every kernel of tests/vector_programs.py gives the eager result, on
random arrays of sizes 0, 1, 2 and 7, through the emitted NumPy and through the interpreter; the
graph says which loops were vectorized and why the others were not; the emitted code is the
NumPy one would write.

NOTE [tolerance]: vectorized float reductions add in another order than the loop (pairwise
summation, BLAS dot products), so they match eager only up to rounding: |vectorized - eager| <=
n * eps * sum(|terms|). On these inputs (values in [0, 1), n <= 7 terms per reduction) that bound
is below 1e-14 relative; the tests use rtol = atol = 1e-12 for float64 and 1e-5 for float32.
Integer and boolean results, and every dtype and Python/NumPy scalar type, must be exact.
"""

import copy
import logging
import warnings

import numpy as np
import pytest

import graphjit
import vector_programs as V
from locations import BENCHMARKS

RTOL = {np.dtype("float64"): 1e-12, np.dtype("float32"): 1e-5}


def _r(rng, *shape):
    return rng.random(shape)


def _idx(rng, n):
    return rng.integers(0, max(n, 1), n) if n else np.zeros(0, dtype=np.int64)


# name -> (make_args(rng, n), expectation)
CASES = {
    "elem_chain": (lambda r, n: (_r(r, n), _r(r, n)), "vectorized"),
    "math_calls": (lambda r, n: (_r(r, n),), "vectorized"),
    "dot": (lambda r, n: (_r(r, n), _r(r, n)), "vectorized"),
    "total": (lambda r, n: (_r(r, n),), "vectorized"),
    "product": (lambda r, n: (_r(r, n) + 0.5,), "vectorized"),
    "maxes": (lambda r, n: (_r(r, n),), "vectorized"),
    "tern_max": (lambda r, n: (_r(r, n),), "vectorized"),
    "any_all": (lambda r, n: (_r(r, n),), "vectorized"),
    "count_sum": (lambda r, n: (_r(r, n),), "vectorized"),
    "matmul3": (lambda r, n: (_r(r, n, 3), _r(r, 3, n)), "vectorized"),
    "matvec": (lambda r, n: (_r(r, n, 4), _r(r, 4)), "vectorized"),
    "stencil3": (lambda r, n: (_r(r, n),), "vectorized"),
    "jacobi2d": (lambda r, n: (_r(r, n, n + 1),), "vectorized"),
    "heat": (lambda r, n: (_r(r, n), 3), "partial"),
    "tri_upper_sum": (lambda r, n: (_r(r, n, n),), "vectorized"),     # triangular nests: a masked rectangle
    "tri_lower_store": (lambda r, n: (_r(r, n, n), _r(r, n, n)), "vectorized"),
    "tri_row_products": (lambda r, n: (_r(r, n, n),), "vectorized"),
    "tri_dependent": (lambda r, n: (_r(r, n, n),), "partial"),       # row i reads row i - 1: the inner loop only
    "two_triangles": (lambda r, n: (_r(r, n, n), _r(r, n, n)), "vectorized"),
    "unswitched_empty_branch": (lambda r, n: (_r(r, n), _r(r, n)), "vectorized"),   # one copy has no body
    "flag_written_in_loop": (lambda r, n: (_r(r, n), _r(r, n), np.array(True)), "loop: "),  # a 0-d array: not unswitched
    "last_value_of_either_type": (lambda r, n: (_r(r, n),), "loop: the type of the last"),
    "last_row_sum": (lambda r, n: (_r(r, n, n),), "partial"),
    "max_of_roots": (lambda r, n: (_r(r, n),), "vectorized"),        # a Python float, as math.sqrt gives
    "tri_max": (lambda r, n: (_r(r, n, n),), "vectorized"),        # row 0 is empty: no ValueError
    "masked_yield": (lambda r, n: (_r(r, n),), "vectorized"),     # log only where x > 0.3, merged after
    "unswitched_sign": (lambda r, n: (_r(r, n), _r(r, 1)), "vectorized"),        # both copies vectorize
    "unswitched_sum": (lambda r, n: (_r(r, n), _r(r, 1)), "partial"),            # one copy is a recurrence
    "conv1d": (lambda r, n: (_r(r, n + 2), _r(r, 3)), "vectorized"),
    "conv2d": (lambda r, n: (_r(r, n + 1, n + 2), _r(r, 2, 3)), "vectorized"),
    "pairwise": (lambda r, n: (_r(r, n, 3),), "vectorized"),
    "ifelse_writes": (lambda r, n: (_r(r, n),), "vectorized"),
    "elif_chain": (lambda r, n: (_r(r, n),), "vectorized"),
    "nested_partial": (lambda r, n: (_r(r, n),), "vectorized"),
    "unsafe_div": (lambda r, n: (_r(r, n), np.round(_r(r, n))), "vectorized"),   # masked: out[t] = x[t] / y[t]
    "safe_div": (lambda r, n: (_r(r, n), np.round(_r(r, n))), "vectorized"),
    "safe_log_sum": (lambda r, n: (_r(r, n),), "vectorized"),
    "guarded_shift": (lambda r, n: (_r(r, n) + 0.1,), "vectorized"),
    "rev_masked": (lambda r, n: (_r(r, n), _r(r, n)), "vectorized"),
    "python_division": (lambda r, n: (_r(r, n),), "loop: could raise where NumPy would not"),
    "recurrence": (lambda r, n: (_r(r, n),), "loop: carried dependence: `x[i - 1]` reads what `x[i]` writes"),
    "prefix": (lambda r, n: (_r(r, n),), "vectorized"),
    "prefix_excl": (lambda r, n: (_r(r, n),), "vectorized"),
    "prefix_i32": (lambda r, n: (r.integers(0, 100, n).astype(np.int32),), "vectorized"),
    "gauss_seidel": (lambda r, n: (_r(r, n),), "loop: carried dependence"),
    "shift_left": (lambda r, n: (_r(r, n),), "vectorized"),
    "shift_right": (lambda r, n: (_r(r, n),), "loop: carried dependence"),
    "reverse": (lambda r, n: (_r(r, n),), "vectorized"),
    "strided": (lambda r, n: (_r(r, n),), "vectorized"),
    "triangular": (lambda r, n: (_r(r, n),), "vectorized"),   # through its masked rectangle
    "gather_idx": (lambda r, n: (_r(r, n), _idx(r, n)), "loop: data-dependent"),
    "printing": (lambda r, n: (_r(r, n),), "loop: `print` is an effect"),
    "early_exit": (lambda r, n: (_r(r, n),), "loop: a `while` loop"),
    "f32_sum": (lambda r, n: (_r(r, n).astype(np.float32),), "vectorized"),
    "i32_sum": (lambda r, n: (r.integers(0, 2 ** 30, n).astype(np.int32),), "vectorized"),
    "f32_index_mul": (lambda r, n: (_r(r, n).astype(np.float32),), "vectorized"),
    "rows_cols": (lambda r, n: (_r(r, n, 3),), "vectorized"),
    "row_acc": (lambda r, n: (_r(r, n, 3),), "vectorized"),
    "alias_args": (lambda r, n: (_r(r, n), _r(r, n)), "guarded"),
    "wrap_index": (lambda r, n: (_r(r, n),), "vectorized"),
    "nested_sum": (lambda r, n: (_r(r, n, 3),), "vectorized"),
    "last_value": (lambda r, n: (_r(r, n),), "vectorized"),
    "float32_dot": (lambda r, n: (_r(r, n).astype(np.float32), _r(r, n).astype(np.float32)), "vectorized"),
    "int_overflow_sum": (lambda r, n: (r.integers(2 ** 40, 2 ** 41, n),), "vectorized"),
    "column_sums": (lambda r, n: (_r(r, n, 3),), "vectorized"),
    "argmax_loop": (lambda r, n: (_r(r, n),), "vectorized"),
    "argmin_distance": (lambda r, n: (_r(r, n), _r(r, n)), "vectorized"),
    "argmax_with_value": (lambda r, n: (_r(r, n), _r(r, n)), "loop: change type"),
    "outer_product": (lambda r, n: (_r(r, n), _r(r, n + 1)), "vectorized"),
    "diagonal": (lambda r, n: (_r(r, n, n),), "vectorized"),
    "runtime_bound": (lambda r, n: (_r(r, n) + 1,), "loop: cannot prove"),
    "min_reverse_arg": (lambda r, n: (_r(r, n),), "loop: NaN"),
    "heat_inplace": (lambda r, n: (_r(r, n), 2), "loop: carried dependence"),
    "diag_write": (lambda r, n: (_r(r, n),), "vectorized"),
    "interleave": (lambda r, n: (_r(r, n), _r(r, n)), "vectorized"),
    "sub_and_int_product": (lambda r, n: (_r(r, n), r.integers(1, 4, n)), "vectorized"),
    "bool_flags": (lambda r, n: (_r(r, n) > 0.5,), "vectorized"),
    "row_variable": (lambda r, n: (_r(r, n, 3),), "vectorized"),
    "index_weighted_sum": (lambda r, n: (_r(r, n),), "vectorized"),
    "column_sum_and_max": (lambda r, n: (_r(r, n, 3),), "vectorized"),
    "write_then_read_same_element": (lambda r, n: (_r(r, n),), "vectorized"),
    # the sum's terms are a view of x, which the loop then zeroes: reading them later would be wrong
    "read_then_write_then_use": (lambda r, n: (_r(r, n),), "loop: is used after"),
    # a loop with a carried value whose body ends in an `if` without `else` (an emitter fix)
    "carried_then_if": (lambda r, n: (_r(r, n),), "loop: carried dependence"),
}


def assert_same(actual, expected):
    """Same value (up to the documented rounding of reordered float sums), dtype and type."""
    if isinstance(expected, BaseException):
        assert type(actual) is type(expected), f"expected {type(expected).__name__}, got {actual!r}"
        return
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_same(a, e)
        return
    if not isinstance(expected, np.ndarray):
        assert type(actual) is type(expected), f"type {type(actual).__name__} != {type(expected).__name__}"
    a, e = np.asarray(actual), np.asarray(expected)
    assert a.dtype == e.dtype, f"dtype {a.dtype} != {e.dtype}"
    assert a.shape == e.shape, f"shape {a.shape} != {e.shape}"
    if e.dtype.kind in "fc":
        tol = RTOL.get(e.dtype, 1e-12)
        np.testing.assert_allclose(a, e, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(a, e)


def call(fn, args):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*copy.deepcopy(args))
    except Exception as e:  # noqa: BLE001 - the compiled code must raise the same
        return e


@pytest.mark.parametrize("n", [0, 1, 2, 7])
@pytest.mark.parametrize("exec_mode", ["auto", "no_sink"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_o2_matches_eager(name, exec_mode, n, rng, capsys):
    fn = getattr(V, name)
    make_args, _ = CASES[name]
    args = make_args(rng, n)
    expected = call(fn, args)
    jitted = graphjit.jit(fn, jit_level="O2", exec_mode=exec_mode)
    eager_args, compiled_args = copy.deepcopy(args), copy.deepcopy(args)
    call(fn, eager_args)
    actual = call(jitted, compiled_args)
    assert_same(actual, expected)
    for a, e in zip(compiled_args, eager_args):   # arguments are mutated alike
        if isinstance(e, np.ndarray):
            assert_same(a, e)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_graph_says_what_happened_to_each_loop(name, rng):
    fn = getattr(V, name)
    make_args, expectation = CASES[name]
    text = str(graphjit.jit(fn, jit_level="O2").graph(*make_args(rng, 7)))
    loops = [ln for ln in text.splitlines() if "= for_range(" in ln or "= while(" in ln]
    notes = [ln for ln in text.splitlines() if "vectorized loop" in ln]
    if expectation == "vectorized":   # no loop left, but the fallback of a guarded one
        assert notes and all("kept as the fallback of its vectorized form" in ln for ln in loops), text
    elif expectation == "partial":
        assert loops and notes, text
        assert all("vectorize='no: " in ln for ln in loops), text
    elif expectation == "guarded":
        assert notes and any("kept as the fallback of its vectorized form" in ln for ln in loops), text
    else:
        words = expectation[len("loop: "):]
        assert any("vectorize='no: " in ln and words in ln for ln in loops), text
    for ln in loops:   # every loop that stays says why
        assert "vectorize='no: " in ln, ln


def _source(fn, *args):
    return graphjit.jit(fn, jit_level="O2").source(*args)


@pytest.fixture
def _no_memory_plan(monkeypatch):
    """The vectorizer's own output (memory planning at O2 then turns expressions into in-place chains)."""
    from graphjit.graph.passes import manager
    monkeypatch.setitem(manager.PIPELINES, "O2", [p for p in manager.PIPELINES["O2"]
                                                  if p[1] != "reuse dead temporaries in place"])


def test_generated_code_reads_like_numpy(rng, _no_memory_plan):
    x, y = _r(rng, 7), _r(rng, 7)
    assert "return a @ b" in _source(V.matmul3, _r(rng, 4, 3), _r(rng, 3, 5))
    assert "return np.dot(x, y)" in _source(V.dot, x, y)
    assert "v[1:6] = (u[:5] + u[1:6] + u[2:]) / 3.0" in _source(V.stencil3, x)
    assert "np.correlate(x, w, mode='valid')" in _source(V.conv1d, x, y[:3])
    assert "np.cumsum(x)" in _source(V.prefix, x)
    assert "return np.where(x > 0.8, 1.0, np.where(x > 0.3, x, 0.01 * x))" in _source(V.elif_chain, x)
    assert "new[1:6, 1:7] = 0.25 * (u[:5, 1:7] + u[2:, 1:7] + u[1:6, :6] + u[1:6, 2:])" in \
        _source(V.jacobi2d, _r(rng, 7, 8))
    src = _source(V.stencil3, x)
    lines = src.splitlines()
    k = next(i for i, ln in enumerate(lines) if "vectorized loop vector_programs.py:" in ln)
    assert lines[k + 1].strip().startswith("# vector_programs.py:") and "for i in range(1, n - 1):" in lines[k + 1]
    assert lines[k + 2].strip().startswith("v[1:6] = ")


def test_one_statement_per_vectorized_loop(rng, _no_memory_plan):
    src = _source(V.elem_chain, _r(rng, 9), _r(rng, 9))
    code = [ln.strip() for ln in src.splitlines()[1:] if ln.strip() and not ln.strip().startswith("#")]
    assert len(code) <= 2, src   # the where() condition may be named, then one expression


def test_partial_vectorization_keeps_the_time_loop(rng):
    src = _source(V.heat, _r(rng, 9), 4)
    assert "for t in range(4):" in src
    assert "np.may_share_memory" in src   # u and new swap: vectorized only when they do not overlap
    assert "for i in range(1, 8):" in src   # ... the loop itself is kept for that case


def test_aliased_arguments_take_the_loop(rng):
    a = _r(rng, 8)
    jitted = graphjit.jit(V.alias_args, jit_level="O2")
    eager = a.copy()
    V.alias_args(eager, eager)   # b is a: each step reads what the previous one wrote
    shared = a.copy()
    np.testing.assert_array_equal(jitted(shared, shared), eager)
    np.testing.assert_array_equal(jitted(a.copy(), a.copy()), V.alias_args(a.copy(), a.copy()))
    view = a.copy()              # b is a shifted view of a
    eager_view = a.copy()
    V.alias_args(eager_view[:-1], eager_view[1:])
    jitted(view[:-1], view[1:])
    np.testing.assert_array_equal(view, eager_view)


def test_empty_range_is_removed(rng):
    text = str(graphjit.jit(V.dot, jit_level="O2").graph(np.zeros(0), np.zeros(0)))
    assert "for_range" not in text  # the O1 passes or the vectorizer ("removed: its range is empty") drop it
    assert graphjit.jit(V.dot, jit_level="O2")(np.zeros(0), np.zeros(0)) == 0.0


def test_dtype_follows_eager_accumulation(rng):
    x32 = _r(rng, 50).astype(np.float32)
    got = graphjit.jit(V.f32_sum, jit_level="O2")(x32)
    assert type(got) is np.float32                 # 0.0 + np.float32 stays float32 (NEP 50)
    i32 = np.full(10, 2 ** 30, dtype=np.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eager = V.i32_sum(i32)
    got = graphjit.jit(V.i32_sum, jit_level="O2")(i32)
    assert type(got) is np.int32 and got == eager   # wraps around in int32 exactly like the loop
    assert "dtype=np.int32" in _source(V.i32_sum, i32)


def test_log_says_why(monkeypatch, caplog, capsys, rng):
    monkeypatch.setenv("GRAPHJIT_LOG", "vectorize")
    with caplog.at_level(logging.INFO, logger="graphjit"):
        graphjit.jit(V.recurrence, jit_level="O2")(_r(rng, 5))
        graphjit.jit(V.dot, jit_level="O2")(_r(rng, 5), _r(rng, 5))
    assert "unknown topic" not in capsys.readouterr().err   # `vectorize` is a topic of log.py
    assert any(r.name == "graphjit.vectorize" for r in caplog.records)
    text = caplog.text
    assert "carried dependence: `x[i - 1]` reads what `x[i]` writes" in text
    assert "vectorized loop vector_programs.py" in text


def test_o1_keeps_loops(rng):
    src = graphjit.jit(V.dot, jit_level="O1").source(_r(rng, 5), _r(rng, 5))
    assert "for i in range(5):" in src


def test_dependent_loops_run_on_python_floats(rng):
    b = _r(rng, 50)
    src = _source(V.recurrence, b)
    assert "b_l = b.tolist()" in src and "x[:] = x_l" in src
    np.testing.assert_array_equal(graphjit.jit(V.recurrence, jit_level="O2")(b), V.recurrence(b))


@pytest.mark.parametrize("name", ["chain", "conditional"])
def test_benchmark_kernels_at_full_size_tile_and_match_eager(name):
    """At the benchmark's size the vectorized chains are tiled and `where` blends without branches."""
    import importlib.util
    path = BENCHMARKS / "kernels.py"
    spec = importlib.util.spec_from_file_location("bench_kernels", path)
    K = importlib.util.module_from_spec(spec)
    import sys
    sys.modules["bench_kernels"] = K   # dataclasses look their module up
    spec.loader.exec_module(K)
    k = K.KERNELS[name]
    args = k.make_args(k.sizes[-1], np.random.default_rng(7))
    jitted = graphjit.jit(k.loop_style, jit_level="O2")
    np.testing.assert_allclose(jitted(*args), k.loop_style(*args), rtol=1e-12, atol=1e-14)  # np.exp: 1 ulp
    source = jitted.source(*args)
    assert "for i" in source and "range(0, 200000, " in source, source
    if name == "conditional":
        np.testing.assert_array_equal(jitted(*args), k.loop_style(*args))
        assert "_select(" in source, source


@pytest.mark.parametrize("name", ["tri_upper_sum", "tri_lower_store", "tri_row_products", "triangular", "tri_max"])
def test_triangular_boxes_from_the_ends_of_affine_bounds(name, rng, monkeypatch):
    """Long outer loops (here: more than 2 iterations) take the box from the bounds at both ends."""
    from graphjit.graph.vectorize import triangular
    monkeypatch.setattr(triangular, "EXACT_OUTER", 2)
    fn = getattr(V, name)
    make_args, _ = CASES[name]
    args = make_args(rng, 7)
    expected, actual = call(fn, copy.deepcopy(args)), call(graphjit.jit(fn, jit_level="O2"), copy.deepcopy(args))
    assert_same(actual, expected)
    text = str(graphjit.jit(fn, jit_level="O2").graph(*args))
    loops = [ln for ln in text.splitlines() if "= for_range(" in ln]
    assert all("kept as the fallback" in ln for ln in loops), text   # the whole nest vectorized


def test_a_guarded_triangular_nest_falls_back_on_the_nest_as_written(rng):
    a = _r(rng, 5, 5)
    source = _source(V.tri_lower_store, a, _r(rng, 5, 5))
    assert "may_share_memory" in source and "if j <" not in source, source   # not the masked rectangle


G_TABLE = np.linspace(-1.0, 1.0, 6)


def running_value_whose_term_reads_it(d, L):
    acc = 0.0
    for i0 in range(len(G_TABLE) // 2):
        d["a"][...] += acc
        acc = acc + G_TABLE.sum() * acc
    v = L[1]["c"].reshape(2, -1)
    v[1] += acc
    return acc


@pytest.mark.parametrize("exec_mode", ["auto", "no_sink"])
def test_a_running_sum_whose_term_reads_it_stays_a_loop(exec_mode):
    # found by the program generator: the scan's term reads the carried value (a recurrence), which
    # sent the vectorizer into endless recursion
    args = lambda: ({"a": np.ones(6)}, [np.ones(6), {"c": np.full(6, -0.5)}])  # noqa: E731
    jitted = graphjit.jit(running_value_whose_term_reads_it, jit_level="O2", exec_mode=exec_mode)
    expected_args, actual_args = args(), args()
    assert jitted(*actual_args) == running_value_whose_term_reads_it(*expected_args)
    np.testing.assert_array_equal(actual_args[1][1]["c"], expected_args[1][1]["c"])
