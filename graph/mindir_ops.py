"""The MindIR column beside the op table: how each op is written as MindSpore primitives, or why it is not,
and how each MindSpore primitive read from a file becomes graph ops.

Writing (`export(..., file_format="MINDIR")`, backends/emit_mindir.py): per op, `SPELLINGS` holds a
`Mindir` row: the primitives it becomes (for the docs) and `build(b, node)`, which emits them through
the writer `b` and returns the result's name. `b.x(k, dtype)` is operand k (a compile-time operand is
written as a constant tensor of that dtype), `b.static(k)` its compile-time value, `b.out` the result's
dtype, `b.prim(name, *inputs)` one primitive node; `b.tuple_`, `b.int_`, `b.bool_` write the constant
inputs MindSpore 2.x's primitives take (`MatMul(x, w, transpose_a, transpose_b)`). The graph is
specialized to its example inputs, so every shape is known when writing. A node whose operands are all
compile-time values is computed when writing and stored as a constant, whatever its row.

Where MindSpore differs from NumPy the row writes NumPy's meaning: MindSpore's `Maximum`/`Minimum` and
`ReLU` return the number when one operand is NaN, NumPy returns NaN, so `maximum` is written with
`IsNan` and `Select`. Each row's primitives were checked by MindSpore 2.10 loading and running files
graphjit wrote (the networks of tests/mindir_cases.py, on float32 values, and on the booleans and
integers those networks compute; recorded by tests/golden/mindir/record.py).

Reading (`load("model.mindir")`, backends/mindir_run.py): `PRIMITIVES` maps a MindSpore primitive to a
function building graph ops with MindSpore's meaning (`ReLU` of NaN is 0 there, so it reads as `fmax`).
`NOT_EXPORTED` says, per op, why it has no row; docs/mindir.md is generated from these tables
(`python docs/gen_mindir.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


class MindirRefusal(Exception):
    """A form of an op the file cannot hold faithfully; the message says why."""


@dataclass(frozen=True)
class Mindir:
    prims: str
    build: Callable
    note: str = ""
    keywords: frozenset = frozenset()


SPELLINGS: dict[str, Mindir] = {}


def _row(names: str, prims: str, build: Callable, note: str = "", keywords: str = "") -> None:
    for name in names.split():
        assert name not in SPELLINGS, name
        SPELLINGS[name] = Mindir(prims, build, note, frozenset(keywords.split()))


def _numeric(b):
    if b.out.kind not in "biuf":
        raise MindirRefusal(f"gives {b.out}, which is not written")
    return b.out


def _binary(prim: str, floats_only: bool = False):
    def build(b, node):
        dtype = _numeric(b)
        if floats_only and dtype.kind != "f":
            raise MindirRefusal(f"is written for floating-point results only, and the result is {dtype}")
        if dtype.kind == "b":
            raise MindirRefusal("of booleans is not written (MindSpore's arithmetic on bool differs)")
        return b.prim(prim, b.x(0, dtype), b.x(1, dtype))
    return build


def _unary(prim: str, floats_only: bool = True):
    def build(b, node):
        dtype = _numeric(b)
        if floats_only and dtype.kind != "f":
            raise MindirRefusal(f"is written for floating-point results only, and the result is {dtype}")
        return b.prim(prim, b.x(0, dtype))
    return build


_row("add np_add", "Add", _binary("Add"))
_row("sub subtract", "Sub", _binary("Sub"))
_row("mul multiply", "Mul", _binary("Mul"))
_row("truediv divide true_divide", "RealDiv", _binary("RealDiv", floats_only=True))
def _neg(b, node):
    if _numeric(b).kind in "ub":
        raise MindirRefusal(f"of {b.out} is not written (NumPy wraps unsigned integers around)")
    return b.prim("Neg", b.x(0, b.out))


_row("neg negative", "Neg", _neg, "signed integers and floats")
for _np, _ms in [("sqrt", "Sqrt"), ("exp", "Exp"), ("log", "Log"), ("tanh", "Tanh"), ("sin", "Sin"),
                 ("cos", "Cos")]:
    _row(_np, _ms, _unary(_ms))
_row("abs absolute fabs", "Abs", _unary("Abs"))


def _log1p(b, node):
    """MindSpore's Log1p computes log(1 + y), which loses y where 1 + y rounds to 1 (log1p(1e-10) is 0
    there): y * log(u) / (u - 1) with u = 1 + y does not (Goldberg), as NumPy's log1p."""
    dtype = _numeric(b)
    if dtype.kind != "f":
        raise MindirRefusal(f"is written for floating-point results only, and the result is {dtype}")
    y = b.x(0, dtype)
    u = b.prim("Add", b.const(np.ones((), dtype)), y)
    d = b.prim("Sub", u, b.const(np.ones((), dtype)))
    exact = b.prim("RealDiv", b.prim("Mul", y, b.prim("Log", u)), d)
    inf = b.prim("Equal", u, b.const(np.array(np.inf, dtype)))
    plain = b.prim("LogicalOr", b.prim("Equal", d, b.const(np.zeros((), dtype))), inf)
    return b.prim("Select", plain, b.prim("Select", inf, u, y), exact)


