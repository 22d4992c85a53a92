"""transpiler/lower/fallback.py: a statement the graph cannot express is a diagnostic, or at LAX a fallback block."""

import numpy as np
import pytest

from graphjit.graph.diagnostics import GraphjitFallbackWarning
from lowering_testing import assert_eager_equals_compiled, diagnostics, lowered_text

X3 = np.arange(3.0)


def with_try(x):
    try:
        y = x[0] / 1.0
    except ZeroDivisionError:
        y = 0.0
    return x * y


def test_at_lax_the_statement_is_a_fallback_block_reading_and_writing_names():
    with pytest.warns(GraphjitFallbackWarning, match=r"\[GJ301\] `try` is not supported"):
        text = lowered_text(with_try, X3)
    assert "%0 = fallback(%x) {code=\"def __graphjit_fallback__(x):\\n    try:" in text
    assert "reads=('x',), writes=('y',), returns=False, scope='globals'}" in text
    assert "%y = tuple_get(%0) {index=0} : object" in text


def test_at_strict_it_is_one_diagnostic_and_the_names_it_assigns_are_not_reported_again():
    assert diagnostics(with_try, X3, level="STRICT") == [("GJ301", "error", "`try` is not supported in a graph")]


def test_eager_equals_compiled():
    with pytest.warns(GraphjitFallbackWarning):
        assert_eager_equals_compiled(with_try, X3)
