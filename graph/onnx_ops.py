"""The ONNX column beside the op table: how each op is written as ONNX operators, or why it cannot be.

`graphjit.export(net, x, file_name=..., file_format="ONNX")` writes the optimized graph with the
`onnx` package (backends/emit_onnx.py). Per op, `SPELLINGS` holds an `Onnx` row: the ONNX operators
it becomes (for the docs) and a `build(b, node)` function that emits them through the writer `b`
and returns the result's ONNX name. `b` gives the operands (`b.x(k, dtype)`: operand k cast to a
dtype, a compile-time operand written as a constant of that dtype), their compile-time values
(`b.static(k)`), the result's dtype (`b.out`) and `b.op(type, *inputs, **attrs)`. This module does
not import `onnx`: rows only name operators.

The graph is specialized to its example inputs, so every shape is known when the file is written:
- Operands are cast to the result's dtype before arithmetic (NumPy's promotion, NEP 50, already
  decided it: `x * 2` on float32 is float32), to their common dtype before comparisons.
- Layout is written with ONNX's own operators (Reshape, Transpose, Slice, Expand, Concat, Pad;
  `sliding_window_view` as one small Gather per windowed axis). Other ops that only select elements
  of operand 0 by position (`np.flip`, `np.tile`, `np.triu`, an advanced compile-time index...) become
  one `Gather` by an index table the writer computes by running the op on `np.arange`
  (graph/evaluate.py, as the interpreter runs it), so the selection is NumPy's by construction;
  positions NumPy fills with zeros (`np.triu`) gather a zero. That table has the result's size.
- Where ONNX differs from NumPy on NaN (`ReduceMax`, `ArgMax` skip NaN; NumPy propagates it), on
  integer division by zero, or in precision (`log1p`, `expm1`, `hypot`), the row writes NumPy's
  meaning out of several operators.
- A node whose operands are all compile-time values (`np.arange(6)`, `np.zeros(shape)`) is computed
  when the file is written (whatever its row) and stored as a constant; a constant of one repeated
  value is written as that value and an `Expand`.
- `if`, `for_range` and `while` hold regions: the writer turns them into ONNX `If` and `Loop`
  subgraphs (`b.if_`, `b.for_range`, `b.while_`).

`NOT_EXPORTED` says, per op, why it has no row; the writer's refusal names the op and the source
line. docs/onnx.md is generated from these tables (`python docs/gen_onnx.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

OPSET = 18      # BitwiseAnd/Or/Xor/Not, ReduceMax with axes as an input


class OnnxRefusal(Exception):
    """A form of an op the file cannot hold faithfully; the message says why."""


@dataclass(frozen=True)
class Onnx:
    """How one op is written: the ONNX operators it becomes, and the function emitting them."""

    ops: str                        # for the docs: "Add", "Gather (index table)"
    build: Callable                 # build(b, node) -> the result's ONNX name
    note: str = ""
    keywords: frozenset = frozenset()   # the attributes (NumPy keywords) the row writes; "*": all, read by NumPy


SPELLINGS: dict[str, Onnx] = {}


def _row(names, ops: str, build: Callable, note: str = "", keywords: str = "") -> None:
    for name in names.split():
        assert name not in SPELLINGS, name
        SPELLINGS[name] = Onnx(ops, build, note, frozenset(keywords.split()))


def wide(dtype: np.dtype, ordered: bool = False) -> np.dtype:
    """The dtype reductions, CumSum, MatMul and ordering comparisons compute `dtype` in, one that onnxruntime's
    CPU kernels take (int32, int64, float32, float64), whose result cast back is NumPy's: booleans and small
    integers in int32 or int64, sums wrapping the same way modulo 2**bits; unsigned integers in int64
    (`ordered`: only those that fit); float16 in float32 (NumPy rounds float16 sums as it goes: within a
    rounding of float16)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_ or dtype.kind == "i" and dtype.itemsize < 4:
        return np.dtype(np.int32)
    if dtype.kind == "u" and (dtype.itemsize < 8 or not ordered):
        return np.dtype(np.int64)
    if dtype == np.float16:
        return np.dtype(np.float32)
    return dtype


# --- elementwise arithmetic: operands cast to the result's dtype ---------------------------------
def _binary(op_type: str):
    return lambda b, node: b.op(op_type, b.x(0, b.out), b.x(1, b.out))


def _unary(op_type: str):
    return lambda b, node: b.op(op_type, b.x(0, b.out))


def _float_result(build):
    """Rows ONNX defines on floating types only (NumPy's integer forms give integers: refused)."""
    def checked(b, node):
        if b.out.kind != "f":
            raise OnnxRefusal(f"ONNX defines it on floating-point values only, and the result is {b.out}")
        return build(b, node)
    return checked


def _on_booleans(op_type: str, logical: str):
    """NumPy's + and * (and maximum, minimum) of booleans are `or` and `and`."""
    arithmetic = _binary(op_type)
    return lambda b, node: b.op(logical, b.x(0, b.out), b.x(1, b.out)) if b.out == np.bool_ else \
        arithmetic(b, node)


_row("add np_add", "Add (Or on booleans)", _on_booleans("Add", "Or"))
_row("sub subtract", "Sub", _binary("Sub"))
_row("mul multiply", "Mul (And on booleans)", _on_booleans("Mul", "And"))
_row("truediv divide true_divide", "Div", _float_result(_binary("Div")), "the result is always floating-point")
_row("neg negative", "Neg", _unary("Neg"))
_row("pos", "Identity", _unary("Identity"))
_row("abs absolute fabs py_abs", "Abs", _unary("Abs"))
_row("sign", "Sign", _unary("Sign"))
for _np, _onnx in [("exp", "Exp"), ("log", "Log"), ("sqrt", "Sqrt"), ("sin", "Sin"), ("cos", "Cos"),
                   ("tan", "Tan"), ("arcsin", "Asin"), ("arccos", "Acos"), ("arctan", "Atan"), ("sinh", "Sinh"),
                   ("cosh", "Cosh"), ("tanh", "Tanh"), ("arcsinh", "Asinh"), ("arccosh", "Acosh"),
                   ("arctanh", "Atanh")]:
    _row(_np, _onnx, _float_result(_unary(_onnx)))


def _rounding(op_type: str):
    """floor / ceil / rint: on integers NumPy gives them back (as integers, or as floats for rint)."""
    def build(b, node):
        if b.out.kind != "f":
            return b.op("Identity", b.x(0, b.out))
        return b.op(op_type, b.x(0, b.out))
    return build


_row("floor", "Floor", _rounding("Floor"), "integers unchanged")
_row("ceil", "Ceil", _rounding("Ceil"), "integers unchanged")
_row("rint", "Round", _rounding("Round"), "half to even")
_row("reciprocal", "Reciprocal", _float_result(_unary("Reciprocal")))
_row("square", "Mul", lambda b, node: (lambda v: b.op("Mul", v, v))(b.x(0, b.out)))


def _power(b, node):
    if b.out.kind in "iu" and not (b.is_static(1) and np.all(np.asarray(b.static(1)) >= 0)):
        raise OnnxRefusal("of integers needs a compile-time exponent of at least 0 (NumPy raises for a negative "
                          "one, ONNX would not)")
    return b.op("Pow", b.x(0, b.out), b.x(1, b.out))


_row("pow power", "Pow", _power)
_row("float_power", "Pow", _float_result(_power), "float64, as NumPy computes it")
_row("exp2", "Pow", _float_result(lambda b, node: b.op("Pow", b.const(np.array(2, b.out)), b.x(0, b.out))))
_row("log2 log10", "Log, Div", _float_result(
    lambda b, node: b.op("Div", b.op("Log", b.x(0, b.out)),
                         b.const(np.array(np.log(2.0 if node.op == "log2" else 10.0), b.out)))),
     "within a rounding of NumPy's")
