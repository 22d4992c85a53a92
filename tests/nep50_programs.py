"""Programs whose scalars change type through loops and branches under NumPy 2's rules (NEP 50),
written the way people write them: accumulators that start as Python numbers, values merged by
branches, loops that use what an earlier loop computed. tests/test_nep50_programs.py runs them
eagerly and compiled; benchmarks/kernels.py times `rowwise_normalize_loops`.
"""

import numpy as np


def acc_loop(x, init):
    s = init
    for i in range(x.shape[0]):
        s += x[i]
    return s


def acc_scaled(x, init):
    s = init
    for i in range(x.shape[0]):
        s = s + x[i] * 2
    return s, s * 2.0


def acc_then_loop(x, y, init):
    s = init
    for i in range(x.shape[0]):
        s += x[i]
    t = 0
    for j in range(y.shape[0]):
        t += y[j] - s
    return s, t


def branch_merge(x, init, c):
    if c > 0:
        s = init
    else:
        s = x[0]
    u = 0.0
    for j in range(x.shape[0]):
        u += x[j] * s
    return s, s * 2, u


def while_acc(x, init):
    s = init
    i = 0
    while i < x.shape[0]:
        s += x[i]
        i += 1
    return s, s + 1


def running_max(x, init):
    m = init
    for i in range(x.shape[0]):
        if x[i] > m:
            m = x[i]
    return m, m + 1


def float64_times(x, c):
    out = np.empty(x.shape[0])
    s = 0.0
    for i in range(x.shape[0]):
        out[i] = np.float64(c) * x[i]
        s += np.float64(c) * x[i]
    return out, s


def mixed_branches(x, c):
    if c > 0:
        s = 1
    else:
        s = 2.5
    t = 0.0
    for i in range(x.shape[0]):
        t += x[i] * s
    return s, t


def bool_any(x):
    found = False
    for i in range(x.shape[0]):
        found = found or x[i] > 1
    return found


def bool_or(x):
    found = False
    for i in range(x.shape[0]):
        found |= x[i] > 1
    return found


def counted(x):
    n = 0
    for i in range(x.shape[0]):
        if x[i] > 1:
            n += 1
    return n


def rowwise_normalize_loops(x):
    n, m = x.shape
    out = np.empty_like(x)
    for i in range(n):
        s = 0.0
        for j in range(m):
            s += x[i, j]
        mean = s / m
        v = 0.0
        for j in range(m):
            d = x[i, j] - mean
            v += d * d
        std = np.sqrt(v / m + 1e-5)
        for j in range(m):
            out[i, j] = (x[i, j] - mean) / std
    return out


def first_iteration_weak(x, y):
    """`s` is a Python float in the first outer iteration and x's NumPy scalar after it: the inner
    loop's `acc += y[j] * s` computes in y's dtype at first and in the wider one later."""
    s = 0.0
    out = np.zeros(x.shape[0], dtype=np.float64)
    for i in range(x.shape[0]):
        acc = y[0]
        for j in range(y.shape[0]):
            acc += y[j] * s
        out[i] = acc
        s += x[i]
    return out, s
