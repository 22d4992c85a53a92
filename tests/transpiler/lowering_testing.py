"""Helpers for the front end's tests: source in, graph text (or diagnostics) out, and eager == compiled.

`assert_lowers_to(fn, args, text)` lowers `fn` for these arguments (no pass runs) and compares the
graph's text, source positions left out, with `text` (printing the actual text on failure, ready to
paste). `diagnostics(fn, *args, level=...)` lists what lowering reports at a `jit_syntax_level`.
`assert_eager_equals_compiled(fn, *args)` runs `fn` eagerly and compiled (generated NumPy code and
the interpreter) and checks results and argument mutation agree.
"""

from __future__ import annotations

import copy
import re
import textwrap

import numpy as np

import graphjit
from graphjit.transpiler.lower import lower_function

_SPAN = re.compile(r"\s+# \S+:\d+:\d+$")


def norm(text: str) -> str:
    return "\n".join(line.rstrip() for line in textwrap.dedent(text).strip("\n").splitlines()) + "\n"


def lowered_text(fn, *args, level: str = "LAX") -> str:
    """The graph `fn` lowers to for these arguments, before any pass, without source positions."""
    graph = lower_function(fn, args, {}, level=level).graph
    return "\n".join(_SPAN.sub("", line) for line in str(graph).splitlines()) + "\n"


def assert_lowers_to(fn, args: tuple, expected: str, level: str = "LAX") -> None:
    actual = lowered_text(fn, *args, level=level)
    assert actual == norm(expected), f"{fn.__name__} lowered to:\n{actual}"


def diagnostics(fn, *args, level: str = "STRICT") -> list:
    """(code, severity, message) of each problem lowering `fn` at `level` reports."""
    lowered = lower_function(fn, args, {}, level=level, collect=True)
    return [(d.code, d.severity, d.message) for d in lowered.diagnostics]


def assert_eager_equals_compiled(fn, *args) -> None:
    """Eager and compiled (generated code, interpreter): same result and type, same argument mutation."""
    for exec_mode in ("auto", "no_sink"):
        eager_args, compiled_args = copy.deepcopy(args), copy.deepcopy(args)
        expected = fn(*eager_args)
        actual = graphjit.jit(fn, exec_mode=exec_mode)(*compiled_args)
        np.testing.assert_equal(actual, expected)
        assert type(actual) is type(expected), (exec_mode, type(actual), type(expected))
        for a, e in zip(compiled_args, eager_args):
            np.testing.assert_equal(a, e)
