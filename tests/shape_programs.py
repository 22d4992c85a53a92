"""Loop shapes from real code that the vectorizer must turn into whole-array NumPy (issue 14, "Real
loop shapes vectorize"), written the way people write them. tests/graph/vectorize/test_loop_shapes.py
checks them against eager Python; benchmarks/kernels.py times some of them against NumPy.

- an accumulation followed by a per-element branch on the accumulated value (ReLU or clamp of a
  dot product);
- per-element `if`/`elif`/`else` whose branches call NumPy ufuncs or `math` functions on the
  element, including calls that would warn or raise on the elements the other branch takes;
- loops over `np.ndindex(shape)` and `itertools.product` of ranges;
- nests whose inner result feeds a second inner loop (a row's mean, then its variance, then the
  normalized row).
"""

import itertools
import math

import numpy as np


# --- an accumulation, then a branch on it ---------------------------------------------------------
def relu_dense(W, x, b):
    n, m = W.shape
    out = np.empty(n)
    for i in range(n):
        s = b[i]
        for k in range(m):
            s += W[i, k] * x[k]
        if s < 0:
            s = 0.0
        out[i] = s
    return out


def clamp_dot(W, x, lo, hi):
    n = W.shape[0]
    out = np.empty(n)
    for i in range(n):
        s = 0.0
        for k in range(W.shape[1]):
            s += W[i, k] * x[k]
        if s < lo:
            out[i] = lo
        elif s > hi:
            out[i] = hi
        else:
            out[i] = s
    return out


# --- per-element branches that call ufuncs ---------------------------------------------------------
def piecewise_log(x):
    out = np.empty_like(x)
    for i in range(len(x)):
        if x[i] > 1.0:
            out[i] = np.log(x[i])       # would warn on the elements <= 0 the other branches take
        elif x[i] > 0.0:
            out[i] = np.sqrt(x[i])
        else:
            out[i] = np.exp(x[i]) - 1.0
    return out


def piecewise_math(x):
    out = np.empty_like(x)
    for i in range(len(x)):
        v = x[i]
        if v > 1.0:
            out[i] = math.log(v)        # math raises where NumPy warns
        elif v > 0.0:
            out[i] = math.sqrt(v)
        else:
            out[i] = math.exp(v) - 1.0
    return out


def softplus(x):
    out = np.empty_like(x)
    for i in range(len(x)):
        v = x[i]
        if v > 20.0:
            out[i] = v
        elif v < -20.0:
            out[i] = np.exp(v)
        else:
            out[i] = np.log1p(np.exp(v))   # np.exp overflows (and warns) only on elements > 709
    return out


def branch_value(x):
    out = np.empty_like(x)
    for i in range(len(x)):
        v = x[i]
        if v > 1.0:
            y = np.log(v)
        elif v > 0.0:
            y = np.sqrt(v)
        else:
            y = -v
        out[i] = 2.0 * y
    return out


def log_sqrt_sum(x):
    s = 0.0
    for i in range(len(x)):
        if x[i] > 1.0:
            s += np.log(x[i])
        elif x[i] > 0.0:
            s += np.sqrt(x[i])
    return s


def log_max(x):
    m = -math.inf
    for i in range(len(x)):
        if x[i] > 0.0:
            m = max(m, np.log(x[i]))
    return m


# --- np.ndindex and itertools.product ---------------------------------------------------------------
def ndindex_blend(a, b, w):
    out = np.empty_like(a)
    for idx in np.ndindex(a.shape):
        out[idx] = w * a[idx] + (1.0 - w) * b[idx]
    return out


def ndindex_threshold(img, t):
    out = np.zeros(img.shape)
    for i, j in np.ndindex(img.shape):
        if img[i, j] > t:
            out[i, j] = 1.0
    return out


def ndindex_grid(n, m):
    g = np.empty((n, m))
    for i, j in np.ndindex(n, m):
        g[i, j] = i * m + j
    return g


def product_scale(img, rows, cols):
    h, w = img.shape
    out = np.zeros_like(img)
    for i, j in itertools.product(range(h), range(w)):
        out[i, j] = img[i, j] * rows[i] * cols[j]
    return out


# --- an inner result feeding a second inner loop ----------------------------------------------------
def center_rows(a):
    n, m = a.shape
    out = np.empty_like(a)
    for i in range(n):
        s = 0.0
        for j in range(m):
            s += a[i, j]
        mean = s / m
        for j in range(m):
            out[i, j] = a[i, j] - mean
    return out


def standardize_rows(a):
    n, m = a.shape
    out = np.empty_like(a)
    for i in range(n):
        s = 0.0
        for j in range(m):
            s += a[i, j]
        mean = s / m
        v = 0.0
        for j in range(m):
            d = a[i, j] - mean
            v += d * d
        std = math.sqrt(v / m)
        for j in range(m):
            out[i, j] = (a[i, j] - mean) / std
    return out


def layer_norm(x, gamma, beta, eps):
    n, d = x.shape
    out = np.empty_like(x)
    for i in range(n):
        mean = 0.0
        for j in range(d):
            mean += x[i, j]
        mean /= d
        var = 0.0
        for j in range(d):
            var += (x[i, j] - mean) ** 2
        var /= d
        inv = 1.0 / math.sqrt(var + eps)
        for j in range(d):
            out[i, j] = (x[i, j] - mean) * inv * gamma[j] + beta[j]
    return out


def softmax_rows(a):
    n, m = a.shape
    out = np.empty_like(a)
    for i in range(n):
        mx = -np.inf
        for j in range(m):
            mx = max(mx, a[i, j])
        s = 0.0
        for j in range(m):
            e = np.exp(a[i, j] - mx)
            out[i, j] = e
            s += e
        for j in range(m):
            out[i, j] /= s
    return out
