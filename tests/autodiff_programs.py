"""Differentiable programs for the autodiff tests: each with the arguments it takes and, where the
`autograd` package can run it, a twin written with `autograd.numpy` as an independent oracle."""

import numpy as np

import graphjit as gj


def mlp(x, w, b):
    h = np.tanh(x @ w + b)
    return (h * h).mean()


def branch(x, w):
    y = x * w
    if y.sum() > 0:
        y = np.sin(y) * w
    else:
        y = y * y
    return y.sum()


def loop(x, w):
    y = x
    s = 0.0
    for i in range(3):
        y = np.tanh(y * w) + x
        s = s + (y * i).sum()
    return s + y.sum()


def while_break(x, w):
    y = x
    k = 0
    while k < 5:
        y = y * w + 0.1
        k += 1
        if np.abs(y).sum() > 8.0:
            break
    return y.sum()


def writes(x, w):
    z = np.zeros(4)
    z[1:] = x[:3] * w[1:]
    a = (z * w).sum()
    z[0] = a
    z += x
    z *= w
    return (z * z).sum() + a


def gather_scatter(x, w):
    idx = np.array([0, 2, 2, 3])
    g = x[idx] * w
    out = np.zeros(6)
    out[1:5] = g
    return (out * out).sum() + x[idx].sum()


def reductions(x, w):
    a = np.sum(x * w, axis=0, keepdims=True)
    b = np.max(x, axis=1)
    c = np.mean(x * x, axis=(0, 1))
    return (a * a).sum() + (b * w[0]).sum() + c


def where_maximum(x, w):
    y = np.where(x > 0, x * w, -x)
    return np.maximum(y, 0.5 * w).sum()


def softmax_xent(x, w, labels):
    z = x @ w
    m = gj.stop_gradient(z.max(axis=1, keepdims=True))
    e = np.exp(z - m)
    logp = z - m - np.log(e.sum(axis=1, keepdims=True))
    return -logp[np.arange(labels.shape[0]), labels].mean()


def tuple_output(x, w):
    return (x * w).sum(), x * 2.0


def aux_output(x, w):
    loss = (x * w).sum()
    return loss, x + 1.0


def loop_continue(x, w):
    y = x
    for i in range(4):
        if (y * w).sum() > 1.0:
            continue
        y = np.sin(y) * w + 0.5
    return (y * y).sum()


def loop_return(x, w):
    y = x
    k = 0
    while k < 6:
        y = y * w + 0.2
        if np.abs(y).sum() > 3.0:
            return y.sum()
        k += 1
    return -y.sum()


def fill_loop(x, w):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        out[i] = np.sin(x[i]) * w[i] + x[i] * x[i]
    return (out * out).sum()


def accumulate(x, w):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        out[i] += x[i] * w[i]
        out[(i + 1) % x.shape[0]] -= x[i]
    return (out * out * w).sum()


def recurrence(x, w):
    """Each element reads the one before: the backward loop replays the recorded reads."""
    out = np.zeros_like(x)
    out[0] = x[0]
    for i in range(1, x.shape[0]):
        out[i] = out[i - 1] * w[i] + np.sin(x[i])
    return (out * out).sum()


def nested_fill(x, w):
    out = np.zeros((x.shape[0], w.shape[0]))
    for i in range(x.shape[0]):
        for j in range(w.shape[0]):
            out[i, j] = x[i] * w[j] + x[i]
    return (out * out).sum()


def row_writes(x, w):
    out = np.zeros((3, x.shape[0]))
    for i in range(3):
        out[i] = x * w[i] + out[i - 1]
    return (out ** 2).sum()


def read_before_loop(x, w):
    out = np.zeros_like(x)
    a = (out + x) * w              # sees the zeros the loop then overwrites
    k = 0
    while k < x.shape[0]:
        out[k] = x[k] * 3.0 + out[k - 1]
        k += 1
    return (a * out).sum() + (out * w).sum()


def two_arrays_written(x, w):
    """Reads before a write get copies; the later array's read must get one too, after the copies
    taken for the first array moved it down the list (found by the program generator)."""
    a = w + 0.0
    a[1:] += w[:-1]
    a[2] = (w * a).sum()
    b = x + 0.0
    b[1:] = b[1:] + x[:-1]
    b[2] = (x * b).sum()
    return (a * b).sum()


