"""Literals in graph text and generated code (graph/literals.py) read back as the same bits:
`format_literal` then `parse_literal` (graph text) and `eval` (generated code), for every float
and complex, signed zeros, infinities and NaN included; then a folded complex constant compiled at
every level against eager Python."""

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import graphjit
from graphjit.graph.literals import format_literal, parse_literal

from eager_vs_compiled import run_both


def same_bits(a: complex, b: complex) -> bool:
    def same(x, y):
        return (math.isnan(x) and math.isnan(y)) or (x == y and math.copysign(1.0, x) == math.copysign(1.0, y))
    return same(a.real, b.real) and same(a.imag, b.imag)


EVAL_NAMESPACE = {"nan": math.nan, "inf": math.inf, "complex": complex}


@given(st.complex_numbers(allow_nan=True, allow_infinity=True))
def test_a_complex_literal_reads_back_as_the_same_bits(value):
    text = format_literal(value)
    assert same_bits(parse_literal(text), value), text
    assert same_bits(complex(eval(text, dict(EVAL_NAMESPACE))), value), text


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_a_float_literal_reads_back_as_the_same_bits(value):
    text = format_literal(value)
    assert same_bits(complex(parse_literal(text)), complex(value)), text


@pytest.mark.parametrize("value, text", [
    (complex(0.0, -2.0), "complex(0.0, -2.0)"),   # repr '-2j' reads back with real -0.0
    (complex(-0.0, -2.0), "complex(-0.0, -2.0)"),  # repr '(-0-2j)' reads back with real +0.0
    (complex(1.0, 2.0), "(1+2j)"),
    (-2j, "complex(-0.0, -2.0)"),                 # -(2j): real part -0.0
])
def test_the_spelling_is_repr_where_repr_reads_back(value, text):
    assert format_literal(value) == text


def signed_zero(x):
    c = -2.0j * np.pi          # complex(0.0, -6.28...): its repr would read back as complex(-0.0, ...)
    d = complex(-0.0, -2.0)
    return math.copysign(1.0, c.real) * x, math.copysign(1.0, d.real) * x, np.arctan2(c.real, -1.0), c, d


@pytest.mark.parametrize("level", ["O0", "O1", "O2"])
@pytest.mark.parametrize("exec_mode", ["sink", "no_sink"])
def test_a_folded_complex_constant_keeps_the_sign_of_its_zero(level, exec_mode):
    jitted = run_both(signed_zero, (1.5,), jit_config=graphjit.JitConfig(jit_level=level, exec_mode=exec_mode))
    actual, expected = jitted(1.5), signed_zero(1.5)
    for a, e in zip(actual, expected):
        assert same_bits(complex(a), complex(e))