_row("deg2rad rad2deg", "Mul", _float_result(
    lambda b, node: b.op("Mul", b.x(0, b.out),
                         b.const(np.array(np.pi / 180 if node.op == "deg2rad" else 180 / np.pi, b.out)))))
_row("cbrt", "Abs, Pow, Mul, Sign", _float_result(
    lambda b, node: (lambda v: b.op("Mul", b.op("Sign", v),
                                    b.op("Pow", b.op("Abs", v), b.const(np.array(1 / 3, b.out)))))(b.x(0, b.out))),
     "within a rounding of NumPy's")


def _trunc(b, node):
    v = b.x(0, b.out)
    return b.op("Where", b.op("Less", v, b.const(np.array(0, b.out))), b.op("Ceil", v), b.op("Floor", v))


_row("trunc", "Where, Ceil, Floor", lambda b, node: _trunc(b, node) if b.out.kind == "f" else
     b.op("Identity", b.x(0, b.out)), "integers unchanged")


def _log1p(b, node):
    # log(1 + y) loses y where 1 + y rounds to 1; y * log(u) / (u - 1) with u = 1 + y does not (Goldberg)
    y = b.x(0, b.out)
    one = b.const(np.array(1, b.out))
    u = b.op("Add", one, y)
    d = b.op("Sub", u, one)
    exact = b.op("Div", b.op("Mul", y, b.op("Log", u)), d)
    inf = b.op("IsInf", u, detect_negative=0)
    return b.op("Where", b.op("Or", b.op("Equal", d, b.const(np.array(0, b.out))), inf),
                b.op("Where", inf, u, y), exact)


def _expm1(b, node):
    # exp(x) - 1 loses x near 0; (u - 1) * x / log(u) with u = exp(x) does not (Kahan)
    x = b.x(0, b.out)
    one = b.const(np.array(1, b.out))
    u = b.op("Exp", x)
    um1 = b.op("Sub", u, one)
    exact = b.op("Div", b.op("Mul", um1, x), b.op("Log", u))
    plain = b.op("Or", b.op("Equal", um1, b.const(np.array(-1, b.out))), b.op("IsInf", u))
    return b.op("Where", b.op("Equal", u, one), x, b.op("Where", plain, um1, exact))


_row("log1p", "Add, Sub, Log, Div, Where", _float_result(_log1p), "accurate near 0 (log(1 + y) is not)")
_row("expm1", "Exp, Sub, Log, Div, Where", _float_result(_expm1), "accurate near 0 (exp(x) - 1 is not)")


# np.maximum / np.minimum: NaN wins, and ONNX's Max and Min propagate it too (tests/test_export_onnx.py checks)
_row("maximum", "Max (Or on booleans)", _on_booleans("Max", "Or"), "NaN propagates, as in NumPy")
_row("minimum", "Min (And on booleans)", _on_booleans("Min", "And"), "NaN propagates, as in NumPy")


def _fextreme(op_type: str):
    def build(b, node):
        a, c = b.x(0, b.out), b.x(1, b.out)
        if b.out.kind != "f":
            return b.op(op_type, a, c)
        return b.op("Where", b.op("IsNaN", a), c, b.op("Where", b.op("IsNaN", c), a, b.op(op_type, a, c)))
    return build


_row("fmax", "Max, IsNaN, Where", _fextreme("Max"), "NaN loses")
_row("fmin", "Min, IsNaN, Where", _fextreme("Min"), "NaN loses")


def _python_extreme(compare: str):
    """Python's `min(a, b)` / `max(a, b)`: the first unless a later one is strictly smaller / larger."""
    def build(b, node):
        if len(node.operands) < 2 or node.attrs.get("kw"):
            raise OnnxRefusal("only `min(a, b, ...)` / `max(a, b, ...)` of values (not of one iterable, not "
                              "with `key=` or `default=`) is written")
        best = b.x(0, b.out)
        for k in range(1, len(node.operands)):
            other = b.x(k, b.out)
            order = b.op(compare, b.cast(other, wide(b.out, True)), b.cast(best, wide(b.out, True)))
            best = b.op("Where", order, other, best)
        return best
    return build


_row("py_min", "Less, Where", _python_extreme("Less"))
_row("py_max", "Greater, Where", _python_extreme("Greater"))


def _divisor_guard(b, divisor):
    """Integer division by zero gives 0 in NumPy: divide by 1 there, then select 0."""
    zero = b.op("Equal", divisor, b.const(np.array(0, b.out)))
    return zero, b.op("Where", zero, b.const(np.array(1, b.out)), divisor)


def _fmod(b, node):
    a, d = b.x(0, b.out), b.x(1, b.out)
    if b.out.kind == "f":
        return b.op("Mod", a, d, fmod=1)
    zero, safe = _divisor_guard(b, d)
    return b.op("Where", zero, b.const(np.array(0, b.out)), b.op("Mod", a, safe, fmod=1))


def _float_mod_div(b, a, d):
    """NumPy's divmod on floats (npy_divmod): the remainder has the divisor's sign, the quotient is
    rounded from (a - mod) / d."""
    zero = b.const(np.array(0, b.out))
    mod = b.op("Mod", a, d, fmod=1)
    div = b.op("Div", b.op("Sub", a, mod), d)
    wrong_sign = b.op("And", b.op("Not", b.op("Equal", mod, zero)),
                      b.op("Xor", b.op("Less", d, zero), b.op("Less", mod, zero)))
    mod = b.op("Where", wrong_sign, b.op("Add", mod, d), mod)
    div = b.op("Where", wrong_sign, b.op("Sub", div, b.const(np.array(1, b.out))), div)
    floor = b.op("Floor", div)
    floor = b.op("Where", b.op("Greater", b.op("Sub", div, floor), b.const(np.array(0.5, b.out))),
                 b.op("Add", floor, b.const(np.array(1, b.out))), floor)
    by_zero = b.op("Equal", d, zero)
    plain = b.op("Div", a, d)           # inf or nan, as NumPy gives for a zero divisor
    return b.op("Where", by_zero, b.op("Mod", a, d, fmod=1), mod), b.op("Where", by_zero, plain, floor)


def _mod(b, node):
    a, d = b.x(0, b.out), b.x(1, b.out)
    if b.out.kind == "f":
        return _float_mod_div(b, a, d)[0]
    zero, safe = _divisor_guard(b, d)
    return b.op("Where", zero, b.const(np.array(0, b.out)), b.op("Mod", a, safe, fmod=0))


def _floordiv(b, node):
    a, d = b.x(0, b.out), b.x(1, b.out)
    if b.out.kind == "f":
        return _float_mod_div(b, a, d)[1]
    zero, safe = _divisor_guard(b, d)
    quotient = b.op("Div", b.op("Sub", a, b.op("Mod", a, safe, fmod=0)), safe)   # exact: a - a mod d divides
    return b.op("Where", zero, b.const(np.array(0, b.out)), quotient)


