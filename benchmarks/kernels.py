"""Numeric kernels written twice: `loop_style` (loops over indices, as a scientist first writes
them) and `numpy_style` (idiomatic whole-array NumPy). benchmarks/bench_vectorize.py times both,
plain and under `graphjit.jit(..., jit_level="O2")`, and checks they agree.

Each entry of KERNELS: name -> Kernel(loop_style, numpy_style, make_args(size, rng), sizes,
dependent). `dependent` kernels carry a real dependence from one iteration to the next: they
stay loops, and the benchmark only asks that they are correct and no slower than CPython.

A loop kernel the vectorizer's tests also run is written once, in tests/vector_programs.py (there
it is checked against eager Python at sizes 0, 1, 2 and 7), and taken from there (`V.dot`, ...);
the real loop shapes of issue 14 (a branch on a dot product, ufuncs in if/elif branches,
np.ndindex, a row's mean feeding its variance) likewise from tests/shape_programs.py (`S.*`).
The loops written here are the benchmark's own, or differ from the tests' on purpose: pairwise,
conv1d and conv2d allocate their result with `np.empty` (the tests' forms use `np.zeros(max(n, 0))`
to accept empty inputs, and compiled they run up to 2x slower at these sizes), and `cond_loop`
has other thresholds than `V.elif_chain` (another mix of branches for the blend).
"""

from __future__ import annotations

import math
import pathlib
import sys
from dataclasses import dataclass
from typing import Callable

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))
import shape_programs as S  # noqa: E402  (tests/shape_programs.py: real loop shapes the tests check)
import vector_programs as V  # noqa: E402  (tests/vector_programs.py: the loop kernels the tests check)
import nep50_programs as N  # noqa: E402  (tests/nep50_programs.py: loops whose scalars follow NEP 50)
import batched_programs as B  # noqa: E402  (tests/batched_programs.py: loops over small matrices)


# --- 1. elementwise chain --------------------------------------------------------------------
def chain_loop(a, x, y):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = a * x[i] + math.exp(-y[i]) * abs(x[i] - y[i])
    return out


def chain_numpy(a, x, y):
    return a * x + np.exp(-y) * np.abs(x - y)


# --- 2. dot product (reduction) --------------------------------------------------------------
def dot_numpy(x, y):
    return np.dot(x, y)


# --- 3. several reductions in one pass: sum, sum of squares, maximum, count ----------------
def stats_loop(x):
    s = 0.0
    ss = 0.0
    m = -math.inf
    n_pos = 0
    for i in range(len(x)):
        s += x[i]
        ss += x[i] * x[i]
        m = max(m, x[i])
        if x[i] > 0:
            n_pos += 1
    return s, ss, m, n_pos


def stats_numpy(x):
    return x.sum(), x @ x, max(-math.inf, x.max()), int(np.count_nonzero(x > 0))


# --- 4. matrix product (index contraction) ---------------------------------------------------
def matmul_numpy(a, b):
    return a @ b


