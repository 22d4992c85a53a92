"""Affine integer expressions `c0 + c1*s1 + ...` over loop indices and loop-invariant symbols.

A symbol is any hashable key: a graph `Node` (a loop index, a run-time integer computed outside
the loop) or a marker object (the iteration counter of the loop being vectorized). Symbols have
value ranges where they can be found (the bounds of an enclosing `for_range`), which is what
proves an index stays inside an array:

    >>> i = Symbol("i"); a = Affine.of(i) * 2 + 1         # 2*i + 1
    >>> a.interval({i: (0, 9)})
    (1, 19)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional

INF = math.inf
Interval = tuple  # (lo, hi) with -inf/inf for unbounded ends


class Symbol:
    """A named marker usable as an affine key (the iteration counter k of a loop, in tests)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


def _key_order(key: Any) -> tuple:
    return (getattr(key, "id", -1), id(key))


@dataclass(frozen=True)
class Affine:
    """`const + sum(coef * key)`; terms are sorted and never hold a zero coefficient."""

    terms: tuple = ()   # ((key, coef), ...)
    const: int = 0

    # --- construction ----------------------------------------------------------------------
    @staticmethod
    def constant(value: int) -> "Affine":
        return Affine((), int(value))

    @staticmethod
    def of(key: Any, coef: int = 1) -> "Affine":
        return Affine(((key, int(coef)),) if coef else (), 0)

    @staticmethod
    def _make(coefs: dict, const: int) -> "Affine":
        items = sorted(((k, c) for k, c in coefs.items() if c), key=lambda kc: _key_order(kc[0]))
        return Affine(tuple(items), int(const))

    def as_dict(self) -> dict:
        return dict(self.terms)

    # --- arithmetic ------------------------------------------------------------------------
    def __add__(self, other) -> "Affine":
        other = _lift(other)
        coefs = self.as_dict()
        for k, c in other.terms:
            coefs[k] = coefs.get(k, 0) + c
        return Affine._make(coefs, self.const + other.const)

    __radd__ = __add__

    def __neg__(self) -> "Affine":
        return Affine(tuple((k, -c) for k, c in self.terms), -self.const)

    def __sub__(self, other) -> "Affine":
        return self + (-_lift(other))

    def __rsub__(self, other) -> "Affine":
        return _lift(other) - self

    def __mul__(self, k: int) -> "Affine":
        if not isinstance(k, int):
            return NotImplemented
        if k == 0:
            return Affine()
        return Affine(tuple((key, c * k) for key, c in self.terms), self.const * k)

    __rmul__ = __mul__

    # --- queries ---------------------------------------------------------------------------
    @property
    def is_const(self) -> bool:
        return not self.terms

    def coef(self, key: Any) -> int:
        for k, c in self.terms:
            if k is key:
                return c
        return 0

    def keys(self) -> list:
        return [k for k, _ in self.terms]

    def without(self, key: Any) -> "Affine":
        return Affine(tuple((k, c) for k, c in self.terms if k is not key), self.const)

    def subst(self, key: Any, value: "Affine") -> "Affine":
        c = self.coef(key)
        return self.without(key) + value * c if c else self

    def interval(self, ranges: Mapping[Any, Interval] | Callable[[Any], Optional[Interval]]) -> Interval:
        """Bounds over the symbols' ranges; a symbol without a range is unbounded."""
        get = ranges if callable(ranges) else (lambda k: ranges.get(k))
        lo = hi = self.const
        for k, c in self.terms:
            r = get(k) or (-INF, INF)
            a, b = c * r[0], c * r[1]   # c != 0, so an infinite end stays infinite
            lo += min(a, b)
            hi += max(a, b)
        return (lo, hi)

    def __str__(self) -> str:
        parts = []
        for k, c in self.terms:
            name = getattr(k, "name", None) or repr(k)
            parts.append(name if c == 1 else f"-{name}" if c == -1 else f"{c}*{name}")
        text = " + ".join(parts).replace("+ -", "- ")
        if self.const or not parts:
            text = f"{text} {'+' if self.const >= 0 else '-'} {abs(self.const)}" if parts else str(self.const)
        return text


def _lift(value) -> Affine:
    if isinstance(value, Affine):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return Affine.constant(value)
    raise TypeError(f"not affine: {value!r}")


def range_interval(start: Interval, stop: Interval, step: int) -> Optional[Interval]:
    """Values an index of `range(start, stop, step)` can take (None when the range is surely empty)."""
    if step > 0:
        lo, hi = start[0], stop[1] - 1
    else:
        lo, hi = stop[0] + 1, start[1]
    return (lo, hi) if lo <= hi else None
