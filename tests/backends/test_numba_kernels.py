"""Loops that stay loops run as Numba kernels at O2 (backends/emit_numba.py, backends/numba_kernels.py).

NPBench-like loops (seidel_2d, crc16, nussinov, lu, cholesky, durbin) and the dependent kernels of
benchmarks/kernels.py are compiled at O0, O1 and O2, through the generated code and through the
interpreter (which never uses Numba: it runs the graph's loops), with Numba on and off, and must
equal eager Python: values, dtypes, Python scalar types, argument mutation. Then what the user sees
(`.source()`, the log, the switches), what happens without Numba or when Numba refuses a kernel,
and the semantics a kernel must keep: exceptions with the writes made before them, integer
wrap-around, division by zero.
"""

import copy
import logging
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest

import graphjit
from graphjit.backends import numba_kernels

from eager_vs_compiled import assert_same
from locations import BENCHMARKS, REPO

sys.path.insert(0, str(BENCHMARKS))
import kernels as K  # noqa: E402  (benchmarks/kernels.py)

pytest.importorskip("numba")


@pytest.fixture(autouse=True)
def _numba_on(monkeypatch):
    monkeypatch.setenv("GRAPHJIT_NUMBA", "1")


# --- NPBench-like loops (written here, the way NPBench writes them) ---------------------------------

def seidel_2d(tsteps, A):
    n = A.shape[0]
    for t in range(tsteps):
        for i in range(1, n - 1):
            A[i, 1:-1] += (A[i - 1, :-2] + A[i - 1, 1:-1] + A[i - 1, 2:] + A[i, 2:] + A[i + 1, :-2]
                           + A[i + 1, 1:-1] + A[i + 1, 2:])
            for j in range(1, n - 1):
                A[i, j] += A[i, j - 1]
                A[i, j] /= 9.0


def crc16(data, poly=0x8408):
    crc = 0xFFFF
    for b in data:
        cur_byte = 0xFF & b
        for _ in range(0, 8):
            if (crc & 0x0001) ^ (cur_byte & 0x0001):
                crc = (crc >> 1) ^ poly
            else:
                crc >>= 1
            cur_byte >>= 1
    crc = (~crc & 0xFFFF)
    crc = (crc << 8) | ((crc >> 8) & 0xFF)
    return crc & 0xFFFF


def cholesky(A):
    A[0, 0] = np.sqrt(A[0, 0])
    for i in range(1, A.shape[0]):
        for j in range(i):
            A[i, j] -= np.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] -= np.dot(A[i, :i], A[i, :i])
        A[i, i] = np.sqrt(A[i, i])


def lu(A):
    N = A.shape[0]
    for i in range(N):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, N):
            A[i, j] -= A[i, :i] @ A[:i, j]


def match(b1, b2):
    return 1 if b1 + b2 == 3 else 0


def nussinov(N, seq):
    table = np.zeros((N, N), np.int32)
    for i in range(N - 1, -1, -1):
        for j in range(i + 1, N):
            if j - 1 >= 0:
                table[i, j] = max(table[i, j], table[i, j - 1])
            if i + 1 < N:
                table[i, j] = max(table[i, j], table[i + 1, j])
            if j - 1 >= 0 and i + 1 < N:
                if i < j - 1:
                    table[i, j] = max(table[i, j], table[i + 1, j - 1] + match(seq[i], seq[j]))
                else:
                    table[i, j] = max(table[i, j], table[i + 1, j - 1])
            for k in range(i + 1, j):
                table[i, j] = max(table[i, j], table[i, k] + table[k + 1, j])
    return table


def durbin(r):
    y = np.empty_like(r)
    alpha = -r[0]
    beta = 1.0
    y[0] = -r[0]
    for k in range(1, r.shape[0]):
        beta *= 1.0 - alpha * alpha
        alpha = -(r[k] + np.dot(np.flip(r[:k]), y[:k])) / beta
        y[:k] += alpha * np.flip(y[:k])
        y[k] = alpha
    return y


def spmv(A_row, A_col, A_val, x):
    y = np.empty(A_row.size - 1, A_val.dtype)
    for i in range(A_row.size - 1):
        cols = A_col[A_row[i]:A_row[i + 1]]
        vals = A_val[A_row[i]:A_row[i + 1]]
        y[i] = vals @ x[cols]
    return y


