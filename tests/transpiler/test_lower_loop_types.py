"""transpiler/lower/loops.py and branches.py: the types of values a loop carries or a branch merges (NEP 50).

A loop's carried value enters its body as the union of its type before the loop and the types the
body leaves it (`f32[]|float` for `s = 0.0` adding float32 elements); after a loop that surely runs
it has the type the body leaves it (`f32[]`), after one that may not run the union. Carried types
that keep widening become `object` after a bounded number of passes, so the body is typed for every
iteration.
"""

import numpy as np

from graphjit.graph.types import OBJECT
from graphjit.transpiler.lower.loops import MAX_CARRY_PASSES, carry_until_stable
from lowering_testing import assert_eager_equals_compiled, assert_lowers_to

X32 = np.array([1.0, 2.0, 3.0], np.float32)


def accumulate(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
    return s


def maybe_empty(x, n):
    s = 0.0
    for i in range(n):
        s += x[i]
    return s


def merged(x, c):
    if c > 0:
        s = 0.5
    else:
        s = x[0]
    return s * x[1]


def while_sum(x):
    s = 0
    i = 0
    while i < 2:
        s += x[i]
        i += 1
    return s


def test_a_python_float_adding_float32_elements_is_float32_after_a_loop_that_runs():
    assert_lowers_to(accumulate, (X32,), """
        graph accumulate(%x: f32[3]) -> f32[]
          %0 = for_range(0, 3, 1, 0.0, %x) {carried=1} : tuple(f32[])
            body(%i: int, %s: f32[]|float, %x.1: f32[3]) {
              %1 = getitem(%x.1, %i) {index=[$1]} : f32[]
              %s.1 = inplace(%s, %1) {op='add'} : f32[]
              yield %s.1
            }
          %s.2 = tuple_get(%0) {index=0} : f32[]
          return %s.2
    """)


def test_after_a_loop_that_may_not_run_it_may_still_be_the_python_float():
    assert_lowers_to(maybe_empty, (X32, np.int64(2)), """
        graph maybe_empty(%x: f32[3], %n: i64[]) -> f32[]|float
          %0 = for_range(0, %n, 1, 0.0, %x) {carried=1} : tuple(f32[]|float)
            body(%i: int, %s: f32[]|float, %x.1: f32[3]) {
              %1 = getitem(%x.1, %i) {index=[$1]} : f32[]
              %s.1 = inplace(%s, %1) {op='add'} : f32[]
              yield %s.1
            }
          %s.2 = tuple_get(%0) {index=0} : f32[]|float
          return %s.2
    """)


def test_branches_merge_to_a_union_and_an_op_on_it_promotes_each_member():
    assert_lowers_to(merged, (X32, np.int64(2)), """
        graph merged(%x: f32[3], %c: i64[]) -> f32[]
          %0 = gt(%c, 0) : bool[]
          %1 = if(%0, %x) : tuple(f32[]|float)
            then(%x.1: f32[3]) {
              yield 0.5
            }
            else(%x.2: f32[3]) {
              %s = getitem(%x.2) {index=[0]} : f32[]
              yield %s
            }
          %s.1 = tuple_get(%1) {index=0} : f32[]|float
          %2 = getitem(%x) {index=[1]} : f32[]
          %3 = mul(%s.1, %2) : f32[]
          return %3
    """)


def test_a_while_loop_may_not_run():
    assert_lowers_to(while_sum, (np.array([1, 2, 3], np.int32),), """
        graph while_sum(%x: i32[3]) -> i32[]|int
          %0 = while(0, 0, %x) {carried=2} : tuple(i32[]|int, int)
            cond(%s: i32[]|int, %i: int, %x.1: i32[3]) {
              %1 = lt(%i, 2) : bool
              yield %1
            }
            body(%s.1: i32[]|int, %i.1: int, %x.2: i32[3]) {
              %2 = getitem(%x.2, %i.1) {index=[$1]} : i32[]
              %s.2 = inplace(%s.1, %2) {op='add'} : i32[]
              %i.2 = inplace(%i.1, 1) {op='add'} : int
              yield %s.2, %i.2
            }
          %s.3 = tuple_get(%0) {index=0} : i32[]|int
          %i.3 = tuple_get(%0) {index=1} : int
          return %s.3
    """)


def test_eager_equals_compiled():
    for fn, args in [(accumulate, (X32,)), (maybe_empty, (X32, np.int64(0))), (maybe_empty, (X32, np.int64(2))),
                     (merged, (X32, np.int64(1))), (merged, (X32, np.int64(0))), (while_sum, (np.arange(3),))]:
        assert_eager_equals_compiled(fn, *args)


def test_types_that_keep_widening_become_the_top_type():
    passes = []

    def lower_pass(types):
        passes.append(list(types))
        return [t + 1 if t != OBJECT else t for t in types[:1]] + types[1:]   # slot 0 never settles

    types = [0, 5]
    assert carry_until_stable(lower_pass, types, OBJECT)
    assert types == [OBJECT, 5] and passes[-1] == [OBJECT, 5]   # the last pass is typed with `object`
    assert len(passes) == MAX_CARRY_PASSES


def test_without_a_top_type_the_passes_are_bounded_and_the_result_unstable():
    types = [0]
    assert not carry_until_stable(lambda types: [types[0] + 1], types)
    assert types == [MAX_CARRY_PASSES]
