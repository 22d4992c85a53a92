"""Vector-Jacobian product rules: how each op sends a cotangent back to its operands.

A rule is `rule(b, node, g) -> tuple` with one entry per operand of `node`: the cotangent of that
operand (a node built with `b`, the backward builder), or None when the operand gets nothing from
this use (an index, a condition, an integer). `g` is the cotangent of `node`'s result, with its
shape. The transform (graph/reverse_mode.py) sums what each operand receives back to the
operand's shape (undoing broadcasting), so rules never think about broadcasting.

The op table's `vjp` column names these rules (docs/ops.md lists them); an op without one is not
differentiable, and the table says why.
"""

from __future__ import annotations

from typing import Callable, Optional

from .ir import Node
from .literals import OperandRef
from .types import ArrayType, ScalarType


class Backward:
    """Builds backward nodes into a graph, each tagged with the span of the forward node it undoes."""

    def __init__(self, graph):
        self.graph = graph
        self.span = None

    def op(self, name: str, *operands: Node, **attrs) -> Node:
        return self.graph.add(name, operands, attrs, span=self.span)

    def const(self, value) -> Node:
        return self.graph.const(value, self.span)

    def shape_of(self, node: Node) -> Node:
        """The shape of `node` as a compile-time tuple when its type knows it, else read at run time."""
        t = node.type
        if isinstance(t, ArrayType) and t.shape is not None and None not in t.shape:
            return self.const(tuple(t.shape))
        return self.op("shape", node)


Rule = Callable[[Backward, Node, Node], tuple]


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


def matmul(b, node, g):
    """`x @ y`: vectors are matrices with their missing axis put back, then taken away again."""
    x, y = node.operands[:2]
    rx, ry = rank(x), rank(y)
    if rx is None or ry is None:
        raise NotImplementedError("the rank of both operands must be known")
    if rx == 1 and ry == 1:
        return (b.op("mul", g, y), b.op("mul", g, x))
    if rx == 1:                 # (k,) @ (..., k, n) -> (..., n)
        gx = b.op("matmul", b.op("swapaxes", y, b.const(-1), b.const(-2)) if ry > 2 else b.op("T", y), g) \
            if ry == 2 else b.op("matmul", y, b.op("expand_dims", g, b.const(-1)))
        if ry > 2:
            gx = b.op("squeeze", gx, b.const(-1))
        gy = b.op("mul", b.op("expand_dims", g, b.const(-2)), b.op("expand_dims", x, b.const(-1)))
        return (gx, gy)
    if ry == 1:                 # (..., m, k) @ (k,) -> (..., m)
        gx = b.op("mul", b.op("expand_dims", g, b.const(-1)), y)
        gy = b.op("matmul", transpose_last(b, x, rx), g) if rx == 2 else \
            b.op("squeeze", b.op("matmul", transpose_last(b, x, rx), b.op("expand_dims", g, b.const(-1))),
                 b.const(-1))
        return (gx, gy)
    return (b.op("matmul", g, transpose_last(b, y, ry)), b.op("matmul", transpose_last(b, x, rx), g))


def transpose_last(b, node, r):
    return b.op("T", node) if r == 2 else b.op("swapaxes", node, b.const(-1), b.const(-2))


def sinh(b, node, g):
    return (b.op("mul", g, b.op("cosh", node.operands[0])),)


def cosh(b, node, g):
    return (b.op("mul", g, b.op("sinh", node.operands[0])),)


def arctan(b, node, g):
    x = node.operands[0]
    return (b.op("truediv", g, b.op("add", b.const(1.0), b.op("mul", x, x))),)


def log2(b, node, g):
    return (b.op("truediv", g, b.op("mul", node.operands[0], b.const(0.6931471805599453))),)


def log10(b, node, g):
    return (b.op("truediv", g, b.op("mul", node.operands[0], b.const(2.302585092994046))),)


def exp2(b, node, g):
    return (b.op("mul", g, b.op("mul", node, b.const(0.6931471805599453))),)


def flat(b, node, g):
    """Piecewise constant (floor, ceil, sign...): the gradient is zero almost everywhere."""
    return (None,) * len(node.operands)


def neg(b, node, g):
    return (b.op("neg", g),)


def pos(b, node, g):
    return (g,)


# --- elementwise functions: f'(x) from x or from the result -------------------------------------
def exp(b, node, g):
    return (b.op("mul", g, node),)


def expm1(b, node, g):
    return (b.op("mul", g, b.op("add", node, b.const(1.0))),)


def log(b, node, g):
    return (b.op("truediv", g, node.operands[0]),)


def log1p(b, node, g):
    return (b.op("truediv", g, b.op("add", node.operands[0], b.const(1.0))),)


def sqrt(b, node, g):
    return (b.op("truediv", g, b.op("mul", b.const(2.0), node)),)


def square(b, node, g):
    return (b.op("mul", g, b.op("mul", b.const(2.0), node.operands[0])),)