def csr(rng, m, n, nnz):
    rows = np.sort(rng.integers(0, m, nnz))
    A_row = np.searchsorted(rows, np.arange(m + 1)).astype(np.int64)
    return A_row, rng.integers(0, n, nnz).astype(np.int64), rng.random(nnz), rng.random(n)


def running_max_count(x):
    best = 0.0
    count = 0
    for i in range(len(x)):
        best = max(best * 0.5, x[i])
        if best > 0.7:
            count += 1
    return count


def spd(n, rng):
    a = rng.random((n, n))
    return a @ a.T + n * np.eye(n)


def cases(rng):
    return {
        "seidel_2d": (seidel_2d, (3, rng.random((9, 9)))),
        "crc16": (crc16, (rng.integers(0, 256, 40, dtype=np.uint8),)),
        "cholesky": (cholesky, (spd(7, rng),)),
        "lu": (lu, (spd(7, rng),)),
        "nussinov": (nussinov, (9, rng.integers(0, 4, 9).astype(np.int32))),
        "durbin": (durbin, (rng.random(8) * 0.3,)),
        "recurrence": (K.recurrence_loop, (rng.standard_normal(30), 0.9)),
        "balance": (K.balance_loop, (rng.standard_normal(30),)),
        "running_max_count": (running_max_count, (rng.random(30),)),
        "spmv": (spmv, csr(rng, 12, 10, 30)),
    }


KERNEL_LOOPS = ["seidel_2d", "crc16", "cholesky", "lu", "nussinov", "durbin", "recurrence", "balance",
                "running_max_count", "spmv"]


def run_same(fn, args, rtol=1e-12, **options):
    """Eager and compiled on copies: same result, same argument mutation."""
    eager_args, compiled_args = copy.deepcopy(args), copy.deepcopy(args)
    expected = fn(*eager_args)
    jitted = graphjit.jit(fn, **options)
    actual = jitted(*compiled_args)
    if expected is None:
        assert actual is None
    else:
        assert type(actual) is type(expected)
        assert_same(actual, expected)
    for a, e in zip(compiled_args, eager_args):
        if isinstance(e, np.ndarray):
            np.testing.assert_allclose(a, e, rtol=rtol, atol=rtol)
            assert a.dtype == e.dtype
    return jitted


def refusals(caplog) -> list:
    return [r.getMessage() for r in caplog.records if "runs as a Python loop" in r.getMessage()]


@pytest.mark.parametrize("name", KERNEL_LOOPS)
@pytest.mark.parametrize("level", ["O0", "O1", "O2"])
@pytest.mark.parametrize("exec_mode", ["auto", "no_sink"])
def test_loops_equal_eager_at_every_level_both_ways(name, level, exec_mode, rng, caplog):
    fn, args = cases(rng)[name]
    with caplog.at_level(logging.INFO, logger="graphjit.vectorize"):
        jitted = run_same(fn, args, jit_level=level, exec_mode=exec_mode)
        run_same(fn, cases(np.random.default_rng(7))[name][1], jit_level=level, exec_mode=exec_mode)
    source = jitted.source(*args)
    sent = level == "O2" and exec_mode == "auto"   # the interpreter runs the graph's loops itself
    assert ("_numba_kernel(" in source) is sent
    assert not refusals(caplog)


@pytest.mark.parametrize("name", KERNEL_LOOPS)
def test_without_numba_the_python_loop_runs(name, rng, monkeypatch):
    # Numba switched off by the environment, by JitConfig, or not installed: no kernel at all
    fn, args = cases(rng)[name]
    monkeypatch.setenv("GRAPHJIT_NUMBA", "0")
    assert "_numba_kernel(" not in run_same(fn, args, jit_level="O2").source(*args)
    monkeypatch.setenv("GRAPHJIT_NUMBA", "1")
    config = graphjit.JitConfig(jit_level="O2", numba=False)
    assert "_numba_kernel(" not in run_same(fn, args, jit_config=config).source(*args)
    monkeypatch.setitem(sys.modules, "numba", None)   # `import numba` fails: as if not installed
    assert not numba_kernels.wanted()
    assert "_numba_kernel(" not in run_same(fn, args, jit_level="O2").source(*args)


