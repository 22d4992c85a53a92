"""Vector-Jacobian product rules: which rule sends each op's cotangent back to its operands.

A rule is `rule(b, node, g) -> tuple` with one entry per operand of `node`: the cotangent of that
operand (a node built with `b`, the backward builder), or None when the operand gets nothing from
this use (an index, a condition, an integer). `g` is the cotangent of `node`'s result, with its
shape. The transform (graph/autodiff/transform.py) sums what each operand receives back to the
operand's shape (undoing broadcasting), so rules never think about broadcasting. A tuple operand
may receive a dict `{item: cotangent}`.

The rules live in graph/vjp_elementwise.py, graph/vjp_arrays.py, graph/vjp_copies.py and
graph/vjp_linalg.py; this module is the table. Every op of the op table is in exactly one of
`RULES`, `WHY_NOT` (why it is not differentiable, in words a user understands) and `BY_TRANSFORM`
(the transform handles it).
docs/ops.md lists them.
"""

from __future__ import annotations

import math

from . import vjp_arrays as A
from . import vjp_copies as C
from . import vjp_elementwise as E
from . import vjp_linalg as L

# Which rule each op takes (the op table's `vjp` column).
RULES: dict = {
    # arithmetic
    "add": E.add, "np_add": E.add, "sub": E.sub, "subtract": E.sub, "mul": E.mul, "multiply": E.mul,
    "truediv": E.truediv, "divide": E.truediv, "true_divide": E.truediv,
    "pow": E.power, "power": E.power, "float_power": E.power,
    "mod": E.remainder, "np_mod": E.remainder, "fmod": E.fmod,
    "neg": E.neg, "negative": E.neg, "pos": E.pos,
    # elementwise functions
    "exp": E.exp, "expm1": E.expm1, "exp2": E.exp2, "log": E.log, "log1p": E.log1p, "log2": E.log2,
    "log10": E.log10, "sqrt": E.sqrt, "cbrt": E.cbrt, "square": E.square, "reciprocal": E.reciprocal,
    "sin": E.sin, "cos": E.cos, "tan": E.tan, "arcsin": E.arcsin, "arccos": E.arccos, "arctan": E.arctan,
    "sinh": E.sinh, "cosh": E.cosh, "tanh": E.tanh, "arcsinh": E.arcsinh, "arccosh": E.arccosh,
    "arctanh": E.arctanh, "abs": E.absolute, "absolute": E.absolute, "fabs": E.absolute, "py_abs": E.absolute,
    "deg2rad": E.scale(math.pi / 180.0), "rad2deg": E.scale(180.0 / math.pi),
    "hypot": E.hypot, "arctan2": E.arctan2, "copysign": E.copysign,
    # choices
    "maximum": E.maximum, "minimum": E.minimum, "fmax": E.maximum, "fmin": E.minimum,
    "where": E.where, "select": E.where, "clip": E.clip,
    "py_max": A.python_extreme("ge"), "py_min": A.python_extreme("le"),
    # piecewise constant: zero gradient almost everywhere
    "floor": E.flat, "ceil": E.flat, "trunc": E.flat, "rint": E.flat, "sign": E.flat, "py_round": E.flat,
    "floordiv": E.flat, "floor_divide": E.flat, "heaviside": E.flat,
    # reductions
    "sum": A.sum_, "mean": A.mean, "nansum": A.nansum, "nanmean": A.nanmean, "prod": A.prod,
    "std": A.std, "var": A.var, "median": A.median,
    "max": A.extreme, "min": A.extreme, "amax": A.extreme, "amin": A.extreme,
    "nanmax": A.extreme, "nanmin": A.extreme, "cumsum": A.cumsum, "cumprod": A.cumprod,
    # layout
    "reshape": A.reshape_back, "ravel": A.reshape_back, "squeeze": A.reshape_back, "expand_dims": A.reshape_back,
    "atleast_1d": A.reshape_back, "atleast_2d": A.reshape_back, "copy_flat": A.reshape_back,
    "T": A.transpose, "transpose": A.transpose, "swapaxes": A.same_op, "moveaxis": A.moveaxis,
    "broadcast_to": A.broadcast_to, "flip": A.flip, "roll": A.roll, "tile": A.tile, "repeat": C.repeat,
    "pad": C.pad, "diag": A.diag, "triu": A.triu, "tril": A.triu, "diff": A.diff, "sort": C.sort,
    "concatenate": A.concatenate, "stack": A.stack, "hstack": A.hstack, "vstack": A.vstack,
    "copy": A.identity, "ascontiguousarray": A.identity, "asarray": A.as_array, "array": A.as_array,
    "tensor": A.as_array, "as_ndarray": A.as_array, "as_tensor": A.identity,
    "astype": A.astype, "float": A.to_float, "item": A.item,
    # indexing
    "getitem": A.getitem, "take": A.take,
    # products
    "matmul": L.matmul, "dot": L.dot, "outer": L.outer, "tensordot": L.tensordot, "einsum": L.einsum,
    "correlate": L.correlate, "sliding_window_view": L.sliding_window_view,
    # creation: the values do not depend on the operands', only the fill value does
    "zeros": A.constant, "ones": A.constant, "empty": A.constant, "zeros_like": A.constant,
    "ones_like": A.constant, "empty_like": A.constant, "eye": A.constant, "arange": A.constant,
    "full": A.full, "full_like": A.full, "linspace": A.linspace,
    # the backward pass's own ops (a gradient of a gradient goes through them)
    "sum_to": A.sum_to, "add_reduceat": C.add_reduceat,
}

