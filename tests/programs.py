"""One small function per lowered construct; tests/test_constructs.py compiles each and compares.

Each entry of CASES: (function, example-argument factory). Keep functions short: the golden
graph text of each lives in tests/golden/<name>.txt.
"""

import math

import numpy as np

import graphjit as gj
from graphjit import nn

SCALE = 3.0
WEIGHTS = np.arange(12, dtype=np.float64).reshape(3, 4) / 10


def helper(a, b=2.0):
    return a * b + 1


def arith(x, y):
    return (x + y) * (x - y) / 2.0 - x ** 2 + y // 3 + x % 2


def unary(x):
    return -x + (+x) - abs(x)


def compare(x, y):
    return (x < y) | (x >= 2.0) & ~(x == y)


def ufuncs(x):
    return np.exp(-x) + np.log1p(np.abs(x)) + np.sqrt(np.abs(x)) * np.tanh(x) + np.maximum(x, 0.5)


def reductions(x):
    return x.sum(axis=0) + np.mean(x, axis=0) - x.max(0) + np.min(x, axis=0, keepdims=True)[0]


def shapes(x):
    n = x.shape[0]
    y = x.reshape(n, -1).T
    return np.transpose(y, (1, 0)).reshape((n, x.shape[1])) + x.ndim + x.size


def indexing(x):
    return x[0] + x[-1, ::-1] + x[1:, None, 2][0, 0] + x[..., 1].sum() + x[x > 0.5].sum()


def fancy_index(x, idx):
    return x[idx] * 2


def set_item(x):
    y = x.copy()
    y[0] = 1.0
    y[1:, 2] = y[1:, 2] * 10
    y[y > 5] = 0
    return y


def aug_assign(x):
    y = x * 1.0
    y += 2
    y *= x
    n = 1
    n += 2
    return y - n


def unpack(x):
    a, b = x[0], x[1]
    first, *rest = (a, b, a * b)
    c, (d, e) = a, (b, a)
    return first + rest[1] + c * d - e


def static_if(x, mode):
    if mode == "double":
        y = x * 2
    elif mode == "square":
        y = x * x
    else:
        y = x
    return y


def runtime_if(x):
    if x.sum() > 0:
        y = x * 2
        z = 1.0
    else:
        y = -x
        z = 2.0
    return y + z


def returning_if(x):
    if x.mean() > 0.5:
        return x * 2
    y = x + 1
    if x.max() > 0.9:
        return y * 3
    return y


def ternary(x):
    s = x.sum()
    scale = 2.0 if s > 1 else 0.5
    return x * scale + (s > 0 and 1.0 or 3.0)


def bool_ops(x, flag):
    if flag and x.ndim == 2 or not flag:
        return x + 1
    return x


def for_range_runtime(x):
    acc = np.zeros_like(x[0])
    for i in range(x.shape[0]):
        acc = acc + x[i] * i
    return acc


def for_range_args(x, start, stop):
    total = 0.0
    for i in range(start, stop, 2):
        total = total + x[i].sum()
    return total


def for_static_list(x):
    out = x
    for k, w in enumerate([1.0, 2.0, 3.0]):
        out = out * w + k
    for a, b in zip((1, 2), (3, 4)):
        out = out + a * b
    return out


def for_rows(x):
    total = np.zeros(x.shape[1])
    for row in x:
        total += row
    return total


def while_loop(x):
    y = x.copy()
    n = 0
    while y.max() > 1.0:
        y = y / 2
        n = n + 1
    return y, n


def nested_loops_setitem(x):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            out[i, j] = x[i, j] * (i + j)
    return out


def nested_def(x):
    k = 3.0

    def inner(v, m=2.0):
        return v * k + m

    square = lambda v: v * v  # noqa: E731
    return inner(x) + square(x) + inner(x, m=5.0)


def helper_call(x):
    return helper(x) + helper(x, b=0.5) + helper(a=x)


def comprehension(x):
    parts = [x * k for k in range(3) if k != 1]
    return sum(parts) + max(1, 2) + len(parts)


def globals_and_closure(x):
    return x @ WEIGHTS + SCALE + math.pi


def make_closure():
    w = np.full((4,), 2.0)

    def use_closure(x):
        return x * w

    return use_closure


use_closure = make_closure()


def numpy_calls(x):
    z = np.zeros(x.shape, dtype=np.float32)
    o = np.ones_like(x)
    return np.where(x > 0.5, x, z) + np.clip(x, 0.2, 0.8) + o.astype(np.float64) + np.linalg.norm(x)