def test_a_kernel_whose_numba_disappears_runs_its_python_loop_and_says_why(rng, monkeypatch, caplog):
    def shifted_recurrence(b):
        x = np.zeros_like(b)
        for i in range(2, len(b)):
            x[i] = 0.25 * x[i - 2] + b[i] * 1.0625
        return x
    b = rng.random(12)
    jitted = graphjit.jit(shifted_recurrence, jit_level="O2")
    assert "_numba_kernel(" in jitted.source(b)
    monkeypatch.setitem(sys.modules, "numba", None)
    with caplog.at_level(logging.INFO, logger="graphjit.vectorize"):
        np.testing.assert_array_equal(jitted(b), shifted_recurrence(b))
    assert any("Numba is not installed" in m for m in refusals(caplog))


def test_a_kernel_numba_refuses_runs_its_python_loop_and_says_why(rng, caplog):
    handle = numba_kernels.numba_kernel("refused_by_numba", "numpy", ("arr:float64:1",), (), (
        "def refused_by_numba(x):\n", "    x[0] = 'text'\n"))
    with caplog.at_level(logging.INFO, logger="graphjit.vectorize"):
        with pytest.raises(numba_kernels.KernelRefused):
            handle(np.zeros(3))
        with pytest.raises(numba_kernels.KernelRefused):   # refused once, refused from then on
            handle(np.zeros(3))
    assert any("Numba refused it" in m for m in refusals(caplog))


def test_arguments_of_other_types_than_planned_run_the_python_loop():
    handle = numba_kernels.numba_kernel("planned_f64", "numpy", ("arr:float64:1", "float"), (), (
        "def planned_f64(x, a):\n", "    x[0] = a\n"))
    with pytest.raises(numba_kernels.KernelRefused):
        handle(np.zeros(3, np.float32), 1.0)
    with pytest.raises(numba_kernels.KernelRefused):
        handle(np.zeros(3), np.float64(1.0))
    x = np.zeros(3)
    handle(x, 2.5)
    assert x[0] == 2.5


# --- what the user sees ----------------------------------------------------------------------------

def test_source_shows_the_kernel_and_the_call_with_the_loop_kept(rng):
    source = graphjit.jit(seidel_2d, jit_level="O2").source(2, rng.random((6, 6)))
    assert "_kernel_seidel_2d_loop" in source and "_numba_kernel('seidel_2d_loop" in source
    assert "'def seidel_2d_loop" in source                 # the kernel's text, line by line
    assert "    try:\n        _kernel_seidel_2d_loop" in source
    assert "except _KernelRefused:\n" in source and "for t in range(2):" in source


def test_log_names_the_loops_sent_to_numba_and_why_others_stay(rng, monkeypatch, caplog):
    def with_log(x):
        for i in range(1, len(x)):
            x[i] = x[i - 1] + np.log(x[i])     # a NumPy ufunc: fine
        for i in range(1, len(x)):
            x[i] = x[i - 1] + 1.0 / float(i - 2)   # ... but Python division here, NumPy above: fine
        for i in range(1, len(x)):
            x[i] = x[i - 1] * 0.5 + math.log(x[i])
        return x
    monkeypatch.setenv("GRAPHJIT_LOG", "vectorize")
    with caplog.at_level(logging.INFO, logger="graphjit.vectorize"):
        with pytest.raises(ZeroDivisionError):
            graphjit.jit(with_log, jit_level="O2")(rng.random(6) + 1.0)
    text = caplog.text
    assert "goes to Numba (a nopython kernel)" in text
    assert "stays a Python loop, not a Numba kernel: the call math.log may raise where Numba does not" in text


