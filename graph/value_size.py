"""How big a value, or the result of an operator on values, gets: estimated before anything is computed.

Constant folding (graph/passes/fold_constants.py) and the static view of a file read without running
it (transpiler/static_pure.py) ask `operation_size` before they compute `10**10**10`, `[0] * 10**10`
or `"a" * 10**12`, and leave past `LIMITS` what eager Python would compute at run time.
"""

from __future__ import annotations

import operator
import re
from typing import Optional

import numpy as np

LIMITS = {
    "int_bits": 1 << 16,        # an integer of at most 65 536 bits (19 729 decimal digits)
    "items": 1 << 20,           # a string, list, tuple, dict, range consumed, or a literal's total items
    "elements": 1 << 22,        # an array built or computed: 4 Mi elements (32 MiB of float64)
    "depth": 64,                # nesting of containers in a literal
    "budget": 1 << 24,          # items computed in all while one file is read (16 Mi)
}


def range_length(value: range) -> Optional[int]:
    try:
        return len(value)
    except OverflowError:
        return None


def bits(value) -> int:
    if isinstance(value, bool):
        return 1
    if isinstance(value, int):
        return value.bit_length()
    return 64


def length(value) -> int:
    if isinstance(value, (str, bytes, tuple, list, dict, set, frozenset)):
        return len(value)
    if isinstance(value, range):
        return range_length(value) or LIMITS["items"] + 1
    if isinstance(value, np.ndarray):
        return value.size
    return 1


def power_bits(base, exponent) -> int:
    """Bits of `base ** exponent` (an estimate; exact enough to refuse `10**10**10`)."""
    if isinstance(base, int) and isinstance(exponent, int) and not isinstance(base, bool) and exponent > 0:
        return max(1, bits(base)) * exponent if abs(base) > 1 else 1
    return 1


def operation_size(fn, left, right) -> int:
    """The size of `left <op> right`, in the unit the limits use (bits for integers, items otherwise)."""
    if fn in (operator.pow, pow):
        return power_bits(left, right)
    if fn is operator.lshift and isinstance(left, int) and isinstance(right, int) and right > 0:
        return bits(left) + right
    if fn is operator.mul:
        if isinstance(left, (str, bytes, tuple, list)) and isinstance(right, int):
            return len(left) * max(right, 0)
        if isinstance(right, (str, bytes, tuple, list)) and isinstance(left, int):
            return len(right) * max(left, 0)
        if isinstance(left, int) and isinstance(right, int):
            return bits(left) + bits(right)
    if fn is operator.add and isinstance(left, (str, bytes, tuple, list)):
        return length(left) + length(right)
    if fn is operator.mod and isinstance(left, (str, bytes)):
        return LIMITS["items"] + 1 if wide_format(left) else len(left) + length(right) * 64
    if isinstance(left, np.ndarray) or isinstance(right, np.ndarray):
        return broadcast_size([left, right])
    return 1


_WIDE = re.compile(r"\d{7,}|\*")


def wide_format(template) -> bool:
    """A format template or spec with a field width of a million or more (or `*`): refused."""
    text = template.decode("latin-1") if isinstance(template, bytes) else str(template)
    return bool(_WIDE.search(text))


def broadcast_size(values) -> int:
    shapes = [np.shape(v) for v in values if isinstance(v, (np.ndarray, np.generic, tuple, list))]
    try:
        return int(np.prod(np.broadcast_shapes(*shapes), dtype=np.float64)) if shapes else 1
    except ValueError:
        return max((int(np.prod(s, dtype=np.float64)) for s in shapes), default=1)


def too_big(fn, left, right) -> Optional[str]:
    """Why `fn(left, right)` is not computed now (its estimated result is past `LIMITS`), else None."""
    size = operation_size(fn, left, right)
    numbers = isinstance(left, int) and isinstance(right, int)
    limit = LIMITS["int_bits"] if numbers else LIMITS["elements"] if (
        isinstance(left, np.ndarray) or isinstance(right, np.ndarray)) else LIMITS["items"]
    if size > limit:
        return f"its result would be too big to compute without running the file (about {size:,} " \
               f"{'bits' if numbers else 'items'}, limit {limit:,})"
    return None


def operands_too_big(values) -> bool:
    """An integer past `int_bits` bits or a string or sequence past `items` items among `values`."""
    for value in values:
        if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > LIMITS["int_bits"]:
            return True
        if isinstance(value, (str, bytes, tuple, list)) and len(value) > LIMITS["items"]:
            return True
    return False