def result_written(x, w):
    """exp's and tanh's rules read their own results, which later in-place writes change."""
    z = np.exp(x)
    z *= 2.0
    t = np.tanh(w)
    t[1:] = t[:-1] * x[1:]
    t.sort()
    return (z * w).sum() + (t * t * x).sum()


def scalar_updates(x, w):
    z = np.zeros(4)
    z[0] += x[0] * w[0]
    z[1] -= x[1]
    z[2] *= x[2]
    z[3] /= w[3] + 3.0
    return (z * x).sum()


def branch_write(x, w):
    out = np.zeros(4)
    if x.sum() > 0:
        out[0] = x[0] * w[0]
    return (out * w).sum()


def _wave(x, w):
    return (np.sin(x) * w * w).sum()


WAVE_GRAD = gj.grad(_wave, (0, 1))


def grad_inside(x, w):
    """A gradient function called inside: its argument `x * 2.0` is a constant to it, but not to
    the outer gradient, which flows through it (and through the inner backward pass)."""
    dx, dw = WAVE_GRAD(x * 2.0, w)
    return (dx * x).sum() + (dw * dw).sum()


WEIGHT = np.array([1.0, 2.0, 3.0])


def uses_weight(x):
    return (x * WEIGHT * WEIGHT).sum()


def rng_arrays(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal(s) for s in shapes)


# name -> (function, argument builder, grad_position)
PROGRAMS = {
    "mlp": (mlp, lambda: rng_arrays((3, 4), (4, 5), (5,)), (0, 1, 2)),
    "branch_then": (branch, lambda: (np.abs(rng_arrays((4,))[0]), np.abs(rng_arrays((4,), seed=1)[0])), (0, 1)),
    "branch_else": (branch, lambda: (-np.abs(rng_arrays((4,))[0]), np.abs(rng_arrays((4,), seed=1)[0])), (0, 1)),
    "loop": (loop, lambda: rng_arrays((4,), (4,)), (0, 1)),
    "while_break": (while_break, lambda: rng_arrays((4,), (4,)), (0, 1)),
    "writes": (writes, lambda: rng_arrays((4,), (4,)), (0, 1)),
    "gather_scatter": (gather_scatter, lambda: rng_arrays((4,), (4,)), (0, 1)),
    "reductions": (reductions, lambda: rng_arrays((3, 4), (4,)), (0, 1)),
    "where_maximum": (where_maximum, lambda: rng_arrays((5,), (5,)), (0, 1)),
    "loop_continue": (loop_continue, lambda: rng_arrays((4,), (4,)), (0, 1)),
    "loop_return": (loop_return, lambda: rng_arrays((4,), (4,), seed=2), (0, 1)),
    "softmax_xent": (softmax_xent, lambda: rng_arrays((6, 4), (4, 3)) + (np.array([0, 2, 1, 1, 0, 2]),), (0, 1)),
    "grad_inside": (grad_inside, lambda: rng_arrays((4,), (4,)), (0, 1)),
    "fill_loop": (fill_loop, lambda: rng_arrays((5,), (5,)), (0, 1)),
    "accumulate": (accumulate, lambda: rng_arrays((5,), (5,)), (0, 1)),
    "recurrence": (recurrence, lambda: rng_arrays((5,), (5,)), (0, 1)),
    "nested_fill": (nested_fill, lambda: rng_arrays((3,), (4,)), (0, 1)),
    "row_writes": (row_writes, lambda: rng_arrays((4,), (3,)), (0, 1)),
    "read_before_loop": (read_before_loop, lambda: rng_arrays((4,), (4,)), (0, 1)),
    "scalar_updates": (scalar_updates, lambda: rng_arrays((4,), (4,)), (0, 1)),
    "result_written": (result_written, lambda: rng_arrays((4,), (4,)), (0, 1)),
    "two_arrays_written": (two_arrays_written, lambda: rng_arrays((4,), (4,), seed=665), (0, 1)),
}


def cubic_sine(x):
    return np.sin(x) * x * x
