"""transpiler/lower/{for_loops,range_loops,unroll,while_loops,loops}.py: the forms a loop takes.

A loop over a compile-time sequence unrolls; over a run-time range it is a `for_range` region; with
`break` it is a `while` region testing a flag; a `while` loop is a `while` region. The values a loop
carries are typed by lowering its body again until their types are stable (`carry_until_stable`).
"""

import numpy as np
import pytest

from graphjit.transpiler.lower.loops import MAX_CARRY_PASSES, carry_until_stable
from lowering_testing import assert_eager_equals_compiled, assert_lowers_to

X3 = np.arange(3.0)


def unrolled(x):
    for v in (1.0, 2.0):
        x = x + v
    return x


def range_runtime(x):
    s = x[0] * 0.0
    for i in range(x.shape[0]):
        s = s + x[i]
    return s


def range_break(x, n):
    total = 0.0
    for i in range(n):
        if x[i] > 1.0:
            break
        total = total + x[i]
    return total


def while_loop(x):
    i = 0
    while x[i] < 2.0:
        i = i + 1
    return i


def widening(x, n):
    s = 0
    for i in range(n):
        s = s + x[i]
    return s


def test_loop_over_a_compile_time_tuple_unrolls():
    assert_lowers_to(unrolled, (X3,), """
        graph unrolled(%x: f64[3]) -> f64[3]
          %x.1 = add(%x, 1.0) : f64[3]
          %x.2 = add(%x.1, 2.0) : f64[3]
          return %x.2
    """)


def test_range_loop_is_a_for_range_carrying_what_it_assigns():
    assert_lowers_to(range_runtime, (X3,), """
        graph range_runtime(%x: f64[3]) -> f64[]
          %0 = getitem(%x) {index=[0]} : f64[]
          %s = mul(%0, 0.0) : f64[]
          %1 = for_range(0, 3, 1, %s, %x) {carried=1} : tuple(f64[])
            body(%i: int, %s.1: f64[], %x.1: f64[3]) {
              %2 = getitem(%x.1, %i) {index=[$1]} : f64[]
              %s.2 = add(%s.1, %2) : f64[]
              yield %s.2
            }
          %s.3 = tuple_get(%1) {index=0} : f64[]
          return %s.3
    """)


def test_while_loop_is_a_while_region():
    assert_lowers_to(while_loop, (X3,), """
        graph while_loop(%x: f64[3]) -> int
          %0 = while(0, %x) {carried=1} : tuple(int)
            cond(%i: int, %x.1: f64[3]) {
              %1 = getitem(%x.1, %i) {index=[$1]} : f64[]
              %2 = lt(%1, 2.0) : bool[]
              yield %2
            }
            body(%i.1: int, %x.2: f64[3]) {
              %i.2 = add(%i.1, 1) : int
              yield %i.2
            }
          %i.3 = tuple_get(%0) {index=0} : int
          return %i.3
    """)


def test_range_loop_with_break_tests_a_flag_in_a_while_region():
    from lowering_testing import lowered_text
    text = lowered_text(range_break, X3, 3)
    assert "while(0.0, 0, False, %x) {carried=3}" in text      # total, the index, the break flag
    assert "cond(%total: f64[]|float, %i1: int, %brk1: bool" in text   # a float, or np.float64 once added to
    assert "for_range" not in text


def test_carried_int_widened_by_the_body_is_lowered_again():
    # the first pass carries `s` as an int; the body makes it a NumPy float: the next pass widens it
    # to the union of both (the range may be empty: `s` may still be the int 0 after the loop)
    assert_lowers_to(widening, (X3, np.int64(3)), """
        graph widening(%x: f64[3], %n: i64[]) -> f64[]|int
          %0 = for_range(0, %n, 1, 0, %x) {carried=1} : tuple(f64[]|int)
            body(%i: int, %s: f64[]|int, %x.1: f64[3]) {
              %1 = getitem(%x.1, %i) {index=[$1]} : f64[]
              %s.1 = add(%s, %1) : f64[]
              yield %s.1
            }
          %s.2 = tuple_get(%0) {index=0} : f64[]|int
          return %s.2
    """)


@pytest.mark.parametrize("fn,args", [(unrolled, (X3,)), (range_runtime, (X3,)), (range_break, (X3, 3)),
                                     (range_break, (X3 * 0.1, 3)), (while_loop, (X3,)), (widening, (X3, 3))])
def test_eager_equals_compiled(fn, args):
    assert_eager_equals_compiled(fn, *args)


def test_carry_until_stable_stops_when_no_type_widens():
    passes = []

    def lower_pass(types):
        passes.append(list(types))
        return [max(t, 2) for t in types]      # widens once, to 2

    types = [0, 5]
    carry_until_stable(lower_pass, types)
    assert passes == [[0, 5], [2, 5]] and types == [2, 5]


def test_carry_until_stable_lowers_again_when_the_carried_names_change():
    passes = []

    def lower_pass(types):
        passes.append(list(types))
        if len(types) == 1:
            types.append(7)                     # a fallback block wrote another name: carry it too
            return None
        return list(types)

    types = [1]
    carry_until_stable(lower_pass, types)
    assert passes == [[1], [1, 7]] and types == [1, 7]


def test_carry_until_stable_is_bounded():
    passes = []

    def lower_pass(types):
        passes.append(list(types))
        return [types[0] + 1]                   # never stable

    types = [0]
    carry_until_stable(lower_pass, types)
    assert len(passes) == MAX_CARRY_PASSES and types == [MAX_CARRY_PASSES]
