"""transpiler/lower/branches.py: `if` decided at compile time, or an `if` region merging what it assigns."""

import numpy as np
import pytest

from lowering_testing import assert_eager_equals_compiled, assert_lowers_to, diagnostics

X3 = np.arange(3.0)


def decided(x, n):
    if n > 2:
        y = x * 2.0
    else:
        y = x
    return y


def runtime_if(x):
    if x[0] > 0:
        y = x * 2.0
    else:
        y = x - 1.0
    return y


def returning_if(x):
    if x[0] > 0:
        return x
    return -x


def conditional(x):
    return x if x[0] > 0 else -x


def one_branch_binds(x):
    if x[0] > 0:
        y = x
    return y


def test_compile_time_test_lowers_one_branch():
    assert_lowers_to(decided, (X3, 3), """
        graph decided(%x: f64[3], %n: int) -> f64[3]
          %y = mul(%x, 2.0) : f64[3]
          return %y
    """)


def test_runtime_test_merges_the_assigned_name():
    assert_lowers_to(runtime_if, (X3,), """
        graph runtime_if(%x: f64[3]) -> f64[3]
          %0 = getitem(%x) {index=[0]} : f64[]
          %1 = gt(%0, 0) : bool[]
          %2 = if(%1, %x) : tuple(f64[3])
            then(%x.1: f64[3]) {
              %y = mul(%x.1, 2.0) : f64[3]
              yield %y
            }
            else(%x.2: f64[3]) {
              %y.1 = sub(%x.2, 1.0) : f64[3]
              yield %y.1
            }
          %y.2 = tuple_get(%2) {index=0} : f64[3]
          return %y.2
    """)


RETURNED = """
    graph {name}(%x: f64[3]) -> f64[3]
      %0 = getitem(%x) {{index=[0]}} : f64[]
      %1 = gt(%0, 0) : bool[]
      %2 = if(%1, %x) : tuple(f64[3])
        then(%x.1: f64[3]) {{
          yield %x.1
        }}
        else(%x.2: f64[3]) {{
          %3 = neg(%x.2) : f64[3]
          yield %3
        }}
      %4 = tuple_get(%2) {{index=0}} : f64[3]
      return %4
"""


@pytest.mark.parametrize("fn", [returning_if, conditional])
def test_a_returning_if_and_a_conditional_expression_lower_alike(fn):
    assert_lowers_to(fn, (X3,), RETURNED.format(name=fn.__name__))


def test_name_bound_in_one_branch_only_is_reported_at_strict():
    [(code, severity, message)] = diagnostics(one_branch_binds, X3, level="STRICT")
    assert severity == "error" and "`y` may be unbound" in message and "only one branch" in message


@pytest.mark.parametrize("fn,args", [(decided, (X3, 3)), (decided, (X3, 1)), (runtime_if, (X3,)),
                                     (runtime_if, (-X3 - 1,)), (returning_if, (X3 + 1,)), (conditional, (-X3,))])
def test_eager_equals_compiled(fn, args):
    assert_eager_equals_compiled(fn, *args)
