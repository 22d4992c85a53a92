"""The op table: the one place that knows each graph op. A new op is one row here.

Every fact about an op is a field of its `OpDef`; the rest of the compiler asks the table:

- `name`: the op in graph text; `fn`: the callable the interpreter and constant folding run.
- `emit`, `symbol`, `prec`: how the NumPy backend spells it (`infix`, `prefix`, `call`, `method`,
  `attr`, or `special`, laid out by the emitter itself) and the precedence of that spelling.
- `arity` (None: any), `doc`, `infer` (its shape/dtype rule, graph/shape_rules.py).
- `pure`: no effects besides `writes`; `effect`: an ordered effect outside the arrays (raise,
  Python attributes, globals, opaque calls), never run speculatively by the vectorizer.
- `writes`: which operands a node writes in place (`setitem` its target, a ufunc its `out`
  argument, by keyword or positionally, an opaque call any operand); every pass that removes,
  merges or moves nodes learns a node's effects on memory from it (`Node.writes`, graph/alias.py).
- `result`: the memory its result may share: `fresh` (a new buffer), `view` (of operand 0),
  `views_any` (of any operand, `np.einsum`), or unknown; the alias analysis (graph/alias.py) reads it.
- `elementwise`, `commutative`, `foldable` (constant folding may run it).
- `reduction`: `reduce`, `batched` (a reduction the vectorizer runs on a whole batch) or `scan`;
  all take `axis` as a static attribute.
- `creates`: `alloc` (a new array of a given shape, then written: `np.zeros`) or `build` (an array
  from arguments: `np.arange`); the front end never computes one at compile time.
- `inplace_symbol`, `inplace_fn`: the augmented assignment of an infix op (`+=`, `operator.iadd`),
  which the `inplace` node's `op` attribute names.
- `ufunc`: the NumPy function with an `out=` parameter computing it into an existing buffer (memory
  planning); `method`: the ndarray method computing it on an array operand.
- `domain`: where it may raise for values its operand types allow (graph/raising.py `may_raise`:
  dead code elimination keeps an unused node that may raise).
- `region`: the node holds regions (`REGION_OPS`).
- `vjp`: its derivative, a vector-Jacobian product rule (graph/vjp_*.py, reverse-mode autodiff in
  graph/autodiff/), or `no_grad`: why it has none. Ops the transform differentiates by their place
  in the program (tuples, regions, in-place writes, `stop_gradient`) have neither. The column is
  written in graph/derivatives.py beside the rules it names, as `infer` names graph/shape_rules.py.

`docs/ops.md` is generated from this table (`python docs/gen_ops.py`).
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional

import numpy as np

from . import histogram as H
from . import shape_rules as R
from ..tensor import as_tensor, tensor_data, tensor_type_probe
from .autodiff.stop import stop_gradient
from .blend import select
from .unbroadcast import sum_to
from .promotion import infer_by_members
from .types import BOOL, FLOAT, INT, OBJECT, ArrayType, Type, join

# Python precedence, higher binds tighter (used to parenthesize emitted expressions).
PREC_ATOM, PREC_POWER, PREC_UNARY, PREC_MUL, PREC_ADD = 16, 14, 13, 12, 11
PREC_SHIFT, PREC_BITAND, PREC_BITXOR, PREC_BITOR, PREC_CMP, PREC_NOT = 10, 9, 8, 7, 6, 5


@dataclass(frozen=True)
class Writes:
    """Which operands a node writes in place, computed from its operands and attributes.

    Every op writes its `out` argument when it has one: `{out=k}` (memory planning), a run-time
    `out=` keyword (`np.add(a, b, out=c)`), or, for a ufunc taking `nin` inputs, a positional
    operand after them (`np.multiply(z, z, z)`). `positions` are operands the op always writes
    (`setitem` its target; `inplace` too, even on a Python number, where nothing holds memory:
    alias analysis finds no buffer there); `every`: any operand may be written (an opaque call).
    """

    positions: tuple = ()
    every: bool = False
    nin: Optional[int] = None
    when: str = ""                               # `positions` only when this attribute is true

    def out_position(self, n_operands: int, attrs: dict) -> Optional[int]:
        """The operand receiving the result (the call returns it), or None."""
        if "out" in attrs:
            return attrs["out"]
        kw = attrs.get("kw", ())
        if "out" in kw:
            return n_operands - len(kw) + list(kw).index("out")
        if self.nin is not None and n_operands - len(kw) > self.nin:
            return self.nin
        return None

    def __call__(self, operands, attrs: dict) -> tuple:
        """Positions of the operands written."""
        if self.every:
            return tuple(range(len(operands)))
        out = self.out_position(len(operands), attrs)
        if self.when and not attrs.get(self.when):
            return () if out is None else (out,)
        return self.positions if out is None or out in self.positions else self.positions + (out,)

    def may_write(self, n_positional: int, keywords) -> bool:
        """Can a call with this many positional arguments and these keywords write an operand?"""
        return self.every or bool(self.positions) and (not self.when or self.when in keywords) or \
            "out" in keywords or \
            (self.nin is not None and n_positional > self.nin)

    def describe(self) -> str:
        """The docs column: `0`, `out`, `2+ (out)`, `any`."""
        if self.every:
            return "any"
        parts = [str(k) + (f" (when `{self.when}`)" if self.when else "") for k in self.positions]
        parts.append(f"out (keyword, or operand {self.nin})" if self.nin is not None else "out")
        return ", ".join(parts)


OUT = Writes()                                   # only an `out` argument, when the node has one


@dataclass(frozen=True)
class OpDef:
    name: str
    fn: Optional[Callable]              # what the interpreter calls with operand values and attrs
    emit: str                           # infix | prefix | call | method | attr | special
    symbol: str = ""                    # '+', 'np.exp', 'reshape', 'T'
    prec: int = PREC_ATOM               # precedence of the emitted expression
    arity: Optional[int] = None         # None: variadic
    pure: bool = True                   # no effects but its `writes`: with none, may be removed, merged, moved
    elementwise: bool = False
    infer: Callable = field(default=lambda nodes, attrs: OBJECT, repr=False)
    doc: str = ""
    foldable: bool = True               # constant folding may run it (pure and deterministic)
    # What memory the result may share (graph/alias.py reads it): "fresh", a new buffer; "view", a
    # view of operand 0 or operand 0 itself (`reshape`, `x[1:]`, `np.asarray`); "views_any", a view
    # of any operand or a new buffer (`np.einsum("ii->i", a)` is a writeable view of `a`); "", not
    # known (treated as possibly any memory its operands, or the caller, can reach).
    result: str = ""
    # "reduce": reduces over `axis` (a static attribute, also the second positional argument);
    # "batched": such a reduction the vectorizer applies to the whole batch at once, `axis` shifted
    # by one; "scan": keeps the reduced axis (`cumsum`); the front end takes `axis` as for reductions.
    reduction: str = ""
    # "alloc": allocates an array of a given shape, filled or not (`np.zeros`, `np.empty_like`), which
    # code then writes into; "build": builds an array from its arguments (`np.arange`, `np.asarray`).
    # Neither is computed at compile time (that would bake data into the code).
    creates: str = ""
    inplace_symbol: str = ""            # the augmented assignment: `+=` (the `inplace` node's `op` attr)
    inplace_fn: Optional[Callable] = field(default=None, repr=False)  # operator.iadd
    # An ordered effect on the world outside the arrays (raise, assert, Python attributes, module
    # globals, opaque Python calls): the vectorizer never runs one speculatively or per batch.
    effect: bool = False
    region: bool = False                # the node holds regions (`if`, `for_range`, `while`)
    # Where the op may raise for values its operand types allow (see `may_raise`): "index"
    # (IndexError), "division" (by zero), "domain" (outside its mathematical domain: log, sqrt,
    # pow; on arrays NumPy warns, the vectorizer still never runs them speculatively), "convert"
    # (`int(nan)`, `bool(array)`), "identity" (a reduction of nothing: `np.max` of an empty array),
    # "size" (the result must hold as many elements as operand 0: `reshape`).
    domain: str = ""
    commutative: bool = False           # f(a, b) == f(b, a), bit for bit
    ufunc: Optional[Callable] = field(default=None, repr=False)  # same op with `out=`: np.add(a, b, out=c)
    # The ndarray method computing the same when operand 0 is an array: `x.sum(axis=1)` skips the
    # Python wrapper of `np.sum` (about 2 µs a call, which small arrays feel).
    method: str = ""
    writes: Writes = OUT                # which operands it writes in place (see Writes)
    vjp: Optional[Callable] = field(default=None, repr=False)   # rule(b, node, g) -> operand cotangents
    no_grad: str = ""                   # why it is not differentiable (None of the above: the transform's)

    @property
    def fresh(self) -> bool:
        """An array result is always a new buffer."""
        return self.result == "fresh"

    def __call__(self, *values, **attrs) -> Any:
        """Run the op on concrete values, as the interpreter and constant folding do."""
        if self.emit == "method":
            return getattr(values[0], self.symbol)(*values[1:], **attrs)
        if self.emit == "attr":
            return getattr(values[0], self.symbol)
        return self.fn(*values, **attrs)


OPS: dict[str, OpDef] = {}


def _add(op: OpDef) -> OpDef:
    assert op.name not in OPS, op.name
    OPS[op.name] = op
    return op


# --- Python operators on arrays and scalars -------------------------------------------------
_INFIX_DOMAIN = {"truediv": "division", "floordiv": "division", "mod": "division", "pow": "domain"}
# On arrays each operator is the NumPy ufunc named last (`a + b` is `np.add(a, b)`), which is what
# memory planning calls with `out=`.
# The in-place function (`operator.iadd`) is the augmented assignment `a += b` (symbol `+=`).
for _name, _sym, _prec, _fn, _comm, _uf, _ifn in [
    ("add", "+", PREC_ADD, operator.add, True, np.add, operator.iadd),
    ("sub", "-", PREC_ADD, operator.sub, False, np.subtract, operator.isub),
    ("mul", "*", PREC_MUL, operator.mul, True, np.multiply, operator.imul),
    ("truediv", "/", PREC_MUL, operator.truediv, False, np.true_divide, operator.itruediv),
    ("floordiv", "//", PREC_MUL, operator.floordiv, False, np.floor_divide, operator.ifloordiv),
    ("mod", "%", PREC_MUL, operator.mod, False, np.remainder, operator.imod),
    ("pow", "**", PREC_POWER, operator.pow, False, None, operator.ipow),  # `a ** 2`: NumPy's np.square fast path
    ("lshift", "<<", PREC_SHIFT, operator.lshift, False, np.left_shift, operator.ilshift),
    ("rshift", ">>", PREC_SHIFT, operator.rshift, False, np.right_shift, operator.irshift),
    ("bitand", "&", PREC_BITAND, operator.and_, True, np.bitwise_and, operator.iand),
    ("bitxor", "^", PREC_BITXOR, operator.xor, True, np.bitwise_xor, operator.ixor),
    ("bitor", "|", PREC_BITOR, operator.or_, True, np.bitwise_or, operator.ior),
    ("eq", "==", PREC_CMP, operator.eq, True, np.equal, None),
    ("ne", "!=", PREC_CMP, operator.ne, True, np.not_equal, None),
    ("lt", "<", PREC_CMP, operator.lt, False, np.less, None), ("le", "<=", PREC_CMP, operator.le, False, np.less_equal, None),
    ("gt", ">", PREC_CMP, operator.gt, False, np.greater, None),
    ("ge", ">=", PREC_CMP, operator.ge, False, np.greater_equal, None),
]:
    _add(OpDef(_name, _fn, "infix", _sym, _prec, 2, elementwise=True, infer=R.elementwise(_fn),
               doc=f"`a {_sym} b`", result="fresh", commutative=_comm, ufunc=_uf, domain=_INFIX_DOMAIN.get(_name, ""),
               inplace_symbol=_sym + "=" if _ifn else "", inplace_fn=_ifn))

_add(OpDef("matmul", operator.matmul, "infix", "@", PREC_MUL, 2, infer=R.matmul, doc="`a @ b`", result="fresh",
           inplace_symbol="@=", inplace_fn=operator.imatmul))

for _name, _sym, _fn, _uf in [("neg", "-", operator.neg, np.negative), ("pos", "+", operator.pos, np.positive),
                              ("invert", "~", operator.invert, np.invert)]:
    _add(OpDef(_name, _fn, "prefix", _sym, PREC_UNARY, 1, elementwise=True, infer=R.elementwise(_fn),
               doc=f"`{_sym}a`", result="fresh", ufunc=_uf))
_add(OpDef("not", operator.not_, "prefix", "not ", PREC_NOT, 1, infer=R.fixed(BOOL), doc="`not a`"))

# --- NumPy ufuncs (elementwise) -------------------------------------------------------------
UFUNCS = [
    "abs", "absolute", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "cbrt", "square",
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
    "arctanh", "sign", "floor", "ceil", "trunc", "rint", "negative", "reciprocal", "isnan", "isinf",
    "isfinite", "logical_not", "fabs", "deg2rad", "rad2deg",
    "maximum", "minimum", "fmax", "fmin", "arctan2", "hypot", "power", "float_power", "mod", "fmod",
    "logical_and", "logical_or", "logical_xor", "add", "subtract", "multiply", "divide", "true_divide",
    "floor_divide", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "copysign",
    "heaviside",
]
_UFUNC_DOMAIN = {**{u: "domain" for u in ("log", "log2", "log10", "log1p", "sqrt", "arcsin", "arccos", "arccosh",
                                           "arctanh", "power", "float_power", "reciprocal")},
                 **{u: "division" for u in ("mod", "fmod", "divide", "true_divide", "floor_divide")}}
for _u in UFUNCS:
    _name = _u if _u not in OPS else f"np_{_u}"
    _fn = getattr(np, _u)
    _add(OpDef(_name, _fn, "call", f"np.{_u}", arity=None, elementwise=True, infer=R.elementwise(_fn),
               doc=f"`np.{_u}(...)`", result="fresh", ufunc=_fn, domain=_UFUNC_DOMAIN.get(_u, ""),
               writes=Writes(nin=_fn.nin),
               commutative=_u in ("add", "multiply", "maximum", "minimum", "fmax", "fmin", "hypot",
                                  "logical_and", "logical_or", "logical_xor", "equal", "not_equal")))

_add(OpDef("where", np.where, "call", "np.where", arity=3, elementwise=True, infer=R.elementwise(np.where),
           doc="`np.where(c, a, b)`", result="fresh"))
_add(OpDef("select", select, "call", "_select", arity=3, elementwise=True, infer=R.elementwise(np.where),
           doc="`_select(c, a, b)`: `np.where(c, a, b)` bit for bit, blended without branches on big arrays "
           "whose condition is unpredictable (graph/blend.py); the tile pass makes it", result="fresh"))
_add(OpDef("clip", np.clip, "call", "np.clip", arity=3, elementwise=True, infer=R.elementwise(np.clip),
           doc="`np.clip(a, lo, hi)`", result="fresh", ufunc=np.clip))

# --- Reductions: axis/keepdims are static attributes ----------------------------------------
for _r, _reduction in [
    ("sum", "batched"), ("mean", "batched"), ("max", "batched"), ("min", "batched"), ("prod", "batched"),
    ("any", "batched"), ("all", "batched"), ("std", "reduce"), ("var", "reduce"), ("argmax", "reduce"),
    ("argmin", "reduce"), ("nansum", "batched"), ("nanmean", "reduce"), ("nanmax", "batched"),
    ("nanmin", "batched"), ("median", "reduce"), ("amax", "batched"), ("amin", "batched"),
]:
    _fn = getattr(np, _r)
    _add(OpDef(_r if _r not in OPS else f"np_{_r}", _fn, "call", f"np.{_r}", infer=R.reduction(_fn),
               doc=f"`np.{_r}(a, axis=..., keepdims=...)`", result="fresh", reduction=_reduction,
               domain="identity" if _r in ("max", "min", "argmax", "argmin", "nanmax", "nanmin", "amax", "amin")
               else "",
               writes=Writes((0,), when="overwrite_input") if _r == "median" else OUT,
               method=_r if hasattr(np.ndarray, _r) and _r not in ("amax", "amin") else ""))

# --- Linear algebra --------------------------------------------------------------------------
_add(OpDef("dot", np.dot, "call", "np.dot", arity=2, infer=R.by_evaluation(np.dot), doc="`np.dot(a, b)`",
           result="fresh"))
# einsum is not fresh: np.einsum("ii->i", a) is a writeable view of a.
_add(OpDef("einsum", np.einsum, "call", "np.einsum", infer=R.by_evaluation(np.einsum), doc="`np.einsum(spec, ...)`",
           result="views_any"))
_add(OpDef("outer", np.outer, "call", "np.outer", arity=2, infer=R.by_evaluation(np.outer), doc="`np.outer(a, b)`",
           result="fresh"))
_add(OpDef("tensordot", np.tensordot, "call", "np.tensordot", infer=R.by_evaluation(np.tensordot),
           doc="`np.tensordot(a, b, axes)`", result="fresh"))

# --- Shapes and layout -----------------------------------------------------------------------
_add(OpDef("reshape", None, "method", "reshape", arity=2, infer=R.reshape, doc="`a.reshape(shape)`", domain="size",
           result="view"))
_add(OpDef("T", None, "attr", "T", arity=1, infer=R.transpose, doc="`a.T`", result="view"))
_add(OpDef("transpose", np.transpose, "call", "np.transpose", infer=R.transpose, doc="`np.transpose(a, axes)`",
           result="view"))
_add(OpDef("astype", None, "method", "astype", arity=1, infer=R.astype, doc="`a.astype(dtype)`", result="fresh"))
_add(OpDef("copy", None, "method", "copy", arity=1, infer=R.same_as_first, doc="`a.copy()`", result="fresh"))
# Views of operand 0 (or the operand itself) unless listed in _FRESH_LAYOUT.
_FRESH_LAYOUT = {"concatenate", "stack", "hstack", "vstack", "roll", "tile", "repeat", "cumsum", "cumprod", "diff",
                 "sort", "argsort", "pad", "triu", "tril", "take"}
for _s in ["expand_dims", "squeeze", "ravel", "concatenate", "stack", "hstack", "vstack", "broadcast_to",
           "swapaxes", "moveaxis", "flip", "roll", "tile", "repeat", "cumsum", "cumprod", "diff", "sort",
           "argsort", "pad", "diag", "triu", "tril", "take", "atleast_1d", "atleast_2d", "ascontiguousarray"]:
    _fn = getattr(np, _s)
    _add(OpDef(_s, _fn, "call", f"np.{_s}", infer=R.padded if _s == "pad" else R.by_evaluation(_fn),
               doc=f"`np.{_s}(...)`",
               result="fresh" if _s in _FRESH_LAYOUT else "view",
               reduction="scan" if _s in ("cumsum", "cumprod") else ""))

_add(OpDef("count_nonzero", np.count_nonzero, "call", "np.count_nonzero", arity=1,
           infer=R.fixed(ArrayType("int64", ())), doc="`np.count_nonzero(a)`: the number of true (non-zero) "
           "elements"))
_add(OpDef("correlate", np.correlate, "call", "np.correlate", arity=2, infer=R.by_evaluation(np.correlate),
           doc="`np.correlate(a, v, mode=...)`: sliding dot products of `v` along `a`", result="fresh"))
_add(OpDef("searchsorted", np.searchsorted, "call", "np.searchsorted", infer=R.by_evaluation(np.searchsorted),
           doc="`np.searchsorted(a, v, side=...)`: where each of `v` goes in the sorted `a` to keep it sorted",
           result="fresh"))
# np.histogram(a, bins=int) in four steps (graph/histogram.py) that CSE shares between histograms of the same data
_add(OpDef("hist_range", H.histogram_range, "call", "_hist.histogram_range", arity=3, infer=H.range_type, doc="`np.histogram`'s span: (first edge, last edge) of the data (or `range`), NumPy's errors for `bins` < 1 and NaN", result="fresh"))
_add(OpDef("hist_edges", H.histogram_edges, "call", "_hist.histogram_edges", arity=3, infer=H.edges_type, doc="`np.histogram(a, bins)[1]`: the `bins + 1` edges over the span (operands: a, span, bins)", result="fresh"))
_add(OpDef("hist_index", H.histogram_index, "call", "_hist.histogram_index", arity=3, infer=H.index_type, doc="the bin of each element of `a.ravel()` (operands: a, span, edges; attr `bounded`: one past the last bin outside `range`)", result="fresh"))
_add(OpDef("hist_counts", H.histogram_counts, "call", "_hist.histogram_counts", infer=H.counts_type, doc="`np.histogram(a, bins, weights=w)[0]` from the bin of each element: `np.bincount` in NumPy's blocks and dtype (operands: index, edges[, a, w])", result="fresh"))
_swv = np.lib.stride_tricks.sliding_window_view
_add(OpDef("sliding_window_view", _swv, "call", "np.lib.stride_tricks.sliding_window_view",
           infer=R.by_evaluation(_swv, limit=None), doc="`np.lib.stride_tricks.sliding_window_view(a, window_shape, axis=...)`: "
           "every window as a read-only view", result="view"))

# --- Creation --------------------------------------------------------------------------------
# `empty` and `empty_like` are not foldable: their contents are whatever memory held.
for _c in ["zeros", "ones", "empty"]:
    _add(OpDef(_c, getattr(np, _c), "call", f"np.{_c}", infer=R.creation, doc=f"`np.{_c}(shape, dtype=...)`",
               result="fresh", creates="alloc", foldable=_c != "empty"))
for _c in ["zeros_like", "ones_like", "empty_like"]:
    _add(OpDef(_c, getattr(np, _c), "call", f"np.{_c}", arity=1, infer=R.like, doc=f"`np.{_c}(a)`",
               result="fresh", creates="alloc", foldable=_c != "empty_like"))
for _c in ["full", "full_like", "arange", "linspace", "eye", "asarray", "array"]:
    _fn = getattr(np, _c)
    _add(OpDef(_c, _fn, "call", f"np.{_c}", infer=R.by_evaluation(_fn), doc=f"`np.{_c}(...)`",
               creates="alloc" if _c in ("full", "full_like") else "build",
               # asarray returns its operand; array(a, copy=False) too
               result="view" if _c in ("asarray", "array") else "fresh"))

# --- graphjit.Tensor at a compiled function's edges (graph/tensor_boundary.py, tensor.py) ----------
_add(OpDef("tensor", tensor_data, "call", "_tensor.tensor_data", infer=R.by_evaluation(tensor_type_probe),
           doc="`graphjit.Tensor(data, dtype)`: a copy of `data` (Python floats as float32), or `shape` filled by "
               "`init`; a Tensor in eager mode",
           result="fresh", creates="build"))
_add(OpDef("as_ndarray", np.asarray, "call", "np.asarray", arity=1, infer=R.same_as_first, foldable=False,
           doc="`np.asarray(x)`: a Tensor argument viewed as a plain array on entry", result="view"))
_add(OpDef("as_tensor", as_tensor, "call", "_tensor.as_tensor", arity=1, infer=R.same_as_first, foldable=False,
           doc="`as_tensor(x, mask)`: the parts of a result eager mode gives as Tensors, viewed as Tensors on exit",
           result="view"))

# --- Writes into an existing array: operand 0 is written, the call yields None -------------------
for _w, _doc in [("copyto", "`np.copyto(dst, src, casting=..., where=...)`: copies `src` into `dst`"),
                 ("put", "`np.put(a, indices, values)`: `a.flat[indices] = values`"),
                 ("place", "`np.place(a, mask, values)`: the masked elements take `values` in turn"),
                 ("putmask", "`np.putmask(a, mask, values)`: the masked elements take `values` at their place")]:
    _add(OpDef(_w, getattr(np, _w), "call", f"np.{_w}", infer=R.fixed(R.NONE), doc=_doc, foldable=False,
               writes=Writes((0,))))

# --- Python builtins on run-time values ------------------------------------------------------
for _name, _fn, _t in [("float", float, FLOAT), ("int", int, INT), ("bool", bool, BOOL), ("len", len, INT)]:
    _add(OpDef(_name, _fn, "call", _name, arity=1, infer=R.scalar_of(_t), doc=f"`{_name}(a)`", domain="convert"))
for _name, _fn in [("py_min", min), ("py_max", max), ("py_abs", abs), ("py_round", round)]:
    _add(OpDef(_name, _fn, "call", _name[3:], doc=f"`{_name[3:]}(...)`",
               infer=R.python_extreme(_fn) if _name in ("py_min", "py_max") else R.elementwise(_fn),
               domain="convert" if _name == "py_round" else ""))
_add(OpDef("item", None, "method", "item", arity=1, infer=R.element, doc="`a.item()`", domain="convert"))
_add(OpDef("tolist", None, "method", "tolist", arity=1, infer=lambda n, a: OBJECT,
           doc="`a.tolist()`: the elements as Python scalars in (nested) lists"))

# --- Structure: emitted by the backend itself ------------------------------------------------
def _inplace_type(nodes, attrs) -> Type:
    """`a op= b` keeps an array's dtype and shape; on numbers it is the plain operator's type. A `f32[]`
    may be a 0-d array (updated in place) or a NumPy scalar (rebound to `a op b`): either type."""
    t = nodes[0].type
    if isinstance(t, ArrayType) and t.shape != ():
        return t
    plain = OPS[attrs["op"]].infer(nodes, {})
    return join(t, plain) if isinstance(t, ArrayType) else plain


_SPECIAL = [
    ("const", 0, True, R.fixed(OBJECT), "a compile-time value, printed inline where it is used"),
    ("arg", 0, True, R.fixed(OBJECT), "a function argument (graph header)"),
    ("param", 0, True, R.fixed(OBJECT), "an array read through an access path at each call (a weight)"),
    ("tuple", None, True, R.tuple_rule, "`(a, b, ...)`"),
    ("list", None, True, R.fixed(OBJECT), "`[a, b, ...]` (a new list at each call, e.g. a fancy index)"),
    ("tuple_get", 1, True, R.tuple_get, "`t[index]` on a tuple"),
    ("getitem", None, True, R.getitem, "`a[index]`; `$k` in the index is operand k (may raise IndexError: "
     "unused, it stays unless its indices are compile-time and in range)"),
    ("setitem", None, True, R.fixed(R.NONE), "`a[index] = v` in place, an ordered effect yielding none (operands: a, v, index parts)"),
    ("shape", 1, True, R.fixed(OBJECT), "`a.shape`"),
    ("dim", 1, True, R.fixed(INT), "`a.shape[axis]`"),
    ("ndim", 1, True, R.fixed(INT), "`a.ndim`"),
    ("size", 1, True, R.fixed(INT), "`a.size`"),
    ("add_at", None, True, R.fixed(R.NONE), "`np.add.at(a, index, v)`: adds `v` at `a[index]`, repeated indices adding "
     "up (operands: a, v, index parts; the gradient of a gather)"),
    ("stop_gradient", 1, True, R.same_as_first, "`ops.stop_gradient(a)`: `a` itself, through which no gradient "
     "flows; emitted as `a`"),
    ("inplace", 2, True, _inplace_type, "`a op= b` (attr `op`): in place on arrays, as Python does"),
    ("raise", None, False, R.fixed(R.NONE), "`raise E(args...)`; operand 0 is the class (`'builtins.ValueError'` "
     "or a compile-time class)"),
    ("assert", None, False, R.fixed(R.NONE), "`assert cond, msg`"),
    ("setattr", 2, False, R.fixed(R.NONE), "`obj.name = value` (attr `name`): a Python-object effect"),
    ("refresh", 1, True, R.same_as_first, "`a` itself after a write that may change its shape, dtype or strides "
     "(`a.shape = s`, `a.dtype = t`, `a.resize(s)`): later code reads this value, whose type is the new one"),
    ("getattr", 1, False, R.fixed(OBJECT), "`obj.name` read at call time (attr `name`): the attribute is written "
     "by compiled code"),
    ("load_global", 0, False, R.fixed(OBJECT), "`_g[name]`: a module global read at call time (attr `name`)"),
    ("store_global", 1, False, R.fixed(R.NONE), "`_g[name] = value`: a module global written at call time"),
    ("pycall", None, False, R.fixed(OBJECT), "`f(args...)`: an ordered opaque call of a Python callable (operand 0)"),
    ("dict", None, True, R.fixed(OBJECT), "`{k: v, ...}` with keys in attr `keys`"),
    ("format", None, True, R.fixed(R.ScalarType("str")), "`template.format(values...)` (an f-string of run-time "
     "values)"),
    ("fallback", None, False, R.fixed(OBJECT), "statements run by the Python interpreter (LAX): attrs hold the "
     "code, the names read (operands) and written (results)"),
    ("isinstance", 1, True, R.fixed(BOOL), "`isinstance(a, classes)` decided at run time; attr `classes` holds "
     "qualified names (`'numpy.floating'`, `'builtins.float'`)"),
    ("call", None, False, R.fixed(OBJECT), "an opaque call of a NumPy/math function the table does not know"),
    ("note", 0, False, R.fixed(R.NONE), "a comment in the generated code (attr `text`) saying what a pass did "
     "there, e.g. which loop was vectorized"),
    ("if", None, False, R.fixed(OBJECT), "run-time branch: regions `then`, `else`; yields a tuple"),
    ("for_range", None, False, R.fixed(OBJECT), "`for i in range(start, stop, step)` with carried values"),
    ("while", None, False, R.fixed(OBJECT), "`while cond:` with carried values; regions `cond`, `body`"),
]
# Which operands the specials write (the others write none).
_SPECIAL_WRITES = {
    "setitem": Writes((0,)), "add_at": Writes((0,)), "inplace": Writes((0,)), "setattr": Writes((0,)),
    "pycall": Writes(every=True), "call": Writes(every=True), "fallback": Writes(every=True),
}
# Views of operand 0: an index, an in-place update, `refresh`; `getattr` may be a bound method
# (`a.fill`) holding its array, which calling it writes.
_SPECIAL_VIEWS = ("getitem", "inplace", "refresh", "getattr")
_SPECIAL_EFFECTS = ("raise", "assert", "setattr", "getattr", "load_global", "store_global", "pycall", "fallback",
                    "call")
for _name, _arity, _pure, _infer, _doc in _SPECIAL:
    _writes = _SPECIAL_WRITES.get(_name, OUT)
    _add(OpDef(_name, None, "special", _name, arity=_arity, pure=_pure, infer=_infer, doc=_doc, writes=_writes,
               foldable=_pure and _writes is OUT and _name not in ("const", "arg", "param", "refresh"),
               domain="index" if _name == "getitem" else "", result="view" if _name in _SPECIAL_VIEWS else "",
               effect=_name in _SPECIAL_EFFECTS, region=_name in ("if", "for_range", "while")))

REGION_OPS = frozenset(name for name, d in OPS.items() if d.region)

# Functions the front end maps onto table ops by identity (`np.exp` -> exp, builtin `abs` -> py_abs).
OP_BY_CALLABLE: dict[int, str] = {}
for _op in OPS.values():
    if _op.emit == "call" and _op.symbol.startswith("np.") and _op.fn is not None:
        OP_BY_CALLABLE.setdefault(id(_op.fn), _op.name)
for _name, _fn in [("float", float), ("int", int), ("bool", bool), ("len", len), ("py_min", min),
                   ("py_max", max), ("py_abs", abs), ("py_round", round)]:
    OP_BY_CALLABLE[id(_fn)] = _name
OP_BY_CALLABLE[id(np.matmul)] = "matmul"


OP_BY_CALLABLE[id(stop_gradient)] = "stop_gradient"

# Array methods the front end maps onto ops: `x.sum(axis=1)` -> sum(x) {axis=1}.
METHOD_OPS = {
    "sum": "sum", "mean": "mean", "max": "max", "min": "min", "prod": "prod", "any": "any", "all": "all",
    "std": "std", "var": "var", "argmax": "argmax", "argmin": "argmin", "cumsum": "cumsum",
    "cumprod": "cumprod", "reshape": "reshape", "transpose": "transpose", "astype": "astype",
    "copy": "copy", "ravel": "ravel", "flatten": "copy_flat", "squeeze": "squeeze", "clip": "clip",
    "dot": "dot", "item": "item", "swapaxes": "swapaxes", "repeat": "repeat", "take": "take",
}
# Array attributes whose assignment, and methods whose call, change the array's shape or dtype in
# place: the front end rebinds the names of the array to a `refresh` of it, typed after the write.
RETYPING = frozenset({"shape", "dtype", "strides", "resize"})

_add(OpDef("copy_flat", None, "method", "flatten", arity=1,
           infer=lambda n, a: R.ArrayType(getattr(n[0].type, "dtype", None),
                                          (math.prod(n[0].type.shape),) if getattr(n[0].type, "is_static", False)
                                          else (None,)),
           doc="`a.flatten()`", result="fresh"))


# --- Autodiff: what the backward pass needs beyond the ops above -----------------------------
_add(OpDef("sum_to", sum_to, "call", "_sum_to", arity=2, infer=lambda nodes, attrs: nodes[1].type,
           doc="`_sum_to(g, like)`: `g` summed over the axes broadcasting stretched, to `like`'s shape "
           "(graph/unbroadcast.py; the backward pass uses it where shapes are known only at run time; `g` itself "
           "when nothing is summed)", result="view"))
_add(OpDef("add_reduceat", np.add.reduceat, "call", "np.add.reduceat", arity=2, infer=R.by_evaluation(np.add.reduceat),
           doc="`np.add.reduceat(a, starts, axis=...)`: sums of the segments of `a` from each start to the next "
           "(the backward pass of `np.repeat` with a count per element)", result="fresh"))
# A gradient asked for inside compiled code (`grad_fn(x)` in a jitted function) is built after the
# passes that run before differentiation (graph/autodiff/pending.py), so at O2 it sees vectorized
# loops; until then it is this placeholder, and the values it is taken with respect to (or cut off
# from: the call's other arguments) pass through boundaries no pass folds, merges or moves.
_add(OpDef("gradient", None, "special", "gradient", pure=False, effect=True, foldable=False,
           infer=R.fixed(OBJECT), doc="a gradient asked for inside compiled code (attrs: what was asked, graph/autodiff/pending.py; "
           "operands: the output, the inputs, the weights' nodes, the sensitivity, the boundaries), built before the passes "
           "that follow vectorization; never reaches a backend"))
_add(OpDef("gradient_boundary", None, "special", "gradient_boundary", arity=1, pure=False, effect=True,
           foldable=False, infer=R.same_as_first, result="view",
           doc="an argument of a gradient function's call, as the function sees it: an input the gradient "
           "is taken with respect to, or a value no gradient flows through; removed when the gradient is built"))
_add(OpDef("replayed", None, "special", "replayed", arity=2, infer=R.same_as_first, foldable=False,
           doc="`replayed(a, v)`: while a loop's backward pass is built, a read `a` of an array the loop writes, "
           "replayed with the value `v` the forward loop recorded (the gradient flows to `a`); never reaches a "
           "backend"))
_add(OpDef("scratch", None, "special", "scratch", arity=0, pure=False, foldable=False, result="fresh",
           infer=R.fixed(OBJECT),
           doc="`_w[slot]`: a buffer of the function's workspace, kept between calls, that the one node using it "
           "computes into with `out=` (graph/passes/scratch.py); typed with the buffer's shape and dtype"))
_add(OpDef("append", None, "method", "append", arity=2, infer=R.fixed(R.NONE), foldable=False,
           writes=Writes((0,)), doc="`tape.append(v)`: the forward pass of a differentiated loop records its "
           "state for the backward pass"))


# --- The derivative column (graph/derivatives.py: `RULES`, `WHY_NOT`) --------------------------
def _with_derivatives() -> None:
    from .derivatives import RULES, WHY_NOT
    for name, opdef in OPS.items():
        OPS[name] = replace(opdef, vjp=RULES.get(name), no_grad=WHY_NOT.get(name, ""))


_with_derivatives()


def op(name: str) -> OpDef:
    return OPS[name]


def infer_type(name: str, operands, attrs) -> Type:
    """Type of a new node; a rule that fails leaves the type unknown rather than failing compile."""
    try:
        return infer_by_members(OPS[name].infer, operands, attrs)
    except Exception:
        return R.ANY_ARRAY if name not in ("call",) else OBJECT
