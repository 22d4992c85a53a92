"""Translate one `for_range` loop into whole-array operations, or say why it must stay a loop.

The body is walked once, in program order. Every body value becomes a `VI`:

- `U` uniform: the same in every iteration (a scratch node computing it once);
- `V` varying: one value per iteration, stacked along a new leading axis (a scratch node);
- `A` affine integer `c*k + ...` in the iteration counter k (materialized lazily: a slice
  bound, an `np.arange`, or a scalar);
- `C` a loop-carried value, `UPD` a recognized update of one (`s + t`, `max(m, t)`, ...) and
  `CMP` a comparison against one (`t > m`, the test of a running maximum).

Array reads and writes become slices (or `np.arange` gathers) and are recorded as `Access`es;
`graph/analysis/dependence.py` then decides whether running each statement for all iterations
at once is the same as running the iterations one by one. Anything not understood raises
`Bail` with a one-line reason that ends up on the loop (`vectorize="no: ..."`).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace
from typing import Any, Optional

import numpy as np

from ..analysis.affine import INF, Affine, range_interval
from ..analysis.aliasing import VIEW_OPS, may_alias
from ..analysis.dependence import ANY, K, Access, Point, Span, conflict
from ..ir import Graph, Node
from ..literals import OperandRef
from ..ops import OPS
from ..types import ArrayType, ScalarType
from . import probes as P
from .build import Scratch


class Bail(Exception):
    """The loop stays a loop; the message says why."""


# math.* functions that are ufuncs on float64 (math returns a Python float).
MATH_UFUNCS = {
    "exp": "exp", "expm1": "expm1", "log": "log", "log2": "log2", "log10": "log10", "log1p": "log1p",
    "sqrt": "sqrt", "sin": "sin", "cos": "cos", "tan": "tan", "asin": "arcsin", "acos": "arccos",
    "atan": "arctan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "asinh": "arcsinh",
    "acosh": "arccosh", "atanh": "arctanh", "fabs": "fabs", "atan2": "arctan2", "hypot": "hypot",
    "copysign": "copysign", "degrees": "rad2deg", "radians": "deg2rad", "pow": "power",
}
# Ops that may fail (or take a value outside their domain) on elements the loop never computed:
# not evaluated for all iterations when the loop only ran them under a condition.
DOMAIN_OPS = {"log", "log2", "log10", "log1p", "sqrt", "arcsin", "arccos", "arccosh", "arctanh", "power",
              "float_power", "reciprocal", "pow"}
DIVISION_OPS = {"truediv", "floordiv", "mod", "divide", "true_divide", "floor_divide", "np_mod", "fmod"}
REDUCTION_OPS = {"sum", "mean", "max", "min", "prod", "any", "all", "nansum", "nanmax", "nanmin", "amax", "amin"}
EFFECT_OPS = {"raise", "assert", "setattr", "getattr", "load_global", "store_global", "pycall", "fallback",
              "call"}
IDENTITY = {"add": 0, "sub": 0, "mul": 1, "or": False, "and": True}
SWV = "sliding_window_view"
SAME_SHAPE_OPS = {"empty_like", "zeros_like", "ones_like", "full_like", "copy"}


@dataclass
class VI:
    kind: str                                   # U V A C UPD CMP
    node: Optional[Node] = None                 # scratch node (U, V)
    aff: Optional[Affine] = None                # A
    probes: tuple = ()                          # eager per-iteration stand-ins
    ident: Any = None                           # the array this value is (a view of)
    is_view: bool = False                       # a basic-index view of `ident`
    parts: Any = None                           # (base VI, parts) of a point-indexed getitem
    ival: Any = None                            # integer interval of the value
    text: str = ""                              # how the source spells it (for messages)
    j: Any = None                               # carried slot (C, UPD, CMP)
    upd: str = ""                               # update kind (UPD) / relation (CMP)
    term: Optional["VI"] = None
    mask: Optional["VI"] = None
    mask_neg: bool = False
    inplace: bool = False
    const: Any = None                           # the value of a literal
    has_const: bool = False
    raw: Any = None                             # (slice view before moving the loop axis, plan, base)
    written: Any = None                         # (identity, items) this view was updated in place at

    @property
    def probe(self) -> Any:
        if not self.probes:
            raise Bail(f"the type of `{self.text or '?'}` is not known")
        return self.probes[0]

    @property
    def varying(self) -> bool:
        return self.kind == "V" or (self.kind == "A" and self.aff.coef(K) != 0)

    @property
    def carried(self) -> bool:
        return self.kind in ("C", "UPD", "CMP")


@dataclass
class Result:
    """What the pass splices in: the scratch program, the values of the carried slots, guards."""

    scratch: Scratch
    outputs: list                   # per carried slot: a scratch node or an outer node
    guards: list                    # (outer a, outer b) pairs that must not share memory
    summary: str
    empty: bool = False


@dataclass
class _PendingWrite:
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


class LoopVectorizer:
    """Vectorize `loop`; `run()` returns a `Result` or raises `Bail`."""

    def __init__(self, loop: Node):
        self.loop = loop
        self.G: Graph = loop.graph
        self.body: Graph = loop.regions[0]
        self.n = loop.attrs.get("carried", 0)
        self.s = Scratch(loop.span)
        self.env: dict[int, VI] = {}
        self.accesses: list[Access] = []
        self.interval_cache: dict = {}
        self.affine_nodes: dict = {}
        self.view_nodes: dict[int, Any] = {}       # scratch view node id -> array identity
        self.region_depth = 0
        self.pending: list[_PendingWrite] = []
        self.accumulators: dict[int, Node] = {}     # getitem id -> setitem of `x[I] op= t` in the loop
        self.features: set = set()
        self.fresh: dict[int, Node] = {}           # scratch arrays created in the body (their own identity)
        self.dim_keys: dict[tuple, "DimKey"] = {}
        self.read_offsets: dict[int, set] = {}

    # ------------------------------------------------------------------------------------------
    # entry
    # ------------------------------------------------------------------------------------------
    def run(self) -> Result:
        self.bounds()
        if self.trip == 0:
            inits = list(self.loop.operands[3:3 + self.n])
            return Result(self.s, inits, [], "removed: the range is empty", empty=True)
        self.bind_args()
        self.find_inner_loops(self.body)
        self.find_accumulators()
        self.find_scans()
        for node in self.body.nodes:
            if node.id in self.env:
                continue  # translated early, as the term of a scan
            vi = self.visit(node)
            if vi is not None:
                self.env[node.id] = vi
        outputs = [self.finish_carried(j, self.lookup(out)) for j, out in enumerate(self.body.outputs)]
        self.check_early_reads()
        self.check_dependences()
        self.check_view_uses()
        guards = self.alias_guards()
        return Result(self.s, outputs, guards, self.summary())

    def summary(self) -> str:
        order = ["elementwise", "stencil", "window", "reduction", "contraction", "where", "scan", "gather"]
        feats = [f for f in order if f in self.features] or ["elementwise"]
        return ", ".join(feats)

    # ------------------------------------------------------------------------------------------
    # bounds and integer analysis
    # ------------------------------------------------------------------------------------------
    def bounds(self) -> None:
        start, stop, step = self.loop.operands[:3]
        step_a = self.outer_affine(step)
        if not step_a.is_const or step_a.const == 0:
            raise Bail("the loop step is not a compile-time constant")
        self.step = step_a.const
        self.start = self.outer_affine(start)
        self.stop = self.outer_affine(stop)
        if self.start.is_const and self.stop.is_const:
            self.trip = len(range(self.start.const, self.stop.const, self.step))
            self.trip_aff = Affine.constant(self.trip)
            return
        if abs(self.step) != 1:
            raise Bail("the loop bounds are run-time values and the step is not 1 or -1")
        diff = (self.stop - self.start) * self.step
        if diff.interval(self.key_interval)[0] < 0:
            raise Bail("cannot prove the run-time range is not negative")
        self.trip = None
        self.trip_aff = diff

    def outer_affine(self, g: Node) -> Affine:
        """The affine form of an integer value of an enclosing graph (over its nodes as symbols)."""
        if g.op == "const":
            v = g.value
            if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
                return Affine.constant(int(v))
            raise Bail(f"loop bound {v!r} is not an integer")
        static = _static_dim(g)
        if static is not None:
            return Affine.constant(static)
        if g.op == "dim" and g.operands and isinstance(g.operands[0].type, ArrayType):
            key = self.dim_key(g.operands[0], g.attrs["axis"])
            if key.node is None and g.graph is self.G:
                key.node = g
            return Affine.of(key)
        if g.op in ("add", "sub") and all(_is_int_type(o.type) for o in g.operands):
            a, b = (self.outer_affine(o) for o in g.operands)
            return a + b if g.op == "add" else a - b
        if g.op == "neg" and _is_int_type(g.operands[0].type):
            return -self.outer_affine(g.operands[0])
        if g.op == "mul" and all(_is_int_type(o.type) for o in g.operands):
            a, b = (self.outer_affine(o) for o in g.operands)
            if a.is_const:
                return b * a.const
            if b.is_const:
                return a * b.const
        if not _is_int_type(g.type):
            raise Bail(f"`{g.name or g.op}` is not an integer")
        return Affine.of(g)

    def key_interval(self, key) -> tuple:
        """Range of an affine symbol: the iteration counter, an enclosing loop index, a dim."""
        if key is K:
            return (0, INF if self.trip is None else max(self.trip - 1, 0))
        if isinstance(key, DimKey):
            return (0, INF)
        cached = self.interval_cache.get(id(key))
        if cached is not None:
            return cached
        self.interval_cache[id(key)] = (-INF, INF)   # guards recursion
        out = self._interval(key)
        self.interval_cache[id(key)] = out
        return out

    def _interval(self, g) -> tuple:
        if not isinstance(g, Node):
            return (-INF, INF)
        if g.graph is self.s.g:
            outer = self.s.outer(g)
            if outer is None:
                return (-INF, INF)
            g = outer
        if g.op in ("dim", "len", "size"):
            return (0, INF)
        if g.op == "arg" and g.graph is not None and g.graph.parent is not None:
            parent, region = g.graph.parent, g.graph
            k = region.args.index(g)
            if parent.op == "for_range":
                carried = parent.attrs.get("carried", 0)
                if k == 0:
                    try:
                        step = self.outer_affine(parent.operands[2])
                        lo = self.outer_affine(parent.operands[0]).interval(self.key_interval)
                        hi = self.outer_affine(parent.operands[1]).interval(self.key_interval)
                    except Bail:
                        return (-INF, INF)
                    if not step.is_const:
                        return (-INF, INF)
                    r = range_interval(lo, hi, step.const)
                    return r if r is not None else (-INF, INF)
                if k > carried:
                    return self.key_interval(parent.operands[2 + k])
                return (-INF, INF)
            if parent.op == "if":
                return self.key_interval(parent.operands[1 + k])
            return (-INF, INF)
        try:
            a = self.outer_affine(g)
        except Bail:
            return (-INF, INF)
        if a.terms == ((g, 1),) and a.const == 0:
            return (-INF, INF)
        return a.interval(self.key_interval)

    def interval(self, aff: Affine) -> tuple:
        return aff.interval(self.key_interval)

    # ------------------------------------------------------------------------------------------
    # arguments of the body
    # ------------------------------------------------------------------------------------------
    def bind_args(self) -> None:
        args = self.body.args
        index = args[0]
        aff = self.start + Affine.of(K) * self.step
        self.env[index.id] = VI("A", aff=aff, probes=(1,), ival=self.interval(aff), text=index.name or "i")
        for j in range(self.n):
            init = self.loop.operands[3 + j]
            self.env[args[1 + j].id] = VI("C", j=j, probes=self.probes_of_outer(init), text=args[1 + j].name)
        for arg, outer in zip(args[1 + self.n:], self.loop.operands[3 + self.n:]):
            self.env[arg.id] = self.outer_value(outer, arg.name)

    def probes_of_outer(self, g: Node) -> tuple:
        try:
            if g.op == "const":
                return (P.probe_of_value(g.value),)
            return (P.eager_probe(g.type),)
        except P.ProbeError:
            return ()

    def outer_value(self, g: Node, text: str = "") -> VI:
        if _is_int_type(g.type) or (g.op == "const" and _is_int_value(g.value)):
            aff = self.outer_affine(g)
            return VI("A", aff=aff, probes=self.probes_of_outer(g), ival=self.interval(aff), text=text or g.name)
        if g.op == "const":
            return VI("U", node=self.s.const(g.value), probes=self.probes_of_outer(g), text=repr(g.value),
                      const=g.value, has_const=True)
        ident = g if isinstance(g.type, ArrayType) and g.type.shape != () else None
        return VI("U", node=self.s.ext(g), probes=self.probes_of_outer(g), ident=ident, text=text or g.name)

    def lookup(self, node: Node) -> VI:
        vi = self.env.get(node.id)
        if vi is not None:
            return vi
        if node.op == "const":
            return self.const_vi(node.value)
        raise Bail(f"internal: `{node.name or node.op}` has no translation")

    def const_vi(self, value) -> VI:
        if _is_int_value(value):
            return VI("A", aff=Affine.constant(int(value)), probes=(value,), ival=(int(value), int(value)),
                      text=repr(value), const=value, has_const=True)
        try:
            probes = (P.probe_of_value(value),)
        except P.ProbeError:
            probes = ()
        return VI("U", node=self.s.const(value), probes=probes, text=repr(value), const=value, has_const=True)

    # ------------------------------------------------------------------------------------------
    # materializing values
    # ------------------------------------------------------------------------------------------
    def value(self, vi: VI) -> Node:
        if vi.kind in ("U", "V"):
            return vi.node
        if vi.kind == "A":
            return self.materialize(vi.aff)
        raise Bail(f"the loop-carried value `{vi.text}` is used other than to accumulate into it")

    def materialize(self, aff: Affine) -> Node:
        cached = self.affine_nodes.get(aff)
        if cached is not None:
            return cached
        c = aff.coef(K)
        if c:
            first = aff.without(K)
            stop = first + self.trip_aff * c
            length = self.trip_aff.const if self.trip_aff.is_const else None
            if first.is_const or not self.trip_aff.is_const:
                bounds = [self.materialize(first), self.materialize(stop)]
                node = self.s.op("arange", bounds + ([self.s.const(c)] if c != 1 else []),
                                 type=ArrayType("int64", (length,)))
            else:  # arange(c*T) + offset: a constant range stays loop-invariant in enclosing loops
                bounds = [self.s.const(0), self.s.const(self.trip_aff.const * c)]
                base = self.s.op("arange", bounds + ([self.s.const(c)] if c != 1 else []),
                                 type=ArrayType("int64", (length,)))
                node = self.s.op("add", [base, self.materialize(first)])
        elif aff.is_const:
            node = self.s.const(aff.const)
        else:
            node = None
            for key, coef in aff.terms:
                term = self.symbol_node(key)
                if coef == -1:
                    term = self.s.op("neg", [term])
                elif coef != 1:
                    term = self.s.op("mul", [term, self.s.const(coef)])
                node = term if node is None else self.s.op("add", [node, term])
            if aff.const:
                node = self.s.op("add" if aff.const > 0 else "sub", [node, self.s.const(abs(aff.const))])
        self.affine_nodes[aff] = node
        return node

    def symbol_node(self, key) -> Node:
        if isinstance(key, DimKey):
            if key.node is not None:
                return self.s.ext(key.node)
            return self.s.op("dim", [self.s.ext(key.array)], {"axis": key.axis})
        if isinstance(key, Node):
            return key if key.graph is self.s.g else self.s.ext(key)
        raise Bail("internal: unknown affine symbol")

    def index_value(self, aff: Affine):
        """A slice bound or index: an int literal, or (OperandRef placeholder, operand)."""
        if aff.is_const:
            return aff.const
        return self.materialize(aff)

    # ------------------------------------------------------------------------------------------
    # visiting body nodes
    # ------------------------------------------------------------------------------------------
    def visit(self, node: Node) -> Optional[VI]:
        op = node.op
        if op == "note":
            return None
        if op == "const":
            return self.const_vi(node.value)
        if op in ("for_range", "while"):
            line = node.span.line if node.span else "?"
            raise Bail(f"it contains a loop that stays a loop (line {line})")
        if op == "call":
            return self.visit_call(node)
        if op in EFFECT_OPS or (not node.is_pure and op not in ("setitem", "inplace", "if")):
            raise Bail(f"`{_op_text(node)}` is an effect that must run in order")
        if op == "if":
            return self.visit_if(node)
        if op == "tuple_get":
            src = node.operands[0]
            results = self.env.get(src.id)
            if isinstance(results, VI) and results.kind == "TUPLE":
                return results.const[node.attrs["index"]]
            vi = self.lookup(src)
            if vi.kind == "U":
                return self.uniform(node, [vi])
            raise Bail("a tuple value varies with the loop index")
        if node.id in self.scan_updates:
            return self.scan_update(node)
        vis = [self.scan_value(self.lookup(o)) for o in node.operands]
        if op == "setitem" and node.id in self.accumulator_writes and node.id in self.acc_info:
            return self.finish_accumulator(node, vis)
        if any(v.carried for v in vis):
            return self.carried_op(node, vis)
        if op == "getitem":
            if node.id in self.accumulator_reads:
                vi = self.accumulator_read(node, vis)
                if vi is not None:
                    return vi
            return self.visit_getitem(node, vis)
        if op == "setitem":
            return self.visit_setitem(node, vis)
        if op == "inplace":
            return self.visit_inplace(node, vis)
        if op == SWV:
            if any(v.varying for v in vis) or len(vis) != 1:
                raise Bail("a sliding window of a value that varies with the loop index")
            self.note_array_reads(node, vis)
            new = self.s.op(SWV, [self.value(vis[0])], dict(node.attrs), node.name, type=node.type)
            return VI("U", node=new, probes=(), ident=new, is_view=True, text=node.name or "window")
        if op in ("dim", "len", "size") and _static_dim(node) is not None:
            return self.const_vi(_static_dim(node))
        if op in ("add", "sub", "neg", "pos", "mul") and all(v.kind == "A" for v in vis):
            aff = self.affine_op(op, vis)
            if aff is not None:
                return VI("A", aff=aff, probes=self.eager(node, vis), ival=self.interval(aff),
                          text=_render(op, vis))
        if not any(v.varying for v in vis):
            return self.uniform(node, vis)
        if op in ("py_abs", "py_max", "py_min"):
            return self.visit_builtin(node, vis)
        if op in ("float", "bool", "int"):
            return self.visit_conversion(node, vis)
        if op in REDUCTION_OPS:
            return self.visit_reduction(node, vis)
        if op in ("dot", "matmul", "einsum"):
            return self.visit_linalg(node, vis)
        if op in ("copy", "astype", "T", "transpose"):
            return self.visit_layout(node, vis)
        if OPS[op].elementwise:
            return self.elementwise(node, vis)
        raise Bail(f"`{_op_text(node)}` is not vectorized")

    def eager(self, node: Node, vis: list, fn=None, attrs=None) -> tuple:
        """Eager per-iteration stand-ins of `node`'s result, one per combination of operand types."""
        fn = fn or _callable(node)
        attrs = _static_attrs(node.attrs if attrs is None else attrs)
        combos = list(itertools.islice(itertools.product(*[v.probes or (None,) for v in vis]), 16))
        out = []
        for combo in combos:
            if any(c is None for c in combo):
                raise Bail(f"the type of an operand of `{_op_text(node)}` is not known")
            try:
                out.append(P.evaluate(fn, *combo, **attrs))
            except P.ProbeError as e:
                raise Bail(str(e)) from None
        return tuple(P.unique_probes(out))

    def uniform(self, node: Node, vis: list) -> VI:
        """A value that does not change with the loop index: computed once, in program order."""
        if node.regions:
            raise Bail(f"`{node.op}` with regions is not vectorized")
        if self.region_depth and not self.safe_op(node, vis):
            raise Bail(f"`{_op_text(node)}` inside a branch could fail where the loop never ran it")
        operands = [self.value(v) for v in vis]
        self.note_array_reads(node, vis)
        new = self.s.op(node.op, operands, dict(node.attrs), node.name)
        try:
            probes = (P.eager_probe(node.type),)
        except P.ProbeError:
            try:
                probes = self.eager(node, vis)
            except Bail:
                probes = ()
        ident = None
        if node.op in VIEW_OPS and vis and vis[0].ident is not None:
            ident = vis[0].ident
        elif isinstance(node.type, ArrayType) and node.type.shape != ():
            ident = new
        return VI("U", node=new, probes=probes, ident=ident, text=node.name or node.op)

    def note_array_reads(self, node: Node, vis: list) -> None:
        """An op that takes a whole array reads all of it."""
        for v in vis:
            if v.kind in ("U", "V") and v.ident is not None and not v.is_view:
                self.accesses.append(Access(v.ident, False, self.s.tick(), (ANY,), v.text or "array",
                                            _line(node), extra={"whole": True}))

    def affine_op(self, op: str, vis: list) -> Optional[Affine]:
        if op == "add":
            return vis[0].aff + vis[1].aff
        if op == "sub":
            return vis[0].aff - vis[1].aff
        if op == "neg":
            return -vis[0].aff
        if op == "pos":
            return vis[0].aff
        a, b = vis[0].aff, vis[1].aff
        if a.is_const:
            return b * a.const
        if b.is_const:
            return a * b.const
        return None

    # --- elementwise -----------------------------------------------------------------------------
    def elementwise(self, node: Node, vis: list, op: Optional[str] = None, attrs: Optional[dict] = None,
                    eager_fn=None) -> VI:
        op = op or node.op
        attrs = dict(node.attrs if attrs is None else attrs)
        if "kw" in attrs:
            raise Bail(f"`{_op_text(node)}` with keyword operands is not vectorized")
        if self.region_depth and not self.safe_op(node, vis, op):
            raise Bail(f"`{_op_text(node)}` inside a branch could fail where the loop never ran it")
        eager = self.eager(node, vis, eager_fn or OPS[op], attrs)
        dtypes = {P.dtype_of(e) for e in eager}
        if len(dtypes) > 1:
            raise Bail(f"the dtype of `{_op_text(node)}` depends on which branch was taken")
        want = dtypes.pop()
        if any(P.is_py_scalar(e) and isinstance(e, int) and not isinstance(e, bool) for e in eager):
            ival = _int_interval(op, [v.ival for v in vis])
            if ival is None or max(abs(ival[0]), abs(ival[1])) >= 2 ** 62:
                raise Bail(f"`{_op_text(node)}` computes Python integers that might not fit in int64")
        else:
            ival = None
        if not any(v.varying for v in vis):   # e.g. two uniform terms of a chained update
            new = self.s.op(op, [self.value(v) for v in vis], attrs, node.name)
            return VI("U", node=new, probes=eager, ival=ival, text=node.name or _op_text(node))
        rank = max(P.rank_of(v.probe) for v in vis)
        operands, vprobes = [], []
        for v in vis:
            n = self.value(v)
            if v.varying:
                pad = rank - P.rank_of(v.probe)
                n = self.s.expand(n, 1, pad)
                vprobes.append(P.vector_probe(v.probe, pad))
            else:
                vprobes.append(v.probe)
            operands.append(n)
        static = _static_attrs(attrs)
        got = P.dtype_of(self.checked(OPS[op], vprobes, static))
        if got != want:
            operands, vprobes = self.weak_casts(vis, operands, vprobes)
            got = P.dtype_of(self.checked(OPS[op], vprobes, static))
            if got != want:
                raise Bail(f"`{_op_text(node)}` would compute in {got} where the loop computes in {want}")
        new = self.s.op(op, operands, attrs, node.name)
        return VI("V", node=new, probes=eager, ival=ival, text=node.name or _op_text(node))

    def checked(self, fn, args, kwargs) -> Any:
        try:
            return P.evaluate(fn, *args, **kwargs)
        except P.ProbeError as e:
            raise Bail(str(e)) from None

    def weak_casts(self, vis, operands, vprobes):
        """Cast varying Python-scalar operands the way NumPy converts Python scalars (NEP 50)."""
        strong = [P.dtype_of(v.probe) for v in vis if not P.is_py_scalar(v.probe)]
        operands, vprobes = list(operands), list(vprobes)
        for k, v in enumerate(vis):
            if not (v.varying and P.is_py_scalar(v.probe)):
                continue
            target = P.weak_cast_target(strong, v.probe)
            if target is None or target == P.dtype_of(vprobes[k]):
                continue
            if isinstance(v.probe, int) and not isinstance(v.probe, bool):
                ival = v.ival if v.ival is not None else (self.interval(v.aff) if v.kind == "A" else None)
                if ival is None or not P.exactly_representable(ival, target):
                    continue
            operands[k] = self.s.op("astype", [operands[k]], {"dtype": target.type})
            vprobes[k] = vprobes[k].astype(target)
        return operands, vprobes

    def safe_op(self, node: Node, vis: list, op: Optional[str] = None) -> bool:
        """May this op run for iterations whose branch the loop did not take?"""
        op = op or node.op
        if op in DIVISION_OPS:
            d = vis[1] if len(vis) > 1 else None
            return d is not None and d.has_const and isinstance(d.const, (int, float)) and d.const != 0
        if op == "pow":
            e = vis[1]
            return e.has_const and isinstance(e.const, int) and e.const >= 0
        if op in DOMAIN_OPS:
            return False
        if op in ("int",):
            return False
        return True

    # --- builtins and conversions ----------------------------------------------------------------
    def visit_builtin(self, node: Node, vis: list) -> VI:
        if node.op == "py_abs":
            if len(vis) != 1:
                raise Bail("abs() takes one value")
            return self.elementwise(node, vis, op="abs", eager_fn=abs)
        if len(vis) < 2 or any(P.rank_of(v.probe) for v in vis):
            raise Bail(f"`{_op_text(node)}` is not an elementwise max/min of scalars")
        acc = vis[0]
        for v in vis[1:]:
            acc = self.pairwise_extreme(node, acc, v, node.op == "py_max")
        return acc

    def pairwise_extreme(self, node: Node, a: VI, b: VI, is_max: bool) -> VI:
        """Python `max(a, b)` is `b if b > a else a` (NaN in `b` loses); `min` uses `<`."""
        kinds = {P.dtype_of(p).kind for p in a.probes + b.probes}
        eager = tuple(P.unique_probes(a.probes + b.probes))
        if kinds <= set("iub"):
            vi = self.elementwise(node, [a, b], op="maximum" if is_max else "minimum",
                                  eager_fn=max if is_max else min)
            return replace(vi, probes=eager)
        test = self.elementwise(node, [b, a], op="gt" if is_max else "lt", attrs={})
        vi = self.elementwise(node, [test, b, a], op="where", attrs={},
                              eager_fn=lambda c, x, y: x if c else y)
        return replace(vi, probes=eager)

    def visit_conversion(self, node: Node, vis: list) -> VI:
        (v,) = vis
        kind = P.dtype_of(v.probe).kind
        if node.op == "int" and kind not in "iub":
            raise Bail("int() of a float is not vectorized (NaN and infinity raise in the loop)")
        target = {"float": np.float64, "bool": np.bool_, "int": np.int64}[node.op]
        if P.rank_of(v.probe):
            raise Bail(f"{node.op}() of an array")
        eager = self.eager(node, vis)
        new = self.s.op("astype", [self.value(v)], {"dtype": target}, node.name)
        return VI("V", node=new, probes=eager, ival=v.ival, text=node.name or node.op)

    def visit_call(self, node: Node) -> VI:
        fn = str(node.attrs.get("fn", ""))
        module, _, name = fn.rpartition(".")
        vis = [self.lookup(o) for o in node.operands]
        if module == "builtins" and name == "print":
            raise Bail("`print` is an effect that must run in order")
        if module != "math" or name not in MATH_UFUNCS or "kw" in node.attrs:
            raise Bail(f"`{fn or 'call'}` is an opaque call")
        if any(v.carried for v in vis):
            raise Bail(f"the loop-carried value is used by `{fn}`")
        ufunc = MATH_UFUNCS[name]
        if self.region_depth and ufunc in DOMAIN_OPS:
            raise Bail(f"`{fn}` inside a branch could fail where the loop never ran it")
        if any(P.rank_of(v.probe) for v in vis):
            raise Bail(f"`{fn}` of an array")
        import math as _math
        eager_fn = getattr(_math, name)
        if not any(v.varying for v in vis):
            eager = self.eager(node, vis, eager_fn, {})
            new = self.s.op(ufunc, [self.value(v) for v in vis], {}, node.name)
            return VI("U", node=new, probes=eager, text=node.name or fn)
        cast = []
        for v in vis:
            n = self.value(v)
            if P.dtype_of(v.probe) != np.float64 and v.varying:
                n = self.s.op("astype", [n], {"dtype": np.float64})
            cast.append(VI(v.kind if v.kind != "A" else "V", node=n, probes=(float(1),), ival=v.ival,
                           text=v.text) if v.varying else v)
        self.features.add("elementwise")
        vi = self.elementwise(node, cast, op=ufunc, attrs={}, eager_fn=eager_fn)
        return vi

    # --- reductions, linear algebra, layout on per-iteration arrays -----------------------------
    def visit_reduction(self, node: Node, vis: list) -> VI:
        if len(vis) != 1 or "kw" in node.attrs:
            raise Bail(f"`{_op_text(node)}` with run-time arguments is not vectorized")
        (v,) = vis
        rank = P.rank_of(v.probe)
        attrs = dict(node.attrs)
        axis = attrs.get("axis")
        if axis is None:
            new_axis = tuple(range(1, rank + 1))
        else:
            axes = axis if isinstance(axis, tuple) else (axis,)
            new_axis = tuple(a + 1 if a >= 0 else a for a in axes)
        attrs["axis"] = new_axis if len(new_axis) != 1 else new_axis[0]
        eager = self.eager(node, vis)
        got = self.checked(OPS[node.op], [P.vector_probe(v.probe)], _static_attrs(attrs))
        if P.dtype_of(got) != P.dtype_of(eager[0]):
            raise Bail(f"`{_op_text(node)}` would change dtype")
        new = self.s.op(node.op, [self.value(v)], attrs, node.name)
        return VI("V", node=new, probes=eager, text=node.name or node.op)

    def visit_linalg(self, node: Node, vis: list) -> VI:
        if node.op == "einsum":
            spec_vi, arrays = vis[0], vis[1:]
            spec = spec_vi.const if spec_vi.has_const else None
            if not isinstance(spec, str) or "->" not in spec or "." in spec or "kw" in node.attrs:
                raise Bail("einsum without an explicit '->' output")
            ins, out = spec.replace(" ", "").split("->")
            inputs = ins.split(",")
            if node.attrs and set(node.attrs) - {"optimize"}:
                raise Bail("einsum with options")
        else:
            arrays = vis
            if len(arrays) != 2:
                raise Bail(f"`{node.op}` with {len(arrays)} operands")
            ra, rb = (P.rank_of(v.probe) for v in arrays)
            table = {(1, 1): ("a", "a", ""), (2, 1): ("ba", "a", "b"), (1, 2): ("a", "ab", "b"),
                     (2, 2): ("ab", "bc", "ac")}
            if (ra, rb) not in table:
                raise Bail(f"`{node.op}` of rank {ra} and {rb} operands is not vectorized")
            sa, sb, out = table[(ra, rb)]
            inputs = [sa, sb]
        used = set("".join(inputs) + out)
        new_letter = next(ch for ch in "ijklmnopqrstuvwxyzabcdefgh" if ch not in used)
        nodes, vprobes = [], []
        for k, v in enumerate(arrays):
            nodes.append(self.value(v))
            if v.varying:
                inputs[k] = new_letter + inputs[k]
                vprobes.append(P.vector_probe(v.probe))
            else:
                vprobes.append(v.probe)
        out = new_letter + out
        eager = self.eager(node, vis)
        got = self.checked(np.einsum, [",".join(inputs) + "->" + out, *vprobes], {})
        if P.dtype_of(got) != P.dtype_of(eager[0]):
            raise Bail(f"`{node.op}` would change dtype")
        self.features.add("contraction")
        new = self.s.einsum(inputs, out, nodes, node.name)
        return VI("V", node=new, probes=eager, text=node.name or node.op)

    def visit_layout(self, node: Node, vis: list) -> VI:
        v = vis[0]
        rank = P.rank_of(v.probe)
        eager = self.eager(node, vis)
        if node.op == "copy":
            new = self.s.op("copy", [self.value(v)], {}, node.name)
        elif node.op == "astype":
            new = self.s.op("astype", [self.value(v)], dict(node.attrs), node.name)
        elif node.op == "T" or (node.op == "transpose" and node.attrs.get("axes") is None and len(vis) == 1):
            new = self.s.transpose(self.value(v), (0,) + tuple(range(rank, 0, -1)))
        elif node.op == "transpose" and len(vis) == 1:
            new = self.s.transpose(self.value(v), (0,) + tuple(a + 1 for a in node.attrs["axes"]))
        else:
            raise Bail(f"`{_op_text(node)}` is not vectorized")
        out = VI("V", node=new, probes=eager, text=node.name or node.op)
        if node.op in ("T", "transpose") and v.is_view:
            out.ident, out.is_view = v.ident, True
            self.view_nodes[new.id] = v.ident
        return out

    # ------------------------------------------------------------------------------------------
    # array reads and writes
    # ------------------------------------------------------------------------------------------
    def parse_index(self, node: Node, vis: list, first: int) -> list:
        parts = []
        for item in node.attrs["index"]:
            if isinstance(item, OperandRef):
                v = vis[item.index]
                if v.carried:
                    raise Bail("an index depends on a loop-carried value")
                if v.kind == "A":
                    parts.append(("pt", v))
                    continue
                probe = v.probe
                kind = P.dtype_of(probe).kind
                if kind in "iu" and P.rank_of(probe) == 0 and not isinstance(probe, bool):
                    if v.varying:
                        raise Bail(f"the index `{v.text}` is data-dependent")
                    key_node = v.node
                    parts.append(("pt", VI("A", aff=Affine.of(key_node), probes=v.probes, text=v.text)))
                    continue
                if v.varying:
                    raise Bail(f"the index `{v.text}` is data-dependent")
                if kind == "b":
                    raise Bail("a boolean mask index inside the loop")
                parts.append(("fancy", v))
            elif isinstance(item, slice):
                bounds = []
                for p in (item.start, item.stop, item.step):
                    if isinstance(p, OperandRef):
                        v = vis[p.index]
                        if v.kind != "A":
                            raise Bail("a slice bound is not an affine integer")
                        bounds.append(v.aff)
                    elif p is None or _is_int_value(p):
                        bounds.append(None if p is None else Affine.constant(int(p)))
                    else:
                        raise Bail(f"slice bound {p!r}")
                if any(b is not None and b.coef(K) for b in bounds):
                    parts.append(("win", *self.window_bounds(bounds)))
                else:
                    parts.append(("sl", *bounds))
            elif item is None:
                parts.append(("new",))
            elif item is Ellipsis:
                parts.append(("ell",))
            elif _is_int_value(item):
                parts.append(("pt", self.const_vi(int(item))))
            else:
                raise Bail(f"index item {item!r}")
        return parts

    def window_bounds(self, bounds: list) -> tuple:
        """`x[i:i + 3]`: a window of fixed length sliding with the loop index."""
        start, stop, step = bounds
        if step is not None and not (step.is_const and step.const == 1):
            raise Bail("a sliding slice with a step")
        if start is None or stop is None or start.coef(K) != stop.coef(K):
            raise Bail("slice bounds depend on the loop index (not a window of fixed length)")
        length = stop - start
        if not length.is_const or length.const < 1:
            raise Bail("a sliding window whose length is not a positive constant")
        return start, length.const

    def resolve_base(self, base: VI, parts: list) -> tuple:
        """Fold `a[i][j]` into `a[i, j]`."""
        while base.parts is not None:
            inner_base, inner_parts = base.parts
            base, parts = inner_base, inner_parts + parts
        return base, parts

    def plan_index(self, base: VI, parts: list, label: str, write: bool) -> dict:
        """Slices (or arange gathers) for `base[parts]` over all iterations, and its Access dims."""
        if base.kind != "U":
            raise Bail(f"`{label}` indexes an array that varies with the loop index")
        btype = self._array_type(base)
        shape = btype.shape
        rank = len(shape)
        consumed = sum(1 for p in parts if p[0] in ("pt", "sl", "fancy"))
        if consumed > rank:
            raise Bail(f"too many indices for `{label}`")
        expanded = []
        for p in parts:
            if p[0] == "ell":
                expanded += [("sl", None, None, None)] * (rank - consumed)
                consumed = rank
            else:
                expanded.append(p)
        expanded += [("sl", None, None, None)] * (rank - consumed)
        shape = tuple(d if d is not None else self.symbolic_dim(base, k) for k, d in enumerate(shape))
        dims, axis = [], 0
        varying = [k for k, p in enumerate(expanded) if p[0] == "pt" and p[1].varying]
        fancy_u = any(p[0] == "fancy" for p in expanded)
        for p in expanded:
            if p[0] == "new":
                continue
            d = shape[axis]
            if p[0] == "pt":
                dims.append(self.point_dim(p[1].aff, d))
            elif p[0] == "sl":
                dims.append(self.slice_dim(p[1:], d))
            else:
                dims.append(ANY)
            axis += 1
        items, operands = [], []

        def ref(node):
            operands.append(node)
            return OperandRef(len(operands) - 1)

        def literal_or_ref(aff):
            v = self.index_value(aff)
            return v if isinstance(v, int) else ref(v)

        loop_axis, reverse = None, False
        if not varying:
            kind = "uniform"
        elif len(varying) == 1 and not fancy_u and self.in_bounds(expanded[varying[0]][1].aff,
                                                                    shape[self._axis_of(expanded, varying[0])]):
            kind = "slice"
        else:
            if self.region_depth:
                raise Bail(f"`{label}` inside a branch needs a gather whose indices may be out of bounds")
            if fancy_u or any(p[0] in ("sl", "new") for k, p in enumerate(expanded)
                              if not (p[0] == "sl" and p[1:] == (None, None, None) and k > max(varying))):
                raise Bail(f"`{label}` mixes the loop index with slices in a way that is not vectorized")
            kind = "gather"
            self.features.add("gather")
        result_dims = 0
        for k, p in enumerate(expanded):
            if p[0] == "pt":
                v = p[1]
                if not v.varying:
                    items.append(literal_or_ref(v.aff))
                elif kind == "slice":
                    aff = v.aff
                    c = aff.coef(K)
                    first = aff.subst(K, Affine.constant(0))
                    dim = shape[self._axis_of(expanded, k)]
                    if c > 0:
                        # one past the last index (not first + T*c, which can overshoot the array)
                        stop = first + (self.trip_aff - 1) * c + 1 if self.trip else first + self.trip_aff * c
                        if stop.is_const and isinstance(dim, int) and stop.const - 1 + c >= dim:
                            stop = Affine.constant(dim)   # nothing more to take: x[::2]
                        items.append(self.make_slice(first, stop, c, dim, literal_or_ref))
                    else:
                        last = aff.subst(K, self.trip_aff - 1)
                        items.append(self.make_slice(last, first + 1, -c, dim, literal_or_ref))
                        reverse = True
                    loop_axis = result_dims
                    result_dims += 1
                else:
                    items.append(ref(self.materialize(v.aff)))
                    if loop_axis is None:
                        loop_axis = 0
            elif p[0] == "sl":
                start, stop, step = p[1:]
                items.append(slice(None if start is None else literal_or_ref(start),
                                   None if stop is None else literal_or_ref(stop),
                                   None if step is None else literal_or_ref(step)))
                result_dims += 1
            elif p[0] == "new":
                items.append(None)
                result_dims += 1
            else:
                items.append(ref(self.value(p[1])))
        while len(items) > 1 and isinstance(items[-1], slice) and items[-1] == slice(None):
            items.pop()
        points = sum(1 for p in expanded if p[0] == "pt")
        news = sum(1 for p in expanded if p[0] == "new")
        return {"kind": kind, "items": items, "operands": operands, "dims": tuple(dims),
                "loop_axis": loop_axis, "reverse": reverse, "rank": rank, "prank": rank - points + news}

    def _axis_of(self, expanded: list, k: int) -> int:
        return sum(1 for p in expanded[:k] if p[0] != "new")

    def _array_type(self, base: VI) -> ArrayType:
        t = base.node.type if base.node is not None else None
        outer = self.s.outer(base.node) if base.node is not None else None
        if outer is not None:
            t = outer.type
        if not isinstance(t, ArrayType) or t.shape is None:
            raise Bail(f"the shape of `{base.text}` is not known")
        return t

    def make_slice(self, start: Affine, stop: Affine, step: int, dim, literal_or_ref) -> slice:
        s0 = None if start.is_const and start.const == 0 else literal_or_ref(start)
        full = (isinstance(dim, int) and stop.is_const and stop.const == dim) or stop == dim
        s1 = None if full else literal_or_ref(stop)
        return slice(s0, s1, None if step == 1 else step)

    def symbolic_dim(self, base: VI, axis: int):
        """`x.shape[axis]` of an array of unknown size, as an affine symbol (None if unknown)."""
        outer = base.ident if isinstance(base.ident, Node) and base.ident.graph is not self.s.g else None
        return Affine.of(self.dim_key(outer, axis)) if outer is not None else None

    def dim_key(self, array: Node, axis: int) -> "DimKey":
        while array.op in SAME_SHAPE_OPS and array.operands:   # np.empty_like(x) has x's shape
            array = array.operands[0]
        key = self.dim_keys.get((array.id, axis))
        if key is None:
            key = self.dim_keys[(array.id, axis)] = DimKey(array, axis)
        return key

    def point_dim(self, aff: Affine, dim) -> Any:
        lo, hi = self.interval(aff)
        if lo >= 0:
            return Point(aff)
        if dim is not None and hi <= -1:
            return Point(aff + dim)
        return ANY

    def slice_dim(self, bounds, dim) -> Any:
        start, stop, step = bounds
        st = 1 if step is None else (step.const if step.is_const else None)
        if st is None or st == 0:
            return ANY
        if all(b is None or b.is_const for b in bounds) and isinstance(dim, int):
            sl = slice(*(None if b is None else b.const for b in bounds))
            a, b, c = sl.indices(dim)
            count = len(range(a, b, c))
            return Span(Affine.constant(a), Affine.constant(count), c)
        if st < 0:
            return ANY
        lo = Affine.constant(0) if start is None else start
        if self.interval(lo)[0] < 0:
            return ANY
        if stop is None:
            count = None if dim is None else (_as_affine(dim) - lo) if st == 1 else None
        else:
            if self.interval(stop)[0] < 0:
                return ANY
            count = stop - lo if st == 1 else None
        return Span(lo, count, st)

    def in_bounds(self, aff: Affine, dim) -> bool:
        """Does a varying index stay in [0, dim) over the whole loop (so that a slice is exact)?"""
        if dim is None:
            return False
        c = aff.coef(K)
        first = aff.subst(K, Affine.constant(0))
        last = aff.subst(K, self.trip_aff - 1)
        lo_idx, hi_idx = (first, last) if c > 0 else (last, first)
        return self.interval(lo_idx)[0] >= 0 and self.interval(hi_idx - (dim - 1))[1] <= 0

    def visit_getitem(self, node: Node, vis: list) -> VI:
        base, parts = self.resolve_base(vis[0], self.parse_index(node, vis, 1))
        label = self.label(node, base)
        if base.kind == "V":
            return self.getitem_of_varying(node, base, parts, label)
        if any(p[0] == "win" for p in parts):
            return self.window_read(node, base, parts, label)
        plan = self.plan_index(base, parts, label, write=False)
        pos = self.s.tick()
        ident = base.ident if base.ident is not None else base.node
        self.accesses.append(Access(ident, False, pos, plan["dims"], label, _line(node)))
        probes = self.getitem_probes(node, base, parts)
        items = _shift_refs(plan["items"], 1)
        result = self.s.getitem(base.node, items, plan["operands"], node.name)
        point_only = all(p[0] == "pt" for p in parts)
        if plan["kind"] == "uniform":
            vi = VI("U", node=result, probes=probes, ident=ident, is_view=True, text=label)
            if point_only:
                vi.parts = (base, parts)
            self.view_nodes[result.id] = ident
            return vi
        rank = P.rank_of(probes[0]) if probes else 0
        raw = (result, plan, base)
        if plan["reverse"]:
            rev = [slice(None)] * plan["loop_axis"] + [slice(None, None, -1)]
            result = self.s.getitem(result, rev)
        is_view = plan["kind"] == "slice"
        result = self.s.moveaxis_to_front(result, plan["loop_axis"], rank + 1)
        if is_view:
            self.view_nodes[result.id] = ident
        self.features.add("elementwise")
        offsets = self.read_offsets.setdefault(id(ident), set())
        offsets.add(tuple(d.expr if isinstance(d, Point) and d.expr.coef(K) else None for d in plan["dims"]))
        if len(offsets) > 1:
            self.features.add("stencil")   # one array read at several shifts of the index
        vi = VI("V", node=result, probes=probes, ident=ident, is_view=is_view, text=label,
                raw=raw if is_view else None)
        if point_only:
            vi.parts = (base, parts)
        return vi

    def window_read(self, node: Node, base: VI, parts: list, label: str) -> VI:
        """`x[..., i + a:i + a + L, ...]` for all i: a strided view of every window (no copy)."""
        if base.kind != "U":
            raise Bail(f"`{label}` slides over an array that varies with the loop index")
        shape = self._array_type(base).shape
        if any(p[0] in ("new", "ell", "fancy") or (p[0] == "pt" and p[1].varying) for p in parts):
            raise Bail(f"`{label}` mixes a sliding window with other loop-dependent indexing")
        if sum(1 for p in parts if p[0] == "win") != 1:
            raise Bail(f"`{label}` slides along more than one axis with the same index")
        parts = parts + [("sl", None, None, None)] * (len(shape) - len(parts))
        d = next(k for k, p in enumerate(parts) if p[0] == "win")
        _, start, length = parts[d]
        dim = shape[d]
        c = start.coef(K)
        first = start.subst(K, Affine.constant(0))
        last_stop = start.subst(K, self.trip_aff - 1) + length
        lo, hi = (first, last_stop) if c > 0 else (start.subst(K, self.trip_aff - 1), first + length)
        if dim is None or self.interval(lo)[0] < 0 or self.interval(hi - dim)[1] > 0:
            raise Bail(f"the sliding window `{label}` may leave the array")
        if c < 0:
            raise Bail(f"the window `{label}` slides backwards")
        dims = []
        for k, p in enumerate(parts):
            if p[0] == "pt":
                dims.append(self.point_dim(p[1].aff, shape[k]))
            elif p[0] == "sl":
                dims.append(self.slice_dim(p[1:], shape[k]))
            else:
                dims.append(Span(start, Affine.constant(length), 1))
        ident = base.ident if base.ident is not None else base.node
        self.accesses.append(Access(ident, False, self.s.tick(), tuple(dims), label, _line(node)))
        view = self.sliding_view(base.node, length, d, shape)
        items, operands = [], []

        def ref(aff):
            v = self.index_value(aff)
            if isinstance(v, int):
                return v
            operands.append(v)
            return OperandRef(len(operands))
        loop_axis = None
        result_dims = 0
        for k, p in enumerate(parts):
            if p[0] == "pt":
                items.append(ref(p[1].aff))
            elif p[0] == "sl":
                items.append(slice(*(None if b is None else ref(b) for b in p[1:])))
                result_dims += 1
            else:
                stop = first + self.trip_aff * c
                n_windows = dim - length + 1
                items.append(slice(None if first.is_const and first.const == 0 else ref(first),
                                   None if stop.is_const and stop.const == n_windows else ref(stop),
                                   None if c == 1 else c))
                loop_axis = result_dims
                result_dims += 1
        while len(items) > 1 and items[-1] == slice(None):
            items.pop()
        result = self.s.getitem(view, items, operands, node.name)
        probes = self.getitem_probes(node, base, [p for p in parts if p[0] != "win"] + [("sl",)])
        rank = P.rank_of(probes[0])            # per iteration, including the window axis
        axes = (loop_axis,) + tuple(range(loop_axis)) + (rank,) + tuple(range(loop_axis + 1, rank))
        result = self.s.transpose(result, axes)
        self.features.add("window")
        return VI("V", node=result, probes=probes, ident=view, is_view=True, text=label)

    def sliding_view(self, array: Node, length: int, axis: int, shape: tuple) -> Node:
        """`sliding_window_view(x, L, axis=d)`; a view of a view merges into one call."""
        windows, axes = (length,), (axis,)
        if array.op == SWV:
            inner = array
            w, a = inner.attrs["window_shape"], inner.attrs["axis"]
            windows = (w if isinstance(w, tuple) else (w,)) + windows
            axes = (a if isinstance(a, tuple) else (a,)) + axes
            array = inner.operands[0]
        t = self._array_type_of(array)
        new_shape = list(t.shape)
        for w, a in zip(windows, axes):
            new_shape[a] = new_shape[a] - w + 1
        new_shape += list(windows)
        attrs = {"window_shape": windows if len(windows) > 1 else windows[0],
                 "axis": axes if len(axes) > 1 else axes[0]}
        return self.s.op(SWV, [array], attrs, type=ArrayType(t.dtype, tuple(new_shape)))

    def _array_type_of(self, node: Node) -> ArrayType:
        outer = self.s.outer(node)
        t = outer.type if outer is not None else node.type
        if not isinstance(t, ArrayType) or t.shape is None or None in t.shape:
            raise Bail("a sliding window over an array of unknown shape")
        return t

    def getitem_of_varying(self, node: Node, base: VI, parts: list, label: str) -> VI:
        if any(p[0] != "sl" and not (p[0] == "pt" and not p[1].varying) and p[0] != "new" for p in parts):
            raise Bail(f"`{label}` indexes a per-iteration array with the loop index")
        if any(p[0] == "ell" for p in parts):
            raise Bail(f"`{label}` uses `...` on a per-iteration array")
        items, operands = [slice(None)], []
        for p in parts:
            if p[0] == "pt":
                v = self.index_value(p[1].aff)
                if isinstance(v, int):
                    items.append(v)
                else:
                    operands.append(v)
                    items.append(OperandRef(len(operands) - 1))
            elif p[0] == "new":
                items.append(None)
            else:
                bounds = []
                for b in p[1:]:
                    if b is None:
                        bounds.append(None)
                    else:
                        v = self.index_value(b)
                        if isinstance(v, int):
                            bounds.append(v)
                        else:
                            operands.append(v)
                            bounds.append(OperandRef(len(operands) - 1))
                items.append(slice(*bounds))
        probes = self.getitem_probes(node, base, parts)
        result = self.s.getitem(base.node, _shift_refs(items, 1), operands, node.name, cse=False)
        vi = VI("V", node=result, probes=probes, text=label)
        if base.is_view:
            vi.ident, vi.is_view = base.ident, True
            self.view_nodes[result.id] = base.ident
        return vi

    def getitem_probes(self, node: Node, base: VI, parts: list) -> tuple:
        try:
            return (P.eager_probe(node.type),)
        except P.ProbeError:
            pass
        t = self._array_type(base) if base.kind == "U" else None
        if t is None or t.dtype is None:
            return ()
        rank = len(t.shape) - sum(1 for p in parts if p[0] == "pt") + sum(1 for p in parts if p[0] == "new")
        if rank == 0:
            return (np.dtype(t.dtype).type(1),)
        return (np.ones((2,) * rank, dtype=t.dtype),)

    def label(self, node: Node, base: VI) -> str:
        parts = []
        for item in node.attrs.get("index", ()):
            if isinstance(item, OperandRef):
                parts.append(self.lookup(node.operands[item.index]).text or "?")
            elif isinstance(item, slice):
                def b(x):
                    if x is None:
                        return ""
                    return self.lookup(node.operands[x.index]).text if isinstance(x, OperandRef) else str(x)
                parts.append(f"{b(item.start)}:{b(item.stop)}" + (f":{b(item.step)}" if item.step is not None
                                                                    else ""))
            elif item is None:
                parts.append("None")
            elif item is Ellipsis:
                parts.append("...")
            else:
                parts.append(repr(item))
        name = base.text or node.operands[0].name or "array"
        return f"{name}[{', '.join(parts)}]"

    def visit_setitem(self, node: Node, vis: list) -> Optional[VI]:
        if node.id in self.accumulator_writes and node.id in self.acc_info:
            return self.finish_accumulator(node, vis)
        base, parts = self.resolve_base(vis[0], self.parse_index(node, vis, 2))
        label = self.label(node, base)
        if base.kind == "V":
            raise Bail(f"`{label} = ...` writes into a per-iteration array")
        if base.ident is None:
            raise Bail(f"`{label} = ...` writes into a value that is not an array")
        plan = self.plan_index(base, parts, label, write=True)
        if plan["kind"] == "uniform":
            raise Bail(f"`{label} = ...` writes the same element in every iteration")
        if vis[1].written == (id(base.ident), repr(plan["items"]), tuple(o.id for o in plan["operands"])):
            return None  # `x[i] += v` on a view: updated in place already, the store writes it onto itself
        value = self.arrange_value(vis[1], base, plan, label)
        items = _shift_refs(plan["items"], 2)
        if self.region_depth:
            key = (id(base.ident), repr(plan["items"]), tuple(o.id for o in plan["operands"]))
            entry = next((w for w in self.pending if w.key == key), None)
            if entry is not None:
                entry.tree = ("val", value)   # a later write in the same branch wins
            else:
                self.pending.append(_PendingWrite(key, base.node, plan["items"], plan["operands"], plan["dims"],
                                                  base.ident, label, _line(node), plan["loop_axis"] or 0,
                                                  plan["prank"], ("val", value), plan["reverse"]))
            return None
        self.s.forget_reads()
        pos = self.s.tick()
        self.accesses.append(Access(base.ident, True, pos, plan["dims"], label, _line(node)))
        self.s.op("setitem", [base.node, value, *plan["operands"]], {"index": _index(items)})
        self.s.pos[self.s.g.nodes[-1].id] = pos
        return None

    def arrange_value(self, v: VI, base: VI, plan: dict, label: str) -> Node:
        """The value laid out like the written slice: loop axis where the slice has it."""
        btype = self._array_type(base)
        target = np.dtype(btype.dtype) if btype.dtype else None
        for probe in v.probes or ():
            src = P.dtype_of(probe)
            if target is None or not np.can_cast(src, target, "same_kind"):
                raise Bail(f"`{label} = ...` would cast {src} to {target}")
            if P.is_py_scalar(probe) and isinstance(probe, int) and target.kind in "iu":
                ival = v.ival if v.ival is not None else (self.interval(v.aff) if v.kind == "A" else None)
                if ival is None or not P.exactly_representable(ival, target):
                    raise Bail(f"`{label} = ...` stores Python integers that might not fit in {target}")
        if not v.probes:
            raise Bail(f"the type of the value stored in `{label}` is not known")
        node = self.value(v)
        prank = plan["prank"]
        vrank = P.rank_of(v.probe)
        if vrank > prank:
            raise Bail(f"`{label} = ...` stores an array of higher rank")
        loop_axis = plan["loop_axis"] or 0
        if v.varying:
            node = self.s.expand(node, 1, prank - vrank)
            if plan["reverse"]:
                node = self.s.getitem(node, [slice(None, None, -1)], cse=False)
            node = self.s.moveaxis_from_front(node, loop_axis, prank + 1)
        elif vrank > 0:
            items = [None] * (prank - vrank) + [slice(None)] * vrank
            items.insert(loop_axis, None)
            node = self.s.getitem(node, items, cse=False)
        return node

    def visit_inplace(self, node: Node, vis: list) -> VI:
        target, value = vis
        op = node.attrs["op"]
        if P.rank_of(target.probe) == 0:
            return self.elementwise(node, vis, op=op, attrs={})
        if target.kind == "V" and target.is_view and target.raw is not None:
            raw, plan, base = target.raw
            self.s.forget_reads()
            aligned = self.arrange_value(value, base, plan, target.text)
            new = self.s.op("inplace", [raw, aligned], {"op": op}, node.name)
            self.accesses.append(Access(target.ident, True, self.s.pos[new.id], plan["dims"], target.text,
                                        _line(node)))
            return replace(target, written=(id(target.ident), repr(plan["items"]),
                                            tuple(o.id for o in plan["operands"])))
        if target.kind == "V" and target.is_view:
            raise Bail(f"`{target.text} {op}= ...` updates a view in place")
        if target.kind == "V":
            aligned = self.align_to(value, target, node)
            new = self.s.op("inplace", [target.node, aligned], {"op": op}, node.name)
            return replace(target, node=new)
        raise Bail(f"`{target.text} {op}= ...` updates a loop-invariant array in place in every iteration")

    def align_to(self, value: VI, target: VI, node: Node) -> Node:
        n = self.value(value)
        trank, vrank = P.rank_of(target.probe), P.rank_of(value.probe)
        if vrank > trank:
            raise Bail(f"`{_op_text(node)}` broadcasts to a larger shape")
        if value.varying:
            return self.s.expand(n, 1, trank - vrank)
        return n

    # ------------------------------------------------------------------------------------------
    # conditionals
    # ------------------------------------------------------------------------------------------
    def visit_if(self, node: Node) -> VI:
        cond = self.lookup(node.operands[0])
        captures = [self.lookup(o) for o in node.operands[1:]]
        then_r, else_r = node.regions
        if cond.kind == "C":
            return self.or_and_pattern(node, cond, captures)
        if cond.kind == "CMP":
            return self.extreme_pattern(node, cond, captures)
        if cond.carried:
            raise Bail("a condition depends on a loop-carried value")
        if not cond.varying:
            raise Bail("a loop-invariant `if` inside the loop (not unswitched)")
        mask = self.truth(cond, node)
        self.features.add("where")
        outer_pending = self.pending
        self.pending = []
        then_out, then_writes = self.translate_region(then_r, captures)
        else_out, else_writes = self.translate_region(else_r, captures)
        self.pending = outer_pending
        results = [self.merge(node, k, mask, t, e) for k, (t, e) in enumerate(zip(then_out, else_out))]
        merged = self.merge_writes(mask, then_writes, else_writes)
        if self.region_depth:   # a nested `if`: the enclosing branch decides when these happen
            for w in merged:
                entry = next((p for p in self.pending if p.key == w.key), None)
                if entry is None:
                    self.pending.append(w)
                else:
                    entry.tree = _replace_old(w.tree, entry.tree)
        else:
            self.emit_conditional_writes(merged)
        return VI("TUPLE", const=results)

    def merge_writes(self, mask: VI, then_w: list, else_w: list) -> list:
        by_key = {w.key: w for w in else_w}
        out = []
        for w in then_w:
            other = by_key.pop(w.key, None)
            out.append(replace(w, tree=("sel", mask, w.tree, other.tree if other is not None else ("old",))))
        for w in else_w:
            if w.key in by_key:
                out.append(replace(w, tree=("sel", mask, ("old",), w.tree)))
        return out

    def truth(self, cond: VI, node: Node) -> VI:
        if P.rank_of(cond.probe):
            raise Bail("an `if` on an array")
        if P.dtype_of(cond.probe).kind == "b":
            return cond
        zero = self.const_vi(0)
        return self.elementwise(node, [cond, zero], op="ne", attrs={})

    def translate_region(self, region: Graph, captures: list) -> tuple:
        for arg, vi in zip(region.args, captures):
            self.env[arg.id] = vi
        self.region_depth += 1
        reads_before = len(self.accesses)
        try:
            for n in region.nodes:
                vi = self.visit(n)
                if vi is not None:
                    self.env[n.id] = vi
            outs = [self.lookup(o) for o in region.outputs]
        finally:
            self.region_depth -= 1
        writes = self.pending
        self.pending = []
        read_ids = {id(a.array) for a in self.accesses[reads_before:] if not a.write}
        for w in writes:
            if id(w.ident) in read_ids:
                raise Bail(f"a branch reads `{w.label.split('[')[0]}` and writes it")
        return outs, writes

    def merge(self, node: Node, k: int, mask: VI, t: VI, e: VI) -> VI:
        if t.carried or e.carried:
            return self.merge_carried(node, mask, t, e)
        if t.kind == e.kind == "U" and t.node is e.node:
            return t
        if t.kind == e.kind == "A" and t.aff == e.aff:
            return t
        vi = self.elementwise(node, [mask, t, e], op="where", attrs={}, eager_fn=lambda c, x, y: x)
        probes = P.unique_probes(t.probes + e.probes)
        return replace(vi, probes=tuple(probes), text=node.name or "where")

    def merge_carried(self, node: Node, mask: VI, t: VI, e: VI) -> VI:
        def same_c(a, b):
            return a.kind == "C" and b.kind == "C" and a.j == b.j
        if same_c(t, e):
            return t
        if t.kind == "UPD" and e.kind == "C" and t.j == e.j:
            return self.masked(t, mask, False, node)
        if e.kind == "UPD" and t.kind == "C" and t.j == e.j:
            return self.masked(e, mask, True, node)
        if e.kind == "C" and t.has_const and isinstance(t.const, bool):
            return VI("UPD", j=e.j, upd="set_true" if t.const else "set_false", mask=mask, probes=(t.const,),
                      text=e.text)
        if t.kind == "C" and e.has_const and isinstance(e.const, bool):
            return VI("UPD", j=t.j, upd="set_true" if e.const else "set_false", mask=mask, mask_neg=True,
                      probes=(e.const,), text=t.text)
        raise Bail(f"the loop-carried value `{(t if t.carried else e).text}` is updated in a way that is "
                   "not a reduction")

    def masked(self, upd: VI, mask: VI, negate: bool, node: Node) -> VI:
        if upd.mask is not None:
            raise Bail("a conditional update inside a conditional update")
        if upd.upd not in ("add", "sub", "mul", "pymax", "pymin", "maximum", "minimum", "fmax", "fmin"):
            raise Bail(f"a conditional `{upd.upd}` update")
        return replace(upd, mask=mask, mask_neg=negate)

    def or_and_pattern(self, node: Node, cond: VI, captures: list) -> VI:
        """`c = c or t` / `c = c and t` lower to `if c: c else: t` / `if c: t else: c`."""
        then_r, else_r = node.regions
        self.features.add("reduction")
        then_out, tw = self.translate_region(then_r, captures)
        else_out, ew = self.translate_region(else_r, captures)
        if tw or ew:
            raise Bail("a short-circuit test with array writes")
        results = []
        for t, e in zip(then_out, else_out):
            if t.kind == "C" and t.j == cond.j and not e.carried:
                results.append(VI("UPD", j=cond.j, upd="or", term=e, probes=e.probes, text=cond.text))
            elif e.kind == "C" and e.j == cond.j and not t.carried:
                results.append(VI("UPD", j=cond.j, upd="and", term=t, probes=t.probes, text=cond.text))
            else:
                raise Bail(f"the loop-carried value `{cond.text}` is tested in a way that is not any()/all()")
        return VI("TUPLE", const=results)

    def extreme_pattern(self, node: Node, cond: VI, captures: list) -> VI:
        """`if t > m: m = t` (or `m = t if t > m else m`): a running maximum (minimum for `<`)."""
        then_r, else_r = node.regions
        then_out, tw = self.translate_region(then_r, captures)
        else_out, ew = self.translate_region(else_r, captures)
        if tw or ew:
            raise Bail("a running maximum with array writes")
        results = []
        for t, e in zip(then_out, else_out):
            if e.kind == "C" and e.j == cond.j and not t.carried and self.equivalent(t, cond.term):
                kind = "pymax" if cond.upd in ("gt", "ge") else "pymin"
                results.append(VI("UPD", j=cond.j, upd=kind, term=t, probes=t.probes, text=e.text))
            elif t.kind == "C" and e.kind == "C" and t.j == e.j:
                results.append(t)
            else:
                raise Bail("a running maximum/minimum that also updates other values (argmax) is not vectorized")
        return VI("TUPLE", const=results)

    def equivalent(self, a: VI, b: VI) -> bool:
        if a.kind != b.kind:
            return False
        if a.kind == "A":
            return a.aff == b.aff
        if a.kind in ("U", "V"):
            return _same_node(a.node, b.node, 6)
        return False

    def emit_conditional_writes(self, writes: list) -> None:
        """One `x[...] = np.where(c, new, x[...])` (nested for elif chains) per written location."""
        for w in writes:
            old = []

            def build(tree):
                if tree[0] == "val":
                    return tree[1]
                if tree[0] == "old":
                    if not old:
                        node = self.s.getitem(w.base, _shift_refs(w.items, 1), w.operands, cse=False)
                        self.accesses.append(Access(w.ident, False, self.s.pos[node.id], w.dims, w.label, w.line))
                        old.append(node)
                    return old[0]
                _, mask, a, b = tree
                na, nb = build(a), build(b)
                if na is nb:
                    return na
                m = self.s.expand(self.value(mask), 1, w.prank)
                if w.reverse:   # the slice runs backwards relative to the iterations
                    m = self.s.getitem(m, [slice(None, None, -1)], cse=False)
                m = self.s.moveaxis_from_front(m, w.loop_axis, w.prank + 1)
                return self.s.op("where", [m, na, nb])
            new_value = build(w.tree)
            self.s.forget_reads()
            pos = self.s.tick()
            self.accesses.append(Access(w.ident, True, pos, w.dims, w.label, w.line))
            self.s.op("setitem", [w.base, new_value, *w.operands], {"index": _index(_shift_refs(w.items, 2))})
            self.s.pos[self.s.g.nodes[-1].id] = pos

    # ------------------------------------------------------------------------------------------
    # loop-carried values: reductions
    # ------------------------------------------------------------------------------------------
    def carried_op(self, node: Node, vis: list) -> VI:
        op = node.op
        inplace = op == "inplace"
        if inplace:
            op = node.attrs["op"]
        idx = [k for k, v in enumerate(vis) if v.carried]
        if len(vis) != 2 or len(idx) != 1:
            raise Bail(f"the loop-carried value `{vis[idx[0]].text}` is used by `{_op_text(node)}`")
        ci = idx[0]
        c, t = vis[ci], vis[1 - ci]
        if op in ("gt", "lt", "ge", "le") and c.kind == "C":
            rel = op if ci == 1 else {"gt": "lt", "lt": "gt", "ge": "le", "le": "ge"}[op]
            return VI("CMP", j=c.j, upd=rel, term=t, probes=self.eager(node, vis), text=c.text)
        kinds = {
            "add": "add", "mul": "mul", "maximum": "maximum", "minimum": "minimum", "fmax": "fmax",
            "fmin": "fmin", "bitor": "or", "bitand": "and", "logical_or": "or", "logical_and": "and",
        }
        if op == "sub" and ci == 0:
            kind = "sub"
        elif op in ("py_max", "py_min"):
            kind = ("pymax" if op == "py_max" else "pymin") + ("" if ci == 0 else "_r")
        elif op in kinds:
            kind = kinds[op]
        else:
            raise Bail(f"the loop-carried value `{c.text}` is used by `{_op_text(node)}`, which is not a "
                       "reduction")
        if c.kind == "UPD":
            if c.upd != kind or kind not in ("add", "mul") or c.mask is not None:
                raise Bail(f"carried dependence: `{c.text}` is updated by `{c.upd}` and then by `{kind}`, "
                           "which together are not a reduction")
            combined = self.elementwise(node, [c.term, t], op=kind, attrs={})
            return replace(c, term=combined)
        if c.kind != "C":
            raise Bail(f"the loop-carried value `{c.text}` is used by `{_op_text(node)}`")
        if t.carried:
            raise Bail("two loop-carried values depend on each other")
        return VI("UPD", j=c.j, upd=kind, term=t, inplace=inplace, probes=(), text=c.text)

    def find_inner_loops(self, g: Graph) -> None:
        for node in g.nodes:
            if node.op in ("for_range", "while"):
                line = node.span.line if node.span else "?"
                raise Bail(f"it contains a loop that stays a loop (line {line})")
            for region in node.regions:
                self.find_inner_loops(region)

    # --- scans: `s += x[i]; out[i] = s` ---------------------------------------------------------
    def find_scans(self) -> None:
        """Carried sums whose running value is used in the body: prefix sums (np.cumsum)."""
        self.scans: dict[int, tuple] = {}          # slot -> (update node, term node)
        self.scan_updates: dict[int, int] = {}     # update node id -> slot
        self.scan_cache: dict = {}
        self.early: list[Access] = []
        for j in range(self.n):
            c, y = self.body.args[1 + j], self.body.outputs[j]
            if y.graph is not self.body or not (y.op == "add" or (y.op == "inplace" and y.attrs["op"] == "add")):
                continue
            if c not in y.operands or y.operands.count(c) != 1:
                continue
            t = y.operands[1] if y.operands[0] is c else y.operands[0]
            if y.op == "inplace" and y.operands[0] is not c:
                continue
            uses_c = [u for u in self.body.users(c) if u is not y]
            uses_y = self.body.users(y)
            if not uses_c and not uses_y:
                continue  # a plain reduction
            self.scans[j] = (y, t)
            self.scan_updates[y.id] = j

    def scan_value(self, vi: VI) -> VI:
        """Inside a scan, the carried value before the update is the exclusive prefix."""
        if vi.kind != "C" or vi.j not in getattr(self, "scans", {}):
            return vi
        return self.prefix(vi.j, exclusive=True)

    def scan_update(self, node: Node) -> VI:
        return self.prefix(self.scan_updates[node.id], exclusive=False)

    def prefix(self, j: int, exclusive: bool) -> VI:
        key = (j, exclusive)
        if key in self.scan_cache:
            return self.scan_cache[key]
        y, t_node = self.scans[j]
        if (j, False) not in self.scan_cache:
            self.ensure(t_node)
            t = self.lookup(t_node)
            init = self.loop.operands[3 + j]
            probes = self.probes_of_outer(init)
            if not probes or t.carried or not t.varying or P.rank_of(t.probe) != 0 or len(t.probes) != 1:
                raise Bail(f"the running sum `{self.body.args[1 + j].name}` is not a prefix sum of scalars")
            p1 = self.checked(lambda a, b: a + b, [probes[0], t.probe], {})
            if not P.same_type(self.checked(lambda a, b: a + b, [p1, t.probe], {}), p1) or P.is_py_scalar(p1):
                raise Bail(f"the running sum `{self.body.args[1 + j].name}` changes type")
            acc = P.dtype_of(p1)
            attrs = {} if P.dtype_of(self.checked(np.cumsum, [P.vector_probe(t.probe)], {})) == acc \
                else {"dtype": acc.type}
            length = self.trip_aff.const if self.trip_aff.is_const else None
            total = self.s.op("cumsum", [self.value(t)], attrs, self.body.args[1 + j].name,
                              type=ArrayType(acc.name, (length,)))
            if not (init.op == "const" and _is_identity(init.value, 0)):
                total = self.s.op("add", [self.s.ext(init), total], {}, self.body.args[1 + j].name)
            self.features.add("scan")
            self.scan_cache[(j, False)] = VI("V", node=total, probes=(p1,), text=self.body.args[1 + j].name)
        incl = self.scan_cache[(j, False)]
        if not exclusive:
            return incl
        init = self.loop.operands[3 + j]
        head = self.s.op("list", [self.s.ext(init) if init.op != "const" else self.s.const(init.value)])
        body = self.s.getitem(incl.node, [slice(None, -1)], cse=False)
        pair = self.s.op("tuple", [head, body])
        node = self.s.op("concatenate", [pair], {"dtype": P.dtype_of(incl.probe).type})
        probes = tuple(P.unique_probes(self.probes_of_outer(init) + incl.probes))
        vi = VI("V", node=node, probes=probes, text=incl.text)
        self.scan_cache[key] = vi
        return vi

    def ensure(self, node: Node) -> None:
        """Translate a pure body value ahead of its place (a scan term needed by an earlier use)."""
        if node.id in self.env or node.graph is not self.body or node.op == "const":
            return
        if not node.is_pure or node.regions:
            raise Bail("the term of a running sum is computed by an effect")
        for o in node.operands:
            self.ensure(o)
        before = len(self.accesses)
        vi = self.visit(node)
        self.early.extend(self.accesses[before:])
        if vi is not None:
            self.env[node.id] = vi

    def check_early_reads(self) -> None:
        written = {id(a.array) for a in self.accesses if a.write}
        for a in self.early:
            if id(a.array) in written:
                raise Bail(f"the term of a running sum reads `{a.label}`, which the loop writes")

    def find_accumulators(self) -> None:
        """`x[I] op= t` with I fixed in the loop: a reduction into one element (or row) of x."""
        self.accumulator_writes: dict[int, Node] = {}
        self.accumulator_reads: dict[int, Node] = {}
        self.acc_info: dict[int, dict] = {}
        for s in self.body.nodes:
            if s.op != "setitem":
                continue
            v = s.operands[1]
            if v.op not in ("add", "mul", "inplace", "sub") or v.graph is not self.body:
                continue
            r = v.operands[0]
            if r.op != "getitem" or r.graph is not self.body or r.operands[0] is not s.operands[0]:
                continue
            if r.attrs["index"] != s.attrs["index"] and \
                    repr(_shift_refs(list(r.attrs["index"]), 1)) != repr(list(s.attrs["index"])):
                continue
            if list(r.operands[1:]) != list(s.operands[2:]):
                continue
            if len(self.body.users(r)) != 1:
                continue
            self.accumulator_writes[s.id] = r
            self.accumulator_reads[r.id] = s

    def finish_accumulator(self, node: Node, vis: list) -> None:
        upd = vis[1]
        if upd.kind != "UPD" or upd.j != ("acc", node.id):
            raise Bail("an element is updated in a way that is not a reduction")
        info = self.acc_info[node.id]
        result = self.build_reduction(upd, info["init"], (info["probe"],) if info["probe"] is not None else (),
                                      None, node)
        base, plan = info["base"], info["plan"]
        btype = self._array_type(base)
        if P.dtype_of(result[1]) != np.dtype(btype.dtype):
            raise Bail(f"`{info['label']} += ...` would round to {btype.dtype} in every iteration")
        self.s.forget_reads()
        pos = self.s.tick()
        self.accesses.append(Access(base.ident, True, pos, plan["dims"], info["label"], _line(node),
                                    extra={"once": True}))
        self.s.op("setitem", [base.node, result[0], *plan["operands"]],
                  {"index": _index(_shift_refs(plan["items"], 2))})
        self.s.pos[self.s.g.nodes[-1].id] = pos
        self.features.add("reduction")
        return None

    def accumulator_read(self, node: Node, vis: list) -> VI:
        s = self.accumulator_reads[node.id]
        base, parts = self.resolve_base(vis[0], self.parse_index(node, vis, 1))
        label = self.label(node, base)
        if base.kind != "U" or base.ident is None:
            raise Bail(f"`{label} += ...` accumulates into a value that is not a loop-invariant array")
        plan = self.plan_index(base, parts, label, write=False)
        if plan["kind"] != "uniform":
            return None
        init = self.s.getitem(base.node, _shift_refs(plan["items"], 1), plan["operands"], node.name, cse=False)
        pos = self.s.pos[init.id]
        self.accesses.append(Access(base.ident, False, pos, plan["dims"], label, _line(node), extra={"once": True}))
        probes = self.getitem_probes(node, base, parts)
        self.acc_info[s.id] = {"init": init, "probe": probes[0] if probes else None, "base": base, "plan": plan,
                               "label": label}
        return VI("C", j=("acc", s.id), probes=probes, text=label)

    def finish_carried(self, j: int, vi: VI) -> Node:
        init = self.loop.operands[3 + j]
        if j in self.scans:
            if self.trip is None:
                raise Bail("the last value of a running sum over a run-time range")
            return self.s.getitem(self.prefix(j, False).node, [-1], cse=False)
        if vi.kind == "C" and vi.j == j:
            return init
        if vi.kind == "UPD" and vi.j == j:
            probes = self.probes_of_outer(init) or self.chained_init_probes(init, self.loop, j)
            node, _ = self.build_reduction(vi, self.s.ext(init), probes, init, None)
            self.features.add("reduction")
            return node
        if vi.carried:
            raise Bail(f"the loop-carried value `{self.body.args[1 + j].name}` is replaced by another carried "
                       "value")
        if self.trip is None or self.trip < 1:
            raise Bail("the last value of a run-time range")
        if vi.kind == "A":
            return self.materialize(vi.aff.subst(K, Affine.constant(self.trip - 1)))
        if vi.kind == "U":
            return vi.node
        last = self.s.getitem(vi.node, [-1], cse=False)
        probe = vi.probe
        if P.is_py_scalar(probe):
            last = self.s.op({bool: "bool", int: "int", float: "float"}.get(type(probe), "float"), [last])
        return last

    def chained_init_probes(self, init: Node, loop: Node, j: int) -> tuple:
        """Types of an init that is an enclosing loop's carried value fed by this loop's own result.

        `for i: for j: t += a[i, j]`: the inner loop starts from `t`, which is the outer init or
        the inner loop's previous result; the stand-in SELF stands for the latter.
        """
        g = init.graph
        parent = g.parent if g is not None else None
        if init.op != "arg" or parent is None or parent.op != "for_range" or loop.graph is not g:
            return ()
        k = g.args.index(init)
        if not 1 <= k <= parent.attrs.get("carried", 0):
            return ()
        out = g.outputs[k - 1]
        if out.op != "tuple_get" or out.operands[0] is not loop or out.attrs["index"] != j:
            return ()
        outer_init = parent.operands[3 + k - 1]
        base = self.probes_of_outer(outer_init) or self.chained_init_probes(outer_init, parent, k - 1)
        return base + (SELF,) if base else ()

    def build_reduction(self, upd: VI, init: Node, init_probes: tuple, init_outer: Optional[Node],
                        node: Optional[Node]) -> tuple:
        """The combined value of a reduction: e.g. `s0 + np.sum(terms)`; returns (node, probe)."""
        kind = upd.upd
        literal = init_outer.value if init_outer is not None and init_outer.op == "const" else _NO_LITERAL
        if kind in ("set_true", "set_false"):
            if not init_probes:
                raise Bail(f"the type of `{upd.text}` before the loop is not known")
            m = self.value(upd.mask)
            if upd.mask_neg:
                m = self.s.op("logical_not", [m])
            anyv = self.s.op("any", [m])
            if kind == "set_true":
                node_ = anyv if literal is False else self.s.op("bitor", [init, anyv])
            else:
                none = self.s.op("logical_not", [anyv])
                node_ = none if literal is True else self.s.op("bitand", [init, none])
            if all(type(p) is bool for p in init_probes if p is not SELF):
                node_ = self.s.op("bool", [node_])   # the loop stores the Python constant True/False
                return node_, True
            return node_, np.bool_(True)
        t = upd.term
        if t is None or (not t.varying and (upd.mask is None or not upd.mask.varying)):
            raise Bail(f"the value accumulated into `{upd.text}` does not depend on the loop index")
        if not init_probes:
            raise Bail(f"the type of `{upd.text}` before the loop is not known")
        self_results = any(p is SELF for p in init_probes)
        inits = [p for p in init_probes if p is not SELF]
        init_probe = inits[0]
        if any(isinstance(p, np.ndarray) != isinstance(init_probe, np.ndarray) for p in inits):
            raise Bail(f"`{upd.text}` is an array in some iterations and a scalar in others")
        tprobe = t.probe
        if len(t.probes) > 1:
            raise Bail(f"the type of the value accumulated into `{upd.text}` varies")
        rank = P.rank_of(tprobe)
        terms = self.value(t)
        if kind in ("add", "sub", "mul"):
            fn = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b}[kind]
            if upd.inplace and isinstance(init_probe, np.ndarray):
                fn = {"add": _iadd, "sub": _isub, "mul": _imul}[kind]
            p1 = self.checked(fn, [init_probe, tprobe], {})
            if self_results:
                inits.append(p1)
            for p in inits + [p1]:
                if not P.same_type(self.checked(fn, [p, tprobe], {}), p1):
                    raise Bail(f"the type of `{upd.text}` changes from one iteration to the next")
            acc = P.dtype_of(p1)
            if acc.kind not in "biufc":
                raise Bail(f"`{upd.text}` accumulates {acc}")
            if P.is_py_scalar(p1) and isinstance(p1, int) and not isinstance(p1, bool):
                ival = t.ival
                bound = self.trip if self.trip is not None else None
                if ival is None or bound is None or max(abs(ival[0]), abs(ival[1])) * max(bound, 1) >= 2 ** 62:
                    raise Bail(f"`{upd.text}` sums Python integers that might not fit in int64")
            if upd.mask is not None:
                m = self.value(upd.mask)
                if upd.mask_neg:
                    m = self.s.op("logical_not", [m])
                m = self.s.expand(m, 1, rank)
                if not t.varying and kind == "add" and t.has_const and t.const == 1 and rank == 0 \
                        and type(p1) is int:
                    count = self.s.op("count_nonzero", [m])     # a count of the iterations that add 1
                    result = count if _is_identity(literal, 0) else self.s.op("add", [init, count])
                    return self.s.op("int", [result]), p1
                else:
                    terms = self.s.op("where", [m, terms, self.s.const(IDENTITY[kind])])
            red_op = "prod" if kind == "mul" else "sum"
            attrs = {} if rank == 0 else {"axis": 0}
            natural = P.dtype_of(self.checked(OPS[red_op], [P.vector_probe(tprobe)], attrs))
            if natural != acc:
                attrs["dtype"] = acc.type
            total = None
            if red_op == "sum" and "dtype" not in attrs:
                total = self.sum_of_products(terms, acc, rank) or self.s.contract_leading(terms)
            if total is None:
                total = self.s.op(red_op, [terms], attrs)
            tot_probe = acc.type(1) if rank == 0 else np.ones((2,) * rank, dtype=acc)
            identity = IDENTITY[kind]
            if _is_identity(literal, identity) and kind != "sub" and \
                    P.same_type(self.checked(fn, [literal, tot_probe], {}), tot_probe):
                result = total
            elif upd.inplace and isinstance(init_probe, np.ndarray):
                result = self.s.op("inplace", [init, total], {"op": kind})
            else:
                result = self.s.op(kind, [init, total])
            finals = [self.checked(fn, [p, tot_probe], {}) for p in inits]
            if P.is_py_scalar(p1):
                result = self.s.op({bool: "bool", int: "int", float: "float", complex: "complex"}[type(p1)],
                                   [result]) if type(p1) is not complex else result
                finals = [p1]
            for final in finals:
                if not P.same_type(final, p1):
                    raise Bail(f"the vectorized `{upd.text}` would have type {type(final).__name__}")
            return result, p1
        if rank != 0 and kind in ("pymax", "pymin", "pymax_r", "pymin_r"):
            raise Bail("max()/min() of arrays")
        dt = P.dtype_of(tprobe)
        is_float = dt.kind in "fc"
        if kind.endswith("_r") and is_float:
            raise Bail("`max(t, m)` on floats keeps a NaN only until the next element; write `max(m, t)`")
        base_kind = kind[:-2] if kind.endswith("_r") else kind
        is_max = base_kind in ("pymax", "maximum", "fmax")
        if upd.mask is not None:
            m = self.value(upd.mask)
            if upd.mask_neg:
                m = self.s.op("logical_not", [m])
            fill = _extreme_identity(dt, is_max)
            if fill is None:
                raise Bail(f"a conditional max/min of {dt}")
            terms = self.s.op("where", [self.s.expand(m, 1, rank), terms, self.s.const(fill)])
        if kind in ("or", "and"):
            if dt.kind != "b" or not isinstance(init_probe, (bool, np.bool_)):
                raise Bail(f"`{upd.text} or/and ...` on non-boolean values")
            total = self.s.op("any" if kind == "or" else "all", [terms])
            if literal is (kind == "and"):
                return total, np.bool_(True)
            return self.s.op("bitor" if kind == "or" else "bitand", [init, total]), np.bool_(True)
        attrs = {} if rank == 0 else {"axis": 0}
        if base_kind in ("pymax", "pymin", "fmax", "fmin"):
            red = ("nanmax" if is_max else "nanmin") if is_float else ("max" if is_max else "min")
        else:
            red = "max" if is_max else "min"
        total = self.s.op(red, [terms], attrs)
        if base_kind in ("pymax", "pymin"):
            py = "py_max" if is_max else "py_min"
            pair = [total, init] if kind.endswith("_r") else [init, total]
            return self.s.op(py, pair), tprobe
        ufunc = {"maximum": "maximum", "minimum": "minimum", "fmax": "fmax", "fmin": "fmin"}[base_kind]
        result = self.s.op(ufunc, [init, total])
        probe = self.checked(OPS[ufunc], [init_probe, tprobe], {})
        return result, probe

    def sum_of_products(self, terms: Node, acc: np.dtype, rank: int) -> Optional[Node]:
        """sum(a * b) over the loop axis as a dot product / einsum when it is a plain product."""
        if terms.op != "mul" or self.s.g.users(terms):
            return None
        a, b = terms.operands
        ta, tb = a.type, b.type
        if not (isinstance(ta, ArrayType) and isinstance(tb, ArrayType)) or ta.shape is None or tb.shape is None:
            return None
        if ta.dtype != acc.name or tb.dtype != acc.name or acc.kind not in "fc":
            return None
        if len(ta.shape) != rank + 1 or len(tb.shape) != rank + 1 or \
                any(x is not None and y is not None and x != y for x, y in zip(ta.shape, tb.shape)):
            return None
        sub = "i" + "abcdefgh"[:rank]
        self.features.add("contraction")
        node = self.s.einsum([sub, sub], sub[1:], [a, b])
        self.s.g.nodes.remove(terms)
        self.s.g._edges.remove_node(terms)
        return node

    # ------------------------------------------------------------------------------------------
    # legality
    # ------------------------------------------------------------------------------------------
    def check_dependences(self) -> None:
        per_array: dict[int, list] = {}
        for a in self.accesses:
            per_array.setdefault(id(a.array), []).append(a)
        for group in per_array.values():
            writes = [a for a in group if a.write]
            if not writes:
                continue
            once = [a for a in group if a.extra.get("once")]
            if once and len(once) != len(group):
                other = next(a for a in group if not a.extra.get("once"))
                raise Bail(f"`{once[0].label}` is accumulated into while `{other.label}` is also accessed")
            if once:
                continue
            for w in writes:
                for a in group:
                    if a is w:
                        if conflict(w, w, self.trip):
                            raise Bail(f"`{w.label} = ...` writes some element in more than one iteration")
                        continue
                    if a.write and a.pos < w.pos:
                        continue  # the pair is tested from the other side
                    first, second = (a, w) if a.pos < w.pos else (w, a)
                    if conflict(first, second, self.trip):
                        raise Bail(self.dependence_reason(first, second))

    def dependence_reason(self, first: Access, second: Access) -> str:
        w, r = (first, second) if first.write else (second, first)
        if r.write:
            return f"carried dependence: `{w.label}` and `{r.label}` write the same element in different iterations"
        return f"carried dependence: `{r.label}` reads what `{w.label}` writes in another iteration"

    def check_view_uses(self) -> None:
        """A slice read is a view: it must be used before its array is written again."""
        writes = [a for a in self.accesses if a.write]
        if not writes:
            return
        for node in self.s.g.nodes:
            for o in node.operands:
                ident = self.view_nodes.get(o.id)
                if ident is None or node.op in ("T", "transpose") and o.id in self.view_nodes and \
                        node.id in self.view_nodes:
                    continue
                start, end = self.s.pos.get(o.id, 0), self.s.pos.get(node.id, 0)
                for w in writes:
                    if w.array is ident and start < w.pos < end:
                        raise Bail(f"a value read from `{w.label.split('[')[0]}` is used after "
                                   f"`{w.label}` is written")

    def alias_guards(self) -> list:
        """Pairs of distinct arrays, one written, that must not overlap for the vectorized code."""
        written = []
        for a in self.accesses:
            if a.write and all(a.array is not w for w in written):
                written.append(a.array)
        everything = []
        for a in self.accesses:
            if all(a.array is not x for x in everything):
                everything.append(a.array)
        guards = []
        for w in written:
            for x in everything:
                if x is w:
                    continue
                if not isinstance(w, Node) or not isinstance(x, Node):
                    continue
                if w.graph is self.s.g or x.graph is self.s.g:
                    continue  # arrays created in the loop body are fresh
                if may_alias(w, x):
                    if not any({id(w), id(x)} == {id(a), id(b)} for a, b in guards):
                        guards.append((w, x))
        return guards


