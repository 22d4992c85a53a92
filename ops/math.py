"""Math ops (`ops.matmul`, `ops.maximum`, `ops.abs`, `ops.sqrt`, `ops.pow`, `ops.exp`, `ops.log`, ...):
elementwise and matrix products with MindSpore's signatures, plain NumPy inlined into graphs by `jit`.
On Tensors they give Tensors (tensor.py).
"""

import numpy as np

__all__ = ["matmul", "maximum", "minimum", "abs", "absolute", "neg", "sqrt", "rsqrt", "square", "pow", "exp",
           "log", "log1p", "expm1", "sin", "cos", "floor", "ceil", "sign", "reciprocal", "add", "sub", "mul",
           "div", "clamp", "clip"]


def matmul(input, other):
    """The matrix product (batched over leading dimensions, as `@`)."""
    return np.matmul(input, other)


def maximum(input, other):
    return np.maximum(input, other)


def minimum(input, other):
    return np.minimum(input, other)


def abs(input):
    return np.abs(input)


def absolute(input):
    return np.abs(input)


def neg(input):
    return np.negative(input)


def sqrt(x):
    return np.sqrt(x)


def rsqrt(input):
    """1 / sqrt(input)."""
    return 1.0 / np.sqrt(input)


def square(input):
    return np.square(input)


def pow(input, exponent):
    return np.power(input, exponent)


def exp(input):
    return np.exp(input)


def log(input):
    return np.log(input)


def log1p(input):
    return np.log1p(input)


def expm1(input):
    return np.expm1(input)


def sin(input):
    return np.sin(input)


def cos(input):
    return np.cos(input)


def floor(input):
    return np.floor(input)


def ceil(input):
    return np.ceil(input)


def sign(input):
    return np.sign(input)


def reciprocal(input):
    return 1.0 / input


def add(input, other):
    return np.add(input, other)


def sub(input, other):
    return np.subtract(input, other)


def mul(input, other):
    return np.multiply(input, other)


def div(input, other, *, rounding_mode=None):
    """`input / other`; `rounding_mode` "floor" rounds down, "trunc" towards zero."""
    if rounding_mode is None:
        return np.true_divide(input, other)
    if rounding_mode == "floor":
        return np.floor_divide(input, other)
    if rounding_mode == "trunc":
        return np.trunc(np.true_divide(input, other))
    raise ValueError("div: rounding_mode must be None, 'floor' or 'trunc'")


def clamp(input, min=None, max=None):
    """`input` limited to [min, max] (either may be None)."""
    if min is None and max is None:
        raise ValueError("clamp: at least one of min and max must be given")
    return np.clip(input, min, max)


def clip(input, min=None, max=None):
    """`ops.clip`: the same as `ops.clamp`."""
    return clamp(input, min, max)
