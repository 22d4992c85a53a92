"""transpiler/lower/{calls,call_nodes,builtin_calls,methods,inline}.py: what a call becomes.

A NumPy function in the op table is that op; an array method the matching op; another NumPy
function an opaque `call` node; a Python function is inlined; a builtin on compile-time values runs now.
"""

import numpy as np
import pytest

from lowering_testing import assert_eager_equals_compiled, assert_lowers_to

X3 = np.arange(3.0)


def table_op(x):
    return np.exp(x)


def method(x):
    return x.reshape(3, 1).sum(axis=0)


def _helper(v, k=2.0):
    return v * k


def inlined(x):
    return _helper(x) + _helper(x, 3.0)


def static_builtins(x):
    return len(x) + x.shape[0]


def opaque(x):
    return np.linalg.norm(x)


def test_numpy_function_in_the_op_table_is_its_op():
    assert_lowers_to(table_op, (X3,), """
        graph table_op(%x: f64[3]) -> f64[3]
          %0 = exp(%x) : f64[3]
          return %0
    """)


def test_array_methods_are_ops_with_compile_time_keywords_as_attributes():
    assert_lowers_to(method, (X3,), """
        graph method(%x: f64[3]) -> f64[1]
          %0 = tuple(3, 1) : tuple(int, int)
          %1 = reshape(%x, %0) : f64[3,1]
          %2 = sum(%1) {axis=0} : f64[1]
          return %2
    """)


def test_python_helper_is_inlined_with_its_defaults():
    assert_lowers_to(inlined, (X3,), """
        graph inlined(%x: f64[3]) -> f64[3]
          %0 = mul(%x, 2.0) : f64[3]
          %1 = mul(%x, 3.0) : f64[3]
          %2 = add(%0, %1) : f64[3]
          return %2
    """)


def test_builtins_of_a_known_shape_are_compile_time():
    assert_lowers_to(static_builtins, (X3,), """
        graph static_builtins(%x: f64[3]) -> int
          return 6
    """)


def test_numpy_function_outside_the_table_is_an_opaque_call():
    assert_lowers_to(opaque, (X3,), """
        graph opaque(%x: f64[3]) -> object
          %0 = call(%x) {fn='numpy.linalg.norm'} : object
          return %0
    """)


@pytest.mark.parametrize("fn", [table_op, method, inlined, static_builtins, opaque])
def test_eager_equals_compiled(fn):
    assert_eager_equals_compiled(fn, X3)


def function_reshape(x, n):
    return np.reshape(x, (n, 1)).sum(axis=0)


def reshape_forms(x, rows):
    # positional on an array: the op; keywords, a list: NumPy's own call, run as it is
    return np.reshape(x, (rows, -1)), np.reshape(x, (-1, rows), order="F"), np.reshape([1.0, 2.0], (2, 1))


def test_np_reshape_of_an_array_is_the_reshape_op():
    assert_lowers_to(function_reshape, (X3, 3), """
        graph function_reshape(%x: f64[3], %n: int) -> f64[1]
          %0 = tuple(3, 1) : tuple(int, int)
          %1 = reshape(%x, %0) : f64[3,1]
          %2 = sum(%1) {axis=0} : f64[1]
          return %2
    """)


@pytest.mark.parametrize("rows", [1, 2, 3, 6])
def test_np_reshape_in_every_form_equals_eager(rows):
    assert_eager_equals_compiled(reshape_forms, np.arange(6.0), rows)