_row("log1p", "Add, Sub, Log, RealDiv, Equal, Select", _log1p, "accurate near 0, as NumPy's (MindSpore's Log1p is not)")


def _extreme(prim: str):
    """maximum / minimum: NaN propagates in NumPy; MindSpore's primitive returns the other operand."""
    def build(b, node):
        dtype = _numeric(b)
        x, y = b.x(0, dtype), b.x(1, dtype)
        result = b.prim(prim, x, y)
        if dtype.kind != "f":
            return result
        for k, v in ((1, y), (0, x)):       # x's NaN wins over y's, as NumPy's result is x's NaN
            if b.is_static(k) and not np.isnan(np.asarray(b.static(k))).any():
                continue
            result = b.prim("Select", b.prim("IsNan", v), b.broadcast(v, k), result)
        return result
    return build


_row("maximum", "Maximum (IsNan, Select)", _extreme("Maximum"), "NaN propagates, as in NumPy")
_row("minimum", "Minimum (IsNan, Select)", _extreme("Minimum"), "NaN propagates, as in NumPy")


def _compare(prim: str):
    def build(b, node):
        dtype = b.common_dtype()
        if dtype.kind not in "biuf":
            raise MindirRefusal(f"compares {dtype} values, which are not written")
        return b.prim(prim, b.x(0, dtype), b.x(1, dtype))
    return build


for _names, _ms in [("eq equal", "Equal"), ("ne not_equal", "NotEqual"), ("lt less", "Less"),
                    ("le less_equal", "LessEqual"), ("gt greater", "Greater"), ("ge greater_equal", "GreaterEqual")]:
    _row(_names, _ms, _compare(_ms))


def _logical(prim: str):
    def build(b, node):
        if b.out.kind != "b":
            raise MindirRefusal("on integers (bitwise) is not written; on booleans it is")
        return b.prim(prim, *(b.x(k, np.bool_) for k in range(len(node.operands))))
    return build


_row("bitand logical_and", "LogicalAnd", _logical("LogicalAnd"), "booleans")
_row("bitor logical_or", "LogicalOr", _logical("LogicalOr"), "booleans")
_row("invert logical_not", "LogicalNot", _logical("LogicalNot"), "booleans")


def _where(b, node):
    if len(node.operands) != 3:
        raise MindirRefusal("with one operand (np.nonzero) is not written")
    dtype = _numeric(b)
    shape = b.out_shape
    return b.prim("Select", b.broadcast(b.x(0, np.bool_), 0, shape), b.broadcast(b.x(1, dtype), 1, shape),
                  b.broadcast(b.x(2, dtype), 2, shape))


_row("where", "Select", _where, "operands broadcast to the result's shape first")


def _matmul(b, node):
    dtype = _numeric(b)
    if dtype.kind != "f" or len(b.shape(0)) != 2 or len(b.shape(1)) != 2:
        raise MindirRefusal("is written for 2-d floating-point operands only")
    return b.prim("MatMul", b.x(0, dtype), b.x(1, dtype), b.bool_(False), b.bool_(False))


_row("matmul", "MatMul", _matmul, "2-d operands")


def _permute(b, node):
    """The permutation, found by running the op on an array whose axes all have different lengths."""
    rank = len(b.shape(0))
    sizes = tuple(range(2, 2 + rank))
    moved = np.shape(b.evaluate(np.empty(sizes, np.int8)))
    return b.prim("Transpose", b.x(0, b.out), b.tuple_([sizes.index(d) for d in moved]))


_row("T transpose swapaxes moveaxis", "Transpose", _permute, keywords="axes")


def _reshape(b, node):
    return b.prim("Reshape", b.x(0, b.out), b.tuple_(b.out_shape))


