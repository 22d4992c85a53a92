"""transpiler/lower/expressions.py: constants folded now, operators as nodes, short-circuits as branches."""

import numpy as np
import pytest

from lowering_testing import assert_eager_equals_compiled, assert_lowers_to

X3 = np.arange(3.0)


def folded(x, n):
    return x * (2 * n + 1)


def chained(x):
    return 0 < x[0] < x[1]


def boolean(x):
    return x[0] > 0 and x[1] > 0


def comprehension(x):
    parts = [x * k for k in range(3)]
    return parts[0] + parts[2]


def fstring(x, n):
    return x, f"n={n}"


def lam(x):
    f = lambda v: v + 1.0  # noqa: E731
    return f(x)


def test_compile_time_operands_fold_now():
    assert_lowers_to(folded, (X3, 3), """
        graph folded(%x: f64[3], %n: int) -> f64[3]
          %0 = mul(%x, 7) : f64[3]
          return %0
    """)


def test_chained_comparison_evaluates_the_middle_once_and_short_circuits():
    assert_lowers_to(chained, (X3,), """
        graph chained(%x: f64[3]) -> bool[]
          %0 = getitem(%x) {index=[0]} : f64[]
          %1 = lt(0, %0) : bool[]
          %2 = getitem(%x) {index=[1]} : f64[]
          %3 = if(%1, %0, %2, %1) : tuple(bool[])
            then(%4: f64[], %5: f64[], %6: bool[]) {
              %7 = lt(%4, %5) : bool[]
              yield %7
            }
            else(%8: f64[], %9: f64[], %10: bool[]) {
              yield %10
            }
          %11 = tuple_get(%3) {index=0} : bool[]
          return %11
    """)


def test_and_evaluates_its_right_side_only_when_the_left_is_true():
    assert_lowers_to(boolean, (X3,), """
        graph boolean(%x: f64[3]) -> bool[]
          %0 = getitem(%x) {index=[0]} : f64[]
          %1 = gt(%0, 0) : bool[]
          %2 = if(%1, %x, %1) : tuple(bool[])
            then(%x.1: f64[3], %3: bool[]) {
              %4 = getitem(%x.1) {index=[1]} : f64[]
              %5 = gt(%4, 0) : bool[]
              yield %5
            }
            else(%x.2: f64[3], %6: bool[]) {
              yield %6
            }
          %7 = tuple_get(%2) {index=0} : bool[]
          return %7
    """)


def test_comprehension_over_a_compile_time_range_unrolls():
    assert_lowers_to(comprehension, (X3,), """
        graph comprehension(%x: f64[3]) -> f64[3]
          %0 = mul(%x, 0) : f64[3]
          %1 = mul(%x, 1) : f64[3]
          %2 = mul(%x, 2) : f64[3]
          %3 = add(%0, %2) : f64[3]
          return %3
    """)


def test_fstring_of_compile_time_values_is_a_constant():
    assert_lowers_to(fstring, (X3, 3), """
        graph fstring(%x: f64[3], %n: int) -> tuple(f64[3], str)
          %0 = tuple(%x, 'n=3') : tuple(f64[3], str)
          return %0
    """)


def test_lambda_is_inlined_where_it_is_called():
    assert_lowers_to(lam, (X3,), """
        graph lam(%x: f64[3]) -> f64[3]
          %0 = add(%x, 1.0) : f64[3]
          return %0
    """)


@pytest.mark.parametrize("fn,args", [(folded, (X3, 3)), (chained, (X3,)), (chained, (X3[::-1].copy(),)),
                                     (boolean, (X3 + 1,)), (boolean, (X3,)), (comprehension, (X3,)),
                                     (fstring, (X3, 3)), (lam, (X3,))])
def test_eager_equals_compiled(fn, args):
    assert_eager_equals_compiled(fn, *args)