def _hypot(b, node):
    """sqrt(a² + b²) scaled by the larger magnitude, so it overflows only where NumPy's hypot does; inf wins
    over NaN, as in NumPy."""
    x, y = b.op("Abs", b.x(0, b.out)), b.op("Abs", b.x(1, b.out))
    zero = b.const(np.array(0, b.out))
    big, small = b.op("Max", x, y), b.op("Min", x, y)
    safe = b.op("Where", b.op("Equal", big, zero), b.const(np.array(1, b.out)), big)
    ratio = b.op("Div", small, safe)
    result = b.op("Mul", big, b.op("Sqrt", b.op("Add", b.const(np.array(1, b.out)), b.op("Mul", ratio, ratio))))
    result = b.op("Where", b.op("Equal", big, zero), zero, result)
    inf = b.op("Or", b.op("IsInf", x), b.op("IsInf", y))
    return b.op("Where", inf, b.const(np.array(np.inf, b.out)), result)


_row("hypot", "Abs, Max, Min, Div, Sqrt, Mul, Where", _float_result(_hypot),
     "scaled: no overflow NumPy does not have; within a rounding of NumPy's")


def _diff(b, node):
    """np.diff(a, n, axis): n times the difference of neighbours along the axis (Slice, Sub)."""
    if node.attrs.get("kw") or set(node.attrs) - {"n", "axis"} or len(node.operands) > 2:
        raise OnnxRefusal("only `n` and `axis` (compile-time) are written")
    n = int(b.static(1) if len(node.operands) > 1 else node.attrs.get("n", 1))
    axis = node.attrs.get("axis", -1)
    rank = len(b.shape(0))
    axis = axis % rank
    v = b.x(0, b.out)
    length = b.shape(0)[axis]
    for _ in range(n):
        if length < 1:
            break
        later = b.op("Slice", v, *(b.const(np.array([p], np.int64)) for p in (1, length, axis)))
        earlier = b.op("Slice", v, *(b.const(np.array([p], np.int64)) for p in (0, length - 1, axis)))
        v = b.op("Xor" if b.out == np.bool_ else "Sub", later, earlier)   # NumPy: `!=` of booleans
        length -= 1
    return v


_row("diff", "Slice, Sub", _diff, "compile-time `n` and `axis`", keywords="n axis")


_row("fmod", "Mod (fmod=1)", _fmod, "integer division by zero gives 0, as in NumPy")
_row("mod np_mod", "Mod, Where", _mod, "floats: NumPy's divmod (the divisor's sign)")
_row("floordiv floor_divide", "Mod, Sub, Div, Floor, Where", _floordiv, "floats: NumPy's divmod rounding")


def _heaviside(b, node):
    x, h = b.x(0, b.out), b.x(1, b.out)
    zero = b.const(np.array(0, b.out))
    step = b.op("Where", b.op("Less", x, zero), zero,
                b.op("Where", b.op("Greater", x, zero), b.const(np.array(1, b.out)), h))
    return b.op("Where", b.op("IsNaN", x), x, step)


_row("heaviside", "Less, Greater, IsNaN, Where", _float_result(_heaviside))


# --- comparisons and logic -------------------------------------------------------------------------
def _compare(op_type: str, negate: bool = False):
    def build(b, node):
        dtype = b.common_dtype()
        if op_type != "Equal":      # ONNX orders numbers only: booleans (and small ints) compare as int32
            dtype = wide(dtype, ordered=True)
        result = b.op(op_type, b.x(0, dtype), b.x(1, dtype))
        return b.op("Not", result) if negate else result
    return build


_row("eq equal", "Equal", _compare("Equal"))
_row("ne not_equal", "Equal, Not", _compare("Equal", negate=True))
_row("lt less", "Less", _compare("Less"))
_row("le less_equal", "LessOrEqual", _compare("LessOrEqual"))
_row("gt greater", "Greater", _compare("Greater"))
_row("ge greater_equal", "GreaterOrEqual", _compare("GreaterOrEqual"))


def _bitwise(logical: str, bitwise: str):
    def build(b, node):
        if b.out == np.bool_:
            return b.op(logical, b.x(0, b.out), b.x(1, b.out))
        if b.out.kind not in "iu":
            raise OnnxRefusal(f"defined on booleans and integers, and the result is {b.out}")
        return b.op(bitwise, b.x(0, b.out), b.x(1, b.out))
    return build


_row("bitand", "And / BitwiseAnd", _bitwise("And", "BitwiseAnd"))
_row("bitor", "Or / BitwiseOr", _bitwise("Or", "BitwiseOr"))
_row("bitxor", "Xor / BitwiseXor", _bitwise("Xor", "BitwiseXor"))


def _invert(b, node):
    if b.out == np.bool_:
        return b.op("Not", b.x(0, b.out))
    if b.out.kind not in "iu":
        raise OnnxRefusal(f"defined on booleans and integers, and the result is {b.out}")
    return b.op("BitwiseNot", b.x(0, b.out))


_row("invert", "Not / BitwiseNot", _invert)
_row("logical_and", "And", lambda b, node: b.op("And", b.x(0, np.bool_), b.x(1, np.bool_)))
_row("logical_or", "Or", lambda b, node: b.op("Or", b.x(0, np.bool_), b.x(1, np.bool_)))
_row("logical_xor", "Xor", lambda b, node: b.op("Xor", b.x(0, np.bool_), b.x(1, np.bool_)))
_row("logical_not not", "Not", lambda b, node: b.op("Not", b.x(0, np.bool_)))
_row("isnan", "IsNaN", lambda b, node: b.op("IsNaN", b.x(0, b.float_of(0))))
_row("isinf", "IsInf", lambda b, node: b.op("IsInf", b.x(0, b.float_of(0))))
_row("isfinite", "IsNaN, IsInf, Or, Not",
     lambda b, node: (lambda v: b.op("Not", b.op("Or", b.op("IsNaN", v), b.op("IsInf", v))))(b.x(0, b.float_of(0))))


def _where(b, node):
    return b.op("Where", b.x(0, np.bool_), b.x(1, b.out), b.x(2, b.out))


_row("where select", "Where", _where)


def _clip(b, node):
    v = b.x(0, b.out)
    for k, op_type in ((1, "Max"), (2, "Min")):     # np.clip(a, lo, hi) = minimum(maximum(a, lo), hi)
        if k < len(node.operands) and not (b.is_static(k) and b.static(k) is None):
            v = b.op(op_type, v, b.x(k, b.out))
    return v


_row("clip", "Max, Min", _clip, "NaN propagates, as in NumPy")


# --- reductions ------------------------------------------------------------------------------------
def _axes(b, node, k=0):
    """The reduced axes, normalized, or None for all of them."""
    if any(key not in ("axis", "keepdims", "dtype", "ddof") for key in node.attrs) or len(node.operands) > 1:
        raise OnnxRefusal("only `axis`, `keepdims`, `dtype` and `ddof` are written (as compile-time values)")
    axis = node.attrs.get("axis")
    rank = len(b.shape(k))
    if axis is None:
        return tuple(range(rank))
    axes = axis if isinstance(axis, tuple) else (axis,)
    return tuple(sorted(a % rank for a in axes)) if rank else ()


def _reduce(op_type: str, nan_propagates: bool = False):
    def build(b, node):
        axes = _axes(b, node)
        keep = int(bool(node.attrs.get("keepdims", False)))
        dtype = b.out
        v = b.x(0, dtype)
        if not axes:
            return b.op("Identity", v)
        result = b.op(op_type, b.cast(v, wide(dtype, ordered=op_type in ("ReduceMax", "ReduceMin"))),
                      b.const(np.array(axes, np.int64)), keepdims=keep)
        if nan_propagates and dtype.kind == "f":   # ONNX ReduceMax/Min skip NaN; NumPy's max/min give NaN
            nan = b.op("ReduceMax", b.cast(b.op("IsNaN", v), np.int32), b.const(np.array(axes, np.int64)),
                       keepdims=keep)
            result = b.op("Where", b.cast(nan, np.bool_), b.const(np.array(np.nan, dtype)), result)
        return b.cast(result, dtype)
    return build


