"""`sum_to(g, like)`: a gradient summed back to the shape of the value it belongs to.

Broadcasting in the forward pass (`x + b` with `b` of shape (5,) and `x` of (3, 5)) stretches a
value; its gradient is the sum over the stretched axes. When both shapes are known at compile
time the autodiff transform emits those sums itself (`g.sum(axis=(0,))`); this function is the
run-time form, for values whose shape only the call knows (a Python number, an `object` value).
"""

from __future__ import annotations

import numpy as np


def sum_to(g, like):
    """`g` summed over the axes that broadcasting added to or stretched in `like`'s shape."""
    have, want = np.shape(g), np.shape(like)
    if have == want:
        return g
    lead = len(have) - len(want)
    if lead > 0:
        g = np.sum(g, axis=tuple(range(lead)))
    stretched = tuple(k for k, (w, h) in enumerate(zip(want, np.shape(g))) if w == 1 and h != 1)
    if stretched:
        g = np.sum(g, axis=stretched, keepdims=True)
    return g
