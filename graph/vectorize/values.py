"""The values a loop body translates to (`VI`, `ValueKind`), what a translation produces (`Result`),
and the helpers the vectorizer's modules share."""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from ..analysis.affine import Affine
from ..analysis.dependence import K
from ..attrs import keyword_attrs
from ..ir import Node
from ..literals import Index, OperandRef
from ..ops import OPS
from ..types import ArrayType, ScalarType
from .build import Scratch


# Attribute of the `if` that chooses between a loop and its vectorized form (its value: the note's
# text). An enclosing loop's vectorizer translates the vectorized branch and tests the guard itself.
GUARD = "guard"


class Bail(Exception):
    """The loop stays a loop; the message says why."""


class Unsafe(Bail):
    """An op in a branch could fail for elements the loop did not run the branch on."""


@dataclass(frozen=True)
class MathFn:
    """A `math` function the vectorizer maps onto a float64 ufunc, and where the `math` version raises.

    `math.log(-1.0)` raises ValueError and `math.exp(1000.0)` OverflowError where `np.log` and
    `np.exp` return NaN/inf with a warning. `raises_when = (op, bound, of_abs)` describes a set of
    arguments that contains every one the `math` function raises for (`x <= 0` for log,
    `|x| > 1` for asin); the vectorized loop tests its arguments against it first and runs the
    original loop instead when any is in it, so the loop raises exactly as it would have. The set
    may be larger than the failing one (`x > 709` for exp): the loop then runs and computes the
    same values, only slower. NaN is in no set: `math` functions return NaN for NaN.
    """

    ufunc: str
    raises_when: Optional[tuple] = None     # (comparison op, bound, compare |x|) or ("isinf",)
    # Raises only on overflow (exp): in a branch it may still be computed for every element
    # (`np.where`); the test then covers elements the loop did not compute it for, which can only
    # send more calls to the loop. Domain errors (log) stay masked: `if x > 0: log(x)` is the idiom.
    overflow_only: bool = False
    arity: int = 1                          # math.log(x, base) is not np.log(x, out)


# math.* functions that are ufuncs on float64 (math returns a Python float). `math.pow` is not
# here: it raises for negative bases, zero to negative powers and overflow alike.
MATH_FUNCS = {
    "exp": MathFn("exp", ("gt", 709.0, False), True), "expm1": MathFn("expm1", ("gt", 709.0, False), True),
    "log": MathFn("log", ("le", 0.0, False)), "log2": MathFn("log2", ("le", 0.0, False)),
    "log10": MathFn("log10", ("le", 0.0, False)), "log1p": MathFn("log1p", ("le", -1.0, False)),
    "sqrt": MathFn("sqrt", ("lt", 0.0, False)),
    "sin": MathFn("sin", ("isinf",)), "cos": MathFn("cos", ("isinf",)), "tan": MathFn("tan", ("isinf",)),
    "asin": MathFn("arcsin", ("gt", 1.0, True)), "acos": MathFn("arccos", ("gt", 1.0, True)),
    "atan": MathFn("arctan"),
    "sinh": MathFn("sinh", ("gt", 709.0, True), True), "cosh": MathFn("cosh", ("gt", 709.0, True), True),
    "tanh": MathFn("tanh"), "asinh": MathFn("arcsinh"), "acosh": MathFn("arccosh", ("lt", 1.0, False)),
    "atanh": MathFn("arctanh", ("ge", 1.0, True)), "fabs": MathFn("fabs"), "atan2": MathFn("arctan2", arity=2),
    "hypot": MathFn("hypot", arity=2), "copysign": MathFn("copysign", arity=2),
    # math.degrees returns inf silently where np.rad2deg warns of overflow: run the loop there
    "degrees": MathFn("rad2deg", ("gt", 3e306, True), True), "radians": MathFn("deg2rad"),
}
IDENTITY = {"add": 0, "sub": 0, "mul": 1, "or": False, "and": True}
SWV = "sliding_window_view"
SAME_SHAPE_OPS = {"empty_like", "zeros_like", "ones_like", "full_like", "copy"}


