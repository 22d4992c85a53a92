"""What goes to Numba beyond float64 loops: complex128 values and arrays (arithmetic, `@`, indexing,
in-place updates; graph/kernel_ops.py's `complex` column) and loops the unswitch pass copied. Each is
compared with eager Python; what stays a Python loop says why in the log (GRAPHJIT_LOG=vectorize).
"""

import logging

import numpy as np
import pytest

import graphjit
from graphjit.backends import numba_kernels

from test_numba_kernels import run_same

pytest.importorskip("numba")


@pytest.fixture(autouse=True)
def _numba_on(monkeypatch):
    monkeypatch.setenv("GRAPHJIT_NUMBA", "1")
    monkeypatch.setenv("GRAPHJIT_LOG", "vectorize")


def self_energies(idx, dH, G, D, Sigma):
    """NPBench's scattering_self_energies, written again: complex 3x3 products in a deep nest."""
    for k in range(G.shape[0]):
        for E in range(G.shape[1]):
            for q in range(D.shape[0]):
                for w in range(D.shape[1]):
                    for i in range(D.shape[-2]):
                        for j in range(D.shape[-1]):
                            for a in range(idx.shape[0]):
                                for b in range(idx.shape[1]):
                                    if E - w >= 0:
                                        dHG = G[k, E - w, idx[a, b]] @ dH[a, b, i]
                                        dHD = dH[a, b, j] * D[q, w, a, b, i, j]
                                        Sigma[k, E, a] += dHG @ dHD
    return Sigma


def sorted_rows(A, out):
    """The outer loop stays Python (np.sort has no kernel spelling); the inner one goes to Numba with
    the outer index as an int argument, assumed within ±2**40 (checked at the call) so `i + j`
    provably fits int64."""
    for i in range(A.shape[0]):
        row = np.sort(A[i])
        for j in range(1, A.shape[1]):
            out[i, j] = out[i, j - 1] * 0.5 + row[j] + A[(i + j) % A.shape[0], j]
    return out


def complex_recurrence(z, c, b):
    for i in range(1, len(z)):
        z[i] = z[i - 1] * c + b[i] - z[i - 1]
    return z


def complex_accumulate(z, w):
    s = np.complex128(0.0)
    for i in range(1, len(z)):
        s = s * 0.5 + z[i] * w[i - 1]
        z[i] = s
    return s


def energies_args(rng):
    nk, ne, nq, nw, na, nb, d = 2, 4, 2, 3, 2, 2, 3
    cplx = (lambda *shape: rng.random(shape) + 1j * rng.random(shape))
    return (rng.integers(0, 3, (na, nb)), cplx(na, nb, d, d, d), cplx(nk, ne, 3, d, d),
            cplx(nq, nw, na, nb, d, d), cplx(nk, ne, na, d, d))


def test_complex_matrix_products_in_a_deep_nest_go_to_numba(rng, caplog):
    args = energies_args(rng)
    with caplog.at_level(logging.INFO, logger="graphjit.vectorize"):
        jitted = run_same(self_energies, args, rtol=1e-12, jit_level="O2")
    assert "_numba_kernel(" in jitted.source(*args)
    assert "'arr:complex128:5" in jitted.source(*args)
    bad = list(energies_args(rng))
    bad[0][1, 0] = 7                    # G[k, E - w, 7]: NumPy's IndexError after the same writes
    eager, compiled = [a.copy() for a in bad], [a.copy() for a in bad]
    with pytest.raises(IndexError) as eager_error:
        self_energies(*eager)
    with pytest.raises(IndexError) as compiled_error:
        jitted(*compiled)
    assert str(compiled_error.value) == str(eager_error.value)
    np.testing.assert_allclose(compiled[-1], eager[-1], rtol=1e-12)   # `@` may sum in another order


def test_complex_recurrences_and_accumulators_equal_eager(rng):
    z, b = rng.random(20) + 1j * rng.random(20), rng.random(20) - 0.5j
    jitted = run_same(complex_recurrence, (z, np.complex128(0.5 - 0.25j), b), jit_level="O2")
    assert "_numba_kernel(" in jitted.source(z, np.complex128(0.5 - 0.25j), b)
    w = rng.random(20) * (1 + 1j)
    jitted = run_same(complex_accumulate, (z, w), jit_level="O2")
    assert "_numba_kernel(" in jitted.source(z, w)
    assert type(jitted(z.copy(), w)) is np.complex128


def complex_division(z, b):
    for i in range(1, len(z)):
        z[i] = z[i - 1] / b[i]
    return z


def complex_magnitude(z, out):
    for i in range(1, len(z)):
        out[i] = out[i - 1] * 0.5 + abs(z[i])
    return out


def complex_into_floats(z, out):
    for i in range(1, len(z)):
        out[i] = out[i - 1] + z[i]
    return out


def test_an_int_argument_is_checked_against_the_bound_the_plan_assumed(rng, caplog):
    A = rng.random((5, 6))
    with caplog.at_level(logging.INFO, logger="graphjit.vectorize"):
        jitted = run_same(sorted_rows, (A, np.zeros((5, 6))), jit_level="O2")
    source = jitted.source(A, np.zeros((5, 6)))
    assert "_numba_kernel(" in source and "'int:1099511627776'" in source
    handle = numba_kernels.numba_kernel("bounded_int", "numpy", ("arr:float64:1", "int:1099511627776"), (), (
        "def bounded_int(x, n):\n", "    x[0] = n\n"))
    x = np.zeros(2)
    handle(x, 2 ** 40)
    assert x[0] == 2.0 ** 40
    with pytest.raises(numba_kernels.KernelRefused):   # beyond the bound: the Python loop runs
        handle(x, 2 ** 40 + 1)


@pytest.mark.parametrize("fn, reason", [
    (complex_division, "`truediv` on complex values has no kernel spelling"),
    (complex_magnitude, "`py_abs` on complex values has no kernel spelling"),
])
def test_complex_ops_numba_would_compute_otherwise_stay_python_and_say_why(fn, reason, rng, caplog):
    z = rng.random(8) + 1j * rng.random(8)
    second = z.copy() if fn is complex_division else np.zeros(8)
    with caplog.at_level(logging.INFO, logger="graphjit.vectorize"):
        jitted = run_same(fn, (z, second), jit_level="O2")
    assert "_numba_kernel(" not in jitted.source(z, second)
    assert f"stays a Python loop, not a Numba kernel: {reason}" in caplog.text


def test_a_complex_value_stored_into_a_float_array_stays_python(rng, caplog):
    z = rng.random(6) + 1j * rng.random(6)
    with caplog.at_level(logging.INFO, logger="graphjit.vectorize"):
        jitted = graphjit.jit(complex_into_floats, jit_level="O2")
        source = jitted.source(z, np.zeros(6))
    assert "_numba_kernel(" not in source
    assert "a complex value stored into a float64 array" in caplog.text


def scaled_rows(A, flag, out):
    for i in range(1, A.shape[0]):
        for j in range(A.shape[1]):
            if flag:
                out[i, j] = out[i - 1, j] * 0.5 + A[i, j]
            else:
                out[i, j] = out[i - 1, j] - A[i, j]
    return out


@pytest.mark.parametrize("flag", [True, False])
def test_loops_the_unswitch_pass_copied_go_to_numba(flag, rng):
    A = rng.random((6, 5))
    jitted = run_same(scaled_rows, (A, flag, np.zeros((6, 5))), jit_level="O2")
    assert "_numba_kernel(" in jitted.source(A, flag, np.zeros((6, 5)))