_row("sum", "ReduceSum", _reduce("ReduceSum"), "in the result's dtype (NumPy's accumulator: int32 sums in int64); "
     "float16 accumulated in float32, within a float16 rounding of NumPy's", keywords="axis keepdims dtype")
_row("prod", "ReduceProd", _reduce("ReduceProd"), keywords="axis keepdims dtype")
_row("mean", "ReduceMean", _reduce("ReduceMean"), keywords="axis keepdims dtype")
_row("max amax", "ReduceMax, IsNaN", _reduce("ReduceMax", nan_propagates=True), "NaN propagates, as in NumPy",
     keywords="axis keepdims")
_row("min amin", "ReduceMin, IsNaN", _reduce("ReduceMin", nan_propagates=True), "NaN propagates, as in NumPy",
     keywords="axis keepdims")


def _truth_reduce(op_type: str):
    """np.any / np.all: the truth of each element (NaN and 0.5 are true), then the max / min of 0/1."""
    def build(b, node):
        axes = _axes(b, node)
        keep = int(bool(node.attrs.get("keepdims", False)))
        truth = b.cast(b.x(0, np.bool_), np.int32)
        if not axes:
            return b.cast(truth, np.bool_)
        return b.cast(b.op(op_type, truth, b.const(np.array(axes, np.int64)), keepdims=keep), np.bool_)
    return build


_row("any", "Cast, ReduceMax", _truth_reduce("ReduceMax"), "on 0/1 integers", keywords="axis keepdims")
_row("all", "Cast, ReduceMin", _truth_reduce("ReduceMin"), "on 0/1 integers", keywords="axis keepdims")


def _nansum(b, node):
    axes = _axes(b, node)
    v = b.x(0, b.out)
    if b.out.kind == "f":
        v = b.op("Where", b.op("IsNaN", v), b.const(np.array(0, b.out)), v)
    return b.op("ReduceSum", v, b.const(np.array(axes, np.int64)),
                keepdims=int(bool(node.attrs.get("keepdims", False))))


_row("nansum", "IsNaN, Where, ReduceSum", _nansum, keywords="axis keepdims dtype")


def _nan_reduce(b, node):
    """np.nanmax / nanmin / nanmean: NaN left out; a slice of NaN only gives NaN, as NumPy does (with its warning)."""
    axes = _axes(b, node)
    keep = int(bool(node.attrs.get("keepdims", False)))
    v = b.x(0, b.out)
    if b.out.kind != "f" or not axes:
        raise OnnxRefusal("is written for floating-point values reduced over at least one axis")
    nan = b.op("IsNaN", v)
    axes_c = b.const(np.array(axes, np.int64))
    present = b.cast(b.op("Not", nan), b.out)
    count = b.op("ReduceSum", present, axes_c, keepdims=keep)
    if node.op == "nanmean":
        total = b.op("ReduceSum", b.op("Where", nan, b.const(np.array(0, b.out)), v), axes_c, keepdims=keep)
        result = b.op("Div", total, count)
    else:
        fill = np.array(-np.inf if node.op == "nanmax" else np.inf, b.out)
        result = b.op("ReduceMax" if node.op == "nanmax" else "ReduceMin", b.op("Where", nan, b.const(fill), v),
                      axes_c, keepdims=keep)
    none = b.op("Equal", count, b.const(np.array(0, b.out)))
    return b.op("Where", none, b.const(np.array(np.nan, b.out)), result)


_row("nanmax nanmin nanmean", "IsNaN, Where, ReduceMax / ReduceMin / ReduceSum", _nan_reduce,
     "a slice of NaN only gives NaN", keywords="axis keepdims")


def _moment(b, node):
    """np.var / np.std: the mean of squared deviations, times n / (n - ddof)."""
    axes = _axes(b, node)
    keep = int(bool(node.attrs.get("keepdims", False)))
    if b.out.kind != "f":
        raise OnnxRefusal(f"the result is {b.out}")
    v = b.x(0, b.out)
    axes_c = b.const(np.array(axes, np.int64))
    dev = b.op("Sub", v, b.op("ReduceMean", v, axes_c, keepdims=1))
    var = b.op("ReduceMean", b.op("Mul", dev, dev), axes_c, keepdims=keep)
    n = int(np.prod([b.shape(0)[a] for a in axes]))
    ddof = node.attrs.get("ddof", 0)
    if ddof:
        var = b.op("Mul", var, b.const(np.array(n / (n - ddof) if n > ddof else np.inf, b.out)))
    return b.op("Sqrt", var) if node.op == "std" else var


_row("var std", "ReduceMean, Sub, Mul (Sqrt)", _moment, "`ddof` as a compile-time value",
     keywords="axis keepdims ddof dtype")


def _arg_extreme(op_type: str):
    def build(b, node):
        if any(key not in ("axis", "keepdims") for key in node.attrs) or len(node.operands) > 1:
            raise OnnxRefusal("only `axis` and `keepdims` are written (as compile-time values)")
        axis = node.attrs.get("axis")
        keep = int(bool(node.attrs.get("keepdims", False)))
        v = b.x(0)
        dtype = b.in_dtype(0)
        if axis is None:
            v = b.op("Reshape", v, b.const(np.array([-1], np.int64)))
            axis, keep_here = 0, 0
        else:
            keep_here = keep
        result = b.op(op_type, v, axis=int(axis), keepdims=keep_here, select_last_index=0)
        if dtype is not None and dtype.kind == "f":    # NumPy: the first NaN; ONNX skips NaN
            nan = b.cast(b.op("IsNaN", v), np.int32)
            first_nan = b.op("ArgMax", nan, axis=int(axis), keepdims=keep_here, select_last_index=0)
            has_nan = b.cast(b.op("ReduceMax", nan, b.const(np.array([axis], np.int64)), keepdims=keep_here), np.bool_)
            result = b.op("Where", has_nan, first_nan, result)
        if node.attrs.get("axis") is None and keep:
            result = b.op("Reshape", result, b.const(np.array(b.out_shape, np.int64)))
        return b.cast(result, b.out)
    return build


_row("argmax", "ArgMax, IsNaN", _arg_extreme("ArgMax"), "the first NaN, as in NumPy", keywords="axis keepdims")
_row("argmin", "ArgMin, IsNaN", _arg_extreme("ArgMin"), "the first NaN, as in NumPy", keywords="axis keepdims")


def _count_nonzero(b, node):
    if node.attrs:
        raise OnnxRefusal("only `np.count_nonzero(a)` without `axis` is written")
    v = b.x(0)
    nonzero = b.cast(v, np.bool_)
    return b.cast(b.op("ReduceSum", b.cast(nonzero, np.int64), keepdims=0), b.out)


_row("count_nonzero", "Cast, ReduceSum", _count_nonzero)


def _sort_axis(b, node):
    """(the sorted operand, its axis, its length): np.sort(a, axis=None) sorts the flattened array."""
    if set(node.attrs) - {"axis", "kind"} or len(node.operands) > 1 or node.attrs.get("kw"):
        raise OnnxRefusal("only `axis` and `kind` are written (as compile-time values)")
    v = b.x(0)
    shape = b.shape(0)
    axis = node.attrs.get("axis", -1)
    if axis is None:
        v = b.op("Reshape", v, b.const(np.array([-1], np.int64)))
        shape, axis = (int(np.prod(shape)),), 0
    axis = axis % len(shape)
    return v, shape, axis