_row("reshape ravel copy_flat squeeze expand_dims", "Reshape", _reshape, "the result's shape")


def _identity(b, node):
    return b.x(0, b.out)


_row("copy ascontiguousarray as_ndarray as_tensor stop_gradient pos", "(nothing)", _identity)


def _sum(b, node):
    dtype = _numeric(b)
    if dtype.kind != "f" or b.in_dtype(0) != dtype:
        raise MindirRefusal("is written for floating-point arrays summed in their own dtype")
    rank = len(b.shape(0))
    axis = node.attrs.get("axis")
    axes = tuple(range(rank)) if axis is None else tuple(int(a) % rank for a in
                                                          (axis if isinstance(axis, tuple) else (axis,)))
    keep = bool(node.attrs.get("keepdims", False))
    return b.prim("ReduceSum", b.x(0, dtype), b.tuple_(axes), b.bool_(keep), b.bool_(False))


_row("sum", "ReduceSum", _sum, "floating-point, in the operand's dtype", keywords="axis keepdims")


def _reduce_axes(b, node) -> tuple:
    rank = len(b.shape(0))
    axis = node.attrs.get("axis")
    return tuple(range(rank)) if axis is None else tuple(int(a) % rank for a in
                                                          (axis if isinstance(axis, tuple) else (axis,)))


def _max(b, node):
    """ReduceMax skips NaN in MindSpore; NumPy's max is NaN when a NaN is reduced: the NaN comes from
    a ReduceSum of the NaNs alone (zeros elsewhere), selected where that sum is NaN."""
    dtype = _numeric(b)
    if dtype.kind != "f" or b.in_dtype(0) != dtype:
        raise MindirRefusal("is written for floating-point arrays only")
    x, axes, keep = b.x(0, dtype), b.tuple_(_reduce_axes(b, node)), b.bool_(bool(node.attrs.get("keepdims", False)))
    largest = b.prim("ReduceMax", x, axes, keep)
    zeros = b.broadcast(b.const(np.zeros((), dtype)), 0, b.shape(0))
    nans = b.prim("ReduceSum", b.prim("Select", b.prim("IsNan", x), x, zeros), axes, keep, b.bool_(False))
    return b.prim("Select", b.prim("IsNan", nans), nans, largest)


_row("max amax", "ReduceMax (IsNan, Select, ReduceSum)", _max, "NaN propagates, as in NumPy", keywords="axis keepdims")


def _pad(b, node):
    """A constant pad: PadV3 (mode "constant"), its paddings from the last axis backwards as MindSpore takes them."""
    if node.attrs.get("mode", "constant") != "constant" or set(node.attrs) - {"mode", "constant_values"}:
        raise MindirRefusal("is written for mode=\"constant\" with one constant value")
    dtype = _numeric(b)
    rank = len(b.shape(0))
    widths = np.broadcast_to(np.asarray(b.static(1), dtype=np.int64), (rank, 2))
    fill = node.attrs.get("constant_values", 0)
    if np.ndim(fill) != 0:
        raise MindirRefusal("is written with one constant value")
    last = max([k for k in range(rank) if widths[k].any()], default=rank - 1)
    first = min([k for k in range(rank) if widths[k].any()], default=rank - 1)
    paddings = [int(v) for k in range(last, first - 1, -1) for v in widths[k]]
    return b.prim("PadV3", b.x(0, dtype), b.tuple_(paddings), b.const(np.asarray(fill, dtype)),
                  attrs={"mode": "constant", "paddings_contiguous": True})


_row("pad", "PadV3", _pad, "constant (one value)", keywords="mode constant_values")


def _mean(b, node):
    dtype = _numeric(b)
    if dtype.kind != "f" or b.in_dtype(0) != dtype:
        raise MindirRefusal("is written for floating-point arrays averaged in their own dtype")
    keep = b.bool_(bool(node.attrs.get("keepdims", False)))
    return b.prim("ReduceMean", b.x(0, dtype), b.tuple_(_reduce_axes(b, node)), keep)


_row("mean", "ReduceMean", _mean, "floating-point, in the operand's dtype", keywords="axis keepdims")


def _astype(b, node):
    dtype = _numeric(b)
    source = b.in_dtype(0)
    if dtype == source:
        return b.x(0)
    if dtype.kind != "f" or source is None or source.kind != "f":
        raise MindirRefusal("is written between floating-point types only")
    return b.x(0, dtype)        # the writer's Cast


