"""Every op of the kernel column (graph/kernel_ops.py) compiles with Numba, spelled as the op table
emits it, on the operands the column allows, and gives NumPy's value; so do the `math` calls of
KERNEL_CALLS. A row added to the column without Numba support fails here."""

import math

import numpy as np
import pytest

from graphjit.graph.kernel_ops import KERNEL_CALLS, KERNEL_OPS
from graphjit.graph.ops import OPS

numba = pytest.importorskip("numba")

STRUCTURE = {"getitem", "setitem", "inplace", "dim", "len", "const", "note", "tuple_get", "if", "for_range"}
INT_ONLY = {"floordiv", "mod", "lshift", "rshift", "bitand", "bitor", "bitxor", "invert"}
TWO = {"py_min", "py_max", "maximum", "minimum"}
VECTORS = {"dot", "matmul", "flip"}   # ops on arrays only


def spelling(name: str, n: int) -> str:
    op = OPS[name]
    args = ["a", "b"][:n]
    if op.emit == "infix":
        return f"a {op.symbol} b"
    if op.emit == "prefix":
        return f"{op.symbol}a"
    return f"{op.symbol}({', '.join(args)})"


def operands(name: str) -> list:
    """(a, b) pairs of the kinds the column allows for op `name`."""
    spec = KERNEL_OPS[name]
    pairs = []
    if spec.scalars and name not in INT_ONLY:
        pairs += [(1.5, 2.5), (np.float64(1.5), 2.5)]
    if spec.scalars and spec.ints:
        pairs += [(7, 2), (np.int32(7), np.int32(2)), (np.uint8(7), 2)]
    if spec.arrays:
        pairs += [(np.linspace(0.5, 1.5, 4), np.linspace(1.0, 2.0, 4))]
    if spec.complex and spec.scalars:
        pairs += [(np.complex128(1.5 - 2j), np.complex128(0.25 + 1j)), (np.complex128(1.5 - 2j), 2.5)]
    if spec.complex and spec.arrays:
        pairs += [(np.linspace(0.5, 1.5, 4) * (1 - 2j), np.linspace(1.0, 2.0, 4) + 0.5j)]
    return pairs


COMPUTING = sorted(set(KERNEL_OPS) - STRUCTURE)


@pytest.mark.parametrize("name", COMPUTING)
def test_every_computing_op_of_the_kernel_column_compiles_and_agrees(name):
    n = 2 if OPS[name].arity == 2 or name in TWO else 1
    text = f"def kernel(a, b):\n    return {spelling(name, n)}\n"
    namespace = {"np": np, "math": math}
    exec(text, namespace)
    fn = numba.njit(boundscheck=True)(namespace["kernel"])
    pairs = operands(name)
    assert pairs, f"{name}: the column allows no operands"
    for a, b in pairs:
        expected = namespace["kernel"](a, b)
        got = fn(a, b)
        assert np.asarray(got).dtype == np.asarray(expected).dtype or not isinstance(expected, np.ndarray)
        np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-12)


@pytest.mark.parametrize("fn_name", sorted(KERNEL_CALLS))
def test_every_math_call_of_the_kernel_column_compiles_and_agrees(fn_name):
    n = 2 if fn_name in ("math.atan2", "math.copysign") else 1
    text = f"def kernel(a, b):\n    return {fn_name}({', '.join(['a', 'b'][:n])})\n"
    namespace = {"np": np, "math": math}
    exec(text, namespace)
    fn = numba.njit(namespace["kernel"])
    for a, b in [(0.5, -2.0), (-3.25, 0.0), (float("inf"), float("nan"))]:
        expected, got = namespace["kernel"](a, b), fn(a, b)
        assert (math.isnan(expected) and math.isnan(got)) or got == pytest.approx(expected, rel=1e-15)


def test_the_structural_ops_compile_indexing_regions_and_in_place_updates():
    text = """
def kernel(x, m):
    n = x.shape[0]
    s = 0.0
    for i in range(1, len(x)):
        if x[i] > 0.5:
            t = x[i - 1]
            t += m[i, 1:3].sum()
            s = t
        else:
            s = s * 0.5
        x[i] = s
        row = m[i, :]
        row += 1.0
        m[i, :] = row
    return (s, n)
"""
    namespace = {"np": np, "math": math}
    exec(text, namespace)
    fn = numba.njit(boundscheck=True)(namespace["kernel"])
    x, m = np.linspace(0.0, 1.0, 6), np.arange(24.0).reshape(6, 4)
    ex, em = x.copy(), m.copy()
    assert fn(x, m) == namespace["kernel"](ex, em)
    np.testing.assert_array_equal(x, ex)
    np.testing.assert_array_equal(m, em)