# Rules that send nothing back: the gradient is zero (docs/ops.md lists these ops apart).
ZERO_RULES = (E.flat, A.constant)

# Ops the transform handles itself: a tuple's cotangent is kept per item (`tuple` sends each item
# to its operand, `tuple_get` fills one item), and the leaves (`arg`, `param`, `const`) have no
# operands: the gradient of an argument or a weight is read off where the walk ends.
# `if`/`for_range`/`while` are differentiated region by region (graph/autodiff/regions.py), in-place
# writes by the time they happen (graph/autodiff/inplace.py), and `stop_gradient` stops the walk.
BY_TRANSFORM = frozenset({"tuple", "tuple_get", "arg", "param", "const", "if", "for_range", "while", "setitem",
                          "inplace", "add_at", "stop_gradient", "gradient", "gradient_boundary",
                          "replayed"})

BOOLEAN = "its result is boolean: no gradient flows through it"
INTEGER = "its result is an integer (an index, a count, a size or bits): no gradient flows through it"
WRITE = "an in-place write into a value the gradient flows through (not differentiated yet)"
OPAQUE = "a Python object graphjit cannot follow a gradient through"
STATEMENT = "a statement without a result"

# Why an op is not differentiable (docs/ops.md shows it).
WHY_NOT: dict = {
    **{name: BOOLEAN for name in (
        "eq", "ne", "lt", "le", "gt", "ge", "not", "equal", "not_equal", "less", "less_equal", "greater",
        "greater_equal", "logical_and", "logical_or", "logical_xor", "logical_not", "isnan", "isinf", "isfinite",
        "any", "all", "bool", "isinstance")},
    **{name: INTEGER for name in (
        "argmax", "argmin", "argsort", "searchsorted", "count_nonzero", "int", "len", "shape", "dim", "ndim", "size",
        "invert", "lshift", "rshift", "bitand", "bitxor", "bitor")},
    **{name: WRITE for name in ("copyto", "put", "place", "putmask")},
    "setattr": "a write to an attribute of a Python object (a statement without a result)",
    "store_global": "a write to a module global (a statement without a result)",
    "refresh": "an array whose shape or dtype was changed in place (`a.shape = s`)",
    **{name: STATEMENT for name in ("raise", "assert", "note")},
    "tolist": "Python lists of numbers: graphjit does not follow a gradient through them",
    "list": "a Python list: graphjit does not follow a gradient through its items (use a tuple or np.stack)",
    "dict": "a Python dict: graphjit does not follow a gradient through its values",
    "format": "its result is a string",
    "getattr": OPAQUE, "load_global": OPAQUE,
    "pycall": "a Python call graphjit cannot see into",
    "call": "a NumPy function graphjit does not know",
    "fallback": "code run by the Python interpreter (LAX fallback)",
    "append": "the tape a differentiated loop records its iterations on",
    "scratch": "a buffer kept between calls, made after differentiation (graph/passes/scratch.py)",
    "hist_range": "the span of a histogram: graphjit does not follow a gradient through the data's minimum and maximum",
    "hist_edges": "the edges of a histogram: graphjit does not follow a gradient through the span they divide",
    "hist_index": INTEGER,
    "hist_counts": "counts per bin, or sums of weights per bin that graphjit does not differentiate yet (the "
    "gradient would be the bin's gradient gathered for each weight)",
}