_row("astype", "Cast", _astype, "between floating-point types", keywords="dtype")


def _gather_table(b, node):
    """Ops that select elements of operand 0 by compile-time positions: one Gather by an index table."""
    for k in range(1, len(node.operands)):
        b.static(k)
    shape = b.shape(0)
    n = int(np.prod(shape))
    index = np.asarray(b.evaluate(np.arange(n, dtype=np.int64).reshape(shape)))
    if index.dtype != np.int64 or index.shape != tuple(b.out_shape):
        raise MindirRefusal("does not only select elements")
    flat = b.prim("Reshape", b.x(0, b.out), b.tuple_((n,)))
    return b.prim("Gather", flat, b.const(index.astype(np.int32 if n < 2 ** 31 else np.int64)), b.int_(0), b.int_(0))


def _windows(b, node):
    """sliding_window_view: per windowed axis a Gather by a small (windows, window) table, then Transpose."""
    if set(node.attrs) - {"axis"} or len(node.operands) != 2:
        raise MindirRefusal("only `window_shape` and `axis` are written")
    rank = len(b.shape(0))
    window = b.static(1)
    window = tuple(int(w) for w in (window if isinstance(window, (tuple, list)) else (window,)))
    axis = node.attrs.get("axis")
    axes = tuple(range(rank)) if axis is None else tuple(a % rank for a in (axis if isinstance(axis, (tuple, list))
                                                                            else (axis,)))
    if len(axes) != len(window) or len(set(axes)) != len(axes):
        return _gather_table(b, node)
    layout = [("axis", a) for a in range(rank)]
    v = b.x(0, b.out)
    for k, (a, w) in enumerate(zip(axes, window)):
        n = b.shape(0)[a] - w + 1
        if n < 1:
            raise MindirRefusal("has a window larger than the array")
        table = (np.arange(n)[:, None] + np.arange(w)[None, :]).astype(np.int32)
        position = layout.index(("axis", a))
        v = b.prim("Gather", v, b.const(table), b.int_(position), b.int_(0))
        layout[position + 1:position + 1] = [("window", k)]
    order = [("axis", a) for a in range(rank)] + [("window", k) for k in range(len(window))]
    perm = [layout.index(label) for label in order]
    return v if perm == sorted(perm) else b.prim("Transpose", v, b.tuple_(perm))


_row("sliding_window_view", "Gather, Transpose", _windows, "one small (windows, window) table per axis",
     keywords="axis")


def _getitem(b, node):
    from .literals import OperandRef
    index = node.attrs["index"]
    refs = [k for k, item in enumerate(index) if isinstance(item, OperandRef)
            or isinstance(item, slice) and any(isinstance(p, OperandRef) for p in (item.start, item.stop, item.step))]
    if not refs:
        return _gather_table(b, node)
    rest = [item for k, item in enumerate(index) if k != refs[0]]
    item = index[refs[0]]
    dtype = b.in_dtype(item.index) if isinstance(item, OperandRef) else None
    if len(refs) == 1 and isinstance(item, OperandRef) and all(i == slice(None) for i in rest) and \
            dtype is not None and dtype.kind in "iu" and b.shape(item.index) != () and Ellipsis not in index:
        # a run-time integer array on one axis; MindSpore's Gather wraps negatives and raises out of range
        if dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
            raise MindirRefusal(f"with a {dtype} index is not written (int32 and int64 are)")
        return b.prim("Gather", b.x(0, b.out), b.x(item.index), b.int_(refs[0]), b.int_(0))
    raise MindirRefusal("is written for a compile-time index, or one run-time integer array on one axis")


_row("getitem", "Gather", _getitem, "a compile-time index: an index table; a run-time integer array on one axis")


def _note(b, node):
    return None


_row("note", "(nothing)", _note, "a comment in the generated code", keywords="*")

# written by the writer itself, not by a row
STRUCTURAL = {"const": "a constant tensor (or folded into the primitive that reads it)",
              "param": "a parameter, with its data", "arg": "an input of the graph",
              "tuple": "items read one by one", "tuple_get": "the item it names"}
_OTHER = "no MindIR row: graphjit writes MindSpore primitives only for the ops verified in MindSpore 2.10"
NOT_EXPORTED: dict[str, str] = {}


