"""Loop-carried dependence test: may two accesses of one array meet at different iterations?

NOTE [vectorization order]: vectorizing a loop runs each statement for all iterations before
the next statement, where the loop ran all statements of one iteration before the next
iteration. For two accesses A (earlier in the vectorized program) and B (later) of the same
array, at least one a write, that reorders exactly the pairs where B at an earlier iteration k'
and A at a later iteration k > k' touch the same element; one write access (a slice
assignment) must also never touch an element twice. `conflict` decides whether such a pair of
iterations exists, conservatively: True unless it proves there is none.

Each access is, per array axis, a `Point` (one affine index), a `Span` (a slice: start + step*u
for 0 <= u < count) or `ANY` (not analysable). Indices are affine in the iteration counter `K`
(iteration k of `range(start, stop, step)` has i = start + step*k) and in loop-invariant
symbols; the question becomes integer feasibility of a small linear system

    k, k' in [0, T);  k' <= k - 1;  0 <= u < count;  loc_A(k, u) == loc_B(k', w) on every axis

which `feasible` answers by exact elimination of equalities with a unit coefficient, the GCD
test on the others, and Fourier-Motzkin elimination with integer tightening (an over-
approximation of the integer solutions, so "infeasible" is always right).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from math import gcd
from typing import Any, Optional

from .affine import Affine, Symbol

K = Symbol("k")          # the iteration counter of the loop under test


@dataclass(frozen=True)
class Point:
    expr: Affine


@dataclass(frozen=True)
class Span:
    start: Affine
    count: Optional[Affine]   # None: unknown length
    step: int = 1


class _Any:
    def __repr__(self) -> str:
        return "ANY"


ANY = _Any()


@dataclass
class Access:
    array: Any                 # the array's identity (a graph node)
    write: bool
    pos: int                   # order in the vectorized program
    dims: tuple                # Point | Span | ANY per axis (or ANY alone: the whole array)
    label: str = ""            # for messages: "out[i - 1]"
    line: Optional[int] = None
    extra: dict = field(default_factory=dict)


def conflict(a: Access, b: Access, trip: Optional[int]) -> bool:
    """May `a` at iteration k and `b` at an earlier iteration k' < k touch the same element?

    `trip` is the loop's trip count when known (None: unbounded). For `a is b` this is "does
    the access touch some element at two iterations".
    """
    if trip is not None and trip <= 1:
        return False
    system = _System()
    k, k2 = system.var(), system.var()
    system.ge({k: 1}, 0)
    system.ge({k: 1, k2: -1}, -1)          # k' <= k - 1
    system.ge({k2: 1}, 0)
    if trip is not None:
        system.ge({k: -1}, trip - 1)        # k <= T - 1
    dims_a, dims_b = _dims(a), _dims(b)
    if dims_a is None or dims_b is None or len(dims_a) != len(dims_b):
        return True
    symbols: dict = {}   # id(symbol) -> its solver variable: one unknown integer, the same in both iterations
    for da, db in zip(dims_a, dims_b):
        if da is ANY or db is ANY:
            continue
        loc_a = _location(system, da, k, symbols)
        loc_b = _location(system, db, k2, symbols)
        (coefs_a, const_a, _), (coefs_b, const_b, _) = loc_a, loc_b
        coefs = dict(coefs_a)
        for v, c in coefs_b.items():
            coefs[v] = coefs.get(v, 0) - c
        system.eq(coefs, const_a - const_b)
    return system.feasible()


def _dims(access: Access):
    if len(access.dims) == 1 and access.dims[0] is ANY and access.extra.get("whole"):
        return None
    return access.dims


def _location(system: "_System", dim, k, symbols: dict):
    """(coefficients over solver variables, constant, ()) of an axis index. Run-time symbols
    (enclosing loop indices, lengths) are solver variables too: unknown integers, each the same
    wherever it appears, so `x[i, :i]` and `x[i, i + k]` are told apart."""
    if isinstance(dim, Point):
        expr, extra = dim.expr, {}
    else:
        u = system.var()
        system.ge({u: 1}, 0)
        if dim.count is not None:  # u <= count - 1 (count may depend on k: a triangular slice)
            coefs, cconst, _ = _split(dim.count, k, system, symbols)
            coefs[u] = coefs.get(u, 0) - 1
            system.ge(coefs, cconst - 1)
        expr, extra = dim.start, {u: dim.step}
    coefs, const, _ = _split(expr, k, system, symbols)
    for v, c in extra.items():
        coefs[v] = coefs.get(v, 0) + c
    return coefs, const, ()


def _split(expr: Affine, k, system: "_System", symbols: dict) -> tuple:
    coefs = {k: expr.coef(K)} if expr.coef(K) else {}
    for key, c in expr.terms:
        if key is not K:
            var = symbols.get(id(key))
            if var is None:
                var = symbols[id(key)] = system.var()
            coefs[var] = coefs.get(var, 0) + c
    return coefs, expr.const, ()


class _System:
    """Linear equalities and inequalities (`sum(c*x) + const == 0` / `>= 0`) over integers."""

    MAX_CONSTRAINTS = 400

    def __init__(self) -> None:
        self._n = 0
        self.eqs: list[tuple[dict, int]] = []
        self.ges: list[tuple[dict, int]] = []

    def var(self) -> int:
        self._n += 1
        return self._n

    def eq(self, coefs: dict, const: int) -> None:
        self.eqs.append(({v: c for v, c in coefs.items() if c}, const))

    def ge(self, coefs: dict, const: int) -> None:
        self.ges.append(({v: c for v, c in coefs.items() if c}, const))

    def feasible(self) -> bool:
        return feasible(self.eqs, self.ges, self.MAX_CONSTRAINTS)


def feasible(eqs: list, ges: list, limit: int = 400) -> bool:
    """Might `eqs` (== 0) and `ges` (>= 0) have an integer solution? False only when proven not."""
    eqs = [(dict(c), k) for c, k in eqs]
    ges = [(dict(c), k) for c, k in ges]
    while eqs:
        coefs, const = eqs.pop()
        if not coefs:
            if const != 0:
                return False
            continue
        g = 0
        for c in coefs.values():
            g = gcd(g, abs(c))
        if const % g:
            return False  # GCD test: no integer solution
        coefs = {v: c // g for v, c in coefs.items()}
        const //= g
        unit = next((v for v, c in coefs.items() if abs(c) == 1), None)
        if unit is None:
            ges.append((coefs, const))
            ges.append(({v: -c for v, c in coefs.items()}, -const))
            continue
        # unit*x + rest + const == 0  ->  x = -(rest + const) / unit
        sign = coefs[unit]
        repl = {v: -c * sign for v, c in coefs.items() if v is not unit}
        repl_const = -const * sign
        eqs = [_substitute(c, k, unit, repl, repl_const) for c, k in eqs]
        ges = [_substitute(c, k, unit, repl, repl_const) for c, k in ges]
    return _fourier_motzkin(ges, limit)


def _substitute(coefs: dict, const: int, var, repl: dict, repl_const: int) -> tuple:
    c = coefs.get(var, 0)
    if not c:
        return coefs, const
    out = {v: x for v, x in coefs.items() if v != var}
    for v, x in repl.items():
        out[v] = out.get(v, 0) + c * x
    return {v: x for v, x in out.items() if x}, const + c * repl_const


def _tighten(coefs: dict, const: int) -> tuple:
    g = 0
    for c in coefs.values():
        g = gcd(g, abs(c))
    if g > 1:
        return {v: c // g for v, c in coefs.items()}, const // g   # floor: integer tightening
    return coefs, const


def _fourier_motzkin(ges: list, limit: int) -> bool:
    rows = set()
    for coefs, const in ges:
        coefs, const = _tighten(coefs, const)
        if not coefs:
            if const < 0:
                return False
            continue
        rows.add((tuple(sorted(coefs.items())), const))
    while rows:
        variables = {v for coefs, _ in rows for v, _ in coefs}
        if not variables:
            break
        # eliminate the variable that creates the fewest new rows
        def cost(v):
            pos = sum(1 for coefs, _ in rows if dict(coefs).get(v, 0) > 0)
            neg = sum(1 for coefs, _ in rows if dict(coefs).get(v, 0) < 0)
            return pos * neg - pos - neg
        var = min(variables, key=cost)
        pos, neg, rest = [], [], set()
        for row in rows:
            c = dict(row[0]).get(var, 0)
            (pos if c > 0 else neg if c < 0 else rest).append(row) if c else rest.add(row)
        for (pc, pk), (nc, nk) in itertools.product(pos, neg):
            pd, nd = dict(pc), dict(nc)
            a, b = pd[var], -nd[var]
            coefs = {}
            for v, c in itertools.chain(((v, c * b) for v, c in pd.items()), ((v, c * a) for v, c in nd.items())):
                if v != var:
                    coefs[v] = coefs.get(v, 0) + c
            coefs = {v: c for v, c in coefs.items() if c}
            const = pk * b + nk * a
            coefs, const = _tighten(coefs, const)
            if not coefs:
                if const < 0:
                    return False
                continue
            rest.add((tuple(sorted(coefs.items())), const))
        if len(rest) > limit:
            return True  # too big to decide: assume a dependence
        rows = rest
    return True