class ValueKind(enum.Enum):
    """What a body value (`VI`) is, across the iterations of the loop being vectorized."""

    UNIFORM = "U"
    """The same in every iteration: `node` is a scratch node computing it once."""
    VARYING = "V"
    """One value per iteration: `node` is a scratch node stacking them along a new leading axis."""
    AFFINE = "A"
    """An integer `c*k + ...` in the iteration counter k (`aff`); materialized only when used as a
    value: a slice bound, an `np.arange` or a scalar."""
    CARRIED = "C"
    """The value of loop-carried slot `j` as an iteration receives it."""
    UPDATE = "UPD"
    """A recognized update of carried slot `j`: `upd` names it (`add`, `pymax`, `set_true`, ...),
    `term` is the per-iteration operand, `mask` the condition it is done under, if any."""
    COMPARISON = "CMP"
    """A comparison of a per-iteration `term` against carried slot `j` (`t > m`, the test of a
    running maximum); `upd` is the relation."""
    RESULTS = "TUPLE"
    """The results of an `if` (or of an inner loop vectorized under a guard): `const` holds one
    value per result, read by `tuple_get`."""


@dataclass
class VI:
    """One body value as the vectorized code has it (see `ValueKind` for which fields each kind uses)."""

    kind: ValueKind
    node: Optional[Node] = None                 # scratch node (UNIFORM, VARYING)
    aff: Optional[Affine] = None                # AFFINE
    probes: tuple = ()                          # eager per-iteration stand-ins
    ident: Any = None                           # the array this value is (a view of)
    is_view: bool = False                       # a basic-index view of `ident`
    parts: Any = None                           # (base VI, parts) of a point-indexed getitem
    ival: Any = None                            # integer interval of the value
    text: str = ""                              # how the source spells it (for messages)
    j: Any = None                               # carried slot (CARRIED, UPDATE, COMPARISON)
    upd: str = ""                               # update kind (UPDATE) / relation (COMPARISON)
    term: Optional["VI"] = None
    mask: Optional["VI"] = None
    mask_neg: bool = False
    among: Any = None                           # UPDATE in a masked branch: the iterations it has terms of
    inplace: bool = False
    const: Any = None                           # the value of a literal
    has_const: bool = False
    raw: Any = None                             # (slice view before moving the loop axis, plan, base)
    written: Any = None                         # (identity, items) this view was updated in place at
    read_at: Any = None                         # (array identity, position) of the read it views

    @property
    def probe(self) -> Any:
        if not self.probes:
            raise Bail(f"the type of `{self.text or '?'}` is not known")
        return self.probes[0]

    @property
    def varying(self) -> bool:
        return self.kind == ValueKind.VARYING or (self.kind == ValueKind.AFFINE and self.aff.coef(K) != 0)

    @property
    def carried(self) -> bool:
        return self.kind in (ValueKind.CARRIED, ValueKind.UPDATE, ValueKind.COMPARISON)


@dataclass
class Result:
    """What the pass splices in: the scratch program, the values of the carried slots, guards."""

    scratch: Scratch
    outputs: list                   # per carried slot: a scratch node or an outer node
    guards: list                    # (outer a, outer b) pairs that must not share memory
    summary: str
    empty: bool = False
    # (scratch bool node, what could raise): when any is true the original loop runs instead
    checks: list = field(default_factory=list)


@dataclass
class PendingWrite:
    """A write inside `if` branches; `tree` says what each element gets:
    ('val', node) | ('old',) the value before the `if` | ('sel', mask VI, then tree, else tree)."""

    key: tuple
    base: Node
    items: list
    operands: list
    dims: tuple
    ident: Any
    label: str
    line: Optional[int]
    loop_axis: int
    prank: int
    tree: tuple
    reverse: bool = False


NO_LITERAL = object()     # the initial value of a carried slot is not a literal


class DimKey:
    """The affine symbol for `array.shape[axis]` (one per array and axis)."""

    __slots__ = ("array", "axis", "id", "name", "node")

    def __init__(self, array: Node, axis: int):
        self.array, self.axis = array, axis
        self.node: Optional[Node] = None      # a `dim` node of the loop's graph that computes it
        self.id = -1
        self.name = f"{array.name or 'array'}.shape[{axis}]"

    def __repr__(self) -> str:
        return self.name


def as_affine(v) -> Affine:
    """An int or an `Affine` as an `Affine`."""
    return v if isinstance(v, Affine) else Affine.constant(v)


# Stand-in for an inner loop's previous result among the initial values of a chained reduction.
SELF = "<the loop's own result>"


def is_identity(literal, identity) -> bool:
    """Is `literal` (the initial value of a reduction) the identity of its op (0 for +, 1 for *)?"""
    if literal is NO_LITERAL or isinstance(literal, bool) or isinstance(identity, bool):
        return False
    return isinstance(literal, (int, float)) and literal == identity