def _fill_reasons() -> None:
    from .ops import OPS
    specific = {
        "fallback": "runs the Python interpreter: a MindIR file holds no Python",
        "pycall": "calls a Python function: a MindIR file holds no Python",
        "if": "a run-time branch: MindIR's control flow (Switch, sub-graphs) is not written",
        "while": "a run-time loop: MindIR's control flow is not written",
        "for_range": "a run-time loop: MindIR's control flow is not written",
        "setitem": "writes an array in place: not written",
        "inplace": "writes an array in place: not written",
    }
    for name in OPS:
        if name not in SPELLINGS and name not in STRUCTURAL:
            NOT_EXPORTED[name] = specific.get(name, _OTHER)


_fill_reasons()


# --- reading: MindSpore primitives as graph ops ----------------------------------------------------------
# PRIMITIVES[name](r, args, attrs) -> a graph node (or a tuple of them, or MONAD); `args` are the node's
# inputs (graph nodes, or the Python values of `Constant` inputs), `attrs` the primitive's own attributes
# (older primitives such as Conv2D and MaxPool keep their settings there). `r.add(op, operands, attrs)`
# adds a graph op, `r.value(x)` makes an input a node, `r.static(x, what)` requires a constant,
# `r.shape(x)` / `r.dtype(x)` give an input's type.

MONAD = "monad"          # MindSpore's side-effect tokens (UMonad, UpdateState): nothing to compute
PRIMITIVES: dict[str, Callable] = {}
PRIMITIVE_NOTES: dict[str, str] = {}


def _reads(names: str, note: str = ""):
    def register(fn):
        for name in names.split():
            PRIMITIVES[name] = fn
            PRIMITIVE_NOTES[name] = note
        return fn
    return register


def _elementwise(op: str, arity: int):
    def read(r, args, attrs):
        r.arity(args, arity)
        return r.add(op, [r.value(a) for a in args])
    return read


for _ms, _op in [("Add", "add"), ("Sub", "sub"), ("Mul", "mul"), ("Muls", "mul"), ("RealDiv", "truediv"),
                 ("Div", "truediv"),
                 ("Equal", "eq"), ("NotEqual", "ne"), ("Less", "lt"), ("LessEqual", "le"), ("Greater", "gt"),
                 ("GreaterEqual", "ge"), ("LogicalAnd", "logical_and"), ("LogicalOr", "logical_or"),
                 ("Maximum", "fmax"), ("Minimum", "fmin")]:
    PRIMITIVES[_ms] = _elementwise(_op, 2)
    PRIMITIVE_NOTES[_ms] = f"`{_op}`" + (" (MindSpore's NaN loses)" if _op in ("fmax", "fmin") else "")
for _ms, _op in [("Neg", "neg"), ("Sqrt", "sqrt"), ("Exp", "exp"), ("Log", "log"), ("Tanh", "tanh"),
                 ("Sin", "sin"), ("Cos", "cos"), ("Abs", "abs"), ("IsNan", "isnan"), ("LogicalNot", "logical_not")]:
    PRIMITIVES[_ms] = _elementwise(_op, 1)
    PRIMITIVE_NOTES[_ms] = f"`{_op}`"


@_reads("Load", "the parameter it reads")
def _load(r, args, attrs):
    return r.value(args[0])


@_reads("UpdateState", "(nothing: a side-effect token)")
def _update_state(r, args, attrs):
    return MONAD


@_reads("Depend", "its first input")
def _depend(r, args, attrs):
    return args[0]


@_reads("MakeTuple", "a tuple of its inputs")
def _make_tuple(r, args, attrs):
    return tuple(args)


@_reads("TupleGetItem", "the item")
def _tuple_get_item(r, args, attrs):
    r.arity(args, 2)
    items, k = args[0], r.static(args[1], "the index")
    if not isinstance(items, tuple) or not isinstance(k, int) or not 0 <= k < len(items):
        raise MindirRefusal("TupleGetItem needs a tuple and an index in range")
    return items[k]


@_reads("ReLU", "`fmax(x, 0)` (MindSpore's ReLU of NaN is 0)")
def _relu(r, args, attrs):
    r.arity(args, 1)
    x = r.value(args[0])
    return r.add("fmax", [x, r.const(np.zeros((), r.dtype(x)))])


@_reads("Sigmoid", "`1 / (1 + exp(-x))`")
def _sigmoid(r, args, attrs):
    r.arity(args, 1)
    x = r.value(args[0])
    one = r.const(np.ones((), r.dtype(x)))
    return r.add("truediv", [one, r.add("add", [one, r.add("exp", [r.add("neg", [x])])])])