_NO_LITERAL = object()


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


def _as_affine(v) -> Affine:
    return v if isinstance(v, Affine) else Affine.constant(v)
SELF = "<the loop's own result>"


def _iadd(a, b):
    a = a.copy()
    a += b
    return a


def _isub(a, b):
    a = a.copy()
    a -= b
    return a


def _imul(a, b):
    a = a.copy()
    a *= b
    return a


def _is_identity(literal, identity) -> bool:
    if literal is _NO_LITERAL or isinstance(literal, bool) or isinstance(identity, bool):
        return False
    return isinstance(literal, (int, float)) and literal == identity


def _extreme_identity(dt: np.dtype, is_max: bool):
    if dt.kind == "f":
        return -math.inf if is_max else math.inf
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return int(info.min if is_max else info.max)
    if dt.kind == "b":
        return False if is_max else True
    return None


def _static_dim(node: Node) -> Optional[int]:
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


def _is_int_type(t) -> bool:
    if isinstance(t, ScalarType):
        return t.kind == "int"
    return isinstance(t, ArrayType) and t.shape == () and t.dtype is not None and np.dtype(t.dtype).kind in "iu"


def _is_int_value(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _static_attrs(attrs: dict) -> dict:
    return {k: v for k, v in attrs.items() if k not in ("kw", "fn", "index")}


def _callable(node: Node):
    op = OPS[node.op]
    if op.emit == "method" or op.emit == "attr":
        return lambda *a, **k: op(*a, **k)
    return op.fn


def _op_text(node: Node) -> str:
    if node.op == "call":
        return str(node.attrs.get("fn", "call"))
    op = OPS.get(node.op)
    if op is not None and op.emit in ("call", "method") and op.symbol:
        return op.symbol
    if op is not None and op.emit == "infix":
        return f"a {op.symbol} b"
    return node.op


def _render(op: str, vis: list) -> str:
    sym = {"add": "+", "sub": "-", "mul": "*"}.get(op)
    if sym and len(vis) == 2:
        a, b = vis
        if b.has_const and isinstance(b.const, int) and b.const < 0 and op in ("add", "sub"):
            return f"{a.text} {'-' if op == 'add' else '+'} {-b.const}"
        return f"{a.text} {sym} {b.text}"
    if op == "neg":
        return f"-{vis[0].text}"
    return vis[0].text if vis else op


def _int_interval(op: str, ivals: list) -> Optional[tuple]:
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


def _line(node: Node) -> Optional[int]:
    return node.span.line if node.span else None


def _same_node(a: Node, b: Node, depth: int) -> bool:
    if a is b:
        return True
    if depth <= 0 or a.op != b.op or a.op in ("arg", "setitem", "inplace") or repr(a.attrs) != repr(b.attrs):
        return False
    if a.op == "const":
        return type(a.value) is type(b.value) and repr(a.value) == repr(b.value)
    return len(a.operands) == len(b.operands) and all(_same_node(x, y, depth - 1)
                                                      for x, y in zip(a.operands, b.operands))


def _replace_old(tree: tuple, old: tuple) -> tuple:
    if tree[0] == "old":
        return old
    if tree[0] == "sel":
        return ("sel", tree[1], _replace_old(tree[2], old), _replace_old(tree[3], old))
    return tree


def _shift_refs(items: list, by: int) -> list:
    def shift(x):
        return OperandRef(x.index + by) if isinstance(x, OperandRef) else x
    out = []
    for it in items:
        if isinstance(it, slice):
            out.append(slice(shift(it.start), shift(it.stop), shift(it.step)))
        else:
            out.append(shift(it))
    return out


def _index(items: list):
    from ..literals import Index
    return Index(items)