def tuple_return(x):
    return x.sum(), x.shape, None, "label"


def matmul_chain(a, b):
    return (a @ b).T @ a


class Scale(nn.Cell):
    def __init__(self, factor):
        super().__init__()
        self.factor = factor
        self.offset = np.array([1.0, 2.0, 3.0, 4.0])

    def construct(self, x):
        return x * self.factor + self.offset


class Block(nn.Cell):
    def __init__(self):
        super().__init__()
        self.layers = nn.SequentialCell([Scale(2.0), nn.ReLU(), Scale(0.5)])
        self.head = nn.Dense(4, 2, weight_init="ones", bias_init="zeros")

    def construct(self, x):
        return self.head(self.layers(x))


BLOCK = Block()


def cell_call(x):
    return BLOCK(x)


def isinstance_len(x, items):
    n = len(items) + len(x)
    if isinstance(items, tuple):
        n = n * 2
    return x * n


def scalar_args(x, n, scale=1.5):
    return x * n + scale


def tensor_call(x):
    t = gj.Tensor([1.0, 2.0, 3.0, 4.0], gj.float32)
    return x + t


def _mat(rng, *shape):
    return rng.random(shape)


CASES = {
    "arith": (arith, lambda r: (_mat(r, 3, 4), _mat(r, 3, 4) + 0.5)),
    "unary": (unary, lambda r: (_mat(r, 5) - 0.5,)),
    "compare": (compare, lambda r: (_mat(r, 6) * 3, _mat(r, 6) * 3)),
    "ufuncs": (ufuncs, lambda r: (_mat(r, 2, 3),)),
    "reductions": (reductions, lambda r: (_mat(r, 3, 4),)),
    "shapes": (shapes, lambda r: (_mat(r, 3, 4),)),
    "indexing": (indexing, lambda r: (_mat(r, 3, 4),)),
    "fancy_index": (fancy_index, lambda r: (_mat(r, 5), np.array([0, 2, 4]))),
    "set_item": (set_item, lambda r: (_mat(r, 3, 4) * 8,)),
    "aug_assign": (aug_assign, lambda r: (_mat(r, 4),)),
    "unpack": (unpack, lambda r: (_mat(r, 2, 3),)),
    "static_if": (static_if, lambda r: (_mat(r, 3), "square")),
    "runtime_if": (runtime_if, lambda r: (_mat(r, 3) - 0.5,)),
    "returning_if": (returning_if, lambda r: (_mat(r, 4),)),
    "ternary": (ternary, lambda r: (_mat(r, 3),)),
    "bool_ops": (bool_ops, lambda r: (_mat(r, 2, 2), True)),
    "for_range_runtime": (for_range_runtime, lambda r: (_mat(r, 4, 3),)),
    "for_range_args": (for_range_args, lambda r: (_mat(r, 8, 2), 1, 7)),
    "for_static_list": (for_static_list, lambda r: (_mat(r, 3),)),
    "for_rows": (for_rows, lambda r: (_mat(r, 4, 3),)),
    "while_loop": (while_loop, lambda r: (_mat(r, 3) * 10,)),
    "nested_loops_setitem": (nested_loops_setitem, lambda r: (_mat(r, 3, 2),)),
    "nested_def": (nested_def, lambda r: (_mat(r, 3),)),
    "helper_call": (helper_call, lambda r: (_mat(r, 3),)),
    "comprehension": (comprehension, lambda r: (_mat(r, 3),)),
    "globals_and_closure": (globals_and_closure, lambda r: (_mat(r, 2, 3),)),
    "use_closure": (use_closure, lambda r: (_mat(r, 4),)),
    "numpy_calls": (numpy_calls, lambda r: (_mat(r, 2, 3),)),
    "tuple_return": (tuple_return, lambda r: (_mat(r, 2, 3),)),
    "matmul_chain": (matmul_chain, lambda r: (_mat(r, 3, 4), _mat(r, 4, 3))),
    "cell_call": (cell_call, lambda r: (_mat(r, 2, 4) - 0.3,)),
    "isinstance_len": (isinstance_len, lambda r: (_mat(r, 3), (1, 2))),
    "scalar_args": (scalar_args, lambda r: (_mat(r, 3), 4)),
    "tensor_call": (tensor_call, lambda r: (_mat(r, 2, 4),)),
}