def _ascending(b, v, dtype, shape, axis):
    """TopK ascending (equal values in index order, as ONNX specifies); NaN last, as NumPy sorts it.
    Returns (values with NaN as +inf, indices, the NaN count along the axis or None)."""
    k = b.const(np.array([shape[axis]], np.int64))
    nan = None
    if dtype.kind == "f":
        nan = b.op("IsNaN", v)
        v = b.op("Where", nan, b.const(np.array(np.inf, dtype)), v)
    elif dtype == np.bool_:
        v = b.cast(v, np.int32)
    values, indices = b.op_n("TopK", 2, v, k, axis=axis, largest=0, sorted=1)
    return values, indices, nan


def _sort(b, node):
    v, shape, axis = _sort_axis(b, node)
    dtype = b.in_dtype(0)
    values, _, nan = _ascending(b, v, dtype, shape, axis)
    if nan is not None:        # the last `count` places along the axis hold NaN
        count = b.op("ReduceSum", b.cast(nan, np.int64), b.const(np.array([axis], np.int64)), keepdims=1)
        place = np.arange(shape[axis]).reshape([-1 if d == axis else 1 for d in range(len(shape))])
        last = b.op("GreaterOrEqual", b.const(place.astype(np.int64)),
                    b.op("Sub", b.const(np.array(shape[axis], np.int64)), count))
        values = b.op("Where", last, b.const(np.array(np.nan, dtype)), values)
    return b.cast(values, b.out)


def _argsort(b, node):
    if node.attrs.get("kind") not in ("stable", "mergesort"):
        raise OnnxRefusal("is written with kind='stable': NumPy's default sort does not promise an order "
                          "among equal values, and ONNX's TopK keeps them in index order")
    v, shape, axis = _sort_axis(b, node)
    dtype = b.in_dtype(0)
    if dtype.kind == "f":
        if dtype.itemsize >= 8:
            raise OnnxRefusal("of float64 values is not written: NaN must sort after +inf, and float64 has no "
                              "wider type to hold that order")
        # in float64, +inf becomes the largest finite value and NaN +inf: NumPy's order, ties kept
        wide = b.cast(v, np.float64)
        wide = b.op("Where", b.op("IsInf", wide, detect_negative=0), b.const(np.array(np.finfo(np.float64).max)),
                    wide)
        v, dtype = wide, np.dtype(np.float64)
    _, indices, _ = _ascending(b, v, dtype, shape, axis)
    return b.cast(indices, b.out)


