"""`a + b` of compile-time sequences (transpiler/lower/expressions.py, `binary`): a list or tuple the
front end knows the structure of stays a compile-time sequence when concatenated with another, even
when one side is a plain compile-time list (`[]`) and the other holds run-time values, so a loop
over the result unrolls (repros/loopbug.py: a loop-carried list through an unrolled loop that runs
zero times once used to become a run-time list that the next loop could not go over)."""

import numpy as np
import pytest

import graphjit as ms

from lowering_testing import assert_eager_equals_compiled, assert_lowers_to

LEVELS = ["O0", "O1", "O2"]
MODES = ["auto", "no_sink"]


class Box:
    """A tree of arrays whose `items()` concatenates its own list with its children's."""

    def __init__(self, arrays, subs):
        self.arrays = arrays
        self.subs = subs

    def items(self):
        found = [self.arrays[k] for k in range(len(self.arrays))]
        for sub in self.subs:
            found = found + sub.items()
        return found


LEAF = Box((np.ones(2),), ())
TOP = Box((), (Box((), ()), LEAF))


def sum_tree(x):
    s = x.sum()
    for p in TOP.items():
        s = s + p.sum()
    return s


def empty_plus_items(x):
    found = []
    for part in [x, x * 2]:
        found = found + [part]
    total = x * 0
    for p in found:
        total = total + p
    return total


def tuple_plus_items(x):
    t = () + (x,) + ()
    return t[0] * len(t)


def list_plus_tuple_raises(x):
    return [] + (x,)


@pytest.mark.parametrize("exec_mode", MODES)
@pytest.mark.parametrize("level", LEVELS)
def test_a_list_carried_through_an_empty_unrolled_loop_stays_compile_time(level, exec_mode):
    x = np.ones(3)
    jitted = ms.jit(sum_tree, jit_level=level, exec_mode=exec_mode)
    assert jitted(x) == sum_tree(x)
    LEAF.arrays[0][...] = 4.0          # the leaf's array is read at call time
    try:
        assert jitted(x) == sum_tree(x)
    finally:
        LEAF.arrays[0][...] = 1.0


def test_concatenation_is_a_compile_time_sequence():
    assert_lowers_to(tuple_plus_items, (np.ones(2),), """
        graph tuple_plus_items(%x: f64[2]) -> f64[2]
          %0 = mul(%x, 1) : f64[2]
          return %0
    """)


@pytest.mark.parametrize("fn", [empty_plus_items, tuple_plus_items, list_plus_tuple_raises])
def test_eager_equals_compiled(fn):
    x = np.arange(3.0)
    if fn is list_plus_tuple_raises:
        with pytest.raises(TypeError):
            fn(x)
        with pytest.raises(TypeError):
            ms.jit(fn)(x)
        return
    assert_eager_equals_compiled(fn, x)
