"""Loop kernels for tests/graph/passes/test_vectorize.py: each is a plain Python loop over array indices.

CASES[name] = (function, make_args(rng, n), expectation). The expectation says what O2 does
with the loops: "vectorized" (no loop left), "partial" (an outer loop stays, inner ones are
vectorized) or "loop: <words of the reason>" (the loop stays, and the dump says why).
"""

import math

import numpy as np

def elem_chain(x, y):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = np.exp(-x[i]) * np.sin(y[i]) + np.sqrt(abs(x[i])) - min(x[i], y[i]) + max(0.0, y[i] - 0.5)
    return out

def math_calls(x):
    out = np.zeros_like(x)
    for i in range(len(x)):
        out[i] = math.exp(x[i]) + math.tanh(x[i]) * math.cos(x[i])
    return out

def dot(x, y):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * y[i]
    return s

def total(x):
    s = 0
    for i in range(len(x)):
        s = s + x[i]
    return s

def product(x):
    p = 1.0
    for i in range(len(x)):
        p *= x[i]
    return p

def maxes(x):
    m1 = -np.inf
    m2 = np.inf
    m3 = x[0] if len(x) else 0.0
    m4 = -1.0
    for i in range(len(x)):
        m1 = max(m1, x[i])
        m2 = min(m2, x[i])
        if x[i] > m3:
            m3 = x[i]
        m4 = np.maximum(m4, x[i])
    return m1, m2, m3, m4

def tern_max(x):
    m = -1.0
    for i in range(len(x)):
        m = x[i] if x[i] > m else m
    return m

def any_all(x):
    found = False
    ok = True
    pos = False
    for i in range(len(x)):
        found = found or x[i] > 0.9
        ok = ok and x[i] < 0.95
        if x[i] > 0.5:
            pos = True
    return found, ok, pos

def count_sum(x):
    c = 0
    s = 0.0
    for i in range(len(x)):
        if x[i] > 0.5:
            c += 1
            s += x[i]
    return c, s

def matmul3(a, b):
    n, k = a.shape
    m = b.shape[1]
    c = np.zeros((n, m))
    for i in range(n):
        for j in range(m):
            for p in range(k):
                c[i, j] += a[i, p] * b[p, j]
    return c

def matvec(a, x):
    y = np.zeros(a.shape[0])
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            y[i] += a[i, j] * x[j]
    return y

def stencil3(u):
    n = len(u)
    v = np.zeros_like(u)
    for i in range(1, n - 1):
        v[i] = (u[i - 1] + u[i] + u[i + 1]) / 3.0
    return v

def jacobi2d(u):
    n, m = u.shape
    new = u.copy()
    for i in range(1, n - 1):
        for j in range(1, m - 1):
            new[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])
    return new

def heat(u0, steps):
    u = u0.copy()
    new = u0.copy()
    n = len(u)
    for t in range(steps):
        for i in range(1, n - 1):
            new[i] = u[i] + 0.1 * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        u, new = new, u
    return u

def conv1d(x, w):
    n = len(x) - len(w) + 1
    out = np.zeros(max(n, 0))
    for i in range(n):
        s = 0.0
        for k in range(len(w)):
            s += w[k] * x[i + k]
        out[i] = s
    return out

def conv2d(img, ker):
    h = img.shape[0] - ker.shape[0] + 1
    w = img.shape[1] - ker.shape[1] + 1
    out = np.zeros((max(h, 0), max(w, 0)))
    for i in range(h):
        for j in range(w):
            s = 0.0
            for a in range(ker.shape[0]):
                for b in range(ker.shape[1]):
                    s += img[i + a, j + b] * ker[a, b]
            out[i, j] = s
    return out

def pairwise(x):
    n, d = x.shape
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            s = 0.0
            for k in range(d):
                diff = x[i, k] - x[j, k]
                s += diff * diff
            out[i, j] = math.sqrt(s)
    return out

def ifelse_writes(x):
    out = np.zeros_like(x)
    neg = np.zeros_like(x)
    for i in range(len(x)):
        if x[i] > 0.5:
            out[i] = x[i] * 2
        else:
            out[i] = -x[i]
            neg[i] = 1.0
    return out, neg

def unsafe_div(x, y):
    out = np.zeros_like(x)
    for i in range(len(x)):
        if y[i] != 0:
            out[i] = x[i] / y[i]
    return out

def recurrence(b):
    x = np.zeros_like(b)
    for i in range(1, len(b)):
        x[i] = 0.5 * x[i - 1] + b[i]
    return x

def prefix(x):
    out = np.empty_like(x)
    s = 0.0
    for i in range(len(x)):
        s += x[i]
        out[i] = s
    return out

def gauss_seidel(u):
    u = u.copy()
    for i in range(1, len(u) - 1):
        u[i] = 0.5 * (u[i - 1] + u[i + 1])
    return u