def _median(b, node):
    """The middle of the sorted values (the mean of the two middles for an even count); NaN if any is NaN."""
    if set(node.attrs) - {"axis", "keepdims"} or len(node.operands) > 1 or node.attrs.get("kw"):
        raise OnnxRefusal("only `axis` and `keepdims` are written (as compile-time values)")
    shape = b.shape(0)
    axis = node.attrs.get("axis")
    v = b.x(0, b.out)
    if axis is None or isinstance(axis, tuple):
        if isinstance(axis, tuple) and sorted(a % len(shape) for a in axis) != list(range(len(shape))):
            raise OnnxRefusal("over some of the axes is not written (all of them, or one)")
        v = b.op("Reshape", v, b.const(np.array([-1], np.int64)))
        reduced, axis = (int(np.prod(shape)),), 0
    else:
        reduced, axis = shape, axis % len(shape)
    n = reduced[axis]
    if n == 0:
        raise OnnxRefusal("of an empty array is not written")
    values, _, nan = _ascending(b, v, b.out, reduced, axis)
    middle = [n // 2 - 1, n // 2] if n % 2 == 0 else [n // 2]
    picked = b.op("Gather", values, b.const(np.array(middle, np.int64)), axis=axis)
    result = b.op("ReduceMean", picked, b.const(np.array([axis], np.int64)), keepdims=1)
    if nan is not None:
        any_nan = b.cast(b.op("ReduceMax", b.cast(nan, np.int32), b.const(np.array([axis], np.int64)), keepdims=1),
                         np.bool_)
        result = b.op("Where", any_nan, b.const(np.array(np.nan, b.out)), result)
    return b.op("Reshape", result, b.const(np.array(b.out_shape, np.int64)))


_row("sort", "TopK, IsNaN, Where", _sort, "NaN last, as NumPy sorts it", keywords="axis kind")
_row("argsort", "TopK", _argsort, "kind='stable' (equal values in index order); float32, integers, booleans",
     keywords="axis kind")
_row("median", "TopK, Gather, ReduceMean", _median, "NaN if any value is NaN, as in NumPy", keywords="axis keepdims")


def _cumsum(b, node):
    axis = node.attrs.get("axis")
    if set(node.attrs) - {"axis"} or len(node.operands) > 1:
        raise OnnxRefusal("only `axis` is written (as a compile-time value)")
    v = b.cast(b.x(0, b.out), wide(b.out))
    if axis is None:
        v = b.op("Reshape", v, b.const(np.array([-1], np.int64)))
        axis = 0
    return b.cast(b.op("CumSum", v, b.const(np.array(axis, np.int64))), b.out)


_row("cumsum", "CumSum", _cumsum, keywords="axis")


# --- linear algebra --------------------------------------------------------------------------------
def _matmul(b, node):
    if b.out == np.bool_:
        raise OnnxRefusal("of booleans (NumPy's logical matrix product) is not written")
    computed = wide(b.out)
    return b.cast(b.op("MatMul", b.cast(b.x(0, b.out), computed), b.cast(b.x(1, b.out), computed)), b.out)


_row("matmul", "MatMul", _matmul, "small integers computed in int32 and cast back (the same wrap-around)")


def _dot(b, node):
    if len(b.shape(0)) > 2 or len(b.shape(1)) > 2:
        raise OnnxRefusal("np.dot of operands above 2-d sums over the second-to-last axis of b: not written")
    if not b.shape(0) or not b.shape(1):
        return b.op("Mul", b.x(0, b.out), b.x(1, b.out))
    return b.op("MatMul", b.x(0, b.out), b.x(1, b.out))


_row("dot", "MatMul (Mul for scalars)", _dot, "operands up to 2-d")


def _outer(b, node):
    a = b.op("Reshape", b.x(0, b.out), b.const(np.array([-1, 1], np.int64)))
    c = b.op("Reshape", b.x(1, b.out), b.const(np.array([1, -1], np.int64)))
    return b.op("Mul", a, c)


_row("outer", "Reshape, Mul", _outer)


def _tensordot(b, node):
    """np.tensordot(a, b, axes): an Einsum contracting the named axes (compile-time), in NumPy's result order."""
    if b.out.kind != "f" or node.attrs.get("kw") or set(node.attrs) - {"axes"}:
        raise OnnxRefusal("is written for floating-point operands with compile-time `axes`")
    axes = node.attrs["axes"] if "axes" in node.attrs else (b.static(2) if len(node.operands) > 2 else 2)
    ra, rb = len(b.shape(0)), len(b.shape(1))
    if isinstance(axes, (int, np.integer)):
        pairs = (list(range(ra - int(axes), ra)), list(range(int(axes))))
    else:
        pairs = [list(p) if isinstance(p, (tuple, list)) else [p] for p in axes]
    first, second = ([a % r for a in p] for p, r in zip(pairs, (ra, rb)))
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    left = [next(letters) for _ in range(ra)]
    right = [next(letters) for _ in range(rb)]
    for i, j in zip(first, second):
        right[j] = left[i]
    out = [c for k, c in enumerate(left) if k not in first] + [c for k, c in enumerate(right) if k not in second]
    return b.op("Einsum", b.x(0, b.out), b.x(1, b.out), equation=f"{''.join(left)},{''.join(right)}->{''.join(out)}")


_row("tensordot", "Einsum", _tensordot, "compile-time axes, floating-point operands", keywords="axes")


def _einsum(b, node):
    spec = b.static(0)
    if not isinstance(spec, str) or node.attrs.get("kw") or b.out.kind != "f":
        raise OnnxRefusal("only `np.einsum(spec, *arrays)` with a compile-time spec on floats is written")
    return b.op("Einsum", *[b.x(k, b.out) for k in range(1, len(node.operands))], equation=spec.replace(" ", ""))


_row("einsum", "Einsum", _einsum, "a compile-time spec, floating-point operands")


# --- shapes and layout -----------------------------------------------------------------------------
def _reshape_to_result(b, node):
    """Ops that keep the elements in C order and only change the shape."""
    if node.attrs.get("order", "C") not in ("C", None) or node.attrs.get("kw"):
        raise OnnxRefusal("only C order is written")
    return b.op("Reshape", b.x(0, b.out), b.const(np.array(b.out_shape, np.int64)))


_row("reshape ravel copy_flat squeeze expand_dims atleast_1d atleast_2d", "Reshape", _reshape_to_result,
     "to the result's shape (known when the file is written)", keywords="order axis")


def _permute(b, node):
    """The permutation a transposing op applies, found by applying it to an array of distinct dims."""
    rank = len(b.shape(0))
    probe = np.zeros(tuple(range(2, rank + 2)), dtype=np.int8)
    shape = b.evaluate(probe).shape
    perm = [d - 2 for d in shape]
    return b.op("Transpose", b.x(0, b.out), perm=perm)


_row("T transpose swapaxes moveaxis", "Transpose", _permute, keywords="axes")
_row("copy ascontiguousarray as_ndarray as_tensor stop_gradient", "Identity",
     lambda b, node: b.op("Identity", b.x(0, b.out)), "a new buffer is no concern of ONNX")


def _cast(b, node):
    return b.x(0, b.out)


_row("astype asarray array tensor float int bool", "Cast", _cast,
     "`float`/`int` of a value: float64 / int64, truncating as Python does", keywords="dtype copy")
_row("item", "Reshape", lambda b, node: b.op("Reshape", b.x(0, b.out), b.const(np.zeros(0, np.int64))))


def _round(b, node):
    if len(node.operands) != 1:
        raise OnnxRefusal("only `round(x)` (no digits) is written")
    return b.cast(b.op("Round", b.x(0, b.float_of(0))), b.out)


_row("py_round", "Round, Cast", _round, "half to even, as Python rounds")


def _gather_table(b, node):
    """Ops that select elements of operand 0 by position: one Gather by an index table."""
    for k in range(1, len(node.operands)):
        b.static(k)     # refuses a run-time operand: the selection must be known when writing
    shape = b.shape(0)
    n = int(np.prod(shape))
    index = np.asarray(b.evaluate(np.arange(1, n + 1, dtype=np.int64).reshape(shape)))
    if index.dtype != np.int64 or index.shape != tuple(b.out_shape):
        raise OnnxRefusal("the op does not only select elements (its result is not a selection of positions)")
    flat = b.op("Reshape", b.x(0, b.out), b.const(np.array([-1], np.int64)))
    if index.size and index.min() >= 1:
        return b.op("Gather", flat, b.const(index - 1), axis=0)
    padded = b.op("Concat", b.const(np.zeros(1, b.out)), flat, axis=0)   # position 0: NumPy's filled zeros
    return b.op("Gather", padded, b.const(index), axis=0)


_SELECTIONS = "flip roll tile repeat diag triu tril take"
_row(_SELECTIONS, "Gather (index table)", _gather_table,
     "the selection computed by NumPy when the file is written; its operands after the first are compile-time",
     keywords="*")


def _windows(b, node):
    """sliding_window_view: per windowed axis, a Gather by a (windows, window) table (small: the axis's length
    times the window's), then the window axes moved to the end as NumPy puts them."""
    if set(node.attrs) - {"axis"} or len(node.operands) != 2:
        raise OnnxRefusal("only `window_shape` and `axis` are written")
    rank = len(b.shape(0))
    window = b.static(1)
    window = tuple(int(w) for w in (window if isinstance(window, (tuple, list)) else (window,)))
    axis = node.attrs.get("axis")
    axes = tuple(range(rank)) if axis is None else tuple(a % rank for a in (axis if isinstance(axis, (tuple, list))
                                                                            else (axis,)))
    if len(axes) != len(window) or len(set(axes)) != len(axes):
        return _gather_table(b, node)        # an axis windowed twice: the table says what NumPy does
    layout = [("axis", a) for a in range(rank)]
    v = b.x(0, b.out)
    for k, (a, w) in enumerate(zip(axes, window)):
        n = b.shape(0)[a] - w + 1
        if n < 1:
            raise OnnxRefusal("has a window larger than the array")
        table = np.arange(n)[:, None] + np.arange(w)[None, :]
        position = layout.index(("axis", a))
        v = b.op("Gather", v, b.const(table.astype(np.int64)), axis=position)
        layout[position + 1:position + 1] = [("window", k)]
    order = [("axis", a) for a in range(rank)] + [("window", k) for k in range(len(window))]
    return b.op("Transpose", v, perm=[layout.index(label) for label in order])


_row("sliding_window_view", "Gather, Transpose", _windows,
     "one small (windows, window) table per windowed axis", keywords="axis")


def _broadcast(b, node):
    b.static(1)
    return b.op("Expand", b.x(0, b.out), b.const(np.array(b.out_shape, np.int64)))


_row("broadcast_to", "Expand", _broadcast, keywords="subok")


def _basic_index(b, node) -> str:
    """`x[1:, ::-2, 0, None]` with a compile-time index of slices, integers, None and `...`: a Slice, then a
    Reshape to the result's shape (which drops the integers' axes and adds None's)."""
    index = node.attrs["index"]
    rank = len(b.shape(0))
    items = list(index)
    if items.count(Ellipsis) > 1 or any(not isinstance(i, (slice, int, type(None), type(Ellipsis))) or
                                        isinstance(i, bool) for i in items):
        return None
    taken = sum(1 for i in items if i is not None and i is not Ellipsis)
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items[at:at + 1] = [slice(None)] * (rank - taken)
    items += [slice(None)] * (rank - sum(1 for i in items if i is not None))
    starts, ends, axes, steps = [], [], [], []
    dim = 0
    for item in items:
        if item is None:
            continue
        n = b.shape(0)[dim]
        if isinstance(item, int):
            k = item + n if item < 0 else item
            if not 0 <= k < n:
                return None      # NumPy raises IndexError: the table (evaluated by NumPy) reports it
            item = slice(k, k + 1, 1)
        start, stop, step = item.indices(n)
        if (start, stop, step) != (0, n, 1):
            if step < 0 and stop < 0:
                stop = np.iinfo(np.int64).min      # "before index 0" (Python's -1 here would mean the last)
            starts.append(start), ends.append(stop), axes.append(dim), steps.append(step)
        dim += 1
    v = b.x(0, b.out)
    if axes:
        v = b.op("Slice", v, *(b.const(np.array(part, np.int64)) for part in (starts, ends, axes, steps)))
    return b.op("Reshape", v, b.const(np.array(b.out_shape, np.int64)))


def _positions(b, node, shape) -> tuple:
    """Flat positions (in `shape`, C order) of what `node.attrs['index']` selects, when the index's run-time
    parts are integers (one value each): NumPy's indexing of `np.arange` with each such integer taken as 0,
    plus each integer times its axis's stride. An integer out of its axis's range makes every position
    out of range, so the Gather or ScatterND fails at run time as NumPy raises IndexError.
    Returns (a compile-time array, or an ONNX name of that shape; the positions with each integer taken as 0)."""
    from .evaluate import build_index
    from .literals import OperandRef
    index = node.attrs["index"]
    vals = [None] * len(node.operands)
    scalars = []    # (axis, operand)
    axis = 0
    for item in index:
        for ref in _refs_of(item):
            if b.is_static(ref.index):
                vals[ref.index] = b.static(ref.index)
            elif isinstance(item, OperandRef) and _is_integer(node.operands[ref.index].type):
                vals[ref.index] = 0
                scalars.append((axis, ref.index))
            else:
                raise OnnxRefusal("is written when what the index reads at run time is integers (one value "
                                  "each); an array or a slice bound read at run time is not")
        if item is Ellipsis:
            axis = len(shape) - sum(1 for i in index if i is not None and i is not Ellipsis) + axis
        elif item is not None:
            axis += 1
    n = int(np.prod(shape))
    table = np.asarray(np.arange(n, dtype=np.int64).reshape(shape)[build_index(node, index, vals)])
    if not scalars:
        return table, table
    flat = b.const(table)
    valid = None
    for axis, k in scalars:
        i = b.x(k, np.int64)
        size = b.const(np.array(shape[axis], np.int64))
        inside = b.op("And", b.op("GreaterOrEqual", i, b.op("Neg", size)), b.op("Less", i, size))
        valid = inside if valid is None else b.op("And", valid, inside)
        i = b.op("Where", b.op("Less", i, b.const(np.array(0, np.int64))), b.op("Add", i, size), i)
        flat = b.op("Add", flat, b.op("Mul", i, b.const(np.array(int(np.prod(shape[axis + 1:])), np.int64))))
    return b.op("Where", valid, flat, b.const(np.array(n, np.int64))), table


def _is_integer(t) -> bool:
    """A Python int or a 0-d integer array: one integer."""
    if getattr(t, "kind", "") == "int":
        return True
    return getattr(t, "shape", None) == () and np.dtype(getattr(t, "dtype", None) or "O").kind in "iu"


def _getitem(b, node):
    from .literals import OperandRef
    index = node.attrs["index"]
    refs = [k for k, item in enumerate(index) if isinstance(item, OperandRef)
            or isinstance(item, slice) and any(isinstance(p, OperandRef) for p in (item.start, item.stop, item.step))]
    dynamic = [k for k in refs if not all(b.is_static(r.index) for r in _refs_of(index[k]))]
    if not dynamic:
        return (not refs and _basic_index(b, node)) or _gather_table(b, node)
    # one run-time integer index (array or scalar) with whole-axis slices elsewhere: Gather on its axis
    rest = [item for k, item in enumerate(index) if k != dynamic[0]]
    item = index[dynamic[0]]
    kind = b.in_dtype(item.index).kind if isinstance(item, OperandRef) and b.in_dtype(item.index) is not None \
        else ""
    if len(dynamic) == 1 and isinstance(item, OperandRef) and all(i == slice(None) for i in rest) \
            and kind in ("i", "u") and b.shape(item.index) != () and Ellipsis not in index:
        return b.op("Gather", b.x(0, b.out), b.x(item.index, np.int64), axis=dynamic[0])
    positions, _ = _positions(b, node, b.shape(0))     # integers read at run time: x[i, j], x[i, 1:]
    flat = b.op("Reshape", b.x(0, b.out), b.const(np.array([-1], np.int64)))
    return b.op("Gather", flat, positions if isinstance(positions, str) else b.const(positions), axis=0)


def _refs_of(item):
    from .literals import OperandRef
    parts = (item.start, item.stop, item.step) if isinstance(item, slice) else (item,)
    return [p for p in parts if isinstance(p, OperandRef)]


_row("getitem", "Gather", _getitem,
     "a compile-time index: an index table; a run-time integer array on one axis: Gather on that axis")


def _concat(b, node):
    if node.attrs.get("kw"):
        raise OnnxRefusal("keywords other than `axis` are not written")
    parts = b.static(0) if b.is_static(0) else None
    if parts is not None:
        raise OnnxRefusal("the sequence is a compile-time value")
    seq = node.operands[0]
    if seq.op not in ("tuple", "list"):
        raise OnnxRefusal("the sequence must be written in the call (`np.concatenate((a, b))`)")
    axis = node.attrs.get("axis", 0)
    items = [b.x_of(item, b.out) for item in seq.operands]
    if node.op == "stack":
        rank = len(b.out_shape)
        axis = axis % rank
        items = [b.op("Unsqueeze", v, b.const(np.array([axis], np.int64))) for v in items]
    elif node.op in ("hstack", "vstack"):
        ranks = [len(item.type.shape) for item in seq.operands]
        if node.op == "vstack" and min(ranks) < 2 or node.op == "hstack" and min(ranks) < 1:
            raise OnnxRefusal("operands of lower rank than the stacking needs are not written")
        axis = 0 if node.op == "vstack" or ranks[0] == 1 else 1
    elif axis is None:
        items = [b.op("Reshape", v, b.const(np.array([-1], np.int64))) for v in items]
        axis = 0
    return b.op("Concat", *items, axis=int(axis))


_row("concatenate stack hstack vstack", "Concat (Unsqueeze)", _concat, keywords="axis")


def _pad(b, node):
    mode = node.attrs.get("mode", "constant")
    kw = node.attrs.get("kw", ())
    if kw and set(kw) - {"mode", "constant_values"} or set(node.attrs) - {"mode", "constant_values", "kw"}:
        raise OnnxRefusal("only `mode` and `constant_values` are written")
    rank = len(b.shape(0))
    width = np.broadcast_to(np.asarray(b.static(1), dtype=np.int64), (rank, 2))
    pads = b.const(np.concatenate([width[:, 0], width[:, 1]]).astype(np.int64))
    onnx_mode = {"constant": "constant", "reflect": "reflect", "edge": "edge"}.get(mode)
    if onnx_mode is None:
        raise OnnxRefusal(f"mode {mode!r} is not one of constant, reflect, edge")
    value = node.attrs.get("constant_values", 0)
    if "constant_values" in kw:
        value = b.static(len(node.operands) - len(kw) + list(kw).index("constant_values"))
    if np.ndim(value):
        raise OnnxRefusal("only one constant value for every side is written")
    return b.op("Pad", b.x(0, b.out), pads, b.const(np.array(value, b.out)), mode=onnx_mode)


_row("pad", "Pad", _pad, "constant (one value), reflect, edge", keywords="mode constant_values")


def _static_shape(b, node):
    return b.static_result(b.evaluate(np.empty(b.shape(0), dtype=np.int8)))


_row("shape dim ndim size len", "(a constant)", _static_shape, "the shape is known when the file is written",
     keywords="*")


# --- creation: computed when the file is written when their operands are compile-time ------------------
def _creation(b, node):
    """`np.zeros_like(x)` and friends of a run-time array: a constant of the result's shape."""
    for k in range(1, len(node.operands)):
        b.static(k)
    probe = np.zeros(b.shape(0), dtype=b.in_dtype(0) or np.float64)
    if node.op == "empty_like":
        node_value = np.zeros(b.out_shape, b.out)      # any contents are right; zeros are reproducible
    else:
        node_value = b.evaluate(probe)
    return b.const(np.asarray(node_value, b.out))


_row("zeros_like ones_like empty_like full_like", "(a constant)", _creation,
     "the shape is known when the file is written", keywords="*")
_row("zeros ones empty full arange linspace eye", "(a constant)",
     lambda b, node: b.refuse("its operands must be compile-time values"),
     "computed when the file is written (its operands are compile-time values)", keywords="*")

_PYTHON = "runs Python code or touches Python objects, which an ONNX file cannot hold"
_WRITES = "writes an array in place; ONNX values are never written after they are made"
_NEVER = "never reaches a backend"


# --- structure -----------------------------------------------------------------------------------------
# The passes' notes (`vectorize=` on a loop, `text=` of a note) describe; they do not change meaning.
_row("note", "(nothing)", lambda b, node: None, "a comment in the generated code", keywords="*")


def _inplace(b, node):
    """`a op= b`: on a Python number, `a = a op b`; on an array the graph made, the same write into a new
    value as `a[...] = a op b` (b.rebind), computed in NumPy's dtype and cast back as NumPy casts
    (`same_kind`: `int_array += 1.5` raises in NumPy, and is refused here)."""
    from .ops import OPS
    from .types import ScalarType
    row = SPELLINGS[node.attrs["op"]]
    if isinstance(node.operands[0].type, ScalarType):
        return row.build(b, node)       # `k += 1` on a Python number rebinds `k`
    target = node.operands[0]
    b.check_rebindable(target, node)
    dtype = b.in_dtype(0)
    with np.errstate(all="ignore"):
        computed = np.asarray(OPS[node.attrs["op"]].fn(*(b.probe(k) for k in range(2)))).dtype
    if not np.can_cast(computed, dtype, "same_kind"):
        raise OnnxRefusal(f"computes {computed} into a {dtype} array, which NumPy refuses (same_kind casting)")
    with b.computing(computed):
        value = row.build(b, node)
    value = b.cast(value, dtype)
    b.rebind(target, value, dtype)
    return value


from .literals import OperandRef as _OperandRef   # noqa: E402  (the index's `$k`)


def _setitem(b, node):
    """`a[index] = v` on an array this graph made and nothing else sees yet: a ScatterND into a new value,
    which every later read of `a` reads (b.rebind). Positions come from NumPy's own indexing of `np.arange`
    (the last of repeated positions wins, as in NumPy)."""
    target = node.operands[0]
    b.check_rebindable(target, node)
    shape, dtype = b.shape(0), b.in_dtype(0)
    value = b.x(1, dtype)
    index = node.attrs["index"]
    mask = index[0].index if len(index) == 1 and isinstance(index[0], _OperandRef) else None
    if mask is not None and not b.is_static(mask) and b.in_dtype(mask) == np.bool_ and b.shape(mask) == shape:
        # `a[mask] = v` with a mask of a's shape and one value: a Where
        if int(np.prod(b.shape(1))) != 1:
            raise OnnxRefusal("with a mask is written for one value (the masked count is known at run time only)")
        one = b.op("Reshape", value, b.const(np.zeros(0, np.int64)))
        b.rebind(target, b.op("Where", b.x(mask), one, b.x(0, dtype)), dtype)
        return None
    positions, table = _positions(b, node, shape)
    selection = table.shape
    try:
        spread = np.broadcast_shapes(b.shape(1), selection)
    except ValueError:
        raise OnnxRefusal(f"assigns a value of shape {b.shape(1)} to a selection of shape {selection}") from None
    if int(np.prod(spread)) != int(np.prod(selection)):
        raise OnnxRefusal(f"assigns a value of shape {b.shape(1)} to a selection of shape {selection}")
    updates = b.op("Reshape", b.op("Expand", value, b.const(np.array(selection, np.int64))),
                   b.const(np.array([-1], np.int64)))
    flat = table.reshape(-1)
    keep = np.sort(len(flat) - 1 - np.unique(flat[::-1], return_index=True)[1])
    if len(keep) != len(flat):                       # repeated positions: the last assignment wins
        updates = b.op("Gather", updates, b.const(keep.astype(np.int64)), axis=0)
    if isinstance(positions, str):                   # moved by the integers read at run time
        where = b.op("Reshape", positions, b.const(np.array([-1, 1], np.int64)))
        if len(keep) != len(flat):
            where = b.op("Gather", where, b.const(keep.astype(np.int64)), axis=0)
    else:
        where = b.const(flat[keep][:, None])
    written = b.op("ScatterND", b.op("Reshape", b.x(0, dtype), b.const(np.array([-1], np.int64))), where, updates)
    b.rebind(target, b.op("Reshape", written, b.const(np.array(shape, np.int64))), dtype)
    return None


_row("setitem", "ScatterND", _setitem,
     "on an array the graph made (np.zeros, a.copy(), ...) with no view of it read after the write; an "
     "index whose run-time parts are integers")


_row("inplace", "(its operator's row)", _inplace,
     "on a Python number (`k += 1`); on an array the graph made, a new value as for `setitem`")
_row("if", "If", lambda b, node: b.if_(node),
     "branches as subgraphs reading outer values by name; each yielded value keeps one dtype; an array a "
     "branch writes is carried out as a value", keywords="*")
_row("for_range", "Loop", lambda b, node: b.for_range(node),
     "trip count len(range(...)); the index start + k * step; a compile-time step; an array the body writes "
     "is a loop-carried value", keywords="*")
_row("while", "Loop", lambda b, node: b.while_(node),
     "the condition written before the loop and again at the end of the body; an array the body writes is a "
     "loop-carried value", keywords="*")

# Ops with no row, and why (the docs list them; the writer's refusal names the reason and the line).
NOT_EXPORTED = {
    **{name: _PYTHON for name in ("fallback", "pycall", "setattr", "getattr", "load_global", "store_global",
                                  "call", "dict", "format", "isinstance", "tolist", "list", "raise", "assert")},
    "call": "a function outside the op table (`math.exp`, `np.linalg.norm`): no ONNX spelling is known for it",
    "raise": "raises a Python exception at run time; ONNX has none",
    "assert": "checks a condition at run time and raises; ONNX has no exceptions",
    "list": "a Python list value (a fancy index written as a list is folded before this point)",
    **{name: _WRITES for name in ("add_at", "copyto", "put", "place", "putmask", "refresh",
                                  "append")},
    "refresh": "follows a change of an array's shape or dtype in place; ONNX values are never written",
    "append": "the tape of a differentiated loop (training code, not a model)",
    **{name: _NEVER for name in ("gradient", "gradient_boundary", "replayed")},
    "scratch": "a buffer kept between calls (a NumPy-only optimization, not made for export)",
    "sum_to": "a helper of the backward pass (export a model, not its gradient)",
    "add_reduceat": "a helper of the backward pass (export a model, not its gradient)",
    **{name: "`np.histogram`'s steps need `np.bincount`, which ONNX does not have"
       for name in ("hist_range", "hist_edges", "hist_index", "hist_counts")},
    "searchsorted": "needs a sort-aware search ONNX does not have",
    "correlate": "not written yet (a Conv over one axis would hold it)",
    "cumprod": "ONNX has CumSum but no cumulative product",
    "arctan2": "ONNX has no Atan2; not written yet",
    "copysign": "the sign of -0.0 and of NaN cannot be read with ONNX operators",
    "lshift": "ONNX's BitShift is defined for unsigned integers only",
    "rshift": "ONNX's BitShift is defined for unsigned integers only",
}
# The writer's own: graph inputs, weights, compile-time values and tuples need no row.
STRUCTURAL = {
    "arg": "an ONNX graph input (arrays), or a compile-time value",
    "param": "an initializer holding the weight's value when the file is written",
    "const": "a constant (an initializer) in the dtype each use needs",
    "tuple": "several ONNX values: a returned tuple is several graph outputs",
    "tuple_get": "one of them",
}
