"""transpiler/lower/names.py: a global or closure array is a parameter read at each call; a number is folded."""

import numpy as np
import pytest

from lowering_testing import assert_eager_equals_compiled, assert_lowers_to

X3 = np.arange(3.0)
W = np.ones(3)
SCALE = 2.0


def global_array(x):
    return x + W * SCALE


def _make_closure():
    offset = np.full(3, 0.5)

    def closure(x):
        return x + offset
    return closure


closure = _make_closure()


def test_global_array_is_a_parameter_and_a_global_number_is_folded():
    assert_lowers_to(global_array, (X3,), """
        graph global_array(%x: f64[3]) -> f64[3]
          param %W: f64[3] = globals['W']
          %0 = mul(%W, 2.0) : f64[3]
          %1 = add(%x, %0) : f64[3]
          return %1
    """)


def test_closure_array_is_read_through_its_cell():
    assert_lowers_to(closure, (X3,), """
        graph _make_closure.<locals>.closure(%x: f64[3]) -> f64[3]
          param %offset: f64[3] = closure['offset']
          %0 = add(%x, %offset) : f64[3]
          return %0
    """)


@pytest.mark.parametrize("fn", [global_array, closure])
def test_eager_equals_compiled(fn):
    assert_eager_equals_compiled(fn, X3)
