"""transpiler/lower/simple.py: `assert`, `raise`, `return`, nested `def` and the other one-line statements."""

import numpy as np
import pytest

import graphjit
from lowering_testing import assert_eager_equals_compiled, assert_lowers_to, diagnostics

X3 = np.arange(3.0)
TOTAL = 0


def asserts(x):
    assert x.shape[0] == 3          # decided now: no node
    assert x[0] >= 0, "negative"
    return x


def raises(x, n):
    if n > 2:
        raise ValueError("too many", n)
    return x


def nested_def(x):
    def twice(v):
        return v * 2.0
    return twice(x)


def declares_global(x):
    global TOTAL
    TOTAL = TOTAL + 1
    return x


def test_assert_on_a_runtime_value_is_an_assert_node():
    assert_lowers_to(asserts, (X3,), """
        graph asserts(%x: f64[3]) -> f64[3]
          %0 = getitem(%x) {index=[0]} : f64[]
          %1 = ge(%0, 0) : bool[]
          %2 = assert(%1, 'negative') : none
          return %x
    """)


def test_raise_is_an_ordered_effect_that_ends_the_path():
    assert_lowers_to(raises, (X3, 3), """
        graph raises(%x: f64[3], %n: int) -> none
          %0 = raise('builtins.ValueError', 'too many', 3) : none
          return None
    """)


def test_nested_def_is_inlined_where_it_is_called():
    assert_lowers_to(nested_def, (X3,), """
        graph nested_def(%x: f64[3]) -> f64[3]
          %0 = mul(%x, 2.0) : f64[3]
          return %0
    """)


def test_global_statement_is_rejected_at_strict():
    [(code, severity, message)] = diagnostics(declares_global, X3, level="STRICT")
    assert severity == "error" and "global" in message


def test_eager_equals_compiled():
    assert_eager_equals_compiled(asserts, X3)
    assert_eager_equals_compiled(nested_def, X3)
    assert_eager_equals_compiled(raises, X3, 1)
    with pytest.raises(ValueError, match="too many"):
        graphjit.jit(raises)(X3, 3)
    with pytest.raises(AssertionError, match="negative"):
        graphjit.jit(asserts)(-X3 - 1)