@_reads("SiLU", "`x / (1 + exp(-x))`")
def _silu(r, args, attrs):
    r.arity(args, 1)
    x = r.value(args[0])
    one = r.const(np.ones((), r.dtype(x)))
    return r.add("truediv", [x, r.add("add", [one, r.add("exp", [r.add("neg", [x])])])])


@_reads("ReLU6", "`fmin(fmax(x, 0), 6)`")
def _relu6(r, args, attrs):
    r.arity(args, 1)
    x = r.value(args[0])
    low = r.add("fmax", [x, r.const(np.zeros((), r.dtype(x)))])
    return r.add("fmin", [low, r.const(np.full((), 6, r.dtype(x)))])


@_reads("GeLU", "`0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`")
def _gelu(r, args, attrs):
    r.arity(args, 1)
    x = r.value(args[0])
    dtype = r.dtype(x)

    def c(v):
        return r.const(np.asarray(v, dtype))
    cube = r.add("mul", [r.add("mul", [x, x]), x])
    inner = r.add("mul", [c(np.sqrt(2 / np.pi)), r.add("add", [x, r.add("mul", [c(0.044715), cube])])])
    return r.add("mul", [r.add("mul", [c(0.5), x]), r.add("add", [c(1.0), r.add("tanh", [inner])])])


@_reads("LogSoftmax", "`x - max - log(sum(exp(x - max)))` over the axis")
def _log_softmax(r, args, attrs):
    r.arity(args, 2)
    x = r.value(args[0])
    axis = {"axis": _axes(r, x, args[1]), "keepdims": True}
    shifted = r.add("sub", [x, r.add("max", [x], axis)])
    return r.add("sub", [shifted, r.add("log", [r.add("sum", [r.add("exp", [shifted])], axis)])])


@_reads("Log1p", "`log(1 + x)`, as MindSpore computes it (not NumPy's log1p: 0 for 1e-10)")
def _log1p_read(r, args, attrs):
    r.arity(args, 1)
    x = r.value(args[0])
    return r.add("log", [r.add("add", [r.const(np.ones((), r.dtype(x))), x])])


@_reads("Select", "`where`")
def _select(r, args, attrs):
    r.arity(args, 3)
    return r.add("where", [r.value(a) for a in args])


@_reads("BroadcastTo", "`broadcast_to`")
def _broadcast_to(r, args, attrs):
    r.arity(args, 2)
    return r.add("broadcast_to", [r.value(args[0]), r.const(r.ints(args[1], "the shape"))])


_TYPE_IDS = {42: np.float16, 43: np.float32, 44: np.float64}


@_reads("Cast", "`astype` (between floating-point types)")
def _cast(r, args, attrs):
    r.arity(args, 2)
    target = _TYPE_IDS.get(r.static(args[1], "the type"))
    if target is None:
        raise MindirRefusal(f"Cast to type id {args[1]!r} is not read (only float16, float32 and float64)")
    return r.add("astype", [r.value(args[0])], {"dtype": target})


@_reads("MatMul", "`matmul` (with `T` for a transposed operand)")
def _matmul(r, args, attrs):
    r.arity(args, 4)
    x, w = r.value(args[0]), r.value(args[1])
    if len(r.shape(x)) != 2 or len(r.shape(w)) != 2:
        raise MindirRefusal("MatMul needs 2-d operands")
    if r.static(args[2], "transpose_a"):
        x = r.add("T", [x])
    if r.static(args[3], "transpose_b"):
        w = r.add("T", [w])
    return r.add("matmul", [x, w])


@_reads("BiasAdd", "`add` of the bias along axis 1 (NCHW)")
def _bias_add(r, args, attrs):
    r.arity(args, 3)
    x, bias = r.value(args[0]), r.value(args[1])
    if r.static(args[2], "the data format") != 0:
        raise MindirRefusal("BiasAdd is read in the NCHW data format only")
    rank = len(r.shape(x))
    if rank > 2:
        bias = r.add("reshape", [bias, r.const((r.shape(bias)[0],) + (1,) * (rank - 2))])
    return r.add("add", [x, bias])


@_reads("Flatten", "`reshape(x, (N, -1))`")
def _flatten(r, args, attrs):
    r.arity(args, 1)
    x = r.value(args[0])
    shape = r.shape(x)
    return r.add("reshape", [x, r.const((shape[0] if shape else 1, -1))])