def extreme_identity(dt: np.dtype, is_max: bool):
    """The identity of a running max (or min) in dtype `dt`: its lowest (highest) value."""
    if dt.kind == "f":
        return -math.inf if is_max else math.inf
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return int(info.min if is_max else info.max)
    if dt.kind == "b":
        return False if is_max else True
    return None


def static_dim(node: Node) -> Optional[int]:
    """The value of a `dim`/`len`/`size` node when its array's shape is known at compile time."""
    if node.op in ("dim", "len", "size") and node.operands:
        t = node.operands[0].type
        if isinstance(t, ArrayType) and t.shape is not None:
            if node.op == "dim":
                d = t.shape[node.attrs["axis"]] if -len(t.shape) <= node.attrs["axis"] < len(t.shape) else None
                return d
            if node.op == "len":
                return t.shape[0] if t.shape else None
            return math.prod(t.shape) if None not in t.shape else None
    return None


def is_int_type(t) -> bool:
    """An int scalar type, or a 0-d integer array."""
    if isinstance(t, ScalarType):
        return t.kind == "int"
    return isinstance(t, ArrayType) and t.shape == () and t.dtype is not None and np.dtype(t.dtype).kind in "iu"


def is_int_value(v) -> bool:
    """A Python or NumPy integer (bools excluded)."""
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def static_attrs(attrs: dict) -> dict:
    """The attributes of a node that are keyword arguments of its op."""
    return keyword_attrs(attrs)


def op_callable(node: Node):
    """The function that computes `node`'s op on stand-in values."""
    op = OPS[node.op]
    if op.emit == "method" or op.emit == "attr":
        return lambda *a, **k: op(*a, **k)
    return op.fn


def op_text(node: Node) -> str:
    """How a message names `node`'s op (`np.sum`, `a + b`, the called function)."""
    if node.op == "call":
        return str(node.attrs.get("fn", "call"))
    op = OPS.get(node.op)
    if op is not None and op.emit in ("call", "method") and op.symbol:
        return op.symbol
    if op is not None and op.emit == "infix":
        return f"a {op.symbol} b"
    return node.op


def render_op(op: str, vis: list) -> str:
    """Source-like text of an integer op on body values (`i + 1`), for messages."""
    sym = {"add": "+", "sub": "-", "mul": "*"}.get(op)
    if sym and len(vis) == 2:
        a, b = vis
        if b.has_const and isinstance(b.const, int) and b.const < 0 and op in ("add", "sub"):
            return f"{a.text} {'-' if op == 'add' else '+'} {-b.const}"
        return f"{a.text} {sym} {b.text}"
    if op == "neg":
        return f"-{vis[0].text}"
    return vis[0].text if vis else op


def int_interval(op: str, ivals: list) -> Optional[tuple]:
    """The range of an integer op's result from its operands' ranges (None: unknown)."""
    if any(i is None for i in ivals):
        return None
    if op in ("add", "sub", "mul") and len(ivals) == 2:
        (a, b), (c, d) = ivals
        if op == "add":
            return (a + c, b + d)
        if op == "sub":
            return (a - d, b - c)
        prods = [x * y for x in (a, b) for y in (c, d) if not (math.isinf(x) or math.isinf(y)) or (x and y)]
        return (min(prods), max(prods)) if prods else None
    if op in ("neg",):
        a, b = ivals[0]
        return (-b, -a)
    if op in ("abs", "py_abs"):
        a, b = ivals[0]
        return (0, max(abs(a), abs(b)))
    if op in ("floordiv", "mod") and len(ivals) == 2 and ivals[1][0] == ivals[1][1] and ivals[1][0] > 0:
        (a, b), (c, _) = ivals
        return (a // c, b // c) if op == "floordiv" else (0, c - 1)
    if len(ivals) == 1:
        return ivals[0]
    return None


def line_of(node: Node) -> Optional[int]:
    """The source line of `node`, if known."""
    return node.span.line if node.span else None


def shift_refs(items: list, by: int) -> list:
    """Index items with every `OperandRef(k)` moved to `OperandRef(k + by)`."""
    def shift(x):
        return OperandRef(x.index + by) if isinstance(x, OperandRef) else x
    out = []
    for it in items:
        if isinstance(it, slice):
            out.append(slice(shift(it.start), shift(it.stop), shift(it.step)))
        else:
            out.append(shift(it))
    return out


def index_literal(items: list) -> Index:
    """The `index` attribute of a getitem/setitem built from `items`."""
    return Index(items)

