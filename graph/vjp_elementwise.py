"""VJP rules of the elementwise ops: operators, NumPy ufuncs, `where`, `clip` and Python's `min`/`max`.

Each rule multiplies the cotangent `g` by the op's partial derivative with respect to each operand,
written with the table's own ops so the emitted gradient reads like NumPy (`g * np.cos(x)`). The
transform sums each result back to its operand's shape, so broadcasting never shows here.
"""

from __future__ import annotations

import math

from .vjp_common import differentiable, none_for_rest

LN2, LN10 = math.log(2.0), math.log(10.0)


# --- arithmetic ---------------------------------------------------------------------------------
def add(b, node, g):
    return (g, g)


def sub(b, node, g):
    return (g, b.op("neg", g))


def mul(b, node, g):
    x, y = node.operands[:2]
    return (b.op("mul", g, y), b.op("mul", g, x))


def truediv(b, node, g):
    x, y = node.operands[:2]
    gx = b.op("truediv", g, y)
    return (gx, b.op("neg", b.op("mul", gx, node)))


def power(b, node, g):
    """d(x**y) = y * x**(y-1) dx + log(x) * x**y dy; the `dy` part only when y is differentiable."""
    x, y = node.operands[:2]
    gx = b.op("mul", g, b.op("mul", y, b.op("pow", x, b.op("sub", y, b.const(1)))))
    gy = b.op("mul", g, b.op("mul", b.op("log", x), node)) if differentiable(y) else None
    return (gx, gy)


def remainder(b, node, g):
    """`x % y` is `x - floor(x / y) * y`: the floor is piecewise constant."""
    x, y = node.operands[:2]
    return (g, b.op("neg", b.op("mul", g, b.op("floor", b.op("truediv", x, y)))))


def fmod(b, node, g):
    """`np.fmod(x, y)` is `x - trunc(x / y) * y`."""
    x, y = node.operands[:2]
    return (g, b.op("neg", b.op("mul", g, b.op("trunc", b.op("truediv", x, y)))))


def neg(b, node, g):
    return (b.op("neg", g),)


def pos(b, node, g):
    return (g,)


def flat(b, node, g):
    """Piecewise constant (floor, ceil, sign, `//`...): the gradient is zero almost everywhere."""
    return (None,) * len(node.operands)


# --- elementwise functions: f'(x) from x or from the result -------------------------------------
def _times(b, g, factor):
    return (b.op("mul", g, factor),)


def _over(b, g, divisor):
    return (b.op("truediv", g, divisor),)


def exp(b, node, g):
    return _times(b, g, node)


def exp2(b, node, g):
    return _times(b, g, b.op("mul", node, b.const(LN2)))


def expm1(b, node, g):
    return _times(b, g, b.op("add", node, b.const(1.0)))


def log(b, node, g):
    return _over(b, g, node.operands[0])


def log1p(b, node, g):
    return _over(b, g, b.op("add", node.operands[0], b.const(1.0)))


def log2(b, node, g):
    return _over(b, g, b.op("mul", node.operands[0], b.const(LN2)))


def log10(b, node, g):
    return _over(b, g, b.op("mul", node.operands[0], b.const(LN10)))


def sqrt(b, node, g):
    return _over(b, g, b.op("mul", b.const(2.0), node))


def cbrt(b, node, g):
    return _over(b, g, b.op("mul", b.const(3.0), b.op("mul", node, node)))


def square(b, node, g):
    return _times(b, g, b.op("mul", b.const(2.0), node.operands[0]))


def reciprocal(b, node, g):
    return (b.op("neg", b.op("mul", g, b.op("mul", node, node))),)


def sin(b, node, g):
    return _times(b, g, b.op("cos", node.operands[0]))


def cos(b, node, g):
    return (b.op("neg", b.op("mul", g, b.op("sin", node.operands[0]))),)


def tan(b, node, g):
    """d tan x = (1 + tan² x) dx."""
    return _times(b, g, b.op("add", b.const(1.0), b.op("mul", node, node)))


