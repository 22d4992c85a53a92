"""Loop-carried values: reductions, running sums (scans) and accumulation into array elements."""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

import numpy as np

from ..analysis.affine import Affine
from ..analysis.dependence import K, Access
from ..ir import Node
from ..literals import Index, OperandRef
from ..ops import OPS
from ..types import ArrayType
from . import probes as P
from .values import (IDENTITY, SELF, Bail, VI, _NO_LITERAL, _extreme_identity, _index, _is_identity,
                     _line, _op_text, _shift_refs)


# `x[I] = op(x[I], t)` with these ops (either operand order) accumulates into the element x[I].
ACCUMULATING_OPS = {"add", "mul", "inplace", "sub", "py_max", "py_min", "maximum", "minimum", "fmax", "fmin"}


class CarriedMixin:
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
        if self.compress is not None:
            raise Bail("a running sum inside a masked branch")
        return self.prefix(self.scan_updates[node.id], exclusive=False)

    def prefix(self, j: int, exclusive: bool) -> VI:
        key = (j, exclusive)
        if key in self.scan_cache:
            return self.scan_cache[key]
        y, t_node = self.scans[j]
        if (j, False) not in self.scan_cache:
            if (j, "pending") in self.scan_cache:  # the term reads the running value itself: a recurrence
                raise Bail(f"the running sum `{self.body.args[1 + j].name}` depends on itself")
            self.scan_cache[(j, "pending")] = None
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
            if v.op not in ACCUMULATING_OPS or v.graph is not self.body or len(v.operands) != 2:
                continue
            for r in v.operands if v.op not in ("sub", "inplace") else v.operands[:1]:
                if r.op == "getitem" and r.graph is self.body and r.operands[0] is s.operands[0]:
                    break
            else:
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
        if vi.kind == "UPD" and vi.j == j and vi.upd == "argbest":
            self.features.add("reduction")
            return self.arg_best(vi, init)
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
        kinds = P.unique_probes(vi.probes)
        if len({P.is_py_scalar(p) for p in kinds}) > 1 or len({P.dtype_of(p) for p in kinds}) > 1:
            raise Bail(f"the type of the last `{self.body.args[1 + j].name}` depends on the branch its "
                       "iteration took")
        last = self.s.getitem(vi.node, [-1], cse=False)
        probe = vi.probe
        if P.is_py_scalar(probe):
            last = self.s.op({bool: "bool", int: "int", float: "float"}.get(type(probe), "float"), [last])
        return last

    def arg_best(self, vi: VI, init: Node) -> Node:
        """`k` of `if t > m: m = t; k = w`: w where t first reaches its maximum, if above m's start.

        Strict `>` (`<`) keeps the first of equal maxima; NaN terms never win, as in the loop.
        """
        cmp = vi.mask                       # the CMP value: term t against the running best m
        t, w = cmp.term, vi.term
        if not t.varying or P.rank_of(t.probe) or P.rank_of(w.probe) or len(w.probes) != 1:
            raise Bail("an argmax over arrays")
        m0 = self.loop.operands[3 + cmp.j]
        k_probes = self.probes_of_outer(init)
        if not k_probes or not all(P.same_type(p, w.probe) or (P.is_py_scalar(p) and type(p) is type(w.probe))
                                   for p in k_probes):
            raise Bail(f"`{vi.text}` would change type where the maximum is found")
        dt = P.dtype_of(t.probe)
        is_max = cmp.upd == "gt"
        red = ("nanmax" if is_max else "nanmin") if dt.kind in "fc" else ("max" if is_max else "min")
        terms = self.value(t)
        best = self.reduced(red, terms)
        where_best = self.s.op("argmax", [self.s.op("eq", [terms, best])])
        if w.kind == "A":       # the index itself (or an affine function of it): no gather needed
            c, rest = w.aff.coef(K), w.aff.without(K)
            pick = where_best if c == 1 else self.s.op("mul", [where_best, self.s.const(c)])
            if not rest.is_const or rest.const:
                pick = self.s.op("add", [pick, self.materialize(rest)])
        elif w.varying:
            pick = self.s.getitem(self.value(w), [OperandRef(1)], [where_best], cse=False)
        else:
            pick = self.value(w)
        better = self.s.op("gt" if is_max else "lt", [best, self.s.ext(m0)])
        chosen = self.s.op("where", [better, pick, self.s.ext(init)])
        probe = w.probe
        if P.is_py_scalar(probe):
            return self.s.op({bool: "bool", int: "int", float: "float"}[type(probe)], [chosen])
        return self.s.op("getitem", [chosen], {"index": Index(())})   # the NumPy scalar in a 0-d array

    def reduced(self, op: str, terms: Node, attrs: Optional[dict] = None) -> Node:
        """`np.<op>(terms)`, built once (a running maximum and its argmax share it)."""
        key = (op, terms.id, repr(attrs or {}))
        node = self.reductions.get(key)
        if node is None:
            node = self.reductions[key] = self.s.op(op, [terms], attrs or {})
        return node

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
                fn = lambda a, b, inplace=OPS[kind].inplace_fn: inplace(a.copy(), b)  # noqa: E731
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
            selected = None
            if upd.mask is not None:
                m = self.value(upd.mask)
                if upd.mask_neg:
                    m = self.s.op("logical_not", [m])
                selected = m
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
            if (selected is not None or self.trip is None) and any(not P.same_type(p, p1) for p in inits):
                # `s = 0.0; if c: s += x[i]`: s stays a Python float until an element is added
                if rank:
                    raise Bail(f"the type of `{upd.text}` depends on whether any element is added")
                if selected is not None:
                    added = self.s.op("any", [selected])
                else:
                    added = self.s.op("gt", [self.materialize(self.trip_aff), self.s.const(0)])
                result = self.s.choose(added, result, init)
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
            red = ("nanmax" if is_float else "max") if is_max else ("nanmin" if is_float else "min")
        else:
            red = "max" if is_max else "min"
        if self.trip is None:    # a run-time range may be empty: no ValueError, and the loop's init
            fill = _extreme_identity(dt, is_max)
            if fill is None:
                raise Bail(f"a max/min of {dt} over a range that may be empty")
            attrs["initial"] = fill
        total = self.reduced(red, terms, attrs)
        if base_kind in ("pymax", "pymin") and P.is_py_scalar(tprobe) and type(tprobe) in (int, float):
            total = self.s.op(type(tprobe).__name__, [total])   # max(m, math.sqrt(x[i])) is a Python float
        if base_kind in ("pymax", "pymin"):
            py = "py_max" if is_max else "py_min"
            pair = [total, init] if kind.endswith("_r") else [init, total]
            result, probe = self.s.op(py, pair), tprobe
        else:
            ufunc = {"maximum": "maximum", "minimum": "minimum", "fmax": "fmax", "fmin": "fmin"}[base_kind]
            result = self.s.op(ufunc, [init, total])
            probe = self.checked(OPS[ufunc], [init_probe, tprobe], {})
        if self.trip is None:    # no iteration: the value before the loop, as it was
            ran = self.s.op("gt", [self.materialize(self.trip_aff), self.s.const(0)])
            result = self.s.choose(ran, result, init)
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
        self.s.g.erase(terms)
        return node