# --- 5. 2-D Jacobi sweep (stencil) -----------------------------------------------------------
def jacobi_numpy(u):
    new = u.copy()
    new[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return new


# --- 6. 1-D heat equation: time steps stay a loop, space is vectorized -----------------------
def heat_numpy(u0, steps):
    u = u0.copy()
    new = u0.copy()
    for t in range(steps):
        new[1:-1] = u[1:-1] + 0.1 * (u[:-2] - 2.0 * u[1:-1] + u[2:])
        u, new = new, u
    return u


# --- 7. pairwise distances -------------------------------------------------------------------
def pairwise_loop(x):
    n, d = x.shape
    out = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            s = 0.0
            for k in range(d):
                diff = x[i, k] - x[j, k]
                s += diff * diff
            out[i, j] = math.sqrt(s)
    return out


def pairwise_numpy(x):
    diff = x[:, None, :] - x[None, :, :]
    return np.sqrt((diff * diff).sum(axis=-1))


# --- 8. per-element conditional (leaky clipped activation) -----------------------------------
def cond_loop(x):
    out = np.empty_like(x)
    for i in range(len(x)):
        if x[i] > 1.0:
            out[i] = 1.0
        elif x[i] > 0.0:
            out[i] = x[i]
        else:
            out[i] = 0.01 * x[i]
    return out


def cond_numpy(x):
    return np.where(x > 1.0, 1.0, np.where(x > 0.0, x, 0.01 * x))


# --- 9. 1-D convolution (valid) --------------------------------------------------------------
def conv1d_loop(x, w):
    n = len(x) - len(w) + 1
    out = np.empty(n)
    for i in range(n):
        s = 0.0
        for k in range(len(w)):
            s += w[k] * x[i + k]
        out[i] = s
    return out


def conv1d_numpy(x, w):
    return np.convolve(x, w[::-1], mode="valid")


# --- 10. 2-D convolution (valid) -------------------------------------------------------------
def conv2d_loop(img, ker):
    h = img.shape[0] - ker.shape[0] + 1
    w = img.shape[1] - ker.shape[1] + 1
    out = np.empty((h, w))
    for i in range(h):
        for j in range(w):
            s = 0.0
            for a in range(ker.shape[0]):
                for b in range(ker.shape[1]):
                    s += img[i + a, j + b] * ker[a, b]
            out[i, j] = s
    return out


def conv2d_numpy(img, ker):
    windows = np.lib.stride_tricks.sliding_window_view(img, ker.shape)
    return np.einsum("ijab,ab->ij", windows, ker)


# --- 11. prefix sum (a scan NumPy has: cumsum) -----------------------------------------------
def prefix_numpy(x):
    return np.cumsum(x)


# --- 12. linear recurrence (dependent: x[i] needs x[i-1]) ------------------------------------
def recurrence_loop(b, a):
    x = np.empty_like(b)
    x[0] = b[0]
    for i in range(1, len(b)):
        x[i] = a * x[i - 1] + b[i]
    return x


def recurrence_numpy(b, a):
    # no whole-array form: the idiomatic fast version loops over Python floats
    out = b.tolist()
    for i in range(1, len(out)):
        out[i] = a * out[i - 1] + out[i]
    return np.array(out)


# --- row-wise normalize: mean, then variance, then normalize, three loops per row -----------
# (tests/nep50_programs.py: `rowwise_normalize_loops`, float32 data summed into Python floats)
def rowwise_normalize_numpy(x):
    d = x - x.mean(axis=1, keepdims=True)
    return d / np.sqrt((d * d).mean(axis=1, keepdims=True) + 1e-5)


# --- 13. running balance with a floor (dependent scan: max of the carried value) -------------
def balance_loop(x):
    out = np.empty_like(x)
    s = 0.0
    for i in range(len(x)):
        s = max(0.0, s + x[i])
        out[i] = s
    return out


def balance_numpy(x):
    out = []
    s = 0.0
    for v in x.tolist():
        s = max(0.0, s + v)
        out.append(s)
    return np.array(out)


# --- 14. dense layer with ReLU: a dot product per row, then a branch on it --------------------
def relu_dense_numpy(W, x, b):
    return np.maximum(W @ x + b, 0.0)


# --- 15. piecewise function: if/elif/else calling ufuncs that warn off their branch ----------
def piecewise_numpy(x):
    # np.piecewise runs each function on its own elements only, as the loop does: evaluating
    # np.exp(x) - 1.0 on every element and overwriting the others (~1.2x faster) warns of overflow
    # where the loop gives no warning (x > 709 in the branches of np.log and np.sqrt)
    return np.piecewise(x, [x > 1.0, (x > 0.0) & (x <= 1.0)], [np.log, np.sqrt, lambda v: np.exp(v) - 1.0])


# --- 16. loop over np.ndindex ------------------------------------------------------------------
def ndindex_numpy(a, b, w):
    return w * a + (1.0 - w) * b


# --- 17. row-wise mean -> variance -> normalize: inner results feed the next inner loop -------
def standardize_numpy(a):
    mean = a.mean(axis=1, keepdims=True)
    return (a - mean) / np.sqrt(((a - mean) ** 2).mean(axis=1, keepdims=True))


@dataclass
class Kernel:
    loop_style: Callable
    numpy_style: Callable
    make_args: Callable        # (size, rng) -> args
    sizes: tuple               # (small, large)
    dependent: bool = False
    rtol: float = 1e-9


def neighbour_products_numpy(nbr, G, H, out):
    out += np.einsum("kabij,abjl->kail", G[:, nbr], H)
    return out


def _neighbour_args(n, rng):
    """n atoms on a ring, each with 4 neighbours; 3x3 blocks over 4 k-points (complex)."""
    nbr = (np.arange(n)[:, None] + np.arange(-2, 2)) % n
    G = rng.standard_normal((4, n, 3, 3)) + 1j * rng.standard_normal((4, n, 3, 3))
    H = rng.standard_normal((n, 4, 3, 3)) + 1j * rng.standard_normal((n, 4, 3, 3))
    return nbr, G, H, np.zeros((4, n, 3, 3), dtype=complex)


def _vec(n, rng):
    return rng.standard_normal(n)


KERNELS = {
    "chain": Kernel(chain_loop, chain_numpy, lambda n, r: (1.5, _vec(n, r), _vec(n, r)), (1_000, 200_000)),
    "dot": Kernel(V.dot, dot_numpy, lambda n, r: (_vec(n, r), _vec(n, r)), (1_000, 200_000)),
    "stats": Kernel(stats_loop, stats_numpy, lambda n, r: (_vec(n, r),), (1_000, 200_000)),
    "matmul": Kernel(V.matmul3, matmul_numpy, lambda n, r: (r.standard_normal((n, n)), r.standard_normal((n, n))),
                     (16, 96)),
    "jacobi": Kernel(V.jacobi2d, jacobi_numpy, lambda n, r: (r.standard_normal((n, n)),), (32, 400)),
    "heat": Kernel(V.heat, heat_numpy, lambda n, r: (_vec(n, r), 50), (200, 20_000)),
    "pairwise": Kernel(pairwise_loop, pairwise_numpy, lambda n, r: (r.standard_normal((n, 3)),), (20, 300)),
    "conditional": Kernel(cond_loop, cond_numpy, lambda n, r: (_vec(n, r),), (1_000, 200_000)),
    "conv1d": Kernel(conv1d_loop, conv1d_numpy, lambda n, r: (_vec(n, r), _vec(7, r)), (1_000, 100_000)),
    "conv2d": Kernel(conv2d_loop, conv2d_numpy, lambda n, r: (r.standard_normal((n, n)), r.standard_normal((3, 3))),
                     (24, 200)),
    "prefix": Kernel(V.prefix, prefix_numpy, lambda n, r: (_vec(n, r),), (1_000, 200_000)),
    "rowwise_normalize_loops": Kernel(N.rowwise_normalize_loops, rowwise_normalize_numpy,
                                      lambda n, r: (r.standard_normal((n, 64)).astype(np.float32),), (16, 3_000),
                                      rtol=1e-4),
    "recurrence": Kernel(recurrence_loop, recurrence_numpy, lambda n, r: (_vec(n, r), 0.9), (1_000, 100_000),
                         dependent=True),
    "balance": Kernel(balance_loop, balance_numpy, lambda n, r: (_vec(n, r),), (1_000, 100_000), dependent=True),
    "relu_dense": Kernel(S.relu_dense, relu_dense_numpy,
                         lambda n, r: (r.standard_normal((n, 64)), _vec(64, r), _vec(n, r)), (100, 4_000)),
    "piecewise": Kernel(S.piecewise_log, piecewise_numpy, lambda n, r: (_vec(n, r) * 2.0,), (1_000, 200_000)),
    "ndindex": Kernel(S.ndindex_blend, ndindex_numpy,
                      lambda n, r: (r.standard_normal((n, n, 3)), r.standard_normal((n, n, 3)), 0.25), (16, 200)),
    "neighbour_products": Kernel(B.neighbour_products, neighbour_products_numpy, _neighbour_args, (4, 200)),
    "standardize": Kernel(S.standardize_rows, standardize_numpy, lambda n, r: (r.standard_normal((n, n)),), (32, 400)),
}