@_reads("Reshape", "`reshape`")
def _reshape(r, args, attrs):
    r.arity(args, 2)
    return r.add("reshape", [r.value(args[0]), r.const(r.ints(args[1], "the shape"))])


@_reads("Transpose", "`transpose`")
def _transpose(r, args, attrs):
    r.arity(args, 2)
    return r.add("transpose", [r.value(args[0])], {"axes": r.ints(args[1], "the permutation")})


def _axes(r, x, value) -> tuple:
    rank = len(r.shape(x))
    axes = r.ints(value, "the axes") if isinstance(value, tuple) else (r.static(value, "the axis"),)
    if not all(isinstance(a, int) and -rank <= a < max(rank, 1) for a in axes):
        raise MindirRefusal(f"axes {axes} out of range for a {rank}-d array")
    return tuple(range(rank)) if not axes else tuple(a % rank for a in axes)


def _reduce(op: str):
    def read(r, args, attrs):
        if len(args) not in (3, 4):
            raise MindirRefusal(f"takes 3 or 4 inputs, got {len(args)}")
        x = r.value(args[0])
        if len(args) == 4 and r.static(args[3], "skip_mode") and not r.ints(args[1], "the axes"):
            return x            # skip_mode with no axes: the input unchanged
        return r.add(op, [x], {"axis": _axes(r, x, args[1]), "keepdims": bool(r.static(args[2], "keep_dims"))})
    return read


PRIMITIVES["ReduceSum"], PRIMITIVE_NOTES["ReduceSum"] = _reduce("sum"), "`sum`"
PRIMITIVES["ReduceMean"], PRIMITIVE_NOTES["ReduceMean"] = _reduce("mean"), "`mean`"
PRIMITIVES["ReduceMax"], PRIMITIVE_NOTES["ReduceMax"] = _reduce("nanmax"), "`nanmax` (MindSpore skips NaN)"