def sin(b, node, g):
    return (b.op("mul", g, b.op("cos", node.operands[0])),)


def cos(b, node, g):
    return (b.op("neg", b.op("mul", g, b.op("sin", node.operands[0]))),)


def tanh(b, node, g):
    return (b.op("mul", g, b.op("sub", b.const(1.0), b.op("mul", node, node))),)


def absolute(b, node, g):
    return (b.op("mul", g, b.op("sign", node.operands[0])),)


def reciprocal(b, node, g):
    return (b.op("neg", b.op("mul", g, b.op("mul", node, node))),)


def maximum(b, node, g):
    """The gradient goes to the operand that was chosen; ties go to the first, as NumPy picks it."""
    return _choose(b, node, g, "ge")


def minimum(b, node, g):
    return _choose(b, node, g, "le")


def _choose(b, node, g, relation):
    x, y = node.operands[:2]
    first = b.op(relation, x, y)
    zero = b.const(0.0)
    return (b.op("where", first, g, zero), b.op("where", first, zero, g))


def where(b, node, g):
    c = node.operands[0]
    zero = b.const(0.0)
    return (None, b.op("where", c, g, zero), b.op("where", c, zero, g))


def clip(b, node, g):
    x, lo, hi = node.operands[:3]
    inside = b.op("logical_and", b.op("ge", x, lo), b.op("le", x, hi))
    return (b.op("where", inside, g, b.const(0.0)), None, None)


# --- reductions ---------------------------------------------------------------------------------
def sum_(b, node, g):
    x = node.operands[0]
    return (b.op("broadcast_to", _keep_reduced_axes(b, node, g), b.shape_of(x)),)


def mean(b, node, g):
    x = node.operands[0]
    spread = b.op("broadcast_to", _keep_reduced_axes(b, node, g), b.shape_of(x))
    return (b.op("truediv", spread, _count(b, node, x)),)


