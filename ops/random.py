"""Random numbers (`ops.dropout`, `ops.uniform`, `ops.normal`): drawn at call time, also when compiled.

Every draw is a call of NumPy's global generator (`np.random.random`, `np.random.standard_normal`),
which `graphjit.set_seed(n)` seeds (MindSpore's `set_seed` seeds NumPy too). Inside `jit` such a call
is never computed at compile time, merged with another or moved past one (the call lowering and the
op table treat `numpy.random` as effects), so a compiled function draws fresh numbers at every call,
in the order eager code does: from the same seed, compiled and eager code give the same numbers.

MindSpore's per-operator `seed=` argument is accepted and does not change the stream: the numbers
depend on `set_seed` and on the order of draws only (as on MindSpore's Ascend backend).
"""

from __future__ import annotations

import numpy as np

__all__ = ["dropout", "uniform", "normal"]


def dropout(input, p=0.5, training=True, seed=None):
    """MindSpore's `ops.dropout(input, p=0.5, training=True, seed=None)`: when `training`, each
    element is zeroed with probability `p` and the others are scaled by `1 / (1 - p)`; otherwise, or
    with `p == 0`, `input` itself is returned."""
    if not training or p == 0:
        return input
    if p == 1:
        return input * 0
    keep = np.random.random(input.shape) >= p
    return np.where(keep, input * (1 / (1 - p)), 0)


def uniform(shape, minval, maxval, seed=None, dtype=np.float32):
    """MindSpore's `ops.uniform(shape, minval, maxval, seed=None, dtype=float32)`: numbers uniform in
    `[minval, maxval)`, of `shape` broadcast with `minval` and `maxval`. With an integer `dtype`, whole
    numbers in `[minval, maxval)`, each equally likely."""
    u = np.random.random(shape)
    if np.issubdtype(dtype, np.integer):
        return np.floor(minval + (maxval - minval) * u).astype(dtype)
    return (minval + (maxval - minval) * u).astype(dtype)


def normal(shape, mean, stddev, seed=None):
    """MindSpore's `ops.normal(shape, mean, stddev, seed=None)`: N(mean, stddev^2) samples, of `shape`
    broadcast with `mean` and `stddev` (float32 unless `mean` or `stddev` is a float64 array)."""
    z = np.random.standard_normal(shape).astype(np.float32)
    return mean + stddev * z
