"""transpiler/lower/assign.py: `=`, unpacking, augmented assignment, item stores."""

import numpy as np
import pytest

from lowering_testing import assert_eager_equals_compiled, assert_lowers_to

X3 = np.arange(3.0)


def unpack(x):
    a, b = x, 2
    return a * b


def aug_in_place(x):
    y = x
    y += 1.0      # in place: `x` sees it, as in Python
    return x


def store_item(x, k):
    x[k] = x[0] + 1.0
    return x


def starred(x):
    first, *rest = (x, 2.0, 3.0)
    return first * rest[0] + rest[1]


def too_many_values(x):
    a, b = (x, x, x)
    return a


def test_unpacking_binds_each_name_no_node_for_the_tuple():
    assert_lowers_to(unpack, (X3,), """
        graph unpack(%x: f64[3]) -> f64[3]
          %0 = mul(%x, 2) : f64[3]
          return %0
    """)


def test_augmented_assignment_of_an_array_is_in_place():
    assert_lowers_to(aug_in_place, (X3,), """
        graph aug_in_place(%x: f64[3]) -> f64[3]
          %y = inplace(%x, 1.0) {op='add'} : f64[3]
          return %x
    """)


def test_item_store_is_an_ordered_setitem():
    assert_lowers_to(store_item, (X3, 1), """
        graph store_item(%x: f64[3], %k: int) -> f64[3]
          %0 = getitem(%x) {index=[0]} : f64[]
          %1 = add(%0, 1.0) : f64[]
          %2 = setitem(%x, %1) {index=[1]} : none
          return %x
    """)


def test_starred_target_takes_the_middle_items():
    assert_lowers_to(starred, (X3,), """
        graph starred(%x: f64[3]) -> f64[3]
          %0 = mul(%x, 2.0) : f64[3]
          %1 = add(%0, 3.0) : f64[3]
          return %1
    """)


@pytest.mark.parametrize("fn,args", [(unpack, (X3,)), (aug_in_place, (X3,)), (store_item, (X3, 2)), (starred, (X3,))])
def test_eager_equals_compiled(fn, args):
    assert_eager_equals_compiled(fn, *args)


def test_wrong_count_raises_what_python_raises_when_it_runs():
    import graphjit
    with pytest.raises(ValueError) as eager:
        too_many_values(X3)
    with pytest.raises(ValueError) as compiled:
        graphjit.jit(too_many_values)(X3)
    assert str(compiled.value) == str(eager.value)
