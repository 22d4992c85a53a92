"""Node attributes: which describe the node and which are keyword arguments of its op.

`np.sum(x, axis=0)` is `sum(x) {axis=0}`: its attributes are the call's keywords. A few attributes
describe the node instead, and every place that turns attributes into keywords (the interpreter,
the shape rules, the code generators, the vectorizer's probes) leaves them out by asking here.
"""

from __future__ import annotations

DESCRIPTIVE_ATTRS = {
    "kw": "the names of the keyword operands (their values are operands, not attributes)",
    "fn": "the callee of a `call` node",
    "out": "memory planning's `out=` operand (the result is written into that operand's buffer)",
    "index": "the index of `getitem`/`setitem`/`add_at`, the position of `tuple_get`",
    "op": "the operator of an `inplace` node",
    "quiet": "Python float arithmetic computed on arrays by the vectorizer: overflow and invalid "
             "values are silent, as they are for Python floats (run under np.errstate)",
}


def keyword_attrs(attrs: dict) -> dict:
    """The attributes that are keyword arguments of the node's op."""
    return {k: v for k, v in attrs.items() if k not in DESCRIPTIVE_ATTRS}


def is_quiet(attrs: dict) -> bool:
    """Must the op run with floating-point overflow and invalid-value warnings off?"""
    return bool(attrs.get("quiet"))


QUIET_ERRSTATE = {"over": "ignore", "invalid": "ignore"}   # what Python floats never warn about
