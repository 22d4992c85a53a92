"""Activation functions (`ops.relu`, `ops.softmax`, ...): plain NumPy, inlined into graphs by `jit`.

The one home of each formula: the layers of nn/layers.py (`nn.ReLU`, `nn.Softmax`, `nn.GELU`, Dense's
`activation='relu'`) call these. Each keeps a float input's dtype and is written to be numerically stable
(softmax shifts by the maximum, softplus and sigmoid never exponentiate a large positive number).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["relu", "relu6", "sigmoid", "tanh", "softmax", "log_softmax", "gelu", "leaky_relu", "silu",
           "softplus", "erf"]

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_SQRT_HALF = math.sqrt(0.5)


def relu(input):
    """`max(input, 0)`, MindSpore's `ops.relu(input)`."""
    return np.maximum(input, 0)


def relu6(x):
    """`min(max(x, 0), 6)`, MindSpore's `ops.relu6(x)`."""
    return np.minimum(np.maximum(x, 0), 6)


def sigmoid(input):
    """`1 / (1 + exp(-input))`, MindSpore's `ops.sigmoid(input)`; no overflow for large |input|."""
    e = np.exp(-np.abs(input))                      # in (0, 1]: never overflows
    return np.where(input >= 0, 1 / (1 + e), e / (1 + e))


def tanh(input):
    """MindSpore's `ops.tanh(input)`."""
    return np.tanh(input)


def softmax(input, axis=-1, *, dtype=None):
    """`exp(x) / sum(exp(x))` along `axis` (default -1), MindSpore's `ops.softmax(input, axis=-1, *,
    dtype=None)` (`dtype`: cast the input first), shifted by the maximum so no exponent overflows."""
    if dtype is not None:
        input = input.astype(dtype)
    e = np.exp(input - np.max(input, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def log_softmax(logits, axis=-1):
    """`x - log(sum(exp(x)))` along `axis` (default -1), MindSpore's `ops.log_softmax(logits, axis=-1)`."""
    shifted = logits - logits.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def erf(input):
    """The error function, MindSpore's `ops.erf(input)`: a rational Chebyshev fit of erfc whose
    relative error is below 1.2e-7 everywhere (float32's precision)."""
    z = np.abs(input)
    t = 1 / (1 + 0.5 * z)
    poly = -1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (
        -0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (
            -0.82215223 + t * 0.17087277))))))))
    erfc = t * np.exp(-z * z + poly)
    return np.sign(input) * (1 - erfc)


def gelu(input, approximate="none"):
    """Gaussian error linear unit, MindSpore's `ops.gelu(input, approximate='none')`: with 'none',
    `x * P(X <= x)` for a standard normal X (through `erf`); with 'tanh',
    `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`. `True`/`False` (as `nn.GELU` takes) mean
    'tanh'/'none'; `nn.GELU` defaults to the tanh form."""
    if approximate is True or approximate == "tanh":
        inner = _SQRT_2_OVER_PI * (input + 0.044715 * input * input * input)
        return 0.5 * input * (1 + np.tanh(inner))
    if approximate is False or approximate == "none":
        return 0.5 * input * (1 + erf(input * _SQRT_HALF))
    raise ValueError(f"gelu: approximate must be 'none' or 'tanh', not {approximate!r}")


def leaky_relu(input, alpha=0.2):
    """`x` where positive, `alpha * x` elsewhere, MindSpore's `ops.leaky_relu(input, alpha=0.2)`."""
    return np.where(input > 0, input, alpha * input)


def silu(input):
    """`x * sigmoid(x)` (swish), MindSpore's `ops.silu(input)`."""
    return input * sigmoid(input)


def softplus(input, beta=1, threshold=20):
    """`log(1 + exp(beta x)) / beta`, and `x` itself where `beta x > threshold`, MindSpore's
    `ops.softplus(input, beta=1, threshold=20)`; computed as `max(z, 0) + log1p(exp(-|z|))`."""
    z = beta * input
    smooth = (np.maximum(z, 0) + np.log1p(np.exp(-np.abs(z)))) / beta
    return np.where(z > threshold, input, smooth)