def _one_minus_square(b, x):
    return b.op("sub", b.const(1.0), b.op("mul", x, x))


def arcsin(b, node, g):
    return _over(b, g, b.op("sqrt", _one_minus_square(b, node.operands[0])))


def arccos(b, node, g):
    return (b.op("neg", b.op("truediv", g, b.op("sqrt", _one_minus_square(b, node.operands[0])))),)


def arctan(b, node, g):
    x = node.operands[0]
    return _over(b, g, b.op("add", b.const(1.0), b.op("mul", x, x)))


def sinh(b, node, g):
    return _times(b, g, b.op("cosh", node.operands[0]))


def cosh(b, node, g):
    return _times(b, g, b.op("sinh", node.operands[0]))


def tanh(b, node, g):
    return _times(b, g, _one_minus_square(b, node))


def arcsinh(b, node, g):
    x = node.operands[0]
    return _over(b, g, b.op("sqrt", b.op("add", b.op("mul", x, x), b.const(1.0))))


def arccosh(b, node, g):
    x = node.operands[0]
    return _over(b, g, b.op("sqrt", b.op("sub", b.op("mul", x, x), b.const(1.0))))


def arctanh(b, node, g):
    return _over(b, g, _one_minus_square(b, node.operands[0]))


def absolute(b, node, g):
    return _times(b, g, b.op("sign", node.operands[0]))


def scale(factor: float):
    """A rule for `x * factor` (deg2rad, rad2deg)."""
    def rule(b, node, g):
        return _times(b, g, b.const(factor))
    rule.__name__ = f"times_{factor:.6g}"
    return rule


def hypot(b, node, g):
    x, y = node.operands[:2]
    share = b.op("truediv", g, node)
    return (b.op("mul", share, x), b.op("mul", share, y))


def arctan2(b, node, g):
    """`np.arctan2(y, x)`: d = (x dy - y dx) / (x² + y²)."""
    y, x = node.operands[:2]
    share = b.op("truediv", g, b.op("add", b.op("mul", x, x), b.op("mul", y, y)))
    return (b.op("mul", share, x), b.op("neg", b.op("mul", share, y)))


def copysign(b, node, g):
    """`np.copysign(x, y)` is `|x|` with the sign of `y`: x's gradient flips where the signs differ."""
    x = node.operands[0]
    return (b.op("mul", g, b.op("mul", b.op("sign", x), b.op("sign", node))), None)


# --- choices: the gradient goes to the operand that was chosen ----------------------------------
def maximum(b, node, g):
    """Ties go to the first operand, as NumPy (and Python's `max`) pick it."""
    return choose(b, node.operands[0], node.operands[1], g, "ge")


def minimum(b, node, g):
    return choose(b, node.operands[0], node.operands[1], g, "le")


def choose(b, x, y, g, relation):
    """`g` to `x` where `x relation y` holds, to `y` elsewhere."""
    first = b.op(relation, x, y)
    zero = b.const(0.0)
    return (b.op("where", first, g, zero), b.op("where", first, zero, g))


def where(b, node, g):
    c = node.operands[0]
    zero = b.const(0.0)
    return (None, b.op("where", c, g, zero), b.op("where", c, zero, g))


def clip(b, node, g):
    """`np.clip(x, lo, hi)` is `np.minimum(np.maximum(x, lo), hi)` (a bound may be None)."""
    x, lo, hi = node.operands[:3]
    bounded, g_hi = x, None
    if not _is_none(hi):
        if not _is_none(lo):
            bounded = b.op("maximum", x, lo)
        g, g_hi = choose(b, bounded, hi, g, "le")
    g_lo = None
    if not _is_none(lo):
        g, g_lo = choose(b, x, lo, g, "ge")
    return (g, g_lo, g_hi)


def _is_none(node) -> bool:
    return node.op == "const" and node.value is None


def identity(b, node, g):
    return none_for_rest(node, g)