def shift_left(a):
    a = a.copy()
    for i in range(len(a) - 1):
        a[i] = a[i + 1]
    return a

def shift_right(a):
    a = a.copy()
    for i in range(len(a) - 1):
        a[i + 1] = a[i]
    return a

def reverse(x):
    out = np.empty_like(x)
    n = len(x)
    for i in range(n):
        out[i] = x[n - 1 - i]
    return out

def strided(x):
    out = np.zeros_like(x)
    for i in range(0, len(x), 2):
        out[i] = x[i] * 3
    return out

def triangular(a):
    n = a.shape[0]
    s = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            s[i, j] = a[i] * a[j]
    return s

def gather_idx(x, idx):
    out = np.zeros(len(idx))
    for i in range(len(idx)):
        out[i] = x[idx[i]]
    return out

def printing(x):
    s = 0.0
    for i in range(len(x)):
        print(i)
        s += x[i]
    return s

def early_exit(x):
    k = -1
    for i in range(len(x)):
        if x[i] > 0.5:
            k = i
            break
    return k

def f32_sum(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i]
    return s

def i32_sum(x):
    s = 0
    for i in range(len(x)):
        s += x[i]
    return s

def f32_index_mul(x):
    out = np.empty_like(x)
    for i in range(len(x)):
        out[i] = x[i] * i + 0.5
    return out

def rows_cols(x):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        out[i, :] = x[i, :] * 2
    for j in range(x.shape[1]):
        out[:, j] += x[:, j]
    return out

def row_acc(x):
    acc = np.zeros(x.shape[1])
    for i in range(x.shape[0]):
        acc += x[i]
    return acc

def alias_args(a, b):
    for i in range(len(a) - 1):
        a[i + 1] = b[i] * 2
    return a

def wrap_index(x):
    out = np.empty_like(x)
    for i in range(len(x)):
        out[i] = x[i - 1]
    return out

def nested_sum(a):
    t = 0.0
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            t += a[i, j] * 2
    return t

def last_value(x):
    last = 0.0
    for i in range(len(x)):
        last = x[i] * 2
    return last

def prefix_excl(x):
    out = np.empty_like(x)
    s = 0.0
    for i in range(len(x)):
        out[i] = s
        s += x[i]
    return out, s

def prefix_i32(x):
    out = np.empty_like(x)
    s = 0
    for i in range(len(x)):
        s += x[i]
        out[i] = s * 2
    return out

def elif_chain(x):
    out = np.empty_like(x)
    for i in range(len(x)):
        if x[i] > 0.8:
            out[i] = 1.0
        elif x[i] > 0.3:
            out[i] = x[i]
        else:
            out[i] = 0.01 * x[i]
    return out

def nested_partial(x):
    out = np.zeros_like(x)
    for i in range(len(x)):
        if x[i] > 0.3:
            out[i] = 5.0
            if x[i] > 0.6:
                out[i] = x[i]
    return out


def float32_dot(x, y):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * y[i]
    return s


def int_overflow_sum(x):
    s = 0
    for i in range(len(x)):
        s += x[i] * x[i]
    return s


def column_sums(x):
    out = np.zeros(x.shape[1])
    for j in range(x.shape[1]):
        for i in range(x.shape[0]):
            out[j] += x[i, j]
    return out


def argmax_loop(x):
    best = -1.0
    k = 0
    for i in range(len(x)):
        if x[i] > best:
            best = x[i]
            k = i
    return best, k


def outer_product(a, b):
    out = np.empty((len(a), len(b)))
    for i in range(len(a)):
        for j in range(len(b)):
            out[i, j] = a[i] * b[j] + i - j
    return out


def diagonal(a):
    out = np.zeros(a.shape[0])
    for i in range(a.shape[0]):
        out[i] = a[i, i] * 2
    return out


def runtime_bound(x):
    n = int(x[0] * 0) + len(x)
    out = np.zeros_like(x)
    for i in range(n):
        out[i] = x[i] + 1.0
    return out


def min_reverse_arg(x):
    m = 10
    for i in range(len(x)):
        m = min(x[i], m)
    return m


def heat_inplace(u0, steps):
    u = u0.copy()
    for t in range(steps):
        for i in range(1, len(u) - 1):
            u[i] = 0.5 * u[i] + 0.25 * (u[i - 1] + u[i + 1])
    return u


def carried_then_if(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i - 2]
        if x[i - 2] > 0.5:
            x[i - 2] = 0.0
    return s


def diag_write(x):
    out = np.zeros((len(x), len(x)))
    for i in range(len(x)):
        out[i, i] = x[i] * 3
    return out


def interleave(x, y):
    out = np.zeros(2 * len(x))
    for i in range(len(x)):
        out[2 * i] = x[i]
        out[2 * i + 1] = y[i]
    return out


def sub_and_int_product(x, k):
    s = 10.0
    p = 1
    for i in range(len(x)):
        s -= x[i]
        p *= k[i]
    return s, p


