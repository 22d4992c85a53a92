"""Translate one `for_range` loop into whole-array operations, or say why it must stay a loop.

The body is walked once, in program order. Every body value becomes a `VI`:

- `U` uniform: the same in every iteration (a scratch node computing it once);
- `V` varying: one value per iteration, stacked along a new leading axis (a scratch node);
- `A` affine integer `c*k + ...` in the iteration counter k (materialized lazily: a slice
  bound, an `np.arange`, or a scalar);
- `C` a loop-carried value, `UPD` a recognized update of one (`s + t`, `max(m, t)`, ...) and
  `CMP` a comparison against one (`t > m`, the test of a running maximum).

The translation of array reads and writes (`indexing.py`), of per-element `if`s (`branches.py`)
and of loop-carried values (`carried.py`) are mixins of `LoopVectorizer`; `values.py` holds `VI`.
Array reads and writes become slices (or `np.arange` gathers) and are recorded as `Access`es;
`graph/analysis/dependence.py` then decides whether running each statement for all iterations
at once is the same as running the iterations one by one. Anything not understood raises
`Bail` with a one-line reason that ends up on the loop (`vectorize="no: ..."`).
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any, Optional

import numpy as np

from ..analysis.affine import INF, Affine, range_interval
from ..alias import may_alias
from ..analysis.dependence import ANY, K, Access, conflict
from ..ir import Graph, Node
from ..literals import OperandRef
from ..ops import OPS
from ..types import ArrayType
from . import probes as P
from .build import Scratch, check_inputs
from .values import (GUARD, MATH_FUNCS, SWV, Bail, DimKey, Result,
                     Unsafe,
                     VI, _PendingWrite, _callable, _int_interval, _is_int_type, _is_int_value, _line, _op_text,
                     _render, _static_attrs, _static_dim)
from .branches import BranchMixin
from .carried import CarriedMixin
from .indexing import IndexingMixin


def _memory_root(node: Node) -> Node:
    """The array whose memory `node` reads (through views and in-place updates)."""
    while OPS[node.op].result == "view" and node.operands:
        node = node.operands[0]
    return node


class LoopVectorizer(IndexingMixin, BranchMixin, CarriedMixin):
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
        self.region_depth = 0
        self.pending: list[_PendingWrite] = []
        self.accumulators: dict[int, Node] = {}     # getitem id -> setitem of `x[I] op= t` in the loop
        self.features: set = set()
        self.fresh: dict[int, Node] = {}           # scratch arrays created in the body (their own identity)
        self.dim_keys: dict[tuple, "DimKey"] = {}
        self.read_offsets: dict[int, set] = {}
        self.reductions: dict[tuple, Node] = {}
        self.compress: Optional[Node] = None        # inside a masked branch: the elements it runs for
        self.compress_cache: dict[tuple, Node] = {}
        self.checks: list[tuple[Node, str]] = []    # (scratch bool, text): run the loop instead when true
        self.unsafe_indices: set[int] = set()       # gather indices that may be out of range (tested)
        self.guard_nodes: set[int] = set()          # conditions of inner loops' guards (see visit_guarded_if)

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
        self.find_guards()
        for node in self.body.nodes:
            if node.id in self.env or node.id in self.guard_nodes:
                continue  # translated early, as the term of a scan; or a guard's condition
            vi = self.visit(node)
            if vi is not None:
                self.env[node.id] = vi
        outputs = [self.finish_carried(j, self.lookup(out)) for j, out in enumerate(self.body.outputs)]
        self.check_early_reads()
        self.check_dependences()
        guards = self.alias_guards()
        self.check_checks()
        return Result(self.s, outputs, guards, self.summary(), checks=self.checks)

    def summary(self) -> str:
        order = ["elementwise", "stencil", "window", "reduction", "contraction", "where", "masked", "scan",
                 "gather"]
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
            if vi.read_at is not None:
                self.check_fresh(vi)
            return vi.node
        if vi.kind == "A":
            node = self.materialize(vi.aff)
            if self.compress is not None and vi.varying:
                node = self.compressed(node)
            return node
        raise Bail(f"the loop-carried value `{vi.text}` is used other than to accumulate into it")

    def compressed(self, node: Node) -> Node:
        """`v[m]`: the elements of a per-iteration value for the iterations a masked branch runs."""
        key = (node.id, self.compress.id)
        cached = self.compress_cache.get(key)
        if cached is None:
            cached = self.compress_cache[key] = self.s.getitem(node, [OperandRef(1)], [self.compress], cse=False)
        return cached

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
        if OPS[op].effect or (not node.is_pure and op not in ("setitem", "inplace", "if")):
            raise Bail(f"`{_op_text(node)}` is an effect that must run in order")
        if op == "if":
            if GUARD in node.attrs and node.id in self.guard_leaves:
                return self.visit_guarded_if(node)
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
        if OPS[op].reduction == "batched":
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
        if OPS[node.op].result == "view" and vis and vis[0].ident is not None:
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
            if not any(v.varying for v in vis):
                raise Bail(f"`{_op_text(node)}` inside a branch could fail where the loop never ran it")
            if self.compress is None:
                raise Unsafe(f"`{_op_text(node)}` inside a branch could fail where the loop never ran it")
        if (OPS[op].domain == "division" or op == "pow") and len(vis) == 2 and any(v.varying and P.is_py_scalar(v.probe)
                                                                 for v in vis):
            d = vis[1]
            ival = d.ival if d.ival is not None else (self.interval(d.aff) if d.kind == "A" else None)
            if op == "pow" or P.is_py_scalar(vis[0].probe) and P.is_py_scalar(d.probe) and \
                    (ival is None or ival[0] <= 0 <= ival[1]):
                # Python numbers raise ZeroDivisionError where NumPy returns inf
                raise Bail(f"`{_op_text(node)}` of Python numbers could raise where NumPy would not")
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
        if OPS[op].domain == "division":
            d = vis[1] if len(vis) > 1 else None
            return d is not None and d.has_const and isinstance(d.const, (int, float)) and d.const != 0
        if op == "pow":
            e = vis[1]
            return e.has_const and isinstance(e.const, int) and e.const >= 0
        if OPS[op].domain == "domain":
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
        if module != "math" or name not in MATH_FUNCS or "kw" in node.attrs:
            raise Bail(f"`{fn or 'call'}` is an opaque call")
        if any(v.carried for v in vis):
            raise Bail(f"the loop-carried value is used by `{fn}`")
        spec = MATH_FUNCS[name]
        if len(vis) != spec.arity:
            raise Bail(f"`{fn}` with {len(vis)} arguments")
        ufunc = spec.ufunc
        if self.region_depth and spec.raises_when and not spec.overflow_only:
            if not any(v.varying for v in vis):
                raise Bail(f"`{fn}` inside a branch could fail where the loop never ran it")
            if self.compress is None:
                raise Unsafe(f"`{fn}` inside a branch could fail where the loop never ran it")
        if any(P.rank_of(v.probe) for v in vis):
            raise Bail(f"`{fn}` of an array")
        # `math` functions return a Python float; a stand-in argument may be outside the function's
        # domain (atanh(1.0)), so the stand-in result is not computed
        if not any(v.varying for v in vis):   # computed once: a Python float, as `math` gives
            for v in vis:
                if P.is_py_scalar(v.probe) and type(v.probe) is int:
                    ival = (v.const, v.const) if v.has_const else v.ival
                    if ival is None or max(abs(ival[0]), abs(ival[1])) > 2 ** 53:
                        raise Bail(f"`{fn}` of a Python integer that might not convert to float")
            # math converts its arguments to float first (np.float32(100) -> 100.0, whose exp is finite)
            floats = [self.s.op("float", [self.value(v)]) for v in vis]
            value = self.s.op(ufunc, floats, {})
            vi = VI("U", node=self.s.op("float", [value], {}, node.name), probes=(0.75,), text=node.name or fn)
            if spec.raises_when:
                self.raise_check(value.operands[0], spec.raises_when, fn)
            return vi
        else:
            cast = []
            for v in vis:
                n = self.value(v)
                if P.dtype_of(v.probe) != np.float64 and v.varying:
                    n = self.s.op("astype", [n], {"dtype": np.float64})
                cast.append(VI(v.kind if v.kind != "A" else "V", node=n, probes=(float(1),), ival=v.ival,
                               text=v.text) if v.varying else v)
            self.features.add("elementwise")
            vi = self.elementwise(node, cast, op=ufunc, attrs={}, eager_fn=lambda *args: 0.75)
        if spec.raises_when:
            self.raise_check(vi.node.operands[0], spec.raises_when, fn)
        return vi

    def raise_check(self, arg: Node, raises_when: tuple, fn: str) -> None:
        """`math.log(x[i])` raises where `np.log(x)` returns NaN: test the arguments first (MathFn)."""
        negated = False
        while arg.op == "neg" and arg.graph is self.s.g:   # exp(-y): test y < -709, not -y > 709
            arg, negated = arg.operands[0], not negated
        if raises_when[0] == "isinf":
            test = self.s.op("isinf", [arg])
        else:
            op, bound, of_abs = raises_when
            if negated and not of_abs:
                op, bound = {"gt": "lt", "lt": "gt", "ge": "le", "le": "ge"}[op], -bound
            value = self.s.op("abs", [arg]) if of_abs else arg
            test = self.s.op(op, [value, self.s.const(bound)])
        self.add_check(test, fn)

    def add_check(self, test: Node, text: str) -> None:
        """Run the loop instead of the vectorized code when `test` (any element of it) is true."""
        if isinstance(test.type, ArrayType) and test.type.shape != ():
            test = self.s.op("any", [test])
        self.checks.append((test, text))

    def check_checks(self) -> None:
        """The tests of `raise_check` run before all the vectorized statements: what they read must
        not be memory the vectorized statements write before them (`x[i] = x[i] - 1` then
        `math.log(x[i])`), nor an array they fill in. Another array that may share memory with a
        written one is covered by the alias guard, which runs the loop when they overlap."""
        if not self.checks:
            return
        effects = [n for n in self.s.g.nodes if not n.is_pure]
        for node in check_inputs(self.s, [c for c, _ in self.checks]):
            if node.op == "getitem" and any(o.id in self.unsafe_indices for o in node.operands[1:]):
                raise Bail("a test of the loop needs a gather whose indices may be out of range")
            read = {id(_memory_root(o)) for o in node.operands if isinstance(o.type, ArrayType)}
            filled = any(not u.is_pure and u.operands[0] is node for u in self.s.g.users(node))
            written_before = any(self.s.pos[e.id] < self.s.pos.get(node.id, 0) and e.operands
                                 and id(_memory_root(e.operands[0])) in read for e in effects)
            if filled or written_before:
                fn = next(text for _, text in self.checks)
                raise Bail(f"`{fn}` could raise after the loop has written to what it reads")

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
            out.ident, out.is_view, out.read_at = v.ident, True, v.read_at
        return out

    def find_inner_loops(self, g: Graph) -> None:
        for node in g.nodes:
            if node.op in ("for_range", "while"):
                line = node.span.line if node.span else "?"
                raise Bail(f"it contains a loop that stays a loop (line {line})")
            regions = node.regions
            if node.op == "if" and GUARD in node.attrs and g is self.body:
                regions = regions[1:]   # the kept loop of a vectorized inner loop: see visit_guarded_if
            for region in regions:
                self.find_inner_loops(region)

    def find_guards(self) -> None:
        """The conditions of inner loops vectorized under a guard (`if <guard>: loop else: vectorized`).

        Their `any`/`|` nodes are not translated: `visit_guarded_if` tests the guard's operands for
        all iterations of this loop at once, as checks of this loop.
        """
        self.guard_leaves: dict[int, list] = {}
        for node in self.body.nodes:
            if node.op != "if" or GUARD not in node.attrs:
                continue
            leaves: list = []
            chain: list = []
            stack = [node.operands[0]]
            while stack:
                n = stack.pop()
                only_guard = n.graph is self.body and all(u is node or u.id in {c.id for c in chain} or
                                                          u.op == "bitor" for u in self.body.users(n))
                if n.op == "bitor" and only_guard:
                    chain.append(n)
                    stack.extend(n.operands)
                elif (n.op == "any" and len(n.operands) == 1 and not n.attrs or n.op == "call"
                      and n.attrs.get("fn") == "numpy.may_share_memory") and only_guard:
                    chain.append(n)
                    leaves.append(n)
                else:
                    leaves.append(n)
            self.guard_leaves[node.id] = leaves
            self.guard_nodes.update(n.id for n in chain)

    def visit_guarded_if(self, node: Node) -> VI:
        """An inner loop vectorized earlier: translate its vectorized branch, and test its guard
        (`any(x[i, :] <= 0)` per iteration i) for all iterations as one check of this loop."""
        if self.region_depth:
            raise Bail("an inner loop vectorized under a guard inside a branch")
        for leaf in self.guard_leaves[node.id]:
            if leaf.op == "call":   # may_share_memory: this loop's own alias analysis tests the arrays
                continue
            vi = self.lookup(leaf.operands[0] if leaf.op == "any" and leaf.id in self.guard_nodes else leaf)
            if vi.carried:
                raise Bail("an inner loop's guard depends on a loop-carried value")
            self.add_check(self.value(vi), str(node.attrs[GUARD]))
        else_r = node.regions[1]
        for arg, operand in zip(else_r.args, node.operands[1:]):
            self.env[arg.id] = self.lookup(operand)
        for n in else_r.nodes:
            vi = self.visit(n)
            if vi is not None:
                self.env[n.id] = vi
        return VI("TUPLE", const=[self.lookup(o) for o in else_r.outputs])

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

    def check_fresh(self, vi: VI) -> None:
        """A slice read is a view: used after its array is written again, it would show the new data."""
        ident, pos = vi.read_at
        for a in self.accesses:
            if a.write and a.array is ident and a.pos > pos:
                raise Bail(f"a value read from `{vi.text}` is used after `{a.label}` is written")

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


