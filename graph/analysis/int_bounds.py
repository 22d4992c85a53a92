"""Intervals of Python ints in a loop body, for graph/analysis/kernel_plan.py: the interval of an op's
result from its operands' intervals (`interval_of`), and the step of a loop-carried counter
(`counter_step`: `c += k` changes `c` by at most |k| per iteration, so it stays within trips * |k|
of its start). Intervals over-approximate: a value outside the interval never occurs.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..ir import Node


class NoBound(Exception):
    """The op's result on Python ints has no interval here."""


def interval_of(node: Node, name: str, args: list) -> tuple:
    """The interval of a Python-int result from its operands' intervals."""
    los = [a.lo for a in args]
    his = [a.hi for a in args]
    if name in ("add",):
        return los[0] + los[1], his[0] + his[1]
    if name == "sub":
        return los[0] - his[1], his[0] - los[1]
    if name == "mul":
        corners = [x * y for x in (los[0], his[0]) for y in (los[1], his[1])]
        return min(corners), max(corners)
    if name == "neg":
        return -his[0], -los[0]
    if name in ("pos", "int"):
        return los[0], his[0]
    if name == "py_abs":
        m = max(abs(los[0]), abs(his[0]))
        return (0 if los[0] <= 0 <= his[0] else min(abs(los[0]), abs(his[0]))), m
    if name in ("py_min", "py_max"):
        f = min if name == "py_min" else max
        return f(los), f(his)
    if name == "invert":
        return -his[0] - 1, -los[0] - 1
    if name in ("rshift", "lshift"):
        k = node.operands[1].value
        return (los[0] >> k, his[0] >> k) if name == "rshift" else (los[0] << k, his[0] << k)
    if name == "floordiv":
        c = node.operands[1].value
        return los[0] // c, his[0] // c
    if name == "mod":
        return 0, node.operands[1].value - 1
    if name in ("bitand", "bitor", "bitxor"):
        width = max(bit_length(los[0], his[0]), bit_length(los[1], his[1]))
        if min(los) >= 0:
            if name == "bitand":
                return 0, min(his)
            return 0, 2 ** width - 1
        if name == "bitand" and max(los) >= 0:
            return 0, max(h for l_, h in zip(los, his) if l_ >= 0)
        return -2 ** width, 2 ** width - 1
    if name in ("eq", "ne", "lt", "le", "gt", "ge", "not", "bool"):
        return 0, 1
    raise NoBound(f"`{name}` on Python ints has no bound")


def counter_step(out: Node, carried: Node) -> Optional[int]:
    """`c`, `c + k`, `c - k` (k a constant int) or a branch yielding those: the largest |k| by which the
    loop-carried int `c` changes per iteration, or None. Then |c - init| <= trips * |k|."""
    if out is carried:
        return 0
    name = out.attrs.get("op") if out.op == "inplace" else out.op
    if name in ("add", "sub") and len(out.operands) == 2:
        a, b = out.operands
        if b.op == "const" and type(b.value) is int and a is carried:
            return abs(b.value)
        if name == "add" and a.op == "const" and type(a.value) is int and b is carried:
            return abs(a.value)
        return None
    if out.op == "tuple_get" and out.operands[0].op == "if":
        branch = out.operands[0]
        steps = []
        for region in branch.regions:
            inner = next((a for a, o in zip(region.args, branch.operands[1:]) if o is carried), None)
            steps.append(counter_step(region.outputs[out.attrs["index"]], inner) if inner is not None else None)
        return None if None in steps else max(steps)
    return None


def bit_length(lo, hi) -> int:
    if lo in (-np.inf,) or hi in (np.inf,):
        return 64
    return max(int(abs(lo)).bit_length(), int(abs(hi)).bit_length())