def bool_flags(m):
    any_set = False
    count = 0
    for i in range(len(m)):
        any_set = any_set | m[i]
        if m[i]:
            count += 1
    return any_set, count


def row_variable(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        row = x[i]
        for j in range(x.shape[1]):
            out[i, j] = row[j] * 2 + j
    return out


def index_weighted_sum(x):
    s = 0.0
    for i in range(len(x)):
        s = s + x[i] * i
    return s


def column_sum_and_max(x):
    out = np.zeros((2, x.shape[1]))
    for j in range(x.shape[1]):
        for i in range(x.shape[0]):
            out[0, j] += x[i, j]
            out[1, j] = max(out[1, j], x[i, j])
    return out


def write_then_read_same_element(x):
    out = np.zeros_like(x)
    for i in range(len(x)):
        out[i] = x[i]
        out[i] = out[i] * 2
    return out


def read_then_write_then_use(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i]
        x[i] = 0.0
    return s


def argmin_distance(x, y):
    best = math.inf
    k = -1
    for i in range(len(x)):
        d = abs(x[i] - y[i])
        if d < best:
            best = d
            k = i
    return best, k


def argmax_with_value(x, w):
    best = -1.0
    pick = 0.0
    for i in range(len(x)):
        if x[i] > best:
            best = x[i]
            pick = w[i]
    return best, pick


def safe_div(x, y):
    out = np.zeros_like(x)
    for i in range(len(x)):
        if y[i] != 0:
            out[i] = x[i] / y[i]
    return out


def safe_log_sum(x):
    s = 0.0
    for i in range(len(x)):
        if x[i] > 0.2:
            s += math.log(x[i])
    return s


def guarded_shift(x):
    out = np.zeros_like(x)
    for i in range(len(x)):
        if i > 0:
            out[i] = x[i - 1] / x[i]
        else:
            out[i] = -1.0
    return out


def rev_masked(x, y):
    out = np.zeros_like(x)
    for i in range(len(x) - 1, -1, -1):
        if y[i] > 0.5:
            out[i] = x[i] / (y[i] - 0.5)
    return out


def python_division(x):
    out = np.zeros_like(x)
    for i in range(len(x)):
        out[i] = x[i] + 1 / i
    return out


def unswitched_sign(x, up):
    out = np.empty_like(x)
    flag = up[0] > 0.5
    for i in range(len(x)):
        if flag:
            out[i] = x[i] * 2.0
        else:
            out[i] = -x[i]
    return out


def unswitched_sum(x, up):
    s = 0.0
    flag = up[0] > 0.5
    for i in range(len(x)):
        if flag:
            s += x[i]
        else:
            s = s * 0.5 + x[i]
    return s


def masked_yield(x):
    out = np.empty_like(x)
    for i in range(len(x)):
        if x[i] > 0.3:
            y = math.log(x[i])
        else:
            y = -1.0
        out[i] = y * 2.0 + i
    return out


def tri_upper_sum(a):
    n = a.shape[0]
    s = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            s += a[i, j]
    return s


def tri_lower_store(a, out):
    n = a.shape[0]
    for i in range(n):
        for j in range(i + 1):
            out[i, j] = a[i, j] * 2.0
    return out


def tri_row_products(a):
    n = a.shape[0]
    out = np.zeros(n)
    for i in range(n):
        s = 0.0
        for j in range(i):
            s += a[i, j] * a[j, i]
        out[i] = s
    return out


def tri_dependent(a):
    n = a.shape[0]
    for i in range(1, n):
        for j in range(i):
            a[i, j] = a[i - 1, j] + 1.0
    return a


def two_triangles(a, out):
    for i in range(a.shape[0]):
        for j in range(i):
            out[i, j] = a[i, j]
        for j in range(i, a.shape[1]):     # `j` again: carried from the first loop, unread
            out[i, j] = -a[i, j]
    return out


def unswitched_empty_branch(x, out):
    flag = x.sum() > 0.5
    for i in range(x.shape[0]):
        if flag:
            out[i] = x[i]
    return out


def flag_written_in_loop(x, out, flag):
    for i in range(x.shape[0]):
        if flag:
            out[i] = 1.0
        else:
            out[i] = 2.0
        flag[()] = x[i] > 0.5
    return out


def last_value_of_either_type(x):
    r = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            v = math.log(x[i])
        else:
            v = x[i]
        r = v
    return r


def last_row_sum(a):
    s = 0.0
    for i in range(a.shape[0]):
        s = 0.0
        for j in range(i + 1, a.shape[1]):
            s += a[i, j]
    return s


def max_of_roots(x):
    m = 0.0
    for i in range(x.shape[0]):
        m = max(m, math.sqrt(x[i]))
    return m


def tri_max(a):
    m = -1.0
    for i in range(a.shape[0]):
        for j in range(i):
            m = max(m, a[i, j])
    return m