def _count(b, node, x):
    """How many elements each result of the reduction averaged."""
    tx, tn = x.type, node.type
    if isinstance(tx, ArrayType) and tx.is_static and (not isinstance(tn, ArrayType) or tn.is_static):
        import math
        return b.const(math.prod(tx.shape) // max(1, math.prod(tn.shape) if isinstance(tn, ArrayType) else 1))
    return b.op("floordiv", b.op("size", x), b.op("size", node)) if isinstance(tn, ArrayType) else b.op("size", x)


def extreme(b, node, g):
    """max/min: the gradient is shared by the elements equal to the extreme (as autograd does)."""
    x = node.operands[0]
    hit = b.op("eq", x, _keep_reduced_axes(b, node, node))
    dtype = getattr(x.type, "dtype", None)
    count = {"dtype": _np_dtype(dtype)} if dtype and dtype.startswith("float") else {}
    hits = b.op("sum", hit, **_axis_attrs(node, keepdims=True), **count)    # a float32 gradient stays float32
    share = b.op("truediv", _keep_reduced_axes(b, node, g), hits)
    return (b.op("where", hit, share, b.const(0.0)),)


def _axis_attrs(node, keepdims):
    attrs = {"keepdims": keepdims}
    if node.attrs.get("axis") is not None:
        attrs["axis"] = node.attrs["axis"]
    return attrs


def _keep_reduced_axes(b, node, value):
    """`value` shaped like the reduction's result, with its reduced axes put back as size 1."""
    axis = node.attrs.get("axis")
    if axis is None or node.attrs.get("keepdims"):
        return value
    axes = axis if isinstance(axis, tuple) else (axis,)
    r = rank(node.operands[0])
    if r is None:
        raise NotImplementedError("the rank of the reduced array must be known")
    return b.op("expand_dims", value, b.const(tuple(sorted(a % r for a in axes))))


# --- layout ---------------------------------------------------------------------------------------
def reshape_back(b, node, g):
    """Ops that only change the shape: the cotangent is reshaped to the operand's shape."""
    x = node.operands[0]
    return (b.op("reshape", g, b.shape_of(x)),) + (None,) * (len(node.operands) - 1)


def transpose(b, node, g):
    axes = node.operands[1].value if len(node.operands) > 1 and node.operands[1].is_const else node.attrs.get("axes")
    if axes is None:
        return (b.op("T", g) if rank(node.operands[0]) == 2 else b.op("transpose", g),) + \
            (None,) * (len(node.operands) - 1)
    inverse = tuple(sorted(range(len(axes)), key=lambda k: axes[k]))
    return (b.op("transpose", g, b.const(inverse)),) + (None,) * (len(node.operands) - 1)


def swapaxes(b, node, g):
    return (b.op("swapaxes", g, *node.operands[1:]), None, None)


def broadcast_to(b, node, g):
    return (g, None)      # the transform sums it back to the operand's shape


def identity(b, node, g):
    return (g,) + (None,) * (len(node.operands) - 1)


def astype(b, node, g):
    x = node.operands[0]
    dtype = getattr(x.type, "dtype", None)
    return (b.op("astype", g, dtype=_np_dtype(dtype)) if dtype and dtype != getattr(node.type, "dtype", None)
            else g,)


def to_float(b, node, g):
    return (g,)


def getitem(b, node, g):
    """The cotangent lands where the index read: `z = np.zeros_like(x); z[index] = g` for a basic
    index (ints, slices), which never names an element twice; `np.add.at(z, index, g)` for a
    gather by arrays, where repeated indices add up."""
    x = node.operands[0]
    zero = b.op("zeros_like", x)
    gather = any(not isinstance(o.type, ScalarType) for o in node.operands[1:])
    b.op("add_at" if gather else "setitem", zero, g, *node.operands[1:], index=shift_refs(node.attrs["index"], 1))
    return (zero,) + (None,) * (len(node.operands) - 1)


def shift_refs(index, by: int):
    """The index with each `$k` renumbered `$(k + by)` (its operands moved `by` places right)."""
    def moved(p):
        return OperandRef(p.index + by) if isinstance(p, OperandRef) else p
    items = [slice(moved(i.start), moved(i.stop), moved(i.step)) if isinstance(i, slice) else moved(i) for i in index]
    return type(index)(items)


# --- linear algebra -------------------------------------------------------------------------------
def dot(b, node, g):
    x, y = node.operands[:2]
    if rank(x) == 0 or rank(y) == 0:
        return mul(b, node, g)
    if (rank(x) or 0) > 2 or (rank(y) or 0) > 2:
        raise NotImplementedError("np.dot of arrays with more than two axes")
    return matmul(b, node, g)


def outer(b, node, g):
    x, y = node.operands[:2]
    fx = b.op("reshape", x, b.const(-1))
    fy = b.op("reshape", y, b.const(-1))
    return (b.op("reshape", b.op("matmul", g, fy), b.shape_of(x)),
            b.op("reshape", b.op("matmul", b.op("T", g), fx), b.shape_of(y)))


# --- helpers ---------------------------------------------------------------------------------------
def rank(node: Node) -> Optional[int]:
    t = node.type
    if isinstance(t, ArrayType):
        return t.rank
    if isinstance(t, ScalarType):
        return 0
    return None


def differentiable(node: Node) -> bool:
    """Floating (or complex) values carry gradients; integers, booleans and objects do not."""
    t = node.type
    if isinstance(t, ArrayType):
        return t.dtype is not None and t.dtype.startswith(("float", "complex"))
    if isinstance(t, ScalarType):
        return t.kind in ("float", "complex")
    return False


def _np_dtype(name: str):
    import numpy as np
    return getattr(np, name)


# Which rule each op takes (becomes the op table's `vjp` column).
RULES: dict = {
    "add": add, "np_add": add, "sub": sub, "subtract": sub, "mul": mul, "multiply": mul,
    "truediv": truediv, "divide": truediv, "true_divide": truediv, "pow": power, "power": power,
    "matmul": matmul, "neg": neg, "negative": neg, "pos": pos,
    "exp": exp, "expm1": expm1, "exp2": exp2, "log": log, "log1p": log1p, "log2": log2, "log10": log10,
    "sqrt": sqrt, "square": square, "sin": sin, "cos": cos, "tanh": tanh, "sinh": sinh, "cosh": cosh,
    "arctan": arctan, "abs": absolute, "absolute": absolute, "fabs": absolute, "py_abs": absolute,
    "reciprocal": reciprocal, "maximum": maximum, "minimum": minimum, "fmax": maximum, "fmin": minimum,
    "where": where, "select": where, "clip": clip,
    "floor": flat, "ceil": flat, "trunc": flat, "rint": flat, "sign": flat,
    "sum": sum_, "mean": mean, "max": extreme, "min": extreme, "amax": extreme, "amin": extreme,
    "reshape": reshape_back, "ravel": reshape_back, "squeeze": reshape_back, "expand_dims": reshape_back,
    "atleast_1d": reshape_back, "atleast_2d": reshape_back, "copy_flat": reshape_back,
    "T": transpose, "transpose": transpose, "swapaxes": swapaxes, "broadcast_to": broadcast_to,
    "copy": identity, "ascontiguousarray": identity, "asarray": identity, "astype": astype, "float": to_float,
    "getitem": getitem, "dot": dot, "outer": outer,
}

# Why an op that looks differentiable is not (docs/ops.md shows it).
WHY_NOT: dict = {
    "setitem": "an in-place write (`a[i] = v`) into a value the gradient flows through",
    "inplace": "an in-place update (`a += b`) of a value the gradient flows through",
    "pycall": "a Python call graphjit cannot see into",
    "call": "a NumPy function graphjit does not know",
    "fallback": "code run by the Python interpreter (LAX fallback)",
    "if": "a run-time `if` (not differentiated yet)",
    "for_range": "a run-time loop (not differentiated yet)",
    "while": "a run-time `while` loop (not differentiated yet)",
}