def test_the_kernel_files_are_written_once_into_the_cache(rng, tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHJIT_CACHE_DIR", str(tmp_path / "c"))
    numba_kernels.numba_kernel("written_once", "numpy", ("arr:float64:1",), (), (
        "def written_once(x):\n", "    for i in range(1, x.shape[0]):\n", "        x[i] += x[i - 1]\n"))(np.ones(4))
    files = sorted(p.name for p in (tmp_path / "c" / "numba").iterdir())
    assert len([f for f in files if f.startswith("written_once_") and f.endswith(".py")]) == 1
    assert "__pycache__" in files     # Numba's own cache (cache=True) beside the file


def test_import_graphjit_and_compiling_without_kernel_loops_never_imports_numba(tmp_path):
    code = ("import sys, numpy as np, graphjit\n"
            "sys.path.insert(0, {tests!r})\n"
            "import vector_programs as V\n"
            "assert 'numba' not in sys.modules\n"
            "graphjit.jit(V.dot, jit_level='O2')(np.ones(5), np.ones(5))\n"
            "print(sorted(m for m in sys.modules if m == 'numba' or m.startswith('numba.')))\n").format(
        tests=str(REPO / "tests"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**__import__("os").environ, "GRAPHJIT_CACHE_DIR": str(tmp_path),
                              "PYTHONPATH": str(REPO.parent)})
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


# --- semantics: exceptions, partial writes, integers, division ---------------------------------------

def gather_recurrence(x, idx):
    for i in range(1, len(x)):
        x[i] = 0.5 * x[i - 1] + x[idx[i]]
    return x


def test_an_index_out_of_bounds_raises_index_error_after_the_same_writes(rng):
    # an index not proved in bounds is tested in the kernel: the same exception and message, at the
    # same iteration
    x = rng.random(8)
    idx = np.array([0, 1, 2, 3, 9, 0, 1, 2])
    jitted = graphjit.jit(gather_recurrence, jit_level="O2")
    assert "_numba_kernel(" in jitted.source(x, idx)
    assert "checked_index(idx[i], x.shape[0], 0)" in jitted.source(x, idx)
    eager_x, compiled_x = x.copy(), x.copy()
    with pytest.raises(IndexError) as eager_error:
        gather_recurrence(eager_x, idx)
    with pytest.raises(IndexError) as compiled_error:
        jitted(compiled_x, idx)
    assert str(compiled_error.value) == str(eager_error.value)   # index 9 is out of bounds for axis 0 ...
    np.testing.assert_array_equal(compiled_x, eager_x)   # x[1..3] written, the rest untouched
    np.testing.assert_array_equal(jitted(x.copy(), np.array([0, -1, -8, 3, 2, 1, 0, 7])),
                                  gather_recurrence(x.copy(), np.array([0, -1, -8, 3, 2, 1, 0, 7])))


def python_division(x):
    s = 0.0
    for i in range(len(x)):
        s = s * 0.5 + 1.0 / float(x[i])
        x[i] = s
    return s


def numpy_division(x, y):
    for i in range(1, len(x)):
        x[i] = x[i - 1] * 0.5 + x[i] / y[i]
    return x


def test_a_gather_out_of_bounds_raises_index_error_after_the_same_writes(rng):
    A_row, A_col, A_val, x = csr(rng, 8, 6, 20)
    A_col[A_row[4]] = 6    # row 4 reads x[6]: rows 0-3 are written first
    jitted = graphjit.jit(spmv, jit_level="O2")
    assert "_numba_kernel(" in jitted.source(A_row, A_col, A_val, x)
    with pytest.raises(IndexError):
        spmv(A_row, A_col, A_val, x)
    with pytest.raises(IndexError):
        jitted(A_row, A_col, A_val, x)


def overlapping_update(A):
    for i in range(1, A.shape[0]):
        A[i, 1:] += A[i, :-1]        # NumPy buffers the overlapping operand
        A[i, 0] = A[i - 1, 0] * 0.5
    return A


def test_an_in_place_update_by_an_overlapping_view_stays_python(rng, caplog):
    A = rng.random((5, 6))
    with caplog.at_level(logging.INFO, logger="graphjit.vectorize"):
        run_same(overlapping_update, (A,), jit_level="O2")
    assert "an array updated in place by an array that may overlap it" in caplog.text


def test_python_division_by_zero_raises_after_the_same_writes(rng):
    jitted = graphjit.jit(python_division, jit_level="O2")
    x = np.array([1.0, 2.0, 0.0, 4.0])
    assert "'python'" in jitted.source(x)     # Numba's python error model
    eager_x, compiled_x = x.copy(), x.copy()
    with pytest.raises(ZeroDivisionError):
        python_division(eager_x)
    with pytest.raises(ZeroDivisionError):
        jitted(compiled_x)
    np.testing.assert_array_equal(compiled_x, eager_x)
    assert type(jitted(np.array([1.0, 2.0]))) is float


def test_numpy_division_by_zero_gives_inf_and_nan_as_eager(rng):
    jitted = graphjit.jit(numpy_division, jit_level="O2")
    x, y = np.array([1.0, 2.0, 0.0, -3.0, 5.0]), np.array([1.0, 0.0, 0.0, 0.0, 2.0])
    assert "'numpy'" in jitted.source(x, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = numpy_division(x.copy(), y)
    np.testing.assert_array_equal(jitted(x.copy(), y), expected)


def int32_products(a):
    for i in range(1, len(a)):
        a[i] = a[i] * a[i - 1] + 7
    return a


def test_numpy_integers_wrap_as_eager(rng):
    a = rng.integers(1000, 100000, 12).astype(np.int32)
    jitted = graphjit.jit(int32_products, jit_level="O2")
    assert "np.int32(" in jitted.source(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # eager NumPy warns on scalar overflow
        expected = int32_products(a.copy())
    np.testing.assert_array_equal(jitted(a.copy()), expected)


def python_int_growth(x):
    s = 1
    for i in range(len(x)):
        s = s * 3 + int(x[i] > 0.5)
    return s


def test_python_ints_that_may_exceed_int64_stay_python(rng, caplog):
    x = rng.random(60)
    with caplog.at_level(logging.INFO, logger="graphjit.vectorize"):
        jitted = graphjit.jit(python_int_growth, jit_level="O2")
        assert jitted(x) == python_int_growth(x) and python_int_growth(x) > 2 ** 64
    assert "_numba_kernel(" not in jitted.source(x)


def test_a_python_int_result_keeps_its_type_and_numpy_scalars_theirs(rng):
    data = rng.integers(0, 256, 16, dtype=np.uint8)
    got = graphjit.jit(crc16, jit_level="O2")(data)
    assert type(got) is int and got == crc16(data)

    def f64_accumulator(x):
        s = np.float64(0.0)
        for i in range(1, len(x)):
            s = s * 0.5 + x[i] * x[i - 1]
            x[i] = s
        return s
    x = rng.random(9)
    jitted = graphjit.jit(f64_accumulator, jit_level="O2")
    got = jitted(x.copy())
    assert "_numba_kernel(" in jitted.source(x)
    assert type(got) is np.float64 and got == f64_accumulator(x.copy())


def test_indices_proved_in_bounds_compile_without_checks_for_that_shape_only(rng):
    A = rng.random((6, 6))
    source = graphjit.jit(seidel_2d, jit_level="O2").source(2, A)
    assert "boundscheck=False)" in source and "'arr:float64:2:6x6'" in source
    assert "checked_index(" in graphjit.jit(gather_recurrence, jit_level="O2").source(
        rng.random(5), np.arange(5))                    # x[idx[i]]: data-dependent, tested
    assert "boundscheck=False" not in graphjit.jit(spmv, jit_level="O2").source(*csr(rng, 5, 4, 9))   # a gather
    handle = numba_kernels.numba_kernel("unchecked_6", "numpy", ("arr:float64:1:6",), (), (
        "def unchecked_6(x):\n", "    x[5] = 1.0\n"), boundscheck=False)
    with pytest.raises(numba_kernels.KernelRefused):
        handle(np.zeros(5))                             # another shape: the Python loop runs instead
    x = np.zeros(6)
    handle(x)
    assert x[5] == 1.0


def test_a_kernel_numba_cannot_compile_for_a_missing_package_runs_its_python_loop(rng, monkeypatch, caplog):
    """Numba raises ImportError when it first compiles a kernel needing an optional package (np.dot
    without SciPy): that is a refusal, the Python loop runs, never the ImportError."""
    handle = numba_kernels.numba_kernel("needs_a_package", "numpy", ("arr:float64:1",), (), (
        "def needs_a_package(x):\n", "    x[0] = 1.0\n"))

    def missing(*args):
        raise ImportError("scipy 0.16+ is required for linear algebra")
    monkeypatch.setattr(handle, "load", lambda args: missing)
    with caplog.at_level(logging.INFO, logger="graphjit.vectorize"):
        with pytest.raises(numba_kernels.KernelRefused):
            handle(np.zeros(3))
    assert any("scipy 0.16+ is required" in m for m in refusals(caplog))