@_reads("PadV3", "`pad` (mode constant)")
def _pad_v3(r, args, attrs):
    r.arity(args, 3)
    x = r.value(args[0])
    if attrs.get("mode", "constant") != "constant" or not attrs.get("paddings_contiguous", True):
        raise MindirRefusal("PadV3 is read in mode constant with contiguous paddings only")
    flat = r.ints(args[1], "the paddings")
    rank = len(r.shape(x))
    if len(flat) % 2 or len(flat) > 2 * rank or any(p < 0 for p in flat):
        raise MindirRefusal(f"PadV3 paddings {flat} are not read")
    widths = [(0, 0)] * rank
    for k in range(len(flat) // 2):
        widths[rank - 1 - k] = (flat[2 * k], flat[2 * k + 1])
    fill = r.value(args[2])
    if fill.op != "const" or np.size(fill.attrs["value"]) != 1:
        raise MindirRefusal("PadV3's value must be one constant")
    value = np.asarray(fill.attrs["value"]).reshape(()).astype(r.dtype(x)).item()
    return r.add("pad", [x, r.const(tuple(widths))], {"constant_values": value} if value else {})


@_reads("Gather", "`take` (negative indices wrap, others out of range raise, as in MindSpore)")
def _gather(r, args, attrs):
    r.arity(args, 4)
    x, index = r.value(args[0]), r.value(args[1])
    if r.static(args[3], "batch_dims") != 0:
        raise MindirRefusal("Gather with batch_dims is not read")
    if r.dtype(index).kind not in "iu":
        raise MindirRefusal("Gather needs integer indices")
    return r.add("take", [x, index], {"axis": _axes(r, x, args[2])[0]})


@_reads("Softmax", "`exp(x - max) / sum` over the axis")
def _softmax(r, args, attrs):
    r.arity(args, 2)
    x = r.value(args[0])
    axis = {"axis": _axes(r, x, args[1]), "keepdims": True}
    e = r.add("exp", [r.add("sub", [x, r.add("max", [x], axis)])])
    return r.add("truediv", [e, r.add("sum", [e], axis)])


def _pairs(r, value, what) -> tuple:
    ints = r.ints(value, what)
    ints = ints[-2:] if len(ints) in (2, 4) else ints * 2 if len(ints) == 1 else None
    if ints is None or any(i < 1 for i in ints):
        raise MindirRefusal(f"{what} {value!r} is not read")
    return ints


def _windows(r, x, kernel, strides):
    win = r.add("sliding_window_view", [x, r.const(tuple(kernel))], {"axis": (2, 3)})
    if tuple(strides) != (1, 1):
        from .literals import Index
        full = slice(None)
        win = r.add("getitem", [win], {"index": Index((full, full, slice(None, None, strides[0]),
                                                       slice(None, None, strides[1]), full, full))})
    return win


def _nchw(r, x, attrs, what):
    if len(r.shape(x)) != 4:
        raise MindirRefusal(f"{what} needs a 4-d input")
    fmt = attrs.get("format", "NCHW")
    if fmt not in ("NCHW", 0):
        raise MindirRefusal(f"{what} is read in the NCHW format only, not {fmt}")


@_reads("Conv2D", "`pad`, `sliding_window_view`, `einsum` (group 1, dilation 1)")
def _conv2d(r, args, attrs):
    r.arity(args, 2)
    x, w = r.value(args[0]), r.value(args[1])
    _nchw(r, x, attrs, "Conv2D")
    if attrs.get("group", 1) != 1 or attrs.get("groups", 1) != 1 or \
            any(d != 1 for d in r.ints(attrs.get("dilation", (1, 1)), "dilation")):
        raise MindirRefusal("Conv2D with groups or dilation is not read")
    if len(r.shape(w)) != 4 or r.shape(w)[1] != r.shape(x)[1]:
        raise MindirRefusal("Conv2D's weight does not match its input")
    pads = r.ints(attrs.get("pad_list", (0, 0, 0, 0)), "pad_list")
    if len(pads) != 4 or any(p < 0 for p in pads):
        raise MindirRefusal(f"Conv2D's pad_list {pads} is not read")
    if any(pads):
        x = r.add("pad", [x, r.const(((0, 0), (0, 0), (pads[0], pads[1]), (pads[2], pads[3])))])
    kernel = r.shape(w)[2:]
    win = _windows(r, x, kernel, _pairs(r, attrs.get("stride", (1, 1)), "stride"))
    return r.add("einsum", [r.const("nchwij,ocij->nohw"), win, w])


def _pool(op: str, what: str):
    def read(r, args, attrs):
        x = r.value(args[0])
        _nchw(r, x, attrs, what)
        if len(args) == 1:        # MaxPool: its settings are the primitive's attributes
            kernel, strides, pad = attrs.get("kernel_size"), attrs.get("strides"), attrs.get("pad_mode", "VALID")
        else:
            r.arity(args, 5)
            kernel, strides, pad = args[1], args[2], {2: "VALID"}.get(r.static(args[3], "pad_mode"), "other")
            if r.static(args[4], "the data format") != 0:
                raise MindirRefusal(f"{what} is read in the NCHW format only")
        if str(pad).upper() != "VALID":
            raise MindirRefusal(f"{what} is read with pad_mode VALID only")
        win = _windows(r, x, _pairs(r, kernel, "kernel_size"), _pairs(r, strides, "strides"))
        return r.add(op, [win], {"axis": (4, 5)})
    return read


PRIMITIVES["MaxPool"], PRIMITIVE_NOTES["MaxPool"] = _pool("nanmax", "MaxPool"), \
    "`nanmax` over windows (VALID; MindSpore skips NaN)"
PRIMITIVES["AvgPool"], PRIMITIVE_NOTES["AvgPool"] = _pool("mean", "AvgPool"), "`mean` over windows (VALID)"


@_reads("BatchNorm", "inference: `(x - mean) / sqrt(var + eps) * scale + bias`")
def _batch_norm(r, args, attrs):
    r.arity(args, 9)
    x, scale, bias, mean, var = (r.value(a) for a in args[:5])
    if r.static(args[5], "is_training"):
        raise MindirRefusal("BatchNorm in training mode is not read")
    if r.static(args[8], "the data format") != 0 or len(r.shape(x)) < 2:
        raise MindirRefusal("BatchNorm is read in the NCHW format only")
    eps = r.static(args[6], "epsilon")
    per_channel = (r.shape(x)[1],) + (1,) * (len(r.shape(x)) - 2)

    def channel(v):
        return r.add("reshape", [v, r.const(per_channel)])
    std = r.add("sqrt", [r.add("add", [channel(var), r.const(np.asarray(eps, r.dtype(x)))])])
    y = r.add("add", [r.add("mul", [r.add("truediv", [r.add("sub", [x, channel(mean)]), std]), channel(scale)]),
                      channel(bias)])
    return (y, mean, var, mean, var)
