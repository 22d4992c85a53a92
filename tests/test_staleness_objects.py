"""Operators on compile-time objects of any class run at call time: the arrays their `__add__`,
`__neg__` or `__eq__` reach through attributes (however deep) may change between calls, and the
compiled function must see the change as eager Python does. Only immutable values are folded."""

import numpy as np
import pytest

import graphjit as ms


class Inner:
    def __init__(self, a):
        self.a = a


class Box:
    """Arrays two attributes down: an operator that reads them."""

    def __init__(self, a):
        self.inner = Inner(a)

    def __add__(self, other):
        return self.inner.a + other.inner.a

    def __neg__(self):
        return -self.inner.a

    def __lt__(self, other):
        return bool(self.inner.a.sum() < other.inner.a.sum())


b1, b2 = Box(np.ones(3)), Box(np.ones(3))


def through_globals(x):
    return (b1 + b2) * x + (-b1)


def through_arguments(p, q, x):
    return (p + q) * x if p < q else -p * x


LEVELS = ["O0", "O1", "O2"]


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("exec_mode", ["auto", "no_sink"])
def test_arrays_inside_objects_changed_between_calls(level, exec_mode):
    config = ms.JitConfig(jit_level=level, exec_mode=exec_mode)
    globals_fn, arguments_fn = ms.jit(through_globals, jit_config=config), ms.jit(through_arguments, jit_config=config)
    x = np.arange(3.0)
    for value in (1.0, 5.0, -2.0):
        b1.inner.a[:] = value          # in place: the same objects, other values
        np.testing.assert_array_equal(globals_fn(x), through_globals(x))
        np.testing.assert_array_equal(arguments_fn(b1, b2, x), through_arguments(b1, b2, x))
    b1.inner.a = np.full(3, 7.0)       # a new array in the attribute
    np.testing.assert_array_equal(globals_fn(x), through_globals(x))
    np.testing.assert_array_equal(arguments_fn(b1, b2, x), through_arguments(b1, b2, x))
    b1.inner.a = np.ones(3)


def test_literals_still_fold():
    """Immutable operands are computed at compile time: `(2, 3) + (4,)` is a constant in the graph."""
    def shape_of(x):
        return x.reshape((2, 3) + (1,))
    graph = str(ms.jit(shape_of).graph(np.zeros(6)))
    assert "add(" not in graph and "(2, 3, 1)" in graph
